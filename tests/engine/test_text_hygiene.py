"""Post hygiene (zofia_engine.text) and name trimming in clean_units."""

from __future__ import annotations

import pytest

from zofia_engine.retrieval.entities import EntityUnit, clean_units
from zofia_engine.text import clean_post, whole_sentences


def test_plain_text_is_left_alone() -> None:
    text = "Angela Merkel visited Paris.\n\nShe met Emmanuel Macron."
    assert clean_post(text) == (text, [])


def test_control_characters_and_double_spaces() -> None:
    cleaned, notes = clean_post("Angela\x00  Merkel\tvisited\x07 Paris.")
    assert cleaned == "Angela Merkel visited Paris."
    assert notes == ["2 control character(s) removed"]


def test_lone_surrogates_are_replaced() -> None:
    cleaned, notes = clean_post("Bad \ud800 bytes")
    assert cleaned == "Bad \ufffd bytes"
    assert notes == ["invalid characters (lone surrogates) replaced"]
    cleaned.encode("utf-8")  # now encodable


def test_broken_html_keeps_its_words() -> None:
    cleaned, notes = clean_post(
        "<p>Joe <b>Biden visited</p> Paris<div><script>alert(1)</script>&amp; Rome<br>ok"
    )
    assert "Joe Biden visited" in cleaned
    assert "Paris" in cleaned and "& Rome" in cleaned
    assert "alert" not in cleaned and "<" not in cleaned
    assert notes == ["HTML markup removed from the post"]


def test_comparison_signs_are_not_html() -> None:
    text = "Inflation < 3% and growth > 2% in 2024."
    assert clean_post(text) == (text, [])


@pytest.mark.parametrize(
    ("span", "expected"),
    [
        ("Emmanuel Macron met her at the Elysee.", "Emmanuel Macron"),
        ("Washington, D.C.", "Washington, D.C."),
        ("Bank of America", "Bank of America"),
        ("Bank of", "Bank"),
        ("iPhone", "iPhone"),
        ("Elysee.", "Elysee"),
    ],
)
def test_clean_units_cuts_a_name_out_of_a_run_on_span(span: str, expected: str) -> None:
    text = f"x {span} y"
    unit = EntityUnit(span, "PER", 2, 2 + len(span), 0.9, len(span.split()))
    (cleaned,) = clean_units([unit], text)
    assert cleaned.text == expected
    assert text[cleaned.start : cleaned.end] == expected


def test_clean_units_drops_a_lone_connector() -> None:
    unit = EntityUnit("the", "ORG", 0, 3, 0.9, 1)
    assert clean_units([unit], "the cat") == []


@pytest.mark.parametrize(
    ("reply", "kept"),
    [
        # A summary that ran into its length cap loses the sentence it was cut in.
        (
            "The mayor signed no law. Cyclists face no fine. The council then",
            "The mayor signed no law. Cyclists face no fine.",
        ),
        ('He said "no ban." And then the', 'He said "no ban."'),
        ("Is it true? Nobody knows", "Is it true?"),
        # Whole already, or no complete sentence to fall back on: unchanged.
        ("The mayor signed no law.", "The mayor signed no law."),
        ("  No ban was signed!  ", "No ban was signed!"),
        ("a reply with no full stop at all", "a reply with no full stop at all"),
        # A decimal point is not a sentence end.
        ("The fine is 5.5 dollars. It rose", "The fine is 5.5 dollars."),
    ],
)
def test_whole_sentences_drops_a_sentence_cut_off(reply: str, kept: str) -> None:
    assert whole_sentences(reply) == kept
