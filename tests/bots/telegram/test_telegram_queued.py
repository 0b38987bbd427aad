"""The Telegram bot of a queued deployment, on a real PostgreSQL server: the real
python-telegram-bot client polling the fake Bot API, the queued check service, a
Procrastinate worker running the checks and the bot's own deliver, correct and periodic
jobs, all in this process.

The checker is :class:`~tests.peers.fakes.fake_checker.FakeChecker` (our ``Checker``
port): these tests prove what the queue and the bot do around a check (a correction
that always goes out, a card that always arrives), not that any fact-checking happened.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from tests.bots.service.queue.test_queue import worker
from tests.peers.fakes.fake_checker import (
    FakeChecker,
    Gate,
    fake_service,
    review_as,
    scripted_report,
)
from tests.peers.fixtures.service_steps import update_said
from tests.peers.fixtures.store_fixtures import MovingClock
from tests.peers.fixtures.telegram_setup import bot_running, handled, telegram_settings
from tests.peers.servers.telegram_peer import BOT_ID, BOT_USERNAME, FakeBotAPI, group, user

from bots.app.settings import Settings
from bots.render.sections import already_shown
from bots.service.checks import CheckService
from bots.service.corrections import FIRST_BACKOFF
from bots.service.queue.jobs import CORRECT_DUE_TASK, CORRECT_TASK, DELIVER_TASK
from storage.postgres import WRITE_LOCK
from zofia_engine.post import Post

pytestmark = pytest.mark.slow  # a real PostgreSQL server on loopback

POST = (
    "The mayor of Springfield, Illinois has banned bicycles from every street in the city. "
    "Mayor Misty Buscher signed the law in March and cyclists now face a 500 dollar fine."
)
NOTE = "The council minutes show no such vote."
ANN = user(7123456789, "Ann")
BOB = user(7123456790, "Bob")
GROUP = group(-1009876543210, "Rumour mill")
BOT = user(BOT_ID, "ZoFia", BOT_USERNAME) | {"is_bot": True}


def queued_settings(peer: FakeBotAPI, folder: Path, postgres_url: str) -> Settings:
    """The bot on ``peer`` with its store on PostgreSQL: brisk heartbeats and polls, cards
    posted at once, corrections due looked for every second."""
    queue = {"heartbeat_s": 1.0, "stalled_after_s": 3.0, "poll_s": 0.5, "deliver_delay_s": 0.0}
    return telegram_settings(
        peer,
        folder,
        storage={"url": postgres_url},
        queue=queue | {"corrections_poll_s": 1.0},
    )


@contextlib.asynccontextmanager
async def queued_bot(
    settings: Settings, checker: FakeChecker, clock: MovingClock
) -> AsyncIterator[CheckService]:
    """The queued service (its store on ``clock``), the bot taking its jobs, and a worker
    running the checks."""
    async with (
        fake_service(settings, checker, clock=clock) as service,
        bot_running(settings, service),
        worker(settings, checker),
    ):
        yield service


def private(sender: dict[str, Any]) -> dict[str, Any]:
    return {"id": sender["id"], "type": "private", "first_name": sender["first_name"]}


def card_in(peer: FakeBotAPI, chat_id: int) -> dict[str, Any] | None:
    """The bot's verdict card in a chat (a message with a Debate button)."""
    return next(filter(is_card, peer.bot_messages(chat_id)), None)


def is_card(message: dict[str, Any]) -> bool:
    rows = (message.get("reply_markup") or {}).get("inline_keyboard") or []
    return any(str(b.get("callback_data", "")).startswith("d:") for row in rows for b in row)


def answer_to(peer: FakeBotAPI, message: dict[str, Any]) -> dict[str, Any] | None:
    """The bot's message in reply to ``message``, if any."""
    chat, wanted = message["chat"]["id"], message["message_id"]
    for answer in peer.bot_messages(chat):
        if (answer.get("reply_to_message") or {}).get("message_id") == wanted:
            return answer
    return None


def updates(peer: FakeBotAPI, chat_id: int) -> list[dict[str, Any]]:
    return [m for m in peer.bot_messages(chat_id) if m["text"].startswith("Update:")]


async def recorded(service: CheckService) -> str:
    """The check whose card the bot recorded as shown (once it has)."""
    async with asyncio.timeout(30):
        while not (rows := service.store.database.rows("SELECT check_id FROM shown_cards")):
            await asyncio.sleep(0.05)
    ((check_id,),) = rows
    return str(check_id)


