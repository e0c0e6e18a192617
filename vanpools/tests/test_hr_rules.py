"""Every named rule that reads HR's schedule words reads its examples and none of its others."""

import ast
import json
from pathlib import Path

import pytest

from vanpools.hr_text import RULES

PACKAGE = Path(__file__).resolve().parents[1] / "hr_text"
EVAL_DATA = Path(__file__).resolve().parents[2] / "evals" / "data"

READS = [(rule.name, text) for rule in RULES for text in rule.must_read]
LEAVES = [(rule.name, text) for rule in RULES for text in rule.must_not_read]

# Character classes that split text into words or letters: tokenising, not HR wording.
TOKENISERS = {r"[a-z]+", r"[a-z]", r"\d", r"[-/&+,.]"}


def _rule(name: str):
    return next(rule for rule in RULES if rule.name == name)


def test_every_rule_has_a_unique_name_a_reason_and_examples_both_ways():
    assert len({rule.name for rule in RULES}) == len(RULES)
    for rule in RULES:
        assert rule.reason and len(rule.must_read) >= 2 and len(rule.must_not_read) >= 2, rule.name


@pytest.mark.parametrize(("name", "text"), READS)
def test_a_rule_reads_what_it_names(name, text):
    assert _rule(name).reads(text), text


@pytest.mark.parametrize(("name", "text"), LEAVES)
def test_a_rule_leaves_its_counter_examples_alone(name, text):
    assert not _rule(name).reads(text), text


def test_every_pattern_the_reader_applies_is_a_named_rule():
    """No regular expression written inline in the reader: each one is an entry in the table."""
    inline = []
    for path in sorted(PACKAGE.glob("*.py")):
        if path.name in {"rule.py", "rules_hours.py", "rules_days.py"}:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id == "re"
                and node.args
                and isinstance(node.args[0], ast.Constant)
                and node.args[0].value not in TOKENISERS
            ):
                inline.append(f"{path.name}:{node.lineno} {node.args[0].value}")
    assert inline == []


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [text for item in value.values() for text in _strings(item)]
    if isinstance(value, list):
        return [text for item in value for text in _strings(item)]
    return []


def test_no_example_is_copied_from_the_evaluation_sets():
    """The examples are general HR wording, so the held-out figures stay held out.

    Words of the trade ("mon-fri", "3rd shift") are shared by every schedule; a
    phrase of 12 characters or more must appear in no labelled text.
    """
    labelled = [
        text.lower()
        for path in EVAL_DATA.rglob("*.jsonl")
        for line in path.read_text().splitlines()
        if line.strip()
        for text in _strings(json.loads(line))
    ]
    phrases = {text.lower() for _, text in READS + LEAVES if len(text.strip()) >= 12}
    copied = sorted(phrase for phrase in phrases if any(phrase in text for text in labelled))
    assert copied == []
