"""Discord as its members meet it (issue 38): the real discord.py client against the
fake Discord (REST and gateway on loopback; it refuses what Discord refuses,
``tests.peers.servers.discord_limits``), the real check service on a tmp SQLite file and a
:class:`~tests.peers.fakes.fake_checker.FakeChecker` (the checks are plumbing here).

A refusal by a limit is said to the requester alone, names the limit and when it frees
up, in their language; a post too long for the ``text`` option comes as a ``.txt`` file,
or through the message command on the ``message.txt`` Discord makes of a long message;
the card's fixed words, the origin's included, are in the card's language; a DM's
requests are answered in turn.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from tests.peers.fakes.fake_checker import FakeChecker, Gate, fake_service
from tests.peers.servers.discord_peer import Call, ClientRefused, FakeDiscord, running_client

from bots.app.settings import Settings
from bots.discord.client import FactCheckBot
from bots.discord.commands import MAX_TEXT
from bots.discord.text_files import NOT_TEXT
from bots.render.privacy import privacy_text
from bots.render.words import words_for

pytest_plugins = ["tests.peers.fixtures.discord_fixtures"]

POST = "The mayor of Springfield has banned bicycles from every street in the city."
ANN, BOB = 920000000000000001, 920000000000000002
EPHEMERAL = 64
StartBot = Callable[..., contextlib.AbstractAsyncContextManager[FactCheckBot]]


@pytest.fixture
def checker() -> FakeChecker:
    return FakeChecker()


@pytest_asyncio.fixture
async def start_bot(
    discord_api: FakeDiscord, checker: FakeChecker, tmp_path: Path
) -> AsyncIterator[StartBot]:
    @contextlib.asynccontextmanager
    async def start(**service: Any) -> AsyncIterator[FactCheckBot]:
        limits = {"user_per_minute": 100, "chat_per_minute": 100, "user_daily": 1000}
        settings = Settings.model_validate(
            {
                "storage": {"path": str(tmp_path / "zofia.db"), "secret": "s3cret-for-tests-only"},
                "service": {**limits, **service},
                "discord": {"progress_interval_s": 0, "guild_cooldown_s": 0},
            }
        )
        async with (
            fake_service(settings, checker) as running,
            running_client(FactCheckBot(settings.discord, running)) as bot,
        ):
            yield bot

    yield start


def _of(payload: dict[str, Any]) -> Callable[[Call], bool]:
    """Calls that answer ``payload``: its callback, and its webhook's requests."""

    def match(call: Call) -> bool:
        ours = f"/interactions/{payload['id']}/" in call.path
        return ours or f"/webhooks/{FakeDiscord.APP_ID}/{payload['token']}" in call.path

    return match


def _card_shown(payload: dict[str, Any]) -> Callable[[Call], bool]:
    def match(call: Call) -> bool:
        return _of(payload)(call) and call.method == "PATCH" and bool(call.body.get("embeds"))

    return match


async def _card(peer: FakeDiscord, payload: dict[str, Any]) -> dict[str, Any]:
    """Dispatch ``payload`` and return the card's embed once the response shows it."""
    await peer.dispatch("INTERACTION_CREATE", payload)
    call = await peer.wait_for(_card_shown(payload), timeout=30)
    embed: dict[str, Any] = call.body["embeds"][0]
    return embed


def _private_followup(payload: dict[str, Any]) -> Callable[[Call], bool]:
    def match(call: Call) -> bool:
        body = call.body or {}
        return _of(payload)(call) and call.method == "POST" and "content" in body

    return match


# ---- item 3: refusals to the requester alone, naming the limit --------------------------


