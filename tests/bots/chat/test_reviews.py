"""Moderator review on the platforms (issue 29 part 1), and its correction reaching every
chat that asked (part 2).

End to end against the fake platform servers: the real python-telegram-bot client
polling the fake Bot API, and the real discord.py client against the fake Discord, the
real check service on SQLite, and :class:`~tests.peers.fakes.fake_checker.FakeChecker` answering
every post (this proves who may review, what is stored and who is told, not that any
fact-checking happened). The store's side of corrections is
``tests/bots/service/test_corrections.py``.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.peers.fakes.fake_checker import FakeChecker, fake_service
from tests.peers.fakes.poll_rounds import PollRounds
from tests.peers.fixtures.telegram_setup import SECRET, fake_bot, telegram_settings
from tests.peers.servers.discord_peer import MANAGER, MEMBER, Call, FakeDiscord, running_client
from tests.peers.servers.telegram_peer import BotCall, FakeBotAPI, group, user

from bots.app.settings import Settings
from bots.chat.corrections import sender
from bots.discord import reviews as discord_reviews
from bots.discord.client import FactCheckBot
from bots.discord.corrections import send_correction
from bots.discord.render import escape
from bots.service import corrections
from bots.service.checks import CheckService
from bots.service.reviews import Reviewers
from bots.telegram.admins import KEEP_S, ChatAdmins
from bots.telegram.reviews import REFUSED, split_note
from storage.keys import hash_chat, hash_user

pytest_plugins = ["tests.peers.fixtures.discord_fixtures"]

POST = (
    "The mayor of Springfield, Illinois has banned bicycles from every street in the city. "
    "Mayor Misty Buscher signed the law in March and cyclists now face a 500 dollar fine."
)
NOTE = "The council minutes show no such vote."
LINK = "https://example.org/minutes"
UPDATE = f"Update: this post was changed from Unproven to False: {NOTE} ({LINK})"
CHAT_UPDATE = (
    f"Update: this chat's moderators changed this post from Unproven to False: {NOTE} ({LINK})"
)


def _settings(tmp_path: Path, **sections: Any) -> Settings:
    return Settings.model_validate(
        {
            "storage": {"path": str(tmp_path / "zofia.db"), "secret": SECRET},
            "service": {
                "user_per_minute": 100,
                "chat_per_minute": 100,
                **sections.pop("service", {}),
            },
            **sections,
        }
    )


# -- who reviews ----------------------------------------------------------------------------


def test_reviewers_named_in_the_settings_are_kept_as_hmacs(tmp_path: Path) -> None:
    settings = _settings(tmp_path, service={"reviewers": ["telegram:123", "discord:456"]})
    reviewers = Reviewers(settings.service.reviewers, SECRET.encode())
    assert reviewers.named("telegram", "123") and reviewers.named("discord", "456")
    assert not reviewers.named("discord", "123") and not reviewers.named("telegram", "1234")
    assert reviewers.hashes == {  # what the process holds: HMACs, never the ids
        hash_user(SECRET.encode(), "telegram", "123"),
        hash_user(SECRET.encode(), "discord", "456"),
    }
    with pytest.raises(ValueError, match="telegram:USER_ID"):
        _settings(tmp_path, service={"reviewers": ["tg:123"]})


def test_a_note_ends_with_its_link() -> None:
    assert split_note(f"{NOTE} {LINK}") == (NOTE, LINK)
    assert split_note("-") == ("", "")
    assert split_note(f"- {LINK}") == ("", LINK)
    assert split_note("  Old photo.  ") == ("Old photo.", "")


# -- Telegram --------------------------------------------------------------------------------

ANN = user(961, "Ann")  # an admin of the group
BOB, CAROL, DAVE = user(962, "Bob"), user(963, "Carol"), user(964, "Dave")
GROUP = group(-100960, "Rumour mill")


def _private(sender: dict[str, Any]) -> dict[str, Any]:
    return {"id": sender["id"], "type": "private", "first_name": sender["first_name"]}


def _data(message: dict[str, Any]) -> list[str]:
    rows = (message.get("reply_markup") or {}).get("inline_keyboard") or []
    return [button.get("callback_data", "") for row in rows for button in row]


def _cards(peer: FakeBotAPI, chat_id: int) -> list[dict[str, Any]]:
    return [m for m in peer.bot_messages(chat_id) if any(d.startswith("d:") for d in _data(m))]


def _updates(peer: FakeBotAPI, chat_id: int) -> list[dict[str, Any]]:
    return [m for m in peer.bot_messages(chat_id) if m["text"].startswith("Update:")]


def _replies(peer: FakeBotAPI, message: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        m
        for m in peer.bot_messages(message["chat"]["id"])
        if (m.get("reply_to_message") or {}).get("message_id") == message["message_id"]
    ]


async def _answer(peer: FakeBotAPI, query_id: str) -> BotCall:
    def answered() -> BotCall | None:
        calls = peer.sent("answerCallbackQuery")
        return next((c for c in calls if c.params["callback_query_id"] == query_id), None)

    found: BotCall = await peer.wait_for(answered)
    return found


@asynccontextmanager
async def _telegram(
    tmp_path: Path, reviewers: tuple[str, ...] = ()
) -> AsyncIterator[tuple[FakeBotAPI, CheckService]]:
    async with FakeBotAPI(admins={ANN["id"]}) as peer:
        limits = {"reviewers": list(reviewers), "user_daily": 50}  # the default daily limit
        settings = telegram_settings(peer, tmp_path, service=limits)
        # A review's few messages in a group are not about Telegram's group limit.
        checker = FakeChecker(verdict="unproven")
        async with fake_bot(settings, checker, group_max_rate=0) as service:
            yield peer, service


async def _ask_everywhere(peer: FakeBotAPI, service: CheckService) -> dict[int, dict[str, Any]]:
    """The post asked in the group (the original), then by Bob and Carol (repeats); each
    chat's card, once recorded."""
    post = peer.send(GROUP, DAVE, POST)
    peer.send(GROUP, ANN, "/check", reply_to=post)
    cards = {GROUP["id"]: (await peer.wait_for(lambda: _cards(peer, GROUP["id"])))[0]}
    for who in (BOB, CAROL):
        peer.send(_private(who), who, POST)
        cards[who["id"]] = (await peer.wait_for(functools.partial(_cards, peer, who["id"])))[0]
    await _recorded(service, 3)
    return cards


