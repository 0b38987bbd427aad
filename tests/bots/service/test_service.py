"""The check service on a real SQLite file, with the engine's ports taken by
in-process stand-ins (``tests.peers.fakes.fake_checker``): repeats answered from the store, near
repeats, coalescing, limits, retention, cancellation and shutdown. These prove the
orchestration around a check, not a check: the checker answers every post alike."""

from __future__ import annotations

import asyncio
import datetime as dt
import threading
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from tests.peers.fakes.fake_checker import FakeChecker, Gate, HashingEncoder, submit
from tests.peers.fixtures.images import ScriptedOCR, headline

from bots.app.runtime import build_service
from bots.app.settings import Settings
from bots.service.checks import CheckService
from bots.service.records import Requester
from bots.service.refusals import BusyError, Limit, RateLimitedError, Refusal
from bots.service.shown import report_of
from storage.opening import open_store
from storage.store import CheckStore
from zofia_engine.errors import InvalidPostError
from zofia_engine.image_settings import ImageSettings
from zofia_engine.images.reader import ImageReader
from zofia_engine.post import Post, PostImage

POST = (
    "The mayor of Springfield, Illinois has banned bicycles from every street in the city. "
    "Mayor Misty Buscher signed the law in March and cyclists now face a 500 dollar fine."
)
ALICE = Requester("telegram", "1001", "chat-1")
BOB = Requester("telegram", "1002", "chat-1")
GENEROUS = {"user_per_minute": 100, "chat_per_minute": 100, "user_daily": 1000}


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = dt.datetime(2026, 11, 21, 12, 0, tzinfo=dt.UTC)

    def __call__(self) -> dt.datetime:
        return self.now


@pytest.fixture
def checker() -> FakeChecker:
    return FakeChecker()


@pytest_asyncio.fixture
async def make_service(
    tmp_path: Path, checker: FakeChecker
) -> AsyncIterator[Callable[..., CheckService]]:
    """Services on one database file, one checker; closed after the test."""
    made: list[CheckService] = []

    def make(
        clock: Clock | None = None, retention: dt.timedelta | None = None, **service: Any
    ) -> CheckService:
        settings = Settings.model_validate(
            {
                "storage": {"path": str(tmp_path / "zofia.db"), "secret": "s3cret-for-tests-only"},
                "service": service,
            }
        )
        svc = build_service(settings, checker, HashingEncoder(), clock=clock)
        svc.retention = retention
        made.append(svc)
        return svc

    yield make
    for svc in made:
        await svc.aclose()


async def test_an_exact_repeat_is_answered_from_the_store(
    make_service: Callable[..., CheckService], checker: FakeChecker
) -> None:
    clock = Clock()
    service = make_service(clock)
    await service.start()
    first = await (await submit(service, Post(text=POST), ALICE)).result()
    calls = len(checker.runs)
    assert first.repeat_kind is None and calls > 0

    clock.now += dt.timedelta(hours=1)
    handle = await submit(service, Post(text="  " + POST.upper() + "\n"), BOB)
    assert handle.done  # answered at once
    again = await handle.result()
    assert len(checker.runs) == calls  # no LLM call
    assert again.repeat_kind == "exact" and again.original_id == first.check_id
    assert again.original_at == clock.now - dt.timedelta(hours=1)
    assert again.report == first.report
    row = service.store.checks.get(again.check_id)
    assert row is not None and row.status == "done" and row.repeat_of == first.check_id
    assert report_of(service.store, again.check_id) == (row, first.report)

    # Outside the freshness window, or with --recheck, the engine runs again.
    clock.now += dt.timedelta(hours=service.settings.repeat_window_hours)
    later = await (await submit(service, Post(text=POST), BOB)).result()
    assert later.repeat_kind is None and len(checker.runs) > calls
    calls = len(checker.runs)
    forced = await (await submit(service, Post(text=POST), ALICE, recheck=True)).result()
    assert forced.repeat_kind is None and len(checker.runs) > calls


