"""Telegram HTML rendering, checked by the fake Bot API's HTML parser (Telegram's rules),
and the parts of the application that need no server: token redaction, the command."""

from __future__ import annotations

import datetime as dt
import json
import logging
from pathlib import Path
from typing import Any, cast

import pytest
from click.testing import CliRunner
from telegram import Bot
from telegram.error import BadRequest, Forbidden

from tests.peers.fakes.fake_checker import FakeChecker, fake_service, scripted_report
from tests.peers.servers.telegram_peer import MAX_TEXT, TelegramError, parse_html

from bots.app.settings import Settings
from bots.app.telegram import TokenRedactor
from bots.chat.check_flow import card_for, card_target
from bots.cli import main
from bots.render.card import VERDICTS, Link, VerdictCard, verdict_card
from bots.render.sections import Block, Section
from bots.service.records import CardState, Message, Outcome
from bots.telegram.card_edits import edit_card
from bots.telegram.context import TelegramContext
from bots.telegram.deliveries import delivery_target, post_delivered
from bots.telegram.render import card_html, card_keyboard, html_length, section_messages
from storage.deliveries import Claim
from zofia_engine.post import Post

HOSTILE = 'A <b>bold</b> claim & a </blockquote> "quote" for @durov_news <script>'
DEFUSED = HOSTILE.replace("@", "@\u2060")


def _card(**changes: object) -> VerdictCard:
    fields: dict[str, object] = {
        "check_id": "abcDEF123_-xyz45",
        "verdict": "false",
        "icon": "❌",
        "headline": "False",
        "colour": 0xC62828,
        "confidence": "87%",
        "summary": HOSTILE,
        "lean": "",
        "links": (Link(HOSTILE, "https://example.org/a?b=1&c=<2>"),),
        "origin": f"channel {HOSTILE}",
        "published": dt.date(2026, 11, 20),
        "repeat_note": "Repeat of a check from 2026-11-20 14:03 UTC.",
        "notes": (HOSTILE,),
    }
    fields.update(changes)
    return VerdictCard(**fields)  # type: ignore[arg-type]


def test_the_card_escapes_every_model_string() -> None:
    text, _ = parse_html(card_html(_card()))
    assert text.startswith("❌ False · confidence 87%")
    assert text.count(DEFUSED) == 4  # summary, link title, origin, note: all as plain text
    assert "published 2026-11-20" in text and "Repeat of a check from 2026-11-20" in text
    assert 'href="https://example.org/a?b=1&amp;c=&lt;2&gt;"' in card_html(_card())


def test_a_runaway_summary_still_fits_one_card() -> None:
    card = _card(summary="Words & more words. " * 600)
    html = card_html(card)
    text, _ = parse_html(html)
    assert html_length(html) <= MAX_TEXT and "… (see Debate)" in text


def test_sections_split_at_paragraphs_within_4096() -> None:
    paragraphs = [f"Paragraph {n} <&>: " + "ünïcødé 🚲 text. " * 60 for n in range(20)]
    blocks = (Block("Round 1 · For (true)", "\n\n".join(paragraphs), "https://e.org/?a=1&b=2"),)
    messages = section_messages(Section("debate", "Debate", blocks))
    assert len(messages) >= 5
    plain = []
    for message in messages:
        assert html_length(message) <= MAX_TEXT
        text, quotes = parse_html(message)
        assert quotes and all(quotes)  # every body is in an expandable blockquote
        plain.append(text)
    joined = "\n".join(plain)
    assert all(paragraph.strip() in joined for paragraph in paragraphs)
    assert plain[0].startswith("Debate\n\nRound 1 · For (true)")
    assert "Round 1 · For (true) (continued)" in plain[1]


def test_a_word_longer_than_a_message_is_cut_hard() -> None:
    block = Block("Evidence", "x" * 9000 + "&" * 3000)
    messages = section_messages(Section("evidence", "Evidence", (block,)))
    assert all(html_length(message) <= MAX_TEXT for message in messages)
    assert "".join(parse_html(m)[0].split("\n")[-1] for m in messages).count("&") == 3000


def test_the_fake_server_rejects_what_telegram_rejects() -> None:
    for bad in ("<b>open", "a & b", "</blockquote>", "<script>x</script>", "1 < 2"):
        with pytest.raises(TelegramError):
            parse_html(bad)


