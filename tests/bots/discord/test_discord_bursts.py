"""A burst of requests, refused past a limit, leaves nothing waiting (issue 45, item 7):
the real discord.py client against the fake Discord, the real check service on a SQLite
file whose clock the test moves, and a :class:`~tests.peers.fakes.fake_checker.FakeChecker`
held at its debate by a :class:`~tests.peers.fakes.fake_checker.Gate` while the burst is
refused (the checks are plumbing here).

One member sends twenty ``/factcheck`` at once: two are checked, eighteen refused,
privately, with the wait; once the limit's window has passed (the clock moved, not
waited for), one more is answered with a card. The round is played again and again,
in a server and in a DM (where requests also wait their turn), so that an order of
arrival that would leave the next request waiting with nothing running shows.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from tests.peers.fakes.fake_checker import FakeChecker, Gate, fake_service
from tests.peers.fixtures.store_fixtures import Clock
from tests.peers.servers.discord_peer import Call, FakeDiscord, running_client

from bots.app.settings import Settings
from bots.discord.client import FactCheckBot

pytest_plugins = ["tests.peers.fixtures.discord_fixtures"]

POST = "The mayor of Springfield has banned bicycles from every street in the city."
ANN = 920000000000000045
EPHEMERAL = 64
BURST = 20
ROUNDS = 10
#: what a refusal by ``user_per_minute = 2`` says, then when to send again
REFUSED = "You have asked for 2 checks in the last minute, the most one person may."
StartBot = Callable[..., contextlib.AbstractAsyncContextManager[FactCheckBot]]


@pytest_asyncio.fixture
async def start_bot(
    discord_api: FakeDiscord, tmp_path: Path, clock: Clock
) -> AsyncIterator[StartBot]:
    @contextlib.asynccontextmanager
    async def start(checker: FakeChecker) -> AsyncIterator[FactCheckBot]:
        settings = Settings.model_validate(
            {
                "storage": {"path": str(tmp_path / "zofia.db"), "secret": "s3cret-for-tests-only"},
                # Two checks a minute for one member, and no server cooldown: the rate is
                # what refuses the burst.
                "service": {"user_per_minute": 2, "chat_per_minute": 100, "user_daily": 1000},
                "discord": {"progress_interval_s": 0, "guild_cooldown_s": 0},
            }
        )
        async with (
            fake_service(settings, checker, clock=clock) as running,
            running_client(FactCheckBot(settings.discord, running)) as bot,
        ):
            yield bot

    yield start


def _ends(call: Call) -> bool:
    """Whether ``call`` ends an answer: a card shown in the response, or a refusal said
    privately (a follow-up message)."""
    body = call.body or {}
    if call.method == "PATCH":
        return bool(body.get("embeds"))
    return call.method == "POST" and "/webhooks/" in call.path and "content" in body


class Endings:
    """How each interaction of ``payloads`` was answered (its card, or its refusal), as
    the fake Discord records it."""

    def __init__(self, peer: FakeDiscord, payloads: list[dict[str, Any]]) -> None:
        self.peer = peer
        self.by_token = {payload["token"]: payload["id"] for payload in payloads}
        self.ended: dict[str, Call] = {}

    def _note(self, count: int, call: Call) -> bool:
        token = next((part for part in call.path.split("/") if part.startswith("itoken-")), "")
        if token in self.by_token and _ends(call):
            self.ended.setdefault(self.by_token[token], call)
        return len(self.ended) >= count

    async def reach(self, count: int) -> None:
        """Wait until ``count`` of them are answered (the test fails, not hangs, past
        30 s)."""
        await self.peer.wait_for(functools.partial(self._note, count), timeout=30)


async def _burst_then_retry(
    peer: FakeDiscord, gate: Gate, clock: Clock, *, guild: bool, round_no: int
) -> None:
    """One round: twenty at once (two checked, eighteen refused with the wait, said while
    the two are still held), then, past the minute, one more answered with a card."""
    gate.close()
    payloads = [
        peer.slash(
            "factcheck", {"text": f"{POST} Round {round_no}, post {n}."}, user_id=ANN, guild=guild
        )
        for n in range(BURST)
    ]
    for payload in payloads:  # one after another, none awaited: a burst
        await peer.dispatch("INTERACTION_CREATE", payload)
    endings = Endings(peer, payloads)
    await gate.held(1)
    await endings.reach(BURST - 2)  # the refusals, said while the checks are held
    gate.open()
    await endings.reach(BURST)
    cards = [call for call in endings.ended.values() if call.method == "PATCH"]
    refusals = [call.body for call in endings.ended.values() if call.method == "POST"]
    assert len(cards) == 2 and len(refusals) == BURST - 2
    for said in refusals:
        assert said["flags"] == EPHEMERAL  # to the member alone
        assert said["content"].startswith(REFUSED), said["content"]
        assert said["content"].endswith(" s.") and "Please send it again in" in said["content"]
    clock.advance(seconds=61)  # the minute's window has passed
    again = peer.slash(
        "factcheck", {"text": f"{POST} Round {round_no}, once more."}, user_id=ANN, guild=guild
    )
    await peer.dispatch("INTERACTION_CREATE", again)
    retried = Endings(peer, [again])
    await retried.reach(1)
    answer = retried.ended[again["id"]]
    assert answer.method == "PATCH" and answer.body["embeds"], answer.body


@pytest.mark.parametrize("guild", [True, False], ids=["server", "dm"])
async def test_a_request_after_a_refused_burst_is_answered_every_time(
    discord_api: FakeDiscord, start_bot: StartBot, clock: Clock, guild: bool
) -> None:
    gate = Gate()
    checker = FakeChecker(gate=gate)
    async with start_bot(checker):
        for round_no in range(ROUNDS):
            await _burst_then_retry(discord_api, gate, clock, guild=guild, round_no=round_no)
            clock.advance(seconds=61)  # the next burst starts with a fresh minute
    assert len(checker.runs) == ROUNDS * 3  # two of each burst, and each retry
