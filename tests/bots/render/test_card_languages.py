"""The languages the card speaks, as an asker meets them (issue 40, item 2).

- what is known of each language a chat can pick: its own name (a chat may pick it by
  that), its direction (a report page in Arabic, Hebrew, Persian or Urdu is right to
  left; tests/bots/web/test_web_browser.py looks at one), which languages match what an admin
  types;
- ``/settings language`` alone lists them all on Telegram, and ``/factcheck-settings
  language:`` offers them as the admin types on Discord (all 34 do not fit its 25
  choices);
- an asker whose app speaks Brazilian Portuguese, in a chat that set no language, gets
  the card, its buttons and a refusal in Portuguese: on Telegram (the fake Bot API) and
  on Discord (the fake Discord), each bot on the real check service with a scripted
  checker.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from tests.factories import full_report, stored_check
from tests.peers.fakes.fake_checker import FakeChecker, fake_service
from tests.peers.fixtures.telegram_setup import fake_bot, telegram_settings
from tests.peers.servers.discord_peer import Call, FakeDiscord, running_client
from tests.peers.servers.telegram_peer import FakeBotAPI, user

from bots.app.settings import Settings
from bots.discord.client import FactCheckBot
from bots.render.languages import (
    LANGUAGES,
    MAX_LANGUAGE,
    language_name,
    language_tag,
    languages_matching,
    own_name,
    text_direction,
)
from bots.render.sentences import UNSUPPORTED_INPUT, cooldown_sentence
from bots.render.words import translated_languages, words_for
from bots.telegram.commands import language_list
from bots.web.page import report_page
from bots.web.render import report_html
from storage.database import open_database
from storage.store import CheckStore

pytest_plugins = ["tests.peers.fixtures.discord_fixtures"]

PORTUGUESE = words_for("Portuguese")
POST = "O prefeito de Springfield proibiu as bicicletas em todas as ruas da cidade."
#: another post (not a repeat of the first, which the store would answer)
OTHER_POST = "A vacina contra a gripe deste ano foi retirada das farmácias de todo o país."
ANA = user(731, "Ana") | {"language_code": "pt-br"}
ANA_CHAT = {"id": ANA["id"], "type": "private", "first_name": "Ana"}
ADMIN = user(732, "Rui")
ADMIN_CHAT = {"id": ADMIN["id"], "type": "private", "first_name": "Rui"}
#: a sticker, as Telegram sends one: nothing the bot can check
STICKER = {
    "file_id": "s-pt",
    "file_unique_id": "spt",
    "width": 512,
    "height": 512,
    "is_animated": False,
    "is_video": False,
    "type": "regular",
}


# -------------------------------------------------------------------- the languages


def test_a_language_is_picked_by_its_english_name_or_its_own() -> None:
    assert own_name("Portuguese") == "português" and own_name("Arabic") == "العربية"
    assert language_name("Português") == "Portuguese" and language_name("ESPAÑOL") == "Spanish"
    assert language_name("русский") == "Russian" and language_name("हिन्दी") == "Hindi"
    assert language_name("english") == ""
    with pytest.raises(ValueError, match="not a language I can answer in"):
        language_name("Klingon")
    # Discord's option takes at most MAX_LANGUAGE characters: every own name fits.
    assert all(len(own_name(name)) <= MAX_LANGUAGE for name in LANGUAGES)


def test_right_to_left_languages() -> None:
    rtl = {name for name in LANGUAGES if text_direction(language_tag(name)) == "rtl"}
    assert rtl == {"Arabic", "Hebrew", "Persian", "Urdu"}
    assert text_direction("en") == "ltr" and text_direction("not a tag") == "ltr"


@pytest.mark.parametrize(
    ("language", "opening"),
    [
        ("Arabic", '<html lang="ar" dir="rtl">'),
        ("Persian", '<html lang="fa" dir="rtl">'),
        ("Portuguese", '<html lang="pt" dir="ltr">'),
        ("", '<html lang="en" dir="ltr">'),
    ],
)
def test_a_report_page_says_its_language_and_direction(
    tmp_path: Path, language: str, opening: str
) -> None:
    database = open_database(tmp_path / "zofia.db")
    try:
        row = stored_check(CheckStore(database), full_report("false"), language=language)
        html = report_html(report_page(row, full_report("false")))
    finally:
        database.close()
    assert opening in html


def test_the_languages_matching_what_is_typed_put_the_cards_first() -> None:
    worded = translated_languages()
    every = languages_matching("", worded)
    assert len(every) == len(LANGUAGES) + 1 and every[0] == "English"
    assert set(every[1 : len(worded) + 1]) == set(worded)  # then those with card words
    assert languages_matching("port", worded) == ["Portuguese"]
    assert languages_matching("PORTU", worded) == ["Portuguese"]
    assert languages_matching("ру", worded) == ["Russian"]  # by its own name
    assert languages_matching("a", worded)[0] == "Arabic"  # a card language first
    assert languages_matching("zz", worded) == []


def test_the_telegram_list_names_every_language_with_the_cards_first() -> None:
    listed = language_list()
    card, panel = listed.split("\n")[:2]
    for name in LANGUAGES:
        assert name in listed
    for name in ("Portuguese (português)", "Spanish (español)", "Arabic (العربية)"):
        assert name in card
    assert "Hindi" in card and "Indonesian" in card and "Italian" in card
    assert "Japanese (日本語)" in panel and "Portuguese" not in panel


# ----------------------------------------------------------------------- on Telegram


def _card(peer: FakeBotAPI, chat_id: int) -> dict[str, Any] | None:
    """The bot's newest verdict card in a chat (a message with a d: button)."""
    message: dict[str, Any]  # mypy types reversed() of a list of dict[str, Any] as Any
    for message in reversed(peer.bot_messages(chat_id)):
        rows = (message.get("reply_markup") or {}).get("inline_keyboard") or []
        if any(b.get("callback_data", "").startswith("d:") for row in rows for b in row):
            return message
    return None


