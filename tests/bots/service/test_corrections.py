"""Corrections (issue 29 part 2): a verdict a moderator changed, or a recheck of the same
text came to, reaches every chat that was shown its card, which is edited there, and
told once.

Two tiers, each saying what it proves:

- The store (SQLite, and PostgreSQL in the slow tier): where each card was shown, which
  become due when a review or a finished recheck changes the verdict in force, how a
  chat's cards group, what is given up, and that the retention purge takes the records
  with their checks.
- Telegram end to end (the real python-telegram-bot client polling the fake Bot API,
  the real service on SQLite, :class:`~tests.peers.fakes.fake_checker.FakeChecker` answering): a
  review from ``zofia review`` (another process's way in) reaches the running bot
  through its poll of the store; a chat whose record was purged is told nothing; a
  recheck that comes to another verdict reaches every chat shown the older card.
  The moderators' buttons and Discord are in ``tests/bots/chat/test_reviews.py``; the queued
  mode (a ``correct`` job on PostgreSQL, after a review or a worker's recheck) is here.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import functools
import json
import logging
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TypedDict

import pytest
from click.testing import CliRunner
from sqlite_utils import Database

from tests.bots.service.queue.test_queue import settings_for, worker
from tests.factories import full_report, stored_check
from tests.peers.fakes.fake_checker import FakeChecker, fake_service, review_as, submit
from tests.peers.fakes.poll_rounds import PollRounds
from tests.peers.fixtures.service_steps import record_card, review, save_report, update_said
from tests.peers.fixtures.store_fixtures import T0, Clock
from tests.peers.fixtures.telegram_setup import SECRET, fake_bot, telegram_settings
from tests.peers.servers.discord_peer import Call, FakeDiscord, running_client
from tests.peers.servers.telegram_peer import FakeBotAPI, group, user

from bots.app.deliveries import delivering
from bots.app.settings import Settings
from bots.chat.corrections import sender
from bots.cli import main
from bots.discord.client import FactCheckBot
from bots.discord.corrections import send_correction
from bots.discord.deliveries import post_delivered
from bots.discord.render import escape
from bots.service import corrections
from bots.service.checks import CheckService
from bots.service.corrections import due_corrections, failed
from bots.service.queue.jobs import CORRECT_TASK
from bots.service.records import ChatCorrection, Requester
from bots.service.shown import report_of
from storage.database import open_database
from storage.errors import StorageError
from storage.keys import hash_chat
from storage.retention import purge_content
from storage.rows import to_iso
from storage.schema import migrate
from storage.shown_cards import ShownCard
from storage.sql import StoreDatabase
from storage.store import CheckStore
from zofia_engine.post import Post

pytest_plugins = ["tests.peers.fixtures.discord_fixtures"]

POST = (
    "The mayor of Springfield, Illinois has banned bicycles from every street in the city. "
    "Mayor Misty Buscher signed the law in March and cyclists now face a 500 dollar fine."
)
NOTE = "The council minutes show no such vote."
KEY = SECRET.encode()  # the store's secret: it seals the raw chat ids


class _Shown(TypedDict):
    """What a card showed, as ``record_card`` takes it."""

    verdict: str


def _repeat(store: CheckStore, original: str, chat: str = "c") -> str:
    row = store.checks.create(
        platform="telegram",
        chat=chat,
        requester="r",
        post=Post(text=POST),
        text_hash="h",
        status="done",
        repeat_of=original,
        repeat_kind="exact",
    )
    return row.id


# -- the store ----------------------------------------------------------------------------


def _card_in_chat_5(store: CheckStore, check_id: str, verdict: str) -> None:
    """The card of ``check_id`` shown as message 1 of Telegram chat 5, in the local mode."""
    record_card(
        store, check_id, platform="telegram", chat="5", message="1", verdict=verdict, queued=False
    )


def test_a_change_makes_due_the_cards_showing_another_verdict(db: StoreDatabase) -> None:
    store = CheckStore(db, clock=Clock(), secret=KEY)
    original = stored_check(store, full_report("unproven")).id
    repeat = _repeat(store, original)
    shown: _Shown = {"verdict": "unproven"}
    assert record_card(
        store, original, platform="telegram", chat="-100", message="7", **shown, queued=False
    )
    assert record_card(
        store, repeat, platform="telegram", chat="42", message="3", **shown, queued=False
    )
    assert record_card(
        store, repeat, platform="discord", chat="700", message="", **shown, queued=False
    )
    assert not record_card(
        store, "no-such-check", platform="telegram", chat="1", message="", **shown, queued=False
    )
    assert store.shown_cards.due_checks("telegram", limit=10) == []

    # A confirmation changes nothing shown; a change makes every card due, per platform.
    review(store, repeat, reviewer="m", platform="cli", verdict="unproven", queued=False)
    assert store.shown_cards.due_checks("telegram", limit=10) == []
    review(store, repeat, reviewer="m", platform="cli", verdict="false", note=NOTE, queued=False)
    assert store.shown_cards.due_checks("telegram", limit=10) == [original]
    assert store.shown_cards.due_checks("discord", limit=10) == [original]
    chats = due_corrections(store, original, "telegram")
    assert [(c.chat, c.shown, c.verdict, c.note) for c in chats] == [
        ("-100", "unproven", "false", NOTE),
        ("42", "unproven", "false", NOTE),
    ]
    assert [card.check_id for card, _ in chats[1].cards] == [repeat]

    # Told: nothing is due there any more, and the card shows the new verdict.
    store.shown_cards.corrected([card for card, _ in chats[0].cards], "false")
    assert [c.chat for c in due_corrections(store, original, "telegram")] == ["42"]
    # The change undone before the others were told: nothing left to tell them, but
    # the chat told of the change is due its reversal.
    review(store, original, reviewer="m", platform="cli", verdict="unproven", queued=False)
    assert due_corrections(store, original, "discord") == []
    assert store.shown_cards.due_checks("telegram", limit=10) == [original]
    (back,) = due_corrections(store, original, "telegram")
    assert (back.chat, back.shown, back.verdict) == ("-100", "false", "unproven")


def test_a_card_shown_after_a_change_it_missed_is_due_at_once(db: StoreDatabase) -> None:
    store = CheckStore(db, clock=Clock(), secret=KEY)
    original = stored_check(store, full_report("true")).id
    review(store, original, reviewer="m", platform="cli", verdict="misleading", queued=False)
    # A card made before the review, recorded after it (a deliver job on its way).
    record_card(
        store, original, platform="telegram", chat="5", message="9", verdict="true", queued=False
    )
    record_card(
        store,
        original,
        platform="telegram",
        chat="6",
        message="9",
        verdict="misleading",
        queued=False,
    )
    assert [c.chat for c in due_corrections(store, original, "telegram")] == ["5"]


def test_a_failing_chat_is_tried_again_later_and_given_up_only_after_a_day(
    db: StoreDatabase,
) -> None:
    """A 5-minute outage loses nothing: each failure waits a backoff (1, 2, 4 … minutes)
    before the next try, and a card is given up only a day after it fell due."""
    clock = Clock()
    store = CheckStore(db, clock=clock, secret=KEY)
    original = stored_check(store, full_report("false")).id
    record_card(
        store, original, platform="telegram", chat="5", message="9", verdict="false", queued=False
    )
    review(store, original, reviewer="m", platform="cli", verdict="true", queued=False)
    for minutes in (0, 1, 2, 4):  # the outage: every try fails, waiting 1, 2, 4, 8 min
        clock.advance(minutes=minutes)
        (chat,) = due_corrections(store, original, "telegram")
        assert failed(store, [card for card, _ in chat.cards]) is False
        assert due_corrections(store, original, "telegram") == []  # waiting for its next try
    clock.advance(minutes=8)  # 15 minutes in: the platform is back
    (chat,) = due_corrections(store, original, "telegram")
    store.shown_cards.corrected([card for card, _ in chat.cards], chat.verdict)
    assert store.shown_cards.due_checks("telegram", limit=10) == []
    # Another change, and a platform that stays down: given up a day after it fell due.
    review(store, original, reviewer="m2", platform="cli", verdict="false", queued=False)
    given_up = False
    for _ in range(40):
        cards = store.shown_cards.due(original, "telegram")
        if cards:
            given_up = failed(store, cards)
        if given_up:
            break
        clock.advance(hours=1)
    assert given_up and clock.now - dt.timedelta(days=1) >= T0
    # A permanent refusal (the chat is gone) gives up at once; the card's verdict is the
    # one it still shows.
    review(store, original, reviewer="m3", platform="cli", verdict="true", queued=False)
    store.shown_cards.gave_up(store.shown_cards.due(original, "telegram"))
    assert store.shown_cards.due_checks("telegram", limit=10) == []
    assert store.database.rows("SELECT verdict FROM shown_cards") == [("true",)]


def test_a_later_change_is_never_cleared_by_an_earlier_ones_sends(db: StoreDatabase) -> None:
    store = CheckStore(db, clock=Clock(), secret=KEY)
    original = stored_check(store, full_report("false")).id
    record_card(
        store, original, platform="telegram", chat="5", message="9", verdict="false", queued=False
    )
    review(store, original, reviewer="m", platform="cli", verdict="true", queued=False)
    (first,) = due_corrections(store, original, "telegram")  # being sent…
    review(store, original, reviewer="m2", platform="cli", verdict="misleading", queued=False)
    store.shown_cards.corrected(
        [card for card, _ in first.cards], first.verdict
    )  # …the first change lands
    (second,) = due_corrections(store, original, "telegram")  # the second is still due
    assert (second.shown, second.verdict) == ("true", "misleading")


def test_the_raw_ids_stored_before_are_sealed_by_the_migration(tmp_path: Path) -> None:
    """m016 seals the chat ids and tokens of cards shown, and the targets of deliveries,
    written before it, with the store's secret (refused without it); what was sealed
    opens to the same ids, and a card is still found by its chat."""
    path = tmp_path / "old.db"
    old = Database(path)
    migrate(old, upto="m015_purgeable_review_notes")
    check = stored_check(CheckStore(old), full_report("unproven"))
    card = {"id": "card1", "check_id": check.id, "original_id": check.id}
    card |= {"platform": "telegram", "chat": "7123456789", "message": "5", "token": "t0k"}
    card |= {"verdict": "unproven", "created_at": to_iso(T0)}
    old.table("shown_cards").insert(card)
    target = {"chat_id": 7123456789, "message_id": 6}
    old.table("deliveries").insert(
        {"check_id": check.id, "platform": "telegram", "target_json": json.dumps(target),
         "created_at": to_iso(T0)}
    )  # fmt: skip
    old.close()
    with pytest.raises(StorageError, match="m016"):
        open_database(path)
    db = open_database(path, secret=KEY)
    store = CheckStore(db, clock=Clock(), secret=KEY)
    assert "7123456789" not in repr(db.execute("SELECT * FROM shown_cards").fetchall())
    assert "7123456789" not in repr(db.execute("SELECT * FROM deliveries").fetchall())
    assert store.shown_cards.shown_in(check.id, "telegram", "7123456789")
    review(store, check.id, reviewer="m", platform="cli", verdict="false", queued=False)
    (shown,) = store.shown_cards.due(check.id, "telegram")
    assert (shown.chat, shown.message, shown.token) == ("7123456789", "5", "t0k")
    claim = store.deliveries.claim(check.id)
    assert claim is not None and claim.target == target
    db.close()


def test_the_purge_takes_the_records_and_expired_tokens_go(db: StoreDatabase) -> None:
    clock = Clock()
    store = CheckStore(db, clock=clock, secret=KEY)
    original = stored_check(store, full_report("false")).id
    expires = clock.now + dt.timedelta(minutes=15)
    record_card(
        store, original, platform="discord", chat="7", message="", verdict="false", token="t0k",
        token_expires=expires, queued=False,
    )  # fmt: skip
    clock.advance(minutes=16)
    assert store.shown_cards.forget_tokens(clock.now) == 1
    due: list[ShownCard | None] = list(store.shown_cards.due(original, "discord"))
    (card,) = due or [None]  # not due: none listed
    assert card is None
    row = store.database.dicts("SELECT token, token_expires FROM shown_cards")[0]
    assert row == {"token": "", "token_expires": None}
    assert purge_content(store.database, clock.now + dt.timedelta(days=1)) == 1
    assert store.database.rows("SELECT count(*) FROM shown_cards") == [(0,)]


def test_the_update_says_what_changed_in_one_sentence() -> None:
    assert update_said("unproven", "false", NOTE) == (
        "Update: this post was changed from Unproven to False: " + NOTE
    )
    assert update_said("misleading", "true", "", "https://example.org/x") == (
        "Update: this post was changed from Misleading to True. (https://example.org/x)"
    )
    assert update_said("unproven", "false", rechecked=True) == (
        "Update: this post was changed from Unproven to False:"
        " it was checked again with new evidence."
    )


# -- a recheck (zofia check --recheck) of the same text ----------------------------------------


def _recheck(store: CheckStore, of: str) -> str:
    """A recheck of check ``of``'s text, asked now and running (not finished)."""
    row = store.checks.get(of)
    assert row is not None
    forced = store.checks.create(
        platform="cli",
        chat="",
        requester="operator",
        post=Post(text=POST),
        text_hash=row.text_hash,
        status="running",
        forced=True,
    )
    return forced.id


