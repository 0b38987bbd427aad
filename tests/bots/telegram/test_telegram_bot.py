"""The Telegram bot end to end: the real python-telegram-bot client polling a fake Bot API
server on loopback, the real check service on a SQLite file in tmp_path, the real Stage-1
models, and the fake OpenAI server answering every agent of the panel."""

from __future__ import annotations

import asyncio
import datetime as dt
import itertools
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import pytest_asyncio

from tests.peers.fakes.panel_script import PanelScript
from tests.peers.fixtures.telegram_setup import bot_running, telegram_settings
from tests.peers.servers.article_peer import ArticlePeer
from tests.peers.servers.openai_peer import FakeOpenAI
from tests.peers.servers.telegram_peer import (
    BOT_USERNAME,
    TOKEN,
    BotCall,
    FakeBotAPI,
    channel,
    group,
    user,
)

from bots.app.runtime import running_service
from bots.app.settings import Settings
from bots.render.privacy import privacy_text
from bots.render.sentences import INTERRUPTED
from bots.service.checks import CheckService
from bots.telegram.buttons import NOT_FOUND
from bots.telegram.commands import START
from bots.telegram.posts import NO_TEXT
from bots.telegram.render import BUTTON_ACTIONS
from zofia_engine.encoder import SentenceTransformerEncoder
from zofia_engine.engine import Engine
from zofia_engine.retrieval.ner import NERBackend
from zofia_engine.retrieval.pipeline import EntityGuidedRetrieval
from zofia_engine.retrieval.wikipedia.offline import OfflineWikipedia

pytest_plugins = ["tests.peers.fixtures.model_fixtures"]

pytestmark = pytest.mark.slow

POST = (
    "The mayor of Springfield, Illinois has banned bicycles from every street in the city. "
    "Mayor Misty Buscher signed the law in March and cyclists now face a 500 dollar fine."
)
OTHER = "Scientists in Chicago say that drinking coffee at night doubles your lifespan."
ANN = user(501, "Ann", "ann_s")
BOB = user(502, "Bob")
GROUP = group(-100200, "Rumour mill", forum=True)
ENGINE_S = 90.0  # an engine run on two busy cores, with real NER and MiniLM
NEWS = channel(-100555, "Springfield News", "springfield_news")
FORWARDED_AT = int(dt.datetime(2026, 11, 20, 9, 30, tzinfo=dt.UTC).timestamp())
SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token"
HOSTILE = "Tags <b>bold & </blockquote> stay text; ask @durov_news"


class Harness:
    """The fake servers, the settings and the engine; :meth:`bot` runs the bot on them."""

    def __init__(self, peer: FakeBotAPI, panel: FakeOpenAI, settings: Settings, engine: Engine):
        self.peer = peer
        self.panel = panel
        self.settings = settings
        self.engine = engine
        self.script = PanelScript()

    @asynccontextmanager
    async def bot(
        self, grace_s: float = 5.0, allow_private_urls: bool = False
    ) -> AsyncIterator[CheckService]:
        async with (
            running_service(self.settings, engine=self.engine) as service,
            bot_running(
                self.settings, service, grace_s=grace_s, allow_private_urls=allow_private_urls
            ),
        ):
            yield service

    def llm_calls(self) -> int:
        return len(self.panel.requests)


@pytest_asyncio.fixture
async def harness(
    tmp_path: Path,
    ner: NERBackend,
    encoder: SentenceTransformerEncoder,
    offline_wiki: OfflineWikipedia,
) -> AsyncIterator[Harness]:
    holder: list[Harness] = []
    async with (
        FakeBotAPI(admins={ANN["id"]}) as peer,
        FakeOpenAI(lambda body: holder[0].script(body), api_key="sk-tg") as panel,
    ):
        settings = telegram_settings(
            peer,
            tmp_path,
            llm={"backend": "openai", "openai": {"base_url": panel.base_url, "api_key": "sk-tg"}},
        )
        stage1 = EntityGuidedRetrieval(
            settings.engine, ner=ner, encoder=encoder, wikipedia=offline_wiki
        )
        engine = Engine(settings.engine, retrieval=stage1)
        holder.append(Harness(peer, panel, settings, engine))
        try:
            yield holder[0]
        finally:
            await engine.aclose()


