"""Telegram as its users meet it (issue 38): the real python-telegram-bot client polling
the fake Bot API on loopback (it refuses what Telegram refuses), the real check service
on a SQLite file and a :class:`~tests.peers.fakes.fake_checker.FakeChecker` (the checks are
plumbing here).

Posts forwarded together to a private chat are queued and answered in turn, each
told at once how many come first; past the queue one message says how many were not
taken and why. A refusal names its limit and when it frees up, in the asker's
language: a share held by checks under way frees when they end, not at midnight. The
origin on a card is in the card's language.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import re
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from tests.peers.fakes.fake_checker import FakeChecker, Gate
from tests.peers.fixtures.telegram_setup import fake_bot, handled, telegram_settings
from tests.peers.servers.telegram_peer import FakeBotAPI, channel, group, user

from bots.render.languages import LANGUAGE_KEY
from bots.render.privacy import privacy_text
from bots.render.words import words_for

ANN = user(731, "Ann", "ann_r")
CHAT = {"id": ANN["id"], "type": "private", "first_name": "Ann"}
GROUP = group(-100731, "Rumour mill")
NEWS = channel(-1001731, "Rumour Daily", "rumour_daily")
POST = "The mayor of Springfield has banned bicycles from every street in the city."
Start = Callable[..., AbstractAsyncContextManager[tuple[FakeBotAPI, Any]]]


@pytest_asyncio.fixture
async def start(tmp_path: Path) -> AsyncIterator[Start]:
    """The bot on a fake Bot API, checking with ``checker``, with the ``[service]`` and
    ``[llm]`` given; yields the peer and the service."""

    @asynccontextmanager
    async def run(
        checker: FakeChecker, service: dict[str, Any] | None = None, **sections: Any
    ) -> AsyncIterator[tuple[FakeBotAPI, Any]]:
        async with FakeBotAPI() as peer:
            settings = telegram_settings(peer, tmp_path, service=service or {}, **sections)
            async with fake_bot(settings, checker, refusal_window_s=0.5) as running:
                yield peer, running

    yield run


def _forward(peer: FakeBotAPI, chat: dict[str, Any], sender: dict[str, Any], text: str) -> Any:
    origin = {"type": "channel", "chat": NEWS, "message_id": 7, "date": 1_790_000_000}
    return peer.send(chat, sender, text, forward_origin=origin)


def _is_card(message: dict[str, Any]) -> bool:
    rows = (message.get("reply_markup") or {}).get("inline_keyboard") or []
    return any(str(b.get("callback_data", "")).startswith("d:") for row in rows for b in row)


def _answers(peer: FakeBotAPI, chat_id: int) -> dict[int, dict[str, Any]]:
    """The bot's answer to each message of the chat, by the message it replies to."""
    return {
        m["reply_to_message"]["message_id"]: m
        for m in peer.bot_messages(chat_id)
        if "reply_to_message" in m
    }


def _has_card(peer: FakeBotAPI, chat_id: int) -> bool:
    return any(map(_is_card, peer.bot_messages(chat_id)))


def _said_first(peer: FakeBotAPI, chat_id: int, message_id: int) -> str:
    """What the bot first said in reply to ``message_id`` (before any edit)."""
    for call in peer.sent("sendMessage", chat_id):
        reply = call.params.get("reply_parameters") or {}
        if reply.get("message_id") == message_id:
            return str(call.params["text"])
    return ""


# ---- item 7: forwards queued, answered in turn -----------------------------------------------


