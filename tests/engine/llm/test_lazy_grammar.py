"""Greedy decoding under a grammar that asks the grammar about the best tokens first
gives exactly what llama-cpp-python's full-vocabulary grammar sampler gives."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from zofia_engine.errors import ModelUnavailableError
from zofia_engine.llm.gguf import smollm2_135m_path

llama_cpp = pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed")

from tests.peers.fakes.fast_grammar import FastGrammarLlama  # noqa: E402

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "verdict": {"type": "string", "enum": ["real", "fake"]},
        "reason": {"type": "string", "maxLength": 120},
        "cites": {"type": "array", "items": {"type": "string", "enum": ["web-1", "wiki-2"]}},
    },
    "required": ["verdict", "reason", "cites"],
    "additionalProperties": False,
}
MESSAGES = [
    {"role": "system", "content": "You check news posts. Answer in JSON."},
    {
        "role": "user",
        "content": "Post: the mayor of Springfield banned bicycles on every street. "
        "Evidence web-1: the council voted on a bike lane budget. wiki-2: Springfield "
        "is the capital of Illinois. Is the post real or fake?",
    },
]


@pytest.fixture(scope="module")
def model_path() -> Iterator[str]:
    try:
        yield str(smollm2_135m_path())
    except ModelUnavailableError as exc:
        pytest.skip(f"SmolLM2-135M is not installed: {exc}")


def _reply(cls: type[Any], path: str, **kwargs: Any) -> tuple[str, Any]:
    llm = cls(model_path=path, n_ctx=1024, n_threads=2, seed=7, verbose=False)
    try:
        out = llm.create_chat_completion(
            messages=MESSAGES,
            max_tokens=120,
            response_format={"type": "json_object", "schema": SCHEMA},
            **kwargs,
        )
        return out["choices"][0]["message"]["content"], getattr(llm, "last_sampler", None)
    finally:
        llm.close()


def test_greedy_replies_are_identical_and_the_shortcut_is_taken(model_path: str) -> None:
    fast, sampler = _reply(FastGrammarLlama, model_path, temperature=0.0)
    slow, _ = _reply(llama_cpp.Llama, model_path, temperature=0.0)
    assert fast == slow
    assert sampler is not None and sampler.steps > 10
    # Some tokens were settled by asking the grammar about one token, without scoring the
    # vocabulary; how many depends on what the model says, so only that it happened is pinned.
    assert sampler.steps > sampler.shortlist_scans


def test_sampling_with_temperature_keeps_the_librarys_sampler(model_path: str) -> None:
    _, sampler = _reply(FastGrammarLlama, model_path, temperature=0.7)
    assert sampler is None
