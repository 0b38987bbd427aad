"""One user's burst against everyone else: are the other chats still answered, and soon?

The real Telegram bot (python-telegram-bot, polling) talks to the fake Bot API server;
behind it are the real check service with the default limits and shares, the real
Stage-1 models, and the fake OpenAI server answering every agent after a fixed delay.
The store (``--backend``) is a temporary SQLite file, the checks run in the bot's
process; or a database on a throwaway PostgreSQL server (tests/peers/servers/pg_server.py), the
queued mode: ``--workers`` ``zofia worker --concurrency C`` processes (the Procfile's
one with 2 by default) run the checks against the same fake OpenAI server, the bot
reads images and posts the cards (the deliver jobs). Three rounds, each on a fresh
store (on PostgreSQL a fresh database, with its workers ready before anything is sent):

1. idle: OTHERS chats send one post each; their wait from send to card is the baseline;
2. burst: one private chat forwards BURST distinct posts at once, and the same OTHERS
   chats then send one post each;
3. images: IMAGES users each send a blank 40 MP image, spread over a minute,
   then the OTHERS chats send one post each; the process's RSS is sampled throughout.

    python bench/abuse.py [--backend sqlite|postgresql] [--burst 100] [--others 5]
        [--images 60] [--llm-delay 0.05] [--workers 1] [--worker-concurrency 2] [--smoke]

A small run first: ``--burst 10 --others 2 --images 0``.

The last line is one JSON object: ``others_sent``, ``others_answered`` (a card
arrived), ``others_wait_ratio`` (their mean wait in the burst over the idle one),
``burst_refused`` (the burst's requests the limits turned away before any work),
``burst_tokens`` (what the burst spent of the day's budget), the waits themselves,
``images_others_answered`` (the others' cards in the image round),
``rss_over_idle_mb`` (the bot's process's peak RSS above its RSS once the bot was up:
this process, the fake servers in it; never the workers'), ``images_read`` and
``images_refused_busy``, the settings, and ``backend``, ``workers`` (``"1x2"``:
processes x concurrency; null on SQLite), ``workers_rss_over_idle_mb`` (the workers'
and their children's RSS, summed, peak over the image round above their sum before
it; null on SQLite) and ``targets_met``: every other chat answered in both rounds,
``others_wait_ratio`` <= 1.5, ``rss_over_idle_mb`` <= 1024.

On PostgreSQL the bot loads no model up front (the workers hold them), so its first
image loads the OCR's models in the bot's process, inside the image round's rise;
on SQLite ``Engine.load`` loaded them before the idle RSS is taken.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime as dt
import gc
import io
import json
import logging
import statistics
import sys
import time
from argparse import SUPPRESS
from pathlib import Path
from typing import Any

from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from lib.abuse_store import API_KEY, BACKENDS, Backend, RssPeaks
from lib.smoke import smoke_args

from tests.peers.fakes.panel_script import PanelScript
from tests.peers.servers.openai_peer import FakeOpenAI
from tests.peers.servers.telegram_peer import BOT_ID, TOKEN, FakeBotAPI, channel, user

from bots.app.runtime import running_service
from bots.app.settings import Settings
from bots.app.telegram import running_bot
from storage import RequestScope

MAX_WAIT_RATIO = 1.5  # the others' mean wait in the burst over the idle one
MAX_RSS_OVER_IDLE_MB = 1024  # the bot's process, over the image round

NEWS = channel(-1001234, "Rumour Daily", "rumour_daily")
BURSTER = user(20_000, "Mallory")
TOPICS = ["bridge", "library", "stadium", "airport", "harbour", "tunnel", "museum", "park"]


def burst_post(n: int) -> str:
    topic = TOPICS[n % len(TOPICS)]
    return f"BREAKING: the city will close its {topic} number {n} for {n % 9 + 2} years. Share!"


def other_post(n: int) -> str:
    return f"The mayor of Springfield said {n + 3} new schools will open in the north in 2027."


def private(person: dict[str, Any]) -> dict[str, Any]:
    return {"id": person["id"], "type": "private", "first_name": person["first_name"]}


def is_card(message: dict[str, Any]) -> bool:
    return '"d:' in json.dumps(message.get("reply_markup") or {})


def bench_settings(peer: FakeBotAPI, panel: FakeOpenAI, storage: dict[str, str]) -> Settings:
    """The defaults, but for the fake servers and the round's store."""
    return Settings.model_validate(
        {
            "llm": {
                "backend": "openai",
                "openai": {"base_url": panel.base_url, "api_key": API_KEY},
            },
            "storage": storage,
            "telegram": {"base_url": f"{peer.root}/bot"},
        }
    )


def cards_in(peer: FakeBotAPI, sent: dict[int, float]) -> dict[int, float]:
    """When each chat of ``sent`` got its card."""
    found: dict[int, float] = {}
    for (chat_id, message_id), message in list(peer.messages.items()):
        if chat_id in sent and message["from"]["id"] == BOT_ID and is_card(message):
            found[chat_id] = peer.touched_at[(chat_id, message_id)]
    return found


async def one_round(args: argparse.Namespace, backend: Backend, *, burst: int) -> dict[str, Any]:
    """Send the burst (if any), then the others' posts; wait for the others' cards."""
    async with (
        FakeBotAPI(chat_burst=5, chat_rate=1.0) as peer,
        FakeOpenAI(PanelScript(), api_key=API_KEY, delay_s=args.llm_delay) as panel,
        backend.round_store(panel.base_url) as store,
    ):
        settings = bench_settings(peer, panel, store.storage)
        async with running_service(settings) as service, running_bot(settings, service, TOKEN):
            origin = {"type": "channel", "chat": NEWS, "message_id": 1, "date": 1_790_000_000}
            for n in range(burst):
                peer.send(private(BURSTER), BURSTER, burst_post(n), forward_origin=origin)
            await asyncio.sleep(0.2)  # the burst reaches the bot first
            sent: dict[int, float] = {}
            for n in range(args.others):
                person = user(30_000 + n, f"User{n}")
                peer.send(private(person), person, other_post(n))
                sent[person["id"]] = time.monotonic()

            with contextlib.suppress(TimeoutError):
                await peer.wait_for(lambda: len(cards_in(peer, sent)) >= len(sent), args.timeout)
            answered = cards_in(peer, sent)
            waits = [answered[chat] - sent[chat] for chat in answered]
            who = service.namer.user("telegram", str(BURSTER["id"]))
            day = service.clock() - dt.timedelta(days=1)
            admitted = service.store.attempts.count(RequestScope(day, who))
            spent = service.store.checks.tokens_since(day, requester=who)
    return {"answered": len(answered), "waits": waits, "admitted": admitted, "tokens": spent}