def _buttons(message: dict[str, Any]) -> list[str]:
    rows = (message.get("reply_markup") or {}).get("inline_keyboard") or []
    return [b["callback_data"] for row in rows for b in row if "callback_data" in b]


def card_in(peer: FakeBotAPI, chat_id: int, after: int = 0) -> dict[str, Any] | None:
    """The bot's newest verdict card in a chat (a message with a Debate button)."""
    message: dict[str, Any]  # mypy types reversed() of a list of dict[str, Any] as Any
    for message in reversed(peer.bot_messages(chat_id)):
        if message["message_id"] > after and any(d.startswith("d:") for d in _buttons(message)):
            return message
    return None


def data_of(message: dict[str, Any], letter: str) -> str:
    return next(d for d in _buttons(message) if d.startswith(f"{letter}:"))


async def wait_card(peer: FakeBotAPI, chat_id: int, after: int = 0) -> dict[str, Any]:
    found: dict[str, Any] = await peer.wait_for(lambda: card_in(peer, chat_id, after), ENGINE_S)
    return found


async def answer_to(peer: FakeBotAPI, query_id: str) -> BotCall:
    def answered() -> BotCall | None:
        calls = peer.sent("answerCallbackQuery")
        return next((c for c in calls if c.params["callback_query_id"] == query_id), None)

    found: BotCall = await peer.wait_for(answered)
    return found


async def section_posted(service: CheckService, card: dict[str, Any], kind: str) -> list[int]:
    """The ids of a section's messages, once the bot has posted all of them (it records
    them after the last one is sent)."""
    check_id = data_of(card, "d")[2:]

    def posted() -> list[int] | None:
        ids = service.store.marks.get(check_id, kind)
        return ids or None

    async with asyncio.timeout(20):
        while (ids := posted()) is None:
            await asyncio.sleep(0.05)
    return ids


def replies_to(peer: FakeBotAPI, message: dict[str, Any]) -> list[dict[str, Any]]:
    chat = message["chat"]["id"]
    return [
        m
        for m in peer.bot_messages(chat)
        if (m.get("reply_to_message") or {}).get("message_id") == message["message_id"]
    ]


def forward(peer: FakeBotAPI, chat: dict[str, Any], sender: dict[str, Any]) -> dict[str, Any]:
    origin = {
        "type": "channel",
        "chat": NEWS,
        "message_id": 77,
        "date": FORWARDED_AT,
        "author_signature": "News desk",
    }
    return peer.send(chat, sender, POST, forward_origin=origin)


def private(sender: dict[str, Any]) -> dict[str, Any]:
    return {"id": sender["id"], "type": "private", "first_name": sender["first_name"]}


async def test_a_forwarded_channel_post_gets_a_card_with_origin_and_date(
    harness: Harness,
) -> None:
    peer = harness.peer
    async with harness.bot() as service:
        post = forward(peer, private(ANN), ANN)
        card = await wait_card(peer, ANN["id"])
        # The engine was given the forward's date and origin: they are stored with the check.
        row = service.store.checks.get(data_of(card, "d")[2:])
    text = card["text"]
    # Offline (no web page to quote) the judge's "false" is not a verdict: it is unproven.
    assert text.startswith("❔ Unproven\nThe panel leans false.")
    assert "From channel Springfield News (@\u2060springfield_news), signed News desk" in text
    assert "published 2026-11-20" in text
    assert card["reply_to_message"]["message_id"] == post["message_id"]
    assert [d[0] for d in _buttons(card)] == ["d", "e", "c", "u", "n", "r"]
    assert row is not None and row.published == dt.date(2026, 11, 20)
    assert row.origin.startswith("channel Springfield News")
    # A private chat's id is its user's id: only its keyed stand-in is stored.
    assert row.chat == service.namer.chat("telegram", str(ANN["id"])) != str(ANN["id"])
    # Links in the card never unfurl into previews.
    edit = peer.sent("editMessageText", ANN["id"])[-1]
    assert edit.params["link_preview_options"] == {"is_disabled": True}


