"""Classify a rider's email reply into one of the enumerated buckets.

Order (design, audit step 5): quoted history and signature stripped →
guardrails (a hit is an escalation a human reads) → the rules classifier, or
with ``LLM_BACKEND=openai`` the model, which answers only a bucket and a
confidence and falls back to the rules on any failure. Below
``REPLY_CONFIDENCE_THRESHOLD``, and for every escalation, ``hitl`` is set: a
person looks before anything happens.
"""

import re
from dataclasses import dataclass
from typing import Literal, get_args

from django.conf import settings
from mailparser_reply import EmailReplyParser
from pydantic import BaseModel, ConfigDict, Field

from agents import llm
from agents.tracing import RunTrace, traced_structured
from outreach.language import unread_passages
from outreach.replies.guardrails import check_untrusted, normalise

Bucket = Literal["acknowledgment", "question", "update", "escalation"]
BUCKETS: tuple[Bucket, ...] = get_args(Bucket)
AGENT = "classifier"
PROMPT = ("classify_reply", "v1")
REPLY_LANGUAGES = ["en", "es"]
# The rules' confidence only reaches 1.0 once the winning bucket has this much
# evidence: one clear phrase ("I moved", "got it") is enough, a lone "ok" is not.
STRONG_EVIDENCE = 2.0
# Escalation features this strong (asking for a person, the law, a union,
# discrimination, a threat, privacy) decide the bucket whatever else the
# reply says: a person reads it (DESIGN.md step 5).
DECISIVE = 3.0
# Replies whose readings lead to the same action: an update re-audits the
# failed checks, an acknowledgment every check; either way the record decides.
SAME_ACTION = frozenset({"update", "acknowledgment"})


