"""The first-run example (issue 40, item 4): ``/start`` and ``/help`` on Telegram, and
``/factcheck-help`` on Discord, show a short false post and the card the bot gives it,
rendered by each bot's own renderer from the report shipped with the package, marked
"Example:", with one line on what the buttons do; never a live check.

Through the fake Bot API and the fake Discord on loopback, with the real check service
and a :class:`~tests.peers.fakes.fake_checker.FakeChecker` standing for the engine: the example asks
it nothing and stores no check.

``docs/telegram.md`` and ``docs/discord.md`` show the example as the bots render it, in
a fenced block between ``<!-- example:NAME -->`` and ``<!-- /example -->``;
``ZOFIA_WRITE_DOCS=1`` rewrites the blocks, as for ``tests/project/test_doc_cards.py``.
"""

from __future__ import annotations

import contextlib
import functools
import re
import tomllib
from collections.abc import AsyncIterator
from fnmatch import fnmatch
from pathlib import Path

import pytest

from tests.peers.fakes.fake_checker import FakeChecker
from tests.peers.fixtures.discord_setup import quick_discord_bot
from tests.peers.fixtures.telegram_setup import fake_bot, handled, telegram_settings
from tests.peers.servers.discord_peer import Call, FakeDiscord
from tests.peers.servers.telegram_peer import FakeBotAPI, group, user
from tests.project.test_doc_cards import WRITE, discord_text, fenced, telegram_text

from bots.chat.examples import BUTTONS, FIRST_RUN_POST, first_run_card, first_run_report
from bots.discord.help import HELP as DISCORD_HELP
from bots.discord.help import example_message
from bots.render.words import words_for
from bots.service.checks import CheckService
from bots.telegram.commands import HELP, START
from bots.telegram.first_run import first_run_html
from bots.telegram.render import card_html
from zofia_engine.report import Report

pytest_plugins = ["tests.peers.fixtures.discord_fixtures"]

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE_JSON = ROOT / "bots" / "chat" / "examples" / "first_run.json"
ANN = user(751, "Ann", "ann_r")
CHAT = {"id": ANN["id"], "type": "private", "first_name": "Ann"}
GROUP = group(-100751, "Rumour mill")
EPHEMERAL = 64
_BLOCK = re.compile(
    r"<!-- example:(?P<name>[a-z-]+) -->\n(?P<body>.*?)<!-- /example -->", re.DOTALL
)


# ---- the shipped report --------------------------------------------------------------------


def test_the_shipped_example_is_a_valid_report_of_a_false_post_and_is_packaged() -> None:
    report = Report.model_validate_json(EXAMPLE_JSON.read_text(encoding="utf-8"))
    assert report == first_run_report()
    assert report.verdict == "false" and report.confidence.value is not None
    assert [item.source for item in report.evidence] == ["web", "web", "wikipedia"]
    assert all(item.url.startswith("https://") for item in report.evidence)
    assert len(FIRST_RUN_POST) < 140  # a short post
    # The package ships it: a package-data pattern of bots/ matches the file.
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    patterns = data["tool"]["setuptools"]["package-data"]["bots"]
    shipped = EXAMPLE_JSON.relative_to(ROOT / "bots").as_posix()
    assert any(fnmatch(shipped, pattern) for pattern in patterns)


def test_the_example_card_is_the_card_renderers_own_in_the_chats_words() -> None:
    html = first_run_html()
    assert html.startswith("<b>Example:</b> someone asks me to check this post:")
    assert f"<blockquote>{card_html(first_run_card())}</blockquote>" in html
    german = first_run_html(words_for("German"))
    assert german.startswith("<b>Beispiel:</b> Jemand bittet mich")
    percent = words_for("German").percent(0.92)  # "92 %", with a no-break space
    assert f"❌ <b>Falsch</b> · Sicherheit {percent}" in german
    assert words_for("German")(BUTTONS) in german and BUTTONS not in german


# ---- Telegram ---------------------------------------------------------------------------


@contextlib.asynccontextmanager
async def _telegram(
    tmp_path: Path, checker: FakeChecker
) -> AsyncIterator[tuple[FakeBotAPI, CheckService]]:
    async with FakeBotAPI() as peer:
        settings = telegram_settings(peer, tmp_path)
        async with fake_bot(settings, checker) as service:
            yield peer, service


async def test_start_says_what_the_bot_does_then_shows_the_example_checking_nothing(
    tmp_path: Path,
) -> None:
    checker = FakeChecker()
    async with _telegram(tmp_path, checker) as (peer, service):
        peer.send(CHAT, ANN, "/start")
        peer.send(GROUP, ANN, "/help")
        await peer.wait_for(lambda: len(peer.bot_messages(GROUP["id"])) == 2)
        await handled(peer, service)
        stored = service.store.checks.history(limit=5)
    intro, example = peer.bot_messages(ANN["id"])
    assert intro["text"] == START
    assert example["text"].startswith("Example: someone asks me to check this post:")
    assert FIRST_RUN_POST in example["text"] and "❌ False · confidence 92%" in example["text"]
    assert example["text"].endswith(BUTTONS)
    assert "reply_markup" not in example  # no buttons: nothing to tap on an example
    assert peer.html[(ANN["id"], example["message_id"])] == first_run_html()
    helped, group_example = peer.bot_messages(GROUP["id"])
    assert peer.html[(GROUP["id"], helped["message_id"])] == HELP
    assert peer.html[(GROUP["id"], group_example["message_id"])] == first_run_html()
    # Never a live check: the engine was asked nothing, and no check was stored.
    assert checker.runs == [] and checker.questions == []
    assert stored == []


