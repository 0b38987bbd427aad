"""A disk cache in front of an LLM backend, for the inner loop of a bench that only
changes code after the model's replies (``bench/settle.py --cache``).

At temperature 0 the embedded model answers the same request with the same completion,
so a reading rule can be changed and the dev claims run again in seconds, the model
asked only for the requests the change made new. A cached run's times are not a check's
times: the bench reports them as ``null``.

Keys are the SHA-256 of the request as JSON; values are the completion as JSON, one file
per key in a directory.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from pathlib import Path
from typing import Any

from zofia_engine.config import EngineSettings
from zofia_engine.llm.base import Completion, CompletionRequest, LLMBackend, TokenLogprob
from zofia_engine.llm.router import LLMRouter

__all__ = ["CachedBackend", "cached_router"]


def _key(request: CompletionRequest) -> str:
    data = dataclasses.asdict(request)
    return hashlib.sha256(json.dumps(data, sort_keys=True, default=str).encode()).hexdigest()


def _completion(data: dict[str, Any]) -> Completion:
    logprobs = data.get("logprobs")
    if logprobs is not None:
        data["logprobs"] = tuple(TokenLogprob(**t) for t in logprobs)
    return Completion(**data)


class CachedBackend(LLMBackend):
    """``inner`` with every completion kept under ``folder``."""

    def __init__(self, inner: LLMBackend, folder: Path) -> None:
        self.inner = inner
        self.folder = folder
        self.name = inner.name
        self.structured = inner.structured
        self.local = inner.local
        self.hits = 0
        self.misses = 0
        folder.mkdir(parents=True, exist_ok=True)

    async def complete(self, request: CompletionRequest) -> Completion:
        path = self.folder / f"{_key(request)}.json"
        if path.exists():
            self.hits += 1
            return _completion(json.loads(path.read_text("utf-8")))
        self.misses += 1
        completion = await self.inner.complete(request)
        path.write_text(json.dumps(dataclasses.asdict(completion)), "utf-8")
        return completion

    def load(self) -> None:
        self.inner.load()

    async def aclose(self) -> None:
        await self.inner.aclose()


def cached_router(settings: EngineSettings, folder: Path) -> LLMRouter:
    """The router the settings build, every role's backend behind one cache."""
    plain = LLMRouter(settings.llm)
    wrapped: dict[LLMBackend, CachedBackend] = {}
    backends: dict[str, LLMBackend] = {}
    for role, route in plain.routes.items():
        if route.backend not in wrapped:
            wrapped[route.backend] = CachedBackend(route.backend, folder)
        backends[role] = wrapped[route.backend]
    router = LLMRouter(settings.llm, backends=backends)
    for role, route in plain.routes.items():  # the model's own name (per-model thresholds)
        router.routes[role] = dataclasses.replace(router.routes[role], model=route.model)
    return router
