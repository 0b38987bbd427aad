"""What the store's tests share: a full report (:func:`make_report`), checks made new,
done or as the code before the four outcomes stored them, and the counts and dumps a
test reads back."""

from __future__ import annotations

import datetime as dt
import json
from typing import TypedDict, Unpack

from storage import CheckRow, CheckStore, text_hash
from storage.postgres import StoreDatabase
from storage.rows import CheckStatus, RepeatKind, report_rows, serializable_report, to_iso
from storage.sql import first_row
from zofia_engine.post import Post
from zofia_engine.records.notes import note
from zofia_engine.records.stage1 import Keyword
from zofia_engine.report import (
    Analyses,
    ClaimResult,
    Confidence,
    Debate,
    DebateTurn,
    EvidenceItem,
    ExpertFinding,
    JudgeRuling,
    LinguistFinding,
    LLMCall,
    Quote,
    Report,
    Usage,
)

TABLES = {
    "_migrations",
    "api_keys",
    "shown_cards",
    "reviews",
    "attempts",
    "checks",
    "reports",
    "evidence",
    "claims",
    "analyses",
    "debate_turns",
    "llm_calls",
    "feedback",
    "chat_settings",
    "post_vectors",
    "section_marks",
    "deliveries",
    "early_reports",
    "webhook_calls",
    "seen_messages",
    "media_readings",
}
POST = "The mayor of Springfield said the river bridge will close for all of 2027."


def make_report(*, marker: str = "", summary: str = "The bridge closure is confirmed.") -> Report:
    """A report as a full check returns it: 2 documents, 3 claims, a 2-round debate."""
    calls = [
        LLMCall(role=role, step=step, backend="openai:gpt", prompt_tokens=300, completion_tokens=40)
        for role, step in [
            ("linguist", "style"),
            ("linguist", "emotion"),
            ("expert", "domain"),
            ("expert", "analysis"),
            ("claims", "extract"),
            ("debater", "pro-1"),
            ("debater", "con-1"),
            ("judge", "round-1"),
            ("debater", "pro-2"),
            ("debater", "con-2"),
        ]
    ] + [
        LLMCall(
            role="judge",
            step="round-2",
            backend="openai:gpt",
            ok=False,
            error="timeout",
            cached_tokens=128,
            latency_ms=30000.5,
            attempts=3,
        )
    ]
    return Report(
        verdict="true",
        confidence=Confidence(value=0.82, basis="logprobs"),
        summary=summary,
        keywords=[
            Keyword(text="Springfield", label="LOC", salience=0.9, mmr_score=0.9, lambda_k=1)
        ],
        evidence=[
            EvidenceItem(
                id="web-1",
                source="web",
                provider="brave",
                title="Bridge to close",
                url="https://news.example/bridge",
                text=f"City hall confirmed the closure. {marker}",
                published=dt.date(2026, 2, 27),
            ),
            EvidenceItem(
                id="wiki-1",
                source="wikipedia",
                provider="offline",
                title="Springfield",
                url="https://en.wikipedia.org/wiki/Springfield",
                text="Springfield is a city.",
            ),
        ],
        claims=[
            ClaimResult(
                id="c0",
                kind="core",
                text=f"The bridge closes in 2027. {marker}",
                label="supports",
                reason="City hall confirmed it.",
                quotes=[Quote(text="City hall confirmed the closure.", evidence_id="web-1")],
                dropped_quotes=1,
                context=["web-1"],
            ),
            ClaimResult(id="c1", kind="sub", text="The mayor said so.", label="supports"),
            ClaimResult(
                id="c2", kind="sub", text="For all of 2027.", label="not enough information"
            ),
        ],
        analyses=Analyses(
            linguist=[
                LinguistFinding(dimension="style", analysis=f"Neutral. {marker}", lean="real"),
                LinguistFinding(dimension="emotion", analysis="Calm.", lean="real"),
                LinguistFinding(dimension="source", status="failed", error="timeout"),
            ],
            expert=ExpertFinding(
                domain="civil engineering",
                expert_role="city planner",
                knowledge_concordance="Closures are announced a year ahead.",
                logical_integrity="Consistent.",
                lean="real",
            ),
        ),
        debate=Debate(
            turns=[
                DebateTurn(
                    round=1, side="pro", argument=f"web-1 confirms. {marker}", cites=["web-1"]
                ),
                DebateTurn(round=1, side="con", rebuttal="Weak.", argument="No date.", cites=[]),
                DebateTurn(round=2, side="pro", argument="The date is there.", cites=["web-1"]),
                DebateTurn(round=2, side="con", argument="Still unsure.", status="failed"),
            ],
            rulings=[
                JudgeRuling(round=1, decision="continue", reason="Need more."),
                JudgeRuling(round=2, decision="true", reason="The bridge closure is confirmed."),
            ],
            rounds=2,
            max_rounds=5,
            decided_in_round=2,
        ),
        usage=Usage.of(calls),
        timings={"retrieval": 1200.0, "debate": 5300.5},
        notes=[note("no open-web evidence")],
    )


