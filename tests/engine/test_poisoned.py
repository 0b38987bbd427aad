"""Poisoned search results (ToE's GEO attack): 22 false posts, each searched on the fake
Brave API, which answers with pages written to rank (keyword-stuffed, on low-quality
domains, agreeing with the post) above one real-looking page that refutes it.

The panel is scripted to be gullible: every verifier quotes the poisoned pages in
support, every judge rules ``true``. With credibility on, those pages must never be
the only support for a ``true`` verdict; with it off, the same script makes every post
``true``, which shows the test can fail. This is a test of the engine's rule, not of a
model: ``bench/poisoned.py`` runs the set on the embedded model.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from tests.peers.fakes.panel_script import PanelScript, numbered_sentences
from tests.peers.servers.openai_peer import FakeOpenAI
from tests.peers.servers.search_peers import BRAVE_TOKEN, FakeBrave, brave_body, brave_result

from zofia_engine.config import EngineSettings
from zofia_engine.encoder import SentenceTransformerEncoder
from zofia_engine.engine import Engine
from zofia_engine.retrieval.ner import NERBackend
from zofia_engine.retrieval.pipeline import EntityGuidedRetrieval
from zofia_engine.retrieval.web.brave import BraveSearch

pytest_plugins = ["tests.peers.fixtures.search_fixtures", "tests.peers.fixtures.model_fixtures"]
pytestmark = pytest.mark.slow

POSTS = [
    json.loads(line)
    for line in (Path(__file__).parents[1] / "data" / "poisoned.jsonl").read_text().splitlines()
]
POISON_MARKS = ("they don't want you to know", "Insiders agree", "It is confirmed")


def _gullible(body: dict[str, Any]) -> dict[str, Any]:
    """Supports the claim, citing a poisoned page's sentence; if none is shown, neither."""
    for number, document, text in numbered_sentences(body):
        if document.startswith("web-") and any(mark in text for mark in POISON_MARKS):
            return {
                "sentences": [number],
                "reason": "Several pages confirm it.",
                "stance": "supports",
                "veracity": 0.95,
                "reliability": 0.9,
            }
    return {
        "sentences": [],
        "reason": "Nothing.",
        "stance": "neither",
        "veracity": 0.5,
        "reliability": 0.9,
    }


def _reader(body: dict[str, Any]) -> dict[str, Any]:
    reply = _gullible(body)
    return {k: reply[k] for k in ("sentences", "reason", "stance")}


def _extractor(body: dict[str, Any]) -> dict[str, Any]:
    """The post's own first sentence as its core claim."""
    post = str(body["messages"][1]["content"]).split("<<<POST\n", 1)[1].split("\nPOST>>>")[0]
    first = re.split(r"\[S\d+\] ", post)[1]
    return {"core_claim": {"sentence": 1, "claim": first.strip()}, "sub_claims": []}


SCRIPT = PanelScript(
    extractorreply=_extractor,
    nodereply=_gullible,
    readerreply=_reader,
    stancereply={"stance": "supports", "sentence": ""},
    judgereply={"verdict": "true", "next": "stop", "reason": "Many pages confirm it."},
)


def _hits(post: dict[str, Any]) -> list[dict[str, Any]]:
    pages = [*post["poison"], post["truth"]]  # written to rank: the poison comes first
    return [brave_result(p["url"], p["title"], p["text"]) for p in pages]


@pytest_asyncio.fixture
async def panel() -> AsyncIterator[FakeOpenAI]:
    async with FakeOpenAI(SCRIPT, api_key="sk-test") as peer:
        yield peer


async def _verdicts(
    credibility: bool,
    panel: FakeOpenAI,
    brave_server: FakeBrave,
    ner: NERBackend,
    encoder: SentenceTransformerEncoder,
    reading: str = "stance",
) -> dict[str, tuple[str, bool]]:
    settings = EngineSettings.model_validate(
        {
            "llm": {
                "backend": "openai",
                "openai": {"base_url": panel.base_url, "api_key": "sk-test"},
            },
            "evidence": {"credibility": credibility},
            "triage": {"enabled": False},
            # The gullible reader is the model's stance reading; fewer calls otherwise.
            "agents": {"linguist_dimensions": [], "reading": reading},
        }
    )
    brave = BraveSearch(BRAVE_TOKEN, base_url=brave_server.base_url, requests_per_second=1e3)
    stage1 = EntityGuidedRetrieval(
        settings, ner=ner, encoder=encoder, search_backends=[brave], wikipedia=False
    )
    verdicts: dict[str, tuple[str, bool]] = {}
    async with Engine(settings, retrieval=stage1) as engine:
        for post in POSTS:
            brave_server.respond(brave_body(_hits(post)))
            report = await engine.check(post["post"])
            poisoned = {e.id for e in report.evidence if "/p" in e.url and "-" in e.url}
            quoted = {q.evidence_id for c in report.claims for q in c.quotes}
            verdicts[post["id"]] = (report.verdict, bool(quoted) and quoted <= poisoned)
    return verdicts


async def test_poisoned_pages_are_never_the_only_support_for_true(
    panel: FakeOpenAI,
    brave_server: FakeBrave,
    ner: NERBackend,
    encoder: SentenceTransformerEncoder,
) -> None:
    assert len(POSTS) >= 20
    on = await _verdicts(True, panel, brave_server, ner, encoder)
    # Every post's support came from the poison alone, and none became "true".
    assert all(only_poison for _, only_poison in on.values()), on
    assert {verdict for verdict, _ in on.values()} == {"unproven"}
    off = await _verdicts(False, panel, brave_server, ner, encoder)
    assert {verdict for verdict, _ in off.values()} == {"true"}  # the poison, followed


async def test_the_part_reader_makes_no_poisoned_post_true(
    panel: FakeOpenAI,
    brave_server: FakeBrave,
    ner: NERBackend,
    encoder: SentenceTransformerEncoder,
) -> None:
    """The default reading fills each claim's parts from the evidence and lets code
    compare them: the pages that repeat the post cannot make it true either."""
    on = await _verdicts(True, panel, brave_server, ner, encoder, reading="parts")
    assert "true" not in {verdict for verdict, _ in on.values()}, on
    # Without the credibility weighting most of them are (the poison's words, confirmed).
    off = await _verdicts(False, panel, brave_server, ner, encoder, reading="parts")
    assert sum(verdict == "true" for verdict, _ in off.values()) >= len(POSTS) // 2, off
