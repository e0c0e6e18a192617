"""The location specialist: does each rider live close enough to the pickup?

A pure function of preloaded facts. Home is the stored coordinates when HR
has them, else the centroid of the home ZIP; the pickup is the vanpool's
pickup coordinates, else its pickup ZIP's centroid, else the work site.
Commute miles come from the distance provider (great-circle × circuity by
default). A rider fails when commute miles exceed the vanpool's limit; a home
the rules cannot place is ``unknown``, never a pass.
"""

from dataclasses import dataclass
from typing import Any, Literal

from agents.contracts import (
    Citation,
    DistanceEvidence,
    RiderFlag,
    SpecialistResult,
    UnknownEvidence,
    combine_verdicts,
)
from agents.facts import Point, RiderFacts, VanpoolFacts
from vanpools.geo import DistanceProvider, get_distance_provider, normalise_zip, zip_centroid

PickupSource = Literal["pickup_coordinates", "pickup_zip_centroid", "work_site"]
UNKNOWN_CONFIDENCE = 2


@dataclass(frozen=True)
class Pickup:
    point: Point
    source: PickupSource
    cite: Citation


@dataclass(frozen=True)
class RiderDistance:
    flag: RiderFlag
    evidence: DistanceEvidence | UnknownEvidence
    confidence: int
    miles: float | None = None


def find_pickup(facts: VanpoolFacts) -> Pickup | None:
    if facts.pickup:
        return Pickup(facts.pickup, "pickup_coordinates", _cite_van(facts, "pickup_lat/pickup_lng"))
    centroid = zip_centroid(facts.pickup_zip) if facts.pickup_zip else None
    if centroid:
        return Pickup(centroid, "pickup_zip_centroid", _cite_van(facts, "pickup_zip"))
    if facts.work_site_point:
        return Pickup(
            facts.work_site_point, "work_site", _cite_van(facts, "work_site_lat/work_site_lng")
        )
    return None


def _cite_van(facts: VanpoolFacts, field: str) -> Citation:
    return Citation(record="vanpool", id=facts.vanpool_id, field=field)


def distance_confidence(miles: float, limit: float, *, from_centroid: bool) -> int:
    """How sure the verdict is, from its margin to the limit.

    A ZIP centroid can sit a few miles from the real address (rural ZIPs are
    large), so a centroid-based verdict needs a wider margin than one from
    stored coordinates before it is called certain.
    """
    margin = abs(miles - limit)
    sure, fairly = (6.0, 2.0) if from_centroid else (2.0, 0.5)
    if margin > sure:
        return 5
    if margin > fairly:
        return 4
    return 3


def judge_rider(
    rider: RiderFacts, pickup: Pickup, facts: VanpoolFacts, provider: DistanceProvider
) -> RiderDistance:
    home, source, cite = _home_of(rider)
    if home is None:
        reason = _unplaceable(rider.home_zip)
        return RiderDistance(
            flag=RiderFlag(employee_id=rider.employee_id, verdict="unknown", reason=reason),
            evidence=UnknownEvidence(
                employee_id=rider.employee_id,
                value=str(rider.home_zip),
                reason=reason,
                cites=[Citation(record="employee", id=rider.employee_id, field="home_zip")],
            ),
            confidence=UNKNOWN_CONFIDENCE,
        )
    straight, commute = provider.commute_miles(home, pickup.point)
    limit = float(facts.max_miles)
    fails = commute > limit
    where = f"ZIP {rider.home_zip}" if source == "zip_centroid" else "stored home coordinates"
    reason = (
        f"lives {commute:.1f} commute miles from the {facts.vanpool_id} pickup ({where}); "
        f"the limit is {limit:g}"
    )
    return RiderDistance(
        flag=RiderFlag(
            employee_id=rider.employee_id, verdict="fail" if fails else "pass", reason=reason
        ),
        evidence=DistanceEvidence(
            employee_id=rider.employee_id,
            home_zip=str(rider.home_zip),
            home_source=source,
            pickup=facts.vanpool_id,
            pickup_source=pickup.source,
            straight_miles=round(straight, 1),
            miles=round(commute, 1),
            threshold_miles=limit,
            provider=provider.name,
            cites=[cite, pickup.cite],
        ),
        confidence=distance_confidence(commute, limit, from_centroid=source == "zip_centroid"),
        miles=commute,
    )


