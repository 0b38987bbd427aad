"""The cards the docs show are the bots' own renderings, so the docs cannot drift.

``docs/telegram.md`` and ``docs/discord.md`` show, under "What a user sees", a false
verdict's card, its Evidence thread and an image card as text, and under "When a
limit says no" a refusal of each kind, each in a fenced block between
``<!-- card:NAME -->`` and ``<!-- /card -->``. These tests render the same cards
now, with the bots' real renderers, from the reports of ``tests/factories.py`` (fixed
check ids, dates and addresses), and fail when a block differs from its rendering.

To update the docs after a change to a renderer or a card, run
``ZOFIA_WRITE_DOCS=1 .venv/bin/pytest tests/project/test_doc_cards.py``: the blocks are then
rewritten instead of compared (read the diff before committing it).

The text form is what a user reads: Telegram's HTML with bold as ``**…**``, italics
plain, a link as ``title (address)``, an expandable quote's lines after ``> ``; Discord's
markdown unescaped, with its masked links the same way; buttons as ``[ label ]``, a row
a line; each message after the first after a ``────`` line.
"""

from __future__ import annotations

import datetime as dt
import os
import re
from html.parser import HTMLParser
from pathlib import Path

import discord
import pytest
from telegram import InlineKeyboardMarkup

from tests.factories import full_report

from bots.discord import render as discord_render
from bots.discord.buttons import verdict_view
from bots.render.card import VerdictCard, verdict_card
from bots.render.links import report_url
from bots.render.sections import section
from bots.render.sentences import (
    cooldown_reason,
    cooldown_sentence,
    refusal_reason,
    refusal_sentence,
    refusals_sentence,
    waiting_sentence,
)
from bots.service.records import Outcome
from bots.service.refusals import Limit, Refusal
from bots.service.settings import ServiceSettings
from bots.telegram import render as telegram_render
from zofia_engine.report import Report

ROOT = Path(__file__).resolve().parents[2]
WRITE = os.environ.get("ZOFIA_WRITE_DOCS") == "1"

#: fixed ids and addresses, so that a rendering is the same on every run
CHECK_ID = "Zq3mP8xK2vLwT0aB"
IMAGE_ID = "Pk7nR2sW9dYcH4eF"
PUBLIC_URL = "https://factcheck.example.org"
#: the line between two messages of a thread
NEXT_MESSAGE = "────"

_BLOCK = re.compile(r"<!-- card:(?P<name>[a-z-]+) -->\n(?P<body>.*?)<!-- /card -->", re.DOTALL)


# ---- the reports and cards -------------------------------------------------------------


def false_report() -> Report:
    """A full check of the factories' post ending false: a published fact-check, web
    sources of every stance, claims, a debate; no image."""
    return full_report("false").model_copy(update={"images": []})


def image_report() -> Report:
    """The same check of a post that was only an image: its text was read from it."""
    return full_report("false").model_copy(update={"caption": False})


#: where the false post came from, as each bot says it: a forward from a Telegram channel,
#: a Discord message checked from its menu (``bots/discord/posts.py``)
ORIGINS = {"telegram": "channel Springfield Today", "discord": "a Discord message by Sam"}


def false_card(platform: str) -> VerdictCard:
    """As a post from elsewhere gets it: its origin and first date are on the card."""
    return verdict_card(
        Outcome(CHECK_ID, false_report()),
        origin=ORIGINS[platform],
        published=dt.date(2026, 3, 24),
    )


def image_card() -> VerdictCard:
    """As an image sent straight to the bot gets it (no origin)."""
    return verdict_card(Outcome(IMAGE_ID, image_report()))


# ---- Telegram as text ------------------------------------------------------------------


