"""Any OpenAI-compatible transcription server: ``POST /v1/audio/transcriptions``, the file
as multipart form data with ``model``, ``response_format=json`` and, when one is set,
``language`` (whisper.cpp's server, faster-whisper behind such an API, OpenAI itself).

The ``openai`` SDK does the HTTP through the project's one client
(:func:`~zofia_engine.llm.openai_wire.client_for`: the key goes to this server alone,
nothing is read from the environment), with its own retries off; what can change (429,
server errors, timeouts, lost connections) is retried as every HTTP API of the engine
retries it (:mod:`zofia_engine.retrying`, :func:`~zofia_engine.llm.openai_backend.retryable`).
Whatever still fails is one :class:`~.transcriber.TranscriptionFailedError`.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any

from ..errors import ModelUnavailableError
from ..llm.openai_backend import retry_after, retryable
from ..llm.openai_wire import OFFICIAL_URL, client_for
from ..retrieval.http import Pace
from ..retrying import Backoff, retrying
from .probe import AudioFile
from .transcriber import Heard, TranscriptionFailedError, iso_language

if TYPE_CHECKING:
    from ..audio_settings import AudioSettings

__all__ = ["OpenAITranscriber"]

log = logging.getLogger(__name__)


class OpenAITranscriber:
    """Transcriptions from an OpenAI-compatible server.

    Args:
        base_url: the API root (``http://127.0.0.1:8080/v1``); empty: api.openai.com.
        api_key: the bearer key, sent to ``base_url`` alone.
        model: the model the server is asked for (``whisper-1``; whisper.cpp's server
            ignores it).
        pace: how requests are paced (:class:`~zofia_engine.retrieval.http.Pace`):
            ``timeout_s``, the time allowed for one attempt (120 s); ``retries``, further
            attempts after the first, for 429/5xx/timeouts/connections (2);
            ``backoff_s``, the first backoff step, doubling each retry, plus jitter (1 s);
            ``max_backoff_s``, the longest wait: a 429 that asks for longer fails at once
            (30 s).
    """

    def __init__(
        self,
        *,
        base_url: str = "",
        api_key: str = "",
        model: str = "whisper-1",
        pace: Pace | None = None,
    ) -> None:
        pace = pace or Pace()
        timeout_s = pace.get("timeout_s", 120.0)
        retries = pace.get("retries", 2)
        backoff_s = pace.get("backoff_s", 1.0)
        max_backoff_s = pace.get("max_backoff_s", 30.0)
        try:
            self._client = client_for(base_url, api_key, timeout_s)
        except ImportError as exc:  # pragma: no cover - openai is a core dependency
            raise ModelUnavailableError("transcription servers need the openai package") from exc
        self.base_url = base_url or OFFICIAL_URL
        self.model = model
        self.name = f"openai:{model}"
        self.retries = retries
        self.timeout_s = timeout_s
        self._wait = Backoff(backoff_s, max_backoff_s, retry_after)
        self._max_backoff = max_backoff_s

    @classmethod
    def from_settings(cls, s: AudioSettings) -> OpenAITranscriber:
        """Built from ``[audio]``."""
        return cls(
            base_url=s.base_url,
            api_key=s.api_key,
            model=s.model,
            pace=Pace(timeout_s=s.timeout_s, retries=s.retries),
        )

    def load(self) -> None:
        """Nothing to load: the server holds the model."""

    async def transcribe(self, audio: AudioFile, language: str) -> Heard:
        """The words the server heard in ``audio``.

        Raises:
            TranscriptionFailedError: every attempt failed, or the server refused the
                request (a bad key, an unknown model, a file it would not take), or its
                answer is not a transcription; ``detail`` says which, for the log.
        """
        import openai

        args: dict[str, Any] = {
            "file": (audio.filename, audio.data, audio.media_type),
            "model": self.model,
            "response_format": "json",
        }
        if language:
            args["language"] = language
        started = time.perf_counter()
        attempts = 0
        try:
            async for attempt in retrying(retryable, self.retries, self._wait):
                with attempt:
                    attempts = attempt.retry_state.attempt_number
                    reply = await self._once(args)
        except openai.APITimeoutError as exc:
            raise self._failed(
                f"no answer within {self.timeout_s:g} s, {attempts} attempts"
            ) from exc
        except openai.APIConnectionError as exc:
            raise self._failed(f"connection failed after {attempts} attempts") from exc
        except openai.APIStatusError as exc:
            detail = f"HTTP {exc.status_code} after {attempts} attempts: {_message(exc)}"
            raise self._failed(detail) from exc
        except (openai.APIError, ValueError) as exc:  # a body that is not JSON
            raise self._failed(f"malformed response: {exc}") from exc
        text = getattr(reply, "text", None)
        if not isinstance(text, str):
            raise self._failed(f"not a transcription: {str(reply)[:200]!r}")
        extra = getattr(reply, "model_extra", None) or {}
        return Heard(
            text=text,
            language=iso_language(extra.get("language")) or language,
            ms=(time.perf_counter() - started) * 1000.0,
        )

    async def _once(self, args: dict[str, Any]) -> object:
        import openai

        try:
            reply: object = await self._client.audio.transcriptions.create(**args)
        except openai.RateLimitError as exc:
            delay = retry_after(exc)
            if delay is not None and delay > self._max_backoff:
                # A spent quota: waiting for it while the reader waits is pointless.
                raise self._failed(f"rate limited (HTTP 429); retry after {delay:.0f} s") from exc
            raise
        return reply

    def _failed(self, detail: str) -> TranscriptionFailedError:
        return TranscriptionFailedError(f"{self.name} at {self.base_url}: {detail}")

    async def aclose(self) -> None:
        """Close the SDK's connection pool."""
        await self._client.close()


def _message(exc: Any) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict) and isinstance(body.get("message"), str):
        return str(body["message"])[:300]
    return str(getattr(exc, "message", exc))[:300]
