"""One call on the embedded model: its prompt, its sampler, and what it produced.

:class:`Generation` is what :class:`~zofia_engine.llm.llama_batch.BatchDecoder` runs for
one ``complete`` call: the prompt's tokens, the call's own sampler (its grammar, its
temperature), its cap on reply tokens, its cancellation, and, token by token, the
reply, the log-probabilities and why it ended. The decoder feeds it the logits of its
sequence; everything here concerns one sequence only.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from .base import TokenLogprob

if TYPE_CHECKING:
    import numpy.typing as npt
    from llama_cpp import Llama
    from llama_cpp.llama_grammar import LlamaGrammar

__all__ = [
    "CHATML_TEMPLATE",
    "Generation",
    "Sampler",
    "logits_row",
    "make_sampler",
    "model_template",
    "token_logprob",
]

# Used when a GGUF file carries no chat template (the llama.cpp server's default, too).
CHATML_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)


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


def logits_row(ctx: Any, idx: int, n_vocab: int) -> npt.NDArray[np.float32]:
    """The logits of batch entry ``idx`` of the last decode (a view, valid until the next)."""
    import llama_cpp

    pointer = llama_cpp.llama_get_logits_ith(ctx.ctx, idx)
    return np.ctypeslib.as_array(pointer, shape=(n_vocab,))


class Sampler(Protocol):
    """Picks (and accepts) the next token from the logits of batch entry ``idx``."""

    def sample(self, ctx: Any, idx: int) -> int: ...

    def close(self) -> None: ...


class Greedy:
    """The most likely token (llama.cpp's greedy sampler: the first of equal maxima)."""

    def __init__(self, n_vocab: int) -> None:
        self._n_vocab = n_vocab

    def sample(self, ctx: Any, idx: int) -> int:
        return int(logits_row(ctx, idx, self._n_vocab).argmax())

    def close(self) -> None:
        pass


class Chain:
    """llama.cpp's sampler chain as llama-cpp-python builds it for a chat call with a
    temperature: the grammar, top-k 40, typical 1, top-p 0.95, min-p 0.05, the
    temperature, then a draw seeded with ``seed``."""

    def __init__(
        self, llm: Llama, grammar: LlamaGrammar | None, temperature: float, seed: int
    ) -> None:
        import llama_cpp

        first = None
        if grammar is not None:  # asked first: a grammar llama.cpp refuses leaks nothing
            rules, root = grammar._grammar.encode("utf-8"), grammar._root.encode("utf-8")
            first = llama_cpp.llama_sampler_init_grammar(llm._model.vocab, rules, root)
            if not first:
                raise ValueError("llama.cpp refused the grammar")
        chain = llama_cpp.llama_sampler_chain_init(llama_cpp.llama_sampler_chain_default_params())
        links = [
            *([first] if first else []),
            llama_cpp.llama_sampler_init_top_k(40),
            llama_cpp.llama_sampler_init_typical(1.0, 1),
            llama_cpp.llama_sampler_init_top_p(0.95, 1),
            llama_cpp.llama_sampler_init_min_p(0.05, 1),
            llama_cpp.llama_sampler_init_temp(temperature),
            llama_cpp.llama_sampler_init_dist(seed),
        ]
        for link in links:
            llama_cpp.llama_sampler_chain_add(chain, link)  # the chain owns and frees them
        self._chain: Any = chain

    def sample(self, ctx: Any, idx: int) -> int:
        import llama_cpp

        # llama_sampler_sample accepts the token too (the grammar advances).
        return int(llama_cpp.llama_sampler_sample(self._chain, ctx.ctx, idx))

    def close(self) -> None:
        import llama_cpp

        if self._chain:
            llama_cpp.llama_sampler_free(self._chain)
            self._chain = None


def make_sampler(
    llm: Llama, grammar: LlamaGrammar | None, temperature: float, seed: int
) -> Sampler:
    """Greedy decoding at temperature 0 (under a grammar, the grammar is asked about the
    best tokens first: :class:`~zofia_engine.llm.lazy_grammar.GreedyUnderGrammar`), the
    library's sampler chain otherwise."""
    if temperature > 0.0:
        return Chain(llm, grammar, temperature, seed)
    if grammar is None:
        return Greedy(llm.n_vocab())
    from .lazy_grammar import GreedyUnderGrammar

    return GreedyUnderGrammar(llm, grammar)


def token_logprob(
    row: npt.NDArray[np.float32], token: int, k: int, piece: Callable[[int], str]
) -> TokenLogprob:
    """``token``'s log-probability and the ``k`` most likely tokens, from the model's
    logits ``row`` (before the grammar and the samplers)."""
    top = float(row.max())
    log_norm = top + float(np.log(np.exp(row - top, dtype=np.float64).sum()))
    logp = (row - log_norm).astype(np.float32)
    k = min(k, logp.size)
    best = np.argpartition(logp, -k)[-k:]
    best = best[np.argsort(logp[best])[::-1]]
    return TokenLogprob(
        token=piece(token),
        logprob=float(logp[token]),
        top={piece(int(i)): float(logp[i]) for i in best},
    )


@dataclass(eq=False)
class Generation:
    """One sequence: what a ``complete`` call asks, and what the decoder made of it.

    Log-probabilities (``top_logprobs > 0``) are the model's, before the grammar and
    the samplers; each reply token that was evaluated gets an entry. A last token that
    never is (the reply hit ``max_tokens``) gets none, as with llama-cpp-python's own.
    """

    prompt: list[int]
    max_tokens: int
    sampler: Sampler
    cancel: threading.Event = field(default_factory=threading.Event)
    stop: tuple[bytes, ...] = ()
    top_logprobs: int = 0
    reused: int = 0  # prompt tokens taken from the KV cache
    evaluated: int = 0  # prompt tokens in this sequence's KV cache
    pending: int | None = None  # sampled, not evaluated yet
    generated: list[int] = field(default_factory=list)
    logprobs: list[TokenLogprob] = field(default_factory=list)
    finish: str = ""
    first_token_at: float | None = None  # perf_counter() when the first token was sampled
    future: Future[Generation] = field(default_factory=Future)
    _text: bytearray = field(default_factory=bytearray)

    @property
    def text(self) -> str:
        return bytes(self._text).decode("utf-8", errors="ignore")

    @property
    def prompt_done(self) -> bool:
        return self.evaluated >= len(self.prompt)

    def take(self, llm: Llama, ctx: Any, idx: int) -> bool:
        """Sample the next token from batch entry ``idx``; false when the reply ended."""
        import llama_cpp

        if self.first_token_at is None:
            self.first_token_at = time.perf_counter()
        row = logits_row(ctx, idx, llm.n_vocab()) if self.top_logprobs > 0 else None
        token = self.sampler.sample(ctx, idx)
        if llama_cpp.llama_vocab_is_eog(llm._model.vocab, token):
            return self.end("stop")
        self.generated.append(token)
        piece = llm.detokenize([token])
        if row is not None:
            self.logprobs.append(
                token_logprob(row, token, self.top_logprobs, lambda t: _piece(llm, t))
            )
        self._text += piece
        tail = bytes(self._text[-(len(piece) + max(map(len, self.stop), default=0)) :])
        for stop in self.stop:
            if stop and stop in tail:
                del self._text[self._text.rfind(stop) :]
                return self.end("stop")
        if len(self.generated) >= self.max_tokens:
            if len(self.logprobs) == len(self.generated):
                self.logprobs.pop()  # never evaluated
            return self.end("length")
        self.pending = token
        return True

    def end(self, reason: str) -> bool:
        """Finish with ``reason`` (``stop``, ``length``, ``cancelled``); returns false."""
        self.pending = None
        self.finish = reason
        return False


def _piece(llm: Llama, token: int) -> str:
    return llm.detokenize([token]).decode("utf-8", errors="ignore")
