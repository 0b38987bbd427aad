"""A fake OpenAI-compatible server speaking the real chat-completions protocol.

``POST /v1/chat/completions`` and ``GET /v1/models`` on 127.0.0.1, an ephemeral
port. Requests are validated as the real API does (bearer key, ``model`` and
``messages`` present, a named schema for ``json_schema``), recorded, and answered
from one-shot replies queued with :meth:`FakeOpenAI.script`, then from the
``responder`` (called with the parsed request body). Use as
``async with FakeOpenAI(...) as peer`` and point the client at ``peer.base_url``.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import time
import uuid
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from .loopback import LoopbackServer

__all__ = ["ChatReply", "FakeOpenAI", "Responder", "prompt_token_count"]


@dataclass(frozen=True)
class ChatReply:
    """One answer of the fake server.

    ``content`` is the assistant message. A ``status`` of 400 or more sends
    ``error`` as the OpenAI error JSON instead. ``raw`` is sent byte for byte
    (garbage bodies). ``delay_s`` holds the answer back (overrides the server's
    ``delay_s``); ``hang`` holds it until the server closes or the client goes.
    Token counts left ``None`` are computed (see :func:`prompt_token_count`);
    ``usage=False`` leaves the usage object out. ``logprobs`` gives per-token
    ``(token, logprob, {alternative: logprob})``.
    """

    content: str = ""
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    error: str = ""
    delay_s: float | None = None
    hang: bool = False
    raw: bytes | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cached_tokens: int | None = None
    usage: bool = True
    logprobs: list[tuple[str, float, dict[str, float]]] | None = None
    finish_reason: str = "stop"


Responder = Callable[[dict[str, Any]], ChatReply | str | Awaitable[ChatReply | str]]

_ERROR_KIND = {
    400: ("invalid_request_error", None),
    401: ("invalid_request_error", "invalid_api_key"),
    404: ("invalid_request_error", "model_not_found"),
    429: ("requests", "rate_limit_exceeded"),
}


def prompt_token_count(body: dict[str, Any]) -> int:
    """The fake's prompt token count: words of every message content, plus 4 a message."""
    messages = body.get("messages") or []
    return sum(len(str(m.get("content", "")).split()) + 4 for m in messages)  # parts: as text


def _error_body(status: int, message: str) -> dict[str, Any]:
    kind, code = _ERROR_KIND.get(status, ("server_error" if status >= 500 else "api_error", None))
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


def _token(token: str, logprob: float) -> dict[str, Any]:
    return {"token": token, "logprob": logprob, "bytes": list(token.encode())}


class FakeOpenAI(LoopbackServer):
    """An OpenAI-compatible chat-completions server for tests.

    Args:
        responder: answers each request not covered by the script; a string is
            the assistant content. ``None`` answers ``"ok"``.
        delay_s: hold every answer back this long (a reply's ``delay_s`` wins).
        api_key: when set, requests must carry ``Authorization: Bearer <api_key>``.
        models: the ids listed by ``GET /v1/models``.
        formats: the ``response_format`` types the server takes; others are refused
            with ``refusal_status`` and a body naming the field, as real servers do
            (llama-cpp-python's server: ``("text", "json_object")`` and 500).
        refusal_status: the status of such a refusal (400 for OpenAI, vLLM and most).
        logprobs: whether the server returns token log-probabilities; ``False`` refuses
            a request that asks for them, as llama-cpp-python's server does without
            ``logits_all``.
    """

    def __init__(
        self,
        responder: Responder | None = None,
        *,
        delay_s: float = 0.0,
        api_key: str | None = None,
        models: tuple[str, ...] = ("fake-model",),
        formats: tuple[str, ...] = ("text", "json_object", "json_schema"),
        refusal_status: int = 400,
        logprobs: bool = True,
    ) -> None:
        super().__init__()
        self.responder = responder
        self.delay_s = delay_s
        self.api_key = api_key
        self.models = models
        self.formats = formats
        self.refusal_status = refusal_status
        self.serves_logprobs = logprobs
        self.requests: list[dict[str, Any]] = []
        # when each request arrived (time.monotonic()), in the order of ``requests``
        self.arrivals: list[float] = []
        self.headers: list[dict[str, str]] = []
        self.calls = 0
        self.in_flight = 0
        self.max_in_flight = 0
        self._script: deque[ChatReply] = deque()

    @property
    def base_url(self) -> str:
        """The API root a client is configured with (``.../v1``)."""
        return f"{self.root}/v1"

    def script(self, *replies: ChatReply | str) -> None:
        """Queue one-shot replies, given in order before the responder is asked."""
        self._script.extend(
            r if isinstance(r, ChatReply) else ChatReply(content=r) for r in replies
        )

    def add_routes(self, app: web.Application) -> None:
        app.router.add_post("/v1/chat/completions", self._chat)
        app.router.add_get("/v1/models", self._models)

    def _refusal(self, request: web.Request) -> web.Response | None:
        if self.api_key is None:
            return None
        if request.headers.get("Authorization", "") != f"Bearer {self.api_key}":
            return web.json_response(_error_body(401, "Incorrect API key provided."), status=401)
        return None

    async def _models(self, request: web.Request) -> web.Response:
        refusal = self._refusal(request)
        if refusal is not None:
            return refusal
        data = [{"id": m, "object": "model", "created": 0, "owned_by": "fake"} for m in self.models]
        return web.json_response({"object": "list", "data": data})

    async def _chat(self, request: web.Request) -> web.Response:
        self.calls += 1
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            return await self._answer(request)
        finally:
            self.in_flight -= 1

    async def _answer(self, request: web.Request) -> web.Response:
        try:
            body = json.loads(await request.read())
        except ValueError:
            body = None
        self.requests.append(body if isinstance(body, dict) else {})
        self.arrivals.append(time.monotonic())
        self.headers.append(dict(request.headers))
        refusal = self._refusal(request)
        if refusal is not None:
            return refusal
        problem = _validate(body)
        if problem:
            return web.json_response(_error_body(400, problem), status=400)
        assert isinstance(body, dict)
        refused = self._unsupported(body)
        if refused:
            status = self.refusal_status
            return web.json_response(_error_body(status, refused), status=status)
        reply = await self._next_reply(body)
        delay = self.delay_s if reply.delay_s is None else reply.delay_s
        if reply.hang:
            await self.release.wait()
        elif delay > 0:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.release.wait(), delay)
        if reply.raw is not None:
            return web.Response(status=reply.status, body=reply.raw, headers=reply.headers)
        if reply.status >= 400:
            message = reply.error or f"HTTP {reply.status}"
            return web.json_response(
                _error_body(reply.status, message), status=reply.status, headers=reply.headers
            )
        return web.json_response(_completion(body, reply), headers=reply.headers)

    def _unsupported(self, body: dict[str, Any]) -> str:
        """Why this server would refuse a well-formed request, in its own words."""
        fmt = body.get("response_format")
        if isinstance(fmt, dict) and fmt.get("type") not in self.formats:
            allowed = " or ".join(repr(f) for f in self.formats)
            return f"response_format.type: Input should be {allowed}"
        if body.get("logprobs") and not self.serves_logprobs:
            return "logprobs is not supported for models created with logits_all=False"
        return ""

    async def _next_reply(self, body: dict[str, Any]) -> ChatReply:
        if self._script:
            return self._script.popleft()
        if self.responder is None:
            return ChatReply(content="ok")
        answer = self.responder(body)
        if inspect.isawaitable(answer):
            answer = await answer
        return answer if isinstance(answer, ChatReply) else ChatReply(content=answer)