def _said(chat: ChatCorrection) -> tuple[str, int, str, str, str, str, bool]:
    said = (chat.shown, chat.verdict, chat.note, chat.source, chat.rechecked)
    return (chat.chat, len(chat.cards), *said)


def test_a_recheck_with_another_verdict_makes_the_older_cards_due(db: StoreDatabase) -> None:
    clock = Clock()
    store = CheckStore(db, clock=clock, secret=KEY)
    older = stored_check(store, full_report("unproven")).id
    clock.advance(hours=30)  # past the repeat window: the same text is checked anew
    original = stored_check(store, full_report("unproven")).id
    repeat, again = _repeat(store, original), _repeat(store, original)
    other = stored_check(store, full_report("unproven"), text="The harbour opens in May.").id
    shown: _Shown = {"verdict": "unproven"}
    record_card(store, older, platform="telegram", chat="5", message="1", **shown, queued=False)
    record_card(
        store, original, platform="telegram", chat="-100", message="7", **shown, queued=False
    )
    record_card(
        store, again, platform="telegram", chat="-100", message="8", **shown, queued=False
    )  # asked twice
    record_card(store, repeat, platform="telegram", chat="42", message="3", **shown, queued=False)
    record_card(store, repeat, platform="discord", chat="700", message="", **shown, queued=False)
    record_card(store, other, platform="telegram", chat="-100", message="9", **shown, queued=False)
    clock.advance(hours=2)
    recheck = _recheck(store, original)
    assert store.shown_cards.due_checks("telegram", limit=10) == []  # not finished yet

    save_report(store, recheck, full_report("false"), queued=False)
    assert store.shown_cards.due_checks("telegram", limit=10) == sorted([older, original])
    assert store.shown_cards.due_checks("discord", limit=10) == [original]
    chats = due_corrections(store, original, "telegram")
    assert [_said(c) for c in chats] == [
        ("-100", 2, "unproven", "false", "", recheck, True),  # one update for both cards
        ("42", 1, "unproven", "false", "", recheck, True),
    ]
    assert [_said(c) for c in due_corrections(store, older, "telegram")] == [
        ("5", 1, "unproven", "false", "", recheck, True)
    ]
    # Each chat told once: nothing is due any more.
    for chat in [*chats, *due_corrections(store, older, "telegram")]:
        store.shown_cards.corrected([card for card, _ in chat.cards], chat.verdict)
    assert store.shown_cards.due_checks("telegram", limit=10) == []
    assert due_corrections(store, original, "telegram") == []
    # Each older card keeps its own check (its buttons answer in its chat), and that
    # check shows the recheck's report now.
    for check_id in (older, repeat):
        found = report_of(store, check_id)
        assert found is not None and found[0].id == check_id and found[1].verdict == "false"


