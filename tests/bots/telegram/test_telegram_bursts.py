"""A burst of requests, refused past a limit, leaves nothing waiting (issue 45, item 7):
the real python-telegram-bot client polling the fake Bot API, the real check service on
a SQLite file whose clock the test moves, and a
:class:`~tests.peers.fakes.fake_checker.FakeChecker` held at its debate by a
:class:`~tests.peers.fakes.fake_checker.Gate` while the burst is refused (the checks are
plumbing here).

One user forwards twenty posts at once to the bot's private chat: two are checked, in
turn, and eighteen refused in one message that says how many, why and when to send them
again; once the limit's window has passed (the clock moved, not waited for), one more is
answered with a card. The round is played again and again.
"""

from __future__ import annotations

import functools
import logging
import re
from typing import Any

import pytest

from tests.peers.fakes.fake_checker import FakeChecker, Gate
from tests.peers.fixtures.store_fixtures import Clock
from tests.peers.fixtures.telegram_setup import fake_bot, handled, telegram_settings
from tests.peers.servers.telegram_peer import FakeBotAPI, channel, user

from bots.render.sentences import OVERDUE
from bots.service.checks import CheckService

ANN = user(745, "Ann", "ann_r")
CHAT = {"id": ANN["id"], "type": "private", "first_name": "Ann"}
NEWS = channel(-1001745, "Rumour Daily", "rumour_daily")
POST = "The mayor of Springfield has banned bicycles from every street in the city."
BURST = 20
ROUNDS = 10
OVERDUE_START = OVERDUE.split(",")[0]  # "This check is taking far longer than it should"
_NOT_CHECKED = re.compile(r"^(\d+) posts? (?:was|were) not checked\.")


def _forward(peer: FakeBotAPI, text: str) -> dict[str, Any]:
    origin = {"type": "channel", "chat": NEWS, "message_id": 7, "date": 1_790_000_000}
    return peer.send(CHAT, ANN, text, forward_origin=origin)


def _is_card(message: dict[str, Any]) -> bool:
    rows = (message.get("reply_markup") or {}).get("inline_keyboard") or []
    return any(str(b.get("callback_data", "")).startswith("d:") for row in rows for b in row)


def _answers(peer: FakeBotAPI) -> dict[int, dict[str, Any]]:
    """The bot's answer to each message of the chat, as it stands now, by the message it
    replies to."""
    return {
        m["reply_to_message"]["message_id"]: m
        for m in peer.bot_messages(CHAT["id"])
        if "reply_to_message" in m
    }


def _says(peer: FakeBotAPI, message: dict[str, Any], words: str) -> bool:
    """Whether the bot's answer to ``message`` now says ``words``."""
    return words in _answers(peer).get(message["message_id"], {}).get("text", "")


def _refused(peer: FakeBotAPI) -> int:
    """How many posts the bot's answers to bursts say were not checked, in all: a burst's
    refusals are said in one message, which later refusals edit while it is recent."""
    counts = (_NOT_CHECKED.match(m.get("text", "")) for m in peer.bot_messages(CHAT["id"]))
    return sum(int(found[1]) for found in counts if found)


def _refusals_logged(records: list[logging.LogRecord]) -> int:
    return sum("refused: Limit reached" in record.getMessage() for record in records)


async def _burst_then_retry(
    peer: FakeBotAPI,
    service: CheckService,
    gate: Gate,
    clock: Clock,
    caplog: pytest.LogCaptureFixture,
    round_no: int,
) -> None:
    """One round: twenty at once (two checked in turn, eighteen refused while the first
    is held), then, past the minute, one more answered with a card."""
    gate.close()
    logged = _refusals_logged(caplog.records)
    forwards = [_forward(peer, f"{POST} Round {round_no}, post {n}.") for n in range(BURST)]
    await gate.held(1)
    await peer.wait_for(lambda: _refusals_logged(caplog.records) - logged == BURST - 2)
    gate.open()
    await handled(peer, service)  # the cards, and the burst's one refusal, are out
    answers = _answers(peer)
    cards = [f for f in forwards if _is_card(answers.get(f["message_id"], {}))]
    assert len(cards) == 2
    assert _refused(peer) == (BURST - 2) * (round_no + 1)
    said = [m["text"] for m in peer.bot_messages(CHAT["id"]) if _NOT_CHECKED.match(m["text"])]
    assert "You have asked for 2 checks in the last minute" in said[-1]
    assert said[-1].endswith("Please send them again in 60 s."), said[-1]
    clock.advance(seconds=61)  # the minute's window has passed
    again = _forward(peer, f"{POST} Round {round_no}, once more.")
    await handled(peer, service)
    assert _is_card(_answers(peer).get(again["message_id"], {}))


