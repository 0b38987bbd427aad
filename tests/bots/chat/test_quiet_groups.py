"""Quiet in groups: a group's auto-check replies with a card only to a sure alarm (a
false or misleading post, a scam) or a post a moderator reviewed so; any other verdict
gets one reaction on the post, and an opinion nothing. An explicit ask always gets the
card. The real python-telegram-bot client polls a fake Bot API on loopback; the real
check service (on a SQLite file) checks with a :class:`FakeChecker` whose verdicts are
scripted (its false and misleading verdicts are 80% sure; unproven ones unmeasured)."""

from __future__ import annotations

import datetime as dt
import json
import logging
import math
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest
import pytest_asyncio
from telegram import Bot

from tests.peers.fakes.fake_checker import FakeChecker, fake_service, review_as, scripted_report
from tests.peers.fixtures.telegram_setup import fake_bot, handled, telegram_settings
from tests.peers.servers.telegram_peer import FakeBotAPI, group, user

from bots.app.settings import Settings
from bots.chat.check_flow import card_target
from bots.chat.quiet import (
    DEFAULT_MIN_CONFIDENCE,
    QUIET_MIN_CONFIDENCE,
    group_answer,
    min_confidence_of,
    parse_min_confidence,
)
from bots.render.languages import LANGUAGE_KEY
from bots.service.chats import ChatRecords
from bots.service.checks import CheckService
from bots.service.records import CardState, Message, Outcome
from bots.service.reviews import apply_review
from bots.telegram.check_flow import AUTO_CHECK
from bots.telegram.context import TelegramContext
from bots.telegram.deliveries import REACTION, delivery_target, post_delivered
from storage.deliveries import Claim
from storage.reviews import Review
from zofia_engine.post import Post
from zofia_engine.report import Confidence, Report

ANN = user(801, "Ann", "ann_q")  # a group admin
BOB = user(802, "Bob")
GROUP = group(-100800, "Rumour mill")
POST = "The mayor of Springfield has banned bicycles from every street in the city."
OTHER = "Scientists in Chicago say that drinking coffee at night doubles your lifespan."
ORIGIN = {"type": "user", "sender_user": user(77, "Carl"), "date": 1_790_000_000}
TIMEOUT_S = 20.0


# -- the rule ----------------------------------------------------------------------------


def _report(verdict: str, confidence: float | None = None, **changes: Any) -> Report:
    report = scripted_report(Post(text=POST), verdict=verdict)
    update: dict[str, Any] = {"confidence": Confidence(value=confidence, basis="scripted")}
    return report.model_copy(update=update | changes)


def _reviewed(report: Report, to: str) -> Report:
    review = Review(
        id="r1",
        check_id="c1",
        reviewer="h",
        platform="telegram",
        created_at=dt.datetime(2026, 1, 2, tzinfo=dt.UTC),
        from_verdict=report.verdict,
        to_verdict=to,
        note="Checked with the council.",
        link="",
    )
    return apply_review(report, review)


@pytest.mark.parametrize("verdict", ["false", "misleading"])
@pytest.mark.parametrize(
    ("confidence", "least", "answer"),
    [
        (0.6, 0.6, "card"),  # at the threshold: a card
        (0.5999, 0.6, "reaction"),  # just under it: a reaction
        (0.6001, 0.6, "card"),
        (1.0, 1.0, "card"),
        (0.99, 1.0, "reaction"),
        (0.0, 0.0, "card"),  # 0% lets every alarm through
        (None, 0.9, "card"),  # unmeasured (no token probabilities): the verdict decides
    ],
)
def test_an_alarm_gets_the_card_at_or_above_the_least_confidence(
    verdict: str, confidence: float | None, least: float, answer: str
) -> None:
    assert group_answer(_report(verdict, confidence), least) == answer


@pytest.mark.parametrize("verdict", ["true", "unproven", "undetermined"])
def test_no_alarm_gets_a_reaction_however_sure(verdict: str) -> None:
    assert group_answer(_report(verdict, 0.99), 0.0) == "reaction"
    assert group_answer(_report(verdict, None), 0.6) == "reaction"


@pytest.mark.parametrize("verdict", ["no_claim", "satire"])
def test_opinions_and_satire_get_nothing(verdict: str) -> None:
    assert group_answer(scripted_report(Post(text=POST), verdict=verdict), 0.0) == "nothing"