async def _recorded(service: CheckService, cards: int) -> None:
    """Wait until ``cards`` cards are recorded as shown (each is, once it is on screen)."""
    async with asyncio.timeout(10):
        while service.store.database.rows("SELECT count(*) FROM shown_cards") != [(cards,)]:
            await asyncio.sleep(0.05)


async def _review_in_group(peer: FakeBotAPI, card: dict[str, Any], check_id: str) -> str:
    """Ann (an admin of the group) reviews the group's card to False with the note and the
    link; the sentence she gets once it is saved."""
    await _answer(peer, peer.press(card, f"r:{check_id}", ANN))
    (choices,) = await peer.wait_for(lambda: _replies(peer, card))
    assert choices["text"].startswith("Review of this verdict (Unproven)")
    assert _data(choices) == [f"r{c}:{check_id}" for c in "ctfmux"]
    await _answer(peer, peer.press(choices, f"rf:{check_id}", ANN))
    (prompt,) = await peer.wait_for(lambda: _replies(peer, choices))
    asked = peer.sent("sendMessage", GROUP["id"])[-1]  # the prompt's call
    assert asked.params["reply_markup"] == {"force_reply": True, "selective": True}
    assert prompt["text"].startswith("Ann, reply to this message with a short note")
    note = peer.send(GROUP, ANN, f"{NOTE} {LINK}", reply_to=prompt)
    (saved,) = await peer.wait_for(lambda: _replies(peer, note))
    return str(saved["text"])


