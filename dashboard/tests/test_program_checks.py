"""The program page's seats held but not ridden, subsidy at stake, §132(f) status and gaps."""

import pytest
from django.urls import reverse

from dashboard.program_checks import check_summary
from tests.factories import VanpoolFactory, VerificationFactory

pytestmark = pytest.mark.django_db


def verification(vanpool, check_type, verdict, evidence=(), rider_flags=None):
    return VerificationFactory(
        case=None,
        vanpool=vanpool,
        check_type=check_type,
        verdict=verdict,
        evidence=list(evidence),
        rider_flags=rider_flags or {},
    )


def month(vanpool_id, rules):
    return {"type": "vanpool_month", "employee_id": "", "vanpool_id": vanpool_id,
            "month": "2026-10", "rules": rules}  # fmt: skip


def test_it_counts_each_vans_newest_ridership_failures_and_their_subsidy(settings):
    settings.SEAT_SUBSIDY_MONTHLY = 150
    van, other = VanpoolFactory(), VanpoolFactory()
    # An older audit's failure the newest audit no longer finds is not counted.
    verification(van, "ridership", "fail", rider_flags={"EMP-1": "fail", "EMP-2": "fail"})
    verification(van, "ridership", "fail", rider_flags={"EMP-1": "fail", "EMP-2": "pass"})
    verification(other, "ridership", "fail", rider_flags={"EMP-9": "fail"})
    summary = check_summary()
    assert sorted(summary.unridden) == sorted(
        [(van.vanpool_id, "EMP-1"), (other.vanpool_id, "EMP-9")]
    )
    assert summary.subsidy_at_stake == 300


def test_it_leaves_out_vans_that_are_not_active():
    van = VanpoolFactory(status="suspended")
    verification(van, "ridership", "fail", rider_flags={"EMP-1": "fail"})
    assert check_summary().unridden == []


def test_the_program_page_shows_the_vans_status_and_the_gaps(client, coordinator):
    van, clean = VanpoolFactory(), VanpoolFactory()
    rules = {"seats": "pass", "occupancy": "pass", "commute": "fail"}
    verification(van, "vanpool_rules", "fail", [month(van.vanpool_id, rules)])
    verification(clean, "vanpool_rules", "pass", [month(clean.vanpool_id, {"seats": "pass"})])
    gap = {"type": "no_data", "employee_id": "", "missing": "trips, ride days or badge swipes",
           "detail": f"no trip data for {clean.vanpool_id} in the window"}  # fmt: skip
    verification(clean, "ridership", "unknown", [gap])
    client.force_login(coordinator)
    html = client.get(reverse("program")).content.decode()
    assert "1 of 2 vans below the rules." in html
    assert '<span class="badge badge-fail">fail</span> commute' in html
    assert f"no trip data for {clean.vanpool_id} in the window" in html
