"""The rules that read hours and the notes around them in HR's text, as data.

Each entry names a pattern the reader applies, says why, and shows the words it
must read and must not (checked by ``vanpools/tests/test_hr_rules.py``). The
examples are written as the rule sees them: lower case, accents folded.
"""

import re

from vanpools.hr_text.rule import HrRule
from vanpools.hr_text.words import _HOUR_WORDS

# One written time: "7am", "3:30 p.m.", "330p", "07.00", "15:30", "0700", "noon", a bare "9".
_TIME = (
    r"(?:(?P<{n}h>\d{{1,2}}?)(?:[:.]?(?P<{n}m>\d{{2}}))?\s*(?P<{n}ap>a\.?m?\.?|p\.?m?\.?)(?![a-z])"
    r"|(?P<{n}h24>\d{{1,2}})[:.h](?P<{n}m24>\d{{2}})"
    r"|(?P<{n}mil>\d{{4}})"
    r"|(?P<{n}word>noon|midnight)"
    r"|(?P<{n}bare>\d{{1,2}})(?![\d:]))"
)

RANGE = HrRule(
    name="hours_range",
    reason="one range of hours, start to end, in any of the ways HR writes a time",
    pattern=_TIME.format(n="s")
    + r"\s*(?:-|to|until|till|thru|through|a|bis|hasta|x)\s*"
    + _TIME.format(n="e"),
    flags=re.IGNORECASE,
    must_read=("6:40am-3:10pm", "0645-1515", "9 to 5", "noon until 8pm", "21:30 a 5:45"),
    must_not_read=("mon-fri", "third shift", "ext 4417"),
)

PATTERN_NAME = HrRule(
    name="pattern_name",
    reason=(
        "a name for the pattern the days and hours spell out anyway (4x10, 12-hr, 2-2-3,"
        " 5 on 2 off); 9/80 is not one: it hides an alternate day off"
    ),
    pattern=(
        r"\b[1-7]\s*[x/]\s*(?:[89]|1[0-2])(?:\.5)?s?\b|\b(?:8|9|10|12)[- ]?(?:hr|hour)s?\b"
        r"|\b(?:8|10|12)s\b|\b(?:2-2-3|2-3-2)(?:\s+rotation)?\b"
        r"|\b\d\s*on\s*/?\s*\d\s*off(?:\s+rotation)?\b"
    ),
    must_read=("4x10 wed-sat", "12-hr days", "3/12s", "2-3-2 rotation", "4 on 4 off"),
    must_not_read=("9/80 plan", "tue-sat 6am-2pm"),
)

