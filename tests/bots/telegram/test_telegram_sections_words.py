"""A French asker's check runs and opens in French (the real python-telegram-bot client
polling the fake Bot API, the real check service, a
:class:`~tests.peers.fakes.fake_checker.FakeChecker` held at its debate): the progress
lines while it runs, and the Debate section its button opens; the debaters' own words
stay as they were written."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from tests.peers.fakes.fake_checker import FakeChecker, Gate
from tests.peers.fixtures.telegram_setup import fake_bot, telegram_settings
from tests.peers.servers.telegram_peer import BotCall, FakeBotAPI, user

# A private chat that never set a language: its asker's app is French.
ANN = user(601, "Anne") | {"language_code": "fr"}
CHAT = {"id": ANN["id"], "type": "private", "first_name": ANN["first_name"]}
POST = "The mayor of Springfield has banned bicycles from every street in the city."


def _card(peer: FakeBotAPI) -> dict[str, Any] | None:
    for message in reversed(peer.bot_messages(ANN["id"])):
        rows = (message.get("reply_markup") or {}).get("inline_keyboard") or []
        if any(b.get("callback_data", "").startswith("d:") for row in rows for b in row):
            card: dict[str, Any] = message
            return card
    return None


def _edited(peer: FakeBotAPI, line: str) -> bool:
    return any(line in str(c.params["text"]) for c in peer.sent("editMessageText", ANN["id"]))


def _replies(peer: FakeBotAPI, card: dict[str, Any]) -> list[dict[str, Any]]:
    wanted = card["message_id"]
    return [
        m
        for m in peer.bot_messages(ANN["id"])
        if (m.get("reply_to_message") or {}).get("message_id") == wanted
    ]


async def _tap(peer: FakeBotAPI, card: dict[str, Any], data: str) -> str:
    query = peer.press(card, data, ANN)

    def answered() -> BotCall | None:
        calls = peer.sent("answerCallbackQuery")
        return next((c for c in calls if c.params["callback_query_id"] == query), None)

    found: BotCall = await peer.wait_for(answered)
    return str(found.params.get("text") or "")


async def test_a_french_askers_progress_and_debate_section_are_in_french(tmp_path: Path) -> None:
    gate = Gate()
    async with FakeBotAPI() as peer:
        checker = FakeChecker(gate=gate)
        async with fake_bot(telegram_settings(peer, tmp_path), checker):
            peer.send(CHAT, ANN, POST)
            await gate.held()
            # Held at its debate: the finished steps and the running one, in French.
            finished = "✓ recherche guidée par les entités : terminé"
            await peer.wait_for(functools.partial(_edited, peer, "… débat : démarré"))
            assert _edited(peer, finished)
            gate.open()
            card = await peer.wait_for(functools.partial(_card, peer))
            check_id = next(
                b["callback_data"][2:]
                for row in card["reply_markup"]["inline_keyboard"]
                for b in row
                if b.get("callback_data", "").startswith("d:")
            )
            assert await _tap(peer, card, f"d:{check_id}") == ""
            debate = await peer.wait_for(lambda: _replies(peer, card))
            again = await _tap(peer, card, f"d:{check_id}")
    text = debate[0]["text"]
    assert text.startswith("Débat")
    assert "Tour 1 · Pour (vrai)" in text and "Tour 1 · Juge : false" in text
    assert "The minutes show no law." in text  # the debaters' words, as they wrote them
    assert "Cite la publication." in text
    assert again == "Le débat est déjà dans ce fil."
    assert not _edited(peer, "entity-guided retrieval")
