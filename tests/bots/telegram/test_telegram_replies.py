"""What a person reads on Telegram: every input answered once, a burst's refusals in one
message after its cards, and refusals logged as one line. The real python-telegram-bot
client polls a fake Bot API on loopback; the real check service (on a SQLite file)
checks with a :class:`FakeChecker` whose verdicts are scripted."""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest
import pytest_asyncio
from telegram import Message
from telegram.error import TelegramError

from tests.peers.fakes.fake_checker import FakeChecker, fake_service, scripted_report
from tests.peers.fixtures.telegram_setup import bot_running, fake_bot, telegram_settings
from tests.peers.servers.telegram_peer import BOT_USERNAME, BotCall, FakeBotAPI, group, user

from bots.chat.cooldowns import Cooldowns
from bots.render.card import verdict_card
from bots.render.sentences import UNSUPPORTED_INPUT, cooldown_sentence
from bots.render.words import words_for
from bots.service.records import Outcome
from bots.telegram.buttons import GONE
from bots.telegram.check_flow import Asked, TelegramScreen, check_message
from bots.telegram.context import TelegramContext
from bots.telegram.inputs import HOW_TO
from bots.telegram.posts import NOTHING_TO_CHECK
from bots.telegram.refusals import Refusals
from zofia_engine.post import Post
from zofia_engine.text import EMPTY_POST

ANN = user(701, "Ann", "ann_r")
BOB = user(702, "Bob")
CHAT = {"id": ANN["id"], "type": "private", "first_name": "Ann"}
CAROL = user(703, "Carol")
GROUP = group(-100400, "Rumour mill")
POST = "The mayor of Springfield has banned bicycles from every street in the city."
#: a post with no visible character (U+3164 HANGUL FILLER)
BLANK = "\u3164\u3164\u3164"
Start = Callable[..., AbstractAsyncContextManager[FakeBotAPI]]


@pytest_asyncio.fixture
async def start(tmp_path: Path) -> AsyncIterator[Start]:
    """Runs the bot on a fake Bot API with the ``[service]`` and ``[telegram]`` given."""

    @asynccontextmanager
    async def run(
        service: dict[str, Any],
        refusal_window_s: float | None = None,
        cooldowns: Cooldowns | None = None,
        **telegram: Any,
    ) -> AsyncIterator[FakeBotAPI]:
        async with FakeBotAPI() as peer:
            settings = telegram_settings(peer, tmp_path, service=service, telegram=telegram)
            checker = FakeChecker()
            held = refusal_window_s
            async with fake_bot(settings, checker, refusal_window_s=held, cooldowns=cooldowns):
                yield peer

    yield run