async def test_a_near_repeat_reuses_the_stored_report(
    make_service: Callable[..., CheckService], checker: FakeChecker
) -> None:
    service = make_service()
    await service.start()
    first = await (await submit(service, Post(text=POST), ALICE)).result()
    calls = len(checker.runs)
    # What a forward adds (header, hashtags, emoji) is dropped before encoding, so this
    # variant is a near repeat for any encoder; the threshold itself is bench/near_threshold's.
    variant = "Fwd: " + POST + "\n#share 🚲"
    near = await (await submit(service, Post(text=variant), BOB)).result()
    assert near.repeat_kind == "near" and near.original_id == first.check_id
    assert near.similarity is not None and near.similarity >= 0.95
    assert len(checker.runs) == calls
    edited = POST.replace("has banned", "has not banned")
    changed = await (await submit(service, Post(text=edited), BOB)).result()
    assert changed.repeat_kind is None  # a different claim, however close the cosine
    calls = len(checker.runs)
    other = "The city of Springfield opened a new public library on Main Street on Friday."
    fresh = await (await submit(service, Post(text=other), BOB)).result()
    assert fresh.repeat_kind is None and len(checker.runs) > calls


async def test_twenty_concurrent_submissions_make_one_run(
    make_service: Callable[..., CheckService], checker: FakeChecker
) -> None:
    service = make_service(**GENEROUS)
    await service.start()
    people = [Requester("discord", f"user-{i}", "guild-1") for i in range(20)]
    handles = await asyncio.gather(*(submit(service, Post(text=POST), p) for p in people))
    outcomes = await asyncio.gather(*(h.result() for h in handles))
    assert len(checker.runs) == 1
    assert all(o.report == outcomes[0].report for o in outcomes)
    # The limits are read off the event loop, so which request goes first is the store's
    # order, not the list's: exactly one ran, and the other 19 are its exact repeats.
    (first,) = [o for o in outcomes if o.repeat_kind is None]
    repeats = [o for o in outcomes if o is not first]
    assert [o.repeat_kind for o in repeats] == ["exact"] * 19
    assert {o.original_id for o in repeats} == {first.check_id}
    assert len({o.check_id for o in outcomes}) == 20  # every request is its own stored check
    for outcome in outcomes:
        row = service.store.checks.get(outcome.check_id)
        assert row is not None and row.status == "done"


async def test_a_joined_waiter_sees_the_runs_progress(
    make_service: Callable[..., CheckService], checker: FakeChecker
) -> None:
    checker.gate = gate = Gate()  # the run is under way while Bob joins it
    service = make_service()
    await service.start()
    owner = await submit(service, Post(text=POST), ALICE)
    await gate.held()
    joined = await submit(service, Post(text=POST), BOB)
    gate.open()
    stages = [e.stage async for e in joined.events() if e.kind == "finished"]
    assert "debate" in stages and stages[-1] == "verdict"
    assert (await joined.result()).report == (await owner.result()).report


async def test_rate_limits_and_quotas_refuse_with_the_wait(
    make_service: Callable[..., CheckService], checker: FakeChecker
) -> None:
    clock = Clock()
    service = make_service(clock, user_per_minute=2, user_daily=3, chat_per_minute=50)
    await service.start()
    for i in range(2):
        await (await submit(service, Post(text=f"{POST} Update {i}."), ALICE)).result()
    with pytest.raises(RateLimitedError, match=r"2 checks a minute for you.*try again in") as hit:
        await submit(service, Post(text=POST + " Again."), ALICE)
    assert 0 < hit.value.retry_after_s <= 60
    await submit(service, Post(text=POST), BOB)  # others are not held back

    clock.now += dt.timedelta(minutes=2)
    await (await submit(service, Post(text=POST + " Third."), ALICE)).result()
    clock.now += dt.timedelta(minutes=2)
    with pytest.raises(RateLimitedError, match="3 checks a day for you") as quota:
        await submit(service, Post(text=POST + " Fourth."), ALICE)
    assert quota.value.retry_after_s > 3600


async def test_retention_purge_keeps_verdicts_and_stops_repeats(
    make_service: Callable[..., CheckService], checker: FakeChecker
) -> None:
    clock = Clock()
    # A window longer than the retention: only the purge can stop the repeat.
    service = make_service(clock, retention=dt.timedelta(days=30), repeat_window_hours=2000)
    await service.start()
    first = await (await submit(service, Post(text=POST), ALICE)).result()
    clock.now += dt.timedelta(days=29)
    assert await service.purge_expired() == 0
    clock.now += dt.timedelta(days=2)
    assert await service.purge_expired() == 1
    row = service.store.checks.get(first.check_id)
    assert row is not None and row.post_text is None and row.status == "done"
    assert service.store.reports.get(first.check_id) is None
    assert [v for _, v in service.store.checks.history()] == ["false"]
    calls = len(checker.runs)
    again = await (await submit(service, Post(text=POST), BOB)).result()
    assert again.repeat_kind is None and len(checker.runs) > calls


