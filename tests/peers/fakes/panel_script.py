"""Scripted answers for every agent of the panel: at the fake OpenAI server, or in process.

The engine names each reply schema (``linguistreply``, ``judgereply`` …) in
``response_format.json_schema.name``; :class:`PanelScript` answers by that
name, so a test only overrides the steps it is about. Replies are what a
well-behaved model would send: JSON objects that fit the schema.

:class:`ScriptedPanel` answers the same script in process, at ``LLMBackend.complete``: it
turns each :class:`CompletionRequest` into the body an OpenAI-compatible server would
receive (so the script answers it by its reply schema, exactly as the fake server does)
and the script's reply into a :class:`Completion`. The engine's own logic runs in full;
the protocol is the fake server's business (``tests/engine/test_engine.py``,
``tests/engine/llm/test_llm_openai.py``).
"""

from __future__ import annotations

import itertools
import json
import math
import re
from collections import Counter
from collections.abc import Callable
from typing import Any

from zofia_engine.errors import LLMResponseError
from zofia_engine.llm.base import Completion, CompletionRequest, TokenLogprob

from ..servers.openai_peer import ChatReply, prompt_token_count

__all__ = [
    "REPORT_KEYS",
    "SCHEMAS",
    "PanelScript",
    "ScriptedPanel",
    "as_body",
    "closest_sentence",
    "judge_logprobs",
    "last_user_text",
    "numbered_sentences",
    "schema_name",
    "word_logprobs",
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
    "notes",
    "basis",
    "lean",
    "triage",
    "search_mode",
    "tree",
    "images",
    "caption",
    "heard",
    "dropped",
    "depth",
    "searches",
    "review",
    "complete",
]

