"""An image post's check resumed from the store keeps what was read from its image: the
service that took it reads the image once, stops while the check runs (as a restart
does), and the next service on the store runs it again from its stored text, with the
image's finding, so that its report and card say what was read. The queued mode's worker
reads it the same way (tests/bots/service/queue/test_queue_images.py)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from tests.peers.fakes.fake_checker import FakeChecker, Gate, fake_service
from tests.peers.fixtures.images import ScriptedOCR, headline

from bots.app.settings import Settings
from bots.chat.check_flow import card_for
from bots.service.records import Message, Requester
from zofia_engine.image_settings import ImageSettings
from zofia_engine.images.reader import ImageReader

ASKER = Requester("test", "user-1", "chat-1")
WORDS = "Governor signs slaw into law at noon"
STAMP = "FALSE"  # printed on the image: a stamp-like word the card names


async def test_a_resumed_image_check_reports_what_was_read(tmp_path: Path) -> None:
    settings = Settings.model_validate(
        {"storage": {"path": str(tmp_path / "zofia.db"), "secret": "s3cret-for-tests-only"}}
    )
    gate = Gate()
    reader = ImageReader(ImageSettings(), ocr=ScriptedOCR(f"{WORDS}\n{STAMP}"))
    first = FakeChecker(gate=gate, reader=reader)
    message = Message("", images=((headline([WORDS], stamp=STAMP), "image/png"),))
    async with fake_service(settings, first) as service:
        async with service.take(message, ASKER) as handle:
            await gate.held()
        check_id = handle.check_id
    read = first.reads[0]
    again = FakeChecker()  # reads no image: the image is gone, only the text is stored
    async with fake_service(settings, again) as service:
        resumed = service.handle(check_id)
        assert resumed is not None
        outcome = await asyncio.wait_for(resumed.result(), 30)
    assert len(again.runs) == 1 and again.runs[0].images == ()
    assert again.runs[0].text == read.post.text
    assert outcome.report.images == list(read.findings)
    assert read.findings[0].text == f"{WORDS}\n{STAMP}" and read.findings[0].labels
    assert outcome.report.caption is False  # the post had no text of its own
    card = card_for(outcome, {})
    assert card.checked == "Checked: the text in 1 image"
    assert card.read == f"Read from the image: “{WORDS} {STAMP}”"
    assert f'The image carries the words "{STAMP}".' in card.notes
