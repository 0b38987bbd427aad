"""An API that calls back: a key registers a webhook, and the running server calls it,
signed with the key's own secret, once when each of its checks ends and once per
correction; an unreachable webhook is retried with backoff and given up after a day,
and the poll loses nothing. Through real HTTP: the API server, and a receiver on
127.0.0.1 that checks every signature as docs/api.md tells integrators to. The engine
is the in-process FakeChecker (this proves the calls, not a verdict)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from tests.bots.api.test_api import POST, Api, api_settings
from tests.peers.fakes.fake_checker import FakeChecker, fake_service, review_as
from tests.peers.fixtures.store_fixtures import MovingClock

from bots.api.app import ApiConfig, serving_api
from bots.service import corrections
from bots.service.webhooks import SIGNATURE, sign, target_refusal, verify
from storage.api_keys import ApiKeys

FAST = {"webhook_poll_s": 0.02, "webhook_allow_private": True, "max_body_bytes": 100_000}
FAST |= {"key_per_minute": 100_000}


class Receiver:
    """A webhook on 127.0.0.1: it keeps each call and whether its signature held, and
    answers ``fail`` with 503 for as long as that is set."""

    def __init__(self) -> None:
        self.calls: list[tuple[dict[str, Any], bool, dict[str, str]]] = []
        self.secret = ""
        self.fail = False
        self.url = ""

    async def take(self, request: web.Request) -> web.Response:
        body = await request.read()
        signed = verify(self.secret, request.headers.get(SIGNATURE, ""), body, now=time.time())
        self.calls.append((json.loads(body), signed, dict(request.headers)))
        return web.Response(status=503 if self.fail else 204)

    def events(self) -> list[str]:
        return [call["event"] for call, _, _ in self.calls]


@contextlib.asynccontextmanager
async def receiving() -> AsyncIterator[Receiver]:
    receiver = Receiver()
    app = web.Application()
    app.router.add_post("/hook", receiver.take)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    host, port = runner.addresses[0][:2]
    receiver.url = f"http://{host}:{port}/hook"
    try:
        yield receiver
    finally:
        await runner.cleanup()


@contextlib.asynccontextmanager
async def api_with_clock(tmp_path: Path, clock: MovingClock) -> AsyncIterator[Api]:
    settings = api_settings(tmp_path)
    settings = settings.model_copy(update={"api": settings.api.model_copy(update=FAST)})
    async with fake_service(settings, FakeChecker(), clock=clock) as service:
        keys = ApiKeys(service.store.database, service.secret)
        key = keys.add("tipline")
        config = ApiConfig(settings.api, settings.engine.images, settings.site.public_url)
        async with serving_api(service, config, port=0) as runner, aiohttp.ClientSession() as s:
            host, port = runner.addresses[0][:2]
            yield Api(f"http://{host}:{port}", s, service, keys, key, runner.app)


async def until(what: Callable[[], Any], timeout_s: float = 20.0) -> Any:
    async with asyncio.timeout(timeout_s):
        while not (found := what()):
            await asyncio.sleep(0.01)
    return found


async def test_a_webhook_gets_the_signed_done_and_corrected_calls(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(corrections, "POLL_S", 0.02)
    async with receiving() as receiver, api_with_clock(tmp_path, MovingClock()) as api:
        status, body, _ = await api.call("PUT", "/v1/webhook", json={"url": receiver.url})
        assert status == 200 and body["url"] == receiver.url
        receiver.secret = body["secret"]
        assert receiver.secret.startswith("whsec_")
        taken = await api.take("/v1/checks", {"text": POST})
        await until(lambda: "done" in receiver.events())
        done, signed, headers = receiver.calls[0]
        assert signed and headers["Zofia-Event"] == "done" and headers["Zofia-Call"] == done["call"]
        assert done["check"]["id"] == taken["id"] and done["check"]["status"] == "done"
        assert done["check"]["report"]["verdict"] == "false"
        # The service's reviewers change the verdict: the webhook is told once.
        await review_as(api.service, taken["id"], ("cli", "operator"), "true", "Retracted.")
        await until(lambda: "corrected" in receiver.events())
        corrected, signed, _ = receiver.calls[-1]
        assert signed and corrected["check"]["report"]["verdict"] == "true"
        state = await api.answered(f"/v1/checks/{taken['id']}")
        calls = {(c["event"], c["status"]) for c in state["webhooks"]}
        assert calls == {("done", "delivered"), ("corrected", "delivered")}
        await asyncio.sleep(0.1)  # a few more rounds: nothing is sent twice
        assert receiver.events().count("done") == 1
        assert receiver.events().count("corrected") == 1


def test_a_tampered_or_stale_signature_fails_the_documented_check() -> None:
    body = b'{"event":"done"}'
    header = sign("whsec_abc", 1_800_000_000, body)
    assert verify("whsec_abc", header, body, now=1_800_000_010)
    assert not verify("whsec_abc", header, b'{"event":"corrected"}', now=1_800_000_010)
    assert not verify("whsec_other", header, body, now=1_800_000_010)
    assert not verify("whsec_abc", header, body, now=1_800_000_000 + 3600)  # replayed late
    assert not verify("whsec_abc", "t=x,v1=00", body, now=1_800_000_000)


def _closed_port() -> str:
    """An address on 127.0.0.1 where nothing listens."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/hook"