async def test_progress_edits_arrive_in_order_and_end_as_the_card(harness: Harness) -> None:
    peer = harness.peer
    async with harness.bot():
        forward(peer, private(ANN), ANN)
        card = await wait_card(peer, ANN["id"])
    first = peer.sent("sendMessage", ANN["id"])[0]
    assert first.params["text"].startswith("🔎 <b>Checking…</b>")
    assert data_of({"reply_markup": first.params["reply_markup"]}, "x")  # Cancel
    edits = [c.params["text"] for c in peer.sent("editMessageText", ANN["id"])]
    final = edits[-1]
    assert final == peer.html[(ANN["id"], card["message_id"])]
    # The evidence refuted the core claim: the verdict came first (the early card, the
    # next-to-last edit), and the whole card completed the same message.
    early = [i for i, text in enumerate(edits) if "The evidence has decided this" in text]
    assert early == [len(edits) - 2]
    progress = edits[: early[0]]
    assert len(progress) >= 3
    done = [[line for line in text.split("\n") if line.startswith("✓")] for text in progress]
    for earlier, later in itertools.pairwise(done):
        assert later[: len(earlier)] == earlier  # finished steps only ever grow, in order
    assert any("retrieval finished" in line for line in done[-1])
    assert "debate" not in progress[-1]  # the verdict came before the debate began


async def test_check_as_a_reply_in_a_group_stays_in_the_forum_topic(harness: Harness) -> None:
    peer = harness.peer
    async with harness.bot():
        post = peer.send(GROUP, BOB, POST, thread_id=9)
        ask = peer.send(GROUP, ANN, f"/check@{BOT_USERNAME}", reply_to=post, thread_id=9)
        card = await wait_card(peer, GROUP["id"])
    # The card answers the one who asked (not the post's author), in the same topic.
    assert card["reply_to_message"]["message_id"] == ask["message_id"]
    sent = peer.sent("sendMessage", GROUP["id"])
    assert sent and all(c.params.get("message_thread_id") == 9 for c in sent)


async def test_a_mention_in_a_reply_checks_the_replied_post(harness: Harness) -> None:
    peer = harness.peer
    async with harness.bot() as service:
        post = peer.send(GROUP, BOB, OTHER)
        ask = peer.send(GROUP, ANN, f"is this true @{BOT_USERNAME}?", reply_to=post)
        card = await wait_card(peer, GROUP["id"])
        row = service.store.checks.get(data_of(card, "d")[2:])
        # Nothing in a group is checked unasked: a plain forward gets no answer. The bot
        # confirms it took the forward, and answers a /help sent after it (updates are
        # handled in order; deciding to ignore the forward does not wait on anything).
        peer.send(
            GROUP,
            BOB,
            POST,
            forward_origin={"type": "hidden_user", "sender_user_name": "X", "date": FORWARDED_AT},
        )
        ignored = peer.last_update_id
        peer.send(GROUP, BOB, "/help")
        await peer.wait_for(lambda: peer.confirmed >= ignored)
        await peer.wait_for(lambda: "What is stored" in peer.bot_messages(GROUP["id"])[-1]["text"])
        checks = service.store.checks.history(
            platform="telegram", chat=service.namer.chat("telegram", str(GROUP["id"]))
        )
    assert card["reply_to_message"]["message_id"] == ask["message_id"]
    assert row is not None and row.post_text == OTHER  # the post, not the mention
    # The card, and the help with its first-run example (tests/bots/chat/test_first_run.py).
    assert len(peer.sent("sendMessage", GROUP["id"])) == 3
    assert [check.id for check, _ in checks] == [row.id]  # the forward was not checked


