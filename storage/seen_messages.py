"""``store.seen_messages``: the chat messages a bot has taken, each answered once.

A platform that pushes messages to a webhook delivers one again when it did not hear
that the first delivery landed (WhatsApp retries for days), and the second delivery may
reach a restarted process or another replica. :meth:`SeenMessages.first` records a
message's keyed id and says whether it came for the first time, atomically: of replicas
taking the same message at once, exactly one is told ``True``. The ids are keyed hashes
(the service's :class:`~bots.service.naming.ChatNamer`), and go after
:data:`SEEN_FOR` (:meth:`SeenMessages.forget`, run by the service's purge).
"""

from __future__ import annotations

import datetime as dt

from .keys import storable_text
from .locked import StorePart
from .rows import to_iso

__all__ = ["SEEN_FOR", "SeenMessages"]

#: how long a message is remembered: longer than a platform retries a delivery (Meta
#: retries a webhook delivery for up to 7 days)
SEEN_FOR = dt.timedelta(days=8)


class SeenMessages(StorePart):
    """The messages taken, by platform and keyed message id."""

    def first(self, platform: str, message: str) -> bool:
        """Record ``message`` (a keyed id) of ``platform`` as taken now; whether it was
        not taken before (by this process or any other on the store)."""
        with self.db.write():
            cursor = self.db.execute(
                "INSERT INTO seen_messages (platform, message, seen_at) VALUES (?, ?, ?)"
                " ON CONFLICT (platform, message) DO NOTHING",
                [storable_text(platform), storable_text(message), self.db.now()],
            )
        return cursor.rowcount == 1

    def forget(self, before: dt.datetime) -> int:
        """Delete the messages taken before ``before``. Returns how many went."""
        with self.db.write():
            cursor = self.db.execute(
                "DELETE FROM seen_messages WHERE seen_at < ?", [to_iso(before)]
            )
        return max(0, cursor.rowcount)
