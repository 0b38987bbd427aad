"""The Debate, Evidence and Claims sections of a report, as plain text blocks that
each platform renders in its own markup."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from zofia_engine.report import JudgeRuling, Report

__all__ = ["SECTION_KINDS", "Block", "Section", "section"]

SECTION_KINDS = ("debate", "evidence", "claims")


@dataclass(frozen=True)
class Block:
    """One part of a section: a short heading, a body that may be long, a link."""

    heading: str
    body: str
    url: str = ""


@dataclass(frozen=True)
class Section:
    kind: str
    title: str
    blocks: tuple[Block, ...]


_SIDES = {
    "pro": "For (true)",
    "con": "Against (false or misleading)",
    "politician": "Politician",
    "scientist": "Scientist",
}


def _debate(report: Report) -> tuple[Block, ...]:
    blocks = []
    for entry in report.debate.timeline():
        if isinstance(entry, JudgeRuling):
            decision = entry.decision or "no ruling"
            forced = " (forced at the round limit)" if entry.forced else ""
            body = entry.reason if entry.status == "ok" else f"(failed: {entry.error})"
            blocks.append(Block(f"Round {entry.round} · Judge: {decision}{forced}", body))
            continue
        body = "\n\n".join(part for part in (entry.rebuttal, entry.argument) if part)
        if entry.status != "ok":
            body = f"(this turn failed: {entry.error or entry.status})"
        elif entry.cites:
            body += "\n\nCites: " + ", ".join(entry.cites)
        phase = f", {entry.phase}" if entry.phase else ""
        blocks.append(Block(f"Round {entry.round} · {_SIDES[entry.side]}{phase}", body))
    return tuple(blocks)


def _evidence(report: Report) -> tuple[Block, ...]:
    blocks = []
    for item in report.evidence:
        date = f", {item.published.isoformat()}" if item.published else ""
        heading = f"[{item.id}] {item.title} ({item.provider}{date})"
        blocks.append(Block(heading, item.text, item.url))
    return tuple(blocks)


def _claims(report: Report) -> tuple[Block, ...]:
    blocks = []
    for claim in report.claims:
        kind = "Core claim" if claim.kind == "core" else "Sub-claim"
        label = claim.label or claim.status
        parts = [claim.text]
        if claim.reason or claim.error:
            parts.append(claim.reason or claim.error)
        parts.extend(f"“{quote.text}” ({quote.evidence_id})" for quote in claim.quotes)
        blocks.append(Block(f"{kind} · {label}", "\n\n".join(parts)))
    return tuple(blocks)


_EMPTY = {
    "debate": "The debate did not run for this check.",
    "evidence": "No evidence was retrieved for this post.",
    "claims": "No claims were extracted from this post.",
}
_TITLES = {"debate": "Debate", "evidence": "Evidence", "claims": "Claims"}
_BUILDERS: dict[str, Callable[[Report], tuple[Block, ...]]] = {
    "debate": _debate,
    "evidence": _evidence,
    "claims": _claims,
}


def section(kind: str, report: Report) -> Section:
    """The Debate, Evidence or Claims section of a report.

    Raises:
        ValueError: ``kind`` is not one of :data:`SECTION_KINDS`.
    """
    if kind not in _BUILDERS:
        raise ValueError(f"unknown section {kind!r}; choose one of {', '.join(SECTION_KINDS)}")
    blocks = _BUILDERS[kind](report) or (Block("Nothing here", _EMPTY[kind]),)
    return Section(kind, _TITLES[kind], blocks)
