"""``/factcheck-help``: what the bot does and how to ask it, then the first-run example:
a short false post and the card the bot gives it, rendered by
:func:`~.render.verdict_embed` from the report shipped with the package
(:mod:`bots.chat.examples`), marked "Example:", with one line on what a card's buttons
do in its footer. ``/privacy``: what the bot stores (:mod:`bots.render.privacy`). Both
are said in the asker's Discord language when the bot has its words, and only whoever
asked sees them; nothing is checked.
"""

from __future__ import annotations

from typing import Any

import discord

from bots.chat.examples import ANSWERED, ASKED, BUTTONS, EXAMPLE, FIRST_RUN_POST, first_run_card
from bots.render.privacy import privacy_text, retention_days_of
from bots.render.splitting import split_text
from bots.render.words import ENGLISH, N_, Words

from .context import askers_words, context_of
from .render import MESSAGE_LIMIT, NONE, escape, verdict_embed

__all__ = ["HELP", "example_message", "factcheck_help", "privacy"]

HELP = N_(
    "**ZoFia checks whether a post is true, false, misleading or unproven.**\n"
    "`/factcheck`: paste a post's text, attach an image of it, or link a message of this "
    'server; or open a message\'s menu, Apps → Fact-check. A "Checking…" message comes at '
    "once, then the verdict card in its place.\n"
    "`/privacy`: what is stored, and for how long. Server admins: `/factcheck-settings`."
)


def example_message(words: Words = ENGLISH) -> tuple[str, discord.Embed]:
    """The help and the example as one message: its text (the help, "Example:", the post
    quoted) and the example's card as an embed, in ``words`` (its summary the report's),
    the line on the buttons as its footer."""
    embed = verdict_embed(first_run_card(words))
    embed.set_footer(text=words(BUTTONS))  # in place of the check id: it is no check
    content = "\n".join(
        [
            words(HELP),
            "",
            f"**{escape(words(EXAMPLE))}** {escape(words(ASKED))}",
            f"> {escape(FIRST_RUN_POST)}",
            escape(words(ANSWERED)),
        ]
    )
    return content, embed


async def factcheck_help(interaction: discord.Interaction[Any]) -> None:
    """What the bot does, with an example of a post and its card (only you see it)."""
    words = askers_words(interaction)
    content, embed = example_message(words)
    await interaction.response.send_message(
        content, embed=embed, ephemeral=True, allowed_mentions=NONE
    )


async def privacy(interaction: discord.Interaction[Any]) -> None:
    """What the bot stores, for how long, and how to have it deleted (only you see it),
    in the asker's Discord language: in more than one message when a language says it in
    more than Discord's 2,000 characters (French does; English is one)."""
    days = retention_days_of(context_of(interaction).service.retention)
    words = askers_words(interaction)
    first, *rest = split_text(privacy_text(days, words), MESSAGE_LIMIT)
    await interaction.response.send_message(first, ephemeral=True)
    for more in rest:
        await interaction.followup.send(more, ephemeral=True)
