"""The WhatsApp tipline end to end against the fake Cloud API
(``tests.peers.servers.whatsapp_peer``): its webhook (the handshake, signatures,
duplicates, statuses), a check from "checking…" to the card, the card's buttons, and the
24-hour window (a correction inside it is a message, outside it a template, or nothing).
Checks are answered by the in-process FakeChecker: these prove the tipline's plumbing
and the protocol, not a verdict."""

from __future__ import annotations

import hashlib
import io
from pathlib import Path

import aiohttp
import pytest
from PIL import Image

from tests.bots.telegram.test_telegram_voice import HEARD
from tests.peers.fakes.fake_checker import FakeChecker, Gate, review_as
from tests.peers.fixtures.audio import voice
from tests.peers.fixtures.whatsapp_setup import ANN, REVIEWER, running_tipline
from tests.peers.servers.transcription_peer import FakeTranscription
from tests.peers.servers.whatsapp_peer import VERIFY_TOKEN, Sent

from bots.service import corrections
from bots.whatsapp.check_flow import NOT_DOWNLOADED
from bots.whatsapp.settings import PLATFORM
from zofia_engine.audio.reader import VoiceReader
from zofia_engine.audio_settings import AudioSettings

POST = "The mayor of Springfield has banned bicycles from every street in the city."
CHECKING = "⏳ Checking…"
VOICE_KEY = "sk-voice-test"


