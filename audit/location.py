"""The location specialist: does each rider live close enough to the van's pickup?

A pure function of preloaded facts (no database, no clock, no network with the
default provider). Each rider's home — stored coordinates, else the centroid of
their home ZIP — is measured to the vanpool's pickup — its coordinates, else
the centroid of its pickup ZIP, else the work site — and the commute miles are
compared with the vanpool's limit. A home or pickup the rules cannot place
makes the rider ``unknown``, for the model or a human: never a silent pass.
"""

from dataclasses import dataclass
from typing import Any, Literal

from django.conf import settings

from agents.contracts import (
    Citation,
    DistanceEvidence,
    Evidence,
    RiderFlag,
    SpecialistResult,
    UnknownEvidence,
    Verdict,
    combine_verdicts,
)
from audit.facts import Point, RiderFacts, VanpoolFacts
from vanpools.geo import (
    DistanceProvider,
    clean_zip,
    digits_given,
    get_distance_provider,
    is_plausible,
    normalise_zip,
    zip_centroid,
    zips_starting_with,
)

HomeSource = Literal["stored_coordinates", "zip_centroid"]
PickupSource = Literal["pickup_coordinates", "pickup_zip_centroid", "work_site"]

# Confidence in one rider's decision compares how far the commute sits from
# the limit with how wrong the inputs could be:
# - Coordinates at both ends: only the circuity factor is a guess (a real route
#   can differ by a mile or two), so within NEAR_LIMIT_MILES of the limit the
#   call could go either way: 3. Otherwise 5.
# - A ZIP centroid at either end can sit miles from the real address (rural
#   ZIPs are large): within NEAR_LIMIT_MILES 2, within CENTROID_SLACK_MILES 3,
#   otherwise 5.
# - Measured to the work site because the van has no pickup point on record:
#   one less, since riders board at the pickup, not the site.
# - A rider the rules cannot place: UNKNOWN_CONFIDENCE, as in the shift check.
# The vanpool's confidence follows the shift check: a fail is as sure as its
# clearest failing rider; a pass (or unknown) only as sure as its least sure one.
NEAR_LIMIT_MILES = 2.0
CENTROID_SLACK_MILES = 6.0
UNKNOWN_CONFIDENCE = 2


class Unplaceable(Exception):
    """A home or pickup the rules cannot put on a map: the value on record and why."""

    def __init__(self, value: str, reason: str, cites: list[Citation]) -> None:
        super().__init__(reason)
        self.value = value
        self.reason = reason
        self.cites = cites


@dataclass(frozen=True)
class Home:
    point: Point
    source: HomeSource
    label: str  # for sentences: "ZIP 90026, centroid"
    cites: list[Citation]
    problem: str = ""  # why stored coordinates were passed over, when they were


@dataclass(frozen=True)
class Pickup:
    point: Point
    source: PickupSource
    label: str  # for the opening sentence: "the pickup point on record"
    cites: list[Citation]
    noun: str  # what riders are measured to, in their sentence: "pickup" or "work site"
    problem: str = ""  # why the pickup coordinates were passed over, when they were


@dataclass(frozen=True)
class RiderOutcome:
    employee_id: str
    verdict: Verdict
    confidence: int
    reason: str  # the rider's flag reason, and their sentence in the vanpool's reasoning
    evidence: Evidence
    miles: float | None = None  # unrounded commute miles, when measured
    borderline: bool = False  # a pass worth naming: close enough to the limit to doubt


# --- Where things are -------------------------------------------------------------------


def _cites(record: Literal["employee", "vanpool"], id_: str, *fields: str) -> list[Citation]:
    return [Citation(record=record, id=id_, field=name) for name in fields]


