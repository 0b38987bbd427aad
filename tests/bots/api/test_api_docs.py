"""docs/api.md shows an exchange with the API and the vote table as they are now.

The exchange is made here, through real HTTP against the real server and check
service, with :class:`~tests.peers.fakes.fake_checker.FakeChecker` in place of the engine (so the
report's words are its script's); the ids, the time and the address are then fixed so
that a rendering is the same on every run. The vote table is rendered from
:data:`bots.render.votes.VOTE_RULES`. Each block sits between ``<!-- api:NAME -->`` and
``<!-- /api -->``; ``ZOFIA_WRITE_DOCS=1 .venv/bin/pytest tests/bots/api/test_api_docs.py``
rewrites them instead of comparing (read the diff before committing it), as
``tests/project/test_doc_cards.py`` does for the cards.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from tests.bots.api.test_api import POST, Api, api_settings, running_api
from tests.peers.fakes.fake_checker import FakeChecker, Gate

from bots.render.votes import VOTE_RULES
from zofia_engine.report import Verdict

PAGE = Path(__file__).resolve().parents[3] / "docs" / "api.md"
WRITE = os.environ.get("ZOFIA_WRITE_DOCS") == "1"
HOST = "https://api.example.org"
CHECK_ID = "Zq3mP8xK2vLwT0aB"
REPEAT_ID = "Rk7nR2sW9dYcH4eF"
SUMMARY = "The council's minutes of 12 March record no vote on bicycles or fines."
#: what the doc's jq filter keeps of a report (the whole of it is the report page's JSON)
REPORT_FILTER = ".report |= {verdict, confidence: .confidence.value, summary}"
_BLOCK = re.compile(r"<!-- api:(?P<name>[a-z-]+) -->\n(?P<body>.*?)<!-- /api -->", re.DOTALL)
_SHOWN_HEADERS = ("Content-Type", "Location", "Retry-After")


def _curl(method: str, path: str, body: dict[str, Any] | None, *, jq: str = "") -> str:
    lines = [f"$ curl -s{'' if jq else 'i'} {HOST}{path} \\"]  # -d makes it a POST
    lines.append('    -H "Authorization: Bearer $ZOFIA_API_KEY"' + (" \\" if body else ""))
    if body is not None:
        lines.append('    -H "Content-Type: application/json" \\')
        lines.append(f"    -d '{json.dumps(body, ensure_ascii=False)}'")
    if jq:
        lines[-1] += f" | jq '{jq}'"
    return "\n".join(lines)


async def _exchange(api: Api, method: str, path: str, body: Any = None, jq: str = "") -> str:
    """The command and what it printed: the status line and headers, then the body (with
    ``jq``, only the filtered body, as jq prints it)."""
    headers = {"Authorization": f"Bearer {api.key}"}
    async with api.http.request(method, api.url + path, json=body, headers=headers) as r:
        text = await r.text()
        status, reason, got = r.status, r.reason, r.headers
    if jq:
        data = json.loads(text)
        report = data["report"]
        data["report"] = {
            "verdict": report["verdict"],
            "confidence": report["confidence"]["value"],
            "summary": report["summary"],
        }
        printed = json.dumps(data, indent=2, ensure_ascii=False)
    else:
        shown = [f"{name}: {got[name]}" for name in _SHOWN_HEADERS if name in got]
        printed = "\n".join([f"HTTP/1.1 {status} {reason}", *shown, "", text])
    return f"{_curl(method, path, body, jq=jq)}\n{printed}"


def _fixed(text: str, ids: dict[str, str]) -> str:
    for real, shown in ids.items():
        text = text.replace(real, shown)
    text = re.sub(r"\d{4}-\d\d-\d\dT[\d:.]+(Z|\+00:00)", "2026-03-25T09:30:00Z", text)
    return re.sub(r'"datePublished": "\d{4}-\d\d-\d\d"', '"datePublished": "2026-03-25"', text)


async def exchanges(tmp_path: Path) -> dict[str, str]:
    """A check taken, polled once done, and the same post asked as a vote (a repeat)."""
    gate = Gate()
    checker = FakeChecker(gate=gate, summary=SUMMARY)
    settings = api_settings(tmp_path, max_concurrent_checks=1)
    async with running_api(settings, checker) as api:
        # Another check holds the one engine slot: the one shown waits ("queued").
        status, _, _ = await api.call("POST", "/v1/checks", json={"text": "Another post."})
        assert status == 202
        await gate.held()
        take = await _exchange(api, "POST", "/v1/checks", {"text": POST})
        check_id = re.search(r'"id":"([^"]+)"', take)[1]  # type: ignore[index]
        gate.open()
        await api.answered(f"/v1/checks/{check_id}")
        poll = await _exchange(api, "GET", f"/v1/checks/{check_id}", jq=REPORT_FILTER)
        vote = await _exchange(api, "POST", "/v1/votes", {"text": POST})
        repeat_id = re.search(r'"id":"([^"]+)"', vote)[1]  # type: ignore[index]
        refused = await _exchange(api, "POST", "/v1/checks", {"url": ""})
    ids = {check_id: CHECK_ID, repeat_id: REPEAT_ID}
    blocks = {"take": take, "poll": poll, "vote": vote, "refused": refused}
    return {name: f"```text\n{_fixed(text, ids)}\n```\n" for name, text in blocks.items()}


def vote_table() -> str:
    sure = {True: "sure", False: "not sure", None: "any"}
    rows = [
        f"| `{rule.verdict}` | {sure[rule.sure]} | `{rule.category}` | "
        f"{rule.truth_score if rule.truth_score is not None else '—'} |"
        for rule in VOTE_RULES
    ]
    head = ["| Verdict | Confidence | Category | Truth score |", "| --- | --- | --- | --- |"]
    return "\n".join([*head, *rows]) + "\n"


def test_every_verdict_has_one_vote_whatever_the_confidence() -> None:
    from typing import get_args

    for verdict in get_args(Verdict):
        for sure in (True, False):
            found = [r for r in VOTE_RULES if r.verdict == verdict and r.sure in (None, sure)]
            assert len(found) == 1, (verdict, sure)


async def test_the_api_page_shows_the_exchange_and_the_vote_table(tmp_path: Path) -> None:
    expected = {**await exchanges(tmp_path), "votes": vote_table()}
    text = PAGE.read_text(encoding="utf-8")
    assert [m["name"] for m in _BLOCK.finditer(text)] == [
        "take",
        "poll",
        "vote",
        "refused",
        "votes",
    ]
    assert '"status":"queued"' in expected["take"] and "HTTP/1.1 202" in expected["take"]
    assert '"repeat": null' in expected["poll"] and '"category":"info"' in expected["vote"]
    if WRITE:
        page = _BLOCK.sub(
            lambda m: f"<!-- api:{m['name']} -->\n{expected[m['name']]}<!-- /api -->", text
        )
        PAGE.write_text(page, encoding="utf-8")
        pytest.skip("rewrote docs/api.md: run again without ZOFIA_WRITE_DOCS to compare")
    for match in _BLOCK.finditer(text):
        assert match["body"] == expected[match["name"]], (
            f"docs/api.md: the block {match['name']!r} is not what the API answers now; "
            "ZOFIA_WRITE_DOCS=1 .venv/bin/pytest tests/bots/api/test_api_docs.py rewrites it"
        )
