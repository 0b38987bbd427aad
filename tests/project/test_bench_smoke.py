"""Every bench script runs to its JSON line at its smallest size.

Each script of ``bench/`` runs as its own process with ``--smoke`` (``bench/lib/smoke.py``:
the smallest sizes, made-up sample data, the fake OpenAI server's scripted replies or
SmolLM2-135M instead of the packaged Qwen), and its last line must be one JSON object
with the keys the script documents and the sizes the smoke run asked for. A renamed
call, a moved module or a broken import fails here, not in a figure of the docs. The
figures themselves mean nothing.

``bench/loop_stall.py`` and ``bench/telegram_load.py`` take small sizes as arguments;
``bench/settle.py`` has its own test (``test_settle_bench.py``). Scripts that need
PostgreSQL either start the tests' throwaway server themselves
(``tests/peers/servers/pg_server.py``) or are given a fresh database of the session's (``--url``).
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench"
#: the records and reports the benches keep; a smoke run must leave them as they are
KEPT = BENCH / "eval"
#: the longest one smoke run may take (most take 5 to 40 s, model loads included)
RUN_TIMEOUT_S = 900
#: bench scripts with a smoke test elsewhere
TESTED_ELSEWHERE = {"settle.py"}


@dataclass(frozen=True)
class Smoke:
    """One bench run: its script, its arguments, and what its last line must hold.

    ``keys`` and ``expect`` name values by path (``"runs.1.completed"``); ``postgres``
    appends ``--url`` and a fresh database of the session's server."""

    script: str
    args: tuple[str, ...] = ("--smoke",)
    keys: tuple[str, ...] = ()
    expect: dict[str, Any] = field(default_factory=dict)
    postgres: bool = False
    name: str = ""

    @property
    def id(self) -> str:
        return self.name or self.script.removesuffix(".py")


