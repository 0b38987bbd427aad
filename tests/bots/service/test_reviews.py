"""Moderators' reviews of verdicts: the audit trail in the store (SQLite and PostgreSQL),
repeats answered with a changed verdict, ``zofia review``, and how the card, ``zofia
show`` and the report page say it beside the machine's verdict."""

from __future__ import annotations

import datetime as dt
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from click.testing import CliRunner

from tests.factories import full_report, stored_check
from tests.peers.fakes.fake_checker import (
    FakeChecker,
    HashingEncoder,
    fake_service,
    review_as,
    submit,
)
from tests.peers.fixtures.service_steps import review
from tests.peers.fixtures.store_fixtures import T0, Clock

from bots.app.runtime import build_service
from bots.app.settings import Settings
from bots.cli import main
from bots.cli.options import settings_from
from bots.cli.records import item_id
from bots.render.card import report_card, verdict_card
from bots.service.checks import CheckService
from bots.service.records import Failed, Outcome, Requester
from bots.service.refusals import ReviewRefused
from bots.service.reviews import PER_CHECK, PER_REVIEWER, REVIEW_WINDOW, apply_review
from bots.service.shown import card_state, report_of, shown_report
from bots.web.page import report_page
from storage.database import open_database
from storage.errors import CheckNotFoundError
from storage.keys import hash_user
from storage.opening import open_store
from storage.other_chats import as_seen_elsewhere
from storage.reviews import Review
from storage.sql import StoreDatabase
from storage.store import CheckStore
from zofia_engine.evaluation.dataset import load_items
from zofia_engine.post import Post

POST = (
    "The mayor of Springfield, Illinois has banned bicycles from every street in the city. "
    "Mayor Misty Buscher signed the law in March and cyclists now face a 500 dollar fine."
)


def _review(to: str, note: str = "", link: str = "") -> Review:
    return Review("r1", "c1", "hash", "cli", T0, "false", to, note, link)


# -- the store -------------------------------------------------------------------------------


def test_reviews_are_an_audit_trail_superseded_never_edited(db: StoreDatabase) -> None:
    clock = Clock()
    store = CheckStore(db, clock=clock)
    row = stored_check(store, full_report("false"))
    assert store.reviews.latest(row.id) is None

    first = review(
        store,
        row.id,
        reviewer="mod-hash",
        platform="telegram",
        verdict="false",
        note=" Seen \x00 it ",
    )
    assert (first.from_verdict, first.to_verdict) == ("false", "false")
    assert first.note == "Seen \ufffd it"
    clock.now += dt.timedelta(minutes=5)
    second = review(
        store,
        row.id,
        reviewer="other-hash",
        platform="discord",
        verdict="misleading",
        note="The photo is from 2019.",
        link="https://example.org/debunk",
    )
    assert second.from_verdict == "false" and second.to_verdict == "misleading"
    assert store.reviews.latest(row.id) == second
    # The first row is still there as written: superseded, not edited.
    assert store.reviews.history(row.id) == [second, first]

    with pytest.raises(Exception, match="never edited"), store.write():
        store.database.execute("UPDATE reviews SET to_verdict = 'true'")
    assert store.reviews.history(row.id) == [second, first]

    shown = report_of(store, row.id)
    assert shown is not None and shown[1].verdict == "misleading"
    assert store.reports.get(row.id).verdict == "false"  # type: ignore[union-attr]


def test_the_purge_blanks_a_reviews_note_and_link_with_its_checks_text(
    db: StoreDatabase,
) -> None:
    """Issue 36: review notes were never purged. The retention purge blanks a review's
    note and link with its check's text; the row stays (who as a hash, when, from which
    verdict to which), and the append-only trigger still refuses every other change."""
    clock = Clock()
    store = CheckStore(db, clock=clock)
    row = stored_check(store, full_report("false"))
    review(
        store,
        row.id,
        reviewer="mod-hash",
        platform="telegram",
        verdict="true",
        note="Ann's cousin posted it first.",
        link="https://example.org/ann",
    )
    kept = [(r.id, r.reviewer, r.created_at, r.to_verdict) for r in store.reviews.history(row.id)]
    clock.advance(days=1)
    assert store.purge(clock.now) == 1
    (purged,) = store.reviews.history(row.id)
    assert (purged.note, purged.link) == ("", "")
    assert [(purged.id, purged.reviewer, purged.created_at, purged.to_verdict)] == kept
    assert store.purge(clock.now) == 0  # nothing left to purge
    for change in ("to_verdict = 'false'", "note = 'x'", "note = '', reviewer = 'x'"):
        with pytest.raises(Exception, match="never edited"), store.write():
            store.database.execute(f"UPDATE reviews SET {change}")
    assert store.reviews.history(row.id) == [purged]


