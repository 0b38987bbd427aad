"""Follow-up questions on Discord, end to end: the real discord.py client against the
fake Discord (``tests.peers.servers.discord_peer``: REST and gateway on loopback), the
real check service on a tmp SQLite file, checks answered by
:class:`~tests.peers.fakes.fake_checker.FakeChecker` (the card is plumbing here) and every
follow-up answered by the real engine's follow-up agent against the fake OpenAI server
(``tests.peers.servers.openai_peer``), whose replies are scripted: these prove which
messages are questions, what the bot makes of the engine's answer and what it replies,
not the quality of a real model's answer.

A question is a ``MESSAGE_CREATE`` sent through the fake gateway; :func:`_handled` waits
until the client's ``on_message`` for it has returned (its reply, if any, is then sent),
so that "no reply" is a fact, not a timeout.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest_asyncio

from tests.peers.fakes.fake_checker import FakeChecker, fake_service
from tests.peers.servers.discord_peer import Call, FakeDiscord, running_client
from tests.peers.servers.openai_peer import FakeOpenAI

from bots.app.settings import Settings
from bots.chat.follow_ups import ASK_HOW, NOT_FOUND
from bots.discord.client import FactCheckBot
from bots.discord.render import escape
from bots.render.words import words_for
from bots.service.checks import CheckService
from bots.service.records import NO_REPORT
from bots.service.shown import report_of
from storage import RequestScope
from zofia_engine.engine import Engine
from zofia_engine.ports import NO_ANSWER, FollowUpAnswer
from zofia_engine.report import Report

pytest_plugins = ["tests.peers.fixtures.discord_fixtures"]

POST = "The mayor of Springfield has banned bicycles from every street in the city."
ANN_ID = 910000000000000001
BOB_ID = 910000000000000002


def _reply(answered: bool, answer: str, cites: list[str]) -> str:
    """The follow-up agent's reply as the model writes it (its JSON schema)."""
    return json.dumps({"answered": answered, "answer": answer, "cites": cites})


@dataclass
class EngineAnswers(FakeChecker):
    """Checks as :class:`FakeChecker` does (a scripted report, at once); a follow-up
    question goes to the real engine, whose model is the fake OpenAI server."""

    engine: Engine | None = None

    async def follow_up(
        self, report: Report, question: str, *, language: str = ""
    ) -> FollowUpAnswer:
        assert self.engine is not None
        self.questions.append(question)
        return await self.engine.follow_up(report, question, language=language)


@dataclass
class Running:
    api: FakeDiscord
    openai: FakeOpenAI
    bot: FactCheckBot
    service: CheckService
    checker: EngineAnswers


Start = Callable[..., contextlib.AbstractAsyncContextManager[Running]]


@pytest_asyncio.fixture
async def start(discord_api: FakeDiscord, tmp_path: Path) -> AsyncIterator[Start]:
    """Runs the bot on the fake Discord, the service on the test's database, checks by
    the fake checker and follow-ups by the engine on the fake OpenAI server."""

    @contextlib.asynccontextmanager
    async def run(discord: dict[str, Any] | None = None, **service: Any) -> AsyncIterator[Running]:
        async with FakeOpenAI(api_key="sk-fu") as openai:
            settings = Settings.model_validate(
                {
                    "llm": {
                        "backend": "openai",
                        "timeout_s": 5.0,
                        "retries": 0,
                        "openai": {"base_url": openai.base_url, "api_key": "sk-fu", "model": "p"},
                    },
                    "storage": {
                        "path": str(tmp_path / "zofia.db"),
                        "secret": "s3cret-for-tests-only",
                    },
                    "service": {
                        "user_per_minute": 100,
                        "chat_per_minute": 100,
                        "user_daily": 1000,
                        **service,
                    },
                    "discord": {
                        "progress_interval_s": 0,
                        "guild_cooldown_s": 0,
                        **(discord or {}),
                    },
                }
            )
            async with Engine(settings.engine) as engine:
                checker = EngineAnswers(engine=engine)
                async with (
                    fake_service(settings, checker) as service_,
                    running_client(FactCheckBot(settings.discord, service_)) as bot,
                ):
                    yield Running(discord_api, openai, bot, service_, checker)

    yield run


