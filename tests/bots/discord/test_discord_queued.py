"""The Discord bot of a queued deployment: a replica that stops while its user waits
loses nothing, because the verdict is posted by a ``deliver`` job another replica runs.

Real discord.py clients against the fake Discord, the queued check service on a real
PostgreSQL server and a Procrastinate worker in this process. The checker is
:class:`~tests.peers.fakes.fake_checker.FakeChecker` (our ``Checker`` port): this proves who posts
the verdict and where, not that any fact-checking happened.
"""

from __future__ import annotations

import asyncio
import functools

import pytest

from tests.bots.service.queue.test_queue import settings_for, worker
from tests.peers.fakes.fake_checker import FakeChecker, Gate, fake_service
from tests.peers.servers.discord_peer import FakeDiscord, running_client

from bots.app.deliveries import delivering
from bots.app.settings import Settings
from bots.discord.client import FactCheckBot
from bots.discord.deliveries import post_delivered
from bots.service.queue.jobs import DELIVER_TASK
from storage.postgres import PostgresDatabase

pytest_plugins = ["tests.peers.fixtures.discord_fixtures"]

pytestmark = pytest.mark.slow  # a real PostgreSQL server, the fake Discord

POST = "The mayor of Springfield banned bicycles from every street, officials said."


def discord_settings(url: str, **service: object) -> Settings:
    data = settings_for(url, deliver_delay_s=0.0).model_dump()
    data["discord"] |= {"progress_interval_s": 0, "guild_cooldown_s": 0}
    data["service"] |= service
    return Settings.model_validate(data)


def _verdict_edits(peer: FakeDiscord, token: str) -> list[dict[str, object]]:
    return [
        call.body
        for call in peer.calls_to("PATCH", "/webhooks/")
        if f"/{token}/messages/@original" in call.path and call.body.get("embeds")
    ]


async def test_another_replica_posts_the_verdict_of_a_replica_that_stopped(
    discord_api: FakeDiscord, postgres_url: str
) -> None:
    settings = discord_settings(postgres_url, user_daily=3)
    checker = FakeChecker(delay_s=2.0)
    payload = discord_api.slash("factcheck", {"text": POST})
    token = payload["token"]
    async with fake_service(settings, checker) as service:
        # Replica one takes the command, shows progress, and stops before the verdict.
        async with running_client(FactCheckBot(settings.discord, service)) as one:
            assert one.service is service
            await discord_api.dispatch("INTERACTION_CREATE", payload)
            async with asyncio.timeout(20):
                while not service.store.db.execute("SELECT 1 FROM deliveries").fetchone():
                    await asyncio.sleep(0.05)
        assert _verdict_edits(discord_api, token) == []
        # Replica two is up when the check ends; its deliver job edits one's response.
        async with (
            running_client(FactCheckBot(settings.discord, service)) as two,
            delivering(
                settings, service, "discord", functools.partial(post_delivered, two.context, two)
            ),
            worker(settings, checker),
        ):
            async with asyncio.timeout(30):
                while not _verdict_edits(discord_api, token):
                    await asyncio.sleep(0.1)
            await asyncio.sleep(1.0)  # and no second verdict comes
    (edit,) = _verdict_edits(discord_api, token)
    embed = edit["embeds"][0]  # type: ignore[index]
    assert "Check " in embed["footer"]["text"]
    # The queued card is made as a live one: it says how many checks the asker has left.
    notes = next(field["value"] for field in embed["fields"] if field["name"] == "Notes")
    assert "You have 2 checks left today." in notes
    check_id = embed["footer"]["text"].split("Check ")[-1]
    db = PostgresDatabase(postgres_url)
    row = db.execute(
        "SELECT target_json, delivered_at FROM deliveries WHERE check_id = ?", [check_id]
    ).fetchone()
    db.close()
    assert row is not None
    assert row == ("{}", row[1]) and row[1] is not None  # delivered, and the token forgotten
    assert len(checker.runs) == 1


async def test_a_late_verdict_goes_to_the_channel_once_the_token_has_expired(
    discord_api: FakeDiscord, postgres_url: str
) -> None:
    settings = discord_settings(postgres_url)
    checker = FakeChecker(delay_s=0.5)
    payload = discord_api.slash("factcheck", {"text": POST}, user_id=940000000000000001)
    discord_api.expired_tokens.add(payload["token"])  # Discord refuses its edits: 401
    async with (
        fake_service(settings, checker) as service,
        running_client(FactCheckBot(settings.discord, service)) as bot,
        delivering(
            settings, service, "discord", functools.partial(post_delivered, bot.context, bot)
        ),
        worker(settings, checker),
    ):
        await discord_api.dispatch("INTERACTION_CREATE", payload)
        async with asyncio.timeout(30):
            while not [
                c for c in discord_api.calls_to("POST", "/channels/") if c.body.get("embeds")
            ]:
                await asyncio.sleep(0.1)
        await asyncio.sleep(1.0)  # and no second one comes
    (sent,) = [c for c in discord_api.calls_to("POST", "/channels/") if c.body.get("embeds")]
    assert sent.path == f"/channels/{discord_api.CHANNEL_ID}/messages"
    assert sent.body["content"] == "<@940000000000000001>"  # the requester, and only they
    assert sent.body["allowed_mentions"]["parse"] == []
    assert sent.body["allowed_mentions"]["users"] == [940000000000000001]
    assert sent.body["components"][0]["components"][0]["custom_id"].startswith("zf:debate:")


async def test_a_verdict_whose_response_was_deleted_ends_its_deliver_job(
    discord_api: FakeDiscord, postgres_url: str
) -> None:
    """Issue 45: a deliver job whose deferred response someone deleted failed on Discord's
    "Unknown Message", and was retried until it gave up. Now it says nothing more, as a
    live check does, and ends at its first attempt."""
    settings = discord_settings(postgres_url)
    gate = Gate()
    checker = FakeChecker(gate=gate)
    payload = discord_api.slash("factcheck", {"text": POST})
    token = payload["token"]
    async with (
        fake_service(settings, checker) as service,
        running_client(FactCheckBot(settings.discord, service)) as bot,
        delivering(
            settings, service, "discord", functools.partial(post_delivered, bot.context, bot)
        ),
        worker(settings, checker),
    ):
        await discord_api.dispatch("INTERACTION_CREATE", payload)
        await gate.held()
        async with asyncio.timeout(20):  # acknowledged, and its delivery recorded
            while not service.store.db.execute("SELECT 1 FROM deliveries").fetchone():
                await asyncio.sleep(0.05)
        del discord_api.messages[discord_api.originals[token]]  # a moderator deleted it
        gate.open()

        def delivered() -> bool:
            found = service.store.db.execute(
                "SELECT 1 FROM deliveries WHERE delivered_at IS NOT NULL"
            ).fetchone()
            jobs = service.store.db.execute(
                "SELECT 1 FROM procrastinate_jobs WHERE task_name = ?", [DELIVER_TASK]
            ).fetchone()
            return found is not None and jobs is None  # done, its job deleted: not failed

        async with asyncio.timeout(30):
            while not delivered():
                await asyncio.sleep(0.05)
    edits = [c for c in discord_api.calls_to("PATCH", "/webhooks/") if c.body.get("embeds")]
    assert [c.status for c in edits] == [404]  # the verdict's edit, tried once
    assert not [c for c in discord_api.calls_to("POST", "/channels/") if c.body.get("embeds")]
