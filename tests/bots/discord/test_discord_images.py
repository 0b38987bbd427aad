"""Image posts on Discord, end to end: the real discord.py client against the fake
Discord (REST, gateway and its CDN on loopback), the real check service on a tmp
SQLite file, and a checker whose verdict is scripted but whose image reader is the
engine's own (Pillow within its caps, RapidOCR reading the text)."""

from __future__ import annotations

import contextlib
import logging
import re
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
import yarl

from tests.peers.fakes.fake_checker import FakeChecker, fake_service
from tests.peers.fixtures.images import (
    cer,
    first_lines_read,
    headline,
    pixel_bomb,
    shared_ocr,
    svg,
    truncated_jpeg,
)
from tests.peers.servers.discord_peer import DISCORD_TOKEN, Call, FakeDiscord, running_client

from bots.app.settings import Settings
from bots.discord.client import FactCheckBot
from bots.discord.render import verdict_embed
from bots.render.card import report_card
from bots.render.sentences import UNSUPPORTED_INPUT
from zofia_engine.image_settings import ImageSettings
from zofia_engine.images.reader import ImageReader, image_marker
from zofia_engine.records.images import ImageFinding
from zofia_engine.report import Report
from zofia_engine.text import EMPTY_POST

pytestmark = pytest.mark.slow  # RapidOCR reads every image

pytest_plugins = ["tests.peers.fixtures.discord_fixtures"]
TOKEN = DISCORD_TOKEN
POST = "The mayor of Springfield has banned bicycles from every street in the city."
GENEROUS = {"user_per_minute": 100, "chat_per_minute": 100, "user_daily": 1000}
StartBot = Callable[..., contextlib.AbstractAsyncContextManager[FactCheckBot]]


@pytest.fixture(scope="module")
def reader() -> Iterator[ImageReader]:
    """One loaded OCR for the module's tests (it takes seconds to load)."""
    built = ImageReader(ImageSettings(), ocr=shared_ocr())
    built.load()
    yield built


@pytest.fixture
def checker(reader: ImageReader) -> FakeChecker:
    return FakeChecker(reader=reader)


@pytest_asyncio.fixture
async def start_bot(
    discord_api: FakeDiscord, checker: FakeChecker, tmp_path: Path
) -> AsyncIterator[StartBot]:
    """Starts the service (on the fake checker) and the client; each use is one run."""

    @contextlib.asynccontextmanager
    async def start(**discord: Any) -> AsyncIterator[FactCheckBot]:
        settings = Settings.model_validate(
            {
                "storage": {"path": str(tmp_path / "zofia.db"), "secret": "s3cret-for-tests-only"},
                "service": GENEROUS,
                "discord": {"progress_interval_s": 0, "guild_cooldown_s": 0, **discord},
            }
        )
        async with (
            fake_service(settings, checker) as service,
            running_client(FactCheckBot(settings.discord, service)) as bot,
        ):
            yield bot

    yield start


def _edits(peer: FakeDiscord, token: str) -> list[Call]:
    return [c for c in peer.calls_to("PATCH", "/webhooks/") if f"/{token}/" in c.path]


async def _verdict(peer: FakeDiscord, payload: dict[str, Any]) -> dict[str, Any]:
    """Send a command; the embed of the verdict card it ends with."""
    await peer.dispatch("INTERACTION_CREATE", payload)

    def shown(call: Call) -> bool:
        return call in _edits(peer, payload["token"]) and bool(call.body.get("embeds"))

    call = await peer.wait_for(shown, timeout=90)
    embed: dict[str, Any] = call.body["embeds"][0]
    return embed


async def _answer(peer: FakeDiscord, payload: dict[str, Any]) -> str:
    """Send a command; the text it is answered with (a reply, or the last word of a
    deferred one), progress aside."""
    await peer.dispatch("INTERACTION_CREATE", payload)

    def said(call: Call) -> str:
        body = call.body or {}
        if call.path.startswith(f"/interactions/{payload['id']}/"):
            return str(body["data"]["content"]) if body.get("type") == 4 else ""
        if f"/{payload['token']}" not in call.path:
            return ""
        content = str(body.get("content") or "")
        return "" if content.startswith("⏳") else content

    call = await peer.wait_for(lambda c: bool(said(c)), timeout=90)
    return said(call)


