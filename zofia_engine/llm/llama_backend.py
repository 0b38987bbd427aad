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
format guessed from it. The template is wrapped (:class:`_CheckingFormatter`)
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
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from ..errors import LLMResponseError, ModelUnavailableError
from .base import Completion, CompletionRequest, LLMBackend, TokenLogprob
from .special_tokens import defuse, vocabulary_pattern
from .structured import bounded_schema

if TYPE_CHECKING:
    import numpy.typing as npt
    from llama_cpp import Llama
    from llama_cpp.llama_chat_format import ChatFormatterResponse

    from ..config import EmbeddedSettings

__all__ = ["LlamaCppBackend"]

_INSTALL_HINT = "pip install 'zofia-factcheck[local]' (package llama-cpp-python)"

# Used when a GGUF file carries no chat template (the llama.cpp server's default, too).
_CHATML_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)


class _PromptTooLongError(Exception):
    """Raised inside the chat formatter, before any token is evaluated."""

    def __init__(self, prompt_tokens: int) -> None:
        super().__init__(prompt_tokens)
        self.prompt_tokens = prompt_tokens


@dataclass
class _Call:
    """What one ``complete`` call shares with the chat formatter and the stopping check.

    The stopping check runs in ``Llama.generate`` right after each token is
    sampled, while the context still holds the logits that token was drawn
    from. With ``top_logprobs > 0`` it keeps their log-softmax until the next
    check, whose ``input_ids`` end with the token (by then evaluated), and
    records the token's log-probability and the top alternatives. This needs
    no ``logits_all`` (llama-cpp-python's own ``logprobs`` does, and then costs
    an ``n_ctx x vocabulary`` score matrix plus a Python sort of the whole
    vocabulary per token). The distributions are the model's, before the
    grammar and samplers. A last token that is never evaluated (the reply
    hit ``max_tokens``, or was cancelled) gets no entry.
    """

    max_tokens: int
    cancel: threading.Event
    llm: Llama
    top_logprobs: int = 0
    prompt_tokens: int = -1
    reused_tokens: int = 0
    stopped_early: bool = False
    logprobs: list[TokenLogprob] = field(default_factory=list)
    _pending: npt.NDArray[np.float32] | None = None
    _seen: int = -1

    def stop_requested(
        self, input_ids: npt.NDArray[np.intc], logits: npt.NDArray[np.single]
    ) -> bool:
        if self.top_logprobs > 0:
            self._record(input_ids)
        if self.cancel.is_set():
            self.stopped_early = True
            return True
        return False

    def _record(self, input_ids: npt.NDArray[np.intc]) -> None:
        import llama_cpp

        if len(input_ids) == self._seen:
            return  # _create_completion's check after the loop: no new token
        self._seen = len(input_ids)
        if self._pending is not None:
            self._resolve(int(input_ids[-1]))
        pointer = llama_cpp.llama_get_logits_ith(self.llm.ctx, -1)
        row = np.ctypeslib.as_array(pointer, shape=(self.llm.n_vocab(),))
        top = float(row.max())
        log_norm = top + float(np.log(np.exp(row - top, dtype=np.float64).sum()))
        self._pending = (row - log_norm).astype(np.float32)

    def _resolve(self, token: int) -> None:
        assert self._pending is not None
        row, self._pending = self._pending, None
        k = min(self.top_logprobs, row.size)
        best = np.argpartition(row, -k)[-k:]
        best = best[np.argsort(row[best])[::-1]]
        self.logprobs.append(
            TokenLogprob(
                token=self._piece(token),
                logprob=float(row[token]),
                top={self._piece(int(i)): float(row[i]) for i in best},
            )
        )

    def _piece(self, token: int) -> str:
        return self.llm.detokenize([token]).decode("utf-8", errors="ignore")


