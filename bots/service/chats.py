"""What a chat reads and writes through the check service besides its checks, each
awaited and run on the service's own threads, with ids as the platform gives them
(stored only as keyed hashes): a chat's settings, votes, a check as the chat that asked
it sees it, the marks of the card sections posted, and the messages a bot has taken
(each answered once, whichever replica a redelivery reaches). ``service.chats`` of a
:class:`~bots.service.checks.CheckService`."""

from __future__ import annotations

from typing import Any

from storage.store import CheckStore
from zofia_engine.report import Report

from .delivery import StoreThreads
from .naming import ChatNamer
from .records import (
    NO_REPORT,
    CheckNotFoundError,
    CheckRow,
    NoReportError,
    Outcome,
    Requester,
)
from .shown import report_of

__all__ = ["ChatRecords", "Copied"]

#: a shared card made for its chat: the outcome it shows, the votes on its verdict, and
#: the language of the check (its summary's, and its card's words)
Copied = tuple[Outcome, tuple[int, int], str]


class ChatRecords:
    """A chat's records in the store.

    Args:
        store: the open store.
        namer: the keyed names of users and chats.
        threads: the service's threads for the store.
    """

    def __init__(self, store: CheckStore, namer: ChatNamer, threads: StoreThreads) -> None:
        self.store = store
        self.namer = namer
        self._run = threads.run

    async def settings(
        self, platform: str, chat_id: str, defaults: dict[str, Any]
    ) -> dict[str, Any]:
        """Several settings of one chat (its language, auto-check …), read in one trip:
        each key's value or its default."""

        def read() -> dict[str, Any]:
            chat = self.namer.chat(platform, chat_id)
            return {
                key: self.store.chats.get(platform, chat, key, default)
                for key, default in defaults.items()
            }

        return await self._run(read)

    async def set_settings(self, platform: str, chat_id: str, values: dict[str, Any]) -> None:
        """Store the settings ``values`` of one chat, in one trip."""

        def write() -> None:
            chat = self.namer.chat(platform, chat_id)
            for key, value in values.items():
                self.store.chats.set(platform, chat, key, value)

        await self._run(write)

    async def first_message(self, platform: str, message_id: str) -> bool:
        """Whether a bot of ``platform`` takes the message ``message_id`` for the first
        time, on any process on the store (it is remembered now, as its keyed hash, for
        :data:`storage.seen_messages.SEEN_FOR`): a platform's redelivery is answered once."""
        key = self.namer.message(platform, message_id)
        return await self._run(self.store.seen_messages.first, platform, key)

    async def vote(self, row: CheckRow, requester: Requester, vote: int) -> tuple[int, int]:
        """Record a user's vote on a check's verdict; votes on a repeat count for the check
        it repeats, so one verdict's votes add up. ``(up, down)`` for that verdict, this
        vote included."""

        def write() -> tuple[int, int]:
            original = row.repeat_of or row.id
            voter = self.namer.user(requester.platform, requester.user_id)
            self.store.feedback.add(original, voter, vote)
            return self.store.feedback.counts(original)

        return await self._run(write)

    async def votes(self, check_id: str) -> tuple[int, int]:
        """``(up, down)`` on check ``check_id``'s verdict (an original check's)."""
        return await self._run(self.store.feedback.counts, check_id)

    def _in_chat(self, check_id: str, platform: str, chat_id: str) -> CheckRow | None:
        row = self.store.checks.get(check_id)
        if (
            row is None
            or row.platform != platform
            or row.chat != self.namer.chat(platform, chat_id)
        ):
            return None
        return row

    async def check(self, check_id: str, platform: str, chat_id: str) -> CheckRow | None:
        """The check, if it was asked in this chat of this platform; ``None`` for an
        unknown, forged or foreign id (a button shows it as "not found")."""
        return await self._run(self._in_chat, check_id, platform, chat_id)

    async def stored(
        self, check_id: str, platform: str, chat_id: str, *, early: bool = False
    ) -> tuple[CheckRow, Report | None] | None:
        """The check and the report it shows (``None``: none yet, or purged), if it was
        asked in this chat, in one trip; ``early``: a running check's early report
        (``complete`` false) when it has one."""

        def read() -> tuple[CheckRow, Report | None] | None:
            row = self._in_chat(check_id, platform, chat_id)
            if row is None:
                return None
            found = report_of(self.store, check_id)
            if found is None and early and row.status == "running":
                return row, self.store.reports.early(row.repeat_of or row.id)
            return row, None if found is None else found[1]

        return await self._run(read)

    def report_to_ask(self, check_id: str, requester: Requester) -> Report:
        """The report check ``check_id`` shows, if it was asked in the requester's chat
        (any chat when the requester names none: the CLI) (blocking).

        Raises:
            CheckNotFoundError: no such check in the requester's chat.
            NoReportError: the check has no report (running, failed, or expired).
        """
        if (
            requester.chat_id
            and self._in_chat(check_id, requester.platform, requester.chat_id) is None
        ):
            raise CheckNotFoundError(f"no check {check_id!r} in this chat")
        found = report_of(self.store, check_id)
        if found is None:
            if self.store.checks.get(check_id) is None:
                raise CheckNotFoundError(f"no check {check_id!r}")
            raise NoReportError(NO_REPORT)
        return found[1]

    def copy(self, check_id: str, requester: Requester) -> Copied | None:
        """Check ``check_id``'s card made anew for ``requester``'s chat, if it is a check
        of their platform with its report still stored (blocking): a row of its own, an
        exact repeat of its original (:meth:`~storage.checks.Checks.copy_of`: nothing of
        the post, dated as the original), shown as that chat sees it; with the votes on
        its verdict."""
        store, platform = self.store, requester.platform
        row = store.checks.get(check_id)
        if row is None or row.platform != platform or row.status != "done":
            return None
        original = store.checks.get(row.repeat_of) if row.repeat_of else row
        if original is None or store.reports.get(original.id) is None:  # purged, or never written
            return None
        copy = store.checks.copy_of(
            original,
            platform=platform,
            chat=self.namer.chat(platform, requester.chat_id),
            requester=self.namer.user(platform, requester.user_id),
        )
        found = report_of(store, copy.id)  # with the reviews in force in the new chat
        if found is None:
            return None
        return Outcome(copy.id, found[1]), store.feedback.counts(original.id), original.language

    async def shown_in(self, check_id: str, platform: str, chat: str) -> bool:
        """Whether a card of ``check_id`` was recorded as shown in ``chat`` (the platform's
        raw chat id: a Discord channel) of ``platform``."""
        return await self._run(self.store.shown_cards.shown_in, check_id, platform, chat)

    async def mark(self, check_id: str, kind: str) -> Any:
        """The mark of a card section posted (:class:`storage.chat_records.SectionMarks`)."""
        return await self._run(self.store.marks.get, check_id, kind)

    async def claim_mark(self, check_id: str, kind: str, value: Any) -> bool:
        """Whether this caller, of every bot process on the store, posts the section."""
        return await self._run(self.store.marks.claim, check_id, kind, value)

    async def set_mark(self, check_id: str, kind: str, value: Any) -> None:
        await self._run(self.store.marks.set, check_id, kind, value)
