"""Shares of the limits, on the real check service and a SQLite file, with the engine's
port taken by the in-process ``FakeChecker`` (it answers every post alike, held at a
gate the test opens while it needs checks running: these prove the accounting around
checks, not a check).

A burst of concurrent requests passes a limit no further than one at a time would; a
request counts from its admission (a failed fetch too); a private chat holds one
request answered and a short queue per user, counted in the user's share of the
pending checks; a check reserves tokens until it ends, and one user or one chat holds
no more than its share of the pending checks and of the day's budget. Each refusal
names its limit and when that limit frees up: a share held by checks under way frees
when they end, not at midnight.
"""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.peers.fakes.fake_checker import FakeChecker, Gate, HashingEncoder, fake_service, submit

from bots.app.runtime import build_service
from bots.app.settings import Settings
from bots.service.checks import CheckService
from bots.service.records import Admission, CheckFailedError, Requester
from bots.service.refusals import BusyError, Limit, RateLimitedError
from zofia_engine.post import Post

ALICE = Requester("telegram", "1001", "group-1")
BOB = Requester("telegram", "1002", "group-1")
CAROL = Requester("telegram", "1003", "group-2")
ALICE_ALONE = Requester("telegram", "1001", "1001", private=True)
POSTS = [
    f"The river bridge number {n} in Springfield will close for all of 2027." for n in range(9)
]

Start = Callable[..., AbstractAsyncContextManager[CheckService]]


@pytest.fixture
def start(tmp_path: Path) -> Start:
    @asynccontextmanager
    async def started(checker: FakeChecker, **limits: Any) -> AsyncIterator[CheckService]:
        settings = Settings.model_validate(
            {
                "storage": {"path": str(tmp_path / "z.db"), "secret": "s3cret-for-tests-only"},
                "service": limits,
                "llm": {"max_tokens_per_check": 1000},
            }
        )
        async with fake_service(settings, checker) as service:
            yield service

    return started


def _admit(service: CheckService, requester: Requester) -> Admission:
    """One request admitted by the limits, as the service's front door admits it
    (blocking): its attempt stays open until :func:`_release`."""
    namer = service.namer
    return service.limits.admit(
        requester=namer.user(requester.platform, requester.user_id),
        platform=requester.platform,
        chat=namer.chat(requester.platform, requester.chat_id),
        private=requester.private,
        now=service.clock(),
    )


def _release(service: CheckService, admission: Admission) -> None:
    service.store.attempts.end(admission.attempt_id)


async def _admit_at_once(service: CheckService, requester: Requester, n: int) -> list[Any]:
    """``n`` admissions at once, each on its own thread: what a forwarded burst does."""
    return await asyncio.gather(
        *(asyncio.to_thread(_admit, service, requester) for _ in range(n)),
        return_exceptions=True,
    )


async def test_a_burst_of_thirty_passes_the_minute_limit_exactly(start: Start) -> None:
    async with start(FakeChecker(), user_per_minute=3, chat_per_minute=100) as service:
        answers = await _admit_at_once(service, ALICE, 30)
    admitted = [a for a in answers if not isinstance(a, BaseException)]
    refused = [a for a in answers if isinstance(a, RateLimitedError)]
    assert len(admitted) == 3 and len(refused) == 27
    assert "3 checks a minute for you" in str(refused[0])
    assert {r.refusal.limit for r in refused} == {Limit.USER_RATE}
    assert all(r.refusal.count == 3 and 1 <= r.retry_after_s <= 60 for r in refused)


async def test_a_request_costs_from_its_admission_though_its_work_fails(start: Start) -> None:
    async with start(FakeChecker(), user_per_minute=2, chat_per_minute=100) as service:
        await asyncio.to_thread(_admit, service, ALICE)  # a link that then fails to fetch
        await (await submit(service, Post(text=POSTS[0]), ALICE)).result()
        with pytest.raises(RateLimitedError, match="2 checks a minute"):
            await asyncio.to_thread(_admit, service, ALICE)
        alice = service.namer.user(ALICE.platform, ALICE.user_id)
        assert service.limits.left_today(alice, service.clock()) == 48


async def test_a_private_chat_holds_one_request_and_a_short_queue(start: Start) -> None:
    async with start(FakeChecker(), user_per_minute=100, chat_per_minute=100) as service:
        answers = await _admit_at_once(service, ALICE_ALONE, 10)
        admitted = [a for a in answers if not isinstance(a, BaseException)]
        assert len(admitted) == 5  # one answered, four waiting their turn
        refused = [a for a in answers if isinstance(a, RateLimitedError)]
        assert len(refused) == 5
        assert {(r.refusal.limit, r.refusal.count) for r in refused} == {(Limit.PRIVATE_QUEUE, 4)}
        await asyncio.to_thread(_admit, service, ALICE)  # in a group, no such rule
        await asyncio.to_thread(_release, service, admitted[0])
        await asyncio.to_thread(_admit, service, ALICE_ALONE)  # answered: the next may come


async def test_a_private_queue_counts_in_the_users_share_of_the_pending_checks(
    start: Start,
) -> None:
    gate = Gate()  # the group's check runs until the test opens it
    limits = {"user_per_minute": 100, "chat_per_minute": 100, "daily_token_budget": 0}
    # A share of 4 pending checks a user: one running in a group, three in the line.
    shares = {"max_pending_checks": 8, "user_pending_share": 0.5}
    async with start(FakeChecker(gate=gate), **shares, **limits) as service:
        in_group = await submit(service, Post(text=POSTS[0]), ALICE)
        answers = await _admit_at_once(service, ALICE_ALONE, 6)
        admitted = [a for a in answers if not isinstance(a, BaseException)]
        refused = [a for a in answers if isinstance(a, RateLimitedError)]
        assert len(admitted) == 3
        assert {(r.refusal.limit, r.refusal.count) for r in refused} == {(Limit.USER_PENDING, 4)}
        gate.open()
        await in_group.result()


