"""``zofia doctor``: each configured part, tried for real, in one table; exit 1 when a
check could not run. The LLM is the fake OpenAI server behaving as llama-cpp-python's
server does (it refuses ``json_schema``); the models are the real embedded ones."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.peers.servers.loopback import running_in_thread
from tests.peers.servers.openai_peer import FakeOpenAI
from tests.peers.servers.search_peers import closed_port

from bots.cli import main

pytestmark = pytest.mark.slow


def _config(tmp_path: Path, base_url: str) -> Path:
    config = tmp_path / "zofia.toml"
    config.write_text(
        f"""
[llm]
backend = "openai"
retries = 0
timeout_s = 5
[llm.openai]
base_url = "{base_url}"
api_key = "sk-local"
model = "fake-model"
[storage]
path = "{tmp_path / "zofia.db"}"
"""
    )
    return config


def test_doctor_names_each_part_and_the_mode_the_server_took(tmp_path: Path) -> None:
    with running_in_thread(FakeOpenAI(formats=("text", "json_object"), refusal_status=500)) as peer:
        assert isinstance(peer, FakeOpenAI)
        config = _config(tmp_path, peer.base_url)
        result = CliRunner().invoke(main, ["doctor", "--config", str(config)])
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "structured output: json_object_schema" in text
    assert "logprobs: yes" in text
    assert "no open-web evidence" in text  # offline: a warning, not a failure
    assert "wikipedia:offline" in text and "articles" in text
    assert "storage: SQLite" in text and "schema (new)" in text and "GiB free" in text
    assert "RapidOCR, loaded in" in text and "read a test line in" in text
    assert "images are read for their text only" in text and "reverse image search" in text


def test_an_unreachable_llm_fails_the_doctor(tmp_path: Path) -> None:
    config = _config(tmp_path, f"http://127.0.0.1:{closed_port()}/v1")
    result = CliRunner().invoke(main, ["doctor", "--config", str(config)])
    assert result.exit_code == 1
    assert "a check cannot run: fix LLM openai" in result.output
