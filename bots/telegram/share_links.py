"""The links a Telegram card is shared by: a share token for its check, the deep link to
the bot that carries it, and the Share button's address (Telegram's share sheet).

A card's Share button opens ``https://t.me/share/url?url=<deep link>&text=…``: the
sharer picks a chat, and the message they send holds the deep link
``https://t.me/<bot username>?start=c_<token>``. Whoever opens it starts a private chat
with the bot, whose client sends ``/start c_<token>`` (:mod:`.shared` answers it).

The token is not the check id. A check id is the key of its report page, the only key
there is; a private chat's check id is seen only in that chat. So the token seals the
id with the store's secret: a deterministic authenticated encryption (SIV, built from
HMAC-SHA256 alone): ``tag = HMAC(k1, id)[:8]``, ``sealed = id XOR HMAC(k2, tag)``,
the token is ``base64url(tag + sealed)`` (32 characters for a 16-character id, within
the 64 of ``[A-Za-z0-9_-]`` a start parameter may have). The same check always gets the
same token, and nothing is stored; without the secret a token can neither be opened
into its check id nor forged (a token whose tag does not match opens nothing). Every
replica of one deployment shares the store's secret, so any of them opens any token;
a new secret makes the tokens shared before it open nothing.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import re
from urllib.parse import quote, urlencode

from bots.render.words import ENGLISH, N_, Words

__all__ = [
    "SHARE_PREFIX",
    "SHARE_TEXT",
    "deep_link",
    "share_token",
    "share_url",
    "shared_check_id",
]

#: what starts a shared check's start parameter (``/start c_<token>``)
SHARE_PREFIX = "c_"
#: the text Telegram's share sheet puts before the link (the sharer may change it)
SHARE_TEXT = N_("A fact-check of a post: open it to see the verdict and its sources.")
_TAG = 8  # bytes of the token's tag: a forged token matches one in 2**64
#: the longest check id a token holds (one HMAC-SHA256 of stream): its token is 56
#: characters, within the 64 a start parameter may have with its prefix
_MAX_ID = 32
_TOKEN = re.compile(r"[A-Za-z0-9_-]{12,56}")
_USERNAME = re.compile(r"[A-Za-z0-9_]{4,32}")


def _keys(secret: bytes) -> tuple[bytes, bytes]:
    """The tag's key and the stream's, derived from the store's secret for this use only."""
    tag = hmac.new(secret, b"zofia share token: tag", hashlib.sha256).digest()
    stream = hmac.new(secret, b"zofia share token: stream", hashlib.sha256).digest()
    return tag, stream


def _xor(data: bytes, stream: bytes) -> bytes:
    return bytes(a ^ b for a, b in zip(data, stream, strict=False))  # data is the shorter


def share_token(secret: bytes, check_id: str) -> str:
    """The token that stands for ``check_id`` in a shared link (see the module's docstring).

    Raises:
        ValueError: ``check_id`` is empty, not ASCII, or longer than 32 characters.
    """
    plain = check_id.encode("ascii")
    if not 0 < len(plain) <= _MAX_ID:
        raise ValueError(f"a check id of {len(plain)} characters cannot be shared")
    tag_key, stream_key = _keys(secret)
    tag = hmac.new(tag_key, plain, hashlib.sha256).digest()[:_TAG]
    stream = hmac.new(stream_key, tag, hashlib.sha256).digest()
    return base64.urlsafe_b64encode(tag + _xor(plain, stream)).rstrip(b"=").decode()


def shared_check_id(secret: bytes, token: str) -> str | None:
    """The check id ``token`` stands for; ``None`` for a token this secret did not make
    (mistyped, cut, forged, or made with another secret)."""
    if not _TOKEN.fullmatch(token):
        return None
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
    except (binascii.Error, ValueError):
        return None
    tag, sealed = raw[:_TAG], raw[_TAG:]
    if len(tag) < _TAG or not 0 < len(sealed) <= _MAX_ID:
        return None
    tag_key, stream_key = _keys(secret)
    plain = _xor(sealed, hmac.new(stream_key, tag, hashlib.sha256).digest())
    expected = hmac.new(tag_key, plain, hashlib.sha256).digest()[:_TAG]
    if not hmac.compare_digest(tag, expected):
        return None
    return plain.decode("ascii", errors="replace")


def deep_link(username: str, token: str) -> str:
    """The link that opens a private chat with the bot ``username`` and sends it
    ``/start c_<token>``."""
    return f"https://t.me/{username}?start={SHARE_PREFIX}{token}"


def share_url(username: str, token: str, words: Words = ENGLISH) -> str:
    """The Share button's address: Telegram's share sheet, holding the :func:`deep_link`
    and :data:`SHARE_TEXT` in ``words``; ``""`` when the bot's username is unknown or
    not one Telegram gives (no button then)."""
    if not _USERNAME.fullmatch(username):
        return ""
    query = {"url": deep_link(username, token), "text": words(SHARE_TEXT)}
    return "https://t.me/share/url?" + urlencode(query, quote_via=quote)