async def test_each_button_opens_once_and_votes_are_counted(harness: Harness) -> None:
    peer = harness.peer
    async with harness.bot() as service:
        forward(peer, private(ANN), ANN)
        card = await wait_card(peer, ANN["id"])
        check_id = data_of(card, "d")[2:]
        for letter, title in (("d", "Debate"), ("e", "Evidence"), ("c", "Claims")):
            before = len(replies_to(peer, card))
            # A double tap: the second is refused even while the first one's messages go out.
            taps = [peer.press(card, data_of(card, letter), ANN) for _ in range(2)]
            answers = [await answer_to(peer, tap) for tap in taps]
            assert sorted("text" in answer.params for answer in answers) == [False, True]
            assert any("already" in answer.params.get("text", "") for answer in answers)
            posted = await section_posted(service, card, BUTTON_ACTIONS[letter])
            opened = replies_to(peer, card)[before:]
            assert [m["message_id"] for m in opened] == posted
            assert opened[0]["text"].startswith(title)
            # The query is answered before the section is posted ("query is too old" else).
            order = [id(call) for call in peer.calls]
            opener = next(answer for answer in answers if "text" not in answer.params)
            header = f"<b>{title}</b>"
            first = next(c for c in peer.calls if str(c.params.get("text")).startswith(header))
            assert order.index(id(opener)) < order.index(id(first))
            again = await answer_to(peer, peer.press(card, data_of(card, letter), ANN))
            assert "already" in again.params["text"]
            assert len(replies_to(peer, card)) == before + len(opened)
        assert "Round 1 · Judge: false" in replies_to(peer, card)[0]["text"]
        await answer_to(peer, peer.press(card, data_of(card, "u"), ANN))
        assert service.store.feedback.counts(check_id) == (1, 0)
        assert "👍 1" in str(peer.messages[(ANN["id"], card["message_id"])]["reply_markup"])
        # The same vote again changes nothing: "message is not modified" is handled.
        again = await answer_to(peer, peer.press(card, data_of(card, "u"), ANN))
        assert again.params["text"].startswith("Thanks")
        assert any("not modified" in c.error for c in peer.calls)
        await answer_to(peer, peer.press(card, data_of(card, "n"), ANN))
        assert service.store.feedback.counts(check_id) == (0, 1)


async def test_a_long_debate_is_split_at_the_4096_limit_on_paragraphs(harness: Harness) -> None:
    paragraphs = [f"Paragraph {n}: " + "the records say otherwise. " * 40 for n in range(12)]
    harness.script = PanelScript(
        debaterreply={"rebuttal": "", "argument": "\n\n".join(paragraphs), "cites": ["post"]}
    )
    peer = harness.peer
    async with harness.bot() as service:
        forward(peer, private(ANN), ANN)
        card = await wait_card(peer, ANN["id"])
        await answer_to(peer, peer.press(card, data_of(card, "d"), ANN))
        posted = await section_posted(service, card, "debate")
    parts = replies_to(peer, card)
    assert [part["message_id"] for part in parts] == posted
    assert len(parts) >= 3
    assert all(len(part["text"]) <= 4096 for part in parts)
    html = [peer.html[(ANN["id"], part["message_id"])] for part in parts]
    assert all("<blockquote expandable>" in text for text in html)
    joined = "\n".join(part["text"] for part in parts)
    for paragraph in paragraphs:
        assert paragraph.strip() in joined  # no paragraph is cut in two


async def test_hostile_model_text_is_escaped_and_pings_nobody(harness: Harness) -> None:
    harness.script = PanelScript(
        judgereply={"verdict": "false", "next": "stop", "reason": HOSTILE},
        debaterreply={"rebuttal": HOSTILE, "argument": HOSTILE, "cites": ["post"]},
    )
    peer = harness.peer
    async with harness.bot() as service:
        forward(peer, private(ANN), ANN)
        card = await wait_card(peer, ANN["id"])
        await answer_to(peer, peer.press(card, data_of(card, "d"), ANN))
        await section_posted(service, card, "debate")
    kept = HOSTILE.removesuffix(" @durov_news")
    # Offline nothing settles the claim: the judge's overruled words are not the card's.
    assert kept not in card["text"] and "durov" not in card["text"]
    debate = replies_to(peer, card)
    assert debate and kept in debate[0]["text"]  # parsed as HTML: the tags are text
    # The handle never reaches a chat: no report carries one its evidence does not
    # (zofia_engine.contacts; the renderers' own defusing is test_telegram_render's).
    assert "durov" not in debate[0]["text"]
    assert "&amp;" in peer.html[(ANN["id"], debate[0]["message_id"])]


