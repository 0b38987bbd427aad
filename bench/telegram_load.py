"""The Telegram bot under load: many chats forwarding posts at once, as each person sees it.

The real bot (python-telegram-bot, polling, its rate limiter) talks to the fake Bot API
server, which enforces a per-chat limit as Telegram does (a leaky bucket: a short burst,
then about one message a second; beyond it, 429). Behind the bot are the real check
service on a temporary SQLite file, the real Stage-1 models, and the fake OpenAI server
answering every agent after a fixed delay. CHATS private chats forward POSTS posts
within SPREAD seconds (4 each by default: posts forwarded together, as people do);
rumours travel, so each of DISTINCT texts is forwarded by several chats (the first runs
the engine, the others join that run or get the stored answer).

    python bench/telegram_load.py [--chats 50] [--posts 200] [--distinct 40] [--spread 3]
        [--llm-delay 0.05]

Each forward is counted by what its sender sees at the end: its card (a reply to it
with a verdict card's buttons), a sentence naming it (a reply to it that is no card,
nor a "Checking…" or "In line" message still waiting; or one of the "N posts were not
checked" a refusal of a burst counts), or nothing. The last line is one JSON object:
sent, cards, named (forwards with a sentence instead of a card), lost (forwards with
neither: the target is 0), chats_without_card (people who forwarded and got no card at
all: the target is 0), refused (requests the fake server refused with 429), p50_s and
p95_s from forward to card, chat_last_card_p95_s (from a chat's first forward to its
last card: the cost of answering a batch in turn), and the settings.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import random
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.peers.fakes.panel_script import PanelScript
from tests.peers.servers.openai_peer import FakeOpenAI
from tests.peers.servers.telegram_peer import BOT_ID, TOKEN, FakeBotAPI, channel, user

from bots.app.runtime import running_service
from bots.app.settings import Settings
from bots.app.telegram import running_bot

CITIES = ["Springfield", "Chicago", "Denver", "Boston", "Seattle", "Austin", "Miami", "Omaha"]
CLAIMS = [
    "has banned bicycles from every street, with a fine of {n} dollars",
    "will put {n} new speed cameras on the highway to Canada next week",
    "found {n} crocodiles living in the sewers under the central station",
    "is giving every resident {n} dollars to move to Mars by 2030",
    "closed all {n} public libraries because nobody reads books anymore",
]
NEWS = channel(-1001234, "Rumour Daily", "rumour_daily")


def posts(distinct: int) -> list[str]:
    rng = random.Random(7)
    texts: list[str] = []
    while len(texts) < distinct:
        city, claim = rng.choice(CITIES), rng.choice(CLAIMS)
        text = f"BREAKING: the mayor of {city} {claim.format(n=rng.randint(2, 9000))}. Share!"
        if text not in texts:
            texts.append(text)
    return texts


def is_card(message: dict[str, object]) -> bool:
    return '"d:' in json.dumps(message.get("reply_markup") or {})


def bench_settings(llm_url: str, bot_api_root: str, tmp: str) -> Settings:
    return Settings.model_validate(
        {
            "llm": {
                "backend": "openai",
                "openai": {"base_url": llm_url, "api_key": "sk-bench"},
            },
            "storage": {
                "path": str(Path(tmp) / "bench.db"),
                "secret": "bench-secret-0123456",
            },
            "service": {
                "max_concurrent_checks": 8,
                "user_per_minute": 1000,
                "chat_per_minute": 1000,
                "user_daily": 10000,
                "chat_daily": 10000,
            },
            "telegram": {"base_url": f"{bot_api_root}/bot"},
        }
    )


async def forward_posts(
    peer: FakeBotAPI, texts: list[str], args: argparse.Namespace
) -> dict[tuple[int, int], float]:
    """``--posts`` forwards from ``--chats`` private chats over ``--spread`` seconds; when
    each was sent, by (chat id, message id)."""
    rng = random.Random(11)
    plan = sorted((rng.uniform(0, args.spread), n) for n in range(args.posts))
    sent: dict[tuple[int, int], float] = {}
    start = time.monotonic()
    for at, n in plan:
        await asyncio.sleep(max(0.0, start + at - time.monotonic()))
        person = user(10_000 + n % args.chats, f"User{n % args.chats}")
        chat = {
            "id": person["id"],
            "type": "private",
            "first_name": person["first_name"],
        }
        origin = {
            "type": "channel",
            "chat": NEWS,
            "message_id": n,
            "date": 1_790_000_000,
        }
        message = peer.send(chat, person, texts[n % len(texts)], forward_origin=origin)
        sent[(chat["id"], message["message_id"])] = time.monotonic()
    return sent


#: the start of a reply that is not an answer yet: it becomes the card (or a sentence)
WAITING = ("🔎", "⏳", "Checking", "In line:")
_NOT_CHECKED = re.compile(r"^(\d+) posts? (?:was|were) not checked\.")


def answers(peer: FakeBotAPI) -> dict[tuple[int, int], tuple[str, float]]:
    """The bot's answer to each forward so far, by (chat id, message id): ``"card"`` or
    the sentence said, and when it was last touched; replies still waiting are none."""
    found = {}
    for (chat_id, _), message in list(peer.messages.items()):
        target = message.get("reply_to_message")
        if message["from"]["id"] != BOT_ID or target is None:
            continue
        text = str(message.get("text", ""))
        if not is_card(message) and text.startswith(WAITING):
            continue
        when = peer.touched_at[(chat_id, message["message_id"])]
        found[(chat_id, target["message_id"])] = ("card" if is_card(message) else text, when)
    return found


def seen(sent: dict[tuple[int, int], float], peer: FakeBotAPI) -> dict[str, object]:
    """What each person sees of their forwards (see the module's docstring)."""
    found = answers(peer)
    cards = [
        when - sent[key] for key, (said, when) in found.items() if said == "card" and key in sent
    ]
    named = {key for key, (said, _) in found.items() if said != "card" and key in sent}
    by_chat: dict[int, list[int]] = {}
    for chat_id, message_id in sent:
        by_chat.setdefault(chat_id, []).append(message_id)
    lost = 0
    without_card = 0
    last_card: list[float] = []
    for chat_id, messages in by_chat.items():
        mine = [found.get((chat_id, m)) for m in messages]
        carded = sum(1 for a in mine if a is not None and a[0] == "card")
        # A burst's one refusal names its count of posts: the others of the chat it covers.
        covered = sum(
            int(m[1]) - 1
            for a in mine
            if a is not None and (m := _NOT_CHECKED.match(a[0])) is not None
        )
        answered = sum(1 for a in mine if a is not None)
        lost += max(0, len(messages) - answered - covered)
        without_card += carded == 0
        if carded:
            first = min(sent[(chat_id, m)] for m in messages)
            last = max(a[1] for a in mine if a is not None and a[0] == "card")
            last_card.append(last - first)
    cards.sort()
    last_card.sort()
    return {
        "cards": len(cards),
        "named": len(named),
        "lost": lost,
        "chats_without_card": without_card,
        "p50_s": round(statistics.median(cards), 2) if cards else None,
        "p95_s": round(cards[int(0.95 * (len(cards) - 1))], 2) if cards else None,
        "chat_last_card_p95_s": (
            round(last_card[int(0.95 * (len(last_card) - 1))], 2) if last_card else None
        ),
    }


async def run(args: argparse.Namespace) -> dict[str, object]:
    texts = posts(args.distinct)
    async with (
        FakeBotAPI(chat_burst=5, chat_rate=1.0) as peer,
        FakeOpenAI(PanelScript(), api_key="sk-bench", delay_s=args.llm_delay) as panel,
    ):
        with tempfile.TemporaryDirectory() as tmp:
            settings = bench_settings(panel.base_url, peer.root, tmp)
            async with running_service(settings) as service, running_bot(settings, service, TOKEN):
                sent = await forward_posts(peer, texts, args)
                with contextlib.suppress(TimeoutError):
                    await peer.wait_for(lambda: seen(sent, peer)["lost"] == 0, args.timeout)
                result = seen(sent, peer)
    return {
        "sent": len(sent),
        **result,
        "refused": peer.refused,
        "chats": args.chats,
        "distinct": args.distinct,
        "spread_s": args.spread,
        "llm_delay_s": args.llm_delay,
        "llm_calls": len(panel.requests),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chats", type=int, default=50)
    parser.add_argument("--posts", type=int, default=200)
    parser.add_argument("--distinct", type=int, default=40)
    parser.add_argument("--spread", type=float, default=3.0)
    parser.add_argument("--llm-delay", type=float, default=0.05)
    parser.add_argument("--timeout", type=float, default=600.0)
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    logging.getLogger("httpx").setLevel(logging.WARNING)
    result = asyncio.run(run(args))
    print(json.dumps(result))


if __name__ == "__main__":
    main()
