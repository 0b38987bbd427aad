"""The tipline while it runs: the Cloud API's session, the handlers' context and the
webhook's server, started and stopped together."""

from __future__ import annotations

import functools
import logging
from dataclasses import dataclass
from typing import Self

import aiohttp
from aiohttp import web

from bots.service.checks import CheckService

from .cloud import CloudAPI
from .context import MediaCaps, WhatsAppContext
from .handlers import on_message
from .settings import PLATFORM, WhatsAppSettings
from .webhook import Seen, webhook_app
from .window import Clock, Outbox, Window, utc_now

__all__ = ["Credentials", "WhatsAppTipline"]

log = logging.getLogger(__name__)

#: the longest a Graph API call may take
_CALL_TIMEOUT = aiohttp.ClientTimeout(total=30)


@dataclass(frozen=True)
class Credentials:
    """What the environment holds: the access token, the app secret (it signs the
    deliveries) and the webhook's verify token."""

    access_token: str
    app_secret: str
    verify_token: str


class WhatsAppTipline:
    """The webhook served on ``[whatsapp] listen:port`` (port 0: any free one, then
    :attr:`port`) while the ``async with`` block runs, over ``service``.

    Args:
        settings: the ``[whatsapp]`` section.
        service: the started check service.
        credentials: from the environment.
        caps: the engine's ``[images]`` and ``[audio]`` caps.
        public_url: ``[site] public_url`` (the cards' report links).
    """

    def __init__(
        self,
        settings: WhatsAppSettings,
        service: CheckService,
        credentials: Credentials,
        *,
        caps: MediaCaps | None = None,
        public_url: str = "",
    ) -> None:
        self.settings = settings
        self.service = service
        self.credentials = credentials
        caps = caps or MediaCaps()
        self.images, self.audio = caps.images, caps.audio
        self.public_url = public_url
        #: the time now, for the users' windows (a test sets the fake's, before entering)
        self.clock: Clock = utc_now
        self.port = settings.port
        self._session: aiohttp.ClientSession | None = None
        self._runner: web.AppRunner | None = None
        self._context: WhatsAppContext | None = None

    @property
    def context(self) -> WhatsAppContext:
        if self._context is None:
            raise RuntimeError("the tipline is not running")
        return self._context

    async def __aenter__(self) -> Self:
        self._session = aiohttp.ClientSession(timeout=_CALL_TIMEOUT)
        settings, credentials = self.settings, self.credentials
        cloud = CloudAPI(
            self._session, settings.graph_url, settings.phone_number_id, credentials.access_token
        )
        window = Window(self.service, self.clock)
        self._context = WhatsAppContext(
            self.service,
            Outbox(cloud, window, settings),
            settings,
            images=self.images,
            audio=self.audio,
            public_url=self.public_url,
        )
        app = webhook_app(
            settings.path,
            app_secret=credentials.app_secret,
            verify_token=credentials.verify_token,
            on_message=functools.partial(on_message, self._context),
            seen=Seen(functools.partial(self.service.chats.first_message, PLATFORM)),
        )
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=1.0)
        await self._runner.setup()
        site = web.TCPSite(self._runner, settings.listen, self.port)
        await site.start()
        self.port = self._runner.addresses[0][1]
        log.info("WhatsApp webhook on %s:%d%s", settings.listen, self.port, settings.path)
        return self

    async def stop(self, grace_s: float) -> None:
        """Take no new messages' work; give the running checks ``grace_s`` to finish."""
        if self._context is not None:
            await self._context.work.drain(grace_s)

    async def __aexit__(self, *exc: object) -> None:
        await self.stop(0.0)
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        if self._session is not None:
            await self._session.close()
            self._session = None
