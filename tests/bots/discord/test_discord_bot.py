"""The Discord bot, end to end: the real discord.py client against a fake Discord
(REST and gateway on loopback), the real check service on a tmp SQLite file,
real Stage-1 models and the fake OpenAI server scripting the panel."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from tests.peers.fakes.fake_checker import submit
from tests.peers.fakes.panel_script import PanelScript
from tests.peers.servers.discord_peer import (
    DISCORD_TOKEN,
    MEMBER,
    Call,
    FakeDiscord,
    running_client,
)
from tests.peers.servers.openai_peer import FakeOpenAI

from bots.app.runtime import running_service
from bots.app.settings import Settings
from bots.discord.client import FactCheckBot
from bots.render.card import VERDICTS
from bots.render.privacy import privacy_text
from bots.service.records import Requester
from bots.service.shown import report_of
from zofia_engine.encoder import SentenceTransformerEncoder
from zofia_engine.engine import Engine
from zofia_engine.post import Post
from zofia_engine.retrieval.ner import NERBackend
from zofia_engine.retrieval.pipeline import EntityGuidedRetrieval
from zofia_engine.retrieval.wikipedia.offline import OfflineWikipedia

pytest_plugins = ["tests.peers.fixtures.model_fixtures", "tests.peers.fixtures.discord_fixtures"]

pytestmark = pytest.mark.slow

TOKEN = DISCORD_TOKEN
POST = (
    "The mayor of Springfield, Illinois has banned bicycles from every street in the city. "
    "Mayor Misty Buscher signed the law in March and cyclists now face a 500 dollar fine."
)
HOSTILE = (
    "@everyone **Breaking**: see [the official source](https://evil.example/phish) "
    "and ask <@123456789012345678>."
)
LONG_TURN = " ".join(f"Sentence {n} of a very long argument about bicycles." for n in range(60))
GENEROUS = {"user_per_minute": 100, "chat_per_minute": 100, "user_daily": 1000}


def _patches(peer: FakeDiscord, token: str) -> list[Call]:
    return [c for c in peer.calls_to("PATCH", "/webhooks/") if f"/{token}/" in c.path]


def _final(peer: FakeDiscord, token: str) -> Callable[[Call], bool]:
    """Matches the edit of the deferred response that carries the verdict embed."""

    def match(call: Call) -> bool:
        return call.method == "PATCH" and f"/{token}/" in call.path and bool(call.body["embeds"])

    return match


def _thread_link_posted(token: str, call: Call) -> bool:
    return call.method == "POST" and f"/{token}" in call.path and "<#" in str(call.body)


def _votes_told(token: str, call: Call) -> bool:
    return f"/{token}" in call.path and "Votes so far" in str(call.body)


def _posted_to(token: str, call: Call) -> bool:
    return call.path.endswith(f"/{token}") and call.method == "POST"


def _custom_ids(message: dict[str, Any]) -> list[str]:
    return [button["custom_id"] for row in message["components"] for button in row["components"]]


@pytest_asyncio.fixture
async def panel() -> AsyncIterator[FakeOpenAI]:
    script = PanelScript(
        debaterreply={"rebuttal": HOSTILE, "argument": LONG_TURN, "cites": ["post"]},
        judgereply={"verdict": "false", "next": "stop", "reason": HOSTILE},
        finalreply={"verdict": "false", "reason": HOSTILE},
    )
    async with FakeOpenAI(script, api_key="sk-dc") as peer:
        yield peer


@pytest.fixture
def make_settings(tmp_path: Path, panel: FakeOpenAI) -> Callable[..., Settings]:
    def make(*, service: dict[str, Any] | None = None, **discord: Any) -> Settings:
        return Settings.model_validate(
            {
                "llm": {
                    "backend": "openai",
                    "openai": {"base_url": panel.base_url, "api_key": "sk-dc"},
                },
                "storage": {"path": str(tmp_path / "zofia.db"), "secret": "s3cret-for-tests-only"},
                # The papers' rule: the judge's ruling stands, so its (hostile) reason is
                # the card's summary, which is what the escaping tests read.
                "agents": {"require_evidence": False},
                "service": service or GENEROUS,
                "discord": {"progress_interval_s": 0, "guild_cooldown_s": 0, **discord},
            }
        )

    return make


@pytest_asyncio.fixture
async def engine(
    make_settings: Callable[..., Settings],
    ner: NERBackend,
    encoder: SentenceTransformerEncoder,
    offline_wiki: OfflineWikipedia,
) -> AsyncIterator[Engine]:
    settings = make_settings()
    stage1 = EntityGuidedRetrieval(
        settings.engine, ner=ner, encoder=encoder, wikipedia=offline_wiki
    )
    async with Engine(settings.engine, retrieval=stage1) as built:
        yield built


@pytest_asyncio.fixture
async def start_bot(
    discord_api: FakeDiscord, engine: Engine, make_settings: Callable[..., Settings]
) -> AsyncIterator[Callable[..., contextlib.AbstractAsyncContextManager[FactCheckBot]]]:
    """Starts the bot (service and client) on the test's database; each use is one run."""

    @contextlib.asynccontextmanager
    async def start(settings: Settings | None = None) -> AsyncIterator[FactCheckBot]:
        settings = settings or make_settings()
        async with (
            running_service(settings, engine=engine) as service,
            running_client(FactCheckBot(settings.discord, service)) as bot,
        ):
            yield bot

    yield start


