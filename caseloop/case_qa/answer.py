"""The answer: declined, answered by the rules or a model, checked against its citations, traced.

``answer_question`` is the entry point. An answer that cites a record the case
does not have, or states an ID, date, time or number its cited records do not
contain, is replaced by the evidence itself (``fallback``).
"""

from typing import Literal

from django.conf import settings
from pydantic import BaseModel, ConfigDict, Field

from agents import llm
from agents.faithfulness import check_faithfulness
from agents.model_errors import ModelError
from agents.prompting import data_block, load_prompt
from agents.tracing import RunTrace, save_trace_tree, timed
from caseloop.case_qa.questions import SUGGESTIONS, decline_reason, detect_intent
from caseloop.case_qa.records import CaseRecords, Link, Record, build_records, no_link
from caseloop.case_qa.rules import rules_answer

AGENT = "case_qa"
PROMPT = ("case_qa", "v1")

Status = Literal["answered", "fallback", "declined"]


class Citation(BaseModel):
    model_config = ConfigDict(frozen=True)
    key: str
    label: str
    href: str = ""


class CaseAnswer(BaseModel):
    status: Status
    intent: str = ""
    sentences: list[str] = Field(default_factory=list)
    citations: list[Citation] = Field(default_factory=list)
    backend: str = "rules"
    note: str = ""


class ModelCaseAnswer(BaseModel):
    """All the model may answer: in scope or not, the answer, and the record keys it cites."""

    model_config = ConfigDict(extra="forbid")
    in_scope: bool
    answer: str
    citations: list[str]


def unsupported_claims(answer: str, cited: list[Record]) -> list[str]:
    """The IDs, dates, times and numbers in ``answer`` that no cited record contains."""
    result = check_faithfulness(answer, [record.text for record in cited])
    return [claim.text for claim in result.unsupported]


def fallback(records: CaseRecords, found: dict[str, Record], why: str, backend: str) -> CaseAnswer:
    """The evidence itself, when an answer could not be checked against it."""
    sentences = [
        "I could not check an answer against this case's records, so here is the evidence instead."
    ]
    cites = ["case"]
    for verification in records.latest.values():
        sentences.append(
            f"{verification.check_type} ({verification.verdict}): {verification.reasoning}"
        )
        cites.append(f"verification:{verification.pk}")
    return CaseAnswer(
        status="fallback",
        sentences=sentences,
        citations=_citations(found, cites),
        backend=backend,
        note=why,
    )


def _citations(found: dict[str, Record], keys: list[str]) -> list[Citation]:
    seen: list[str] = []
    for key in keys:
        if key in found and key not in seen:
            seen.append(key)
    return [Citation(key=k, label=found[k].label, href=found[k].href) for k in seen]


def checked(
    records: CaseRecords,
    found: dict[str, Record],
    sentences: list[str],
    keys: list[str],
    *,
    intent: str,
    backend: str,
) -> CaseAnswer:
    unknown = [key for key in keys if key not in found]
    cited = [found[key] for key in keys if key in found]
    problems = unknown or unsupported_claims(" ".join(sentences), cited)
    if not cited or problems:
        why = f"unsupported by the cited records: {', '.join(problems[:5]) or 'no citations'}"
        return fallback(records, found, why, backend)
    return CaseAnswer(
        status="answered",
        intent=intent,
        sentences=sentences,
        citations=_citations(found, keys),
        backend=backend,
    )


def answer_question(records: CaseRecords, question: str, *, link: Link = no_link) -> CaseAnswer:
    """Answer ``question`` about the case from its records, and trace the answer.

    ``link`` gives each cited record's address where the caller shows it (the
    case page passes its own); by default citations carry no link.
    """
    case = records.case
    backend = llm.get_backend()
    trace = RunTrace(
        agent=AGENT,
        backend=settings.LLM_BACKEND,
        input={"case_id": case.case_id, "question": question},
    )
    with timed(trace):
        answer = _answer(records, question, backend, trace, link)
    trace.output = answer.model_dump(mode="json")
    save_trace_tree(trace, vanpool_pk=case.vanpool_id, case=case)
    return answer


def _answer(
    records: CaseRecords, question: str, backend: object, trace: RunTrace, link: Link
) -> CaseAnswer:
    why_not = decline_reason(records, question)
    if why_not:
        return CaseAnswer(status="declined", sentences=[why_not], backend="rules")
    found = build_records(records, link)
    intent = detect_intent(question)
    if isinstance(backend, llm.OpenAIClient):
        answer = _ask_model(backend, records, found, question, intent, trace)
        if answer is not None:
            return answer
    if not intent:
        return CaseAnswer(
            status="declined",
            sentences=[
                "I answer questions about this case from its own records. Try: "
                + " / ".join(SUGGESTIONS)
            ],
            backend="rules",
        )
    draft = rules_answer(records, found, intent, question)
    return checked(records, found, draft.sentences, draft.cites, intent=intent, backend="rules")


def _ask_model(
    client: llm.OpenAIClient,
    records: CaseRecords,
    found: dict[str, Record],
    question: str,
    intent: str,
    trace: RunTrace,
) -> CaseAnswer | None:
    """The model's answer, checked; None when the client failed (rules answer instead)."""
    prompt = load_prompt(*PROMPT)
    payload = [{"key": r.key, "label": r.label, "text": r.text} for r in found.values()]
    user = "\n\n".join(
        [data_block("case_records", payload), data_block("question", {"text": question})]
    )
    try:
        call = client.structured(AGENT, prompt.version, prompt.text, user, ModelCaseAnswer)
    except ModelError as error:
        for name, value in error.trace_fields().items():
            setattr(trace, name, value)
        trace.model_calls += 1
        return None
    for name, value in call.trace_fields().items():
        setattr(trace, name, value)
    trace.model_calls += 1
    parsed = call.parsed
    if not parsed.in_scope:
        return CaseAnswer(
            status="declined",
            sentences=["That question is outside this case's records, so I cannot answer it."],
            backend="openai",
        )
    sentences = [line.strip() for line in parsed.answer.splitlines() if line.strip()]
    return checked(
        records,
        found,
        sentences,
        list(parsed.citations),
        intent=intent or "model",
        backend="openai",
    )
