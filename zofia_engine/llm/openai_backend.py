"""Any OpenAI-compatible chat-completions server (OpenAI, DeepSeek, vLLM, Ollama, llama.cpp).

The ``openai`` SDK does the HTTP with its own retries off; tenacity retries 429, 5xx,
timeouts and failed connections with jittered exponential backoff (honouring
``Retry-After``), a semaphore bounds attempts in flight and aiolimiter the request rate.
What still fails is translated into the :class:`~zofia_engine.errors.LLMError` tree.
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, Any, Literal

import tenacity
from aiolimiter import AsyncLimiter

from ..errors import LLMRateLimitedError, LLMResponseError, LLMTimeoutError, ModelUnavailableError
from .base import Completion, CompletionRequest, LLMBackend, TokenLogprob

if TYPE_CHECKING:
    import openai
    from openai.types.chat import ChatCompletionTokenLogprob

    from ..config import OpenAISettings

__all__ = ["OpenAIBackend", "retry_after"]


def retry_after(exc: BaseException) -> float | None:
    """Seconds the server asks to wait (``retry-after-ms``, then ``Retry-After``), or ``None``."""
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    for name, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        try:
            return max(0.0, float(headers.get(name, "")) / scale)
        except ValueError:
            continue  # absent, or an HTTP date: fall back to exponential backoff
    return None


def _retryable(exc: BaseException) -> bool:
    import openai

    status = exc.status_code if isinstance(exc, openai.APIStatusError) else 0
    return isinstance(exc, openai.APIConnectionError) or status == 429 or status >= 500


def _detail(exc: openai.APIError) -> str:
    body = exc.body
    if isinstance(body, dict) and isinstance(body.get("message"), str):
        return str(body["message"])
    return exc.message


class OpenAIBackend(LLMBackend):
    """Chat completions over the OpenAI HTTP API.

    Args:
        base_url: the API root (``http://host:8000/v1``); empty means api.openai.com.
        api_key: the bearer key; local servers usually ignore it.
        structured_output: ``json_schema`` (strict), ``json_object`` (JSON mode) or ``none``.
        timeout_s: time allowed for one attempt.
        retries: further attempts after the first, for 429/5xx/timeouts/connections.
        max_concurrency: attempts in flight at once.
        requests_per_second: rate limit; 0 means none.
        logprobs: ask for token log-probabilities when a request wants them.
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
        structured_output: Literal["json_schema", "json_object", "none"] = "json_schema",
        timeout_s: float = 120.0,
        retries: int = 3,
        max_concurrency: int = 8,
        requests_per_second: float = 0.0,
        logprobs: bool = True,
        model: str = "",
        backoff_s: float = 1.0,
        max_backoff_s: float = 30.0,
    ) -> None:
        try:
            import openai
        except ImportError as exc:
            raise ModelUnavailableError(
                "the OpenAI backend needs the openai package: pip install 'zofia-factcheck[llm]'"
            ) from exc
        self._client = openai.AsyncOpenAI(
            base_url=base_url or None, api_key=api_key or "unused", max_retries=0, timeout=timeout_s
        )
        self.structured_output = structured_output
        self.structured = structured_output == "json_schema"
        self.timeout_s = timeout_s
        self.retries = retries
        self.logprobs = logprobs
        self.model = model
        self._semaphore = asyncio.Semaphore(max_concurrency)
        self._limiter: AsyncLimiter | None = None
        if requests_per_second >= 1:
            self._limiter = AsyncLimiter(requests_per_second, 1.0)
        elif requests_per_second > 0:
            self._limiter = AsyncLimiter(1, 1.0 / requests_per_second)
        self._backoff = tenacity.wait_exponential_jitter(
            multiplier=backoff_s, max=max_backoff_s, jitter=backoff_s
        )
        self._max_backoff = max_backoff_s

    @classmethod
    def from_settings(
        cls,
        s: OpenAISettings,
        *,
        timeout_s: float,
        retries: int,
        base_url: str | None = None,
        api_key: str | None = None,
    ) -> OpenAIBackend:
        """Build from ``[llm.openai]``; ``base_url``/``api_key`` override the settings."""
        return cls(
            base_url=s.base_url if base_url is None else base_url,
            api_key=s.api_key if api_key is None else api_key,
            structured_output=s.structured_output,
            timeout_s=timeout_s,
            retries=retries,
            max_concurrency=s.max_concurrency,
            requests_per_second=s.requests_per_second,
            logprobs=s.logprobs,
            model=s.model,
        )

    def _wait(self, state: tenacity.RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome else None
        delay = retry_after(exc) if exc is not None else None
        if delay is not None:
            return min(delay, self._max_backoff)
        return float(self._backoff(state))

    def _arguments(self, request: CompletionRequest, model: str) -> dict[str, Any]:
        args: dict[str, Any] = {
            "model": model,
            "messages": [{"role": m.role, "content": m.content} for m in request.messages],
            "temperature": request.temperature,
            "max_tokens": request.max_tokens,
        }
        if request.schema is not None and self.structured_output == "json_schema":
            spec = {"name": request.schema_name, "schema": request.schema, "strict": True}
            args["response_format"] = {"type": "json_schema", "json_schema": spec}
        elif request.schema is not None and self.structured_output == "json_object":
            args["response_format"] = {"type": "json_object"}
        if request.top_logprobs > 0 and self.logprobs:
            args["logprobs"] = True
            args["top_logprobs"] = request.top_logprobs
        return args

    async def complete(self, request: CompletionRequest) -> Completion:
        """Run one chat completion, retrying transient failures.

        Args:
            request: the messages, model, optional schema and sampling settings.

        Returns:
            The reply text with the server's token usage (estimated when absent).

        Raises:
            LLMRateLimitedError: 429 on every attempt, or a ``Retry-After`` too long to wait.
            LLMTimeoutError: no answer within ``timeout_s`` on every attempt.
            LLMResponseError: another error status, no connection, or not a chat completion.
        """
        import openai

        model = request.model or self.model
        label = f"openai:{model}"
        args = self._arguments(request, model)
        start = time.perf_counter()
        attempts = 0
        retrying = tenacity.AsyncRetrying(
            retry=tenacity.retry_if_exception(_retryable),
            stop=tenacity.stop_after_attempt(self.retries + 1),
            wait=self._wait,
            reraise=True,
        )
        try:
            async for attempt in retrying:
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
