"""The first-run example: a short false post and the report of its check, shipped with
the package (``first_run.json``, a :class:`~zofia_engine.report.Report`), so that
``/start`` and ``/help`` can show what the bot does with a forward without checking
anything: the card is rendered from the stored report by each bot's own renderer.

The post and the report are English (the report's summary is the panel's words); what
frames them (:data:`EXAMPLE`, :data:`ASKED`, :data:`ANSWERED`, :data:`BUTTONS`) and the
card's own words are said in the chat's language through the catalogues.
"""

from __future__ import annotations

import functools
from importlib import resources

from bots.render.card import VerdictCard, report_card
from bots.render.words import ENGLISH, N_, Words
from zofia_engine.report import Report

__all__ = [
    "ANSWERED",
    "ASKED",
    "BUTTONS",
    "EXAMPLE",
    "EXAMPLE_ID",
    "FIRST_RUN_POST",
    "first_run_card",
    "first_run_report",
]

#: the example card's check id: no check has it (a real one is 16 characters)
EXAMPLE_ID = "example"
#: the post the example's report is the check of
FIRST_RUN_POST = (
    "The Great Wall of China is the only man-made structure you can see from the Moon "
    "with the naked eye."
)
#: what marks the example as one, first, in bold
EXAMPLE = N_("Example:")
ASKED = N_("someone asks me to check this post:")
ANSWERED = N_("and gets this card:")
#: the one line on what a card's buttons do
BUTTONS = N_(
    "Under a card, Debate, Evidence and Claims show the panel's arguments, its sources "
    "and the claims it checked; 👍 / 👎 say whether the verdict was right; Share passes "
    "the check on. This one is only an example: nothing was checked."
)


@functools.cache
def first_run_report() -> Report:
    """The example's report, read from the package once.

    Raises:
        pydantic.ValidationError: the shipped file is not a valid report (a packaging bug:
            ``tests/bots/chat/test_first_run.py`` validates it).
    """
    data = resources.files(__package__).joinpath("first_run.json").read_text(encoding="utf-8")
    return Report.model_validate_json(data)


def first_run_card(words: Words = ENGLISH) -> VerdictCard:
    """The example's verdict card in ``words``: no origin, no date, no repeat note."""
    return report_card(EXAMPLE_ID, first_run_report(), words=words)
