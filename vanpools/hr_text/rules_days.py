"""The rules that read days, days off, export fields, shift names and rotations, as data.

Each entry names a pattern the reader applies, says why, and shows the words it
must read and must not (checked by ``vanpools/tests/test_hr_rules.py``). The
examples are written as the rule sees them: lower case, accents folded.
"""

import re

from vanpools.hr_text.rule import HrRule

# --- Days ----------------------------------------------------------------------------

LETTER = HrRule(
    name="day_letters",
    reason="days run together (MTWThF, MWF, TTh): one letter or pair per day, in week order",
    pattern=r"th|tu|sa|su|m|t|w|r|f",
    must_read=("mtwthf", "mwf", "tth"),
    must_not_read=("0700-1530", "noon"),
)

DAY_RANGE = HrRule(
    name="day_range",
    reason="a range of days, first to last, wrapping the week (Mon-Fri, Sun thru Thu)",
    pattern=(
        r"^(?P<first>[a-z]+)\.?\s*(?:-|through|thru|to|a|al|au|bis|hasta|~)\s*(?P<last>[a-z]+)\.?$"
    ),
    applied="match",
    must_read=("mon-fri", "tue through sat", "martes a sabado", "sun thru wed"),
    must_not_read=("mon, wed", "mon-fri 7am"),
)

EVERY_DAY_SAID = HrRule(
    name="every_day_said",
    reason="every day of the week said in words (7 days a week, todos los dias) is 'daily'",
    pattern=r"\b(?:7 days(?: a week)?|every day|todos los dias|tous les jours)\b",
    must_read=("7 days a week", "every day", "todos los dias 6-14", "tous les jours"),
    must_not_read=("5 days", "everyday"),
)

ROTATING = HrRule(
    name="rotating_days",
    reason="the days rotate, so none is named: the hours alone are known",
    pattern=r"\s*(?:rotating|rotation|rotates|rotativo|rotativa|rotacion)\s*",
    applied="fullmatch",
    must_read=("rotating", " rotation "),
    must_not_read=("rotating days off weekly", "days"),
)

WEEKEND_WORD = HrRule(
    name="weekend_word",
    reason="the weekend word repeats days already named between Friday and Sunday",
    pattern=(
        r"\b(?:wknds?|wkends?|weekends?|fin de semana|fines de semana)"
        r"(?:\s+(?:relief|crew|coverage|team|staff))?\b"
    ),
    must_read=("weekends", "wknd crew", "fin de semana largo"),
    must_not_read=("weekdays", "week 1"),
)

DAY_LIST_JOINER = HrRule(
    name="day_list_joiner",
    reason="what joins a list of days (Mon, Wed & Fri; M/W/F; lunes y martes)",
    pattern=r"\s*(?:,|/|&|\band\b|\by\b|\bet\b|\+)\s*",
    must_read=("mon, wed", "m/w/f", "sat and sun", "miércoles y sábado"),
    must_not_read=("mon-fri", "monday"),
)

LEADING_LABEL = HrRule(
    name="leading_label",
    reason="a place or unit before a spaced dash (Garage - owl shift): dropped unless days",
    pattern=r"^(?P<words>[a-z]+(?: [a-z]+){0,2}) - ",
    must_read=("garage - mon-fri", "north dock - tue-sat"),
    must_not_read=("mon-fri 7-3", "night shift"),
)

QUALIFIERS = HrRule(
    name="qualifiers",
    reason="words that change which days or hours are meant: never skipped as a job title",
    pattern=(
        r"rotat|alternat|\balt\b|var(?:y|ies|iable)|tbd|pending|except|\boff\b|other|every|most|"
        r"some|"
        r"usual|typical|sometimes|occasion|\bany\b|\bas\b|needed|prn|relief|float|extra|casual|"
        r"on-?call|\bcall\b(?!-)|"
        r"split|flex|week|\bwk|month|holiday|school|summer|winter|season|temp|until|thru|through|"
        r"start|effect|\beff\b|after|before|\bor\b|\bnot\b|\bno\b|never|only|core|band|window|"
        r"approx|about|around|roughly|\d"
    ),
    must_read=("rotating", "except", "as needed", "summer roster", "8"),
    must_not_read=("shipping clerk", "valet"),
)

# --- Days off ------------------------------------------------------------------------

