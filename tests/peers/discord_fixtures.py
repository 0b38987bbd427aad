"""Pytest fixtures for the fake Discord, loaded as a plugin: declare
``pytest_plugins = ["peers.discord_fixtures"]`` in a test module."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest_asyncio
import yarl
from discord.gateway import DiscordWebSocket
from discord.http import Route

from .discord_peer import DISCORD_TOKEN, FakeDiscord

__all__ = ["discord_api"]


@pytest_asyncio.fixture
async def discord_api() -> AsyncIterator[FakeDiscord]:
    """The fake Discord, with discord.py's REST base and gateway pointed at it."""
    base, gateway = Route.BASE, DiscordWebSocket.DEFAULT_GATEWAY
    async with FakeDiscord(token=DISCORD_TOKEN) as peer:
        Route.BASE = peer.api_base
        DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(peer.gateway_url)
        try:
            yield peer
        finally:
            Route.BASE, DiscordWebSocket.DEFAULT_GATEWAY = base, gateway
