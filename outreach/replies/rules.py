"""Named escalation rules: what a rider says that only a person may answer.

The learned reader (``reader.py``) reads ordinary replies. These rules cover
the explicit classes where a miss is costly and the words are plain: the law,
a union, a discrimination or harassment claim, a threat, a request for a
person, a demand about personal data, a safety concern at home, an
accommodation, and a request to stop the emails. A hit can only push a reply
*towards* a person, never away; nothing here decides an ordinary reply.

Every rule carries a name, a reason, and examples it must match and must not
match; ``outreach/tests/test_rules.py`` checks every example. Patterns run on
the normalised text (lower case, accents folded:
``outreach.replies.text_readings.normalise``).
"""

import re
from dataclasses import dataclass, field


@dataclass(frozen=True)
class EscalationRule:
    name: str
    reason: str
    patterns: tuple[str, ...]
    must_match: tuple[str, ...]
    must_not_match: tuple[str, ...]
    compiled: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "compiled", re.compile("|".join(self.patterns)))

    def search(self, text: str) -> re.Match[str] | None:
        return self.compiled.search(text)


RULES: tuple[EscalationRule, ...] = (
    EscalationRule(
        name="legal_action",
        reason="a lawyer, a court or an outside agency: the employer's answer is a person's",
        patterns=(
            r"\b(?:(?<!is a )lawyer(?! friend)|(?<!is an )attorney(?! friend)|legal action|"
            r"lawsuit|suing|legal counsel|solicitor|eeoc|labor board|department of labor|"
            r"small claims|see you in court|take (?:you|this|it|the \w+) to court)\b",
            r"\b(?:i will|i'll|i am going to|i'm going to|going to|gonna) sue\b",
            r"\b(?:retained|hired|consulted) (?:counsel|an attorney|a lawyer)\b",
            r"\b(?:abogado|demanda(?:r|re|remos)?)\b",
        ),
        must_match=(
            "My lawyer will be in touch about this.",
            "I have retained counsel and expect all contact to go through them.",
            "I am going to sue if my seat is cancelled.",
            "Voy a hablar con mi abogado.",
        ),
        must_not_match=(
            "My wife is a lawyer so she helped me fill in the address form.",
            "Sue in Parking said the address was fixed.",
            "I moved to Tracy in March.",
        ),
    ),
    EscalationRule(
        name="union",
        reason="a union or a grievance: collective agreements are for a person to weigh",
        patterns=(
            # Not a steward's advice to fix the record ("she said just update it").
            r"\b(?:union (?:rep\w*|steward|delegate)|shop steward|(?:my|our) union"
            r"(?! (?:contract|agreement|rules?|handbook)))\b"
            r"(?![^.!?\n]{0,40}\b(?:said|says|told me|advised)\b[^.!?\n]{0,25}"
            r"\b(?:update|fix|change|correct)\b)",
            r"\b(?:file|filing|filed|lodge|lodged) (?:a |an )?(?:formal )?grievance\b",
            r"\bsindicato\b",
        ),
        must_match=(
            "I'm forwarding this to my union rep.",
            "We will be filing a grievance over this audit.",
            "Lo voy a consultar con el sindicato.",
        ),
        must_not_match=(
            "Our union contract says shifts are bid in October, and I bid days.",
            "Talked w/ my union steward, she said just update it in the portal.",
            "Thanks, I will update my address today.",
        ),
    ),
    EscalationRule(
        name="discrimination_or_harassment",
        reason="a claim of discrimination, harassment or retaliation: never answered by a machine",
        patterns=(
            r"\b(?:discriminat\w*(?! between)|harass\w*(?![- ](?:prevention|training|policy))|"
            r"racis[tm]|sexis[tm]|retaliat\w*|singled out|singling (?:me|us) out)\b",
            r"\bbecause (?:of )?(?:my|our) (?:race|age|accent|religion|gender|ethnicity|"
            r"nationality|disability|pregnancy|name|skin|origin)\b",
            r"\b(?:discrimina(?:cion|ndo|ron|do|da)|acoso|represalia\w*)\b",
        ),
        must_match=(
            "This feels like discrimination against the night crew.",
            "I think I'm being singled out because of my accent.",
            "Since I reported my supervisor this is retaliation.",
            "Esto es discriminacion.",
        ),
        must_not_match=(
            "The form doesn't discriminate between home and mailing address.",
            "I finished the harassment-prevention training last week, and my shift is days now.",
        ),
    ),
    EscalationRule(
        name="threat",
        reason="menace towards staff or co-riders: a person handles it, now",
        patterns=(
            r"\b(?:you(?:'ll| will) regret|or else\b|watch (?:your|their) back|"
            r"i know where (?:you|he|she|they) (?:live|work|park)|"
            r"(?:gonna|going to|will) find out who (?:did|reported|snitched|ratted)|"
            r"better think twice|see what happens)\b",
        ),
        must_match=(
            "Cancel my seat and you'll regret it.",
            "I'm going to find out who reported me.",
            "Leave my seat alone or else.",
        ),
        must_not_match=(
            "I'll find out from HR when the change goes through.",
            "Let's see if the update shows tomorrow.",
        ),
    ),
    EscalationRule(
        name="asks_for_a_person",
        reason="the rider asks for a human: an automatic answer would ignore them",
        patterns=(
            r"\b(?:speak|talk) (?:to|with) (?:a|an|the|your|someone's) (?:manager|supervisor|"
            r"boss|human|real person|person in charge|director|coordinator)\b",
            r"\b(?:actual|real) (?:human|person)\b|\bhuman being\b|\bnot a (?:bot|robot)\b",
            r"\b(?:can|could|would|will|please have) (?:someone|somebody|a person|a coordinator|"
            r"a manager) (?:please )?(?:call|phone|ring|contact) me\b",
            r"\bhablar con (?:un|el|una|la|su|mi) (?:gerente|supervisor\w*|jefe|persona)\b"
            r"|\bhablar con (?:alguien|una persona|un humano)\b",
        ),
        must_match=(
            "I want to speak to a manager about this.",
            "Is there a real person reading these?",
            "Could someone please call me this afternoon?",
            "Quiero hablar con una persona.",
        ),
        must_not_match=(
            "My manager already fixed my shift in Workday.",
            "Who do I talk to about the van's pickup time?",
        ),
    ),
    EscalationRule(
        name="personal_data",
        reason="a demand about the data kept on the rider (access, erasure, a breach)",
        patterns=(
            r"\b(?:public records act|foia|freedom of information|records request|gdpr|ccpa|"
            r"data breach|privacy breach|invasion of (?:my )?privacy)\b",
            r"\b(?:want|need|demand|expect) (?:it|this|my (?:data|information|info|address|"
            r"records?|details)) (?:\w+ )?(?:deleted|erased|removed|purged)\b",
            r"\bwhat (?:data |information )?(?:are you|you are|you're) (?:storing|keeping|"
            r"collecting|tracking)\b",
        ),
        must_match=(
            "I demand my address data deleted from your system.",
            "This is an invasion of privacy.",
            "I am filing a public records act request for everything you hold on me.",
        ),
        must_not_match=(
            "I updated my address data in the portal yesterday.",
            "Please keep my records as they are; the shift is right.",
        ),
    ),
    EscalationRule(
        name="safety_at_home",
        reason="violence or fear at home: a person handles it and keeps it off the record",
        patterns=(
            r"\b(?:domestic violence|restraining order|protective order|stalk(?:ed|ing|er)|"
            r"(?:don'?t|do not) feel safe|orden de (?:proteccion|alejamiento)|"
            r"violencia domestica)\b",
            r"\bshelter\b(?! in place)",
        ),
        must_match=(
            "I moved out because of domestic violence and I can't give the new address.",
            "I'm staying at a shelter for now.",
            "Tengo una orden de proteccion.",
        ),
        must_not_match=(
            "We had a shelter in place drill, then I went back to days.",
            "I feel safe saying my shift is nights now.",
        ),
    ),
    EscalationRule(
        name="accommodation",
        reason="an accommodation (disability, medical, religious) is a legal matter for a person",
        patterns=(
            r"\b(?:medical|ada|disability|religious|reasonable|workplace) accommodations?\b",
            r"\bada (?:office|coordinator|paperwork|request)\b",
        ),
        must_match=(
            "My hours are part of an ADA accommodation approved last year.",
            "I have a religious accommodation for Fridays.",
        ),
        must_not_match=(
            "The van has room for my bike, thanks.",
            "My accommodations on the trip were fine; I'm back on days.",
        ),
    ),
    EscalationRule(
        name="stop_emails",
        reason="a request to stop the emails: a person decides how the audit reaches them",
        patterns=(
            r"\bunsubscribe\b|\bremove me from (?:this|your|the) (?:list|emails?|mailing)\b",
            r"\b(?:take|get) me off (?:these|this|your|the) (?:emails?|list|mailing)\b",
            r"\bstop (?:emailing|contacting|sending me)\b",
        ),
        must_match=(
            "Unsubscribe",
            "Please stop emailing me about this.",
            "Take me off these emails.",
        ),
        must_not_match=(
            "I stopped riding the van in October.",
            "I got your email and will update my address.",
        ),
    ),
)


def first_hit(text: str) -> tuple[EscalationRule, str] | None:
    """The first rule the normalised ``text`` matches, with the words that matched."""
    for rule in RULES:
        if match := rule.search(text):
            return rule, match.group(0).strip()
    return None