def blank_image(megapixels: int) -> bytes:
    """A white PNG of ``megapixels`` (small as a file, large once decoded)."""
    out = io.BytesIO()
    Image.new("RGB", (1000 * megapixels // 5, 5000), "white").save(out, format="PNG")
    return out.getvalue()


async def image_round(args: argparse.Namespace, backend: Backend) -> dict[str, Any]:
    """IMAGES blank 40 MP images from as many users over a minute, then the others'
    text posts; the bot's peak RSS above its idle RSS (and the workers'), sampled every
    50 ms."""
    async with (
        FakeBotAPI(chat_burst=5, chat_rate=1.0) as peer,
        FakeOpenAI(PanelScript(), api_key=API_KEY, delay_s=args.llm_delay) as panel,
        backend.round_store(panel.base_url) as store,
    ):
        photo = peer.photo(blank_image(40))  # decoded once here, for its thumbnails
        gc.collect()
        settings = bench_settings(peer, panel, store.storage)
        async with running_service(settings) as service, running_bot(settings, service, TOKEN):
            rss = RssPeaks(store.worker_pids)
            sent: dict[int, float] = {}
            start = time.monotonic()
            for n in range(args.images + args.others):
                at = n * args.image_spread / max(1, args.images)
                while time.monotonic() < start + min(at, args.image_spread):
                    rss.sample()
                    await asyncio.sleep(0.05)
                if n < args.images:
                    person = user(40_000 + n, f"Sender{n}")
                    peer.send(private(person), person, photo=photo)
                else:
                    person = user(30_000 + n, f"User{n}")
                    peer.send(private(person), person, other_post(n))
                    sent[person["id"]] = time.monotonic()
            deadline = time.monotonic() + args.timeout
            while time.monotonic() < deadline and len(cards_in(peer, sent)) < len(sent):
                rss.sample()
                await asyncio.sleep(0.05)
            answered = len(cards_in(peer, sent))
            said = [
                " ".join(m.get("text", "") for m in peer.bot_messages(40_000 + n))
                for n in range(args.images)
            ]
    return {
        "answered": answered,
        **rss.figures(),
        # what each image's sender was told: read (it holds no text) or refused "busy"
        "read": sum("no text" in text for text in said),
        "busy": sum("Too many images" in text for text in said),
    }


def targets_met(figures: dict[str, Any]) -> dict[str, bool | None]:
    """Every other chat answered (both rounds), their wait ratio, the bot's RSS rise."""
    sent, images = figures["others_sent"], figures["images_others_answered"]
    ratio, rss = figures["others_wait_ratio"], figures["rss_over_idle_mb"]
    return {
        "others_answered": figures["others_answered"] == sent and images in (None, sent),
        "others_wait_ratio": ratio is not None and ratio <= MAX_WAIT_RATIO,
        "rss_over_idle_mb": None if rss is None else rss <= MAX_RSS_OVER_IDLE_MB,
    }


async def run(args: argparse.Namespace) -> dict[str, Any]:
    with Backend(
        args.backend, args.workers, args.worker_concurrency, args.ready_timeout
    ) as backend:
        idle = await one_round(args, backend, burst=0)
        burst = await one_round(args, backend, burst=args.burst)
        images = await image_round(args, backend) if args.images else None
    idle_wait = statistics.mean(idle["waits"]) if idle["waits"] else None
    burst_wait = statistics.mean(burst["waits"]) if burst["waits"] else None
    ratio = round(burst_wait / idle_wait, 2) if idle_wait and burst_wait else None
    postgres = args.backend == "postgresql"
    figures = {
        "backend": args.backend,
        "workers": f"{args.workers}x{args.worker_concurrency}" if postgres else None,
        "others_sent": args.others,
        "others_answered": burst["answered"],
        "others_wait_ratio": ratio,
        "others_wait_idle_s": round(idle_wait, 2) if idle_wait else None,
        "others_wait_burst_s": round(burst_wait, 2) if burst_wait else None,
        "burst_sent": args.burst,
        "burst_refused": args.burst - burst["admitted"],
        "burst_tokens": burst["tokens"],
        "images_sent": args.images,
        "images_others_answered": images["answered"] if images else None,
        "rss_over_idle_mb": images["rss_over_idle_mb"] if images else None,
        "workers_rss_over_idle_mb": images["workers_rss_over_idle_mb"] if images else None,
        "images_read": images["read"] if images else None,
        "images_refused_busy": images["busy"] if images else None,
        "llm_delay_s": args.llm_delay,
    }
    return {**figures, "targets_met": targets_met(figures)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backend", choices=BACKENDS, default="sqlite")
    parser.add_argument("--burst", type=int, default=100)
    parser.add_argument("--others", type=int, default=5)
    parser.add_argument("--llm-delay", type=float, default=0.05)
    parser.add_argument("--images", type=int, default=60)
    parser.add_argument("--image-spread", type=float, default=60.0)
    # the flags' first names, kept for the commands already written down
    for old, new, kind in (
        ("--pictures", "images", int),
        ("--picture-spread", "image_spread", float),
    ):
        parser.add_argument(old, dest=new, type=kind, default=SUPPRESS, help=SUPPRESS)
    parser.add_argument("--timeout", type=float, default=300.0)
    parser.add_argument("--workers", type=int, default=1, help="zofia worker processes (pg)")
    parser.add_argument("--worker-concurrency", type=int, default=2, help="checks per worker")
    parser.add_argument("--ready-timeout", type=float, default=600.0, help="workers' start, s")
    args = smoke_args(
        parser,
        {
            "burst": 3,
            "others": 1,
            "images": 1,
            "image_spread": 0.5,
            "llm_delay": 0.01,
            "timeout": 120.0,
        },
    )
    logging.basicConfig(level=logging.ERROR)
    print(json.dumps(asyncio.run(run(args))))


if __name__ == "__main__":
    main()
