"""Any OpenAI-compatible chat-completions server (OpenAI, DeepSeek, vLLM, Ollama, llama.cpp).

The ``openai`` SDK does the HTTP with its own retries off; :mod:`zofia_engine.retrying`
retries what can change (429, server errors, timeouts, failed connections) with
jittered exponential backoff (honouring ``Retry-After``) and keeps the request rate;
a semaphore bounds attempts in flight. A refusal of the request itself (400, 422, a 500 that
names a request field, 401, 404) is not retried: it is a setting to change, and
:class:`~zofia_engine.errors.LLMConfigError` names it. What still fails is
translated into the :class:`~zofia_engine.errors.LLMError` tree.

What goes over the wire is :mod:`.openai_wire`'s: every message's text defused as the
request is built (servers that parse a chat template's special tokens, as vLLM,
llama.cpp's server and Ollama do, would otherwise read ``<|im_start|>system`` in a web
page, a claim or a debate turn as a forged role), and a client that sends the key only
to the server it was set for, taking no key, base URL or ``Authorization`` header from
the environment.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from typing import TYPE_CHECKING, Any, Literal

from ..errors import (
    LLMConfigError,
    LLMRateLimitedError,
    LLMResponseError,
    LLMTimeoutError,
    ModelUnavailableError,
)
from ..retrying import Backoff, rate_limiter, retry_delay, retrying
from .base import Completion, CompletionRequest, LLMBackend, TokenLogprob
from .openai_wire import OFFICIAL_URL, chat_message, client_for, with_text
from .server_features import (
    MODES,
    StructuredMode,
    refused_field,
    response_format,
    schema_instruction,
    setting_for,
)

if TYPE_CHECKING:
    import openai
    from openai.types.chat import ChatCompletionTokenLogprob

    from ..config import OpenAISettings

__all__ = ["OpenAIBackend", "retry_after", "retryable"]

log = logging.getLogger(__name__)

STRUCTURED_SETTING = setting_for("response_format")
LOGPROBS_SETTING = setting_for("logprobs")


def retry_after(exc: BaseException) -> float | None:
    """Seconds the server asked to wait in the response that ``exc`` carries, or ``None``."""
    headers = getattr(getattr(exc, "response", None), "headers", None)
    return retry_delay(headers) if headers is not None else None


def _body_text(exc: openai.APIStatusError) -> str:
    body = exc.body
    return json.dumps(body) if isinstance(body, dict | list) else str(body or exc.message)


def _refusal(exc: BaseException) -> tuple[str, str] | None:
    """``(field, setting)`` when ``exc`` is the server refusing the request as configured."""
    import openai

    if not isinstance(exc, openai.APIStatusError):
        return None
    status = exc.status_code
    if status in (401, 403):
        return "api_key", "llm.openai.api_key"
    if status == 404:
        return "model", "llm.openai.model"
    field = refused_field(status, _body_text(exc))
    if field is None:
        return None
    return field, setting_for(field) if field else "llm.openai"


def retryable(exc: BaseException) -> bool:
    """429, timeouts, lost connections, server errors naming no field (chats, transcriptions)."""
    import openai

    if isinstance(exc, openai.APIConnectionError):
        return True
    if not isinstance(exc, openai.APIStatusError):
        return False
    return exc.status_code == 429 or (exc.status_code >= 500 and _refusal(exc) is None)


def _detail(exc: openai.APIError) -> str:
    body = exc.body
    if isinstance(body, dict) and isinstance(body.get("message"), str):
        return str(body["message"])
    return exc.message


class OpenAIBackend(LLMBackend):
    """Chat completions over the OpenAI HTTP API.

    Args:
        base_url: the API root (``http://host:8000/v1``); empty means api.openai.com.
        api_key: the bearer key, sent to ``base_url`` alone; empty sends a placeholder
            (never a key from the environment). Local servers usually ignore it.
        structured_output: ``auto`` (learn what the server takes, once), or one of
            :data:`~zofia_engine.llm.server_features.MODES`, obeyed as given.
        timeout_s: time allowed for one attempt.
        retries: further attempts after the first, for 429/5xx/timeouts/connections.
        concurrency: attempts in flight at once (``[llm] concurrency``).
        requests_per_second: rate limit; 0 means none.
        logprobs: ask for token log-probabilities when a request wants them (dropped,
            once and for good, if the server refuses them).
        model: the model used when a request names none.
        backoff_s: first step of the exponential backoff (doubles each retry, plus jitter).
        max_backoff_s: longest wait; a 429 whose ``Retry-After`` is longer fails at once.

    Raises:
        ModelUnavailableError: the ``openai`` package is not installed.
    """

    name = "openai"

    def __init__(
        self,
        *,
        base_url: str = "",
        api_key: str = "",
        structured_output: Literal["auto"] | StructuredMode = "auto",
        timeout_s: float = 120.0,
        retries: int = 3,
        concurrency: int = 4,
        requests_per_second: float = 0.0,
        logprobs: bool = True,
        model: str = "",
        backoff_s: float = 1.0,
        max_backoff_s: float = 30.0,
    ) -> None:
        try:
            self._client = client_for(base_url, api_key, timeout_s)
        except ImportError as exc:
            raise ModelUnavailableError(
                "the OpenAI backend needs the openai package: pip install openai"
            ) from exc
        self.base_url = base_url or OFFICIAL_URL
        self.structured_output = structured_output
        self._mode: StructuredMode | None = (
            None if structured_output == "auto" else structured_output
        )
        self._learning = asyncio.Lock()
        self.timeout_s = timeout_s
        self.retries = retries
        self.logprobs = logprobs
        self.model = model
        self._semaphore = asyncio.Semaphore(concurrency)
        self._limiter = rate_limiter(requests_per_second)
        self._wait = Backoff(backoff_s, max_backoff_s, retry_after)
        self._max_backoff = max_backoff_s

    @property
    def mode(self) -> StructuredMode | None:
        """The structured-output mode in use: as configured, or as learned (``None`` until
        the first request with a schema, under ``auto``)."""
        return self._mode

    @property
    def structured(self) -> bool:  # type: ignore[override]
        return self._mode in ("json_schema", "json_object_schema")

    @classmethod
    def from_settings(
        cls,
        s: OpenAISettings,
        *,
        timeout_s: float,
        retries: int,
        base_url: str | None = None,
        api_key: str | None = None,
        concurrency: int = 4,
    ) -> OpenAIBackend:
        """Build from ``[llm.openai]`` and ``[llm] concurrency``; ``base_url``/``api_key``
        override the settings."""
        return cls(
            base_url=s.base_url if base_url is None else base_url,
            api_key=s.api_key if api_key is None else api_key,
            structured_output=s.structured_output,
            timeout_s=timeout_s,
            retries=retries,
            concurrency=concurrency,
            requests_per_second=s.requests_per_second,
            logprobs=s.logprobs,
            model=s.model,
        )

    def _arguments(
        self, request: CompletionRequest, model: str, mode: StructuredMode
    ) -> dict[str, Any]:
        messages = [chat_message(m) for m in request.messages]
        args: dict[str, Any] = {
            "model": model,
            "messages": messages,
            "temperature": request.temperature,
            "max_tokens": request.max_tokens,
        }
        if request.schema is not None:
            fmt = response_format(mode, request.schema, request.schema_name, request.max_tokens)
            if fmt is not None:
                args["response_format"] = fmt
            extra = schema_instruction(mode, request.schema)
            if extra and messages:
                messages[-1] = with_text(messages[-1], extra)
        if request.top_logprobs > 0 and self.logprobs:
            args["logprobs"] = True
            args["top_logprobs"] = request.top_logprobs
        return args

    async def complete(self, request: CompletionRequest) -> Completion:
        """Run one chat completion, retrying transient failures.

        Under ``structured_output = "auto"`` the first request with a schema finds the
        mode the server takes (the strictest it accepts) and every later one uses it.

        Args:
            request: the messages, model, optional schema and sampling settings.

        Returns:
            The reply text with the server's token usage (estimated when absent).

        Raises:
            LLMConfigError: the server refused the request as configured (a 400 or 422,
                a 500 naming a request field, a bad key, an unknown model).
            LLMRateLimitedError: 429 on every attempt, or a ``Retry-After`` too long to wait.
            LLMTimeoutError: no answer within ``timeout_s`` on every attempt.
            LLMResponseError: another error status, no connection, or not a chat completion.
        """
        if request.schema is not None and self._mode is None:
            async with self._learning:
                if self._mode is None:
                    return await self._learn_mode(request)
        return await self._send(request, self._mode or "none")

    async def _learn_mode(self, request: CompletionRequest) -> Completion:
        for mode in MODES:
            try:
                done = await self._send(request, mode)
            except LLMConfigError as exc:
                if exc.setting == STRUCTURED_SETTING and mode != MODES[-1]:
                    log.debug("%s refused structured output as %s: %s", self.base_url, mode, exc)
                    continue
                raise
            self._mode = mode
            log.info("%s takes structured output as %s", self.base_url, mode)
            return done
        raise AssertionError("unreachable: the last mode sends no response_format")

    async def _send(self, request: CompletionRequest, mode: StructuredMode) -> Completion:
        """One request with its retries; a server that refuses logprobs is asked again
        without them, and never asked for them again."""
        try:
            return await self._attempts(request, mode)
        except LLMConfigError as exc:
            if exc.setting != LOGPROBS_SETTING or not (self.logprobs and request.top_logprobs):
                raise
            self.logprobs = False
            log.warning("%s refuses token log-probabilities; going on without them", self.base_url)
            return await self._attempts(request, mode)

    async def _attempts(self, request: CompletionRequest, mode: StructuredMode) -> Completion:
        import openai

        model = request.model or self.model
        label = f"openai:{model}"
        args = self._arguments(request, model, mode)
        start = time.perf_counter()
        attempts = 0
        try:
            async for attempt in retrying(retryable, self.retries, self._wait):
                with attempt:
                    attempts = attempt.retry_state.attempt_number
                    response = await self._attempt(args, label)
        except openai.APITimeoutError as exc:
            raise LLMTimeoutError(
                label, f"no answer within {self.timeout_s:g} s, {attempts} attempts"
            ) from exc
        except openai.APIConnectionError as exc:
            raise LLMResponseError(label, f"connection failed after {attempts} attempts") from exc
        except openai.RateLimitError as exc:
            raise LLMRateLimitedError(
                label, f"rate limited (HTTP 429) after {attempts} attempts: {_detail(exc)}"
            ) from exc
        except openai.APIStatusError as exc:
            refused = _refusal(exc)
            if refused is not None:
                detail = _detail(exc)[:300]
                raise LLMConfigError(
                    label,
                    f"the server at {self.base_url} refused the request (HTTP "
                    f"{exc.status_code}: {detail}); change {refused[1]}",
                    refused[1],
                ) from exc
            raise LLMResponseError(
                label, f"HTTP {exc.status_code} after {attempts} attempts: {_detail(exc)}"
            ) from exc
        except (openai.APIError, ValueError) as exc:  # a body that is not JSON
            raise LLMResponseError(label, f"malformed response: {exc}") from exc
        latency_ms = (time.perf_counter() - start) * 1000.0
        return _completion(response, request, model, latency_ms, attempts)

    async def _attempt(self, args: dict[str, Any], label: str) -> object:
        import openai

        async with self._semaphore:
            if self._limiter is not None:
                await self._limiter.acquire()
            try:
                response: object = await self._client.chat.completions.create(**args)
                return response
            except openai.RateLimitError as exc:
                delay = retry_after(exc)
                if delay is not None and delay > self._max_backoff:
                    # A spent quota: waiting for it within one check is pointless.
                    raise LLMRateLimitedError(
                        label, f"rate limited (HTTP 429); retry after {delay:.0f} s"
                    ) from exc
                raise

    async def list_models(self) -> list[str]:
        """The model ids the server lists (``GET /models``), for ``zofia doctor``.

        Raises:
            LLMResponseError: the server cannot be reached or refuses the request.
        """
        import openai

        try:
            page = await self._client.models.list()
        except openai.APIStatusError as exc:
            raise LLMResponseError(
                self.base_url, f"HTTP {exc.status_code}: {_detail(exc)}"
            ) from exc
        except openai.APIError as exc:
            raise LLMResponseError(self.base_url, f"cannot reach the server: {exc}") from exc
        return [model.id for model in page.data]

    async def aclose(self) -> None:
        """Close the SDK's connection pool."""
        await self._client.close()


def _token(t: ChatCompletionTokenLogprob) -> TokenLogprob:
    return TokenLogprob(t.token, t.logprob, {a.token: a.logprob for a in t.top_logprobs or ()})


def _completion(
    response: object, request: CompletionRequest, model: str, latency_ms: float, attempts: int
) -> Completion:
    from openai.types.chat import ChatCompletion

    label = f"openai:{model}"
    if not isinstance(response, ChatCompletion):
        raise LLMResponseError(label, f"not a chat completion: {str(response)[:200]!r}")
    if not getattr(response, "choices", None):
        raise LLMResponseError(label, "the reply has no choices")
    try:  # the SDK parses leniently: a field the server left out raises here
        choice, usage = response.choices[0], response.usage
        text = choice.message.content
        tokens = choice.logprobs.content if choice.logprobs is not None else None
        logprobs = None if tokens is None else tuple(_token(t) for t in tokens)
        reported = usage is not None and isinstance(usage.prompt_tokens, int)
        reported = reported and isinstance(getattr(usage, "completion_tokens", None), int)
        if usage is not None and reported:
            prompt, generated = usage.prompt_tokens, usage.completion_tokens
            cached = getattr(usage.prompt_tokens_details, "cached_tokens", None)
    except (AttributeError, TypeError) as exc:
        raise LLMResponseError(label, f"not a chat completion: {exc}") from exc
    if not isinstance(text, str):
        refusal = getattr(choice.message, "refusal", None)
        raise LLMResponseError(label, f"the reply has no content (refusal: {refusal!r})")
    if not reported:  # estimate: about four characters a token
        chars = sum(len(m.content) for m in request.messages)
        prompt, generated, cached = -(-chars // 4), -(-len(text) // 4), None
    return Completion(
        text=text,
        model=getattr(response, "model", None) or model,
        prompt_tokens=prompt,
        completion_tokens=generated,
        latency_ms=latency_ms,
        cached_tokens=cached,
        finish_reason=str(getattr(choice, "finish_reason", None) or ""),
        logprobs=logprobs,
        usage_reported=reported,
        attempts=attempts,
    )