async def test_a_group_admins_review_changes_that_group_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A stranger can make herself the admin of a group: her review belongs to it. The
    group's card is edited and told once; the private chats shown the same verdict hear
    nothing and keep their card, and a later repeat elsewhere gets the machine's verdict."""
    monkeypatch.setattr(corrections, "POLL_S", 0.05)
    async with _telegram(tmp_path) as (peer, service):
        cards = await _ask_everywhere(peer, service)
        card = cards[GROUP["id"]]
        check_id = next(d for d in _data(card) if d.startswith("r:"))[2:]

        # Dave is no admin: his tap is refused in one sentence, and nothing is offered.
        refused = await _answer(peer, peer.press(card, f"r:{check_id}", DAVE))
        assert refused.params["text"] == REFUSED and refused.params["show_alert"] is True
        assert _replies(peer, card) == []

        saved = await _review_in_group(peer, card, check_id)
        assert saved.startswith("Review saved: Unproven → False, for this chat")

        # The audit row: Ann's HMAC, never her id, and the group's keyed chat.
        (review,) = service.store.reviews.history(check_id)
        assert review.reviewer == hash_user(SECRET.encode(), "telegram", str(ANN["id"]))
        assert review.chat == hash_chat(SECRET.encode(), "telegram", str(GROUP["id"]))
        assert (review.from_verdict, review.to_verdict, review.note, review.link) == (
            "unproven",
            "false",
            NOTE,
            LINK,
        )

        # The group is told once; more rounds of the poll send nothing more.
        await peer.wait_for(lambda: _updates(peer, GROUP["id"]))
        await PollRounds(service.store).passed(2)
        (update,) = _updates(peer, GROUP["id"])
        assert update["text"] == (
            f"Update: this chat's moderators changed this post from Unproven to False: {NOTE}"
            f" ({LINK})"
        )
        edited = peer.messages[(GROUP["id"], card["message_id"])]
        assert edited["text"].startswith("❌ False"), edited["text"]
        assert "Changed by this chat's moderators from Unproven to False" in edited["text"]
        # Bob's and Carol's private chats hear nothing, and their cards stay as they were.
        for chat in (BOB["id"], CAROL["id"]):
            assert _updates(peer, chat) == []
            kept = peer.messages[(chat, cards[chat]["message_id"])]
            assert kept["text"].startswith("❔ Unproven") and "edit_date" not in kept

        # A later repeat in a private chat is answered with the machine's verdict.
        peer.send(_private(DAVE), DAVE, POST)
        later = (await peer.wait_for(lambda: _cards(peer, DAVE["id"])))[0]
        assert later["text"].startswith("❔ Unproven") and "moderators" not in later["text"]
        await _recorded(service, 4)
        await PollRounds(service.store).passed(2)
        assert _updates(peer, DAVE["id"]) == []
    assert not [c for c in peer.calls if c.error and "not modified" not in c.error]


