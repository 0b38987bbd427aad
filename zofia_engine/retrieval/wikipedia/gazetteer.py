"""The article titles a post names in its own words: a title gazetteer.

spaCy's small model tags people, places and organisations, but misses most works,
landmarks, events and concepts: in "The Mona Lisa was painted by the Dutch artist
Rembrandt." its keyword is "the Dutch", not "Mona Lisa". So Stage 1 also reads the
post's own word n-grams and keeps those that are an article's title.

An n-gram is up to :data:`MAX_PHRASE_WORDS` words of one *run*: words with nothing
but spaces between them, so no n-gram crosses a comma, a full stop or a bracket.
Words are compared in :func:`~.titles.normalize_title`'s form, so case, accents and
apostrophes do not matter ("Newton's laws of motion"); a last word's possessive or
plural ending may go ("Leonardo da Vinci's", "black holes"). An n-gram of function
words only ("it", "the who") names nothing, and one that lies inside a longer match
("Liberty" in "Statue of Liberty") is dropped; in a long post a lone lower-case word
must come twice to count. Only the first :data:`MAX_TOKENS` words are read, each
opening at most :data:`MAX_PHRASE_WORDS` n-grams, so the pass is bounded on any post.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from ...records.stage1 import WikiCandidate
from .titles import normalize_title

__all__ = [
    "MAX_PHRASE_WORDS",
    "MAX_TOKENS",
    "SHORT_POST_WORDS",
    "Phrase",
    "TitleMatch",
    "capitalised_spans",
    "find_titles",
]

T = TypeVar("T")

MAX_PHRASE_WORDS = 6
MAX_TOKENS = 10_000
# In a post longer than this, a lone lower-case word ("bathroom") must come twice.
SHORT_POST_WORDS = 50

# A word: letters or digits, joined by hyphens, dots or apostrophes ("D.C.", "Coca-Cola").
_WORD = re.compile(r"\w+(?:[-.'\u2019\u02bc]\w+)*")
_SENTENCE_END = re.compile(r"[.!?\n]")
_POSSESSIVE = re.compile(r"['\u2019\u02bc]s$", re.IGNORECASE)
# Words that never name an article on their own.
_STOPWORDS = """
    a about above after again against all also am an and any are as at be because been
    before being below between both but by can could did do does doing down during each
    either else ever every few for from further had has have having he her here hers him
    his how however i if in into is it its itself just least less let like many may me
    might more most much must my neither no nor not now of off on once one only or other
    our ours out over own per same shall she should since so some such than that the
    their them then there these they this those though through thus to too under until
    up upon us very was we were what when where whether which while who whom whose why
    will with within without would yet you your yours said says say made make makes
    many called known
"""
STOPWORDS = frozenset(_STOPWORDS.split())
# Lower-case words allowed inside a name ("Statue of Liberty", "Leonardo da Vinci"),
# at most two in a row ("Bank of the West"); "and" or "in" would join two names.
_CONNECTORS = "of the de del der des di du da la le van von y al bin"
CONNECTORS = frozenset(_CONNECTORS.split())


@dataclass(frozen=True, slots=True)
class _Token:
    start: int
    end: int
    key: str  # normalised; may hold two words ("wrought-iron" -> "wrought iron")
    run: int  # tokens of one run have only spaces between them
    capital: bool  # has an upper-case letter
    initial: bool  # first word of a sentence
    content: bool  # has a word that is neither a function word nor a number


@dataclass(frozen=True, slots=True)
class Phrase:
    """An n-gram of the post: its text as written, its normalised key, where it is."""

    text: str
    key: str
    start: int
    end: int
    first: int  # index of its first word
    words: int
    capitalised: bool

    def alternatives(self) -> list[str]:
        """The key, then the key without a last word's possessive or plural ending."""
        return _spellings(self.key, self.text.rsplit(None, 1)[-1])


