"""The HTTP API under a flood: does a valid key's poll stay quick, and its memory bounded?

The API's server runs as its own process (``bench/lib/api_server.py``: ``serving_api``,
what ``zofia api`` serves, over the real check service and a SQLite store; a scripted
checker stands in for the engine, which the flood never reaches). Its settings are the
defaults but ``[api] key_per_minute`` (``--key-per-minute``), lifted so that the
measuring key's own polls are never refused. First two maximal posts at once, so that
both body workers have started (a cold server starts them on its first large posts:
about a second of CPU each). Then:

1. idle: the ``poller`` key polls its done check (``GET /v1/checks/<id>``) ``--polls``
   times, one every 10 ms, taking turns on 127.0.1.1 to 127.0.1.8 (so that no address
   of theirs passes ``[api] per_minute``): the baseline;
2. flood: a second process sends ``--bad-keys`` polls with made-up keys (shaped as real
   ones), all at once, from 127.0.0.2, and ``--bodies`` posts of ``max_body_bytes``
   (``--max-body-mb``: two images of random bytes, base64, each within the images'
   cap) with the ``flooder`` key, all at once, from 127.0.0.3; meanwhile the poller
   polls every 10 ms until the flood is answered, and at least ``--polls`` times.

The flood's process runs ``--flooder-nice`` (10) below the others' priority: a real
flood's clients spend their own machines' CPU, not the server's; ``--flooder-nice 0``
has it take its share of this machine's two cores. The server's RSS, and its with its
body workers', is sampled after every poll (psutil).

    python bench/api_flood.py [--bad-keys 1500] [--bodies 50] [--max-body-mb 20]
        [--polls 300] [--key-per-minute 100000] [--flooder-nice 10] [--smoke]

The last line is one JSON object: ``poll_p50_ms``, ``poll_p99_ms`` and ``poll_max_ms``
(the valid key's polls during the flood, as its client waited for them),
``idle_poll_p99_ms``, ``polls``, ``polls_refused`` (any poll not answered 200),
``refused_429`` (the flood's requests answered 429), ``bad_keys`` and ``bodies`` (each
a count by status; ``"429 unread"``: a post refused before it was read, every body slot
taken and the line full; ``"closed"``: the server closed the connection on a body it
refused unread before the client read the answer), ``flood_s``, ``warm_up`` (the two first
posts' statuses), ``peak_rss_mb``, ``idle_rss_mb`` and ``rss_over_idle_mb`` (the
server's process), ``peak_tree_rss_mb`` and ``tree_rss_over_idle_mb`` (with its body
workers), the sizes, ``load_before`` (the machine's 1-minute load average), ``cpus``,
and ``targets_met``: ``poll_p99_ms`` under :data:`MAX_POLL_P99_MS` with no poll
refused, and ``tree_rss_over_idle_mb`` under :data:`MAX_RSS_OVER_IDLE_MB`.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import collections
import contextlib
import json
import os
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp
import psutil

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from lib.smoke import free_port, smoke_args  # noqa: E402

MAX_POLL_P99_MS = 50.0
#: the server's and its body workers' RSS over theirs once started, at the defaults (two
#: body slots of 20 MB): in the server, each slot's body read (20 MB), its copy on the
#: way to a worker (20 MB) and its images decoded (15 MB); in each worker, the body, its
#: text and its images (about 60 MB); and the allocator's slack
MAX_RSS_OVER_IDLE_MB = 400.0
POLL_EVERY_S = 0.01
SERVER = ROOT / "bench" / "lib" / "api_server.py"
BAD_KEYS, BODIES = "127.0.0.2", "127.0.0.3"
#: how many loopback addresses the measuring polls take turns on (127.0.1.1 …)
POLLERS = 8


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def start_server(folder: Path, port: int, args: argparse.Namespace) -> tuple[Any, dict[str, Any]]:
    """The server's process and what it printed once ready (its keys and check)."""
    server = subprocess.Popen(
        [
            sys.executable, str(SERVER), "--folder", str(folder), "--port", str(port),
            "--max-body-bytes", str(args.max_body_bytes),
            "--key-per-minute", str(args.key_per_minute),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    assert server.stdout is not None
    line = server.stdout.readline()
    if not line:
        server.wait(timeout=60)
        raise SystemExit("the API server did not start")
    return server, json.loads(line)


def body_of(max_body_bytes: int) -> bytes:
    """A post of about ``max_body_bytes``: two images of random bytes, base64."""
    each = (max_body_bytes - 200) // 2 * 3 // 4  # the bytes that fill half, as base64
    images = [
        {"data": base64.b64encode(os.urandom(each)).decode(), "media_type": "image/png"}
        for _ in range(2)
    ]
    return json.dumps({"text": "Is this picture real?", "images": images}).encode()


#: what a 429 says when the post was refused unread (every body slot taken, the line full)
UNREAD = "being read at once"


async def _status(session: aiohttp.ClientSession, method: str, url: str, **kw: Any) -> str:
    """The answer's status; ``"429 unread"`` for a post refused before it was read."""
    try:
        async with session.request(method, url, **kw) as response:
            said = await response.read()
            unread = response.status == 429 and UNREAD.encode() in said
            return f"{response.status} unread" if unread else str(response.status)
    except (aiohttp.ClientOSError, aiohttp.ServerDisconnectedError):
        return "closed"


async def flood(plan: dict[str, Any]) -> dict[str, Any]:
    """The flood (run in a process of its own): each request's status, by kind."""
    url, started = plan["url"], time.monotonic()
    body = body_of(plan["max_body_bytes"])
    headers = {"Authorization": f"Bearer {plan['flooder']}", "Content-Type": "application/json"}
    bad = aiohttp.TCPConnector(limit=0, local_addr=(BAD_KEYS, 0))
    posts = aiohttp.TCPConnector(limit=0, local_addr=(BODIES, 0))
    timeout = aiohttp.ClientTimeout(total=300)
    async with (
        aiohttp.ClientSession(connector=bad, timeout=timeout) as bad_session,
        aiohttp.ClientSession(connector=posts, timeout=timeout) as post_session,
    ):
        made_up = [
            _status(
                bad_session, "GET", f"{url}/v1/checks/{secrets.token_urlsafe(12)}",
                headers={"Authorization": f"Bearer zofia_{secrets.token_urlsafe(32)}"},
            )
            for _ in range(plan["bad_keys"])
        ]  # fmt: skip
        sent = [
            _status(post_session, "POST", f"{url}/v1/checks", data=body, headers=headers)
            for _ in range(plan["bodies"])
        ]
        bad_statuses, body_statuses = await asyncio.gather(
            asyncio.gather(*made_up), asyncio.gather(*sent)
        )
    return {
        "bad_keys": dict(collections.Counter(bad_statuses)),
        "bodies": dict(collections.Counter(body_statuses)),
        "flood_s": round(time.monotonic() - started, 2),
    }


def tree_rss(server: psutil.Process) -> tuple[int, int]:
    """The server's RSS, and its with its worker processes' (the bodies' parsers)."""
    own = total = int(server.memory_info().rss)
    for child in server.children(recursive=True):
        with contextlib.suppress(psutil.Error):
            total += int(child.memory_info().rss)
    return own, total


class Poller:
    """The valid key's polls, one every :data:`POLL_EVERY_S`, and the server's RSS.

    The polls take turns among :data:`POLLERS` sessions, each on a loopback address of
    its own, so that no address of theirs passes ``[api] per_minute``."""

    def __init__(self, url: str, key: str, check: str, server: psutil.Process) -> None:
        self.url = f"{url}/v1/checks/{check}"
        self.headers = {"Authorization": f"Bearer {key}"}
        self.server = server
        self.peak_rss = self.peak_tree_rss = 0
        self.refused = 0

    def rss(self) -> tuple[int, int]:
        own, total = tree_rss(self.server)
        self.peak_rss = max(self.peak_rss, own)
        self.peak_tree_rss = max(self.peak_tree_rss, total)
        return own, total

    async def polls(
        self, sessions: list[aiohttp.ClientSession], count: int, until: Any
    ) -> list[float]:
        """Poll ``count`` times, and on until ``until`` is done; each poll's time in ms."""
        times: list[float] = []
        while len(times) < count or not until.done():
            session = sessions[len(times) % len(sessions)]
            began = time.perf_counter()
            async with session.get(self.url, headers=self.headers) as response:
                await response.read()
                self.refused += response.status != 200
            times.append((time.perf_counter() - began) * 1000)
            self.rss()
            await asyncio.sleep(POLL_EVERY_S)
        return times


async def warm_up(url: str, key: str, max_body_bytes: int) -> list[str]:
    """Two maximal posts at once, so that both body workers have started (a cold
    server starts them on its first large posts: about a second of CPU each)."""
    body = body_of(max_body_bytes)
    headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
    connector = aiohttp.TCPConnector(limit=0, local_addr=(BODIES, 0))
    async with aiohttp.ClientSession(connector=connector) as session:
        posts = [
            _status(session, "POST", f"{url}/v1/checks", data=body, headers=headers)
            for _ in range(2)
        ]
        return list(await asyncio.gather(*posts))


async def run_flood(plan: dict[str, Any]) -> dict[str, Any]:
    """The flood's process, started now; its figures once it ends."""
    niceness = plan["flooder_nice"]
    process = await asyncio.create_subprocess_exec(
        sys.executable, str(Path(__file__).resolve()), "--flood-plan", json.dumps(plan),
        stdout=asyncio.subprocess.PIPE,
        preexec_fn=(lambda: os.nice(niceness)) if niceness else None,
    )  # fmt: skip
    out, _ = await process.communicate()
    if process.returncode != 0:
        raise SystemExit("the flood's process failed")
    result: dict[str, Any] = json.loads(out.decode().splitlines()[-1])
    return result


async def measure(args: argparse.Namespace, port: int, ready: dict[str, Any], pid: int) -> Any:
    url = f"http://127.0.0.1:{port}"
    poller = Poller(url, ready["poller"], ready["check"], psutil.Process(pid))
    warmed = await warm_up(url, ready["flooder"], args.max_body_bytes)
    async with contextlib.AsyncExitStack() as stack:
        sessions = [
            await stack.enter_async_context(
                aiohttp.ClientSession(
                    connector=aiohttp.TCPConnector(limit=1, local_addr=(f"127.0.1.{n}", 0))
                )
            )
            for n in range(1, POLLERS + 1)
        ]
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        done.set_result(None)
        idle = await poller.polls(sessions, args.polls, done)
        idle_rss = poller.rss()
        plan = {
            "url": url, "flooder": ready["flooder"], "bad_keys": args.bad_keys,
            "bodies": args.bodies, "max_body_bytes": args.max_body_bytes,
            "flooder_nice": args.flooder_nice,
        }  # fmt: skip
        flooding = asyncio.ensure_future(run_flood(plan))
        busy = await poller.polls(sessions, args.polls, flooding)
        flooded = await flooding
    return poller, idle, idle_rss, busy, {**flooded, "warm_up": warmed}


def figures(args: argparse.Namespace, measured: Any, load: float) -> dict[str, Any]:
    poller, idle, (idle_rss, idle_tree_rss), busy, flooded = measured
    statuses = [*flooded["bad_keys"].items(), *flooded["bodies"].items()]
    over = (poller.peak_rss - idle_rss) / 2**20
    tree_over = (poller.peak_tree_rss - idle_tree_rss) / 2**20
    p99 = percentile(busy, 0.99)
    return {
        "poll_p50_ms": round(statistics.median(busy), 2),
        "poll_p99_ms": round(p99, 2),
        "poll_max_ms": round(max(busy), 2),
        "idle_poll_p99_ms": round(percentile(idle, 0.99), 2),
        "polls": len(busy),
        "polls_refused": poller.refused,
        "refused_429": sum(n for status, n in statuses if status.startswith("429")),
        **flooded,
        "peak_rss_mb": round(poller.peak_rss / 2**20, 1),
        "idle_rss_mb": round(idle_rss / 2**20, 1),
        "rss_over_idle_mb": round(over, 1),
        "peak_tree_rss_mb": round(poller.peak_tree_rss / 2**20, 1),
        "tree_rss_over_idle_mb": round(tree_over, 1),
        "bad_keys_sent": args.bad_keys,
        "bodies_sent": args.bodies,
        "max_body_bytes": args.max_body_bytes,
        "key_per_minute": args.key_per_minute,
        "flooder_nice": args.flooder_nice,
        "load_before": round(load, 2),
        "cpus": os.cpu_count(),
        "targets_met": {
            "poll_p99_ms": p99 < MAX_POLL_P99_MS and poller.refused == 0,
            "tree_rss_over_idle_mb": tree_over < MAX_RSS_OVER_IDLE_MB,
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bad-keys", type=int, default=1500)
    parser.add_argument("--bodies", type=int, default=50)
    parser.add_argument("--max-body-mb", type=float, default=20.0)
    parser.add_argument("--polls", type=int, default=300)
    parser.add_argument("--key-per-minute", type=int, default=100_000)
    parser.add_argument("--flooder-nice", type=int, default=10)
    parser.add_argument("--flood-plan", help=argparse.SUPPRESS)
    args = smoke_args(parser, {"bad_keys": 30, "bodies": 3, "max_body_mb": 0.1, "polls": 10})
    if args.flood_plan:  # this is the flood's process
        print(json.dumps(asyncio.run(flood(json.loads(args.flood_plan)))))
        return
    args.max_body_bytes = int(args.max_body_mb * 1_000_000)
    load = os.getloadavg()[0]
    port = free_port()
    with tempfile.TemporaryDirectory(prefix="zofia-api-flood-") as folder:
        server, ready = start_server(Path(folder), port, args)
        try:
            measured = asyncio.run(measure(args, port, ready, server.pid))
        finally:
            server.terminate()
            server.wait(timeout=60)
    print(json.dumps(figures(args, measured, load)))


if __name__ == "__main__":
    main()
