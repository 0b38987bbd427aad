"""The job queue on a real PostgreSQL server, in one process: submissions from two
service replicas, a Procrastinate worker running check jobs, events, deliveries.

The checker is :class:`~tests.peers.fakes.fake_checker.FakeChecker` (a stand-in at our own
``Checker`` port): these tests prove what the queue does around a check (one run per
text, one report per check, every waiter answered, each card delivered once), not
that any fact-checking happened. ``test_queue_processes.py`` runs the real engine in
worker processes.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
from collections.abc import AsyncIterator
from typing import Any

import pytest

from tests.peers.fakes.fake_checker import (
    FakeChecker,
    HashingEncoder,
    fake_service,
    review_as,
    submit,
)

from bots.app.settings import Settings
from bots.service.checks import CheckService
from bots.service.delivery import PostCard
from bots.service.queue.delivery import QueuedDelivery
from bots.service.queue.jobs import CHECK_TASK, ensure_schema, make_app, queue_depth
from bots.service.queue.worker import (
    CheckRunner,
    register_check_tasks,
    register_deliver_task,
    run_jobs,
)
from bots.service.records import CardState, Failed, Outcome, Requester
from storage.deliveries import Claim, Deliveries
from storage.errors import StorageError
from storage.postgres import PostgresDatabase, is_postgres
from storage.sql import first_row
from storage.store import CheckStore
from zofia_engine.post import Post

pytestmark = pytest.mark.slow  # a real PostgreSQL server on loopback

SECRET = "queue-test-secret-0123456789"
POST = "The river bridge in Springfield will close for all of 2027, the mayor said."


def settings_for(url: str, **queue: Any) -> Settings:
    return Settings.model_validate(
        {
            "storage": {"url": url, "secret": SECRET},
            "service": {"user_per_minute": 1000, "chat_per_minute": 1000},
            "queue": {"heartbeat_s": 1.0, "stalled_after_s": 3.0, "poll_s": 0.5, **queue},
        }
    )


@contextlib.asynccontextmanager
async def replica(settings: Settings, checker: FakeChecker) -> AsyncIterator[CheckService]:
    """One bot process's check service (the composition root gives it the queued
    delivery)."""
    async with fake_service(settings, checker) as service:
        assert isinstance(service.delivery, QueuedDelivery)
        yield service


async def expect(service: CheckService, check_id: str, platform: str, target: Any) -> None:
    """Where the card of ``check_id`` goes, told to the queued delivery."""
    assert service.delivery is not None
    await service.delivery.expect(check_id, platform, target)


@contextlib.asynccontextmanager
async def worker(
    settings: Settings, checker: FakeChecker, *, deliver: PostCard | None = None
) -> AsyncIterator[CheckRunner]:
    """A Procrastinate worker taking check jobs (and, given ``deliver``, deliveries)."""
    db = PostgresDatabase(settings.storage.url)
    store = CheckStore(db, secret=settings.storage.secret.encode())
    runner = CheckRunner(checker, store, HashingEncoder())
    app = make_app(settings.storage.url)
    register_check_tasks(app, runner, settings.queue)
    queues = ["checks"]
    if deliver is not None:
        register_deliver_task(app, store, "test", deliver, settings.queue)
        queues.append("deliver.test")
    async with app.open_async():
        jobs = asyncio.create_task(run_jobs(app, queues, settings.queue, concurrency=4, name="t"))
        try:
            yield runner
        finally:
            jobs.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await jobs
    runner.close()
    db.close()


def asker(n: int) -> Requester:
    """User ``n`` in one of three groups: a group's check answers the others' repeats
    and runs (a private chat's would answer its own chat only: storage.other_chats)."""
    return Requester("test", f"user-{n}", f"chat-{n % 3}", in_group=True)


async def test_one_run_per_text_across_replicas_and_every_waiter_answered(
    postgres_url: str,
) -> None:
    settings = settings_for(postgres_url)
    checker = FakeChecker(delay_s=0.3)
    async with replica(settings, checker) as one, replica(settings, checker) as two:
        posts = [POST, POST.upper(), "Another claim about the moon landing in 1969 entirely."]
        handles = await asyncio.gather(
            *(submit(one if n % 2 else two, Post(text=posts[n % 3]), asker(n)) for n in range(12))
        )
        assert is_postgres(one.store.db)
        assert queue_depth(one.store.db) == 2  # the first two posts normalise to one text key
        async with worker(settings, checker) as runner:
            outcomes: list[Outcome] = await asyncio.wait_for(
                asyncio.gather(*(h.result() for h in handles)), 30
            )
        assert runner.runs == 2 and len(checker.runs) == 2
    originals = {o.original_id or o.check_id for o in outcomes}
    assert len(originals) == 2
    assert sum(o.repeat_kind == "exact" for o in outcomes) == 10
    store = CheckStore(PostgresDatabase(postgres_url))
    statuses = [row[0] for row in store.db.execute("SELECT status FROM checks").fetchall()]
    assert statuses == ["done"] * 12
    assert store.integrity_ok()
    store.close()


async def test_a_check_job_run_twice_leaves_one_report(postgres_url: str) -> None:
    settings = settings_for(postgres_url)
    checker = FakeChecker()
    async with replica(settings, checker) as service:
        handle = await submit(service, Post(text=POST), asker(1))
        runner = CheckRunner(checker, service.store, HashingEncoder())
        await runner.run(handle.check_id)
        await runner.run(handle.check_id)  # a retry after a worker was taken for dead
        # Two runs that both reached the engine: the second save is refused, not doubled.
        service.store.checks.set_status(handle.check_id, "running")
        await runner.run(handle.check_id)
        runner.close()
        outcome = await asyncio.wait_for(handle.result(), 10)
        reports = first_row(service.store.db.execute("SELECT count(*) FROM reports"))[0]
        with pytest.raises(StorageError):
            service.store.reports.save(handle.check_id, outcome.report)
    assert len(checker.runs) == 2 and outcome.check_id == handle.check_id
    assert reports == 1


async def test_a_failed_engine_run_fails_the_check_and_its_joiners(postgres_url: str) -> None:
    from zofia_engine.errors import ZofiaError

    settings = settings_for(postgres_url)
    checker = FakeChecker(fail=ZofiaError("the search API refused every call"))
    async with replica(settings, checker) as service:
        first = await submit(service, Post(text=POST), asker(1))
        second = await submit(service, Post(text=POST), asker(2))
        async with worker(settings, checker):
            for handle in (first, second):
                with pytest.raises(Exception, match="search API refused"):
                    await asyncio.wait_for(handle.result(), 10)
        rows = [service.store.checks.get(h.check_id) for h in (first, second)]
    assert [r.status for r in rows if r] == ["failed", "failed"]


async def test_each_card_is_delivered_once_by_a_deliver_job(postgres_url: str) -> None:
    settings = settings_for(postgres_url)
    checker = FakeChecker(delay_s=0.2)
    posted: list[tuple[Claim, Outcome | Failed]] = []

    async def post_card(claim: Claim, state: CardState) -> None:
        posted.append((claim, state.outcome))

    async with replica(settings, checker) as service:
        handles = [await submit(service, Post(text=POST), asker(n)) for n in range(3)]
        for n, handle in enumerate(handles):
            await expect(service, handle.check_id, "test", {"chat": n, "message": 10 + n})
        async with worker(settings, checker, deliver=post_card):
            await asyncio.wait_for(asyncio.gather(*(h.result() for h in handles)), 20)
            for _ in range(100):  # bounded: 10 s
                if len(posted) == 3:
                    break
                await asyncio.sleep(0.1)
            # A check that ended before its delivery was expected is delivered too.
            late = await submit(service, Post(text="A different claim, checked before."), asker(9))
            await asyncio.wait_for(late.result(), 10)
            await expect(service, late.check_id, "test", {"chat": 9, "message": 99})
            for _ in range(100):
                if len(posted) == 4:
                    break
                await asyncio.sleep(0.1)
            await asyncio.sleep(0.5)  # nothing more comes
    assert sorted(c.target["message"] for c, _ in posted) == [10, 11, 12, 99]
    assert all(isinstance(found, Outcome) for _, found in posted)
    db = PostgresDatabase(postgres_url)
    rows = db.execute("SELECT target_json, delivered_at FROM deliveries").fetchall()
    db.close()
    assert len(rows) == 4 and all(t == "{}" and d is not None for t, d in rows)


async def test_a_deliver_job_and_a_repeat_carry_the_moderators_verdict(postgres_url: str) -> None:
    settings = settings_for(postgres_url)
    checker = FakeChecker()
    posted: list[Outcome | Failed] = []

    async def post_card(claim: Claim, state: CardState) -> None:
        posted.append(state.outcome)

    async with replica(settings, checker) as service:
        handle = await submit(service, Post(text=POST), asker(1))
        async with worker(settings, checker, deliver=post_card):
            machine = (await asyncio.wait_for(handle.result(), 10)).report.verdict
            changed = "true" if machine != "true" else "false"
            await review_as(service, handle.check_id, ("cli", "77"), changed, "Council minutes.")
            # The card is posted after the review (a delivery expected late, or retried).
            await expect(service, handle.check_id, "test", {"chat": 1, "message": 10})
            for _ in range(100):  # bounded: 10 s
                if posted:
                    break
                await asyncio.sleep(0.1)
        repeat = await asyncio.wait_for(
            (await submit(service, Post(text=POST), asker(2))).result(), 10
        )
    assert len(posted) == 1 and isinstance(posted[0], Outcome)
    assert posted[0].report.verdict == changed != machine
    assert repeat.repeat_kind == "exact" and repeat.report.verdict == changed
    assert len(checker.runs) == 1


async def test_a_delivery_claim_is_leased_to_one_replica(postgres_url: str) -> None:
    settings = settings_for(postgres_url)
    async with replica(settings, FakeChecker()) as service:
        handle = await submit(service, Post(text=POST), asker(1))
        book = Deliveries(
            service.store.database, service.store.deliveries.sealer, lease=dt.timedelta(seconds=60)
        )
        await expect(service, handle.check_id, "test", {"chat": 1})
        claim = book.claim(handle.check_id)
        assert claim is not None and claim.target == {"chat": 1}
        assert book.claim(handle.check_id) is None and book.is_claimed(handle.check_id)
        book.release(claim)  # posting failed: free for the next attempt
        again = book.claim(handle.check_id)
        assert again is not None
        book.delivered(again)
        assert book.claim(handle.check_id) is None and not book.is_claimed(handle.check_id)
        expired = Deliveries(
            service.store.database, service.store.deliveries.sealer, lease=dt.timedelta(seconds=-1)
        )
        await expect(service, handle.check_id, "test", {"chat": 2})
        assert book.claim(handle.check_id) is not None
        assert expired.claim(handle.check_id) is not None  # the first lease ran out


async def test_near_repeats_are_found_across_processes(postgres_url: str) -> None:
    settings = settings_for(postgres_url)
    checker = FakeChecker()
    async with replica(settings, checker) as one, replica(settings, checker) as two:
        first = await submit(one, Post(text=POST), asker(1))
        async with worker(settings, checker):
            await asyncio.wait_for(first.result(), 10)
        # Replica two never saw that check; its index catches up from the store.
        near = await submit(two, Post(text="Fwd: " + POST + " #bridge"), asker(2))
        outcome = await near.result()
    assert outcome.repeat_kind == "near" and outcome.original_id == first.check_id
    assert len(checker.runs) == 1


async def test_the_queueing_lock_and_schema_are_there(postgres_url: str) -> None:
    db = PostgresDatabase(postgres_url)
    assert ensure_schema(db) is True and ensure_schema(db) is False
    settings = settings_for(postgres_url)
    async with replica(settings, FakeChecker()) as service:
        handle = await submit(service, Post(text=POST), asker(1))
        row = db.execute(
            "SELECT task_name, queueing_lock, args->>'check_id' FROM procrastinate_jobs"
        ).fetchone()
    assert row is not None
    assert row[0] == CHECK_TASK and row[1].startswith("check:") and row[2] == handle.check_id
    db.close()


class NaNEncoder(HashingEncoder):
    """An encoder gone wrong: its vectors cannot be stored."""

    def encode(self, texts: Any) -> Any:
        return super().encode(texts) * float("nan")


async def test_a_report_that_cannot_be_stored_fails_the_check(postgres_url: str) -> None:
    settings = settings_for(postgres_url)
    checker = FakeChecker()
    async with replica(settings, checker) as service:
        handle = await submit(service, Post(text=POST), asker(1))
        runner = CheckRunner(checker, service.store, NaNEncoder())
        await runner.run(handle.check_id)
        runner.close()
        with pytest.raises(Exception, match="could not be stored"):
            await asyncio.wait_for(handle.result(), 10)
        row = service.store.checks.get(handle.check_id)
    assert row is not None and row.status == "failed"


async def test_a_job_out_of_attempts_ends_its_check_and_its_joiners(postgres_url: str) -> None:
    settings = settings_for(postgres_url, max_attempts=2)
    checker = FakeChecker()
    async with replica(settings, checker) as service:
        first = await submit(service, Post(text=POST), asker(1))
        second = await submit(service, Post(text=POST), asker(2))
        # What two runs that each took their worker down leave: the job, twice tried.
        service.store.db.execute("UPDATE procrastinate_jobs SET attempts = 2")
        async with worker(settings, checker):
            for handle in (first, second):
                with pytest.raises(Exception, match="tried 2 times"):
                    await asyncio.wait_for(handle.result(), 10)
        assert checker.runs == []  # given up without a third run
        rows = [service.store.checks.get(h.check_id) for h in (first, second)]
    assert [r.status for r in rows if r] == ["failed", "failed"]
