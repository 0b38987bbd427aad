"""Post hygiene before any model sees the text.

Forwarded posts arrive with HTML fragments, control characters, broken
surrogates from bad encoders and ragged whitespace. ``clean_post`` fixes what
can be fixed and says what it did, so the report can tell the user.
"""

from __future__ import annotations

import re
import unicodedata
from html.parser import HTMLParser

from .errors import InvalidPostError
from .refusals import POST_REFUSALS, PostRefusal

__all__ = [
    "EMPTY_POST",
    "checkable_text",
    "clean_post",
    "clip",
    "counted",
    "ends_sentence",
    "is_format",
    "is_visible",
    "whole_sentences",
    "without_format",
    "without_symbols",
]

EMPTY_POST = POST_REFUSALS[PostRefusal.EMPTY]

_TAG = re.compile(r"</?[a-zA-Z][a-zA-Z0-9]*(?:\s[^<>]*)?/?>")
_SURROGATE = re.compile(r"[\ud800-\udfff]")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_BLANKS = re.compile(r"[ \t\u00a0\u2000-\u200b\u3000]+")
_NEWLINES = re.compile(r"\s*\n\s*\n\s*")
# Characters that show nothing though they are neither spaces nor format characters:
# the Hangul fillers (U+115F, U+1160, U+3164, U+FFA0), the braille blank (U+2800), the
# combining grapheme joiner (U+034F) and the Khmer inherent vowels (U+17B4, U+17B5).
_FILLERS = frozenset("\u115f\u1160\u3164\uffa0\u2800\u034f\u17b4\u17b5")
# Spaces, separators, controls and format characters (U+200B, U+2060, U+FEFF, the
# direction marks …): what a blank post is made of.
_UNSEEN = frozenset({"Zs", "Zl", "Zp", "Cc", "Cf"})
# What may be cut from either end of a post besides whitespace: the fillers, and the
# format characters that mean nothing there (U+200B ZERO WIDTH SPACE, the zero-width
# non-joiner and joiner, which join nothing at an end, U+2060 WORD JOINER, U+FEFF BOM,
# U+00AD SOFT HYPHEN). Not every format character: a flag's tag characters and a closing
# U+2069 POP DIRECTIONAL ISOLATE belong to the text they end.
_EDGE_FILLERS = _FILLERS | frozenset("\u200b\u200c\u200d\u2060\ufeff\u00ad")
_BLOCK_TAGS = frozenset(
    [
        "p",
        "div",
        "br",
        "li",
        "ul",
        "ol",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "tr",
        "table",
        "blockquote",
        "section",
        "article",
        "header",
        "footer",
    ]
)


