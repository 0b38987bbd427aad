"""Share on Discord (issue 40, item 3): the real discord.py client against the fake
Discord on loopback, the real check service and a
:class:`~tests.peers.fakes.fake_checker.FakeChecker`.

Where ``[site] public_url`` is set, a verdict has a "Share" link button to its report
page, the page its "Full report" button opens, keyed by the check id its footer shows
(Discord has no share sheet: the link is what a member passes on). Without a public
address there is nothing to share: no button.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from tests.peers.fakes.fake_checker import FakeChecker, fake_service
from tests.peers.servers.discord_peer import FakeDiscord, running_client

from bots.app.settings import Settings
from bots.discord.client import FactCheckBot

pytest_plugins = ["tests.peers.fixtures.discord_fixtures"]

POST = "The mayor of Springfield has banned bicycles from every street in the city."
PUBLIC = "https://factcheck.example.org"


@contextlib.asynccontextmanager
async def _bot(tmp_path: Path, public_url: str) -> AsyncIterator[FactCheckBot]:
    settings = Settings.model_validate(
        {
            "storage": {"path": str(tmp_path / "zofia.db"), "secret": "s3cret-for-tests-only"},
            "discord": {"progress_interval_s": 0, "guild_cooldown_s": 0},
        }
    )
    async with (
        fake_service(settings, FakeChecker()) as service,
        running_client(FactCheckBot(settings.discord, service, public_url=public_url)) as bot,
    ):
        yield bot


async def _card(peer: FakeDiscord, payload: dict[str, Any]) -> dict[str, Any]:
    """The body of the edit that shows the verdict card answering ``payload``."""
    await peer.dispatch("INTERACTION_CREATE", payload)
    call = await peer.wait_for(
        lambda c: payload["token"] in c.path and c.method == "PATCH" and bool(c.body.get("embeds")),
        timeout=30,
    )
    body: dict[str, Any] = call.body
    return body


def _links(body: dict[str, Any]) -> dict[str, str]:
    """The card's link buttons, label → address."""
    buttons = [b for row in body.get("components", []) for b in row["components"]]
    return {b["label"]: b["url"] for b in buttons if b.get("style") == 5}


async def test_a_verdict_has_a_share_link_to_its_report_page(
    discord_api: FakeDiscord, tmp_path: Path
) -> None:
    async with _bot(tmp_path, PUBLIC):
        body = await _card(discord_api, discord_api.slash("factcheck", {"text": POST}))
    check_id = body["embeds"][0]["footer"]["text"].removeprefix("Check ")
    page = f"{PUBLIC}/c/{check_id}"
    assert _links(body) == {"Full report": page, "Share": page}


async def test_without_a_public_address_there_is_no_share_button(
    discord_api: FakeDiscord, tmp_path: Path
) -> None:
    async with _bot(tmp_path, ""):
        body = await _card(discord_api, discord_api.slash("factcheck", {"text": POST}))
    assert body["embeds"][0]["title"].startswith("❌")
    assert _links(body) == {}
    labels = [b.get("label") for row in body["components"] for b in row["components"]]
    assert "Share" not in labels and "Debate" in labels