def _check_id(embed: dict[str, Any]) -> str:
    return str(embed["footer"]["text"].split("Check ")[-1])


async def test_the_message_command_reads_the_headline_on_an_attached_image(
    discord_api: FakeDiscord, checker: FakeChecker, start_bot: StartBot
) -> None:
    shot = discord_api.attachment(
        headline(["Springfield bans bicycles", "from every street"]),
        "headline.png",
        content_type="image/png",
    )
    # Not an image: left out, never downloaded.
    memo = discord_api.attachment(
        b"%PDF-1.7 minutes", "minutes.pdf", content_type="application/pdf"
    )
    target = discord_api.message(
        "", author=discord_api.user(910000000000000001, "newsfan"), attachments=[shot, memo]
    )
    async with start_bot() as bot:
        embed = await _verdict(discord_api, discord_api.message_command("Fact-check", target))

        [post] = checker.runs
        read = post.text.casefold()
        assert "springfield" in read and "bicycles" in read and "every street" in read
        assert post.text.startswith(image_marker(1))  # no caption: all of it was read
        assert checker.reads[0].caption is False
        [image] = post.images
        [finding] = checker.reads[0].findings
        assert image.data and finding.width == 1080
        assert discord_api.downloads == [yarl.URL(shot["url"]).path]
        row = bot.service.store.checks.get(_check_id(embed))
        assert row is not None and row.status == "done" and row.platform == "discord"
        fields = {field["name"]: field["value"] for field in embed["fields"]}
        assert "Newsfan" in fields["Origin"]


async def test_the_card_shows_the_first_lines_read_from_the_image(
    discord_api: FakeDiscord, checker: FakeChecker, start_bot: StartBot
) -> None:
    image = discord_api.attachment(
        headline(["Governor signs slaw", "into law at noon", "Stadium closes"]),
        "shot.png",
        content_type="image/png",
    )
    async with start_bot():
        embed = await _verdict(discord_api, discord_api.slash("factcheck", {"image": image}))
    fields = {field["name"]: field["value"] for field in embed["fields"]}
    checked, read = fields["Checked"].split("\n")
    assert checked == "the text in 1 image"
    # A misreading would show here, without opening Evidence.
    [post] = checker.runs
    shown = first_lines_read(checker.reads[0])  # the first two lines, as the OCR read them
    assert read == f"Read from the image: “{shown}”"
    assert cer(shown, "Governor signs slaw into law at noon") <= 0.1  # not the third line
    read_all = checker.reads[0].findings[0].text.strip()
    assert cer(read_all.splitlines()[-1], "Stadium closes") <= 0.2  # the third line, read
    assert read_all in post.text  # and all of it checked


def test_the_text_read_from_an_image_is_escaped_in_the_embed() -> None:
    finding = ImageFinding(
        index=1,
        bytes=1000,
        width=1080,
        height=1350,
        media_type="image/png",
        text="**Mayor** _bans_ [bikes](https://evil.example) @everyone\nsays <@123>",
    )
    report = Report(verdict="false", images=[finding], caption=False)
    embed = verdict_embed(report_card("c", report))
    [field] = [f for f in embed.fields if f.name == "Checked"]
    assert field.value == (
        "the text in 1 image\n"
        "Read from the image: “\\*\\*Mayor\\*\\* \\_bans\\_ \\[bikes\\]"
        "\\(https://evil.example\\) @\u200beveryone says \\<@123\\>”"
    )


