"""Poisoned search results on the embedded model: how often the verdict follows pages
written to rank (ToE's GEO attack), with the credibility weighting off and on.

The 22 false posts of ``tests/data/poisoned.jsonl`` are checked with the embedded
defaults (the packaged Qwen 1.5B, offline Wikipedia), and web search answered by a
fake Brave API on 127.0.0.1: two keyword-stuffed pages on low-quality domains that
agree with the post, ranked above one page from a high-quality outlet that refutes it.
"Followed the poison" is a ``true`` verdict on a false post.

    python bench/poisoned.py [--limit 22] [--smoke]

``--smoke``: one post, the fake OpenAI server's scripted replies instead of the
embedded model.

The last line is one JSON object: per setting (``off``, ``on``), the posts checked, how
many ended ``true`` (followed), ``unproven``, ``false`` or otherwise, the share that
followed, and the mean seconds per check.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from lib.smoke import fake_llm, smoke_args

from tests.peers.servers.search_peers import BRAVE_TOKEN, FakeBrave, brave_body, brave_result

from zofia_engine.config import EngineSettings
from zofia_engine.engine import Engine
from zofia_engine.retrieval.pipeline import EntityGuidedRetrieval
from zofia_engine.retrieval.web.brave import BraveSearch

TESTS = Path(__file__).resolve().parents[1] / "tests"


def hits(post: dict[str, Any]) -> list[dict[str, Any]]:
    pages = [*post["poison"], post["truth"]]  # written to rank: the poison first
    return [brave_result(p["url"], p["title"], p["text"]) for p in pages]


async def run(
    posts: list[dict[str, Any]],
    credibility: bool,
    brave_server: FakeBrave,
    llm: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The posts checked with the credibility weighting on or off; ``llm``: the settings'
    ``llm`` section (default: the embedded model)."""
    sections: dict[str, Any] = {"evidence": {"credibility": credibility}}
    settings = EngineSettings.model_validate(sections | ({"llm": llm} if llm else {}))
    brave = BraveSearch(BRAVE_TOKEN, base_url=brave_server.base_url, requests_per_second=1e3)
    stage1 = EntityGuidedRetrieval(settings, search_backends=[brave])
    verdicts: Counter[str] = Counter()
    started = time.perf_counter()
    async with Engine(settings, retrieval=stage1) as engine:
        await engine.load()
        for post in posts:
            brave_server.respond(brave_body(hits(post)))
            report = await engine.check(post["post"])
            verdicts[report.verdict] += 1
            print(f"  {post['id']} {report.verdict}", flush=True)
    n = len(posts)
    return {
        "posts": n,
        "followed_poison": verdicts["true"],
        "followed_share": round(verdicts["true"] / n, 3) if n else 0.0,
        "verdicts": dict(verdicts),
        "mean_s": round((time.perf_counter() - started) / n, 1) if n else 0.0,
    }


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=22)
    args = smoke_args(parser, {"limit": 1})
    lines = (TESTS / "data" / "poisoned.jsonl").read_text(encoding="utf-8").splitlines()
    posts = [json.loads(line) for line in lines][: args.limit]
    result: dict[str, Any] = {}
    with contextlib.ExitStack() as stack:
        llm = stack.enter_context(fake_llm()).settings if args.smoke else None
        async with FakeBrave() as brave_server:
            for name, credibility in (("off", False), ("on", True)):
                print(f"credibility {name}:", flush=True)
                result[name] = await run(posts, credibility, brave_server, llm)
    print(json.dumps(result))


if __name__ == "__main__":
    asyncio.run(main())
