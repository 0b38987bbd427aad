"""Engine slots are shared fairly: a chat that queues many checks does not starve others."""

from __future__ import annotations

import asyncio

import pytest

from bots.service.fair_slots import FairSlots


async def _served(slots: FairSlots, arrivals: list[str]) -> list[str]:
    """The order in which checks from ``arrivals`` (chat names, in arrival order) got
    a slot, each holding it until the next one may start."""
    order: list[str] = []
    gate = asyncio.Event()

    async def check(chat: str) -> None:
        async with slots.slot(chat):
            order.append(chat)
            if len(order) == 1:  # the first holds its slot until everyone has arrived
                await gate.wait()

    tasks = []
    for chat in arrivals:
        tasks.append(asyncio.create_task(check(chat)))
        await asyncio.sleep(0)  # arrive in this order
    gate.set()
    await asyncio.wait_for(asyncio.gather(*tasks), 5)
    return order


async def test_chats_take_turns() -> None:
    order = await _served(FairSlots(1), ["a", "a", "a", "a", "a", "b", "c", "a", "b"])
    # The first "a" ran at once; then each chat in turn, not in arrival order.
    assert order == ["a", "a", "b", "c", "a", "b", "a", "a", "a"]


async def test_a_cancelled_waiter_passes_its_turn_on() -> None:
    slots = FairSlots(1)
    holder_may_go = asyncio.Event()
    got: list[str] = []

    async def hold() -> None:
        async with slots.slot("a"):
            await holder_may_go.wait()

    async def wait(chat: str) -> None:
        async with slots.slot(chat):
            got.append(chat)

    holder = asyncio.create_task(hold())
    await asyncio.sleep(0)
    quitter = asyncio.create_task(wait("b"))
    stayer = asyncio.create_task(wait("c"))
    await asyncio.sleep(0)
    assert slots.waiting == 2
    quitter.cancel()
    await asyncio.gather(quitter, return_exceptions=True)
    holder_may_go.set()
    await asyncio.wait_for(asyncio.gather(holder, stayer), 5)
    assert got == ["c"] and slots.waiting == 0
    async with slots.slot("d"):  # the slot came back
        pass


def test_size_must_be_positive() -> None:
    with pytest.raises(ValueError):
        FairSlots(0)