def test_a_recheck_with_the_same_verdict_makes_nothing_due(db: StoreDatabase) -> None:
    clock = Clock()
    store = CheckStore(db, clock=clock, secret=KEY)
    original = stored_check(store, full_report("unproven")).id
    _card_in_chat_5(store, original, "unproven")
    repeat = _repeat(store, original)
    record_card(
        store, repeat, platform="discord", chat="7", message="", verdict="unproven", queued=False
    )
    clock.advance(hours=2)
    recheck = _recheck(store, original)
    save_report(store, recheck, full_report("unproven"), queued=False)
    assert store.shown_cards.in_force(original) == "unproven"
    assert store.shown_cards.due_checks("telegram", limit=10) == []
    assert store.shown_cards.due_checks("discord", limit=10) == []
    assert due_corrections(store, original, "telegram") == []


def test_a_moderators_review_still_wins_over_a_recheck(db: StoreDatabase) -> None:
    clock = Clock()
    store = CheckStore(db, clock=clock, secret=KEY)
    original = stored_check(store, full_report("unproven")).id
    _card_in_chat_5(store, original, "unproven")
    clock.advance(hours=2)
    recheck = _recheck(store, original)
    save_report(store, recheck, full_report("false"), queued=False)
    (chat,) = due_corrections(store, original, "telegram")
    store.shown_cards.corrected([card for card, _ in chat.cards], chat.verdict)

    # A later review of the recheck: its verdict reaches the older cards too.
    clock.advance(minutes=5)
    review(
        store, recheck, reviewer="m", platform="cli", verdict="misleading", note=NOTE, queued=False
    )
    assert store.shown_cards.due_checks("telegram", limit=10) == [original]
    (chat,) = due_corrections(store, original, "telegram")
    assert _said(chat) == ("5", 1, "false", "misleading", NOTE, recheck, False)
    store.shown_cards.corrected([card for card, _ in chat.cards], chat.verdict)

    # A review of the older check itself is its cards' word, the recheck's aside...
    clock.advance(minutes=5)
    review(
        store, original, reviewer="m", platform="cli", verdict="true", note="Sourced.", queued=False
    )
    (chat,) = due_corrections(store, original, "telegram")
    assert _said(chat) == ("5", 1, "misleading", "true", "Sourced.", original, False)
    store.shown_cards.corrected([card for card, _ in chat.cards], chat.verdict)
    # ...and a recheck after it changes nothing a moderator decided.
    clock.advance(minutes=5)
    save_report(store, _recheck(store, original), full_report("false"), queued=False)
    assert store.shown_cards.due_checks("telegram", limit=10) == []