async def _card(run: Running, *, guild: bool = True, user_id: int = ANN_ID) -> dict[str, Any]:
    """A verdict card, as the bot shows it for ``/factcheck`` (in the server, or in the
    user's DM with the bot), and the check's admission released."""
    api = run.api
    payload = api.slash("factcheck", {"text": POST}, user_id=user_id, guild=guild)
    token = payload["token"]

    def shown(call: Call) -> bool:
        return call.method == "PATCH" and f"/{token}/" in call.path and bool(call.body["embeds"])

    await api.dispatch("INTERACTION_CREATE", payload)
    await api.wait_for(shown)
    card = dict(api.messages[api.originals[token]])
    card["channel_id"] = payload["channel_id"]  # the fake keeps responses in its channel
    # The card is on screen a moment before its check's admission is released; a
    # question in a DM (one request at a time) waits for that.
    since = run.service.clock() - dt.timedelta(hours=1)
    async with asyncio.timeout(10):
        while run.service.store.attempts.count(RequestScope(since), open_in_private=True):
            await asyncio.sleep(0.02)
    return card


def _check_id(card: dict[str, Any]) -> str:
    customs = [b.get("custom_id", "") for row in card["components"] for b in row["components"]]
    check_id: str = next(c for c in customs if c.startswith("zf:debate:")).split(":")[2]
    return check_id


def _reply_to(
    api: FakeDiscord,
    target: dict[str, Any],
    content: str,
    *,
    user_id: int = ANN_ID,
    guild: bool = True,
) -> dict[str, Any]:
    """A member's (or, ``guild=False``, a DM's) reply to ``target``, as the gateway sends
    it: the reference and the replied-to message with it, the bot in its mentions when
    the text mentions it."""
    channel = target["channel_id"]
    reference: dict[str, Any] = {"type": 0, "message_id": target["id"], "channel_id": channel}
    extra: dict[str, Any] = {
        "type": 19,
        "message_reference": reference,
        "referenced_message": target,
    }
    if f"<@{api.BOT_ID}>" in content:
        extra["mentions"] = [api.user(api.BOT_ID, "zofia")]
    if guild:
        reference["guild_id"] = extra["guild_id"] = str(api.GUILD_ID)
    return api.message(content, author=api.user(user_id), channel_id=int(channel), extra=extra)


async def _handled(run: Running, message: dict[str, Any]) -> None:
    """Send ``message`` through the gateway and wait until the bot's ``on_message`` for
    it has returned (a reply it makes is sent by then)."""
    seen = asyncio.ensure_future(
        run.bot.wait_for("message", check=lambda m: m.id == int(message["id"]))
    )
    await run.api.dispatch("MESSAGE_CREATE", message)
    async with asyncio.timeout(30):
        await seen
        # discord.py runs each on_message in a task of this name, created with the event.
        handlers = [t for t in asyncio.all_tasks() if t.get_name() == "discord.py: on_message"]
        await asyncio.gather(*handlers)


def _answers(api: FakeDiscord, question: dict[str, Any]) -> list[Call]:
    """The bot's messages in reply to ``question``."""
    return [
        call
        for call in api.calls_to("POST", f"/channels/{question['channel_id']}/messages")
        if str((call.body.get("message_reference") or {}).get("message_id")) == question["id"]
    ]


def _asked(openai: FakeOpenAI) -> list[str]:
    """The text of each request's user messages (the question is among them)."""
    return [
        "\n".join(m["content"] for m in body["messages"] if m["role"] == "user")
        for body in openai.requests
    ]


