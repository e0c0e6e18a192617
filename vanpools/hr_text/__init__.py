"""Read the schedules HR writes in words: "M-F 7am-3:30pm", "Sun thru Thu 10pm-6:30am".

HR exports carry a shift's hours as text more often than as data. The audit
reads the common, unambiguous ways of writing them and refuses the rest, so a
doubtful text becomes *unknown* (a person or the model reads it), never a
guessed pass or fail:

- days: names and abbreviations (``Mon``, ``Tues``, ``Thurs``, ``Mo``, ``Fr``,
  ``M``, ``W``, ``F``, ``Th``, ``R``, ``Sa``…), letters run together in week
  order (``MTWThF``, ``MTWTF``, ``M T W R F``), ranges (``Mon-Fri``, ``Tue through Sat``, wrapping
  ``Sun-Thu``), lists (``Mon, Wed & Fri``, ``M/W/F``), ``weekdays``,
  ``weekends``, ``daily``;
- hours: ``7am``, ``3:30 p.m.``, ``330p``, ``07.00``, ``noon``, ``midnight``, 24-hour ``15:30`` and
  ``0700``; one range per part, days before or after it; parts separated by
  ``;`` or new lines; labels such as ``Day shift:`` or ``Schedule:``, words
  like ``nights`` that the hours already say, and pattern names (``4x10``,
  ``4/10s``, ``12-hr``) are skipped;
- days with no hours (``M/W/F``, ``Tue-Thu, hours vary``): ``NoHoursGiven``
  carries the days, so a check that counts workdays can use them;
- refused: a ``T`` its neighbours do not settle (``T-F``, ``MT``: Tue or
  Thu?), bare hours without a meridiem or colon (``7-4``), any word left
  over (``alt Fri off``, ``varies``), and a shift under 1 or over 16 hours
  (``7:00-3:30`` read as 24-hour would be 20½).

A written time missing its meridiem on one side takes the reading that gives
the shorter shift: ``9-5pm`` is 09:00-17:00, ``10-6am`` is 22:00-06:00.

Written by hand: no maintained library reads HR schedule phrases; dateparser
and the opening-hours parsers read dates or OSM syntax, not these.

The package, by stage: ``prepare`` (one spelling of the text), ``hours``,
``days``, ``reading`` (parts, export fields, rotations), ``part_of_day`` (a
shift's name settles am/pm) and ``blocks`` (other tools' day blocks). Every
pattern that reads HR's words is a named rule with a reason and examples both
ways, in ``rules_hours`` and ``rules_days`` (``RULES`` below);
``vanpools/tests/test_hr_rules.py`` checks every example.
"""

from vanpools.hr_text.blocks import BLOCK_SHAPE, read_day_blocks
from vanpools.hr_text.hours import MAX_SHIFT_MINUTES, MIN_SHIFT_MINUTES
from vanpools.hr_text.part_of_day import part_of_day_named, readings_for_part_of_day
from vanpools.hr_text.reading import (
    MAX_READINGS,
    AmbiguousHours,
    NoDaysGiven,
    NoHoursGiven,
    RotatingHours,
    RotationLeg,
    read_schedule_readings,
    read_schedule_text,
)
from vanpools.hr_text.rule import HrRule
from vanpools.hr_text.rules_days import DAYS_RULES
from vanpools.hr_text.rules_hours import HOURS_RULES

RULES: tuple[HrRule, ...] = HOURS_RULES + DAYS_RULES

__all__ = [
    "BLOCK_SHAPE",
    "MAX_READINGS",
    "MAX_SHIFT_MINUTES",
    "MIN_SHIFT_MINUTES",
    "RULES",
    "AmbiguousHours",
    "HrRule",
    "NoDaysGiven",
    "NoHoursGiven",
    "RotatingHours",
    "RotationLeg",
    "part_of_day_named",
    "read_day_blocks",
    "read_schedule_readings",
    "read_schedule_text",
    "readings_for_part_of_day",
]
