"""Lines a mail program writes under every message: never the rider's words.

A phone's "Sent from my iPhone" is what a reply with nothing typed in it
still carries. Read as words, it was taken for an acknowledgment or an update
and acted on ("Sent from Yahoo Mail on Android" → update → a re-audit and an
email back). Removed, such a reply has nothing to read and goes to a person.

Each rule has a name, a reason, and examples it must and must not match;
``outreach/tests/test_boilerplate.py`` checks every example. A rule removes
whole lines only, and only short ones, so a sentence that mentions a phone
stays the rider's.
"""

import re
from dataclasses import dataclass, field


@dataclass(frozen=True)
class BoilerplateRule:
    name: str
    reason: str
    pattern: str
    must_match: tuple[str, ...]
    must_not_match: tuple[str, ...]
    compiled: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        line = rf"^[ \t>]*(?:{self.pattern})[ \t.!]*$"
        object.__setattr__(self, "compiled", re.compile(line, re.IGNORECASE | re.MULTILINE))


# Mail apps' taglines, in the languages of the reply parser; at most ~70
# characters of device or app name after the opening words.
DEVICE_SIGNATURE = BoilerplateRule(
    name="device_signature",
    reason="the tagline a phone or mail app adds to every message it sends",
    pattern=(
        r"(?:get|download)\s+"
        r"(?:outlook|gmail|yahoo\s+mail|aol|proton\s?mail|the\s+[\w ]{1,20}\s+app)"
        r"\s+for\s+(?:ios|android|iphone|ipad|windows|mac)"
        r"|sent\s+(?:from|via|with|using)\s+(?:my\s+|the\s+)?[\w'’ ,.&()-]{0,60}?"
        r"(?:iphone|ipad|android|samsung|galaxy|smartphone|phone|mobile|tablet|device|"
        r"blackberry|outlook|gmail|yahoo|aol|proton\s?mail|mail|windows|ios|pixel|"
        r"huawei|xiaomi|motorola)(?:[\w'’ ,.&()-]{0,40})?"
        r"|enviado\s+(?:desde|do|de)\s+(?:mi|meu|o)?\s*[\w'’ ,.&()-]{1,60}"
        r"|von\s+meinem\s+[\w'’ ,.&()-]{1,60}\s+gesendet"
        r"|(?:envoy[ée]|envoy[ée]\s+depuis)\s+(?:de|depuis)?\s*(?:mon|ma)\s+[\w'’ ,.&()-]{1,60}"
        r"|inviato\s+da\s+[\w'’ ,.&()-]{1,60}"
        r"|verzonden\s+(?:vanaf|met|via)\s+[\w'’ ,.&()-]{1,60}"
        r"|(?:skickat|sendt|sendt)\s+fr[åa]n?\s+(?:min|mi)\s+[\w'’ ,.&()-]{1,60}"
        r"|sendt\s+fra\s+(?:min\s+)?[\w'’ ,.&()-]{1,60}"
        r"|wys[łl]ane\s+z\s+[\w'’ ,.&()-]{1,60}"
    ),
    must_match=(
        "Sent from my iPhone",
        "Sent from Outlook for Android",
        "Get Outlook for iOS",
        "Sent from Yahoo Mail on Android",
        "Sent from my Verizon, Samsung Galaxy smartphone",
        "Sent from Mail for Windows",
        "Sent via the Samsung Galaxy S23, an AT&T 5G smartphone",
        "Enviado desde mi iPhone",
        "Von meinem iPhone gesendet",
        "Envoyé de mon iPhone",
        "Inviato da iPhone",
        "Verzonden vanaf mijn iPhone",
        "Skickat från min iPhone",
        "Sendt fra min iPhone",
        "Wysłane z iPhone'a",
    ),
    must_not_match=(
        "I sent the form from my phone yesterday.",
        "Sent from my iPhone because my laptop is broken, and I moved to Tracy in May.",
        "Get me a person from HR please, my phone number is on file.",
        "I sent my new address last week.",
        "My phone is broken, please call my desk.",
    ),
)

RULES: tuple[BoilerplateRule, ...] = (DEVICE_SIGNATURE,)


def without_boilerplate(text: str) -> str:
    """``text`` with every line a rule matches removed."""
    for rule in RULES:
        text = rule.compiled.sub("", text)
    return text.strip()
