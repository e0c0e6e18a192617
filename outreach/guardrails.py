"""Guardrails for untrusted text: a rider's reply is evidence, never instructions.

`check_untrusted()` looks for text that tries to steer the system (principle 5):
instructions aimed at a model, requests to change a case's outcome, attempts to
reveal prompts, and content a person reading the email would not see (hidden
HTML, invisible or direction-changing characters, look-alike letters, text
encoded as base64). Any hit
sends the reply to a human; it never decides a case.

Phrases are matched on a normalised copy (NFKC, invisible characters removed,
look-alike letters mapped to Latin, accents and case folded, digits read as
letters) so "ＩＧＮＯＲＥ", "ign\u200bore" and "ignоre" (Cyrillic o) all read "ignore".
"""

import base64
import binascii
import re
import unicodedata
from dataclasses import dataclass


@dataclass(frozen=True)
class GuardrailHit:
    rule: str
    reason: str


# --- What a reader cannot see --------------------------------------------------------

# Zero-width and other invisible format characters. U+200D (zero-width joiner)
# is left out: emoji sequences use it; it is checked between letters below.
_ZERO_WIDTH = re.compile("[\u00ad\u180e\u200b\u200c\u2060-\u2064\ufeff]")
_JOINER_IN_WORD = re.compile(r"\w\u200d\w")
_BIDI = re.compile("[\u200e\u200f\u061c\u202a-\u202e\u2066-\u2069]")
_TAG_CHARACTERS = re.compile("[\U000e0000-\U000e007f]")
_HIDDEN_HTML = re.compile(
    r"<!--"
    r"|display\s*:\s*none"
    r"|visibility\s*:\s*hidden"
    r"|font-size\s*:\s*0*(?:\.0+)?\s*(?:px|pt|em|rem|%)?\s*[;\"'}]"
    r"|(?:max-)?(?:width|height)\s*:\s*0+(?:px)?\s*[;\"'}]"
    r"|opacity\s*:\s*0*(?:\.0+)?\s*[;\"'}]"
    r"|<\s*(?:script|style|iframe)\b"
    r"|\bhidden\s*(?:=|>)",
    re.IGNORECASE,
)

# Letters that look like Latin ones: Cyrillic, Greek and Latin variants (dotless i…).
_HOMOGLYPHS = str.maketrans(
    "аеорсухіјѕԁһӏԛԝАВЕКМНОРСТХІЈЅУαεικνορτυχΑΒΕΖΗΙΚΜΝΟΡΤΥΧıȷɑɡɩʏ",
    "aeopcyxijsdhlqwABEKMHOPCTXIJSYaeikvoptuxABEZHIKMNOPTYXijagiy",
)
_LEET = str.maketrans("013457@$", "oieastas")
_LATIN = re.compile(r"[a-z]", re.IGNORECASE)
_LOOKALIKE_SCRIPT = re.compile("[\u0370-\u03ff\u0400-\u04ff]")


# --- What it says ------------------------------------------------------------------------