def place_pickup(facts: VanpoolFacts) -> Pickup:
    """The point riders are measured to; Unplaceable when the vanpool has none we can use."""
    vp = facts.vanpool_id
    zip5 = normalise_zip(facts.pickup_zip)
    centroid = zip_centroid(zip5) if zip5 else None
    if facts.pickup is not None:
        cites = _cites("vanpool", vp, "pickup_lat", "pickup_lng")
        if centroid is None or is_plausible(facts.pickup):
            _require_plausible(facts.pickup, "the pickup coordinates on record", cites)
            return Pickup(
                facts.pickup, "pickup_coordinates", "the pickup point on record", cites, "pickup"
            )
        # Junk coordinates beside a pickup ZIP: the ZIP still says where the van
        # leaves from, as for a rider's home.
        junk = _coordinates(facts.pickup)
        problem = f"the pickup coordinates on record ({junk}) are not a real location"
        label = f"the centre of pickup ZIP {zip5} ({problem})"
        cites = [*cites, *_cites("vanpool", vp, "pickup_zip")]
        return Pickup(centroid, "pickup_zip_centroid", label, cites, "pickup", problem)
    if centroid is not None:
        label = f"the centre of pickup ZIP {zip5} (no pickup coordinates on record)"
        cites = _cites("vanpool", vp, "pickup_zip")
        return Pickup(centroid, "pickup_zip_centroid", label, cites, "pickup")
    zip_note = f"; pickup ZIP “{facts.pickup_zip}” cannot be placed" if facts.pickup_zip else ""
    if facts.work_site_point is not None:
        cites = _cites("vanpool", vp, "work_site_lat", "work_site_lng")
        _require_plausible(facts.work_site_point, "the work-site coordinates on record", cites)
        site = f"the {facts.work_site} work site" if facts.work_site else "the work site"
        label = f"{site} (no pickup point on record{zip_note})"
        return Pickup(facts.work_site_point, "work_site", label, cites, "work site")
    reason = "the vanpool has no pickup point or work-site location on record"
    if facts.pickup_zip:
        reason += f", and its pickup ZIP “{facts.pickup_zip}” cannot be placed"
    fields = ("pickup_lat", "pickup_lng", "pickup_zip", "work_site_lat", "work_site_lng")
    cites = _cites("vanpool", vp, *fields)
    raise Unplaceable(facts.pickup_zip, reason, cites)


def place_home(rider: RiderFacts) -> Home:
    """Stored coordinates win; else (or when they are junk) the home ZIP's centroid."""
    eid = rider.employee_id
    if rider.home is None:
        return _zip_home(rider)
    cites = _cites("employee", eid, "home_lat", "home_lng")
    if is_plausible(rider.home):
        return Home(rider.home, "stored_coordinates", "stored home coordinates", cites)
    # (0, 0) or an out-of-range value is a data error, not a place: the ZIP on
    # record still says where the rider lives, so it is used and the error named.
    # Named, not quoted: "junk" is most often a real home with its latitude and
    # longitude swapped or a sign lost, and evidence and traces reach
    # coordinators, who may not see a home point (poolpatrol/privacy.py).
    what = "the stored home coordinates are not a real location"
    try:
        home = _zip_home(rider)
    except Unplaceable as problem:
        zip_note = f", and {problem.reason}" if (rider.home_zip or "").strip() else ""
        raise Unplaceable("", what + zip_note, [*cites, *problem.cites]) from None
    return Home(home.point, home.source, f"{home.label}; {what}", [*cites, *home.cites], what)


def _zip_home(rider: RiderFacts) -> Home:
    raw = (rider.home_zip or "").strip()
    cites = _cites("employee", rider.employee_id, "home_zip")
    if not raw:
        raise Unplaceable("", "there is no home ZIP or home coordinates on record", cites)
    zip5 = normalise_zip(raw)
    if zip5 is None:
        raise Unplaceable(raw, f"home ZIP “{raw}” is not a US ZIP code", cites)
    centroid = zip_centroid(zip5)
    if centroid is None:
        reason = f"home ZIP {zip5} is not a ZIP code with a location in the offline ZIP table"
        raise Unplaceable(raw, reason, cites)
    return Home(centroid, "zip_centroid", f"ZIP {zip5}, centroid", cites)


def _coordinates(point: Point) -> str:
    return f"{point.lat}, {point.lng}"


def _require_plausible(point: Point, what: str, cites: list[Citation]) -> None:
    # A sentinel such as (0, 0) or an out-of-range value is a data error to
    # fix, not a place to measure from: measuring it would fail a rider on junk.
    if not is_plausible(point):
        value = _coordinates(point)
        raise Unplaceable(value, f"{what} ({value}) are not a real location", cites)


# --- One rider --------------------------------------------------------------------------


def closeness(miles: float, limit: float, *, approximate: bool) -> tuple[int, str]:
    """Confidence in a decision this far from the limit, and a sentence on why it could flip."""
    margin = abs(miles - limit)
    if margin <= NEAR_LIMIT_MILES:
        centroid = ", and a ZIP centroid can be miles from the actual home" if approximate else ""
        doubt = (
            f" That is within {NEAR_LIMIT_MILES:g} miles of the limit: "
            f"the real route could differ{centroid}."
        )
        return (2 if approximate else 3), doubt
    if approximate and margin <= CENTROID_SLACK_MILES:
        return 3, " That is close: a ZIP centroid can be a few miles from the actual home."
    return 5, ""


def shown_miles(miles: float, limit: float, places: int = 1) -> str:
    """Miles rounded for people, with just enough decimals to stay on the right side of the limit.

    50.04 is over a 50-mile limit and must not read "50.0"; 49.96 may read "50.0",
    which is at the limit and so passes, as it does.
    """
    for digits in range(places, 7):
        text = f"{miles:.{digits}f}"
        if (float(text) > limit) == (miles > limit):
            return text
    return repr(miles)


