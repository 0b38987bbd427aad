"""What the WhatsApp handlers share: the check service, the Cloud API behind the
:class:`~.window.Outbox`, the settings, the users' lines and the work in flight. A leaf:
the handlers import it, the tipline holds it, nothing imports back."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from bots.chat.context import ChatContext
from bots.render.words import chat_language
from bots.service.records import Requester
from zofia_engine.audio_settings import AudioSettings
from zofia_engine.image_settings import ImageSettings

from .settings import PLATFORM, WhatsAppSettings
from .window import Outbox

__all__ = ["CARDS_KEY", "MediaCaps", "WhatsAppContext"]

#: the chat setting that names the chat's newest cards: ``{keyed message id: check id}``
CARDS_KEY = "whatsapp_cards"
#: how many of a chat's cards a reply may ask about
_CARDS_KEPT = 20


@dataclass(frozen=True)
class MediaCaps:
    """The engine's caps on what a message brings: ``[images]`` and ``[audio]``."""

    images: ImageSettings = field(default_factory=ImageSettings)
    audio: AudioSettings = field(default_factory=AudioSettings)


@dataclass
class WhatsAppContext(ChatContext):
    """The tipline's state for one run (:class:`~bots.chat.context.ChatContext`; a
    user's chat is named by their number, ``wa_id``).

    Args:
        outbox: sends to users, minding their window.
        settings: the ``[whatsapp]`` section.
    """

    platform: ClassVar[str] = PLATFORM

    outbox: Outbox
    settings: WhatsAppSettings

    @staticmethod
    def requester(wa_id: str) -> Requester:
        """A WhatsApp user: their chat with the bot is their own (private)."""
        return Requester(PLATFORM, wa_id, wa_id, private=True)

    async def language(self, wa_id: str) -> str:
        """The chat's language: its ``/language`` setting, else English."""
        return chat_language(await self.language_setting(wa_id), None)

    async def card_sent(self, wa_id: str, message_id: str, check_id: str) -> None:
        """Remember that ``message_id`` shows check ``check_id`` (a reply to it asks about
        that check); the chat's newest 20 are kept, each message id as its keyed hash (a
        WhatsApp message id encodes the phone number)."""
        cards = await self.cards(wa_id)
        cards[self._message_key(message_id)] = check_id
        kept = dict(list(cards.items())[-_CARDS_KEPT:])
        await self.service.chats.set_settings(PLATFORM, wa_id, {CARDS_KEY: kept})

    async def card_check(self, wa_id: str, message_id: str) -> str | None:
        """The check a card ``message_id`` of this chat shows, or ``None``."""
        return (await self.cards(wa_id)).get(self._message_key(message_id))

    async def cards(self, wa_id: str) -> dict[str, str]:
        """The chat's newest cards, ``{keyed message id: check id}``."""
        found = await self.service.chats.settings(PLATFORM, wa_id, {CARDS_KEY: {}})
        value = found[CARDS_KEY]
        return {str(k): str(v) for k, v in value.items()} if isinstance(value, dict) else {}

    def _message_key(self, message_id: str) -> str:
        return self.service.namer.chat(PLATFORM, f"message {message_id}")[:24]
