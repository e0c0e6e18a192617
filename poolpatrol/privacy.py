"""Home details: which fields they are, who may see them, and the one check every query runs.

An employee's street address and exact home coordinates are for users with
``vanpools.view_home_address`` (Auditors). Hiding the values is not enough: a
filter, an ordering or a search on a field answers questions about it ("does
anyone's address start with 742?"), one request at a time. So every surface
that turns a query string into a database query (the admin's change lists, the
API's filters, the dashboard's pages) asks ``refuses_param`` first and refuses,
the same way whatever the value, a parameter that names a home field.

Names, not models: Django lookups, orderings and search paths always end in the
field's name (``employee__home_lat__gte``, ``-home_address``), and stored JSON
keeps a rider's home under ``home`` (``input__facts__riders__0__home__lat``), so
a parameter is refused when any ``__`` part of it is one of these names.
"""

import re
from collections.abc import Iterable
from typing import Any

HOME_ADDRESS_PERMISSION = "vanpools.view_home_address"

# vanpools.Employee's street address and exact coordinates. The ZIP is what an
# audit needs and stays visible to every coordinator.
HOME_FIELDS = frozenset({"home_address", "home_lat", "home_lng"})
# ...and the key under which JSON (traces, evidence) kept a rider's point.
HOME_NAMES = HOME_FIELDS | {"home"}

# Query parameters whose *values* are field names (an ordering), on any surface.
ORDERING_PARAMS = frozenset({"o", "ordering", "order", "order_by", "sort"})
# Characters an ordering or search path may start with: -field, ^field, =field, @field.
_PREFIXES = "-+^=@ "


def may_see_home(user: Any) -> bool:
    return bool(user is not None and user.has_perm(HOME_ADDRESS_PERMISSION))


def names_home_field(path: str) -> bool:
    """Whether a lookup, ordering or search path (``employee__home_lat__gte``) names one."""
    return any(part.strip(_PREFIXES) in HOME_NAMES for part in path.split("__"))


def refuses_param(user: Any, name: str, values: Iterable[str] = ()) -> bool:
    """Whether ``user`` may not send query parameter ``name`` (with ``values``).

    The one rule: without the home-address permission a parameter naming a home
    field is refused, and so is an ordering by one (``?o=home_lat``,
    ``?ordering=-employee__home_address``; comma-separated lists too).
    """
    if may_see_home(user):
        return False
    if names_home_field(name):
        return True
    if name.strip(_PREFIXES).lower() in ORDERING_PARAMS:
        return any(names_home_field(item) for value in values for item in value.split(","))
    return False


def refused_params(user: Any, params: Any) -> list[str]:
    """The parameters of a QueryDict (or a dict of lists) that ``user`` may not send."""
    getlist = getattr(params, "getlist", None)
    return sorted(
        name
        for name in params
        if refuses_param(user, name, getlist(name) if getlist else _as_list(params[name]))
    )


def _as_list(value: Any) -> list[str]:
    return [str(item) for item in value] if isinstance(value, list | tuple) else [str(value)]


# --- Stored JSON: traces, evidence, case records -------------------------------------------

# A rider's home in stored JSON ("home": {"lat": …, "lng": …}) becomes where it
# came from; the distance measured from it is kept in the evidence beside it.
STORED_POINT = {"source": "stored_coordinates"}
# Sentences that quoted a rider's (implausible, so often swapped) coordinates:
# "the stored home coordinates (-74.0, 40.7) are not a real location".
_QUOTED_POINT = re.compile(r"(stored home coordinates) \([^()]*\)")
# The same point inside JSON text (a model's input is the facts as a JSON block).
_POINT_IN_TEXT = re.compile(r'"home": \{\s*"lat": [^,{}]*,\s*"lng": [^,{}]*\}')
_POINT_IN_TEXT_SOURCE = '"home": {"source": "stored_coordinates"}'


# Values (by exact type) that hold no point and no key: kept as they are.
_LEAVES = frozenset({str, int, float, bool, type(None)})


def withhold_home_points(value: Any) -> Any:
    """``value`` (JSON) with every rider's home point, street and coordinates taken out.

    ``home: {lat, lng}`` becomes ``home: {"source": "stored_coordinates"}``;
    ``home_address``, ``home_lat`` and ``home_lng`` keys are dropped; a sentence
    quoting stored home coordinates keeps the sentence, not the numbers. Pickup
    and work-site points are the program's, not a person's, and stay.
    """
    if isinstance(value, dict):
        kept: dict[str, Any] = {}
        for key, item in value.items():
            if key in HOME_FIELDS:
                continue
            if type(item) in _LEAVES and (type(item) is not str or "home" not in item):
                kept[key] = item  # most values: a number, an ID, a date; nothing to walk
            elif key == "home" and isinstance(item, dict) and {"lat", "lng"} & set(item):
                kept[key] = dict(STORED_POINT)
            else:
                kept[key] = withhold_home_points(item)
        return kept
    if isinstance(value, list):
        return [withhold_home_points(item) for item in value]
    if isinstance(value, str):
        if "home" not in value:  # both patterns name it; most strings (dates, IDs) never do
            return value
        return _POINT_IN_TEXT.sub(_POINT_IN_TEXT_SOURCE, _QUOTED_POINT.sub(r"\1", value))
    return value
