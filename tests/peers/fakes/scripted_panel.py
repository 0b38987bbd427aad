"""The panel's script answered in process, at ``LLMBackend.complete``: no server.

:class:`ScriptedPanel` turns each :class:`CompletionRequest` into the body an
OpenAI-compatible server would receive (so a :class:`PanelScript` answers it by its
reply schema, exactly as the fake server does) and the script's reply into a
:class:`Completion`. The engine's own logic runs in full; the protocol is the fake
server's business (``tests/test_engine.py``, ``tests/test_llm_openai.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from zofia_engine.errors import LLMResponseError
from zofia_engine.llm.base import Completion, CompletionRequest, TokenLogprob

from .openai_peer import ChatReply, prompt_token_count

__all__ = ["ScriptedPanel", "as_body"]


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
            raise LLMResponseError(f"scripted status {reply.status}: {reply.error}")
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
