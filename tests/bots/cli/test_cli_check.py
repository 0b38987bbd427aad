"""``zofia check`` end to end: the real CLI, real models, the fake OpenAI server.

The CLI runs its own event loop, so the fake servers run in a thread of their own.
"""

from __future__ import annotations

import getpass
import json
import re
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.peers.fakes.panel_script import REPORT_KEYS, PanelScript
from tests.peers.fixtures.images import headline, pixel_bomb
from tests.peers.servers.article_peer import BODY_SENTENCES, ArticlePeer
from tests.peers.servers.loopback import running_in_thread
from tests.peers.servers.openai_peer import FakeOpenAI

from bots.cli import main

pytestmark = pytest.mark.slow

POST = "The mayor of Springfield banned bicycles from every street, officials said on Monday."


@pytest.fixture
def panel(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[FakeOpenAI]:
    """The fake server, and the environment that points the CLI at it (no config file)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ZOFIA_CONFIG", raising=False)
    monkeypatch.setenv("ZOFIA__STORAGE__PATH", str(tmp_path / "zofia.db"))
    with running_in_thread(FakeOpenAI(PanelScript(), api_key="sk-cli")) as peer:
        assert isinstance(peer, FakeOpenAI)
        monkeypatch.setenv("ZOFIA__LLM__BACKEND", "openai")
        monkeypatch.setenv("ZOFIA__LLM__OPENAI__BASE_URL", peer.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-cli")
        yield peer


@pytest.mark.parametrize("command", ["check", "history", "show", "export"])
def test_help_exists(command: str) -> None:
    result = CliRunner().invoke(main, [command, "--help"])
    assert result.exit_code == 0 and "Usage:" in result.output


def test_checks_are_stored_repeats_answered_and_records_readable(panel: FakeOpenAI) -> None:
    first = CliRunner().invoke(main, ["check", "--json", POST])
    assert first.exit_code == 0, first.output
    calls = len(panel.requests)
    check_id = first.stderr.strip().splitlines()[-1].split()[1].rstrip(":")

    again = CliRunner().invoke(main, ["check", POST])
    assert again.exit_code == 0, again.output
    assert f"exact repeat of check {check_id}" in again.stderr.replace("\n", " ")
    assert len(panel.requests) == calls  # answered from the store
    forced = CliRunner().invoke(main, ["check", "--json", "--recheck", POST])
    assert forced.exit_code == 0 and len(panel.requests) > calls

    history = CliRunner().invoke(main, ["history"])
    assert history.exit_code == 0 and check_id in history.output
    assert history.output.count("cli") >= 3

    shown = CliRunner().invoke(main, ["show", check_id])
    assert shown.exit_code == 0 and "Unproven" in shown.output
    as_json = CliRunner().invoke(main, ["show", "--json", check_id])
    # The recheck's word is in force for its text: the check shows it, as its card would.
    assert json.loads(as_json.output) == json.loads(forced.stdout) != json.loads(first.stdout)
    missing = CliRunner().invoke(main, ["show", "no-such-id"])
    assert missing.exit_code == 1 and "no check with id no-such-id" in missing.output

    exported = CliRunner().invoke(main, ["export", "--jsonl"])
    rows = [json.loads(line) for line in exported.output.splitlines()]
    assert len(rows) == 3 and {r["id"] for r in rows} >= {check_id}
    assert all(len(r["requester"]) == 64 for r in rows)  # HMAC-SHA256 hex only
    assert all(len(r["chat"]) == 64 for r in rows)  # the chat too ("terminal" here)
    assert getpass.getuser() not in exported.output and '"terminal"' not in exported.output
    to_file = CliRunner().invoke(main, ["export", "--jsonl", "--output", "checks.jsonl"])
    assert to_file.exit_code == 0 and "wrote 3 checks" in to_file.output
    assert stat.S_IMODE(Path("checks.jsonl").stat().st_mode) == 0o600


def test_check_json_prints_the_full_report(panel: FakeOpenAI) -> None:
    result = CliRunner().invoke(main, ["check", "--json", POST])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert list(report) == REPORT_KEYS
    # Offline there is no web page to quote: the judge's "false" stands on nothing.
    assert report["verdict"] == "unproven" and report["lean"]["outcome"] == "false"
    assert report["usage"]["calls"] == len(panel.requests)
    assert any("no open-web evidence" in note["text"] for note in report["notes"])
    # Which parts run offline is said on stderr, not mixed into the JSON.
    assert "web search: offline" in result.stderr
    # Nothing settled: the verdict is fixed before the debate, and printed first.
    said = " ".join(result.stderr.split())  # as the terminal wraps it
    early = said.index("Unproven: The evidence found settles none")
    assert said.index("the explanation follows") > early
    assert early < said.index("debate finished")


def test_check_prints_a_verdict_card_from_a_file(panel: FakeOpenAI, tmp_path: Path) -> None:
    post = tmp_path / "post.txt"
    post.write_text(POST, encoding="utf-8")
    result = CliRunner().invoke(main, ["check", "--file", str(post)])
    assert result.exit_code == 0, result.output
    assert "❔ Unproven" in result.stdout
    assert "The panel leans false." in result.stdout
    # The judge's overruled reasoning is not shown: what was found is.
    assert "Web sources refute the core claim." not in result.stdout
    assert "The evidence found settles none of the post's claims." in result.stdout
    assert "debate round 1: judge says false" in result.stderr
    assert POST in re.sub(r"\[S\d+\] ", "", panel.requests[0]["messages"][1]["content"])


def test_check_an_image_with_a_caption(panel: FakeOpenAI, tmp_path: Path) -> None:
    shot = tmp_path / "shot.png"
    shot.write_bytes(headline(["Springfield bans bicycles", "from every street"]))
    result = CliRunner().invoke(
        main, ["check", "--json", "--image", str(shot), "Seen on my feed today"]
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    [image] = report["images"]
    assert "bicycles" in image["text"].casefold() and image["ocr_confidence"] > 0.5
    assert report["caption"] is True
    post = panel.requests[0]["messages"][1]["content"]
    assert "Seen on my feed today" in post and "[Text read from picture 1]" in post
    assert "from every street" in post.casefold()
    # The store keeps the image's hash and text, never the image.
    stored = b"".join(f.read_bytes() for f in tmp_path.glob("zofia.db*"))
    data = shot.read_bytes()
    assert image["sha256"].encode() in stored
    assert not any(data[i : i + 48] in stored for i in range(64, len(data) - 48, 997))
    # Nor the cleaned image the engine passed on, raw or base64 (PNG's signature).
    assert b"\x89PNG" not in stored and b"iVBORw0KGgo" not in stored
    card = CliRunner().invoke(main, ["check", "--image", str(shot), "Seen on my feed today"])
    assert "Checked: the caption and the text in 1 image" in card.stdout  # a repeat, from the store

    bomb = tmp_path / "bomb.png"
    bomb.write_bytes(pixel_bomb())
    refused = CliRunner().invoke(main, ["check", "--image", str(bomb)])
    assert refused.exit_code == 1
    assert "60 megapixels; images up to 40 megapixels are checked" in refused.output


def test_check_wants_exactly_one_source_of_text(panel: FakeOpenAI) -> None:
    result = CliRunner().invoke(main, ["check"])
    assert result.exit_code == 2 and "give one of TEXT, --file or --url" in result.output
    result = CliRunner().invoke(main, ["check", "--url", "https://example.org", POST])
    assert result.exit_code == 2
    assert panel.requests == []


def test_check_url_refuses_loopback_unless_allowed(panel: FakeOpenAI) -> None:
    with running_in_thread(ArticlePeer()) as site:
        url = f"{site.root}/article"
        refused = CliRunner().invoke(main, ["check", "--url", url])
        assert refused.exit_code == 1
        assert f"{url} could not be fetched." in refused.output
        assert panel.requests == [] and not site.hits

        allowed = CliRunner().invoke(
            main, ["check", "--json", "--allow-private-urls", "--url", url]
        )
    assert allowed.exit_code == 0, allowed.output
    post = panel.requests[0]["messages"][1]["content"]
    assert BODY_SENTENCES[0] in post and "Publication date: 2024-03-05" in post
    assert json.loads(allowed.stdout)["verdict"] == "unproven"


def test_check_reports_a_dead_llm_server_in_one_sentence(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ZOFIA__STORAGE__PATH", str(tmp_path / "zofia.db"))
    monkeypatch.setenv("ZOFIA__LLM__BACKEND", "openai")
    monkeypatch.setenv("ZOFIA__LLM__OPENAI__BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("ZOFIA__LLM__RETRIES", "0")
    result = CliRunner().invoke(main, ["check", "--json", POST])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["verdict"] == "undetermined"
    assert report["summary"].startswith("No verdict could be reached")
    assert report["usage"]["failed_calls"] == report["usage"]["calls"] > 0


def test_escapes_and_markup_from_posts_and_models_are_printed_inert(
    panel: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The full depth asks the expert whatever the evidence settles: its role is printed.
    monkeypatch.setenv("ZOFIA__AGENTS__DEPTH", "full")
    osc8 = "\x1b]8;;https://evil.example\x1b\\click here\x1b]8;;\x1b\\"
    panel.responder = PanelScript(
        domainreply={"domain": "politics", "expert_role": "x[/] [bold red]boss"},
        judgereply={"verdict": "false", "next": "stop", "reason": f"Refuted \x1b[2J{osc8} [/]."},
    )
    post = f"{POST} {osc8} \u202eevil"
    check = CliRunner().invoke(main, ["check", post])
    assert check.exit_code == 0, check.output
    check_id = check.stderr.strip().splitlines()[-1].split()[1].rstrip(":")
    for args in (["history"], ["show", check_id]):
        result = CliRunner().invoke(main, args)
        assert result.exit_code == 0, result.output
        assert "\x1b" not in result.output and "\u202e" not in result.output
    shown = CliRunner().invoke(main, ["show", check_id]).output
    assert "x[/] [bold red]boss" in shown  # the model's brackets, printed as they are
    assert "\x1b" not in check.output


def test_a_refused_request_ends_the_whole_check_in_one_sentence(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A server that refuses the request as configured (here: a strict schema to a server
    that takes none) ends the check at once, with the setting to change, and no retry."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ZOFIA_CONFIG", raising=False)
    monkeypatch.setenv("ZOFIA__STORAGE__PATH", str(tmp_path / "zofia.db"))
    with running_in_thread(FakeOpenAI(formats=("text", "json_object"), api_key="sk-cli")) as peer:
        assert isinstance(peer, FakeOpenAI)
        monkeypatch.setenv("ZOFIA__LLM__BACKEND", "openai")
        monkeypatch.setenv("ZOFIA__LLM__OPENAI__BASE_URL", peer.base_url)
        monkeypatch.setenv("ZOFIA__LLM__OPENAI__STRUCTURED_OUTPUT", "json_schema")
        monkeypatch.setenv("OPENAI_API_KEY", "sk-cli")
        result = CliRunner().invoke(main, ["check", POST])
        asked = len(peer.requests)
    assert result.exit_code == 1
    assert "llm.openai.structured_output" in result.output
    assert "Traceback" not in result.output and len(result.output.strip().splitlines()) <= 3
    assert asked <= 6  # the calls already in flight, each refused once: none retried
