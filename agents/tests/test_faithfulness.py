"""agents.faithfulness: every number, ID and date in a text must be in its evidence."""

import datetime as dt
from dataclasses import dataclass

from agents.contracts import DistanceEvidence
from agents.faithfulness import check_faithfulness, extract_claims

DISTANCE = DistanceEvidence(
    employee_id="EMP-1169",
    home_zip="95814",
    home_source="zip_centroid",
    pickup="VP-102",
    pickup_source="pickup_coordinates",
    straight_miles=70.58,
    miles=84.7,
    threshold_miles=50,
    provider="offline",
)


def unsupported(text, evidence):
    return [claim.text for claim in check_faithfulness(text, evidence).unsupported]


def test_it_passes_reasoning_whose_every_claim_is_in_the_evidence():
    text = "EMP-1169 lives 84.7 commute miles from the VP-102 pickup (ZIP 95814); the limit is 50."
    result = check_faithfulness(text, [DISTANCE])
    assert result.faithful
    assert {c.kind for c in result.claims} == {"id", "number"}


def test_it_catches_an_invented_distance_and_an_unknown_rider():
    text = "EMP-1169 lives 91.2 miles away, and EMP-2000 lives 12 miles away."
    assert unsupported(text, [DISTANCE]) == ["EMP-2000", "91.2", "12"]


def test_rounding_to_the_digits_written_is_restating_not_inventing():
    assert check_faithfulness("about 85 miles", {"miles": 84.66}).faithful
    assert check_faithfulness("about 89.8 miles", {"miles": 89.85}).faithful  # float formatting
    assert check_faithfulness("about 89.9 miles", {"miles": 89.85}).faithful  # half up
    assert not check_faithfulness("about 84 miles", {"miles": 84.66}).faithful


def test_dates_match_in_any_common_spelling_and_a_missing_year_matches_any_year():
    evidence = {"deadline": dt.date(2026, 11, 30), "audit_date": "2026-11-23"}
    assert check_faithfulness("Reply by Monday, November 30.", evidence).faithful
    assert check_faithfulness("audited 11/23/2026 and 23 Nov 2026", evidence).faithful
    assert unsupported("Reply by December 1.", evidence) == ["December 1"]


def test_a_spanish_date_matches_by_its_month_name():
    evidence = {"deadline": dt.date(2026, 11, 30)}
    assert check_faithfulness("a más tardar el lunes 30 de noviembre", evidence).faithful
    assert check_faithfulness("el 30 de noviembre de 2026", evidence).faithful
    assert unsupported("a más tardar el 1 de diciembre", evidence) == ["1 de diciembre"]
    # "mar 07:00" is Tuesday at seven in Spanish, not March 7: a time is never a day.
    assert [c.kind for c in extract_claims("lun–mar 07:00")] == ["time"]


def test_times_match_however_they_are_padded_and_a_gap_between_two_is_allowed():
    evidence = {"rider_start": "22:00", "van_arrival": "07:00"}
    assert check_faithfulness("starts 22:00, the van arrives 7:00", evidence).faithful
    assert check_faithfulness("540 minutes off", evidence).faithful
    assert not check_faithfulness("starts 21:00", evidence).faithful


def test_digits_inside_ids_dates_and_zip_plus_four_are_not_read_again_as_numbers():
    claims = extract_claims("CASE-1A2B3C4D for 90026-3214 on 2026-11-23")
    assert [(c.kind, c.text) for c in claims] == [
        ("date", "2026-11-23"),
        ("id", "90026-3214"),
        ("id", "CASE-1A2B3C4D"),
    ]


def test_zip_codes_keep_their_leading_zero_and_count_as_numbers_in_evidence():
    assert check_faithfulness("home ZIP 01810", {"home_zip": "01810"}).faithful
    assert not check_faithfulness("home ZIP 01811", {"home_zip": "01810"}).faithful


def test_evidence_may_be_dataclasses_models_and_nested_lists():
    @dataclass
    class Facts:
        employee_id: str
        days: int

    evidence = [Facts("EMP-7", 5), [DISTANCE], {"nested": {"deeper": [dt.datetime(2026, 1, 5)]}}]
    text = "EMP-7 worked 5 days from 2026-01-05; 84.7 miles to VP-102."
    assert check_faithfulness(text, evidence).faithful


def test_field_names_are_not_facts_and_text_without_claims_is_faithful():
    assert not check_faithfulness("threshold 50", {"threshold_50": "x"}).faithful
    result = check_faithfulness("The rider lives too far from the pickup.", {})
    assert result.faithful and result.claims == ()
    assert result.describe() == "faithful (0 claims checked)"


def test_it_says_what_is_missing():
    result = check_faithfulness("EMP-9 at 12:15", {})
    assert result.describe() == "not in the evidence: id 'EMP-9', time '12:15'"


def test_the_five_digit_zip_of_a_zip_plus_4_on_record_is_supported():
    result = check_faithfulness("E1 lives in ZIP 90026.", {"home_zip": "90026-3214"})
    assert result.faithful


def test_another_zip_is_still_unsupported_beside_a_zip_plus_4():
    result = check_faithfulness("E1 lives in ZIP 90027.", {"home_zip": "90026-3214"})
    assert not result.faithful