@pytest.fixture(autouse=True)
def _quick_corrections(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(corrections, "POLL_S", 0.05)


async def test_the_handshake_answers_the_challenge_only_to_the_verify_token(
    tmp_path: Path,
) -> None:
    async with running_tipline(tmp_path) as run, aiohttp.ClientSession() as session:
        query = {"hub.mode": "subscribe", "hub.challenge": "1158201444"}
        async with session.get(
            run.webhook, params={**query, "hub.verify_token": VERIFY_TOKEN}
        ) as ok:
            assert (ok.status, await ok.text()) == (200, "1158201444")
        async with session.get(run.webhook, params={**query, "hub.verify_token": "guess"}) as no:
            assert no.status == 403
            assert "1158201444" not in await no.text()


async def test_a_delivery_without_the_app_secrets_signature_is_refused(tmp_path: Path) -> None:
    async with running_tipline(tmp_path) as run:
        cloud = run.cloud
        payload = cloud.payload(ANN, [cloud.message(ANN, "text", {"body": POST})])
        assert await cloud.deliver(payload, signature="sha256=" + "0" * 64) == 401
        assert await cloud.deliver(payload, signature="") == 401
        await run.tipline.stop(5.0)  # anything started would finish here
        assert cloud.sent == [] and run.checker.runs == []


async def test_a_text_gets_checking_at_once_then_the_card_with_three_buttons(
    tmp_path: Path,
) -> None:
    async with running_tipline(tmp_path) as run:
        asked = await run.cloud.text(ANN, POST, forwarded=True)
        card = await run.card(ANN)
        first = run.cloud.to(ANN)[0]
        assert first.text == "⏳ Checking…" and first.reply_to == asked
        assert card.reply_to == asked
        assert card.text.startswith("❌ *False*")
        assert "The council's minutes record no such vote." in card.text
        assert [title for _, title in card.buttons] == ["Debate", "Evidence", "Review"]
        assert [p.text for p in run.checker.runs] == [POST]
        assert run.cloud.refused == []


async def test_a_duplicate_delivery_and_a_status_are_answered_once_and_not_at_all(
    tmp_path: Path,
) -> None:
    async with running_tipline(tmp_path) as run:
        cloud = run.cloud
        message = cloud.message(ANN, "text", {"body": POST})
        cloud.inbound_at[ANN] = cloud.clock()
        for _ in range(3):  # Meta delivers again when it did not hear 200 in time
            assert await cloud.deliver(cloud.payload(ANN, [message])) == 200
        card = await run.card(ANN)
        assert await cloud.statuses(ANN, card) == 200
        await run.tipline.stop(5.0)
        assert len(run.checker.runs) == 1
        assert [s.text for s in cloud.to(ANN)].count("⏳ Checking…") == 1
        assert len(cloud.to(ANN)) == 2  # "checking…" and the card, nothing for the status


async def test_the_debate_button_answers_with_the_debate(tmp_path: Path) -> None:
    async with running_tipline(tmp_path) as run:
        await run.cloud.text(ANN, POST)
        card = await run.card(ANN)
        debate = next(i for i, title in card.buttons if title == "Debate")
        pressed = await run.cloud.press(ANN, card, debate)
        answer = await run.cloud.wait_for(
            lambda: [s for s in run.cloud.to(ANN) if s.reply_to == pressed]
        )
        assert answer[0].text.startswith("*Debate*")


async def test_review_is_offered_to_a_named_reviewer_only(tmp_path: Path) -> None:
    async with running_tipline(tmp_path) as run:
        await run.cloud.text(ANN, POST)
        card = await run.card(ANN)
        review = next(i for i, title in card.buttons if title == "Review")
        pressed = await run.cloud.press(ANN, card, review)
        said = await run.cloud.wait_for(
            lambda: [s for s in run.cloud.to(ANN) if s.reply_to == pressed]
        )
        assert said[0].text.startswith("Only a reviewer named")
        assert said[0].buttons == []


async def test_a_reviewers_review_is_a_correction_inside_the_window(tmp_path: Path) -> None:
    """A reviewer named in the settings reviews from the card's Review button (a list of
    the verdicts); the card's chat, inside its window, gets the update, then the card as
    it now reads."""
    async with running_tipline(tmp_path) as run:
        cloud = run.cloud
        await cloud.text(REVIEWER, POST)
        card = await run.card(REVIEWER)
        review = next(i for i, title in card.buttons if title == "Review")
        await cloud.press(REVIEWER, card, review)
        choices = await cloud.wait_for(
            lambda: [s for s in cloud.to(REVIEWER) if s.body.get("type") == "list"]
        )
        assert [t for _, t in choices[0].buttons] == [
            "Confirm",
            "True",
            "False",
            "Misleading",
            "Unproven",
        ]
        true = next(i for i, title in choices[0].buttons if title == "True")
        await cloud.press(REVIEWER, choices[0], true)
        corrected = await run.card(REVIEWER, 2)
        sent = cloud.to(REVIEWER)
        saved, update = sent[sent.index(corrected) - 2 : sent.index(corrected)]
        assert saved.text.startswith("Review saved: False → True.")
        assert update.type == "text"
        assert update.text == "Update: this post was changed from False to True."
        assert corrected.text.startswith("✅ *True*")


def _check_id(card: Sent) -> str:
    return card.buttons[0][0].rpartition(":")[2]


async def test_a_correction_outside_the_window_is_the_template(tmp_path: Path) -> None:
    async with running_tipline(tmp_path) as run:
        await run.cloud.text(ANN, POST)
        card = await run.card(ANN)
        run.cloud.clock.advance(hours=25)  # Ann's window closes
        await review_as(run.service, _check_id(card), ("cli", "operator"), "true")
        template = await run.cloud.wait_for(
            lambda: [s for s in run.cloud.to(ANN) if s.type == "template"]
        )
        assert template[0].body["name"] == "zofia_correction"
        assert template[0].text == (
            "[template zofia_correction] Update: this post was changed from False to True. | "
            f"Check {_check_id(card)}"
        )
        assert run.cloud.to(ANN)[2:] == template  # nothing free-form was sent, or tried
        assert run.cloud.refused == []


async def test_outside_the_window_without_a_template_nothing_is_sent(tmp_path: Path) -> None:
    async with running_tipline(tmp_path, correction_template="") as run:
        await run.cloud.text(ANN, POST)
        card = await run.card(ANN)
        before = len(run.cloud.to(ANN))
        run.cloud.clock.advance(hours=25)
        await review_as(run.service, _check_id(card), ("cli", "operator"), "true")
        await run.cloud.wait_for(
            lambda: not run.service.store.shown_cards.due_checks(PLATFORM, limit=9)
        )
        await run.tipline.stop(5.0)
        assert len(run.cloud.to(ANN)) == before
        assert run.cloud.refused == []


async def test_a_voice_note_is_heard_then_its_words_checked(tmp_path: Path) -> None:
    """A voice note through the fake transcription server: "checking…", then the card
    that says what was heard (the engine's reader is real; the check is the fake's)."""
    async with FakeTranscription(api_key=VOICE_KEY) as transcription:
        audio = {"backend": "openai", "base_url": transcription.base_url, "api_key": VOICE_KEY}
        checker = FakeChecker(voice=VoiceReader(AudioSettings.model_validate(audio)))
        data = voice("en.ogg")
        transcription.transcripts[hashlib.sha256(data).hexdigest()] = HEARD
        try:
            async with running_tipline(tmp_path, checker) as run:
                await run.cloud.audio(ANN, data)
                await run.cloud.wait_for(lambda: any(s.buttons for s in run.cloud.to(ANN)), 60)
                said = run.cloud.to(ANN)
        finally:
            await checker.voice.aclose()
    assert said[0].text.startswith(CHECKING)
    card = next(s for s in said if s.buttons)
    assert "Heard in the voice note" in card.text and HEARD[:30] in card.text
    assert run.checker.runs[0].text.endswith(HEARD)


async def test_a_voice_note_past_the_size_cap_is_refused_with_one_sentence(
    tmp_path: Path,
) -> None:
    checker = FakeChecker()
    async with running_tipline(tmp_path, checker) as run:
        run.tipline.context.audio = AudioSettings(max_bytes=10_000)  # the note is ~11 KB
        await run.cloud.audio(ANN, voice("en.ogg"))
        said = await run.cloud.wait_for(lambda: run.cloud.to(ANN))
        assert "voice note" in said[-1].text.lower() and checker.runs == []


@pytest.mark.slow  # RapidOCR reads the picture
async def test_a_picture_with_its_caption_is_checked(tmp_path: Path) -> None:
    image = io.BytesIO()
    Image.new("RGB", (64, 48), "white").save(image, "PNG")
    async with running_tipline(tmp_path) as run:
        await run.cloud.image(ANN, image.getvalue(), "image/png", caption=POST)
        await run.cloud.wait_for(lambda: any(s.buttons for s in run.cloud.to(ANN)), 120.0)
        assert len(run.checker.reads) == 1
        assert len(run.checker.reads[0].post.images) == 1
        assert run.checker.runs[0].text.startswith(POST)


async def test_an_unknown_media_id_is_said_in_one_sentence(tmp_path: Path) -> None:
    async with running_tipline(tmp_path) as run:
        cloud = run.cloud
        message = cloud.message(ANN, "image", {"id": "999999", "mime_type": "image/jpeg"})
        await cloud.send_user(ANN, message, "[picture]")
        said = await cloud.wait_for(lambda: [s for s in cloud.to(ANN) if s.text == NOT_DOWNLOADED])
        assert said and run.checker.runs == []
        assert cloud.refused[0][0] == 100


async def test_the_verdict_first_is_the_early_card_then_the_completed_card(
    tmp_path: Path,
) -> None:
    """WhatsApp cannot edit the early card into the completed one: both are sent, the
    early one without buttons (the explanation follows), the completed one with them."""
    checker = FakeChecker(early=True, summary="The council's minutes record no such vote.")
    async with running_tipline(tmp_path, checker) as run:
        await run.cloud.text(ANN, POST)
        card = await run.card(ANN)
        checking, early, completed = run.cloud.to(ANN)
        assert checking.text == "⏳ Checking…" and completed == card
        assert early.type == "text" and early.buttons == []
        assert early.text.startswith("❌ *False*") and "explanation follows" in early.text
        assert "explanation follows" not in completed.text


async def test_a_card_ready_after_the_window_closed_is_the_card_template(
    tmp_path: Path,
) -> None:
    """The window closes while the check runs: the card cannot be sent, its template
    says the verdict and where to read it."""
    gate = Gate()
    checker = FakeChecker(gate=gate, summary="The council's minutes record no such vote.")
    async with running_tipline(tmp_path, checker) as run:
        await run.cloud.text(ANN, POST)
        await gate.held()
        await run.cloud.wait_for(lambda: run.cloud.to(ANN))  # "checking…", in the window
        run.cloud.clock.advance(hours=24, seconds=1)
        gate.open()
        template = await run.cloud.wait_for(
            lambda: [s for s in run.cloud.to(ANN) if s.type == "template"]
        )
        assert template[0].body["name"] == "zofia_card_ready"
        assert template[0].text.startswith("[template zofia_card_ready] ❌ False | Check ")
        assert [s.type for s in run.cloud.to(ANN)] == ["text", "template"]
        assert run.cloud.refused == []


async def test_a_reply_to_a_card_asks_about_its_check(tmp_path: Path) -> None:
    async with running_tipline(tmp_path) as run:
        await run.cloud.text(ANN, POST)
        card = await run.card(ANN)
        asked = await run.cloud.text(ANN, "Which source says so?", reply_to=card.id)
        answer = await run.cloud.wait_for(
            lambda: [s for s in run.cloud.to(ANN) if s.reply_to == asked]
        )
        assert run.checker.questions == ["Which source says so?"]
        assert answer[0].text == (
            "The council's minutes show that no such law was passed (council.example.org)."
        )
        assert len(run.checker.runs) == 1  # a question, not a post to check
