"""What the Telegram handlers share: the check service (every call awaited), the
settings, the work running in the background (so shutdown can wait for it:
:class:`~bots.chat.in_flight.InFlight`), the groups' cooldowns, their
administrators (asked once a minute at most) and the albums being gathered; and the
language a chat is answered in (:func:`chat_language_of`)."""

from __future__ import annotations

import logging
from dataclasses import KW_ONLY, dataclass, field
from typing import Any, ClassVar

from telegram import Message, User
from telegram.ext import CallbackContext

from bots.chat.context import ChatContext
from bots.chat.cooldowns import Cooldowns
from bots.render.words import ENGLISH, Words, chat_language, words_for

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
class TelegramContext(ChatContext):
    """The bot's state for one run of the application
    (:class:`~bots.chat.context.ChatContext`).

    Args:
        settings: the ``[telegram]`` section.
        allow_private_urls: let a link to a private address be fetched (tests only).
        bot_username: the bot's username, as ``getMe`` gives it (set once the
            application is initialised); empty, the cards have no Share button.
    """

    platform: ClassVar[str] = PLATFORM

    settings: TelegramSettings
    _: KW_ONLY
    allow_private_urls: bool = False
    bot_username: str = ""
    albums: Albums = field(default_factory=Albums)
    cooldowns: Cooldowns = field(default_factory=Cooldowns)
    #: refusals held to be said once per burst, and the checks of each chat opening
    refusals: Refusals = field(default_factory=Refusals)
    #: each group's administrators, asked of Telegram once a minute at most
    admins: ChatAdmins = field(default_factory=ChatAdmins)

    def install(self, bot_data: dict[Any, Any]) -> None:
        bot_data[_KEY] = self

    def share_url(self, check_id: str, words: Words = ENGLISH) -> str:
        """The Share button's address for the check's card (:mod:`.share_links`), or
        ``""`` while the bot's username is unknown."""
        if not self.bot_username:
            return ""
        return share_url(self.bot_username, share_token(self.service.secret, check_id), words)

    def user_hash(self, user_id: int) -> str:
        """The stored form of a Telegram user id (an HMAC, never the id)."""
        return self.service.namer.user(PLATFORM, str(user_id))


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


def tappers_words(user: User) -> Words:
    """The words of whoever tapped a button, before anything of its check is read: their
    Telegram app's language, when the bot has its words."""
    return words_for(chat_language(None, user.language_code))


async def read_chat_language(ctx: TelegramContext, message: Message) -> str:
    """:func:`chat_language_of`, its setting read from the store (which may raise)."""
    return chat_language_of(message, await ctx.language_setting(str(message.chat_id)))
