"""Typed rows, timestamps, and a report laid out as the rows of its tables."""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass
from typing import Any, Literal, get_args

import numpy as np
import numpy.typing as npt
from pydantic_core import PydanticSerializationError

from zofia_engine.post import Post
from zofia_engine.report import ClaimResult, EvidenceItem, JudgeRuling, LLMCall, Report

from .keys import storable_text

__all__ = [
    "CheckRow",
    "CheckStatus",
    "RepeatKind",
    "from_iso",
    "report_rows",
    "serializable_report",
    "to_iso",
    "vector_blob",
]

CheckStatus = Literal["queued", "running", "done", "failed", "cancelled"]
RepeatKind = Literal["exact", "near"]
CHECK_STATUSES: tuple[str, ...] = get_args(CheckStatus)
REPEAT_KINDS: tuple[str, ...] = get_args(RepeatKind)


def to_iso(moment: dt.datetime) -> str:
    """A timezone-aware time as fixed-width ISO 8601 UTC, so that text order is time order.

    Raises:
        ValueError: ``moment`` is naive.
    """
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise ValueError(f"naive datetime {moment!r}; pass a timezone-aware time")
    return moment.astimezone(dt.UTC).isoformat(timespec="microseconds")


def from_iso(text: str | None) -> dt.datetime | None:
    """Parse what :func:`to_iso` wrote; ``None`` stays ``None``."""
    return None if text is None else dt.datetime.fromisoformat(text)


@dataclass(frozen=True, slots=True)
class CheckRow:
    """One row of ``checks``: a request to check a post, whatever came of it.

    ``post_text`` is ``None`` once the check is purged; ``requester`` is the
    HMAC of the platform user id, never the id itself; ``in_group``: it was asked in a
    group or a channel (:mod:`storage.other_chats`: what it may answer elsewhere).
    """

    id: str
    platform: str
    chat: str
    requester: str
    status: CheckStatus
    post_text: str | None
    text_hash: str
    url: str
    origin: str
    published: dt.date | None
    created_at: dt.datetime
    started_at: dt.datetime | None
    finished_at: dt.datetime | None
    error: str
    repeat_of: str | None
    repeat_kind: RepeatKind | None
    forced: bool
    language: str = ""
    in_group: bool = False

    @property
    def post(self) -> Post | None:
        """The post as it was submitted, or ``None`` once purged."""
        if self.post_text is None:
            return None
        return Post(
            text=self.post_text,
            url=self.url,
            published=self.published,
            origin=self.origin,
            language=self.language,
        )

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> CheckRow:
        """Build from a ``checks`` row as a dict (column name → value)."""
        published = row["published"]
        return cls(
            id=row["id"],
            platform=row["platform"],
            chat=row["chat"],
            requester=row["requester"],
            status=row["status"],
            post_text=row["post_text"],
            text_hash=row["text_hash"],
            url=row["url"],
            origin=row["origin"],
            published=None if published is None else dt.date.fromisoformat(published),
            created_at=dt.datetime.fromisoformat(row["created_at"]),
            started_at=from_iso(row["started_at"]),
            finished_at=from_iso(row["finished_at"]),
            error=row["error"],
            repeat_of=row["repeat_of"],
            repeat_kind=row["repeat_kind"],
            forced=bool(row["forced"]),
            language=row.get("language") or "",
            in_group=bool(row.get("in_group")),
        )


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _joined(*parts: str) -> str:
    return "\n\n".join(part for part in parts if part)


def report_rows(
    check_id: str, report: Report, report_json: str, created_at: str
) -> dict[str, list[dict[str, Any]]]:
    """The rows ``report`` adds to each table, keyed by table name.

    Args:
        check_id: the check the report belongs to.
        report: the report, free of lone surrogates.
        report_json: its JSON, kept whole in ``reports.report_json``.
        created_at: the ISO time to stamp the ``reports`` row with.

    Returns:
        Table name → rows, in insertion order; their text is :func:`storable_text`'s.
    """
    rows = {
        "reports": [_report_row(report, report_json, created_at)],
        "evidence": [_evidence_row(item) for item in report.evidence],
        "claims": [_claim_row(claim) for claim in report.claims],
        "analyses": _analysis_rows(report),
        "debate_turns": _debate_rows(report),
        "llm_calls": [_call_row(seq, call) for seq, call in enumerate(report.usage.log, 1)],
    }
    return {
        table: [_scrub({"check_id": check_id, **row}) for row in found]
        for table, found in rows.items()
    }


