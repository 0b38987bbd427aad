"""What did not go to plan in a check, as typed notes: a kind, its numbers and names, and
the words for a log or the full report.

Renderers read a note's kind and numbers, never its words: rewording a sentence here
changes no card. Each kind is made by one function below.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

__all__ = [
    "Note",
    "NoteKind",
    "debate_turns_failed",
    "left_out",
    "models_cut",
    "no_entities",
    "no_logprobs",
    "no_verdict",
    "note",
    "post_cut",
    "search_cut",
    "source_failed",
    "triage_failed",
    "triage_unsure",
    "web_off",
]

NoteKind = Literal[
    "post_cut",  # numbers: whole, checked — the post was longer than a check takes
    "models_cut",  # numbers: chars — the models read only the post's first chars
    "search_cut",  # numbers: chars — entity extraction read only the first chars
    "web_off",  # no web search backend is configured
    "source_failed",  # names: [source] — a source of Stage 1 failed
    "left_out",  # names: [part] — a part of the method was left out (ablation)
    "no_entities",  # the post named no entity: the web query fell back to its words
    "cleaned",  # the post's text was cleaned (markup, control characters …)
    "triage_failed",
    "triage_unsure",  # names: [kind] — triage leaned a kind without enough confidence
    "step_failed",  # a step of the panel failed (an analysis, a claim, debate turns)
    "no_logprobs",  # the judge's own word ended the debate
    "no_verdict",  # the judge failed: no verdict
    "other",
]


class Note(BaseModel):
    """One thing that did not go to plan: its ``kind`` (what renderers read), its
    ``numbers`` and ``names``, and ``text``, the same in words."""

    model_config = ConfigDict(extra="forbid")

    kind: NoteKind
    text: str
    numbers: dict[str, int] = {}
    names: list[str] = []


def note(text: str, kind: NoteKind = "other") -> Note:
    """A note that is only words (a kind renderers do not read)."""
    return Note(kind=kind, text=text)


def post_cut(whole: int, checked: int) -> Note:
    return Note(
        kind="post_cut",
        text=f"the post had {whole:,} characters; only its first {checked:,} were checked",
        numbers={"whole": whole, "checked": checked},
    )


def models_cut(chars: int) -> Note:
    return Note(
        kind="models_cut",
        text=f"the models saw the post's first {chars} characters",
        numbers={"chars": chars},
    )


def search_cut(chars: int) -> Note:
    return Note(
        kind="search_cut",
        text=f"post cut to its first {chars} characters for entity extraction",
        numbers={"chars": chars},
    )


def web_off() -> Note:
    return Note(
        kind="web_off", text="no web search backend configured: no open-web evidence (offline)"
    )


def source_failed(source: str, detail: str) -> Note:
    return Note(kind="source_failed", text=f"{source} failed: {detail}", names=[source])


def left_out(part: str) -> Note:
    return Note(kind="left_out", text=f"left out for this check: {part}", names=[part])


def no_entities(wikipedia: str) -> Note:
    return Note(
        kind="no_entities",
        text=f"no named entities: web search falls back to the post's first words and {wikipedia}",
    )


def triage_failed(error: str) -> Note:
    return Note(kind="triage_failed", text=f"triage failed ({error}); the post was checked in full")


def triage_unsure(kind: str) -> Note:
    return Note(
        kind="triage_unsure",
        text=f"triage leaned {kind} without enough confidence; checked in full",
        names=[kind],
    )


def debate_turns_failed(count: int, error: str) -> Note:
    return Note(
        kind="step_failed",
        text=f"{count} debate turn(s) failed: {error}",
        numbers={"turns": count},
    )


def no_logprobs() -> Note:
    return Note(
        kind="no_logprobs", text="no token probabilities: the judge's own word ended the debate"
    )


def no_verdict(error: str) -> Note:
    return Note(kind="no_verdict", text=f"no verdict: the judge failed ({error})")