# -- Telegram end to end, with the fake checker -----------------------------------------------

ANN, BOB, CAROL = user(951, "Ann"), user(952, "Bob"), user(953, "Carol")


def _keyed(chat_id: int) -> str:
    """A Telegram chat's keyed hash under the tests' secret: a shown card's ``chat_hash``."""
    return hash_chat(KEY, "telegram", str(chat_id))


async def _asked_in_a_group(service: CheckService) -> None:
    """:data:`POST` checked first in a group, whose check answers the private chats'
    repeats (a private chat's answers no other chat: storage.other_chats)."""
    asker = Requester("telegram", "950", "-100950", in_group=True)
    await (await submit(service, Post(text=POST), asker)).result()


def _private(sender: dict[str, Any]) -> dict[str, Any]:
    return {"id": sender["id"], "type": "private", "first_name": sender["first_name"]}


def _card(peer: FakeBotAPI, chat_id: int) -> dict[str, Any] | None:
    for message in peer.bot_messages(chat_id):
        rows = (message.get("reply_markup") or {}).get("inline_keyboard") or []
        if any(b.get("callback_data", "").startswith("d:") for row in rows for b in row):
            return message
    return None


def _updates(peer: FakeBotAPI, chat_id: int) -> list[dict[str, Any]]:
    return [m for m in peer.bot_messages(chat_id) if m["text"].startswith("Update:")]