def _outcome(store: CheckStore, check_id: str) -> Outcome | Failed | None:
    """What the card of ``check_id`` shows now, if anything."""
    state = card_state(store, check_id)
    return None if state is None else state.outcome


def test_a_reviews_note_and_link_lose_every_format_character(db: StoreDatabase) -> None:
    """Zero-width spaces and joiners, a BOM, a soft hyphen and direction controls come out
    where the review enters: the link is judged, stored and shown without them."""
    store = CheckStore(db)
    row = stored_check(store, full_report("false"))
    hidden = "\u200b\u200c\u200d\u2060\ufeff\u00ad\u202e\u2066\u200e\U000e0041"
    done = review(
        store,
        row.id,
        reviewer="m",
        platform="cli",
        verdict="misleading",
        note=f"Old{hidden} photo\u200b from 2019.",
        link=f"https://exa{hidden}mple.org/\u200bdebunk",
    )
    assert (done.note, done.link) == ("Old photo from 2019.", "https://example.org/debunk")
    assert store.reviews.latest(row.id) == done
    # A link that is no address once its hidden characters are gone is refused as such.
    with pytest.raises(ReviewRefused, match="not_a_link"):
        review(store, row.id, reviewer="m", platform="cli", verdict="true", link="\u200bt.me/x")


def test_a_review_of_a_repeat_is_of_its_original_and_bad_input_is_refused(
    db: StoreDatabase,
) -> None:
    store = CheckStore(db, clock=Clock())
    original = stored_check(store, full_report("true"))
    repeat = store.checks.create(
        platform="telegram",
        chat="c",
        requester="r",
        post=Post(text=POST),
        text_hash="h",
        status="done",
        repeat_of=original.id,
        repeat_kind="exact",
    )
    done = review(store, repeat.id, reviewer="m", platform="cli", verdict="false")
    assert done.check_id == original.id and done.from_verdict == "true"
    with pytest.raises(ReviewRefused, match="unknown_verdict"):
        review(store, original.id, reviewer="m", platform="cli", verdict="scam")
    with pytest.raises(ReviewRefused, match="note_too_long"):
        review(store, original.id, reviewer="m", platform="cli", verdict="true", note="x" * 301)
    with pytest.raises(ReviewRefused, match="not_a_link"):
        review(store, original.id, reviewer="m", platform="cli", verdict="true", link="ftp://x")
    with pytest.raises(CheckNotFoundError):
        review(store, "no-such-check", reviewer="m", platform="cli", verdict="true")
    unfinished = stored_check(store, None, text="Another post", status="queued")
    with pytest.raises(ReviewRefused, match="no_verdict"):
        review(store, unfinished.id, reviewer="m", platform="cli", verdict="true")
    assert store.reviews.history(original.id) == [done]


def test_a_chats_moderator_may_not_call_a_scam_true_and_reviews_are_limited(
    db: StoreDatabase,
) -> None:
    """The service's rules, which the store no longer holds: each refusal is typed, with
    its limit and when it frees up; the operator at the terminal is neither limited nor
    held to the scam rule."""
    clock = Clock()
    store = CheckStore(db, clock=clock)
    scam = stored_check(store, full_report("scam"))
    with pytest.raises(ReviewRefused, match="scam_called_true"):
        review(store, scam.id, reviewer="m", platform="telegram", verdict="true", chat="g")
    assert review(store, scam.id, reviewer="op", platform="cli", verdict="true").to_verdict
    flipped = stored_check(store, full_report("false"), text="A flipped post")
    for verdict in ("true", "false"):
        review(store, flipped.id, reviewer="m", platform="telegram", verdict=verdict, chat="g")
    with pytest.raises(ReviewRefused) as per_check:
        review(store, flipped.id, reviewer="n", platform="telegram", verdict="true", chat="g")
    assert (per_check.value.kind, per_check.value.limit) == ("check_limit", PER_CHECK)
    assert per_check.value.retry_after_s == REVIEW_WINDOW.total_seconds()
    for n in range(PER_REVIEWER - PER_CHECK):
        other = stored_check(store, full_report("false"), text=f"Post number {n}")
        review(store, other.id, reviewer="m", platform="telegram", verdict="true", chat="g")
    clock.advance(minutes=1)
    last = stored_check(store, full_report("false"), text="One post too many")
    with pytest.raises(ReviewRefused) as per_reviewer:
        review(store, last.id, reviewer="m", platform="telegram", verdict="true", chat="g")
    assert (per_reviewer.value.kind, per_reviewer.value.limit) == ("reviewer_limit", PER_REVIEWER)
    assert per_reviewer.value.retry_after_s == (REVIEW_WINDOW - dt.timedelta(minutes=1)).seconds
    clock.advance(minutes=10)  # the window has passed: both may review again
    review(store, last.id, reviewer="m", platform="telegram", verdict="true", chat="g")
    review(store, flipped.id, reviewer="n", platform="telegram", verdict="true", chat="g")


