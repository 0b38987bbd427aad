"""A blank post costs nothing: a post with no visible character (zero-width and filler
characters, U+3164 HANGUL FILLER, U+200B, U+2060, U+FEFF, U+115F/U+1160, U+3000) is
empty, in the engine's text cleaning, and refused before any rate limit counts it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from tests.peers.fakes.fake_checker import FakeChecker, fake_service, submit

from bots.app.settings import Settings
from bots.service.checks import CheckService
from bots.service.records import Requester
from bots.service.refusals import RateLimitedError
from zofia_engine.errors import InvalidPostError
from zofia_engine.post import Post
from zofia_engine.text import EMPTY_POST, checkable_text, clean_post, is_visible

BLANKS = [
    *("\u3164", "\u200b", "\u2060", "\ufeff", "\u115f", "\u1160", "\u3000", "\u2800"),
    *("\uffa0", "\u00ad"),
]


@pytest.mark.parametrize("blank", BLANKS)
def test_a_post_of_invisible_characters_is_empty(blank: str) -> None:
    assert not is_visible(blank) and is_visible(f"{blank}a")
    for text in (blank, blank * 5, f" {blank}\n\u200b{blank}\u200d ", f"<p>{blank}</p>"):
        assert clean_post(text)[0] == ""
        with pytest.raises(InvalidPostError) as refused:
            checkable_text(text)
        assert str(refused.value) == EMPTY_POST


def test_visible_text_keeps_its_characters_and_loses_the_blank_edges() -> None:
    assert clean_post("\u3164\u3164 Mayor bans bikes \u2060")[0] == "Mayor bans bikes"
    family = "👨\u200d👩\u200d👧"  # joined by zero-width joiners: one visible emoji
    assert clean_post(family)[0] == family and is_visible(family)
    assert clean_post("نعم\u200c")[0] == "نعم"
    assert clean_post("Read this\u00ad\u200d\ufeff")[0] == "Read this"


# England's flag: a black flag, then tag characters (format characters) and CANCEL TAG.
ENGLAND = "\U0001f3f4\U000e0067\U000e0062\U000e0065\U000e006e\U000e0067\U000e007f"


@pytest.mark.parametrize(
    "text",
    [
        f"Go team {ENGLAND}",
        f"{ENGLAND} wins",
        "He said \u2067مرحبا\u2069",  # a right-to-left isolate, closed by U+2069 at the end
        "\u2066Mayor bans bikes\u2069",
    ],
)
def test_format_characters_that_belong_to_the_text_stay_at_its_ends(text: str) -> None:
    assert clean_post(f" \u200b{text}\u2060 \n")[0] == text


@pytest_asyncio.fixture
async def service(tmp_path: Path) -> AsyncIterator[tuple[CheckService, FakeChecker]]:
    """The real service, started, on a fresh SQLite file; one check a day per user."""
    checker = FakeChecker()
    settings = Settings.model_validate(
        {
            "storage": {"path": str(tmp_path / "zofia.db"), "secret": "s3cret-for-tests-only"},
            "service": {"user_daily": 1},
        }
    )
    async with fake_service(settings, checker) as svc:
        yield svc, checker


async def test_a_blank_post_costs_nothing(service: tuple[CheckService, FakeChecker]) -> None:
    svc, checker = service
    asker = Requester("telegram", "1001", "chat-1")
    for blank in BLANKS:
        with pytest.raises(InvalidPostError, match="The post is empty"):
            await submit(svc, Post(text=blank * 3), asker)
    assert svc.store.checks.history() == [] and checker.runs == []
    # None of them counted against the one check a day this user may ask for: the post
    # after them is checked (by the fake, which calls every post false) and stored.
    text = "The mayor banned bicycles."
    outcome = await (await submit(svc, Post(text=text), asker)).result()
    assert (outcome.report.verdict, outcome.report.summary, outcome.repeat_kind) == (
        "false",
        f"Scripted verdict on: {text}",
        None,
    )
    assert [post.text for post in checker.runs] == [text]
    [(row, verdict)] = svc.store.checks.history()
    assert (row.id, row.post_text, row.status, verdict) == (outcome.check_id, text, "done", "false")
    with pytest.raises(RateLimitedError):  # that one did count
        await submit(svc, Post(text="The mayor banned cars."), asker)
