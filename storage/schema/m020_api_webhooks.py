"""Migration m020: the HTTP API's webhooks.

A key may name a ``webhook_url`` (``api_keys.webhook_url``; ``webhook_nonce`` is what its
signing secret is derived from with the store's secret, so that no signing secret is
stored: a new nonce is a new secret), registered at ``webhook_since``. ``webhook_calls``
holds every call the service owes a key's webhook (``done`` once a check ends,
``corrected`` once per correction): what it says, whether it was delivered, the attempts
made and when the next one is due, so that ``GET /v1/checks/<id>`` shows what was
delivered and a restart loses none.
"""

from __future__ import annotations

from ..sql import StoreDatabase

__all__ = ["apply"]


def apply(db: StoreDatabase, secret: bytes | None) -> None:
    db.execute("ALTER TABLE api_keys ADD COLUMN webhook_url TEXT NOT NULL DEFAULT ''")
    db.execute("ALTER TABLE api_keys ADD COLUMN webhook_nonce TEXT NOT NULL DEFAULT ''")
    db.execute("ALTER TABLE api_keys ADD COLUMN webhook_since TEXT")
    db.execute(
        """
        CREATE TABLE webhook_calls (
            id TEXT PRIMARY KEY,
            check_id TEXT NOT NULL REFERENCES checks(id),
            key_name TEXT NOT NULL,
            event TEXT NOT NULL CHECK (event IN ('done', 'corrected')),
            verdict TEXT NOT NULL DEFAULT '',
            status TEXT NOT NULL DEFAULT 'pending'
                CHECK (status IN ('pending', 'delivered', 'given_up')),
            attempts INTEGER NOT NULL DEFAULT 0,
            next_at TEXT NOT NULL,
            last_error TEXT NOT NULL DEFAULT '',
            created_at TEXT NOT NULL,
            delivered_at TEXT
        )
        """
    )
    db.execute("CREATE INDEX webhook_calls_due ON webhook_calls (status, next_at)")
    db.execute("CREATE INDEX webhook_calls_check ON webhook_calls (check_id)")
