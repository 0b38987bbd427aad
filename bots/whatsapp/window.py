"""The 24-hour customer-service window, and the one place that sends to a user.

WhatsApp lets a business send a free-form message (a text, buttons) to a user only
within 24 hours of that user's last message to it; past that, only a template the
business registered with Meta (the API refuses anything else with error 131047). The
time of each user's last message is kept as a chat setting (:class:`Window`: under the
chat's keyed hash, never the phone number), so that every replica and a restart know it.

:class:`Outbox` sends: a free-form message while the window is open, else the
template given for it (``[whatsapp] correction_template`` or ``card_template``), else
nothing, logged. A free-form message the API still refuses as outside the window (a
clock apart from Meta's) falls back to its template the same way.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from bots.service.checks import CheckService

from .cloud import OUTSIDE_WINDOW, CloudAPI, GraphError
from .settings import PLATFORM, WhatsAppSettings

__all__ = ["INBOUND_KEY", "WINDOW", "Clock", "Outbox", "Template", "Window", "utc_now"]

log = logging.getLogger(__name__)

#: how long after a user's message a business may send them a free-form message
WINDOW = dt.timedelta(hours=24)
#: the chat setting that holds the time of the user's last message (ISO 8601, UTC)
INBOUND_KEY = "whatsapp_inbound_at"
#: a template parameter's longest text (the whole body may hold 1,024 characters)
_MAX_PARAMETER = 400

#: what tells the time (a test's clock moves)
Clock = Callable[[], dt.datetime]


def utc_now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


class Window:
    """Each user's customer-service window, kept in the store's chat settings.

    Args:
        service: the check service (its chat records).
        clock: the time now (UTC).
    """

    def __init__(self, service: CheckService, clock: Clock = utc_now) -> None:
        self._chats = service.chats
        self._clock = clock

    async def opened(self, wa_id: str) -> None:
        """The user ``wa_id`` wrote now: their window is open for 24 hours."""
        await self._chats.set_settings(PLATFORM, wa_id, {INBOUND_KEY: self._clock().isoformat()})

    async def is_open(self, wa_id: str) -> bool:
        """Whether a free-form message may be sent to ``wa_id`` now."""
        found = await self._chats.settings(PLATFORM, wa_id, {INBOUND_KEY: ""})
        stamp = str(found[INBOUND_KEY] or "")
        if not stamp:
            return False
        return self._clock() - dt.datetime.fromisoformat(stamp) < WINDOW


@dataclass(frozen=True)
class Template:
    """A template message: its registered ``name`` (``""``: none registered) and the
    texts of its body's parameters, ``{{1}}``, ``{{2}}`` …, in the chat's language
    (``tag``: its BCP 47 tag; a template not registered in it is sent in the first of
    ``[whatsapp] template_languages``)."""

    name: str
    parameters: tuple[str, ...]
    tag: str = "en"


def _parameter(text: str) -> str:
    """A template parameter as the API takes it: one line, no run of spaces."""
    flat = " ".join(text.split())
    return flat if len(flat) <= _MAX_PARAMETER else flat[: _MAX_PARAMETER - 1] + "…"


class Outbox:
    """Sends to users, minding their window (see the module's docstring).

    Args:
        cloud: the Cloud API.
        window: the users' windows.
        settings: the ``[whatsapp]`` section (the template languages).
    """

    def __init__(self, cloud: CloudAPI, window: Window, settings: WhatsAppSettings) -> None:
        self.cloud = cloud
        self.window = window
        self._languages = settings.template_languages or ["en"]

    async def send(
        self,
        to: str,
        kind: str,
        body: dict[str, Any],
        *,
        reply_to: str = "",
        template: Template | None = None,
    ) -> str:
        """Send a free-form message (``kind`` and ``body`` as :meth:`CloudAPI.send` takes
        them) to ``to`` inside the window, else ``template``; the id of what was sent,
        ``""`` when nothing was (outside the window without a template).

        Raises:
            GraphError: the API refused it (for another reason than the window).
        """
        if await self.window.is_open(to):
            try:
                return await self.cloud.send(to, kind, body, reply_to)
            except GraphError as exc:
                if exc.code != OUTSIDE_WINDOW:
                    raise
                log.info("a %s message fell outside the window: its template instead", kind)
        if template is None or not template.name:
            log.info("outside the customer-service window, with no template: nothing sent")
            return ""
        return await self.cloud.send(to, "template", self._template(template))

    async def text(
        self, to: str, text: str, *, reply_to: str = "", template: Template | None = None
    ) -> str:
        """Send ``text`` (see :meth:`send`), without a link preview."""
        body = {"body": text, "preview_url": False}
        return await self.send(to, "text", body, reply_to=reply_to, template=template)

    async def buttons(
        self,
        to: str,
        text: str,
        buttons: Sequence[tuple[str, str]],
        *,
        reply_to: str = "",
        template: Template | None = None,
    ) -> str:
        """Send ``text`` with reply ``buttons`` (``(id, title)``; at most three)."""
        replies = [{"type": "reply", "reply": {"id": i, "title": t}} for i, t in buttons]
        body = {"type": "button", "body": {"text": text}, "action": {"buttons": replies}}
        return await self.send(to, "interactive", body, reply_to=reply_to, template=template)

    def _template(self, template: Template) -> dict[str, Any]:
        code = template.tag if template.tag in self._languages else self._languages[0]
        parameters = [{"type": "text", "text": _parameter(p)} for p in template.parameters]
        return {
            "name": template.name,
            "language": {"code": code},
            "components": [{"type": "body", "parameters": parameters}],
        }
