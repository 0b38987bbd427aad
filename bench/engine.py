"""How close a check's wall time comes to the chain of calls it really runs, with a
fixed-delay LLM.

A fake OpenAI-compatible server on 127.0.0.1 answers every call after exactly
D seconds (the panel's scripted replies; the judge rules in round R). Stage 1
runs for real (spaCy, MiniLM, offline Wikipedia; a fake Brave with two hits so
the claim verifier has passages; a fake Google Fact Check API).

The chain is measured, not assumed: the fake server notes when each call arrived,
and a call that arrived after another had been answered (or after Stage 1's
retrieval had ended) may have waited for it. The longest such sequence, starting
when the check starts, is the chain the check had to wait for:

    bound = the chain's time = its calls × D, plus Stage 1's retrieval when the
            chain starts with it

Whatever the wall time has beyond the bound is the engine's own work between calls
(parsing, encoding, the search-again round's retrieval) and the event loop. The chain
is printed step by step (each call by its reply schema), so a step that waits for
one it does not need shows.

It runs the checks twice: with the defaults (triage, counter query, stances, the
tree of claims, fact-checks) and as before them (all off), and prints what the
newer parts add.

    python bench/engine.py [--delay 0.2] [--rounds 2] [--checks 8] [--smoke]

The last line is one JSON object: for ``now`` and ``before``, wall_s, llm_calls,
prompt and completion tokens, chain_calls, bound_s and ratio (medians over the
checks), max_ratio and the first check's chain; ``added`` calls and tokens; and the
inputs.
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

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from lib.smoke import smoke_args

from tests.peers.fakes.panel_script import PanelScript, schema_name
from tests.peers.servers.factcheck_peer import GOOGLE_KEY, FakeFactCheck
from tests.peers.servers.openai_peer import FakeOpenAI
from tests.peers.servers.search_peers import BRAVE_TOKEN, FakeBrave, brave_body, brave_result

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
    "chain_calls",
    "bound_s",
    "ratio",
    "retrieval_s",
)
# A call that arrives within this of another's answer may have waited for it.
SLACK_S = 0.005


def longest_chain(
    started: float, retrieval: float, arrivals: list[float], names: list[str], d: float
) -> tuple[float, list[str]]:
    """The longest sequence of waits from the check's start: Stage 1's retrieval (from
    ``started``, ``retrieval`` s) and calls (arriving at ``arrivals``, answered ``d``
    later), each beginning after the one before it ended. Its time, and its steps."""
    nodes = [(started, started + retrieval, "retrieval")]
    nodes += sorted((a, a + d, n) for a, n in zip(arrivals, names, strict=True))
    best: list[tuple[float, list[str]]] = []
    for i, (begin, finish, name) in enumerate(nodes):
        before = [best[j] for j in range(i) if nodes[j][1] <= begin + SLACK_S]
        head = max(before, key=lambda b: b[0], default=(0.0, []))
        best.append((head[0] + finish - begin, [*head[1], name]))
    return max(best, key=lambda b: b[0])


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
    rows: list[dict[str, Any]] = []
    async with Engine(settings, retrieval=stage1) as engine:
        await engine.load()
        await engine.check(POSTS[0])  # warm-up: first-call costs out of the figures
        for i in range(checks):
            before = len(llm.requests)
            t = time.monotonic()
            report = await engine.check(POSTS[i % len(POSTS)])
            wall = time.monotonic() - t
            retrieval = report.timings["retrieval_ms"] / 1000
            names = [schema_name(body) or "text" for body in llm.requests[before:]]
            bound, chain = longest_chain(t, retrieval, llm.arrivals[before:], names, d)
            row = {
                "wall_s": round(wall, 3),
                "llm_calls": len(llm.requests) - before,
                "prompt_tokens": report.usage.prompt_tokens,
                "completion_tokens": report.usage.completion_tokens,
                "retrieval_s": round(retrieval, 3),
                "rounds": report.debate.rounds,
                "chain_calls": sum(1 for step in chain if step != "retrieval"),
                "bound_s": round(bound, 3),
                "ratio": round(wall / bound, 3),
                "chain": chain,
            }
            rows.append(row)
            print(json.dumps(row), flush=True)
    summary: dict[str, Any] = {
        key: round(statistics.median(float(row[key]) for row in rows), 3) for key in KEYS
    }
    summary["max_ratio"] = max(row["ratio"] for row in rows)
    summary["chain"] = rows[0]["chain"]
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
