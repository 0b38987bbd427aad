"""Cutting long text for a platform: what a card shows of a long text costs about its
limit in measuring, whatever the text's length, and white space alone is no piece."""

from __future__ import annotations

import html
from collections.abc import Callable

import pytest

from bots.discord.render import escape, shorten
from bots.render.splitting import first_piece, split_text
from bots.telegram.render import clip_text, html_length, quote_text

LIMIT = 1000
#: a 50,000-character post (the engine's cap), as sentences, as one line of words, and
#: as one "word" of markup the escaping doubles
LONG_POSTS = [
    "The mayor banned bicycles. " * 1850,
    "the mayor banned *all* bicycles " * 1560,
    "<b>&</b>" * 6250,
]


def _counting(measure: Callable[[str], int]) -> tuple[Callable[[str], int], list[int]]:
    """``measure``, and the length of every text it was given."""
    seen: list[int] = []

    def counted(text: str) -> int:
        seen.append(len(text))
        return measure(text)

    return counted, seen


@pytest.mark.parametrize("post", LONG_POSTS, ids=["sentences", "words", "markup"])
def test_the_first_piece_of_a_long_post_costs_what_a_fifth_of_it_does(post: str) -> None:
    measure, seen = _counting(lambda s: len(escape(s)))
    first = first_piece(post, LIMIT, measure)
    assert first == split_text(post, LIMIT, lambda s: len(escape(s)))[0]
    assert len(escape(first)) <= LIMIT and post.startswith(first)
    # the same texts are measured for the post's first fifth (ten pieces or more: each level
    # of cutting looks one piece ahead, to join its last piece with what follows):
    # and none longer than the limit
    short, seen_short = _counting(lambda s: len(escape(s)))
    assert first_piece(post[: len(post) // 5], LIMIT, short) == first
    assert seen == seen_short and max(seen) <= LIMIT


@pytest.mark.parametrize("post", LONG_POSTS, ids=["sentences", "words", "markup"])
def test_a_cards_cut_of_a_long_post_is_the_first_piece_with_its_ellipsis(post: str) -> None:
    first = first_piece(post, LIMIT - 1, lambda s: len(escape(s)))
    assert shorten(post, LIMIT) == escape(first) + "…"
    clipped = clip_text(post, 200)
    assert html_length(clipped) <= 200 and clipped.endswith("…")
    assert post.startswith(html.unescape(clipped.removesuffix("…")))


def test_white_space_alone_past_the_limit_is_no_piece() -> None:
    text = " " * 150 + "\n\nThe mayor banned bicycles."
    assert split_text(text, 100) == ["The mayor banned bicycles."]
    assert first_piece(text, 100) == "The mayor banned bicycles."
    assert first_piece("", 100) == "" and first_piece(" " * 150, 100) == ""


def test_a_long_quote_is_clipped_by_the_markup_telegram_counts() -> None:
    measure, seen = _counting(lambda s: html_length(quote_text(s)))
    text = "<b>&</b>" * 6250
    pieces = split_text(text, 300, measure)
    assert "".join(pieces) == text and all(html_length(quote_text(p)) <= 300 for p in pieces)
    assert max(seen) <= 300