class _TelegramText(HTMLParser):
    """Telegram HTML as its reader sees it (see the module's docstring)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.links: list[tuple[str, int]] = []  # (href, where its text starts)
        self.quote_at: int | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "b":
            self.parts.append("**")
        elif tag == "a":
            self.links.append((dict(attrs).get("href") or "", len(self.parts)))
        elif tag == "blockquote":
            self.quote_at = len(self.parts)
        elif tag != "i":
            raise AssertionError(f"a tag the docs do not show yet: <{tag}>")

    def handle_endtag(self, tag: str) -> None:
        if tag == "b":
            self.parts.append("**")
        elif tag == "a":
            href, start = self.links.pop()
            shown = "".join(self.parts[start:])
            del self.parts[start:]
            self.parts.append(shown if shown == href or not href else f"{shown} ({href})")
        elif tag == "blockquote" and self.quote_at is not None:
            quoted = "".join(self.parts[self.quote_at :])
            del self.parts[self.quote_at :]
            self.parts.append("\n".join(f"> {line}".rstrip() for line in quoted.split("\n")))
            self.quote_at = None

    def handle_data(self, data: str) -> None:
        self.parts.append(data)


def telegram_text(markup: str) -> str:
    parser = _TelegramText()
    parser.feed(markup)
    parser.close()
    return "".join(parser.parts)


def _buttons(rows: list[list[str]]) -> str:
    return "\n".join(" ".join(f"[ {label} ]" for label in row) for row in rows)


def telegram_buttons(keyboard: InlineKeyboardMarkup) -> str:
    return _buttons(
        [
            [f"{b.text} ({b.url})" if b.url else b.text for b in row]
            for row in keyboard.inline_keyboard
        ]
    )


def telegram_card(card: VerdictCard) -> str:
    keyboard = telegram_render.card_keyboard(
        card.check_id, report_url=report_url(PUBLIC_URL, card.check_id), words=card.words
    )
    return f"{telegram_text(telegram_render.card_html(card))}\n\n{telegram_buttons(keyboard)}"


def telegram_thread(report: Report, kind: str) -> str:
    messages = telegram_render.section_messages(section(kind, report))
    return f"\n{NEXT_MESSAGE}\n".join(telegram_text(m) for m in messages)


# ---- Discord as text -------------------------------------------------------------------

_MASKED = re.compile(r"(?<!\\)\[(?P<text>(?:\\.|[^\\\]])*)\]\((?P<url>[^)\s]+)\)")
_ANGLED = re.compile(r"(?<!\\)<(?P<url>https?://[^>\s]+)>")
_ESCAPED = re.compile(r"\\([\\*_~|`>#\[\]()<+-])")


def discord_text(markdown: str) -> str:
    """Discord markdown as its reader sees it: escapes gone, a masked link as ``text
    (address)``, an address in ``<…>`` (no preview) bare; ``**bold**`` kept."""
    markdown = _MASKED.sub(lambda m: f"{m['text']} ({m['url']})", markdown)
    markdown = _ANGLED.sub(lambda m: m["url"], markdown)
    return _ESCAPED.sub(r"\1", markdown)


def discord_buttons(view: discord.ui.View) -> str:
    rows = []
    for row in view.to_components():
        labels = []
        for button in row["components"]:
            said = " ".join(
                word
                for word in ((button.get("emoji") or {}).get("name"), button.get("label"))
                if word
            )
            labels.append(f"{said} ({button['url']})" if button.get("url") else said)
        rows.append(labels)
    return _buttons(rows)


def discord_card(card: VerdictCard) -> str:
    embed = discord_render.verdict_embed(card)
    lines = [f"[embed · colour #{embed.colour.value:06X}]" if embed.colour else "[embed]"]
    lines.append(discord_text(embed.title or ""))
    if embed.description:
        lines += ["", discord_text(embed.description)]
    lines.append("")
    for field in embed.fields:
        value = discord_text(field.value or "")
        # A list goes under its name, as Discord shows every field; one line after it.
        lines.append(
            f"{field.name}:\n{value}" if value.startswith("• ") else f"{field.name}: {value}"
        )
    if embed.footer.text:
        lines += ["", embed.footer.text]
    view = verdict_view(
        card.check_id, report_url=report_url(PUBLIC_URL, card.check_id), words=card.words
    )
    return "\n".join([*lines, "", discord_buttons(view)])


def discord_thread(report: Report, kind: str, check_id: str) -> str:
    """The thread a section button opens on the verdict message: the section's title
    (posted first, as ``bots/discord/buttons.py`` does), then its messages."""
    part = section(kind, report)
    messages = [f"**{part.title}**", *discord_render.section_messages(part)]
    said = f"\n{NEXT_MESSAGE}\n".join(discord_text(m) for m in messages)
    return f"[thread “{discord_render.thread_name(check_id)}”]\n{said}"


# ---- refusals ---------------------------------------------------------------------------

_LIMITS = ServiceSettings()  # the default limits: the numbers the refusals say
_PENDING = _LIMITS.max_pending_checks

#: a refusal of each kind, with the setting that bounds it, as the defaults say it; the
#: waits are examples (a rate's frees as its oldest request leaves the window, a share
#: held by checks under way when they end, a spent budget at midnight, UTC)
REFUSALS: list[tuple[str, Refusal]] = [
    ("user_per_minute", Refusal(Limit.USER_RATE, 40, count=_LIMITS.user_per_minute)),
    ("chat_per_minute", Refusal(Limit.CHAT_RATE, 25, count=_LIMITS.chat_per_minute)),
    ("user_daily", Refusal(Limit.USER_DAILY, 5 * 3600, count=_LIMITS.user_daily)),
    ("chat_daily", Refusal(Limit.CHAT_DAILY, 3 * 3600, count=_LIMITS.chat_daily)),
    ("private_queue", Refusal(Limit.PRIVATE_QUEUE, 90, count=_LIMITS.private_queue)),
    (
        "user_pending_share",
        Refusal(Limit.USER_PENDING, 90, count=int(_PENDING * _LIMITS.user_pending_share)),
    ),
    (
        "chat_pending_share",
        Refusal(Limit.CHAT_PENDING, 90, count=int(_PENDING * _LIMITS.chat_pending_share)),
    ),
    ("max_pending_checks", Refusal(Limit.QUEUE, 4 * 60, count=_PENDING)),
    ("user_budget_share, held", Refusal(Limit.USER_BUDGET, 90, held=True)),
    ("user_budget_share, spent", Refusal(Limit.USER_BUDGET, 9 * 3600)),
    ("chat_budget_share, held", Refusal(Limit.CHAT_BUDGET, 90, held=True)),
    ("chat_budget_share, spent", Refusal(Limit.CHAT_BUDGET, 9 * 3600)),
    ("daily_token_budget, held", Refusal(Limit.BUDGET, 90, held=True)),
    ("daily_token_budget, spent", Refusal(Limit.BUDGET, 9 * 3600)),
]


def telegram_refusals() -> str:
    """Each refusal as Telegram shows it (``TelegramScreen.refuse``, the refusals of a
    burst said once: ``bots/telegram/refusals.py``), the group cooldown's, a burst's,
    and a forward waiting its turn."""
    said = [(name, refusal_sentence(refusal)) for name, refusal in REFUSALS]
    said.append(("chat_cooldown_s (a group)", cooldown_sentence(7)))
    burst = refusal_reason(REFUSALS[0][1])
    said.append(("a burst: one answer", refusals_sentence(25, burst, 40)))
    said.append(("private_queue: a forward waiting its turn", waiting_sentence(2)))
    return f"\n{NEXT_MESSAGE}\n".join(
        f"[{name}]\n{telegram_text(telegram_render.quote_text(text))}" for name, text in said
    )


def discord_refusals() -> str:
    """Each refusal as Discord shows it: a private (ephemeral) message to the requester
    (``bots/discord/check_flow.py``), escaped as the bot sends it."""
    said = [(name, refusal_sentence(refusal)) for name, refusal in REFUSALS]
    said.append(("guild_cooldown_s", cooldown_sentence(7, "server")))
    said.append(("a DM: a request waiting its turn", waiting_sentence(1)))
    shown = [f"[{name}]\n{discord_text(discord_render.escape(text))}" for name, text in said]
    return "[each a private (ephemeral) message: only the requester sees it]\n" + (
        f"\n{NEXT_MESSAGE}\n".join(shown)
    )


# ---- the blocks ------------------------------------------------------------------------


def renderings() -> dict[str, dict[str, str]]:
    """Each page's blocks, by name, as they are rendered now."""
    report = false_report()
    return {
        "telegram.md": {
            "telegram-false": telegram_card(false_card("telegram")),
            "telegram-evidence": telegram_thread(report, "evidence"),
            "telegram-image": telegram_card(image_card()),
            "telegram-refusals": telegram_refusals(),
        },
        "discord.md": {
            "discord-false": discord_card(false_card("discord")),
            "discord-evidence": discord_thread(report, "evidence", CHECK_ID),
            "discord-image": discord_card(image_card()),
            "discord-refusals": discord_refusals(),
        },
    }


