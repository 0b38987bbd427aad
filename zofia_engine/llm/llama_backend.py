"""The embedded backend: a GGUF model run in-process by llama.cpp (``llama-cpp-python``).

One model, one context, one worker thread that owns it
(:class:`~zofia_engine.llm.llama_batch.BatchDecoder`): up to ``concurrency`` calls are
decoded together, one token of each per ``llama_decode``, each with its own grammar,
temperature, ``max_tokens``, log-probabilities and cancellation. A call renders and
tokenises its prompt in a thread of its own, hands it to the decoder and waits, so the
event loop stays free while the model computes; further calls wait for a free
sequence. With ``concurrency = 1`` calls run one at a time, token for token as
llama-cpp-python's ``create_chat_completion`` would run them.

Every sequence keeps the tokens of its KV cache after its call, and a new call
evaluates only what follows the longest common token prefix with any of them (copied
from a running sequence, or reused in place). Prompts that put shared material first
(system prompt, post, evidence) and the role's task last therefore pay only for the
tail, and the calls of one check read their shared messages once.
``Completion.cached_tokens`` is exactly the number of prompt tokens not evaluated (a
fully cached prompt still evaluates its last token, for the logits).

On the 2-core target machine Qwen2.5-Coder-1.5B Q4_K_M evaluates about 50
prompt tokens/s, so reuse matters: a 675-token prompt costs ~14 s cold and under a
second when only its last message changed. It generates about 28 tokens/s alone and
about 34 tokens/s in all across four sequences (``bench/batch_decode.py``): on two
cores llama.cpp's step of four tokens costs about three times a step of one (the Q4_K
weights get a 4-row GEMM, the Q6_K ones, the output matrix among them, go row by row).

The prompt is rendered with the GGUF file's own chat template
(``tokenizer.chat_template``; ChatML when a file has none), never a built-in
format guessed from it. A prompt that does not fit a sequence's window
(``n_ctx / concurrency`` tokens with its reply) is refused before any token is
evaluated.

Cancelling the awaiting task stops its sequence at the next token and frees it; the
others keep running. A prompt chunk that is being evaluated is finished first
(llama.cpp cannot be interrupted cheaply from Python mid-``llama_decode``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import LLMError, LLMResponseError, ModelUnavailableError
from .base import ChatMessage, Completion, CompletionRequest, LLMBackend
from .llama_calls import Generation, Sampler, make_sampler, model_template
from .special_tokens import defuse, vocabulary_pattern
from .structured import bounded_schema

if TYPE_CHECKING:
    from collections.abc import Sequence

    from llama_cpp import Llama

    from ..config import EmbeddedSettings
    from .llama_batch import BatchDecoder

__all__ = ["LlamaCppBackend"]

_INSTALL_HINT = "pip install 'zofia-factcheck[local]' (package llama-cpp-python)"


class LlamaCppBackend(LLMBackend):
    """A GGUF chat model run in-process with llama.cpp.

    Args:
        model_path: a GGUF file; ``None`` means the packaged
            Qwen2.5-Coder-1.5B-Instruct Q4_K_M, assembled on first load.
        n_ctx: context window in tokens, shared evenly by the ``concurrency``
            sequences (each call's prompt plus reply must fit its share).
        n_threads: CPU threads; 0 means one per core.
        n_batch: prompt tokens evaluated per ``llama_decode`` call.
        use_mmap: map the file instead of reading it. llama.cpp repacks quantised
            weights for the CPU into memory of its own, so mapped pages double the
            resident memory; reading costs a second at load.
        logprobs: requests with ``top_logprobs > 0`` get per-token
            log-probabilities (about a millisecond per token).
        seed: sampling seed; with temperature 0 decoding is greedy anyway.
        concurrency: calls decoded together (``[llm] concurrency``).
    """

    name = "embedded"
    structured = True
    local = True

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
        concurrency: int = 1,
    ) -> None:
        self._model_path = Path(model_path) if model_path else None
        self.n_ctx = n_ctx
        self.n_threads = n_threads
        self.n_batch = n_batch
        self.use_mmap = use_mmap
        self.logprobs = logprobs
        self.seed = seed
        self.concurrency = max(1, concurrency)
        self._llm: Llama | None = None
        self._decoder: BatchDecoder | None = None
        self._callers: ThreadPoolExecutor | None = None
        self._load_lock = threading.Lock()
        self._model_lock = threading.Lock()  # held while the decoder runs the model
        self._special: re.Pattern[str] | None = None
        self._template: Any = None
        self._gate: asyncio.Semaphore | None = None
        self._gate_loop: asyncio.AbstractEventLoop | None = None
        self.load_seconds: float | None = None

    @classmethod
    def from_settings(cls, s: EmbeddedSettings, *, concurrency: int = 1) -> LlamaCppBackend:
        """A backend configured by the ``[embedded]`` section and ``[llm] concurrency``."""
        return cls(
            s.model_path or None,
            n_ctx=s.n_ctx,
            n_threads=s.n_threads,
            n_batch=s.n_batch,
            use_mmap=s.use_mmap,
            logprobs=s.logprobs,
            concurrency=concurrency,
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

    @property
    def llm(self) -> Llama | None:
        """The loaded llama-cpp-python model, ``None`` until :meth:`load`: for reading its
        vocabulary (``tokenize``) or llama.cpp's counters of its context (``ctx``). Calls
        decode only through :meth:`complete`, which holds the model's lock."""
        return self._llm

    def running(self) -> list[Generation]:
        """The calls the model is decoding now, each holding one of its ``concurrency``
        sequences (none before :meth:`load` or after :meth:`aclose`): a snapshot."""
        decoder = self._decoder
        return decoder.running() if decoder is not None else []

    @property
    def window(self) -> int:
        """Tokens of prompt plus reply one call may use (``n_ctx / concurrency``)."""
        if self._decoder is None:
            return self.n_ctx // self.concurrency
        return self._decoder.window

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
                import llama_cpp

                from .llama_batch import BatchDecoder, open_context
            except ImportError as exc:
                raise ModelUnavailableError(
                    f"the embedded LLM backend needs llama-cpp-python: {_INSTALL_HINT}"
                ) from exc
            path = self._resolve_path()
            threads = self.n_threads or os.cpu_count() or 1
            start = time.perf_counter()
            try:
                # A small context of its own; open_context gives it the one decoding runs in.
                llm = llama_cpp.Llama(
                    model_path=str(path),
                    n_ctx=256,
                    n_batch=256,
                    n_threads=threads,
                    n_threads_batch=threads,
                    use_mmap=self.use_mmap,
                    seed=self.seed,
                    verbose=False,
                )
                open_context(
                    llm,
                    n_ctx=self.n_ctx,
                    n_batch=self.n_batch,
                    n_seq=self.concurrency,
                    n_threads=threads,
                )
            except (ValueError, RuntimeError, OSError) as exc:
                raise ModelUnavailableError(f"cannot load GGUF model {str(path)!r}: {exc}") from exc
            self._template = model_template(llm)
            self._special = vocabulary_pattern(llm)
            self._decoder = BatchDecoder(
                llm, n_seq=self.concurrency, n_batch=self.n_batch, lock=self._model_lock
            )
            self._callers = ThreadPoolExecutor(self.concurrency, thread_name_prefix="llama-call")
            self.load_seconds = time.perf_counter() - start
            self._llm = llm

    def _resolve_path(self) -> Path:
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
        return path

    # ------------------------------------------------------------------ calls

    async def complete(self, request: CompletionRequest) -> Completion:
        """Run one chat completion, decoded together with the other calls in flight.

        Raises:
            ModelUnavailableError: the model cannot be loaded.
            LLMResponseError: the prompt does not fit the context, or llama.cpp failed.
        """
        if self._llm is None:
            await asyncio.to_thread(self.load)
        async with self._waiting_room():
            callers = self._callers
            if callers is None:
                raise LLMResponseError(self.name, "the model was closed")
            cancel = threading.Event()
            loop = asyncio.get_running_loop()
            work = loop.run_in_executor(callers, self._complete_sync, request, cancel)
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
        return self._render(messages)[0]

    def _render(self, messages: list[dict[str, str]]) -> tuple[list[int], tuple[bytes, ...]]:
        """The prompt's tokens and the template's stop strings."""
        llm = self._llm
        if llm is None:
            raise LLMResponseError(self.name, "the model is not loaded")
        defused = [{**m, "content": self.defuse(m["content"])} for m in messages]
        result = self._template(messages=defused)
        prompt = result.prompt.encode("utf-8")
        tokens = list(llm.tokenize(prompt, add_bos=not result.added_special, special=True))
        stop = result.stop if isinstance(result.stop, list) else [result.stop or ""]
        return tokens, tuple(s.encode("utf-8") for s in stop if s)

    def _waiting_room(self) -> asyncio.Semaphore:
        """At most ``concurrency`` calls at the decoder: one semaphore per event loop
        (tests run several loops)."""
        loop = asyncio.get_running_loop()
        if self._gate is None or self._gate_loop is not loop:
            self._gate = asyncio.Semaphore(self.concurrency)
            self._gate_loop = loop
        return self._gate

    def _complete_sync(self, request: CompletionRequest, cancel: threading.Event) -> Completion:
        """One call, from the prompt to the reply (blocking: it waits for the decoder)."""
        start = time.perf_counter()
        llm, decoder = self._llm, self._decoder
        if llm is None or decoder is None:
            raise LLMResponseError(self.name, "the model was closed")
        prompt, stop = self._render(_messages(request.messages))
        if not prompt:
            raise LLMResponseError(self.name, "the chat template rendered an empty prompt")
        max_tokens = request.max_tokens if request.max_tokens > 0 else decoder.window
        if len(prompt) + max(request.max_tokens, 1) > decoder.window:
            raise LLMResponseError(
                self.name,
                f"the prompt has {len(prompt)} tokens; with max_tokens="
                f"{request.max_tokens} it does not fit the context window of "
                f"{decoder.window} tokens (shorten the prompt or raise [embedded] n_ctx)",
            )
        sampler = self._sampler(llm, request)
        job = Generation(
            prompt=prompt,
            max_tokens=min(max_tokens, decoder.window - len(prompt)),
            sampler=sampler,
            cancel=cancel,
            stop=stop,
            top_logprobs=request.top_logprobs if self.logprobs else 0,
        )
        try:
            decoder.submit(job).result()
        except LLMError:
            raise
        except Exception as exc:
            raise LLMResponseError(self.name, f"llama.cpp failed: {exc}") from exc
        finally:
            sampler.close()
        return self._completion(job, start)

    def _sampler(self, llm: Llama, request: CompletionRequest) -> Sampler:
        grammar = None
        if request.schema is not None:
            from llama_cpp.llama_grammar import LlamaGrammar

            # Bounded strings: the grammar then closes the object within max_tokens.
            schema = bounded_schema(request.schema, request.max_tokens)
            try:
                grammar = LlamaGrammar.from_json_schema(json.dumps(schema), verbose=False)
            except (ValueError, RuntimeError) as exc:
                raise LLMResponseError(self.name, f"llama.cpp refused the schema: {exc}") from exc
        try:
            return make_sampler(llm, grammar, request.temperature, self.seed)
        except (ValueError, RuntimeError) as exc:  # the grammar it wrote does not parse
            raise LLMResponseError(self.name, f"llama.cpp refused the grammar: {exc}") from exc

    def _completion(self, job: Generation, start: float) -> Completion:
        latency_ms = (time.perf_counter() - start) * 1000.0
        prompt_ms = None
        if job.first_token_at is not None:
            prompt_ms = (job.first_token_at - start) * 1000.0
        return Completion(
            text=job.text,
            model=self.model_name,
            prompt_tokens=len(job.prompt),
            completion_tokens=len(job.generated),
            latency_ms=latency_ms,
            cached_tokens=job.reused,
            finish_reason=job.finish,
            logprobs=tuple(job.logprobs) if job.top_logprobs > 0 else None,
            prompt_ms=prompt_ms,
        )

    # ------------------------------------------------------------------ closing

    async def aclose(self) -> None:
        """Free the model (after the calls in flight); safe to call twice. A later call
        reloads."""
        await asyncio.to_thread(self._close)

    def _close(self) -> None:
        with self._load_lock:
            llm, self._llm = self._llm, None
            decoder, self._decoder = self._decoder, None
            callers, self._callers = self._callers, None
        if decoder is not None:
            decoder.close()
        if callers is not None:
            callers.shutdown(wait=True)  # no call still tokenising with the model
        if llm is not None:
            with self._model_lock:
                llm.close()


def _messages(messages: Sequence[ChatMessage]) -> list[dict[str, str]]:
    return [{"role": m.role, "content": m.content} for m in messages]


async def _wait_ignoring_cancellation(work: asyncio.Future[Completion]) -> None:
    """Wait until the worker thread is done, however often this task is cancelled meanwhile."""
    while not work.done():
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await asyncio.shield(work)
    if not work.cancelled():
        work.exception()  # retrieved: the caller was cancelled, the result is dropped