SCHEMAS = (
    "triagereply",
    "linguistreply",
    "domainreply",
    "expertreply",
    "extractorreply",
    "readerreply",
    "debaterreply",
    "judgereply",
    "finalreply",
    "radarreply",
    "stancereply",
    "pairreply",
    "blanksreply",
    "saidreply",
    "findingsreply",
    "onlyllmreply",
    "planreply",
    "nodereply",
    "decomposereply",
    "visionreply",
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


def numbered_sentences(body: dict[str, Any]) -> list[tuple[int, str, str]]:
    """The evidence's numbered sentences in a request, as (number, document id, text)."""
    found, document = [], ""
    for message in body["messages"]:
        text = str(message["content"])
        if not text.startswith("EVIDENCE"):
            continue
        for line in text.splitlines():
            head = re.match(r"^\[([\w-]+)\] ", line)
            if head:
                document = head.group(1)
            numbered = re.match(r"^(\d+)\. (.+)$", line)
            if numbered and document:
                found.append((int(numbered.group(1)), document, numbered.group(2)))
    return found


def closest_sentence(body: dict[str, Any]) -> int:
    """The number of the first sentence the reading's task names as closest to its claim."""
    match = re.search(r"closest to this claim are numbers (\d+)", last_user_text(body))
    return int(match.group(1)) if match else 1


def _reader(body: dict[str, Any]) -> dict[str, Any]:
    """The claim refuted by the sentence closest to it."""
    return {
        "stance": "refutes",
        "sentences": [closest_sentence(body)],
        "reason": "The sentence contradicts the claim.",
    }


_TURNS = itertools.count(1)


def _debater(body: dict[str, Any]) -> dict[str, Any]:
    """A new point each turn (a debate of repeats ends early, see ``agents.novelty``)."""
    n = next(_TURNS)
    argument = f"The post names a real city; record {n} of the archive, page {n * 7}, agrees."
    return {"rebuttal": "", "argument": argument, "cites": ["post"]}


def _node(body: dict[str, Any]) -> dict[str, Any]:
    """A node of the tree of claims judged false, firmly, on its closest sentence."""
    return {**_reader(body), "veracity": 0.1, "reliability": 0.9}


def _stance(body: dict[str, Any]) -> dict[str, Any]:
    """The document refutes the claim, shown by its first sentence."""
    match = re.search(r"^DOCUMENT \[[\w-]+\].*\n(.+?[.!?])(?:\s|$)", last_user_text(body), re.M)
    return {"stance": "refutes", "sentence": match.group(1) if match else ""}


def _blanks(body: dict[str, Any]) -> dict[str, Any]:
    """Each blank filled with the first words the grammar allows (the passage's, never
    "not stated" while it has words for it), as a model reading the passage would."""
    schema = body["response_format"]["json_schema"]["schema"]
    return {key: prop["enum"][0] for key, prop in schema["properties"].items()}


DEFAULTS: dict[str, Answer] = {
    "triagereply": {"kind": "claim", "reason": "It states a checkable fact.", "signs": []},
    "linguistreply": {"analysis": "Sensational wording and vague sourcing.", "lean": "fake"},
    "domainreply": {"domain": "politics", "expert_role": "political journalist"},
    "expertreply": {
        "knowledge_concordance": "The figures contradict public records.",
        "logical_integrity": "The conclusion does not follow from the anecdote.",
        "lean": "fake",
    },
    "extractorreply": {
        "core_claim": {"sentence": 1, "claim": "The mayor of Springfield banned bicycles."},
        "sub_claims": [
            {"sentence": 2, "claim": "Mayor Misty Buscher signed the law in March."},
            {"sentence": 2, "claim": "The law fines cyclists 500 dollars."},
        ],
    },
    "readerreply": _reader,
    "debaterreply": _debater,
    "judgereply": {
        "verdict": "false",
        "next": "stop",
        "reason": "Web sources refute the core claim.",
    },
    "finalreply": {"verdict": "false", "reason": "On balance the evidence refutes the post."},
    "radarreply": {"argument": "The record settles the post.", "cites": ["post"]},
    "stancereply": _stance,
    "pairreply": {"same_subject": "yes", "both_true": "yes"},
    "blanksreply": _blanks,
    "saidreply": {"said": "yes"},
    "findingsreply": {"correct": "yes"},
    "onlyllmreply": {"decision": "fake", "reason": "It reads as made up."},
    "planreply": {"queries": []},
    "nodereply": _node,
    "visionreply": {
        "description": "A printed headline on a white background.",
        "miscaption_rate": 10,
        "miscaption_reason": "The caption repeats the headline.",
        "tampering": 5,
        "tampering_reason": "none seen",
    },
    "decomposereply": {
        "sub_claims": [
            {"claim": "The ban was signed in March.", "dimension": "event", "importance": 0.6},
            {"claim": "The fine is 500 dollars.", "dimension": "quantity", "importance": 0.4},
        ]
    },
}


def word_logprobs(
    content: str, **odds: dict[str, float]
) -> list[tuple[str, float, dict[str, float]]]:
    """Per-token logprobs for a JSON reply: at the value of each key named in ``odds``
    the alternatives carry the probabilities given (word → p); every other stretch of
    text is one certain token."""
    tokens: list[tuple[str, float, dict[str, float]]] = []
    rest = content
    keys = sorted(odds, key=lambda k: content.index(f'"{k}": "'))
    for key in keys:
        head, found, tail = rest.partition(f'"{key}": "')
        if not found:
            raise ValueError(f"no {key!r} value in {content!r}")
        word, _, rest = tail.partition('"')
        top = {k: math.log(v) for k, v in odds[key].items() if v > 0}
        tokens += [(head + found, 0.0, {}), (word, top.get(word, math.log(1e-6)), top)]
        rest = '"' + rest
    return [*tokens, (rest, 0.0, {})]


def judge_logprobs(
    content: str, verdict: dict[str, float], stop: float | None = None
) -> list[tuple[str, float, dict[str, float]]]:
    """Per-token logprobs for a judge reply: ``verdict`` (outcome → p) at its verdict
    and, when ``stop`` is given, p(stop) = ``stop`` and p(continue) the rest at its
    ``next``."""
    if stop is None:
        return word_logprobs(content, verdict=verdict)
    return word_logprobs(content, verdict=verdict, next={"stop": stop, "continue": 1 - stop})


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


def as_body(request: CompletionRequest) -> dict[str, Any]:
    """The chat-completions body the OpenAI backend would send for ``request``."""
    body: dict[str, Any] = {
        "model": request.model,
        "messages": [{"role": m.role, "content": m.content} for m in request.messages],
        "max_tokens": request.max_tokens,
        "temperature": request.temperature,
    }
    if request.schema is not None:
        schema = {"name": request.schema_name, "schema": request.schema, "strict": True}
        body["response_format"] = {"type": "json_schema", "json_schema": schema}
    if request.top_logprobs:
        body |= {"logprobs": True, "top_logprobs": request.top_logprobs}
    return body


class ScriptedPanel:
    """Answers requests with ``responder`` (a :class:`PanelScript`, or any function of
    the request body); ``requests`` keeps every body, as the fake server does."""

    def __init__(self, responder: Callable[[dict[str, Any]], ChatReply | str]) -> None:
        self.responder = responder
        self.requests: list[dict[str, Any]] = []

    def __call__(self, request: CompletionRequest) -> Completion:
        body = as_body(request)
        self.requests.append(body)
        reply = self.responder(body)
        if isinstance(reply, str):
            reply = ChatReply(content=reply)
        if reply.status >= 400:
            raise LLMResponseError("scripted", f"status {reply.status}: {reply.error}")
        logprobs = (
            tuple(TokenLogprob(t, lp, dict(top)) for t, lp, top in reply.logprobs)
            if reply.logprobs is not None
            else None
        )
        return Completion(
            text=reply.content,
            model=request.model,
            prompt_tokens=reply.prompt_tokens or prompt_token_count(body),
            completion_tokens=reply.completion_tokens or len(reply.content.split()),
            latency_ms=0.0,
            cached_tokens=reply.cached_tokens,
            finish_reason=reply.finish_reason,
            logprobs=logprobs,
        )
