"""The API's bounds under a flood, through real HTTP on 127.0.0.1 against the real
server and check service (:class:`~tests.peers.fakes.fake_checker.FakeChecker` in place
of the engine, as in ``test_api``): the client address's rate before the key is read,
the key's own rate, the store reads a flood of made-up keys costs, the body slots, and
a body too deep to parse. Each asserts a bound on work (store reads, slots held,
requests refused), never a time; ``bench/api_flood.py`` measures the times.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import psutil
import pytest

from tests.bots.api.test_api import AS_JSON, POST, api_settings, running_api
from tests.peers.fakes.fake_checker import FakeChecker

from bots.api.bodies import BODIES, IN_PROCESS_BYTES, WORKER_NICENESS
from bots.api.bounds import RETRY_BODY_S, WAITING_PER_SLOT
from bots.api.keys import FRESH_S, KNOWN_KEYS
from bots.app.settings import Settings


def bounded(tmp_path: Path, **api: Any) -> Settings:
    """:func:`api_settings` with the ``[api]`` bounds ``api`` (and a day's budget that
    several checks at once do not use up)."""
    settings = api_settings(tmp_path, daily_token_budget=10**9)
    update = {"api": settings.api.model_copy(update=api)}
    return settings.model_copy(update=update)


def made_up_key() -> str:
    return "zofia_" + secrets.token_urlsafe(32)  # shaped as a real key is


def one_sentence(body: Any) -> str:
    assert list(body) == ["error"]
    sentence = str(body["error"])
    assert sentence.endswith(".") and "\n" not in sentence and "Traceback" not in sentence
    return sentence


async def test_a_flood_of_made_up_keys_costs_one_store_read(tmp_path: Path) -> None:
    async with running_api(bounded(tmp_path), FakeChecker()) as api:
        known = api.app[KNOWN_KEYS]
        now = [0.0]
        known.clock = lambda: now[0]
        calls = [
            api.call("GET", "/v1/checks/0123456789abcdef", key=made_up_key()) for _ in range(300)
        ]
        answers = await asyncio.gather(*calls)
        assert {status for status, _, _ in answers} == {401}
        assert known.reads == 1  # the active keys' hashes, once for the whole flood
        status, _, _ = await api.call("POST", "/v1/checks", json={"text": POST})
        assert status in (200, 202) and known.reads == 1  # a real key is among them
        # A key made while the server runs is taken once the copy is older than FRESH_S.
        late = api.keys.add("late-tipline")
        status, _, _ = await api.call("POST", "/v1/checks", json={"text": POST}, key=late)
        assert status == 401 and known.reads == 1
        now[0] += FRESH_S
        status, _, _ = await api.call("POST", "/v1/checks", json={"text": POST}, key=late)
        assert status in (200, 202) and known.reads == 2
        # A revoked key is refused at its next request, whatever the copy says.
        api.keys.revoke("late-tipline")
        status, _, _ = await api.call("GET", "/v1/checks/0123456789abcdef", key=late)
        assert status == 401


async def test_an_address_past_its_rate_is_refused_before_its_key_is_read(
    tmp_path: Path,
) -> None:
    async with running_api(bounded(tmp_path, per_minute=3), FakeChecker()) as api:
        known = api.app[KNOWN_KEYS]
        statuses = [(await api.call("GET", "/v1/checks/x", key=made_up_key()))[0] for _ in range(3)]
        assert statuses == [401, 401, 401] and known.reads == 1
        status, body, headers = await api.call("GET", "/v1/checks/x", key=api.key)
        assert status == 429 and headers["Retry-After"] == "20"
        assert "your address" in one_sentence(body)
        status, _, _ = await api.call("GET", "/v1/openapi.json", key="")
        assert status == 429  # the open route counts too
        assert known.reads == 1  # nothing was looked up for the refused ones


async def test_behind_a_proxy_each_forwarded_address_has_its_rate(tmp_path: Path) -> None:
    settings = bounded(tmp_path, per_minute=1, forwarded_for=True)
    async with running_api(settings, FakeChecker()) as api:

        async def status_from(address: str) -> int:
            forwarded = {"X-Forwarded-For": f"192.0.2.1, {address}"}
            return (await api.call("GET", "/v1/openapi.json", key="", headers=forwarded))[0]

        assert await status_from("203.0.113.9") == 200
        assert await status_from("203.0.113.9") == 429
        assert await status_from("2001:db8:1:2::1") == 200
        assert await status_from("2001:db8:1:2::2") == 429  # the same /64
        assert await status_from("198.51.100.7") == 200


async def test_a_key_past_its_rate_is_refused_and_polls_count(tmp_path: Path) -> None:
    async with running_api(bounded(tmp_path, key_per_minute=3), FakeChecker()) as api:
        other = api.keys.add("other-tipline")
        taken = await api.call("POST", "/v1/checks", json={"text": POST})
        path = f"/v1/checks/{taken[1]['id']}"
        statuses = [taken[0], (await api.call("GET", path))[0]]
        status, body, headers = await api.call("GET", path)
        assert statuses[1] == 200 and status == 200
        status, body, headers = await api.call("GET", path)
        assert status == 429 and headers["Retry-After"] == "20"
        assert "This key made its 3 requests" in one_sentence(body)
        status, body, _ = await api.call("POST", "/v1/checks", json={"text": POST})
        assert status == 429  # posts count in the same bucket
        status, _, _ = await api.call("POST", "/v1/checks", json={"text": POST}, key=other)
        assert status in (200, 202)  # another key's bucket is its own


async def held_body(text: str, release: asyncio.Event) -> AsyncIterator[bytes]:
    """A post sent chunked whose end waits for ``release``: its reading holds a slot."""
    yield b'{"text": "' + text.encode()
    await release.wait()
    yield b'"}'


async def test_bodies_are_read_in_their_slots_and_a_full_line_is_refused_unread(
    tmp_path: Path,
) -> None:
    async with running_api(bounded(tmp_path, max_bodies=1), FakeChecker()) as api:
        slots = api.app[BODIES].slots
        release = asyncio.Event()
        line = WAITING_PER_SLOT  # with one slot
        held = [
            asyncio.create_task(
                api.call(
                    "POST", "/v1/checks", data=held_body(f"{POST} ({n})", release), headers=AS_JSON
                )
            )
            for n in range(1 + line)
        ]
        async with asyncio.timeout(20):  # only a broken server takes that long
            while slots.waiting < line:
                await asyncio.sleep(0.01)
        status, body, headers = await api.call("POST", "/v1/checks", json={"text": POST})
        assert status == 429 and headers["Retry-After"] == str(RETRY_BODY_S)
        assert "being read at once" in one_sentence(body)
        status, _, _ = await api.call("GET", "/v1/openapi.json", key="")
        assert status == 200  # a poll needs no slot
        release.set()
        answers = await asyncio.gather(*held)
        assert {status for status, _, _ in answers} <= {200, 202}, answers  # taken
        assert slots.busiest == 1 and slots.waiting == 0
        assert api.count("checks") == 1 + line  # the refused post cost nothing


@pytest.mark.parametrize("depth", [50_000])
async def test_a_body_nested_too_deeply_gets_400_in_one_sentence_and_no_traceback(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, depth: int
) -> None:
    caplog.set_level(logging.DEBUG)
    async with running_api(bounded(tmp_path, max_body_bytes=1_000_000), FakeChecker()) as api:
        deep = b"[" * depth + b"]" * depth
        status, body, _ = await api.call("POST", "/v1/checks", data=deep, headers=AS_JSON)
        assert status == 400 and "nested too deeply" in one_sentence(body)
        nested = b'{"text": ' + b"[" * depth + b"]" * depth + b"}"
        status, body, _ = await api.call("POST", "/v1/checks", data=nested, headers=AS_JSON)
        assert status == 400 and one_sentence(body)
        assert api.count("attempts") == 0
    assert [r for r in caplog.records if r.exc_info or "Traceback" in r.getMessage()] == []


def spawned(process: psutil.Process) -> dict[int, psutil.Process]:
    """The worker processes ``process`` spawned (not multiprocessing's resource tracker)."""
    return {
        child.pid: child
        for child in process.children(recursive=True)
        if "spawn_main" in " ".join(child.cmdline())
    }


async def test_a_large_body_is_parsed_in_a_worker_process_at_a_lower_priority(
    tmp_path: Path,
) -> None:
    settings = bounded(tmp_path, max_body_bytes=3 * IN_PROCESS_BYTES)
    this = psutil.Process()
    before = set(spawned(this))
    async with running_api(settings, FakeChecker()) as api:
        long_post = f"{POST} " + "and more words " * (IN_PROCESS_BYTES // 15)
        assert len(long_post) > IN_PROCESS_BYTES
        status, body, _ = await api.call("POST", "/v1/checks", json={"text": long_post})
        assert status in (200, 202), body
        workers = [worker for pid, worker in spawned(this).items() if pid not in before]
        assert [worker.nice() for worker in workers] == [this.nice() + WORKER_NICENESS]
        # A refusal decided in the worker comes back whole: its status and its sentence.
        bad = {"text": long_post, "images": [{"data": "not base64!"}]}
        status, body, _ = await api.call("POST", "/v1/checks", json=bad)
        assert status == 400 and "images[0].data" in one_sentence(body)
    assert not any(worker.is_running() for worker in workers)  # stopped with the server