@asynccontextmanager
async def _bot(
    tmp_path: Path, checker: FakeChecker
) -> AsyncIterator[tuple[FakeBotAPI, CheckService]]:
    async with FakeBotAPI() as peer:
        settings = telegram_settings(peer, tmp_path, service={"user_daily": 50})  # the default
        async with fake_bot(settings, checker) as service:
            yield peer, service


async def test_a_review_from_the_terminal_reaches_every_chat_but_a_purged_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(corrections, "POLL_S", 0.05)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ZOFIA_CONFIG", raising=False)
    monkeypatch.setenv("ZOFIA__STORAGE__PATH", str(tmp_path / "zofia.db"))
    monkeypatch.setenv("ZOFIA__STORAGE__SECRET", SECRET)
    checker = FakeChecker(verdict="unproven")
    async with _bot(tmp_path, checker) as (peer, service):
        await _asked_in_a_group(service)
        cards = {}
        for who in (ANN, BOB, CAROL):  # each a repeat of the group's check
            peer.send(_private(who), who, POST)
            cards[who["id"]] = await peer.wait_for(functools.partial(_card, peer, who["id"]))
        store = service.store
        async with asyncio.timeout(10):  # each card is recorded once it is on screen
            while store.database.rows("SELECT count(*) FROM shown_cards") != [(3,)]:
                await asyncio.sleep(0.05)
        original = cards[ANN["id"]]["reply_markup"]["inline_keyboard"][0][0]["callback_data"][2:]
        carol = store.database.rows(
            "SELECT check_id FROM shown_cards WHERE chat_hash = ?", [_keyed(CAROL["id"])]
        )[0][0]
        # Carol's check aged past the retention: the purge takes where her card is.
        aged = (service.clock() - dt.timedelta(days=40)).isoformat(timespec="microseconds")
        store.database.execute("UPDATE checks SET created_at = ? WHERE id = ?", [aged, carol])
        assert await service.purge_expired() == 1

        # The operator reviews from the terminal: another process's way into the store.
        args = ["review", original, "--verdict", "false", "--note", NOTE]
        done = await asyncio.to_thread(CliRunner().invoke, main, args)
        assert done.exit_code == 0, done.output
        assert "unproven changed to false" in done.output
        await peer.wait_for(lambda: _updates(peer, ANN["id"]) and _updates(peer, BOB["id"]))
        await PollRounds(store).passed(2)  # more rounds of the poll: nothing more is sent
    expected = f"Update: this post was changed from Unproven to False: {NOTE}"
    for who in (ANN, BOB):
        (update,) = _updates(peer, who["id"])
        assert update["text"] == expected
        card = cards[who["id"]]
        assert update["reply_to_message"]["message_id"] == card["message_id"]
        now = peer.messages[(who["id"], card["message_id"])]["text"]
        assert (
            now.startswith("❌ False") and "Changed by the service's reviewers from Unproven" in now
        )
    # Carol's record was purged: her card stays as it was, and she is told nothing.
    assert _updates(peer, CAROL["id"]) == []
    carols = peer.messages[(CAROL["id"], cards[CAROL["id"]]["message_id"])]
    assert carols["text"].startswith("❔ Unproven") and "edit_date" not in carols


