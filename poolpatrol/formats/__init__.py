"""Number formats for the riders' languages where Django's own differ from how riders write.

Django picks ``poolpatrol.formats.<locale>.formats`` before its own locale
module (``FORMAT_MODULE_PATH``); a name left out here is Django's.
"""
