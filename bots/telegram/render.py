"""Telegram HTML for the verdict card, its sections, progress and errors. Renders only.

Every string that a model or a user wrote is escaped with :func:`quote_text`, which
also breaks ``@name`` so that no one is pinged by what the model wrote. Only ``http``
and ``https`` addresses with a host become links. Every string but the card's summary
and a section's bodies is cut to a fixed size, so that a card always fits in one
message and a block's body always has room. The card's labels and buttons are in the
chat's language: the card's own :class:`~bots.render.words.Words`, or those given.
"""

from __future__ import annotations

import html

from telegram import InlineKeyboardButton, InlineKeyboardMarkup, LinkPreviewOptions
from telegram.constants import MessageLimit

from bots.render.card import MAX_LINKS, Link, VerdictCard
from bots.render.links import safe_url
from bots.render.sections import Section
from bots.render.splitting import first_piece, longest_prefix, pack, split_text
from bots.render.words import ENGLISH, N_, Words

__all__ = [
    "BUTTON_ACTIONS",
    "MAX_MESSAGE",
    "NO_PREVIEW",
    "card_html",
    "card_keyboard",
    "clip_text",
    "html_length",
    "progress_html",
    "progress_keyboard",
    "quote_text",
    "safe_href",
    "section_messages",
]

MAX_MESSAGE = int(MessageLimit.MAX_TEXT_LENGTH)  # 4096
#: cards and sections link to sources: no preview of the first link under them
NO_PREVIEW = LinkPreviewOptions(is_disabled=True)
WORD_JOINER = "\u2060"
#: callback action letter → what the button does; callback data is ``"<letter>:<check id>"``
BUTTON_ACTIONS = {
    "d": "debate",
    "e": "evidence",
    "c": "claims",
    "u": "up",
    "n": "down",
    "x": "cancel",
    "r": "review",
}
_LETTER = {name: letter for letter, name in BUTTON_ACTIONS.items()}
# Sizes in markup (UTF-16 units after escaping) of what the card and the blocks show.
_MAX_HREF = 400  # a longer address is not linked
_MAX_LINK_TITLE = 240
_MAX_HEADING = 300
_MAX_URL_SHOWN = 300
_MAX_LINE = 300  # the origin, the repeat note
_MAX_NOTE = 400
_MAX_NOTES = 800  # all notes together
_MAX_HEAD = 200  # the headline, the confidence
_MAX_LEAN = 600  # the unproven post's lean and what would settle it


def quote_text(text: str) -> str:
    """``text`` escaped for Telegram HTML, with ``@mentions`` defused (no pings)."""
    return html.escape(text, quote=True).replace("@", "@" + WORD_JOINER)


def html_length(text: str) -> int:
    """The length Telegram counts (UTF-16 code units), of the markup itself: an upper bound
    of the text length after parsing, so a message within it is never too long."""
    return len(text.encode("utf-16-le")) // 2


def _data(action: str, check_id: str) -> str:
    return f"{_LETTER[action]}:{check_id}"


def clip_text(text: str, limit: int) -> str:
    """``text`` escaped with :func:`quote_text`, cut so that the markup is at most
    ``limit`` long; ``…`` marks a cut."""
    quoted = quote_text(text)
    if html_length(quoted) <= limit:
        return quoted
    cut = longest_prefix(text, limit - 1, lambda s: html_length(quote_text(s)))
    return quote_text(text[:cut].rstrip()) + "…"


def safe_href(url: str) -> str:
    """``url`` escaped for an ``href`` when :func:`~bots.render.links.safe_url` lets it
    be linked and it still fits; otherwise ``""`` (show no link)."""
    href = html.escape(safe_url(url), quote=True)
    return href if html_length(href) <= _MAX_HREF else ""


def _link_line(link: Link) -> str:
    """``• title`` linked to the address when it is safe; ``""`` when there is nothing to
    show (no title and an address that is not shown)."""
    href = safe_href(link.url)
    title = link.title.strip() or (link.url if href else "")
    if not title:
        return ""
    shown = clip_text(title, _MAX_LINK_TITLE)
    return f'• <a href="{href}">{shown}</a>' if href else f"• {shown}"


def _notes(notes: tuple[str, ...]) -> list[str]:
    lines: list[str] = []
    used = 0
    for note in notes:
        line = f"<i>{clip_text(note, _MAX_NOTE)}</i>"
        used += html_length(line) + 1
        if used > _MAX_NOTES:
            break
        lines.append(line)
    return lines


