"""The 1 MB near repeat of the security issue: a post of common words, then the same
post with one number changed, through the real check service with the packaged
all-MiniLM-L6-v2 (the check itself is a stand-in that answers at once, so only the
service's own work is timed): how long the second submission takes to be decided, and
the longest the event loop went without running a 10 ms timer meanwhile.

    python bench/near_repeat_stall.py [--megabytes 1] [--smoke]

The last line is one JSON object: the post's size, the seconds to decide the second
submission, whether it was taken as a repeat, and the longest loop stall in ms.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from lib.smoke import smoke_args

from tests.peers.fakes.fake_checker import FakeChecker

from bots.app.runtime import build_service
from bots.app.settings import Settings
from bots.service.records import Message, Requester
from zofia_engine.encoder import SentenceTransformerEncoder

SENTENCE = "The council said the members of the city approved the plan for the people. "


def post(megabytes: float, figure: int) -> str:
    body = SENTENCE * int(megabytes * 1_000_000 / len(SENTENCE))
    return SENTENCE * 300 + f"The plan costs {figure} dollars. " + body


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--megabytes", type=float, default=1.0)
    args = smoke_args(parser, {"megabytes": 0.01})
    with tempfile.TemporaryDirectory() as folder:
        settings = Settings.model_validate(
            {
                "storage": {"path": f"{folder}/zofia.db", "secret": "bench-secret-0123456789"},
                "service": {"user_per_minute": 100, "chat_per_minute": 100},
            }
        )
        encoder = SentenceTransformerEncoder()
        encoder.load()
        service = build_service(settings, FakeChecker(), encoder)
        await service.start()
        async with service.take(Message(post(args.megabytes, 12)), Requester("cli", "a", "a")) as h:
            await h.result()
        worst, stop = 0.0, asyncio.Event()

        async def tick() -> None:
            nonlocal worst
            loop = asyncio.get_running_loop()
            last = loop.time()
            while not stop.is_set():
                await asyncio.sleep(0.01)
                worst, last = max(worst, loop.time() - last), loop.time()

        ticker = asyncio.create_task(tick())
        started = time.perf_counter()
        async with service.take(Message(post(args.megabytes, 13)), Requester("cli", "b", "b")) as h:
            outcome = await h.result()
        seconds = time.perf_counter() - started
        stop.set()
        await ticker
        await service.aclose()
    print(
        json.dumps(
            {
                "megabytes": args.megabytes,
                "decide_s": round(seconds, 3),
                "repeat": outcome.repeat_kind,
                "worst_stall_ms": round(worst * 1000, 1),
            }
        )
    )


if __name__ == "__main__":
    asyncio.run(main())