def _spellings(key: str, last: str) -> list[str]:
    """``key``, then ``key`` without its last word's (``last``, as written) possessive
    or plural ending: "Leonardo da Vinci's", "black holes", "countries"."""
    if not key.endswith("s"):
        return [key]
    keys = [key]
    if _POSSESSIVE.search(last):
        # The key ends with the last word's own key: put the bare name there.
        cut = len(key) - len(normalize_title(last))
        keys.append(key[:cut] + normalize_title(_POSSESSIVE.sub("", last)))
    elif len(last) > 3:
        for ending, stem in (("ies", "y"), ("es", ""), ("s", "")):
            if key.endswith(ending):
                keys.append(key[: -len(ending)] + stem)
    return [k for k in dict.fromkeys(keys) if k]


@dataclass(frozen=True)
class TitleMatch:
    """Articles whose title an n-gram of the post is (several when senses share a name)."""

    phrase: str
    start: int
    candidates: list[WikiCandidate] = field(default_factory=list)


@dataclass(frozen=True)
class _Hit(Generic[T]):
    phrase: Phrase
    key: str  # the key that was found: the phrase's own, or without its ending
    found: Sequence[T]


def _tokens(text: str, max_tokens: int) -> list[_Token]:
    tokens: list[_Token] = []
    run, previous_end = 0, 0
    for match in _WORD.finditer(text):
        if len(tokens) >= max_tokens:
            break
        gap = text[previous_end : match.start()]
        if tokens and gap.strip():
            run += 1
        word = match.group()
        key = normalize_title(word)
        tokens.append(
            _Token(
                start=match.start(),
                end=match.end(),
                key=key,
                run=run,
                capital=any(c.isupper() for c in word),
                initial=not tokens or bool(_SENTENCE_END.search(gap)),
                content=any(w not in STOPWORDS and not w.isdigit() for w in key.split()),
            )
        )
        previous_end = match.end()
    return tokens


def _priority(phrase: Phrase) -> tuple[int, int]:
    """Names before common nouns, longer before shorter, then text order."""
    group = (0 if phrase.capitalised else 2) + (0 if phrase.words > 1 else 1)
    return group, phrase.start


def find_titles(
    text: str,
    lookup: Callable[[str], Sequence[T]],
    *,
    limit: int,
    skip: frozenset[str] = frozenset(),
    max_words: int = MAX_PHRASE_WORDS,
    max_tokens: int = MAX_TOKENS,
) -> list[tuple[Phrase, Sequence[T]]]:
    """The n-grams of ``text`` that ``lookup`` knows, at most ``limit`` of them.

    Args:
        text: the post.
        lookup: a normalised key → the articles with that title (empty if none).
        limit: the most phrases to return.
        skip: normalised keys not to return (phrases already looked up elsewhere).
        max_words, max_tokens: bounds of the pass.

    Returns:
        ``(phrase, articles)`` pairs, each key once, none inside a longer match:
        capitalised phrases first, multi-word before single, then in text order.
        In a post of over :data:`SHORT_POST_WORDS` words, a lone lower-case word
        counts only if it occurs twice.
    """
    if limit <= 0:
        return []
    tokens = _tokens(text, max_tokens)
    kept = _outermost(_hits(text, tokens, lookup, max_words))
    mentions = Counter(hit.key for hit in kept)
    short = len(tokens) <= SHORT_POST_WORDS
    seen: set[str] = set(skip)
    chosen: list[tuple[Phrase, Sequence[T]]] = []
    for hit in sorted(kept, key=lambda h: _priority(h.phrase)):
        phrase = hit.phrase
        if phrase.key in seen or hit.key in seen:
            continue
        if not (short or phrase.capitalised or phrase.words > 1 or mentions[hit.key] > 1):
            continue  # a common noun said once in a long story is not its topic
        seen.update((phrase.key, hit.key))
        chosen.append((phrase, hit.found))
        if len(chosen) >= limit:
            break
    return chosen


