"""How close a check's wall time comes to its critical path, with a fixed-delay LLM.

A fake OpenAI-compatible server on 127.0.0.1 answers every call after exactly
D seconds (the panel's scripted replies; the judge rules in round R). Stage 1
runs for real (spaCy, MiniLM, offline Wikipedia; a fake Brave with two hits so
the claim verifier has passages; a fake Google Fact Check API). For each check it
prints the wall time, the LLM calls and tokens, and two critical-path bounds:

    bound       = retrieval + (T + 2 + 3·R)·D          the longest chain of dependent
                                                       calls × D plus retrieval
    tight_bound = T·D + max(retrieval, D) + (1 + 3·R)·D  the same chain, knowing that
                                                       its first call needs only the post

T is 1 with triage (one call before anything else) and 0 without. The longest
chain is then domain detection → expert analysis (or claim extraction → the tree's
first judgements, or → the stance calls), then pro, con and judge for each of the R
rounds. The engine sends the first call of each chain, the five linguist calls and
the fact-check lookup while Stage 1 is still retrieving, so it can beat ``bound``;
``tight_bound`` is the lower bound for that schedule.

It runs the checks twice: with the defaults (triage, counter query, stances, the
tree of claims, fact-checks) and as before them (all off: ZoFia's 17 calls for a
2-round debate), and prints what the new parts add.

    python bench/engine.py [--delay 0.2] [--rounds 2] [--checks 8] [--smoke]

The last line is one JSON object: for ``now`` and ``before``, wall_s, llm_calls,
prompt and completion tokens, bound_s, ratio, tight_bound_s and tight_ratio
(medians over the checks); ``added`` calls and tokens; and the inputs.
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

from lib.smoke import smoke_args
from peers.factcheck_peer import GOOGLE_KEY, FakeFactCheck
from peers.openai_peer import FakeOpenAI
from peers.panel_script import PanelScript
from peers.search_peers import BRAVE_TOKEN, FakeBrave, brave_body, brave_result

from zofia_engine.config import EngineSettings
from zofia_engine.engine import Engine
from zofia_engine.retrieval.factcheck.google import GoogleFactCheck
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
    """A judge that says continue until round ``rounds``, then stop (false)."""
    calls = count(1)

    def judge(body: dict[str, Any]) -> dict[str, Any]:
        n = next(calls)
        step = "stop" if n % rounds == 0 else "continue"
        return {"verdict": "false", "next": step, "reason": "Decided on the record."}

    return judge


BEFORE = {  # the parts this wave added, off: ZoFia's pipeline as it was
    "triage": {"enabled": False},
    "retrieval": {"counter_query": False},
    "evidence": {"stance": False},
    "tree": {"enabled": False},
}
KEYS = (
    "wall_s",
    "llm_calls",
    "prompt_tokens",
    "completion_tokens",
    "bound_s",
    "ratio",
    "tight_bound_s",
    "tight_ratio",
    "retrieval_s",
)


async def run(
    llm: FakeOpenAI,
    brave_server: FakeBrave,
    factchecks: FakeFactCheck,
    sections: dict[str, Any],
    d: float,
    checks: int,
) -> dict[str, Any]:
    settings = EngineSettings.model_validate(
        {
            "llm": {"backend": "openai", "openai": {"base_url": llm.base_url, "api_key": "x"}},
            **sections,
        }
    )
    brave = BraveSearch(BRAVE_TOKEN, base_url=brave_server.base_url, requests_per_second=1e3)
    google = GoogleFactCheck(GOOGLE_KEY, base_url=factchecks.base_url, requests_per_second=1e3)
    stage1 = EntityGuidedRetrieval(settings, search_backends=[brave], factcheck_backends=[google])
    triage = 1 if settings.triage.enabled else 0
    rows = []
    async with Engine(settings, retrieval=stage1) as engine:
        await engine.load()
        await engine.check(POSTS[0])  # warm-up: first-call costs out of the figures
        for i in range(checks):
            before = len(llm.requests)
            t = time.perf_counter()
            report = await engine.check(POSTS[i % len(POSTS)])
            wall = time.perf_counter() - t
            retrieval = report.timings["retrieval_ms"] / 1000
            rounds = report.debate.rounds
            chain = triage + 2 + 3 * rounds
            bound = retrieval + chain * d
            tight = triage * d + max(retrieval, d) + (chain - triage - 1) * d
            row = {
                "wall_s": round(wall, 3),
                "llm_calls": len(llm.requests) - before,
                "prompt_tokens": report.usage.prompt_tokens,
                "completion_tokens": report.usage.completion_tokens,
                "retrieval_s": round(retrieval, 3),
                "rounds": rounds,
                "bound_s": round(bound, 3),
                "ratio": round(wall / bound, 3),
                "tight_bound_s": round(tight, 3),
                "tight_ratio": round(wall / tight, 3),
            }
            rows.append(row)
            print(json.dumps(row), flush=True)
    summary: dict[str, Any] = {
        key: round(statistics.median(row[key] for row in rows), 3) for key in KEYS
    }
    summary["max_ratio"] = max(row["ratio"] for row in rows)
    return summary


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--delay", type=float, default=0.2, help="seconds per LLM call (D)")
    parser.add_argument("--rounds", type=int, default=2, help="round the judge rules in (R)")
    parser.add_argument("--checks", type=int, default=8)
    args = smoke_args(parser, {"delay": 0.01, "rounds": 1, "checks": 1})
    d, r = args.delay, args.rounds

    script = PanelScript(judgereply=judge_after(r))
    async with (
        FakeOpenAI(script, delay_s=d) as llm,
        FakeBrave() as brave_server,
        FakeFactCheck() as factchecks,
    ):
        brave_server.respond(brave_body(HITS))
        print("now:")
        now = await run(llm, brave_server, factchecks, {}, d, args.checks)
        print("before:")
        before = await run(llm, brave_server, factchecks, BEFORE, d, args.checks)
    added = {
        key: round(now[key] - before[key], 3)
        for key in ("llm_calls", "prompt_tokens", "completion_tokens", "wall_s")
    }
    print(
        json.dumps(
            {"now": now, "before": before, "added": added, "delay_s": d, "checks": args.checks}
        )
    )


if __name__ == "__main__":
    asyncio.run(main())