def _report_row(report: Report, report_json: str, created_at: str) -> dict[str, Any]:
    usage = report.usage
    return {
        "verdict": report.verdict,
        "confidence": report.confidence.value,
        "summary": report.summary,
        "report_json": report_json,
        "n_evidence": len(report.evidence),
        "n_claims": len(report.claims),
        "rounds": report.debate.rounds,
        "llm_calls": usage.calls,
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.completion_tokens,
        "created_at": created_at,
    }


def _evidence_row(item: EvidenceItem) -> dict[str, Any]:
    return {
        "evidence_id": item.id,
        "source": item.source,
        "provider": item.provider,
        "title": item.title,
        "url": item.url,
        "text": item.text,
        "published": None if item.published is None else item.published.isoformat(),
    }


def _claim_row(claim: ClaimResult) -> dict[str, Any]:
    return {
        "claim_id": claim.id,
        "kind": claim.kind,
        "text": claim.text,
        "label": claim.label,
        "reason": claim.reason,
        "quotes_json": _json([quote.model_dump() for quote in claim.quotes]),
        "dropped_quotes": claim.dropped_quotes,
    }


def _analysis_rows(report: Report) -> list[dict[str, Any]]:
    rows = [
        {
            "agent": "linguist",
            "dimension": finding.dimension,
            "lean": finding.lean,
            "text": finding.analysis,
            "status": finding.status,
        }
        for finding in report.analyses.linguist
    ]
    expert = report.analyses.expert
    if expert is not None:
        rows.append(
            {
                "agent": "expert",
                "dimension": "analysis",
                "lean": expert.lean,
                "text": _joined(expert.knowledge_concordance, expert.logical_integrity),
                "status": expert.status,
            }
        )
    return rows


def _call_row(seq: int, call: LLMCall) -> dict[str, Any]:
    return {
        "seq": seq,
        **call.model_dump(include={"role", "step", "backend", "ok", "error"}),
        "prompt_tokens": call.prompt_tokens,
        "completion_tokens": call.completion_tokens,
        "cached_tokens": call.cached_tokens,
        "latency_ms": call.latency_ms,
        "attempts": call.attempts,
    }


def _debate_rows(report: Report) -> list[dict[str, Any]]:
    """Debate turns and rulings in the order they happened, numbered in that order."""
    rows = []
    for seq, entry in enumerate(report.debate.timeline(), start=1):
        if isinstance(entry, JudgeRuling):
            row = {
                "side": "judge",
                "phase": None,
                "text": entry.reason,
                "decision": entry.decision,
                "cites_json": "[]",
            }
        else:
            row = {
                "side": entry.side,
                "phase": entry.phase,
                "text": _joined(entry.rebuttal, entry.argument),
                "decision": None,
                "cites_json": _json(entry.cites),
            }
        rows.append({"seq": seq, "round": entry.round, **row, "status": entry.status})
    return rows


def vector_blob(vector: npt.NDArray[np.float32]) -> tuple[int, bytes]:
    """``(dim, little-endian float32 bytes)`` of a post vector, after checking it."""
    if not isinstance(vector, np.ndarray) or vector.dtype.kind != "f" or vector.itemsize != 4:
        kind = getattr(vector, "dtype", type(vector).__name__)
        raise TypeError(f"the post vector must be a float32 array, not {kind}")
    if vector.ndim != 1 or vector.size == 0:
        raise ValueError(f"the post vector must be 1-D and non-empty, not of shape {vector.shape}")
    if not np.isfinite(vector).all():
        raise ValueError("the post vector has NaN or infinite values")
    return int(vector.size), vector.astype("<f4", copy=False).tobytes()


def _scrub(value: Any) -> Any:
    if isinstance(value, str):
        return storable_text(value)
    if isinstance(value, dict):
        return {_scrub(key): _scrub(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_scrub(item) for item in value]
    return value


def serializable_report(report: Report) -> tuple[Report, str]:
    """The report and its JSON; lone surrogates, which JSON cannot carry, become U+FFFD."""
    try:
        return report, report.model_dump_json()
    except PydanticSerializationError:
        clean = Report.model_validate(_scrub(report.model_dump()))
        return clean, clean.model_dump_json()
