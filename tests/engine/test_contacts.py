"""The contacts rule (``zofia_engine.contacts``, ``zofia_engine.address_forms``): in a
model's text an address stays only when it is byte for byte one of the evidence's URLs
or hosts; every other token that looks like one goes, however it is spelled, and the
numbers, dates and abbreviations of ordinary prose stay.

Every spelling that reached a card through the old gate is in the injection corpus
(``tests/project/test_injection_corpus.py``), through follow-ups and cards; here are the
rule's edges."""

from __future__ import annotations

import pytest

from zofia_engine.address_forms import address_spans, folded
from zofia_engine.contacts import without_contacts
from zofia_engine.report import EvidenceItem

MINUTES = EvidenceItem(
    id="web-1",
    source="web",
    provider="brave",
    title="City council minutes, March",
    url="https://www.springfield.il.us/council/minutes?year=2024",
    text="The Springfield city council passed no ordinance on bicycles in March.",
)


@pytest.mark.parametrize(
    "prose",
    [
        "The tower was finished in 1889.",
        "Leonardo da Vinci (15 April 1452 – 2 May 1519) painted it.",
        "Leonardo da Vinci (April 15, 1452 – May 2, 1519) painted it.",
        "World War I (1914–1918) and World War II (1939-1945) are both named.",
        "Everest is 8,848.86 m high, and about 1,500 people came.",
        "The city had 8,336,817 people in 2020 and a budget of $1,200,000.",
        "Die Stadt hat 1.500.000 Einwohner und 3,75 km² Fläche.",
        "Pi is about 3.14159, and the rate was 0.0004.",
        "In 2019, 150 people died; in 2020, 1,500 did.",
        "In 1914, 1939 and 1945 the treaty was signed again.",
        "The minutes are dated 2024-03-15 10:30, 15/03/2024 and 03.15.2024.",
        "It held through the 2019/2020 season and the 2019-20 budget.",
        "Some cities, e.g. Springfield, i.e. the capital, are in the U.S., not St. Petersburg.",
        "Mr. Smith, Ph.D., spoke at 10 a.m. with J.R.R. Tolkien's editor.",
        "Note: the council met. Source: the minutes [web-1], [web-2] and [fc-1].",
        "The dot com bubble burst in 2000; a dot on the map marks the city.",
        "它说。然后市议会否认了。これはペン．それは本です。",
        "Встреча прошла в г. Москва, т.е. в столице.",
        "ISO 8601: 2024-03-15T10:30:00Z, at UTC+2:00.",
    ],
)
def test_the_numbers_and_abbreviations_of_prose_stay(prose: str) -> None:
    assert address_spans(prose) == []
    assert without_contacts(prose, [MINUTES]) is prose


@pytest.mark.parametrize(
    "kept",
    [
        MINUTES.url,  # the URL itself
        "www.springfield.il.us",  # its host, as written
        "springfield.il.us",  # and without "www."
    ],
)
def test_an_evidence_url_or_host_stays_byte_for_byte(kept: str) -> None:
    text = f"The minutes ({kept}) record no such law."
    assert without_contacts(text, [MINUTES]) == text
    # Not quite the same bytes: it goes.
    changed = kept.replace("springfield", "Springfield")
    assert without_contacts(f"See {changed}.", [MINUTES]) == "See."


def test_an_evidence_address_keeps_its_digits_while_a_phone_beside_it_goes() -> None:
    text = f"See {MINUTES.url}, or call 4477009001."
    assert without_contacts(text, [MINUTES]) == f"See {MINUTES.url}, or call."


@pytest.mark.parametrize(
    ("said", "left"),
    [
        ("Call (555) 010-9999 now.", "Call now."),
        ("Write to desk@scam.example today.", "Write to today."),
        ("The site [t.me/scam](tg://resolve?domain=scam) is fake.", "The site is fake."),
        ("Ask @scamdesk.", "Ask."),
        ("Visit the \u202emoc.macs page.", "Visit the page."),  # its hidden mark goes with it
        ("Dial 0044 7700 900 123 or +44, 7700, 900, 123.", "Dial or."),
        ("Numbers: ١٢٣٤٥٦٧٨٩ and １２３４５６７８９.", "Numbers: and."),
        ("Open hxxps://scam[.]com/x or 10.0.0.1:8080.", "Open or."),
    ],
)
def test_every_other_address_goes_with_its_hidden_characters(said: str, left: str) -> None:
    assert without_contacts(said, [MINUTES]) == left


def test_a_list_of_numbers_after_commas_is_counted_number_by_number() -> None:
    """The one spelling that stays (documented in docs/security.md): numbers written as a
    list, none with a leading zero and no "+" before them, each under seven digits."""
    assert without_contacts("Scores were 447, 700, 900, 123.", [MINUTES]).endswith("123.")
    assert without_contacts("Scores were 447, 0700, 900, 123.", [MINUTES]) == "Scores were."


def test_the_folded_text_maps_each_character_back_to_where_it_was_written() -> None:
    text = "t\u200b．ｍｅ／x＠y scam (dot) com"
    view = folded(text)
    assert view.text == "t.me/x@y scam.com"
    at = view.text.index("scam.com")
    start, end = view.original(at, at + len("scam.com"))
    assert text[start:end] == "scam (dot) com"
    assert view.original(0, 2) == (0, 3)  # "t." is "t", the zero-width space and "．"
