"""What another chat may learn of a check, through the real check service on a SQLite
file (:class:`~tests.peers.fakes.fake_checker.FakeChecker` in place of the engine):
a repeat, exact or near, and a run joined, are answered across chats only from a check
asked in a group or a channel, never from a private chat's or another key's; and there
only with the verdict, the summary and the evidence, nothing of the post or its images.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest_asyncio

from tests.peers.fakes.fake_checker import FakeChecker, Gate, HashingEncoder, submit
from tests.peers.fixtures.images import ScriptedOCR, headline

from bots.app.runtime import build_service
from bots.app.settings import Settings
from bots.chat.corrections import card_of
from bots.render.card import VerdictCard
from bots.service.checks import CheckService
from bots.service.records import CardState, Outcome, Requester
from bots.service.shown import card_state, report_of
from storage.other_chats import as_seen_elsewhere
from zofia_engine.image_settings import ImageSettings
from zofia_engine.images.reader import ImageReader
from zofia_engine.post import Post, PostImage

POST = (
    "The mayor of Springfield, Illinois has banned bicycles from every street in the city. "
    "Mayor Misty Buscher signed the law in March and cyclists now face a 500 dollar fine."
)
NEAR = "Fwd: " + POST + "\n#share 🚲"  # a forward of it: a near repeat for any encoder
READ = ["BIKES BANNED IN SPRINGFIELD", "FINE OF 500 DOLLARS"]  # what its image says
SUMMARY = "The city's minutes record no such law."  # the summary quotes nothing of it
GROUP = Requester("telegram", "1001", "-100500", in_group=True)
OTHER_GROUP = Requester("discord", "2001", "guild-9", in_group=True)
BOB = Requester("telegram", "1002", "1002", private=True)
CAROL = Requester("telegram", "1003", "1003", private=True)
KEY = Requester("api", "tipline", "tipline")
OTHER_KEY = Requester("api", "other-tipline", "other-tipline")


@pytest_asyncio.fixture
async def service(tmp_path: Path) -> AsyncIterator[CheckService]:
    settings = Settings.model_validate(
        {
            "storage": {"path": str(tmp_path / "zofia.db"), "secret": "s3cret-for-tests-only"},
            "service": {
                **{"user_per_minute": 100, "chat_per_minute": 100, "user_daily": 1000},
                "max_concurrent_checks": 4,  # the join test holds three runs at once
            },
        }
    )
    checker = FakeChecker(summary=SUMMARY)
    checker.reader = ImageReader(ImageSettings(), ocr=ScriptedOCR("\n".join(READ)))
    made = build_service(settings, checker, HashingEncoder())
    await made.start()
    try:
        yield made
    finally:
        await made.aclose()


def runs(service: CheckService) -> int:
    checker = service.engine
    assert isinstance(checker, FakeChecker)
    return len(checker.runs)


async def ask(service: CheckService, who: Requester, text: str = POST, *images: bytes) -> Outcome:
    post = Post(text=text, images=tuple(PostImage(data=image) for image in images))
    return await (await submit(service, post, who)).result()


def nothing_of_the_post(outcome: Outcome) -> None:
    """The outcome, as answered and as read back, holds none of the post's words nor its
    image's."""
    found = outcome.report.model_dump_json()
    assert [words for words in ["banned bicycles", "Misty Buscher", *READ] if words in found] == []
    assert outcome.report.summary == SUMMARY and outcome.report.evidence


async def test_a_private_chats_check_answers_its_own_chat_only(service: CheckService) -> None:
    first = await ask(service, BOB)
    for who, text in ((CAROL, POST), (CAROL, NEAR), (KEY, POST), (GROUP, POST)):
        again = await ask(service, who, text)
        assert again.original_id != first.check_id, (who, text)
    assert runs(service) == 4  # Carol's, the key's and the group's own runs
    own = await ask(service, BOB, NEAR)
    assert (own.repeat_kind, own.original_id) == ("near", first.check_id)
    assert own.report == first.report  # its own chat sees it whole
    assert runs(service) == 4


async def test_a_keys_check_answers_that_key_only(service: CheckService) -> None:
    first = await ask(service, KEY)
    other = await ask(service, OTHER_KEY)
    assert other.repeat_kind is None and runs(service) == 2
    again = await ask(service, KEY)
    assert (again.repeat_kind, again.original_id, again.report) == (
        "exact",
        first.check_id,
        first.report,
    )


async def test_a_groups_check_answers_every_chat_with_nothing_of_the_post(
    service: CheckService,
) -> None:
    image = headline(READ)
    first = await ask(service, GROUP, POST, image)
    assert READ[0] in first.report.model_dump_json()  # the group sees its own whole
    for who in (BOB, KEY, OTHER_GROUP):
        again = await ask(service, who, POST, image)
        assert (again.repeat_kind, again.original_id) == ("exact", first.check_id)
        assert again.report == as_seen_elsewhere(first.report)
        nothing_of_the_post(again)
        found = report_of(service.store, again.check_id)
        assert found is not None and found[1] == again.report  # read back alike
    text_only = await ask(service, GROUP)
    near = await ask(service, BOB, NEAR)
    assert (near.repeat_kind, near.original_id) == ("near", text_only.check_id)
    nothing_of_the_post(near)
    assert runs(service) == 2


async def test_a_run_is_joined_only_from_where_its_check_may_answer(
    service: CheckService,
) -> None:
    checker = service.engine
    assert isinstance(checker, FakeChecker)
    checker.gate = gate = Gate()
    bob = await submit(service, Post(text=POST), BOB)
    await gate.held(1)
    carol = await submit(service, Post(text=POST), CAROL)  # not Bob's: a run of her own
    await gate.held(2)
    group = await submit(service, Post(text=POST), GROUP)
    await gate.held(3)
    key = await submit(service, Post(text=POST), KEY)  # joins the group's run
    other_group = await submit(service, Post(text=POST), OTHER_GROUP)  # so does it
    gate.open()
    outcomes = await asyncio.gather(
        *(handle.result() for handle in (bob, carol, group, key, other_group))
    )
    assert runs(service) == 3
    bobs, carols, groups, keys, others = outcomes
    assert (bobs.repeat_kind, carols.repeat_kind, groups.repeat_kind) == (None, None, None)
    for joined in (keys, others):
        assert (joined.repeat_kind, joined.original_id) == ("exact", groups.check_id)
        assert joined.report == as_seen_elsewhere(groups.report)
        nothing_of_the_post(joined)


async def test_a_card_corrected_in_another_chat_reads_as_that_chat_is_shown_it(
    service: CheckService,
) -> None:
    """A correction edits each chat's card from the check whose word is in force (a
    newer recheck, the operator's own): in another chat, as that chat is shown it."""
    checker = service.engine
    assert isinstance(checker, FakeChecker)
    checker.verdict = "scam"  # its card lists the signs triage saw in the post
    first = await ask(service, GROUP)
    bobs = (BOB.platform, service.namer.chat(BOB.platform, BOB.chat_id))
    own = _card(card_state(service.store, first.check_id))
    elsewhere = _card(card_state(service.store, first.check_id, seen_from=bobs))
    assert own is not None and any(note.startswith("Signs:") for note in own.notes)
    assert elsewhere is not None and elsewhere.verdict == own.verdict == "scam"
    assert not any(note.startswith("Signs:") for note in elsewhere.notes)


def _card(state: CardState | None) -> VerdictCard | None:
    return None if state is None else card_of(state)