async def test_a_chats_review_is_refused_when_chat_reviews_are_off(tmp_path: Path) -> None:
    settings = Settings.model_validate(
        {
            "storage": {"path": str(tmp_path / "zofia.db"), "secret": "s3cret-for-tests-only"},
            "service": {"chat_reviews": False, "reviewers": ["telegram:7"]},
        }
    )
    async with fake_service(settings, FakeChecker()) as service:
        outcome = await (await submit(service, POST, Requester("telegram", "1", "g"))).result()
        with pytest.raises(ReviewRefused, match="chat_reviews_off"):
            await review_as(service, outcome.check_id, ("telegram", "1"), "true", chat_id="g")
        named = await review_as(service, outcome.check_id, ("telegram", "7"), "true", chat_id="g")
        assert named.everywhere and named.to_verdict == "true"


def test_every_answer_from_the_store_has_the_review_in_force(db: StoreDatabase) -> None:
    """The report page, a repeat and a deliver job (the queued mode) read one store
    method: each shows the moderator's verdict once a review changed it."""
    store = CheckStore(db, clock=Clock())
    original = stored_check(store, full_report("false"))
    repeat = store.checks.create(
        platform="telegram",
        chat="c",
        requester="r",
        post=Post(text=POST),
        text_hash="h",
        status="done",
        repeat_of=original.id,
        repeat_kind="near",
    )
    before = _outcome(store, repeat.id)
    assert isinstance(before, Outcome) and before.report.verdict == "false"

    review(store, repeat.id, reviewer="m", platform="cli", verdict="misleading", note="Old.")
    reviewed = shown_report(store, original.id)
    assert reviewed is not None and reviewed.verdict == "misleading"
    # The repeat, asked in another chat, sees only what is shown across chats, reviewed.
    elsewhere = as_seen_elsewhere(reviewed)
    for check_id, seen in ((original.id, reviewed), (repeat.id, elsewhere)):
        found = _outcome(store, check_id)
        assert isinstance(found, Outcome) and found.report == seen
        shown = report_of(store, check_id)
        assert shown is not None and shown[1] == seen
    assert elsewhere.verdict == "misleading" and elsewhere.review == reviewed.review
    mark = reviewed.review
    assert mark is not None and (mark.machine, mark.verdict) == ("false", "misleading")
    assert store.reports.get(original.id).verdict == "false"  # type: ignore[union-attr]
    assert shown_report(store, stored_check(store, None, text="Queued.").id) is None


# -- the service -----------------------------------------------------------------------------


@pytest_asyncio.fixture
async def make_service(tmp_path: Path) -> AsyncIterator[Callable[..., CheckService]]:
    made: list[CheckService] = []

    def make(clock: Clock) -> CheckService:
        settings = Settings.model_validate(
            {
                "storage": {"path": str(tmp_path / "zofia.db"), "secret": "s3cret-for-tests-only"},
                "service": {"user_per_minute": 100, "chat_per_minute": 100},
            }
        )
        svc = build_service(settings, FakeChecker(), HashingEncoder(), clock=clock)
        made.append(svc)
        return svc

    yield make
    for svc in made:
        await svc.aclose()