def test_callback_data_is_short() -> None:
    keyboard = card_keyboard("abcDEF123_-xyz45", (3, 1))
    data = [button.callback_data for row in keyboard.inline_keyboard for button in row]
    assert data == [f"{letter}:abcDEF123_-xyz45" for letter in "decunr"]
    assert all(len(str(d).encode()) <= 64 for d in data)
    assert keyboard.inline_keyboard[1][0].text == "👍 3"


def test_the_token_never_reaches_the_log(caplog: pytest.LogCaptureFixture) -> None:
    token = "123456:SECRET-token"
    logger = logging.getLogger("httpx")
    redactor = TokenRedactor(token)
    logger.addFilter(redactor)
    try:
        with caplog.at_level(logging.INFO):
            logger.info("HTTP Request: POST %s", f"https://api.telegram.org/bot{token}/getMe")
    finally:
        logger.removeFilter(redactor)
    assert "SECRET" not in caplog.text and "bot<token>/getMe" in caplog.text


def test_the_command_needs_a_token_from_the_environment() -> None:
    runner = CliRunner()
    assert "polling" in runner.invoke(main, ["telegram", "--help"]).output
    result = runner.invoke(main, ["telegram"], env={"TELEGRAM_BOT_TOKEN": ""})
    assert result.exit_code != 0 and "$TELEGRAM_BOT_TOKEN" in result.output


def test_only_web_addresses_with_a_host_become_links() -> None:
    links = (
        Link("Click me", "javascript:alert(document.cookie)"),
        Link("Data", "data:text/html,<script>x</script>"),
        Link("Fine", "https://example.org/ok"),
    )
    html = card_html(_card(links=links))
    text, _ = parse_html(html)
    assert html.count("<a ") == 1 and 'href="https://example.org/ok"' in html
    assert "javascript" not in html and "data:" not in html
    assert "• Click me" in text and "• Data" in text  # the title stays, unlinked
    html = card_html(_card(links=(Link("No host", "https:///path"), Link("", "javascript:x"))))
    text, _ = parse_html(html)
    assert "<a " not in html and "javascript" not in html
    assert text.count("• ") == 1 and "• No host" in text
    block = Block("Source", "Body.", "javascript:alert(1)")
    (message,) = section_messages(Section("evidence", "Evidence", (block,)))
    assert "<a " not in message and "javascript" not in message
    assert parse_html(message)[0] == "Evidence\n\nSource\nBody."


def test_huge_titles_addresses_and_notes_still_fit() -> None:
    title, url = "T&" * 2500, "https://example.org/" + "a" * 5000
    links = (Link(title, url), Link(title, url), Link(title, "https://e.org/ok"))
    card = _card(links=links, origin=title, repeat_note=title, notes=(title,) * 20)
    html = card_html(card)
    text, _ = parse_html(html)
    assert html_length(html) <= MAX_TEXT and DEFUSED in text  # the summary is still whole
    assert "a" * 1000 not in html  # an address too long for a link is left out
    assert html.count("<a ") == 1 and 'href="https://e.org/ok"' in html
    assert "…" in text
    blocks = (Block(title, "Evidence text. " * 400, url), Block("x" * 5000, "", url))
    messages = section_messages(Section("evidence", "Evidence", blocks))
    assert messages and all(html_length(message) <= MAX_TEXT for message in messages)
    plain = [parse_html(message)[0] for message in messages]
    assert plain[0].startswith("Evidence\n\nT&T&") and "…" in plain[0]
    assert "Evidence text." in "\n".join(plain)


@pytest.mark.parametrize("verdict", list(VERDICTS))
def test_every_outcome_has_a_card_within_telegrams_limit(verdict: str) -> None:
    post = Post(text=HOSTILE * 40)
    report = scripted_report(post, verdict=verdict, summary=("Long & <odd> words. " * 400))
    card = verdict_card(Outcome("abcDEF123_-xyz45", report), origin=HOSTILE * 20)
    html = card_html(card)
    text, _ = parse_html(html)  # Telegram would accept it
    icon, words, _ = VERDICTS[verdict]
    assert html_length(html) <= MAX_TEXT
    assert text.startswith(f"{icon} {words}")
    assert ("The panel leans false (62%)" in text) == (verdict == "unproven")
    assert ("Signs: a look-alike bank domain" in text) == (verdict == "scam")