FILLER = HrRule(
    name="filler",
    reason=(
        "labels and words the hours and days already say (shift names, crews, bids,"
        " employment type, time zones, a time-of-day word): skipped, never read as days"
    ),
    pattern=(
        r"\b(?:shift code \w+|(?:day|night|swing|evening|morning|graveyard|early|late|first|second|"
        r"third|1st|2nd|3rd|owl|power|mid)\s+sh(?:ift|ft|fit)|schedule|sched|from|every|onsite|"
        r"on-site|"
        r"on|at|hours|sh(?:ift|ft|fit)|owl|noc|fixed|flex(?: schedule)?|actual|pattern|works?|"
        r"she works|he works|working|grave|gy|swng|nocturno|diurno|partido|perm\.?|permanent|"
        r"quarts?|jour|soir|nuit|du|horaire|equipe \w|seulement|(?:week|wk)\s*[1-4](?=\s*[:)])|"
        r"(?:front|back) half(?: days| nights)?|[fb]h[dn]|fh|bh|shift bid|bid line|"
        r"work schedule(?: calendar)?|calendar|(?:1st|2nd|3rd|1er|primer|segundo|tercer)"
        r"(?=[\s),-]|$)|"
        # Hospital codes and programs: "D12", "N12", "x3/wk", "Weekend Option", "paid 36".
        r"[den](?:8|10|12)|x?\d\s*(?:nights?|days?|shifts?)?\s*/\s*(?:wk|week)|"
        r"self-?sched(?:ule)?|per self-?sched(?:ule)?|weekend option|wknd opt|paid \d+|"
        r"\d{1,2}(?:\.\d)?\s*(?:hrs?|hours)(?:\s*/\s*(?:day|wk|week))?|"
        r"semana de \d dias|dias?|(?:pacific|eastern|central|mountain) time|"
        # Shift codes and labels: "B-Shift", "Tour 2:", "Crew C", "Hybrid: in office …".
        r"[a-d]-?\s?shift|shift\s+[a-d1-4]|(?:tour|platoon|crew|squad|line)\s+[a-d1-4]|"
        r"[a-d]\s+crew|(?:weekend|weekday|day|night|swing|evening|morning|early|late)\s+crew|crew|"
        # Bid labels: "Run 112", "Blk 4417", "Fall pick 2026", "Straight run", "(split, paid
        # spread)".
        r"(?:run|blk|block|bid|route|line|post)\s*#?\s*\d+|(?:fall|spring|summer|winter)\s+"
        r"(?:pick|bid|sign-?up)(?:\s+\d{4})?|straight(?:\s+run)?|split(?:\s+(?:run|shift))?|"
        r"(?:paid\s+)?spread|regular|normal|usual|"
        # Employment labels: "PT – 24 hrs/wk", "Part time,".
        r"pt|ft|part[- ]time|full[- ]time|per diem|\d+\s*hrs?\s*(?:/|per|a)\s*(?:wk|week)|"
        # Day-pattern names: which days, not which hours ("2-2-3 Panama", "Pitman (day side)").
        r"(?:panama|pitman)(?:\s+rotation)?(?:\s+[a-d](?:\s*/\s*[a-d])?\b)?|rotacion pitman|"
        r"(?:day|night)\s+side|"
        r"hybrid|in (?:the )?office|onsite|on-site|in person|"
        # A word for the time of day the hours already give: "nights 10pm-6:30am".
        r"nights?|days?|evenings?|mornings?|afternoons?|overnights?|swing|graveyard|hrs|only|"
        # Spanish and German fillers ("turno de noche de 22:00 a 6:30", "6:00-14:30 Uhr").
        r"de|del|turno|noches?|tardes?|mananas?|uhr|"
        # A time zone says where the clock is, not when the shift is ("MT" is left: Mon-Tue?).
        r"[pmce][sd]t|ct|et|ak[sd]t|h[sd]t|local time|local)\b|[().:]"
    ),
    must_read=(
        "swing shift",
        "crew b",
        "part-time",
        "run 307",
        "evenings",
        "pst",
        "turno tarde",
    ),
    must_not_read=("tue-sat 6am-2pm", "alt mon off", "it varies"),
)

SHIFT_CODE = HrRule(
    name="shift_code",
    reason="a hospital code for day, evening or night before the hours (D 0645-1915)",
    pattern=r"^\s*[den]\s+(?=\d)",
    must_read=("d 0615-1845", "n 1845-0715"),
    must_not_read=("mon 0700-1530", "dn 0700-1530"),
)

DAYS_ON_AND_OFF = HrRule(
    name="days_on_and_off",
    reason="a rotation of days on and days off: its dated block is not a weekly list of days",
    pattern=r"\b\d\s*on\s*/?\s*\d\s*off\b",
    must_read=("4 on 4 off", "7on/7off"),
    must_not_read=("mon off", "on call"),
)

_DATED_DAY = r"[a-z]{2,9}\.?\s+\d{1,2}/\d{1,2}(?:/\d{2,4})?"
DATED_BLOCK = HrRule(
    name="dated_block",
    reason="the current block of a days-on/days-off rotation, as dates: not weekly days",
    pattern=(
        rf"\(?\s*(?:(?:current\s+)?(?:on-?block|block|on)\s*:?\s*)?(?P<first>{_DATED_DAY})\s*-\s*"
        rf"(?P<last>{_DATED_DAY})\s*\)?"
    ),
    must_read=("(on: mon 11/23 - sun 11/29)", "block: wed 1/6 - tue 1/12"),
    must_not_read=("mon 11/23", "mon-fri"),
)