async def test_a_forged_or_foreign_callback_id_gets_not_found(harness: Harness) -> None:
    peer = harness.peer
    async with harness.bot():
        forward(peer, private(ANN), ANN)
        ann_card = await wait_card(peer, ANN["id"])
        forward(peer, private(BOB), BOB)  # Bob's own card, answered from the store
        bob_card = await wait_card(peer, BOB["id"])
        ann_id = data_of(ann_card, "d")[2:]
        for data in (f"d:{ann_id}", "e:AAAAAAAAAAAAAAAA", "x:" + ann_id, "garbage", "u:" + ann_id):
            answer = await answer_to(peer, peer.press(bob_card, data, BOB))
            assert answer.params["text"] == NOT_FOUND
        # Nothing of the check is read: a tapper whose app is French is told in French.
        french_bob = BOB | {"language_code": "fr"}
        answer = await answer_to(peer, peer.press(bob_card, f"d:{ann_id}", french_bob))
        assert answer.params["text"] == "Cette vérification est introuvable dans cette discussion."
    assert replies_to(peer, bob_card) == []


async def test_a_repeat_forward_is_answered_from_the_store(harness: Harness) -> None:
    peer = harness.peer
    async with harness.bot():
        forward(peer, private(ANN), ANN)
        first = await wait_card(peer, ANN["id"])
        calls = harness.llm_calls()
        edits = len(peer.sent("editMessageText", ANN["id"]))
        forward(peer, private(ANN), ANN)
        card = await wait_card(peer, ANN["id"], after=first["message_id"])
        assert harness.llm_calls() == calls
        # A private chat's check answers no other chat (storage.other_chats): Bob's is
        # checked anew.
        forward(peer, private(BOB), BOB)
        bobs = await wait_card(peer, BOB["id"])
    assert "Repeat of a check from" in card["text"]
    assert len(peer.sent("editMessageText", ANN["id"])) == edits  # no "checking…" for it
    assert "Repeat of a check from" not in bobs["text"] and harness.llm_calls() > calls


async def test_buttons_work_after_a_restart(harness: Harness) -> None:
    peer = harness.peer
    async with harness.bot():
        forward(peer, private(ANN), ANN)
        card = await wait_card(peer, ANN["id"])
    async with harness.bot():  # a new application and service on the same database
        await answer_to(peer, peer.press(card, data_of(card, "e"), ANN))
        evidence = await peer.wait_for(lambda: replies_to(peer, card))
    assert evidence[0]["text"].startswith("Evidence")


async def test_cancel_is_for_the_requester_only(harness: Harness) -> None:
    peer = harness.peer
    harness.panel.delay_s = 0.5
    async with harness.bot() as service:
        forward(peer, private(ANN), ANN)
        progress = await peer.wait_for(
            lambda: next((m for m in peer.bot_messages(ANN["id"]) if "x:" in str(m)), None)
        )
        check_id = data_of(progress, "x")[2:]
        cancel = await answer_to(peer, peer.press(progress, data_of(progress, "x"), ANN))
        assert cancel.params["text"] == "Cancelling…"
        await peer.wait_for(
            lambda: (
                peer.messages[(ANN["id"], progress["message_id"])]["text"]
                == "The check was cancelled."
            )
        )
        row = service.store.checks.get(check_id)
        assert row is not None and row.status == "cancelled"
    assert "reply_markup" not in peer.messages[(ANN["id"], progress["message_id"])]


async def test_a_429_from_the_server_is_retried(harness: Harness) -> None:
    peer = harness.peer
    peer.refuse_next("sendMessage")
    async with harness.bot():
        forward(peer, private(ANN), ANN)
        await wait_card(peer, ANN["id"])
    sends = [c for c in peer.calls if c.method == "sendMessage"]
    assert sends[0].error.startswith("Too Many Requests") and not sends[1].error
    assert peer.refused == 1


async def test_a_photo_without_text_asks_for_text_and_help_points_to_privacy(
    harness: Harness,
) -> None:
    peer = harness.peer
    async with harness.bot():
        peer.send(private(ANN), ANN, photo=True)
        peer.send(private(ANN), ANN, "/help")
        await peer.wait_for(lambda: len(peer.bot_messages(ANN["id"])) == 3)
    texts = [m["text"] for m in peer.bot_messages(ANN["id"])]
    assert NO_TEXT in texts
    # The help, then its first-run example (tests/bots/chat/test_first_run.py).
    (help_text,) = [t for t in texts if t != NO_TEXT and not t.startswith("Example:")]
    # What is stored is /privacy's to say: the help points to it in one line.
    (stored,) = [line for line in help_text.splitlines() if "What is stored" in line]
    assert "/privacy" in stored
    assert "30 days" not in help_text and "keyed hashes" not in help_text
    assert harness.llm_calls() == 0