SMOKES = [
    Smoke(
        "abuse.py",
        keys=(
            "others_sent", "others_answered", "others_wait_ratio", "burst_refused",
            "burst_tokens", "images_others_answered", "rss_over_idle_mb", "images_read",
            "images_refused_busy", "backend", "workers", "workers_rss_over_idle_mb",
            "targets_met.others_answered",
        ),
        expect={"backend": "sqlite", "others_sent": 1, "burst_sent": 3, "images_sent": 1},
    ),
    Smoke(
        "abuse.py",
        ("--smoke", "--backend", "postgresql", "--images", "0"),
        keys=("others_answered", "others_wait_ratio", "burst_refused", "targets_met"),
        expect={"backend": "postgresql", "workers": "1x2", "others_sent": 1},
        name="abuse-postgresql",
    ),
    Smoke(
        "api_flood.py",
        keys=(
            "poll_p50_ms", "poll_p99_ms", "idle_poll_p99_ms", "polls_refused", "refused_429",
            "bad_keys", "bodies", "warm_up", "peak_rss_mb", "peak_tree_rss_mb",
            "tree_rss_over_idle_mb", "load_before", "targets_met.poll_p99_ms",
        ),
        expect={"bad_keys_sent": 30, "bodies_sent": 3, "polls_refused": 0},
    ),
    Smoke(
        "batch_decode.py",
        keys=("batched_s", "sequential_s", "ratio", "batched_tok_s", "sequential_tok_s"),
    ),
    Smoke(
        "citation_threshold.py",
        keys=(
            "claims", "settling_p05", "settling_p50", "threshold", "other_above_threshold",
            "default_threshold", "other_above_default",
        ),
    ),
    Smoke(
        "embedded_check.py",
        keys=(
            "item", "words", "adaptive.check_s", "adaptive.process_s", "adaptive.calls",
            "adaptive.completion_tokens", "adaptive.prompt_tokens_evaluated",
            "adaptive.peak_rss_mb", "adaptive.verdict",
        ),
        expect={"words": 60},
    ),
    Smoke(
        "encoder.py",
        keys=("fixed_1_p50_ms", "grouped_p50_ms", "tokens", "linear_share", "linear_gflops"),
        expect={"posts": 1},
    ),
    Smoke(
        "engine.py",
        keys=(
            "now.wall_s", "now.llm_calls", "now.bound_s", "now.ratio", "now.chain_calls",
            "now.chain", "now.max_ratio", "before.wall_s", "added.llm_calls",
        ),
        expect={"checks": 1, "delay_s": 0.01},
    ),
    Smoke(
        "grammar_decoding.py",
        keys=("library_s", "ours_s", "speedup", "identical", "shortlist_scans", "full_scans"),
        expect={"tokens": 16},
    ),
    Smoke(
        "image.py",
        keys=(
            "ocr_p50_ms", "ocr_p95_ms", "cer_mean", "cer_max", "load_rss_mb",
            "first_image_rss_mb", "extra_peak_rss_mb",
        ),
        expect={"images": 1},
    ),
    Smoke(
        "language_detect.py",
        keys=tuple(
            f"{row}.{key}"
            for row in ("stopwords", "py3langid", "engine")
            for key in (
                "accuracy", "short_accuracy", "unsure", "wrong", "undecidable_unsure",
                "us_per_call", "import_s", "rss_mb", "wheel_mb",
            )
        ),
    ),
    Smoke(
        "liar_corpus.py",
        keys=("sentences_kept", "sentences_dropped", "dropped_examples"),
        expect={"documents": 6},
    ),
    Smoke(
        "loop_stall.py",
        ("--hold-s", "0.5", "--purge-checks", "50"),
        keys=(
            "max_stall_ms", "hold_stall_ms", "purge_stall_ms", "purge_s", "purge_rows",
            "second_purge_s", "second_purge_checks", "second_purge_rows", "hold_requests.ok",
            "purge_requests.ok", "longest_gc_ms", "ticks",
        ),
        expect={"backend": "sqlite", "purge_checks": 50, "purged": 50},
    ),
    Smoke(
        "loop_stall.py",
        ("--backend", "postgresql", "--hold-s", "0.5", "--purge-checks", "50"),
        keys=("max_stall_ms", "hold_stall_ms", "purge_stall_ms", "purge_rows", "ticks"),
        expect={"backend": "postgresql", "purged": 50},
        postgres=True,
        name="loop_stall-postgresql",
    ),
    Smoke(
        "near_repeat_stall.py",
        keys=("decide_s", "repeat", "worst_stall_ms"),
        expect={"megabytes": 0.01},
    ),
    Smoke(
        "near_threshold.py",
        keys=(
            "recall_0.95", "false_match_0.95", "query_p50_ms_100k", "query_p95_ms_100k",
            "load_s_100k", "add_us", "texts_encoded",
        ),
        expect={"posts": 4},
    ),
    Smoke(
        "liar_settle.py",
        keys=(
            "items", "coverage", "covered_accuracy", "confidently_wrong", "macro_f1", "ece",
            "found", "classes", "by_label", "by_kind", "by_read",
        ),
        expect={"mode": "smoke", "items": 2, "found": 1.0},
    ),
    Smoke("ner_confidence.py", keys=("4.ms_per_post", "4.units", "4.under_0.99", "4.under_0.8")),
    Smoke(
        "poisoned.py",
        keys=("off.followed_poison", "off.followed_share", "off.verdicts", "on.mean_s"),
        expect={"off.posts": 1, "on.posts": 1},
    ),
    Smoke(
        "quality_corpus.py",
        keys=(
            "full_macro_f1", "full_misleading_f1", "full_coverage", "full_confidently_wrong",
            "only_llm_macro_f1", "gain_macro_f1_points", "full_macro_f1_binary",
            "recall_at_10", "full_mean_wall_s", "recall_at_10_planned", "found_by_planned",
            "settled_planned", "extra_calls_mean", "extra_s_mean",
        ),
        expect={"items": 3, "depth": "adaptive"},
    ),
    Smoke(
        "quality_partial.py",
        keys=(
            "items", "full_macro_f1", "only_llm_macro_f1", "gain_macro_f1_points",
            "full_coverage", "full_confidently_wrong", "full_confusion",
        ),
    ),
    Smoke(
        "reader_accuracy.py",
        keys=(
            "right", "wrong", "abstained", "accuracy", "settled_accuracy",
            "dropped_citations", "mean_read_s",
        ),
        expect={"claims": 2},
    ),
    Smoke(
        "repeat_threshold.py",
        keys=(
            "texts", "pairs", "copies", "highest_below_copies", "threshold",
            "default_threshold", "blanked_at_default",
        ),
    ),
    Smoke(
        "retrieval_passes.py",
        keys=(
            "titles_50kb_s.repeated-name", "titles_50kb_max_s", "offline_lookup_us",
            "quality_load_ms", "quality_imports_torch",
        ),
        expect={"rounds": 2, "quality_imports_torch": False},
    ),
    Smoke(
        "scale.py",
        keys=(
            "cpu_count", "runs.1.checks_per_min", "runs.1.enqueue_to_start_p50_ms",
            "runs.1.pickup_p50_ms", "runs.1.delivery_p50_ms", "runs.1.worker_cpu_s_per_check",
            "runs.1.machine_busy", "speedup_2_over_1",
        ),
        expect={"checks": 2, "runs.1.completed": 2, "runs.1.failed": 0, "runs.1.delivered": 2},
    ),
    Smoke(
        "stage1.py",
        keys=(
            "p50_ms", "p95_ms", "model_share", "peak_rss_mb", "keywords_mean",
            "keywords_per_post", "wiki_recall",
        ),
        expect={"posts": 2, "wiki_claims": 4},
    ),
    Smoke(
        "store.py",
        keys=(
            "exact_p50_ms", "exact_p95_ms", "near_p50_ms", "near_p95_ms", "near_p50_ms_10k",
            "near_p95_ms_10k", "reports_per_s",
        ),
        expect={"backend": "sqlite", "checks": 200, "queries": 5},
    ),
    Smoke(
        "store.py",
        ("--smoke", "--backend", "postgresql"),
        keys=("exact_p50_ms", "near_p50_ms", "reports_per_s"),
        expect={"backend": "postgresql", "checks": 200, "vectors_indexed": 200},
        postgres=True,
        name="store-postgresql",
    ),
    Smoke(
        "telegram_load.py",
        (
            "--chats", "2", "--posts", "3", "--distinct", "2", "--spread", "0.2",
            "--llm-delay", "0.01", "--timeout", "120",
        ),
        keys=("cards", "named", "lost", "chats_without_card", "refused", "p50_s", "p95_s"),
        expect={"sent": 3, "chats": 2},
    ),
    Smoke(
        "verdict_profile.py",
        keys=(
            "mean_check_s", "mean_verdict_s", "verdict_share", "early", "steps_s.claims",
            "before.evaluated", "after.generated", "by_step.triage.calls",
            "by_step.claims:extract.calls",
        ),
        expect={"items": 2},
    ),
    Smoke(
        "voice.py",
        keys=(
            "load_ms", "hear_p50_ms", "hear_max_ms", "real_time_factor_p50", "wer_mean",
            "wer_max", "extra_peak_rss_mb",
        ),
        expect={"notes": 1, "rounds": 1},
    ),
    Smoke(
        "web.py",
        keys=(
            "db_mb", "fill_s", "page_server_p50_ms", "page_server_p95_ms", "page_bytes",
            "requests_per_s",
        ),
        expect={"checks": 20, "clients": 2},
    ),
]  # fmt: skip


