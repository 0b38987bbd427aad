"""The real models, loaded once per test session: spaCy NER, MiniLM, offline Wikipedia.

Load with ``pytest_plugins = ["peers.model_fixtures"]``.
"""

from __future__ import annotations

import pytest

from zofia_engine.config import EngineSettings
from zofia_engine.encoder import SentenceTransformerEncoder
from zofia_engine.retrieval.ner import NERBackend, build_ner_backend
from zofia_engine.retrieval.wikipedia.offline import OfflineWikipedia

__all__ = ["encoder", "ner", "offline_wiki"]


@pytest.fixture(scope="session")
def ner() -> NERBackend:
    backend = build_ner_backend(EngineSettings().ner)
    backend.load()
    return backend


@pytest.fixture(scope="session")
def encoder() -> SentenceTransformerEncoder:
    model = SentenceTransformerEncoder()
    model.load()
    return model


@pytest.fixture(scope="session")
def offline_wiki() -> OfflineWikipedia:
    backend = OfflineWikipedia()
    backend.load()
    return backend