def fenced(rendering: str) -> str:
    return f"```text\n{rendering}\n```\n"


def _check_page(page: str, expected: dict[str, str]) -> None:
    path = ROOT / "docs" / page
    text = path.read_text(encoding="utf-8")
    found = [m["name"] for m in _BLOCK.finditer(text)]
    assert found == list(expected), f"docs/{page} should hold the blocks {list(expected)}"
    for name, rendering in expected.items():
        assert "```" not in rendering and "<!--" not in rendering, name
    if WRITE:

        def block(match: re.Match[str]) -> str:
            name = match["name"]
            return f"<!-- card:{name} -->\n{fenced(expected[name])}<!-- /card -->"

        path.write_text(_BLOCK.sub(block, text), encoding="utf-8")
        pytest.skip(f"rewrote docs/{page}: run again without ZOFIA_WRITE_DOCS to compare")
    for match in _BLOCK.finditer(text):
        assert match["body"] == fenced(expected[match["name"]]), (
            f"docs/{page}: the block {match['name']!r} is not what the bot shows now; "
            "ZOFIA_WRITE_DOCS=1 .venv/bin/pytest tests/project/test_doc_cards.py rewrites it"
        )


@pytest.mark.parametrize("page", ["telegram.md", "discord.md"])
def test_the_pages_show_the_cards_as_the_bots_render_them(page: str) -> None:
    _check_page(page, renderings()[page])


