"""What a check shows in chats other than its own: the one rule of repeats across chats.

**Which check may answer a chat.** A check asked in a group or a channel (``in_group``:
a Telegram group or channel, a Discord server's channel) may answer every chat's
repeat of its post, and any chat may join its run while it is under way. Any other
check (asked in a private chat, through the API by a key, or on the terminal) answers
only its own chat: the same platform and keyed chat, which is the same private chat or
the same key. :data:`MAY_ANSWER` says it in SQL, where the exact repeats and the runs
in flight are found, and :func:`may_answer` of a row, where the near repeats are found
(the vector index); ``tests/storage/test_other_chats.py`` holds the two to each other.
:func:`run_key` keys the runs of the queue alike: a check that answers its own chat
only is keyed within that chat.

**What it shows there.** Another chat sees of a check (:func:`as_seen_elsewhere`) its
verdict, with its confidence, the way the panel leaned and the kind triage found, a
moderator's review in force, its summary, its evidence from the web, Wikipedia and
published fact-checks, and the sources' words its claims were read against (each by the
claim's label, without the claim). Never the post's text, nor what restates it or was
read from its images: its claims' words and the reasons given for them, its keywords,
analyses, debate, claim tree and searches' queries, the
findings on its images (the words read from them, what they show), the scam signs
triage saw in it, the panel's sentence on what would settle it, the notes, and the
model calls (whose prompts hold the post); one note of its own says why they are not
there (:func:`seen_elsewhere`). The chat that asked sees it whole.
"""

from __future__ import annotations

from zofia_engine.records.notes import Note
from zofia_engine.report import ClaimResult, Lean, Report, Triage

from .rows import CheckRow

__all__ = [
    "ELSEWHERE",
    "MAY_ANSWER",
    "as_seen_elsewhere",
    "may_answer",
    "run_key",
    "seen_elsewhere",
    "shown_to",
]

#: whether check ``c`` may answer a request of ``:chat`` on ``:platform`` (a repeat
#: answered from it, a run of it joined)
MAY_ANSWER = "(c.in_group = 1 OR (c.platform = :platform AND c.chat = :chat))"
#: the name on the note that marks a report as another chat is shown it (renderers read
#: it, :func:`seen_elsewhere`, to say why its debate or claims are not there)
ELSEWHERE = "asked_elsewhere"
_ELSEWHERE_NOTE = Note(
    kind="other",
    text="first asked in another chat: shown here are its verdict, summary and sources",
    names=[ELSEWHERE],
)


def may_answer(row: CheckRow, platform: str, chat: str) -> bool:
    """Whether ``row`` may answer a request of ``chat`` (keyed) on ``platform``: a
    group's or a channel's check answers every chat, any other its own only."""
    return row.in_group or (row.platform, row.chat) == (platform, chat)


def run_key(row: CheckRow) -> str:
    """The key of the run ``row`` starts, which the requests it may answer may join: its
    text's key, and for a check that answers its own chat only, that chat's too."""
    return row.text_hash if row.in_group else f"{row.text_hash}:{row.platform}:{row.chat}"


def shown_to(row: CheckRow, original: CheckRow, report: Report) -> Report:
    """``original``'s ``report`` as ``row``'s chat is shown it: whole in the chat that
    asked, else :func:`as_seen_elsewhere`."""
    if (row.platform, row.chat) == (original.platform, original.chat):
        return report
    return as_seen_elsewhere(report)


def as_seen_elsewhere(report: Report) -> Report:
    """``report`` as a chat other than the one that asked is shown it (see the module's
    docstring): the verdict, the summary and the evidence, nothing of the post. Built
    field by field, so that a field the report gains later stays with the chat that
    asked until it is named here."""
    evidence = [item for item in report.evidence if item.source != "image"]
    # A claim is the post's words: only what the sources say of it stays, by its label.
    claims = [
        ClaimResult(id=c.id, kind=c.kind, text="", label=c.label, quotes=c.quotes)
        for c in report.claims
        if c.quotes
    ]
    shown = {item.id for item in evidence} | {claim.id for claim in claims}
    lean = triage = None
    if report.lean is not None:
        was = report.lean
        lean = Lean(
            outcome=was.outcome, probability=was.probability, against_evidence=was.against_evidence
        )
    if report.triage is not None:
        triage = Triage(kind=report.triage.kind, probability=report.triage.probability)
    return Report(
        verdict=report.verdict,
        confidence=report.confidence,
        summary=report.summary,
        evidence=evidence,
        claims=claims,
        basis=[ground for ground in report.basis if ground in shown],
        lean=lean,
        triage=triage,
        search_mode=report.search_mode,
        depth=report.depth,
        review=report.review,
        notes=[_ELSEWHERE_NOTE],
    )


def seen_elsewhere(report: Report) -> bool:
    """Whether ``report`` is another chat's view of it (:func:`as_seen_elsewhere`)."""
    return any(ELSEWHERE in note.names for note in report.notes)