async def test_a_forward_after_a_refused_burst_is_answered_every_time(
    tmp_path: Any, clock: Clock, caplog: pytest.LogCaptureFixture
) -> None:
    gate = Gate()
    checker = FakeChecker(gate=gate)
    limits = {"user_per_minute": 2}
    caplog.set_level(logging.INFO, logger="bots.chat.check_flow")
    async with FakeBotAPI() as peer:
        settings = telegram_settings(peer, tmp_path, service=limits)
        async with fake_bot(settings, checker, refusal_window_s=0.05, clock=clock) as service:
            for round_no in range(ROUNDS):
                await _burst_then_retry(peer, service, gate, clock, caplog, round_no)
                clock.advance(seconds=61)  # the next burst starts with a fresh minute
    assert len(checker.runs) == ROUNDS * 3  # two of each burst, and each retry


async def test_a_refusal_held_to_be_said_once_holds_no_ones_turn(
    tmp_path: Any, clock: Clock, caplog: pytest.LogCaptureFixture
) -> None:
    """A refused forward is told in one message with the rest of its burst, held until
    the burst is over and the chat's cards are out; meanwhile it gives its place in line
    up at once, so a forward admitted after it starts when the one before is answered,
    not when the refusal is said."""
    gate = Gate()
    checker = FakeChecker(gate=gate)
    caplog.set_level(logging.INFO, logger="bots.chat.check_flow")
    async with FakeBotAPI() as peer:
        settings = telegram_settings(peer, tmp_path, service={"user_per_minute": 1})
        # A refusal held ten minutes: far past the test's bound on every wait.
        async with fake_bot(settings, checker, refusal_window_s=600, clock=clock, grace_s=0):
            gate.close()
            first = _forward(peer, f"{POST} First.")
            await gate.held(1)
            _forward(peer, f"{POST} Refused.")  # in line behind the first, then refused
            await peer.wait_for(lambda: _refusals_logged(caplog.records) == 1)
            clock.advance(seconds=61)
            third = _forward(peer, f"{POST} Third.")  # admitted: behind the first alone
            waiting = functools.partial(_says, peer, third, "In line: 1 of your posts")
            await peer.wait_for(waiting)
            gate.open()
            await peer.wait_for(lambda: _is_card(_answers(peer).get(third["message_id"], {})))
            assert _is_card(_answers(peer)[first["message_id"]])
            assert _refused(peer) == 0  # the refusal is still held, not yet said
    assert [post.text for post in checker.runs] == [f"{POST} First.", f"{POST} Third."]


async def test_a_request_not_answered_within_its_bound_is_told_and_given_up(
    tmp_path: Any,
) -> None:
    """Past ``[service] answer_within_s`` the asker is told, once, and what the request
    held is given back: its check stops (nobody else waits for it), its admission ends,
    and the next post is answered."""
    gate = Gate()
    checker = FakeChecker(gate=gate)
    service_settings = {"user_per_minute": 100, "answer_within_s": 0.2}
    async with FakeBotAPI() as peer:
        settings = telegram_settings(peer, tmp_path, service=service_settings)
        async with fake_bot(settings, checker, refusal_window_s=0.05) as service:
            gate.close()
            late = _forward(peer, f"{POST} Held.")
            await peer.wait_for(functools.partial(_says, peer, late, OVERDUE_START))
            gate.open()
            after = _forward(peer, f"{POST} Next.")
            await handled(peer, service)
            assert _is_card(_answers(peer)[after["message_id"]])
            statuses = [row.status for row, _ in service.store.checks.history(limit=5)]
    assert _refused(peer) == 0
    assert sorted(statuses) == ["cancelled", "done"]
