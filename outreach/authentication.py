"""Did the sender's mail pass SPF, DKIM and DMARC where our provider received it?

A reply's From is only a header: anyone can write a rider's address there.
The provider that receives our mail checks the sending server (SPF), the
signature (DKIM) and their agreement with From (DMARC), and passes the
verdicts on, in headers it adds on top of the message or in fields of its
webhook payload. A *failing* verdict sends the reply to a person instead of
acting on it. ``none``, ``neutral``, ``softfail``, errors and a missing
verdict are not failures: most mail to a small program has no DMARC policy,
and a rider must not be silenced because their domain publishes none.

Only the topmost header of each name is read: it is the one the provider
added on arrival; older ones below it were written by servers on the way (or
by the sender, who could claim anything). Trusting only *fail* keeps a forged
header harmless: one that claims a pass grants nothing, one that claims a
failure only holds the forger's own mail for a person.

Each rule has a name, a reason, the fields it reads, and examples it must and
must not read as a failure; ``outreach/tests/test_authentication.py`` checks
every example.
"""

import email.message
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

# Headers whose value is an RFC 8601 result list ("mx.example; spf=pass ...; dkim=fail ...").
RESULT_HEADERS = ("Authentication-Results", "ARC-Authentication-Results")


@dataclass(frozen=True)
class VerdictRule:
    name: str
    reason: str
    # Header names (case-insensitive) or provider payload fields the rule reads.
    fields: tuple[str, ...]
    pattern: str
    must_match: tuple[str, ...]
    must_not_match: tuple[str, ...]
    # A pattern that, found in the same value, means the check passed after all
    # (a second DKIM signature that verifies).
    unless: str = ""
    compiled: re.Pattern[str] = field(init=False, repr=False, compare=False)
    compiled_unless: re.Pattern[str] | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "compiled", re.compile(self.pattern, re.IGNORECASE))
        unless = re.compile(self.unless, re.IGNORECASE) if self.unless else None
        object.__setattr__(self, "compiled_unless", unless)

    def fails(self, value: str) -> bool:
        """Whether ``value`` (one field's text) records a failing verdict."""
        text = _without_comments(value)
        if not self.compiled.search(text):
            return False
        return self.compiled_unless is None or not self.compiled_unless.search(text)


# A method's result in a result list: at the start or after ";" or a space, so
# "spf=softfail" and "x-spf=fail" are not "spf=fail".
def _result(method: str, result: str) -> str:
    return rf"(?:^|[;\s]){method}\s*=\s*{result}\b"


SPF_RESULT = VerdictRule(
    name="spf_result_fail",
    reason="the sending server is not one the From domain allows (SPF hard fail)",
    fields=RESULT_HEADERS,
    pattern=_result("spf", "fail"),
    must_match=(
        "mx.google.com; spf=fail (google.com: domain of x@example.com does not designate "
        "192.0.2.1 as permitted sender) smtp.mailfrom=x@example.com",
        "amazonses.com; spf=fail (spfCheck: 192.0.2.1 is not allowed) "
        "smtp.mailfrom=x@example.com; dkim=pass header.i=@example.com",
        "i=1; mx.microsoft.com 1; spf=fail smtp.mailfrom=example.com; dmarc=none",
    ),
    must_not_match=(
        "mx.google.com; spf=pass (google.com: domain of x@example.com designates 192.0.2.1 "
        "as permitted sender) smtp.mailfrom=x@example.com",
        "mx.google.com; spf=softfail (google.com: domain of transitioning x@example.com "
        "does not designate 192.0.2.1 as permitted sender) smtp.mailfrom=x@example.com",
        "mx.example.net; spf=none smtp.mailfrom=example.com",
        "mx.example.net; spf=neutral smtp.mailfrom=example.com",
        "mx.example.net; spf=permerror smtp.mailfrom=example.com",
        "mx.example.net; x-spf=fail; spf=pass (a local test result)",
        "mx.example.net; spf=pass (the older hop said spf=fail) smtp.mailfrom=example.com",
    ),
)

DKIM_RESULT = VerdictRule(
    name="dkim_result_fail",
    reason="the message carries a signature that does not verify, and none that does",
    fields=RESULT_HEADERS,
    pattern=_result("dkim", "fail"),
    unless=_result("dkim", "pass"),
    must_match=(
        'mx.google.com; dkim=fail header.i=@example.com header.s=s1 header.b="AbCd"',
        'mx.example.net; dkim=fail reason="signature verification failed" header.d=example.com',
    ),
    must_not_match=(
        "mx.google.com; dkim=pass header.i=@example.com header.s=s1",
        "mx.example.net; dkim=none (message not signed)",
        "mx.example.net; dkim=neutral (body hash did not verify) header.d=example.com",
        "mx.example.net; dkim=fail header.d=list.example.org; dkim=pass header.d=example.com",
        "mx.example.net; dkim=temperror (no key for signature)",
    ),
)