SPLIT_JOIN = HrRule(
    name="split_join",
    reason="what joins the two pieces of one split working day (0515-0915 / 1445-1845)",
    pattern=r"\s*(?:&|/|\+|,|and|y|und|et|then)?\s*(?:de |from |then )?",
    applied="fullmatch",
    must_read=(" & ", " / ", " then ", " and from "),
    must_not_read=(" off ", " mon "),
)

NOTE = HrRule(
    name="note",
    reason=(
        "a note that moves neither end of the day: core hours, history, overtime, occasional"
        " late stays, call from home, a department"
    ),
    pattern=(
        r"\(?\s*core (?:hrs|hours)\b[^()]*\)?"
        r"|\((?:moved|changed|transferred|was|previously|formerly|prev\.?)\b[^()]*\)"
        r"|\(\s*(?:ot|overtime|on-?call|call)\b[^()]*\)"
        r"|\([^()]*\bunpaid\b[^()]*\)"
        r"|\(\s*off the other [a-z]+\s*\)|\(\s*[a-z]+ off (?:wk|week) \d\s*\)"
        r"|,?\s*\b(?:sometimes|occasionally|may|might)\b[^,;.()]*"
        r"|[+,;]?\s*\b(?:plus\s+)?(?:on-?)?call\s+\d[^,;()]*(?:\([^()]*\))?"
        r"|,\s*(?:dept|department|unit|area|cell|bldg|building|floor|station)\b[^,;]*"
    ),
    must_read=(
        "(core hours 9-3)",
        "(was nights until june)",
        "mon-fri 8-5, dept 42",
        "occasionally stays until 6",
        "(overtime as needed)",
    ),
    must_not_read=("tue-sat 6:15am-2:45pm", "sun-thu 0545-1415"),
)

BRACKETED = HrRule(
    name="bracketed_name",
    reason="a name in brackets (a department, a site): dropped unless it says days or hours",
    pattern=r"\(([^()\d]*)\)",
    must_read=("(facilities)", "(north campus)"),
    must_not_read=("(7am-3pm)", "mon-fri 7-3"),
)

BRACKETED_NUMBERED = HrRule(
    name="bracketed_place",
    reason="a place with its number in brackets (Garage 2, Bay 14): not hours",
    pattern=r"\((?!\s*(?:wk|week|alt))([a-z][a-z .&'/-]*?\s*#?\s*\d{1,3})\)",
    must_read=("(garage 2)", "(bay #14)"),
    must_not_read=("(wk 1)", "(7am)"),
)

DAYS_COUNTED = HrRule(
    name="days_counted",
    reason="the days worked counted in brackets (4 days): the days named already say it",
    pattern=r"\(\s*\d\s*(?:days?|shifts?)(?:\s*(?:/|a|per)\s*(?:wk|week))?\s*\)",
    must_read=("(4 days)", "(3 shifts/wk)"),
    must_not_read=("(4x10)", "(days)"),
)

BRACKET_KEEPS = HrRule(
    name="bracket_keeps",
    reason="words that make a bracket part of the schedule: a bracket holding one is kept",
    pattern=(
        r"rotat|alternat|var(?:y|ies)|tbd|pending|except|\boff\b|other|week|night|evening|"
        r"morning|\b[ap]\.?m\b|call|only"
    ),
    must_read=("rotating", "except fri", "p.m", "sundays only"),
    must_not_read=("facilities", "east annex"),
)