async def test_a_limits_refusal_is_said_privately_and_leaves_nothing_in_the_channel(
    discord_api: FakeDiscord, start_bot: StartBot
) -> None:
    async with start_bot(user_per_minute=1):
        await _card(discord_api, discord_api.slash("factcheck", {"text": POST}, user_id=ANN))
        again = discord_api.slash("factcheck", {"text": f"{POST} Again."}, user_id=ANN)
        await discord_api.dispatch("INTERACTION_CREATE", again)
        told = await discord_api.wait_for(_private_followup(again), timeout=30)
    calls = [call for call in discord_api.calls if _of(again)(call)]
    assert told.body["flags"] == EPHEMERAL  # only the requester sees it
    assert told.body["content"].startswith(
        "You have asked for 1 check in the last minute, the most one person may."
    )
    assert "Please send it again in" in told.body["content"]
    # The public "thinking…" response was deleted before the refusal, never edited.
    assert [c.method for c in calls] == ["POST", "DELETE", "POST"]
    assert all(c.status in (200, 204) for c in calls)
    assert int(discord_api.originals.get(again["token"], 0)) not in discord_api.messages
    public = [
        m
        for m in discord_api.messages.values()
        if not m.get("flags", 0) & EPHEMERAL and "asked for" in m["content"]
    ]
    assert public == []


async def test_a_refusal_names_the_limit_in_the_requesters_discord_language(
    discord_api: FakeDiscord, start_bot: StartBot
) -> None:
    async with start_bot(user_daily=1):
        await _card(discord_api, discord_api.slash("factcheck", {"text": POST}, user_id=BOB))
        again = discord_api.slash("factcheck", {"text": f"{POST} Noch mal."}, user_id=BOB)
        again["locale"] = "de"
        await discord_api.dispatch("INTERACTION_CREATE", again)
        told = await discord_api.wait_for(_private_followup(again), timeout=30)
    assert told.body["flags"] == EPHEMERAL
    assert told.body["content"].startswith(
        "Du hast in den letzten 24 Stunden 1 Prüfung angefragt, so viele wie eine Person darf."
    )
    assert "Bitte schicke ihn in" in told.body["content"]
    assert " h erneut." in told.body["content"]  # the day's window frees up in hours


# ---- item 4: a post too long to paste ------------------------------------------------------


async def test_discords_client_refuses_a_text_over_the_options_limit(
    discord_api: FakeDiscord, start_bot: StartBot
) -> None:
    async with start_bot():
        too_long = discord_api.slash("factcheck", {"text": "x" * (MAX_TEXT + 1)})
        with pytest.raises(ClientRefused, match="4001 characters"):
            await discord_api.dispatch("INTERACTION_CREATE", too_long)
    registered = {o["name"]: o for o in discord_api.commands["factcheck"]["options"]}
    assert registered["text"]["max_length"] == MAX_TEXT
    assert registered["file"]["type"] == 11  # an attachment: the long post's way in


def _long_post(words: int) -> str:
    return " ".join(
        f"Sentence {n} of a very long post about bicycles in Springfield." for n in range(words)
    )


async def test_a_long_post_sent_as_a_text_file_is_checked_whole(
    discord_api: FakeDiscord, checker: FakeChecker, start_bot: StartBot
) -> None:
    text = _long_post(160)  # about 10,000 characters: more than the option takes
    assert len(text) > 2 * MAX_TEXT
    async with start_bot():
        file = discord_api.attachment(
            b"\xef\xbb\xbf" + text.encode(), "post.txt", content_type="text/plain; charset=utf-8"
        )
        await _card(discord_api, discord_api.slash("factcheck", {"file": file}))
        menu_file = discord_api.attachment(text.encode(), "message.txt", content_type="text/plain")
        long_message = discord_api.message(
            "", author=discord_api.user(ANN, "poster"), attachments=[menu_file]
        )
        await _card(discord_api, discord_api.message_command("Fact-check", long_message))
    assert [post.text for post in checker.runs] == [text]  # the second was a repeat
    assert len(discord_api.downloads) == 2