async def test_a_reply_to_a_card_that_mentions_the_bot_gets_one_answer_naming_its_source(
    start: Start,
) -> None:
    async with start() as run:
        run.openai.script(
            _reply(
                True,
                "The council's minutes [web-1] show that no such law was passed; "
                "a press release [web-7] says otherwise.",
                ["web-1", "web-7"],
            )
        )
        card = await _card(run)
        question = _reply_to(run.api, card, f"<@{run.api.BOT_ID}> which source?")
        await _handled(run, question)
        report = report_of(run.service.store, _check_id(card))
    assert report is not None
    (answer,) = _answers(run.api, question)
    text = answer.body["content"]
    # The cited id is named as the card names the source, and the source is listed,
    # linked; the id the report does not have is neither named nor kept.
    (evidence,) = report[1].evidence
    assert (evidence.id, evidence.url) == ("web-1", "https://council.example.org/minutes")
    assert text.startswith("The council's minutes \\(council.example.org\\) show that")
    assert "**Sources**\n• [City council minutes \\(council.example.org\\)]" in text
    assert f"]({evidence.url})" in text
    assert "web-1" not in text and "web-7" not in text
    assert len(text) <= 2000
    # A reply that pings nobody (with no "replied_user": true, not even the asker) and
    # unfurls no preview.
    assert answer.body["allowed_mentions"] == {"parse": []}
    assert answer.body["flags"] & 4  # SUPPRESS_EMBEDS
    # One model call, with the question as written, without the mention of the bot.
    (user_text,) = _asked(run.openai)
    assert "which source?" in user_text and str(run.api.BOT_ID) not in user_text
    assert run.checker.questions == ["which source?"]
    assert len(run.checker.runs) == 1  # the question was not checked as a post


async def test_in_a_dm_any_reply_to_a_card_is_a_question(start: Start) -> None:
    async with start() as run:
        said = "The minutes [web-1] show that the council passed no such law."
        run.openai.script(_reply(True, said, ["web-1"]))
        card = await _card(run, guild=False)
        question = _reply_to(run.api, card, "why is it false?", guild=False)
        await _handled(run, question)
    (answer,) = _answers(run.api, question)
    assert answer.body["content"].startswith("The minutes \\(council.example.org\\) show")
    assert run.checker.questions == ["why is it false?"]


async def test_a_question_the_report_cannot_answer_gets_the_fixed_sentence(
    start: Start,
) -> None:
    async with start() as run:
        run.openai.script(_reply(False, "The minutes [web-1] are about bicycles.", ["web-1"]))
        card = await _card(run)
        question = _reply_to(run.api, card, f"<@{run.api.BOT_ID}> who paid for the rumour?")
        await _handled(run, question)
    (answer,) = _answers(run.api, question)
    assert answer.body["content"] == NO_ANSWER
    assert run.checker.questions == ["who paid for the rumour?"]


async def test_replies_to_what_is_not_a_card_or_not_to_the_bot_are_no_questions(
    start: Start,
) -> None:
    async with start() as run:
        card = await _card(run)
        mention = f"<@{run.api.BOT_ID}>"
        # A member's message; messages of the bot's that are no card (a sentence, a
        # review's select: buttons, but not a card's); another bot's with a card's buttons.
        members = run.api.message(POST, author=run.api.user(BOB_ID))
        plain = run.api.message("Too many checks for now: please try again in 1 minute.")
        select = run.api.message("Review of this verdict (False): confirm it, or …")
        select["components"] = run.api.action_row("4f1c2a9be0d3e8f7a6b5c4d3e2f1a0b9")
        other = dict(card, id=str(run.api.snowflake()), author=run.api.user(BOB_ID, "otherbot"))
        other["author"]["bot"] = True
        ignored = [
            _reply_to(run.api, members, f"{mention} is this true?"),
            _reply_to(run.api, plain, f"{mention} why?"),
            _reply_to(run.api, select, f"{mention} why?"),
            _reply_to(run.api, other, f"{mention} why?"),
            _reply_to(run.api, card, "lol, as if", user_id=BOB_ID),  # in a server, no mention
        ]
        for message in ignored:
            await _handled(run, message)
        # A bare mention on a card is answered with how to ask, and nothing is asked.
        bare = _reply_to(run.api, card, mention)
        await _handled(run, bare)
    for message in ignored:
        assert _answers(run.api, message) == []
    (how,) = _answers(run.api, bare)
    assert how.body["content"] == ASK_HOW
    assert run.openai.requests == [] and run.checker.questions == []


