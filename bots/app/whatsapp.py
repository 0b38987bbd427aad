"""Running the WhatsApp tipline: the service, the webhook and the deliveries, until
SIGINT or SIGTERM; what it needs from the environment said in one sentence when it is
missing."""

from __future__ import annotations

import asyncio
import functools
import logging
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING

from bots.app.deliveries import delivering
from bots.app.runtime import StartupError, run_until_stopped, serving_with_site, stop_on_signals
from bots.app.settings import Settings
from bots.chat.corrections import sender
from bots.whatsapp.context import MediaCaps
from bots.whatsapp.corrections import post_delivered, send_correction
from bots.whatsapp.settings import PLATFORM
from bots.whatsapp.tipline import Credentials, WhatsAppTipline

if TYPE_CHECKING:
    from zofia_engine.engine import Engine

__all__ = ["credentials_from_env", "run_tipline", "run_whatsapp"]

log = logging.getLogger(__name__)


def credentials_from_env(
    settings: Settings, environ: Mapping[str, str] | None = None
) -> Credentials:
    """The access token, app secret and verify token from the environment variables
    ``[whatsapp]`` names, and its phone number id.

    Raises:
        StartupError: one is unset or empty (its name is said, never a value).
    """
    section = settings.whatsapp
    environ = os.environ if environ is None else environ
    if not section.phone_number_id:
        raise StartupError(
            "set [whatsapp] phone_number_id (WhatsApp Manager → API Setup → Phone number ID)"
        )
    values = []
    for name in (section.access_token_env, section.app_secret_env, section.verify_token_env):
        value = environ.get(name, "").strip()
        if not value:
            raise StartupError(f"set ${name} (docs/whatsapp.md says where it comes from)")
        values.append(value)
    return Credentials(*values)


async def run_tipline(
    settings: Settings,
    credentials: Credentials,
    *,
    grace_s: float | None = None,
    engine: Engine | None = None,
) -> None:
    """Serve the tipline until SIGINT or SIGTERM; then it takes no new checks, gives
    those it took ``grace_s`` (``[service] shutdown_grace_s``) to finish, and hands back
    the rest."""
    grace = settings.service.shutdown_grace_s if grace_s is None else grace_s
    stop = asyncio.Event()
    with stop_on_signals(stop):
        async with (
            serving_with_site(settings, engine=engine) as service,
            WhatsAppTipline(
                settings.whatsapp,
                service,
                credentials,
                caps=MediaCaps(settings.engine.images, settings.engine.audio),
                public_url=settings.site.public_url,
            ) as tipline,
        ):
            ctx = tipline.context
            async with delivering(
                settings,
                service,
                PLATFORM,
                functools.partial(post_delivered, ctx),
                sender(functools.partial(send_correction, ctx)),
            ):
                await stop.wait()
            log.info("stopping: no new checks; running checks get %.0f s", grace)
            await tipline.stop(grace)


def run_whatsapp(
    settings: Settings, credentials: Credentials, grace_s: float | None = None
) -> None:
    """Serve the tipline until SIGINT or SIGTERM (blocking).

    Raises:
        StartupError: the webhook's address is taken or cannot be listened on.
    """
    logging.basicConfig(level=logging.INFO)
    try:
        run_until_stopped(settings, run_tipline(settings, credentials, grace_s=grace_s))
    except OSError as exc:
        section = settings.whatsapp
        raise StartupError(
            f"could not listen on {section.listen}:{section.port} for the webhook: {exc.strerror}"
        ) from None