LEAVE_NOTE = HrRule(
    name="leave_note",
    reason="a leave note says when the rider is away, not the hours",
    pattern=(
        r"\b(?:loa|leave of absence|on leave|fmla|medical leave)\b[^.;\n]*?"
        r"\b(?:thru|through|until|till|to|ends?|returns?)\s+\d{1,2}/\d{1,2}(?:/\d{2,4})?\s*[.;]"
    ),
    must_read=("loa (personal) thru 4/17/27.", "on leave until 3/1;"),
    must_not_read=("leaves at 3pm", "fmla intermittent"),
)

SPOKEN_MERIDIEM = HrRule(
    name="spoken_meridiem",
    reason="the meridiem said in words (6 in the morning till 2:30 in the afternoon)",
    pattern=(
        r"\b(?P<time>\d{1,2}(?::\d{2})?)\s+(?:o'?clock\s+)?(?:in the (?P<part>morning|afternoon|"
        r"evening)|at (?P<night>night))\b"
    ),
    must_read=("5:30 in the morning", "10 at night", "1:45 in the afternoon"),
    must_not_read=("6am", "morning crew"),
)

EXTRA_DUTY = HrRule(
    name="extra_duty",
    reason=(
        "duty beyond the regular hours, called in when needed, and days off that rotate:"
        " not the commute"
    ),
    pattern=(
        r"[/,;+]?\s*(?:plus |and )?(?:(?:vol\.?|voluntary|mandatory)\s+)?(?:storm duty|on-?call|"
        r"overtime|ot|call-?outs?|extra shifts?)\s+(?:(?:as|when|if) needed\b|(?:on )?[a-z]+"
        r"(?=\s*$|,))"
        r"|[.,;/+]?\s*\b(?:[a-z]+\s+)?(?:ot|overtime)\s+\S+\s+(?:as|when|if)\s+"
        r"(?:posted|needed|required|available|offered)\b"
        r"|,?\s*\b(?:days off|rdos?|off days) (?:rotate|rotating|vary|varies)\b[^,;]*"
        r"|,?\s*\brotating (?:days off|rdos?)\b[^,;]*"
        r"|,\s*(?:badge|clock|punch)\w* (?:in|out)\b[^,;]*"
    ),
    must_read=(
        "tue-sat 6-2, plus on-call as needed",
        "sun ot 7a-11a as needed",
        "6a-2p, days off rotate",
        "8-5, clock in at the gate",
    ),
    must_not_read=("tue-sat 6am-2pm", "sun-thu 0545-1415"),
)

MILITARY_PAIR = HrRule(
    name="military_pair",
    reason="two 24-hour times side by side are a range (0700 1530)",
    pattern=r"\b((?:[01]\d|2[0-3])[0-5]\d)\s+((?:[01]\d|2[0-3])[0-5]\d)\b",
    must_read=("0700 1530", "mon-fri 2200 0630"),
    must_not_read=("0700-1530", "2500 1530"),
)

MILITARY_SLASH = HrRule(
    name="military_slash",
    reason=(
        "two 24-hour times split by a slash are a range, unless either belongs to a range of"
        " its own (a split shift)"
    ),
    pattern=(
        r"(?<![-/])(?<![-/] )\b((?:[01]\d|2[0-3])[0-5]\d)\s*/\s*((?:[01]\d|2[0-3])[0-5]\d)\b"
        r"(?!\s*[-/])"
    ),
    must_read=("0700/1530", "m-f 0600 / 1430"),
    must_not_read=("0530-0930 / 1430-1830", "7/15"),
)

LUNCH = HrRule(
    name="lunch",
    reason="a meal break inside the shift moves neither end of it",
    pattern=(
        r"\([^()]*\b(?:lunch|break|meal|almuerzo|comida|pause)\b[^()]*\)"
        r"|\(\s*(?:\d+|0?\.\d+)\s*(?:m|mins?|minutes?|h|hrs?|hours?)\.?\s*"
        r"(?:l|lunch|brk|break|meal|unpaid|paid)?\.?\s*\)"
        r"|,?\s*(?:(?:with|w/)\s*)?(?:an?\s+)?(?:\d+\s*-?\s*(?:min(?:ute)?s?|hrs?|hours?)|"
        r"half[- ]hour|one[- ]hour)\s+(?:unpaid\s+|paid\s+)?(?:lunch|break|meal)(?:\s+break)?\b"
    ),
    must_read=("(45 min lunch)", "(30m l)", "with a 30 minute unpaid lunch", "(.5 hr brk)"),
    must_not_read=("tue-sat 6:15am-2:45pm", "lunch duty"),
)

