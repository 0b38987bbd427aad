"""Share on Telegram (issue 40, item 3), as its users meet it: the real
python-telegram-bot client polling the fake Bot API on loopback, the real check service
on a SQLite file and a :class:`~tests.peers.fakes.fake_checker.FakeChecker`.

A card's Share button opens Telegram's share sheet with a deep link to the bot,
``https://t.me/<bot>?start=c_<token>``; the token is not the check id (the key of its
report page). Opened in another user's private chat, the link shows the check's card
there, made for that chat: its buttons and follow-ups work, its report link is its own,
and nothing of the chat it came from (the post's text, link and origin, that chat's
moderators' review, the check id) comes with it; only a named reviewer could review it.
Its row is dated as the check's original, so the purge takes both at once. A link
that opens nothing (mistyped, forged, purged) gets one sentence, and stores nothing.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
import pytest_asyncio

from tests.peers.fakes.fake_checker import FakeChecker, review_as
from tests.peers.fixtures.telegram_setup import fake_bot, handled, telegram_settings
from tests.peers.servers.telegram_peer import BOT_USERNAME, FakeBotAPI, channel, group, user

from bots.service.checks import CheckService
from bots.service.shown import report_of
from bots.telegram.reviews import REFUSED
from bots.telegram.share_links import share_token, shared_check_id
from bots.telegram.shared import NOT_SHARED

ANN = user(741, "Ann", "ann_r")
BOB = user(742, "Bob", "bob_k")
ANN_CHAT = {"id": ANN["id"], "type": "private", "first_name": "Ann"}
BOB_CHAT = {"id": BOB["id"], "type": "private", "first_name": "Bob"}
GROUP = group(-100741, "Rumour mill")
NEWS = channel(-1001741, "Rumour Daily", "rumour_daily")
POST = "The mayor of Springfield has banned bicycles from every street in the city."
PUBLIC = "https://factcheck.example.org"
Start = Callable[..., AbstractAsyncContextManager[tuple[FakeBotAPI, CheckService]]]


@pytest.fixture
def checker() -> FakeChecker:
    return FakeChecker()


@pytest_asyncio.fixture
async def start(tmp_path: Path, checker: FakeChecker) -> AsyncIterator[Start]:
    """The bot on a fake Bot API with report pages at :data:`PUBLIC`; yields the peer
    and the service."""

    @asynccontextmanager
    async def run(**service: Any) -> AsyncIterator[tuple[FakeBotAPI, CheckService]]:
        async with FakeBotAPI() as peer:
            settings = telegram_settings(
                peer, tmp_path, service=service, site={"public_url": PUBLIC}
            )
            async with fake_bot(settings, checker, refusal_window_s=0) as running:
                yield peer, running

    yield run


def _buttons(message: dict[str, Any]) -> list[dict[str, Any]]:
    rows = (message.get("reply_markup") or {}).get("inline_keyboard") or []
    return [button for row in rows for button in row]


def _check_id(message: dict[str, Any]) -> str:
    """The check id a card's buttons carry ("" for a message that is no card)."""
    for button in _buttons(message):
        found = re.fullmatch(r"d:(.+)", str(button.get("callback_data", "")))
        if found:
            return found[1]
    return ""


async def _card(peer: FakeBotAPI, chat_id: int, *, after: int = 0) -> dict[str, Any]:
    """The first card the bot shows in ``chat_id`` after message ``after``."""

    def found() -> dict[str, Any] | None:
        cards = [m for m in peer.bot_messages(chat_id) if _check_id(m)]
        return next((m for m in cards if m["message_id"] > after), None)

    card: dict[str, Any] = await peer.wait_for(found)
    return card


def _url(message: dict[str, Any], label: str) -> str:
    return next(str(b["url"]) for b in _buttons(message) if b["text"] == label and "url" in b)


def _deep_link(card: dict[str, Any]) -> str:
    """The deep link the card's Share button passes on, out of Telegram's share sheet."""
    share = urlsplit(_url(card, "Share"))
    assert (share.scheme, share.netloc, share.path) == ("https", "t.me", "/share/url")
    query = parse_qs(share.query)
    assert query["text"] == ["A fact-check of a post: open it to see the verdict and its sources."]
    [link] = query["url"]
    return link


def _start_parameter(link: str) -> str:
    parts = urlsplit(link)
    assert (parts.scheme, parts.netloc, parts.path) == ("https", "t.me", f"/{BOT_USERNAME}")
    [parameter] = parse_qs(parts.query)["start"]
    return parameter


async def _group_card(peer: FakeBotAPI, text: str = POST) -> dict[str, Any]:
    """Ann asks in the group about a post forwarded from a channel: its card."""
    origin = {"type": "channel", "chat": NEWS, "message_id": 7, "date": 1_790_000_000}
    post = peer.send(GROUP, ANN, text, forward_origin=origin)
    peer.send(GROUP, ANN, "/check", reply_to=post)
    return await _card(peer, GROUP["id"])


