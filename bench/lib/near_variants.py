"""Not a bench script: helpers of ``bench/near_threshold.py`` (``bench/lib/`` holds
such). The forward variants and edited claims it scores: what people
do to a post when they forward it (each reproducible from a seeded ``random.Random``),
and the edits that make a different claim out of one."""

from __future__ import annotations

import random
import re
from collections.abc import Callable

CHANNELS = ("Patriot News Daily", "Truth Uncensored", "Мама Оля", "Breaking 24/7", "Jim")
HASHTAGS = ("#share", "#truth #wakeup", "#MAGA #share", "#news", "#FakeNews #spreadtheword")
PLEAS = (
    "Share before they delete this!!!",
    "SHARE BEFORE THEY DELETE THIS",
    "Please share, the media won't report this.",
    "Pass it on. 🙏",
)
EMOJI = ("😡", "🚨", "‼️", "👇👇", "🇺🇸", "😱", "🔥")

Variant = Callable[[str, random.Random], str | None]


# --- forward variants --------------------------------------------------------------


def fwd_prefix(text: str, rng: random.Random) -> str:
    return rng.choice(("Fwd: ", "FWD: ", "Fw: ")) + text


def forwarded_from(text: str, rng: random.Random) -> str:
    return f"Forwarded from {rng.choice(CHANNELS)}:\n{text}"


def hashtag_line(text: str, rng: random.Random) -> str:
    return f"{text}\n\n{rng.choice(HASHTAGS)}"


def share_plea(text: str, rng: random.Random) -> str:
    return f"{text}\n\n{rng.choice(PLEAS)}"


def emoji(text: str, rng: random.Random) -> str:
    """One emoji before the text, one or two more between words."""
    words = text.split(" ")
    for _ in range(rng.randint(1, 2)):
        words.insert(rng.randint(1, len(words)), rng.choice(EMOJI))
    return f"{rng.choice(EMOJI)} " + " ".join(words)


def whitespace_case(text: str, rng: random.Random) -> str:
    """Doubled spaces, a line break, and the first line in capitals."""
    first, _, rest = text.partition("\n")
    words = (first.upper() + ("\n" + rest if rest else "")).split(" ")
    for _ in range(3):
        i = rng.randrange(len(words))
        words[i] = words[i] + rng.choice(("  ", " \n", "   "))
    return " ".join(words).strip() + " "


def truncated_80(text: str, rng: random.Random) -> str | None:
    words = text.split(" ")
    if len(words) < 5:
        return None
    return " ".join(words[: max(1, round(len(words) * 0.8))])


def lead_line_removed(text: str, rng: random.Random) -> str | None:
    """The first line gone (the title, for a post); a one-line text loses its first sentence."""
    _, _, rest = text.partition("\n")
    if rest.strip():
        return rest.strip()
    sentences = re.split(r"(?<=[.!?])\s+", text.strip())
    return " ".join(sentences[1:]) if len(sentences) > 1 else None


def words_dropped(text: str, rng: random.Random) -> str | None:
    """Three random words dropped (one per ten words in a shorter text)."""
    words = text.split(" ")
    k = min(3, max(1, len(words) // 10))
    if len(words) <= k + 3:
        return None
    gone = set(rng.sample(range(len(words)), k))
    return " ".join(w for i, w in enumerate(words) if i not in gone)


def full_forward(text: str, rng: random.Random) -> str:
    """Every decoration at once: prefix, emoji, whitespace, a hashtag line."""
    return hashtag_line(fwd_prefix(emoji(whitespace_case(text, rng), rng), rng), rng)


VARIANTS: dict[str, Variant] = {
    "fwd_prefix": fwd_prefix,
    "forwarded_from": forwarded_from,
    "hashtag_line": hashtag_line,
    "share_plea": share_plea,
    "emoji": emoji,
    "whitespace_case": whitespace_case,
    "truncated_80": truncated_80,
    "lead_line_removed": lead_line_removed,
    "words_dropped": words_dropped,
    "full_forward": full_forward,
}

AUXILIARY = re.compile(
    r"\b(is|was|are|were|has|have|had|will|would|can|could|does|did|do|should)\b", re.I
)
NUMBER = re.compile(r"\b\d[\d,]*(\.\d+)?\b")


def negated(text: str) -> str | None:
    """``not`` inserted after the first auxiliary verb: the opposite claim."""
    found = AUXILIARY.search(text)
    return None if found is None else f"{text[: found.end()]} not{text[found.end() :]}"


def number_changed(text: str) -> str | None:
    """The first number tripled: a different claim."""
    found = NUMBER.search(text)
    if found is None:
        return None
    value = float(found.group().replace(",", ""))
    new = f"{value * 3:g}" if value else "3"
    return f"{text[: found.start()]}{new}{text[found.end() :]}"