NUMBER_WORDS = HrRule(
    name="number_words",
    reason="hours HR spelled out (seven, three-thirty, nine o'clock), read as numbers",
    pattern=(
        r"\b(?P<hour>" + "|".join(_HOUR_WORDS) + r")(?:[- ](?P<minutes>fifteen|thirty|"
        r"forty[- ]five)|\s+o'?clock)?\b"
    ),
    must_read=("six to two-fifteen", "nine o'clock", "from eight"),
    must_not_read=("someone", "often", "7 to 3"),
)

MERIDIEM_PAIR = HrRule(
    name="meridiem_pair",
    reason="the meridiems written once for both ends, apart from the hours (8-5 (am-pm))",
    pattern=(
        r"(?<![\d:])(?<![\d:] )\(?\s*\b(?P<first>[ap])\.?m\.?\s*(?:-|to|/)\s*(?P<last>[ap])\.?m\.?"
        r"(?![a-z])\s*\)?"
        r"|(?<=\d) (?P<first2>a)\.?m\.?-(?P<last2>p)\.?m\.?(?![a-z\d])"
    ),
    must_read=("9-4 (am-pm)", "6-2:15 am-pm", "seven to three, a.m. to p.m."),
    must_not_read=("7am-3pm", "10pm-6:30am"),
)

# --- One spelling of the text (prepare.py) ---------------------------------------------

DASH = HrRule(
    name="dash",
    reason="en and em dashes, minus signs and arrows all mean 'to'",
    pattern=r"[\u2013\u2014\u2212\u2192]|->",
    must_read=("mon\u2013fri", "7am -> 3pm"),
    must_not_read=("mon-fri", "7am to 3pm"),
)

HOURS_SUFFIX = HrRule(
    name="hours_suffix",
    reason="a 24-hour time with 'hrs' after it (0600hrs) is the time alone",
    pattern=r"\b(\d{4})\s*(?:hrs|hr|h)\b",
    must_read=("0600hrs", "1430 h"),
    must_not_read=("0600", "12 hrs"),
)

EVERY_OTHER_DAY_WORKED = HrRule(
    name="every_other_day_worked",
    reason="a day worked every other week: on the days worked, these are the hours",
    pattern=r"\b(?:every other|alt\.?|alternate|alternating) ([a-z]+)\b(?!\s+off)",
    must_read=("every other saturday", "alt sat 8-12"),
    must_not_read=("every other saturday off", "every day"),
)

HOUR_MARK = HrRule(
    name="hour_mark",
    reason="a time followed by 'h' (15:00 h) is the time alone",
    pattern=r"\b(\d{1,2}:\d{2})\s*h\b",
    must_read=("15:00 h", "7:30h"),
    must_not_read=("15:00 hrs", "15:00"),
)

FRENCH_SHIFT_LENGTH = HrRule(
    name="french_shift_length",
    reason="'quarts de 12 h' names the length of a shift, not a time of day",
    pattern=r"\b(?:quarts? )?de (?:8|10|12) ?h\b",
    must_read=("quart de 10 h", "de 8h"),
    must_not_read=("de 7 h 30", "de 7:00"),
)

FRENCH_HOUR_MINUTES = HrRule(
    name="french_hour_minutes",
    reason="French hours with minutes: '7 h 30', '16h00' are 7:30 and 16:00",
    pattern=r"\b(\d{1,2}) ?h ?(\d{2})\b",
    must_read=("7 h 30", "16h00"),
    must_not_read=("16 h", "1600"),
)