async def test_a_file_that_is_not_text_is_refused_before_anything_is_read(
    discord_api: FakeDiscord, checker: FakeChecker, start_bot: StartBot
) -> None:
    async with start_bot():
        pdf = discord_api.attachment(b"%PDF-1.7", "post.pdf", content_type="application/pdf")
        payload = discord_api.slash("factcheck", {"file": pdf})
        await discord_api.dispatch("INTERACTION_CREATE", payload)
        reply = await discord_api.wait_for(_of(payload), timeout=30)
    assert reply.body["type"] == 4 and reply.body["data"]["content"] == NOT_TEXT
    assert reply.body["data"]["flags"] == EPHEMERAL
    assert checker.runs == [] and discord_api.downloads == []


# ---- item 6: the card's words in its language ------------------------------------------------


async def test_the_origin_on_a_french_card_is_french(
    discord_api: FakeDiscord, start_bot: StartBot
) -> None:
    target = discord_api.message(POST, author=discord_api.user(ANN, "newsfan"))
    async with start_bot():
        payload = discord_api.message_command("Fact-check", target)
        payload["locale"] = "fr"
        embed = await _card(discord_api, payload)
    fields = {field["name"]: field["value"] for field in embed["fields"]}
    assert fields["Origine"] == "un message Discord de Newsfan"
    assert not any("Discord message by" in value for value in fields.values())


# ---- item 7: a DM's requests in turn ---------------------------------------------------------


async def test_a_dms_requests_are_answered_in_turn_saying_how_many_are_ahead(
    discord_api: FakeDiscord, checker: FakeChecker, start_bot: StartBot
) -> None:
    checker.gate = gate = Gate()
    async with start_bot():
        posts = [f"{POST} Report {n}." for n in range(3)]
        payloads = [
            discord_api.slash("factcheck", {"text": text}, user_id=ANN, guild=False)
            for text in posts
        ]
        await discord_api.dispatch("INTERACTION_CREATE", payloads[0])
        await gate.held()
        for payload in payloads[1:]:
            await discord_api.dispatch("INTERACTION_CREATE", payload)

        def waiting(payload: dict[str, Any], ahead: int) -> Callable[[Call], bool]:
            line = f"In line: {ahead} of your posts"
            return lambda c: _of(payload)(c) and line in str((c.body or {}).get("content"))

        await discord_api.wait_for(waiting(payloads[1], 1), timeout=30)
        await discord_api.wait_for(waiting(payloads[2], 2), timeout=30)
        assert gate.waiting == 1  # one at a time
        gate.open()
        for payload in payloads:
            await discord_api.wait_for(_card_shown(payload), timeout=30)
    assert [post.text for post in checker.runs] == posts  # in the order they came


# ---- issue 48: /privacy in the asker's language ------------------------------------------------


async def test_privacy_is_said_in_the_askers_discord_language_in_messages_that_fit(
    discord_api: FakeDiscord, start_bot: StartBot
) -> None:
    """A French asker's /privacy is the French text with the deployment's 30 days, only
    for them; it is longer than one Discord message, so it comes as the reply and a
    follow-up, each within 2,000 characters, cut between paragraphs."""
    french = privacy_text(30, words_for("French"))
    assert len(french) > 2000  # else the test below proves nothing of the cut
    async with start_bot():
        payload = discord_api.slash("privacy", {}, user_id=ANN)
        payload["locale"] = "fr"
        await discord_api.dispatch("INTERACTION_CREATE", payload)
        webhook = f"/webhooks/{FakeDiscord.APP_ID}/{payload['token']}"
        await discord_api.wait_for(lambda c: c.method == "POST" and c.path.startswith(webhook))
        reply = discord_api.calls_to("POST", f"/interactions/{payload['id']}/")[0]
        follow_ups = discord_api.calls_to("POST", webhook)
    parts = [reply.body["data"], *(call.body for call in follow_ups)]
    assert "\n\n".join(part["content"] for part in parts) == french
    assert "après 30 jours" in french and "after 30 days" not in french
    assert all(len(part["content"]) <= 2000 for part in parts)
    assert [part["flags"] for part in parts] == [EPHEMERAL] * len(parts) == [EPHEMERAL] * 2
    assert not discord_api.calls_to("POST", "/channels/")  # nothing posted in a channel