def _texts(peer: FakeBotAPI, chat_id: int) -> list[str]:
    return [str(message.get("text", "")) for message in peer.bot_messages(chat_id)]


async def test_settings_language_lists_them_all_and_takes_a_languages_own_name(
    tmp_path: Path,
) -> None:
    async with FakeBotAPI() as peer:
        settings = telegram_settings(peer, tmp_path)
        async with fake_bot(settings, FakeChecker()) as service:
            peer.send(ADMIN_CHAT, ADMIN, "/settings language")
            listed = await peer.wait_for(lambda: _texts(peer, ADMIN["id"]))
            peer.send(ADMIN_CHAT, ADMIN, "/settings language português")
            await peer.wait_for(lambda: len(_texts(peer, ADMIN["id"])) == 2)
            stored = (
                await service.chats.settings("telegram", str(ADMIN["id"]), {"language": None})
            )["language"]
    assert listed[0] == language_list().replace("<b>", "").replace("</b>", "")
    assert all(name in listed[0] for name in LANGUAGES)
    assert stored == "Portuguese"
    # The readout is said in the language just set, which it names in its own words.
    assert "o debate em português;" in _texts(peer, ADMIN["id"])[1]


async def test_a_portuguese_telegram_user_gets_the_card_buttons_and_refusals_in_portuguese(
    tmp_path: Path,
) -> None:
    """Ana's Telegram app is in Brazilian Portuguese and her chat set no language: the
    card's words and buttons are Portuguese, and so are a limit's refusal and what a
    sticker is told."""
    checker = FakeChecker()
    async with FakeBotAPI() as peer:
        settings = telegram_settings(peer, tmp_path, service={"user_per_minute": 1})
        async with fake_bot(settings, checker, refusal_window_s=0):
            peer.send(ANA_CHAT, ANA, POST)
            card = await peer.wait_for(lambda: _card(peer, ANA["id"]))
            peer.send(ANA_CHAT, ANA, OTHER_POST)  # past her one check a minute
            refused = await peer.wait_for(
                lambda: [t for t in _texts(peer, ANA["id"]) if t.startswith("Você pediu")]
            )
            sticker = peer.send(ANA_CHAT, ANA)  # mutated before the bot polls it
            sticker["sticker"] = STICKER
            told = await peer.wait_for(
                lambda: [t for t in _texts(peer, ANA["id"]) if t.startswith("Consigo")]
            )
    assert [post.language for post in checker.runs] == ["Portuguese"]  # the panel's too
    assert card["text"].startswith("❌ Falso · confiança 80%\n")
    assert "O que as fontes dizem: “passed no such law”" in card["text"]
    buttons = [b["text"] for row in card["reply_markup"]["inline_keyboard"] for b in row]
    assert buttons[:3] == ["Debate", "Evidências", "Alegações"]
    (sentence,) = refused  # which limit, then when: refusal_sentence
    reason = "Você pediu 1 checagem no último minuto, o máximo por pessoa."
    waited = sentence.removeprefix(f"{reason} Envie-a de novo em ")
    assert waited.endswith(" s.") and waited[:-3].isdigit()  # "59 s."
    assert reason == PORTUGUESE.plural(
        "You have asked for {count} check in the last minute, the most one person may.",
        "You have asked for {count} checks in the last minute, the most one person may.",
        1,
    )
    again = PORTUGUESE.plural(
        "Please send it again in {wait}.", "Please send them again in {wait}.", 1, wait=waited[:-1]
    )
    assert sentence == f"{reason} {again}"
    assert told == [PORTUGUESE(UNSUPPORTED_INPUT)] and told[0] != UNSUPPORTED_INPUT


# ------------------------------------------------------------------------ on Discord

StartBot = Callable[..., contextlib.AbstractAsyncContextManager[FactCheckBot]]


