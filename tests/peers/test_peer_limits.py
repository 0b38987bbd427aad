"""The project's peers refuse what the real platforms refuse (issue 38 item 8), so that
a test whose bot breaks a limit fails against the peer as it would against the
platform: requests that break each limit, sent to the peer as a client would, and the
real bots shown to keep within them.

Discord (``tests.peers.servers.discord_peer``, ``tests.peers.servers.discord_limits``): a
message's content and embeds, its components, a modal, a command as registered, an option
a client would not send, the 3-second acknowledgement and a second one. Telegram
(``tests.peers.servers.telegram_peer``): a message's length, its HTML entities, an inline
keyboard, and a callback query's one answer, in time and short.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from tests.peers.fakes.fake_checker import FakeChecker, fake_service
from tests.peers.fixtures.telegram_setup import fake_bot, handled, telegram_settings
from tests.peers.servers.discord_peer import ClientRefused, FakeDiscord, running_client
from tests.peers.servers.telegram_peer import TOKEN, FakeBotAPI, user

from bots.app.settings import Settings
from bots.discord.client import FactCheckBot

pytest_plugins = ["tests.peers.fixtures.discord_fixtures"]

POST = "The mayor of Springfield has banned bicycles from every street in the city."


# ---- Discord ---------------------------------------------------------------------------------


async def _discord(peer: FakeDiscord, method: str, path: str, body: Any) -> tuple[int, Any]:
    async with (
        aiohttp.ClientSession() as http,
        http.request(method, f"{peer.api_base}{path}", json=body) as answer,
    ):
        text = await answer.text()
        return answer.status, json.loads(text) if text else None


def _button(custom_id: str, label: str = "ok") -> dict[str, Any]:
    return {"type": 2, "style": 2, "label": label, "custom_id": custom_id}


FIELD = {"name": "n", "value": "v"}
TOO_MUCH: dict[str, dict[str, Any]] = {
    "content": {"content": "x" * 2001},
    "title": {"embeds": [{"title": "x" * 257}]},
    "description": {"embeds": [{"description": "x" * 4097}]},
    "fields": {"embeds": [{"fields": [FIELD] * 26}]},
    "field value": {"embeds": [{"fields": [{"name": "n", "value": "x" * 1025}]}]},
    "empty field": {"embeds": [{"fields": [{"name": "n", "value": ""}]}]},
    "footer": {"embeds": [{"footer": {"text": "x" * 2049}}]},
    "6,000 in all": {"embeds": [{"description": "x" * 4000}, {"description": "x" * 2001}]},
    "rows": {"components": [{"type": 1, "components": [_button(f"b{n}")]} for n in range(6)]},
    "buttons": {"components": [{"type": 1, "components": [_button(f"b{n}") for n in range(6)]}]},
    "label": {"components": [{"type": 1, "components": [_button("b", "x" * 81)]}]},
    "custom id": {"components": [{"type": 1, "components": [_button("x" * 101)]}]},
    "twice": {"components": [{"type": 1, "components": [_button("b"), _button("b")]}]},
}


@pytest.mark.parametrize("broken", sorted(TOO_MUCH))
async def test_the_discord_peer_refuses_a_message_past_discords_limits(
    discord_api: FakeDiscord, broken: str
) -> None:
    body = TOO_MUCH[broken]
    channel = f"/channels/{discord_api.CHANNEL_ID}/messages"
    status, answer = await _discord(discord_api, "POST", channel, body)
    assert (status, answer["code"]) == (400, 50035), broken
    hook = f"/webhooks/{discord_api.APP_ID}/itoken-1"
    status, answer = await _discord(discord_api, "POST", hook, body)
    assert (status, answer["code"]) == (400, 50035), broken
    status, _ = await _discord(discord_api, "POST", channel, {"content": "x" * 2000})
    assert status == 200  # at the limit is within it


async def test_the_discord_peer_refuses_a_modal_and_a_command_past_their_limits(
    discord_api: FakeDiscord,
) -> None:
    field = {"type": 4, "custom_id": "note", "style": 2, "label": "Note", "max_length": 4001}
    modal = {
        "custom_id": "m",
        "title": "x" * 46,
        "components": [{"type": 1, "components": [field]}],
    }
    status, answer = await _discord(
        discord_api, "POST", "/interactions/1/itoken-1/callback", {"type": 9, "data": modal}
    )
    assert (status, answer["code"]) == (400, 50035)
    assert any("title" in e for e in answer["errors"]["_errors"])
    assert any("max_length" in e for e in answer["errors"]["_errors"])
    text = {"type": 3, "name": "text", "description": "The text.", "max_length": 6001}
    command = {"name": "factcheck", "description": "Check.", "type": 1, "options": [text]}
    commands = f"/applications/{discord_api.APP_ID}/commands"
    status, answer = await _discord(discord_api, "PUT", commands, [command])
    assert (status, answer["code"]) == (400, 50035)
    text["max_length"] = 6000
    text["description_localizations"] = {"fr": "x" * 101}  # as long as a description may be
    status, answer = await _discord(discord_api, "PUT", commands, [command])
    assert status == 400 and "description_localizations.fr" in str(answer["errors"])
    text["description_localizations"] = {"fr": "Le texte."}
    assert (await _discord(discord_api, "PUT", commands, [command]))[0] == 200
    with pytest.raises(ClientRefused, match="6001 characters"):
        await discord_api.dispatch(
            "INTERACTION_CREATE", discord_api.slash("factcheck", {"text": "x" * 6001})
        )


async def test_an_interaction_is_acknowledged_once_and_within_three_seconds(
    discord_api: FakeDiscord,
) -> None:
    assert discord_api.ack_deadline_s == 3.0  # Discord's
    discord_api.ack_deadline_s = 0.05  # here, so that the test need not wait 3 s
    late, twice = discord_api.slash("privacy", {}), discord_api.slash("privacy", {})
    for payload in (late, twice):
        await discord_api.dispatch("INTERACTION_CREATE", payload)
    path = "/interactions/{id}/{token}/callback"
    deferred = {"type": 5, "data": {"flags": 64}}
    first = await _discord(discord_api, "POST", path.format(**twice), deferred)
    assert first[0] == 200
    await asyncio.sleep(0.1)
    status, answer = await _discord(discord_api, "POST", path.format(**late), deferred)
    assert (status, answer["code"]) == (404, 10062)  # Unknown interaction
    discord_api.ack_deadline_s = 3.0
    status, answer = await _discord(discord_api, "POST", path.format(**twice), deferred)
    assert (status, answer["code"]) == (400, 40060)  # already acknowledged


async def test_the_discord_bots_largest_card_keeps_within_the_limits(
    discord_api: FakeDiscord, tmp_path: Path
) -> None:
    """A summary of 10,000 characters, an origin of 300: the card is cut to fit, and the
    peer takes it (it would answer 400 to a card past a limit)."""
    checker = FakeChecker(summary="The council passed no such law. " * 320)
    settings = Settings.model_validate(
        {
            "storage": {"path": str(tmp_path / "z.db"), "secret": "s3cret-for-tests-only"},
            "service": {"user_per_minute": 100},
            "discord": {"progress_interval_s": 0, "guild_cooldown_s": 0},
        }
    )
    author = discord_api.user(930000000000000001, "n" * 32)
    target = discord_api.message(POST, author=author)
    async with (
        fake_service(settings, checker) as service,
        running_client(FactCheckBot(settings.discord, service)),
    ):
        payload = discord_api.message_command("Fact-check", target)
        await discord_api.dispatch("INTERACTION_CREATE", payload)

        def shown(call: Any) -> bool:
            return payload["token"] in call.path and bool((call.body or {}).get("embeds"))

        card = await discord_api.wait_for(shown, timeout=30)
    assert card.status == 200
    assert len(card.body["embeds"][0]["description"]) <= 4096
    assert all(c.status < 400 for c in discord_api.calls)


# ---- Telegram --------------------------------------------------------------------------------


async def _telegram(peer: FakeBotAPI, method: str, **params: Any) -> dict[str, Any]:
    form = {k: v if isinstance(v, str) else json.dumps(v) for k, v in params.items()}
    async with (
        aiohttp.ClientSession() as http,
        http.post(f"{peer.root}/bot{TOKEN}/{method}", data=form) as answer,
    ):
        found: dict[str, Any] = await answer.json()
        return found


ANN = user(741, "Ann")


@pytest.mark.parametrize(
    ("text", "markup", "error"),
    [
        ("x" * 4097, None, "message is too long"),
        ("<b>bold", None, "can't parse entities"),
        ("<blink>x</blink>", None, "Unsupported start tag"),
        ("a & b", None, "can't parse entities"),
        ("x", [[{"text": "Debate", "callback_data": "d" * 65}]], "BUTTON_DATA_INVALID"),
        ("x", [[{"text": "", "callback_data": "d"}]], "BUTTON_TEXT_INVALID"),
        ("x", [[{"text": "Site", "url": "javascript:alert(1)"}]], "BUTTON_URL_INVALID"),
        ("x", [[{"text": "Two", "url": "https://e.org", "callback_data": "d"}]], "button"),
    ],
)
async def test_the_telegram_peer_refuses_a_message_telegram_refuses(
    text: str, markup: list[list[dict[str, Any]]] | None, error: str
) -> None:
    async with FakeBotAPI() as peer:
        params: dict[str, Any] = {"chat_id": ANN["id"], "text": text, "parse_mode": "HTML"}
        if markup is not None:
            params["reply_markup"] = {"inline_keyboard": markup}
        answer = await _telegram(peer, "sendMessage", **params)
        assert answer["ok"] is False and answer["error_code"] == 400
        assert error in answer["description"]
        good = await _telegram(peer, "sendMessage", chat_id=ANN["id"], text="x" * 4096)
        assert good["ok"] is True  # at the limit is within it


async def test_a_callback_query_is_answered_once_in_time_and_briefly() -> None:
    async with FakeBotAPI() as peer:
        sent = await _telegram(peer, "sendMessage", chat_id=ANN["id"], text="card")
        message = peer.messages[(ANN["id"], sent["result"]["message_id"])]
        late, long_, twice = (peer.press(message, "d:x", ANN) for _ in range(3))
        assert sorted(peer.unanswered()) == sorted([late, long_, twice])
        peer.callback_deadline_s = 0.05  # Telegram's is seconds; here, short
        await asyncio.sleep(0.1)
        answer = await _telegram(peer, "answerCallbackQuery", callback_query_id=late)
        assert "query is too old" in answer["description"]
        peer.callback_deadline_s = 15.0
        answer = await _telegram(
            peer, "answerCallbackQuery", callback_query_id=long_, text="x" * 201
        )
        assert answer["description"] == "Bad Request: MESSAGE_TOO_LONG"
        assert (await _telegram(peer, "answerCallbackQuery", callback_query_id=twice))["ok"]
        again = await _telegram(peer, "answerCallbackQuery", callback_query_id=twice)
        assert "query is too old" in again["description"]
        unknown = await _telegram(peer, "answerCallbackQuery", callback_query_id="nope")
        assert unknown["ok"] is False
        assert sorted(peer.unanswered()) == sorted([late, long_])


async def test_the_telegram_bot_answers_every_tap_in_time(tmp_path: Path) -> None:
    async with FakeBotAPI() as peer:
        settings = telegram_settings(peer, tmp_path)
        async with fake_bot(settings, FakeChecker()) as service:
            chat = {"id": ANN["id"], "type": "private", "first_name": "Ann"}
            peer.send(chat, ANN, POST)

            def card() -> dict[str, Any] | None:
                cards = (m for m in peer.bot_messages(ANN["id"]) if '"d:' in json.dumps(m))
                return next(cards, None)

            found = await peer.wait_for(card)
            rows = found["reply_markup"]["inline_keyboard"]
            taps = [b["callback_data"] for row in rows for b in row if "callback_data" in b]
            for data in taps:
                peer.press(found, data, ANN)
            await peer.wait_for(lambda: not peer.unanswered(), timeout=30)
            await handled(peer, service)
    assert len(taps) >= 5 and not peer.unanswered()
    assert not [c for c in peer.calls if c.error and c.method == "answerCallbackQuery"]
