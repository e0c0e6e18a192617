"""Every SPF/DKIM/DMARC verdict rule reads its examples right; only a failure counts."""

import email
from email import policy

import pytest
from django.test import RequestFactory

from outreach.authentication import RULES, failed_checks, header_fields, provider_fields

EXAMPLES = [
    pytest.param(rule, text, True, id=f"{rule.name}-fails-{n}")
    for rule in RULES
    for n, text in enumerate(rule.must_match)
] + [
    pytest.param(rule, text, False, id=f"{rule.name}-holds-{n}")
    for rule in RULES
    for n, text in enumerate(rule.must_not_match)
]


@pytest.mark.parametrize(("rule", "value", "fails"), EXAMPLES)
def test_each_rule_reads_its_examples(rule, value, fails):
    assert rule.fails(value) is fails
    # Read through the entry point too, under every field the rule reads.
    for name in rule.fields:
        assert bool(failed_checks({name: value})) is fails


def test_only_the_topmost_header_the_provider_added_is_read():
    msg = email.message_from_bytes(
        b"Authentication-Results: mx.poolpatrol.example; spf=pass; dkim=pass; dmarc=pass\r\n"
        b"Authentication-Results: relay.example.net; dkim=fail header.d=example.com\r\n"
        b"From: pat@example.com\r\n\r\nhi\r\n",
        policy=policy.default,
    )

    assert failed_checks(header_fields(msg)) == ()


def test_a_failure_names_the_field_and_its_value():
    msg = email.message_from_bytes(
        b"Received-SPF: Fail (mx.poolpatrol.example: 192.0.2.7 is not permitted)\r\n"
        b"From: pat@example.com\r\n\r\nhi\r\n",
        policy=policy.default,
    )

    assert failed_checks(header_fields(msg)) == (
        "Received-SPF: Fail (mx.poolpatrol.example: 192.0.2.7 is not permitted)",
    )


def test_amazon_ses_receipt_verdicts_are_read():
    event = {
        "receipt": {
            "spfVerdict": {"status": "PASS"},
            "dkimVerdict": {"status": "GRAY"},
            "dmarcVerdict": {"status": "FAIL"},
        }
    }

    assert failed_checks(provider_fields(event)) == ("dmarcVerdict: FAIL",)


def test_sendgrid_and_mailgun_form_fields_are_read():
    request = RequestFactory().post(
        "/anymail/sendgrid/inbound/",
        {"SPF": "fail", "dkim": "{@example.com : pass}", "X-Mailgun-Spf": "Neutral"},
    )

    assert failed_checks(provider_fields(request)) == ("SPF: fail",)


@pytest.mark.parametrize("event", [None, [], "text", {"receipt": "not a dict"}, {"Headers": []}])
def test_a_payload_without_verdicts_has_no_failures(event):
    assert failed_checks(provider_fields(event)) == ()