def judge_rider(
    rider: RiderFacts, pickup: Pickup, facts: VanpoolFacts, provider: DistanceProvider
) -> RiderOutcome:
    try:
        home = place_home(rider)
    except Unplaceable as problem:
        return unknown_rider(rider.employee_id, problem, f"Cannot measure {rider.employee_id}")
    straight, commute = provider.commute_miles(home.point, pickup.point)
    limit = facts.max_miles
    verdict: Verdict = "fail" if commute > limit else "pass"  # at the limit passes
    if verdict == "fail" and home.source == "zip_centroid":
        lost = _lost_digit_reading(rider, pickup, limit, provider, commute)
        if lost is not None:
            return unknown_rider(rider.employee_id, lost, f"Cannot place {rider.employee_id}")
    approximate = home.source == "zip_centroid" or pickup.source == "pickup_zip_centroid"
    confidence, doubt = closeness(commute, limit, approximate=approximate)
    # Measuring to a work site, or from a ZIP because the stored coordinates
    # were junk, is one more step from the records: a little less sure.
    passed_over = bool(home.problem or pickup.problem)
    confidence = max(1, confidence - (pickup.source == "work_site") - passed_over)
    miles_text = shown_miles(commute, limit)
    where = f"from the {facts.vanpool_id} {pickup.noun} ({home.label})"
    verdict_text = (
        f"; the limit is {limit:g}" if verdict == "fail" else f", within the limit of {limit:g}"
    )
    reason = f"{rider.employee_id} lives {miles_text} commute miles {where}{verdict_text}."
    evidence = DistanceEvidence(
        employee_id=rider.employee_id,
        cites=[*home.cites, *pickup.cites],
        home_zip=clean_zip(rider.home_zip) or rider.home_zip or "",
        home_source=home.source,
        pickup=facts.vanpool_id,
        pickup_source=pickup.source,
        straight_miles=round(straight, 2),
        miles=float(shown_miles(commute, limit, places=2)),
        threshold_miles=limit,
        provider=provider.name,
        note="; ".join(filter(None, (home.problem, pickup.problem))),
    )
    return RiderOutcome(
        rider.employee_id, verdict, confidence, reason + doubt, evidence, commute, bool(doubt)
    )


def _lost_digit_reading(
    rider: RiderFacts, pickup: Pickup, limit: float, provider: DistanceProvider, commute: float
) -> Unplaceable | None:
    """A four-digit ZIP read as 0dddd fails; read as dddd? (a last digit lost) it may not.

    A spreadsheet drops the leading zero of a New England or New Jersey ZIP,
    and a typist drops a last digit: "7870" at an Austin site is more likely
    7870x than 07870 in New Jersey. When some ZIP that starts with the digits
    as given lies within the limit, the two readings disagree and a person
    decides, as with hours that have no am/pm.
    """
    given = _zip_as_given(rider)
    digits = digits_given(given)
    if not digits:
        return None
    within = [
        (miles, zip5)
        for zip5, point in zips_starting_with(digits)
        if (miles := provider.commute_miles(point, pickup.point)[1]) <= limit
    ]
    if not within:
        return None
    miles, zip5 = min(within)
    restored = clean_zip(given) or given
    reason = (
        f"home ZIP “{given}” reads as {restored} with a leading zero put back "
        f"({shown_miles(commute, limit)} commute miles, over the limit of {limit:g}), "
        f"or as {zip5} with a last digit lost ({shown_miles(miles, limit)} miles, within it); "
        "a person should confirm the ZIP"
    )
    return Unplaceable(given, reason, _cites("employee", rider.employee_id, "home_zip"))


def _zip_as_given(rider: RiderFacts) -> str:
    """The roster's text for the ZIP while the record still holds it, else the ZIP itself."""
    as_given = rider.home_zip_as_given
    if as_given and clean_zip(as_given) == clean_zip(rider.home_zip):
        return as_given  # not edited since the import
    return (rider.home_zip or "").strip()


def unknown_rider(employee_id: str, problem: Unplaceable, lead: str) -> RiderOutcome:
    evidence = UnknownEvidence(
        employee_id=employee_id, cites=problem.cites, value=problem.value, reason=problem.reason
    )
    reason = f"{lead}: {problem.reason}."
    return RiderOutcome(employee_id, "unknown", UNKNOWN_CONFIDENCE, reason, evidence)


# --- The vanpool ------------------------------------------------------------------------


