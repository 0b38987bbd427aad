"""The tipline's conventions (issue parts 6 and 7): the card's "What the sources say"
line, word for word from a cited sentence; the "checks left today" line; one privacy
text for every front-end; and the read-only count of checks left."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.factories import full_report

from bots.app.settings import Settings
from bots.render.card import report_card, verdict_card
from bots.render.card_notes import checks_left_line, sources_line
from bots.render.privacy import privacy_paragraphs, privacy_text, retention_days_of
from bots.service.limits import RequestLimits
from bots.service.records import Outcome
from bots.service.refusals import RateLimitedError
from bots.service.settings import ServiceSettings
from storage import RequestScope
from storage.opening import open_store
from storage.store import CheckStore
from zofia_engine.report import ClaimResult, Quote

OPEN, CLOSE = "What the sources say: \u201c", "\u201d"


def _quoted(line: str) -> str:
    assert line.startswith(OPEN) and line.endswith(CLOSE)
    return line[len(OPEN) : -len(CLOSE)]


@pytest.mark.parametrize("verdict", ["false", "misleading"])
def test_a_settled_false_or_misleading_card_quotes_a_cited_sentence(verdict: str) -> None:
    report = full_report(verdict)
    line = sources_line(report)
    cited = {q.text for c in report.claims if c.id in report.basis for q in c.quotes}
    assert _quoted(line) in cited  # word for word, from a claim the verdict rests on
    assert _quoted(line) == "record no vote on bicycles"  # the core claim's first
    assert report_card("c", report).notes[0] == line


@pytest.mark.parametrize("verdict", ["true", "unproven", "no_claim"])
def test_no_sources_line_for_true_or_unproven(verdict: str) -> None:
    report = full_report(verdict)
    assert sources_line(report) == ""
    notes = report_card("c", report).notes
    assert not any(note.startswith("What the sources say") for note in notes)


def test_only_refuted_claims_in_the_basis_are_quoted() -> None:
    report = full_report("false")
    supported = ClaimResult(
        id="claim-9",
        kind="sub",
        text="x",
        label="supports",
        quotes=[Quote(text="supported words", evidence_id="web-1")],
    )
    outside = report.claims[1].model_copy(update={"id": "claim-8"})
    only = report.model_copy(update={"claims": [supported, outside], "basis": ["claim-9"]})
    assert sources_line(only) == ""  # supported, and refuted but not in the basis
    spread = "  no vote\n on   bicycles "
    spaced = report.claims[0].model_copy(update={"quotes": [Quote(text=spread, evidence_id="w")]})
    line = sources_line(report.model_copy(update={"claims": [spaced]}))
    assert _quoted(line).split() == spread.split()  # the same words, on one line
    long = report.claims[0].model_copy(update={"quotes": [Quote(text="w " * 200, evidence_id="w")]})
    assert sources_line(report.model_copy(update={"claims": [long]})) == ""  # never cut


def test_checks_left_is_said_below_five_only() -> None:
    assert checks_left_line(None) == checks_left_line(5) == checks_left_line(50) == ""
    assert checks_left_line(4) == "You have 4 checks left today."
    assert checks_left_line(1) == "You have 1 check left today."
    assert checks_left_line(0).startswith("You have no checks left today")
    outcome = Outcome(check_id="c", report=full_report("false"))
    notes = verdict_card(outcome, checks_left=2).notes
    assert notes[0].startswith(OPEN) and notes[1] == "You have 2 checks left today."
    assert "left today" not in " ".join(verdict_card(outcome, checks_left=7).notes)
    assert "left today" not in " ".join(verdict_card(outcome).notes)


def test_the_privacy_text_says_what_for_how_long_and_how_to_delete() -> None:
    text = privacy_text(30)
    assert len(text) < 2000  # one Discord message
    for said in ("What is stored", "keyed hashes", "after 30 days", "How to delete", "operator"):
        assert said in text
    assert "AI" in text
    # What another chat, or a key, may learn of a check (storage.other_chats).
    assert "never the post's text or what was read from its images" in text
    assert "A check asked in a private chat answers only that chat." in text
    assert retention_days_of(dt.timedelta(days=30)) == 30 and retention_days_of(None) is None
    assert "until its operator deletes them" in " ".join(privacy_paragraphs(None))
    assert Settings().storage.retention_days == 30  # the default the docs name


@pytest.fixture
def store(tmp_path: Path) -> Iterator[CheckStore]:
    settings = Settings.model_validate(
        {"storage": {"path": str(tmp_path / "z.db"), "secret": "s3cret-for-tests-only"}}
    )
    opened, _ = open_store(settings.storage)
    yield opened
    opened.close()


def test_checks_left_counts_the_last_day_and_writes_nothing(store: CheckStore) -> None:
    limits = RequestLimits(store, ServiceSettings(user_daily=3, user_per_minute=100), 1000)
    now = dt.datetime.now(dt.UTC)
    who = "requester-hash-77c1"

    def admit() -> None:
        limits.admit(requester=who, platform="telegram", chat="c", private=False, now=now)

    assert limits.left_today(who, now) == 3
    for _ in range(2):
        admit()
    before = store.attempts.count(RequestScope(now - dt.timedelta(days=1)))
    assert limits.left_today(who, now) == 1 and limits.left_today("someone-else", now) == 3
    assert limits.left_today(who, now + dt.timedelta(days=2)) == 3  # older than a day
    assert store.attempts.count(RequestScope(now - dt.timedelta(days=1))) == before  # read only
    admit()
    assert limits.left_today(who, now) == 0
    with pytest.raises(RateLimitedError, match="3 checks a day for you"):
        admit()
    assert limits.left_today(who, now) == 0  # never below zero