async def _open(peer: FakeBotAPI, parameter: str, chat: dict[str, Any] = BOB_CHAT) -> Any:
    """Bob opens a shared link: his client sends ``/start <parameter>``; the bot's
    next message in his chat."""
    last = max((m["message_id"] for m in peer.bot_messages(chat["id"])), default=0)
    peer.send(chat, BOB if chat is BOB_CHAT else ANN, f"/start {parameter}")
    return await peer.wait_for(
        lambda: next((m for m in peer.bot_messages(chat["id"]) if m["message_id"] > last), None)
    )


def _everything_in(peer: FakeBotAPI, chat_id: int) -> str:
    """All the bot said in a chat, as sent and as shown, with its buttons."""
    shown = [json.dumps(m) for m in peer.bot_messages(chat_id)]
    sent = [html for (chat, _), html in peer.html.items() if chat == chat_id]
    return "\n".join([*shown, *sent])


async def _tap(peer: FakeBotAPI, card: dict[str, Any], data: str) -> dict[str, Any]:
    """Bob taps a button of the card; the answer to his tap."""
    query = peer.press(card, data, BOB)
    answers = await peer.wait_for(
        lambda: [
            c for c in peer.sent("answerCallbackQuery") if c.params["callback_query_id"] == query
        ]
    )
    return dict(answers[0].params)


# ---- the token ---------------------------------------------------------------------------


def test_a_share_token_opens_only_with_its_secret_and_only_whole() -> None:
    check_id = "Zq3mP8xK2vLwT0aB"
    token = share_token(b"the store's secret", check_id)
    assert re.fullmatch(r"[A-Za-z0-9_-]{32}", token) and check_id not in token
    assert len(f"c_{token}") <= 64  # what a start parameter may hold
    assert share_token(b"the store's secret", check_id) == token  # derived, not stored
    assert shared_check_id(b"the store's secret", token) == check_id
    assert shared_check_id(b"another secret", token) is None
    for at in range(len(token)):  # any one character changed opens nothing
        changed = token[:at] + ("A" if token[at] != "A" else "B") + token[at + 1 :]
        assert shared_check_id(b"the store's secret", changed) is None
    for broken in ("", token[:-1], token + "A", token[:20], "c_" + token, "!" * 32):
        assert shared_check_id(b"the store's secret", broken) is None
    assert share_token(b"the store's secret", "Pk7nR2sW9dYcH4eF") != token


# ---- as users meet it --------------------------------------------------------------------


async def test_a_card_shared_from_a_group_opens_in_bobs_chat_as_a_card_of_his_own(
    start: Start, checker: FakeChecker
) -> None:
    async with start() as (peer, service):
        original = await _group_card(peer)
        original_id = _check_id(original)
        link = _deep_link(original)
        parameter = _start_parameter(link)
        shared = await _open(peer, parameter)
        shared_id = _check_id(shared)
        row = service.store.checks.get(shared_id)
        await handled(peer, service)
    # The link carries a token, not the check id, within what a start parameter allows.
    assert re.fullmatch(r"c_[A-Za-z0-9_-]{1,62}", parameter)
    assert original_id not in link and original_id not in _url(original, "Share")
    # Bob got the check's card, made for his chat: the same verdict and words, without
    # where the post was forwarded from (a detail of the chat it was shared from).
    assert shared["text"].startswith("❌ False") and shared_id and shared_id != original_id
    assert "Rumour Daily" in original["text"] and "Rumour Daily" not in shared["text"]
    assert shared["text"] == re.sub(r"\n\nFrom channel Rumour Daily[^\n]*", "", original["text"])
    labels = [b["text"] for b in _buttons(shared)]
    assert labels == ["Debate", "Evidence", "Claims", "👍", "👎", "Review", "Full report", "Share"]
    assert _url(shared, "Full report") == f"{PUBLIC}/c/{shared_id}"
    assert _start_parameter(_deep_link(shared)) != parameter  # his own card, his own link
    # Nothing in Bob's chat names the check he was shared; nothing new was checked.
    assert original_id not in _everything_in(peer, BOB["id"])
    assert len(checker.runs) == 1
    assert row is not None and row.repeat_of == original_id and row.status == "done"
    assert row.chat == service.namer.chat("telegram", str(BOB["id"]))
    assert row.requester == service.namer.user("telegram", str(BOB["id"]))


async def test_bobs_shared_card_works_as_any_card_in_his_chat_but_he_cannot_review_it(
    start: Start, checker: FakeChecker
) -> None:
    async with start() as (peer, service):
        original = await _group_card(peer)
        shared = await _open(peer, _start_parameter(_deep_link(original)))
        check_id = _check_id(shared)
        evidence = await _tap(peer, shared, f"e:{check_id}")
        section = await peer.wait_for(
            lambda: [m for m in peer.bot_messages(BOB["id"]) if m["text"].startswith("Evidence")]
        )
        vote = await _tap(peer, shared, f"u:{check_id}")
        voted = peer.messages[(BOB["id"], shared["message_id"])]
        review = await _tap(peer, shared, f"r:{check_id}")
        await handled(peer, service)
        question = peer.send(BOB_CHAT, BOB, "Which source says so?", reply_to=voted)
        answer = await peer.wait_for(
            lambda: [
                m
                for m in peer.bot_messages(BOB["id"])
                if (m.get("reply_to_message") or {}).get("message_id") == question["message_id"]
            ]
        )
        await handled(peer, service)
    assert (
        "text" not in evidence
        and section[0]["reply_to_message"]["message_id"] == (shared["message_id"])
    )
    assert vote["text"] == "Thanks, your vote is recorded."
    labels = [b["text"] for b in _buttons(voted)]
    assert "👍 1" in labels and "Share" in labels  # the vote keeps the Share button
    assert review["text"] == REFUSED and review["show_alert"] is True
    # A reply to the shared card is a question about the check, answered in Bob's chat.
    assert "The council's minutes show that no such law was passed" in answer[0]["text"]
    assert checker.questions == ["Which source says so?"] and len(checker.runs) == 1


