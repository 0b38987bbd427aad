"""``zofia discord`` at start: a refused token or no network is one sentence and exit 1,
said before any model loads."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import yarl
from click.testing import CliRunner
from discord.gateway import DiscordWebSocket
from discord.http import Route

from tests.peers.servers.discord_peer import FakeDiscord
from tests.peers.servers.loopback import running_in_thread
from tests.peers.servers.search_peers import closed_port

from bots.cli import main

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


@pytest.fixture
def discord_at() -> Iterator[None]:
    """The test points discord.py's REST root and gateway elsewhere; put them back after."""
    base, gateway = Route.BASE, DiscordWebSocket.DEFAULT_GATEWAY
    yield
    Route.BASE, DiscordWebSocket.DEFAULT_GATEWAY = base, gateway


def _run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, token: str) -> tuple[int, str]:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ZOFIA_CONFIG", raising=False)
    result = CliRunner().invoke(main, ["discord"], env={"DISCORD_BOT_TOKEN": token})
    return result.exit_code, result.output


def test_no_network_is_one_sentence(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, discord_at: None
) -> None:
    Route.BASE = f"http://127.0.0.1:{closed_port()}/api/v10"
    code, output = _run(tmp_path, monkeypatch, "some-token")
    assert code == 1
    # discord.py's own log lines come first; the last line is ours, and the only error.
    assert "Traceback" not in output
    assert output.strip().splitlines()[-1] == (
        "Error: Could not reach Discord (discord.com): check this machine's network and DNS, "
        "then start the bot again."
    )


def test_a_refused_token_is_one_sentence(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, discord_at: None
) -> None:
    with running_in_thread(FakeDiscord(token="the-right-token")) as peer:
        assert isinstance(peer, FakeDiscord)
        Route.BASE = peer.api_base
        DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(peer.gateway_url)
        code, output = _run(tmp_path, monkeypatch, "a-wrong-token")
    assert code == 1
    assert "Traceback" not in output and "a-wrong-token" not in output
    assert output.strip().endswith(
        "Discord refused the token in $DISCORD_BOT_TOKEN: reset it in the Developer Portal."
    )


@pytest.mark.parametrize("command", ["discord", "telegram"])
def test_both_bots_take_a_grace_and_refuse_a_negative_one(command: str) -> None:
    """``--grace SECONDS`` on both bots (``[service] shutdown_grace_s`` when not given);
    a negative grace is refused before anything starts."""
    helped = CliRunner().invoke(main, [command, "--help"])
    assert helped.exit_code == 0 and "--grace SECONDS" in helped.output
    assert "shutdown_grace_s" in helped.output
    refused = CliRunner().invoke(main, [command, "--grace", "-1"])
    assert refused.exit_code == 2 and "-1" in refused.output
