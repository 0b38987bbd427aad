"""What the bots store, for how long, and how to have it deleted: one text, said by
Telegram's, Discord's and WhatsApp's ``/privacy`` in the chat's language (each message
is in the catalogues, ``locales/``; English when the chat's has no words) and by the
report site's ``/privacy`` page, in English.

The text is plain (no markup): each front-end escapes it for its own. What it says
follows ``storage/retention.py`` (what the purge deletes and what it keeps),
``storage.retention_days`` and ``storage/other_chats.py`` (what another chat is shown
of a check); there is no command a user can run to delete their checks, so it says to
ask the operator.
"""

from __future__ import annotations

import datetime as dt

from .words import ENGLISH, N_, Words

__all__ = ["PRIVACY_TITLE", "privacy_paragraphs", "privacy_text", "retention_days_of"]

PRIVACY_TITLE = N_("Privacy: what this fact-check bot stores")

_STORED = N_(
    "What is stored: for each check, the post's text (with the text read from its "
    "images), where it was forwarded from, its link, and the report (the verdict, "
    "the summary, the evidence and the panel's debate), with the votes and any comment "
    "given on it. Your user id and the chat's id are stored only as keyed hashes, never "
    "as they are. Images are never stored, only a fingerprint (hash) of each. While a "
    "check runs, where its card is to be posted is kept until the card is posted. Where "
    "each card was shown (the chat and message ids) is kept as long as the post's text, "
    "so that a moderator's correction of the verdict can reach it."
)
_OTHER_CHATS = N_(
    "What other chats learn: a post checked in a group or a channel may answer the same "
    "post sent elsewhere (another chat, or a tipline through the API), with only the "
    "verdict, the summary and the sources, never the post's text or what was read from "
    "its images. A check asked in a private chat answers only that chat."
)
_PAGES = N_(
    "Report pages: each check's report page can be opened by anyone who has its link; "
    "there is no list or search of them."
)
_MODEL = N_("Answers come from AI models, which can be wrong: read the sources before you share.")


def retention_days_of(retention: dt.timedelta | None) -> int | None:
    """The retention in whole days, as a check service holds it (``None``: kept)."""
    return None if retention is None else max(1, retention.days)


#: what a deployment that purges nothing says instead (``storage.retention_days`` unset)
_KEPT_UNTIL_DELETED = N_(
    "For how long: this deployment keeps checks until its operator deletes them."
)
_ASK_THE_OPERATOR = N_(
    "How to delete it: there is no command for it; ask the operator of this bot."
)


def _kept(days: int, words: Words) -> str:
    """For how long, said for ``days`` (a plural: the number of days agrees with it)."""
    return words.plural(
        "For how long: after {days} day the post's text, where it came from, its link, the "
        "report's summary, evidence and debate, and any comment are deleted. What stays, "
        "for statistics: the verdict, its confidence, the vote counts, the times and the "
        "hashed ids. A chat's settings are deleted once it has had no check for {days} day.",
        "For how long: after {days} days the post's text, where it came from, its link, the "
        "report's summary, evidence and debate, and any comment are deleted. What stays, "
        "for statistics: the verdict, its confidence, the vote counts, the times and the "
        "hashed ids. A chat's settings are deleted once it has had no check for {days} days.",
        days,
        days=days,
    )


def _deleted(days: int, words: Words) -> str:
    """How to have it deleted, said for ``days``."""
    return words.plural(
        "How to delete it: there is no command to delete your checks yourself. Ask the "
        "operator of this bot to delete them (send them the link to the report, or say when "
        "you asked); otherwise they are deleted after {days} day as above.",
        "How to delete it: there is no command to delete your checks yourself. Ask the "
        "operator of this bot to delete them (send them the link to the report, or say when "
        "you asked); otherwise they are deleted after {days} days as above.",
        days,
        days=days,
    )


def privacy_paragraphs(retention_days: int | None, words: Words = ENGLISH) -> tuple[str, ...]:
    """The privacy text as paragraphs, in ``words``' language; ``retention_days`` is
    ``storage.retention_days`` (``None``: this deployment purges nothing)."""
    if retention_days is None:
        kept, delete = words(_KEPT_UNTIL_DELETED), words(_ASK_THE_OPERATOR)
    else:
        kept, delete = _kept(retention_days, words), _deleted(retention_days, words)
    return (words(_STORED), kept, words(_OTHER_CHATS), words(_PAGES), delete, words(_MODEL))


def privacy_text(retention_days: int | None, words: Words = ENGLISH) -> str:
    """The privacy text as one plain message, in ``words``' language (English: well
    under Discord's 2,000 characters; a longer language's is split by Discord's
    ``/privacy``)."""
    return "\n\n".join((words(PRIVACY_TITLE), *privacy_paragraphs(retention_days, words)))
