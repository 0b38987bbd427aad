"""The progress lines and the sections the card's buttons open speak the chat's language
(their fixed words, from its catalogue); the report's own text stays as it was written."""

from __future__ import annotations

from bots.render.progress import progress_lines
from bots.render.words import words_for
from zofia_engine.post import ProgressEvent


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
