"""What every platform's context holds: the check service, the engine's caps on images
and voice notes, the report pages' address, the work in flight and each user's turns;
how it names a chat in a log line, links a check's report page and reads a chat's
language setting. Each platform's context (``bots.telegram.context``,
``bots.discord.context``, ``bots.whatsapp.context``) adds its own settings and state."""

from __future__ import annotations

import logging
from collections.abc import Awaitable
from dataclasses import KW_ONLY, dataclass, field
from typing import ClassVar

from bots.render.languages import LANGUAGE_KEY
from bots.render.links import report_url
from bots.render.words import ENGLISH, Words, words_for
from bots.service.checks import CheckService
from zofia_engine.audio_settings import AudioSettings
from zofia_engine.image_settings import ImageSettings

from .in_flight import InFlight
from .turns import Turns

__all__ = ["ChatContext"]

log = logging.getLogger(__name__)


@dataclass
class ChatContext:
    """A bot's state for one run.

    Args:
        service: the started check service.
        images: the engine's ``[images]`` caps (an image refused before a download).
        audio: the engine's ``[audio]`` caps (a voice note refused before a download).
        public_url: ``[site] public_url``: where the report pages are; empty, the cards
            have no "Full report" link.
    """

    #: the platform's name, as the store and the logs know it
    platform: ClassVar[str]

    service: CheckService
    _: KW_ONLY
    images: ImageSettings = field(default_factory=ImageSettings)
    audio: AudioSettings = field(default_factory=AudioSettings)
    public_url: str = ""
    #: the checks and answers running, waited for at shutdown
    work: InFlight = field(default_factory=InFlight)
    #: each user's private requests, answered in turn (``[service] private_in_flight``
    #: at once)
    turns: Turns = field(init=False)

    def __post_init__(self) -> None:
        self.turns = Turns(self.service.settings.private_in_flight)

    def log_chat(self, chat_id: object) -> str:
        """A chat as a log line names it: its keyed hash, never its id."""
        return self.service.namer.log_name(self.platform, chat_id)

    def report_url(self, check_id: str) -> str:
        """The check's report page, or ``""`` when no public address is set."""
        return report_url(self.public_url, check_id)

    async def language_setting(self, chat_id: str) -> str | None:
        """The chat's ``/language`` setting (``""``: English); ``None`` when it never set
        one. The store's call may raise."""
        found = await self.service.chats.settings(self.platform, chat_id, {LANGUAGE_KEY: None})
        return None if found[LANGUAGE_KEY] is None else str(found[LANGUAGE_KEY])

    async def courtesy_words(self, chat_id: object, language: Awaitable[str]) -> Words:
        """The words of ``language``, the chat's as read from the store; English when it
        cannot be read (logged): for courtesy sentences, which should not fail."""
        try:
            return words_for(await language)
        except Exception:
            where = self.log_chat(chat_id)
            log.warning("could not read the language of chat %s", where, exc_info=True)
            return ENGLISH