_ORDINAL = (
    r"(?:1st|2nd|3rd|4th|5th|first|second|third|fourth|last|alternate|alt\.?|every other|other)"
)
NOW_AND_THEN_OFF = HrRule(
    name="now_and_then_off",
    reason="a day off now and then (except 2nd Fri, alt Fri off): the worked days keep the hours",
    pattern=(
        rf"\b(?:except|excl\.?|excluding|but not|minus)\s+(?:the\s+|every\s+)?{_ORDINAL}\s+"
        rf"(?P<day>[a-z]+)\b|\b{_ORDINAL}\s+(?P<day_off>[a-z]+)\s+off\b"
        rf"|\b(?:rdo|day off|off)\s+(?:on\s+)?{_ORDINAL}\s+(?P<day_rdo>[a-z]+)\b"
    ),
    must_read=("except 3rd mon", "alt fri off", "rdo every other mon", "day off on 1st mon"),
    must_not_read=("fri off", "except fri"),
)

WEEK_BY_WEEK = HrRule(
    name="week_by_week",
    reason="a schedule written week 1 / week 2 may list a day in both weeks",
    pattern=r"\b(?:week|wk)\s*[12]\b",
    must_read=("week 1: mon-thu", "wk2"),
    must_not_read=("weekly", "week 3"),
)

OCCASIONAL_WEEKEND = HrRule(
    name="occasional_weekend",
    reason="a weekend worked now and then (every 3rd wknd): the weekdays keep the hours",
    pattern=(
        rf"[+,]?\s*\b(?:every\s+)?{_ORDINAL}\s+(?:wknd|weekend)s?\b|[+,]?\s*\b\d\s+"
        r"(?:wknd|weekend)s?\s*/\s*(?:mo|month)\b"
    ),
    must_read=("every 4th wknd", "+ every other weekend", "1 weekend/month"),
    must_not_read=("weekends", "weekend staff"),
)

_DAY_LIST = r"(?P<days>[a-z]+(?:\s*(?:/|&|\+|,|\band\b|\by\b|\bet\b)\s*[a-z]+)*)"
TELEWORK = HrRule(
    name="telework",
    reason="days worked from home are not commuted: taken out of the days worked",
    pattern=(
        rf"\b(?:telework(?:ing)?|tw|remote|wfh|work(?:ing)? from home)\s*:?\s*(?:on\s+)?{_DAY_LIST}"
    ),
    must_read=("telework tue/thu", "wfh: tue", "working from home on wed"),
    must_not_read=("onsite mon-fri", "remote"),
)

EXCEPT = HrRule(
    name="except",
    reason="days excepted (except Fri, excepto sabado) are not commuted",
    pattern=rf"\b(?:except|excl\.?|excluding|but not|excepto|salvo|sauf)\s+{_DAY_LIST}",
    must_read=("except fri", "excepto sabado", "sauf mercredi"),
    must_not_read=("exceptional", "mon-fri"),
)

DAYS_OFF_LIST = HrRule(
    name="days_off_list",
    reason="days named as off (Days off Tue & Wed, RDOs Sat/Sun): the rest of the week is worked",
    pattern=(
        rf"\b(?:days? off|off days?|off|rdos?|regular days? off|rest days?|descanso|"
        rf"dias de descanso|conge|jours de conge)\s*:?\s*{_DAY_LIST}"
    ),
    must_read=("days off mon & thu", "rdos sun/mon", "rest days: sun, mon"),
    must_not_read=("mon-fri 7am-3pm", "takes friday"),
)

OFF = HrRule(
    name="days_then_off",
    reason="days named before 'off' (Fri off, Sat and Sun off) are not commuted",
    pattern=r"\b(?P<days>[a-z]+(?:\s*(?:/|&|\band\b)\s*[a-z]+)*)\s+off\b",
    must_read=("fri off", "sat and sun off"),
    must_not_read=("off fri", "mon-fri"),
)

ALTERNATE_DAY_NAMED = HrRule(
    name="alternate_day_named",
    reason="a 9/80 whose alternate day is named beside it, with that day's own hours",
    pattern=(
        r"\b(?:rdo|alt(?:ernat\w*)?|every other|other)\b.{0,20}\b(?:fri|mon|f)(?:days?)?\b"
        r"|\bworking fri"
        r"|\b(?:fri|mon) off (?:wk|week) \d"
    ),
    must_read=("rdo every other fri", "alt mon", "working fri", "mon off week 1"),
    must_not_read=("mon-fri", "fri off"),
)

# --- Parts of the text and the fields of an export -----------------------------------

