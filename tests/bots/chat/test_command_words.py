"""The commands' own replies speak the asker's language: Telegram's ``/start``, ``/help``
and ``/settings`` readout in the chat's setting, else the asker's app language; Discord's
``/factcheck-settings`` readout in the server's setting, else the asker's client
language (``/factcheck-help``'s is tested in ``test_first_run.py``).

Through the fake Bot API and the fake Discord on loopback, with the real check service
and a :class:`~tests.peers.fakes.fake_checker.FakeChecker` standing for the engine: no
command here checks anything.
"""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

from tests.peers.fakes.fake_checker import FakeChecker
from tests.peers.fixtures.discord_setup import quick_discord_bot
from tests.peers.fixtures.telegram_setup import fake_bot, handled, telegram_settings
from tests.peers.servers.discord_peer import Call, FakeDiscord
from tests.peers.servers.telegram_peer import FakeBotAPI, group, user

from bots.chat.quiet import DEFAULT_MIN_CONFIDENCE, parse_min_confidence
from bots.chat.setting_refusals import SettingRefused
from bots.discord.guild_settings import SHOWN_TO_CHANNEL
from bots.render.words import ENGLISH, translated_languages, words_for
from bots.telegram.commands import AUTO_CHECK_OFF, HELP, START
from bots.telegram.first_run import first_run_html

FRENCH = words_for("French")
#: an asker whose Telegram app is French, in a chat that set no language
AMELIE = user(761, "Amélie") | {"language_code": "fr-FR"}
CHAT = {"id": AMELIE["id"], "type": "private", "first_name": "Amélie"}
GROUP = group(-100761, "Rumeurs")

pytest_plugins = ["tests.peers.fixtures.discord_fixtures"]


async def test_a_french_app_gets_start_help_and_the_settings_in_french(tmp_path: Path) -> None:
    checker = FakeChecker()
    async with (
        FakeBotAPI() as peer,
        fake_bot(telegram_settings(peer, tmp_path), checker) as service,
    ):
        for command in ("/start", "/help"):
            peer.send(CHAT, AMELIE, command)
        peer.send(GROUP, AMELIE, "/settings")
        await peer.wait_for(lambda: len(peer.bot_messages(AMELIE["id"])) == 4)
        await peer.wait_for(lambda: peer.bot_messages(GROUP["id"]))
        peer.send(CHAT, AMELIE, "/settings language Klingon")
        refused = await peer.wait_for(lambda: peer.bot_messages(AMELIE["id"])[4:])
        await handled(peer, service)
        menus = {
            c.params.get("language_code"): c.params["commands"] for c in peer.sent("setMyCommands")
        }
    # Telegram shows a French app the French menu; any other, the English one.
    french_menu = {c["command"]: c["description"] for c in menus["fr"]}
    assert french_menu["help"] == "ce que fait le bot et comment le solliciter"
    assert [c["command"] for c in menus["fr"]] == [c["command"] for c in menus[None]]
    assert set(menus) == {None, *translated_languages().values()}
    # A name it does not know: refused in French, the names kept as the command takes them.
    assert refused[0]["text"].startswith(
        "'Klingon' n'est pas une langue dans laquelle je peux répondre ; "
        "choisissez-en une parmi : English, Arabic,"
    )
    shown = sorted(
        peer.html[(CHAT["id"], m["message_id"])] for m in peer.bot_messages(CHAT["id"])[:4]
    )
    # /start and /help, each followed by the example in the same words (in either order:
    # the two commands are handled at once).
    assert shown == sorted([FRENCH(START), FRENCH(HELP), *[first_run_html(FRENCH)] * 2])
    assert FRENCH(START) != START and FRENCH(HELP) != HELP
    assert FRENCH(START).startswith("Je vérifie si une publication est vraie")
    assert "<b>Dans un groupe</b> : répondez à une publication par /check" in FRENCH(HELP)
    # The group's readout: the switch, the threshold as French writes a percentage, and
    # the language and why, with the commands and the setting's names kept as they are.
    (readout,) = peer.bot_messages(GROUP["id"])
    said = peer.html[(GROUP["id"], readout["message_id"])]
    assert said.startswith(FRENCH(AUTO_CHECK_OFF)) and "<b>désactivée</b>" in said
    least = FRENCH.percent(DEFAULT_MIN_CONFIDENCE)
    assert (
        least == "60\u00a0%"
        and f"au moins <b>{least}</b>" in said
        and "/settings confidence 70\u00a0%" in said
    )
    assert "en <b>français</b> ici (aucune langue n'est choisie" in said
    assert "/settings language NAME (English revient à l'anglais" in said
    assert "Auto-check" not in said and "The panel" not in said
    assert checker.runs == []