class _TextOfHTML(HTMLParser):
    """Collects the text of an HTML fragment; block elements become line breaks."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("script", "style"):
            self._skip += 1
        elif tag in _BLOCK_TAGS:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style"):
            self._skip = max(0, self._skip - 1)
        elif tag in _BLOCK_TAGS:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if not self._skip:
            self.parts.append(data)


def _strip_html(text: str) -> str:
    parser = _TextOfHTML()
    parser.feed(text)
    parser.close()
    return "".join(parser.parts)


def clean_post(text: str) -> tuple[str, list[str]]:
    """Return the cleaned text and notes on what was changed.

    Lone surrogates become U+FFFD, control characters (NUL included) become
    spaces, HTML markup is reduced to its text, runs of spaces collapse (a
    double space would split a name for the tagger) and paragraph breaks are
    kept, since sentence splitting uses them. A post with nothing visible in it (only
    zero-width, filler and space characters) comes back empty.
    """
    notes: list[str] = []
    if _SURROGATE.search(text):
        text = _SURROGATE.sub("\ufffd", text)
        notes.append("invalid characters (lone surrogates) replaced")
    controls = len(_CONTROL.findall(text))
    if controls:
        text = _CONTROL.sub(" ", text)
        notes.append(f"{controls} control character(s) removed")
    if _TAG.search(text):
        text = _strip_html(text)
        notes.append("HTML markup removed from the post")
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = _BLANKS.sub(" ", text)
    text = _NEWLINES.sub("\n\n", text)
    return _trimmed(text), notes


def _seen(char: str) -> bool:
    return char not in _FILLERS and unicodedata.category(char) not in _UNSEEN


def is_format(char: str) -> bool:
    """Whether ``char`` is a format character (Unicode category Cf): it shows nothing
    itself but joins, hides or reorders what is around it (U+200B ZERO WIDTH SPACE, the
    joiners, U+2060 WORD JOINER, U+FEFF, U+00AD SOFT HYPHEN, the direction marks,
    embeddings, overrides and isolates, the tag characters)."""
    return unicodedata.category(char) == "Cf"


def without_format(text: str) -> str:
    """``text`` without its format characters (:func:`is_format`): what someone wrote
    for others to read, shown as it reads (``t\u200b.me`` is ``t.me``)."""
    return "".join(char for char in text if not is_format(char))


def is_visible(text: str) -> bool:
    """Whether ``text`` shows anything: a post of only zero-width, filler and space
    characters (U+200B, U+2060, U+FEFF, U+3164 HANGUL FILLER, U+3000 …) is blank."""
    return any(map(_seen, text))


def _blank_edge(char: str) -> bool:
    return char.isspace() or char in _EDGE_FILLERS


def _trimmed(text: str) -> str:
    """``text`` without whitespace and fillers (``_EDGE_FILLERS``) at either end; ``""``
    when nothing in it shows (:func:`is_visible`)."""
    if not is_visible(text):
        return ""
    start, end = 0, len(text)
    while _blank_edge(text[start]):  # a visible character stops both loops
        start += 1
    while _blank_edge(text[end - 1]):
        end -= 1
    return text[start:end]


def checkable_text(text: str) -> tuple[str, list[str]]:
    """``clean_post``, refusing a post that has no text left after cleaning.

    Raises:
        InvalidPostError: nothing is left to check.
    """
    text, notes = clean_post(text)
    if not text:
        raise InvalidPostError(PostRefusal.EMPTY)
    return text, notes


_SENTENCE_END = re.compile(r"[.!?…](?:[\"'”’)\]]*)(?=\s|$)")


def ends_sentence(text: str) -> bool:
    """Whether ``text`` ends at the end of a sentence."""
    text = text.strip()
    ends = list(_SENTENCE_END.finditer(text))
    return bool(ends) and ends[-1].end() == len(text)


def whole_sentences(text: str) -> str:
    """``text`` without a last sentence cut off before its end (a reply that ran into
    its length cap); unchanged when it ends a sentence or has no complete one."""
    text = text.strip()
    ends = list(_SENTENCE_END.finditer(text))
    if not ends or ends[-1].end() == len(text):
        return text
    return text[: ends[-1].end()]


def clip(text: str, limit: int) -> str:
    """``text`` on one line, cut at a word to at most ``limit`` characters."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    return text[: limit - 1].rsplit(" ", 1)[0] + "…"


def counted(n: int, noun: str, nouns: str = "") -> str:
    """``n`` with its noun in the right number: "1 judgement", "2 judgements", "0
    documents" (``nouns`` for an irregular plural: ``counted(2, "entity", "entities")``)."""
    return f"{n:,} {noun if n == 1 else nouns or noun + 's'}"


def without_symbols(text: str) -> str:
    """``text`` with every emoji and other symbol (Unicode's So, Sk and Co categories,
    and the variation selectors and joiners that build emoji) turned into a space, so a
    parser reads "a Slovak statesman 😳" as it reads "a Slovak statesman"; the text
    keeps its length, so offsets into it still hold."""
    return "".join(
        " " if unicodedata.category(ch) in ("So", "Sk", "Co", "Cs") or ch in _EMOJI_GLUE else ch
        for ch in text
    )


_EMOJI_GLUE = frozenset("\u200d\ufe0e\ufe0f\u20e3")