class LlamaCppBackend(LLMBackend):
    """A GGUF chat model run in-process with llama.cpp.

    Args:
        model_path: a GGUF file; ``None`` means the packaged
            Qwen2.5-Coder-1.5B-Instruct Q4_K_M, assembled on first load.
        n_ctx: context window in tokens (prompt plus reply).
        n_threads: CPU threads; 0 means one per core.
        n_batch: prompt tokens evaluated per ``llama_decode`` call.
        logprobs: requests with ``top_logprobs > 0`` get per-token
            log-probabilities (about a millisecond per token; see ``_Call``).
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
        logprobs: bool = False,
        seed: int = 0,
    ) -> None:
        self._model_path = Path(model_path) if model_path else None
        self.n_ctx = n_ctx
        self.n_threads = n_threads
        self.n_batch = n_batch
        self.logprobs = logprobs
        self.seed = seed
        self._llm: Llama | None = None
        self._load_lock = threading.Lock()
        self._model_lock = threading.Lock()  # held while a worker thread uses the model
        self._call: _Call | None = None
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
                    seed=self.seed,
                    verbose=False,
                )
            except (ValueError, RuntimeError, OSError) as exc:
                raise ModelUnavailableError(f"cannot load GGUF model {str(path)!r}: {exc}") from exc
            self._template = _template(llm)
            llm.chat_handler = llama_chat_format.chat_formatter_to_chat_completion_handler(
                _CheckingFormatter(self, llm, self._template)
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
            call = _Call(
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
            except _PromptTooLongError as exc:
                raise LLMResponseError(
                    self.name,
                    f"the prompt has {exc.prompt_tokens} tokens; with max_tokens="
                    f"{request.max_tokens} it does not fit the context window of "
                    f"{self._context_size(llm)} tokens (shorten the prompt or raise "
                    "[embedded] n_ctx)",
                ) from None
            except Exception as exc:
                raise LLMResponseError(self.name, f"llama.cpp failed: {exc}") from exc
            finally:
                self._call = None
            latency_ms = (time.perf_counter() - start) * 1000.0
        return self._completion(response, call, latency_ms)

    def _completion(self, response: dict[str, Any], call: _Call, latency_ms: float) -> Completion:
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
        )

    @staticmethod
    def _context_size(llm: Llama) -> int:
        return int(min(llm.n_ctx(), llm.context_params.n_ctx))

    # ------------------------------------------------------------------ closing

    async def aclose(self) -> None:
        """Free the model (after any running call); safe to call twice. A later call reloads."""
        await asyncio.to_thread(self._close)

    def _close(self) -> None:
        with self._load_lock, self._model_lock:
            llm, self._llm = self._llm, None
        if llm is not None:
            llm.close()


def _template(llm: Llama) -> Any:
    """The model's own chat template (ChatML when the file has none), as a formatter."""
    from llama_cpp import llama_chat_format

    template = llm.metadata.get("tokenizer.chat_template") or _CHATML_TEMPLATE
    eos_id, bos_id = llm.token_eos(), llm.token_bos()
    return llama_chat_format.Jinja2ChatFormatter(
        template=template,
        eos_token=llm._model.token_get_text(eos_id) if eos_id != -1 else "",
        bos_token=llm._model.token_get_text(bos_id) if bos_id != -1 else "",
        stop_token_ids=[eos_id],
    )


class _CheckingFormatter:
    """Wraps the GGUF chat formatter: counts the prompt, checks it fits, adds the stop check.

    ``create_chat_completion`` offers no ``stopping_criteria`` argument, but the
    chat handler takes one from its formatter's response, so it goes in here. The
    formatter runs inside ``create_chat_completion`` before any token is
    evaluated, when the KV cache still holds the previous call's tokens.
    """

    def __init__(self, backend: LlamaCppBackend, llm: Llama, inner: Any) -> None:
        self._backend = backend
        self._llm = llm
        self._inner = inner

    def __call__(self, **kwargs: Any) -> ChatFormatterResponse:
        from llama_cpp import StoppingCriteriaList
        from llama_cpp.llama_chat_format import ChatFormatterResponse

        result = cast("ChatFormatterResponse", self._inner(**kwargs))
        call = self._backend._call
        if call is None:  # used outside LlamaCppBackend.complete
            return result
        llm = self._llm
        # Exactly how chat_formatter_to_chat_completion_handler tokenises the prompt.
        tokens = llm.tokenize(
            result.prompt.encode("utf-8"), add_bos=not result.added_special, special=True
        )
        call.prompt_tokens = len(tokens)
        if len(tokens) + max(call.max_tokens, 1) > LlamaCppBackend._context_size(llm):
            raise _PromptTooLongError(len(tokens))
        call.reused_tokens = _reused_prefix(llm, tokens)
        criteria = StoppingCriteriaList([call.stop_requested])
        if result.stopping_criteria is not None:
            criteria.extend(result.stopping_criteria)
        return ChatFormatterResponse(
            prompt=result.prompt,
            stop=result.stop,
            stopping_criteria=criteria,
            added_special=result.added_special,
        )


def _reused_prefix(llm: Llama, tokens: list[int]) -> int:
    """How many of ``tokens`` ``Llama.generate`` will take from the KV cache, not evaluate.

    The longest common prefix with the cached tokens; when the whole prompt
    matches, its last token is evaluated again to refresh the logits, unless
    the cache holds exactly the prompt with live logits.
    """
    n_cached = int(llm.n_tokens)
    if n_cached == 0 or not tokens:
        return 0
    cached = np.asarray(llm.input_ids[:n_cached])
    n = min(n_cached, len(tokens))
    differ = np.flatnonzero(cached[:n] != np.asarray(tokens[:n], dtype=cached.dtype))
    common = int(differ[0]) if differ.size else n
    if common == len(tokens):
        if n_cached == len(tokens) and not getattr(llm, "_requires_eval", True):
            return common
        return common - 1
    return common


async def _wait_ignoring_cancellation(work: asyncio.Future[Completion]) -> None:
    """Wait until the worker thread is done, however often this task is cancelled meanwhile."""
    while not work.done():
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await asyncio.shield(work)
    if not work.cancelled():
        work.exception()  # retrieved: the caller was cancelled, the result is dropped