class Ticks:
    """A settable monotonic clock, in seconds."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


async def test_a_groups_admins_are_asked_once_a_minute_and_a_demotion_counts_after_it(
    tmp_path: Path,
) -> None:
    """Issue 45: every Review tap asked Telegram (``getChatMember``). Now a group's
    administrators are asked once (``getChatAdministrators``) and kept a minute: five
    taps, refused or not, cost one call. An admin demoted meanwhile keeps the right until
    the minute is over (her Cancel still works), then loses it; the list is asked again."""
    clock = Ticks()
    async with FakeBotAPI(admins={ANN["id"]}) as peer:
        settings = telegram_settings(peer, tmp_path)
        checker = FakeChecker(verdict="unproven")
        admins = ChatAdmins(clock=clock)
        async with fake_bot(settings, checker, group_max_rate=0, admins=admins) as service:
            post = peer.send(GROUP, DAVE, POST)
            peer.send(GROUP, ANN, "/check", reply_to=post)
            card = (await peer.wait_for(lambda: _cards(peer, GROUP["id"])))[0]
            check_id = next(d for d in _data(card) if d.startswith("r:"))[2:]
            await _recorded(service, 1)

            def asked() -> list[str]:
                return [c.method for c in peer.calls if c.method.startswith("getChat")]

            for _ in range(3):  # Dave is no admin: refused each time
                refused = await _answer(peer, peer.press(card, f"r:{check_id}", DAVE))
                assert refused.params["text"] == REFUSED
            await _answer(peer, peer.press(card, f"r:{check_id}", ANN))
            (choices,) = await peer.wait_for(lambda: _replies(peer, card))
            await _answer(peer, peer.press(card, f"r:{check_id}", ANN))  # open: nothing new
            assert asked() == ["getChatAdministrators"]  # five taps, one call

            peer.admins.discard(ANN["id"])  # demoted
            clock.now += KEEP_S - 1  # within the minute: the list kept still names her
            await _answer(peer, peer.press(choices, f"rx:{check_id}", ANN))
            assert (
                peer.messages[(GROUP["id"], choices["message_id"])]["text"] == "Review cancelled."
            )
            assert asked() == ["getChatAdministrators"]
            clock.now += 2  # the minute is over: asked again, and refused
            refused = await _answer(peer, peer.press(card, f"r:{check_id}", ANN))
            assert refused.params["text"] == REFUSED
            assert asked() == ["getChatAdministrators"] * 2
            assert len(_replies(peer, card)) == 1  # the choices offered once, no more


async def test_a_named_reviewers_review_reaches_every_chat_shown_the_card_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(corrections, "POLL_S", 0.05)
    async with _telegram(tmp_path, reviewers=(f"telegram:{ANN['id']}",)) as (peer, service):
        cards = await _ask_everywhere(peer, service)
        card = cards[GROUP["id"]]
        check_id = next(d for d in _data(card) if d.startswith("r:"))[2:]
        saved = await _review_in_group(peer, card, check_id)
        assert saved.startswith("Review saved: Unproven → False. Every chat")
        (review,) = service.store.reviews.history(check_id)
        assert review.chat == ""  # for every chat
        chats = (GROUP["id"], BOB["id"], CAROL["id"])
        await peer.wait_for(lambda: all(_updates(peer, chat) for chat in chats))
        await PollRounds(service.store).passed(2)
        for chat in chats:
            (update,) = _updates(peer, chat)
            assert update["text"] == UPDATE
            assert update["reply_to_message"]["message_id"] == cards[chat]["message_id"]
            edited = peer.messages[(chat, cards[chat]["message_id"])]
            assert edited["text"].startswith("❌ False"), edited["text"]
            assert "Changed by the service's reviewers from Unproven to False" in edited["text"]
            assert any(d.startswith("r:") for d in _data(edited))  # the buttons stay
        peer.send(_private(DAVE), DAVE, POST)
        later = (await peer.wait_for(lambda: _cards(peer, DAVE["id"])))[0]
        assert later["text"].startswith("❌ False") and "Repeat of a check" in later["text"]


async def test_a_named_reviewer_confirms_in_a_private_chat(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In a private chat only a reviewer the settings name may review; a confirmation
    edits the card and tells nobody (nothing changed)."""
    monkeypatch.setattr(corrections, "POLL_S", 0.05)
    async with _telegram(tmp_path, reviewers=(f"telegram:{BOB['id']}",)) as (peer, service):
        for who in (BOB, CAROL):
            peer.send(_private(who), who, POST)
        bobs = (await peer.wait_for(lambda: _cards(peer, BOB["id"])))[0]
        carols = (await peer.wait_for(lambda: _cards(peer, CAROL["id"])))[0]
        check_id = next(d for d in _data(carols) if d.startswith("r:"))[2:]
        refused = await _answer(peer, peer.press(carols, f"r:{check_id}", CAROL))
        assert refused.params["text"] == REFUSED
        check_id = next(d for d in _data(bobs) if d.startswith("r:"))[2:]
        await _answer(peer, peer.press(bobs, f"r:{check_id}", BOB))
        (choices,) = await peer.wait_for(lambda: _replies(peer, bobs))
        await _answer(peer, peer.press(choices, f"rc:{check_id}", BOB))
        (prompt,) = await peer.wait_for(lambda: _replies(peer, choices))
        assert prompt["text"].startswith("Reply to this message with a short note")
        note = peer.send(_private(BOB), BOB, "x" * 301, reply_to=prompt)  # too long: asked again
        (again,) = await peer.wait_for(lambda: _replies(peer, note))
        assert again["text"].startswith("The note is too long: at most 300 characters.")
        note = peer.send(_private(BOB), BOB, "-", reply_to=again)
        (saved,) = await peer.wait_for(lambda: _replies(peer, note))
        assert saved["text"] == "Review saved: Unproven is confirmed."
        edited = peer.messages[(BOB["id"], bobs["message_id"])]
        assert "Reviewed by the service's reviewers." in edited["text"]
        await _recorded(service, 2)  # Bob's and Carol's cards, where a correction would find them
        await PollRounds(service.store).passed(2)
        assert _updates(peer, BOB["id"]) == [] and _updates(peer, CAROL["id"]) == []
        assert service.store.reviews.latest(check_id) is not None
        # The note was a reply to a prompt, not a post: nothing else was checked.
        assert service.store.database.rows("SELECT count(*) FROM checks") == [(2,)]


