"""What a key may learn of other chats' checks, through real HTTP against the real
server and check service (:class:`~tests.peers.fakes.fake_checker.FakeChecker` in place
of the engine, as in ``test_api``): nothing of a private chat's check, not even that it
was made; of a group's, the verdict, the summary and the evidence, and nothing of the
post or of what was read from its image (:mod:`storage.other_chats`)."""

from __future__ import annotations

import base64
import json
from pathlib import Path

from tests.bots.api.test_api import api_settings, running_api
from tests.peers.fakes.fake_checker import FakeChecker, submit
from tests.peers.fixtures.images import ScriptedOCR, headline

from bots.api.models import CheckState
from bots.service.records import Requester
from zofia_engine.image_settings import ImageSettings
from zofia_engine.images.reader import ImageReader
from zofia_engine.post import Post, PostImage

CAPTION = "Misty Buscher banned bicycles from every street of Springfield, look at this."
READ = ["BIKES BANNED IN SPRINGFIELD", "FINE OF 500 DOLLARS"]
SUMMARY = "The city's minutes record no such law."
PRIVATE = Requester("telegram", "1002", "1002", private=True)
GROUP = Requester("telegram", "1001", "-100500", in_group=True)


def checker() -> FakeChecker:
    scripted = FakeChecker(summary=SUMMARY)  # a summary that quotes nothing of the post
    scripted.reader = ImageReader(ImageSettings(), ocr=ScriptedOCR("\n".join(READ)))
    return scripted


def image_post(image: bytes) -> dict[str, object]:
    data = base64.b64encode(image).decode()
    return {"text": CAPTION, "images": [{"data": data, "media_type": "image/png"}]}


async def test_a_key_cannot_read_a_private_chats_check(tmp_path: Path) -> None:
    scripted = checker()
    async with running_api(api_settings(tmp_path), scripted) as api:
        private = await submit(api.service, Post(text=CAPTION), PRIVATE)
        await private.result()
        status, body, _ = await api.call("POST", "/v1/checks", json={"text": CAPTION})
        assert status in (200, 202), body  # 200 when the scripted check ended at once
        state = CheckState.model_validate(await api.answered(f"/v1/checks/{body['id']}"))
        assert state.status == "done" and state.repeat is None  # checked anew, no repeat
        # A forward of it is a near repeat of the key's own check, never of the chat's.
        status, body, _ = await api.call("POST", "/v1/checks", json={"text": f"Fwd: {CAPTION}"})
        assert status == 200 and body["repeat"] == "near", body
        row = api.service.store.checks.get(body["id"])
        assert row is not None and row.repeat_of == state.id != private.check_id
        status, body, _ = await api.call("GET", f"/v1/checks/{private.check_id}")
        assert status == 404  # nor by its id
        assert len(scripted.runs) == 2  # the chat's, and the key's own


async def test_a_groups_repeat_answered_to_a_key_carries_nothing_of_the_post(
    tmp_path: Path,
) -> None:
    scripted = checker()
    image = headline(READ)
    async with running_api(api_settings(tmp_path), scripted) as api:
        post = Post(text=CAPTION, images=(PostImage(data=image),))
        group = await (await submit(api.service, post, GROUP)).result()
        assert READ[0] in group.report.model_dump_json()  # the group's own is whole
        status, body, _ = await api.call("POST", "/v1/checks", json=image_post(image))
        assert status == 200, body  # answered at once, from the group's check
        state = CheckState.model_validate(body)
        assert state.repeat == "exact" and state.report is not None
        assert state.report["summary"] == SUMMARY and state.report["evidence"]
        polled = await api.answered(f"/v1/checks/{state.id}")
        for answer in (body, polled):
            said = json.dumps(answer, ensure_ascii=False)
            leaked = [w for w in ["Misty Buscher", "banned bicycles", *READ] if w in said]
            assert leaked == []
        assert len(scripted.runs) == 1
