"""Guest mode (Bot API 10.0): someone in a chat the bot is not in replies to a post and
mentions the bot. The real python-telegram-bot client polls a fake Bot API on loopback
that sends the ``guest_message`` only if the bot asked for that update type, and refuses
anything the bot sends into that chat; the real check service (on a SQLite file)
checks with a :class:`FakeChecker` whose verdicts are scripted."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any

import pytest_asyncio
from telegram import Bot

from tests.peers.fakes.fake_checker import FakeChecker, fake_service, scripted_report
from tests.peers.fixtures.telegram_setup import bot_running, telegram_settings
from tests.peers.servers.telegram_peer import BOT_USERNAME, TOKEN, FakeBotAPI, group, user

from bots.render.words import words_for
from bots.service.checks import CheckService
from bots.service.records import CardState, Failed, Outcome
from bots.telegram.context import TelegramContext
from bots.telegram.guest import post_delivered_or_guest
from bots.telegram.inputs import HOW_TO
from storage.deliveries import Claim
from zofia_engine.post import Post

ANN = user(801, "Ann", "ann_g")
BOB = user(802, "Bob")
OUTSIDE = group(-100900, "Family chat")  # the bot is not a member
PUBLIC = "https://zofia.example.org"
POST = "The mayor of Springfield has banned bicycles from every street in the city."
CHECK_ID = "abcDEF123_-xyz45"
OTHER = "Scientists in Chicago say that drinking coffee at night doubles your lifespan."


class Bed:
    """The fake Bot API, the service and its scripted checker, the bot polling them."""

    def __init__(self, peer: FakeBotAPI, service: CheckService, checker: FakeChecker) -> None:
        self.peer = peer
        self.service = service
        self.checker = checker

    def ask(self, post: str | None, asker: dict[str, Any] = ANN) -> str:
        """A guest message from ``asker`` mentioning the bot, in reply to a post by Bob
        (none when ``post`` is ``None``); its guest query id."""
        replied = self.peer.compose(OUTSIDE, BOB, post) if post is not None else None
        text = f"@{BOT_USERNAME} is this true?"
        return str(self.peer.send_guest(OUTSIDE, asker, text, reply_to=replied)["guest_query_id"])

    async def answer(self, query_id: str) -> dict[str, Any]:
        found: dict[str, Any] = await self.peer.wait_for(
            lambda: self.peer.guest_answers.get(query_id), 30
        )
        return found

    def calls(self, method: str) -> int:
        """Every call of ``method``, failed ones included."""
        return sum(1 for c in self.peer.calls if c.method == method)


Start = Callable[..., AbstractAsyncContextManager[Bed]]


@pytest_asyncio.fixture
async def start(tmp_path: Path) -> AsyncIterator[Start]:
    """Runs the bot with the ``[service]`` given and ``[site] public_url`` set; the
    block's end waits for its checks (so that every call is counted after it)."""

    @asynccontextmanager
    async def run(service: dict[str, Any] | None = None) -> AsyncIterator[Bed]:
        checker = FakeChecker(verdict="misleading", summary="The council passed no such law.")
        async with FakeBotAPI() as peer:
            settings = telegram_settings(
                peer, tmp_path, service=service or {}, site={"public_url": PUBLIC}
            )
            async with (
                fake_service(settings, checker) as checks,
                bot_running(settings, checks),
            ):
                yield Bed(peer, checks, checker)

    yield run


def _nothing_sent_into(bed: Bed) -> None:
    """The bot is not in the guest's chat: it sent nothing there, not even a refused try."""
    assert [c for c in bed.peer.calls if c.params.get("chat_id") == OUTSIDE["id"]] == []
    for method in ("sendMessage", "editMessageText", "setMessageReaction"):
        assert bed.calls(method) == 0, method