async def test_the_review_prompt_is_offered_once_while_it_is_open(tmp_path: Path) -> None:
    """Issue 36: an admin's 20 quick Review taps posted 20 identical prompts in the
    group. Now a tap while the group's review of that check is open (its choices, or its
    note's prompt) is answered and posts nothing; once the review is cancelled or saved,
    Review offers the choices again."""
    async with _telegram(tmp_path) as (peer, service):
        post = peer.send(GROUP, DAVE, POST)
        peer.send(GROUP, ANN, "/check", reply_to=post)
        card = (await peer.wait_for(lambda: _cards(peer, GROUP["id"])))[0]
        check_id = next(d for d in _data(card) if d.startswith("r:"))[2:]

        async def tap() -> None:  # answered, with no alert
            answered = await _answer(peer, peer.press(card, f"r:{check_id}", ANN))
            assert not answered.params.get("text")

        await asyncio.gather(*(tap() for _ in range(5)))  # five quick taps
        (choices,) = _replies(peer, card)  # one offer, not five
        await _answer(peer, peer.press(choices, f"rx:{check_id}", ANN))  # cancelled
        await tap()
        (_, offer) = await peer.wait_for(lambda: _replies(peer, card)[1:] and _replies(peer, card))
        # The choice made, its note's prompt is open: a tap still posts nothing.
        await _answer(peer, peer.press(offer, f"rf:{check_id}", ANN))
        (prompt,) = await peer.wait_for(lambda: _replies(peer, offer))
        await tap()
        assert len(_replies(peer, card)) == 2
        note = peer.send(GROUP, ANN, NOTE, reply_to=prompt)
        await peer.wait_for(lambda: _replies(peer, note))  # saved
        await tap()
        await peer.wait_for(lambda: _replies(peer, card)[2:])  # offered again
        assert len(_replies(peer, card)) == 3
        (review,) = service.store.reviews.history(check_id)
        assert review.to_verdict == "false"


# -- Discord ---------------------------------------------------------------------------------


def _interaction_calls(peer: FakeDiscord, payload: dict[str, Any]) -> list[Call]:
    return peer.calls_to("POST", f"/interactions/{payload['id']}/")


async def _responded(peer: FakeDiscord, payload: dict[str, Any]) -> Call:
    await peer.dispatch("INTERACTION_CREATE", payload)
    return await peer.wait_for(lambda c: c in _interaction_calls(peer, payload))


def _followups(peer: FakeDiscord, token: str) -> list[Call]:
    return [c for c in peer.calls_to("POST", "/webhooks/") if c.path.endswith(f"/{token}")]