def _home_of(rider: RiderFacts) -> tuple[Point | None, Any, Citation]:
    if rider.home:
        return (
            rider.home,
            "stored_coordinates",
            Citation(record="employee", id=rider.employee_id, field="home_lat/home_lng"),
        )
    centroid = zip_centroid(rider.home_zip) if rider.home_zip else None
    return (
        centroid,
        "zip_centroid",
        Citation(record="employee", id=rider.employee_id, field="home_zip"),
    )


def _unplaceable(home_zip: str) -> str:
    if not home_zip:
        return "no home ZIP or coordinates on record"
    if normalise_zip(home_zip) is None:
        return f"home ZIP {home_zip!r} is not a valid US ZIP code"
    return f"home ZIP {home_zip} is not in the US ZIP table"


def check_location(
    facts: VanpoolFacts, provider: DistanceProvider | None = None
) -> SpecialistResult:
    if not facts.riders:
        return SpecialistResult(
            check="location",
            verdict="pass",
            confidence=5,
            reasoning=f"{facts.vanpool_id} has no active riders to check.",
        )
    pickup = find_pickup(facts)
    if pickup is None:
        return _no_pickup(facts)
    provider = provider or get_distance_provider()
    judged = [judge_rider(rider, pickup, facts, provider) for rider in facts.riders]
    verdict = combine_verdicts([item.flag.verdict for item in judged])
    return SpecialistResult(
        check="location",
        verdict=verdict,
        confidence=_vanpool_confidence(verdict, judged),
        reasoning=_reasoning(facts, judged),
        evidence=[item.evidence for item in judged],
        riders=[item.flag for item in judged],
    )


def _vanpool_confidence(verdict: str, judged: list[RiderDistance]) -> int:
    if verdict == "unknown":
        return UNKNOWN_CONFIDENCE
    if verdict == "fail":
        # One clear failing rider is enough to fail the vanpool.
        return max(item.confidence for item in judged if item.flag.verdict == "fail")
    return min(item.confidence for item in judged)


def _reasoning(facts: VanpoolFacts, judged: list[RiderDistance]) -> str:
    sentences = [
        f"{item.flag.employee_id} {item.flag.reason}."
        for item in judged
        if item.flag.verdict != "pass"
    ]
    passing = [item for item in judged if item.flag.verdict == "pass"]
    if passing:
        farthest = max(item.miles or 0.0 for item in passing)
        others = "The other" if sentences else "All"
        noun = "rider lives" if len(passing) == 1 else "riders live"
        sentences.append(
            f"{others} {len(passing)} {noun} within {float(facts.max_miles):g} commute miles "
            f"of the pickup (farthest {farthest:.1f})."
        )
    return " ".join(sentences)


def _no_pickup(facts: VanpoolFacts) -> SpecialistResult:
    reason = "the vanpool has no pickup point or work-site location on record"
    return SpecialistResult(
        check="location",
        verdict="unknown",
        confidence=UNKNOWN_CONFIDENCE,
        reasoning=f"{facts.vanpool_id}: {reason}, so no distance can be measured.",
        evidence=[
            UnknownEvidence(
                employee_id=rider.employee_id,
                value="",
                reason=reason,
                cites=[_cite_van(facts, "pickup_lat/pickup_lng")],
            )
            for rider in facts.riders
        ],
        riders=[
            RiderFlag(employee_id=r.employee_id, verdict="unknown", reason=reason)
            for r in facts.riders
        ],
    )


def location_case_facts(case: dict[str, Any]) -> VanpoolFacts:
    """Facts for one line of a location evaluation file (see README, "Evaluation sets")."""
    van = case.get("vanpool", {})
    pickup = van.get("pickup")
    return VanpoolFacts(
        vanpool_id=str(case.get("id", "VP-EVAL")),
        pickup=Point(float(pickup["lat"]), float(pickup["lng"])) if pickup else None,
        pickup_zip=str(van.get("pickup_zip", "")),
        max_miles=float(van.get("max_miles", 50)),
        riders=tuple(
            RiderFacts(
                employee_id=str(rider["employee_id"]),
                home_zip=str(rider.get("home_zip", "")),
                home=Point(float(rider["home"]["lat"]), float(rider["home"]["lng"]))
                if rider.get("home")
                else None,
            )
            for rider in case.get("riders", [])
        ),
    )
