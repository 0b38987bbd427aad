"""``zofia eval`` end to end: the real CLI and the fake OpenAI server in a thread.

The only-LLM baseline needs no Stage 1 models, so most tests here are fast;
the one that runs the pipeline loads the real models.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.peers.fakes.panel_script import PanelScript, judge_logprobs, schema_name
from tests.peers.servers.loopback import running_in_thread
from tests.peers.servers.openai_peer import ChatReply, FakeOpenAI

from bots.cli import main
from bots.cli.evaluate import default_output

ROWS = [
    {
        "id": f"n{k}",
        "label": "fake" if k % 2 else "real",
        "title": f"Title {k}",
        "text": f"Body {k}.",
    }
    for k in range(8)
]


@pytest.fixture
def panel(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[FakeOpenAI]:
    """The fake server answering every schema, the baseline's included; no config file."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ZOFIA_CONFIG", raising=False)
    monkeypatch.setenv("ZOFIA__STORAGE__PATH", str(tmp_path / "zofia.db"))
    script = PanelScript(onlyllmreply={"decision": "fake", "reason": "Reads as invented."})
    with running_in_thread(FakeOpenAI(script, api_key="sk-cli")) as peer:
        assert isinstance(peer, FakeOpenAI)
        monkeypatch.setenv("ZOFIA__LLM__BACKEND", "openai")
        monkeypatch.setenv("ZOFIA__LLM__OPENAI__BASE_URL", peer.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-cli")
        yield peer


def _dataset(tmp_path: Path, rows: list[dict[str, Any]] | None = None) -> Path:
    path = tmp_path / "news.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows or ROWS) + "\n", encoding="utf-8")
    return path


def _eval(*args: str) -> Any:
    return CliRunner().invoke(main, ["eval", *args])


def test_help_exists() -> None:
    result = CliRunner().invoke(main, ["eval", "--help"])
    assert result.exit_code == 0 and "Usage:" in result.output
    for option in ("--baseline", "--ablate", "--limit", "--seed", "--concurrency", "--output"):
        assert option in result.output


def test_baseline_run_prints_metrics_and_resumes(panel: FakeOpenAI, tmp_path: Path) -> None:
    data = _dataset(tmp_path)
    first = _eval(str(data), "--baseline", "only-llm", "--limit", "4", "--seed", "2", "--json")
    assert first.exit_code == 0, first.output
    metrics = json.loads(first.stdout)
    assert metrics["items"] == 4 and metrics["accuracy"] == 0.5
    assert metrics["mean_llm_calls"] == 1.0 and metrics["accuracy_ci"]["resamples"] == 1000
    assert set(metrics["confusion"]) == {"real", "fake"}
    # The baseline never abstains; the fake server gives no probabilities to be sure with.
    selective = metrics["selective"]
    assert selective["coverage"] == 1.0 and selective["covered_accuracy"] == 0.5
    assert selective["confidently_wrong"] == 0.0 and selective["ece"] is None
    assert panel.calls == 4
    assert all(schema_name(b) == "onlyllmreply" for b in panel.requests)
    output = tmp_path / "eval-news-only-llm.jsonl"
    assert default_output(data, "only-llm") == Path("eval-news-only-llm.jsonl")
    lines = [json.loads(line) for line in output.read_text().splitlines()]
    assert lines[0]["type"] == "run" and len(lines[0]["sample"]) == 4
    assert [line["type"] for line in lines[1:]] == ["item"] * 4

    again = _eval(str(data), "--baseline", "only-llm", "--limit", "4", "--seed", "2")
    assert again.exit_code == 0, again.output
    assert panel.calls == 4  # every item was done
    assert "4 item(s) already done" in again.stderr
    assert "accuracy" in again.stdout and "confusion" in again.stdout
    assert "coverage %" in again.stdout and "risk against coverage" in again.stdout
    assert "reliability (confidence against accuracy)" in again.stdout

    redo = _eval(str(data), "--baseline", "only-llm", "--limit", "4", "--seed", "2", "--rerun")
    assert redo.exit_code == 0 and panel.calls == 8
    assert not (tmp_path / "zofia.db").exists()  # evaluation stores nothing in the bot's store


def test_output_option_and_liar_labels(panel: FakeOpenAI, tmp_path: Path) -> None:
    rows = [
        {"id": k, "label": label, "claim": f"Claim {k}."}
        for k, label in enumerate(["pants-fire", "false", "half-true", "true", "mostly-true"])
    ]
    data = _dataset(tmp_path, rows)
    out = tmp_path / "runs" / "liar.jsonl"
    result = _eval(str(data), "--baseline", "only-llm", "--labels", "liar-3", "--output", str(out))
    assert result.exit_code == 0, result.output
    records = [json.loads(line) for line in out.read_text().splitlines()][1:]
    assert {r["raw_label"]: r["gold"] for r in records} == {
        "pants-fire": "false",
        "false": "false",
        "half-true": "half-true",
        "true": "true",
        "mostly-true": "true",
    }
    assert {r["predicted"] for r in records} == {"false"}  # "fake" read as false


def test_bad_input_is_reported_with_its_line(panel: FakeOpenAI, tmp_path: Path) -> None:
    data = tmp_path / "bad.jsonl"
    data.write_text(
        '{"id": "a", "label": "real", "text": "ok"}\n{"id": "b", "label": "maybe"', "utf-8"
    )
    result = _eval(str(data), "--baseline", "only-llm")
    assert result.exit_code == 1 and "line 2: not valid JSON" in result.output
    data.write_text(
        '{"id": "a", "label": "real", "text": "ok"}\n{"id": "b", "label": "maybe", "text": "t"}\n',
        "utf-8",
    )
    result = _eval(str(data), "--baseline", "only-llm")
    assert result.exit_code == 1 and "line 2: unknown label 'maybe'" in result.output
    assert panel.calls == 0
    mixed = _eval(str(data), "--baseline", "only-llm", "--ablate", "no-web")
    assert mixed.exit_code == 2 and "--ablate applies to the pipeline" in mixed.output


@pytest.mark.slow
def test_pipeline_and_baseline_evaluate_the_same_sample(panel: FakeOpenAI, tmp_path: Path) -> None:
    data = _dataset(tmp_path)
    pipeline = _eval(str(data), "--ablate", "no-debate", "--limit", "2", "--seed", "5", "--json")
    assert pipeline.exit_code == 0, pipeline.output
    calls = panel.calls
    assert json.loads(pipeline.stdout)["mean_llm_calls"] == calls / 2
    baseline = _eval(str(data), "--baseline", "only-llm", "--limit", "2", "--seed", "5")
    assert baseline.exit_code == 0, baseline.output
    assert panel.calls == calls + 2

    def header(name: str) -> dict[str, Any]:
        return dict(json.loads((tmp_path / name).read_text().splitlines()[0]))

    full, only = header("eval-news-no-debate.jsonl"), header("eval-news-only-llm.jsonl")
    assert full["method"]["retrieval"]["mode"] == "paper"  # zofia eval's default
    assert full["sample"] == only["sample"] and len(full["sample"]) == 2
    assert full["ablation"] == "no-debate" and only["mode"] == "only-llm"
    assert full["run_key"] != only["run_key"]


@pytest.mark.slow
def test_calibrate_caches_round_scores_and_prints_the_thresholds(
    panel: FakeOpenAI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Scripted: after round 1 the judge is sure (s 0.8, c 0.9) of "false"; the final
    # ruling says "false" too. On a set of fake items, stopping at round 1 is right.
    round_one = json.dumps({"verdict": "false", "next": "stop", "reason": "Refuted."})
    odds = {"true": 0.05, "false": 0.9, "misleading": 0.03, "unproven": 0.02}
    final = json.dumps({"verdict": "false", "reason": "Refuted."})
    panel.responder = PanelScript(
        judgereply=ChatReply(content=round_one, logprobs=judge_logprobs(round_one, odds, 0.9)),
        finalreply=ChatReply(content=final, logprobs=judge_logprobs(final, odds)),
    )
    monkeypatch.setenv("ZOFIA__DEBATE__MAX_ROUNDS", "2")
    rows = [{"id": f"f{k}", "label": "fake", "text": f"Body {k}."} for k in range(2)]
    data = _dataset(tmp_path, rows)
    result = CliRunner().invoke(main, ["calibrate", str(data)])
    assert result.exit_code == 0, result.output
    scores = [
        json.loads(line) for line in (tmp_path / "calibrate-news.jsonl").read_text().splitlines()
    ]
    assert [s["id"] for s in scores] == ["f0", "f1"]
    # Every round held ("never" stops early): round 1 scored, then the final ruling.
    assert all(len(s["rounds"]) == 1 and s["final"] == "false" for s in scores)
    assert scores[0]["rounds"][0]["stop_margin"] == pytest.approx(0.8, abs=1e-3)
    assert scores[0]["rounds"][0]["label_confidence"] == pytest.approx(0.9, abs=1e-3)
    assert "[debate.thresholds]" in result.stdout
    assert "Contextual calibration: expected calibration error" in result.stdout
    # The same odds as the prior, after every ruling: correcting by it only hurts here.
    assert "0.100 as given, 0.250 corrected; turn it off." in result.stdout.replace("\n", "")
    asked = panel.calls
    again = CliRunner().invoke(main, ["calibrate", str(data)])
    assert again.exit_code == 0, again.output
    assert panel.calls == asked + 1  # cached: only the prior is asked again


def test_repeat_checks_each_item_k_times_and_reports_how_often_runs_agree(
    panel: FakeOpenAI, tmp_path: Path
) -> None:
    data = _dataset(tmp_path)
    args = (str(data), "--baseline", "only-llm", "--limit", "2", "--repeat", "3", "--json")
    first = _eval(*args)
    assert first.exit_code == 0, first.output
    metrics = json.loads(first.stdout)
    assert metrics["items"] == 6 and metrics["repeat"] == 3
    assert metrics["agreement"] == 1.0  # the fake answers every run alike
    assert panel.calls == 6 and "2 of 8 items, 3 runs each" in first.stderr
    again = _eval(*args)
    assert again.exit_code == 0 and panel.calls == 6  # resumed: every run was done


def test_agreement_groups_an_items_runs_and_counts_a_split_as_disagreeing() -> None:
    from zofia_engine.evaluation import ItemRecord, agreement

    def run(item: str, verdict: str) -> ItemRecord:
        return ItemRecord(
            run_key="k", id=item, gold="true", raw_label="true", predicted=verdict,
            verdict=verdict, mode="full", ablation="none",
        )  # fmt: skip

    same = [run("a#run1", "true"), run("a#run2", "true")]
    split = [run("b#run1", "true"), run("b#run2", "false")]
    assert agreement(same + split) == 0.5
    assert agreement([run("a", "true")]) is None  # nothing ran twice