async def _verdict(peer: FakeDiscord, payload: dict[str, Any]) -> dict[str, Any]:
    await peer.dispatch("INTERACTION_CREATE", payload)

    def shown(call: Call) -> bool:
        body = call.body or {}
        return (
            call.method == "PATCH"
            and f"/{payload['token']}/" in call.path
            and bool(body.get("embeds"))
        )

    await peer.wait_for(shown, timeout=30)
    return peer.messages[peer.originals[payload["token"]]]


@asynccontextmanager
async def _discord(tmp_path: Path) -> AsyncIterator[FactCheckBot]:
    settings = _settings(tmp_path, discord={"progress_interval_s": 0, "guild_cooldown_s": 0})
    async with (
        fake_service(settings, FakeChecker(verdict="unproven")) as service,
        running_client(FactCheckBot(settings.discord, service)) as bot,
        service.serving(
            "discord", _no_card, sender(functools.partial(send_correction, bot.context, bot))
        ),
    ):
        yield bot


MODERATOR = 970000000000000004


async def _choose_false_with_a_note(peer: FakeDiscord, press: dict[str, Any]) -> Call:
    """After a moderator's press: the private select, False chosen, the form sent with
    the note and the link; the follow-up that answers the form."""
    offer = await peer.wait_for(lambda c: c in _followups(peer, press["token"]))
    assert offer.body["flags"] == 64 and offer.body["content"].startswith("Review of this")
    select = offer.body["components"][0]["components"][0]
    assert [o["value"] for o in select["options"]] == [
        "confirm",
        "true",
        "false",
        "misleading",
        "unproven",
    ]
    chosen = peer.select(select["custom_id"], offer.answer, ["false"], user_id=MODERATOR)
    form = await _responded(peer, chosen)
    assert form.body["type"] == 9  # the modal: the note and the link
    inputs = [row["components"][0]["custom_id"] for row in form.body["data"]["components"]]
    fields = dict(zip(inputs, [NOTE, LINK], strict=True))
    submit = peer.modal_submit(
        form.body["data"]["custom_id"], fields, offer.answer, user_id=MODERATOR
    )
    await peer.dispatch("INTERACTION_CREATE", submit)
    return await peer.wait_for(lambda c: c in _followups(peer, submit["token"]))


def _titles(peer: FakeDiscord, token: str) -> list[str]:
    """The titles of the embeds an interaction's token edited its response into."""
    edits = [c for c in peer.calls_to("PATCH", "/webhooks/") if f"/{token}/" in c.path]
    return [c.body["embeds"][0]["title"] for c in edits if c.body.get("embeds")]