async def test_the_groups_moderators_review_stays_in_the_group(start: Start) -> None:
    async with start() as (peer, service):
        original = await _group_card(peer)
        await review_as(
            service,
            _check_id(original),
            ("telegram", str(ANN["id"])),
            "true",
            "The council did vote on it.",
            chat_id=str(GROUP["id"]),
        )
        shared = await _open(peer, _start_parameter(_deep_link(original)))
        in_group = report_of(service.store, _check_id(original))
        await handled(peer, service)
    assert in_group is not None and in_group[1].verdict == "true"  # in force in the group
    assert shared["text"].startswith("❌ False")  # Bob sees the machine's verdict alone
    assert "moderators" not in shared["text"] and "council did vote" not in shared["text"]


async def test_a_link_that_opens_no_check_gets_one_sentence_and_stores_nothing(
    start: Start,
) -> None:
    async with start() as (peer, service):
        peer.send(ANN_CHAT, ANN, POST)
        card = await _card(peer, ANN["id"])
        parameter = _start_parameter(_deep_link(card))
        forged = "c_" + share_token(b"not the store's secret", _check_id(card))
        mangled = parameter[:-1] + ("A" if parameter[-1] != "A" else "B")
        said = [(await _open(peer, p))["text"] for p in (forged, mangled, "c_", "c_!!")]
        # A purged check (its text and report gone after the retention) opens nothing.
        service.store.purge(older_than=service.clock() + dt.timedelta(days=1))
        said.append((await _open(peer, parameter))["text"])
        await handled(peer, service)
        rows = service.store.checks.history(limit=10)
    assert said == [NOT_SHARED] * 5
    assert len(rows) == 1  # Ann's check alone: no card was made for Bob
    assert not [m for m in peer.bot_messages(BOB["id"]) if _check_id(m)]


async def test_opening_a_shared_card_counts_against_the_limits(start: Start) -> None:
    async with start(user_per_minute=1) as (peer, service):
        peer.send(ANN_CHAT, ANN, POST)
        parameter = _start_parameter(_deep_link(await _card(peer, ANN["id"])))
        first = await _open(peer, parameter)
        await handled(peer, service)
        second = await _open(peer, parameter)
        await handled(peer, service)
    assert _check_id(first)
    assert second["text"].startswith("You have asked for 1 check in the last minute")
    assert not _check_id(second)


async def test_start_with_a_share_parameter_in_a_group_is_the_plain_start(start: Start) -> None:
    async with start() as (peer, service):
        peer.send(ANN_CHAT, ANN, POST)
        parameter = _start_parameter(_deep_link(await _card(peer, ANN["id"])))
        peer.send(GROUP, BOB, f"/start {parameter}")
        await handled(peer, service)
    said = [m["text"] for m in peer.bot_messages(GROUP["id"])]
    assert said and said[0].startswith("I check whether a post is true")
    assert not [m for m in peer.bot_messages(GROUP["id"]) if _check_id(m)]


async def test_a_shared_card_keeps_nothing_of_the_post_and_goes_with_its_original(
    start: Start,
) -> None:
    async with start() as (peer, service):
        original = await _group_card(peer, f"{POST} https://rumours.example.org/bikes")
        source = service.store.checks.get(_check_id(original))
        parameter = _start_parameter(_deep_link(original))
        copies = []
        for _ in range(2):  # opened twice: each a card of its own, neither a new clock
            copy = service.store.checks.get(_check_id(await _open(peer, parameter)))
            await handled(peer, service)
            copies.append(copy)
        service.store.purge(older_than=service.clock() + dt.timedelta(days=1))
        purged = [service.store.checks.get(copy.id) for copy in copies if copy is not None]
        said = (await _open(peer, parameter))["text"]
        await handled(peer, service)
    assert source is not None and source.url == "https://rumours.example.org/bikes"
    assert source.post_text is not None and POST in source.post_text
    for copy in copies:
        assert copy is not None and copy.repeat_of == source.id
        assert (copy.post_text, copy.url, copy.origin, copy.text_hash) == ("", "", "", "")
        assert copy.created_at == source.created_at  # dated as the original
    # The purge that takes the original takes every copy of it at once.
    assert [row.post_text if row else "gone" for row in purged] == [None, None]
    assert said == NOT_SHARED