class ReplyClassification(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    bucket: Bucket
    confidence: float = Field(ge=0, le=1)
    reasoning: str
    hitl: bool
    guardrail: str = ""


class ModelReplyLabel(BaseModel):
    """All a model may answer about a reply: a bucket from the enum and a confidence."""

    model_config = ConfigDict(extra="forbid")
    bucket: Bucket
    confidence: float = Field(ge=0, le=1)


def classify_reply(
    text: str, subject: str = "", *, trace: RunTrace | None = None
) -> ReplyClassification:
    """The reply's bucket; with ``trace``, a model call is recorded as its child run."""
    body = strip_quoted(text)
    # Guardrails read the whole message, quoted part included: hidden text and
    # a fake "On … wrote:" line must not be a way to slip past them.
    hit = check_untrusted(text, subject)
    if hit:
        return ReplyClassification(
            bucket="escalation",
            confidence=1.0,
            reasoning=f"Guardrail: {hit.reason}. A person reads this reply.",
            hitl=True,
            guardrail=hit.rule,
        )
    said = _without_signature(body) + _forwarded_news(text, body)
    if _POINTS_AT_SUBJECT.search(body):
        said = f"{_REPLY_PREFIX.sub('', subject)}\n{said}"  # "see subject": the news is there
    rules = classify_by_rules(said, subject)
    backend = llm.get_backend()
    if isinstance(backend, llm.OpenAIClient):
        return _ask_model(backend, body, subject, rules, trace)
    return rules


def strip_quoted(text: str) -> str:
    """The rider's own words: quoted history, signatures and "> " lines removed."""
    text = text.replace("\r\n", "\n")
    # mail-parser-reply takes a line opening "- " for a signature: a bulleted
    # list of questions would be cut away. Bullets become "•" first.
    text = _DASH_BULLET.sub(r"\1•\2", text)
    replies = EmailReplyParser(languages=REPLY_LANGUAGES).read(text).replies
    body = replies[0].body if replies else text
    # mail-parser-reply 1.36's Spanish header pattern wants two spaces before
    # "escribió:", so Gmail's "El lun, … (<a@b>) escribió:" slips through: cut there.
    body = _SPANISH_HEADER.split(body, maxsplit=1)[0]
    # Quote marks without a header line (a forwarded or inline-quoted message).
    lines = [line for line in body.splitlines() if not line.lstrip().startswith(">")]
    return "\n".join(lines).strip()


_SPANISH_HEADER = re.compile(r"^El .{4,200}? escribió:\s*$", re.MULTILINE)
_POINTS_AT_SUBJECT = re.compile(r"\b(?:see|read|per|as in|check) (?:the )?subject\b", re.I)
_REPLY_PREFIX = re.compile(r"^(?:\s*(?:re|fwd?|aw|sv|rv)\s*:\s*)+", re.I)
_DASH_BULLET = re.compile(r"^([ \t]*)-([ \t]+)(?=\w)", re.MULTILINE)
_FORWARD_MARKER = re.compile(
    r"^-{2,}\s*(?:forwarded message|original message|mensaje reenviado)\s*-{2,}\s*$",
    re.IGNORECASE | re.MULTILINE,
)
_POINTS_BELOW = re.compile(
    r"\b(?:see|read|per|as|note) (?:\w+ ){0,3}below\b|\bbelow from\b|\bforward", re.I
)
_HEADER_LINE = re.compile(
    r"^(?:from|sent|date|to|cc|subject|de|para|enviado|asunto):.*$", re.I | re.M
)


_SIGN_OFF = re.compile(
    r"^\W*(?:thanks|thank you|thx|ty|regards|best|best regards|kind regards|warm regards|"
    r"sincerely|cheers|respectfully|take care|gracias|saludos|atentamente|mesi|obrigad[oa])"
    r"\b[^\n]{0,25}$",
    re.IGNORECASE | re.MULTILINE,
)
_NAME = r"(?:[A-Z][\w.'-]*|[A-Z]\.)(?: (?:[A-Z][\w.'-]*|[A-Z]\.|de|van|von|la|del|da|dos)){0,3}"
# A paragraph opening with a name, alone or beside a title ("Raymond Okafor | Clerk").
_NAME_LINE = re.compile(rf"^\W*{_NAME}\W*(?:\s[|,–-]\s.*)?$")


def _without_signature(body: str) -> str:
    """The reply without its sign-off and signature block.

    Job titles and offices ("Official Court Reporter", "EEO Specialist",
    "Deputy District Attorney") are not what the rider says.
    """
    sign_off = _SIGN_OFF.search(body)
    if sign_off and body[: sign_off.start()].strip():
        body = body[: sign_off.end()]
    paragraphs = [p for p in re.split(r"\n\s*\n", body.strip()) if p.strip()]
    while len(paragraphs) > 1 and (_is_signature(paragraphs[-1]) or _is_footer(paragraphs[-1])):
        paragraphs.pop()
    return "\n\n".join(paragraphs)


# A confidentiality or legal footer an employer adds to every email ("…may contain
# information protected under HIPAA… If you are not the intended recipient…").
_FOOTER = re.compile(
    r"intended recipient|(?:confidential|privileged)\b.{0,200}\b(?:prohibited|unauthori[sz]ed|"
    r"disclos\w+|dissemination)|\b(?:prohibited|unauthori[sz]ed)\b.{0,200}\bconfidential",
    re.IGNORECASE | re.DOTALL,
)


def _is_footer(paragraph: str) -> bool:
    return bool(_FOOTER.search(paragraph)) and "?" not in paragraph


def _is_signature(paragraph: str) -> bool:
    lines = paragraph.strip().splitlines()
    return len(lines) <= 6 and bool(_NAME_LINE.match(lines[0].strip())) and "?" not in paragraph


def _forwarded_news(text: str, body: str) -> str:
    """A forwarded message the rider points at ("see below from HR") is part of the reply.

    Quoted history is our own email and is dropped; a forward carries news
    from someone else (HR, a supervisor), which the rider is passing on.
    """
    marker = _FORWARD_MARKER.search(text.replace("\r\n", "\n"))
    if marker is None or not _POINTS_BELOW.search(body):
        return ""
    # Its own header lines go first: the reply parser would take them for a quote.
    forwarded = _HEADER_LINE.sub("", text.replace("\r\n", "\n")[marker.end() :])
    return "\n" + strip_quoted(forwarded.strip())


# --- Rules -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Feature:
    bucket: Bucket
    weight: float
    pattern: re.Pattern[str]


def _features(bucket: Bucket, weighted: dict[float, list[str]]) -> list[Feature]:
    return [
        Feature(bucket, weight, re.compile(pattern))
        for weight, patterns in weighted.items()
        for pattern in patterns
    ]


# A reply pointing at a file it sent ("see attached", "I've attached my lease"),
# not a footer's "this e-mail and any attachments are confidential".
_ATTACHMENT_PATTERN = (
    r"\b(?:see|find|please find|i've|i have|i|we've|we have|have|has|is|are) attached\b"
    r"|\battached (?:is|are|you'll find|please find|(?:\w+ ){0,2}(?:letter|note|form|document|"
    r"copy|pdf|file|photo|picture|screenshot|paperwork|proof|lease|bill|statement))\b"
    r"|\battaching\b|\b(?:in|see) the attachment\b"
    r"|\b(?:adjunto|anexo) (?:la|el|los|las|una|un|mi|mis)\b|\ben el (?:archivo )?adjunto\b"
)

# Patterns run on the normalised text (lower case, accents folded), English and Spanish.
FEATURES: list[Feature] = [
    *_features(
        "update",
        {
            2.5: [
                r"\b(?:i|we|i've|i have|we've|just|recently|finally) (?:\w+ )?"
                r"(?:moved|relocated|shifted)\b",
                r"\b(?:updated|changed|corrected|fixed|submitted|entered) (?:\w+ ){0,2}"
                r"(?:address|shift|schedule|hours|zip|records?|profile|info\w*|details)\b",
                r"\b(?:address|shift|schedule|hours|zip|records?|profile|info\w*)(?:'s)? "
                r"(?:\w+ ){0,2}(?:(?:has|have|was|were|is|are|got|been|now) )+"
                r"(?:updated|changed|corrected|fixed|sorted|adjusted)\b",
                # Leave explains the days missed; HR's leave record decides the re-audit.
                r"\b(?:maternity|paternity|parental|medical|family|disability|bereavement|"
                r"military|unpaid|extended|sick) leave\b",
                r"\b(?<!was )(?<!been )(?:on|out on|taking|started) (?:\w+ ){0,2}"
                r"(?:leave|pto|fmla|vacation|disability|furlough|sabbatical|holiday)\b",
                r"\bfmla\b",
                r"\b(?:incapacidad|licencia|baja medica|baja por maternidad|permiso medico|"
                r"de vacaciones|de baja)\b",
                r"\bnew (?:address|shift|schedule|hours|home|apartment|place|position|role|flat|"
                r"house|condo|route|run|bid line|line|start time|end time|assignment|crew|"
                r"station|base|post|posting)\b",
                # Seniority bids: "I bid on a new route", "won the 0500 line".
                r"\b(?:bid|bidded|won|got|picked|awarded) (?:on |for |a |the |my )*(?:new )?"
                r"(?:route|run|bid line|line|shift|trip|position|schedule|bid)\b",
                # A stint that is over: "my temporary assignment ended Nov 13".
                r"\b(?:assignment|detail|loan|rotation|posting|training|project|season|stint|"
                r"deployment|coverage) (?:\w+ ){0,4}(?:ended|is over|was over|finished|"
                r"wrapped up|is done|has ended)\b",
                # "my shift change went through", "the transfer was processed".
                r"\b(?:change|update|correction|request|transfer|paperwork)s? (?:\w+ )?"
                r"(?:went through|(?:was|has been|is|got|were|have been) (?:processed|approved|"
                r"completed|made|entered|done))\b",
                r"\bi(?:'m| am) (?:now )?back (?:at|on|to|in|with) (?:the |my )?"
                r"(?:regular|normal|usual|old|original|district|main|home|\w+ office|days|nights|"
                r"swing|the van)\b",
                r"\b(?:transferring|transferred|moving|relocating|reassigned|been moved|floated|"
                r"moved) to (?:the )?(?:\w+ )?"
                r"(?:warehouse|site|plant|office|campus|building|location|store|facility|"
                r"hospital|clinic|branch|team|department|annex|unit|floor|ward|division|depot|"
                r"yard|hub|center|centre|dc)\b",
                r"(?<!to )(?<!need )(?<!must )\b(?:got|had|has|have) (?:it|this|that|them) "
                r"(?:fixed|corrected|updated|changed|sorted)\b",
                # "I just fixed it", "we've updated everything" (not "I never changed it").
                r"\b(?:i|we|i've|i have|we've|we have|just|finally|already) "
                r"(?!(?:never|not|didn't|haven't|hadn't|can't|couldn't|won't) )(?:\w+ )?"
                r"(?:fixed|corrected|updated|changed|sorted|submitted) "
                r"(?:it|this|that|them|everything|both|all)\b",
                r"\b(?:not using|no longer (?:using|need|needing|riding)|stopped (?:using|riding)|"
                r"leaving|quitting|giving up|give up|drop|dropping|release|releasing) "
                r"(?:the |this |my )?(?:vanpool |van )?(?:van|vanpool|seat|spot)\b",
                r"\b(?:switched|transferred|moved|changed|promoted) (?:\w+ ){0,2}"
                r"(?:shifts?|to (?:days|nights|the|first|second|third|day|night|swing|weekend))\b",
                # Not "get my schedule changed" or "have my address changed": a wish.
                r"(?<!get )(?<!get my )(?<!have )(?<!have my )"
                r"\b(?:my )?(?:hours|shift|schedule|work days|crew|position|role|site|location|"
                r"address) (?:\w+ )?(?:changed|switched|moved)\b",
                r"\b(?:went|going|moved|moving|switched|switching|transferred|transferring|"
                r"changed|changing|got moved|was moved|am now|i'm now) (?:back )?(?:to |on )?"
                r"(?:the )?(?:part[- ]time|full[- ]time|days|nights|swing|graveyard|evenings|"
                r"mornings|weekends|first|second|third|1st|2nd|3rd)\b",
                r"\b(?:took|got|accepted|started|joined) (?:a |the )?(?:spot|position|job|role|"
                r"place|opening) (?:on|in|with|at) \w+",
                # Riding another van now ("I actually ride VP-240 now"), not "been riding since".
                r"\b(?:now|actually|instead) (?:ride|riding|take|taking) (?:vp-?\d+|another van|"
                r"a different van)|\b(?:ride|riding|take|taking) (?:vp-?\d+|another van|"
                r"a different van) (?:now|instead)\b",
                r"\bi(?:'m| am) (?:on |working )?\d{1,2}(?::\d{2})? ?(?:am|pm)? ?(?:-|to) ?\d{1,2}",
                r"\b(?:had|have|on|for|serving|called for) jury duty\b",
                r"(?<!close to )(?<!near )(?<!before )(?<!until )(?<!from )"
                r"\bretir(?:ed|ing|ement)\b|\blast day (?:on the van|at work|of work|here|was|"
                r"will be|is)\b",
                r"\b(?:switched|moved|transferred|changed)(?: over)? to (?:vp-?\d+|another van|"
                r"a different van|the \w+ van)\b",
                r"\bnot (?:on|in|riding|with) (?:vp-?\d+|\d+|that van|this van|the van) "
                r"(?:anymore|any more)\b",
                r"\b(?:swapped|traded|exchanged) (?:shifts?|schedules?)\b",
                r"\bi(?:'m| am) (?:now (?:on|working) (?:days|nights|swing|mornings|evenings)|"
                r"(?:on|working) (?:days|nights|swing|mornings|evenings) now)\b",
                r"\bme (?:cambio|cambiaron|paso|pasaron|movio|movieron|asigno|asignaron) "
                r"(?:el |la |de |del |al |a )?"
                r"(?:turno|horario|direccion|domicilio|ruta|van|camioneta)",
                r"^(?:pto|vacation|out sick|on leave)\b",
                r"\b(?:trabajo|estoy|paso|pase|me pasaron) (?:en |a )?(?:el |al )?turno de "
                r"(?:noche|dia|tarde|manana)\b",
                # Someone else made the change: "they put me back on the early shift".
                r"\b(?:(?:put|assigned|placed|reassigned) me (?:back )?(?:to|on|onto|into)|"
                r"(?:moved|switched|transferred|changed) me (?:back )?(?:on|onto|into)) "
                r"(?:the |a )?(?:\w+ ){0,2}"
                r"(?:shifts?|days|nights|swings?|crew|team|schedule|site|location|campus|"
                r"building|office)\b",
                r"\bme (?:regrese|volvi|fui|mude) a vivir\b",
                r"\b(?:me mude|nos mudamos|me cambie de casa|me cambiaron de turno|"
                r"cambie de turno)\b",
                r"\bme (?:cambiaron|pasaron|movieron|asignaron) (?:a|al|a la|de|del) ",
                # "ya lo actualizó": accents are folded, so "ya" (already) tells the
                # done change from the promise "lo actualizo".
                r"\bya (?:lo |la |los |me |se )?(?:actualiz|actualic|cambi|corrigi|modific|arregl|"
                r"updat|fix|chang)\w*",
                r"\b(?:el|la|mi) (?:supervisor\w*|jefe|jefa|gerente|manager|lead|recursos humanos|"
                r"rh|hr) (?:ya )?(?:lo |la |me )?(?:cambi|actualiz|corrigi|arregl|modific)\w*",
                r"\b(?:actualice|cambie|corregi|modifique) (?:\w+ ){0,2}(?:direccion|turno|horario|"
                r"datos|codigo postal|informacion)\b",
                r"\b(?:nueva direccion|nuevo turno|nuevo horario|cambio de turno)\b",
            ],
            2.0: [
                r"^\W*(?:fixed|corrected|updated|done|all set|taken care of)\b(?! (?:soon|later))",
                r"^\W*(?:(?:my |the )?(?:record|address|shift|schedule|info\w*|zip|profile)|it|all|"
                r"everything) (?:is |has been |was |now |got )?(?:fixed|corrected|updated|changed|"
                r"sorted)\b",
                r"\b(?:been|am|i'm|was) (?:on|doing|working|pulling) (?:storm duty|night duty|"
                r"(?:a |an )?(?:temporary|special|temp) (?:assignment|detail)|loan to)\b",
                r"\bgo(?:ing)? back to (?:regular|normal|my|the) (?:days|nights|hours|shift|"
                r"schedule)\b",
                # The record is stale and the rider states what is true.
                r"\bmy (?:actual|real|correct|current|true) (?:hours|shift|schedule|address|zip|"
                r"home address|start time) (?:is|are)\b",
                r"\b(?:i |we )?(?:now )?live (?:in|at|with) [a-z']+(?: [a-z']+){0,2} now\b"
                r"|\bnow (?:i |we )?live in\b"
                r"|\b(?:don'?t|do not) live (?:at|in) (?:the|my) old "
                r"(?:address|place|house|apartment)\b",
                r"\bwent from (?:\w+ ){1,3}to (?:\w+ )?(?:shift|days|nights|\d\w*)\b"
                r"|\b(?:closed on|bought|purchased|moved into) (?:a|the|our|my) (?:new )?"
                r"(?:house|home|condo|place|apartment)\b"
                r"|\bi'?ve lived in\b[^.]{0,40}\bsince\b",
                r"\b(?:i |we )?(?:work|working) (?:from home|remotely)\b",
                r"\bnow (?:i |we )?work (?:the )?(?:\w+ )?"
                r"(?:shift|days|nights|swing|mornings|evenings)\b",
                r"\b(?:hybrid|telework|remote|work from home|wfh|schedule|shift|arrangement|"
                r"agreement)(?: \w+)? (?:was|got|has been|is) approved\b",
                # "We went to winter ops Nov 1 … I'm not riding the van until April".
                r"\b(?:went|switched|moved|changed|go) (?:over )?to "
                r"(?:winter|summer|seasonal|night|day|swing) "
                r"(?:ops|operations|shifts?|schedule|hours|crew)\b"
                r"|\bnot riding (?:the van |the vanpool |it )?(?:until|till|through|for the)\b"
                r"|\bmarked (?:me )?(?:as )?inactive\b",
                r"\b(?:address|shift|schedule|record|portal)? ?(?:change|update|correction)s? "
                r"(?:was |were |has been |have been )?(?:submitted|entered|filed|completed)\b",
                # Vietnamese-English: "em da update dia chi moi", "em moved to Kent" (em, toi,
                # minh: I); accents are folded, so "đã cập nhật" reads "da cap nhat".
                r"\b(?:em|toi|minh) (?:da |vua )?(?:moved|move|chuyen nha|doi dia chi)\b"
                r"|\b(?:da|vua) (?:update|updated|cap nhat|doi|thay doi|sua|chuyen)\b",
                # "I haven't lived in Manhattan since last summer. My address is 44 Main St."
                r"\b(?:haven't|have not|hasn't|has not) lived (?:in|at|there)\b"
                r"|\bno longer (?:live|lives|living|reside|resides|residing)\b",
                r"\bmy (?:new |current |home )?address is (?:now )?\d+ \w+",
                r"\b(?:pushed|applied|deployed|made|put in|entered) (?:a|the) (?:fix|correction)\b",
            ],
            1.5: [
                # Leave that is over may only explain a late reply ("I was on vacation").
                r"\b(?:took|was on|been on|was out on|got back from) (?:\w+ ){0,2}"
                r"(?:leave|pto|fmla|vacation|disability|furlough|sabbatical|holiday)\b",
                r"^(?:ya esta|ya quedo)\b",
                # Documents sent along ("see attached letter from my doctor"); a
                # person reads them, since the rules cannot (see _ATTACHMENT).
                _ATTACHMENT_PATTERN,
                r"\b(?:now|currently) (?:i )?(?:live|living|work|working|on|based)\b",
                r"\bi (?:now|currently) (?:live|work)\b",
                r"\b(?:no longer|don't|do not) (?:live|work) (?:in|at|on|the|near)\b",
                r"\bas of (?:last|this|monday|tuesday|wednesday|thursday|friday|\w+ \d)",
                r"\b(?:ahora|actualmente) (?:vivo|trabajo|estoy)\b|\b(?:shift|turno|horario) "
                r"ahora es\b",
                r"\bya no (?:vivo|trabajo)\b",
                r"\b(?:hr|payroll|my (?:manager|supervisor|lead|boss|team lead)|workday|they|"
                r"they've|they have|someone) (?:\w+ ){0,2}(?:updated|changed|moved|approved|fixed|"
                r"processed|"
                r"sorted|corrected|adjusted|took care of|put in|entered|submitted|filed)\b",
                r"\b(?:it|this|that)(?:'s| is| has been| was| got) (?:all |now |been )?"
                r"(?:sorted|fixed|corrected|taken care of|updated|resolved)\b",
                r"\bstarting (?:on )?(?:monday|tuesday|wednesday|thursday|friday|next|this|\w+ \d)",
                r"\beffective (?:the )?(?:\d|monday|tuesday|wednesday|thursday|friday|next|this|"
                r"today|immediately)",
                r"\b(?:is|are) (?:all )?different now\b",
                r"\b(?:should|will|now) (?:reflect|show) (?:it|that|this|the change)\b",
                r"\b(?:it|that|this|the (?:record|system|portal)) should (?:now )?(?:show|say|read|"
                r"list|have) (?:\w+ ){0,3}now\b",
                r"\b(?:he|she|they) (?:\w+ ){0,2}(?:corrected|fixed|updated|changed) "
                r"(?:it|that|this|my \w+|the \w+)\b",
                r"\b(?:should be|is|it's|it is) (?:correct|right|fixed|updated|accurate) now\b",
                r"\b(?:schedule|record|shift|address|info\w*) (?:is|was|must be) (?:just )?"
                r"(?:stale|outdated|out of date|old)\b",
                r"\b(?:i|you|he|she|they)(?:'ve| have|'s| has) been on (?:the |my )?"
                r"(?:[\w:]+ ){0,2}(?:line|shift|crew|days|nights|schedule|route|team)\b"
                r"(?: crew)? since\b",
                # Plain or learner's English: "HR fix it today", "I am change to day shift",
                # "it show Day shift now".
                r"\b(?:hr|payroll|they|he|she|my (?:supervisor|manager|lead)) (?:\w+ ){0,2}"
                r"(?:already |today )?(?:fix|fixed|update|updated|correct|corrected) "
                r"(?:it|my \w+)\b"
                r"|\bi(?:'m| am) chang(?:e|ed|ing) to\b"
                r"|\b(?:it|portal|system) (?:now )?shows? (?:\w+ ){0,3}now\b",
                r"\b(?:by mistake|in error|data entry (?:mistake|error))\b"
                r"|\bfixed (?:it|this|that) (?:on|yesterday|today|this morning|last week)\b",
                # Someone sent the change on: "my principal sent the correction to HR".
                r"\b(?:sent|submitted|forwarded|turned in|emailed) (?:it|the (?:\w+ )?"
                r"(?:correction|change|update|paperwork|form|request)s?) (?:\w+ ){0,2}to "
                r"(?:hr|payroll|benefits|human resources|personnel)\b",
                r"\b(?:desde el|a partir del?) \d",
            ],
            0.8: [
                r"\b(?:portal|workday|hris|in the system|kronos|adp|ukg|dayforce|on file)\b",
                r"\bmove[ds]?\b",
                r"\bmudanza\b",
            ],
        },
    ),
    *_features(
        "question",
        {
            # Asked without a question mark ("what zip do yall have on file for me").
            2.0: [
                r"\bwhat (?:\w+ ){0,2}(?:do|does|did) (?:you|y'?all|yall|they) (?:guys )?"
                r"(?:have|show|got|see)\b",
                r"\bwhat time (?:does|do|is|will|did)\b",
            ],
            1.5: [
                r"\?",
                r"¿",
                r"\b(?:what|how) (?:do|should|can|does|would|must) (?:i|we|this)\b",
                r"\bwhat (?:do|does) (?:i|this) need\b",
                r"\b(?:who|where|how) (?:do|should|can|would|will|could) (?:i|we) (?:contact|call|"
                r"ask|reach|email|e-mail|write to|send|go to|turn to)\b",
                r"\b(?:can|could|would) you (?:explain|tell|clarify|let me know|confirm|help)\b",
                r"\b(?:not sure|unsure|confused|don't understand|do not understand) ",
                r"\b(?:por que|que (?:tengo|debo|necesito)|como (?:puedo|hago|actualizo)|"
                r"donde|cuando|no entiendo)\b",
                r"\bwondering\b|\bi (?:was wondering|would like to know|want to know)\b",
                r"\b(?:quick |one |a )?question\b|\bpregunta\b",
                # A dispute asks for a second look: answered from the facts on record.
                r"\bthere(?:'s| is| must be) (?:a |an |some )?(?:mistake|error|mix-?up)\b",
                r"\b(?:please |can you |could you )(?:double[- ]?check|re-?check|check again|"
                r"verify)\b",
            ],
            1.0: [
                r"^(?:(?:also|and|so|but|oh|ok|okay|hi|hey|btw|one more thing|another thing)"
                r"[,:]? )?(?:why|what|how|which|where|when|who|is|are|do|does|can|could|should|"
                r"will|would)\b",
                # "that's why" explains; it does not ask.
                r"(?<!that's )(?<!that is )(?<!this is )(?<!which is )\bwhy\b",
                r"\b(?:which|where|whom)\b",
                r"\bis (?:there|it|this)\b[^.!\n]*\?",
                r"\bplease (?:explain|clarify|advise|let me know)\b",
                r"\b(?:can|may|could) i (?:keep|stay|still|continue)\b",
                r"\b(?:is|was) (?:that|this|it) (?:ok|okay|alright|all right|fine|a problem)\b",
                r"\bkindly (?:clarify|confirm|explain|advise|let me know|tell|check)\b",
                r"\bquestion is\b|\bwhether\b",
                r"\b(?:does|do|will|would|can|could) (?:that|this|it) (?:affect|mean|matter|count|"
                r"change|apply)\b",
            ],
        },
    ),
    *_features(
        "acknowledgment",
        {
            2.0: [
                r"\b(?:got it|understood|will do|noted|sounds good|makes sense|received|"
                r"message received|all good|no problem|roger|copy that|acknowledged)\b",
                r"(?<!who )(?<!that )(?<!who all )\b(?:got|saw|read|have|seen) (?:your|the|this) "
                r"(?:e-?mail|message|note|notice|letter|reminder)\b",
                r"(?<!what )(?<!what else )\bi(?:'ll| will) "
                r"(?:take care|look into|look at|check on|get to|"
                r"get (?:it|this|that) (?:fixed|updated|sorted)|update|fix|correct|check|handle|"
                r"do|reach out|contact|confirm|verify|follow up|circle back|double[- ]?check|ask|"
                r"find out|let you know|"
                r"talk|call|submit|review)\b",
                r"\b(?:entendido|de acuerdo|recibido|lo hare|lo reviso|lo actualizo|lo corrijo|"
                r"esta bien|muy bien|perfecto|vale|claro que si|con gusto)\b",
                r"^(?:ok|okay|k|kk|sure|yes|yep|yup|yeah|fine|alright|all right|great|perfect|cool|"
                r"copy|10-4|ack)\b",
                r"[\U0001F44D\U0001F44C\U0001F64F\u2705]",  # thumbs up, ok hand, thanks, check
                r"^(?:will|gonna|going to) (?:check|look|do|fix|update|follow up|get back)\b",
                r"\bget back to (?:you|u|ya)\b",
                # Vietnamese: "em nhận được email rồi, em sẽ kiểm tra lại" (received; will check).
                r"\bnhan duoc (?:email|thu|tin)\b|\bse (?:kiem tra|xem lai|sua|cap nhat)\b",
                # Someone else's promise: nothing has changed yet.
                r"\b(?:they|he|she|hr|payroll)(?:'ll| will| are going to| is going to|'s going to|"
                r"'re going to| said they(?:'d| would| will)) (?:\w+ ){0,2}(?:update|fix|change|"
                r"correct|enter|submit)\b",
                r"\b(?:will|gonna|going to) (?:take|have) a (?:quick )?(?:look|peek)\b",
                r"\bi(?:'ll| will) get (?:it|this|that) done\b|^\W*i understand\b"
                r"|\bi(?:'ll| will) go to (?:hr|payroll|the office|human resources)\b",
                r"^\W*got (?:this|that)\b",
                r"\bi(?:'ll| will) (?:deal with|stop by|swing by|drop by|head over|"
                r"sort (?:it|this) out)\b",
                r"^(?:confirmed|confirming)\b|\bi (?:still|do) (?:live|ride|work)\b",
                r"\bjust (?:saw|seen|read|got|noticed|opened) (?:this|your|it|the)\b",
                r"\bi(?:'ll| will) (?:get|ask|have) (?:hr|payroll|my \w+|them|someone) to "
                r"(?:fix|update|change|correct)\b",
                r"\b(?:i|we|he|she|they)(?:'ll| will) (?:\w+ ){0,2}(?:look|check|go over|"
                r"go through|sort|review|handle|get to|see it|read it)\b",
                # Someone passing it on for the rider ("printed it and left it on her desk").
                r"\b(?:printed|forwarded|passed|handed|left|gave) (?:it|this|that|your (?:e-?mail|"
                r"message|note|letter))(?: (?:out|along|on))? (?:on|to|for|with)\b",
                r"\b(?:recebido|recebi|entendi|combinado|vou (?:verificar|ver|checar|olhar|falar|"
                r"resolver|atualizar))\b",
                r"\b(?:recibi|recibimos) (?:su|tu|el|la|sus) (?:correo|mensaje|e-?mail|"
                r"notificacion|aviso)\b|\bvoy a (?:revisar|verificar|checar|actualizar|hablar|"
                r"consultar|corregir)\b|\bles? aviso\b",
                # Haitian Creole: "mwen resevwa imel la", "m ap tcheke sa".
                r"\b(?:m|mwen) (?:te )?resevwa\b|\bm(?:wen)? ap (?:tcheke|verifye|gade)\b",
                r"\b(?:have|i've|i have) (?:read|seen|received|passed on) (?:it|this|your|the)\b",
            ],
            1.0: [
                r"\b(?:thanks|thank you|thx|ty) (?:for (?:letting|the heads|reaching|the info\w*|"
                r"the reminder|the notice)|so much)\b",
                r"(?<!is that )(?<!is it )(?<!is this )\b(?:ok|okay|sure|alright|listo)\b",
            ],
            # Courtesy: most replies thank, whatever else they say.
            0.5: [
                r"\b(?:thanks|thank you|thx|ty|cheers|appreciate it|gracias|obrigad[oa]|mesi|"
                r"cam on|salamat|hvala|ua tsaug|mahadsanid)\b"
            ],
        },
    ),
    *_features(
        "escalation",
        {
            3.0: [
                r"\b(?:take (?:you|this|it|them|the county|the company) to court|see you in court|"
                r"small claims|court order|"
                r"(?:fight|settle|contest|challenge) (?:this|it|that) in court|"
                r"in court (?:over|about) (?:this|it))\b",
                # Not "my wife is a lawyer", "my lawyer friend", or "Sue in Parking".
                r"\b(?:(?<!is a )lawyer(?! friend)|(?<!is an )attorney(?! friend)|legal action|"
                r"(?<!\bto )sue(?! in\b)|suing|lawsuit|"
                r"legal counsel|eeoc|"
                r"labor board|osha)\b",
                # Not "harassment-prevention training" or "doesn't discriminate between fields".
                r"\b(?:harass\w*+(?![- ](?:prevention|training|awareness|policy))|"
                r"discriminat\w*+(?! between)|racis[tm]|sexis[tm]|retaliat\w*|profiling|"
                r"targeting|targeted|bully\w*|hostile|eeo|civil rights|equal (?:employment|"
                r"opportunity)|singled out|singling (?:us|me|them) out)\b",
                # "only the Hispanic drivers got this": a protected group named.
                r"\b(?:hispanic|latino|latina|latinx|black|african american|asian|muslim|jewish|"
                r"immigrant|mexican|filipino|arab|indian|haitian|gay|lesbian|transgender|disabled|"
                r"older|pregnant|female|women|woman) (?:drivers|workers|employees|riders|people|"
                r"folks|staff|ones|members|nurses|agents|crew|colleagues|coworkers|co-workers)\b",
                r"\bbecause (?:i'm|i am|we're|we are|of my|of our) (?:\w+ )?(?:race|age|accent|"
                r"religion|gender|ethnicity|nationality|disability|pregnan\w+|hispanic|latino|"
                r"latina|black|muslim|old|older|a woman|an immigrant)\b",
                r"\b(?:file|filing|filed|make|making|lodge) (?:a |an )?(?:formal )?(?:complaint|"
                r"grievance)\b",
                r"\b(?:report|reporting) (?:this|you|it) to\b",
                r"\b(?:ombudsman|ethics (?:line|hotline)|unsubscribe|remove me from (?:this|your) "
                r"(?:list|emails?))\b",
                # "take me off these emails" unsubscribes; a retiree's "take me off the
                # list" gives up the seat (an update).
                r"\b(?:take|get) me off (?:these|this|your) (?:emails?|list|mailing)|"
                r"\b(?:take|get) me off the (?:emails?|mailing)",
                r"\b(?:actual|real) (?:human|person)\b|\bhuman being\b|\bnot a (?:bot|robot)\b",
                r"\bi (?:will not|won't|refuse to) (?:be )?(?:provid|shar|giv|answer|respond|"
                r"participat|tak)\w*",
                r"\b(?:solicitor|data breach|privacy breach|breach of (?:my )?privacy|gdpr|ccpa)\b",
                r"\b(?:speak|talk) (?:to|with) (?:a|an|the|your|someone's) "
                r"(?:manager|supervisor|boss|human|real person|person in charge|"
                r"someone in charge|director)\b",
                # A union brought in, not a steward's advice to update the portal.
                r"(?:\b(?:my|the|our) union\b(?! (?:contract|agreement|rules?|handbook))|"
                r"\bunion (?:rep\w*|steward|representative)\b|"
                r"\b(?:seiu|afscme|teamsters|ufcw|local \d{2,4}) (?:rep\w*|steward|"
                r"representative|delegate)\b)(?![^.!?\n]{0,40}\b(?:said|says|told me|advised)\b"
                r"[^.!?\n]{0,25}\b(?:update|fix|change|correct)\b)",
                r"\bsubject to (?:collective )?bargaining\b|\bdirect (?:any |all )?(?:further |"
                r"future )?(?:communication|correspondence|contact)\w* (?:\w+ ){0,4}to my\b",
                r"\b(?:abogado|demanda\w*|acoso|discrimina(?:cion|n|ron|do|da|dos|das)?\b|queja|"
                r"represalia\w*|sindicato)\b",
                r"\bhablar con (?:un|el|una|la|su|mi) (?:gerente|supervisor\w*|jefe|persona)\b"
                r"|\bhablar con (?:alguien|una persona|un humano)\b",
                # Haitian Creole: "mwen bezwen pale ak yon moun", "rele m".
                r"\bpale ak (?:yon moun|yon sipevize|yon manadje|yon responsab)\b"
                r"|\brele (?:m|mwen)\b",
                # Safety at home: only a person handles it, and it is kept off the record.
                r"\b(?:domestic violence|violencia|abus(?:e|o|ive)|restraining order|"
                r"protective order|orden de (?:proteccion|alejamiento)|stalk\w*|shelter|refugio)\b",
                # A formal request for the records held: a person answers it.
                r"\b(?:public records act|foia|freedom of information|records request)\b"
                r"|\brequest\w* (?:copies|a copy) of (?:all )?(?:the )?(?:records|data|"
                r"documents)\b",
                # Taking it to compliance, privacy, ethics, a union: a person answers.
                r"\b(?:rais\w+|report\w*|tak\w+|bring\w*) (?:it|this) (?:up )?(?:with|to) (?:the )?"
                r"(?:compliance|legal|privacy|ethics|union|ombuds\w*|inspector general|council\w*)",
                r"\btracking where i live\b|\bwho authori[sz]ed (?:this|that)\b",
                # Another rider's seat, an exception granted, an arrangement to weigh.
                r"\b(?:lets|let|has|had) (?:his|her|their|someone|somebody|a) (?:\w+ ){0,2}"
                r"(?:take|use|ride in) (?:his|her|their) (?:seat|spot)\b"
                r"|\b(?:somebody|someone) should look into\b",
                r"\b(?:approved|signed off on|authori[sz]ed|okayed|ok'?d) (?:me|it|this|my) "
                r"(?:\w+ ){0,3}(?:living|riding|to live|to ride|exception|exemption)\b",
                r"\b(?:cancer|chemo\w*|hospice|dialysis|terminally ill|stage [1-4])\b",
                r"\b(?:pause|hold|freeze|suspend|save) my (?:seat|spot|place)\b",
                r"\b(?:i'm|i am) not (?:even )?(?:on|in) (?:vp-?\d+|that van|this van)\b"
                r"(?! (?:anymore|any more))",
                r"^\W*\(?\d{3}\)?[\s.-]?\d{3}[\s.-]?\d{4}\W*$",  # only a number: call me
                # "…or I'm going to HR about it": an ultimatum.
                r"\bor (?:i'm|i am|i will|i'll) (?:going to|gonna|go to|take this to|report)\b",
                r"\byou(?:'ll| will) (?:regret|be sorry|hear from)\b|\bor else\b",
                r"\b(?:they|you|he|she|somebody|someone)(?:'d)? better not\b"
                r"|\bwatch (?:your|their) back\b|\bshow (?:their|your|his|her) face\b",
                # Wants a person, or raises what only a person may weigh.
                r"\b(?:discuss|talk about|go over) (?:it|this|that) with (?:someone|somebody|"
                r"a (?:real )?person|a human)\b",
                r"\b(?:someone|somebody|a person|a human) (?:i|we) (?:can|could) (?:talk|speak) "
                r"(?:to|with)\b",
                r"\b(?:reviewed|looked at|handled|checked) by (?:someone|somebody|"
                r"a (?:real )?person|a human)\b",
                r"\b(?:medical|ada|disability|religious|reasonable) accommodation\b",
                r"\b(?:never (?:agreed|consented)|without my (?:consent|permission))\b",
                # Privacy: what is kept about them, and a demand to erase it.
                r"\b(?:want|need|demand|expect) (?:it|this|that|them|my (?:data|information|"
                r"info|address|records?|details)|all of (?:it|this)) (?:\w+ )?(?:deleted|erased|"
                r"removed|purged)\b",
                r"\bwhat (?:data |information |info )?(?:you(?:'re| are)|are you) (?:storing|"
                r"keeping|collecting|holding|tracking)\b|\b(?:tracked|tracking (?:me|my))\b",
                # Menace: "everybody on this van is gonna know who did it".
                # Wants a person: "I want whoever runs this to call me personally".
                r"\b(?:want|demand|expect|insist)\w* (?:\w+ ){0,4}(?:call|phone|contact|"
                r"speak with|talk to|meet with|meet) me\b",
                r"\b(?:want|need|would like|expect)s? (?:a|an actual|a real|some) (?:person|human|"
                r"human being|coordinator|manager|supervisor) to (?:look|review|check|see|call|"
                r"talk|go over)\b",
                r"\b(?:have|get) (?:someone|somebody|a person) (?:to )?"
                r"(?:call|contact|phone|reach) me\b",
                r"\b(?:can|could|would|will) (?:someone|somebody|a person|a human|you|"
                r"a coordinator) (?:please )?(?:call|phone|ring) me\b",
                # What only a person may handle: health details, a death, a home kept for weekdays.
                r"\bmedical (?:details|information|info|records|history|condition)\b"
                r"|\bdiagnos[ie]s\b",
                r"\b(?:passed away|has died|died on|deceased|fallecio|murio)\b",
                r"\b(?:stay|stays|staying|live|living|sleep|sleeping|me quedo)\b[^.?!]{0,60}"
                r"\b(?:during the week|on weekdays|weeknights|monday (?:to|through|thru) friday|"
                r"mon-fri|de lunes a viernes|entre semana)\b",
                r"\b(?:have|get) (?:a|the|your) (?:manager|supervisor|director|program (?:manager|"
                r"owner|lead|director)) (?:to )?(?:call|contact|phone|reach out to|email|"
                r"get in touch with) me\b",
                r"\b(?:better think twice|(?:gonna|going to|will) (?:know|find out) who "
                r"(?:did|done))\b",
                # Menace towards co-riders: "somebody snitched on me and I WILL find out who".
                r"\b(?:snitch\w*|ratted (?:me )?out|rat(?:ted)? on me|told on me|turned me in)\b",
                # Distress: only a person answers it.
                r"\b(?:i'm|im|i am) (?:crying|in tears|desperate|devastated|panicking|begging)\b"
                r"|\b(?:lose|losing) (?:my|the|this) job\b|\bjust (?:don'?t|do not) know anymore\b"
                r"|\bdon'?t know what (?:else )?"
                r"(?:to do (?:anymore|any more)|i(?:'ll| will| would) do)\b"
                r"|\bcan'?t (?:afford to )?lose (?:this|my) (?:seat|spot|ride)\b"
                r"|\b(?:repossessed|evicted|homeless|sleeping (?:in my car|at a friend'?s|"
                r"on a couch))\b",
                r"\bi know (?:where|which (?:lot|car|building|desk|office|house|street)) "
                r"(?:you|your \w+(?: \w+)?|the [\w ]{1,30}?) "
                r"(?:is|are|lives?|works?|parks?|sits?)\b"
                r"|\bsee what happens\b|\bsee how (?:that|this|it) works out for (?:you|them)\b",
                # Singled out for who they are: "because my name is not American".
                r"\bbecause (?:of )?(?:my|our) (?:name|accent|age|race|religion|color|colour|skin|"
                r"origin)\b|\bmy name is not (?:american|english)\b"
                r"|\b(?:only|all|just) (?:the )?"
                r"(?:somali|hmong|mexican|hispanic|latino|black|asian|"
                r"african|haitian|vietnamese|filipino|bosnian|arab|muslim|indian|chinese|korean|"
                r"immigrant|foreign|older|old)\w* (?:people|peoples|workers|employees|riders|folks|"
                r"guys|ones|women|men|ladies)?\b",
                r"\b(?:hard not to|can'?t help but|starting to) (?:see|notice) a pattern\b"
                r"|\ball (?:the )?(?:ones|people|workers) (?:close|near) (?:to )?retirement\b"
                r"|\bwho picked (?:us|me|them)\b",
                # An outside agency already called, a record kept against us.
                r"\b(?:state )?labor (?:office|board|department|commission)\b"
                r"|\bdepartment of labor\b"
                r"|\b(?:civil|human) rights (?:office|commission|division|department)\b"
                r"|\b(?:write|writing|keep|keeping) (?:everything|it all) down\b"
                r"|\bdocument(?:ing)? everything\b",
                # Said calmly: retaliation, a standing accommodation, a quiet threat, an
                # elected official or the press, grief, a manager who wants them gone, an
                # origin singled out.
                r"\b(?:raised|reported|voiced|filed|brought up) (?:\w+ ){0,2}(?:concerns?|"
                r"complaints?|issues?|a report)\b[^.!?]{0,160}\bsince then\b",
                r"\bada (?:office|coordinator|paperwork|request)\b"
                r"|\baccommodation\b[^.!?]{0,40}\b(?:ada|disability|medical)\b",
                r"\bi'?m not a forgiving person\b|\bpeople remember (?:things like this|this)\b"
                r"|\bthink (?:very )?carefully about (?:who|whether|taking)\b",
                r"\b(?:office of|forwarded (?:this|it|your (?:message|email|letter)) to|contacted|"
                r"copying|cc'?d?) (?:the )?(?:district office of )?(?:state )?(?:representative|"
                r"senator|rep\.|legislator|congress\w*|council ?member|a reporter|a journalist|"
                r"the (?:news|press|paper))\b|\b(?:reporter|journalist) (?:at|from|with) the\b",
                r"\b(?:husband|wife|spouse|partner|son|daughter|mother|father|mom|dad|child|brother|"
                r"sister) (?:died|passed|was killed)\b",
                r"\bme gone\b|\b(?:out to get|has it out for|is targeting) me\b"
                r"|\bpattern (?:with|of|from) (?:him|her|them|my manager|my supervisor|my boss)\b"
                r"|\b(?:someone|somebody|a person) (?:outside|other than|besides) (?:my|the) "
                r"(?:department|manager|supervisor|chain)\b",
                r"\b\d{1,2} weeks pregnant\b|\bpregnan(?:t|cy)\b"
                r"|\bmy doctor (?:has )?(?:asked|told|advised|ordered) me\b",
                r"\b(?:was|been|got|being) (?:followed|stalked|attacked|assaulted|mugged|robbed)\b"
                r"|\b(?:feel|felt|don'?t feel|do not feel|wouldn'?t feel) (?:safe|unsafe)\b"
                r"|\bpolice (?:have|has|took|filed) a report\b",
                r"\b(?:retained|hired|engaged|consulted) (?:counsel|an attorney|a lawyer|legal "
                r"counsel)\b",
                r"\bonly one (?:who|that) (?:isn'?t|is not|wasn'?t|was not) (?:from here|born here|"
                r"american|white|a native)\b",
                r"\b(?:gonna|going to|will) find out who\W*(?:$|\b(?:it was|did (?:it|this)|"
                r"reported|ratted|snitched|told)\b)",
                r"\b(?:everybody|everyone|all of (?:you|them)) (?:on|in) [\w-]+(?: [\w-]+)?"
                r" (?:is |are )?(?:gonna|going to|will) (?:hear|know) about (?:it|this)\b",
            ],
            2.0: [
                r"\b(?:ridiculous|outrageous|unacceptable|absurd|insulting|disgusting|"
                r"unbelievable|pathetic|nonsense|bullshit|bs|crap|damn|wtf|hell|garbage|trash|"
                r"stupid|idiotic|incompetent|a joke|idiots?|morons?|clowns?)\b",
                r"\b(?:how dare|sick (?:and tired )?of|fed up|leave me alone|stop (?:emailing|"
                r"contacting|harassing|bothering)|none of your business|waste of (?:my )?time)\b",
                r"\bi(?: refuse| won't| will not| am not going to|'m not going to|'m not gonna) "
                r"(?:to )?"
                r"(?:move|change|comply|give|provide|answer|respond|explain|update|leave|"
                r"accept|do)\b",
                r"\b(?:furious|angry|pissed|livid|upset|offended|insulted)\b",
                r"\b(?:you people|think twice|threaten\w*)\b",
                r"\b(?:rule|policy|this|that|it) (?:doesn't|does not|don't) make (?:any )?sense\b",
                r"^(?:no|nope|nah|no way)\W*$",  # a bare refusal
                # Rhetorical: "Are you kidding me??", "Who decided this, some computer?"
                r"\b(?:are you (?:kidding|serious|joking)|you(?:'ve| have)? (?:got|gotta) to be "
                r"kidding|who (?:decided|came up with) (?:this|that|i)\b|some (?:computer|robot|"
                r"algorithm))\b",
                r"\bstop sending me\b|\bfix your (?:system|records|data|mess)\b",
                r"\bwon'?t be (?:replying|responding|answering)\b|\bi will keep riding\b"
                r"|\bwho (?:requested|ordered|asked for|initiated|started) (?:this|the) "
                r"(?:audit|review|check|investigation)\b"
                r"|\bhow (?:i|we) (?:was|were) (?:chosen|picked|selected|targeted)\b",
                r"\b(?:not|isn'?t|is not|ain'?t) fair\b"
                r"|\bwe (?:will|are going to|gonna|'ll) (?:all )?"
                r"go (?:together )?to (?:the )?(?:office|hr|union|management|director)\b",
                # A plea for the seat: a person reads it unless a fix is stated beside it.
                r"\b(?:do not|don'?t|dont|please not) (?:cancel|take|remove|end) (?:my (?:seat|"
                r"spot|membership|place)|me)\b|\bno (?:me )?(?:cancelen|quiten|eliminen|saquen)\b",
                r"\b(?:do not|don't|dont) (?:you )?(?:dare )?touch my (?:seat|spot)\b"
                r"|\bhands off my (?:seat|spot)\b",
                r"\bi(?: am|'m) not (?:moving|changing|leaving|going anywhere|giving up)\b",
                r"\b(?:is|it's) (?:my|none of your) (?:own )?business\b",
                r"\b(?:inaceptable|ridiculo|absurdo|me niego|no voy a|estoy (?:harto|harta|"
                r"molesto|molesta|enojado|enojada)|dejen(?:me)? en paz)\b",
                r"\b(?:invasion of (?:my )?privacy|spying|surveillance|big brother)\b",
                r"\b(?:complaint|grievance) (?:\w+ ){0,2}(?:logged|lodged|filed|raised|recorded)\b"
                r"|\bshould be ashamed\b",
            ],
            1.0: [
                r"!{2,}",
                r"\b(?:never|unfair|injusto|nobody|i swear)\b",
                # "This is wrong!", not "HR had my ZIP wrong" (a data error to re-check).
                r"\b(?:this|that|it|you|this audit|your (?:audit|system|data|records|e-?mail))"
                r"(?:'s| is| are|'re|re) (?:\w+ )?wrong\b|^\W*wrong\W*$"
                r"|\bwrong (?:person|guy|employee|rider|one)\b",
            ],
        },
    ),
]


def classify_by_rules(body: str, subject: str = "") -> ReplyClassification:
    scores = {bucket: 0.0 for bucket in BUCKETS}
    hits: dict[str, list[str]] = {bucket: [] for bucket in BUCKETS}
    stated_update = 0.0  # update evidence outside questions
    decisive = False  # a reason only a person may weigh
    # A link's "?" and words are an address, not the rider's question.
    text = _URL.sub(" ", _expand_shorthand(normalise(body or subject)))
    # A bare "?" says "what is this?": a question, answered from the facts.
    sentences = _sentences(text) or (["?"] if "?" in text else [])
    # "I moved in March… I'll fix it in Workday today": the mismatch owned and a
    # fix promised, none made yet. The life change is context, not an update.
    only_promised = bool(_PROMISE.search(text) or _ASKED_TO_FIX.search(text)) and not (
        _FIX_DONE.search(text)
    )
    for sentence in sentences:
        # Inside a question, "my new schedule" or "thanks" is context, not news.
        asked = sentence.endswith("?") or sentence.startswith("¿")
        found = [(f, m) for f in FEATURES if (m := f.pattern.search(sentence))]
        # "If someone is on leave…" imagines a change; it does not report one.
        hypothetical = sentence.startswith(("if ", "what if ", "suppose ", "in case "))
        # "I have NOT moved", "my shift hasn't changed": a change denied.
        denied = [m.span() for m in _DENIED_CHANGE.finditer(sentence)]
        # "I'll bring my new shift paperwork Monday": a change still to come.
        promised = bool(_PROMISE.search(sentence))
        # A question asked in anger ("who the hell approved this?") is rhetorical.
        rhetorical = asked and any(f.bucket == "escalation" and f.weight >= 2 for f, _ in found)
        for feature, match in found:
            if rhetorical and feature.bucket == "question":
                continue
            if feature.bucket == "update" and (
                hypothetical or any(a < match.end() and match.start() < b for a, b in denied)
            ):
                continue
            damped = (asked and feature.bucket in ("update", "acknowledgment")) or (
                (promised or only_promised) and feature.bucket == "update"
            )
            weight = feature.weight * (0.5 if damped else 1.0)
            scores[feature.bucket] += weight
            hits[feature.bucket].append(match.group(0).strip())
            if feature.bucket == "update" and not asked:
                stated_update += weight
            if feature.bucket == "escalation" and feature.weight >= DECISIVE:
                decisive = True
    if stated_update >= STRONG_EVIDENCE:
        # A change stated plainly is the news; a question beside it ("can you
        # confirm?") is a follow-up the re-audit's result answers.
        scores["question"] *= 0.25
    if max(stated_update, scores["question"]) >= STRONG_EVIDENCE:
        # "Got your message" frames what follows; the news or the question is the reply.
        scores["acknowledgment"] *= 0.5
    if max(scores.values()) < STRONG_EVIDENCE:
        # Capitals are weak evidence: they tip a reply that says little else
        # ("I AM NOT MOVING"), never a clear update typed in caps.
        scores["escalation"] += _shouting(body)
    if decisive:
        others = max(score for bucket, score in scores.items() if bucket != "escalation")
        scores["escalation"] = max(scores["escalation"], others + STRONG_EVIDENCE)
    ranked = sorted(BUCKETS, key=lambda b: scores[b], reverse=True)
    top, runner_up = ranked[0], ranked[1]
    confidence = _confidence(scores[top], scores[runner_up])
    if scores[top] == 0:
        return _labelled("acknowledgment", 0.0, "No phrase the rules recognise.")
    reasoning = f"Rules: {top} ({scores[top]:.1f}, from {', '.join(hits[top][:4])!s})" + (
        f" over {runner_up} ({scores[runner_up]:.1f})." if scores[runner_up] else "."
    )
    if _ATTACHMENT.search(text):
        # What the reply rests on is in a file the rules cannot open.
        return _labelled(top, min(confidence, 0.5), f"{reasoning} It refers to an attachment.")
    if unread := [passage for passage in unread_passages(body) if not _words_read(passage.text)]:
        # The rules read only part of it: what the rest says is for a person.
        names = ", ".join(sorted({passage.language for passage in unread}))
        why = f"Part of it is in a language the rules do not read ({names})."
        return _labelled(top, 0.0, f"{reasoning} {why}")
    if {top, runner_up} == SAME_ACTION and not scores["escalation"]:
        # Torn between update and acknowledgment only: both re-audit at once,
        # so there is nothing for a person to choose between.
        return _labelled(top, confidence, f"{reasoning} Either reading re-audits.", settled=True)
    return _labelled(top, confidence, reasoning)


def _words_read(line: str) -> bool:
    """Whether the rules recognise any words in a line ("Na-update ko na po yung address")."""
    text = normalise(line)
    return any(
        (match := feature.pattern.search(text)) and re.search(r"[a-z]", match.group(0))
        for feature in FEATURES
    )


_ATTACHMENT = re.compile(_ATTACHMENT_PATTERN)
_URL = re.compile(r"\b(?:https?://|www\.)\S+")
_DENIED_CHANGE = re.compile(
    r"\b(?:not|never|haven't|hasn't|hadn't|didn't|havent|hasnt|hadnt|didnt)\s+(?:\w+\s+)?"
    r"(?:moved|relocated|changed|switched|transferred)\b"
)
_ASKED_TO_FIX = re.compile(
    r"\b(?:asked|told|emailed|called) (?:my |the |our )?(?:\w+ )?to (?:put|enter|submit|fix|update|"
    r"change|correct)\b"
)
_FIX_DONE = re.compile(
    r"(?<!never )(?<!not )(?<!n't )(?<!be )(?<!will )(?<!to )\b(?:updated|fixed|corrected|"
    r"submitted|entered|processed|went through|changed (?:it|my \w+) (?:in|on))\b"
)
_PROMISE = re.compile(
    r"\b(?:i'll|i will|we'll|we will|will|going to|gonna)\s+(?:\w+\s+){0,3}?(?:update|fix|change|"
    r"correct|bring|submit|send|file|turn in|put (?:it )?in|log in|take care|enter)\b"
)
# Phone spellings read as the words they stand for, so one set of patterns serves both.
_SHORTHAND = {
    "u": "you",
    "ur": "your",
    "yr": "your",
    "pls": "please",
    "plz": "please",
    "tnx": "thanks",
    "thnx": "thanks",
    "thanx": "thanks",
    "thks": "thanks",
    "tks": "thanks",
    "chek": "check",
    "msg": "message",
    "im": "i'm",
    "ive": "i've",
    "dont": "don't",
    "didnt": "didn't",
    "doesnt": "doesn't",
    "cant": "can't",
    "isnt": "isn't",
    "wasnt": "wasn't",
    "hasnt": "hasn't",
    "havent": "haven't",
    "hadnt": "hadn't",
    "arent": "aren't",
    "werent": "weren't",
    "np": "no problem",
    "upd8": "update",
    "updt": "update",
    "addr": "address",
    "tmrw": "tomorrow",
    "tmr": "tomorrow",
    "wkdy": "workday",
    "sched": "schedule",
}
_SHORTHAND_RE = re.compile(r"\b(?:" + "|".join(_SHORTHAND) + r")\b")


def _expand_shorthand(text: str) -> str:
    return _SHORTHAND_RE.sub(lambda match: _SHORTHAND[match[0]], text)


def _sentences(text: str) -> list[str]:
    """Sentences, with "X but Y?" split so only the part asked is a question."""
    parts: list[str] = []
    for sentence in _SENTENCE_END.findall(text):
        parts.extend(_CLAUSE_BREAK.split(sentence))
    return [part.strip() for part in parts if part.strip()]


_SENTENCE_END = re.compile(r"[^.!?\n]+[.!?]*")
_CLAUSE_BREAK = re.compile(r",?\s+(?:but|pero)\s+")


def _shouting(body: str) -> float:
    """Evidence of anger from capitals: most letters of a long enough reply upper case."""
    letters = [c for c in body if c.isalpha()]
    if len(letters) < 12:
        return 0.0
    return 2.0 if sum(c.isupper() for c in letters) / len(letters) > 0.6 else 0.0


def _confidence(top: float, runner_up: float) -> float:
    """Margin between the top two scores, scaled down while the evidence is thin."""
    if top <= 0:
        return 0.0
    margin = (top - runner_up) / top
    strength = min(1.0, top / STRONG_EVIDENCE)
    return round((0.5 + 0.5 * margin) * (0.5 + 0.5 * strength), 3)


def _labelled(
    bucket: Bucket, confidence: float, reasoning: str, *, settled: bool = False
) -> ReplyClassification:
    unsure = confidence < settings.REPLY_CONFIDENCE_THRESHOLD and not settled
    hitl = bucket == "escalation" or unsure
    return ReplyClassification(bucket=bucket, confidence=confidence, reasoning=reasoning, hitl=hitl)


# --- Model -------------------------------------------------------------------------------


def _ask_model(
    client: llm.OpenAIClient,
    body: str,
    subject: str,
    rules: ReplyClassification,
    parent: RunTrace | None = None,
) -> ReplyClassification:
    prompt = llm.load_prompt(*PROMPT)
    user = llm.data_block("reply", {"subject": subject, "body": body})
    if parent is not None:
        # Recorded as a child run: model, tokens, cost and latency on the case.
        call = traced_structured(client, AGENT, prompt, user, ModelReplyLabel, parent)
        if call is None:
            error = parent.children[-1].error
            return rules.model_copy(
                update={"reasoning": f"{rules.reasoning} Model unavailable ({error}); rules used."}
            )
    else:
        try:
            call = client.structured(AGENT, prompt.version, prompt.text, user, ModelReplyLabel)
        except llm.ModelError as error:
            return rules.model_copy(
                update={"reasoning": f"{rules.reasoning} Model unavailable ({error}); rules used."}
            )
    label = call.parsed
    return _labelled(
        label.bucket,
        label.confidence,
        f"Model ({call.model}, {prompt.version}): {label.bucket}. {rules.reasoning}",
    )
