"""One :class:`asyncio.Lock` per key (a section of a check, say), kept only while someone
holds or waits for it."""

from __future__ import annotations

import asyncio
import weakref

__all__ = ["KeyedLocks"]


class KeyedLocks:
    """The locks of this process's handlers, one per key while it is in use."""

    def __init__(self) -> None:
        self._locks: weakref.WeakValueDictionary[str, asyncio.Lock] = weakref.WeakValueDictionary()

    def __call__(self, key: str) -> asyncio.Lock:
        """The lock of ``key``, shared by everyone using it at the same time."""
        found = self._locks.get(key)
        if found is None:
            found = asyncio.Lock()
            self._locks[key] = found
        return found
