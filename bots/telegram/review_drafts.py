"""A review waiting for its note, from the tap that chose its verdict to the reply to
its prompt. It lives in this process only: a bounded dict of at most
:data:`MAX_DRAFTS` entries, each kept :data:`DRAFT_TTL_S` seconds (a restart, or a
late reply, is told to tap Review again)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import cast

from telegram import Message
from telegram.ext import ContextTypes

from bots.chat.reviews import OPEN_S

__all__ = ["DRAFT_TTL_S", "MAX_DRAFTS", "Draft", "Drafts", "drafts_of", "wait_for_note"]

#: how long a review waits for its note (as long as it stays open), and how many may wait
DRAFT_TTL_S = OPEN_S
MAX_DRAFTS = 256
_DRAFTS = "zofia-review-drafts"


@dataclass(frozen=True)
class Draft:
    """A review waiting for its note: of which check, by whom, to what, on which card."""

    check_id: str
    user_id: int
    verdict: str
    card_message_id: int
    expires: float


class Drafts:
    """The reviews waiting for their notes, by ``(chat id, prompt message id)``: at most
    :data:`MAX_DRAFTS`, each for :data:`DRAFT_TTL_S` seconds (the oldest go first)."""

    def __init__(self) -> None:
        self._waiting: dict[tuple[int, int], Draft] = {}

    def add(self, chat_id: int, prompt_id: int, draft: Draft) -> None:
        now = time.monotonic()
        for key in [k for k, d in self._waiting.items() if d.expires <= now]:
            del self._waiting[key]
        while len(self._waiting) >= MAX_DRAFTS:
            del self._waiting[next(iter(self._waiting))]
        self._waiting[(chat_id, prompt_id)] = draft

    def get(self, chat_id: int, prompt_id: int) -> Draft | None:
        """The review waiting on this prompt, unless it has expired."""
        draft = self._waiting.get((chat_id, prompt_id))
        if draft is None or draft.expires <= time.monotonic():
            self._waiting.pop((chat_id, prompt_id), None)
            return None
        return draft

    def take(self, chat_id: int, prompt_id: int) -> None:
        self._waiting.pop((chat_id, prompt_id), None)

    def __len__(self) -> int:
        return len(self._waiting)


def drafts_of(context: ContextTypes.DEFAULT_TYPE) -> Drafts:
    """This bot's reviews waiting for their notes."""
    return cast(Drafts, context.bot_data.setdefault(_DRAFTS, Drafts()))


def wait_for_note(context: ContextTypes.DEFAULT_TYPE, prompt: Message, draft: Draft) -> None:
    """Keep ``draft`` for :data:`DRAFT_TTL_S` seconds, waiting for a reply to ``prompt``."""
    expires = time.monotonic() + DRAFT_TTL_S
    waiting = Draft(draft.check_id, draft.user_id, draft.verdict, draft.card_message_id, expires)
    drafts_of(context).add(prompt.chat_id, prompt.message_id, waiting)