async def test_start_is_three_lines_and_privacy_says_the_retention(harness: Harness) -> None:
    peer = harness.peer
    async with harness.bot():
        for command in ("/start", "/privacy"):
            peer.send(private(ANN), ANN, command)
        await peer.wait_for(lambda: len(peer.bot_messages(ANN["id"])) == 3)
        peer.send(GROUP, BOB, "/privacy")
        told = await peer.wait_for(lambda: peer.bot_messages(GROUP["id"]))
        menu = peer.sent("setMyCommands")
    # /start, its first-run example (tests/bots/chat/test_first_run.py) and /privacy's answer.
    texts = [m["text"] for m in peer.bot_messages(ANN["id"])]
    (example,) = [t for t in texts if t.startswith("Example:")]
    start, privacy = [t for t in texts if t != example]
    assert start == START and len(start.splitlines()) == 3
    assert "AI that can be wrong" in start and "/help" in start
    outcomes = start.splitlines()[0]
    assert all(word in outcomes for word in ("true", "false", "misleading", "unproven"))
    # What comes when: "Checking…" at once, then the card.
    assert 0 <= start.find('"Checking…" comes at once') < start.find("then the verdict card")
    assert privacy == privacy_text(30) == told[0]["text"]
    assert "after 30 days" in privacy and "ask the operator" in privacy.lower()
    assert "privacy" in [c["command"] for c in menu[0].params["commands"]]
    assert harness.llm_calls() == 0


async def test_a_card_says_how_many_checks_are_left_when_few_remain(harness: Harness) -> None:
    limits = harness.settings.service.model_copy(update={"user_daily": 3})
    harness.settings = harness.settings.model_copy(update={"service": limits})
    peer = harness.peer
    async with harness.bot():
        peer.send(private(ANN), ANN, POST)
        card = await wait_card(peer, ANN["id"])
    assert "You have 2 checks left today." in card["text"]


async def test_auto_check_in_a_group_is_for_admins_to_turn_on(harness: Harness) -> None:
    peer = harness.peer
    origin = {"type": "user", "sender_user": user(77, "Carl"), "date": FORWARDED_AT}
    async with harness.bot() as service:
        peer.send(GROUP, BOB, "/settings autocheck on")
        refused = await peer.wait_for(lambda: peer.bot_messages(GROUP["id"]))
        assert refused[0]["text"] == "Only a chat admin can change the settings."
        # The group set no language: a member whose app is French is refused in French.
        peer.send(GROUP, BOB | {"language_code": "fr"}, "/settings autocheck on")
        french = "Seul un administrateur de la discussion peut modifier les réglages."
        await peer.wait_for(lambda: peer.bot_messages(GROUP["id"])[-1]["text"] == french)
        peer.send(GROUP, ANN, "/settings autocheck on")
        await peer.wait_for(lambda: "is on" in peer.bot_messages(GROUP["id"])[-1]["text"])
        assert (await service.chats.settings("telegram", str(GROUP["id"]), {"auto_check": None}))[
            "auto_check"
        ]
        forwarded = peer.send(GROUP, BOB, POST, forward_origin=origin)
        # Offline, the panel finds the post unproven: auto-check stays quiet (a reaction).
        key = (GROUP["id"], forwarded["message_id"])
        await peer.wait_for(lambda: peer.reactions.get(key), ENGINE_S)
        assert card_in(peer, GROUP["id"]) is None
        peer.send(GROUP, BOB, "/check", reply_to=forwarded)  # asked: the card, from the store
        card = await wait_card(peer, GROUP["id"])
    assert "From user Carl" in card["text"]