async def test_a_correction_survives_an_outage_of_the_bot_api(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The Bot API answers 502 Bad Gateway for a while (minutes, in a deployment: the
    backoff starts at a minute and doubles; here at 1 ms): the correction is tried again
    and again, more often than the five tries that used to give it up, and reaches the
    chat once the API is back, once."""
    monkeypatch.setattr(corrections, "POLL_S", 0.01)
    monkeypatch.setattr(corrections, "FIRST_BACKOFF", dt.timedelta(milliseconds=1))
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ZOFIA_CONFIG", raising=False)
    monkeypatch.setenv("ZOFIA__STORAGE__PATH", str(tmp_path / "zofia.db"))
    monkeypatch.setenv("ZOFIA__STORAGE__SECRET", SECRET)
    async with _bot(tmp_path, FakeChecker(verdict="unproven")) as (peer, service):
        peer.send(_private(ANN), ANN, POST)
        card = await peer.wait_for(lambda: _card(peer, ANN["id"]))
        store = service.store
        async with asyncio.timeout(10):
            while store.database.rows("SELECT count(*) FROM shown_cards") != [(1,)]:
                await asyncio.sleep(0.05)
        original = card["reply_markup"]["inline_keyboard"][0][0]["callback_data"][2:]
        peer.down = {"editMessageText", "sendMessage"}

        def bad_gateways() -> int:
            return sum(1 for c in peer.calls if c.error == "Bad Gateway")

        args = ["review", original, "--verdict", "false", "--note", NOTE]
        done = await asyncio.to_thread(CliRunner().invoke, main, args)
        assert done.exit_code == 0, done.output
        await peer.wait_for(lambda: bad_gateways() >= 7)  # more than five tries, still due
        assert store.database.rows("SELECT count(*) FROM shown_cards WHERE due = 1") == [(1,)]
        peer.down = set()
        await peer.wait_for(lambda: _updates(peer, ANN["id"]))
        await PollRounds(store).passed(2)
    (update,) = _updates(peer, ANN["id"])
    assert update["text"] == f"Update: this post was changed from Unproven to False: {NOTE}"
    assert peer.messages[(ANN["id"], card["message_id"])]["text"].startswith("❌ False")


async def test_a_chat_gone_for_good_is_given_up_at_once_and_the_others_are_told(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Issue 36: Bob blocked the bot (403 Forbidden) and Carol's chat was deleted (400
    "chat not found"): each is given up at its first try, neither retried for a day, while
    Ann, whose card was shown after theirs, is told once. The log names their chats by
    keyed hash, never by id (a private chat's id is its user's)."""
    caplog.set_level(logging.INFO, logger="bots")
    monkeypatch.setattr(corrections, "POLL_S", 0.05)
    monkeypatch.setattr(corrections, "FIRST_BACKOFF", dt.timedelta(milliseconds=50))
    async with _bot(tmp_path, FakeChecker(verdict="unproven")) as (peer, service):
        await _asked_in_a_group(service)
        cards = {}
        for who in (BOB, CAROL, ANN):  # each a repeat of the group's check, Bob's first
            peer.send(_private(who), who, POST)
            cards[who["id"]] = await peer.wait_for(functools.partial(_card, peer, who["id"]))
        store = service.store
        async with asyncio.timeout(10):
            while store.database.rows("SELECT count(*) FROM shown_cards") != [(3,)]:
                await asyncio.sleep(0.05)
        original = cards[BOB["id"]]["reply_markup"]["inline_keyboard"][0][0]["callback_data"][2:]
        peer.blocked.add(BOB["id"])
        peer.gone.add(CAROL["id"])
        before = len(peer.calls)
        await asyncio.to_thread(
            review,
            store,
            original,
            reviewer="op",
            platform="cli",
            verdict="false",
            queued=False,
        )
        await peer.wait_for(lambda: _updates(peer, ANN["id"]))
        await PollRounds(store).passed(4)  # a backoff of 50 ms would have retried by now
        assert store.shown_cards.due_checks("telegram", limit=10) == []
        # Their cards were not corrected: the store still has them showing Unproven.
        shown = dict(store.database.rows("SELECT chat_hash, verdict FROM shown_cards"))
    (update,) = _updates(peer, ANN["id"])
    assert update["text"] == "Update: this post was changed from Unproven to False."
    for gone in (BOB["id"], CAROL["id"]):
        # Each try begins with the card's edit: one try, never another.
        edits = [c for c in peer.calls[before:] if c.method == "editMessageText"]
        tried = [c for c in edits if c.params.get("chat_id") == gone]
        assert len(tried) == 1, tried
    logged = "\n".join(record.getMessage() for record in caplog.records)
    for gone in (BOB["id"], CAROL["id"]):
        assert f"chat {_keyed(gone)[:12]} can never" in logged
        assert not re.search(rf"\b{gone}\b", logged)
    assert shown == {
        _keyed(BOB["id"]): "unproven",
        _keyed(CAROL["id"]): "unproven",
        _keyed(ANN["id"]): "false",
    }


async def test_raw_chat_ids_are_sealed_at_rest_and_corrections_still_arrive(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 36: ``shown_cards`` kept raw chat ids (a private chat's is its user's id) for
    the whole retention. Now they are sealed under the store's secret: neither a group's
    nor a private chat's id is anywhere in the database's files, yet a review from the
    terminal reaches both chats, each told once."""
    monkeypatch.setattr(corrections, "POLL_S", 0.05)
    erin, group_chat = user(7123456789, "Erin"), group(-1009876543210)
    async with _bot(tmp_path, FakeChecker(verdict="unproven")) as (peer, service):
        post = peer.send(group_chat, ANN, POST)
        peer.send(group_chat, ANN, "/check", reply_to=post)
        peer.send(_private(erin), erin, POST)
        cards = {
            chat: await peer.wait_for(functools.partial(_card, peer, chat))
            for chat in (group_chat["id"], erin["id"])
        }
        store = service.store
        async with asyncio.timeout(10):
            while store.database.rows("SELECT count(*) FROM shown_cards") != [(2,)]:
                await asyncio.sleep(0.05)
        files = b"".join(path.read_bytes() for path in tmp_path.glob("zofia.db*"))
        for chat in cards:
            assert str(chat).encode() not in files and str(abs(chat)).encode() not in files
        original = next(iter(cards.values()))["reply_markup"]["inline_keyboard"][0][0]
        await asyncio.to_thread(
            review,
            store,
            original["callback_data"][2:],
            reviewer="op",
            platform="cli",
            verdict="false",
            queued=False,
        )
        await peer.wait_for(lambda: all(_updates(peer, chat) for chat in cards))
        await PollRounds(store).passed(2)
    for chat, card in cards.items():
        (update,) = _updates(peer, chat)
        assert update["reply_to_message"]["message_id"] == card["message_id"]


async def test_a_recheck_with_another_verdict_reaches_every_chat_shown_the_older_card(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(corrections, "POLL_S", 0.05)
    checker = FakeChecker(verdict="unproven")
    async with _bot(tmp_path, checker) as (peer, service):
        await _asked_in_a_group(service)
        cards = {}
        for who in (ANN, BOB):  # each a repeat of the group's check
            peer.send(_private(who), who, POST)
            cards[who["id"]] = await peer.wait_for(functools.partial(_card, peer, who["id"]))
        store = service.store
        async with asyncio.timeout(10):
            while store.database.rows("SELECT count(*) FROM shown_cards") != [(2,)]:
                await asyncio.sleep(0.05)
        original = cards[ANN["id"]]["reply_markup"]["inline_keyboard"][0][0]["callback_data"][2:]
        row = store.checks.get(original)
        assert row is not None and row.post is not None
        # The operator rechecks the same post (zofia check --recheck); new evidence.
        checker.verdict = "false"
        handle = await submit(service, row.post, Requester("cli", "operator"), recheck=True)
        recheck = (await asyncio.wait_for(handle.result(), 10)).check_id
        await peer.wait_for(lambda: _updates(peer, ANN["id"]) and _updates(peer, BOB["id"]))
        await PollRounds(store).passed(2)  # more rounds of the poll: nothing more is sent
    assert recheck != original and len(checker.runs) == 2  # the engine ran again
    expected = (
        "Update: this post was changed from Unproven to False:"
        " it was checked again with new evidence."
    )
    for who in (ANN, BOB):
        (update,) = _updates(peer, who["id"])
        assert update["text"] == expected
        card = cards[who["id"]]
        assert update["reply_to_message"]["message_id"] == card["message_id"]
        now = peer.messages[(who["id"], card["message_id"])]
        assert now["text"].startswith("❌ False") and "moderator" not in now["text"]
        # The card keeps its own check's id (its buttons and follow-ups answer in its
        # chat), and that check now shows the recheck's report.
        own = card["reply_markup"]["inline_keyboard"][0][0]["callback_data"]
        assert (
            now["reply_markup"]["inline_keyboard"][0][0]["callback_data"] == own != f"d:{recheck}"
        )


# -- the queued mode: a correct job on PostgreSQL -------------------------------------------


@pytest.mark.slow  # a real PostgreSQL server, the fake Discord
async def test_in_the_queued_mode_a_correct_job_tells_the_channel(
    discord_api: FakeDiscord, postgres_url: str
) -> None:
    """The review queues a ``correct`` job in its own transaction; the bot replica that
    takes it edits the delivered card through its interaction and tells the channel."""
    checker = FakeChecker(verdict="unproven")
    payload = discord_api.slash("factcheck", {"text": POST})
    async with _queued_discord(discord_api, postgres_url, checker, payload) as (service, check_id):
        await review_as(service, check_id, ("cli", "operator"), "false", NOTE)
        async with asyncio.timeout(30):
            while not _told(discord_api):
                await asyncio.sleep(0.1)
        await _corrections_done(service)  # nothing left that could tell it again
    (update,) = _told(discord_api)
    assert update.path.endswith(f"/{payload['token']}")  # a follow-up under the card
    assert update.body["content"] == escape(update_said("unproven", "false", NOTE))
    edits = [
        c.body
        for c in discord_api.calls_to("PATCH", "/webhooks/")
        if f"/{payload['token']}/messages/@original" in c.path and c.body.get("embeds")
    ]
    assert edits[-1]["embeds"][0]["title"].startswith("❌ False")
    assert edits[0]["embeds"][0]["title"].startswith("❔ Unproven")  # as delivered


@asynccontextmanager
async def _queued_discord(
    peer: FakeDiscord, postgres_url: str, checker: FakeChecker, payload: dict[str, Any]
) -> AsyncIterator[tuple[CheckService, str]]:
    """A Discord bot replica, its deliver and correct jobs and a worker on PostgreSQL,
    once ``payload`` (a /factcheck) has had its card delivered and recorded: the
    service and the check's id."""
    data = settings_for(postgres_url, deliver_delay_s=0.0).model_dump()
    data["discord"] |= {"progress_interval_s": 0, "guild_cooldown_s": 0}
    settings = Settings.model_validate(data)
    async with (
        fake_service(settings, checker) as service,
        running_client(FactCheckBot(settings.discord, service)) as bot,
        delivering(
            settings,
            service,
            "discord",
            functools.partial(post_delivered, bot.context, bot),
            sender(functools.partial(send_correction, bot.context, bot)),
        ),
        worker(settings, checker),
    ):
        await peer.dispatch("INTERACTION_CREATE", payload)
        async with asyncio.timeout(30):  # delivered by a deliver job, then recorded
            while not service.store.database.rows("SELECT check_id FROM shown_cards"):
                await asyncio.sleep(0.1)
        ((check_id,),) = service.store.database.rows("SELECT check_id FROM shown_cards")
        yield service, check_id


async def _corrections_done(service: CheckService) -> None:
    """Wait until no card is due and no ``correct`` job waits or runs: from then on no
    chat can be told anything more."""

    def left() -> int:
        [(jobs,)] = service.store.database.rows(
            "SELECT count(*) FROM procrastinate_jobs WHERE task_name = ?"
            " AND status IN ('todo', 'doing')",
            [CORRECT_TASK],
        )
        return int(jobs) + len(service.store.shown_cards.due_checks("discord", limit=10))

    async with asyncio.timeout(30):
        while left():
            await asyncio.sleep(0.05)


def _told(peer: FakeDiscord) -> list[Call]:
    return [
        c
        for c in peer.calls_to("POST", "/webhooks/")
        if str((c.body or {}).get("content") or "").startswith("Update:")
    ]


@pytest.mark.slow  # a real PostgreSQL server, the fake Discord
async def test_in_the_queued_mode_a_workers_recheck_tells_the_channel(
    discord_api: FakeDiscord, postgres_url: str
) -> None:
    """The worker that saves a recheck with another verdict queues the ``correct`` job in
    the same transaction; the bot replica that takes it edits the older card."""
    checker = FakeChecker(verdict="unproven")
    payload = discord_api.slash("factcheck", {"text": POST})
    async with _queued_discord(discord_api, postgres_url, checker, payload) as (service, check_id):
        row = service.store.checks.get(check_id)
        assert row is not None and row.post is not None
        checker.verdict = "false"
        handle = await submit(service, row.post, Requester("cli", "operator"), recheck=True)
        await asyncio.wait_for(handle.result(), 30)
        async with asyncio.timeout(30):
            while not _told(discord_api):
                await asyncio.sleep(0.1)
        await _corrections_done(service)  # nothing left that could tell it again
    (update,) = _told(discord_api)
    assert update.path.endswith(f"/{payload['token']}")  # a follow-up under the card
    assert update.body["content"] == escape(update_said("unproven", "false", rechecked=True))
    edits = [
        c.body
        for c in discord_api.calls_to("PATCH", "/webhooks/")
        if f"/{payload['token']}/messages/@original" in c.path and c.body.get("embeds")
    ]
    assert edits[-1]["embeds"][0]["title"].startswith("❌ False")
    assert edits[0]["embeds"][0]["title"].startswith("❔ Unproven")  # as delivered