def _hits(
    text: str, tokens: Sequence[_Token], lookup: Callable[[str], Sequence[T]], max_words: int
) -> list[_Hit[T]]:
    """Every n-gram of up to ``max_words`` words within a run that ``lookup`` knows,
    under its first known spelling, in text order.

    Left out: n-grams that start with "the" (titles are compared without it), those of
    function words or digits only, and a lone lower-case word under three letters.
    """
    hits: list[_Hit[T]] = []
    for i, first in enumerate(tokens):
        if first.key in ("the", ""):
            continue
        key, content, capital = "", False, False
        for j in range(i, min(i + max_words, len(tokens))):
            token = tokens[j]
            if token.run != first.run or not token.key:
                break
            key = f"{key} {token.key}" if key else token.key
            content = content or token.content
            capital = capital or token.capital
            if not content or (i == j and not capital and len(key) < 3):
                continue
            for spelling in _spellings(key, text[token.start : token.end]):
                found = lookup(spelling)
                if found:
                    phrase = Phrase(
                        text[first.start : token.end],
                        key,
                        first.start,
                        token.end,
                        i,
                        j - i + 1,
                        capital,
                    )
                    hits.append(_Hit(phrase, spelling, found))
                    break
    return hits


def _outermost(hits: list[_Hit[T]]) -> list[_Hit[T]]:
    """Drop every hit whose words lie inside another, longer hit's."""
    spans = sorted(
        {(h.phrase.first, h.phrase.first + h.phrase.words) for h in hits},
        key=lambda span: (span[0], -span[1]),
    )
    covered: list[tuple[int, int]] = []
    for start, end in spans:
        if covered and covered[-1][1] >= end and covered[-1][0] <= start:
            continue  # inside the last kept span (spans start in order)
        covered.append((start, end))
    outer = set(covered)
    return [h for h in hits if (h.phrase.first, h.phrase.first + h.phrase.words) in outer]


def capitalised_spans(text: str, *, max_tokens: int = MAX_TOKENS) -> list[Phrase]:
    """Runs of capitalised words (with connectors between them), each key once.

    For a backend that cannot list its titles: these are what a post names, best
    guesses first: names of several words, then single words, each in text order,
    with a name that opens a sentence after those that do not. A sentence's capital
    says nothing, so a name that opens one also comes without its first word
    ("Yesterday Freddie Mercury" gives "Freddie Mercury" too), and a lone word that
    opens one ("Analysts said") is left out, as are leading function words.
    """
    tokens = _tokens(text, max_tokens)
    found: list[tuple[Phrase, bool]] = []
    i = 0
    while i < len(tokens):
        if not tokens[i].capital or not tokens[i].key or tokens[i].key in STOPWORDS:
            i += 1
            continue
        j = _name_end(tokens, i)
        initial = tokens[i].initial
        if not (initial and i == j):
            found.append((_span(text, tokens, i, j), initial))
        if initial and i < j:
            found.append((_span(text, tokens, i + 1, j), False))
        i = j + 1
    found.sort(key=lambda f: (f[0].words == 1, f[1], f[0].start))
    spans: list[Phrase] = []
    seen: set[str] = set()
    for span, _ in found:
        if span.key not in seen and span.key not in STOPWORDS:
            seen.add(span.key)
            spans.append(span)
    return spans


def _name_end(tokens: Sequence[_Token], i: int) -> int:
    """The last word of the name that starts at ``tokens[i]``."""
    j = i
    while True:
        k = j + 1
        while k < len(tokens) and k - j <= 2 and tokens[k].key in CONNECTORS:
            k += 1
        if k >= len(tokens) or tokens[k].run != tokens[i].run:
            return j
        if not (tokens[k].capital and tokens[k].key) or tokens[k].key in STOPWORDS:
            return j
        j = k


def _span(text: str, tokens: Sequence[_Token], i: int, j: int) -> Phrase:
    return Phrase(
        text=text[tokens[i].start : tokens[j].end],
        key=" ".join(t.key for t in tokens[i : j + 1]),
        start=tokens[i].start,
        end=tokens[j].end,
        first=i,
        words=j - i + 1,
        capitalised=True,
    )
