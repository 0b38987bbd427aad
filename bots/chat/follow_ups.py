"""Follow-up questions, as every platform asks and answers them: a reply to one of the
bot's verdict cards asks about that card's check (:func:`bots.service.follow_ups.ask_follow_up`).

What is written once here: the question as the model gets it (the reply's text without
the mention of the bot, :func:`question_text`), the answer with the evidence ids it cites
named as the card names its sources (:func:`named_answer`), the one sentence a question
gets when it cannot be answered (:func:`ask`), and when that sentence is left unsaid
(:func:`say_now`): a burst of refused questions from one user gets one refusal, as a
burst of posts does, and in a group each fixed sentence is said at most once per the
chat's cooldown. Each platform renders the answer (Telegram as HTML, Discord as plain
markdown) and decides which replies are questions.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Iterable
from dataclasses import dataclass
from typing import Literal

from bots.render.sentences import error_sentence, named_sources, source_name
from bots.render.words import ENGLISH, N_, words_for
from bots.service.checks import CheckService
from bots.service.records import CheckNotFoundError, FollowUp, NoReportError, Requester
from bots.service.refusals import RateLimitedError

from .cooldowns import Cooldowns

__all__ = [
    "ASKING",
    "ASK_HOW",
    "BURST_S",
    "NOT_FOUND",
    "Said",
    "ask",
    "named_answer",
    "question_text",
    "say_now",
]

log = logging.getLogger(__name__)

#: a mention of the bot in reply to a card, with no question in it
ASK_HOW = N_(
    "Ask your question in your reply to the card, such as “why?”, “which source?” or "
    "“what is true then?”."
)
#: a question about a check that is not one of this chat's (or no check at all)
NOT_FOUND = N_("This check was not found in this chat.")

# A bracketed group of ids as the answer cites them: "[web-1]", "[web-1, wiki-2]".
_ID_GROUP = re.compile(r"\[([^\[\]\n]{1,120})\]")


def question_text(text: str, mentions: Iterable[str]) -> str:
    """The question in a reply's ``text``: each of ``mentions`` (the ways the bot is
    mentioned: ``@name``, ``<@id>``) taken out wherever it stands, any case, then the
    spaces collapsed. A mention ending in a word character must end a word there
    (``@zofia`` is not taken out of ``@zofia_fan``)."""
    for mention in mentions:
        if not mention:
            continue
        end = r"\b" if re.match(r"\w", mention[-1]) else ""
        text = re.sub(re.escape(mention) + end, " ", text, flags=re.IGNORECASE)
    return " ".join(text.split())


def named_answer(followed: FollowUp) -> str:
    """The answer's text (plain, not yet escaped for any platform) with the evidence ids
    it cites replaced by their sources' names: a bracketed group becomes "(name; name)",
    a bare id the name. The fixed sentence stays as it is when the report does not
    answer."""
    if not followed.answered:
        return followed.text
    by_id = {item.id: item for item in followed.sources}

    def group(found: re.Match[str]) -> str:
        ids = [part.strip() for part in re.split(r"[,;]", found[1])]
        if not ids or not all(i in by_id for i in ids):
            return found[0]
        return "(" + "; ".join(dict.fromkeys(source_name(by_id[i]) for i in ids)) + ")"

    return named_sources(_ID_GROUP.sub(group, followed.text), list(followed.sources))


@dataclass(frozen=True)
class Said:
    """What a question gets instead of an answer: one sentence, and why: ``refused`` by
    a limit (``retry_after_s``: when it may be asked again), ``fixed`` (the same line for
    anyone: how to ask, a check not found, a check with no report), or ``failed``."""

    text: str
    kind: Literal["refused", "fixed", "failed"]
    retry_after_s: float = 0.0


#: how to ask, said to a mention of the bot in reply to a card with no question in it
ASKING = Said(ASK_HOW, "fixed")
#: how long one refusal answers a user's burst of refused questions, at most
BURST_S = 60.0


def say_now(
    cooldowns: Cooldowns, said: Said, *, chat: str, user: str, group_cooldown_s: float | None
) -> bool:
    """Whether ``said`` is said now, or left unsaid (logged by the caller): a burst of
    refused questions from ``user`` in ``chat`` gets one refusal (again once the refusal's
    wait, at most :data:`BURST_S`, is over); in a group (``group_cooldown_s``: its
    cooldown between checks; ``None`` in a private chat) each fixed sentence is said at
    most once per cooldown; anything else always."""
    if said.kind == "refused":
        wait = min(max(said.retry_after_s, 1.0), BURST_S)
        return cooldowns.once(f"{chat} follow-up refusal {user}", wait)
    if said.kind == "fixed" and group_cooldown_s is not None:
        return cooldowns.once(f"{chat} follow-up sentence {said.text}", group_cooldown_s)
    return True


async def ask(
    service: CheckService,
    check_id: str,
    question: str,
    requester: Requester,
    *,
    language: str | Awaitable[str] = "",
) -> FollowUp | Said:
    """Ask ``question`` about check ``check_id`` for ``requester``: the answer, or the
    one sentence the asker gets instead, in the reply language (English when it could
    not be read): a limit reached, or the day's budget spent (when to try again), a check
    not of this chat ("not found"), a check with no report (still running, failed or
    expired), or anything else (the error is logged, the sentence says so).

    Args:
        language: the reply language (``""``: English), or the store read that gives it
            (awaited here, so that its failure is said like any other).
    """
    chat = service.namer.log_name(requester.platform, requester.chat_id)  # never its id
    words = ENGLISH
    try:
        if not isinstance(language, str):
            language = await language
        words = words_for(language)
        return await service.follow_up(check_id, question, requester, language=language)
    except RateLimitedError as exc:
        log.info("follow-up in chat %s refused: %s", chat, exc)
        return Said(error_sentence(exc, words), "refused", exc.retry_after_s)
    except CheckNotFoundError:
        log.info("follow-up on an unknown or foreign check in chat %s", chat)
        return Said(words(NOT_FOUND), "fixed")
    except NoReportError as exc:
        return Said(str(exc), "fixed")
    except Exception as exc:
        log.exception("follow-up on check %s failed", check_id)
        return Said(error_sentence(exc, words), "failed")