async def test_forwards_sent_together_are_queued_and_each_gets_its_card_in_turn(
    start: Start,
) -> None:
    gate = Gate()
    checker = FakeChecker(gate=gate)
    async with start(checker) as (peer, service):
        texts = [f"{POST} Report {n}." for n in range(4)]
        sent = [_forward(peer, CHAT, ANN, texts[0])]
        await gate.held()
        sent += [_forward(peer, CHAT, ANN, text) for text in texts[1:]]
        # Each waiting forward is told at once how many of its chat's come first.
        for n, message in enumerate(sent[1:], 1):
            await peer.wait_for(
                functools.partial(_said_first, peer, ANN["id"], message["message_id"])
            )
            line = _said_first(peer, ANN["id"], message["message_id"])
            assert line.startswith(f"In line: {n} of your post"), line
        assert gate.waiting == 1  # one check of the chat at a time
        gate.open()
        await peer.wait_for(lambda: sum(map(_is_card, _answers(peer, ANN["id"]).values())) == 4)
        await handled(peer, service)
    answers = _answers(peer, ANN["id"])
    assert all(_is_card(answers[m["message_id"]]) for m in sent)  # each its own card
    assert [post.text for post in checker.runs] == texts  # in the order they came
    assert len(peer.bot_messages(ANN["id"])) == 4  # the line became the card: no extra


async def test_forwards_past_the_queue_get_one_message_saying_how_many_and_why(
    start: Start,
) -> None:
    gate = Gate()
    checker = FakeChecker(gate=gate)
    async with start(checker) as (peer, service):
        first = _forward(peer, CHAT, ANN, f"{POST} Report 0.")
        await gate.held()
        rest = [_forward(peer, CHAT, ANN, f"{POST} Report {n}.") for n in range(1, 7)]

        def in_line() -> int:  # four wait their turn, told so at once
            said = [_said_first(peer, ANN["id"], m["message_id"]) for m in rest]
            return sum(1 for line in said if line.startswith("In line:"))

        await peer.wait_for(lambda: in_line() == 4)
        gate.open()  # the refusal is said once the chat's card is out
        refusal = await peer.wait_for(
            lambda: [m for m in peer.bot_messages(ANN["id"]) if "not checked" in m["text"]]
        )
        await peer.wait_for(lambda: sum(map(_is_card, _answers(peer, ANN["id"]).values())) == 5)
        await handled(peer, service)
    [told] = refusal
    assert told["text"].startswith("2 posts were not checked.")
    assert "4 of your posts are already waiting their turn, as many as may wait." in told["text"]
    assert re.search(r"Please send them again in \d+ (s|min)\.$", told["text"]), told["text"]
    answers = _answers(peer, ANN["id"])
    carded = [m for m in (first, *rest) if _is_card(answers.get(m["message_id"], {}))]
    refused = [m["message_id"] for m in rest if m not in carded]
    assert len(carded) == 5 and len(refused) == 2
    assert told["reply_to_message"]["message_id"] in refused  # it answers one of the two


# ---- item 1: a refusal that tells the truth ---------------------------------------------------


