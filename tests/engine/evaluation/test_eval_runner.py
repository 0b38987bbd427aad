"""The evaluation runner and the only-LLM baseline, on the fake OpenAI server.

No Stage 1 models are needed here: the baseline makes one call, and the
runner is also driven with plain checker functions.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from tests.peers.fakes.panel_script import PanelScript, last_user_text, schema_name
from tests.peers.servers.openai_peer import FakeOpenAI, prompt_token_count

from zofia_engine.config import EngineSettings
from zofia_engine.evaluation import (
    LABEL_MAPPINGS,
    EvalItem,
    ItemRecord,
    OnlyLLMBaseline,
    ResultLog,
    RunHeader,
    evaluate,
    method_settings,
    run_key,
    summarise,
)
from zofia_engine.post import Post
from zofia_engine.report import Report

BINARY = LABEL_MAPPINGS["binary"]


def _settings(peer: FakeOpenAI, **llm: Any) -> EngineSettings:
    base = {
        "backend": "openai",
        "timeout_s": 5.0,
        "retries": 1,
        "openai": {"base_url": peer.base_url, "api_key": "sk-test", "model": "panel"},
    }
    return EngineSettings.model_validate({"llm": {**base, **llm}})


def _baseline_script(**answers: Any) -> PanelScript:
    return PanelScript(
        onlyllmreply=answers.get("answer", {"decision": "fake", "reason": "Sensational."})
    )


@pytest_asyncio.fixture
async def panel() -> AsyncIterator[FakeOpenAI]:
    async with FakeOpenAI(_baseline_script(), api_key="sk-test") as peer:
        yield peer


def _items(n: int) -> list[EvalItem]:
    labels = ["fake", "real"]
    return [
        EvalItem(f"item-{k}", f"Post number {k} says something.", labels[k % 2], labels[k % 2])
        for k in range(n)
    ]


def _header(key: str, items: list[EvalItem], mode: str = "only-llm") -> RunHeader:
    return RunHeader(
        run_key=key,
        dataset="test.jsonl",
        mode=mode,
        ablation="none",
        labels="binary",
        models={"judge": "openai:panel"},
        limit=None,
        seed=0,
        sample=[i.id for i in items],
        started="2024-01-01T00:00:00+00:00",
    )


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _asked_posts(peer: FakeOpenAI) -> list[str]:
    """Which item each request was about, read from the post message."""
    found = []
    for body in peer.requests:
        post = str(body["messages"][1]["content"])
        found.append(post.split("Post number ")[1].split()[0])
    return found


# ------------------------------------------------------------------ the only-LLM baseline


async def test_baseline_is_one_judge_call_on_the_post_alone(panel: FakeOpenAI) -> None:
    settings = _settings(panel, roles={"judge": {"model": "judge-model"}})
    post = Post(text="The moon is made of cheese, NASA admits.", published=dt.date(2016, 1, 12))
    async with OnlyLLMBaseline(settings) as baseline:
        report = await baseline.check(post)

    assert panel.calls == 1
    body = panel.requests[0]
    assert schema_name(body) == "onlyllmreply"
    assert body["model"] == "judge-model"  # the role that rules in the engine
    schema = body["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["decision"]["enum"] == ["real", "fake"]  # words, not letters
    roles = [m["role"] for m in body["messages"]]
    assert roles == ["system", "user", "user"]  # system, the post, the task: no evidence
    assert "The moon is made of cheese" in body["messages"][1]["content"]
    assert "Publication date: 2016-01-12" in body["messages"][1]["content"]
    assert '"real"' in last_user_text(body) and '"fake"' in last_user_text(body)

    assert report.verdict == "false" and report.summary == "Sensational."  # "fake", as an outcome
    assert report.usage.calls == 1
    assert report.usage.prompt_tokens == prompt_token_count(body)
    assert report.usage.by_role["judge"].calls == 1
    assert report.usage.log[0].step == "only-llm"


async def test_baseline_without_a_usable_answer_is_undetermined(panel: FakeOpenAI) -> None:
    panel.responder = _baseline_script(answer="I think it is probably fake.")
    async with OnlyLLMBaseline(_settings(panel)) as baseline:
        report = await baseline.check("Some post.")
    assert panel.calls == 2  # the answer, then one repair
    assert report.verdict == "undetermined" and report.usage.calls == 2
    assert any("only-LLM call failed" in note for note in report.degraded)
    assert report.confidence.value is None


# ------------------------------------------------------------------ the runner


async def test_records_carry_usage_and_each_item_is_asked_once(
    panel: FakeOpenAI, tmp_path: Path
) -> None:
    items = _items(4)
    log = ResultLog(tmp_path / "out.jsonl")
    async with OnlyLLMBaseline(_settings(panel)) as baseline:
        records = await evaluate(items, baseline.check, log, _header("k1", items), BINARY)

    assert list(records) == [i.id for i in items]
    assert Counter(_asked_posts(panel)) == {str(k): 1 for k in range(4)}
    lines = _lines(log.path)
    assert lines[0]["type"] == "run" and lines[0]["sample"] == [i.id for i in items]
    item_lines = lines[1:]
    assert {line["id"] for line in item_lines} == {i.id for i in items}
    first = ItemRecord.model_validate(item_lines[0])
    assert first.llm_calls == 1 and first.prompt_tokens > 0 and first.completion_tokens > 0
    assert first.mode == "only-llm" and first.ablation == "none" and first.verdict == "false"
    assert sum(r.prompt_tokens for r in records.values()) == sum(
        prompt_token_count(b) for b in panel.requests
    )
    metrics = summarise(records.values(), BINARY.classes, resamples=100)
    assert metrics.accuracy == 0.5  # always "fake" on a balanced set
    assert metrics.mean_llm_calls == 1.0
    assert metrics.confusion == {
        "real": {"real": 0, "fake": 2, "none": 0},
        "fake": {"real": 0, "fake": 2, "none": 0},
    }


async def test_an_interrupted_run_resumes_without_checking_any_item_twice(
    tmp_path: Path,
) -> None:
    items = _items(6)
    log = ResultLog(tmp_path / "out.jsonl")
    peer = FakeOpenAI(_baseline_script(), api_key="sk-test", delay_s=0.05)
    async with peer, OnlyLLMBaseline(_settings(peer)) as baseline:
        header = _header("k1", items)
        running: asyncio.Task[Any]

        def stop_after_two(record: ItemRecord) -> None:
            if len(_lines(log.path)) == 3:  # the run line and two items
                running.cancel()

        running = asyncio.create_task(
            evaluate(items, baseline.check, log, header, BINARY, on_done=stop_after_two)
        )
        with pytest.raises(asyncio.CancelledError):
            await running
        done_first = {line["id"] for line in _lines(log.path)[1:]}
        assert len(done_first) == 2
        # A crash in the middle of a write leaves a cut line: it is skipped.
        with log.path.open("a", encoding="utf-8") as f:
            f.write('{"type": "item", "run_key": "k1", "id": "item-5", "gol')
        asked_before = len(peer.requests)

        counts: list[tuple[int, int]] = []
        records = await evaluate(
            items,
            baseline.check,
            log,
            header,
            BINARY,
            on_start=lambda done, todo: counts.append((done, todo)),
        )

    assert counts == [(2, 4)]
    asked_again = _asked_posts(peer)[asked_before:]
    assert sorted(f"item-{k}" for k in asked_again) == sorted(
        i.id for i in items if i.id not in done_first
    )
    assert len(records) == 6 and all(not r.error for r in records.values())
    rows = _lines_tolerant(log.path)
    finished = [row["id"] for row in rows if row.get("type") == "item"]
    assert Counter(finished) == {i.id: 1 for i in items}
    assert [row["type"] for row in rows].count("run") == 2  # nothing glued to the cut line


def _lines_tolerant(path: Path) -> list[dict[str, Any]]:
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return rows


async def test_rerun_and_another_run_key_check_again(panel: FakeOpenAI, tmp_path: Path) -> None:
    items = _items(3)
    log = ResultLog(tmp_path / "out.jsonl")
    async with OnlyLLMBaseline(_settings(panel)) as baseline:
        await evaluate(items, baseline.check, log, _header("k1", items), BINARY)
        await evaluate(items, baseline.check, log, _header("k1", items), BINARY)
        assert panel.calls == 3  # the second run found everything done
        await evaluate(items, baseline.check, log, _header("k1", items), BINARY, rerun=True)
        assert panel.calls == 6
        await evaluate(items, baseline.check, log, _header("other", items), BINARY)
        assert panel.calls == 9
    assert len(log.records("k1")) == 3 and len(log.records("other")) == 3


async def test_a_failed_item_is_recorded_scored_as_a_miss_and_retried_on_request(
    tmp_path: Path,
) -> None:
    items = _items(4)
    log = ResultLog(tmp_path / "out.jsonl")
    seen: list[str] = []
    broken = {"Post number 2 says something."}

    async def checker(post: Post) -> Report:
        seen.append(post.text)
        if post.text in broken:
            raise RuntimeError("the model server went away")
        return _report("real" if "1" in post.text or "3" in post.text else "fake")

    header = _header("k1", items)
    records = await evaluate(items, checker, log, header, BINARY, concurrency=2)
    failed = records["item-2"]
    assert failed.error == "RuntimeError: the model server went away"
    assert failed.predicted is None and failed.verdict is None
    metrics = summarise(records.values(), BINARY.classes, resamples=0)
    assert metrics.errors == 1 and metrics.undetermined == 0
    assert metrics.accuracy == 0.75 and metrics.confusion["fake"]["none"] == 1
    # The cost of an item is averaged over the items that ran: 2 calls each, not 1.5.
    assert metrics.mean_llm_calls == 2.0 and metrics.mean_prompt_tokens == 10.0

    await evaluate(items, checker, log, header, BINARY)
    assert len(seen) == 4  # a failure is a finished item unless asked
    broken.clear()
    records = await evaluate(items, checker, log, header, BINARY, retry_errors=True)
    assert seen[4:] == ["Post number 2 says something."]
    assert records["item-2"].predicted == "fake" and not records["item-2"].error


async def test_undetermined_counts_as_wrong_and_not_as_an_error(tmp_path: Path) -> None:
    items = _items(2)

    async def checker(post: Post) -> Report:
        return _report("undetermined")

    records = await evaluate(
        items, checker, ResultLog(tmp_path / "o.jsonl"), _header("k", items), BINARY
    )
    metrics = summarise(records.values(), BINARY.classes, resamples=0)
    assert metrics.accuracy == 0.0 and metrics.undetermined == 2 and metrics.errors == 0
    assert all(r.verdict == "undetermined" and r.predicted is None for r in records.values())


async def test_the_publication_date_reaches_the_check(tmp_path: Path) -> None:
    items = [
        EvalItem("a", "Dated post.", "fake", "fake", published=dt.date(2016, 11, 9)),
        EvalItem("b", "Undated post.", "real", "real"),
    ]
    posts: list[Post] = []

    async def checker(post: Post) -> Report:
        posts.append(post)
        return _report("fake")

    await evaluate(items, checker, ResultLog(tmp_path / "o.jsonl"), _header("k", items), BINARY)
    assert {p.text: p.published for p in posts} == {
        "Dated post.": dt.date(2016, 11, 9),
        "Undated post.": None,
    }


async def test_concurrency_bounds_the_items_in_flight(tmp_path: Path) -> None:
    items = _items(7)
    peer = FakeOpenAI(_baseline_script(), api_key="sk-test", delay_s=0.2)
    async with peer, OnlyLLMBaseline(_settings(peer)) as baseline:
        log = ResultLog(tmp_path / "o.jsonl")
        await evaluate(items, baseline.check, log, _header("k", items), BINARY, concurrency=3)
    assert peer.max_in_flight == 3 and peer.calls == 7


def test_run_key_names_mode_ablation_labels_and_models() -> None:
    models = {"judge": "openai:a"}
    key = run_key("full", "full", "binary", models)
    assert key == run_key("full", "full", "binary", dict(models))
    assert key != run_key("full", "no-web", "binary", models)
    assert key != run_key("only-llm", "none", "binary", models)
    assert key != run_key("full", "full", "liar-3", models)
    assert key != run_key("full", "full", "binary", {"judge": "openai:b"})
    # EngineSettings that change the answer change the key; a timeout does not.
    default = method_settings(EngineSettings())
    capped = EngineSettings.model_validate({"debate": {"max_rounds": 2}})
    patient = EngineSettings.model_validate({"llm": {"timeout_s": 600}})
    for changed in (
        {"debate": {"style": "radar"}},
        {"debate": {"early_stop": "judge"}},
        {"agents": {"require_evidence": False}},
        {"triage": {"enabled": False}},
        {"retrieval": {"mode": "paper"}},
        {"tree": {"enabled": False}},
        {"evidence": {"credibility": False}},
    ):
        other = method_settings(EngineSettings.model_validate(changed))
        assert run_key("full", "full", "binary", models, other) != run_key(
            "full", "full", "binary", models, default
        ), changed
    assert run_key("full", "full", "binary", models, default) != run_key(
        "full", "full", "binary", models, method_settings(capped)
    )
    assert method_settings(patient) == default


def _report(verdict: str) -> Report:
    return Report.model_validate(
        {
            "verdict": verdict,
            "confidence": {},
            "summary": "",
            "keywords": [],
            "evidence": [],
            "claims": [],
            "analyses": {},
            "debate": {},
            "usage": {"calls": 2, "prompt_tokens": 10, "completion_tokens": 3},
            "timings": {},
            "degraded": [],
        }
    )