async def test_a_repeat_after_a_change_is_answered_with_the_changed_verdict(
    make_service: Callable[..., CheckService],
) -> None:
    clock = Clock()
    service = make_service(clock)
    await service.start()
    alice, bob = Requester("telegram", "1001", "chat-1"), Requester("telegram", "1002", "chat-1")
    first = await (await submit(service, Post(text=POST), alice)).result()
    machine = first.report.verdict
    changed = "true" if machine != "true" else "false"

    clock.now += dt.timedelta(minutes=10)
    # A moderator of chat-1 reviews for chat-1: Bob's repeat there shows it.
    done = await review_as(
        service, first.check_id, ("telegram", "77"), changed, "Council minutes.", chat_id="chat-1"
    )
    assert done.reviewer == hash_user(service.secret, "telegram", "77") != "77"
    assert (done.from_verdict, done.to_verdict) == (machine, changed)

    again = await (await submit(service, Post(text=POST), bob)).result()
    assert again.repeat_kind == "exact" and again.report.verdict == changed
    mark = again.report.review
    assert mark is not None and mark.machine == machine and mark.note == "Council minutes."
    assert again.report.confidence.value is None  # the machine's was in its own verdict
    card = verdict_card(again)
    assert card.verdict == changed
    assert any(note.startswith("Changed by this chat's moderators from ") for note in card.notes)
    # The stored report is still the machine's.
    assert service.store.reports.get(first.check_id) == first.report

    # A confirmation (back to the machine's verdict) supersedes the change.
    await review_as(service, again.check_id, ("telegram", "78"), machine, "", chat_id="chat-1")
    third = await (await submit(service, Post(text=POST), alice)).result()
    assert third.report.verdict == machine
    assert "Reviewed by this chat's moderators." in verdict_card(third).notes


# -- what shows it ---------------------------------------------------------------------------


def test_the_card_says_who_changed_what_beside_the_machines_verdict() -> None:
    report = full_report("false")
    changed = apply_review(report, _review("misleading", "The photo is from 2019."))
    card = report_card("c1", changed)
    assert card.verdict == "misleading" and card.confidence == ""
    said = "Changed by the service's reviewers from False to Misleading: The photo is from 2019."
    assert said in card.notes
    linked = apply_review(report, _review("true", "", "https://example.org/x"))
    said = "Changed by the service's reviewers from False to True. (https://example.org/x)"
    assert said in report_card("c1", linked).notes
    confirmed = report_card("c1", apply_review(report, _review("false")))
    assert confirmed.verdict == "false" and confirmed.confidence == "87%"
    assert "Reviewed by the service's reviewers." in confirmed.notes
    unproven = apply_review(report, _review("unproven"))
    assert unproven.lean is not None and unproven.lean.outcome == "false"
    assert apply_review(report, None) is report
    outcome = Outcome("c1", report)
    assert not any("moderator" in note for note in verdict_card(outcome).notes)


def test_the_report_page_shows_the_review_not_as_a_failure(tmp_path: Path) -> None:
    db = open_database(tmp_path / "zofia.db")
    store = CheckStore(db, clock=Clock())
    row = stored_check(store, full_report("false"))
    review(store, row.id, reviewer="m", platform="cli", verdict="true", note="Retracted.")
    found = report_of(store, row.id)
    assert found is not None
    page = report_page(*found)
    assert page.verdict == "true"
    assert "Changed by the service's reviewers from False to True: Retracted." in page.notes
    assert not any("moderator" in line for line in page.failures)
    db.close()


def test_the_json_route_keeps_a_reviews_link_and_its_mark_whole(tmp_path: Path) -> None:
    """The public JSON takes backends' addresses out of notes, but a review in force is a
    field of its own: its link is the reviewer's, and it stays whole."""
    from bots.web.app import public_json
    from zofia_engine.report import Report

    db = open_database(tmp_path / "zofia.db")
    store = CheckStore(db, clock=Clock())
    row = stored_check(store, full_report("false"))
    link = "https://example.org/minutes"
    review(store, row.id, reviewer="m", platform="cli", verdict="true", link=link)
    found = report_of(store, row.id)
    assert found is not None
    served = public_json(found[1])
    assert served["review"]["link"] == link and served["review"]["machine"] == "false"
    assert Report.model_validate(served).review == found[1].review
    db.close()


