"""The verdict first, on Telegram through the fake Bot API: a check whose verdict the
evidence fixed before the debate shows its card while the debate runs (the progress
message edited into it: the verdict, its confidence, summary and sources, a line saying
the explanation follows, no buttons yet), then the same message is completed in place
with its buttons. The engine is the in-process :class:`FakeChecker` (its ``early``
event): this proves what the bot does with an early verdict, not when the engine has
one (``tests/engine/test_verdict_ready.py``)."""

from __future__ import annotations

from typing import Any

from tests.bots.telegram.test_telegram_as_users_meet_it import (
    ANN,
    CHAT,
    GROUP,
    POST,
    Start,
    _forward,
    _is_card,
    start,
)
from tests.peers.fakes.fake_checker import FakeChecker, Gate
from tests.peers.fixtures.telegram_setup import handled
from tests.peers.servers.telegram_peer import FakeBotAPI

from bots.render.card import EXPLANATION_FOLLOWS

__all__ = ["start"]


def _early_card(peer: FakeBotAPI, chat_id: int) -> dict[str, Any] | None:
    found = [m for m in peer.bot_messages(chat_id) if EXPLANATION_FOLLOWS in m.get("text", "")]
    return found[0] if found else None


async def test_the_verdict_shows_while_the_debate_runs_and_is_completed_in_place(
    start: Start,
) -> None:
    gate = Gate()
    checker = FakeChecker(gate=gate, early=True, verdict="false")
    async with start(checker) as (peer, service):
        _forward(peer, CHAT, ANN, POST)
        await gate.held()  # the debate is running
        early = await peer.wait_for(lambda: _early_card(peer, ANN["id"]))
        assert "False" in early["text"] and "80%" in early["text"]
        assert not _is_card(early) and not early.get("reply_markup", {}).get("inline_keyboard")
        gate.open()
        done = await peer.wait_for(lambda: [m for m in peer.bot_messages(ANN["id"]) if _is_card(m)])
        await handled(peer, service)
    [card] = done
    assert card["message_id"] == early["message_id"]  # the same message, completed
    assert EXPLANATION_FOLLOWS not in card["text"] and "False" in card["text"]
    assert len(peer.bot_messages(ANN["id"])) == 1
    # Every text the message showed after the early card kept its verdict.
    edits = [
        c.params["text"]
        for c in peer.sent("editMessageText", ANN["id"])
        if c.params.get("message_id") == early["message_id"]
    ]
    shown = edits[edits.index(early["text"]) if early["text"] in edits else 0 :]
    assert shown and all("False" in text for text in shown)


async def test_a_quiet_group_decides_from_the_early_verdict(start: Start) -> None:
    gate = Gate()
    checker = FakeChecker(gate=gate, early=True, verdict="false")
    async with start(checker) as (peer, service):
        await service.chats.set_settings("telegram", str(GROUP["id"]), {"auto_check": True})
        _forward(peer, GROUP, ANN, POST)  # auto-check takes forwards
        await gate.held()
        early = await peer.wait_for(lambda: _early_card(peer, GROUP["id"]))
        gate.open()
        await peer.wait_for(lambda: [m for m in peer.bot_messages(GROUP["id"]) if _is_card(m)])
        await handled(peer, service)
    [card] = [m for m in peer.bot_messages(GROUP["id"]) if _is_card(m)]
    assert card["message_id"] == early["message_id"]
