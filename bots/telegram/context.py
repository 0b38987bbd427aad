"""What the Telegram handlers share: the check service (every call awaited), the
settings, the work running in the background (so shutdown can wait for it:
:class:`~bots.chat.in_flight.InFlight`), the groups' cooldowns, their
administrators (asked once a minute at most) and the albums being gathered; and the
language a chat is answered in (:func:`chat_language_of`)."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from telegram import Message
from telegram.ext import CallbackContext

from bots.chat.cooldowns import Cooldowns
from bots.chat.in_flight import InFlight
from bots.chat.turns import Turns
from bots.render.languages import LANGUAGE_KEY
from bots.render.links import report_url
from bots.render.words import ENGLISH, Words, chat_language
from bots.service.checks import CheckService
from zofia_engine.audio_settings import AudioSettings
from zofia_engine.image_settings import ImageSettings

from .admins import ChatAdmins
from .images import Albums
from .refusals import Refusals
from .settings import TelegramSettings
from .share_links import share_token, share_url

__all__ = [
    "PLATFORM",
    "TelegramContext",
    "chat_language_of",
    "context_of",
    "read_chat_language",
]

log = logging.getLogger(__name__)

PLATFORM = "telegram"
_KEY = "zofia"


@dataclass
class TelegramContext:
    """The bot's state for one run of the application.

    Args:
        service: the started check service.
        settings: the ``[telegram]`` section.
        allow_private_urls: let a link to a private address be fetched (tests only).
        images: the ``[images]`` section: how many images a post may have, and how
            large each may be (a larger one is refused before it is downloaded).
        audio: the ``[audio]`` section: how large and how long a voice note may be (a
            larger or longer one is refused before it is downloaded).
        public_url: ``[site] public_url``: where the report pages are; empty, the
            cards have no "Full report" link.
        bot_username: the bot's username, as ``getMe`` gives it (set once the
            application is initialised); empty, the cards have no Share button.
    """

    service: CheckService
    settings: TelegramSettings
    allow_private_urls: bool = False
    images: ImageSettings = field(default_factory=ImageSettings)
    audio: AudioSettings = field(default_factory=AudioSettings)
    public_url: str = ""
    bot_username: str = ""
    albums: Albums = field(default_factory=Albums)
    #: the checks and answers running in the background, waited for at shutdown
    work: InFlight = field(default_factory=InFlight)
    cooldowns: Cooldowns = field(default_factory=Cooldowns)
    #: refusals held to be said once per burst, and the checks of each chat opening
    refusals: Refusals = field(default_factory=Refusals)
    #: each user's private requests, answered in turn (``[service] private_in_flight``
    #: at once: the bot's runtime sizes it)
    turns: Turns = field(default_factory=Turns)
    #: each group's administrators, asked of Telegram once a minute at most
    admins: ChatAdmins = field(default_factory=ChatAdmins)

    def install(self, bot_data: dict[Any, Any]) -> None:
        bot_data[_KEY] = self

    def report_url(self, check_id: str) -> str:
        """The check's report page, or ``""`` when no public address is set."""
        return report_url(self.public_url, check_id)

    def share_url(self, check_id: str, words: Words = ENGLISH) -> str:
        """The Share button's address for the check's card (:mod:`.share_links`), or
        ``""`` while the bot's username is unknown."""
        if not self.bot_username:
            return ""
        return share_url(self.bot_username, share_token(self.service.secret, check_id), words)

    def user_hash(self, user_id: int) -> str:
        """The stored form of a Telegram user id (an HMAC, never the id)."""
        return self.service.namer.user(PLATFORM, str(user_id))

    def log_chat(self, chat_id: object) -> str:
        """A chat as a log line names it: its keyed hash, never its id."""
        return self.service.namer.log_name(PLATFORM, chat_id)


def context_of(callback: CallbackContext[Any, Any, Any, Any]) -> TelegramContext:
    """The bot's context, from python-telegram-bot's context of one update."""
    ctx = callback.bot_data[_KEY]
    assert isinstance(ctx, TelegramContext)
    return ctx


def chat_language_of(message: Message, setting: str | None) -> str:
    """The language the chat of ``message`` is answered in: its ``/settings language``
    (``setting``; ``None`` when it never set one), else the language of the Telegram app
    of whoever sent ``message`` (:func:`~bots.render.words.chat_language`)."""
    sender = message.from_user
    return chat_language(setting, sender.language_code if sender else None)


async def read_chat_language(ctx: TelegramContext, message: Message) -> str:
    """:func:`chat_language_of`, its setting read from the store (which may raise)."""
    found = await ctx.service.chats.settings(PLATFORM, str(message.chat_id), {LANGUAGE_KEY: None})
    return chat_language_of(message, found[LANGUAGE_KEY])