@pytest.mark.parametrize(
    ("probability", "answer"), [(None, "card"), (0.6, "card"), (0.59, "reaction"), (0.95, "card")]
)
def test_a_scam_is_as_sure_as_its_triage(probability: float | None, answer: str) -> None:
    scam = scripted_report(Post(text=POST), verdict="scam")
    assert scam.triage is not None
    scam = scam.model_copy(
        update={"triage": scam.triage.model_copy(update={"probability": probability})}
    )
    assert group_answer(scam, 0.6) == answer


def test_a_moderators_review_to_an_alarm_needs_no_confidence() -> None:
    # Changed to false: the machine's confidence is dropped, the card comes anyway.
    changed = _reviewed(_report("unproven", None), "false")
    assert changed.verdict == "false" and changed.confidence.value is None
    assert group_answer(changed, 1.0) == "card"
    assert group_answer(_reviewed(_report("true", 0.9), "misleading"), 1.0) == "card"
    # Confirmed false at a low confidence: the moderator's word outweighs the threshold.
    assert group_answer(_reviewed(_report("false", 0.3), "false"), 0.6) == "card"
    # Reviewed away from false: no alarm, whatever the machine said.
    assert group_answer(_reviewed(_report("false", 0.95), "true"), 0.0) == "reaction"
    assert group_answer(_reviewed(_report("false", 0.95), "unproven"), 0.0) == "reaction"


def test_a_stored_least_confidence_is_a_number_from_0_to_1_or_the_default() -> None:
    assert min_confidence_of(0.75) == 0.75 and min_confidence_of(0) == 0.0
    assert min_confidence_of(1) == 1.0
    for odd in (None, "0.7", True, 1.5, -0.1, math.nan, [0.7]):
        assert min_confidence_of(odd) == DEFAULT_MIN_CONFIDENCE


@pytest.mark.parametrize(
    ("typed", "least"),
    [("70%", 0.7), ("70", 0.7), ("0.7", 0.7), (" 85 % ", 0.85), ("0", 0.0), ("100%", 1.0)],
)
def test_an_admin_types_the_least_confidence_as_a_percentage(typed: str, least: float) -> None:
    assert parse_min_confidence(typed) == least


@pytest.mark.parametrize("typed", ["high", "150%", "-5", "nan", "inf", ""])
def test_a_least_confidence_out_of_range_is_refused(typed: str) -> None:
    with pytest.raises(ValueError, match="confidence"):
        parse_min_confidence(typed)


# -- the deliver job (queued mode) -------------------------------------------------------


class _RecordingBot:
    """What a deliver job sends, recorded instead of sent."""

    def __init__(self) -> None:
        self.sent: list[tuple[int, str, dict[str, Any]]] = []
        self.reactions: list[tuple[int, int, Any]] = []

    async def send_message(self, chat_id: int, text: str, **params: Any) -> SimpleNamespace:
        self.sent.append((chat_id, text, params))
        return SimpleNamespace(message_id=len(self.sent))

    async def set_message_reaction(self, chat_id: int, message_id: int, **params: Any) -> None:
        self.reactions.append((chat_id, message_id, params["reaction"]))


