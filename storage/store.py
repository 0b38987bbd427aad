"""``CheckStore``: checks and their reports, over SQLite or PostgreSQL.

The store holds its parts as objects over one shared database (as sqlite-utils'
tables share their ``Database``): ``store.checks``, ``store.reports``,
``store.vectors``, ``store.feedback``, ``store.chats`` (chat settings),
``store.marks`` (section marks), ``store.deliveries``, ``store.reviews``
(moderators' reviews of verdicts), ``store.attempts`` (requests as the limits
count them), ``store.shown_cards`` (where each card was shown, for corrections),
``store.seen_messages`` (the chat messages a bot took, each answered once) and
``store.media_readings`` (what was read from a check's images and heard in its voice
note, for a run from the store).
Every time is timezone-aware UTC, stored as fixed-width ISO 8601 text (so text order
is time order). Every string written goes through :func:`~storage.keys.storable_text` first,
so a post with broken surrogates is stored (with U+FFFD) instead of crashing the
check. The parts hold one lock, so one store may serve several threads;
:meth:`CheckStore.write` holds it across several parts in one transaction.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from .attempts import Attempts
from .chat_records import ChatSettings, Feedback, SectionMarks
from .checks import Checks
from .deliveries import Deliveries
from .errors import StorageError
from .locked import LockedDatabase
from .media_readings import MediaReadings
from .postgres import PostgresDatabase, consistent, is_postgres
from .reports import Reports
from .retention import purge_content
from .reviews import Reviews
from .rows import CheckRow, CheckStatus, RepeatKind
from .sealing import Sealer
from .seen_messages import SeenMessages
from .shown_cards import ShownCards
from .sql import StoreDatabase
from .vectors import Vectors
from .webhook_calls import WebhookCalls

__all__ = ["CheckRow", "CheckStatus", "CheckStore", "RepeatKind"]


class CheckStore:
    """Checks and everything they produced, over an open database.

    Args:
        db: a database from :func:`~storage.database.open_database` or
            :func:`~storage.opening.open_postgres`.
        clock: returns the current timezone-aware time; tests pass a fake one.
        secret: the store's secret, which seals the raw ids a correction or a delivery
            needs (:mod:`storage.sealing`); without it, those cannot be written or read.
    """

    def __init__(
        self,
        db: StoreDatabase,
        *,
        clock: Callable[[], dt.datetime] | None = None,
        secret: bytes | None = None,
    ) -> None:
        self.db = db
        self.database = LockedDatabase(db, clock=clock)
        sealer = Sealer(secret)
        self.checks = Checks(self.database)
        self.reports = Reports(self.database)
        self.vectors = Vectors(self.database)
        self.feedback = Feedback(self.database)
        self.chats = ChatSettings(self.database)
        self.marks = SectionMarks(self.database)
        self.deliveries = Deliveries(self.database, sealer)
        self.reviews = Reviews(self.database)
        self.attempts = Attempts(self.database)
        self.shown_cards = ShownCards(self.database, sealer)
        self.webhook_calls = WebhookCalls(self.database)
        self.seen_messages = SeenMessages(self.database)
        self.media_readings = MediaReadings(self.database)

    @property
    def clock(self) -> Callable[[], dt.datetime]:
        """The time source every stored time comes from."""
        return self.database.clock

    @contextmanager
    def write(self) -> Iterator[None]:
        """Hold the store's lock and run the block in one write transaction: what the
        parts write in it commits together, or not at all (a savepoint when nested)."""
        with self.database.write():
            yield

    def ping(self) -> None:
        """Read one row, as a health probe does.

        Raises:
            sqlite3.Error, psycopg.Error: the database cannot be read.
        """
        self.database.first("SELECT 1")

    def postgres(self) -> PostgresDatabase:
        """The store's PostgreSQL database, for the job queue that lives in it (its jobs
        are deferred in the store's own transactions).

        Raises:
            StorageError: the store is on SQLite, which has no job queue.
        """
        if not is_postgres(self.db):
            raise StorageError(
                "the job queue lives in PostgreSQL, and this store is on SQLite:"
                ' set [storage] url = "postgresql://…"'
            )
        return self.db

    def close(self) -> None:
        """Close the database, once no thread is in the middle of a call (the store's
        lock is free; on PostgreSQL, where reads skip it, once no statement runs); a call
        begun later fails instead of using it half closed."""
        with self.database.lock:
            self.database.close()

    def purge(self, older_than: dt.datetime) -> int:
        """Remove the content of checks created before ``older_than``, keeping the
        record; :mod:`storage.retention` says what goes and what stays. Checks purged
        before are passed over, and the rest go in batches, each in its own write
        transaction: the store's lock is free between them.

        Returns:
            How many checks had something to remove.

        Raises:
            ValueError: ``older_than`` is naive.
        """
        return purge_content(self.database, older_than)

    def integrity_ok(self) -> bool:
        """Whether ``PRAGMA integrity_check`` says ``ok`` and no foreign key dangles; on
        PostgreSQL, whether amcheck finds every index of the store consistent with its
        table and no report lacks its check (:func:`storage.postgres.consistent`)."""
        with self.database.lock:
            if is_postgres(self.db):
                return consistent(self.db)
            integrity = self.db.execute("PRAGMA integrity_check").fetchall()
            dangling = self.db.execute("PRAGMA foreign_key_check").fetchall()
        return integrity == [("ok",)] and not dangling
