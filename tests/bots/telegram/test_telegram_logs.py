"""No raw chat or user id in the log (issue 45): a whole Telegram session (the real
python-telegram-bot client polling the fake Bot API, the real check service on a SQLite
file, a :class:`~tests.peers.fakes.fake_checker.FakeChecker`) with every log record
captured at DEBUG, then the log searched for every id the session used.

A private chat's id is its user's id, so a line naming a chat by id names a person.
The session walks the paths that log a chat (a forged button, a shared link that opens
nothing, a group's cooldown, a refused review, a follow-up) and the client library's own
debug lines (every request's parameters, every update whole), which the bot keeps out.
"""

from __future__ import annotations

import functools
import logging
from pathlib import Path
from typing import Any

import pytest

from tests.peers.fakes.fake_checker import FakeChecker
from tests.peers.fixtures.telegram_setup import SECRET, fake_bot, handled, telegram_settings
from tests.peers.servers.telegram_peer import BotCall, FakeBotAPI, group, user

from bots.telegram.share_links import share_token
from storage.keys import hash_chat

# Ids long enough that no other number of a log line (a message id, a time) holds them.
ANN = user(7123456789, "Ann", "ann_logs")  # an admin of the group
BOB = user(7234567891, "Bob")
GROUP = group(-1009988776655, "Rumour mill")
POST = "The mayor of Springfield has banned bicycles from every street in the city."
OTHER = "Scientists in Chicago say that drinking coffee at night doubles your lifespan."


def private(sender: dict[str, Any]) -> dict[str, Any]:
    return {"id": sender["id"], "type": "private", "first_name": sender["first_name"]}


def buttons(message: dict[str, Any]) -> list[str]:
    rows = (message.get("reply_markup") or {}).get("inline_keyboard") or []
    return [b.get("callback_data", "") for row in rows for b in row]


def card_in(peer: FakeBotAPI, chat_id: int) -> dict[str, Any] | None:
    cards = [m for m in peer.bot_messages(chat_id) if any(d[:2] == "d:" for d in buttons(m))]
    return cards[-1] if cards else None


def reply_to(peer: FakeBotAPI, message: dict[str, Any]) -> dict[str, Any] | None:
    chat, wanted = message["chat"]["id"], message["message_id"]
    found = [
        m
        for m in peer.bot_messages(chat)
        if (m.get("reply_to_message") or {}).get("message_id") == wanted
    ]
    return found[-1] if found else None


async def tap(peer: FakeBotAPI, message: dict[str, Any], data: str, who: dict[str, Any]) -> str:
    """Press a button; the answer the tap got."""
    query = peer.press(message, data, who)

    def answered() -> BotCall | None:
        calls = peer.sent("answerCallbackQuery")
        return next((c for c in calls if c.params["callback_query_id"] == query), None)

    found: BotCall = await peer.wait_for(answered)
    return str(found.params.get("text") or "")


async def test_no_raw_chat_or_user_id_reaches_the_log_of_a_whole_session(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    async with FakeBotAPI(admins={ANN["id"]}) as peer:
        settings = telegram_settings(peer, tmp_path, telegram={"chat_cooldown_s": 600})
        checker = FakeChecker(verdict="unproven")
        # The cooldown's refusal said once its burst's window (50 ms) is over, not 1.5 s.
        async with fake_bot(settings, checker, group_max_rate=0, refusal_window_s=0.05) as service:
            # A private chat: the first run, a post and its card, its buttons, a question.
            chat = private(ANN)
            peer.send(chat, ANN, "/start")
            peer.send(chat, ANN, POST)
            card = await peer.wait_for(functools.partial(card_in, peer, ANN["id"]))
            check_id = buttons(card)[0][2:]
            question = peer.send(chat, ANN, "Who says the law was never passed?", reply_to=card)
            await peer.wait_for(functools.partial(reply_to, peer, question))
            await tap(peer, card, f"d:{check_id}", ANN)
            await tap(peer, card, f"u:{check_id}", ANN)
            assert "not found" in await tap(peer, card, "e:AAAAAAAAAAAAAAAA", ANN)  # forged
            # Shared links: one that opens nothing, and Ann's card opened by Bob.
            peer.send(chat, ANN, "/start c_notatoken")
            token = share_token(service.secret, check_id)
            peer.send(private(BOB), BOB, f"/start c_{token}")
            await peer.wait_for(functools.partial(card_in, peer, BOB["id"]))
            # A group: a check, a second one refused by the cooldown, two Review taps.
            post = peer.send(GROUP, BOB, OTHER)
            peer.send(GROUP, BOB, "/check", reply_to=post)
            group_card = await peer.wait_for(functools.partial(card_in, peer, GROUP["id"]))
            again = peer.send(GROUP, BOB, "/check", reply_to=post)
            await peer.wait_for(functools.partial(reply_to, peer, again))
            group_check = buttons(group_card)[0][2:]
            assert "admin" in await tap(peer, group_card, f"r:{group_check}", BOB)  # refused
            await tap(peer, group_card, f"r:{group_check}", ANN)
            await peer.wait_for(functools.partial(reply_to, peer, group_card))
            await handled(peer, service)
    logged = caplog.text
    # The paths that name a chat did log, by its keyed hash.
    for said, chat_id in (
        ("button for an unknown or foreign check in chat", ANN["id"]),
        ("a shared link in chat", ANN["id"]),
        ("refused: cooldown", GROUP["id"]),
    ):
        line = next(r.getMessage() for r in caplog.records if said in r.getMessage())
        assert hash_chat(SECRET.encode(), "telegram", str(chat_id))[:12] in line, line
    assert any(r.name.startswith("telegram") for r in caplog.records)  # the client logs too
    for raw in (ANN["id"], BOB["id"], GROUP["id"]):
        assert str(abs(raw)) not in logged, raw
    assert "9988776655" not in logged  # nor the group's id without its -100 prefix