async def correct_due_ran_since(service: CheckService, moment: float) -> None:
    """Return once a periodic look for corrections due, deferred after ``moment`` (a Unix
    time), has finished: from then on, a correction it did not queue was not due."""

    def finished() -> bool:
        rows = service.store.database.rows(
            "SELECT 1 FROM procrastinate_periodic_defers WHERE task_name = ?"
            " AND periodic_id = 'telegram' AND defer_timestamp > ? AND job_id IS NULL",
            [CORRECT_DUE_TASK, int(moment)],
        )
        return bool(rows)

    async with asyncio.timeout(30):
        while not finished():
            await asyncio.sleep(0.05)


def correct_jobs(service: CheckService) -> int:
    """The ``correct`` jobs waiting or running (a failed one waiting for its retry too)."""
    [(jobs,)] = service.store.database.rows(
        "SELECT count(*) FROM procrastinate_jobs WHERE task_name = ?"
        " AND status IN ('todo', 'doing')",
        [CORRECT_TASK],
    )
    return int(jobs)


async def corrections_done(service: CheckService, *, due: bool = False) -> None:
    """Return once no ``correct`` job waits or runs and, unless ``due``, no card is due."""

    def left() -> int:
        [(cards,)] = service.store.database.rows("SELECT count(*) FROM shown_cards WHERE due = 1")
        return correct_jobs(service) + (0 if due else int(cards))

    async with asyncio.timeout(30):
        while left():
            await asyncio.sleep(0.05)


async def test_a_correction_whose_first_send_fails_goes_out_after_its_backoff(
    tmp_path: Path, postgres_url: str
) -> None:
    """Issue 45: in the queued mode a correction whose send failed (here a 502 from the
    Bot API) waited for its backoff, and nothing ever queued it again. Now the periodic
    look queues it once the store's clock passes the backoff: nothing is sent before,
    and the card is edited and the chat told once after."""
    clock = MovingClock()
    async with FakeBotAPI() as peer:
        settings = queued_settings(peer, tmp_path, postgres_url)
        async with queued_bot(settings, FakeChecker(verdict="unproven"), clock) as service:
            peer.send(private(ANN), ANN, POST)
            card = await peer.wait_for(functools.partial(card_in, peer, ANN["id"]), 30)
            check_id = await recorded(service)
            peer.down.add("editMessageText")  # the Bot API's front answers 502
            await review_as(service, check_id, ("cli", "operator"), "false", NOTE)

            def backing_off() -> bool:
                rows = service.store.database.rows("SELECT tries FROM shown_cards")
                return rows == [(1,)]

            await peer.wait_for(backing_off, 30)
            # The job that failed to send has ended: no retry of it is left to send later.
            await corrections_done(service, due=True)
            failed = time.time()
            tried = len(peer.calls)
            peer.down.discard("editMessageText")
            # Before the backoff is over: the looks run, and nothing is sent.
            await correct_due_ran_since(service, failed + 1)
            assert [c.method for c in peer.calls[tried:]] == []
            assert updates(peer, ANN["id"]) == []
            # The store's clock passes the backoff: the next look queues the correction.
            clock.advance(seconds=FIRST_BACKOFF.total_seconds() + 1)
            await peer.wait_for(lambda: updates(peer, ANN["id"]), 30)
            await corrections_done(service)
    (update,) = updates(peer, ANN["id"])
    assert update["text"] == update_said("unproven", "false", NOTE)
    assert update["reply_to_message"]["message_id"] == card["message_id"]
    edits = [c for c in peer.calls if c.method == "editMessageText"]
    assert [c.error for c in edits if c.error] == ["Bad Gateway"]  # the one failed send
    assert peer.messages[(ANN["id"], card["message_id"])]["text"].startswith("❌ False")


async def test_a_deliver_job_sends_the_card_anew_when_checking_was_deleted(
    tmp_path: Path, postgres_url: str
) -> None:
    """Issue 45: a deliver job whose "checking…" message could not be edited failed, and
    was retried until it gave up (8 attempts) and the card was lost. Now the card is sent
    in a new reply to the post, at the first attempt, and the job ends."""
    gate = Gate()
    async with FakeBotAPI() as peer:
        settings = queued_settings(peer, tmp_path, postgres_url)
        async with queued_bot(settings, FakeChecker(gate=gate), MovingClock()) as service:
            post = peer.send(private(ANN), ANN, POST)
            await gate.held()  # on the worker, its card to come from a deliver job
            checking = await peer.wait_for(functools.partial(answer_to, peer, post), 30)
            peer.delete(ANN["id"], checking["message_id"])
            gate.open()
            card = await peer.wait_for(functools.partial(card_in, peer, ANN["id"]), 30)
            await recorded(service)

            def jobs_left() -> int:
                [(jobs,)] = service.store.database.rows(
                    "SELECT count(*) FROM procrastinate_jobs WHERE task_name = ?", [DELIVER_TASK]
                )
                return int(jobs)

            await peer.wait_for(lambda: jobs_left() == 0, 30)  # done: deleted, not failed
            shown = service.store.database.rows("SELECT message FROM shown_cards")
    assert card["reply_to_message"]["message_id"] == post["message_id"]
    assert peer.bot_messages(ANN["id"]) == [card]
    edits = [c for c in peer.calls if c.method == "editMessageText" and is_card(c.params)]
    assert [c.error for c in edits] == ["Bad Request: message to edit not found"]  # once
    assert shown == [(str(card["message_id"]),)]  # a correction reaches the new card


