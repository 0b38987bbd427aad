"""What a webhook delivery brings: the users' messages, read into :class:`Inbound`
records; the delivery statuses of what the bot sent (``statuses``) are left out.

A delivery is ``{"object": "whatsapp_business_account", "entry": [{"changes":
[{"field": "messages", "value": {"messages": [...], "statuses": [...]}}]}]}``; each
message names its sender (``from``, their wa_id), its id (``wamid.…``), its ``type``
and that type's object, and a ``context`` when it quotes a message (``id``) or was
forwarded (``forwarded``).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

__all__ = ["Inbound", "inbound_messages"]


@dataclass(frozen=True)
class Inbound:
    """One user message.

    Args:
        id: its id (a duplicate delivery carries the same).
        sender: the user's wa_id (their phone number: never logged or stored as it is).
        kind: ``text``, ``image``, ``button`` (a reply button or a list row pressed), or
            the type WhatsApp named (``audio``, ``sticker`` …: not checked).
        text: a text's body, or an image's caption.
        media_id: an image's or an audio's media id (``GET /{media-id}`` finds it).
        button: the id of the button or row pressed.
        reply_to: the id of the message it quotes (a reply to a card), if any.
        forwarded: WhatsApp marked it forwarded.
    """

    id: str
    sender: str
    kind: str
    text: str = ""
    media_id: str = ""
    button: str = ""
    reply_to: str = ""
    forwarded: bool = False


def _values(payload: Any) -> Iterator[dict[str, Any]]:
    if not isinstance(payload, dict):
        return
    entries = payload.get("entry")
    for entry in entries if isinstance(entries, list) else []:
        changes = entry.get("changes") if isinstance(entry, dict) else None
        for change in changes if isinstance(changes, list) else []:
            if isinstance(change, dict) and change.get("field") == "messages":
                value = change.get("value")
                if isinstance(value, dict):
                    yield value


def _read(message: dict[str, Any]) -> Inbound | None:
    kind = str(message.get("type") or "")
    context = message.get("context") or {}
    base = Inbound(
        id=str(message.get("id") or ""),
        sender=str(message.get("from") or ""),
        kind=kind or "unknown",
        reply_to=str(context.get("id") or ""),
        forwarded=bool(context.get("forwarded") or context.get("frequently_forwarded")),
    )
    if not base.id or not base.sender:
        return None
    if kind == "text":
        return replace(base, text=str((message.get("text") or {}).get("body") or ""))
    if kind == "image":
        image = message.get("image") or {}
        caption, media = str(image.get("caption") or ""), str(image.get("id") or "")
        return replace(base, text=caption, media_id=media)
    if kind == "interactive":
        interactive = message.get("interactive") or {}
        reply = interactive.get("button_reply") or interactive.get("list_reply") or {}
        return replace(base, kind="button", button=str(reply.get("id") or ""))
    if kind == "audio":  # a voice note (``voice``: recorded in the app) or an audio file
        audio = message.get("audio") or {}
        return replace(base, media_id=str(audio.get("id") or ""))
    if kind == "button":  # a template's quick-reply button
        payload = str((message.get("button") or {}).get("payload") or "")
        return replace(base, kind="button", button=payload)
    return base


def inbound_messages(payload: Any) -> list[Inbound]:
    """The users' messages in a webhook delivery, in order; statuses and anything
    malformed are left out."""
    found = []
    for value in _values(payload):
        messages = value.get("messages")
        for message in messages if isinstance(messages, list) else []:
            if isinstance(message, dict) and (inbound := _read(message)) is not None:
                found.append(inbound)
    return found
