"""Moderators' reviews from Discord: the verdict's Review button.

Who may review: a server member with Manage Messages (or Administrator) across the
server, and the reviewers named in ``[service] reviewers`` (compared as HMACs). A
member's review applies to the whole server (its scope is the server, as its checks'
chat is), so the right is the server-wide one (:func:`server_moderator`: from the
member's roles, as the gateway's cache of the server holds them), never the right
Discord resolved in one channel: a channel's permission overwrite that grants Manage
Messages there gives no review. A server the cache does not hold grants none. The right
is tested on every step (the press, the choice, the form): the press must come from a
channel where a card of that check was shown (as recorded for corrections), and the
choice and the form from that same channel. Anyone else who presses Review is refused
in one private sentence.

The select is offered once: a moderator's press on Review while their review of that
check in that channel is open (until saved or expired) is acknowledged and posts nothing
new (:class:`~bots.chat.reviews.OpenReviews`).

A reviewer's press is acknowledged without a visible change (a deferred update: the
press's own interaction can then edit the card it was pressed on, for 15 minutes),
and a private message offers Confirm / True / False / Misleading / Unproven in a
select. The choice opens a form (a modal) for the note and an optional link. Its
submission stores the review (:meth:`~bots.service.checks.CheckService.review`), edits the
card to show it, and, when the verdict changed, every chat shown the card is told
(:mod:`bots.chat.corrections`).

Once the check is read, the review's sentences, select and form are in the chat's
language: the check's, as its card is (:func:`~bots.render.words.words_for`). A press
refused before that (or a check not found) is answered in English.

What waits for the reviewer (the select, the form) lives in discord.py's view store of
this process only, for :data:`REVIEW_TIMEOUT_S` at most (Discord itself gives the
card's interaction 15 minutes): a restart, or a late answer, means pressing Review again.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import discord

from bots.chat.corrections import card_of
from bots.chat.reviews import CHOICES, OPEN_S, choice_label, choose_sentence, save_review
from bots.render.card import VerdictCard
from bots.render.sentences import review_refusal
from bots.render.words import N_, Words, words_for
from bots.service.records import MAX_LINK, CheckNotFoundError, Requester, ReviewRequest
from bots.service.refusals import ReviewRefused

from .chats import PLATFORM, chat_of, stored_check
from .context import DiscordContext, askers_words
from .render import NONE, verdict_embed

__all__ = [
    "REFUSED",
    "REVIEW_TIMEOUT_S",
    "card_channel",
    "may_review",
    "server_moderator",
    "start_review",
]

log = logging.getLogger(__name__)

# Said in the chat's language once the check is read (``words(REFUSED)``); a press
# refused before anything is read is answered in the presser's Discord language.
REFUSED = N_(
    "Only members who can manage messages across this server, or reviewers named in the "
    "bot's settings, can review a verdict."
)
#: as the other buttons say it
NOT_FOUND = N_("That check was not found.")
#: how long the select and the form wait for the reviewer (as long as a review is open)
REVIEW_TIMEOUT_S = OPEN_S

#: a card's buttons (``bots.discord.buttons.card_view`` for the context, passed in:
#: buttons imports this module, so this one cannot import buttons)
ViewOf = Callable[[VerdictCard], discord.ui.View]


async def card_channel(
    ctx: DiscordContext, press: discord.Interaction[Any], check_id: str
) -> int | None:
    """The channel of the card a Review press was on: the press's own, if a card of
    ``check_id`` was shown there (as recorded); ``None`` otherwise."""
    channel = press.channel_id
    if channel is None:
        return None
    return channel if await ctx.service.chats.shown_in(check_id, PLATFORM, str(channel)) else None


def server_moderator(interaction: discord.Interaction[Any]) -> bool:
    """Whether the member of ``interaction`` can manage messages (or administer) across
    its server: the server's owner, or a member one of whose roles grants it, as the
    gateway's cache of the server has its roles. A channel's overwrites count for
    nothing here (``interaction.permissions`` has them: not used), and a server the
    cache does not hold (no roles known) grants nothing."""
    member, guild = interaction.user, interaction.guild
    if not isinstance(member, discord.Member) or guild is None or guild.default_role is None:
        return False
    rights = member.guild_permissions
    return rights.manage_messages or rights.administrator


def may_review(
    ctx: DiscordContext, interaction: discord.Interaction[Any], channel: int | None
) -> bool:
    """Whether the user of ``interaction`` may review the card in ``channel``: a reviewer
    the settings name, or a moderator of the whole server (:func:`server_moderator`)
    acting in that very channel."""
    if ctx.service.reviewers.named(PLATFORM, str(interaction.user.id)):
        return True
    if interaction.guild_id is None or channel is None or interaction.channel_id != channel:
        return False
    return server_moderator(interaction)


async def start_review(
    ctx: DiscordContext, interaction: discord.Interaction[Any], check_id: str, view_of: ViewOf
) -> None:
    """Review pressed on a card: refuse, or offer the choices privately."""
    pressers = askers_words(interaction)
    if not may_review(ctx, interaction, await card_channel(ctx, interaction, check_id)):
        await interaction.response.send_message(pressers(REFUSED), ephemeral=True)
        return
    await interaction.response.defer()  # a deferred update: this interaction edits the card
    review = _review_key(interaction, check_id)
    if not ctx.reviews.open(review):
        return  # acknowledged: this moderator's select is on screen already
    found = await stored_check(ctx, check_id, interaction)
    if found is None:
        ctx.reviews.close(review)
        await interaction.followup.send(pressers(NOT_FOUND), ephemeral=True)
        return
    words = words_for(found[0].language)  # the chat's language, as the check was answered in
    said = choose_sentence(found[1].verdict, words)
    choices = Choices(Reviewing(ctx, interaction, check_id, view_of, words))
    try:
        await interaction.followup.send(said, view=choices, ephemeral=True)
    except discord.HTTPException:
        ctx.reviews.close(review)
        raise


def _review_key(press: discord.Interaction[Any], check_id: str) -> tuple[int, str, int]:
    """Whose review is open: the card's channel, the check and the moderator."""
    return (press.channel_id or 0, check_id, press.user.id)


