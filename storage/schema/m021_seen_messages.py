"""Migration m021: the chat messages a bot has handled, so that a redelivery is not.

A chat platform that pushes its messages to a webhook (WhatsApp's Cloud API) delivers
one again when it is unsure that the first delivery landed, possibly after a restart or
to another replica. ``seen_messages`` holds each message a bot took (its platform and
the keyed hash of its id, never the id: a WhatsApp message id encodes the phone number)
and when, so that every replica on the store answers it once; the purge forgets them
once no redelivery can come (:data:`storage.seen_messages.SEEN_FOR`).
"""

from __future__ import annotations

from ..sql import StoreDatabase

__all__ = ["apply"]


def apply(db: StoreDatabase, secret: bytes | None) -> None:
    db.execute(
        """
        CREATE TABLE seen_messages (
            platform TEXT NOT NULL,
            message TEXT NOT NULL,
            seen_at TEXT NOT NULL,
            PRIMARY KEY (platform, message)
        )
        """
    )
    db.execute("CREATE INDEX seen_messages_by_time ON seen_messages (seen_at)")
