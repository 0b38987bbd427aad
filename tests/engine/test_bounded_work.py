"""Slow work in bounded places (``zofia_engine.bounded_work``): a full queue refuses at
once with its sentence, a job past its limit is answered at its limit (a process is
killed, a thread keeps its slot until it ends), and a worker process cannot take more
memory than its cap. The jobs are stdlib functions (they pickle into a spawned process);
these prove the executors, and the fetch and image tests prove their use."""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.peers.fixtures.images import headline

from zofia_engine.bounded_work import (
    BoundedThreads,
    KillablePool,
    WorkBusyError,
    WorkTimeoutError,
)
from zofia_engine.image_settings import ImageSettings
from zofia_engine.images.decode import CleanImage
from zofia_engine.images.ocr import OCRResult
from zofia_engine.images.reader import ImageReader
from zofia_engine.post import Post, PostImage


def _threads(waiting: int) -> BoundedThreads:
    return BoundedThreads("test", workers=1, waiting=waiting, busy="busy now", too_slow="too slow")


async def test_threads_refuse_past_the_queue_and_run_the_rest() -> None:
    threads = _threads(waiting=1)
    gate = threading.Event()
    first = asyncio.create_task(threads.run(gate.wait, 10, timeout_s=10))
    second = asyncio.create_task(threads.run(sum, [1, 2, 3], timeout_s=10))
    await asyncio.sleep(0.05)
    assert threads.held == 2
    with pytest.raises(WorkBusyError, match="busy now"):
        await threads.run(sum, [4], timeout_s=10)
    gate.set()
    assert await first is True and await second == 6
    assert threads.held == 0


async def test_a_thread_past_its_limit_is_answered_then_and_keeps_its_slot() -> None:
    threads = _threads(waiting=0)
    gate = threading.Event()
    # Answered at the limit: had it waited for the job, gate.wait would return False.
    with pytest.raises(WorkTimeoutError, match="too slow"):
        await threads.run(gate.wait, 10, timeout_s=0.2)
    with pytest.raises(WorkBusyError):  # the thread still works on it: the slot is taken
        await threads.run(sum, [1], timeout_s=1)
    gate.set()
    for _ in range(100):  # bounded: the slot comes back as the thread ends
        if threads.held == 0:
            break
        await asyncio.sleep(0.01)
    assert await threads.run(sum, [1], timeout_s=1) == 1


@pytest.fixture
def pool() -> Iterator[KillablePool]:
    made = KillablePool(
        workers=1, waiting=0, busy="busy now", too_slow="too slow", max_memory=512 * 1024 * 1024
    )
    yield made
    made.close()


async def test_a_process_past_its_limit_is_killed_and_the_next_job_gets_a_fresh_one(
    pool: KillablePool,
) -> None:
    assert await pool.run(sum, [1, 2], timeout_s=30) == 3  # starts the process
    with pytest.raises(WorkTimeoutError, match="too slow"):
        await pool.run(time.sleep, 60, timeout_s=0.2)
    # Killed, not left sleeping its 60 s: the next job gets a fresh process (queued in
    # the old one, it would wait out the sleep, past its own 30 s).
    assert await pool.run(sum, [3, 4], timeout_s=30) == 7


async def test_a_process_cannot_take_more_memory_than_its_cap(pool: KillablePool) -> None:
    with pytest.raises(MemoryError):
        await pool.run(bytearray, 1 << 30, timeout_s=30)
    assert await pool.run(len, "still here", timeout_s=30) == 10


async def test_a_busy_pool_refuses_at_once(pool: KillablePool, tmp_path: Path) -> None:
    # The job runs until the test lets it end, however fast the machine: in its process
    # it opens a FIFO for reading, which waits until the test holds the other end.
    hold = tmp_path / "hold"
    os.mkfifo(hold)
    slow: asyncio.Task[object]  # what exec returned: None
    slow = asyncio.create_task(pool.run(exec, f"open({str(hold)!r}).close()", timeout_s=30))
    await asyncio.sleep(0.05)
    with pytest.raises(WorkBusyError, match="busy now"):
        await pool.run(sum, [1], timeout_s=30)
    other_end = os.open(hold, os.O_RDWR)  # never waits; the job's open goes through
    try:
        assert await slow is None
    finally:
        os.close(other_end)


class _HeldOCR:
    """An OCR that reads "Governor signs law" once ``gate`` is set (the first image in
    the reader's one thread holds it there)."""

    def __init__(self) -> None:
        self.gate = threading.Event()

    def read(self, image: CleanImage) -> OCRResult:
        self.gate.wait(10)
        return OCRResult("Governor signs law", 0.99, 1.0)


async def test_the_image_reader_refuses_past_its_queue_and_reads_the_rest() -> None:
    ocr = _HeldOCR()
    reader = ImageReader(ImageSettings(max_waiting=1), ocr=ocr)

    def post() -> Post:
        return Post(text="", images=(PostImage(data=headline(["Governor signs law"])),))

    first = asyncio.create_task(reader.read(post()))
    second = asyncio.create_task(reader.read(post()))
    await asyncio.sleep(0.05)
    with pytest.raises(WorkBusyError, match="Too many images are being read right now"):
        await reader.read(post())
    ocr.gate.set()
    for done in (await first, await second):
        assert "Governor signs law" in done.text
