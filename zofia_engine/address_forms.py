"""What looks like an address in a text, judged as a reader's eye and a client's linker
see it, not as it is spelled (the rule :mod:`.contacts` applies to a model's words).

The text is first folded (:func:`folded`): NFKC (a full-width ``＠`` is ``@``, ``ｔ．ｍｅ``
is ``t.me``), format characters removed (a zero-width space, joiners, a BOM, direction
marks: category Cf), every Unicode dash a ``-``, the full stops a browser takes for a
host name's dot (UTS 46) a ``.`` when no CJK character follows (a Chinese or Japanese
sentence's own full stop stays one), and ``[.]``, ``(.)``, ``(dot)`` and `` dot ``
spellings a ``.`` ("a dot", "the dot com bubble": English's own dot stays). Each folded
character remembers the span of the text it came from, so what is found is taken out of
the text as it was written.

Then an address is (:data:`_ADDRESS`) any ``scheme:`` followed by more than a space
(``tg://resolve?…``, ``whatsapp:``, ``mailto:``, ``tel:``), an e-mail address, an IPv4
address, a host of two labels or more ending in a top-level domain of two letters or
more in any script (``t.me``, ``возврат-денег.рф``, ``例子.中国``) or in punycode, with
its path, and a handle (``@name``); and a phone number (:func:`_phone_spans`) is any run
of seven digits or more across non-letters (``+44‑7700‑900‑123``, ``+44/7700/900/123``,
``WA447700900123``), unless it is numbers as prose writes them: years and ranges of
years, dates and times, numbers with thousands separators or decimals (``8,848.86``,
``1,500,000``). Numbers after a comma, a semicolon or a colon are counted one by one, as
a list ("in 2019, 150 people"), unless the run starts with ``+`` or one of them with a
``0``.
"e.g.", "i.e.", "U.S." and "St. Petersburg" are no hosts: a top-level domain has two
letters or more, and a host no space.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from .text import is_format

__all__ = ["Folded", "address_spans", "folded"]

_CJK = (
    "\u2e80-\u30ff\u3100-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
    "\uff66-\uff9f\U00020000-\U0002fa1f"
)
_IS_CJK = re.compile(f"[{_CJK}]")
#: the full stops UTS 46 maps to a host name's dot (full-width, ideographic, half-width
#: ideographic), the small full stop and the one dot leader
_WIDE_DOTS = frozenset("\uff0e\u3002\uff61\ufe52\u2024")
_NOT_A_DOT = "\u3002"  # what a CJK sentence's full stop folds to: no dot in a host
_RLO = "\u202e"  # RIGHT-TO-LEFT OVERRIDE: "\u202emoc.macs" shows as "scam.com"
_SPELLED_DOT = re.compile(
    r"(?<=[\w-])(?:\s*[\[({<]\s*(?:\.|dot)\s*[\])}>]\s*|(?<!\bthe)(?<!\ba)(?<!\ban)\s+dot\s+)"
    r"(?=[\w-])",
    re.IGNORECASE,
)
# What may follow a scheme or a host: a URL's characters up to a space, a quotation mark
# or a CJK character (Chinese and Japanese put no space after a link).
_REST = rf"[^\s<>\"'`{{}}|\\^\[\]{_CJK}]*"
_OCTET = r"(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)"
_ADDRESS = re.compile(
    rf"(?<![a-z0-9+.-])[a-z](?:[a-z0-9+.-]{{0,30}}[a-z])?:(?=[a-z0-9/%+?#]){_REST}"
    r"|(?<![\w.+-])[\w.+-]++@[\w-]+(?:\.[\w-]+)+"
    rf"|(?<![\d.])(?:{_OCTET}\.){{3}}{_OCTET}(?!\d|\.\d)(?::\d{{1,5}})?"
    r"|(?<![\w-])(?<![\w-]\.)[\w-]++(?:\.[\w-]++)*\.(?:[^\W\d_]{2,63}|xn--[a-z0-9-]{1,59})(?![\w-])"
    rf"(?::\d{{1,5}})?(?:[/?#]{_REST})?"
    r"|@\w[\w.-]*",
    re.IGNORECASE,
)
#: what ends a sentence rather than an address; a closing bracket too, when the address
#: opened none
_TRAILING = frozenset(".,;:!?-'\"»”’")
_CLOSING = {")": "(", "]": "["}

# A run of digits across non-letters (spaces, dashes, dots, slashes, brackets …), four
# at most between two digits, within one line.
_RUN = re.compile(r"\+?\d(?:(?:[^\w\n]|_){0,4}\d)*")
_LIST = re.compile(r"[,;:]\s+")
_YEAR = r"(?:1\d{3}|20\d{2})"
_DAY, _MONTH = r"(?:0?[1-9]|[12]\d|3[01])", r"(?:0?[1-9]|1[0-2])"
#: a number as prose writes one: a year or a range of years, a date or a time, a number
#: with thousands separators or decimals
_PROSE_NUMBER = re.compile(
    rf"{_YEAR}(?:[-/](?:{_YEAR}|\d\d))?"
    rf"|{_YEAR}[-/.]{_MONTH}[-/.]{_DAY}|{_DAY}[-/.]{_MONTH}[-/.]{_YEAR}"
    rf"|{_MONTH}[-/.]{_DAY}[-/.]{_YEAR}|\d{{1,2}}:\d\d(?::\d\d)?"
    r"|[1-9]\d{0,2}(?:,\d{3})+(?:\.\d{1,6})?|[1-9]\d{0,2}(?:\.\d{3})+(?:,\d{1,6})?"
    r"|\d{1,3}[.,]\d{1,6}"
)
_MIN_DIGITS = 7


@dataclass(frozen=True)
class Folded:
    """A text as :func:`folded` folds it; ``spans[i]`` is the span of the original text
    that ``text[i]`` came from."""

    text: str
    spans: tuple[tuple[int, int], ...]

    def original(self, start: int, end: int) -> tuple[int, int]:
        """The span of the original text that ``text[start:end]`` came from."""
        inside = self.spans[start:end]
        return min(a for a, _ in inside), max(b for _, b in inside)


def _next_visible(text: str, at: int) -> str:
    for char in text[at:]:
        if not is_format(char):
            return char
    return ""


def _fold_one(text: str, at: int, end: int) -> str:
    """``text[at:end]`` (a character and its combining marks) folded."""
    if text[at] in _WIDE_DOTS:
        return _NOT_A_DOT if _IS_CJK.match(_next_visible(text, end) or "\u3000") else "."
    out = unicodedata.normalize("NFKC", text[at:end])
    return "".join("-" if unicodedata.category(c) == "Pd" or c == "\u2212" else c for c in out)


def _fold_chars(text: str, *, overrides: bool = True) -> tuple[list[str], list[tuple[int, int]]]:
    """NFKC, format characters out, dashes and wide dots folded (see the module); what a
    right-to-left override shows reversed, up to its end (U+202C or the line's), in the
    order a reader sees it."""
    chars: list[str] = []
    spans: list[tuple[int, int]] = []
    at, hidden = 0, None  # hidden: where the format characters before ``at`` start
    while at < len(text):
        end = at + 1
        while end < len(text) and unicodedata.category(text[end]).startswith("M"):
            end += 1  # a letter with its combining marks, composed as NFKC composes it
        if overrides and text[at] == _RLO:
            ends = [text.find(mark, end) for mark in "\u202c\n"]
            close = min([i for i in ends if i >= 0] + [len(text)])
            inner, places = _fold_chars(text[end:close], overrides=False)
            shifted = [(a + end, b + end) for a, b in places]
            if shifted:  # the override goes with the first character it reverses
                shifted[0] = (at if hidden is None else hidden, shifted[0][1])
            chars += reversed(inner)
            spans += reversed(shifted)
            at, hidden = close, None
        elif is_format(text[at]):
            hidden = at if hidden is None else hidden
            at += 1
        else:
            for piece in _fold_one(text, at, end):
                chars.append(piece)
                spans.append((at if hidden is None else hidden, end))  # with what it hid
            at, hidden = end, None
    return chars, spans


def folded(text: str) -> Folded:
    """``text`` folded as the module says, each character with where it came from."""
    if text.isascii():
        base = Folded(text, tuple((i, i + 1) for i in range(len(text))))
    else:
        chars, places = _fold_chars(text)
        base = Folded("".join(chars), tuple(places))
    spelled = list(_SPELLED_DOT.finditer(base.text))
    if not spelled:
        return base
    parts: list[str] = []
    spans: list[tuple[int, int]] = []
    at = 0
    for found in spelled:
        parts += [base.text[at : found.start()], "."]
        spans += [*base.spans[at : found.start()], base.original(found.start(), found.end())]
        at = found.end()
    parts.append(base.text[at:])
    spans += base.spans[at:]
    return Folded("".join(parts), tuple(spans))


def _trimmed(token: str) -> int:
    """How much of ``token`` is the address: without what ends the sentence around it."""
    end = len(token)
    while end:
        last = token[end - 1]
        opener = _CLOSING.get(last)
        if last in _TRAILING or (
            opener and token.count(opener, 0, end) < token.count(last, 0, end)
        ):
            end -= 1
            continue
        break
    return end


def _prose(piece: str) -> bool:
    """Whether every number in ``piece`` (no list separator in it) is one prose writes."""
    for part in piece.split():
        part = part.strip("()[]{}.,;:!?\"'-/")
        if not part or _PROSE_NUMBER.fullmatch(part):
            continue
        if not all(_PROSE_NUMBER.fullmatch(p) for p in re.split(r"[-/]", part) if p):
            return False
    return True


def _digits(text: str) -> int:
    return sum(char.isdigit() for char in text)


def _pieces(run: str) -> list[tuple[int, int]]:
    """The parts of a run of digits counted apart: the numbers of a list, each after a
    comma, a semicolon or a colon; the whole run when it starts with ``+`` or a number
    of the list with ``0``."""
    if run.startswith("+"):
        return [(0, len(run))]
    cuts = [0, *(i for m in _LIST.finditer(run) for i in (m.start(), m.end())), len(run)]
    pieces = list(zip(cuts[::2], cuts[1::2], strict=True))
    if len(pieces) > 1 and any(re.match(r"[(\[]?0\d", run[a:b]) for a, b in pieces):
        return [(0, len(run))]
    return pieces


def _phone_spans(text: str, taken: bytearray) -> list[tuple[int, int]]:
    """The spans of ``text`` (folded) that are phone numbers, with the letters glued to
    them (``WA447700900123``); none in what ``taken`` marks (the addresses found)."""
    found = []
    blanked = "".join("x" if mark else char for char, mark in zip(text, taken, strict=True))
    glued = [char.isalpha() and not mark for char, mark in zip(text, taken, strict=True)]
    for run in _RUN.finditer(blanked):
        if _digits(run[0]) < _MIN_DIGITS:
            continue
        for start, end in _pieces(run[0]):
            piece = run[0][start:end]
            if _digits(piece) < _MIN_DIGITS or (not piece.startswith("+") and _prose(piece)):
                continue
            start, end = run.start() + start, run.start() + end
            while start and glued[start - 1]:
                start -= 1
            if (
                start
                and not taken[start - 1]
                and text[start - 1] in "(["
                and piece.count(")") + piece.count("]") > (piece.count("(") + piece.count("["))
            ):
                start -= 1  # "(555) 010-9999": its opening bracket goes with it
            while end < len(text) and glued[end]:
                end += 1
            found.append((start, end))
    return found


def address_spans(text: str) -> list[tuple[int, int]]:
    """The spans of ``text`` that look like an address or a phone number, in order and
    apart; each without the punctuation that ends the sentence around it."""
    view = folded(text)
    spans = []
    taken = bytearray(len(view.text))
    for found in _ADDRESS.finditer(view.text):
        end = found.start() + _trimmed(found[0])
        if end > found.start():
            spans.append(view.original(found.start(), end))
        taken[found.start() : found.end()] = b"\x01" * (found.end() - found.start())
    spans += [view.original(start, end) for start, end in _phone_spans(view.text, taken)]
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):  # reversed text can interleave two of them
        if merged and start < merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged
