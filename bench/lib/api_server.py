"""Not a bench script: the server side of ``bench/api_flood.py`` (``bench/lib/`` holds such
helpers), run as its own process.

The API's server (:func:`bots.api.app.serving_api`, what ``zofia api`` serves) over the
real check service and a real store, a SQLite file in ``--folder``; the service checks
with :class:`~tests.peers.fakes.fake_checker.FakeChecker` instead of the engine (the
flood's polls read a check done before it began, and its posts are refused before any
check or read no text). It makes two keys (``poller``, ``flooder``) and one done check
of the poller's, prints them as one JSON line, and serves until SIGTERM or SIGINT.

    python bench/lib/api_server.py --folder DIR --port PORT [--max-body-bytes N]
        [--key-per-minute N]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import signal
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.peers.fakes.fake_checker import FakeChecker, fake_service  # noqa: E402

from bots.api.app import ApiConfig, serving_api  # noqa: E402
from bots.api.checks import requester_of  # noqa: E402
from bots.app.settings import Settings  # noqa: E402
from bots.service.records import Message  # noqa: E402
from storage.api_keys import ApiKeys  # noqa: E402

SECRET = "bench-secret-0123456"
POLLED = "The city council of Springfield banned bicycles from every street in March."


def settings_for(folder: Path, port: int, max_body_bytes: int, key_per_minute: int) -> Settings:
    """The defaults, but for the store in ``folder``, the port and the two bounds given."""
    return Settings.model_validate(
        {
            "storage": {"path": str(folder / "api.db"), "secret": SECRET},
            "api": {
                "port": port,
                "max_body_bytes": max_body_bytes,
                "key_per_minute": key_per_minute,
            },
        }
    )


async def serve(args: argparse.Namespace) -> None:
    settings = settings_for(args.folder, args.port, args.max_body_bytes, args.key_per_minute)
    async with fake_service(settings, FakeChecker()) as service:
        keys = ApiKeys(service.store.database, service.secret)
        poller, flooder = keys.add("poller"), keys.add("flooder")
        async with service.take(Message(POLLED), requester_of("poller")) as handle:
            await handle.result()
        config = ApiConfig(settings.api, settings.engine.images)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        async with serving_api(service, config):
            ready = {"poller": poller, "flooder": flooder, "check": handle.check_id}
            print(json.dumps(ready), flush=True)
            await stop.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--folder", type=Path, required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--max-body-bytes", type=int, default=20_000_000)
    parser.add_argument("--key-per-minute", type=int, default=300)
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)  # no access log: 1,500 lines of 401 and 429
    asyncio.run(serve(args))


if __name__ == "__main__":
    main()
