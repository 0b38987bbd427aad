"""Who administers a Telegram group, asked of Telegram once a minute per chat at most.

A Review tap, or a ``/settings`` change, asks whether its sender is one of the chat's
administrators. :class:`ChatAdmins` asks ``getChatAdministrators`` (the whole list, one
call) and keeps each chat's answer :data:`KEEP_S` seconds: repeated taps in a chat cost
no call, and taps that come together while the list is being asked wait for that one
answer. So an admin demoted (or a member promoted) is seen as such within
:data:`KEEP_S`. Nothing of it is stored: the ids live in this process only, for as
long as their answer is kept, :data:`MAX_CHATS` chats at most.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from telegram import Bot
from telegram.constants import ChatMemberStatus

__all__ = ["KEEP_S", "MAX_CHATS", "ChatAdmins"]

#: how long a chat's list of administrators is kept before it is asked again
KEEP_S = 60.0
#: chats whose list is kept at once (the oldest answer is forgotten first)
MAX_CHATS = 1024
_ADMIN = (ChatMemberStatus.ADMINISTRATOR, ChatMemberStatus.OWNER)


class ChatAdmins:
    """Each chat's administrators, asked once per :data:`KEEP_S` seconds.

    Args:
        keep_s: how long an answer is kept.
        clock: monotonic seconds (tests pass a settable one).
    """

    def __init__(
        self, *, keep_s: float = KEEP_S, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.keep_s = keep_s
        self.clock = clock
        self._known: dict[int, tuple[float, frozenset[int]]] = {}
        self._asking: dict[int, asyncio.Future[frozenset[int]]] = {}

    async def is_admin(self, bot: Bot, chat_id: int, user_id: int) -> bool:
        """Whether ``user_id`` administers (or owns) ``chat_id``.

        Raises:
            TelegramError: Telegram could not be asked (nothing is kept then).
        """
        return user_id in await self.of(bot, chat_id)

    async def of(self, bot: Bot, chat_id: int) -> frozenset[int]:
        """The user ids of ``chat_id``'s administrators: as kept, while fresh; else asked
        (once, for every caller waiting at the time)."""
        known = self._known.get(chat_id)
        if known is not None and self.clock() - known[0] < self.keep_s:
            return known[1]
        asking = self._asking.get(chat_id)
        if asking is None:
            asking = asyncio.ensure_future(self._ask(bot, chat_id))
            self._asking[chat_id] = asking
            asking.add_done_callback(lambda _: self._asking.pop(chat_id, None))
        return await asyncio.shield(asking)

    async def _ask(self, bot: Bot, chat_id: int) -> frozenset[int]:
        members = await bot.get_chat_administrators(chat_id)
        admins = frozenset(member.user.id for member in members if member.status in _ADMIN)
        self._known.pop(chat_id, None)
        while len(self._known) >= MAX_CHATS:
            del self._known[next(iter(self._known))]
        self._known[chat_id] = (self.clock(), admins)
        return admins