async def test_errors_are_one_sentence(start: Start) -> None:
    async with start(user_per_minute=1) as run:
        card = await _card(run)  # the one check a minute
        limited = _reply_to(run.api, card, f"<@{run.api.BOT_ID}> why?")
        await _handled(run, limited)
        forged = dict(card, id=str(run.api.snowflake()))
        forged["components"] = run.api.action_row("zf:debate:nosuchcheck")
        unknown = _reply_to(run.api, forged, f"<@{run.api.BOT_ID}> why?", user_id=BOB_ID)
        await _handled(run, unknown)
    (refused,) = _answers(run.api, limited)
    assert refused.body["content"].startswith("You have asked for 1 check in the last minute")
    (not_found,) = _answers(run.api, unknown)
    assert not_found.body["content"] == NOT_FOUND
    assert run.openai.requests == [] and run.checker.questions == []


async def test_a_burst_of_questions_gets_one_refusal(start: Start) -> None:
    """Issue 36: each refused question of a burst got its own refusal."""
    said = "The minutes [web-1] show that the council passed no such law."
    async with start(user_per_minute=3) as run:
        run.openai.script(*[_reply(True, said, ["web-1"])] * 2)
        card = await _card(run, guild=False)  # 1 of 3
        questions = [_reply_to(run.api, card, f"why? ({n})", guild=False) for n in range(6)]
        for question in questions:
            await _handled(run, question)
    replies = [a.body["content"] for q in questions for a in _answers(run.api, q)]
    answers = [text for text in replies if text.startswith("The minutes")]
    refusals = [text for text in replies if text.startswith("You have asked for 3 checks")]
    assert len(answers) == 2 and len(refusals) == 1 and len(replies) == 3
    assert len(run.checker.questions) == 2


async def test_in_a_server_a_fixed_sentence_is_said_once_per_cooldown(start: Start) -> None:
    """Issue 36: a mention with no question, and a question about an expired card, got
    their fixed sentence every time."""
    async with start(discord={"guild_cooldown_s": 60}) as run:
        card = await _card(run)
        mention = f"<@{run.api.BOT_ID}>"
        bare = [_reply_to(run.api, card, mention, user_id=who) for who in (ANN_ID, BOB_ID)]
        for message in bare:
            await _handled(run, message)
        service = run.service  # the card's check expires: its report is purged
        await asyncio.to_thread(service.store.purge, service.clock() + dt.timedelta(days=1))
        asked = [
            _reply_to(run.api, card, f"{mention} {question}", user_id=who)
            for who, question in ((ANN_ID, "why?"), (BOB_ID, "which source?"))
        ]
        for message in asked:
            await _handled(run, message)
    how = [a.body["content"] for message in bare for a in _answers(run.api, message)]
    expired = [a.body["content"] for message in asked for a in _answers(run.api, message)]
    assert how == [escape(ASK_HOW)]
    assert expired == [escape(NO_REPORT)]
    assert run.checker.questions == [] and run.openai.requests == []


async def test_a_server_set_to_french_is_told_how_to_ask_in_french(start: Start) -> None:
    """A message carries no locale: the sentences are the server's setting's language."""
    async with start() as run:
        chat = str(run.api.GUILD_ID)
        await run.service.chats.set_settings("discord", chat, {"language": "French"})
        card = await _card(run)
        mention = f"<@{run.api.BOT_ID}>"
        bare = _reply_to(run.api, card, mention)
        await _handled(run, bare)
        forged = dict(card, id=str(run.api.snowflake()))
        forged["components"] = run.api.action_row("zf:debate:nosuchcheck")
        unknown = _reply_to(run.api, forged, f"{mention} pourquoi ?", user_id=BOB_ID)
        await _handled(run, unknown)
    french = words_for("French")
    (how,) = _answers(run.api, bare)
    assert how.body["content"] == escape(french(ASK_HOW)) != escape(ASK_HOW)
    assert how.body["content"].startswith("Posez votre question dans votre réponse au verdict")
    (not_found,) = _answers(run.api, unknown)
    assert not_found.body["content"] == "Cette vérification est introuvable dans cette discussion."
    assert run.openai.requests == [] and run.checker.questions == []
