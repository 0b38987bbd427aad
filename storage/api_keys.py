"""The keys of the HTTP API (``zofia api``): made, listed and revoked by the operator
(``zofia api-key``), looked up on every request.

A key is shown once, when it is made, and stored only as its keyed hash
(:func:`~storage.keys.hash_api_key`, under the same secret as the stored user ids), so
a copy of the database alone cannot be used to call the API. Each key has a name; the
checks a key asks for are asked under that name (it is their chat), and a revoked key
keeps its row, so that its name never passes to another key with its checks.
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass

from .errors import StorageError
from .keys import hash_api_key
from .locked import LockedDatabase
from .rows import from_iso

__all__ = ["KEY_NAME", "KEY_PREFIX", "ApiKey", "ApiKeyError", "ApiKeys", "Webhook"]

#: what a key's name may be: a tipline's or a partner's short name
KEY_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,39}")
#: how every key starts, so that one pasted somewhere is recognisable (secret scanners)
KEY_PREFIX = "zofia_"


class ApiKeyError(StorageError):
    """A key cannot be made or revoked as asked; the message says why."""


@dataclass(frozen=True, slots=True)
class ApiKey:
    """A key as the operator sees it: its name, when it was made, when revoked."""

    name: str
    created_at: dt.datetime
    revoked_at: dt.datetime | None


@dataclass(frozen=True, slots=True)
class Webhook:
    """A key's webhook: where its calls go, the secret they are signed with (derived from
    the store's secret and the registration's nonce: never stored), and since when."""

    key_name: str
    url: str
    secret: str
    since: str


class ApiKeys:
    """The ``api_keys`` table of a store.

    Args:
        db: the store's database, with its lock and clock.
        secret: the store's HMAC key (the one its user ids are keyed with).
    """

    def __init__(self, db: LockedDatabase, secret: bytes) -> None:
        self.db = db
        self.secret = secret

    def add(self, name: str) -> str:
        """Make a key named ``name`` and return it; only its hash is stored.

        Raises:
            ApiKeyError: the name is not a short name, or a key (revoked or not) has it.
        """
        if not KEY_NAME.fullmatch(name):
            raise ApiKeyError(
                f"{name[:40]!r} is not a key name: use up to 40 letters, digits, '.', '_'"
                " or '-', starting with a letter or a digit"
            )
        key = KEY_PREFIX + secrets.token_urlsafe(32)
        with self.db.write():
            taken = self.db.execute("SELECT revoked_at FROM api_keys WHERE name = ?", [name])
            row = taken.fetchone()
            if row is not None:
                revoked = " by a revoked key (its checks stay its own)" if row[0] else ""
                raise ApiKeyError(f"the name {name!r} is taken{revoked}; pick another")
            self.db.table("api_keys").insert(
                {
                    "name": name,
                    "key_hash": hash_api_key(self.secret, key),
                    "created_at": self.db.now(),
                    "revoked_at": None,
                }
            )
        return key

    def all(self) -> list[ApiKey]:
        """Every key, revoked ones too, oldest first."""
        rows = self.db.rows("SELECT name, created_at, revoked_at FROM api_keys ORDER BY created_at")
        return [
            ApiKey(name, dt.datetime.fromisoformat(created), from_iso(revoked))
            for name, created, revoked in rows
        ]

    def revoke(self, name: str) -> None:
        """Revoke the key named ``name``: from now on it is refused.

        Raises:
            ApiKeyError: no key has that name, or it is revoked already.
        """
        with self.db.write():
            done = self.db.execute(
                "UPDATE api_keys SET revoked_at = ? WHERE name = ? AND revoked_at IS NULL",
                [self.db.now(), name],
            )
            if done.rowcount == 1:
                return
            known = self.db.execute("SELECT 1 FROM api_keys WHERE name = ?", [name]).fetchone()
        raise ApiKeyError(
            f"the key {name!r} is revoked already" if known else f"no key is named {name!r}"
        )

    def hash_of(self, key: str) -> str | None:
        """The keyed hash ``key`` is stored under if it is a key (no store read);
        ``None`` for what cannot be one (another prefix, or too long)."""
        if not key.startswith(KEY_PREFIX) or len(key) > 200:
            return None
        return hash_api_key(self.secret, key)

    def active_hashes(self) -> frozenset[str]:
        """The keyed hashes of every key not revoked, in one read: a server may refuse a
        key whose hash is not among them without reading the store for it."""
        rows = self.db.rows("SELECT key_hash FROM api_keys WHERE revoked_at IS NULL")
        return frozenset(str(row[0]) for row in rows)

    def name_of(self, key: str) -> str | None:
        """The name of the key ``key`` if it is one and not revoked, else ``None``."""
        digest = self.hash_of(key)
        if digest is None:
            return None
        found = self.db.first(
            "SELECT name FROM api_keys WHERE key_hash = ? AND revoked_at IS NULL", [digest]
        )
        return None if found is None else str(found[0])

    def set_webhook(self, name: str, url: str) -> Webhook:
        """Register ``url`` as the webhook of the active key ``name`` (``""``: none),
        with a new signing secret (a new nonce: the old secret stops at once).

        Raises:
            ApiKeyError: no active key has that name.
        """
        nonce = secrets.token_urlsafe(16) if url else ""
        now = self.db.now()
        with self.db.write():
            done = self.db.execute(
                "UPDATE api_keys SET webhook_url = ?, webhook_nonce = ?, webhook_since = ?"
                " WHERE name = ? AND revoked_at IS NULL",
                [url, nonce, now if url else None, name],
            )
        if done.rowcount != 1:
            raise ApiKeyError(f"no active key is named {name!r}")
        return Webhook(name, url, self._signing_secret(name, nonce) if url else "", now)

    def webhooks(self) -> list[Webhook]:
        """Every active key's webhook."""
        rows = self.db.rows(
            "SELECT name, webhook_url, webhook_nonce, webhook_since FROM api_keys"
            " WHERE revoked_at IS NULL AND webhook_url != '' ORDER BY name"
        )
        return [
            Webhook(str(n), str(url), self._signing_secret(str(n), str(nonce)), str(since))
            for n, url, nonce, since in rows
        ]

    def _signing_secret(self, name: str, nonce: str) -> str:
        digest = hmac.new(self.secret, f"webhook:{name}:{nonce}".encode(), hashlib.sha256)
        return "whsec_" + base64.urlsafe_b64encode(digest.digest()).decode().rstrip("=")
