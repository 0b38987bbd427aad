"""``llama_cpp.Llama`` decoding greedily under a grammar with the engine's sampler.

:class:`FastGrammarLlama` is the library's ``Llama`` whose greedy, penalty-free grammar
calls sample with :class:`~zofia_engine.llm.lazy_grammar.GreedyUnderGrammar`, the
sampler :class:`~zofia_engine.llm.llama_backend.LlamaCppBackend` uses at temperature 0:
``tests/engine/llm/test_lazy_grammar.py`` compares its replies with the library's own sampler, and
``bench/grammar_decoding.py`` times the two.
"""

from __future__ import annotations

from typing import Any, cast

import llama_cpp
from llama_cpp import llama_grammar

from zofia_engine.llm.lazy_grammar import GreedyUnderGrammar

__all__ = ["FastGrammarLlama"]


class FastGrammarLlama(llama_cpp.Llama):
    """``Llama`` whose greedy, penalty-free grammar calls use :class:`GreedyUnderGrammar`;
    every other call samples as llama-cpp-python does."""

    last_sampler: GreedyUnderGrammar | None = None

    def _init_sampler(self, *args: Any, **kwargs: Any) -> Any:
        grammar = kwargs.get("grammar")
        plain = (
            grammar is not None
            and not args
            and kwargs.get("temp") == 0.0
            and kwargs.get("logits_processor") is None
            and kwargs.get("repeat_penalty", 1.0) == 1.0
            and kwargs.get("frequency_penalty", 0.0) == 0.0
            and kwargs.get("presence_penalty", 0.0) == 0.0
            and kwargs.get("mirostat_mode", 0) == 0
        )
        if not plain:
            self.last_sampler = None
            return super()._init_sampler(*args, **kwargs)
        self.last_sampler = GreedyUnderGrammar(self, cast("llama_grammar.LlamaGrammar", grammar))
        return self.last_sampler