def test_the_lean_is_one_plain_line_under_the_headline() -> None:
    lean = "The panel leans false (62%)."
    card = _card(verdict="unproven", icon="❔", headline="Unproven", confidence="", lean=lean)
    lines = card_html(card).split("\n")
    assert lines[:2] == ["❔ <b>Unproven</b>", lean]  # said at once, and not bold
    assert [line for line in lines if "<b>" in line] == [lines[0]]  # only the headline is


class _RecordingBot:
    """What a deliver job's card sends, recorded instead of sent."""

    def __init__(self) -> None:
        self.edits: list[tuple[str, dict[str, Any]]] = []

    async def edit_message_text(self, text: str, **params: Any) -> None:
        self.edits.append((text, params))


async def test_a_queued_card_is_made_as_a_live_one_with_the_checks_left(tmp_path: Path) -> None:
    settings = Settings.model_validate(
        {
            "storage": {"path": str(tmp_path / "zofia.db"), "secret": "s3cret-for-tests"},
            "service": {"user_daily": 3},
        }
    )
    post = Post(
        text="The mayor banned bicycles.", origin="channel News", published=dt.date(2026, 1, 2)
    )
    outcome = Outcome("abcDEF123_-xyz45", scripted_report(post))
    async with fake_service(settings, FakeChecker()) as service:
        ctx = TelegramContext(service, settings.telegram)
        message = Message.of(post)
        target = delivery_target(701, card_target(message, 3), message_id=9)
        stored = json.loads(json.dumps(target))  # as the deliveries table keeps it
        bot = _RecordingBot()
        state = CardState(outcome)
        await post_delivered(
            ctx, cast(Bot, bot), Claim(outcome.check_id, "telegram", stored), state
        )
        # A target recorded before it held the count: the card, without that line.
        del stored["checks_left"]
        await post_delivered(
            ctx, cast(Bot, bot), Claim(outcome.check_id, "telegram", stored), state
        )
        live = card_for(outcome, card_target(message, 3))
    (card, params), (older, _) = bot.edits
    assert params["chat_id"] == 701 and params["message_id"] == 9
    assert card == card_html(live)  # the live card, word for word
    text, _ = parse_html(card)
    assert "You have 3 checks left today." in text
    assert "channel News" in text and "published 2026-01-02" in text
    assert "left today" not in parse_html(older)[0] and "channel News" in older


class _FailingBot:
    """A bot whose edits fail with ``error``."""

    def __init__(self, error: Exception) -> None:
        self.error = error

    async def edit_message_text(self, text: str, **params: Any) -> None:
        raise self.error


async def test_a_card_edit_passes_over_a_message_gone_unless_told_to_raise(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO)
    card, keyboard = card_html(_card()), card_keyboard("abcDEF123_-xyz45")
    bot = _RecordingBot()
    await edit_card(cast(Bot, bot), 7, 9, card, keyboard, check_id="abcDEF123_-xyz45")
    [(text, params)] = bot.edits
    assert text == card and params["reply_markup"] == keyboard
    assert params["chat_id"] == 7 and params["message_id"] == 9
    assert params["parse_mode"] == "HTML" and params["link_preview_options"].is_disabled
    # The same card again: done, whichever way a caller takes a message gone.
    same = BadRequest("Message is not modified: specified new message content is the same")
    for pass_over in (True, False):
        await edit_card(
            cast(Bot, _FailingBot(same)), 7, 9, card, None, check_id="c", pass_over_gone=pass_over
        )
    assert not caplog.records
    # Deleted, or too old to edit: a review or a correction passes it over, logged...
    gone = BadRequest("Message to edit not found")
    await edit_card(cast(Bot, _FailingBot(gone)), 7, 9, card, None, check_id="c")
    [logged] = caplog.records
    assert logged.getMessage() == "card of check c not edited: Message to edit not found"
    # ...and a deliver job fails, to be retried.
    with pytest.raises(BadRequest, match="not found"):
        await edit_card(
            cast(Bot, _FailingBot(gone)), 7, 9, card, None, check_id="c", pass_over_gone=False
        )
    # Anything else is the caller's to handle (a chat the bot was removed from).
    with pytest.raises(Forbidden):
        await edit_card(
            cast(Bot, _FailingBot(Forbidden("bot was kicked"))), 7, 9, card, None, check_id="c"
        )
