"""The one rule for a subject a staff member writes: one line of text.

A header cannot carry a line break: Django refuses to send such a message
(``BadHeaderError``), so a subject with one used to be accepted, queued, and
then failed on every send attempt — the holding reply to an escalated rider
never went out. Every place staff set a subject (the review card's edits, the
API's messages and decision edits, the admin) asks ``clean_subject`` or its
validator, so the refusal names the subject field before anything is stored.
"""

import unicodedata

from django.core.exceptions import ValidationError

MESSAGE = "the subject must be one line: no line breaks or control characters"


class SubjectError(ValueError):
    """A subject that cannot be sent as a header."""


def clean_subject(value: str) -> str:
    """``value`` without surrounding blanks, or SubjectError if it is not one line.

    Refused: every character ``str.splitlines`` breaks on (CR, LF, VT, FF, the file
    separators, NEL, U+2028/9) and the other control characters; a tab is allowed.
    """
    subject = value.strip()
    if any(_breaks_the_header(char) for char in subject):
        raise SubjectError(MESSAGE)
    return subject


def validate_subject(value: str) -> None:
    """``clean_subject`` as a Django validator, for forms and API serializers."""
    try:
        clean_subject(value)
    except SubjectError as exc:
        raise ValidationError(str(exc), code="multiline_subject") from None


def _breaks_the_header(char: str) -> bool:
    if char == "\t":
        return False
    return unicodedata.category(char) in ("Cc", "Zl", "Zp") or len(f"a{char}b".splitlines()) > 1