@contextlib.contextmanager
def write_lock_held(url: str) -> Iterator[psycopg.Connection[Any]]:
    """Another session holding the store's write lock (every write of every replica waits
    for it) until the block ends; yields that session, to watch who waits."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SELECT pg_advisory_lock(%s)", [WRITE_LOCK])
        try:
            yield conn
        finally:
            conn.execute("SELECT pg_advisory_unlock(%s)", [WRITE_LOCK])


def waiting(conn: psycopg.Connection[Any]) -> set[str]:
    """The replicas (by their connections' application name) waiting for a lock."""
    rows = conn.execute(
        "SELECT application_name FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
        " AND application_name LIKE 'replica-%'"
    ).fetchall()
    return {str(row[0]) for row in rows}


def shown_card(peer: FakeBotAPI, check_id: str) -> dict[str, Any]:
    """The check's card in the group, as the bot posted it (the replicas' Telegram is one:
    each peer holds the same message)."""
    card = peer.compose(GROUP, BOT, "❌ False: the council passed no such law.")
    card["reply_markup"] = {
        "inline_keyboard": [[{"text": "🗣️ Debate", "callback_data": f"d:{check_id}"}]]
    }
    return card


async def test_a_section_tapped_on_two_replicas_at_once_is_posted_once(
    tmp_path: Path, postgres_url: str
) -> None:
    """Issue 45: a section's "posted" mark was guarded by a lock of one process, so two
    replicas that each read "not posted" both posted it. Ann's tap reaches one replica
    and Bob's the other (two fronts of one Telegram), and both have read the mark before
    either writes (the store's write lock is held until both wait for it). Now the mark
    is claimed in the store: one replica posts the Debate, the other says it is there."""
    async with FakeBotAPI() as one, FakeBotAPI() as two:
        replicas = []
        for name, peer in (("replica-one", one), ("replica-two", two)):
            url = f"{postgres_url}?application_name={name}"
            replicas.append(telegram_settings(peer, tmp_path, storage={"url": url}))
        async with (
            fake_service(replicas[0], FakeChecker()) as first,
            fake_service(replicas[1], FakeChecker()) as second,
            bot_running(replicas[0], first),
            bot_running(replicas[1], second),
        ):
            store = first.store
            check = store.checks.create(
                platform="telegram",
                chat=first.namer.chat("telegram", str(GROUP["id"])),
                requester=first.namer.user("telegram", str(ANN["id"])),
                post=Post(text=POST),
                text_hash="h",
                status="running",
            )
            store.reports.save(check.id, scripted_report(Post(text=POST)))
            cards = [shown_card(peer, check.id) for peer in (one, two)]
            with write_lock_held(postgres_url) as conn:
                one.press(cards[0], f"d:{check.id}", ANN)
                two.press(cards[1], f"d:{check.id}", BOB)
                async with asyncio.timeout(20):
                    while waiting(conn) != {"replica-one", "replica-two"}:
                        await asyncio.sleep(0.02)
            await one.wait_for(lambda: one.sent("answerCallbackQuery"))
            await two.wait_for(lambda: two.sent("answerCallbackQuery"))
            async with asyncio.timeout(20):  # posted: the mark holds the messages' ids
                while not (posted := store.marks.get(check.id, "debate")):
                    await asyncio.sleep(0.05)
            await handled(one, first)
            await handled(two, second)
    answers = [peer.sent("answerCallbackQuery")[0].params.get("text") for peer in (one, two)]
    replies = [
        [m for m in peer.bot_messages(GROUP["id"]) if m.get("reply_to_message")]
        for peer in (one, two)
    ]
    assert sorted(map(len, replies)) == [0, len(posted)]  # one replica posted it all
    poster = 0 if replies[0] else 1
    assert [m["message_id"] for m in replies[poster]] == posted
    assert answers[1 - poster] == already_shown("debate")
    assert answers[poster] is None