async def test_refusals_log_one_info_line_and_no_traceback(
    discord_api: FakeDiscord,
    checker: FakeChecker,
    start_bot: StartBot,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO)
    async with start_bot(guild_cooldown_s=60.0):
        blank = discord_api.slash("factcheck", {"text": "\u3164\u3164\u3164"})
        assert await _answer(discord_api, blank) == EMPTY_POST
        await _verdict(discord_api, discord_api.slash("factcheck", {"text": POST}))
        again = discord_api.slash("factcheck", {"text": POST + " Again."})
        assert "send it again in" in await _answer(discord_api, again)
    # Each refusal is one INFO line with its reason: the empty post, then the cooldown.
    refused = [r for r in caplog.records if "refused" in r.getMessage()]
    empty, cooldown = refused
    # The chat by its keyed hash (bots.chat.logs.log_chat), never its id.
    chat = re.fullmatch(r"request in chat ([0-9a-f]{12}) refused: (.*)", empty.getMessage())
    assert chat is not None and chat[2] == EMPTY_POST
    assert str(discord_api.GUILD_ID) not in empty.getMessage()
    assert cooldown.getMessage().startswith(f"request in chat {chat[1]} refused: cooldown, ")
    assert all(r.levelno == logging.INFO and r.exc_info is None for r in refused)
    assert not [r for r in caplog.records if r.name.startswith("bots") and r.exc_info]
    assert [post.text for post in checker.runs] == [POST]


async def test_the_messages_text_is_the_images_caption(
    discord_api: FakeDiscord, checker: FakeChecker, start_bot: StartBot
) -> None:
    # No media type from Discord: the name says it is an image.
    image = discord_api.attachment(
        headline(["Moon base opens", "to tourists in May"], fmt="JPEG"), "IMG_0042.JPG"
    )
    target = discord_api.message("Seen on my feed today, is it real?", attachments=[image])
    async with start_bot():
        embed = await _verdict(discord_api, discord_api.message_command("Fact-check", target))
        assert embed["title"]
        [post] = checker.runs
        caption, _, read = post.text.partition(image_marker(1))
        assert caption.strip() == "Seen on my feed today, is it real?"
        assert "moon" in read.casefold() and "tourists" in read.casefold()
        assert checker.reads[0].caption is True


async def test_factcheck_takes_an_image_alone_or_with_text(
    discord_api: FakeDiscord, checker: FakeChecker, start_bot: StartBot
) -> None:
    alone = discord_api.attachment(
        headline(["Parliament votes", "to abolish Tuesdays"]), "shot.png", content_type="image/png"
    )
    both = discord_api.attachment(
        headline(["Volcano erupts under", "the Eiffel Tower"], fmt="JPEG"),
        "photo.jpeg",
        content_type="image/jpeg",
    )
    async with start_bot() as bot:
        await _verdict(discord_api, discord_api.slash("factcheck", {"image": alone}))
        await _verdict(
            discord_api,
            discord_api.slash("factcheck", {"text": "My uncle sent this", "image": both}),
        )
        first, second = checker.reads
        assert "tuesdays" in first.text.casefold() and not first.caption
        assert second.text.startswith("My uncle sent this")
        assert "eiffel" in second.text.casefold() and second.caption
        assert len(discord_api.downloads) == 2
        assert len(bot.service.store.checks.history(platform="discord")) == 2

        # A link to a message goes alone.
        link = f"https://discord.com/channels/{discord_api.GUILD_ID}/1/2"
        mixed = discord_api.slash("factcheck", {"image": alone, "message_link": link})
        assert (await _answer(discord_api, mixed)).startswith("Give either the post")
        assert len(discord_api.downloads) == 2


