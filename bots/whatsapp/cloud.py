"""A thin client of the WhatsApp Business Cloud API: the three Graph endpoints the
tipline uses, over aiohttp.

- ``POST /{phone-number-id}/messages``: a text, an interactive message with reply
  buttons, or a template (:meth:`CloudAPI.send`); the answer names the new message's id
  (``wamid.…``).
- ``GET /{media-id}``: where an inbound image is, its media type and declared size
  (:meth:`CloudAPI.media`), then ``GET`` of that address, with the same bearer token
  (:meth:`CloudAPI.download`).

A refusal comes back as Graph's ``{"error": {"code": …, "message": …}}`` and is raised as
:class:`GraphError` with its code: ``131047`` is a free-form message outside the user's
24-hour customer-service window (:data:`OUTSIDE_WINDOW`). Why not pywa: docs/whatsapp.md.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import aiohttp

__all__ = ["OUTSIDE_WINDOW", "CloudAPI", "GraphError", "Media"]

log = logging.getLogger(__name__)

#: Graph's code for a free-form message to a user whose last message is over 24 h old
OUTSIDE_WINDOW = 131047
#: a media download larger than this is cut off (WhatsApp's own cap on images is 5 MB)
_MAX_DOWNLOAD = 16 * 1024 * 1024


class GraphError(Exception):
    """The Graph API refused a call: its HTTP ``status``, Graph's error ``code`` and its
    message (never the access token)."""

    def __init__(self, status: int, code: int, message: str) -> None:
        super().__init__(f"Graph API error {code} (HTTP {status}): {message}")
        self.status = status
        self.code = code


@dataclass(frozen=True)
class Media:
    """An inbound media file as ``GET /{media-id}`` describes it (its address lives
    five minutes)."""

    url: str
    mime_type: str
    size: int | None


class CloudAPI:
    """The Cloud API of one business phone number.

    Args:
        session: the aiohttp session it sends through (its owner closes it).
        graph_url: the Graph API's root with its version (``[whatsapp] graph_url``).
        phone_number_id: the business phone number's id.
        token: the access token (a system user's), sent as a bearer token.
    """

    def __init__(
        self, session: aiohttp.ClientSession, graph_url: str, phone_number_id: str, token: str
    ) -> None:
        self._session = session
        self._root = graph_url.rstrip("/")
        self._messages = f"{self._root}/{phone_number_id}/messages"
        self._auth = {"Authorization": f"Bearer {token}"}

    async def send(self, to: str, kind: str, body: dict[str, Any], reply_to: str = "") -> str:
        """Send one message of ``kind`` (``text``, ``interactive``, ``template``) to the
        user ``to`` (their wa_id); ``reply_to``: the message it quotes. Its id.

        Raises:
            GraphError: the API refused it.
        """
        payload: dict[str, Any] = {
            "messaging_product": "whatsapp",
            "recipient_type": "individual",
            "to": to,
            "type": kind,
            kind: body,
        }
        if reply_to:
            payload["context"] = {"message_id": reply_to}
        answer = await self._call("POST", self._messages, json=payload)
        messages = answer.get("messages") or [{}]
        return str(messages[0].get("id", ""))

    async def media(self, media_id: str) -> Media:
        """Where an inbound media file is, and what it declares.

        Raises:
            GraphError: no such media (an unknown id, or one past its 30 days).
        """
        answer = await self._call("GET", f"{self._root}/{media_id}")
        size = answer.get("file_size")
        return Media(
            str(answer.get("url", "")),
            str(answer.get("mime_type", "")),
            int(size) if size is not None else None,
        )

    async def download(self, media: Media) -> bytes:
        """The bytes of ``media`` (its address is Meta's, fetched with the bearer token).

        Raises:
            GraphError: the download was refused.
        """
        async with self._session.get(media.url, headers=self._auth) as response:
            if response.status != 200:
                raise GraphError(response.status, 0, "the media download was refused")
            return await response.content.read(_MAX_DOWNLOAD)

    async def _call(self, method: str, url: str, **kwargs: Any) -> dict[str, Any]:
        async with self._session.request(method, url, headers=self._auth, **kwargs) as response:
            try:
                answer = await response.json(content_type=None)
            except ValueError:
                answer = {}
            if not isinstance(answer, dict):
                answer = {}
            error = answer.get("error")
            if response.status >= 400 or isinstance(error, dict):
                error = error if isinstance(error, dict) else {}
                raise GraphError(
                    response.status, int(error.get("code") or 0), str(error.get("message", ""))
                )
            return answer