class _CheckFields(TypedDict, total=False):
    """What a test may set on a new check (``Checks.create``'s keywords)."""

    platform: str
    chat: str
    requester: str
    status: CheckStatus
    repeat_of: str | None
    repeat_kind: RepeatKind | None
    forced: bool
    tokens: int | None
    in_group: bool


#: where new_check asks, as find_exact and in_flight take it
HERE = {"platform": "telegram", "chat": "chat-1"}


def new_check(store: CheckStore, text: str = POST, **fields: Unpack[_CheckFields]) -> CheckRow:
    fields.setdefault("platform", "telegram")
    fields.setdefault("chat", "chat-1")
    fields.setdefault("requester", "u-hash")
    return store.checks.create(
        **fields,
        post=Post(text=text, url="https://t.me/c/1", published=dt.date(2026, 2, 28), origin="ch"),
        text_hash=text_hash(text),
    )


def done_check(store: CheckStore, text: str = POST, **fields: Unpack[_CheckFields]) -> CheckRow:
    row = new_check(store, text, **fields)
    store.reports.save(row.id, make_report())
    return row


def legacy_done_check(store: CheckStore) -> CheckRow:
    """A done check as the code before the four outcomes stored it (schema m001-m005):
    real / fake verdicts and decisions, no phase column."""
    row = new_check(store)
    report, report_json = serializable_report(make_report())
    legacy = {"true": "real", "false": "fake"}
    old_json = json.loads(report_json)
    old_json["verdict"] = legacy[old_json["verdict"]]
    for ruling in old_json["debate"]["rulings"]:
        ruling["decision"] = legacy.get(ruling["decision"], ruling["decision"])
    for key in ("basis", "lean", "triage"):
        del old_json[key]
    now = to_iso(dt.datetime.now(dt.UTC))
    rows = report_rows(row.id, report, json.dumps(old_json), now)
    rows["reports"][0]["verdict"] = legacy[report.verdict]
    for turn in rows["debate_turns"]:
        del turn["phase"]
        turn["decision"] = legacy.get(turn["decision"], turn["decision"])
    for table, table_rows in rows.items():
        store.db.table(table).insert_all(table_rows)
    store.db.execute(
        "UPDATE checks SET status = 'done', finished_at = ? WHERE id = ?", [now, row.id]
    )
    return row


def count(db: StoreDatabase, table: str, check_id: str) -> int:
    return int(
        first_row(db.execute(f"SELECT count(*) FROM {table} WHERE check_id = ?", [check_id]))[0]
    )


def dump(db: StoreDatabase) -> str:
    """Every row of every table, as text."""
    names = db.table_names()
    return "\n".join(repr(row) for name in names for row in db.execute(f'SELECT * FROM "{name}"'))
