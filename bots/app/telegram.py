"""The Telegram application: built with python-telegram-bot, run by polling or webhook.

``zofia telegram`` reads the token from the environment variable the ``[telegram]``
settings name, starts the check service, and serves updates until SIGINT or SIGTERM.
On the way out it stops taking updates, gives running checks ``--grace`` seconds
(``[service] shutdown_grace_s``) to finish, and puts the rest back in the queue (they
resume on the next start), each asker told (:mod:`bots.chat.in_flight`).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hmac
import logging
import os
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from telegram import Bot, Update
from telegram.error import InvalidToken, NetworkError, TelegramError
from telegram.ext import (
    AIORateLimiter,
    Application,
    ApplicationBuilder,
    ContextTypes,
    Updater,
)

from bots.app.deliveries import delivering
from bots.app.runtime import StartupError, run_until_stopped, serving_with_site, stop_on_signals
from bots.app.settings import Settings
from bots.chat.corrections import sender
from bots.render.words import translated_languages, words_for
from bots.service.checks import CheckService
from bots.telegram.buttons import button_handlers
from bots.telegram.commands import BOT_COMMANDS, bot_commands, command_handlers
from bots.telegram.context import PLATFORM, TelegramContext
from bots.telegram.corrections import send_correction
from bots.telegram.follow_ups import follow_up_handlers
from bots.telegram.guest import GUEST_GROUP, guest_handler, post_delivered_or_guest
from bots.telegram.inputs import input_handlers
from bots.telegram.pacing import ChatPacedRateLimiter
from bots.telegram.reviews import review_handlers, review_note_handler
from bots.telegram.settings import TelegramSettings
from zofia_engine.errors import ZofiaError

if TYPE_CHECKING:
    from zofia_engine.engine import Engine

__all__ = [
    "ChatPacedRateLimiter",
    "TokenRedactor",
    "build_application",
    "run_telegram",
    "running_bot",
    "serve",
]

log = logging.getLogger(__name__)

# Opt in to PTB 23's durations as timedelta now: otherwise every 429 warns of the change.
os.environ.setdefault("PTB_TIMEDELTA", "true")

ALLOWED_UPDATES = [Update.MESSAGE, Update.CALLBACK_QUERY, Update.GUEST_MESSAGE]


class TokenRedactor(logging.Filter):
    """Replaces the bot token in every log record: in its message (httpx logs request URLs
    that hold it), in its exception's traceback (PTB names a rejected token) and in its
    stack. Put it on handlers: it formats the traceback into ``exc_text`` to redact it."""

    def __init__(self, token: str) -> None:
        super().__init__()
        self.token = token

    def redact(self, text: str) -> str:
        return text.replace(self.token, "<token>") if self.token else text

    def filter(self, record: logging.LogRecord) -> bool:
        if not self.token:
            return True
        try:
            message = record.getMessage()
        except Exception:  # a malformed record: the formatter reports it, redacted below
            message = str(record.msg)
        if self.token in message:
            record.msg = self.redact(message)
            record.args = None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = self.redact(record.exc_text)
        if record.stack_info:
            record.stack_info = self.redact(record.stack_info)
        return True


def _file_url(base_url: str) -> str:
    root = base_url.removesuffix("/bot")
    return f"{root}/file/bot"


async def _on_error(update: object, context: ContextTypes.DEFAULT_TYPE) -> None:
    log.error("update failed", exc_info=context.error)


def build_application(
    ctx: TelegramContext,
    token: str,
    *,
    base_url: str,
    rate_limiter: AIORateLimiter | None = None,
) -> Application[Any, Any, Any, Any, Any, Any]:
    """The application with every handler, updates handled concurrently.

    Args:
        ctx: the service and settings the handlers share.
        token: the bot token.
        base_url: the Bot API root, ``https://api.telegram.org/bot`` (tests: a fake).
        rate_limiter: by default :class:`ChatPacedRateLimiter` with its defaults.
    """
    application = (
        ApplicationBuilder()
        .token(token)
        .base_url(base_url)
        .base_file_url(_file_url(base_url))
        .rate_limiter(rate_limiter or ChatPacedRateLimiter())
        .concurrent_updates(True)
        .build()
    )
    ctx.install(application.bot_data)
    # A reply to a verdict card is a follow-up question, not a post: tried before the inputs.
    application.add_handlers(
        [
            *command_handlers(),
            *follow_up_handlers(),
            *input_handlers(),
            *review_handlers(),  # before the other buttons' handler, which takes any tap
            *button_handlers(),
        ]
    )
    # A reply to a review's prompt is its note, whatever else it could be: tried first.
    application.add_handler(review_note_handler(), group=-1)
    # A guest message (from a chat the bot is not in) before all: only its query is answered.
    application.add_handler(guest_handler(), group=GUEST_GROUP)
    application.add_error_handler(_on_error)
    return application


def webhook_secret(token: str, store_secret: bytes) -> str:
    """The webhook's secret token when none is set: derived from the bot's token and the
    store's secret, so every replica of one deployment (one token, one store) accepts
    the updates Telegram sends to any of them, and no one without both can forge one."""
    return hmac.new(store_secret, b"telegram webhook\n" + token.encode(), "sha256").hexdigest()


async def _take_updates(
    updater: Updater,
    config: TelegramSettings,
    token: str,
    store_secret: bytes,
    poll_timeout_s: float,
) -> None:
    """Start taking updates: by webhook if ``config.webhook_url`` is set (its secret
    from the environment, else :func:`webhook_secret`), else by polling."""
    if config.webhook_url:
        secret = os.environ.get(config.webhook_secret_env) or webhook_secret(token, store_secret)
        await updater.start_webhook(
            listen=config.webhook_listen,
            port=config.webhook_port,
            url_path=urlsplit(config.webhook_url).path.lstrip("/"),
            webhook_url=config.webhook_url,
            secret_token=secret,
            allowed_updates=ALLOWED_UPDATES,
        )
        log.info("webhook on %s:%d", config.webhook_listen, config.webhook_port)
    else:
        await updater.start_polling(timeout=int(poll_timeout_s), allowed_updates=ALLOWED_UPDATES)
        log.info("polling for updates")


@contextlib.asynccontextmanager
async def running_bot(
    settings: Settings,
    service: CheckService,
    token: str,
    *,
    grace_s: float | None = None,
    poll_timeout_s: float = 10.0,
    rate_limiter: AIORateLimiter | None = None,
    allow_private_urls: bool = False,
) -> AsyncIterator[Application[Any, Any, Any, Any, Any, Any]]:
    """The bot taking updates (webhook if ``settings.telegram.webhook_url``, else polling)
    until the block ends; then running checks get ``grace_s`` (``[service]
    shutdown_grace_s`` by default) to finish, and the rest are handed back, each asker
    told."""
    grace = settings.service.shutdown_grace_s if grace_s is None else grace_s
    config = settings.telegram
    ctx = TelegramContext(
        service,
        config,
        allow_private_urls=allow_private_urls,
        images=settings.engine.images,
        audio=settings.engine.audio,
        public_url=settings.site.public_url,
    )
    application = build_application(ctx, token, base_url=config.base_url, rate_limiter=rate_limiter)
    async with application:  # initialising it asks getMe who the bot is
        ctx.bot_username = application.bot.username  # the cards' Share links name it
        await application.start()
        updater = application.updater
        assert updater is not None
        await _take_updates(updater, config, token, service.secret, poll_timeout_s)
        try:
            await application.bot.set_my_commands(BOT_COMMANDS)
            for language, tag in translated_languages().items():  # each app's own menu
                menu = bot_commands(words_for(language))
                await application.bot.set_my_commands(menu, language_code=tag)
        except Exception as exc:  # a convenience for the chat menu, not a reason to stop
            log.warning("could not set the command menu: %s", exc)
        try:
            post = functools.partial(post_delivered_or_guest, ctx, application.bot)
            correct = sender(functools.partial(send_correction, ctx, application.bot))
            async with delivering(settings, service, PLATFORM, post, correct):
                yield application
        finally:
            await updater.stop()
            ctx.work.closing = True  # updates still queued are told to send again later
            try:
                await application.stop()
            finally:
                await ctx.work.drain(grace)


async def _check_token(base_url: str, token: str) -> None:
    """Ask Telegram who the bot is, before the models load: a bad token fails at once.

    Raises:
        InvalidToken: Telegram rejected the token.
    """
    async with Bot(token, base_url=base_url, base_file_url=_file_url(base_url)):
        pass  # entering calls getMe


async def serve(
    settings: Settings,
    token: str,
    *,
    grace_s: float | None = None,
    engine: Engine | None = None,
    **bot_options: Any,
) -> None:
    """Serve the bot until SIGINT or SIGTERM (:func:`~bots.app.runtime.stop_on_signals`),
    then stop as :func:`running_bot` does. ``engine`` and ``bot_options`` (the poll's
    timeout, the rate limiter) are for tests."""
    await _check_token(settings.telegram.base_url, token)
    stop = asyncio.Event()
    grace = settings.service.shutdown_grace_s if grace_s is None else grace_s
    with stop_on_signals(stop):
        async with (
            serving_with_site(settings, engine=engine) as service,
            running_bot(settings, service, token, grace_s=grace, **bot_options),
        ):
            await stop.wait()
            log.info("stopping: no new updates; running checks get %.0f s", grace)


def quiet_logs(token: str) -> TokenRedactor:
    """INFO logs without request URLs (they hold the token), and the token redacted anyway
    by the returned filter, put on every handler of the root logger."""
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    for name in ("httpx", "httpcore"):
        logging.getLogger(name).setLevel(logging.WARNING)
    redactor = TokenRedactor(token)
    for handler in logging.getLogger().handlers:
        handler.addFilter(redactor)
    return redactor


def run_telegram(settings: Settings, token: str, grace_s: float | None = None) -> None:
    """Serve the bot until SIGINT or SIGTERM (blocking).

    Raises:
        StartupError: Telegram refused the token or could not be reached, in one
            sentence that never holds the token.
    """
    redactor = quiet_logs(token)
    try:
        run_until_stopped(settings, serve(settings, token, grace_s=grace_s))
    except InvalidToken:  # its message holds the token: never print it
        raise StartupError(
            f"Telegram rejected the bot token in ${settings.telegram.token_env}: check it with "
            "@BotFather"
        ) from None
    except NetworkError as exc:  # TimedOut included
        host = urlsplit(settings.telegram.base_url).hostname or settings.telegram.base_url
        log.debug("cannot reach Telegram", exc_info=exc)
        raise StartupError(
            f"Could not reach the Telegram Bot API at {host}: check this machine's network "
            "and DNS, or [telegram] base_url."
        ) from None
    except TelegramError as exc:
        raise StartupError(f"Telegram: {redactor.redact(str(exc))}") from None
    except ZofiaError as exc:
        raise StartupError(redactor.redact(str(exc))) from None