PART_BREAK = HrRule(
    name="part_break",
    reason="a semicolon or a new line starts another part of the schedule",
    pattern=r"[;\n]",
    must_read=("mon-thu 7-5; fri 7-11", "mon-thu 7-5\nfri 7-11"),
    must_not_read=("mon-fri 7am-3pm", "m/w/f"),
)

PIECE_BREAK = HrRule(
    name="piece_break",
    reason="a comma, a spaced slash or a spaced plus may start another range of hours",
    pattern=r",|\s/\s|\s\+\s",
    must_read=("t/th 0600-1630, sa 0800-1200", "0600-1000 / 1400-1800"),
    must_not_read=("m/w/f 7-3", "mon-fri"),
)

EXPORT_FIELD_BREAK = HrRule(
    name="export_field_break",
    reason="the bars (or spaced semicolons) between an HR system's export fields",
    pattern=r"\s*\|\|?\s*|\s+;\s+",
    must_read=("kronos | cost center: 4410", "a || b", "a ; b"),
    must_not_read=("mon-fri 7-3", "a;b"),
)

ADMIN_FIELD = HrRule(
    name="admin_field",
    reason="fields of an HR system's export that are not the schedule (Pay Group: OPS)",
    pattern=(
        r"^\s*(?:pay group|assignment status|emp(?:loyee)? sub\s*gr(?:ou)?p|daily wh|planned wh|"
        r"unpaid br(?:ea)?k|period wsr|dws|sched(?:ule)? gr(?:ou)?p|"
        r"cost cent(?:er|re)|fte|job|position|status|dept|department|location|union|pay rule|"
        r"standard hours|rotation\s*:\s*none)\b"
    ),
    flags=re.IGNORECASE,
    applied="match",
    must_read=("Pay Group: HRLY-2", "cost center 4410", "FTE: 1.0"),
    must_not_read=("schedule: tue-sat", "tue-sat 6am-2pm"),
)

FIELD_KEY = HrRule(
    name="field_key",
    reason="an export field's 'Key: value'; the value is kept",
    pattern=r"^\s*([A-Za-z][A-Za-z ./-]{0,30}?)\s*:(?!\d)\s*(.*)$",
    applied="match",
    must_read=("Schedule: M-F 7-3", "remote: mon"),
    must_not_read=("7:00-15:30", "mon-fri 7am"),
)

TELEWORK_KEY = HrRule(
    name="telework_key",
    reason="an export field that names the days worked from home",
    pattern=r"^(?:remote|telework|wfh|work from home)$",
    flags=re.IGNORECASE,
    applied="match",
    must_read=("Remote", "WFH", "Telework"),
    must_not_read=("remote days", "office"),
)

# --- The shift's name settles am/pm (part_of_day.py) ----------------------------------

DAY_NAME = HrRule(
    name="day_shift_name",
    reason="a shift named for the day starts 04:00 to 11:59",
    pattern=r"\b(?:days?|day shift|daytime|1st|first shift|mornings?|early|am shift)\b",
    must_read=("dock days", "1st shift", "early"),
    must_not_read=("swing", "3rd shift"),
)

EVENING_NAME = HrRule(
    name="evening_shift_name",
    reason="a shift named for the evening starts 12:00 to 19:59",
    pattern=r"\b(?:evenings?|swing|2nd|second shift|afternoons?|pm shift)\b",
    must_read=("swing", "2nd shift", "evenings"),
    must_not_read=("days", "graveyard"),
)

NIGHT_NAME = HrRule(
    name="night_shift_name",
    reason="a shift named for the night starts 18:00 to 03:59",
    pattern=r"\b(?:nights?|night shift|3rd|third shift|graveyard|overnights?|noc)\b",
    must_read=("nights", "3rd shift", "graveyard", "noc"),
    must_not_read=("days", "swing"),
)

TIME_OF_DAY_IN_TEXT = HrRule(
    name="time_of_day_in_text",
    reason="the part of the day named in the schedule itself, only as a shift: 'days' counts days",
    pattern=(
        r"\b(?:(?:day|night|evening|swing|morning|1st|2nd|3rd|first|second|third)\s+"
        r"sh(?:ift|ft|fit)|graveyard|overnights?)\b"
    ),
    must_read=("day shift", "3rd shift", "graveyard"),
    must_not_read=("days", "nights"),
)

