"""Moderators' reviews, the same on every platform: the sentence offering the choices,
the choices' labels, and the save step (the review stored, and the sentence the
moderator gets once the card shows it).

Each platform asks in its own way (Telegram: buttons, then a reply to a prompt; Discord:
a select, then a form) and says a refused note its own way; what it stores, and what
the moderator is told once it is stored, is written here. The sentences are in the
chat's language: the check's, as its card is.

A review's prompt is offered once (:class:`OpenReviews`): a Review tap while the same
review is open (its choices or its note's prompt, until saved, cancelled or expired) is
answered and posts nothing.
"""

from __future__ import annotations

import time
from collections.abc import Hashable
from dataclasses import replace

from bots.render.words import ENGLISH, N_, Words
from bots.service.checks import CheckService
from bots.service.records import ReviewRequest

from .corrections import saved_sentence, verdict_word

__all__ = [
    "CHOICES",
    "CHOOSE",
    "OPEN_S",
    "OpenReviews",
    "choice_label",
    "choose_sentence",
    "save_review",
]

CHOOSE = N_("Review of this verdict ({verdict}): confirm it, or choose the verdict it should have.")
#: what a reviewer may choose, in the order offered: "confirm" keeps the verdict in force
CHOICES = ("confirm", "true", "false", "misleading", "unproven")
_CONFIRM = N_("Confirm")


#: how long a review stays open without an answer (Telegram's note, Discord's select)
OPEN_S = 600.0
#: reviews open at once, at most (the oldest is forgotten first)
MAX_OPEN = 256


class OpenReviews:
    """The reviews whose prompt is open, by a platform's key (Telegram: the chat and the
    check; Discord: the channel, the check and the moderator), each for :data:`OPEN_S`
    seconds at most, :data:`MAX_OPEN` at once. In this process only."""

    def __init__(self) -> None:
        self._until: dict[Hashable, float] = {}

    def open(self, key: Hashable) -> bool:
        """Open the review ``key``; ``False`` when it is open already (nothing to post)."""
        now = time.monotonic()
        for gone in [k for k, until in self._until.items() if until <= now]:
            del self._until[gone]
        if key in self._until:
            return False
        while len(self._until) >= MAX_OPEN:
            del self._until[next(iter(self._until))]
        self._until[key] = now + OPEN_S
        return True

    def close(self, key: Hashable) -> None:
        """The review ``key`` is saved, cancelled or given up: Review offers it again."""
        self._until.pop(key, None)


def choose_sentence(verdict: str, words: Words = ENGLISH) -> str:
    """What a reviewer is asked, naming the check's ``verdict``, in ``words``."""
    return words(CHOOSE, verdict=verdict_word(verdict, words))


def choice_label(choice: str, words: Words = ENGLISH) -> str:
    """One of :data:`CHOICES` as its button says it: "Confirm", or the verdict as the
    card's review note names it, in ``words``."""
    return words(_CONFIRM) if choice == "confirm" else verdict_word(choice, words)


async def save_review(
    service: CheckService, request: ReviewRequest, in_force: str, words: Words = ENGLISH
) -> str:
    """Store a moderator's review (``request``'s verdict one of :data:`CHOICES`:
    "confirm" is ``in_force``, the verdict the check shows now); the sentence they get
    once the platform edited the card to show it, in ``words``.

    Raises:
        CheckNotFoundError: no such check.
        ReviewRefused: a note, link or verdict the rules refuse, or a limit
            (:func:`~bots.render.sentences.review_refusal` words it).
    """
    if request.verdict == "confirm":
        request = replace(request, verdict=in_force)
    review = await service.review(request)
    return saved_sentence(
        review.from_verdict, review.to_verdict, words, everywhere=review.everywhere
    )
