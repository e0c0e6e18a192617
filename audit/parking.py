"""The parking specialist: does a rider hold a parking permit and a seat at once?

A pure function of preloaded facts: a rider fails when a ``standard`` permit of
theirs is in force on the audit date (active, and the date within its validity)
while their seat is active (it started on or before that date). A ``vanpool``
permit is the van's or its driver's space, not a second benefit. Without the
parking office's permit list for the van's site the rider is ``unknown``. The
rules are docs/audit.md's "The parking check".
"""

import datetime as dt

from agents.contracts import Citation, ParkingEvidence, SpecialistResult
from audit.facts import RiderFacts, VanpoolFacts
from audit.ride_facts import PermitFacts
from audit.rider_results import RiderOutcome, no_data, vanpool_result


def check_parking(facts: VanpoolFacts, audit_date: dt.date) -> SpecialistResult:
    opening = f"{facts.vanpool_id}: parking permits on {audit_date.isoformat()}."
    if not facts.rides.parking_covered:
        outcomes = [
            no_data(
                rider.employee_id,
                "parking permits",
                f"no parking permit list covers {facts.work_site or 'the work site'} "
                f"on {audit_date.isoformat()}",
                f"{rider.employee_id}: no parking permit data for {facts.vanpool_id}'s site.",
            )
            for rider in facts.riders
        ]
        return vanpool_result("parking", outcomes, opening)
    return vanpool_result(
        "parking", [judge_rider(rider, audit_date) for rider in facts.riders], opening
    )


def judge_rider(rider: RiderFacts, audit_date: dt.date) -> RiderOutcome:
    joined = rider.rides.joined
    seat_active = joined is None or joined <= audit_date
    evidence = [_evidence(rider, permit, audit_date, seat_active) for permit in rider.rides.permits]
    conflicts = [item for item in evidence if item.conflict]
    if conflicts:
        shown = "; ".join(
            f"permit {item.permit_id} for {item.lot}, valid {item.valid_from} – "
            f"{item.valid_to or 'no end'}"
            for item in conflicts
        )
        seat = f"a seat since {joined.isoformat()}" if joined else "an active seat"
        sentence = f"{rider.employee_id} holds {seat} and a parking permit in force: {shown}."
        return RiderOutcome(rider.employee_id, "fail", 5, sentence, list(evidence))
    if not evidence:
        sentence = f"{rider.employee_id} holds no parking permit."
    elif not seat_active:
        sentence = f"{rider.employee_id}'s seat starts after {audit_date.isoformat()}."
    else:
        sentence = f"{rider.employee_id} holds no parking permit in force alongside the seat."
    return RiderOutcome(rider.employee_id, "pass", 5, sentence, list(evidence))


def _evidence(
    rider: RiderFacts, permit: PermitFacts, audit_date: dt.date, seat_active: bool
) -> ParkingEvidence:
    in_force = permit.in_force(audit_date)
    cites = [
        Citation(record="parking_permit", id=permit.permit_id, field=name)
        for name in ("valid_from", "valid_to", "status", "lot")
    ]
    cites.append(Citation(record="seat", id=rider.employee_id, field="joined"))
    return ParkingEvidence(
        employee_id=rider.employee_id,
        cites=cites,
        permit_id=permit.permit_id,
        lot=permit.lot,
        valid_from=permit.valid_from.isoformat(),
        valid_to=permit.valid_to.isoformat() if permit.valid_to else "",
        status=permit.status,
        kind=permit.kind,
        seat_joined=rider.rides.joined.isoformat() if rider.rides.joined else "",
        in_force=in_force,
        conflict=in_force and seat_active and permit.kind != "vanpool",
    )
