"""Each passage once, and a source named only by a web address (issue 38 items 2, 5).

A corpus page's snippet and description are both its whole text when it is short: the
engine stores that text once (:func:`~zofia_engine.agents.context.evidence_items`), and
the Evidence thread shows each passage once whatever its punctuation, an old report's
doubled text included (:func:`~bots.render.sentences.passage_once`). A page whose
address is not http(s) (``javascript:``) is "unknown source", never a site called
"javascript", and is not linked: on the card, in the threads of both bots and in a
follow-up's source list.
"""

from __future__ import annotations

import pytest

from tests.factories import full_report

from bots.discord import render as discord_render
from bots.render.card import report_card
from bots.render.sections import section
from bots.render.sentences import passage_once, source_label, source_name, source_site
from bots.telegram import render as telegram_render
from zofia_engine.agents.context import evidence_items
from zofia_engine.records.stage1 import Stage1Result, WebResult
from zofia_engine.report import EvidenceItem, Report

#: a short page with no final full stop, as the corpus gives it
PAGE = "Springfield's council minutes of 12 March record no vote on bicycles or fines"


def _stage1(*hits: WebResult) -> Stage1Result:
    return Stage1Result(
        entities=[],
        threshold=None,
        keywords=[],
        query="q",
        web=list(hits),
        wikipedia=[],
        sources=[],
        timings_ms={},
        notes=[],
    )


def _hit(snippet: str, description: str) -> WebResult:
    return WebResult(
        title="Council minutes",
        url="https://council.example.org/minutes",
        snippet=snippet,
        description=description,
        source="corpus",
    )


@pytest.mark.parametrize(
    ("snippet", "description", "stored"),
    [
        (PAGE, PAGE, PAGE),  # a short page: both its whole text
        ("…record no vote on bicycles…", PAGE, PAGE),  # a snippet cut from the page
        (f"{PAGE}.", PAGE, f"{PAGE}."),  # the same words, whatever the punctuation
        ("", PAGE, PAGE),
        (PAGE, "", PAGE),
        ("The mayor signed nothing.", PAGE, f"The mayor signed nothing. {PAGE}"),  # two
    ],
)
def test_a_pages_text_is_stored_once(snippet: str, description: str, stored: str) -> None:
    [item] = evidence_items(_stage1(_hit(snippet, description)))
    assert item.text == stored


@pytest.mark.parametrize(
    ("text", "once"),
    [
        (f"{PAGE} {PAGE}", PAGE),  # no sentence boundary between the two
        (f"{PAGE}. {PAGE}", f"{PAGE}."),
        (f"{PAGE}! {PAGE}, and more.", f"{PAGE}, and more."),
        ("Text here. More text Text here. More text", "Text here. More text"),
        ("Yes. No. Yes.", "Yes. No."),
        ("New York New York is a song.", "New York New York is a song."),  # too short a repeat
    ],
)
def test_each_passage_is_shown_once_whatever_its_punctuation(text: str, once: str) -> None:
    assert passage_once(text) == once


def _report(*evidence: EvidenceItem) -> Report:
    return full_report("false").model_copy(update={"evidence": list(evidence)})


def test_the_evidence_thread_shows_an_old_reports_doubled_passage_once() -> None:
    doubled = EvidenceItem(
        id="web-1",
        source="web",
        provider="web:corpus",
        title="Council minutes",
        url="https://council.example.org/minutes",
        text=f"{PAGE} {PAGE}",  # stored twice by an older engine
    )
    part = section("evidence", _report(doubled))
    shown = [*telegram_render.section_messages(part), *discord_render.section_messages(part)]
    assert len(shown) == 2
    for message in shown:
        assert message.count("record no vote on bicycles") == 1, message


def test_a_page_whose_address_is_not_the_webs_is_an_unknown_source() -> None:
    script = EvidenceItem(
        id="web-1",
        source="web",
        provider="web:corpus",
        title="Council minutes",
        url="javascript:alert(document.cookie)",
        text="The council passed no such law.",
    )
    assert source_site(script) == "unknown source"
    assert source_name(script) == "unknown source"
    assert source_label(script) == "Council minutes (unknown source)"
    part = section("evidence", _report(script))
    for message in (
        *telegram_render.section_messages(part),
        *discord_render.section_messages(part),
    ):
        assert "unknown source" in message and "javascript" not in message
    card = report_card("c", _report(script))
    embed = discord_render.verdict_embed(card).to_dict()
    assert "javascript" not in telegram_render.card_html(card)  # never linked
    assert "javascript" not in str(embed)
    ordinary = script.model_copy(update={"url": "https://www.council.example.org/minutes"})
    assert source_site(ordinary) == "council.example.org"