async def test_a_deliver_job_answers_an_unasked_check_by_the_same_rule(tmp_path: Path) -> None:
    settings = Settings.model_validate(
        {"storage": {"path": str(tmp_path / "zofia.db"), "secret": "s3cret-for-tests"}}
    )
    post = Post(text=POST)
    async with fake_service(settings, FakeChecker()) as service:
        ctx = TelegramContext(service, settings.telegram)

        async def deliver(report: Report, target: dict[str, Any]) -> _RecordingBot:
            bot = _RecordingBot()
            stored = json.loads(json.dumps(target))  # as the deliveries table keeps it
            outcome = Outcome("abcDEF123_-xyz45", report)
            claim = Claim(outcome.check_id, "telegram", stored)
            await post_delivered(ctx, cast(Bot, bot), claim, CardState(outcome))
            return bot

        card = card_target(Message.of(post), None)
        target = delivery_target(-100800, card, reply_to=5, min_confidence=0.9)
        assert target["unasked"] and target["min_confidence"] == 0.9
        # 80% sure it is false, where 90% is asked: a reaction on the post, no card.
        unsure = await deliver(_report("false", 0.8), target)
        assert unsure.reactions == [(-100800, 5, REACTION)] and unsure.sent == []
        sure = await deliver(_report("false", 0.95), target)
        assert sure.reactions == [] and len(sure.sent) == 1
        chat_id, text, params = sure.sent[0]
        assert chat_id == -100800 and text.startswith("❌")
        assert params["reply_parameters"].message_id == 5
        satire = await deliver(scripted_report(post, verdict="satire"), target)
        assert satire.reactions == [] and satire.sent == []
        unproven = await deliver(_report("unproven"), target)
        assert unproven.reactions == [(-100800, 5, REACTION)] and unproven.sent == []
        # A target recorded before it held the least confidence: the default, 60%.
        del target["min_confidence"]
        older = await deliver(_report("false", 0.8), target)
        assert older.reactions == [] and len(older.sent) == 1
        # An asked check's target is unchanged: no threshold, the card always.
        asked = delivery_target(801, card, message_id=9)
        assert "min_confidence" not in asked and "unasked" not in asked


# -- the bot in a group ------------------------------------------------------------------


@dataclass
class Group:
    peer: FakeBotAPI
    checker: FakeChecker
    service: CheckService

    def forward(self, text: str = POST) -> dict[str, Any]:
        return self.peer.send(GROUP, BOB, text, forward_origin=ORIGIN)

    def cards(self) -> list[dict[str, Any]]:
        return [m for m in self.peer.bot_messages(GROUP["id"]) if _is_card(m)]

    async def reaction_on(self, message: dict[str, Any]) -> str:
        key = (GROUP["id"], message["message_id"])
        return str(await self.peer.wait_for(lambda: self.peer.reactions.get(key), TIMEOUT_S))

    async def card_replying_to(self, message: dict[str, Any]) -> dict[str, Any]:
        def found() -> dict[str, Any] | None:
            return next(
                (
                    m
                    for m in self.cards()
                    if m.get("reply_to_message", {}).get("message_id") == message["message_id"]
                ),
                None,
            )

        return cast(dict[str, Any], await self.peer.wait_for(found, TIMEOUT_S))

    async def settings(self, sender: dict[str, Any], command: str) -> str:
        said = len(self.peer.bot_messages(GROUP["id"]))
        self.peer.send(GROUP, sender, command)
        answers = await self.peer.wait_for(
            lambda: self.peer.bot_messages(GROUP["id"])[said:], TIMEOUT_S
        )
        return str(answers[0]["text"])


def _is_card(message: dict[str, Any]) -> bool:
    rows = (message.get("reply_markup") or {}).get("inline_keyboard") or []
    return any(b.get("callback_data", "").startswith("d:") for row in rows for b in row)


@pytest_asyncio.fixture
async def chat(tmp_path: Path) -> AsyncIterator[Group]:
    """The bot in a group whose admin turned auto-check on."""
    async with FakeBotAPI(admins={ANN["id"]}) as peer:
        checker = FakeChecker()
        async with fake_bot(telegram_settings(peer, tmp_path), checker) as service:
            found = Group(peer, checker, service)
            said = await found.settings(ANN, "/settings autocheck on")
            assert "Auto-check of forwarded posts is on" in said
            yield found


async def test_an_unproven_auto_check_gets_a_reaction_and_no_card(chat: Group) -> None:
    chat.checker.verdict = "unproven"
    forwarded = chat.forward()
    assert await chat.reaction_on(forwarded) == "👀" == REACTION
    assert chat.cards() == []
    # Nothing else was said: only the settings answer is the bot's.
    assert len(chat.peer.bot_messages(GROUP["id"])) == 1
    [reacted] = chat.peer.sent("setMessageReaction", GROUP["id"])
    assert reacted.params["reaction"] == [{"type": "emoji", "emoji": "👀"}]
    assert len(chat.checker.runs) == 1


async def test_a_sure_false_auto_check_gets_the_card(chat: Group) -> None:
    chat.checker.verdict = "false"  # 80% sure, above the default 60%
    forwarded = chat.forward()
    card = await chat.card_replying_to(forwarded)
    assert card["text"].startswith("❌ False · confidence 80%")
    assert "From user Carl" in card["text"]
    assert chat.peer.sent("setMessageReaction") == []


