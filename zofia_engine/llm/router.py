"""Roles to backends, as the settings say; one backend object per distinct server.

Roles that point at the same server share its backend, so its concurrency
limit holds across them; the embedded model is loaded once for every role. A key goes
only to the server it was set for (:func:`~zofia_engine.llm.openai_wire.key_for`): a
role that names another ``base_url`` without an ``api_key`` of its own sends none, so
``[llm.openai] api_key`` (``OPENAI_API_KEY``) never reaches a third party's server.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from ..config import ROLES, LLMSettings
from .base import LLMBackend
from .gguf import QWEN_CODER_1_5B
from .openai_wire import key_for
from .session import CheckSession, Route

__all__ = ["LLMRouter"]


class LLMRouter:
    """Builds the backends the settings name and hands out per-check sessions.

    Args:
        settings: the ``[llm]`` section.
        backends: role → backend overrides (tests, benchmarks); the model name
            still comes from the settings.
    """

    def __init__(
        self, settings: LLMSettings, *, backends: dict[str, LLMBackend] | None = None
    ) -> None:
        self.settings = settings
        self._pool: dict[tuple[str, ...], LLMBackend] = {}
        self.routes: dict[str, Route] = {}
        overrides = backends or {}
        for role in ROLES:
            rs = settings.roles.get(role)  # type: ignore[call-overload]
            kind = (rs.backend if rs else "") or settings.backend
            max_tokens = rs.max_tokens if rs else 0
            if role in overrides:
                backend = overrides[role]
                model = (rs.model if rs else "") or settings.openai.model
            elif kind == "openai":
                base_url = (rs.base_url if rs else "") or settings.openai.base_url
                backend = self._openai(base_url, rs.api_key if rs else "")
                model = (rs.model if rs else "") or settings.openai.model
            else:
                backend = self._embedded()
                model = self._embedded_label()
            self.routes[role] = Route(backend=backend, model=model, max_tokens=max_tokens)
        vision = settings.roles.get("vision")
        if vision is not None and vision.model:  # never the text-only embedded model
            backend = overrides.get("vision") or self._openai(
                vision.base_url or settings.openai.base_url, vision.api_key
            )
            self.routes["vision"] = Route(backend, vision.model, vision.max_tokens)

    @property
    def has_vision(self) -> bool:
        """A vision model is configured (``[llm.roles.vision]`` names one)."""
        return "vision" in self.routes

    def _openai(self, base_url: str, own_key: str) -> LLMBackend:
        """The backend of the server at ``base_url``, sent ``own_key`` (the role's), or
        ``[llm.openai] api_key`` only when ``base_url`` is ``[llm.openai] base_url``."""
        openai = self.settings.openai
        api_key = key_for(base_url, own_key, openai.base_url, openai.api_key)
        key = ("openai", base_url, api_key)
        if key not in self._pool:
            from .openai_backend import OpenAIBackend

            self._pool[key] = OpenAIBackend.from_settings(
                self.settings.openai,
                timeout_s=self.settings.timeout_s,
                retries=self.settings.retries,
                concurrency=self.settings.concurrency,
                base_url=base_url,
                api_key=api_key,
            )
        return self._pool[key]

    def _embedded(self) -> LLMBackend:
        key = ("embedded",)
        if key not in self._pool:
            from .llama_backend import LlamaCppBackend

            self._pool[key] = LlamaCppBackend.from_settings(
                self.settings.embedded, concurrency=self.settings.concurrency
            )
        return self._pool[key]

    def _embedded_label(self) -> str:
        path = self.settings.embedded.model_path
        return Path(path or QWEN_CODER_1_5B.filename).stem

    @property
    def backends(self) -> list[LLMBackend]:
        """Each distinct backend once."""
        seen: dict[int, LLMBackend] = {}
        for route in self.routes.values():
            seen.setdefault(id(route.backend), route.backend)
        return list(seen.values())

    def describe(self) -> dict[str, str]:
        """Role → ``backend:model``, for the CLI and the logs."""
        return {role: f"{r.backend.name}:{r.model}" for role, r in self.routes.items()}

    def session(self) -> CheckSession:
        """A fresh session with this check's budgets."""
        s = self.settings
        return CheckSession(
            self.routes,
            temperature=s.temperature,
            max_calls=s.max_calls_per_check,
            max_tokens=s.max_tokens_per_check,
        )

    async def load(self) -> None:
        """Load local weights now (in a worker thread)."""
        for backend in self.backends:
            await asyncio.to_thread(backend.load)

    async def aclose(self) -> None:
        for backend in self.backends:
            await backend.aclose()
