"""One rule that reads HR's words: a named pattern with a reason and examples both ways.

Every regular expression the HR-text reader applies to words is an ``HrRule``
in ``rules_hours.py`` or ``rules_days.py``; ``vanpools/tests/test_hr_rules.py``
checks each rule against its examples. Examples are written as the rule sees
them: lower case, accents folded, after the notes before it are gone
(``prepare.py``), and are general HR wording, never copied from evaluation sets.
"""

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Literal


@dataclass(frozen=True)
class HrRule:
    name: str
    reason: str
    pattern: str
    must_read: tuple[str, ...]
    must_not_read: tuple[str, ...]
    flags: int = 0
    # How the reader applies the rule, so the examples are checked the same way:
    # anywhere in the text ("search"), from its start ("match"), or whole ("fullmatch").
    applied: Literal["search", "match", "fullmatch"] = "search"
    regex: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "regex", re.compile(self.pattern, self.flags))

    def reads(self, text: str) -> bool:
        """Whether the rule finds its words in ``text``, applied as the reader applies it."""
        return bool(getattr(self.regex, self.applied)(text))

    def search(self, text: str) -> re.Match[str] | None:
        return self.regex.search(text)

    def match(self, text: str) -> re.Match[str] | None:
        return self.regex.match(text)

    def fullmatch(self, text: str) -> re.Match[str] | None:
        return self.regex.fullmatch(text)

    def finditer(self, text: str) -> Iterator[re.Match[str]]:
        return self.regex.finditer(text)

    def findall(self, text: str) -> list[str]:
        return self.regex.findall(text)

    def split(self, text: str) -> list[str]:
        return self.regex.split(text)

    def sub(self, replacement: str | Callable[[re.Match[str]], str], text: str) -> str:
        return self.regex.sub(replacement, text)
