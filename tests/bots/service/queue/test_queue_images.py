"""An image post checked in the queued mode keeps what was read from its image: the bot's
replica reads it (the service reads a post once, where it is taken), queues the check,
and the Procrastinate worker, which never sees the image, still reports ``images``, so
that the card says what was checked and what was read from the image. The replica's
reader is the engine's real one (Pillow) with a scripted OCR; the worker's checker is
another, which gets no image to read; the check is the FakeChecker's."""

from __future__ import annotations

import asyncio

import pytest

from tests.bots.service.queue.test_queue import asker, replica, settings_for, worker
from tests.peers.fakes.fake_checker import FakeChecker
from tests.peers.fixtures.images import ScriptedOCR, headline

from bots.chat.check_flow import card_for
from bots.service.records import Message, Outcome
from zofia_engine.image_settings import ImageSettings
from zofia_engine.images.reader import ImageReader, image_marker

pytestmark = pytest.mark.slow  # a real PostgreSQL server on loopback

LINES = ["Springfield bans bicycles", "from every street"]


async def test_a_queued_image_posts_report_and_card_keep_what_was_read(
    postgres_url: str,
) -> None:
    settings = settings_for(postgres_url)
    taker = FakeChecker(reader=ImageReader(ImageSettings(), ocr=ScriptedOCR("\n".join(LINES))))
    runner_checker = FakeChecker()
    message = Message("Is this real?", images=((headline(LINES), "image/png"),))
    async with replica(settings, taker) as service:
        async with (
            service.take(message, asker(1)) as handle,
            worker(settings, runner_checker) as runner,
        ):
            outcome = await asyncio.wait_for(handle.result(), 30)
        assert runner.runs == 1 and taker.runs == []
        stored = service.store.reports.get(handle.check_id)
    read = runner_checker.reads[0]
    assert read.post.images == () and f"{image_marker(1)}\n{LINES[0]}" in read.text
    assert isinstance(outcome, Outcome) and len(outcome.report.images) == 1
    finding = outcome.report.images[0]
    assert finding.text == "\n".join(LINES) and len(finding.sha256) == 64
    assert (finding.width, finding.height, finding.media_type) == (1080, 1350, "image/png")
    assert outcome.report.caption is True
    assert stored is not None and stored.images == outcome.report.images
    card = card_for(outcome, {})
    assert card.checked == "Checked: the caption and the text in 1 image"
    assert card.read == "Read from the image: “Springfield bans bicycles from every street”"
