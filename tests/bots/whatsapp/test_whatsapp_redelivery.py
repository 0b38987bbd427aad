"""A WhatsApp delivery answered once across processes: Meta delivers a message again
when it is unsure the first delivery landed, possibly after the tipline restarted or to
another replica behind the same URL. The handled message ids are kept in the store (as
keyed hashes, through the check service), so the same signed delivery starts one check
whichever tipline on the store gets it, and however often. Checks are the
FakeChecker's: these count them, and the messages the fake Cloud API received."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from tests.peers.fakes.fake_checker import FakeChecker, fake_service
from tests.peers.fixtures.store_fixtures import Clock
from tests.peers.fixtures.whatsapp_setup import ANN, CREDENTIALS, running_tipline, tipline_settings
from tests.peers.servers.whatsapp_peer import FakeCloudAPI

from bots.whatsapp.settings import PLATFORM
from bots.whatsapp.tipline import WhatsAppTipline
from storage.seen_messages import SEEN_FOR

POST = "The mayor of Springfield has banned bicycles from every street in the city."
CHECKING = "⏳ Checking…"


@contextlib.asynccontextmanager
async def _replica(tmp_path: Path, cloud: FakeCloudAPI, checker: FakeChecker) -> AsyncIterator[str]:
    """One more tipline (its own check service) on the store of ``running_tipline``'s
    settings at ``tmp_path``: its webhook's URL."""
    settings = tipline_settings(tmp_path, cloud)
    async with fake_service(settings, checker) as service:
        tipline = WhatsAppTipline(settings.whatsapp, service, CREDENTIALS)
        tipline.clock = cloud.clock
        async with tipline:
            yield f"http://127.0.0.1:{tipline.port}{settings.whatsapp.path}"
            await tipline.stop(5.0)


async def _deliver_to(cloud: FakeCloudAPI, webhook: str, payload: dict[str, Any]) -> int:
    cloud.webhook = webhook
    return await cloud.deliver(payload)


async def test_two_replicas_on_one_store_answer_a_redelivery_once(tmp_path: Path) -> None:
    checker = FakeChecker(summary="The council's minutes record no such vote.")
    async with running_tipline(tmp_path, checker) as run:
        cloud, first = run.cloud, run.webhook
        message = cloud.message(ANN, "text", {"body": POST})
        payload = cloud.payload(ANN, [message])
        cloud.inbound_at[ANN] = cloud.clock()
        async with _replica(tmp_path, cloud, checker) as second:
            assert first != second
            # at once, to both: neither process has seen the id when the other asks
            statuses = await asyncio.gather(
                cloud.deliver(payload), _deliver_to(cloud, second, payload)
            )
            assert list(statuses) == [200, 200]
            await run.card(ANN)
            assert await _deliver_to(cloud, second, payload) == 200  # and again, later
            assert await _deliver_to(cloud, first, payload) == 200
        await run.tipline.stop(5.0)
    assert [p.text for p in checker.runs] == [POST]
    said = [s.text for s in cloud.to(ANN)]
    assert said.count(CHECKING) == 1 and len(said) == 2  # "checking…" and the card


async def test_a_redelivery_after_a_restart_is_not_answered_again(tmp_path: Path) -> None:
    checker = FakeChecker(summary="The council's minutes record no such vote.")
    async with running_tipline(tmp_path, checker) as run:
        cloud = run.cloud
        message = cloud.message(ANN, "text", {"body": POST})
        payload = cloud.payload(ANN, [message])
        # a message first delivered after the restart (its id is this fake's next one)
        later = cloud.message(ANN, "text", {"body": "A new message is still checked."})
        await cloud.send_user(ANN, message, POST)
        await run.card(ANN)
    async with running_tipline(tmp_path, checker) as restarted:  # the same store
        assert await restarted.cloud.deliver(payload) == 200
        await restarted.cloud.send_user(ANN, later, "A new message is still checked.")
        await restarted.card(ANN)
        await restarted.tipline.stop(5.0)
        said = [s.text for s in restarted.cloud.to(ANN)]
        # the new message's "checking…" and card; nothing for the redelivery (not even
        # the stored answer a repeat of the post would get)
        assert said[0] == CHECKING and len(said) == 2
        assert {s.reply_to for s in restarted.cloud.to(ANN)} == {later["id"]}
    assert [p.text for p in checker.runs] == [POST, "A new message is still checked."]


async def test_the_store_keeps_the_message_ids_as_keyed_hashes(tmp_path: Path) -> None:
    async with running_tipline(tmp_path) as run:
        asked = await run.cloud.text(ANN, POST)
        await run.card(ANN)
        rows = run.service.store.database.rows("SELECT platform, message FROM seen_messages")
    assert [row[0] for row in rows] == [PLATFORM]
    assert rows[0][1] == run.service.namer.message(PLATFORM, asked) != asked
    assert asked.startswith("wamid.") and len(rows[0][1]) == 64


async def test_the_services_purge_forgets_a_message_once_no_redelivery_can_come(
    tmp_path: Path,
) -> None:
    """The message ids go after :data:`SEEN_FOR` (a redelivery comes within days), well
    before the checks' retention (30 days by default) and whatever it is."""
    clock = Clock()
    async with FakeCloudAPI() as cloud:
        settings = tipline_settings(tmp_path, cloud)
    async with fake_service(settings, FakeChecker(), clock=clock) as service:
        assert service.retention is not None and service.retention > SEEN_FOR
        assert await service.chats.first_message(PLATFORM, "wamid.in000001")
        clock.advance(days=SEEN_FOR.days - 1)
        await service.purge_expired()
        assert not await service.chats.first_message(PLATFORM, "wamid.in000001")
        clock.advance(days=2)
        await service.purge_expired()
        assert await service.chats.first_message(PLATFORM, "wamid.in000001")