def check_location(
    facts: VanpoolFacts, provider: DistanceProvider | None = None
) -> SpecialistResult:
    """Judge every rider's home against the vanpool's pickup and distance limit.

    A provider error (say, a routing service that is down) is raised, not
    turned into verdicts: the audit task retries instead of flagging riders.
    """
    if not facts.riders:
        reasoning = f"{facts.vanpool_id} has no active riders, so there is no home to measure."
        return _result([], reasoning)
    try:
        pickup = place_pickup(facts)
    except Unplaceable as problem:
        return _no_pickup(facts, problem)
    provider = provider or get_distance_provider()
    outcomes = [judge_rider(rider, pickup, facts, provider) for rider in facts.riders]
    opening = (
        f"{facts.vanpool_id}: homes are measured to {pickup.label} ({provider.name}); "
        f"the limit is {facts.max_miles:g} commute miles."
    )
    return _result(outcomes, _reasoning(opening, outcomes, facts.max_miles))


def _no_pickup(facts: VanpoolFacts, problem: Unplaceable) -> SpecialistResult:
    # Nothing to measure to: every rider is unknown, whatever their home.
    outcomes = [
        unknown_rider(
            rider.employee_id,
            problem,
            f"Cannot measure {rider.employee_id} from {facts.vanpool_id}",
        )
        for rider in facts.riders
    ]
    names = _names([rider.employee_id for rider in facts.riders])
    reasoning = (
        f"{facts.vanpool_id}: {problem.reason}, so no rider's distance can be measured. "
        f"Unknown: {names}."
    )
    return _result(outcomes, reasoning)


def _result(outcomes: list[RiderOutcome], reasoning: str) -> SpecialistResult:
    verdict = combine_verdicts([outcome.verdict for outcome in outcomes])
    return SpecialistResult(
        check="location",
        verdict=verdict,
        confidence=_vanpool_confidence(verdict, outcomes),
        reasoning=reasoning,
        evidence=[outcome.evidence for outcome in outcomes],
        riders=[
            RiderFlag(
                employee_id=outcome.employee_id, verdict=outcome.verdict, reason=outcome.reason
            )
            for outcome in outcomes
        ],
    )


def _vanpool_confidence(verdict: Verdict, outcomes: list[RiderOutcome]) -> int:
    deciding = [outcome.confidence for outcome in outcomes if outcome.verdict == verdict]
    if not deciding:
        return 5
    return max(deciding) if verdict == "fail" else min(deciding)


def _reasoning(opening: str, outcomes: list[RiderOutcome], limit: float) -> str:
    # Problems first, then passes close enough to doubt; clear passes in one
    # sentence, so a 12-seat van does not read as a list of 12 distances.
    sentences = [opening]
    sentences += [o.reason for o in outcomes if o.verdict == "fail"]
    sentences += [o.reason for o in outcomes if o.verdict == "unknown"]
    sentences += [o.reason for o in outcomes if o.verdict == "pass" and o.borderline]
    clear = [o for o in outcomes if o.verdict == "pass" and not o.borderline]
    if len(clear) == 1:
        sentences.append(clear[0].reason)
    elif clear:
        farthest = max(clear, key=lambda o: o.miles or 0.0)
        if len(sentences) > 1:
            which = f"The other {len(clear)} riders"
        else:
            which = "Both riders" if len(clear) == 2 else f"All {len(clear)} riders"
        sentences.append(
            f"{which} live within {limit:g} commute miles "
            f"(the farthest, {farthest.employee_id}, {shown_miles(farthest.miles or 0.0, limit)})."
        )
    return " ".join(sentences)


def _names(ids: list[str]) -> str:
    if len(ids) <= 2:
        return " and ".join(ids)
    return f"{', '.join(ids[:-1])} and {ids[-1]}"


# --- Evaluation cases -------------------------------------------------------------------


def location_case_facts(case: dict[str, Any]) -> VanpoolFacts:
    """Facts for one line of a location evaluation set (evals/data/location/*.jsonl)."""
    van = case.get("vanpool") or {}
    max_miles = van.get("max_miles")
    return VanpoolFacts(
        vanpool_id=str(van.get("vanpool_id") or case.get("id") or "VP-EVAL"),
        pickup=_case_point(van.get("pickup")),
        pickup_zip=str(van.get("pickup_zip") or ""),
        max_miles=float(max_miles) if max_miles else float(settings.DEFAULT_MAX_COMMUTE_MILES),
        riders=tuple(
            RiderFacts(
                employee_id=str(rider["employee_id"]),
                home_zip=str(rider.get("home_zip") or ""),
                home=_case_point(rider.get("home")),
            )
            for rider in case.get("riders", [])
        ),
    )


def _case_point(raw: dict[str, Any] | None) -> Point | None:
    if not raw:
        return None
    return Point(float(raw["lat"]), float(raw["lng"]))
