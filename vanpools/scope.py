"""Coordinators scoped to their sites: which vanpools, and which rows, a user may see.

With ``COORDINATOR_SCOPE=sites`` a user without ``vanpools.see_every_vanpool``
(Auditors have it; superusers have every permission) sees only the vanpools
they coordinate, and the rows that belong to those vanpools: their seats and
riders, cases, evidence, trail, review cards, email and agent runs. A
coordinator coordinates a vanpool that names them as its coordinator
(``Vanpool.coordinator``), and every vanpool at a work site they are given
(``CoordinatorSite``, in the admin under Vanpools → Site coordinators). With
``COORDINATOR_SCOPE=all`` (the default) nobody is scoped.

Everything outside a user's scope is treated as if it did not exist: a page,
admin page or API detail answers 404 exactly as for an unknown ID, a list
leaves it out, a filter naming it finds nothing, a choice list does not offer
it. This module is the one place that says how each kind of row reaches its
vanpool (``VANPOOL_PATHS``) and which vanpools a person coordinates; the
admin (``vanpools.admin_scope``), the API and the dashboard all filter
through ``visible``, the services that act on one record (a decision, a
claim) refuse through ``refuse_outside_scope``, and the daily digest reads
``coordinated_vanpools`` and ``vanpool_of`` to give each coordinator what
their queue shows.
"""

from collections import defaultdict
from collections.abc import Iterable
from typing import Any, NamedTuple, TypeVar

from django.conf import settings
from django.core.exceptions import FieldDoesNotExist, ImproperlyConfigured, PermissionDenied
from django.db.models import F, Model, Q, QuerySet
from django.db.models.expressions import Combinable
from django.db.models.functions import Coalesce

from vanpools.models import CoordinatorSite, Vanpool

SEE_EVERY_VANPOOL = "vanpools.see_every_vanpool"

_M = TypeVar("_M", bound=Model)

# How a row reaches the vanpool it belongs to: lookup paths tried in order, the
# first that is set decides (a review card without a case belongs to its seat's
# vanpool; an email without a thread to its rider's). An empty tuple: the rows
# are the program's, not a vanpool's, and every staff user sees them.
VANPOOL_PATHS: dict[str, tuple[str, ...]] = {
    "vanpools.vanpool": ("pk",),
    "vanpools.rider": ("vanpool",),
    "vanpools.employee": ("memberships__vanpool",),
    "vanpools.leave": ("employee__memberships__vanpool",),
    "vanpools.shift": (),
    "vanpools.coordinatorsite": (),
    "vanpools.trip": ("vanpool",),
    "vanpools.rideday": ("vanpool",),
    "vanpools.vanpoolmonth": ("vanpool",),
    "vanpools.badgeswipe": ("employee__memberships__vanpool",),
    "vanpools.parkingpermit": ("employee__memberships__vanpool",),
    # Which dates each import covers, and the holidays: the program's calendar, no rider's data.
    "vanpools.datacoverage": (),
    "vanpools.holiday": (),
    "cases.case": ("vanpool",),
    "cases.verification": ("vanpool",),
    "cases.caseevent": ("case__vanpool",),
    "cases.pendingaction": ("case__vanpool", "rider__vanpool"),
    "cases.casereview": ("case__vanpool",),
    "cases.caselesson": ("case__vanpool",),
    "outreach.emailthread": ("case__vanpool",),
    "outreach.message": ("thread__case__vanpool", "employee__memberships__vanpool"),
    "agents.agentrun": ("case__vanpool", "vanpool"),
}


def is_scoped(user: Any) -> bool:
    """Whether ``user`` sees only the vanpools they coordinate.

    ``None`` is no person: a command, a task, the program's own figures.
    """
    if user is None or settings.COORDINATOR_SCOPE != "sites":
        return False
    return not user.has_perm(SEE_EVERY_VANPOOL)


def vanpools_for(user: Any) -> QuerySet[Vanpool]:
    """The vanpools ``user`` may see: all of them, or those they coordinate."""
    if not is_scoped(user):
        return Vanpool.objects.all()
    if not user.is_authenticated:
        return Vanpool.objects.none()
    # The rule, for one user; coordinated_vanpools reads the same for many at once.
    sites = CoordinatorSite.objects.filter(user=user).values("work_site")
    return Vanpool.objects.filter(Q(coordinator=user) | Q(work_site__in=sites))