NAME_IN_DOUBT = HrRule(
    name="name_in_doubt",
    reason="a shift name that rotates or names day and night says no part of the day",
    pattern=r"\brotat|\balternat|\bd/n\b",
    must_read=("night/day rotation", "d/n", "alternating"),
    must_not_read=("days", "dock nights"),
)

# --- A rotation between two sets of hours (reading.py) ---------------------------------

ROTATION_NAMED = HrRule(
    name="rotation_named",
    reason="words that say two or more sets of hours are worked in turn",
    pattern=(
        r"\b(?:rotat\w*|rotacion|dupont|alternat\w* (?:weekly|weeks?|wks?)|"
        r"(?:weekly|biweekly) alternat\w*)\b"
    ),
    must_read=("rotating n/d", "dupont", "alternating weeks", "rotation nuit/jour"),
    must_not_read=("mon-fri", "alternate mondays off"),
)

ROTATION_WORDS = HrRule(
    name="rotation_words",
    reason="what a rotation adds beside each leg's hours: its name, d/n tags, turn length",
    pattern=(
        r"\((?:alternat\w*|rotat\w*)[^()]*\)"
        r"|\(?\b\d+\s*[nd](?:\s*-\s*\d+\s*(?:off|[nd]))+\b\)?"
        r"|\b(?:(?:rotat\w*|rotacion|alternat\w*)(?: (?:weekly|biweekly|monthly))?|dupont)\b"
        r"|\b(?:d\s*/\s*n|n\s*/\s*d|days?\s*/\s*nights?|nights?\s*/\s*days?|jour\s*/\s*nuit|"
        r"dia\s*/\s*noche)\b"
        r"|\b\d+\s*(?:wks?|weeks?|semaines?)\b|\b(?:8|10|12)\s*h\s*:"
    ),
    must_read=("(rotating)", "4n-3off-3d", "d/n", "2 wks days then 2 wks nights"),
    must_not_read=("mon-fri 7am-3pm", "nights"),
)

ROTATION_BAR = HrRule(
    name="rotation_bar",
    reason="a bar between a rotation's fields splits legs as a semicolon does",
    pattern=r"\s*\|\s*",
    must_read=("days | nights", "a|b"),
    must_not_read=("days / nights", "a;b"),
)

LEG_BREAK = HrRule(
    name="leg_break",
    reason="what separates the legs of a rotation (;  ,  /  then, puis, luego)",
    pattern=r"[;,]|\s/\s|\bthen\b|\bpuis\b|\bluego\b",
    must_read=("0700-1500 then 1500-2300", "jour 7-19 puis nuit 19-7", "d 7-7 / n 7-7"),
    must_not_read=("mon-fri 7am-3pm", "thenceforth"),
)

HOURS_NOT_GIVEN = HrRule(
    name="hours_not_given",
    reason=(
        "words that say the hours are not set, beside the days named (Mon-Fri, hours vary): "
        "the days are the rider's workdays, the hours unknown"
    ),
    pattern=(
        r"\b(?:hours?\s+(?:vary|varies|tbd|tba|by assignment|as assigned|as needed)|"
        r"(?:varying|variable|flexible)\s+hours|horario variable)\b"
    ),
    must_read=("wed-fri, hours vary", "m/w/f varying hours", "lunes a jueves, horario variable"),
    must_not_read=("varies by the week", "tue-sat 6am-2:30pm", "hours: 6-2:30"),
)

DAYS_RULES: tuple[HrRule, ...] = (
    LETTER,
    DAY_RANGE,
    EVERY_DAY_SAID,
    ROTATING,
    WEEKEND_WORD,
    DAY_LIST_JOINER,
    LEADING_LABEL,
    QUALIFIERS,
    NOW_AND_THEN_OFF,
    WEEK_BY_WEEK,
    OCCASIONAL_WEEKEND,
    TELEWORK,
    EXCEPT,
    DAYS_OFF_LIST,
    OFF,
    ALTERNATE_DAY_NAMED,
    PART_BREAK,
    PIECE_BREAK,
    EXPORT_FIELD_BREAK,
    ADMIN_FIELD,
    FIELD_KEY,
    TELEWORK_KEY,
    DAY_NAME,
    EVENING_NAME,
    NIGHT_NAME,
    TIME_OF_DAY_IN_TEXT,
    NAME_IN_DOUBT,
    ROTATION_NAMED,
    ROTATION_WORDS,
    ROTATION_BAR,
    LEG_BREAK,
    HOURS_NOT_GIVEN,
)