async def _check(peer: FakeDiscord, payload: dict[str, Any]) -> dict[str, Any]:
    """Send a command and return the verdict message once the embed is shown."""
    await peer.dispatch("INTERACTION_CREATE", payload)
    await peer.wait_for(_final(peer, payload["token"]), timeout=60)
    return peer.messages[peer.originals[payload["token"]]]


async def test_slash_command_defers_shows_progress_and_ends_with_the_embed(
    discord_api: FakeDiscord,
    start_bot: Callable[..., contextlib.AbstractAsyncContextManager[FactCheckBot]],
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    async with start_bot() as bot:
        synced = discord_api.calls_to("PUT", f"/applications/{discord_api.APP_ID}/commands")
        assert synced, "commands are synced globally in setup_hook"
        commands = {c["name"]: c for c in synced[0].body}
        assert set(commands) == {
            "factcheck", "Fact-check", "factcheck-settings", "factcheck-help", "privacy"
        }  # fmt: skip
        assert commands["factcheck"]["integration_types"] == [0, 1]  # guilds and users
        assert commands["Fact-check"]["type"] == 3
        assert int(commands["factcheck-settings"]["default_member_permissions"]) == 32

        payload = discord_api.slash("factcheck", {"text": POST})
        message = await _check(discord_api, payload)

        callback = discord_api.calls_to("POST", f"/interactions/{payload['id']}/")[0]
        assert callback.body["type"] == 5  # deferred, "thinking"
        edits = _patches(discord_api, payload["token"])
        progress = [e for e in edits if (e.body.get("content") or "").startswith("⏳ Checking")]
        assert progress and edits.index(progress[0]) < len(edits) - 1
        assert any("✓" in (e.body["content"] or "") for e in progress)
        final = edits[-1].body
        assert final["allowed_mentions"] == {"parse": []}
        embed = final["embeds"][0]
        icon, words, colour = VERDICTS["false"]  # the judge's ruling, as it is
        assert embed["title"] == f"{icon} {words}" and embed["color"] == colour
        check_id = embed["footer"]["text"].split("Check ")[-1]
        checked = bot.service.store.checks.get(check_id)
        assert checked is not None and checked.status == "done"
        kinds = [custom.split(":")[1] for custom in _custom_ids(message)]
        assert kinds == ["debate", "evidence", "claims", "up", "down", "review"]
        assert all(custom.endswith(f":{check_id}") for custom in _custom_ids(message))
        # The model's hostile summary is shown literally: no ping, no bold, no masked link;
        # its handles and its link, which no evidence carries, never reach the card
        # (zofia_engine.contacts; the renderer's own defusing is test_discord_render's).
        description = embed["description"]
        assert "@everyone" not in description and "everyone" not in description
        assert r"\*\*Breaking\*\*" in description
        assert r"\[the official source\]" in description and "evil.example" not in description
        assert "123456789012345678" not in description
    assert TOKEN not in caplog.text


async def test_context_menu_checks_the_message_it_was_opened_on(
    discord_api: FakeDiscord,
    start_bot: Callable[..., contextlib.AbstractAsyncContextManager[FactCheckBot]],
) -> None:
    author = discord_api.user(910000000000000001, "newsfan")
    target = discord_api.message(POST, author=author)
    async with start_bot() as bot:
        payload = discord_api.message_command("Fact-check", target)
        await _check(discord_api, payload)
        embed = _patches(discord_api, payload["token"])[-1].body["embeds"][0]
        fields = {field["name"]: field["value"] for field in embed["fields"]}
        assert "Newsfan" in fields["Origin"]
        check_id = embed["footer"]["text"].split("Check ")[-1]
        row = bot.service.store.checks.get(check_id)
        assert row is not None
        assert row.post_text == POST and row.platform == "discord"
        assert row.chat == bot.service.namer.chat("discord", str(discord_api.GUILD_ID))


async def test_buttons_open_a_thread_and_work_after_a_restart(
    discord_api: FakeDiscord,
    start_bot: Callable[..., contextlib.AbstractAsyncContextManager[FactCheckBot]],
) -> None:
    async with start_bot():
        message = await _check(discord_api, discord_api.slash("factcheck", {"text": POST}))
    debate, evidence, claims, up, down, _review = _custom_ids(message)
    message_id = int(message["id"])

    async with start_bot() as bot:  # a new client and service on the same database
        assert discord_api.identifies == 2
        # Two members press Debate at once: the section is posted once.
        presses = [discord_api.button(debate, message, user_id=u) for u in (1001, 1002)]
        for press in presses:
            await discord_api.dispatch("INTERACTION_CREATE", press)
        answers = [
            (
                await discord_api.wait_for(functools.partial(_thread_link_posted, press["token"]))
            ).body["content"]
            for press in presses
        ]
        assert all(f"<#{message_id}>" in answer for answer in answers)
        assert sum(answer.startswith("Already posted in the thread") for answer in answers) == 1
        threads = discord_api.calls_to("POST", f"/channels/{discord_api.CHANNEL_ID}/messages/")
        assert threads[0].path.endswith(f"/{message_id}/threads")
        posted = discord_api.calls_to("POST", f"/channels/{message_id}/messages")
        contents = [c.body["content"] for c in posted]
        assert contents[0] == "**Debate**" and contents.count("**Debate**") == 1
        assert all(len(text) <= 2000 for text in contents)
        assert any(len(text) > 1500 for text in contents)  # the long turn fills messages
        found = report_of(bot.service.store, _id(message))
        assert found is not None
        report = found[1]
        blocks = len(report.debate.turns) + len(report.debate.rulings)
        assert len(contents) > 1 + blocks  # a turn longer than 2000 characters was split
        assert all(c.body["allowed_mentions"] == {"parse": []} for c in posted)
        assert all(c.body["flags"] & 4 for c in posted)  # no link previews unfurled
        joined = "\n".join(contents)
        assert "@everyone" not in joined and r"\[the official source\]" in joined

        # Evidence goes into the same thread (Discord says it exists already).
        before = len(posted)
        press = discord_api.button(evidence, message)
        await discord_api.dispatch("INTERACTION_CREATE", press)
        await discord_api.wait_for(
            lambda c: f"/{press['token']}" in c.path and "<#" in str(c.body), timeout=20
        )
        assert any(c.status == 400 for c in discord_api.calls if c.path.endswith("/threads"))
        posted = discord_api.calls_to("POST", f"/channels/{message_id}/messages")
        assert posted[before].body["content"] == "**Evidence**"

        # A later press of Debate points to the thread and posts nothing.
        before = len(posted)
        again = discord_api.button(debate, message, user_id=1003)
        answer = await _answer_of(discord_api, again)
        assert answer == f"Already posted in the thread: <#{message_id}>"
        assert len(discord_api.calls_to("POST", f"/channels/{message_id}/messages")) == before

        # The votes are stored and counted.
        for token, custom in (("up", up), ("down", down), ("up-again", up)):
            press = discord_api.button(custom, message, user_id=920000000000000000 + len(token))
            await discord_api.dispatch("INTERACTION_CREATE", press)
            # Acknowledged first; the answer follows once the vote is stored.
            await discord_api.wait_for(functools.partial(_votes_told, press["token"]))
        assert bot.service.store.feedback.counts(_id(message)) == (2, 1)
        assert claims.startswith("zf:claims:")


def _id(message: dict[str, Any]) -> str:
    return _custom_ids(message)[0].split(":")[-1]


def _followups(peer: FakeDiscord, token: str) -> list[Call]:
    return [c for c in peer.calls_to("POST", "/webhooks/") if c.path.endswith(f"/{token}")]


async def _answer_of(peer: FakeDiscord, payload: dict[str, Any]) -> str:
    """The text a quick answer (a reply, or the edit of a deferred one) ends with."""
    token = payload["token"]
    await peer.dispatch("INTERACTION_CREATE", payload)

    def answered(call: Call) -> bool:
        if call.path.startswith(f"/interactions/{payload['id']}/"):
            return bool(call.body["type"] == 4)
        return f"/{token}" in call.path and bool((call.body or {}).get("content"))

    call = await peer.wait_for(answered, timeout=20)
    return str(call.body["data"]["content"] if "data" in call.body else call.body["content"])


async def test_a_forged_or_foreign_check_id_is_not_found(
    discord_api: FakeDiscord,
    start_bot: Callable[..., contextlib.AbstractAsyncContextManager[FactCheckBot]],
) -> None:
    async with start_bot() as bot:
        elsewhere = Requester("discord", "1", "600000000000000999")  # another server
        handle = await submit(bot.service, Post(text=POST), elsewhere)
        await handle.result()
        foreign, forged = f"zf:debate:{handle.check_id}", "zf:evidence:AAAAAAAAAAAAAAAA"
        vote = f"zf:up:{handle.check_id}"
        row = discord_api.action_row(foreign, forged, vote)
        message = discord_api.message("", extra={"components": row})
        for custom in (foreign, forged):
            press = discord_api.button(custom, message)
            await discord_api.dispatch("INTERACTION_CREATE", press)
            reply = await discord_api.wait_for(functools.partial(_posted_to, press["token"]))
            assert reply.body["content"] == "That check was not found."
            assert reply.body["flags"] == 64  # ephemeral
        press = discord_api.button(vote, message)
        assert await _answer_of(discord_api, press) == "That check was not found."
        # Nothing of the check is read: a presser whose Discord is French is told in French.
        french = discord_api.button(forged, message)
        french["locale"] = "fr"
        assert await _answer_of(discord_api, french) == "Cette vérification est introuvable."
        assert bot.service.store.feedback.counts(handle.check_id) == (0, 0)
        assert not discord_api.calls_to("POST", f"/channels/{discord_api.CHANNEL_ID}/messages/")


async def test_a_repeat_is_answered_from_the_store_and_its_buttons_work_without_threads(
    discord_api: FakeDiscord,
    panel: FakeOpenAI,
    start_bot: Callable[..., contextlib.AbstractAsyncContextManager[FactCheckBot]],
) -> None:
    async with start_bot() as bot:
        original = await _check(discord_api, discord_api.slash("factcheck", {"text": POST}))
        asked = len(panel.requests)
        again = discord_api.slash("factcheck", {"text": POST}, user_id=930000000000000001)
        message = await _check(discord_api, again)
        assert len(panel.requests) == asked  # no model call: answered from SQLite
        embed = _patches(discord_api, again["token"])[-1].body["embeds"][0]
        assert embed["footer"]["text"].startswith("Repeat of a check from ")
        repeat_id = _id(message)
        checked = bot.service.store.checks.get(repeat_id)
        assert checked is not None and checked.repeat_kind == "exact"

        discord_api.no_thread_channels.add(discord_api.CHANNEL_ID)
        press = discord_api.button(f"zf:claims:{repeat_id}", message)
        await discord_api.dispatch("INTERACTION_CREATE", press)
        first = await discord_api.wait_for(
            lambda c: c.path.endswith(f"/{press['token']}") and c.method == "POST"
        )
        assert first.body["flags"] == 64 | 4  # ephemeral, no link previews
        assert "Core claim" in first.body["content"]
        assert not discord_api.calls_to("POST", f"/channels/{message['id']}/messages")

        # Votes on the repeat and on the original add up on the original.
        repeat = bot.service.store.checks.get(repeat_id)
        original_id = repeat.repeat_of if repeat is not None else None
        assert original_id and original_id != repeat_id
        up = discord_api.button(f"zf:up:{repeat_id}", message, user_id=930000000000000002)
        assert "👍 1 · 👎 0" in await _answer_of(discord_api, up)
        down = discord_api.button(f"zf:down:{original_id}", original, user_id=930000000000000003)
        assert "👍 1 · 👎 1" in await _answer_of(discord_api, down)
        assert bot.service.store.feedback.counts(original_id) == (1, 1)
        assert bot.service.store.feedback.counts(repeat_id) == (0, 0)


async def test_the_verdict_goes_to_the_channel_once_the_token_expired(
    discord_api: FakeDiscord,
    start_bot: Callable[..., contextlib.AbstractAsyncContextManager[FactCheckBot]],
) -> None:
    async with start_bot():
        payload = discord_api.slash("factcheck", {"text": POST}, user_id=940000000000000001)
        discord_api.expired_tokens.add(payload["token"])
        await discord_api.dispatch("INTERACTION_CREATE", payload)
        posted = await discord_api.wait_for(
            lambda c: (
                c.method == "POST"
                and c.path == f"/channels/{discord_api.CHANNEL_ID}/messages"
                and bool(c.body.get("embeds"))
            ),
            timeout=60,
        )
        assert posted.body["content"] == "<@940000000000000001>"
        assert posted.body["allowed_mentions"]["parse"] == []
        assert posted.body["allowed_mentions"]["users"] == [940000000000000001]
        assert posted.body["components"][0]["components"][0]["custom_id"].startswith("zf:debate:")
        assert all(c.status == 401 for c in _patches(discord_api, payload["token"]))


async def test_a_private_verdict_goes_to_a_dm_once_the_token_expired(
    discord_api: FakeDiscord,
    start_bot: Callable[..., contextlib.AbstractAsyncContextManager[FactCheckBot]],
) -> None:
    user = 940000000000000002
    async with start_bot() as bot:
        chat = str(discord_api.GUILD_ID)
        await bot.service.chats.set_settings("discord", chat, {"ephemeral": True})
        payload = discord_api.slash("factcheck", {"text": POST}, user_id=user)
        discord_api.expired_tokens.add(payload["token"])
        await discord_api.dispatch("INTERACTION_CREATE", payload)
        posted = await discord_api.wait_for(
            lambda c: (
                c.method == "POST"
                and c.path == f"/channels/{discord_api.dm_channels.get(user)}/messages"
                and bool(c.body.get("embeds"))
            ),
            timeout=60,
        )
        callback = discord_api.calls_to("POST", f"/interactions/{payload['id']}/")[0]
        assert callback.body["data"]["flags"] == 64  # the reply was private
        assert posted.body["allowed_mentions"] == {"parse": []}
        assert "private reply" in posted.body["content"]
        assert not posted.body.get("components")  # its buttons answer only in the server
        assert posted.body["embeds"][0]["footer"]["text"].startswith("Check ")
        in_channel = discord_api.calls_to("POST", f"/channels/{discord_api.CHANNEL_ID}/messages")
        assert in_channel == []  # nothing private is posted for everyone to see


async def test_a_check_cancelled_by_someone_else_says_so(
    discord_api: FakeDiscord,
    panel: FakeOpenAI,
    start_bot: Callable[..., contextlib.AbstractAsyncContextManager[FactCheckBot]],
) -> None:
    panel.delay_s = 30.0  # the panel holds its answers: the check is still running
    async with start_bot() as bot:
        payload = discord_api.slash("factcheck", {"text": POST})

        def edit(call: Call) -> str:
            """The content of an edit of this command's deferred response, or ""."""
            if call.method != "PATCH" or f"/{payload['token']}/" not in call.path:
                return ""
            return str(call.body.get("content") or "")

        await discord_api.dispatch("INTERACTION_CREATE", payload)
        await discord_api.wait_for(lambda c: edit(c).startswith("⏳ Checking"), timeout=30)
        row = bot.service.store.checks.history(platform="discord")[0][0]
        handle = bot.service.handle(row.id)
        assert handle is not None and handle.cancel()  # as another requester's cancel would
        answer = await discord_api.wait_for(
            lambda c: edit(c) == "The check was cancelled.", timeout=20
        )
        assert not answer.body["embeds"]
        panel.release.set()


async def test_bad_input_gets_a_clear_message_and_starts_no_check(
    discord_api: FakeDiscord,
    start_bot: Callable[..., contextlib.AbstractAsyncContextManager[FactCheckBot]],
) -> None:
    hidden, textless = 700000000000000777, discord_api.message("")
    discord_api.unreadable_channels.add(hidden)
    # A channel of another server the bot is in, holding a checkable post.
    other_guild, foreign = 600000000000000002, 700000000000000888
    discord_api.foreign_channels[foreign] = other_guild
    elsewhere = discord_api.message(POST, channel_id=foreign)
    here = discord_api.message(POST)
    base = f"https://discord.com/channels/{discord_api.GUILD_ID}"
    not_here = "I can only check messages from this server."
    cases = [
        ("Give either", {}),
        ("not a Discord message link", {"message_link": "https://example.com/news/1"}),
        # Another channel of this server: the requester's permissions there are unknown.
        ("from their own channel", {"message_link": f"{base}/{hidden}/123456789012345678"}),
        (
            "no text I can see",
            {"message_link": f"{base}/{discord_api.CHANNEL_ID}/{textless['id']}"},
        ),
        ("The post is empty", {"text": "   \n "}),
        (
            not_here,  # another server's message
            {
                "message_link": f"https://discord.com/channels/{other_guild}/{foreign}/{elsewhere['id']}"
            },
        ),
        # A forged guild id: refused as another channel, before any request.
        ("from their own channel", {"message_link": f"{base}/{foreign}/{elsewhere['id']}"}),
        (
            not_here,  # a DM link, used in a server
            {
                "message_link": f"https://discord.com/channels/@me/{discord_api.CHANNEL_ID}/{here['id']}"
            },
        ),
    ]
    async with start_bot() as bot:
        for expected, options in cases:
            answer = await _answer_of(discord_api, discord_api.slash("factcheck", options))
            assert expected in answer
        # In a DM, a link to a message of that DM is read.
        dm = discord_api.slash("factcheck", {}, guild=False)
        dm_textless = discord_api.message("", channel_id=int(dm["channel_id"]))
        link = f"https://discord.com/channels/@me/{dm['channel_id']}/{dm_textless['id']}"
        dm["data"]["options"] = [{"name": "message_link", "type": 3, "value": link}]
        assert "no text I can see" in await _answer_of(discord_api, dm)
        # A member who may not read this channel's history learns nothing of the message.
        link = f"{base}/{discord_api.CHANNEL_ID}/{here['id']}"
        blind = discord_api.slash("factcheck", {"message_link": link}, permissions=MEMBER)
        assert await _answer_of(discord_api, blind) == "That message was not found."
        assert not discord_api.calls_to(
            "GET", f"/channels/{discord_api.CHANNEL_ID}/messages/{here['id']}"
        )
        assert bot.service.store.checks.history() == []
        assert not discord_api.calls_to("GET", f"/channels/{foreign}/messages")


async def test_admins_set_ephemeral_replies_and_a_cooldown(
    discord_api: FakeDiscord,
    start_bot: Callable[..., contextlib.AbstractAsyncContextManager[FactCheckBot]],
) -> None:
    async with start_bot() as bot:
        member = discord_api.slash("factcheck-settings", {"ephemeral": True}, permissions=MEMBER)
        assert "Only server admins" in await _answer_of(discord_api, member)
        admin = discord_api.slash("factcheck-settings", {"ephemeral": True, "cooldown_s": 60.0})
        assert "Cooldown between checks: 60 s" in await _answer_of(discord_api, admin)
        chat = str(discord_api.GUILD_ID)
        assert (await bot.service.chats.settings("discord", chat, {"ephemeral": None}))[
            "ephemeral"
        ] is True

        first = discord_api.slash("factcheck", {"text": " "})
        assert "empty" in await _answer_of(discord_api, first)
        callback = discord_api.calls_to("POST", f"/interactions/{first['id']}/")[0]
        assert callback.body == {"type": 5, "data": {"flags": 64}}

        # The refused text started no cooldown; of two checks sent at once, one runs.
        both = [
            discord_api.slash("factcheck", {"text": POST}, user_id=950000000000000000 + n)
            for n in (1, 2)
        ]
        for payload in both:
            await discord_api.dispatch("INTERACTION_CREATE", payload)

        def refusal(call: Call) -> bool:
            ids = [f"/interactions/{p['id']}/" for p in both]
            return any(call.path.startswith(i) for i in ids) and call.body["type"] == 4

        refused = await discord_api.wait_for(refusal, timeout=20)
        assert "send it again in 60 s" in refused.body["data"]["content"]
        ran = [p for p in both if f"/{p['id']}/" not in refused.path]
        assert len(ran) == 1
        await discord_api.wait_for(_final(discord_api, ran[0]["token"]), timeout=60)
        deferred = discord_api.calls_to("POST", f"/interactions/{ran[0]['id']}/")[0]
        assert deferred.body == {"type": 5, "data": {"flags": 64}}
        assert len([c for c in discord_api.calls if refusal(c)]) == 1


async def test_the_servers_language_reaches_the_panel(
    discord_api: FakeDiscord,
    panel: FakeOpenAI,
    start_bot: Callable[..., contextlib.AbstractAsyncContextManager[FactCheckBot]],
) -> None:
    async with start_bot() as bot:
        service, chat = bot.service, str(discord_api.GUILD_ID)
        # Within the option's 10 characters: Discord's client sends no longer value.
        for name in ("French; do", "English go"):
            options = {"language": name, "cooldown_s": 5.0}
            refusal = await _answer_of(
                discord_api, discord_api.slash("factcheck-settings", options)
            )
            assert "choose one of" in refusal and "The panel writes in" not in refusal
            assert name.split()[0] in refusal  # the message's case is kept
            assert (await service.chats.settings("discord", chat, {"language": None}))[
                "language"
            ] is None
            assert (await service.chats.settings("discord", chat, {"cooldown_s": None}))[
                "cooldown_s"
            ] is None
        ok = discord_api.slash("factcheck-settings", {"language": "French"})
        # The readout is said in the language just set, which it names in its own words.
        assert "Le panel écrit en français." in await _answer_of(discord_api, ok)
        await _check(discord_api, discord_api.slash("factcheck", {"text": POST}))
        systems = {body["messages"][0]["content"] for body in panel.requests}
        # The part reader's questions are answered in the passage's own words or a fixed
        # yes/no, never prose: only the panel's writers are told the chat's language.
        writers = {s for s in systems if not s.startswith("You answer questions about a passage")}
        assert writers and all("summary) in French." in system for system in writers)
        reset = discord_api.slash("factcheck-settings", {"language": "English"})
        assert "The panel writes in English" in await _answer_of(discord_api, reset)


async def test_the_service_limits_apply_per_user(
    discord_api: FakeDiscord,
    make_settings: Callable[..., Settings],
    start_bot: Callable[..., contextlib.AbstractAsyncContextManager[FactCheckBot]],
) -> None:
    settings = make_settings(service={"user_per_minute": 1, "chat_per_minute": 100})
    async with start_bot(settings):
        await _check(discord_api, discord_api.slash("factcheck", {"text": POST}))
        again = discord_api.slash("factcheck", {"text": "Zupełnie inny post po polsku."})
        assert "in the last minute" in await _answer_of(discord_api, again)
        other = discord_api.slash(
            "factcheck", {"text": "Zupełnie inny post po polsku."}, user_id=960000000000000001
        )
        await _check(discord_api, other)  # another member, non-English text: a verdict


async def test_a_link_that_fails_to_fetch_still_spends_the_cooldown(
    discord_api: FakeDiscord,
    start_bot: Callable[..., contextlib.AbstractAsyncContextManager[FactCheckBot]],
    make_settings: Callable[..., Settings],
) -> None:
    async with start_bot(make_settings(guild_cooldown_s=60.0)) as bot:
        link = discord_api.slash("factcheck", {"text": "http://127.0.0.1:9/story"})
        # One sentence for every fetch refusal: nothing says the address is private.
        assert (
            await _answer_of(discord_api, link) == "http://127.0.0.1:9/story could not be fetched."
        )
        # Each link costs a request to some site: a failed one must not open the way
        # to another at once (the bot would fetch on demand, as fast as anyone asks).
        again = discord_api.slash("factcheck", {"text": POST}, user_id=950000000000000003)
        assert "send it again in" in await _answer_of(discord_api, again)
        assert bot.service.store.checks.history() == []


async def test_privacy_is_told_privately_with_the_retention(
    discord_api: FakeDiscord,
    start_bot: Callable[..., contextlib.AbstractAsyncContextManager[FactCheckBot]],
) -> None:
    async with start_bot():
        synced = discord_api.calls_to("PUT", f"/applications/{discord_api.APP_ID}/commands")
        told = {c["name"]: c for c in synced[0].body}["privacy"]
        assert told["integration_types"] == [0, 1] and told["contexts"] == [0, 1, 2]
        for guild in (True, False):
            payload = discord_api.slash("privacy", {}, guild=guild, permissions=MEMBER)
            assert await _answer_of(discord_api, payload) == privacy_text(30)
            reply = discord_api.calls_to("POST", f"/interactions/{payload['id']}/")[0]
            assert reply.body["type"] == 4 and reply.body["data"]["flags"] == 64  # ephemeral
    assert not discord_api.calls_to("POST", "/channels/")  # nothing posted in a channel


async def test_the_card_says_how_many_checks_are_left_when_few_remain(
    discord_api: FakeDiscord,
    make_settings: Callable[..., Settings],
    start_bot: Callable[..., contextlib.AbstractAsyncContextManager[FactCheckBot]],
) -> None:
    async with start_bot(make_settings(service={"user_daily": 3})):
        payload = discord_api.slash("factcheck", {"text": POST})
        await _check(discord_api, payload)
    embed = _patches(discord_api, payload["token"])[-1].body["embeds"][0]
    notes = {field["name"]: field["value"] for field in embed["fields"]}["Notes"]
    assert "• You have 2 checks left today." in notes.splitlines()


async def test_a_response_deleted_while_the_check_runs_gets_nothing_more(
    discord_api: FakeDiscord,
    panel: FakeOpenAI,
    start_bot: Callable[..., contextlib.AbstractAsyncContextManager[FactCheckBot]],
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO)
    panel.delay_s = 30.0  # the panel holds its answers until the response is gone
    async with start_bot() as bot:
        payload = discord_api.slash("factcheck", {"text": POST})
        token = payload["token"]
        await discord_api.dispatch("INTERACTION_CREATE", payload)
        await discord_api.wait_for(
            lambda c: c in _patches(discord_api, token) and c.status == 200, timeout=30
        )
        # Someone deletes the bot's response ("Dismiss message", or a moderator).
        deleted = len(discord_api.calls)
        del discord_api.messages[discord_api.originals.pop(token)]
        panel.release.set()
        card = await discord_api.wait_for(_final(discord_api, token), timeout=60)
        row = bot.service.store.checks.history(platform="discord")[0][0]
        checked = bot.service.store.checks.get(row.id)
        assert checked is not None and checked.status == "done"
        open_attempts = "SELECT count(*) FROM attempts WHERE ended_at IS NULL"
        async with asyncio.timeout(30):  # the answer is out: the request's attempt ends
            while bot.service.store.database.rows(open_attempts) != [(0,)]:
                await asyncio.sleep(0.02)
    after = discord_api.calls[deleted:]
    assert card.status == 404  # the card had nowhere to go ...
    # ... and nothing else was said: no progress edit once one was refused, nothing in
    # the channel, no DM, no follow-up message.
    edits = [c for c in after if c in _patches(discord_api, token)]
    assert [bool(c.body.get("embeds")) for c in edits] == [False, True]  # progress, card
    assert edits[-1] is card and all(c.status == 404 for c in edits)
    assert not [c for c in after if c.method == "POST" and c.path.startswith("/channels/")]
    assert not [c for c in after if c.path.startswith("/users/@me/channels")]
    assert not [c for c in after if c.method == "POST" and f"/{token}" in c.path]
    assert any("was deleted; nothing more is said" in r.getMessage() for r in caplog.records)
    ours = ("bots", "storage", "zofia_engine", "asyncio")  # not discord.py's voice warnings
    failed = [r for r in caplog.records if r.levelno >= logging.WARNING and r.name.startswith(ours)]
    assert not [r for r in caplog.records if r.exc_info] and not failed
