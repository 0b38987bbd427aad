"""What three of Stage 1's passes cost, on the inputs their tests bound by work, not
by time (issue 45: a timed test fails on a busy machine for no fault of the code):

- the title gazetteer (``find_titles``, through the packaged offline Wikipedia's
  ``title_matches``) on the five 50 kB posts of
  ``tests/engine/retrieval/test_wiki_titles.py``, which bounds its look-ups and the
  characters looked up;
- the offline Wikipedia's ``candidates`` look-ups, six keywords over ``--rounds``
  rounds (the test that timed them is gone: they are dictionary and posting-list
  reads);
- the source-quality tables' first load (``SourceQuality().classify``), in a fresh
  process, and whether it imported torch (``test_credibility.py`` checks that it does
  not).

    python bench/retrieval_passes.py [--rounds 200] [--smoke]

The last line is one JSON object: ``titles_50kb_s`` (seconds per post, by the test's
id), ``titles_50kb_max_s``, ``offline_lookup_us`` (microseconds per look-up, the mean
over the rounds after the first), ``quality_load_ms`` and ``quality_imports_torch``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from lib.smoke import smoke_args

from zofia_engine.retrieval.wikipedia.offline import OfflineWikipedia

#: the posts of test_wiki_titles.py's test_a_50_kb_post_stays_bounded, by its ids
POSTS = {
    "one-long-run": " ".join(f"Word{i % 97} Statue" for i in range(6000)),
    "repeated-name": "Statue of Liberty " * 3000,
    "one-word": "a" * 50_000,
    "many-runs": "Mona Lisa, " * 5000,
    "accents": "é" * 25_000 + " Mona Lisa",
}
KEYWORDS = ["Apple", "Albert Einstein", "war", "United States", "Nobody Here", "Mercury"]
_QUALITY = (
    "import sys, time\n"
    "from zofia_engine.retrieval.credibility import SourceQuality\n"
    "t = time.perf_counter(); SourceQuality().classify('reuters.com')\n"
    "print(time.perf_counter() - t, 'torch' in sys.modules)\n"
)


async def _titles(wiki: OfflineWikipedia) -> dict[str, float]:
    seconds: dict[str, float] = {}
    for name, text in POSTS.items():
        started = time.perf_counter()
        await wiki.title_matches(text, 10)
        seconds[name] = round(time.perf_counter() - started, 4)
    return seconds


async def _lookup_us(wiki: OfflineWikipedia, rounds: int) -> float:
    for keyword in KEYWORDS:  # the first round warms the caches
        await wiki.candidates(keyword, 5)
    started = time.perf_counter()
    for _ in range(rounds):
        for keyword in KEYWORDS:
            await wiki.candidates(keyword, 5)
    return round((time.perf_counter() - started) / (rounds * len(KEYWORDS)) * 1e6, 1)


def _quality() -> tuple[float, bool]:
    root = str(Path(__file__).resolve().parents[1])
    out = subprocess.run(
        [sys.executable, "-c", _QUALITY], capture_output=True, text=True, check=True, cwd=root
    ).stdout.split()
    return round(float(out[0]) * 1000, 1), out[1] == "True"


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=200)
    args = smoke_args(parser, {"rounds": 2})
    wiki = OfflineWikipedia()
    await asyncio.to_thread(wiki.load)
    titles = await _titles(wiki)
    lookup_us = await _lookup_us(wiki, args.rounds)
    quality_ms, torch = _quality()
    figures = {
        "titles_50kb_s": titles,
        "titles_50kb_max_s": max(titles.values()),
        "offline_lookup_us": lookup_us,
        "rounds": args.rounds,
        "quality_load_ms": quality_ms,
        "quality_imports_torch": torch,
    }
    print(json.dumps(figures))


if __name__ == "__main__":
    asyncio.run(main())