@dataclass(frozen=True)
class Reviewing:
    """A review under way, from the press on a card's Review to the form's submission.

    Args:
        ctx: the bot's context.
        card: the press on the card's Review (its interaction edits the card).
        check_id: the check reviewed.
        view_of: the card's buttons, to draw the edited card with.
        words: the chat's, as the check was answered in.
    """

    ctx: DiscordContext
    card: discord.Interaction[Any]
    check_id: str
    view_of: ViewOf
    words: Words


class Choices(discord.ui.View):
    """The private select: the verdict the check should have, or Confirm, in ``words``."""

    def __init__(self, reviewing: Reviewing) -> None:
        super().__init__(timeout=REVIEW_TIMEOUT_S)
        self.reviewing = reviewing
        words = reviewing.words
        options = [discord.SelectOption(label=choice_label(v, words), value=v) for v in CHOICES]
        self.select: discord.ui.Select[Choices] = discord.ui.Select(
            placeholder=words("The verdict it should have"), options=options
        )
        self.select.callback = self._chosen  # type: ignore[method-assign]
        self.add_item(self.select)

    async def on_timeout(self) -> None:
        r = self.reviewing
        r.ctx.reviews.close(_review_key(r.card, r.check_id))

    async def _chosen(self, interaction: discord.Interaction[Any]) -> None:
        r = self.reviewing
        if not may_review(r.ctx, interaction, r.card.channel_id):
            await interaction.response.send_message(r.words(REFUSED), ephemeral=True)
            return
        await interaction.response.send_modal(Note(r, self.select.values[0]))


class Note(discord.ui.Modal, title="Review"):
    """The form for the review's note and link, in ``words``; its submission saves the
    review."""

    def __init__(self, reviewing: Reviewing, choice: str) -> None:
        words = reviewing.words
        title = words("Review: {choice}", choice=choice_label(choice, words))
        super().__init__(title=title, timeout=REVIEW_TIMEOUT_S)
        self.reviewing, self.choice = reviewing, choice
        self.note: discord.ui.TextInput[Note] = discord.ui.TextInput(
            label=words("Why, in a few words"),
            style=discord.TextStyle.paragraph,
            required=False,
            max_length=300,
        )
        self.link: discord.ui.TextInput[Note] = discord.ui.TextInput(
            label=words("A link that backs it (optional)"), required=False, max_length=MAX_LINK
        )
        self.add_item(self.note)
        self.add_item(self.link)

    async def on_submit(self, interaction: discord.Interaction[Any]) -> None:
        r = self.reviewing
        if not may_review(r.ctx, interaction, r.card.channel_id):
            await interaction.response.send_message(r.words(REFUSED), ephemeral=True)
            return
        await interaction.response.defer(ephemeral=True, thinking=True)
        said = await self._save(interaction)
        await interaction.followup.send(said, ephemeral=True, allowed_mentions=NONE)

    async def _save(self, interaction: discord.Interaction[Any]) -> str:
        """Store the review and edit the card; what to tell the reviewer."""
        r = self.reviewing
        ctx, words = r.ctx, r.words
        review = _review_key(r.card, r.check_id)
        ctx.reviews.close(review)  # the review ends here, unless its note is asked again
        found = await stored_check(ctx, r.check_id, r.card)
        if found is None:
            return words(NOT_FOUND)
        # The server: its moderators review for it.
        moderator = Requester(PLATFORM, str(interaction.user.id), chat_of(r.card))
        note, link = self.note.value.strip(), self.link.value.strip()
        request = ReviewRequest(r.check_id, moderator, self.choice, note, link)
        try:
            said = await save_review(ctx.service, request, found[1].verdict, words)
        except CheckNotFoundError:
            return words(NOT_FOUND)
        except ReviewRefused as exc:
            if exc.kind in ("reviewer_limit", "check_limit", "no_verdict", "chat_reviews_off"):
                return review_refusal(exc, words)
            ctx.reviews.open(review)  # its select is still there to choose again
            again = words("Choose again to send another note.")
            return f"{review_refusal(exc, words)} {again}"
        await self._edit_card()
        return said

    async def _edit_card(self) -> None:
        """The card Review was pressed on, as it now reads, while its press can edit it."""
        r = self.reviewing
        state = await r.ctx.service.card_state(r.check_id)
        card = None if state is None else card_of(state)
        if card is None or r.card.is_expired():
            return
        try:
            await r.card.edit_original_response(embed=verdict_embed(card), view=r.view_of(card))
        except discord.HTTPException as exc:
            log.info("the reviewed card of check %s was not edited: %s", r.check_id, exc.text)
