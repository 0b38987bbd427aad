"""How chats forward a claim: the same statement in several surface forms.

``plain`` is the statement as it is; the others wrap it as people post it: a question
("Did you know that …?"), a headline ("BREAKING: …"), a casual line with an emoji, a
quoted post ("My aunt shared this: “…”"), a "Fun fact". The statement's words, and so
its checkable values, are never changed by its form.
"""

from __future__ import annotations

import random

__all__ = ["FORMS", "written_as"]

FORMS = ("plain", "did_you_know", "breaking", "casual", "quoted", "fun_fact")

_CASUAL = (
    "{s} 🤯",
    "ok so apparently {l} 😳",
    "lol did not know {l} 😂",
    "{s} 👀 #history",
    "wait what, {l} 🙃",
)
_QUOTED = (
    "My aunt shared this: “{s}”",
    'Someone in the group posted: "{s}" Is that right?',
    "Forwarded many times: “{s}”",
    "Saw this on a channel: “{s}”",
)


def _lower_first(statement: str) -> str:
    """The statement inside a sentence: its first letter lowered unless it starts a
    name ("The Nile" keeps "The"; "Angela Merkel" keeps "A")."""
    first = statement.split(" ", 1)[0]
    if first in ("The", "A", "An"):
        return first.lower() + statement[len(first) :]
    return statement


def written_as(form: str, statement: str, rng: random.Random) -> str:
    """``statement`` (one sentence ending in ".") written in ``form``."""
    body = statement.rstrip(".")
    lowered = _lower_first(body)
    match form:
        case "did_you_know":
            return f"Did you know that {lowered}?"
        case "breaking":
            return f"BREAKING: {statement}"
        case "casual":
            return rng.choice(_CASUAL).format(s=statement, l=lowered)
        case "quoted":
            return rng.choice(_QUOTED).format(s=statement)
        case "fun_fact":
            return f"Fun fact: {statement}"
    return statement
