"""What a claim asserts, as a fact-checker's answer can settle it: a statement
attributed to someone, a figure, or an event.

* **statement**: the claim reports what someone said, wrote, admitted or called
  something ("Bernie Sanders admits he is a Democratic Socialist", "Says George
  Washington said a free people should be armed"); the answer settles whether they did.
  A claim in the first person ("I said it loud and clear") is the speaker's own record,
  an event.
* **figure**: the claim states an amount (:func:`~.figures.figures_in`): the answer
  gives the figure or another one.
* **event**: anything else: something happened, is so, or was done, or not.

A fact-checker's archive files each claim under what its speaker said, so a claim
often starts with the archive's own "Says" ("Says his boots are made in Wisconsin"):
that word is the filing, not part of what is asserted (:func:`asserted`).
"""

from __future__ import annotations

import re
from typing import Literal

from .figures import figures_in

__all__ = ["ClaimKind", "asserted", "claim_kind"]

ClaimKind = Literal["statement", "figure", "event"]

_FILED = re.compile(r"^\W*(?:says|say|claims|said)\s*,?\s+(?:that\s+)?", re.IGNORECASE)
_REPORTED = re.compile(
    r"\b(said|says|saying|wrote|writes|admit(?:s|ted)?|acknowledg(?:es|ed)|called|calls|"
    r"labell?ed|noted|stated|declared|told|promised|vowed|claimed|insisted|argued|"
    r"described|referred|quoted|tweeted|praised|endorsed|blamed|urged)\b",
    re.IGNORECASE,
)
_FIRST_PERSON = re.compile(r"\b(I|we|I've|I'd|we've)\s*$", re.IGNORECASE)


def asserted(text: str) -> str:
    """The claim without the archive's leading "Says" (the filing under its speaker)."""
    stripped = _FILED.sub("", text.strip(), count=1)
    return stripped[:1].upper() + stripped[1:] if stripped else text.strip()


def claim_kind(text: str) -> ClaimKind:
    """What ``text`` asserts (see the module's docstring)."""
    claim = asserted(text)
    for match in _REPORTED.finditer(claim):
        before = claim[: match.start()]
        if before.strip() and not _FIRST_PERSON.search(before):
            return "statement"
    return "figure" if figures_in(claim) else "event"