async def test_a_running_check_holds_its_reserve_and_a_user_only_a_share(start: Start) -> None:
    gate = Gate()  # the checks run until the test opens it
    checker = FakeChecker(gate=gate, tokens=100)
    # 1,000 tokens reserved a check; a day's budget of 3,000, a user's share 1,500.
    limits: dict[str, Any] = {"user_per_minute": 100, "chat_per_minute": 100}
    shares = {"daily_token_budget": 3000, "user_budget_share": 0.5, "chat_budget_share": 1}
    async with start(checker, **limits, **shares) as service:
        first = await submit(service, Post(text=POSTS[0]), ALICE)
        second = await submit(service, Post(text=POSTS[1]), ALICE)  # 1,000 < 1,500
        with pytest.raises(RateLimitedError, match="your share of today's checking budget") as mine:
            await submit(service, Post(text=POSTS[2]), ALICE)  # 2,000 held
        third = await submit(service, Post(text=POSTS[3]), BOB)  # 2,000 < 3,000 in all
        with pytest.raises(BusyError, match="today's checking budget held") as everyone:
            await submit(service, Post(text=POSTS[4]), CAROL)
        # Held by checks under way, not spent: free once they end, not at midnight.
        for refused, limit in ((mine, Limit.USER_BUDGET), (everyone, Limit.BUDGET)):
            assert refused.value.refusal.limit is limit and refused.value.refusal.held
            assert refused.value.retry_after_s <= 120  # about one check's time
        gate.open()
        used = [(await h.result()).report.usage for h in (first, second, third)]
        # Ended, each is charged what it spent (under its reserve): room again.
        midnight = service.clock().replace(hour=0, minute=0, second=0, microsecond=0)
        real = [u.prompt_tokens + u.completion_tokens for u in used]
        assert service.store.checks.tokens_since(midnight) == sum(real) and max(real) < 1000
        await (await submit(service, Post(text=POSTS[2]), ALICE)).result()


async def test_a_share_spent_by_checks_that_ended_frees_at_midnight(start: Start) -> None:
    checker = FakeChecker(tokens=900)  # each check spends 900 of its 1,000 reserved
    limits: dict[str, Any] = {"user_per_minute": 100, "chat_per_minute": 100}
    shares = {"daily_token_budget": 3000, "user_budget_share": 0.5, "chat_budget_share": 1}
    async with start(checker, **limits, **shares) as service:
        for text in POSTS[:2]:
            await (await submit(service, Post(text=text), ALICE)).result()
        with pytest.raises(RateLimitedError) as refused:
            await submit(service, Post(text=POSTS[2]), ALICE)  # 1,800 spent of 1,500
        now = service.clock()
        midnight = now.replace(hour=0, minute=0, second=0, microsecond=0) + dt.timedelta(days=1)
    assert refused.value.refusal.limit is Limit.USER_BUDGET and not refused.value.refusal.held
    assert refused.value.retry_after_s == pytest.approx((midnight - now).total_seconds(), abs=5)


async def test_a_failed_check_keeps_its_reserve(start: Start) -> None:
    checker = FakeChecker(fail=RuntimeError("the model server went away"))
    async with start(checker, user_per_minute=100, chat_per_minute=100) as service:
        handle = await submit(service, Post(text=POSTS[0]), ALICE)
        with pytest.raises(CheckFailedError):
            await handle.result()
        row = service.store.checks.get(handle.check_id)
        assert row is not None and row.status == "failed"
        since = service.clock() - dt.timedelta(hours=1)
        assert service.store.checks.tokens_since(since) == 1000


async def test_one_user_holds_only_a_share_of_the_pending_checks(start: Start) -> None:
    gate = Gate()  # the checks run until the test opens it
    checker = FakeChecker(gate=gate)
    limits = {"user_per_minute": 100, "chat_per_minute": 100, "daily_token_budget": 0}
    async with start(checker, max_pending_checks=4, user_pending_share=0.5, **limits) as service:
        held = [await submit(service, Post(text=text), ALICE) for text in POSTS[:2]]
        with pytest.raises(RateLimitedError, match="2 checks of yours pending") as refused:
            await submit(service, Post(text=POSTS[2]), ALICE)
        assert refused.value.refusal.limit is Limit.USER_PENDING
        other = await submit(service, Post(text=POSTS[3]), CAROL)  # another user, another chat
        gate.open()
        for handle in (*held, other):
            await handle.result()
        await (await submit(service, Post(text=POSTS[2]), ALICE)).result()


async def test_a_one_shot_run_beside_the_bot_leaves_its_open_requests_alone(
    start: Start, tmp_path: Path
) -> None:
    async with start(FakeChecker(), user_per_minute=100, chat_per_minute=100) as service:
        await asyncio.to_thread(_admit, service, ALICE_ALONE)  # the bot's request, under way
        settings = Settings.model_validate(
            {"storage": {"path": str(tmp_path / "z.db"), "secret": "s3cret-for-tests-only"}}
        )
        one_shot = build_service(settings, FakeChecker(), HashingEncoder())
        await one_shot.start(resume=False)  # `zofia check` beside the running bot
        await one_shot.aclose()
        one_shot.store.close()
        for _ in range(4):  # its line (four may wait) is the bot's too
            await asyncio.to_thread(_admit, service, ALICE_ALONE)
        with pytest.raises(RateLimitedError, match="already waiting in this private chat"):
            await asyncio.to_thread(_admit, service, ALICE_ALONE)