BAD: dict[str, tuple[Callable[[FakeDiscord], dict[str, Any]], str]] = {
    "pixel bomb": (
        lambda peer: peer.attachment(pixel_bomb(60), "bomb.png", content_type="image/png"),
        "The image is 60 megapixels; images up to 40 megapixels are checked.",
    ),
    "declared 30 MB": (
        lambda peer: peer.attachment(
            headline(["Big file"]), "huge.png", content_type="image/png", size=30 * 1024 * 1024
        ),
        "The image is 31 MB; images up to 10 MB are checked.",
    ),
    "truncated JPEG": (
        lambda peer: peer.attachment(truncated_jpeg(), "cut.jpg", content_type="image/jpeg"),
        "The image is damaged or cut short; send it again.",
    ),
    "text named .jpg": (
        lambda peer: peer.attachment(
            b"totally a photo, trust me\n" * 20, "photo.jpg", content_type="text/plain"
        ),
        "This file is not an image I can read; send a PNG, JPEG, WebP or GIF.",
    ),
    "SVG": (
        lambda peer: peer.attachment(svg(), "chart.svg", content_type="image/svg+xml"),
        "SVG drawings are not checked; send the image as PNG, JPEG, WebP or GIF.",
    ),
}


@pytest.mark.parametrize("case", list(BAD))
@pytest.mark.parametrize("how", ["message command", "image option"])
async def test_a_bad_image_gets_one_sentence_and_no_check(
    discord_api: FakeDiscord, checker: FakeChecker, start_bot: StartBot, case: str, how: str
) -> None:
    make, sentence = BAD[case]
    image = make(discord_api)
    if how == "message command":
        target = discord_api.message("Look at this", attachments=[image])
        payload = discord_api.message_command("Fact-check", target)
    else:
        payload = discord_api.slash("factcheck", {"image": image})
    async with start_bot() as bot:
        assert await _answer(discord_api, payload) == sentence
        final = _edits(discord_api, payload["token"])[-1].body
        assert not final.get("embeds") and not final.get("components")
        assert checker.runs == []
        assert bot.service.store.checks.history() == []
        downloaded = [] if case == "declared 30 MB" else [yarl.URL(image["url"]).path]
        assert discord_api.downloads == downloaded

        # The bot goes on: the next command gets its verdict.
        embed = await _verdict(discord_api, discord_api.slash("factcheck", {"text": POST}))
        assert bot.service.store.checks.get(_check_id(embed)) is not None
        assert [post.text for post in checker.runs] == [POST]


async def test_refused_before_download_costs_no_cooldown(
    discord_api: FakeDiscord, checker: FakeChecker, start_bot: StartBot
) -> None:
    small = headline(["One of many"], size=(400, 200))
    five = [discord_api.attachment(small, f"p{n}.png", content_type="image/png") for n in range(5)]
    huge = discord_api.attachment(small, "huge.png", content_type="image/png", size=11_000_000)
    fine = discord_api.attachment(small, "fine.png", content_type="image/png")
    async with start_bot(guild_cooldown_s=60.0):
        many = discord_api.message_command("Fact-check", discord_api.message("", attachments=five))
        assert await _answer(discord_api, many) == ("The post has 5 images; up to 4 are checked.")
        second = discord_api.message("", attachments=[fine, huge])
        answer = await _answer(discord_api, discord_api.message_command("Fact-check", second))
        assert answer == "Image 2 of 2: the image is 11 MB; images up to 10 MB are checked."
        assert discord_api.downloads == []
        # Neither refusal spent the server's cooldown: the next check starts.
        await _verdict(discord_api, discord_api.slash("factcheck", {"text": POST}))
        assert [post.text for post in checker.runs] == [POST]
        later = discord_api.slash("factcheck", {"text": POST + " Again."})
        assert "send it again in" in await _answer(discord_api, later)


async def test_a_message_with_neither_text_nor_image_is_refused(
    discord_api: FakeDiscord, checker: FakeChecker, start_bot: StartBot
) -> None:
    # A PDF: a .txt file would be read as the post's text (a long message's message.txt).
    memo = discord_api.attachment(b"%PDF-1.7", "minutes.pdf", content_type="application/pdf")
    target = discord_api.message("", attachments=[memo])
    async with start_bot() as bot:
        answer = await _answer(discord_api, discord_api.message_command("Fact-check", target))
        assert answer == UNSUPPORTED_INPUT  # a file the bot cannot read: what it can check
        assert discord_api.downloads == [] and checker.runs == []
        assert bot.service.store.checks.history() == []