def test_a_confidence_refused_is_said_in_the_askers_words_and_logged_in_english() -> None:
    for typed, french in [
        ("lots", "Donnez la confiance en pourcentage, par exemple 70%, et non 'lots'."),
        ("150%", "La confiance doit être comprise entre 0% et 100%, et non '150%'."),
    ]:
        with pytest.raises(SettingRefused) as refused:
            parse_min_confidence(typed)
        assert refused.value.said(FRENCH) == french
        assert str(refused.value) == refused.value.said(ENGLISH)
        assert str(refused.value).startswith("The confidence" if "%" in typed else "Give the")


# ---- Discord -----------------------------------------------------------------------------


def _followed_up(token: str, call: Call) -> bool:
    return "/webhooks/" in call.path and f"/{token}" in call.path and call.method == "POST"


async def test_a_french_client_gets_the_servers_settings_in_french_until_one_is_set(
    discord_api: FakeDiscord, tmp_path: Path
) -> None:
    checker = FakeChecker()
    async with quick_discord_bot(tmp_path, checker):
        said = []
        for options in ({}, {"cooldown_s": 5.0, "language": "Klingon"}, {"language": "German"}):
            payload = discord_api.slash("factcheck-settings", options)
            payload["locale"] = "fr"
            await discord_api.dispatch("INTERACTION_CREATE", payload)
            follow = functools.partial(_followed_up, payload["token"])
            said.append(str((await discord_api.wait_for(follow)).body["content"]))
    unset, klingon, german = said
    # No language set: the asker's French, naming what the panel writes in as the setting.
    assert unset.startswith("Délai entre deux vérifications : 0 s. ")
    assert FRENCH(SHOWN_TO_CHANNEL) in unset
    assert "dans la langue Discord de chaque personne qui demande" in unset
    # A name it does not know: refused in the asker's French, and nothing is changed.
    assert klingon.startswith("'Klingon' n'est pas une langue dans laquelle je peux répondre")
    # Set to German: the server's setting wins over the asker's client (the cooldown is
    # still 0 s: the refusal stored nothing).
    assert german.startswith("Wartezeit zwischen Prüfungen: 0 s. ")
    assert german.endswith("Das Gremium schreibt auf Deutsch.")
    assert checker.runs == []


async def test_discord_describes_the_commands_in_each_client_language(
    discord_api: FakeDiscord, tmp_path: Path
) -> None:
    async with quick_discord_bot(tmp_path, FakeChecker()):
        synced = discord_api.calls_to("PUT", f"/applications/{discord_api.APP_ID}/commands")
    commands = {c["name"]: c for c in synced[0].body}
    factcheck = commands["factcheck"]
    # The English stays the description; a French client reads the French one.
    assert factcheck["description"].startswith("Fact-check a post: paste its text")
    assert factcheck["description_localizations"]["fr"] == FRENCH(factcheck["description"])
    assert factcheck["description_localizations"]["fr"].startswith("Vérifier une publication")
    options = {o["name"]: o for o in factcheck["options"]}
    link = options["message_link"]
    assert link["description"] == "A link to a message in this server."
    assert link["description_localizations"]["fr"] == FRENCH(link["description"])
    assert link["description_localizations"]["fr"] != link["description"]
    # Every description, in each locale of the card's languages Discord has (no Arabic);
    # names stay as typed, and the message command has no description to translate.
    locales = {"de", "es-ES", "es-419", "fr", "hi", "id", "it", "pt-BR", "ru"}
    described = [c for c in commands.values() if c.get("type", 1) == 1]
    described += [o for c in described for o in c.get("options") or []]
    assert len(described) == 11
    for each in described:
        assert set(each["description_localizations"]) == locales, each["name"]
        assert not each.get("name_localizations"), each["name"]
    assert not commands["Fact-check"].get("description_localizations")
