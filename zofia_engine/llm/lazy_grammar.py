"""Greedy decoding under a JSON grammar that asks the grammar about one token, not 151k.

llama-cpp-python puts the grammar sampler in the chain before the greedy pick,
so at every step the grammar scores the whole vocabulary (151,936 tokens for
Qwen2.5); on two cores that dominates generation. llama.cpp's own
``common_sampler`` instead picks the best token first and asks the grammar about
that token alone. Here, when the grammar refuses it, the best 2048 tokens are
asked next, and the whole vocabulary only when all of them are refused. Under
greedy decoding every tier gives the token the full scan would: the best
allowed token among the k best is the best allowed token overall. This module does the same for
llama-cpp-python, used by :class:`~zofia_engine.llm.llama_backend.LlamaCppBackend`
for calls at temperature 0.
"""

from __future__ import annotations

import ctypes
import math
from typing import Any

import llama_cpp
import numpy as np
from llama_cpp import llama_grammar

__all__ = ["SHORTLIST", "GreedyUnderGrammar"]

SHORTLIST = 2048


class GreedyUnderGrammar:
    """A stand-in for llama-cpp-python's ``LlamaSampler`` (``sample(ctx, idx)``).

    Args:
        llm: the model (for its vocabulary).
        grammar: the GBNF grammar the reply must follow.

    Attributes:
        shortlist_scans: how many steps asked the grammar about the best 2048 tokens.
        full_scans: how many steps needed the whole vocabulary scored.
        steps: how many tokens were sampled.
    """

    def __init__(self, llm: llama_cpp.Llama, grammar: llama_grammar.LlamaGrammar) -> None:
        self._n_vocab = llm.n_vocab()
        self._sampler = llama_cpp.llama_sampler_init_grammar(
            llm._model.vocab,
            grammar._grammar.encode("utf-8"),
            grammar._root.encode("utf-8"),
        )
        if not self._sampler:
            raise ValueError("llama.cpp refused the grammar")
        self._one = (llama_cpp.llama_token_data * 1)()
        self._one_array = llama_cpp.llama_token_data_array(
            data=self._one, size=1, selected=-1, sorted=False
        )
        self._some = (llama_cpp.llama_token_data * SHORTLIST)()
        self._some_array = llama_cpp.llama_token_data_array(
            data=self._some, size=SHORTLIST, selected=-1, sorted=False
        )
        self._some_view = np.ctypeslib.as_array(self._some)
        self._all = (llama_cpp.llama_token_data * self._n_vocab)()
        self._all_array = llama_cpp.llama_token_data_array(
            data=self._all, size=self._n_vocab, selected=-1, sorted=False
        )
        self._all_view = np.ctypeslib.as_array(self._all)
        self._ids = np.arange(self._n_vocab, dtype=np.intc)
        self.shortlist_scans = 0
        self.full_scans = 0
        self.steps = 0

    def sample(self, ctx: Any, idx: int) -> int:
        """The greedy token the grammar allows after position ``idx`` of ``ctx``."""
        pointer = llama_cpp.llama_get_logits_ith(ctx.ctx, idx)
        logits = np.ctypeslib.as_array(pointer, shape=(self._n_vocab,))
        token = int(logits.argmax())
        self.steps += 1
        candidate = self._one[0]
        candidate.id = token  # type: ignore[assignment]  # ctypes converts the int
        candidate.logit, candidate.p = float(logits[token]), 0.0
        self._one_array.size, self._one_array.selected = 1, -1
        llama_cpp.llama_sampler_apply(self._sampler, ctypes.byref(self._one_array))
        if math.isinf(self._one[0].logit):
            token = self._best_allowed(logits)
        llama_cpp.llama_sampler_accept(self._sampler, token)
        return token

    def _best_allowed(self, logits: np.ndarray[Any, np.dtype[np.float32]]) -> int:
        self.shortlist_scans += 1
        shortlist = np.argpartition(logits, -SHORTLIST)[-SHORTLIST:]
        found = self._ask(self._some_array, self._some_view, shortlist, logits[shortlist])
        if found is not None:
            return found
        self.full_scans += 1
        found = self._ask(self._all_array, self._all_view, self._ids, logits)
        if found is None:
            raise ValueError("the grammar allows no token here")
        return found

    def _ask(
        self,
        array: llama_cpp.llama_token_data_array,
        view: np.ndarray[Any, Any],
        ids: np.ndarray[Any, Any],
        logits: np.ndarray[Any, Any],
    ) -> int | None:
        """The best token of ``ids`` the grammar allows, or ``None``."""
        view["id"] = ids
        view["logit"] = logits
        view["p"] = 0.0
        array.size, array.selected, array.sorted = len(ids), -1, False
        llama_cpp.llama_sampler_apply(self._sampler, ctypes.byref(array))
        scores = view["logit"][: array.size]
        best = int(scores.argmax())
        return None if math.isinf(scores[best]) else int(view["id"][best])

    def close(self) -> None:
        if self._sampler:
            llama_cpp.llama_sampler_free(self._sampler)
            self._sampler = None

    def __del__(self) -> None:
        self.close()