def test_the_shown_cards_are_the_ones_the_docs_describe() -> None:
    """The blocks show what the page's words say they show."""
    telegram, discord_ = renderings()["telegram.md"], renderings()["discord.md"]
    for name, text in [*telegram.items(), *discord_.items()]:
        assert "<" not in text.replace("<!", "") and "&#" not in text, name  # no markup left
    assert telegram["telegram-false"].startswith("❌ **False** · confidence 87%")
    assert "Read from the image: “BIKES BANNED" in telegram["telegram-image"]
    assert "Read from the image: “BIKES BANNED" in discord_["discord-image"]
    assert "Read from the image" not in telegram["telegram-false"]
    assert telegram["telegram-evidence"].startswith("**Evidence**")
    assert "[ Debate ] [ Evidence ] [ Claims ]" in telegram["telegram-false"]
    assert "[ 🗣️ Debate ] [ 📚 Evidence ] [ 🔎 Claims ]" in discord_["discord-false"]
    assert f"Check {CHECK_ID}" in discord_["discord-false"]


def test_the_text_forms_show_what_the_markup_shows() -> None:
    assert telegram_text(
        '<b>A &amp; B</b> <i>x</i> <a href="https://e.org/?a=1&amp;b=2">t&lt;</a>\n'
        "<blockquote expandable>one\n\ntwo</blockquote>"
    ) == ("**A & B** x t< (https://e.org/?a=1&b=2)\n> one\n>\n> two")
    assert telegram_text('<a href="https://e.org">https://e.org</a>') == "https://e.org"
    escaped = discord_render.escape("a (b) [c](https://x.org) *d* <https://y.org>")
    assert discord_text(escaped) == "a (b) [c](https://x.org) *d* <https://y.org>"
    assert discord_text("• [T \\(x\\)](https://e.org/a)\n<https://e.org/b>") == (
        "• T (x) (https://e.org/a)\nhttps://e.org/b"
    )


def test_the_images_page_links_to_both() -> None:
    page = (ROOT / "docs" / "images.md").read_text(encoding="utf-8")
    assert "(telegram.md#what-a-user-sees)" in page
    assert "(discord.md#what-a-user-sees)" in page


def test_the_pages_show_a_refusal_of_each_kind() -> None:
    """Every limit's refusal is in both pages' blocks, each naming its limit and when it
    frees up; a share held by checks under way frees in minutes, not at midnight."""
    pages = renderings()
    for text in (
        pages["telegram.md"]["telegram-refusals"],
        pages["discord.md"]["discord-refusals"],
    ):
        for name, refusal in REFUSALS:
            assert f"[{name}]\n{refusal_sentence(refusal)}" in text, name
        assert "Checks under way hold the rest of today's checking budget. Please send" in text
        assert text.count("Please send it again in") >= len(REFUSALS)
    assert {refusal.limit for _, refusal in REFUSALS} == set(Limit)
    burst = pages["telegram.md"]["telegram-refusals"]
    assert "25 posts were not checked. You have asked for 3 checks" in burst
    assert cooldown_reason() in burst