async def test_a_discord_moderator_reviews_through_a_select_and_a_form(
    discord_api: FakeDiscord, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(corrections, "POLL_S", 0.05)
    peer = discord_api
    async with _discord(tmp_path) as bot:
        first = peer.slash("factcheck", {"text": POST}, user_id=970000000000000001)
        card = await _verdict(peer, first)
        second = peer.slash("factcheck", {"text": POST}, user_id=970000000000000002)
        await _verdict(peer, second)  # a repeat, in the same channel
        buttons = [b for row in card["components"] for b in row["components"]]
        review = next(b["custom_id"] for b in buttons if "zf:review:" in b.get("custom_id", ""))

        # A member without Manage Messages is refused, privately, in one sentence.
        press = peer.button(review, card, user_id=970000000000000003, permissions=MEMBER)
        refusal = await _responded(peer, press)
        assert refusal.body["type"] == 4 and refusal.body["data"]["flags"] == 64
        assert refusal.body["data"]["content"] == discord_reviews.REFUSED

        # A moderator: the press is acknowledged unseen, a private select and a form follow.
        press = peer.button(review, card, user_id=MODERATOR)
        assert (await _responded(peer, press)).body["type"] == 6
        saved = await _choose_false_with_a_note(peer, press)
        # A channel's moderator reviews for that channel: it is the one told.
        assert saved.body["content"].startswith("Review saved: Unproven → False, for this chat")
        # The card Review was pressed on is edited through the press's own interaction.
        assert _titles(peer, press["token"])[-1].startswith("❌ False")

        # The channel that asked twice (an original and a repeat) is told once, and both
        # cards are edited through their interactions, still valid.
        await peer.wait_for(
            lambda c: any(f.body.get("content") == escape(CHAT_UPDATE) for f in _updates_dc(peer))
        )
        await PollRounds(bot.service.store).passed(2)
        assert len(_updates_dc(peer)) == 1
        for payload in (first, second):
            assert _titles(peer, payload["token"])[-1].startswith("❌ False")
        (stored,) = bot.service.store.reviews.history(review.split(":")[-1])
        assert stored.reviewer == hash_user(SECRET.encode(), "discord", str(MODERATOR))
        assert (stored.from_verdict, stored.to_verdict, stored.link) == ("unproven", "false", LINK)


def _updates_dc(peer: FakeDiscord) -> list[Call]:
    return [
        c
        for c in peer.calls_to("POST", "/webhooks/")
        if str((c.body or {}).get("content") or "").startswith("Update:")
    ]


async def test_a_channels_manage_messages_alone_reviews_nothing_on_discord(
    discord_api: FakeDiscord, tmp_path: Path
) -> None:
    """Issue 45: a member's review applies to the whole server, so it takes Manage
    Messages across the server. A member granted it by the card's channel's permission
    overwrite (Discord resolves it into the press's permissions) and by no role is
    refused, and nothing is stored; a member whose role grants it server-wide (no admin)
    is offered the choices."""
    peer = discord_api
    async with _discord(tmp_path) as bot:
        card = await _verdict(peer, peer.slash("factcheck", {"text": POST}))
        buttons = [b for row in card["components"] for b in row["components"]]
        review = next(b["custom_id"] for b in buttons if "zf:review:" in b.get("custom_id", ""))
        await _recorded(bot.service, 1)
        # Manage Messages in this channel only: refused, privately, and nothing offered.
        press = peer.button(review, card, user_id=MODERATOR, permissions=MANAGER, roles=[])
        refusal = await _responded(peer, press)
        assert refusal.body["type"] == 4 and refusal.body["data"]["flags"] == 64
        assert refusal.body["data"]["content"] == discord_reviews.REFUSED
        assert "across this server" in discord_reviews.REFUSED
        assert _followups(peer, press["token"]) == []
        # Manage Messages across the server, from a role: the choices are offered.
        roles = [FakeDiscord.MANAGER_ROLE]
        press = peer.button(review, card, user_id=MODERATOR, permissions=MANAGER, roles=roles)
        assert (await _responded(peer, press)).body["type"] == 6
        offer = await peer.wait_for(lambda c: c in _followups(peer, press["token"]))
        assert offer.body["content"].startswith("Review of this verdict")
        # The choice, from the member the overwrite alone empowers: refused too.
        select = offer.body["components"][0]["components"][0]["custom_id"]
        chosen = peer.select(
            select, offer.answer, ["false"], user_id=MODERATOR, permissions=MANAGER, roles=[]
        )
        assert (await _responded(peer, chosen)).body["data"]["content"] == discord_reviews.REFUSED
        assert bot.service.store.reviews.history(review.split(":")[-1]) == []


async def test_the_discord_review_right_is_tested_in_the_cards_own_channel(
    discord_api: FakeDiscord, tmp_path: Path
) -> None:
    """Issue 36: Discord resolves a member's rights in the channel an interaction comes
    from. A moderator of another channel (Manage Messages there, not where the card is)
    pressing Review, or choosing, or sending the form, from that channel is refused on
    every step, and nothing is stored; from the card's own channel each step goes on."""
    peer = discord_api
    elsewhere = (FakeDiscord.GUILD_ID, FakeDiscord.CHANNEL_ID + 1)
    async with _discord(tmp_path) as bot:
        ask = peer.slash("factcheck", {"text": POST}, user_id=970000000000000001)
        card = await _verdict(peer, ask)
        buttons = [b for row in card["components"] for b in row["components"]]
        review = next(b["custom_id"] for b in buttons if "zf:review:" in b.get("custom_id", ""))
        check_id = review.split(":")[-1]
        await _recorded(bot.service, 1)

        def refused(call: Call) -> bool:
            data = call.body.get("data") or {}
            return call.body["type"] == 4 and data.get("content") == discord_reviews.REFUSED

        # The press, from another channel: refused, and nothing is offered.
        press = peer.button(review, card, user_id=MODERATOR, where=elsewhere)
        assert refused(await _responded(peer, press))
        assert _followups(peer, press["token"]) == []

        # From the card's channel: the choices are offered.
        press = peer.button(review, card, user_id=MODERATOR)
        assert (await _responded(peer, press)).body["type"] == 6
        offer = await peer.wait_for(lambda c: c in _followups(peer, press["token"]))
        select = offer.body["components"][0]["components"][0]["custom_id"]
        # The choice, from another channel: refused; from the card's: the form.
        chosen = peer.select(select, offer.answer, ["false"], user_id=MODERATOR, where=elsewhere)
        assert refused(await _responded(peer, chosen))
        chosen = peer.select(select, offer.answer, ["false"], user_id=MODERATOR)
        form = await _responded(peer, chosen)
        assert form.body["type"] == 9
        modal = form.body["data"]["custom_id"]
        inputs = [row["components"][0]["custom_id"] for row in form.body["data"]["components"]]
        fields = dict(zip(inputs, [NOTE, LINK], strict=True))
        # The form, from another channel: refused, and no review is stored.
        submit = peer.modal_submit(modal, fields, offer.answer, user_id=MODERATOR, where=elsewhere)
        assert refused(await _responded(peer, submit))
        assert bot.service.store.reviews.history(check_id) == []
        # A form is answered once: chosen again, and sent from the card's channel, saved.
        chosen = peer.select(select, offer.answer, ["false"], user_id=MODERATOR)
        modal = (await _responded(peer, chosen)).body["data"]["custom_id"]
        submit = peer.modal_submit(modal, fields, offer.answer, user_id=MODERATOR)
        await peer.dispatch("INTERACTION_CREATE", submit)
        saved = await peer.wait_for(lambda c: c in _followups(peer, submit["token"]))
        assert saved.body["content"].startswith("Review saved: Unproven → False")
        (stored,) = bot.service.store.reviews.history(check_id)
        assert stored.to_verdict == "false"


async def test_a_discord_moderators_review_select_is_offered_once(
    discord_api: FakeDiscord, tmp_path: Path
) -> None:
    """Issue 36: a second press on Review while this moderator's select for the card is
    open is acknowledged, and nothing new is posted; once the review is saved, Review
    offers the select again."""
    peer = discord_api
    async with _discord(tmp_path) as bot:
        card = await _verdict(peer, peer.slash("factcheck", {"text": POST}))
        buttons = [b for row in card["components"] for b in row["components"]]
        review = next(b["custom_id"] for b in buttons if "zf:review:" in b.get("custom_id", ""))
        await _recorded(bot.service, 1)
        first = peer.button(review, card, user_id=MODERATOR)
        assert (await _responded(peer, first)).body["type"] == 6
        await peer.wait_for(lambda c: c in _followups(peer, first["token"]))
        again = peer.button(review, card, user_id=MODERATOR)
        assert (await _responded(peer, again)).body["type"] == 6  # acknowledged
        await _choose_false_with_a_note(peer, first)  # the review, saved
        assert _followups(peer, again["token"]) == []  # the second press posted nothing
        # Saved: a press offers the select again.
        later = peer.button(review, card, user_id=MODERATOR)
        assert (await _responded(peer, later)).body["type"] == 6
        offer = await peer.wait_for(lambda c: c in _followups(peer, later["token"]))
        assert offer.body["content"].startswith("Review of this verdict (False)")


async def _no_card(*_: object) -> None:
    """Cards are posted live here, not by deliver jobs."""