def _valid_part(part: Any) -> bool:
    """A content part as the chat-completions API takes it: text, or an image by URL
    (an https address or a ``data:image/...;base64,`` URL)."""
    if not isinstance(part, dict):
        return False
    if part.get("type") == "text":
        return isinstance(part.get("text"), str)
    url = (part.get("image_url") or {}).get("url") if part.get("type") == "image_url" else None
    return isinstance(url, str) and url.startswith(("https://", "data:image/"))


def _validate(body: Any) -> str:
    if not isinstance(body, dict):
        return "We could not parse the JSON body of your request."
    if not body.get("model"):
        return "you must provide a model parameter"
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return "Invalid 'messages': empty array. Expected an array with minimum length 1."
    for m in messages:
        if not isinstance(m, dict) or m.get("role") not in {"system", "user", "assistant"}:
            return "Invalid value for 'messages': each message needs a valid 'role'."
        if isinstance(m.get("content"), list) and not all(map(_valid_part, m["content"])):
            return "Invalid content part: expected {'type': 'text', 'text'} or 'image_url'."
    fmt = body.get("response_format")
    if fmt is not None:
        kind = fmt.get("type") if isinstance(fmt, dict) else None
        if kind not in {"text", "json_object", "json_schema"}:
            return "Invalid value for 'response_format.type'."
        if kind == "json_schema":
            spec = fmt.get("json_schema")
            if not isinstance(spec, dict) or not spec.get("name"):
                return "Missing required parameter: 'response_format.json_schema.name'."
            if not isinstance(spec.get("schema"), dict):
                return "Missing required parameter: 'response_format.json_schema.schema'."
    top = body.get("top_logprobs")
    if top is not None:
        if not body.get("logprobs"):
            return "'top_logprobs' requires 'logprobs' to be true."
        if not isinstance(top, int) or not 0 <= top <= 20:
            return "Invalid 'top_logprobs': expected an integer between 0 and 20."
    return ""


def _logprobs(body: dict[str, Any], reply: ChatReply) -> dict[str, Any] | None:
    if not body.get("logprobs"):
        return None
    entries = reply.logprobs
    if entries is None:
        entries = [(tok, 0.0, {tok: 0.0}) for tok in reply.content.split()]
    n = int(body.get("top_logprobs") or 0)
    content = []
    for token, logprob, top in entries:
        item = _token(token, logprob)
        item["top_logprobs"] = [_token(t, lp) for t, lp in list(top.items())[:n]]
        content.append(item)
    return {"content": content, "refusal": None}


def _completion(body: dict[str, Any], reply: ChatReply) -> dict[str, Any]:
    answer: dict[str, Any] = {
        "id": f"chatcmpl-{uuid.uuid4().hex[:24]}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body["model"],
        "system_fingerprint": "fp_fake",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": reply.content, "refusal": None},
                "logprobs": _logprobs(body, reply),
                "finish_reason": reply.finish_reason,
            }
        ],
    }
    if reply.usage:
        prompt = prompt_token_count(body) if reply.prompt_tokens is None else reply.prompt_tokens
        completion = (
            len(reply.content.split())
            if reply.completion_tokens is None
            else reply.completion_tokens
        )
        usage: dict[str, Any] = {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        }
        if reply.cached_tokens is not None:
            usage["prompt_tokens_details"] = {"cached_tokens": reply.cached_tokens}
        answer["usage"] = usage
    return answer