@pytest.mark.parametrize("failing", ["answers 503", "nothing listens"])
async def test_a_failing_webhook_is_retried_then_given_up_and_the_poll_keeps_all(
    tmp_path: Path, failing: str
) -> None:
    clock = MovingClock()
    async with receiving() as receiver, api_with_clock(tmp_path, clock) as api:
        receiver.fail = True
        url = receiver.url if failing == "answers 503" else _closed_port()
        _, body, _ = await api.call("PUT", "/v1/webhook", json={"url": url})
        receiver.secret = body["secret"]
        taken = await api.take("/v1/checks", {"text": POST})
        poll = f"/v1/checks/{taken['id']}"

        async def attempts() -> tuple[int, str]:
            calls = (await api.answered(poll))["webhooks"]
            return (calls[0]["attempts"], calls[0]["status"]) if calls else (0, "")

        for _ in range(60):  # a day passes, two hours at a time (bounded: it stops)
            tried, status = await attempts()
            if status == "given_up":
                break
            clock.advance(hours=2)
            async with asyncio.timeout(20):
                while (await attempts())[0] == tried:
                    await asyncio.sleep(0.01)
        state = await api.answered(poll)
        [call] = state["webhooks"]
        assert call["status"] == "given_up" and call["attempts"] > 3
        if failing == "answers 503":  # each attempt was the same call, signed
            assert len(receiver.calls) == call["attempts"]
            assert all(signed for _, signed, _ in receiver.calls)
            assert len({c["call"] for c, _, _ in receiver.calls}) == 1
        assert state["status"] == "done" and state["report"]["verdict"] == "false"


@pytest.mark.parametrize(
    ("url", "allowed"),
    [
        ("https://hooks.example.org/zofia", True),
        ("http://hooks.example.org/zofia", False),
        ("https://127.0.0.1/hook", False),
        ("https://localhost/hook", False),
        ("https://10.0.0.7/hook", False),
        ("https://[::1]/hook", False),
        ("ftp://hooks.example.org/", False),
    ],
)
def test_only_an_https_address_on_the_public_internet_is_taken(url: str, allowed: bool) -> None:
    assert (target_refusal(url, allow_private=False) is None) == allowed


async def test_a_refused_webhook_is_one_sentence_and_registers_nothing(tmp_path: Path) -> None:
    async with api_with_clock(tmp_path, MovingClock()) as api:
        status, body, _ = await api.call("PUT", "/v1/webhook", json={"url": "ftp://x.org/"})
        assert status == 400 and body["error"] == "The webhook must be an https address."
        status, body, _ = await api.call("PUT", "/v1/webhook", json={"address": "x"})
        assert status == 400 and body["error"].startswith("The body must be JSON")
        assert api.service.store.database.rows("SELECT webhook_url FROM api_keys") == [("",)]
