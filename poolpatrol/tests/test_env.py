import pytest
from django.core.exceptions import ImproperlyConfigured

from poolpatrol.env import env_bool, env_choice, env_float, env_int, env_int_map, env_list


def test_it_reads_booleans_in_the_usual_spellings(monkeypatch):
    monkeypatch.setenv("FLAG", "Yes")
    assert env_bool("FLAG") is True
    monkeypatch.setenv("FLAG", "0")
    assert env_bool("FLAG", True) is False


def test_it_falls_back_to_the_default_when_unset(monkeypatch):
    monkeypatch.delenv("FLAG", raising=False)
    assert env_bool("FLAG", True) is True
    assert env_int("FLAG", 7) == 7


@pytest.mark.parametrize(
    ("reader", "raw", "message"),
    [
        (lambda: env_bool("VALUE"), "ture", "is not a boolean"),
        (lambda: env_int("VALUE", 1), "50 miles", "is not an integer"),
        (lambda: env_int("VALUE", 1, minimum=1), "0", "must be at least 1"),
        (lambda: env_float("VALUE", 1.0, minimum=1.0), "0.5", "must be at least 1.0"),
        (lambda: env_float("VALUE", 1.0), "fast", "is not a number"),
        (lambda: env_choice("VALUE", "rules", ("rules", "openai")), "gpt", "must be one of"),
    ],
)
def test_it_fails_loudly_on_a_bad_value(monkeypatch, reader, raw, message):
    monkeypatch.setenv("VALUE", raw)
    with pytest.raises(ImproperlyConfigured, match=message) as excinfo:
        reader()
    assert "VALUE" in str(excinfo.value)


def test_it_splits_lists_and_drops_blanks(monkeypatch):
    monkeypatch.setenv("HOSTS", "a.example, ,b.example,")
    assert env_list("HOSTS") == ["a.example", "b.example"]


def test_it_reads_key_number_pairs(monkeypatch):
    monkeypatch.setenv("X", "cancel_membership=48, review_email=8")
    assert env_int_map("X", minimum=1) == {"cancel_membership": 48, "review_email": 8}
    monkeypatch.delenv("X")
    assert env_int_map("X") == {}


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("review_email", "is not key=number"),
        ("review_email=soon", "is not key=number"),
        ("=8", "is not key=number"),
        ("review_email=0", "review_email=0 must be at least 1"),
    ],
)
def test_it_refuses_a_bad_pair_naming_it(monkeypatch, raw, message):
    monkeypatch.setenv("X", raw)
    with pytest.raises(ImproperlyConfigured, match=message):
        env_int_map("X", minimum=1)