@pytest.fixture
def start_bot(discord_api: FakeDiscord, tmp_path: Path) -> StartBot:
    @contextlib.asynccontextmanager
    async def start(checker: FakeChecker, cooldown_s: float = 0) -> AsyncIterator[FactCheckBot]:
        settings = Settings.model_validate(
            {
                "storage": {"path": str(tmp_path / "zofia.db"), "secret": "s3cret-for-tests-only"},
                "service": {"user_per_minute": 100, "chat_per_minute": 100, "user_daily": 1000},
                "discord": {"progress_interval_s": 0, "guild_cooldown_s": cooldown_s},
            }
        )
        async with (
            fake_service(settings, checker) as service,
            running_client(FactCheckBot(settings.discord, service)) as bot,
        ):
            yield bot

    return start


def _answer(payload: dict[str, Any]) -> Callable[[Call], bool]:
    """Matches the first thing the interaction is answered with that says something: a
    reply of its own, or an edit of its deferred response with words or an embed."""

    def match(call: Call) -> bool:
        body = call.body or {}
        reply = call.path.startswith(f"/interactions/{payload['id']}/") and body["type"] in (4, 8)
        edit = call.method == "PATCH" and f"/{payload['token']}/" in call.path
        return reply or (edit and bool(body.get("embeds") or body.get("content")))

    return match


def _card_of(payload: dict[str, Any]) -> Callable[[Call], bool]:
    """Matches the edit of the interaction's deferred response that shows its card (an
    embed), not a progress line before it."""

    def match(call: Call) -> bool:
        edit = call.method == "PATCH" and f"/{payload['token']}/" in call.path
        return edit and bool((call.body or {}).get("embeds"))

    return match


async def test_factcheck_settings_offers_the_languages_as_the_admin_types(
    discord_api: FakeDiscord, start_bot: StartBot
) -> None:
    """Discord's autocomplete: with nothing typed, English and the card's languages
    first, 25 at most; typed, those whose English or own name starts a word with it."""
    offered: dict[str, list[dict[str, str]]] = {}
    async with start_bot(FakeChecker()):
        for typed in ("", "port", "ру", "Fil"):
            payload = discord_api.slash("factcheck-settings", {"language": typed})
            payload["type"] = 4  # APPLICATION_COMMAND_AUTOCOMPLETE
            payload["data"]["options"][0]["focused"] = True
            await discord_api.dispatch("INTERACTION_CREATE", payload)
            call = await discord_api.wait_for(_answer(payload), timeout=30)
            assert call.body["type"] == 8  # APPLICATION_COMMAND_AUTOCOMPLETE_RESULT
            offered[typed] = call.body["data"]["choices"]
    every = offered[""]
    assert len(every) == 25 and every[0] == {"name": "English", "value": "English"}
    worded = translated_languages()
    assert {choice["value"] for choice in every[1 : len(worded) + 1]} == set(worded)
    assert {"name": "Portuguese (português)", "value": "Portuguese"} in every
    assert offered["port"] == [{"name": "Portuguese (português)", "value": "Portuguese"}]
    assert offered["ру"] == [{"name": "Russian (русский)", "value": "Russian"}]
    assert offered["Fil"] == [{"name": "Tagalog (Filipino), panel only", "value": "Tagalog"}]


async def test_a_portuguese_discord_user_gets_the_card_buttons_and_refusals_in_portuguese(
    discord_api: FakeDiscord, start_bot: StartBot
) -> None:
    """A requester whose Discord client is in Brazilian Portuguese, in a server that set
    no language: the embed's verdict and labels, its buttons and the server's cooldown
    are Portuguese."""
    checker = FakeChecker()
    async with start_bot(checker, cooldown_s=600):
        first = discord_api.slash("factcheck", {"text": POST})
        first["locale"] = "pt-BR"
        await discord_api.dispatch("INTERACTION_CREATE", first)
        await discord_api.wait_for(_card_of(first), timeout=30)
        second = discord_api.slash("factcheck", {"text": OTHER_POST})
        second["locale"] = "pt-BR"
        await discord_api.dispatch("INTERACTION_CREATE", second)
        refusal = await discord_api.wait_for(_answer(second), timeout=30)
    assert [post.language for post in checker.runs] == ["Portuguese"]
    card = discord_api.messages[discord_api.originals[first["token"]]]
    (embed,) = card["embeds"]
    assert embed["title"] == "❌ Falso"
    names = [field["name"] for field in embed["fields"]]
    assert "Confiança" in names and "Principais evidências" in names
    labels = [b.get("label") for row in card["components"] for b in row["components"]]
    assert labels[:3] == ["Debate", "Evidências", "Alegações"]
    said = refusal.body["data"]["content"] if "data" in refusal.body else refusal.body["content"]
    assert said.startswith("As checagens neste servidor são espaçadas")
    assert said == cooldown_sentence(599.0, "server", PORTUGUESE)  # "… em 10 min."
