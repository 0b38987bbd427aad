"""Per-user and per-chat records: feedback votes, chat settings, and where a bot
posted each section of a check. ``store.feedback``, ``store.chats`` and
``store.marks`` of a :class:`~storage.store.CheckStore`."""

from __future__ import annotations

import json
from typing import Any

from .keys import storable_text
from .locked import StorePart

__all__ = ["ChatSettings", "Feedback", "SectionMarks"]


class Feedback(StorePart):
    """Users' votes on verdicts."""

    def add(self, check_id: str, user_hash: str, vote: int, comment: str = "") -> None:
        """Record a user's vote on a check's verdict; a second vote replaces the first.

        Args:
            check_id: the check.
            user_hash: :func:`~storage.keys.hash_user` of the voter.
            vote: ``1`` (right) or ``-1`` (wrong).
            comment: optional free text.

        Raises:
            ValueError: ``vote`` is not 1 or -1.
            CheckNotFoundError: no such check.
        """
        if vote not in (1, -1) or isinstance(vote, bool):
            raise ValueError(f"vote must be 1 or -1, not {vote!r}")
        row = {
            "check_id": check_id,
            "user_hash": storable_text(user_hash),
            "vote": vote,
            "comment": storable_text(comment),
            "created_at": self.db.now(),
        }
        with self.db.write():
            self.db.require_check(check_id)
            self.db.table("feedback").upsert(row, pk=("check_id", "user_hash"))

    def counts(self, check_id: str) -> tuple[int, int]:
        """The votes on a check.

        Args:
            check_id: the check's id.

        Returns:
            ``(up, down)``: how many voted 1 and how many -1.
        """
        up, down = self.db.one(
            "SELECT count(*) FILTER (WHERE vote = 1), count(*) FILTER (WHERE vote = -1)"
            " FROM feedback WHERE check_id = ?",
            [check_id],
        )
        return int(up), int(down)


class ChatSettings(StorePart):
    """Each chat's settings (the reply language, auto-check …), as JSON values."""

    def get(self, platform: str, chat: str, key: str, default: Any = None) -> Any:
        """A chat's setting.

        Args:
            platform: the chat's platform.
            chat: the chat's id.
            key: the setting's name.
            default: what to return when it is unset.

        Returns:
            The value, decoded from JSON, or ``default``.
        """
        row = self.db.first(
            "SELECT value_json FROM chat_settings WHERE platform = ? AND chat = ? AND key = ?",
            [platform, chat, key],
        )
        return default if row is None else json.loads(row[0])

    def set(self, platform: str, chat: str, key: str, value: Any) -> None:
        """Set a chat's setting to a JSON value (replacing any earlier one).

        Args:
            platform: the chat's platform.
            chat: the chat's id.
            key: the setting's name.
            value: anything ``json.dumps`` takes.

        Raises:
            TypeError: ``value`` is not JSON-serialisable.
            ValueError: ``value`` holds NaN or infinity.
        """
        value_json = storable_text(json.dumps(value, ensure_ascii=False, allow_nan=False))
        row = {
            "platform": storable_text(platform),
            "chat": storable_text(chat),
            "key": storable_text(key),
            "value_json": value_json,
            "updated_at": self.db.now(),
        }
        with self.db.write():
            self.db.table("chat_settings").upsert(row, pk=("platform", "chat", "key"))


class SectionMarks(StorePart):
    """What a bot recorded when it posted a section of a check (message ids, a thread).

    A section is posted once across every bot process on the store: the caller whose
    :meth:`claim` of its mark succeeds posts it (the row's key decides, in the
    database, not a lock of one process); a claim is cleared again if the posting fails."""

    def get(self, check_id: str, kind: str) -> Any:
        """What a bot recorded when it posted a section of a check (message ids, a thread
        id), or ``None`` when it has not posted it."""
        row = self.db.first(
            "SELECT value_json FROM section_marks WHERE check_id = ? AND kind = ?",
            [check_id, kind],
        )
        return None if row is None else json.loads(row[0])

    def claim(self, check_id: str, kind: str, value: Any) -> bool:
        """Mark a section of a check as being posted, with ``value`` (what a later press
        is shown until the poster records where it went), unless it is marked already:
        of callers on every process at once, exactly one gets ``True`` and posts it.

        Raises:
            CheckNotFoundError: no such check.
        """
        with self.db.write():
            self.db.require_check(check_id)
            cursor = self.db.execute(
                "INSERT INTO section_marks (check_id, kind, value_json, updated_at)"
                " VALUES (?, ?, ?, ?) ON CONFLICT (check_id, kind) DO NOTHING",
                [check_id, storable_text(kind), json.dumps(value, allow_nan=False), self.db.now()],
            )
        return cursor.rowcount == 1

    def set(self, check_id: str, kind: str, value: Any) -> None:
        """Record that a section of a check was posted (``value``: where); ``None`` clears
        the mark, so that a later press posts the section again.

        Raises:
            CheckNotFoundError: no such check.
        """
        with self.db.write():
            if value is None:
                self.db.execute(
                    "DELETE FROM section_marks WHERE check_id = ? AND kind = ?", [check_id, kind]
                )
                return
            self.db.require_check(check_id)
            row = {
                "check_id": check_id,
                "kind": storable_text(kind),
                "value_json": json.dumps(value, allow_nan=False),
                "updated_at": self.db.now(),
            }
            self.db.table("section_marks").upsert(row, pk=("check_id", "kind"))