async def test_a_german_user_gets_the_example_in_german(tmp_path: Path) -> None:
    checker = FakeChecker()
    ute = user(752, "Ute") | {"language_code": "de"}
    async with _telegram(tmp_path, checker) as (peer, service):
        peer.send({"id": ute["id"], "type": "private", "first_name": "Ute"}, ute, "/start")
        await peer.wait_for(lambda: len(peer.bot_messages(ute["id"])) == 2)
        await handled(peer, service)
    example = peer.bot_messages(ute["id"])[1]
    assert peer.html[(ute["id"], example["message_id"])] == first_run_html(words_for("German"))
    assert example["text"].startswith("Beispiel:") and checker.runs == []


# ---- Discord -----------------------------------------------------------------------------


async def test_factcheck_help_shows_the_example_to_the_asker_alone(
    discord_api: FakeDiscord, tmp_path: Path
) -> None:
    checker = FakeChecker()
    async with quick_discord_bot(tmp_path, checker) as bot:
        payloads = [
            discord_api.slash("factcheck-help", {}),
            discord_api.slash("factcheck-help", {}),
        ]
        payloads[1]["locale"] = "fr"
        answers = []
        for payload in payloads:
            await discord_api.dispatch("INTERACTION_CREATE", payload)
            answers.append(await discord_api.wait_for(functools.partial(_answers, payload["id"])))
        stored = bot.service.store.checks.history(limit=5)
    registered = discord_api.commands["factcheck-help"]
    assert registered["integration_types"] == [0, 1] and registered["contexts"] == [0, 1, 2]
    english, french = (answer.body for answer in answers)
    assert english["type"] == 4 and english["data"]["flags"] == EPHEMERAL
    content, embed = example_message()
    assert english["data"]["content"] == content and content.startswith(DISCORD_HELP)
    assert "**Example:** someone asks me to check this post:" in content
    [shown] = english["data"]["embeds"]
    assert shown == embed.to_dict()
    assert shown["title"] == "❌ False" and shown["footer"]["text"] == BUTTONS
    assert "Check example" not in str(shown)  # no check id: it is no check
    assert "components" not in english["data"]  # no buttons to tap on an example
    assert french["data"]["embeds"][0]["title"] == "❌ Faux"
    assert "**Exemple :**" in french["data"]["content"]
    # The help above the example is the asker's language too, its markdown kept.
    said = words_for("French")(DISCORD_HELP)
    assert french["data"]["content"].startswith(said) and said != DISCORD_HELP
    assert "`/factcheck` : collez le texte d'une publication" in said
    assert checker.runs == [] and stored == []


# ---- the docs ------------------------------------------------------------------------------


def _answers(interaction_id: str, call: Call) -> bool:
    return f"/{interaction_id}/" in call.path


def _discord_example() -> str:
    content, embed = example_message()
    assert embed.colour is not None
    lines = [discord_text(content), "", f"[embed · colour #{embed.colour.value:06X}]"]
    lines += [discord_text(embed.title or ""), "", discord_text(embed.description or ""), ""]
    for field in embed.fields:
        value = discord_text(field.value or "")
        lines.append(
            f"{field.name}:\n{value}" if value.startswith("• ") else f"{field.name}: {value}"
        )
    lines += ["", embed.footer.text or ""]
    return "\n".join(lines)


def renderings() -> dict[str, dict[str, str]]:
    """Each page's example block, as the bots render it now."""
    return {
        "telegram.md": {"telegram-first-run": f"{START}\n────\n{telegram_text(first_run_html())}"},
        "discord.md": {"discord-first-run": _discord_example()},
    }


@pytest.mark.parametrize("page", ["telegram.md", "discord.md"])
def test_the_pages_show_the_example_as_the_bots_render_it(page: str) -> None:
    path = ROOT / "docs" / page
    text = path.read_text(encoding="utf-8")
    expected = renderings()[page]
    assert [m["name"] for m in _BLOCK.finditer(text)] == list(expected)
    if WRITE:

        def block(match: re.Match[str]) -> str:
            name = match["name"]
            return f"<!-- example:{name} -->\n{fenced(expected[name])}<!-- /example -->"

        path.write_text(_BLOCK.sub(block, text), encoding="utf-8")
        pytest.skip(f"rewrote docs/{page}: run again without ZOFIA_WRITE_DOCS to compare")
    for match in _BLOCK.finditer(text):
        assert match["body"] == fenced(expected[match["name"]]), (
            f"docs/{page}: the block {match['name']!r} is not what the bot shows now; "
            "ZOFIA_WRITE_DOCS=1 .venv/bin/pytest tests/bots/chat/test_first_run.py rewrites it"
        )


def test_the_example_blocks_show_no_markup_and_the_example_mark() -> None:
    for blocks in renderings().values():
        for name, text in blocks.items():
            assert "<" not in text and "&#" not in text and "```" not in text, name
            assert "Example:" in text and FIRST_RUN_POST in text, name