async def test_a_guest_gets_one_answer_with_the_verdict(start: Start) -> None:
    async with start() as bed:
        query_id = bed.ask(POST)
        answer = await bed.answer(query_id)
        link = re.fullmatch(
            rf'<a href="{re.escape(PUBLIC)}/c/([\w-]+)">Full report</a>',
            answer["html"].split("\n\n")[-1],
        )
        assert link is not None
        # The link is the check's page, and the check was asked in the guest's chat.
        asked = await bed.service.chats.check(link.group(1), "telegram", str(OUTSIDE["id"]))
        assert asked is not None
    # The bot asked for guest messages: the fake sends only the types it names.
    assert bed.peer.allowed_updates is not None
    assert "guest_message" in bed.peer.allowed_updates
    assert bed.calls("answerGuestQuery") == 1
    assert [post.text for post in bed.checker.runs] == [POST]
    assert answer["text"].split("\n\n") == [
        "⚠️ Misleading: missing context · confidence 80%",
        "The council passed no such law.",
        "Full report",
    ]
    assert answer["result"]["type"] == "article"
    assert answer["result"]["title"] == "Misleading: missing context"
    _nothing_sent_into(bed)


async def test_a_guest_mention_with_no_replied_post_gets_the_help_line(start: Start) -> None:
    async with start() as bed:
        answer = await bed.answer(bed.ask(None))
    assert answer["text"] == HOW_TO
    assert bed.calls("answerGuestQuery") == 1
    assert bed.checker.runs == []
    _nothing_sent_into(bed)


async def test_a_guest_is_answered_in_the_language_of_their_app(start: Start) -> None:
    dora = user(803, "Dora") | {"language_code": "de"}
    async with start() as bed:
        answer = await bed.answer(bed.ask(None, asker=dora))
    german = words_for("German")(HOW_TO)
    assert german != HOW_TO and answer["text"] == german
    _nothing_sent_into(bed)


async def test_the_limits_count_a_guests_checks_as_anyones(start: Start) -> None:
    async with start({"user_per_minute": 1}) as bed:
        first = await bed.answer(bed.ask(POST))
        second = await bed.answer(bed.ask(OTHER))
        other = await bed.answer(bed.ask(OTHER, asker=BOB))  # Bob has his own minute
    assert first["text"].startswith("⚠️ Misleading")
    assert second["text"].startswith("You have asked for 1 check in the last minute")
    assert other["text"].startswith("⚠️ Misleading")
    assert [post.text for post in bed.checker.runs] == [POST, OTHER]
    assert bed.calls("answerGuestQuery") == 3
    _nothing_sent_into(bed)


async def test_a_queued_guest_check_is_answered_by_its_deliver_job(tmp_path: Path) -> None:
    async with FakeBotAPI() as peer:
        settings = telegram_settings(peer, tmp_path, site={"public_url": PUBLIC})
        async with (
            fake_service(settings, FakeChecker()) as service,
            Bot(TOKEN, base_url=f"{peer.root}/bot") as bot,
        ):
            ctx = TelegramContext(service, settings.telegram, public_url=PUBLIC)
            done = peer.send_guest(OUTSIDE, ANN, f"@{BOT_USERNAME} true?")
            failed = peer.send_guest(OUTSIDE, ANN, f"@{BOT_USERNAME} true?")
            outcome = Outcome(CHECK_ID, scripted_report(Post(text=POST), verdict="true"))
            timed_out = Failed(CHECK_ID, "the judge timed out")
            for query, found in ((done, CardState(outcome)), (failed, CardState(timed_out))):
                target = {"chat_id": OUTSIDE["id"], "guest_query_id": query["guest_query_id"]}
                await post_delivered_or_guest(ctx, bot, Claim(CHECK_ID, "telegram", target), found)
    card = peer.guest_answers[done["guest_query_id"]]
    assert card is not None
    assert card["text"].startswith("✅ True · confidence 80%\n\n")
    assert card["html"].endswith(f'<a href="{PUBLIC}/c/{CHECK_ID}">Full report</a>')
    sentence = peer.guest_answers[failed["guest_query_id"]]
    assert sentence is not None
    assert sentence["text"].startswith("The check could not finish: a service it relies on")
    assert [c.method for c in peer.calls if c.method != "getMe"] == ["answerGuestQuery"] * 2