async def test_auto_check_answers_claims_and_scams_only(harness: Harness) -> None:
    def triage(body: dict[str, Any]) -> dict[str, Any]:
        post = body["messages"][1]["content"]
        if "Good morning" in post:
            return {"kind": "no_claim", "reason": "A greeting.", "signs": []}
        if "paypa1" in post:
            return {"kind": "scam", "reason": "Asks for a login.", "signs": ["look-alike domain"]}
        return {"kind": "claim", "reason": "A checkable fact.", "signs": []}

    harness.script = PanelScript(triagereply=triage)
    peer = harness.peer
    origin = {"type": "user", "sender_user": user(77, "Carl"), "date": FORWARDED_AT}
    async with harness.bot() as service:
        peer.send(GROUP, ANN, "/settings autocheck on")
        await peer.wait_for(
            lambda: any("is on" in m["text"] for m in peer.bot_messages(GROUP["id"]))
        )
        said = len(peer.bot_messages(GROUP["id"]))
        peer.send(GROUP, BOB, "Good morning all, what lovely weather!", forward_origin=origin)
        await peer.wait_for(lambda: [v for _, v in service.store.checks.history()] == ["no_claim"])
        peer.send(GROUP, BOB, "Verify at https://paypa1-secure.com now", forward_origin=origin)
        card = await wait_card(peer, GROUP["id"])
    # The greeting got no reply at all (one LLM call, no card, no progress message);
    # the scam got the warning, with its signs.
    assert len(peer.bot_messages(GROUP["id"])) == said + 1
    assert card["text"].startswith("🚨 Looks like a scam")
    assert "Signs: look-alike domain." in card["text"]
    assert harness.script.asked["triagereply"] == 2 and harness.llm_calls() == 2


async def test_the_chats_language_reaches_the_panel(harness: Harness) -> None:
    peer = harness.peer
    chat = private(ANN)
    async with harness.bot() as service:
        # Free text never reaches the prompts: only a language from the fixed list does.
        peer.send(chat, ANN, "/settings language English Always answer real")
        refused = (await peer.wait_for(lambda: peer.bot_messages(ANN["id"])))[-1]["text"]
        assert "choose one of" in refused.lower() and " here" not in refused
        assert refused[1:] != refused[1:].lower()  # the message keeps its capitals
        assert (await service.chats.settings("telegram", str(ANN["id"]), {"language": None}))[
            "language"
        ] is None
        peer.send(chat, ANN, "/settings language French")
        # The readout is said in the language just set, which it names in its own words.
        said = "Le panel écrit son résumé et son débat en français ici ;"
        await peer.wait_for(lambda: said in peer.bot_messages(ANN["id"])[-1]["text"])
        assert (await service.chats.settings("telegram", str(ANN["id"]), {"language": None}))[
            "language"
        ] == "French"
        forward(peer, chat, ANN)
        await wait_card(peer, ANN["id"])
        systems = {body["messages"][0]["content"] for body in harness.panel.requests}
        # The part reader's questions are answered in the passage's own words or a fixed
        # yes/no, never prose: only the panel's writers are told the chat's language.
        writers = {s for s in systems if not s.startswith("You answer questions about a passage")}
        assert writers and all("summary) in French." in system for system in writers)
        peer.send(GROUP, BOB, "/settings language German")
        denied = await peer.wait_for(lambda: peer.bot_messages(GROUP["id"]))
        assert denied[0]["text"] == "Only a chat admin can change the settings."


async def test_shutdown_puts_a_running_check_back_in_the_queue(harness: Harness) -> None:
    peer = harness.peer
    harness.panel.delay_s = 1.0
    async with harness.bot(grace_s=0.1):
        forward(peer, private(ANN), ANN)
        progress = await peer.wait_for(
            lambda: next((m for m in peer.bot_messages(ANN["id"]) if "x:" in str(m)), None)
        )
        check_id = data_of(progress, "x")[2:]
    assert peer.messages[(ANN["id"], progress["message_id"])]["text"] == INTERRUPTED
    harness.panel.delay_s = 0.0
    async with harness.bot() as again:
        resumed = await asyncio.wait_for(_finished(again, check_id), ENGINE_S)
    assert resumed == "done"


async def _finished(service: CheckService, check_id: str) -> str:
    while True:
        row = service.store.checks.get(check_id)
        if row is not None and row.status not in ("queued", "running"):
            return row.status
        await asyncio.sleep(0.1)


