"""Scripted answers for every agent of the panel, for the fake OpenAI server.

The engine names each reply schema (``linguistreply``, ``judgereply`` …) in
``response_format.json_schema.name``; :class:`PanelScript` answers by that
name, so a test only overrides the steps it is about. Replies are what a
well-behaved model would send: JSON objects that fit the schema.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable
from typing import Any

from .openai_peer import ChatReply

__all__ = [
    "REPORT_KEYS",
    "SCHEMAS",
    "PanelScript",
    "judge_logprobs",
    "last_user_text",
    "schema_name",
]

# The report's top-level keys, in order, as the Stage-2 issue lists them.
REPORT_KEYS = [
    "verdict",
    "confidence",
    "summary",
    "keywords",
    "evidence",
    "claims",
    "analyses",
    "debate",
    "usage",
    "timings",
    "degraded",
]

SCHEMAS = (
    "linguistreply",
    "domainreply",
    "expertreply",
    "extractorreply",
    "verifierreply",
    "debaterreply",
    "judgereply",
    "finalreply",
)

Answer = (
    ChatReply
    | str
    | dict[str, Any]
    | Callable[[dict[str, Any]], "ChatReply | str | dict[str, Any]"]
)


def schema_name(body: dict[str, Any]) -> str:
    fmt = body.get("response_format") or {}
    return str((fmt.get("json_schema") or {}).get("name", ""))


def last_user_text(body: dict[str, Any]) -> str:
    return str(body["messages"][-1]["content"])


def _first_passage(body: dict[str, Any]) -> str:
    match = re.search(r"^\[web-\d+\] (.+)$", last_user_text(body), re.MULTILINE)
    return match.group(1) if match else ""


def _verifier(body: dict[str, Any]) -> dict[str, Any]:
    passage = _first_passage(body)
    quote = " ".join(passage.split()[:6])
    return {"label": "refutes", "reason": "The passage contradicts the claim.", "quotes": [quote]}


DEFAULTS: dict[str, Answer] = {
    "linguistreply": {"analysis": "Sensational wording and vague sourcing.", "lean": "fake"},
    "domainreply": {"domain": "politics", "expert_role": "political journalist"},
    "expertreply": {
        "knowledge_concordance": "The figures contradict public records.",
        "logical_integrity": "The conclusion does not follow from the anecdote.",
        "lean": "fake",
    },
    "extractorreply": {
        "core_claim": "The mayor of Springfield banned bicycles.",
        "sub_claims": ["Springfield passed a law in March.", "The law fines cyclists 500 dollars."],
    },
    "verifierreply": _verifier,
    "debaterreply": {"rebuttal": "", "argument": "The post names a real city.", "cites": ["post"]},
    "judgereply": {"decision": "fake", "reason": "Web sources refute the core claim."},
    "finalreply": {"decision": "fake", "reason": "On balance the evidence refutes the post."},
}


def judge_logprobs(content: str, p_fake: float) -> list[tuple[str, float, dict[str, float]]]:
    """Per-token logprobs for a judge reply whose decision token carries ``p_fake``."""
    import math

    head, _, tail = content.partition('"decision": "')
    word, _, rest = tail.partition('"')
    p_real = 1.0 - p_fake
    chosen = math.log(p_fake if word == "fake" else p_real)
    top = {"fake": math.log(p_fake), "real": math.log(p_real)}
    return [
        (head + '"decision": "', 0.0, {}),
        (word, chosen, top),
        ('"' + rest, 0.0, {}),
    ]


class PanelScript:
    """Answers the panel's requests by schema name; counts what was asked.

    Args:
        overrides: schema name → a reply (a dict is sent as JSON, a string as
            is, a callable gets the request body), replacing the default.
    """

    def __init__(self, **overrides: Answer) -> None:
        self.answers: dict[str, Answer] = {**DEFAULTS, **overrides}
        self.asked: Counter[str] = Counter()

    def __call__(self, body: dict[str, Any]) -> ChatReply | str:
        name = schema_name(body)
        self.asked[name] += 1
        answer = self.answers[name]
        if callable(answer) and not isinstance(answer, ChatReply):
            answer = answer(body)
        if isinstance(answer, dict):
            return json.dumps(answer)
        return answer
