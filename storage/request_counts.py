"""Who asked, where, and since when: the ``WHERE`` clause over the ``checks`` and
``attempts`` tables (both have the requester, platform, chat and ``created_at``
columns), and the counts and oldest times the rate limits and quotas read from it."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from .locked import LockedDatabase
from .rows import from_iso, to_iso

__all__ = ["RequestScope", "count_since", "oldest_since"]


@dataclass(frozen=True)
class RequestScope:
    """Which requests a limit or a quota counts: those made since ``since``
    (timezone-aware), of one requester (the :func:`~storage.keys.hash_user` hash), one
    platform or one chat when given; every one where nothing is."""

    since: dt.datetime | None = None
    requester: str | None = None
    platform: str | None = None
    chat: str | None = None

    def where(self, alias: str = "c") -> tuple[str, dict[str, Any]]:
        """A ``WHERE`` clause over ``checks c`` (or another table with these columns,
        named ``alias``) and its parameters; ``1 = 1`` when nothing filters.

        Raises:
            ValueError: ``since`` is naive.
        """
        values = {"requester": self.requester, "platform": self.platform, "chat": self.chat}
        params: dict[str, Any] = {name: v for name, v in values.items() if v is not None}
        clauses = [f"{alias}.{name} = :{name}" for name in params]
        if self.since is not None:
            params["since"] = to_iso(self.since)
            clauses.append(f"{alias}.created_at >= :since")
        return " AND ".join(clauses) or "1 = 1", params


def count_since(
    db: LockedDatabase,
    table: str,
    scope: RequestScope,
    *,
    up_to: int | None = None,
    also: str = "",
) -> int:
    """How many rows of ``table`` (``checks`` or ``attempts``: both have these columns)
    ``scope`` holds, meeting the extra condition ``also`` on ``t``; counting no further
    than ``up_to``."""
    where, params = scope.where("t")
    if also:
        where += f" AND {also}"
    limit = ""
    if up_to is not None:
        limit, params = " LIMIT :up_to", {**params, "up_to": up_to}
    sql = f"SELECT count(*) FROM (SELECT 1 FROM {table} t WHERE {where}{limit}) AS recent"
    (count,) = db.one(sql, params)
    return int(count)


def oldest_since(db: LockedDatabase, table: str, scope: RequestScope) -> dt.datetime | None:
    """When the oldest row :func:`count_since` counts was made, or ``None``."""
    where, params = scope.where("t")
    (oldest,) = db.one(f"SELECT min(t.created_at) FROM {table} t WHERE {where}", params)
    return from_iso(oldest)
