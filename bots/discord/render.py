"""The verdict card and the report's sections as Discord embeds and messages.

Everything the model wrote is escaped for Discord markdown (no bold, masked
links, headings or mentions can be smuggled in) and cut to Discord's limits:
2000 characters a message; in an embed 256 for the title, 4096 for the
description, 1024 a field value, 2048 for the footer and 6000 in all. A bare URL
in the model's text stays a clickable link (Discord links any ``https://…``,
escaped or not): it shows where it leads, and the bot posts sections with link
previews suppressed, so no preview card is unfurled for it. Every message is
sent with :data:`NONE` (no mention pings). The card's labels are in the chat's
language: the card's own :class:`~bots.render.words.Words`, or those given.
"""

from __future__ import annotations

import re
from urllib.parse import quote

import discord

from bots.render import links
from bots.render.card import Link, VerdictCard
from bots.render.sections import Section
from bots.render.splitting import first_piece, pack, split_text
from bots.render.words import ENGLISH, Words

__all__ = [
    "MESSAGE_LIMIT",
    "NONE",
    "escape",
    "progress_message",
    "safe_url",
    "section_messages",
    "shorten",
    "thread_name",
    "verdict_embed",
]

#: what every message the bot sends allows to ping: nobody
NONE = discord.AllowedMentions.none()
MESSAGE_LIMIT = 2000
TITLE_LIMIT = 256
DESCRIPTION_LIMIT = 4096
FIELD_LIMIT = 1024
FOOTER_LIMIT = 2048
EMBED_LIMIT = 6000
THREAD_NAME_LIMIT = 100

# Characters Discord markdown gives a meaning to; a backslash before any of them shows it as is.
_MARKDOWN = re.compile(r"([\\*_~|`>#\[\]()<])")
_LIST_DASH = re.compile(r"^(\s*)([-+])", re.MULTILINE)
_MENTION = re.compile(r"@(everyone|here)", re.IGNORECASE)


def escape(text: str) -> str:
    """``text`` shown literally: markdown, masked links, ``<@id>`` and ``@everyone`` defused."""
    text = _MARKDOWN.sub(r"\\\1", text)
    text = _LIST_DASH.sub(r"\1\\\2", text)
    return _MENTION.sub("@\u200b\\1", text)


def _escaped_length(text: str) -> int:
    return len(escape(text))


def shorten(text: str, limit: int) -> str:
    """``text`` escaped, cut at a sentence or word so that it fits ``limit``, with "…"."""
    if _escaped_length(text) <= limit:
        return escape(text)
    first = first_piece(text, limit - 1, _escaped_length)
    return escape(first) + "…"


def safe_url(url: str) -> str:
    """An address :func:`~bots.render.links.safe_url` lets be linked, with the
    characters that would end a markdown link encoded; ``""`` for any other."""
    return quote(links.safe_url(url), safe=":/?#@!$&'*+,;=%~._-")


def _links_field(links: tuple[Link, ...]) -> str:
    lines = []
    for link in links:
        url = safe_url(link.url)
        if url:
            lines.append(f"• [{shorten(link.title, 200)}]({url})")
    value = "\n".join(lines)
    while len(value) > FIELD_LIMIT and lines:
        lines.pop()
        value = "\n".join(lines)
    return value


_MAX_LEAN = 300  # the lean is one short line
_MAX_READ = 300  # the image's first words (the card cuts them to about 120)


def verdict_embed(card: VerdictCard) -> discord.Embed:
    """The card as an embed in the verdict's colour, within every embed limit."""
    words = card.words
    embed = discord.Embed(
        title=f"{card.icon} {card.headline}"[:TITLE_LIMIT],
        colour=discord.Colour(card.colour),
    )
    checked = _links_field(card.checked_by)
    if checked:
        embed.add_field(name=words("Published fact-checks"), value=checked, inline=False)
    if card.checked or card.read:  # an image post: what was read, and the first of it
        # The field's name says "Checked": its value is what follows that.
        what = card.checked.removeprefix(words("Checked: {read}", read=""))
        shown = [shorten(what, 200)] if what else []
        if card.read:
            shown.append(shorten(card.read, _MAX_READ))
        embed.add_field(name=words("Checked"), value="\n".join(shown), inline=False)
    if card.confidence:
        embed.add_field(name=words("Confidence"), value=card.confidence, inline=True)
    if card.origin:
        embed.add_field(name=words("Origin"), value=shorten(card.origin, 200), inline=True)
    if card.published is not None:
        published = card.published.isoformat()
        embed.add_field(name=words("Published"), value=published, inline=True)
    links = _links_field(card.links)
    if links:
        embed.add_field(name=words("Top evidence"), value=links, inline=False)
    if card.notes:
        notes = "\n".join(f"• {note}" for note in card.notes)
        embed.add_field(name=words("Notes"), value=shorten(notes, FIELD_LIMIT), inline=False)
    check = words("Check {check_id}", check_id=card.check_id)
    footer = f"{card.repeat_note} {check}".strip()
    embed.set_footer(text=footer[:FOOTER_LIMIT])
    used = len(embed)  # title, fields and footer so far
    room = min(DESCRIPTION_LIMIT, EMBED_LIMIT - used - 1)
    # An unproven card's lean is one plain line right under the headline, then the summary.
    lean = f"{shorten(card.lean, _MAX_LEAN)}\n\n" if card.lean else ""
    text = shorten(card.summary, max(0, room - len(lean))) if card.summary else ""
    embed.description = (lean + text).strip() or None
    return embed


def _block_parts(section: Section) -> list[list[str]]:
    """Each block as messages of at most 2000 characters: a bold heading, then the body."""
    rendered = []
    for block in section.blocks:
        heading = f"**{shorten(block.heading, 300)}**"
        url = safe_url(block.url)
        tail = f"\n<{url}>" if url and len(url) < 500 else ""
        room = MESSAGE_LIMIT - len(heading) - len(tail) - 1
        pieces = [escape(piece) for piece in split_text(block.body, room, _escaped_length)]
        pieces = pieces or [""]
        messages = [f"{heading}\n{pieces[0]}".rstrip() + tail]
        messages.extend(pieces[1:])
        rendered.append(messages)
    return rendered


def section_messages(section: Section) -> list[str]:
    """The messages a section is posted as: each debate turn its own message (or more,
    when long); evidence and claims packed into as few messages as fit."""
    parts = _block_parts(section)
    if section.kind == "debate":
        return [message for block in parts for message in block]
    return pack([message for block in parts for message in block], MESSAGE_LIMIT)


def thread_name(check_id: str) -> str:
    """The name of the thread a verdict's sections open in."""
    return f"Fact-check {check_id}"[:THREAD_NAME_LIMIT]


def progress_message(lines: list[str], words: Words = ENGLISH) -> str:
    """The deferred response while a check runs: the latest steps that fit one message."""
    head = "⏳ " + escape(words("Checking…"))
    kept: list[str] = []
    size = len(head)
    for line in reversed(lines):
        line = shorten(line, 300)
        if size + len(line) + 1 > MESSAGE_LIMIT:
            break
        kept.insert(0, line)
        size += len(line) + 1
    return "\n".join([head, *kept])