class Ticks:
    """A settable monotonic clock, for the groups' cooldowns."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _is_card(message: dict[str, Any]) -> bool:
    rows = (message.get("reply_markup") or {}).get("inline_keyboard") or []
    return any(b.get("callback_data", "").startswith("d:") for row in rows for b in row)


def _texts(peer: FakeBotAPI, chat_id: int) -> list[str]:
    return [str(m.get("text", "")) for m in peer.bot_messages(chat_id)]


def _refusal_calls(peer: FakeBotAPI, chat_id: int) -> list[BotCall]:
    """Every message sent or edited to tell the chat that posts were not checked."""
    return [
        c
        for method in ("sendMessage", "editMessageText")
        for c in peer.sent(method, chat_id)
        if "not checked" in str(c.params.get("text"))
        or "Please send it again" in str(c.params.get("text"))
    ]


def _card_calls(peer: FakeBotAPI, chat_id: int) -> list[BotCall]:
    return [
        c
        for method in ("sendMessage", "editMessageText")
        for c in peer.sent(method, chat_id)
        if "d:" in str(c.params.get("reply_markup"))
    ]


async def test_a_burst_gets_its_cards_first_then_one_refusal(
    start: Start, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    async with start({"user_per_minute": 5}) as peer:
        for n in range(30):  # 30 forwards in about 1.7 s
            peer.send(CHAT, ANN, f"{POST} Report number {n}.")
            await asyncio.sleep(0.057)

        def summed() -> int:
            cards = [m for m in peer.bot_messages(ANN["id"]) if _is_card(m)]
            refused = [t for t in _texts(peer, ANN["id"]) if "were not checked" in t]
            counted = int(refused[0].split()[0]) if refused else 0
            return len(cards) + counted

        await peer.wait_for(lambda: summed() == 30, 40)
    refusals = _refusal_calls(peer, ANN["id"])
    cards = _card_calls(peer, ANN["id"])
    assert len(cards) == 5
    assert 1 <= len(refusals) <= 2
    assert max(c.at for c in cards) < min(c.at for c in refusals)
    said = [t for t in _texts(peer, ANN["id"]) if "not checked" in t]
    assert len(said) == 1 and said[0].startswith("25 posts were not checked.")
    # It names the limit that refused them, and when it frees up.
    assert "You have asked for 5 checks in the last minute, the most one person may." in said[0]
    assert re.search(r"Please send them again in \d+ s\.$", said[0]), said[0]
    # Each refusal is one INFO line, with no traceback.
    refused = [r for r in caplog.records if "refused" in r.getMessage()]
    assert len(refused) == 25
    assert all(r.levelno == logging.INFO and r.exc_info is None for r in refused)
    assert not [r for r in caplog.records if r.name.startswith("bots") and r.exc_info]


async def test_a_blank_post_costs_no_check_and_starts_no_group_cooldown(start: Start) -> None:
    async with start({"user_daily": 1}, chat_cooldown_s=60) as peer:
        # A private chat: the blank post is nothing to check, and counts for nothing.
        blank = peer.send(CHAT, ANN, BLANK)
        await peer.wait_for(lambda: _texts(peer, ANN["id"]))
        [answer] = peer.bot_messages(ANN["id"])
        assert answer["text"] == NOTHING_TO_CHECK
        assert answer["reply_to_message"]["message_id"] == blank["message_id"]
        peer.send(CHAT, ANN, POST)
        await peer.wait_for(lambda: any(_is_card(m) for m in peer.bot_messages(ANN["id"])))
        assert not [t for t in _texts(peer, ANN["id"]) if "asked for" in t]

        # A group: /check on a blank post, and /check with blank text, start no cooldown.
        post = peer.send(GROUP, BOB, f"\u200b{BLANK}\u2060")
        peer.send(GROUP, CAROL, "/check", reply_to=post)
        await peer.wait_for(lambda: len(peer.bot_messages(GROUP["id"])) == 1)
        peer.send(GROUP, CAROL, f"/check {BLANK}")
        await peer.wait_for(lambda: len(peer.bot_messages(GROUP["id"])) == 2)
        assert _texts(peer, GROUP["id"]) == [NOTHING_TO_CHECK, HOW_TO]
        peer.send(GROUP, CAROL, f"/check {POST}")
        await peer.wait_for(lambda: any(_is_card(m) for m in peer.bot_messages(GROUP["id"])))
        assert not [t for t in _texts(peer, GROUP["id"]) if "again in" in t]


async def test_check_message_refuses_a_blank_post_before_it_counts(tmp_path: Path) -> None:
    """The request itself refuses an empty post before the limits count it, whatever
    handed it over (as Discord's does)."""
    async with FakeBotAPI() as peer:
        settings = telegram_settings(peer, tmp_path, service={"user_daily": 1})
        async with (
            fake_service(settings, FakeChecker()) as service,
            bot_running(settings, service) as application,
        ):
            ctx = application.bot_data["zofia"]
            sent = peer.send(CHAT, ANN, BLANK)  # the handlers answer it too
            await peer.wait_for(lambda: _texts(peer, ANN["id"]))
            message = Message.de_json(sent, application.bot)
            assert message is not None
            await check_message(ctx, Asked(message, BLANK, ANN["id"]))
            await peer.wait_for(lambda: EMPTY_POST in _texts(peer, ANN["id"]))
            assert service.limits.left_today(ctx.user_hash(ANN["id"]), service.clock()) == 1
            peer.send(CHAT, ANN, POST)
            await peer.wait_for(lambda: any(_is_card(m) for m in peer.bot_messages(ANN["id"])))
    assert _texts(peer, ANN["id"])[:2] == [NOTHING_TO_CHECK, EMPTY_POST]
    assert not [t for t in _texts(peer, ANN["id"]) if "asked for" in t]


async def test_a_french_user_gets_the_fixed_sentences_in_french(start: Start) -> None:
    french = words_for("French")
    anne = {**user(704, "Anne"), "language_code": "fr"}
    chat = {"id": anne["id"], "type": "private", "first_name": "Anne"}
    # One refusal at a time: said at once, not held for others of a burst.
    async with start({"user_per_minute": 100}, refusal_window_s=0, chat_cooldown_s=60) as peer:
        peer.send(chat, anne, BLANK)
        await peer.wait_for(lambda: len(peer.bot_messages(anne["id"])) == 1)
        peer.send(chat, anne, "/check")
        await peer.wait_for(lambda: len(peer.bot_messages(anne["id"])) == 2)
        message = peer.send(chat, anne)  # a sticker: mutated before the bot polls it
        message["sticker"] = {"file_id": "s-fr", "file_unique_id": "sfr", **MEDIA["sticker"]}
        await peer.wait_for(lambda: len(peer.bot_messages(anne["id"])) == 3)
        # A group's cooldown, told in the asker's language.
        peer.send(GROUP, anne, f"/check {POST}")
        await peer.wait_for(lambda: any(_is_card(m) for m in peer.bot_messages(GROUP["id"])))
        peer.send(GROUP, anne, f"/check {POST} Encore.")
        said = await peer.wait_for(
            lambda: [t for t in _texts(peer, GROUP["id"]) if "Renvoyez-le dans" in t]
        )
    assert _texts(peer, anne["id"]) == [
        french(NOTHING_TO_CHECK),
        french(HOW_TO),
        french(UNSUPPORTED_INPUT),
    ]
    assert french(HOW_TO).startswith("Répondez à une publication par /check")
    assert french(NOTHING_TO_CHECK).startswith("Je n'ai rien trouvé à vérifier")
    assert said[0].startswith("Les vérifications dans ce groupe sont espacées")
    assert said[0] != cooldown_sentence(60)  # not the English sentence


async def test_a_mention_without_a_reply_gets_the_help_line(start: Start) -> None:
    async with start({"user_per_minute": 100}) as peer:
        peer.send(GROUP, ANN, f"@{BOT_USERNAME} hello")
        answer = await peer.wait_for(lambda: peer.bot_messages(GROUP["id"]))
        peer.send(GROUP, BOB, "lunch, @someone_else?")  # not for the bot: no answer
        peer.send(GROUP, BOB, f"@{BOT_USERNAME} what do you do?")
        await peer.wait_for(lambda: len(peer.bot_messages(GROUP["id"])) == 2)
    assert [m["text"] for m in peer.bot_messages(GROUP["id"])] == [HOW_TO, HOW_TO]
    assert answer[0]["reply_to_message"]["text"] == f"@{BOT_USERNAME} hello"


MEDIA: dict[str, dict[str, Any]] = {
    "sticker": {
        "type": "regular",
        "width": 512,
        "height": 512,
        "is_animated": False,
        "is_video": False,
    },
    "video": {"width": 640, "height": 360, "duration": 5},
    "video_note": {"length": 240, "duration": 4},
}


async def test_stickers_and_video_each_get_one_sentence(start: Start) -> None:
    async with start({"user_per_minute": 100}) as peer:
        for n, (kind, fields) in enumerate(MEDIA.items()):
            message = peer.send(CHAT, ANN)  # mutated before the bot polls it
            message[kind] = {"file_id": f"media-{n}", "file_unique_id": f"m{n}", **fields}
        await peer.wait_for(lambda: len(peer.bot_messages(ANN["id"])) >= len(MEDIA))
    assert _texts(peer, ANN["id"]) == [UNSUPPORTED_INPUT] * len(MEDIA)


async def test_a_tap_on_a_deleted_card_says_it_is_gone(start: Start) -> None:
    async with start({"user_per_minute": 100}) as peer:
        peer.send(CHAT, ANN, POST)
        card = await peer.wait_for(
            lambda: next((m for m in peer.bot_messages(ANN["id"]) if _is_card(m)), None)
        )
        data = next(
            b["callback_data"]
            for row in card["reply_markup"]["inline_keyboard"]
            for b in row
            if b.get("callback_data", "").startswith("e:")
        )
        # What Telegram sends for a message that was deleted: date 0, no content.
        gone = {"chat": CHAT, "message_id": card["message_id"], "date": 0}
        query = {"id": "q-gone", "from": ANN, "message": gone, "chat_instance": "ci", "data": data}
        peer._push({"callback_query": query})
        answered = await peer.wait_for(lambda: peer.sent("answerCallbackQuery"))
    assert answered[0].params["text"] == GONE
    assert answered[0].params["show_alert"] in (True, "true")
    assert len(peer.bot_messages(ANN["id"])) == 1  # no section was posted


async def test_a_group_request_in_the_cooldown_is_told_how_long_is_left(
    start: Start, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    clock = Ticks()
    # One refusal: said at once, not held for others of a burst.
    groups = {"refusal_window_s": 0, "cooldowns": Cooldowns(clock=clock), "chat_cooldown_s": 60}
    async with start({"user_per_minute": 100}, **groups) as peer:
        peer.send(GROUP, ANN, f"/check {POST}")
        await peer.wait_for(lambda: any(_is_card(m) for m in peer.bot_messages(GROUP["id"])))
        clock.now += 13.2  # the second request comes 13.2 s into the group's cooldown
        peer.send(GROUP, BOB, f"/check {POST} Again.")
        said = await peer.wait_for(
            lambda: [t for t in _texts(peer, GROUP["id"]) if "send it again in" in t]
        )
    assert "spaced out" in said[0]
    # The cooldown's 60 s, less what passed since the first check started, rounded up.
    assert said[0].endswith("send it again in 47 s."), said[0]
    assert "One check at a time" not in said[0]
    # The refusal is one INFO line with its reason, and no traceback.
    [refused] = [r for r in caplog.records if "refused" in r.getMessage()]
    line = r"request in chat [0-9a-f]{12} refused: cooldown, \d+ s left"  # its keyed hash
    assert re.fullmatch(line, refused.getMessage()), refused.getMessage()
    assert refused.levelno == logging.INFO and refused.exc_info is None
    assert not [r for r in caplog.records if r.name.startswith("bots") and r.exc_info]


class _Message:
    """A message stub: records, in ``said``, each reply and edit when it lands (an edit
    takes a moment, and fails when ``fail``)."""

    message_id = 1

    def __init__(self, chat_id: int, said: list[str], *, fail: bool = False) -> None:
        self.chat_id = chat_id
        self.said = said
        self.fail = fail

    async def reply_html(self, text: str, **_: Any) -> _Message:
        self.said.append(f"reply: {text}")
        return _Message(self.chat_id, self.said)

    async def edit_text(self, text: str, **_: Any) -> None:
        await asyncio.sleep(0.05)
        if self.fail:
            raise TelegramError("Message to edit not found")
        self.said.append(f"edit: {text}")


async def _settled(task: asyncio.Task[None], turns: int = 5) -> bool:
    """Whether ``task`` is done within a few turns of the loop (no timer runs)."""
    for _ in range(turns):
        await asyncio.sleep(0)
    return task.done()


async def test_a_held_refusal_wakes_once_the_chat_s_checks_have_opened() -> None:
    refusals = Refusals(window_s=0, hold_s=0.3)
    said: list[str] = []
    first = refusals.opening(7)
    refused = asyncio.create_task(refusals.refuse(cast(Message, _Message(7, said)), "No.", 60))
    assert not await _settled(refused)
    second = refusals.opening(7)  # opens while the refusal waits: waited for too
    first()
    assert not await _settled(refused)
    second()
    second()  # a second call does nothing
    assert await _settled(refused)  # at once: nothing polls
    assert len(said) == 1 and said[0].startswith("reply: ")
    # A check that never opens holds a refusal, for ``hold_s`` at most: it is not said
    # at once, and then it is said all the same (the test fails, not hangs, past 5 s).
    refusals.opening(8)
    held = asyncio.create_task(refusals.refuse(cast(Message, _Message(8, said)), "No.", 60))
    assert not await _settled(held)
    await asyncio.wait_for(held, 5)
    assert len(said) == 2


@pytest.mark.parametrize("fails", [False, True])
async def test_a_held_refusal_waits_for_the_card_to_be_on_screen(fails: bool) -> None:
    refusals = Refusals(window_s=0, hold_s=10)
    ctx = cast(
        TelegramContext,
        SimpleNamespace(
            refusals=refusals,
            report_url=lambda _: "",
            share_url=lambda *_: "",
            service=SimpleNamespace(record_card=_nothing),
        ),
    )
    said: list[str] = []
    screen = TelegramScreen(ctx, cast(Message, _Message(9, said)), 9)
    screen.reply = cast(Message, _Message(9, said, fail=fails))  # the "checking…" message
    refused = asyncio.create_task(refusals.refuse(cast(Message, _Message(9, said)), "No.", 60))
    await asyncio.sleep(0)
    card = verdict_card(Outcome("abcDEF123_-xyz45", scripted_report(Post(text=POST))))
    if fails:
        with pytest.raises(TelegramError):
            await screen.show_card(card)
    else:
        await screen.show_card(card)
    # The refusal comes once the edit has landed (or failed), not while it is on its way.
    assert await _settled(refused)
    assert [line.split(":")[0] for line in said] == (["reply"] if fails else ["edit", "reply"])


async def _nothing(*_: object) -> None:
    """Where a card is shown is not recorded here."""


async def test_a_french_user_gets_the_engine_s_refusal_of_a_link_in_french(start: Start) -> None:
    """The engine refuses a link to a loopback address; a French asker reads why in
    French, worded by render/ from the refusal's kind, the link as it was sent."""
    anne = {**user(705, "Anne"), "language_code": "fr"}
    chat = {"id": anne["id"], "type": "private", "first_name": "Anne"}
    link = "http://127.0.0.1:9/story"
    async with start({"user_per_minute": 100}, refusal_window_s=0) as peer:
        peer.send(chat, anne, link)
        await peer.wait_for(lambda: _texts(peer, anne["id"]))
    assert _texts(peer, anne["id"]) == [f"Impossible de récupérer {link}."]
