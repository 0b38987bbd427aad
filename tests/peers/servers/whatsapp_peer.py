"""A fake WhatsApp Business Cloud API on 127.0.0.1, written from Meta's documentation
(developers.facebook.com/docs/whatsapp/cloud-api: messages, media, webhooks).

The Graph side (``/v21.0/…``, bearer token :data:`TOKEN`):

- ``POST /{phone-number-id}/messages``: a ``text``, an ``interactive`` (``button`` or
  ``list``) or a ``template`` message, answered ``{"messages": [{"id": "wamid.…"}]}``,
  or refused as the real API refuses, with Graph's ``{"error": {"code": …}}`` and a 400:
  a text body over 4,096 characters or empty (100); an interactive body over 1,024, more
  than three reply buttons, a button title over 20 characters or repeated, a list with
  more than ten rows or a row title over 24 (131009); a template not registered in that
  language (132001), with the wrong number of parameters (132000), or a parameter with a
  newline, a tab or more than four spaces in a row (132018); a free-form message to a
  user whose last message is older than 24 hours, or who never wrote (131047: the real
  API accepts it and reports the failure in a ``statuses`` webhook; refused here at
  once, which the bot must never rely on either way). A wrong token is a 401 (190).
- ``GET /{media-id}``: a media file registered with :meth:`FakeCloudAPI.add_media`, its
  ``url``, ``mime_type``, ``sha256`` and ``file_size``; an unknown id is a 400 (100).
  ``GET /media/{id}`` downloads it, with the bearer token.

The webhook side: :meth:`FakeCloudAPI.text`, :meth:`FakeCloudAPI.image`,
:meth:`FakeCloudAPI.press`, :meth:`FakeCloudAPI.audio` and :meth:`FakeCloudAPI.statuses`
post a delivery to the bot's webhook, signed with :data:`APP_SECRET` as Meta signs
(``X-Hub-Signature-256``), and record the user's message time (the window opens);
:meth:`FakeCloudAPI.deliver` posts any payload with any signature. The peer's clock is
a :class:`MovableClock` the bot may share: ``clock.advance(hours=25)`` closes windows.
:attr:`FakeCloudAPI.transcript` is the session as lines, for docs/whatsapp.md.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import hashlib
import hmac
import itertools
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import aiohttp
from aiohttp import web

from .loopback import LoopbackServer
from .whatsapp_limits import GraphRefusal, check_interactive, check_text

__all__ = [
    "APP_SECRET",
    "PHONE_NUMBER_ID",
    "TOKEN",
    "VERIFY_TOKEN",
    "FakeCloudAPI",
    "MovableClock",
    "Sent",
]

TOKEN = "EAAtest-access-token"
APP_SECRET = "test-app-secret"
VERIFY_TOKEN = "test-verify-token"
PHONE_NUMBER_ID = "106540352242922"
VERSION = "v21.0"
BUSINESS_NUMBER = "15550001234"
WINDOW = dt.timedelta(hours=24)
RECHECK_S = 0.02
_SPACES = re.compile(r" {5,}")


class MovableClock:
    """The time now, moved by the test (``advance``), shared by the peer and the bot."""

    def __init__(self) -> None:
        self.now = dt.datetime(2026, 11, 29, 12, 0, tzinfo=dt.UTC)

    def __call__(self) -> dt.datetime:
        return self.now

    def advance(self, **delta: float) -> None:
        self.now += dt.timedelta(**delta)


@dataclass(frozen=True)
class Sent:
    """A message the bot sent: to whom, its type and object, what it quotes."""

    id: str
    to: str
    type: str
    body: dict[str, Any]
    reply_to: str = ""

    @property
    def text(self) -> str:
        """What the user reads: a text's body, an interactive's, a template's name and
        parameters."""
        if self.type == "text":
            return str(self.body["body"])
        if self.type == "interactive":
            return str(self.body["body"]["text"])
        parameters = [p["text"] for c in self.body.get("components", []) for p in c["parameters"]]
        return f"[template {self.body['name']}] " + " | ".join(parameters)

    @property
    def buttons(self) -> list[tuple[str, str]]:
        """``(id, title)`` of each reply button, or of each list row."""
        if self.type != "interactive":
            return []
        action = self.body["action"]
        if self.body["type"] == "list":
            rows = [row for section in action["sections"] for row in section["rows"]]
            return [(row["id"], row["title"]) for row in rows]
        return [(b["reply"]["id"], b["reply"]["title"]) for b in action["buttons"]]


@dataclass
class FakeCloudAPI(LoopbackServer):
    """See the module's docstring. ``webhook``: the bot's webhook address, set by the
    test once the bot listens; ``templates``: ``{name: (languages, parameter count)}``
    registered."""

    clock: MovableClock = field(default_factory=MovableClock)
    webhook: str = ""
    templates: dict[str, tuple[set[str], int]] = field(default_factory=dict)
    sent: list[Sent] = field(default_factory=list)
    refused: list[tuple[int, str]] = field(default_factory=list)
    transcript: list[str] = field(default_factory=list)
    inbound_at: dict[str, dt.datetime] = field(default_factory=dict)
    media: dict[str, tuple[bytes, str]] = field(default_factory=dict)
    #: how the transcript names each user (else by their number)
    names: dict[str, str] = field(default_factory=dict)
    _ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    def __post_init__(self) -> None:
        super().__init__()
        self._changed = asyncio.Condition()

    @property
    def graph_url(self) -> str:
        return f"{self.root}/{VERSION}"

    def add_routes(self, app: web.Application) -> None:
        app.router.add_post(f"/{VERSION}/{{phone}}/messages", self._messages)
        app.router.add_get(f"/{VERSION}/{{media_id}}", self._media)
        app.router.add_get("/media/{media_id}", self._download)

    # -- what a test does -----------------------------------------------------------------

    def add_media(self, data: bytes, mime_type: str) -> str:
        media_id = f"{next(self._ids):015d}"
        self.media[media_id] = (data, mime_type)
        return media_id

    def to(self, wa_id: str) -> list[Sent]:
        return [sent for sent in self.sent if sent.to == wa_id]

    async def wait_for(self, condition: Callable[[], Any], timeout: float = 20.0) -> Any:
        """Wait until ``condition()`` is truthy (checked after each call the bot makes,
        and every :data:`RECHECK_S`); return it."""
        async with asyncio.timeout(timeout), self._changed:
            while not (found := condition()):
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(RECHECK_S):
                        await self._changed.wait()
            return found

    async def deliver(self, payload: dict[str, Any], *, signature: str | None = None) -> int:
        """POST ``payload`` to the webhook, signed with :data:`APP_SECRET` unless
        ``signature`` is given; the HTTP status the bot answered."""
        body = json.dumps(payload).encode()
        if signature is None:
            digest = hmac.new(APP_SECRET.encode(), body, hashlib.sha256).hexdigest()
            signature = f"sha256={digest}"
        headers = {"Content-Type": "application/json", "X-Hub-Signature-256": signature}
        async with (
            aiohttp.ClientSession() as session,
            session.post(self.webhook, data=body, headers=headers) as response,
        ):
            return response.status

    def message(
        self, wa_id: str, kind: str, content: dict[str, Any], **extra: Any
    ) -> dict[str, Any]:
        """One user message as a webhook delivery carries it (the window opens when it is
        sent: :meth:`send_user`)."""
        message_id = f"wamid.in{next(self._ids):06d}"
        stamp = str(int(self.clock().timestamp()))
        message: dict[str, Any] = {"from": wa_id, "id": message_id, "timestamp": stamp}
        message.update(type=kind)
        message[kind] = content
        message.update(extra)
        return message

    def payload(self, wa_id: str, messages: list[dict[str, Any]]) -> dict[str, Any]:
        value = {
            "messaging_product": "whatsapp",
            "metadata": {
                "display_phone_number": BUSINESS_NUMBER,
                "phone_number_id": PHONE_NUMBER_ID,
            },
            "contacts": [{"profile": {"name": "A user"}, "wa_id": wa_id}],
            "messages": messages,
        }
        change = {"value": value, "field": "messages"}
        return {
            "object": "whatsapp_business_account",
            "entry": [{"id": "WABA", "changes": [change]}],
        }

    async def send_user(self, wa_id: str, message: dict[str, Any], said: str) -> str:
        """Deliver one user message, signed; its id."""
        self.inbound_at[wa_id] = self.clock()
        self.transcript.append(f"{self.names.get(wa_id, wa_id)} → bot: {said}")
        status = await self.deliver(self.payload(wa_id, [message]))
        assert status == 200, status
        return str(message["id"])

    async def text(
        self, wa_id: str, body: str, *, reply_to: str = "", forwarded: bool = False
    ) -> str:
        context: dict[str, Any] = {}
        if reply_to:
            context = {"from": BUSINESS_NUMBER, "id": reply_to}
        if forwarded:
            context["forwarded"] = True
        extra = {"context": context} if context else {}
        message = self.message(wa_id, "text", {"body": body}, **extra)
        return await self.send_user(wa_id, message, body)

    async def image(self, wa_id: str, data: bytes, mime_type: str, caption: str = "") -> str:
        media_id = self.add_media(data, mime_type)
        content = {
            "id": media_id,
            "mime_type": mime_type,
            "sha256": hashlib.sha256(data).hexdigest(),
        }
        if caption:
            content["caption"] = caption
        message = self.message(wa_id, "image", content)
        return await self.send_user(wa_id, message, f"[picture] {caption}".strip())

    async def press(self, wa_id: str, on: Sent, button_id: str) -> str:
        """Press the button (or choose the list row) ``button_id`` of message ``on``."""
        title = dict(on.buttons)[button_id]
        kind = "list_reply" if on.body.get("type") == "list" else "button_reply"
        content = {"type": kind, kind: {"id": button_id, "title": title}}
        context = {"from": BUSINESS_NUMBER, "id": on.id}
        message = self.message(wa_id, "interactive", content, context=context)
        return await self.send_user(wa_id, message, f"[pressed {title}]")

    async def audio(self, wa_id: str, data: bytes = b"OggS") -> str:
        media_id = self.add_media(data, "audio/ogg; codecs=opus")
        content = {"id": media_id, "mime_type": "audio/ogg; codecs=opus", "voice": True}
        return await self.send_user(wa_id, self.message(wa_id, "audio", content), "[voice note]")

    async def statuses(self, wa_id: str, of: Sent) -> int:
        """A ``delivered`` status of a message the bot sent (the bot must ignore it)."""
        stamp = str(int(self.clock().timestamp()))
        status = {"id": of.id, "status": "delivered", "timestamp": stamp, "recipient_id": wa_id}
        payload = self.payload(wa_id, [])
        payload["entry"][0]["changes"][0]["value"] = {
            "messaging_product": "whatsapp",
            "statuses": [status],
        }
        return await self.deliver(payload)

    # -- the Graph API ------------------------------------------------------------------

    def _authorized(self, request: web.Request) -> None:
        if request.headers.get("Authorization") != f"Bearer {TOKEN}":
            raise GraphRefusal(190, "Invalid OAuth access token - Cannot parse access token", 401)

    async def _answer(self, call: Callable[[], dict[str, Any]]) -> web.Response:
        try:
            answer = call()
        except GraphRefusal as exc:
            self.refused.append((exc.code, exc.message))
            error = {"message": exc.message, "type": "OAuthException", "code": exc.code}
            answer, status = {"error": error}, exc.status
        else:
            status = 200
        async with self._changed:
            self._changed.notify_all()
        return web.json_response(answer, status=status)

    async def _messages(self, request: web.Request) -> web.Response:
        payload = await request.json()

        def send() -> dict[str, Any]:
            self._authorized(request)
            if request.match_info["phone"] != PHONE_NUMBER_ID:
                raise GraphRefusal(100, "Unsupported post request: unknown phone number id")
            return self._send(payload)

        return await self._answer(send)

    def _send(self, payload: dict[str, Any]) -> dict[str, Any]:
        if payload.get("messaging_product") != "whatsapp" or not payload.get("to"):
            raise GraphRefusal(100, "The parameter messaging_product or to is required.")
        kind, to = str(payload.get("type")), str(payload["to"])
        body = payload.get(kind)
        if not isinstance(body, dict):
            raise GraphRefusal(100, f"Param {kind} is required")
        if kind == "text":
            check_text(body)
        elif kind == "interactive":
            check_interactive(body)
        elif kind == "template":
            self._template(body)
        else:
            raise GraphRefusal(131051, f"Unsupported message type {kind}")
        if kind != "template":
            opened = self.inbound_at.get(to)
            if opened is None or self.clock() - opened >= WINDOW:
                raise GraphRefusal(
                    131047,
                    "Re-engagement message: more than 24 hours have passed since the "
                    "recipient last replied to the sender number.",
                )
        reply_to = str((payload.get("context") or {}).get("message_id") or "")
        sent = Sent(f"wamid.out{next(self._ids):06d}", to, kind, body, reply_to)
        self.sent.append(sent)
        self.transcript.append(_transcribed(sent, self.names.get(to, to)))
        return {
            "messaging_product": "whatsapp",
            "contacts": [{"input": to, "wa_id": to}],
            "messages": [{"id": sent.id}],
        }

    def _template(self, body: dict[str, Any]) -> None:
        name = str(body.get("name"))
        language = str((body.get("language") or {}).get("code"))
        registered = self.templates.get(name)
        if registered is None or language not in registered[0]:
            raise GraphRefusal(132001, f"Template name does not exist in the translation: {name}")
        parameters = [p for c in body.get("components", []) for p in c.get("parameters", [])]
        if len(parameters) != registered[1]:
            raise GraphRefusal(132000, "Number of parameters does not match the expected number")
        for parameter in parameters:
            text = str(parameter.get("text", ""))
            if "\n" in text or "\t" in text or _SPACES.search(text) or not text:
                raise GraphRefusal(
                    132018,
                    "Param text cannot have new-line/tab characters or more than 4 "
                    "consecutive spaces",
                )

    async def _media(self, request: web.Request) -> web.Response:
        media_id = request.match_info["media_id"]

        def describe() -> dict[str, Any]:
            self._authorized(request)
            if media_id not in self.media:
                raise GraphRefusal(
                    100, f"Unsupported get request. Object with ID '{media_id}' does not exist"
                )
            data, mime_type = self.media[media_id]
            return {
                "messaging_product": "whatsapp",
                "url": f"{self.root}/media/{media_id}",
                "mime_type": mime_type,
                "sha256": hashlib.sha256(data).hexdigest(),
                "file_size": str(len(data)),
                "id": media_id,
            }

        return await self._answer(describe)

    async def _download(self, request: web.Request) -> web.Response:
        media_id = request.match_info["media_id"]
        if request.headers.get("Authorization") != f"Bearer {TOKEN}" or media_id not in self.media:
            return web.Response(status=404)
        data, mime_type = self.media[media_id]
        return web.Response(body=data, content_type=mime_type.split(";")[0])


def _transcribed(sent: Sent, name: str) -> str:
    lines = [f"bot → {name}: {sent.text}"]
    lines += [f"    [button: {title}]" for _, title in sent.buttons]
    return "\n".join(lines)
