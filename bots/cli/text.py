"""Text from outside (posts, pages, model replies) made safe to print in a terminal.

A stored post or a model's reply can carry escape sequences (an OSC 8 hyperlink, a
cursor move, a title change) and, printed into rich markup, brackets that rich would
read as markup (``x[/]`` crashes the print). Everything that did not come from this
program goes through :func:`plain`: control characters and bidirectional overrides
are dropped, and the result is a :class:`rich.text.Text`, never markup.
"""

from __future__ import annotations

import re

from rich.text import Text

__all__ = ["plain", "printable"]

# C0 controls but tab and newline, DEL, C1 controls, and the bidi embeddings,
# overrides and isolates that can make a line read backwards.
_UNPRINTABLE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def printable(text: str) -> str:
    """``text`` without control characters or bidirectional overrides."""
    return _UNPRINTABLE.sub("", text)


def plain(text: str, style: str = "") -> Text:
    """``text`` as printable, unmarked-up rich text."""
    return Text(printable(text), style=style)
