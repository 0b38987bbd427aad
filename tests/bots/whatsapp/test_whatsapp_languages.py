"""What the WhatsApp tipline says itself, in the chat's language, through the fake Cloud
API: a chat that set ``/language French`` gets the tipline's own sentences (the help,
the language set, ``/privacy``, a check not found, who may review, a download that
failed) from the French catalogue, and a chat that set none gets them in English. The
catalogues' own completeness is tests/bots/render/test_catalogues.py's."""

from __future__ import annotations

from pathlib import Path

from tests.peers.fixtures.whatsapp_setup import ANN, Running, running_tipline
from tests.peers.servers.whatsapp_peer import Sent

from bots.chat.setting_refusals import UNKNOWN_LANGUAGE
from bots.render.privacy import privacy_text
from bots.render.words import ENGLISH, words_for
from bots.whatsapp.buttons import NOT_FOUND, REFUSED
from bots.whatsapp.check_flow import NOT_DOWNLOADED, VOICE_NOT_DOWNLOADED
from bots.whatsapp.handlers import HELP, LANGUAGE_SET

POST = "The mayor of Springfield has banned bicycles from every street in the city."
BOB = "15551230003"
FRENCH = words_for("French")


async def _answer(run: Running, wa_id: str, asked: str) -> Sent:
    """The first message the tipline sent ``wa_id`` in reply to their message ``asked``."""
    cloud = run.cloud
    found: list[Sent] = await cloud.wait_for(
        lambda: [s for s in cloud.to(wa_id) if s.reply_to == asked]
    )
    return found[0]


async def _french(run: Running, wa_id: str) -> None:
    asked = await run.cloud.text(wa_id, "/language français")
    said = await _answer(run, wa_id, asked)
    assert said.text == "Langue : French." == FRENCH(LANGUAGE_SET, name="French")


def test_the_french_sentences_are_not_the_english_ones() -> None:
    """The test below would prove nothing if the catalogue said them in English."""
    for sentence in (NOT_FOUND, REFUSED, NOT_DOWNLOADED, VOICE_NOT_DOWNLOADED, HELP):
        assert FRENCH(sentence) != ENGLISH(sentence), sentence
    assert FRENCH(UNKNOWN_LANGUAGE, name="x", languages="y", translated="z").startswith(
        "x n'est pas une langue"
    )


async def test_a_french_chat_gets_the_tiplines_own_sentences_in_french(tmp_path: Path) -> None:
    async with running_tipline(tmp_path) as run:
        cloud = run.cloud
        await cloud.text(ANN, POST)
        card = await run.card(ANN)  # Ann's check: another chat's, for Bob
        await _french(run, BOB)
        helped = await _answer(run, BOB, await cloud.text(BOB, "/help"))
        assert helped.text == FRENCH(HELP) and "message vocal" in helped.text
        private = await _answer(run, BOB, await cloud.text(BOB, "/privacy"))
        assert private.text == privacy_text(30, FRENCH) and "après 30 jours" in private.text
        unknown = await _answer(run, BOB, await cloud.text(BOB, "/language klingon"))
        assert unknown.text.startswith("'klingon' n'est pas une langue")
        debate = next(i for i, title in card.buttons if title == "Debate")
        not_found = await _answer(run, BOB, await cloud.press(BOB, card, debate))
        assert not_found.text == "Cette vérification est introuvable." == FRENCH(NOT_FOUND)
        review = next(i for i, title in card.buttons if title == "Review")
        refused = await _answer(run, BOB, await cloud.press(BOB, card, review))
        assert refused.text == FRENCH(REFUSED)
        lost = cloud.message(BOB, "audio", {"id": "999999", "mime_type": "audio/ogg"})
        said = await _answer(run, BOB, await cloud.send_user(BOB, lost, "[voice note]"))
        assert said.text == FRENCH(VOICE_NOT_DOWNLOADED)
        assert len(run.checker.runs) == 1  # Ann's post only: nothing of Bob's was checked


async def test_a_chat_that_set_no_language_gets_them_in_english(tmp_path: Path) -> None:
    async with running_tipline(tmp_path) as run:
        cloud = run.cloud
        lost = cloud.message(BOB, "image", {"id": "999999", "mime_type": "image/jpeg"})
        said = await _answer(run, BOB, await cloud.send_user(BOB, lost, "[picture]"))
        assert said.text == NOT_DOWNLOADED
        helped = await _answer(run, BOB, await cloud.text(BOB, "/help"))
        assert helped.text == HELP
        private = await _answer(run, BOB, await cloud.text(BOB, "/privacy"))
        assert private.text == privacy_text(30) and "after 30 days" in private.text
