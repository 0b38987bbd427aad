"""The verdict first, on Discord through the fake API: the interaction's response shows
the early card (the verdict, a line saying the explanation follows, no buttons) while
the debate runs, then the same response is edited into the whole card with its buttons.
The engine is the in-process :class:`FakeChecker` (its ``early`` event): this proves what
the bot does with an early verdict, not when the engine has one."""

from __future__ import annotations

import json
from typing import Any

from tests.bots.discord.test_discord_as_users_meet_it import (
    POST,
    StartBot,
    _card_shown,
    checker,
    start_bot,
)
from tests.peers.fakes.fake_checker import FakeChecker, Gate
from tests.peers.servers.discord_peer import Call, FakeDiscord

from bots.render.card import EXPLANATION_FOLLOWS

__all__ = ["checker", "start_bot"]

ANN = 4242
pytest_plugins = ["tests.peers.fixtures.discord_fixtures"]


def _text(call: Call) -> str:
    return json.dumps(call.body or {}, ensure_ascii=False)


async def test_the_verdict_shows_while_the_debate_runs_and_is_completed_in_place(
    discord_api: FakeDiscord, checker: FakeChecker, start_bot: StartBot
) -> None:
    checker.gate = gate = Gate()
    checker.early = True
    async with start_bot():
        payload: dict[str, Any] = discord_api.slash("factcheck", {"text": POST}, user_id=ANN)
        await discord_api.dispatch("INTERACTION_CREATE", payload)
        await gate.held()
        shown = _card_shown(payload)
        early = await discord_api.wait_for(shown, timeout=30)
        assert EXPLANATION_FOLLOWS in _text(early) and "False" in _text(early)
        assert not early.body.get("components")  # no buttons until the debate ends
        gate.open()

        def completed(call: Call) -> bool:
            return shown(call) and EXPLANATION_FOLLOWS not in _text(call)

        done = await discord_api.wait_for(completed, timeout=30)
    assert done.path == early.path  # the same response, edited
    assert done.body.get("components") and "False" in _text(done)
