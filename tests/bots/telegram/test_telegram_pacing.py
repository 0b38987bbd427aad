"""A private chat's messages paced, the verdict card first: python-telegram-bot with
:class:`~bots.telegram.pacing.ChatPacedRateLimiter` (one message at once, then one per
turn) on the fake Bot API, counted where Telegram would count them. A burst's refusal
waits behind the card, and a progress edit that a newer state (or the card) made stale
is dropped, never sent after the card's content is known.

The chat's turns are given by the test (:class:`~tests.peers.fakes.stepped_pacer.SteppedPacer`),
each once what the test is about is queued, so the order the pacer chooses is the only
order there is: no turn comes early or late on a slow or busy machine."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest_asyncio
from telegram.ext import ExtBot

from tests.peers.fakes.fake_checker import FakeChecker, Gate, fake_service
from tests.peers.fakes.stepped_pacer import SteppedPacer
from tests.peers.fixtures.telegram_setup import bot_running, telegram_settings
from tests.peers.servers.telegram_peer import TOKEN, BotCall, FakeBotAPI, user

from bots.telegram.pacing import CARD, OTHER, PROGRESS, ChatPacedRateLimiter, priority_of
from bots.telegram.refusals import Refusals
from bots.telegram.render import card_keyboard, progress_keyboard
from zofia_engine.post import ProgressHook, ReadPost
from zofia_engine.report import Report

ANN = user(701, "Ann", "ann_r")
CHAT = {"id": ANN["id"], "type": "private", "first_name": "Ann"}
POST = "The mayor of Springfield has banned bicycles from every street in the city."
CHECK_ID = "abcDEF123_-xyz45"


@dataclass
class NotingChecker(FakeChecker):
    """A :class:`FakeChecker` that notes how many requests the bot had made when each
    report was ready: from then on, the card's content is known."""

    peer: FakeBotAPI | None = None
    known_at: list[int] = field(default_factory=list)

    async def check(self, read: ReadPost, *, on_progress: ProgressHook | None = None) -> Report:
        report = await super().check(read, on_progress=on_progress)
        assert self.peer is not None
        self.known_at.append(len(self.peer.calls))
        return report


def _is_card(call: BotCall) -> bool:
    rows = (call.params.get("reply_markup") or {}).get("inline_keyboard") or []
    return any(b.get("callback_data", "").startswith("d:") for row in rows for b in row)


def _is_progress(call: BotCall) -> bool:
    return str(call.params.get("text", "")).startswith("🔎")


def _waiting_card(pacer: SteppedPacer) -> bool:
    """Whether a card (an edit of "checking…" into it) is in the pacer."""
    return any(priority_of(endpoint, data) == CARD for endpoint, data in pacer.inside)


def _more_calls_than(peer: FakeBotAPI, calls: int) -> bool:
    return len(peer.calls) > calls


def _answers(peer: FakeBotAPI) -> list[BotCall]:
    """The bot's messages and edits in Ann's chat, in the order the API got them."""
    return [
        c
        for c in peer.calls
        if c.method in ("sendMessage", "editMessageText") and c.params.get("chat_id") == ANN["id"]
    ]


@pytest_asyncio.fixture
async def peer() -> AsyncIterator[FakeBotAPI]:
    async with FakeBotAPI() as found:
        yield found


async def test_a_paced_burst_gets_its_card_before_its_refusals(
    peer: FakeBotAPI, tmp_path: Path
) -> None:
    settings = telegram_settings(peer, tmp_path, service={"user_per_minute": 1})
    gate = Gate()  # the check runs until the refusals are queued
    pacer = SteppedPacer(chat_burst=1)
    async with (
        fake_service(settings, FakeChecker(gate=gate)) as service,
        bot_running(settings, service, rate_limiter=pacer) as application,
        pacer.stepping(),
    ):
        # Refusals said at once, not held for the chat's cards: the pacer alone orders them.
        application.bot_data["zofia"].refusals = Refusals(window_s=0, hold_s=0)
        peer.send(CHAT, ANN, f"{POST} Report number 0.")
        await peer.wait_for(lambda: [c for c in _answers(peer) if _is_progress(c)])
        await gate.held()
        for n in range(1, 4):  # refused by the limit while the first is checked
            peer.send(CHAT, ANN, f"{POST} Report number {n}.")
        # The refusal waits for the chat's next turn; then the check ends, and its card too.
        await pacer.until(
            lambda: any("in the last minute" in str(d.get("text")) for _, d in pacer.inside)
        )
        gate.open()
        await pacer.until(lambda: _waiting_card(pacer))
        while len(_answers(peer)) < 3:  # the chat's turns, one at a time
            calls = len(peer.calls)
            pacer.next_turn(ANN["id"])
            await peer.wait_for(functools.partial(_more_calls_than, peer, calls))
    answers = _answers(peer)
    kinds = ["card" if _is_card(c) else "progress" if _is_progress(c) else "other" for c in answers]
    # "checking…", then the card, queued after the refusal but first when the turn came
    assert kinds[:2] == ["progress", "card"]
    assert kinds[2:] and set(kinds[2:]) == {"other"}  # no progress edit after the card
    assert all("in the last minute" in c.params["text"] for c in answers[2:])