def value_at(figures: dict[str, Any], path: str) -> Any:
    """The value at a dotted ``path`` (``"runs.1.completed"``); a key that holds a dot
    (``"recall_0.95"``) is one step. KeyError names the path when it is missing."""
    value: Any = figures
    parts = path.split(".")
    while parts:
        if not isinstance(value, dict):
            raise KeyError(path)
        for n in range(len(parts), 0, -1):  # the longest key first
            key = ".".join(parts[:n])
            if key in value:
                value, parts = value[key], parts[n:]
                break
        else:
            raise KeyError(path)
    return value


def kept_files() -> dict[str, str]:
    """What ``bench/eval`` holds: each file's digest."""
    return {
        path.name: hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(KEPT.iterdir())
        if path.is_file()
    }


def run_bench(smoke: Smoke, folder: Path, url: str | None) -> dict[str, Any]:
    """The last line of the script's output, read as JSON."""
    command = [sys.executable, str(BENCH / smoke.script), *smoke.args]
    if url is not None:
        command += ["--url", url]
    paths = [str(ROOT), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    env = {k: v for k, v in os.environ.items() if not k.startswith("ZOFIA")}  # the defaults
    env["PYTHONPATH"] = os.pathsep.join(paths)
    try:
        done = subprocess.run(
            command, cwd=folder, env=env, capture_output=True, text=True, timeout=RUN_TIMEOUT_S
        )
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"{smoke.script} ran past {RUN_TIMEOUT_S} s:\n{str(exc.stderr)[-3000:]}")
    assert done.returncode == 0, f"{smoke.script} failed:\n{done.stderr[-4000:]}"
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    assert lines, f"{smoke.script} printed nothing:\n{done.stderr[-3000:]}"
    figures = json.loads(lines[-1])
    assert isinstance(figures, dict), lines[-1]
    return figures


@pytest.mark.slow
@pytest.mark.parametrize("smoke", SMOKES, ids=[s.id for s in SMOKES])
def test_the_bench_runs_to_its_json_line(
    smoke: Smoke, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    url = request.getfixturevalue("postgres_url") if smoke.postgres else None
    kept = kept_files()
    figures = run_bench(smoke, tmp_path, url)
    missing = [key for key in smoke.keys if not _has(figures, key)]
    assert missing == [], f"{smoke.script}'s last line lacks {missing}: {figures}"
    got = {path: value_at(figures, path) for path in smoke.expect}
    assert got == smoke.expect
    assert kept_files() == kept  # the kept records are a full run's, never a smoke's


def _has(figures: dict[str, Any], path: str) -> bool:
    try:
        value_at(figures, path)
    except KeyError:
        return False
    return True


def test_every_bench_script_has_a_smoke_run() -> None:
    scripts = {path.name for path in BENCH.glob("*.py")} - TESTED_ELSEWHERE
    assert scripts == {smoke.script for smoke in SMOKES}


def test_a_dotted_path_keeps_a_key_that_holds_a_dot() -> None:
    figures = {"recall_0.95": 1.0, "runs": {"1": {"under_0.8": 0.2}}}
    assert value_at(figures, "recall_0.95") == 1.0
    assert value_at(figures, "runs.1.under_0.8") == 0.2
    with pytest.raises(KeyError):
        value_at(figures, "runs.2.under_0.8")
