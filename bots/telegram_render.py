"""Telegram HTML for the verdict card, its sections, progress and errors. Renders only.

Every string that a model or a user wrote is escaped with :func:`quote_text`, which
also breaks ``@name`` so that no one is pinged by what the model wrote.
"""

from __future__ import annotations

import html

from telegram import InlineKeyboardButton, InlineKeyboardMarkup
from telegram.constants import MessageLimit

from .card import Section, VerdictCard, pack, split_text

__all__ = [
    "BUTTON_ACTIONS",
    "MAX_MESSAGE",
    "card_html",
    "card_keyboard",
    "html_length",
    "progress_html",
    "progress_keyboard",
    "quote_text",
    "section_messages",
]

MAX_MESSAGE = int(MessageLimit.MAX_TEXT_LENGTH)  # 4096
WORD_JOINER = "\u2060"
#: callback action letter → what the button does; callback data is ``"<letter>:<check id>"``
BUTTON_ACTIONS = {
    "d": "debate",
    "e": "evidence",
    "c": "claims",
    "u": "up",
    "n": "down",
    "x": "cancel",
}
_LETTER = {name: letter for letter, name in BUTTON_ACTIONS.items()}


def quote_text(text: str) -> str:
    """``text`` escaped for Telegram HTML, with ``@mentions`` defused (no pings)."""
    return html.escape(text, quote=True).replace("@", "@" + WORD_JOINER)


def html_length(text: str) -> int:
    """The length Telegram counts (UTF-16 code units), of the markup itself: an upper bound
    of the text length after parsing, so a message within it is never too long."""
    return len(text.encode("utf-16-le")) // 2


def _data(action: str, check_id: str) -> str:
    return f"{_LETTER[action]}:{check_id}"


def card_html(card: VerdictCard) -> str:
    """The verdict card: headline, confidence, summary, strongest links, origin, notes."""
    confidence = f" · confidence {quote_text(card.confidence)}" if card.confidence else ""
    lines = [f"{card.icon} <b>{quote_text(card.headline)}</b>{confidence}", ""]
    lines.append(quote_text(card.summary))
    if card.links:
        lines.append("")
        for link in card.links:
            href = html.escape(link.url, quote=True)
            lines.append(f'• <a href="{href}">{quote_text(link.title or link.url)}</a>')
    source = []
    if card.origin:
        source.append(f"From {quote_text(card.origin)}")
    if card.published is not None:
        source.append(f"published {card.published.isoformat()}")
    if source:
        lines.extend(["", "<i>" + ", ".join(source) + "</i>"])
    if card.repeat_note:
        lines.extend(["", f"<i>↺ {quote_text(card.repeat_note)}</i>"])
    for note in card.notes:
        lines.append(f"<i>{quote_text(note)}</i>")
    text = "\n".join(lines)
    if html_length(text) <= MAX_MESSAGE:
        return text
    # A summary too long for one card (a runaway model): keep the head, say where the rest is.
    room = MAX_MESSAGE - html_length(text) + html_length(quote_text(card.summary)) - 40
    head = split_text(card.summary, max(room, 100), lambda s: html_length(quote_text(s)))[0]
    return text.replace(quote_text(card.summary), quote_text(head) + " … (see Debate)", 1)


def card_keyboard(check_id: str, votes: tuple[int, int] = (0, 0)) -> InlineKeyboardMarkup:
    """Debate / Evidence / Claims, then 👍 / 👎 with their counts once there are votes."""
    up, down = votes
    return InlineKeyboardMarkup(
        [
            [
                InlineKeyboardButton("Debate", callback_data=_data("debate", check_id)),
                InlineKeyboardButton("Evidence", callback_data=_data("evidence", check_id)),
                InlineKeyboardButton("Claims", callback_data=_data("claims", check_id)),
            ],
            [
                InlineKeyboardButton(
                    f"👍 {up}" if up else "👍", callback_data=_data("up", check_id)
                ),
                InlineKeyboardButton(
                    f"👎 {down}" if down else "👎", callback_data=_data("down", check_id)
                ),
            ],
        ]
    )


def progress_html(lines: list[str]) -> str:
    """The "checking…" message: what is done so far, one step a line."""
    body = "\n".join(quote_text(line) for line in lines[-30:])
    return "🔎 <b>Checking…</b>" + (f"\n\n{body}" if body else "")


def progress_keyboard(check_id: str) -> InlineKeyboardMarkup:
    return InlineKeyboardMarkup(
        [[InlineKeyboardButton("Cancel", callback_data=_data("cancel", check_id))]]
    )


def _block_parts(heading: str, body: str, url: str, room: int) -> list[str]:
    """One block as one or more message parts: a bold heading, a link, the body in an
    expandable blockquote, cut at paragraphs so each part fits in ``room``."""
    title = f"<b>{quote_text(heading)}</b>"
    if url:
        title += f'\n<a href="{html.escape(url, quote=True)}">{quote_text(url)}</a>'
    if not body.strip():
        return [title]
    more = f"<b>{quote_text(heading)}</b> (continued)"
    frame = len("<blockquote expandable></blockquote>") + 1
    limit = room - max(html_length(title), html_length(more)) - frame
    pieces = split_text(body.strip(), limit, lambda s: html_length(quote_text(s)))
    return [
        f"{title if n == 0 else more}\n<blockquote expandable>{quote_text(piece)}</blockquote>"
        for n, piece in enumerate(pieces)
    ]


def section_messages(section: Section, *, limit: int = MAX_MESSAGE) -> list[str]:
    """A Debate, Evidence or Claims section as Telegram HTML messages, each within ``limit``."""
    header = f"<b>{quote_text(section.title)}</b>"
    parts = [header]
    for block in section.blocks:
        parts.extend(_block_parts(block.heading, block.body, block.url, limit))
    return pack(parts, limit, measure=html_length)