FRENCH_HOUR = HrRule(
    name="french_hour",
    reason="a French whole hour: '16 h' is 16:00",
    pattern=r"\b(\d{1,2}) ?h\b(?![:\d])",
    must_read=("16 h", "a 7h"),
    must_not_read=("16:00", "12 hrs"),
)

EFFECTIVE_DATE = HrRule(
    name="effective_date",
    reason="dates and years beside a bid or an effective date are not hours",
    pattern=(
        r"\b(?:eff(?:ective)?\.?|awarded|as of|since)\s*\d{1,2}[-/]\d{1,2}(?:[-/]\d{2,4})?|"
        r"\b20\d\d(?:-\d\d)?\b"
    ),
    must_read=("eff. 3/14/27", "since 1/4", "bid 2026-27"),
    must_not_read=("mon-fri 7-3", "0700-1530"),
)

STARRED_ALTERNATE = HrRule(
    name="starred_alternate",
    reason="a star marking a day worked every other week (*Wed (*alt wks)): the day stays",
    pattern=r"\(\s*\*\s*alt\w*\s*(?:wks?|weeks?)?\s*\)|\*",
    must_read=("*wed (*alt wks)", "wed*"),
    must_not_read=("wed (alt)", "mon-fri"),
)

WEEK_NUMBERED_RDO = HrRule(
    name="week_numbered_rdo",
    reason="a day off in one week of two (Fri(wk2) RDO): worked the other week, with its hours",
    pattern=r"\b([a-z]+)\s*\((?:wk|week)\s*\d\)\s*rdo\b",
    must_read=("mon(wk2) rdo", "tue (week 1) rdo"),
    must_not_read=("mon(wk1) 6-2:30", "fri rdo"),
)

WEEK_NUMBERED_DAY = HrRule(
    name="week_numbered_day",
    reason="a day worked in one week of two (Fri(wk1)): the day, worked every other week",
    pattern=r"\b([a-z]+)\s*\((?:wk|week)\s*\d\)",
    must_read=("fri(wk1)", "mon (week 2)"),
    must_not_read=("fri (alt)", "week 1"),
)

ALTERNATE_IN_BRACKETS = HrRule(
    name="alternate_in_brackets",
    reason="a day marked alternate in brackets ((Wed alt), W(alt)): the day, worked in turn",
    pattern=r"\(\s*([a-z]+)\s+alt\w*\s*\)|\b([a-z]+)\s*\(alt\w*\)",
    must_read=("(wed alt)", "w(alt)"),
    must_not_read=("(alt weeks)", "wed"),
)

NINE_EIGHTY = HrRule(
    name="nine_eighty",
    reason="'9/80' beside the alternate day and its own hours: the hours say it all",
    pattern=r"\b9/80\b",
    must_read=("9/80", "on a 9/80"),
    must_not_read=("9/8", "19/80"),
)

HOURS_RULES: tuple[HrRule, ...] = (
    RANGE,
    PATTERN_NAME,
    FILLER,
    SHIFT_CODE,
    DAYS_ON_AND_OFF,
    DATED_BLOCK,
    SPLIT_JOIN,
    NOTE,
    BRACKETED,
    BRACKETED_NUMBERED,
    DAYS_COUNTED,
    BRACKET_KEEPS,
    LEAVE_NOTE,
    SPOKEN_MERIDIEM,
    EXTRA_DUTY,
    MILITARY_PAIR,
    MILITARY_SLASH,
    LUNCH,
    NUMBER_WORDS,
    MERIDIEM_PAIR,
    DASH,
    HOURS_SUFFIX,
    EVERY_OTHER_DAY_WORKED,
    HOUR_MARK,
    FRENCH_SHIFT_LENGTH,
    FRENCH_HOUR_MINUTES,
    FRENCH_HOUR,
    EFFECTIVE_DATE,
    STARRED_ALTERNATE,
    WEEK_NUMBERED_RDO,
    WEEK_NUMBERED_DAY,
    ALTERNATE_IN_BRACKETS,
    NINE_EIGHTY,
)
