"""The parts of one llama.cpp call the embedded backend hooks into.

:class:`CallState` is what one ``complete`` call shares with the chat formatter and
the stopping check: the prompt's size and reused prefix, cancellation, and the
log-probabilities collected token by token. :class:`CheckingFormatter` wraps the
model's own chat template so that each call can check and stop itself.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from .base import TokenLogprob

if TYPE_CHECKING:
    import numpy.typing as npt
    from llama_cpp import Llama
    from llama_cpp.llama_chat_format import ChatFormatterResponse

__all__ = [
    "CHATML_TEMPLATE",
    "CallState",
    "CheckingFormatter",
    "PromptTooLongError",
    "model_template",
]

# Used when a GGUF file carries no chat template (the llama.cpp server's default, too).
CHATML_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)


class PromptTooLongError(Exception):
    """Raised inside the chat formatter, before any token is evaluated."""

    def __init__(self, prompt_tokens: int) -> None:
        super().__init__(prompt_tokens)
        self.prompt_tokens = prompt_tokens


@dataclass
class CallState:
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
    first_token_at: float | None = None  # perf_counter() when the first token was sampled
    prompt_ms: float | None = None  # from the call's start to that token
    logprobs: list[TokenLogprob] = field(default_factory=list)
    _pending: npt.NDArray[np.float32] | None = None
    _seen: int = -1

    def stop_requested(
        self, input_ids: npt.NDArray[np.intc], logits: npt.NDArray[np.single]
    ) -> bool:
        if self.first_token_at is None:
            self.first_token_at = time.perf_counter()
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


def model_template(llm: Llama) -> Any:
    """The model's own chat template (ChatML when the file has none), as a formatter."""
    from llama_cpp import llama_chat_format

    template = llm.metadata.get("tokenizer.chat_template") or CHATML_TEMPLATE
    eos_id, bos_id = llm.token_eos(), llm.token_bos()
    return llama_chat_format.Jinja2ChatFormatter(
        template=template,
        eos_token=llm._model.token_get_text(eos_id) if eos_id != -1 else "",
        bos_token=llm._model.token_get_text(bos_id) if bos_id != -1 else "",
        stop_token_ids=[eos_id],
    )


def context_size(llm: Llama) -> int:
    """The context window in tokens (prompt plus reply)."""
    return int(min(llm.n_ctx(), llm.context_params.n_ctx))


class CheckingFormatter:
    """Wraps the GGUF chat formatter: counts the prompt, checks it fits, adds the stop check.

    ``create_chat_completion`` offers no ``stopping_criteria`` argument, but the
    chat handler takes one from its formatter's response, so it goes in here. The
    formatter runs inside ``create_chat_completion`` before any token is
    evaluated, when the KV cache still holds the previous call's tokens.
    """

    def __init__(
        self, current_call: Callable[[], CallState | None], llm: Llama, inner: Any
    ) -> None:
        self._current_call = current_call
        self._llm = llm
        self._inner = inner

    def __call__(self, **kwargs: Any) -> ChatFormatterResponse:
        from llama_cpp import StoppingCriteriaList
        from llama_cpp.llama_chat_format import ChatFormatterResponse

        result = cast("ChatFormatterResponse", self._inner(**kwargs))
        call = self._current_call()
        if call is None:  # used outside LlamaCppBackend.complete
            return result
        llm = self._llm
        # Exactly how chat_formatter_to_chat_completion_handler tokenises the prompt.
        tokens = llm.tokenize(
            result.prompt.encode("utf-8"), add_bos=not result.added_special, special=True
        )
        call.prompt_tokens = len(tokens)
        if len(tokens) + max(call.max_tokens, 1) > context_size(llm):
            raise PromptTooLongError(len(tokens))
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
