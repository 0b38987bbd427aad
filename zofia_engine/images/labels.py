"""The words fact-checkers stamp, in an image's text (AgentFact, appendix Table S1): an
image stamped FALSE or ALTERED may have been rated already, or made to look so (anyone
can print the words; what a hit counts for is :mod:`.grounds`' rule: never ``true``, and
otherwise a lead unless a fact-checker published the image). A label is found only
where it stands as a stamp does: a line that is the label alone, or the label and one
noun ("Altered photo", "False information"), or the label before a colon or dash
("FALSE: no ban exists"), or any line that names fact-checkers ("Checked by independent
fact-checkers"). A headline that merely starts with the word ("Fake news media is
lying", "False flag attack in Ohio") or a sentence that uses it does not count.
"""

from __future__ import annotations

import re

from ..records.images import LabelHit

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
_STAMP_NOUNS = frozenset({"photo", "image", "picture", "video", "claim", "information", "content"})
_CHECKERS = re.compile(r"fact[\s-]?check", re.IGNORECASE)


def _normal(line: str) -> str:
    line = line.replace("’", "'").casefold()
    return " ".join(re.sub(r"[^\w' ]+", " ", line).split())


def _stamped(word: str, line: str, raw: str) -> bool:
    """``line`` (normalised; ``raw`` as read) is ``word`` standing as a stamp."""
    if line == word:
        return True
    rest = line.removeprefix(word + " ")
    if rest != line and rest in _STAMP_NOUNS:
        return True
    opening = re.match(rf"\s*{re.escape(word)}\s*[:\-–—]", raw.replace("’", "'"), re.IGNORECASE)
    return opening is not None


def find_labels(text: str) -> list[LabelHit]:
    """The labels ``text`` (the image's lines) carries as stamps, each word once."""
    hits: dict[str, LabelHit] = {}
    for raw in text.splitlines():
        line = _normal(raw)
        if not line:
            continue
        checker_line = bool(_CHECKERS.search(raw))
        for word in _WORDS:
            if _stamped(word, line, raw) or (
                checker_line and re.search(rf"\b{re.escape(word)}\b", line)
            ):
                hits.setdefault(
                    word, LabelHit(word=word, line=raw.strip()[:120], outcome=LABELS[word])
                )
                break
    return list(hits.values())
