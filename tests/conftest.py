"""Fixtures shared by the test modules."""

from __future__ import annotations

import importlib
import os
import ssl
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.peers.servers.pg_server import PostgresServer

# The store's clock and database fixtures, for every test file that uses the store.
pytest_plugins = ["tests.peers.fixtures.store_fixtures"]


#: the HTTP clients whose transports make a TLS context per client: httpx (the Telegram
#: bot, the search and page clients) and httpx2 (the openai client's)
HTTPX_LIKE = ("httpx", "httpx2")


def _shared_contexts(make: Callable[..., ssl.SSLContext]) -> Callable[..., ssl.SSLContext]:
    """``make`` (an httpx-like ``create_ssl_context``), with its default context
    (``verify=True``, no client certificate) made once for each ``trust_env`` and
    certificate variables, and any other made as ``make`` makes it."""
    made: dict[tuple[bool, str | None, str | None], ssl.SSLContext] = {}

    def shared(verify: Any = True, cert: Any = None, trust_env: bool = True) -> ssl.SSLContext:
        if verify is not True or cert is not None:
            return make(verify=verify, cert=cert, trust_env=trust_env)
        env = os.environ
        key = (trust_env, env.get("SSL_CERT_FILE"), env.get("SSL_CERT_DIR"))
        if key not in made:
            made[key] = make(verify=True, trust_env=trust_env)
        return made[key]

    return shared


@pytest.fixture(scope="session", autouse=True)
def _one_tls_context_per_session() -> Iterator[None]:
    """Every httpx or httpx2 client (two per Telegram bot, one per OpenAI or search
    client) builds its TLS context from a CA bundle, 30 to 45 ms of CPU each, though every
    test speaks plain HTTP on 127.0.0.1. The default context is made once a session and
    shared, as one process could share it."""
    with pytest.MonkeyPatch.context() as patch:
        for name in HTTPX_LIKE:
            try:
                transports = importlib.import_module(f"{name}._transports.default")
            except ImportError:
                continue
            make = importlib.import_module(name).create_ssl_context  # what transports call
            patch.setattr(transports, "create_ssl_context", _shared_contexts(make))
        yield


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """One real PostgreSQL server for the whole session (tests/peers/servers/pg_server.py)."""
    with PostgresServer() as server:
        yield server


@pytest.fixture
def postgres_url(postgres_server: PostgresServer) -> Iterator[str]:
    """A fresh, empty database for this test, dropped after it; yields its URL."""
    name = f"test_{uuid.uuid4().hex[:16]}"
    url = postgres_server.create_database(name)
    yield url
    postgres_server.drop_database(name)


# Fixtures that load a real model and decode with it (SmolLM2 through llama.cpp, a
# BERT-shaped NER or NLI model through transformers and torch): a test that uses one is
# in the slow tier, whatever its file says, so `pytest -m "not slow"` stays the fast tier.
MODEL_FIXTURES = frozenset(
    {"smol", "batched", "single", "model_path", "bert_like_ner_dir", "tiny_nli"}
)


@pytest.fixture(scope="session")
def tiny_nli() -> Callable[..., Path]:
    """:func:`tests.peers.fakes.tiny_nli.build_nli`, once torch and transformers import (else the
    test is skipped): a tiny NLI model the test builds on disk."""
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from tests.peers.fakes.tiny_nli import build_nli

    return build_nli


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if MODEL_FIXTURES.intersection(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)
