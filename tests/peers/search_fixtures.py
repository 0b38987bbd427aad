"""Pytest fixtures for the fake search servers, loaded as a plugin.

Declare ``pytest_plugins = ["peers.search_fixtures"]`` in a test module. They live
apart from :mod:`peers.search_peers` so that a test module can import the
helpers there and still load these fixtures as a (rewritable) plugin.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest_asyncio

from .search_peers import FakeBrave, FakeSearxng

__all__ = ["brave_server", "searxng_server"]


@pytest_asyncio.fixture
async def brave_server() -> AsyncIterator[FakeBrave]:
    """A running fake Brave API, closed after the test."""
    async with FakeBrave() as server:
        yield server


@pytest_asyncio.fixture
async def searxng_server() -> AsyncIterator[FakeSearxng]:
    """A running fake SearXNG instance, closed after the test."""
    async with FakeSearxng() as server:
        yield server