async def test_a_share_held_by_checks_under_way_frees_in_minutes_said_in_german(
    start: Start, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    gate = Gate()  # the first two checks run until the test opens it
    checker = FakeChecker(gate=gate, tokens=100)
    hans = user(732, "Hans") | {"language_code": "de"}
    budget = {"daily_token_budget": 3000, "user_budget_share": 0.5, "chat_budget_share": 1}
    llm = {"max_tokens_per_check": 1000}  # each check reserves 1,000 of Hans's 1,500
    async with start(checker, budget, llm=llm, telegram={"chat_cooldown_s": 0}) as (peer, service):
        for n in range(2):
            peer.send(GROUP, hans, f"/check {POST} Bericht {n}.")
            await gate.held(n + 1)
        third = peer.send(GROUP, hans, f"/check {POST} Bericht 2.")
        # Refused while the two run (said once their cards are out: one burst's answer).
        await peer.wait_for(lambda: any("refused" in r.getMessage() for r in caplog.records))
        gate.open()  # the refusal is said once the chat's cards are out
        told = await peer.wait_for(
            lambda: _answers(peer, GROUP["id"]).get(third["message_id"], {}).get("text")
        )
        await handled(peer, service)
    assert told.startswith(
        "Deine laufenden Prüfungen belegen deinen Anteil am heutigen Prüfbudget."
    ), told
    # About one check's time (none has ended yet: 2 min), not the hours to midnight.
    assert told.endswith("Bitte schicke ihn in 2 min erneut."), told
    assert len(checker.runs) == 2


# ---- item 6: the origin in the card's language -------------------------------------------------


async def test_a_forward_from_a_channel_says_where_from_in_the_cards_language(
    start: Start,
) -> None:
    anne = user(733, "Anne") | {"language_code": "fr"}
    hans = user(734, "Hans") | {"language_code": "de"}
    async with start(FakeChecker()) as (peer, service):
        for person in (anne, hans):
            chat = {"id": person["id"], "type": "private", "first_name": person["first_name"]}
            _forward(peer, chat, person, POST)
            await peer.wait_for(functools.partial(_has_card, peer, person["id"]))
        await handled(peer, service)
        await asyncio.sleep(0)
    french = next(filter(_is_card, peer.bot_messages(anne["id"])))["text"]
    german = next(filter(_is_card, peer.bot_messages(hans["id"])))["text"]
    assert "De chaîne Rumour Daily (@\u2060rumour_daily)" in french  # "@" defused
    assert "Von Kanal Rumour Daily (@\u2060rumour_daily)" in german
    assert "channel" not in french and "channel" not in german


# ---- issue 45, item 6: a "checking…" message someone deleted -----------------------------------


async def test_a_card_whose_checking_message_was_deleted_comes_in_a_new_reply(
    start: Start,
) -> None:
    """The "checking…" message can no longer be edited (Ann deleted it): the card is
    sent in a new reply to her post, once, instead of being lost to a failed edit."""
    gate = Gate()
    async with start(FakeChecker(gate=gate)) as (peer, service):
        post = _forward(peer, CHAT, ANN, POST)
        await gate.held()
        checking = await peer.wait_for(lambda: _answers(peer, ANN["id"]).get(post["message_id"]))
        peer.delete(ANN["id"], checking["message_id"])
        gate.open()
        await peer.wait_for(functools.partial(_has_card, peer, ANN["id"]))
        await handled(peer, service)
        shown = service.store.database.rows("SELECT message FROM shown_cards")
    (card,) = peer.bot_messages(ANN["id"])
    assert _is_card(card) and card["reply_to_message"]["message_id"] == post["message_id"]
    edits = [c for c in peer.calls if c.method == "editMessageText" and _is_card(c.params)]
    assert [c.error for c in edits] == ["Bad Request: message to edit not found"]  # once
    assert shown == [(str(card["message_id"]),)]  # a correction reaches the new card


# ---- issue 48: /privacy in the chat's language -------------------------------------------------


async def test_privacy_is_said_in_the_chats_language_with_the_configured_days(
    start: Start,
) -> None:
    """A French asker's /privacy is the French text, with the deployment's 45 days; a
    group that set German gets German whatever the asker's app says; English stays
    English."""
    anne = user(735, "Anne") | {"language_code": "fr"}
    chat = {"id": anne["id"], "type": "private", "first_name": "Anne"}
    async with start(FakeChecker(), storage={"retention_days": 45}) as (peer, service):
        await service.chats.set_settings("telegram", str(GROUP["id"]), {LANGUAGE_KEY: "German"})
        for where, who in ((chat, anne), (GROUP, anne), (CHAT, ANN)):
            peer.send(where, who, "/privacy")
        said = await peer.wait_for(
            lambda: (
                [peer.bot_messages(c["id"]) for c in (chat, GROUP, CHAT)]
                if all(peer.bot_messages(c["id"]) for c in (chat, GROUP, CHAT))
                else None
            )
        )
    (french,), (german,), (english,) = ([m["text"] for m in told] for told in said)
    assert french == privacy_text(45, words_for("French"))
    assert french.startswith("Confidentialité : ce que ce bot") and "après 45 jours" in french
    assert "after 45 days" not in french
    assert german == privacy_text(45, words_for("German")) and "Nach 45 Tagen" in german
    assert english == privacy_text(45) and "after 45 days" in english
