"""Discord rendering within Discord's limits, escaping, link parsing and the CLI entry."""

from __future__ import annotations

import datetime as dt
import re

import discord
import pytest
from click.testing import CliRunner

from tests.peers.fakes.fake_checker import scripted_report

from bots.cli import main
from bots.discord.commands import parse_message_link
from bots.discord.render import escape, progress_message, section_messages, shorten, verdict_embed
from bots.render.card import VERDICTS, Link, VerdictCard, verdict_card
from bots.render.sections import Block, Section
from bots.service.records import Outcome
from zofia_engine.post import Post

HOSTILE = (
    "@everyone @here **Breaking**: [the official source](https://evil.example/phish) "
    "<@123456789012345678> <@&42> `code` ||spoiler|| __under__ ~~gone~~\n# Heading\n- item\n> quote"
)


def _card(**changes: object) -> VerdictCard:
    icon, words, colour = VERDICTS["true"]
    fields: dict[str, object] = {
        "check_id": "abcDEF123_-xyz00",
        "verdict": "true",
        "icon": icon,
        "headline": words,
        "colour": colour,
        "confidence": "87%",
        "summary": "The city council confirmed the new law.",
        "lean": "",
        "links": (Link("City council minutes", "https://example.org/minutes"),),
        "origin": "a Discord message by Newsfan",
        "published": dt.date(2026, 3, 1),
        "repeat_note": "",
        "notes": (),
    }
    fields.update(changes)
    return VerdictCard(**fields)  # type: ignore[arg-type]


def test_escape_defuses_mentions_markdown_and_masked_links() -> None:
    shown = escape(HOSTILE)
    assert "@everyone" not in shown and "@here" not in shown
    assert "@\u200beveryone" in shown
    assert re.search(r"(?<!\\)[*\[\]()<>`|_~#]", shown) is None  # none left unescaped
    assert "\n\\- item" in shown  # a list dash at a line start too
    # Every character is still there: only backslashes and a zero-width space were added.
    assert shown.replace("\\", "").replace("\u200b", "") == HOSTILE


def test_the_verdict_embed_keeps_within_every_limit() -> None:
    card = _card(
        summary=("A very long summary sentence. " * 400) + HOSTILE,
        links=tuple(Link("T" * 400 + "]", f"https://example.org/{n})x") for n in range(3)),
        notes=tuple("N" * 900 for _ in range(3)),
        origin="O" * 3000,
        repeat_note="Repeat of a check from 2026-11-20 14:03 UTC.",
    )
    embed = verdict_embed(card)
    assert len(embed) <= 6000
    assert len(embed.title or "") <= 256 and len(embed.description or "") <= 4096
    assert embed.description and embed.description.endswith("…")
    assert all(len(field.value or "") <= 1024 for field in embed.fields)
    links = next(field.value for field in embed.fields if field.name == "Top evidence")
    assert links and "(https://example.org/0%29x)" in links  # ")" cannot end the link early
    assert embed.footer.text == f"{card.repeat_note} Check {card.check_id}"
    assert embed.colour is not None and embed.colour.value == card.colour


def test_the_embed_shows_the_card() -> None:
    embed = verdict_embed(_card(summary=HOSTILE))
    fields = {field.name: field.value for field in embed.fields}
    assert fields["Confidence"] == "87%" and fields["Published"] == "2026-03-01"
    assert fields["Top evidence"] == "• [City council minutes](https://example.org/minutes)"
    assert embed.title == "✅ True"
    assert "@everyone" not in (embed.description or "")


def test_a_long_debate_turn_is_split_at_2000_characters_and_loses_nothing() -> None:
    long_body = " ".join(f"Sentence {n} about a *bold* claim." for n in range(300))
    turns = (
        Block("Round 1 · For (true)", long_body),
        Block("Round 1 · Judge: continue", "Short."),
        Block("Round 2 · Against (false)", "x" * 4500),  # no break at all: hard cuts
    )
    messages = section_messages(Section("debate", "Debate", turns))
    assert all(len(message) <= 2000 for message in messages)
    starts = [n for n, message in enumerate(messages) if message.startswith("**Round")]
    assert len(starts) == 3 and starts[0] == 0  # each turn starts its own message
    first_turn = "\n".join(messages[: starts[1]]).split("\n", 1)[1]
    assert first_turn.replace("\n", " ").replace("\\", "") == long_body.replace("\\", "")
    assert "".join(messages[starts[2] :]).count("x") == 4500


def test_evidence_is_packed_into_few_messages() -> None:
    blocks = tuple(
        Block(f"[web-{n}] Title {n} (brave)", "Passage. " * 30, f"https://example.org/{n}")
        for n in range(12)
    )
    messages = section_messages(Section("evidence", "Evidence", blocks))
    assert 1 < len(messages) < len(blocks)
    assert all(len(message) <= 2000 for message in messages)
    assert "<https://example.org/11>" in messages[-1]


def test_progress_keeps_the_latest_steps_within_one_message() -> None:
    lines = [f"✓ step {n} finished" for n in range(500)]
    text = progress_message(lines)
    assert len(text) <= 2000 and text.startswith("⏳ Checking…")
    assert text.endswith("step 499 finished") and "step 0 finished" not in text
    assert shorten("word " * 100, 20).endswith("…") and len(shorten("word " * 100, 20)) <= 20


def test_message_links_are_parsed() -> None:
    assert parse_message_link("https://discord.com/channels/1/22/333") == (1, 22, 333)
    dm = parse_message_link(" https://ptb.discordapp.com/channels/@me/22/333/ ")
    assert dm is not None and (dm.guild, dm.channel, dm.message) == (None, 22, 333)
    assert parse_message_link("https://discord.com/channels/1/22") is None
    assert parse_message_link("https://evil.example/channels/1/22/333") is None


def test_zofia_discord_needs_a_token_and_never_prints_it() -> None:
    runner = CliRunner()
    help_text = runner.invoke(main, ["discord", "--help"])
    assert help_text.exit_code == 0 and "Discord bot" in help_text.output
    missing = runner.invoke(main, ["discord"], env={"DISCORD_BOT_TOKEN": ""})
    assert missing.exit_code == 1
    assert "DISCORD_BOT_TOKEN" in missing.output


@pytest.mark.parametrize("verdict", list(VERDICTS))
def test_every_outcome_has_an_embed_within_discords_limits(verdict: str) -> None:
    post = Post(text=HOSTILE * 40)
    report = scripted_report(post, verdict=verdict, summary=("Long *odd* words. " * 400))
    card = verdict_card(Outcome("abcDEF123_-xyz00", report), origin=HOSTILE * 20)
    embed = verdict_embed(card)
    icon, words, colour = VERDICTS[verdict]
    assert len(embed) <= 6000 and len(embed.description or "") <= 4096
    assert all(len(field.value or "") <= 1024 for field in embed.fields)
    assert embed.title == f"{icon} {words}" and embed.colour == discord.Colour(colour)
    fields = {field.name: field.value or "" for field in embed.fields}
    # The lean is the first line of the description, right under the headline.
    first = (embed.description or "").split("\n")[0].replace("\\", "")  # as a reader sees it
    assert ("The panel leans false (62%)" in first) == (verdict == "unproven")
    assert "Not settled" not in fields
    assert ("Confidence" in fields) == (verdict in ("true", "false", "misleading"))