def card_html(card: VerdictCard) -> str:
    """The verdict card: headline, confidence, summary, strongest links, origin, notes.

    Everything but the summary is cut to a fixed size; a summary too long for what is
    left is cut at a sentence or word and points to the Debate."""
    words = card.words
    confidence = ""
    if card.confidence:
        said = words("confidence {confidence}", confidence=card.confidence)
        confidence = f" · {clip_text(said, _MAX_HEAD)}"
    before = [f"{card.icon} <b>{clip_text(card.headline, _MAX_HEAD)}</b>{confidence}", ""]
    if card.lean:  # an unproven post: said at once, in one plain line
        before[-1:] = [clip_text(card.lean, _MAX_LEAN), ""]
    checked = [line for line in map(_link_line, card.checked_by[:MAX_LINKS]) if line]
    if checked:  # published fact-checks: the strongest evidence there is, said first
        before[-1:] = [*checked, ""]
    read = [f"<i>{clip_text(card.checked, _MAX_LINE)}</i>"] if card.checked else []
    if card.read:  # the image's text as read: a misreading shows at once
        read.append(clip_text(card.read, _MAX_LINE))
    if read:  # an image post: what was read
        before[-1:] = [*read, ""]
    after: list[str] = []
    links = [line for line in map(_link_line, card.links[:MAX_LINKS]) if line]
    if links:
        after.extend(["", *links])
    source = []
    if card.origin:
        origin = clip_text(card.origin, _MAX_LINE)  # escaped: put in the escaped words
        source.append(quote_text(words("From {origin}")).format(origin=origin))
    if card.published is not None:
        source.append(quote_text(words("published {date}", date=card.published.isoformat())))
    if source:
        after.extend(["", "<i>" + ", ".join(source) + "</i>"])
    if card.repeat_note:
        after.extend(["", f"<i>↺ {clip_text(card.repeat_note, _MAX_LINE)}</i>"])
    after.extend(_notes(card.notes))
    summary = quote_text(card.summary)
    text = "\n".join([*before, summary, *after])
    if html_length(text) <= MAX_MESSAGE:
        return text
    # A summary too long for one card (a runaway model): keep the head, say where the rest is.
    more = " … " + quote_text(words("(see Debate)"))
    room = MAX_MESSAGE - html_length(text) + html_length(summary) - html_length(more)
    cut = first_piece(card.summary, max(room, 100), lambda s: html_length(quote_text(s)))
    return "\n".join([*before, quote_text(cut) + more, *after])


def card_keyboard(
    check_id: str,
    votes: tuple[int, int] = (0, 0),
    *,
    report_url: str = "",
    share_url: str = "",
    words: Words = ENGLISH,
) -> InlineKeyboardMarkup:
    """Debate / Evidence / Claims, then 👍 / 👎 with their counts once there are votes
    and Review (for moderators: :mod:`.reviews`), then a "Full report" link to
    ``report_url`` when there is one (the report page) and a "Share" link to
    ``share_url`` when there is one (:mod:`.share_links`); labelled in ``words`` (the
    chat's language)."""
    up, down = votes
    links = [
        InlineKeyboardButton(words(label), url=url)
        for label, url in ((N_("Full report"), report_url), (N_("Share"), share_url))
        if url
    ]
    return InlineKeyboardMarkup(
        [
            [
                InlineKeyboardButton(words("Debate"), callback_data=_data("debate", check_id)),
                InlineKeyboardButton(words("Evidence"), callback_data=_data("evidence", check_id)),
                InlineKeyboardButton(words("Claims"), callback_data=_data("claims", check_id)),
            ],
            [
                InlineKeyboardButton(
                    f"👍 {up}" if up else "👍", callback_data=_data("up", check_id)
                ),
                InlineKeyboardButton(
                    f"👎 {down}" if down else "👎", callback_data=_data("down", check_id)
                ),
                InlineKeyboardButton(words("Review"), callback_data=_data("review", check_id)),
            ],
            *([links] if links else []),
        ]
    )


def progress_html(lines: list[str], words: Words = ENGLISH) -> str:
    """The "checking…" message: what is done so far, one step a line."""
    body = "\n".join(quote_text(line) for line in lines[-30:])
    return f"🔎 <b>{quote_text(words('Checking…'))}</b>" + (f"\n\n{body}" if body else "")


def progress_keyboard(check_id: str, words: Words = ENGLISH) -> InlineKeyboardMarkup:
    return InlineKeyboardMarkup(
        [[InlineKeyboardButton(words("Cancel"), callback_data=_data("cancel", check_id))]]
    )


def _block_parts(heading: str, body: str, url: str, room: int) -> list[str]:
    """One block as one or more message parts: a bold heading, a link, the body in an
    expandable blockquote, cut at paragraphs so each part fits in ``room``."""
    shown = clip_text(heading, _MAX_HEADING)
    title = f"<b>{shown}</b>"
    href = safe_href(url)
    if href:
        title += f'\n<a href="{href}">{clip_text(url, _MAX_URL_SHOWN)}</a>'
    if not body.strip():
        return [title]
    more = f"<b>{shown}</b> (continued)"
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
