"""Follow-up questions on a finished check: one call, answered from the report alone.

A reader of a verdict card asks "why?", "which source?" or "what is true then?". The
judge's route is asked once, with the report as its material (the verdict, the judge's
ruling, the claims as read, the evidence by id, the debate) and the question as data
between markers, never as instructions: marker look-alikes and chat-template control
strings in it are broken (:func:`untrusted`), as the post's are.

The answer must rest on the report's evidence: the ids it cites (in its ``cites`` or in
its text) that name no document of the report are dropped, each sentence must be
supported by the documents it cites (:mod:`.follow_up_grounding`: a sentence resting
only on an unknown id, or that no cited document supports, goes), every address, handle
and phone number that is not the evidence's goes first, whatever the sentence around it
says (:func:`~zofia_engine.contacts.without_contacts`), and an answer left citing
nothing, or one the model says the report does not give, becomes the fixed sentence
:data:`~zofia_engine.ports.NO_ANSWER`. The answer is cut to :data:`MAX_WORDS` words, and
a sentence quoting a phrase found in neither the evidence nor the claims is dropped.
"""

from __future__ import annotations

import asyncio
import re

from pydantic import BaseModel, ConfigDict

from ..contacts import without_contacts
from ..llm.base import ChatMessage
from ..llm.session import CheckSession
from ..ports import FollowUpAnswer, TextEncoder
from ..prompting import render
from ..report import EvidenceItem, Report
from ..text import clip, ends_sentence, whole_sentences
from .context import MAX_FIELD_CHARS, SOURCE_LABELS, evidence_note, untrusted
from .follow_up_grounding import grounded_answer
from .quotes import Haystack, unfounded

__all__ = [
    "MAX_QUESTION_CHARS",
    "MAX_WORDS",
    "ROLE",
    "STEP",
    "FollowUpReply",
    "answer_follow_up",
    "capped",
    "cited_ids",
    "follow_up_messages",
]

#: the route a follow-up goes to: the judge's, which rules on the same material
ROLE = "judge"
STEP = "follow_up"
MAX_WORDS = 80
MAX_TOKENS = 320
MAX_CITES = 6
MAX_QUESTION_CHARS = 500
MAX_CLAIMS = 12
MAX_TURNS = 8
MAX_TURN_CHARS = 500
# An evidence id as a model writes it: "web-3", "wiki-1", "fc-2", "img-1-label".
_ID = r"(?:web|wiki|fc)-\d+|img-\d+(?:-[a-z]+)*"
_BARE_ID = re.compile(rf"\b(?:{_ID})\b")
# A bracketed group of ids: "[web-1]", "[web-1, wiki-2]", "(web-3; fc-1)".
_ID_GROUP = re.compile(rf"\s*[\[(]\s*((?:{_ID})(?:\s*[,;]\s*(?:{_ID}))*)\s*[\])]")


class FollowUpReply(BaseModel):
    """Whether the report answers the question, the answer, and the evidence it rests on."""

    model_config = ConfigDict(extra="forbid")

    answered: bool
    answer: str
    cites: list[str]


def cited_ids(text: str) -> list[str]:
    """The evidence ids mentioned in ``text``, in order, each once."""
    return list(dict.fromkeys(_BARE_ID.findall(text)))


def _without_unknown(text: str, known: set[str]) -> str:
    """``text`` with every mention of an id that names no document of the report taken
    out (a bracket left empty goes with it), its spacing tidied."""

    def group(found: re.Match[str]) -> str:
        ids = [i for i in re.split(r"\s*[,;]\s*", found[1]) if i in known]
        return f" [{', '.join(ids)}]" if ids else ""

    text = _ID_GROUP.sub(group, text)
    text = _BARE_ID.sub(lambda m: m[0] if m[0] in known else "", text)
    text = re.sub(r"\s+([.,;:!?])", r"\1", text)
    return " ".join(text.split())


def capped(text: str, max_words: int = MAX_WORDS) -> str:
    """``text`` cut to ``max_words`` words: at the last sentence end within them when
    there is one past their first half (:func:`~..text.whole_sentences`), else at a
    word, marked with "…". How a follow-up's answer is cut to :data:`MAX_WORDS`."""
    words = text.split()
    if len(words) <= max_words:
        return text
    head = " ".join(words[:max_words])
    whole = whole_sentences(head)
    if ends_sentence(whole) and len(whole.split()) > max_words // 2:
        return whole
    return head.rstrip(" ,;:") + "…"


def _documents(evidence: list[EvidenceItem], max_chars: int) -> list[dict[str, str]]:
    return [
        {
            "id": e.id,
            "source_label": SOURCE_LABELS[e.source],
            "title": untrusted(clip(e.title, MAX_FIELD_CHARS)),
            "note": untrusted(evidence_note(e)),
            "text": untrusted(clip(e.text, max_chars)),
        }
        for e in evidence
    ]


