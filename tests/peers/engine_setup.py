"""Engines for the end-to-end tests: Stage 1 on the shared models with the fake Brave
server, and the panel answered by a script (at the fake OpenAI server, or in process)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from zofia_engine.config import EngineSettings
from zofia_engine.encoder import SentenceTransformerEncoder
from zofia_engine.engine import Engine
from zofia_engine.llm.base import LLMBackend
from zofia_engine.llm.router import LLMRouter
from zofia_engine.retrieval.ner import NERBackend
from zofia_engine.retrieval.pipeline import EntityGuidedRetrieval
from zofia_engine.retrieval.web.brave import BraveSearch
from zofia_engine.retrieval.wikipedia.offline import OfflineWikipedia

from .panel_script import PanelScript, schema_name
from .search_peers import BRAVE_TOKEN, FakeBrave, brave_body

__all__ = ["EngineMaker", "Scripted", "asked", "script"]


class Scripted(Protocol):
    """What answers the panel: the fake server or the in-process scripted panel."""

    responder: Any
    requests: list[dict[str, Any]]


class EngineMaker:
    """Makes engines on the shared Stage-1 models, the fake Brave server answering
    ``hits``; ``backends`` (role → backend) stand in for the configured LLM servers."""

    def __init__(
        self,
        ner: NERBackend,
        encoder: SentenceTransformerEncoder,
        wikipedia: OfflineWikipedia,
        brave_server: FakeBrave,
        hits: Sequence[dict[str, Any]],
        backends: dict[str, LLMBackend] | None = None,
    ) -> None:
        brave_server.respond(brave_body(list(hits)))
        self.ner, self.encoder, self.wikipedia = ner, encoder, wikipedia
        self.brave_url = brave_server.base_url
        self.backends = backends
        self.made: list[Engine] = []

    def __call__(self, settings: EngineSettings) -> Engine:
        brave = BraveSearch(BRAVE_TOKEN, base_url=self.brave_url, requests_per_second=1000.0)
        stage1 = EntityGuidedRetrieval(
            settings,
            ner=self.ner,
            encoder=self.encoder,
            search_backends=[brave],
            wikipedia=self.wikipedia,
        )
        llm = LLMRouter(settings.llm, backends=self.backends) if self.backends else None
        engine = Engine(settings, retrieval=stage1, llm=llm)
        self.made.append(engine)
        return engine

    async def aclose(self) -> None:
        for engine in self.made:
            await engine.aclose()


def script(peer: Scripted, **overrides: Any) -> PanelScript:
    """A :class:`PanelScript` with ``overrides``, made ``peer``'s responder."""
    made = PanelScript(**overrides)
    peer.responder = made
    return made


def asked(peer: Scripted, name: str) -> list[dict[str, Any]]:
    """The request bodies ``peer`` received for reply schema ``name``."""
    return [body for body in peer.requests if schema_name(body) == name]