async def test_cancel_and_shutdown(
    make_service: Callable[..., CheckService], checker: FakeChecker
) -> None:
    checker.gate = gate = Gate()  # closed: the check runs until it is cancelled
    service = make_service()
    await service.start()
    handle = await submit(service, Post(text=POST), ALICE)
    await gate.held(1)
    assert handle.cancel()
    with pytest.raises(asyncio.CancelledError):
        await handle.result()
    row = service.store.checks.get(handle.check_id)
    assert row is not None and row.status == "cancelled"

    kept = await submit(service, Post(text=POST + " Later."), ALICE)
    await gate.held(1)
    await service.aclose()  # shutdown: the running check goes back to the queue
    row = service.store.checks.get(kept.check_id)
    assert row is not None and row.status == "queued"
    gate.open()
    successor = make_service()
    assert await successor.start() == [kept.check_id]
    resumed = successor.handle(kept.check_id)
    assert resumed is not None and (await resumed.result()).report.verdict == "false"


async def test_one_requesters_cancel_leaves_the_others_run_going(
    make_service: Callable[..., CheckService], checker: FakeChecker
) -> None:
    checker.gate = gate = Gate()  # closed: the run goes on until the test opens it
    service = make_service(**GENEROUS)
    await service.start()
    owner = await submit(service, Post(text=POST), ALICE)
    joined = await submit(service, Post(text=POST), BOB)
    await gate.held(1)
    assert owner.cancel()  # Alice stops waiting; Bob still waits on the run
    with pytest.raises(asyncio.CancelledError):
        await owner.result()
    seen = [event async for event in owner.events()]  # ends: Alice no longer waits
    assert len(seen) < 20
    gate.open()
    outcome = await joined.result()
    assert outcome.report.verdict == "false" and outcome.original_id == owner.check_id
    row = service.store.checks.get(joined.check_id)
    assert row is not None and row.status == "done"

    # A joined waiter that leaves stops nothing either; the last one to leave stops the run.
    other = "The governor of Ohio closed every public library in the state on Monday."
    gate.close()  # until the last waiter leaves
    first = await submit(service, Post(text=other), ALICE)
    second = await submit(service, Post(text=other), BOB)
    await gate.held(1)
    assert second.cancel()
    await service.waiters.flush()  # its status is written off the event loop
    left = service.store.checks.get(second.check_id)
    assert left is not None and left.status == "cancelled"
    assert first.cancel()
    with pytest.raises(asyncio.CancelledError):
        await first.result()
    stopped = service.store.checks.get(first.check_id)
    assert stopped is not None and stopped.status == "cancelled"
    assert not first.cancel()  # already cancelled


