"""One user's burst against everyone else: are the other chats still answered, and soon?

The real Telegram bot (python-telegram-bot, polling) talks to the fake Bot API server;
behind it are the real check service on a temporary SQLite file with the default
limits and shares, the real Stage-1 models, and the fake OpenAI server answering every
agent after a fixed delay. Two rounds, each on a fresh store:

1. idle: OTHERS chats send one post each; their wait from send to card is the baseline;
2. burst: one private chat forwards BURST distinct posts at once, and the same OTHERS
   chats then send one post each;
3. pictures: PICTURES users each send a blank 40 MP picture, spread over a minute,
   then the OTHERS chats send one post each; the process's RSS is sampled throughout.

    python bench/abuse.py [--burst 100] [--others 5] [--pictures 60] [--llm-delay 0.05]

The last line is one JSON object: ``others_sent``, ``others_answered`` (a card
arrived), ``others_wait_ratio`` (their mean wait in the burst over the idle one),
``burst_refused`` (the burst's requests the limits turned away before any work),
``burst_tokens`` (what the burst spent of the day's budget), the waits themselves,
``pictures_others_answered`` (the others' cards in the picture round) and
``rss_over_idle_mb`` (its peak RSS above the RSS once the bot was up).
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
import tempfile
import time
from pathlib import Path
from typing import Any

import psutil
from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from peers.openai_peer import FakeOpenAI
from peers.panel_script import PanelScript
from peers.telegram_peer import BOT_ID, TOKEN, FakeBotAPI, channel, user

from bots.common.runtime import running_service
from bots.common.settings import Settings
from bots.telegram.app import running_bot

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


def bench_settings(peer: FakeBotAPI, panel: FakeOpenAI, folder: Path) -> Settings:
    """The defaults, but for the fake servers and a temporary store."""
    return Settings.model_validate(
        {
            "llm": {
                "backend": "openai",
                "openai": {"base_url": panel.base_url, "api_key": "sk-bench"},
            },
            "storage": {"path": str(folder / "b.db"), "secret": "bench-secret-012345"},
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


async def one_round(args: argparse.Namespace, *, burst: int) -> dict[str, Any]:
    """Send the burst (if any), then the others' posts; wait for the others' cards."""
    async with (
        FakeBotAPI(chat_burst=5, chat_rate=1.0) as peer,
        FakeOpenAI(PanelScript(), api_key="sk-bench", delay_s=args.llm_delay) as panel,
    ):
        with tempfile.TemporaryDirectory() as tmp:
            settings = bench_settings(peer, panel, Path(tmp))
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
                    await peer.wait_for(
                        lambda: len(cards_in(peer, sent)) >= len(sent), args.timeout
                    )
                answered = cards_in(peer, sent)
                waits = [answered[chat] - sent[chat] for chat in answered]
                who = service.chats.user_hash("telegram", str(BURSTER["id"]))
                day = service.clock() - dt.timedelta(days=1)
                admitted = service.store.attempts.count(since=day, requester=who)
                spent = service.store.checks.tokens_since(day, requester=who)
    return {"answered": len(answered), "waits": waits, "admitted": admitted, "tokens": spent}


def blank_picture(megapixels: int) -> bytes:
    """A white PNG of ``megapixels`` (small as a file, large once decoded)."""
    out = io.BytesIO()
    Image.new("RGB", (1000 * megapixels // 5, 5000), "white").save(out, format="PNG")
    return out.getvalue()


async def picture_round(args: argparse.Namespace) -> dict[str, Any]:
    """PICTURES blank 40 MP pictures from as many users over a minute, then the others'
    text posts; the bot's peak RSS above its idle RSS, sampled every 50 ms."""
    process = psutil.Process()
    async with (
        FakeBotAPI(chat_burst=5, chat_rate=1.0) as peer,
        FakeOpenAI(PanelScript(), api_key="sk-bench", delay_s=args.llm_delay) as panel,
    ):
        photo = peer.photo(blank_picture(40))  # decoded once here, for its thumbnails
        gc.collect()
        with tempfile.TemporaryDirectory() as tmp:
            settings = bench_settings(peer, panel, Path(tmp))
            async with running_service(settings) as service, running_bot(settings, service, TOKEN):
                idle_mb = process.memory_info().rss / 2**20
                peak_mb = idle_mb
                sent: dict[int, float] = {}
                start = time.monotonic()
                for n in range(args.pictures + args.others):
                    at = n * args.picture_spread / max(1, args.pictures)
                    while time.monotonic() < start + min(at, args.picture_spread):
                        peak_mb = max(peak_mb, process.memory_info().rss / 2**20)
                        await asyncio.sleep(0.05)
                    if n < args.pictures:
                        person = user(40_000 + n, f"Sender{n}")
                        peer.send(private(person), person, photo=photo)
                    else:
                        person = user(30_000 + n, f"User{n}")
                        peer.send(private(person), person, other_post(n))
                        sent[person["id"]] = time.monotonic()
                deadline = time.monotonic() + args.timeout
                while time.monotonic() < deadline and len(cards_in(peer, sent)) < len(sent):
                    peak_mb = max(peak_mb, process.memory_info().rss / 2**20)
                    await asyncio.sleep(0.05)
                answered = len(cards_in(peer, sent))
                said = [
                    " ".join(m.get("text", "") for m in peer.bot_messages(40_000 + n))
                    for n in range(args.pictures)
                ]
    return {
        "answered": answered,
        "rss_over_idle_mb": round(peak_mb - idle_mb),
        # what each picture's sender was told: read (it holds no text) or refused "busy"
        "read": sum("no text" in text for text in said),
        "busy": sum("Too many pictures" in text for text in said),
    }


async def run(args: argparse.Namespace) -> dict[str, Any]:
    idle = await one_round(args, burst=0)
    burst = await one_round(args, burst=args.burst)
    pictures = await picture_round(args) if args.pictures else None
    idle_wait = statistics.mean(idle["waits"]) if idle["waits"] else None
    burst_wait = statistics.mean(burst["waits"]) if burst["waits"] else None
    ratio = round(burst_wait / idle_wait, 2) if idle_wait and burst_wait else None
    return {
        "others_sent": args.others,
        "others_answered": burst["answered"],
        "others_wait_ratio": ratio,
        "others_wait_idle_s": round(idle_wait, 2) if idle_wait else None,
        "others_wait_burst_s": round(burst_wait, 2) if burst_wait else None,
        "burst_sent": args.burst,
        "burst_refused": args.burst - burst["admitted"],
        "burst_tokens": burst["tokens"],
        "pictures_sent": args.pictures,
        "pictures_others_answered": pictures["answered"] if pictures else None,
        "rss_over_idle_mb": pictures["rss_over_idle_mb"] if pictures else None,
        "pictures_read": pictures["read"] if pictures else None,
        "pictures_refused_busy": pictures["busy"] if pictures else None,
        "llm_delay_s": args.llm_delay,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--burst", type=int, default=100)
    parser.add_argument("--others", type=int, default=5)
    parser.add_argument("--llm-delay", type=float, default=0.05)
    parser.add_argument("--pictures", type=int, default=60)
    parser.add_argument("--picture-spread", type=float, default=60.0)
    parser.add_argument("--timeout", type=float, default=300.0)
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)
    print(json.dumps(asyncio.run(run(args))))


if __name__ == "__main__":
    main()
