"""The settings, one group a module; poolpatrol/settings.py imports every group.

`DJANGO_SETTINGS_MODULE` stays `poolpatrol.settings`. Each group reads its own
variables from the environment (poolpatrol/env.py) and needs only `base`, the
facts every group reads. A new setting goes into the group it belongs to, or
into poolpatrol/settings.py if it belongs to none; every variable is listed in
docs/operating.md#settings.
"""
