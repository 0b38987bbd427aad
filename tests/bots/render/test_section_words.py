"""The progress lines and the sections the card's buttons open speak the chat's language
(their fixed words, from its catalogue); the report's own text stays as it was written."""

from __future__ import annotations

from tests.peers.fakes.fake_checker import scripted_report

from bots.render.progress import progress_lines
from bots.render.sections import already_shown, section
from bots.render.words import words_for
from zofia_engine.post import Post, ProgressEvent
from zofia_engine.report import (
    Report,
)


def test_progress_lines_are_in_the_chats_language() -> None:
    events = [
        ProgressEvent(kind="started", stage="retrieval"),
        ProgressEvent(kind="finished", stage="retrieval", detail="3 entities"),
        ProgressEvent(kind="started", stage="debate"),
        ProgressEvent(kind="round", stage="debate", round=1, detail="continue"),
        ProgressEvent(kind="round", stage="debate", round=2, detail="false"),
    ]
    assert progress_lines(events, words_for("French")) == [
        "✓ recherche guidée par les entités : terminé (3 entities)",
        "• débat, tour 1 : le juge demande un autre tour",
        "• débat, tour 2 : le juge dit false",
        "… débat : démarré",
    ]
    german = progress_lines([ProgressEvent(kind="failed", stage="expert")], words_for("German"))
    assert german == ["✗ Fachexperte: fehlgeschlagen"]
    ready = ProgressEvent(kind="verdict_ready", stage="verdict", detail="false")
    assert progress_lines([ready], words_for("French")) == [
        "✓ verdict : false ; le panel rédige son explication"
    ]


def _report() -> Report:
    """A false verdict on one post, with evidence, a refuted core claim and one round
    that the judge stopped."""
    report = scripted_report(Post(text="The mayor banned bicycles."))
    return report.model_copy(
        update={"debate": report.debate.model_copy(update={"stopped_by": "judge"})}
    )


def test_a_section_says_its_fixed_words_in_the_chats_language() -> None:
    french = words_for("French")
    debate = section("debate", _report(), french)
    assert debate.title == "Débat"
    headings = [block.heading for block in debate.blocks]
    assert headings[:3] == [
        "Tour 1 · Pour (vrai)",
        "Tour 1 · Contre (faux ou trompeur)",
        "Tour 1 · Juge : false",
    ]
    assert "Pourquoi le débat s'est arrêté" in headings
    assert (
        debate.blocks[0].body == "The post names a real city.\n\nCite la publication."
    )  # its own words kept
    assert "Cite cette source :" in debate.blocks[1].body
    claims = section("claims", _report(), french)
    assert claims.blocks[0].heading == "Affirmation principale · contredite par council.example.org"
    german = section("evidence", _report().model_copy(update={"evidence": []}), words_for("German"))
    assert (german.title, german.blocks[0].heading) == ("Belege", "Hier ist nichts")
    assert german.blocks[0].body == "Für diesen Beitrag wurden keine Belege gefunden."
    assert already_shown("claims", french) == "Les affirmations sont déjà dans ce fil."
    # English stays the code's own words.
    assert section("debate", _report()).blocks[0].heading == "Round 1 · For (true)"
