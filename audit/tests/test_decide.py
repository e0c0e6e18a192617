"""The audit's input hash: what makes an unchanged audit recognisable."""

import datetime as dt

from audit.decide import input_hash, input_hashes


def test_hashing_several_checks_at_once_gives_each_check_s_own_hash_byte_for_byte():
    facts = {"vanpool_id": "VP-1", "riders": [{"employee_id": "E1", "home_zip": "02134"}], "n": 1.5}
    day = dt.date(2026, 11, 23)
    together = input_hashes(facts, ["location", "shift"], day, "rules")
    assert together == {check: input_hash(facts, check, day, "rules") for check in together}


def test_the_hash_changes_with_the_facts_the_date_and_the_backend():
    facts = {"vanpool_id": "VP-1"}
    day = dt.date(2026, 11, 23)
    base = input_hash(facts, "location", day, "rules")
    assert base != input_hash({"vanpool_id": "VP-2"}, "location", day, "rules")
    assert base != input_hash(facts, "location", day + dt.timedelta(days=1), "rules")
    assert base != input_hash(facts, "location", day, "openai")