async def test_joined_checks_statuses_are_written_off_the_event_loop(
    make_service: Callable[..., CheckService],
    checker: FakeChecker,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    checker.gate = gate = Gate()  # closed: the run goes on until the test opens it
    service = make_service(**GENEROUS)
    await service.start()
    loop_thread = threading.get_ident()
    on_loop: list[tuple[str, str]] = []
    set_status = service.store.checks.set_status

    def watched(check_id: str, status: Any, **kwargs: Any) -> None:
        if threading.get_ident() == loop_thread:
            on_loop.append((check_id, status))
        set_status(check_id, status, **kwargs)

    monkeypatch.setattr(service.store.checks, "set_status", watched)
    owner = await submit(service, Post(text=POST), ALICE)
    joined = await submit(service, Post(text=POST), BOB)
    leaving = await submit(service, Post(text=POST), Requester("telegram", "1003", "chat-1"))
    await gate.held(1)
    assert leaving.cancel()  # a joined waiter leaves: its check is cancelled
    gate.open()
    outcome = await joined.result()  # the run ends: the joined check is done
    # The joined check's row was written before its waiter was answered (read before
    # anything else is awaited: no write can land in between).
    answered = service.store.checks.get(joined.check_id)
    assert answered is not None and answered.status == "done"
    await service.waiters.flush()
    assert on_loop == []
    statuses = [service.store.checks.get(h.check_id) for h in (owner, joined, leaving)]
    assert [row.status for row in statuses if row] == ["done", "done", "cancelled"]
    assert outcome.check_id == joined.check_id and outcome.original_id == owner.check_id


async def test_a_repeat_is_answered_only_in_its_own_reply_language(
    make_service: Callable[..., CheckService], checker: FakeChecker
) -> None:
    service = make_service(**GENEROUS)
    await service.start()
    english = await (await submit(service, Post(text=POST), ALICE)).result()
    calls = len(checker.runs)
    french = await (await submit(service, Post(text=POST, language="French"), BOB)).result()
    assert french.repeat_kind is None and len(checker.runs) > calls  # a check of its own
    row = service.store.checks.get(french.check_id)
    assert row is not None and row.language == "French" and row.post is not None
    assert row.post.language == "French"
    calls = len(checker.runs)
    again = await (await submit(service, Post(text=POST, language="French"), ALICE)).result()
    assert again.original_id == french.check_id and len(checker.runs) == calls
    variant = "Fwd: " + POST + "\n#share 🚲"
    near = await (await submit(service, Post(text=variant, language="French"), BOB)).result()
    assert near.repeat_kind == "near" and near.original_id == french.check_id
    plain = await (await submit(service, Post(text=variant), BOB)).result()
    assert plain.repeat_kind == "near" and plain.original_id == english.check_id


@pytest.mark.parametrize(
    "text",
    [
        "x" * 1_000_000,
        "Springfield\x00 banned\x00 bicycles, the mayor said.",
        "The mayor \ud800 of Springfield banned bicycles.",
        "斯普林菲尔德市长禁止所有街道上的自行车。",
        "حظر عمدة سبرينغفيلد الدراجات في جميع الشوارع.",
    ],
)
async def test_bad_input_is_stored_safely(
    make_service: Callable[..., CheckService], text: str
) -> None:
    service = make_service()
    await service.start()
    outcome = await (await submit(service, Post(text=text), ALICE)).result()
    row = service.store.checks.get(outcome.check_id)
    assert row is not None and row.status == "done" and row.post_text
    assert service.store.reports.get(outcome.check_id) == outcome.report
    assert service.store.integrity_ok()


async def test_an_empty_post_is_refused_and_not_stored(
    make_service: Callable[..., CheckService], checker: FakeChecker
) -> None:
    service = make_service()
    await service.start()
    for text in ("", "  \n ", "\x00"):
        with pytest.raises(InvalidPostError, match="The post is empty"):
            await submit(service, Post(text=text), ALICE)
    assert service.store.checks.history() == [] and checker.runs == []


def test_the_user_id_secret_is_generated_once_and_kept_private(tmp_path: Path) -> None:
    settings = Settings.model_validate({"storage": {"path": str(tmp_path / "z.db")}})
    store, secret = open_store(settings.storage)
    assert isinstance(store, CheckStore) and len(secret) >= 16
    assert open_store(settings.storage)[1] == secret  # generated once, then reused
    assert (tmp_path / "z.db.secret").stat().st_mode & 0o777 == 0o600


def _long_post(figure: int) -> str:
    """About 5 MB of common words, with ``figure`` far beyond what the encoder reads."""
    sentence = "The council said the members of the city approved the plan for the people. "
    head = sentence * 300
    return head + f"The plan costs {figure} dollars. " + sentence * 70_000


async def test_a_5_mb_near_repeat_is_compared_within_its_cut(
    make_service: Callable[..., CheckService], checker: FakeChecker
) -> None:
    """A near repeat of a 5 MB post is decided on the posts as they are cut (50,000
    characters), so the word alignment's work is bounded (it once took minutes on the
    whole text); how long the loop may stall meanwhile is
    ``bench/near_repeat_stall.py``'s ``worst_stall_ms``."""
    service = make_service(**GENEROUS)
    await service.start()
    text = _long_post(12)
    first = await (await submit(service, text, ALICE)).result()
    # The check gets the post cut to 50,000 characters, and how long it was (to say so).
    assert checker.runs[0].original_chars == len(text)
    assert len(checker.runs[0].text) <= 50_000
    stored = service.store.checks.get(first.check_id)
    assert stored is not None and stored.post_text is not None
    assert len(stored.post_text) <= 50_000  # the post is kept bounded
    calls = len(checker.runs)
    # The same words with one figure changed: the encoder sees the same opening, so the
    # word alignment runs, on the cut texts, and finds the figure (within the cut).
    handle = await submit(service, Post(text=_long_post(13)), BOB)
    changed = await handle.result()
    assert changed.repeat_kind is None and len(checker.runs) > calls  # a different claim
    assert len(checker.runs[-1].text) <= 50_000


async def test_a_full_queue_refuses_new_checks_but_not_repeats(
    make_service: Callable[..., CheckService], checker: FakeChecker
) -> None:
    service = make_service(max_pending_checks=1, **GENEROUS)
    await service.start()
    checker.gate = gate = Gate()  # the first check is still running when the others arrive
    first = await submit(service, Post(text=POST), ALICE)
    joined = await submit(service, Post(text=POST), BOB)  # the same post: it waits on the run
    with pytest.raises(BusyError, match=r"busy with 1 checks\); try again in \d+ (s|min)") as busy:
        await submit(service, Post(text="The river bridge in Springfield will close in May."), BOB)
    assert busy.value.refusal == Refusal(Limit.QUEUE, busy.value.retry_after_s, count=1)
    gate.open()
    assert (await joined.result()).original_id == first.check_id
    await first.result()


async def test_the_daily_token_budget_stops_new_checks_until_midnight(
    make_service: Callable[..., CheckService], checker: FakeChecker
) -> None:
    clock = Clock()  # 12:00 UTC
    service = make_service(clock, daily_token_budget=1000, **GENEROUS)
    await service.start()
    spent = await (await submit(service, Post(text=POST), ALICE)).result()
    assert spent.report.usage.prompt_tokens > 1000  # this one check spends the budget
    calls = len(checker.runs)
    other = Post(text="The river bridge in Springfield will close in May.")
    with pytest.raises(BusyError, match=r"budget spent.*again in 12 h") as refused:
        await submit(service, other, BOB)
    assert refused.value.retry_after_s == 12 * 3600
    assert refused.value.refusal == Refusal(Limit.BUDGET, 12 * 3600, held=False)
    repeat = await (await submit(service, Post(text=POST), BOB)).result()
    assert repeat.repeat_kind == "exact" and len(checker.runs) == calls
    clock.now += dt.timedelta(hours=12)  # a new day
    fresh = await (await submit(service, other, BOB)).result()
    assert fresh.repeat_kind is None and len(checker.runs) > calls


async def test_the_near_repeat_index_keeps_only_the_window(
    make_service: Callable[..., CheckService], checker: FakeChecker
) -> None:
    clock = Clock()
    service = make_service(clock, **GENEROUS)
    await service.start()
    first = await (await submit(service, Post(text=POST), ALICE)).result()
    assert first.check_id in service.repeats.index
    clock.now += dt.timedelta(hours=service.settings.repeat_window_hours, minutes=1)
    await service.purge_expired()  # what the bots run every day
    assert len(service.repeats.index) == 0  # a check nobody can repeat any more holds no memory


async def test_images_are_keyed_by_their_hash_and_never_near_repeats(
    make_service: Callable[..., CheckService], checker: FakeChecker
) -> None:
    """The same caption on another image is another check, however close the text; the
    same image again is an exact repeat."""
    # Both images read as the very same words (the OCR is scripted;
    # tests/engine/images/test_images.py reads real ones): only the images themselves tell
    # the two posts apart.
    checker.reader = ImageReader(
        ImageSettings(), ocr=ScriptedOCR("Springfield bans bicycles\nfrom every street")
    )
    service = make_service()
    await service.start()
    first = headline(["Springfield bans bicycles", "from every street"])
    other = headline(["Springfield bans bicycles", "from every street"], stamp="FALSE")
    caption = "Is this real?"
    one = await (
        await submit(service, Post(text=caption, images=(PostImage(data=first),)), ALICE)
    ).result()
    two = await (
        await submit(service, Post(text=caption, images=(PostImage(data=other),)), BOB)
    ).result()
    assert (one.repeat_kind, two.repeat_kind) == (None, None) and len(checker.runs) == 2
    again = await (
        await submit(service, Post(text=caption, images=(PostImage(data=first),)), BOB)
    ).result()
    assert again.repeat_kind == "exact" and again.original_id == one.check_id
    assert len(checker.runs) == 2
