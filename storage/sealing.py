"""Raw platform ids encrypted at rest, with a key derived from the store's secret.

A few rows must hold a platform's raw ids for a while, to reach a chat again: where a
card was shown (``shown_cards``: its chat, and a Discord card's interaction token), for
corrections, and where a card is to be delivered (``deliveries``), until it is posted.
A private chat's id is its user's id, so these are sealed: encrypted with Fernet
(AES-128-CBC with an HMAC-SHA256, from the ``cryptography`` package) under a key
derived from the store's secret with HKDF-SHA256. The secret lives outside the
database (:mod:`storage.database`), so a copy of the database alone holds no raw id;
the bots open a sealed id only to send to it. What must be found by chat is found by
its keyed hash (:func:`~storage.keys.hash_chat`), never by the sealed text, which is
different each time it is written.
"""

from __future__ import annotations

import base64

from cryptography.fernet import Fernet, InvalidToken
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from .errors import StorageError
from .keys import hash_chat

__all__ = ["Sealer"]

# HKDF's context: this key is for sealing ids, and for nothing else the secret keys.
_INFO = b"zofia: raw platform ids at rest"


def _fernet(secret: bytes) -> Fernet:
    key = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=_INFO).derive(secret)
    return Fernet(base64.urlsafe_b64encode(key))


class Sealer:
    """Seals and opens raw ids under the store's ``secret``; keys chats for lookups.

    Args:
        secret: the store's secret; ``None`` (a store opened without it, as some tests
            and read-only tools do): reading and writing sealed ids raise
            :class:`~storage.errors.StorageError`.
    """

    def __init__(self, secret: bytes | None) -> None:
        self._secret = secret
        self._fernet = None if secret is None else _fernet(secret)

    def _key(self) -> Fernet:
        if self._fernet is None:
            raise StorageError("raw ids are sealed with the store's secret: open it with it")
        return self._fernet

    def seal(self, text: str) -> str:
        """``text`` encrypted (a Fernet token, ASCII); ``""`` stays ``""``."""
        if not text:
            return ""
        return self._key().encrypt(text.encode("utf-8")).decode("ascii")

    def open(self, sealed: str) -> str:
        """What :meth:`seal` sealed; ``""`` stays ``""``.

        Raises:
            StorageError: it was sealed under another secret, or is no sealed text.
        """
        if not sealed:
            return ""
        try:
            return self._key().decrypt(sealed.encode("ascii")).decode("utf-8")
        except (InvalidToken, UnicodeError) as exc:
            raise StorageError("a sealed id does not open with the store's secret") from exc

    def chat_key(self, platform: str, chat: str) -> str:
        """The keyed hash of a raw chat id (:func:`~storage.keys.hash_chat`): how a sealed
        one is found."""
        if self._secret is None:
            raise StorageError("raw ids are sealed with the store's secret: open it with it")
        return hash_chat(self._secret, platform, chat)