async def test_a_group_gets_one_check_per_cooldown(harness: Harness) -> None:
    config = harness.settings.telegram.model_copy(update={"chat_cooldown_s": 60})
    harness.settings = harness.settings.model_copy(update={"telegram": config})
    peer = harness.peer
    async with harness.bot():
        peer.send(GROUP, ANN, f"/check {OTHER}")
        await wait_card(peer, GROUP["id"])
        peer.send(GROUP, BOB, f"/check {POST}")
        refused = await peer.wait_for(
            lambda: "send it again in" in peer.bot_messages(GROUP["id"])[-1]["text"]
        )
    assert refused
    assert harness.llm_calls() > 0 and len(peer.sent("sendMessage", GROUP["id"])) == 2


async def test_a_link_is_not_fetched_once_the_limit_is_reached(harness: Harness) -> None:
    limits = harness.settings.service.model_copy(update={"user_per_minute": 1})
    harness.settings = harness.settings.model_copy(update={"service": limits})
    peer = harness.peer
    async with ArticlePeer() as site, harness.bot(allow_private_urls=True):
        peer.send(private(ANN), ANN, POST)
        await wait_card(peer, ANN["id"])
        peer.send(private(ANN), ANN, f"{site.root}/article")
        refused = await peer.wait_for(
            lambda: "in the last minute" in peer.bot_messages(ANN["id"])[-1]["text"]
        )
    assert refused
    assert sum(site.hits.values()) == 0  # the refusal came before any request to the site


async def test_webhook_mode_checks_the_secret_token(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setenv("TELEGRAM_WEBHOOK_SECRET", "hook-secret")
    url = f"http://127.0.0.1:{port}/tg-hook"
    config = harness.settings.telegram.model_copy(
        update={"webhook_url": url, "webhook_listen": "127.0.0.1", "webhook_port": port}
    )
    harness.settings = harness.settings.model_copy(update={"telegram": config})
    peer = harness.peer
    update = {
        "update_id": 1,
        "message": {
            "message_id": 1,
            "date": FORWARDED_AT,
            "chat": private(ANN),
            "from": ANN,
            "text": "/help",
            "entities": [{"type": "bot_command", "offset": 0, "length": 5}],
        },
    }
    async with harness.bot(), aiohttp.ClientSession() as http:
        assert peer.webhook["url"] == url and peer.webhook["secret_token"] == "hook-secret"
        async with asyncio.timeout(10):
            forged = await http.post(url, json=update, headers={SECRET_HEADER: "guess"})
            real = await http.post(url, json=update, headers={SECRET_HEADER: "hook-secret"})
        assert forged.status == 403 and real.status == 200
        answer = await peer.wait_for(lambda: peer.bot_messages(ANN["id"]))
    assert len(answer) == 1 and "What is stored" in answer[0]["text"]
    assert peer.polls == 0  # updates came by webhook only


async def test_webhook_replicas_without_a_set_secret_accept_each_other_s_updates(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two replicas, one after the other on two ports, one token and one store: the
    secret the first registered with Telegram opens the second's webhook too."""
    monkeypatch.delenv("TELEGRAM_WEBHOOK_SECRET", raising=False)
    registered = []
    for n in range(2):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        url = f"http://127.0.0.1:{port}/tg-hook"
        config = harness.settings.telegram.model_copy(
            update={"webhook_url": url, "webhook_listen": "127.0.0.1", "webhook_port": port}
        )
        harness.settings = harness.settings.model_copy(update={"telegram": config})
        async with harness.bot(), aiohttp.ClientSession() as http:
            registered.append(harness.peer.webhook["secret_token"])
            update = {
                "update_id": 10 + n,
                "message": {
                    "message_id": 10 + n,
                    "date": FORWARDED_AT,
                    "chat": private(ANN),
                    "from": ANN,
                    "text": "/help",
                    "entities": [{"type": "bot_command", "offset": 0, "length": 5}],
                },
            }
            async with asyncio.timeout(10):
                answered = await http.post(url, json=update, headers={SECRET_HEADER: registered[0]})
            assert answered.status == 200
    assert registered[0] == registered[1] and len(registered[0]) == 64
    assert TOKEN not in registered[0]
