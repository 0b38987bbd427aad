"""Fact-checkers' labels in a picture's text (AgentFact, appendix Table S1): a picture
stamped FALSE or ALTERED has already been rated. A label counts when it stands as a
stamp does: alone on its line or opening a short one ("False information", "ALTERED
PHOTO"), or anywhere on a line that names fact-checkers ("Checked by independent
fact-checkers"). A sentence that merely uses the word ("that is false, he said") does
not count.
"""

from __future__ import annotations

import re

from .models import LabelHit

__all__ = ["LABELS", "find_labels"]

#: AgentFact's watermark words (Table S1) → the outcome each stands for.
LABELS: dict[str, str] = {
    "fake": "false",
    "false": "false",
    "altered": "false",
    "misleading": "misleading",
    "miscaptioned": "misleading",
    "scam": "scam",
    "satire": "satire",
    "outdated": "misleading",
    "unproven": "unproven",
    "mixture": "misleading",
    "correct attribution": "true",
    "mostly false": "false",
    "mostly true": "true",
    "misattributed": "misleading",
    "composite image": "false",
    "no evidence": "unproven",
    "april fools' day": "satire",
    "missing context": "misleading",
    "partly false": "misleading",
    "false information": "false",
}
_WORDS = sorted(LABELS, key=len, reverse=True)
_STAMP_WORDS = 6
_CHECKERS = re.compile(r"fact[\s-]?check", re.IGNORECASE)


def _normal(line: str) -> str:
    line = line.replace("’", "'").casefold()
    return " ".join(re.sub(r"[^\w' ]+", " ", line).split())


def find_labels(text: str) -> list[LabelHit]:
    """The labels ``text`` (the picture's lines) carries as stamps, each word once."""
    hits: dict[str, LabelHit] = {}
    for raw in text.splitlines():
        line = _normal(raw)
        if not line:
            continue
        checker_line = bool(_CHECKERS.search(raw))
        short = len(line.split()) <= _STAMP_WORDS
        for word in _WORDS:
            opens = line == word or line.startswith(word + " ")
            inside = re.search(rf"\b{re.escape(word)}\b", line) is not None
            if (short and opens) or (checker_line and inside):
                hits.setdefault(
                    word, LabelHit(word=word, line=raw.strip()[:120], outcome=LABELS[word])
                )
                break
    return list(hits.values())
