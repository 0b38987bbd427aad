"""The first-run example on Telegram: after ``/start`` and ``/help``, a short false post
and the card the bot gives it, rendered by :func:`~.render.card_html` from the report
shipped with the package (:mod:`bots.chat.examples`), marked "Example:", and one line
on what a card's buttons do. Nothing is checked: no engine, no store row.
"""

from __future__ import annotations

from telegram import Message

from bots.chat.examples import ANSWERED, ASKED, BUTTONS, EXAMPLE, FIRST_RUN_POST, first_run_card
from bots.render.words import ENGLISH, Words

from .render import NO_PREVIEW, card_html, quote_text

__all__ = ["first_run_html", "show_example"]


def first_run_html(words: Words = ENGLISH) -> str:
    """The example as one message: "Example:", the post quoted, its card quoted (the
    card's words in ``words``, its summary the report's), the line on the buttons."""
    card = card_html(first_run_card(words))
    return "\n".join(
        [
            f"<b>{quote_text(words(EXAMPLE))}</b> {quote_text(words(ASKED))}",
            f"<blockquote>{quote_text(FIRST_RUN_POST)}</blockquote>",
            quote_text(words(ANSWERED)),
            f"<blockquote>{card}</blockquote>",
            f"<i>{quote_text(words(BUTTONS))}</i>",
        ]
    )


async def show_example(message: Message, words: Words) -> None:
    """Reply to ``message`` with the example, in ``words`` (the chat's, as the ``/start``
    or ``/help`` it follows)."""
    await message.reply_html(first_run_html(words), do_quote=False, link_preview_options=NO_PREVIEW)