DMARC_RESULT = VerdictRule(
    name="dmarc_result_fail",
    reason="the From domain's own policy says this mail is not from it (DMARC fail)",
    fields=RESULT_HEADERS,
    pattern=_result("dmarc", "fail"),
    must_match=(
        "mx.google.com; dkim=pass header.i=@relay.example.org; spf=pass; "
        "dmarc=fail (p=REJECT sp=REJECT dis=NONE) header.from=example.com",
        "i=2; mx.microsoft.com 1; spf=pass; dmarc=fail action=quarantine header.from=example.com",
    ),
    must_not_match=(
        "mx.google.com; dmarc=pass (p=NONE sp=NONE dis=NONE) header.from=example.com",
        "mx.example.net; dmarc=none header.from=example.com",
        "mx.example.net; dmarc=bestguesspass header.from=example.com",
        "mx.example.net; dmarc=temperror header.from=example.com",
    ),
)

SINGLE_VERDICT = VerdictRule(
    name="single_verdict_fail",
    reason="a field holding one check's verdict says fail",
    fields=(
        # RFC 7208's trace header, first word: "Fail (mailfrom) identity=..."
        "Received-SPF",
        # Mailgun's headers (and form fields) on a forwarded message.
        "X-Mailgun-Spf",
        "X-Mailgun-Dkim-Check-Result",
        # SendGrid's inbound parse form field.
        "SPF",
        # Amazon SES's receipt verdicts (receipt.spfVerdict.status and so on).
        "spfVerdict",
        "dkimVerdict",
        "dmarcVerdict",
    ),
    pattern=r"^\s*fail\b",
    must_match=(
        "Fail (protection.outlook.com: domain of example.com does not designate 192.0.2.1 "
        "as permitted sender) receiver=protection.outlook.com; client-ip=192.0.2.1;",
        "fail (mx.example.net: domain of x@example.com does not designate 192.0.2.1)",
        "Fail",
        "FAIL",
        "fail",
    ),
    must_not_match=(
        "Pass (protection.outlook.com: domain of example.com designates 192.0.2.1)",
        "SoftFail (mx.example.net: domain of transitioning x@example.com)",
        "softfail",
        "Neutral",
        "None",
        "PASS",
        "GRAY",
        "PROCESSING_FAILED",
        "",
    ),
)

SENDGRID_DKIM = VerdictRule(
    name="sendgrid_dkim_fail",
    reason="SendGrid's dkim field lists a failing signature, and none that passes",
    fields=("dkim",),
    pattern=r":\s*fail\b",
    unless=r":\s*pass\b",
    must_match=("{@example.com : fail}", "{@example.com : fail (body hash did not verify)}"),
    must_not_match=(
        "{@example.com : pass}",
        "{@list.example.org : fail, @example.com : pass}",
        "none",
        "",
    ),
)

RULES: tuple[VerdictRule, ...] = (
    SPF_RESULT,
    DKIM_RESULT,
    DMARC_RESULT,
    SINGLE_VERDICT,
    SENDGRID_DKIM,
)


def failed_checks(fields: Mapping[str, str]) -> tuple[str, ...]:
    """Why the sender's mail failed authentication, one line per failing field ("" none).

    ``fields`` maps a header or payload field name to its value (the topmost
    header of that name); names are compared without case.
    """
    by_name = {name.lower(): value for name, value in fields.items() if value}
    failures: list[str] = []
    for rule in RULES:
        for name in rule.fields:
            value = by_name.get(name.lower(), "")
            if value and rule.fails(value):
                failures.append(f"{name}: {' '.join(value.split())[:200]}")
    return tuple(dict.fromkeys(failures))


def header_fields(msg: email.message.Message) -> dict[str, str]:
    """The topmost value of each header a rule reads (the provider adds its own on top)."""
    names = {name for rule in RULES for name in rule.fields}
    found: dict[str, str] = {}
    for name in names:
        try:
            value = msg.get(name)
        except Exception:  # a malformed header is no verdict
            continue
        if value is not None:
            found[name] = str(value)
    return found


def provider_fields(esp_event: object) -> dict[str, str]:
    """The verdict fields of a provider's inbound payload, as anymail hands it over.

    SendGrid and Mailgun post a form (anymail keeps the request); Amazon SES
    sends a JSON receipt. Postmark's verdicts arrive as headers of the message.
    """
    names = {name for rule in RULES for name in rule.fields}
    found: dict[str, str] = {}
    post = getattr(esp_event, "POST", None)
    if post is not None:
        for name in names:
            value = post.get(name)
            if isinstance(value, str):
                found[name] = value
    if isinstance(esp_event, dict):
        receipt = esp_event.get("receipt")
        if isinstance(receipt, dict):
            for name in ("spfVerdict", "dkimVerdict", "dmarcVerdict"):
                verdict = receipt.get(name)
                status = verdict.get("status") if isinstance(verdict, dict) else None
                if isinstance(status, str):
                    found[name] = status
    return found


def _without_comments(value: str) -> str:
    # RFC 5322 comments (nested ones too) explain a result; they are not results.
    text = " ".join(value.split())
    while True:
        stripped = re.sub(r"\([^()]*\)", " ", text)
        if stripped == text:
            return text
        text = stripped
