"""The card and the sections as WhatsApp texts: within WhatsApp's limits, the model's
markup defused, the buttons' titles short enough in every card language."""

from __future__ import annotations

import datetime as dt
import re

import pytest

from bots.render.card import VERDICTS, Link, VerdictCard
from bots.render.sections import Block, Section
from bots.render.words import translated_languages, words_for
from bots.whatsapp.inbound import inbound_messages
from bots.whatsapp.render import (
    BODY_LIMIT,
    BUTTON_TITLE_LIMIT,
    TEXT_LIMIT,
    card_buttons,
    card_text,
    parse_button_id,
    plain,
    section_messages,
)
from bots.whatsapp.webhook import signature, verified

HOSTILE = "*Breaking* _now_ ~gone~ ```code``` see https://example.org/a_b_c"


def _card(**changes: object) -> VerdictCard:
    icon, words, colour = VERDICTS["false"]
    fields: dict[str, object] = {
        "check_id": "abcDEF123_-xyz00",
        "verdict": "false",
        "icon": icon,
        "headline": words,
        "colour": colour,
        "confidence": "87%",
        "summary": "The council's minutes record no such vote.",
        "lean": "",
        "links": (Link("City council minutes", "https://example.org/minutes"),),
        "origin": "a forwarded message",
        "published": dt.date(2026, 3, 1),
        "repeat_note": "",
        "notes": (),
    }
    fields.update(changes)
    return VerdictCard(**fields)  # type: ignore[arg-type]


def test_plain_defuses_whatsapps_markers_but_keeps_a_links_underscores() -> None:
    shown = plain(HOSTILE)
    assert re.search(r"[*~`]", shown) is None
    assert re.search(r"(?<!\w)_|_(?!\w)", shown) is None  # no underscore at a word's edge
    assert "https://example.org/a_b_c" in shown


def test_the_card_keeps_within_a_text_and_keeps_its_check_id_and_link() -> None:
    card = _card(
        summary=("A very long summary sentence. " * 400) + HOSTILE,
        links=tuple(Link("T" * 400, f"https://example.org/{n}") for n in range(3)),
        notes=tuple("N" * 900 for _ in range(3)),
        origin="O" * 3000,
    )
    url = "https://zofia.example.org/c/abcDEF123_-xyz00"
    for limit in (TEXT_LIMIT, BODY_LIMIT):
        text = card_text(card, report_url=url, limit=limit)
        assert len(text) <= limit
        assert text.startswith("❌ *False*")
        assert "\n\nCheck abcDEF123_-xyz00\n\n" in text and text.endswith(f"Full report: {url}")
        assert "A very long summary sentence." in text  # the summary is cut, never dropped


def test_a_short_card_says_everything_it_has() -> None:
    text = card_text(_card(summary=HOSTILE))
    assert "*Confidence:* 87%" in text and "*Top evidence*" in text
    assert "https://example.org/minutes" in text and "*" not in plain(HOSTILE)
    assert "Breaking" in text and "*Breaking*" not in text


@pytest.mark.parametrize("language", ["", *translated_languages()])
def test_the_buttons_are_three_with_short_titles_in_every_language(language: str) -> None:
    buttons = card_buttons(_card(words=words_for(language)))
    assert len(buttons) == 3
    assert all(1 <= len(title) <= BUTTON_TITLE_LIMIT for _, title in buttons)
    assert [parse_button_id(i) for i, _ in buttons] == [
        ("debate", "abcDEF123_-xyz00"),
        ("evidence", "abcDEF123_-xyz00"),
        ("review", "abcDEF123_-xyz00"),
    ]


def test_the_early_card_has_no_buttons_yet() -> None:
    assert card_buttons(_card(complete=False)) == []


def test_a_long_section_is_cut_into_texts_of_at_most_4096() -> None:
    blocks = tuple(Block(f"Turn {n}", "Word " * 2000, "https://example.org") for n in range(3))
    messages = section_messages(Section("debate", "Debate", blocks))
    assert messages[0].startswith("*Debate*")
    assert all(len(m) <= TEXT_LIMIT for m in messages) and len(messages) >= 6


def test_the_signature_is_the_hmac_of_the_raw_body() -> None:
    body = b'{"object":"whatsapp_business_account"}'
    good = signature(body, "secret")
    assert good.startswith("sha256=") and verified(body, good, "secret")
    assert not verified(body + b" ", good, "secret")
    assert not verified(body, good, "another secret")
    assert not verified(body, None, "secret") and not verified(body, good, "")


def test_statuses_and_malformed_messages_are_left_out() -> None:
    value = {
        "statuses": [{"id": "wamid.1", "status": "read"}],
        "messages": [
            {"from": "1555", "id": "wamid.2", "type": "text", "text": {"body": "hi"}},
            {"id": "wamid.3", "type": "text"},  # no sender
            "not a message",
        ],
    }
    payload = {"entry": [{"changes": [{"field": "messages", "value": value}]}]}
    found = inbound_messages(payload)
    assert [(m.id, m.kind, m.text) for m in found] == [("wamid.2", "text", "hi")]
    assert inbound_messages({"entry": "nonsense"}) == [] and inbound_messages([]) == []