_TARGETS = r"(?:instructions?|prompts?|rules?|directions?|guidelines?|context|programming|orders)"
_PHRASES: tuple[tuple[str, str, re.Pattern[str]], ...] = tuple(
    (rule, reason, re.compile(pattern, re.MULTILINE))
    for rule, reason, pattern in [
        (
            "instruction_override",
            "tells the system to ignore its instructions",
            rf"\b(?:ignore|disregard|forget|override|bypass)\b[^.\n]{{0,40}}\b{_TARGETS}\b"
            r"|\b(?:ignora|olvida|omite)\w*\b[^.\n]{0,40}\b(?:instrucciones|reglas|ordenes)\b"
            r"|\bnew instructions?\s*:",
        ),
        (
            "role_change",
            "tries to give the system a new role",
            r"\byou(?: are|'re| r)? now\b"
            r"|\bfrom now on,? (?:you|act|respond|reply|answer)\b"
            r"|\bpretend (?:to be|you(?: are|'re)?|that you)\b"
            r"|\brole[- ]?play"
            r"|\b(?:act|behave|respond|answer) (?:as|like) (?:if you were |though you were )?"
            r"(?:an? |the |my )?(?:ai|assistant|bot|chatbot|system|admin\w*|auditor|"
            r"classifier|model|language model|gpt|supervisor|coordinator)\b"
            r"|\b(?:developer|god|admin|debug) mode\b|\bjailbreak|\bdan mode\b"
            r"|\bahora eres\b|\bactua como\b|\bfinge (?:ser|que)\b",
        ),
        (
            "role_prefix",
            "contains text posing as a system or assistant message",
            r"^\W{0,3}(?:system|assistant|developer|sistema|asistente)\s*:"
            r"|\[/?(?:system|inst|assistant)\]|<\|?im_(?:start|end)\|?>"
            r"|#{2,}\s*(?:system|instruction)",
        ),
        (
            "outcome_request",
            "asks the system to close, clear or approve a case",
            r"\bclose (?:out )?(?:my|this|the|our|his|her) (?:case|ticket|file|audit|review)\b"
            r"|\bmark (?:me|this|it|my \w+|the \w+|this \w+)(?: \w+)? (?:as )?"
            r"(?:resolved|compliant|passed|pass|ok|okay|cleared|verified|eligible|valid|closed)\b"
            r"|\b(?:set|change|update|switch) (?:the |my |this )?(?:status|verdict|bucket|"
            r"classification|label|result) to\b"
            r"|\b(?:classify|label|treat) (?:this|me|it|my reply)(?: \w+)? as\b"
            r"|\b(?:approve|whitelist|exempt) (?:me|my|this|it|the|our|his|her)\b"
            r"|\bauto-?approv"
            r"|\b(?:do not|don't|dont|never|must not|mustn't) (?:cancel|remove|revoke|terminate|"
            r"flag|escalate|forward|report)\b"
            r"|\bcierr[ae]n? (?:mi|el|este) caso\b"
            r"|\bmarca\w* como (?:resuelto|conforme|aprobado|cumplido|valido)\b"
            r"|\baprueb\w* (?:mi|me|el|este|esta|la)\b|\bno (?:cancel|anul|elimin)\w*\b",
        ),
        (
            "machine_directive",
            "addresses the software that reads it",
            r"\b(?:classifier|the model|the ai|the bot|llm|gpt|chatbot|assistant|automated "
            r"system|(?:your|the) (?:system|software|program|algorithm|filter|parser|tool))\b"
            r"[^.\n]{0,30}\b(?:must|should|shall|is to|needs to|has to|will|can)\s+"
            r"(?:output|return|respond|reply|classify|label|mark|set|answer|approve|close|treat|"
            r"decode|apply|process|execute|run|update)"
            # Asking, however politely, for a different reading of the reply itself.
            r"|\b(?:update|change|set|adjust|correct|revise)\w* (?:your|the) "
            r"(?:classification|label|bucket|categor\w+|rating|score)\b"
            r"|\bclassif\w* (?:of )?(?:my|this) (?:reply|e-?mail|message|response)\b"
            r"|\bwith (?:high|full|maximum|max|100 ?%?|complete) confidence\b"
            r"|\b(?:case|ticket|this) (?:closes|close|gets closed|is closed) automatically\b"
            r"|[\"']?\b(?:bucket|hitl|confidence|verdict)\b[\"']?\s*[:=]"
            r"|\bsystem (?:note|message|override|instruction|notice)s?\b"
            r"|\b(?:pre-?approved|pre-?authori[sz]ed) by\b"
            r"|\bi (?:hereby )?authori[sz]e you to\b"
            r"|\bas (?:the |your )?(?:system )?(?:administrator|admin|developer|operator)\b",
        ),
        (
            "prompt_request",
            "asks to reveal the system's prompt or instructions",
            r"\bsystem prompt\b|\bprompt del sistema\b"
            r"|\b(?:reveal|show|print|repeat|output|display|tell me|give me|share|leak|"
            r"what (?:is|are|were))\b[^.\n]{0,30}\b(?:your|the|hidden|initial|original|"
            r"internal|secret)\b[^.\n]{0,15}\b(?:prompts?|instructions|rules|configuration)\b",
        ),
    ]
)


def check_untrusted(text: str, subject: str = "") -> GuardrailHit | None:
    """The first sign that the text tries to instruct the system, or None."""
    raw = f"{subject}\n{text}"
    hit = _hidden_content(raw)
    if hit:
        return hit
    for variant in _readings(raw):
        for rule, reason, pattern in _PHRASES:
            match = pattern.search(variant)
            if match:
                return GuardrailHit(rule, f"{reason}: {match.group(0).strip()!r}")
    return None


# A long run of base64 that decodes to text: words a reader cannot see.
_BASE64_RUN = re.compile(r"[A-Za-z0-9+/]{40,}={0,2}")


def _encoded_text(raw: str) -> GuardrailHit | None:
    for run in _BASE64_RUN.findall(raw):
        try:
            decoded = base64.b64decode(run + "=" * (-len(run) % 4), validate=True)
        except (binascii.Error, ValueError):
            continue
        printable = sum(32 <= byte < 127 or byte in (9, 10, 13) for byte in decoded)
        if len(decoded) >= 20 and printable / len(decoded) >= 0.9:
            return GuardrailHit("encoded_text", "contains encoded text a reader cannot see")
    return None


def _hidden_content(raw: str) -> GuardrailHit | None:
    if _ZERO_WIDTH.search(raw) or _JOINER_IN_WORD.search(raw) or _TAG_CHARACTERS.search(raw):
        return GuardrailHit("invisible_characters", "contains zero-width or invisible characters")
    if _BIDI.search(raw):
        return GuardrailHit("bidi_control", "contains characters that reorder displayed text")
    match = _HIDDEN_HTML.search(raw)
    if match:
        return GuardrailHit("hidden_html", f"contains hidden HTML: {match.group(0).strip()!r}")
    if any(_mixed_script(word) for word in unicodedata.normalize("NFKC", raw).split()):
        return GuardrailHit("homoglyphs", "mixes look-alike letters from other alphabets in a word")
    return _encoded_text(raw)


def _mixed_script(word: str) -> bool:
    return bool(_LATIN.search(word)) and bool(_LOOKALIKE_SCRIPT.search(word))


def normalise(text: str) -> str:
    """One reading of the text: compatibility forms, look-alikes and accents folded."""
    text = unicodedata.normalize("NFKC", text)
    text = _ZERO_WIDTH.sub("", _BIDI.sub("", _TAG_CHARACTERS.sub("", text))).replace("\u200d", "")
    text = text.translate(_HOMOGLYPHS)
    text = "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))
    text = text.casefold().replace("\u2019", "'")
    return re.sub(r"[ \t]+", " ", text)


def _readings(raw: str) -> tuple[str, str]:
    plain = normalise(raw)
    # Digits and symbols read as letters ("1gn0re"), checked only for phrases.
    return plain, plain.translate(_LEET)