def _claims(report: Report) -> list[dict[str, object]]:
    return [
        {
            "id": c.id,
            "text": untrusted(clip(c.text, MAX_FIELD_CHARS)),
            "label": c.label or "",
            "reason": untrusted(clip(c.reason, MAX_FIELD_CHARS)),
            "quotes": [
                {"evidence_id": q.evidence_id, "text": untrusted(clip(q.text, MAX_FIELD_CHARS))}
                for q in c.quotes
            ],
        }
        for c in report.claims[:MAX_CLAIMS]
        if c.status == "ok"
    ]


def _turns(report: Report) -> list[dict[str, str]]:
    turns = [t for t in report.debate.turns if t.status == "ok" and not t.repeated]
    return [
        {
            "side": t.side,
            "cites": ", ".join(t.cites),
            "text": untrusted(clip(f"{t.rebuttal} {t.argument}", MAX_TURN_CHARS)),
        }
        for t in turns[-MAX_TURNS:]
    ]


def _ruling(report: Report) -> str:
    """The judge's last words, and for an unproven post which way the panel leaned."""
    rulings = [r for r in report.debate.rulings if r.status == "ok" and r.reason]
    parts = [rulings[-1].reason] if rulings else []
    if report.lean is not None:
        parts.append(f"The panel leaned {report.lean.outcome}.")
        if report.lean.settle:
            parts.append(f"What would settle it: {report.lean.settle}")
    return untrusted(clip(" ".join(parts), 2 * MAX_FIELD_CHARS))


def follow_up_messages(
    report: Report, question: str, *, language: str = "", max_evidence_chars: int = 600
) -> list[ChatMessage]:
    """The conversation of one follow-up: the panel's system message, then the report
    and the question (defused, between its markers) with the task."""
    material = render(
        "follow_up",
        verdict=report.verdict,
        summary=untrusted(report.summary),
        ruling=_ruling(report),
        claims=_claims(report),
        documents=_documents(report.evidence, max_evidence_chars),
        turns=_turns(report),
        question=untrusted(question),
        max_words=MAX_WORDS,
    )
    return [
        ChatMessage("system", render("system", language=language)),
        ChatMessage("user", material),
    ]


def _what_it_holds(report: Report) -> Haystack:
    """Where a phrase the answer quotes must occur: the evidence, its titles, the
    claims, their quotes and the summary."""
    return Haystack(
        [
            *(e.text for e in report.evidence),
            *(e.title for e in report.evidence),
            *(c.text for c in report.claims),
            *(q.text for c in report.claims for q in c.quotes),
            report.summary,
        ]
    )


async def answer_follow_up(
    session: CheckSession,
    report: Report,
    question: str,
    *,
    language: str = "",
    max_evidence_chars: int = 600,
    encoder: TextEncoder | None = None,
) -> FollowUpAnswer:
    """Answer ``question`` about ``report`` in one call of the judge's route.

    A report with no evidence, or an empty question, is not asked about: nothing in it
    could be cited. ``language``: the reply language (``""``: English). With
    ``encoder``, each sentence of the answer is held to the documents it cites
    (:func:`~.follow_up_grounding.grounded_answer`). The answer carries the tokens the
    call cost, for the day's budget.

    Raises:
        StepFailed: the call failed, or its reply could not be read even after a repair.
        LLMConfigError: the server refused the request as configured.
    """
    known = [e.id for e in report.evidence]
    question = clip(question, MAX_QUESTION_CHARS)
    if not known or not question:
        return FollowUpAnswer.unanswered()
    messages = follow_up_messages(
        report, question, language=language, max_evidence_chars=max_evidence_chars
    )
    answer = await session.ask(
        ROLE,
        STEP,
        messages,
        FollowUpReply,
        max_tokens=MAX_TOKENS,
        enums={"cites": known},
        max_items={"cites": MAX_CITES},
    )
    reply = answer.value
    if not reply.answered:
        return FollowUpAnswer.unanswered(tokens=session.tokens_used)
    ids = set(known)
    said = without_contacts(reply.answer, report.evidence)
    text, _ = unfounded(_without_unknown(said, ids), _what_it_holds(report))
    cites = [i for i in dict.fromkeys([*reply.cites, *cited_ids(reply.answer)]) if i in ids]
    if encoder is not None:
        text = await asyncio.to_thread(grounded_answer, text, cites, report.evidence, encoder)
    text = capped(text.strip())
    cites = [i for i in dict.fromkeys([*reply.cites, *cited_ids(text)]) if i in ids]
    spent = session.tokens_used
    if not text or not cites:
        return FollowUpAnswer.unanswered(tokens=spent)
    return FollowUpAnswer(text, tuple(cites), tokens=spent)
