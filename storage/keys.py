"""The stored stand-ins for identities and texts, and the small text helpers of the store.

User ids, chat ids and the keys that find a repeated text never reach the database
as they are: each is an HMAC keyed by a secret that lives outside it (the setting,
else a ``0600`` file next to the database), so a copy of the database alone cannot
be matched back to accounts, chats or texts.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import unicodedata

__all__ = [
    "hash_api_key",
    "hash_chat",
    "hash_message",
    "hash_user",
    "keyed_text_hash",
    "new_check_id",
    "rekey_text_hash",
    "storable_text",
    "text_hash",
]

_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")
_WHITESPACE = re.compile(r"\s+")


def _keyed(secret: bytes, message: str) -> str:
    return hmac.new(secret, storable_text(message).encode("utf-8"), hashlib.sha256).hexdigest()


def hash_user(secret: bytes, platform: str, user_id: str) -> str:
    """The stored stand-in for a platform user id.

    Args:
        secret: the key from :func:`load_or_create_secret`.
        platform: ``telegram``, ``discord``, ``cli`` ….
        user_id: the platform's user id.

    Returns:
        HMAC-SHA256 of ``"{platform}:{user_id}"``, as 64 hex characters.
    """
    return _keyed(secret, f"{platform}:{user_id}")


def hash_chat(secret: bytes, platform: str, chat_id: str) -> str:
    """The stored stand-in for a chat id. A private chat's id is its user's id on
    Telegram, so no chat id is stored as it is.

    Returns:
        HMAC-SHA256 of ``"chat:{platform}:{chat_id}"``, as 64 hex characters (never
        equal to a user's hash, whose message has no ``chat:`` prefix).
    """
    return _keyed(secret, f"chat:{platform}:{chat_id}")


def hash_message(secret: bytes, platform: str, message_id: str) -> str:
    """The stored stand-in for a platform's message id (a WhatsApp message id encodes
    the sender's phone number).

    Returns:
        HMAC-SHA256 of ``"message:{platform}:{message_id}"``, as 64 hex characters.
    """
    return _keyed(secret, f"message:{platform}:{message_id}")


def hash_api_key(secret: bytes, key: str) -> str:
    """The stored stand-in for an API key (:mod:`storage.api_keys`): the key itself is
    shown once, when it is made, and never stored.

    Returns:
        HMAC-SHA256 of ``"api-key:{key}"``, as 64 hex characters.
    """
    return _keyed(secret, f"api-key:{key}")


def keyed_text_hash(secret: bytes, text: str) -> str:
    """The stored key that finds exact repeats: :func:`text_hash` under the HMAC, so
    that nobody holding only the database can test whether a text was checked.

    Returns:
        HMAC-SHA256 of ``"text:" + text_hash(text)``, as 64 hex characters.
    """
    return rekey_text_hash(secret, text_hash(text))


def rekey_text_hash(secret: bytes, digest: str) -> str:
    """:func:`keyed_text_hash` from the plain digest (for rows stored before the key)."""
    return _keyed(secret, f"text:{digest}")


def new_check_id() -> str:
    """A new check id: 16 URL-safe characters (96 random bits), fit for callback data,
    starting with a letter or digit: an id that starts with "-" reads as an option
    on a command line (``zofia show -x…``).

    Returns:
        The id.
    """
    while True:
        check_id = secrets.token_urlsafe(12)
        if check_id[0].isalnum():
            return check_id


def text_hash(text: str) -> str:
    """The key that finds exact repeats of a post.

    The text is NFKC-normalised, case-folded, its whitespace collapsed and
    stripped; broken surrogates become U+FFFD.

    Args:
        text: the post's text.

    Returns:
        SHA-256 of the normalised text, as 64 hex characters.
    """
    normalized = unicodedata.normalize("NFKC", storable_text(text)).casefold()
    normalized = _WHITESPACE.sub(" ", normalized).strip()
    return hashlib.sha256(normalized.encode("utf-8")).hexdigest()


def storable_text(text: str) -> str:
    """``text`` with lone surrogates (which UTF-8 cannot encode) and NUL (which a
    PostgreSQL text cannot hold) replaced by U+FFFD, so both engines store the same.

    Args:
        text: any Python string.

    Returns:
        A string that encodes to UTF-8.
    """
    return _UNSTORABLE.sub("\ufffd", text)