def test_zofia_review_from_the_terminal(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ZOFIA_CONFIG", raising=False)
    monkeypatch.setenv("ZOFIA__STORAGE__PATH", str(tmp_path / "zofia.db"))
    db = open_database(tmp_path / "zofia.db")
    row = stored_check(CheckStore(db), full_report("false"))
    db.close()

    def run(*args: str) -> Any:
        return CliRunner().invoke(main, list(args))

    done = run("review", row.id, "--verdict", "misleading", "--note", "Old photo.")
    assert done.exit_code == 0, done.output
    assert f"check {row.id}: false changed to misleading" in done.output
    shown = run("show", row.id)
    assert shown.exit_code == 0, shown.output
    said = " ".join(shown.output.split())
    assert "Changed by the service's reviewers from False to Misleading: Old photo." in said
    assert "moderator review:" not in said  # the raw mark is not printed as a failure

    assert run("review", row.id, "--verdict", "scam").exit_code == 2
    missing = run("review", "no-such-id", "--verdict", "true")
    assert missing.exit_code == 1 and "no check with id no-such-id" in missing.output
    long = run("review", row.id, "--verdict", "true", "--note", "x" * 400)
    assert long.exit_code == 1 and "at most 300" in long.output

    db = open_database(tmp_path / "zofia.db")
    trail = CheckStore(db).reviews.history(row.id)
    db.close()
    assert [r.to_verdict for r in trail] == ["misleading"]
    assert trail[0].platform == "cli" and trail[0].reviewer != "operator"


def test_reviewed_checks_export_as_an_evaluation_dataset(db: StoreDatabase) -> None:
    store = CheckStore(db, clock=Clock())
    changed = stored_check(store, full_report("unproven"), text=f"{POST} (1)")
    stored_check(store, full_report("true"), text=f"{POST} (2)")  # never reviewed
    left_unproven = stored_check(store, full_report("false"), text=f"{POST} (3)")
    for verdict in ("true", "false"):  # the newest review is the one in force
        review(store, changed.id, reviewer="m", platform="cli", verdict=verdict, note="Minutes.")
    review(store, left_unproven.id, reviewer="m", platform="cli", verdict="unproven")
    # A chat's moderators' review applies in that chat alone: it is no label for everyone,
    # neither on a check of its own nor over the service's reviewers' review.
    by_a_chat = stored_check(store, full_report("false"), text=f"{POST} (4)")
    for check_id in (by_a_chat.id, changed.id):
        review(store, check_id, reviewer="x", platform="telegram", verdict="true", chat="a-group")
    rows = {row["id"]: row for row in store.reports.reviewed()}
    assert set(rows) == {changed.id, left_unproven.id}
    assert rows[changed.id]["label"] == "false" and rows[changed.id]["machine"] == "unproven"
    assert rows[changed.id]["text"] == f"{POST} (1)"
    assert all("note" not in row for row in rows.values())  # a note may name people
    with_chats = {row["id"]: row["label"] for row in store.reports.reviewed(chat_reviews=True)}
    assert with_chats == {changed.id: "true", left_unproven.id: "unproven", by_a_chat.id: "true"}


def test_zofia_export_reviewed_is_a_dataset_zofia_eval_reads(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ZOFIA_CONFIG", raising=False)
    monkeypatch.setenv("ZOFIA__STORAGE__PATH", str(tmp_path / "zofia.db"))
    db = open_database(tmp_path / "zofia.db")
    store = CheckStore(db)
    rows = [stored_check(store, full_report("false"), text=f"{POST} ({n})") for n in range(3)]
    review(store, rows[0].id, reviewer="m", platform="cli", verdict="misleading")
    review(store, rows[1].id, reviewer="m", platform="cli", verdict="false")
    review(store, rows[2].id, reviewer="m", platform="cli", verdict="unproven")
    extra = stored_check(store, full_report("false"), text=f"{POST} (a group's)")
    review(store, extra.id, reviewer="x", platform="telegram", verdict="true", chat="g")
    db.close()
    out = tmp_path / "reviewed.jsonl"
    done = CliRunner().invoke(main, ["export", "--jsonl", "--reviewed", "--output", str(out)])
    assert done.exit_code == 0, done.output
    assert "left out 1 reviewed checks" in done.output and "wrote 2 checks" in done.output
    assert "(a group's)" not in out.read_text()  # a chat's review is no label by default
    wider = tmp_path / "with-chats.jsonl"
    args = ["export", "--jsonl", "--reviewed", "--chat-reviews", "--output", str(wider)]
    done = CliRunner().invoke(main, args)
    assert done.exit_code == 0 and "wrote 3 checks" in done.output
    alone = CliRunner().invoke(main, ["export", "--jsonl", "--chat-reviews"])
    assert alone.exit_code == 2 and "--chat-reviews goes with --reviewed" in alone.output
    assert "full text of the posts" in done.output  # the warning, on stderr
    items, mapping = load_items(out)
    assert mapping.name == "verdicts"
    # An item's id is an HMAC of its check's, never the id: that is a report page's key.
    secret = open_store(settings_from(None).storage)[1]
    assert [(i.id, i.gold) for i in items] == [
        (item_id(secret, rows[0].id), "misleading"),
        (item_id(secret, rows[1].id), "false"),
    ]
    assert not any(row.id in out.read_text() for row in rows)
    assert mapping.predicted("misleading") == "misleading"
