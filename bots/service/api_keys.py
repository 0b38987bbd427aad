"""The HTTP API's keys as the API reads them: each read on the service's threads (the
keys themselves, stored as keyed hashes, are the store's: :mod:`storage.api_keys`)."""

from __future__ import annotations

from storage.api_keys import ApiKeys, Webhook

from .delivery import StoreThreads

__all__ = ["ApiKeyReads"]


class ApiKeyReads:
    """The reads of the API's keys.

    Args:
        keys: the store's keys.
        threads: the service's threads for the store.
    """

    def __init__(self, keys: ApiKeys, threads: StoreThreads) -> None:
        self.keys = keys
        self._run = threads.run

    def hash_of(self, key: str) -> str | None:
        """The keyed hash ``key`` is stored as, or ``None`` for what is no key."""
        return self.keys.hash_of(key)

    async def name_of(self, key: str) -> str | None:
        """The name of ``key`` if it is a key not revoked, else ``None``."""
        return await self._run(self.keys.name_of, key)

    async def active_hashes(self) -> frozenset[str]:
        """The keyed hashes of every key not revoked."""
        return await self._run(self.keys.active_hashes)

    async def set_webhook(self, name: str, url: str) -> Webhook:
        """Register ``url`` as the webhook of the key ``name`` (``""``: none), with a
        new signing secret."""
        return await self._run(self.keys.set_webhook, name, url)