class Coordinated(NamedTuple):
    """A vanpool someone coordinates: its primary key and its work site."""

    pk: int
    work_site: str


def coordinated_vanpools(user_ids: Iterable[int]) -> dict[int, set[Coordinated]]:
    """For each user, the vanpools they coordinate: what ``vanpools_for`` gives them when scoped.

    Those naming them as coordinator, and every vanpool at a site given to
    them (``CoordinatorSite``). Three queries however many users: the
    digest reads it for every coordinator at once.
    """
    ids = set(user_ids)
    found: dict[int, set[Coordinated]] = defaultdict(set)
    named = Vanpool.objects.filter(coordinator__in=ids).values_list(
        "coordinator_id", "pk", "work_site"
    )
    for user_id, pk, site in named:
        found[user_id].add(Coordinated(pk, site))
    given: dict[str, set[int]] = defaultdict(set)
    for user_id, site in CoordinatorSite.objects.filter(user__in=ids).values_list(
        "user_id", "work_site"
    ):
        given[site].add(user_id)
    at_sites = Vanpool.objects.filter(work_site__in=list(given)).values_list("pk", "work_site")
    for pk, site in at_sites:
        for user_id in given[site]:
            found[user_id].add(Coordinated(pk, site))
    return dict(found)


def vanpool_of(model: type[Model], field: str = "pk") -> Combinable:
    """The ``field`` of the vanpool each row of ``model`` belongs to, as one expression.

    The first of its paths that is set (as ``in_scope`` reads them), for
    annotating many rows in one query. A model whose path crosses a
    one-to-many relation (an employee's seats) has no one vanpool: refused.
    """
    paths = paths_of(model)
    if not paths or any(_crosses_many(model, path) for path in paths):
        raise ImproperlyConfigured(f"a {model._meta.label_lower} has no one vanpool")
    refs = [F(_field_through(path, field)) for path in paths]
    return refs[0] if len(refs) == 1 else Coalesce(*refs)


def _field_through(path: str, field: str) -> str:
    if path == "pk":
        return field
    return path if field == "pk" else f"{path}__{field}"


def refuse_outside_scope(rows: QuerySet[_M], user: Any, refusal: str) -> None:
    """PermissionDenied(``refusal``) when the record ``rows`` selects is outside ``user``'s scope.

    For the services that act on one record whoever calls them (a decision, a
    claim): the pages and the API have already answered 404 for such a
    record; a command or another door meets the rule here.
    """
    if is_scoped(user) and not visible(rows, user).exists():
        raise PermissionDenied(refusal)


def visible(queryset: QuerySet[_M], user: Any) -> QuerySet[_M]:
    """``queryset`` without the rows outside ``user``'s scope."""
    if not is_scoped(user):
        return queryset
    return queryset.filter(in_scope(queryset.model, user))


def in_scope(model: type[Model], user: Any) -> Q:
    """The condition a row of ``model`` meets when it belongs to one of ``user``'s vanpools."""
    paths = paths_of(model)
    if not paths:
        return Q()
    vans = vanpools_for(user).values("pk")
    condition, earlier_unset = Q(), Q()
    for path in paths:
        condition |= earlier_unset & Q(**{f"{path}__in": vans})
        earlier_unset &= Q(**{f"{path}__isnull": True})
    if any(_crosses_many(model, path) for path in paths):
        # A seat per vanpool an employee rode: a join would repeat rows.
        return Q(pk__in=model._default_manager.filter(condition).values("pk"))
    return condition


def visible_sites(user: Any) -> list[str]:
    """The work sites of the vanpools ``user`` may see, for choice lists and filters."""
    rows = vanpools_for(user).order_by("work_site").values_list("work_site", flat=True)
    return list(rows.distinct())


def paths_of(model: type[Model]) -> tuple[str, ...]:
    label = model._meta.label_lower
    if label not in VANPOOL_PATHS:
        raise ImproperlyConfigured(
            f"vanpools.scope.VANPOOL_PATHS does not say how a {label} reaches its vanpool"
        )
    return VANPOOL_PATHS[label]


def _crosses_many(model: type[Model], path: str) -> bool:
    current: Any = model
    for part in path.split("__"):
        try:
            field = current._meta.get_field(part)
        except FieldDoesNotExist:
            return False  # "pk"
        if field.one_to_many or field.many_to_many:
            return True
        current = field.related_model
    return False
