"""The work a bot has taken (:class:`bots.chat.in_flight.InFlight`): a shutdown takes no
new work, waits for what runs within its grace, then cancels the rest and waits for
their last words. Plain tasks stand for the checks here; the bots' own shutdowns are
tested through the fake platforms (``test_telegram_shutdown.py``,
``test_discord_shutdown.py``)."""

from __future__ import annotations

import asyncio

from bots.chat.in_flight import InFlight


async def test_shutdown_refuses_new_work_and_waits_for_what_runs() -> None:
    work = InFlight()
    finished: list[str] = []
    release = asyncio.Event()

    async def check(name: str) -> None:
        await release.wait()
        finished.append(name)

    async def late_check() -> None:  # a handler still running when shutdown begins
        finished.append("late")

    assert work.spawn(check("first"))
    async with asyncio.timeout(10):
        drain = asyncio.create_task(work.drain(5.0))
        await asyncio.sleep(0)
        assert work.closing
        assert not work.spawn(late_check())  # refused; closed unstarted, no warning
        assert not drain.done()  # the running check is waited for
        release.set()
        await drain
    assert finished == ["first"] and not work.tasks


async def test_shutdown_cancels_what_outlives_the_grace_and_waits_for_its_last_words() -> None:
    work = InFlight()
    said: list[str] = []

    async def check() -> None:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            await asyncio.sleep(0)  # e.g. editing its message to say it was handed back
            said.append("handed back")
            raise

    work.spawn(check())
    work.spawn(check())
    async with asyncio.timeout(10):
        await work.drain(0.0)
    assert said == ["handed back", "handed back"] and not work.tasks


async def test_a_held_task_is_waited_for_and_none_is_held_once_closing() -> None:
    work = InFlight()
    release = asyncio.Event()
    taken: list[bool] = []

    async def command() -> None:  # a task the platform's library made
        with work.hold() as held:
            taken.append(held)
            if held:
                await release.wait()

    first = asyncio.create_task(command())
    await asyncio.sleep(0)
    assert len(work) == 1
    async with asyncio.timeout(10):
        drain = asyncio.create_task(work.drain(5.0))
        await asyncio.sleep(0)
        await command()  # came during the shutdown: not taken
        assert not drain.done()
        release.set()
        await drain
    assert first.done() and taken == [True, False] and not work.tasks
