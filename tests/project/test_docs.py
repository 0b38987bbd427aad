"""The documentation builds, its links resolve, and its settings reference is the code's."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from bots.app.settings import Settings
from bots.app.settings_reference import defaults_toml, reference_markdown, sections
from bots.cli.config import config

ROOT = Path(__file__).resolve().parents[2]


def test_the_settings_reference_page_is_generated_from_the_models() -> None:
    page = (ROOT / "docs" / "settings.md").read_text(encoding="utf-8")
    assert page == reference_markdown(Settings()), (
        "docs/settings.md is out of date: zofia config --reference > docs/settings.md"
    )


def test_zofia_config_prints_every_setting_and_reads_back_as_the_defaults(
    tmp_path: Path,
) -> None:
    import tomllib

    printed = CliRunner().invoke(config, ["--defaults"])
    assert printed.exit_code == 0, printed.output
    data = tomllib.loads(printed.output)
    names = {s.name for s in sections(Settings())}
    assert "llm.embedded" in names and "agents" in names and "telegram" in names
    # Every section and setting is there, with its default: the file loads back to
    # exactly the offline defaults.
    file = tmp_path / "zofia.toml"
    file.write_text(printed.output, encoding="utf-8")
    from bots.app.settings import load_settings

    assert load_settings(file, environ={}) == Settings()
    assert data["agents"]["depth"] == "adaptive"
    assert printed.output == defaults_toml(Settings())


def test_the_docs_build_strict(tmp_path: Path) -> None:
    """MkDocs (a dev dependency) builds docs/ with --strict: a broken link, a missing
    anchor or a page left out of the navigation fails."""
    mkdocs = Path(sys.executable).with_name("mkdocs")
    done = subprocess.run(
        [str(mkdocs), "build", "--strict", "-d", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert (tmp_path / "site" / "settings" / "index.html").exists()
