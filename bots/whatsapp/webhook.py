"""The webhook Meta calls: the verification handshake, and the signed deliveries.

- ``GET <path>?hub.mode=subscribe&hub.verify_token=…&hub.challenge=…``: the
  subscription's handshake; answered with the challenge when the token is the
  deployment's verify token, else 403.
- ``POST <path>``: a delivery, signed in ``X-Hub-Signature-256`` (``sha256=`` and the
  HMAC-SHA256 of the raw body under the app secret). A delivery without a valid
  signature is refused (401) and read no further. A signed one is answered 200 at once
  (Meta retries one that is slow or refused) and its messages handed on, each once: a
  message id seen before (Meta delivers again when unsure, for days) is answered only
  the first time, by whichever process of the deployment took it first. The newest
  :data:`SEEN` ids this process took are the fast first answer (:class:`Seen`); an id
  it has not seen is asked of the store (:class:`Seen`'s ``taken``: the check service's
  ``chats.first_message``, which keeps each id as a keyed hash), so that a restart or
  a second replica behind the same URL does not answer it again. A store that cannot
  be asked fails the delivery (500), and Meta delivers it again.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
from collections import OrderedDict
from collections.abc import Awaitable, Callable

from aiohttp import web

from .inbound import Inbound, inbound_messages

__all__ = ["SEEN", "Seen", "Taken", "signature", "verified", "webhook_app"]

log = logging.getLogger(__name__)

#: how many message ids a process remembers, to answer a delivery once
SEEN = 10_000
#: the largest delivery read (Meta's are a few kilobytes)
_MAX_BODY = 1024 * 1024


def signature(body: bytes, app_secret: str) -> str:
    """The ``X-Hub-Signature-256`` value of ``body`` under ``app_secret``."""
    digest = hmac.new(app_secret.encode("utf-8"), body, hashlib.sha256).hexdigest()
    return f"sha256={digest}"


def verified(body: bytes, header: str | None, app_secret: str) -> bool:
    """Whether ``header`` is the signature of ``body`` (compared in constant time)."""
    if not header or not app_secret:
        return False
    return hmac.compare_digest(header.strip().lower(), signature(body, app_secret))


#: whether the deployment takes a message id for the first time (remembering it)
Taken = Callable[[str], Awaitable[bool]]


class Seen:
    """The message ids taken: the newest :data:`SEEN` of this process, then ``taken``
    (the store's answer, for every process on it; ``None``: this process only).

    Args:
        taken: whether the store takes a message id for the first time.
        size: how many ids this process remembers.
    """

    def __init__(self, taken: Taken | None = None, size: int = SEEN) -> None:
        self._ids: OrderedDict[str, None] = OrderedDict()
        self._taken = taken
        self._size = size

    async def first(self, message_id: str) -> bool:
        """Whether ``message_id`` comes for the first time, to this process and to the
        store (it is remembered now, in both).

        Raises:
            Exception: what the store raised; the id is not remembered here, so that
                Meta's next delivery of it is asked again.
        """
        known = message_id in self._ids
        new = not known and (self._taken is None or await self._taken(message_id))
        self._ids[message_id] = None
        self._ids.move_to_end(message_id)
        while len(self._ids) > self._size:
            self._ids.popitem(last=False)
        return new


def webhook_app(
    path: str,
    *,
    app_secret: str,
    verify_token: str,
    on_message: Callable[[Inbound], Awaitable[None] | None],
    seen: Seen | None = None,
) -> web.Application:
    """The webhook as an aiohttp application. ``on_message`` gets each new message; it
    must return quickly (the bot starts the work in a task of its own). ``seen``: the
    message ids taken (see the module's docstring); by default, this process's only."""
    seen = seen or Seen()

    async def handshake(request: web.Request) -> web.Response:
        query = request.query
        token = query.get("hub.verify_token", "")
        if (
            query.get("hub.mode") == "subscribe"
            and verify_token
            and hmac.compare_digest(token.encode(), verify_token.encode())
        ):
            return web.Response(text=query.get("hub.challenge", ""))
        log.warning("webhook handshake refused: wrong mode or verify token")
        return web.Response(status=403, text="verify token mismatch")

    async def delivery(request: web.Request) -> web.Response:
        body = await request.content.read(_MAX_BODY + 1)
        if len(body) > _MAX_BODY:
            return web.Response(status=413)
        if not verified(body, request.headers.get("X-Hub-Signature-256"), app_secret):
            log.warning("webhook delivery refused: no valid X-Hub-Signature-256")
            return web.Response(status=401, text="invalid signature")
        try:
            payload = json.loads(body)
        except ValueError:
            return web.Response(status=400, text="not JSON")
        for message in inbound_messages(payload):
            if await seen.first(message.id):
                result = on_message(message)
                if result is not None:
                    await result
        return web.Response(text="ok")

    app = web.Application(client_max_size=_MAX_BODY)
    app.router.add_get(path, handshake)
    app.router.add_post(path, delivery)
    return app