async def test_a_stale_progress_edit_is_never_sent_once_the_card_is_known(
    peer: FakeBotAPI, tmp_path: Path
) -> None:
    checker = NotingChecker(peer=peer)  # a few states while one edit waits
    settings = telegram_settings(peer, tmp_path)
    pacer = SteppedPacer(chat_burst=1)
    async with (
        fake_service(settings, checker) as service,
        bot_running(settings, service, rate_limiter=pacer),
        pacer.stepping(),
    ):
        peer.send(CHAT, ANN, POST)
        # The check ends, and its card is queued, before the chat's next turn.
        await pacer.until(lambda: checker.known_at and _waiting_card(pacer))
        pacer.next_turn(ANN["id"])
        await peer.wait_for(lambda: [c for c in _answers(peer) if _is_card(c)], 30)
    [known] = checker.known_at
    answers = _answers(peer)
    first = answers[0]
    assert first.method == "sendMessage" and _is_progress(first)  # "checking…"
    # Every state came while "checking…" held the chat's one message: each newer one
    # dropped the edit before it, and the card dropped the last.
    edits = [c for c in peer.calls if c.method == "editMessageText"]
    assert len(edits) == 1 and _is_card(edits[0])
    assert not [c for c in peer.calls[known:] if c.method == "editMessageText" and _is_progress(c)]


async def test_the_pacer_sends_the_card_first_then_a_refusal_and_drops_stale_edits(
    peer: FakeBotAPI,
) -> None:
    peer.send(CHAT, ANN, "hello")  # Ann's chat, known to the API
    pacer = SteppedPacer(chat_burst=1)
    bot = ExtBot(TOKEN, base_url=f"{peer.root}/bot", rate_limiter=pacer)
    async with bot, pacer.stepping():
        checking = await bot.send_message(
            ANN["id"], "🔎 Checking…", reply_markup=progress_keyboard(CHECK_ID)
        )  # the chat's one message at once: the rest wait their turn

        def edit(text: str, markup: Any) -> asyncio.Task[Any]:
            call = bot.edit_message_text(text, ANN["id"], checking.message_id, reply_markup=markup)
            return asyncio.get_running_loop().create_task(call)

        first = edit("🔎 Checking…\n✓ retrieval finished", progress_keyboard(CHECK_ID))
        refusal = asyncio.get_running_loop().create_task(
            bot.send_message(ANN["id"], "Too many checks: 2 posts were not checked.")
        )
        second = edit("🔎 Checking…\n✓ linguist finished", progress_keyboard(CHECK_ID))
        card = edit("❌ False", card_keyboard(CHECK_ID))
        # All four queued: both progress edits dropped, the refusal and the card waiting.
        await pacer.until(lambda: first.done() and second.done() and len(pacer.inside) == 2)
        for _ in range(2):  # the chat's next two turns
            calls = len(peer.calls)
            pacer.next_turn(ANN["id"])
            await peer.wait_for(functools.partial(_more_calls_than, peer, calls))
        results = await asyncio.gather(first, refusal, second, card)
    assert results[0] is True and results[2] is True  # dropped, as stale
    sent = [(c.method, c.params["text"]) for c in _answers(peer)]
    assert sent == [
        ("sendMessage", "🔎 Checking…"),
        ("editMessageText", "❌ False"),
        ("sendMessage", "Too many checks: 2 posts were not checked."),
    ]


async def test_a_request_cancelled_while_it_waits_is_never_sent(peer: FakeBotAPI) -> None:
    peer.send(CHAT, ANN, "hello")
    pacer = SteppedPacer(chat_burst=1)
    bot = ExtBot(TOKEN, base_url=f"{peer.root}/bot", rate_limiter=pacer)
    async with bot, pacer.stepping():
        await bot.send_message(ANN["id"], "first")
        loop = asyncio.get_running_loop()
        waiting = loop.create_task(bot.send_message(ANN["id"], "never"))
        after = loop.create_task(bot.send_message(ANN["id"], "second"))
        await pacer.until(lambda: len(pacer.inside) == 2)  # both queued behind "first"
        waiting.cancel()
        await asyncio.gather(waiting, return_exceptions=True)
        pacer.next_turn(ANN["id"])
        await after
    assert waiting.cancelled()
    assert [c.params["text"] for c in _answers(peer)] == ["first", "second"]


async def test_the_chats_next_turns_come_by_the_clock(peer: FakeBotAPI) -> None:
    """The tests above give the turns themselves (and show that a request waits for
    its turn); here the clock does (50 a second): the requests that wait for a turn are
    all sent, in their order, with nobody giving a turn (the test fails, not hangs, past
    30 s). How long a turn takes is Telegram's pacing, not timed here."""
    peer.send(CHAT, ANN, "hello")
    limiter = ChatPacedRateLimiter(chat_burst=1, chat_rate=50.0)
    bot = ExtBot(TOKEN, base_url=f"{peer.root}/bot", rate_limiter=limiter)
    async with bot:
        sends = [bot.send_message(ANN["id"], text) for text in ("one", "two", "three")]
        await asyncio.wait_for(asyncio.gather(*sends), 30)
    assert [c.params["text"] for c in _answers(peer)] == ["one", "two", "three"]


def test_what_goes_first_a_card_then_the_rest_then_progress_edits() -> None:
    card = {"chat_id": 1, "message_id": 2, "reply_markup": card_keyboard(CHECK_ID)}
    progress = {"chat_id": 1, "message_id": 2, "reply_markup": progress_keyboard(CHECK_ID)}
    assert priority_of("editMessageText", card) == CARD
    assert priority_of("sendMessage", card) == CARD  # a card in a reply of its own
    assert priority_of("editMessageText", progress) == PROGRESS
    # "checking…" itself, a refusal, a sentence in place of the progress: in between.
    assert priority_of("sendMessage", progress) == OTHER
    assert priority_of("sendMessage", {"chat_id": 1, "text": "Too many checks"}) == OTHER
    assert priority_of("editMessageText", {"chat_id": 1, "message_id": 2}) == OTHER
    # The JSON form, as api_kwargs would pass it, is read as well.
    as_json = {"chat_id": 1, "reply_markup": card_keyboard(CHECK_ID).to_dict()}
    assert priority_of("editMessageText", as_json) == CARD
