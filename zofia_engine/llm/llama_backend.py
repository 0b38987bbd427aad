"""The embedded backend: a GGUF model run in-process by llama.cpp (``llama-cpp-python``).

One model, one context: calls are serialised (an ``asyncio.Lock`` for
waiting callers, a thread lock around the model itself) and each runs in a
worker thread, so the event loop stays free while the model computes.

llama-cpp-python keeps the previous call's tokens in the KV cache and only
evaluates the part of a new prompt after the longest common token prefix.
Prompts that put shared material first (system prompt, post, evidence) and
the role's task last therefore pay only for the tail. ``Completion.cached_tokens``
reports exactly how many prompt tokens were reused: the prompt is tokenised
before generation and compared with the tokens in the cache, mirroring
``Llama.generate``'s own reuse rule (a fully cached prompt still replays its
last token to refresh the logits).

On the 2-core target machine Qwen2.5-Coder-1.5B Q4_K_M evaluates about 50
prompt tokens/s and generates about 17 tokens/s, so reuse matters: a 675-token
prompt costs ~14 s cold and under a second when only its last message changed.

The prompt is rendered with the GGUF file's own chat template
(``tokenizer.chat_template``; ChatML when a file has none), never a built-in
format guessed from it. The template is wrapped (``llama_calls.CheckingFormatter``)
so that each call can refuse a prompt that does not fit the context before
any token is evaluated, count the reused prefix, stop on cancellation and
collect log-probabilities, all through ``create_chat_completion``.

Cancelling the awaiting task stops generation at the next token; the call
keeps the lock until the worker thread has returned, so the next call never
runs beside it. A prompt that is already being evaluated is finished first
(llama.cpp cannot be interrupted cheaply from Python mid-``llama_decode``).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from ..errors import LLMResponseError, ModelUnavailableError
from .base import Completion, CompletionRequest, LLMBackend
from .llama_calls import (
    CallState,
    CheckingFormatter,
    PromptTooLongError,
    context_size,
    model_template,
)
from .special_tokens import defuse, vocabulary_pattern
from .structured import bounded_schema

if TYPE_CHECKING:
    from llama_cpp import Llama

    from ..config import EmbeddedSettings

__all__ = ["LlamaCppBackend"]

_INSTALL_HINT = "pip install 'zofia-factcheck[local]' (package llama-cpp-python)"


class LlamaCppBackend(LLMBackend):
    """A GGUF chat model run in-process with llama.cpp.

    Args:
        model_path: a GGUF file; ``None`` means the packaged
            Qwen2.5-Coder-1.5B-Instruct Q4_K_M, assembled on first load.
        n_ctx: context window in tokens (prompt plus reply).
        n_threads: CPU threads; 0 means one per core.
        n_batch: prompt tokens evaluated per ``llama_decode`` call.
        use_mmap: map the file instead of reading it. llama.cpp repacks quantised
            weights for the CPU into memory of its own, so mapped pages double the
            resident memory; reading costs a second at load.
        logprobs: requests with ``top_logprobs > 0`` get per-token
            log-probabilities (about a millisecond per token; see ``CallState``).
        seed: sampling seed; with temperature 0 decoding is greedy anyway.
    """

    name = "embedded"
    structured = True

    def __init__(
        self,
        model_path: str | Path | None = None,
        *,
        n_ctx: int = 8192,
        n_threads: int = 0,
        n_batch: int = 512,
        use_mmap: bool = False,
        logprobs: bool = False,
        seed: int = 0,
    ) -> None:
        self._model_path = Path(model_path) if model_path else None
        self.n_ctx = n_ctx
        self.n_threads = n_threads
        self.n_batch = n_batch
        self.use_mmap = use_mmap
        self.logprobs = logprobs
        self.seed = seed
        self._llm: Llama | None = None
        self._load_lock = threading.Lock()
        self._model_lock = threading.Lock()  # held while a worker thread uses the model
        self._call: CallState | None = None
        self._special: re.Pattern[str] | None = None
        self._template: Any = None
        self._async_lock: asyncio.Lock | None = None
        self._async_lock_loop: asyncio.AbstractEventLoop | None = None
        self.load_seconds: float | None = None

    @classmethod
    def from_settings(cls, s: EmbeddedSettings) -> LlamaCppBackend:
        """A backend configured by the ``[embedded]`` section."""
        return cls(
            s.model_path or None,
            n_ctx=s.n_ctx,
            n_threads=s.n_threads,
            n_batch=s.n_batch,
            use_mmap=s.use_mmap,
            logprobs=s.logprobs,
        )

    @property
    def model_path(self) -> Path | None:
        """The GGUF file, or ``None`` until the packaged default is resolved by ``load()``."""
        return self._model_path

    @property
    def model_name(self) -> str:
        """The GGUF file's name without its suffix (``Completion.model``)."""
        return self._model_path.stem if self._model_path else "embedded"

    @property
    def loaded(self) -> bool:
        return self._llm is not None

    # ------------------------------------------------------------------ loading

    def load(self) -> None:
        """Load the model now (blocking; seconds). ``complete`` loads it on first use.

        Raises:
            ModelUnavailableError: llama-cpp-python or the model file is missing or unreadable.
        """
        with self._load_lock:
            if self._llm is not None:
                return
            try:
                from llama_cpp import llama_chat_format

                from .lazy_grammar import FastGrammarLlama
            except ImportError as exc:
                raise ModelUnavailableError(
                    f"the embedded LLM backend needs llama-cpp-python: {_INSTALL_HINT}"
                ) from exc
            if self._model_path is None:
                from .gguf import packaged_model_path

                self._model_path = packaged_model_path()
            path = self._model_path
            if not path.is_file():
                raise ModelUnavailableError(
                    f"embedded model file {str(path)!r} does not exist; "
                    "set [embedded] model_path to a GGUF file, or leave it empty for "
                    "the packaged model"
                )
            start = time.perf_counter()
            try:
                llm = FastGrammarLlama(
                    model_path=str(path),
                    n_ctx=self.n_ctx,
                    n_threads=self.n_threads or os.cpu_count() or 1,
                    n_threads_batch=self.n_threads or os.cpu_count() or 1,
                    n_batch=self.n_batch,
                    use_mmap=self.use_mmap,
                    seed=self.seed,
                    verbose=False,
                )
            except (ValueError, RuntimeError, OSError) as exc:
                raise ModelUnavailableError(f"cannot load GGUF model {str(path)!r}: {exc}") from exc
            self._template = model_template(llm)
            llm.chat_handler = llama_chat_format.chat_formatter_to_chat_completion_handler(
                CheckingFormatter(lambda: self._call, llm, self._template)
            )
            self._special = vocabulary_pattern(llm)
            self.load_seconds = time.perf_counter() - start
            self._llm = llm

    # ------------------------------------------------------------------ calls

    async def complete(self, request: CompletionRequest) -> Completion:
        """Run one chat completion in a worker thread, one call at a time.

        Raises:
            ModelUnavailableError: the model cannot be loaded.
            LLMResponseError: the prompt does not fit the context, or llama.cpp failed.
        """
        if self._llm is None:
            await asyncio.to_thread(self.load)
        async with self._lock():
            cancel = threading.Event()
            work = asyncio.ensure_future(asyncio.to_thread(self._complete_sync, request, cancel))
            try:
                return await asyncio.shield(work)
            except asyncio.CancelledError:
                cancel.set()
                await _wait_ignoring_cancellation(work)
                raise

    def defuse(self, content: str) -> str:
        """``content`` with every control-token string of the loaded vocabulary broken,
        so that the template's text is the only source of role tokens: the prompt is
        tokenised with special tokens parsed, and posts and pages reach it as content."""
        return defuse(content, self._special) if self._special is not None else content

    def prompt_tokens(self, messages: list[dict[str, str]]) -> list[int]:
        """The token ids the model is given for ``messages`` (after :meth:`defuse`),
        exactly as a call tokenises them. The model must be loaded."""
        llm = self._llm
        if llm is None:
            raise LLMResponseError(self.name, "the model is not loaded")
        defused = [{**m, "content": self.defuse(m["content"])} for m in messages]
        result = self._template(messages=defused)
        prompt = result.prompt.encode("utf-8")
        return list(llm.tokenize(prompt, add_bos=not result.added_special, special=True))

    def _lock(self) -> asyncio.Lock:
        """The waiting room: one ``asyncio.Lock`` per event loop (tests run several loops)."""
        loop = asyncio.get_running_loop()
        if self._async_lock is None or self._async_lock_loop is not loop:
            self._async_lock = asyncio.Lock()
            self._async_lock_loop = loop
        return self._async_lock

    def _complete_sync(self, request: CompletionRequest, cancel: threading.Event) -> Completion:
        with self._model_lock:
            llm = self._llm
            if llm is None:
                raise LLMResponseError(self.name, "the model was closed")
            call = CallState(
                max_tokens=request.max_tokens,
                cancel=cancel,
                llm=llm,
                top_logprobs=request.top_logprobs if self.logprobs else 0,
            )
            kwargs: dict[str, Any] = {
                "messages": [
                    {"role": m.role, "content": self.defuse(m.content)} for m in request.messages
                ],
                "temperature": request.temperature,
                "max_tokens": request.max_tokens,
                "seed": self.seed,
            }
            if request.schema is not None:
                # Bounded strings: the grammar then closes the object within max_tokens.
                schema = bounded_schema(request.schema, request.max_tokens)
                kwargs["response_format"] = {"type": "json_object", "schema": schema}
            self._call = call
            start = time.perf_counter()
            try:
                response = cast("dict[str, Any]", llm.create_chat_completion(**kwargs))
            except PromptTooLongError as exc:
                raise LLMResponseError(
                    self.name,
                    f"the prompt has {exc.prompt_tokens} tokens; with max_tokens="
                    f"{request.max_tokens} it does not fit the context window of "
                    f"{context_size(llm)} tokens (shorten the prompt or raise "
                    "[embedded] n_ctx)",
                ) from None
            except Exception as exc:
                raise LLMResponseError(self.name, f"llama.cpp failed: {exc}") from exc
            finally:
                self._call = None
            latency_ms = (time.perf_counter() - start) * 1000.0
            if call.first_token_at is not None:
                call.prompt_ms = (call.first_token_at - start) * 1000.0
        return self._completion(response, call, latency_ms)

    def _completion(
        self, response: dict[str, Any], call: CallState, latency_ms: float
    ) -> Completion:
        try:
            choice = response["choices"][0]
            usage = response["usage"]
            text = choice["message"]["content"] or ""
            prompt_tokens = int(usage["prompt_tokens"])
            completion_tokens = int(usage["completion_tokens"])
        except (KeyError, IndexError, TypeError) as exc:
            raise LLMResponseError(self.name, f"unexpected llama.cpp reply: {exc!r}") from exc
        finish = str(choice.get("finish_reason") or "")
        if call.stopped_early:
            finish = "cancelled"
        return Completion(
            text=text,
            model=self.model_name,
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            latency_ms=latency_ms,
            cached_tokens=min(call.reused_tokens, prompt_tokens),
            finish_reason=finish,
            logprobs=tuple(call.logprobs) if call.top_logprobs > 0 else None,
            prompt_ms=call.prompt_ms,
        )

    # ------------------------------------------------------------------ closing

    async def aclose(self) -> None:
        """Free the model (after any running call); safe to call twice. A later call reloads."""
        await asyncio.to_thread(self._close)

    def _close(self) -> None:
        with self._load_lock, self._model_lock:
            llm, self._llm = self._llm, None
        if llm is not None:
            llm.close()


async def _wait_ignoring_cancellation(work: asyncio.Future[Completion]) -> None:
    """Wait until the worker thread is done, however often this task is cancelled meanwhile."""
    while not work.done():
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await asyncio.shield(work)
    if not work.cancelled():
        work.exception()  # retrieved: the caller was cancelled, the result is dropped
