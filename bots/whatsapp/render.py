"""The verdict card and the report's sections as WhatsApp messages.

WhatsApp shows plain text with a little markup of its own (``*bold*``, ``_italic_``,
``~strike~``, ```` ```mono``` ````), and has no way to escape it: the markers in what
the model wrote are swapped for look-alikes (:func:`plain`), so that only the card's own
labels are bold. A text message holds 4,096 characters, an interactive message's body
1,024 (:data:`TEXT_LIMIT`, :data:`BODY_LIMIT`); a reply button's title 20
(:data:`BUTTON_TITLE_LIMIT`), and a message has at most three. A link is shown as the
bare address (WhatsApp links it); a message is sent without a link preview.

The card's labels are in the chat's language (the card's own
:class:`~bots.render.words.Words`).
"""

from __future__ import annotations

import re

from bots.render import links
from bots.render.card import Link, VerdictCard
from bots.render.sections import Section
from bots.render.splitting import first_piece, pack, split_text
from bots.render.words import ENGLISH, N_, Words

__all__ = [
    "BODY_LIMIT",
    "BUTTON_TITLE_LIMIT",
    "CARD_BUTTONS",
    "TEXT_LIMIT",
    "button_id",
    "card_buttons",
    "card_text",
    "checking_text",
    "parse_button_id",
    "plain",
    "section_messages",
    "shorten",
]

TEXT_LIMIT = 4096
BODY_LIMIT = 1024
BUTTON_TITLE_LIMIT = 20
#: the card's reply buttons, in order: the debate, the evidence, a moderator's review
CARD_BUTTONS = {"debate": N_("Debate"), "evidence": N_("Evidence"), "review": N_("Review")}

_MARKERS = str.maketrans({"*": "∗", "~": "∼", "`": "ʼ"})
# An underscore formats only at a word's edge: one inside a word (a URL's) stays.
_EDGE_UNDERSCORE = re.compile(r"(?<!\w)_|_(?!\w)")
_ID = re.compile(r"zf:(?P<kind>debate|evidence|review):(?P<check_id>[A-Za-z0-9_-]{1,64})")


def plain(text: str) -> str:
    """``text`` as WhatsApp shows it literally: its formatting markers defused."""
    return _EDGE_UNDERSCORE.sub("＿", text.translate(_MARKERS))


def shorten(text: str, limit: int) -> str:
    """``text`` made :func:`plain`, cut at a sentence or word to fit ``limit``, with "…"."""
    text = plain(text)
    if len(text) <= limit:
        return text
    return first_piece(text, max(1, limit - 1)) + "…"


def _link_lines(found: tuple[Link, ...]) -> list[str]:
    lines = []
    for link in found:
        url = links.safe_url(link.url)
        title = shorten(link.title, 200)
        lines.append(f"• {title}\n  {url}" if url else f"• {title}")
    return lines


def _head(card: VerdictCard) -> list[str]:
    head = [f"{card.icon} *{plain(card.headline)}*"]
    if card.lean:
        head.append(shorten(card.lean, 300))
    return head


def _tail(card: VerdictCard, report_url: str) -> dict[str, str]:
    """Everything below the summary, as blocks by name, in the card's order."""
    words = card.words
    blocks: dict[str, str] = {}
    if card.checked_by:
        lines = _link_lines(card.checked_by)
        blocks["checked_by"] = "\n".join([f"*{words('Published fact-checks')}*", *lines])
    facts = []
    if card.checked:
        facts.append(shorten(card.checked, 200))
    if card.read:
        facts.append(shorten(card.read, 300))
    if card.confidence:
        facts.append(f"*{words('Confidence')}:* {card.confidence}")
    if card.origin:
        facts.append(f"*{words('Origin')}:* {shorten(card.origin, 200)}")
    if card.published is not None:
        facts.append(f"*{words('Published')}:* {card.published.isoformat()}")
    if facts:
        blocks["facts"] = "\n".join(facts)
    if card.links:
        blocks["links"] = "\n".join([f"*{words('Top evidence')}*", *_link_lines(card.links)])
    if card.notes:
        notes = [f"• {shorten(note, 600)}" for note in card.notes]
        blocks["notes"] = "\n".join([f"*{words('Notes')}*", *notes])
    check = words("Check {check_id}", check_id=card.check_id)
    blocks["check"] = f"{plain(card.repeat_note)} {check}".strip()  # an id: never italic
    if report_url:
        blocks["report"] = f"{words('Full report')}: {report_url}"
    return blocks


#: what a card too long for its message loses first
_DROPPED_FIRST = ("notes", "links", "checked_by", "facts")
#: the least of the summary a card keeps before it drops a block
_MIN_SUMMARY = 200


def card_text(card: VerdictCard, *, report_url: str = "", limit: int = TEXT_LIMIT) -> str:
    """The card as one WhatsApp text of at most ``limit`` characters: the headline, the
    lean, the summary, then what the card says besides. What does not fit loses the
    notes, the links, the published fact-checks and the facts, in that order, until the
    summary keeps 200 characters; the summary is cut last."""
    head, tail = "\n".join(_head(card)), _tail(card, report_url)
    wanted = min(len(plain(card.summary)), _MIN_SUMMARY)
    for name in _DROPPED_FIRST:
        room = limit - len(head) - len("\n\n".join(tail.values())) - 4
        if room >= wanted:
            break
        tail.pop(name, None)
    rest = "\n\n".join(tail.values())
    room = limit - len(head) - len(rest) - 4
    summary = shorten(card.summary, room) if card.summary and room > 1 else ""
    text = "\n\n".join(part for part in (head, summary, rest) if part)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def card_buttons(card: VerdictCard) -> list[tuple[str, str]]:
    """The card's reply buttons as ``(id, title)``, titles in the card's language cut to
    20 characters; an early card (``complete`` false) has none yet."""
    if not card.complete:
        return []
    return [
        (button_id(kind, card.check_id), _title(card.words(label)))
        for kind, label in CARD_BUTTONS.items()
    ]


def _title(label: str) -> str:
    return label if len(label) <= BUTTON_TITLE_LIMIT else label[: BUTTON_TITLE_LIMIT - 1] + "…"


def button_id(kind: str, check_id: str) -> str:
    """A reply button's id, which carries its state: ``zf:debate:<check id>``."""
    return f"zf:{kind}:{check_id}"


def parse_button_id(value: str) -> tuple[str, str] | None:
    """``(kind, check id)`` of a card button's id, or ``None`` for any other."""
    found = _ID.fullmatch(value)
    return None if found is None else (found["kind"], found["check_id"])


def section_messages(section: Section) -> list[str]:
    """The texts a section is sent as: its bold title, then each block (a bold heading,
    the body, the link), packed into as few messages of 4,096 characters as fit."""
    parts = [f"*{plain(section.title)}*"]
    for block in section.blocks:
        heading = f"*{shorten(block.heading, 300)}*"
        url = links.safe_url(block.url)
        tail = f"\n{url}" if url else ""
        room = TEXT_LIMIT - len(heading) - len(tail) - 1
        pieces = split_text(plain(block.body), room) or [""]
        parts.append(f"{heading}\n{pieces[0]}".rstrip() + tail)
        parts.extend(pieces[1:])
    return pack(parts, TEXT_LIMIT)


def checking_text(words: Words = ENGLISH) -> str:
    """The "checking…" reply, sent at once (WhatsApp cannot edit it into the card)."""
    return "⏳ " + words("Checking…")