async def test_an_explicit_check_of_the_unproven_post_gets_the_card_from_the_store(
    chat: Group,
) -> None:
    chat.checker.verdict = "unproven"
    forwarded = chat.forward()
    await chat.reaction_on(forwarded)
    ask = chat.peer.send(GROUP, BOB, "/check", reply_to=forwarded)
    card = await chat.card_replying_to(ask)
    assert card["text"].startswith("❔ Unproven")
    assert "Repeat of a check" in card["text"]
    assert len(chat.checker.runs) == 1  # answered from the store at once
    assert len(chat.cards()) == 1 and len(chat.peer.sent("setMessageReaction")) == 1


async def test_the_least_confidence_is_a_chat_setting_for_admins(chat: Group) -> None:
    said = await chat.settings(ANN, "/settings")
    assert "at least 60% sure" in said and "👀 reaction" in said
    refused = await chat.settings(BOB, "/settings confidence 90%")
    assert refused == "Only a chat admin can change the settings."
    wrong = await chat.settings(ANN, "/settings confidence very")
    assert wrong.startswith("Give the confidence as a percentage")
    changed = await chat.settings(ANN, "/settings confidence 90%")
    assert "at least 90% sure" in changed
    assert (
        await chat.service.chats.settings(
            "telegram", str(GROUP["id"]), {"quiet_min_confidence": None}
        )
    )["quiet_min_confidence"] == 0.9
    # False at 80%, where 90% is asked: a reaction, no card.
    forwarded = chat.forward()
    assert await chat.reaction_on(forwarded) == REACTION
    assert chat.cards() == []


async def test_a_repeat_of_a_post_a_moderator_reviewed_to_false_gets_the_card(
    chat: Group,
) -> None:
    chat.checker.verdict = "unproven"
    first = chat.forward()
    await chat.reaction_on(first)
    [(check, _)] = chat.service.store.checks.history()
    await review_as(
        chat.service,
        check.id,
        ("telegram", str(ANN["id"])),
        "false",
        "Council denied it.",
        chat_id=str(GROUP["id"]),
    )
    again = chat.forward()
    card = await chat.card_replying_to(again)
    assert card["text"].startswith("❌ False")
    assert "Council denied it." in card["text"]
    assert len(chat.checker.runs) == 1


async def test_opinions_get_nothing_and_a_refused_reaction_is_harmless(
    chat: Group, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    chat.checker.verdict = "no_claim"
    chat.forward("Good morning all, what lovely weather!")
    await chat.peer.wait_for(lambda: len(chat.service.store.checks.history()) == 1, TIMEOUT_S)
    chat.peer.no_reactions.add(GROUP["id"])  # the group's admins allow no reactions
    chat.checker.verdict = "true"
    forwarded = chat.forward(OTHER)
    await chat.peer.wait_for(
        lambda: [c for c in chat.peer.calls if c.method == "setMessageReaction"], TIMEOUT_S
    )
    await chat.peer.wait_for(
        lambda: any("could not react" in r.getMessage() for r in caplog.records), TIMEOUT_S
    )
    await handled(chat.peer, chat.service)  # nothing more comes of either forward
    assert (GROUP["id"], forwarded["message_id"]) not in chat.peer.reactions
    assert chat.cards() == [] and len(chat.peer.bot_messages(GROUP["id"])) == 1
    assert not [r for r in caplog.records if r.name.startswith("bots") and r.exc_info]


async def test_an_auto_check_reads_its_chats_settings_in_one_trip(
    chat: Group, monkeypatch: pytest.MonkeyPatch
) -> None:
    trips: list[set[str]] = []
    many = ChatRecords.settings

    async def settings(chats: ChatRecords, platform: str, chat_id: str, defaults: Any) -> Any:
        trips.append(set(defaults))
        return await many(chats, platform, chat_id, defaults)

    monkeypatch.setattr(ChatRecords, "settings", settings)
    chat.checker.verdict = "unproven"
    assert await chat.reaction_on(chat.forward()) == REACTION
    # Whether auto-check is on, the chat's language and its least confidence: one read.
    assert trips == [{AUTO_CHECK, LANGUAGE_KEY, QUIET_MIN_CONFIDENCE}]
