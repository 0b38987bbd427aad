"""How close a check's wall time comes to its critical path, with a fixed-delay LLM.

A fake OpenAI-compatible server on 127.0.0.1 answers every call after exactly
D seconds (the panel's scripted replies; the judge rules in round R). Stage 1
runs for real (spaCy, MiniLM, offline Wikipedia; a fake Brave with two hits so
the claim verifier has passages). For each check it prints the wall time, the
LLM calls, and two critical-path bounds:

    bound       = retrieval + (2 + 3·R)·D            the longest chain of dependent
                                                     calls × D plus retrieval
    tight_bound = max(retrieval, D) + (1 + 3·R)·D    the same chain, knowing that its
                                                     first call needs only the post

The longest chain is domain detection → expert analysis (or claim extraction →
claim verification), then pro, con and judge for each of the R rounds. The
engine sends the first call of each chain, and the five linguist calls, while
Stage 1 is still retrieving, so it can beat ``bound``; ``tight_bound`` is the
lower bound for that schedule. ``retrieval`` is the Stage-1 time of that check.

    python bench/engine.py [--delay 0.2] [--rounds 2] [--checks 8]

The last line is one JSON object: wall_s, llm_calls, bound_s, ratio,
tight_bound_s and tight_ratio (medians over the checks), and the inputs.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from itertools import count
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from peers.openai_peer import FakeOpenAI
from peers.panel_script import PanelScript
from peers.search_peers import BRAVE_TOKEN, FakeBrave, brave_body, brave_result

from zofia_engine.config import EngineSettings
from zofia_engine.engine import Engine
from zofia_engine.retrieval.pipeline import EntityGuidedRetrieval
from zofia_engine.retrieval.web.brave import BraveSearch

POSTS = [
    "The mayor of Springfield, Illinois has banned bicycles from every street in the city. "
    "Mayor Misty Buscher signed the law in March and cyclists now face a 500 dollar fine.",
    "NASA confirmed that the James Webb Space Telescope photographed a second moon "
    "orbiting Earth, hidden until now behind the Moon, the agency said in Washington.",
    "Angela Merkel will lead the United Nations from January, the German government "
    "announced in Berlin after a vote in New York.",
    "Apple will stop selling the iPhone in Europe next year because of new rules from "
    "the European Commission, Tim Cook told reporters in Cupertino.",
]
HITS = [
    brave_result(
        "https://records.example.org/minutes",
        "Official minutes",
        "The council passed no such ordinance. Members discussed new bike lanes instead.",
    ),
    brave_result(
        "https://factcheck.example.org/claim",
        "Fact check",
        "Claims of this kind circulated on social media and were found to be false.",
    ),
]


def judge_after(rounds: int) -> Any:
    """A judge that says continue until round ``rounds``, then fake."""
    calls = count(1)

    def judge(body: dict[str, Any]) -> dict[str, Any]:
        n = next(calls)
        decision = "fake" if n % rounds == 0 else "continue"
        return {"decision": decision, "reason": "Decided on the record."}

    return judge


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--delay", type=float, default=0.2, help="seconds per LLM call (D)")
    parser.add_argument("--rounds", type=int, default=2, help="round the judge rules in (R)")
    parser.add_argument("--checks", type=int, default=8)
    args = parser.parse_args()
    d, r = args.delay, args.rounds

    script = PanelScript(judgereply=judge_after(r))
    async with FakeOpenAI(script, delay_s=d) as llm, FakeBrave() as brave_server:
        brave_server.respond(brave_body(HITS))
        settings = EngineSettings.model_validate(
            {"llm": {"backend": "openai", "openai": {"base_url": llm.base_url, "api_key": "x"}}}
        )
        brave = BraveSearch(BRAVE_TOKEN, base_url=brave_server.base_url, requests_per_second=1e3)
        stage1 = EntityGuidedRetrieval(settings, search_backends=[brave])
        async with Engine(settings, retrieval=stage1) as engine:
            await engine.load()
            await engine.check(POSTS[0])  # warm-up: first-call costs out of the figures
            rows = []
            for i in range(args.checks):
                before = len(llm.requests)
                t = time.perf_counter()
                report = await engine.check(POSTS[i % len(POSTS)])
                wall = time.perf_counter() - t
                retrieval = report.timings["retrieval_ms"] / 1000
                rounds = report.debate.rounds + (1 if report.debate.forced else 0)
                chain = 2 + 3 * rounds
                bound = retrieval + chain * d
                tight = max(retrieval, d) + (chain - 1) * d
                row = {
                    "wall_s": round(wall, 3),
                    "llm_calls": len(llm.requests) - before,
                    "retrieval_s": round(retrieval, 3),
                    "rounds": report.debate.rounds,
                    "bound_s": round(bound, 3),
                    "ratio": round(wall / bound, 3),
                    "tight_bound_s": round(tight, 3),
                    "tight_ratio": round(wall / tight, 3),
                }
                rows.append(row)
                print(json.dumps(row))
    summary = {
        key: round(statistics.median(row[key] for row in rows), 3)
        for key in (
            "wall_s",
            "llm_calls",
            "bound_s",
            "ratio",
            "tight_bound_s",
            "tight_ratio",
            "retrieval_s",
        )
    }
    summary.update(
        {"max_ratio": max(row["ratio"] for row in rows), "delay_s": d, "checks": len(rows)}
    )
    print(json.dumps(summary))


if __name__ == "__main__":
    asyncio.run(main())
