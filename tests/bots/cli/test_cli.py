"""The ``zofia`` command line, run in-process with click's runner."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from bots.cli import main


@pytest.mark.parametrize("args", [[], ["keywords"]])
def test_help_exists(args: list[str]) -> None:
    result = CliRunner().invoke(main, [*args, "--help"])
    assert result.exit_code == 0
    assert "Usage:" in result.output


@pytest.mark.slow  # the real spaCy and MiniLM models
def test_keywords_json_has_the_stage1_keys(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)  # no ./zofia.toml: the embedded defaults
    monkeypatch.delenv("ZOFIA_CONFIG", raising=False)
    text = "Apple unveiled a new iPhone in Cupertino. Tim Cook praised the design in California."
    result = CliRunner().invoke(main, ["keywords", "--json", text])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert {"entities", "keywords", "wikipedia", "web", "sources"} <= set(data)
    assert data["keywords"][0]["text"] in {e["text"] for e in data["entities"]}
    assert any(s["name"] == "web" and s["status"] == "disabled" for s in data["sources"])


@pytest.mark.slow  # the real spaCy and MiniLM models
def test_keywords_table_output_and_stdin(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ZOFIA_CONFIG", raising=False)
    result = CliRunner().invoke(
        main, ["keywords", "-"], input="Angela Merkel met Emmanuel Macron in Paris."
    )
    assert result.exit_code == 0, result.output
    assert "Keywords" in result.output and "query:" in result.output
    assert "Merkel" in result.output


def test_bad_config_is_one_clear_error(tmp_path: Path) -> None:
    config = tmp_path / "zofia.toml"
    config.write_text("[keywords]\ngama = 0.4\n")
    result = CliRunner().invoke(main, ["keywords", "--config", str(config), "text"])
    assert result.exit_code == 1
    assert "keywords.gama: unknown setting" in result.output
    assert "Traceback" not in result.output
