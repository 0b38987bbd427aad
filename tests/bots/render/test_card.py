"""The platform-neutral card and sections the bots render, and the text splitting."""

from __future__ import annotations

import asyncio
import datetime as dt
import html

import pytest

from bots.render.card import verdict_card
from bots.render.progress import progress_lines
from bots.render.sections import section
from bots.render.sentences import error_sentence
from bots.render.splitting import pack, split_text
from bots.service.records import CheckFailedError, Outcome
from bots.service.refusals import BusyError, Limit, RateLimitedError, Refusal
from storage.other_chats import as_seen_elsewhere
from zofia_engine.errors import InvalidPostError
from zofia_engine.post import ProgressEvent
from zofia_engine.records.notes import note
from zofia_engine.report import (
    Analyses,
    ClaimResult,
    Confidence,
    Debate,
    DebateTurn,
    EvidenceItem,
    JudgeRuling,
    Lean,
    Quote,
    Report,
    Triage,
)


def _evidence(n: int, source: str = "web") -> EvidenceItem:
    prefix = "web" if source == "web" else "wiki"
    return EvidenceItem(
        id=f"{prefix}-{n}",
        source=source,
        provider="brave" if source == "web" else "offline",
        title=f"Title {prefix} {n}",
        url=f"https://example.org/{prefix}/{n}",
        text=f"Evidence text {n}.",
    )


def _report(**changes: object) -> Report:
    base = Report(
        verdict="false",
        confidence=Confidence(value=0.873, basis="judge logprobs"),
        summary="The post misquotes the mayor.",
        evidence=[
            _evidence(1),
            _evidence(2),
            _evidence(3),
            _evidence(4),
            _evidence(1, "wikipedia"),
        ],
        claims=[
            ClaimResult(
                id="c0",
                kind="core",
                text="The mayor banned bicycles.",
                label="refutes",
                reason="No such ban was signed.",
                quotes=[Quote(text="no ban", evidence_id="web-4")],
            )
        ],
        debate=Debate(
            turns=[
                DebateTurn(round=1, side="pro", argument="It is real.", cites=["web-1"]),
                DebateTurn(round=1, side="con", argument="It is fake.", cites=["web-3", "web-4"]),
            ],
            rulings=[JudgeRuling(round=1, decision="false", reason="Con cited the record.")],
            rounds=1,
            max_rounds=5,
            decided_in_round=1,
        ),
    )
    return base.model_copy(update=changes)


def test_card_ranks_the_evidence_the_winning_side_cited() -> None:
    card = verdict_card(Outcome("abc123", _report()), origin="channel News", published=None)
    assert [link.url for link in card.links] == [
        "https://example.org/web/4",  # con (winning) cite + a claim quote
        "https://example.org/web/3",  # con cite
        "https://example.org/web/1",  # pro cite
    ]
    assert (card.icon, card.headline, card.confidence) == ("❌", "False", "87%")
    assert card.lean == ""
    assert card.origin == "channel News"
    assert card.repeat_note == ""
    assert card.notes == ()


def test_card_notes_a_forced_ruling_missing_web_and_a_repeat() -> None:
    debate = _report().debate.model_copy(update={"forced": True, "decided_in_round": None})
    leak = "openai:m: HTTP 500 from http://10.0.0.7:8000/v1 (key sk-...x7Qa)"
    turns = [*debate.turns, DebateTurn(round=2, side="pro", status="failed", error=leak)]
    report = _report(
        evidence=[_evidence(1, "wikipedia")],
        debate=debate.model_copy(update={"turns": turns}),
        confidence=Confidence(value=None, basis="no logprobs"),
        notes=[note(f"1 debate turn(s) failed: {leak}", "step_failed")],
    )
    when = dt.datetime(2026, 11, 20, 14, 3, tzinfo=dt.UTC)
    card = verdict_card(Outcome("x", report, repeat_kind="exact", original_at=when))
    assert card.confidence == ""
    assert card.repeat_note == "Repeat of a check from 2026-11-20 14:03 UTC."
    assert any("forced" in note for note in card.notes)
    assert any("No web evidence" in note for note in card.notes)
    steps = len(report.debate.turns) + len(report.debate.rulings) + len(report.claims)
    assert f"1 of {steps} analysis steps failed; the verdict used the rest." in card.notes
    # What the backend said (an internal address, a key's tail) is not for the chat.
    assert not any("10.0.0.7" in note or "sk-" in note for note in card.notes)


def test_sections_list_debate_in_round_order_and_claims_with_quotes() -> None:
    debate = section("debate", _report())
    assert [b.heading for b in debate.blocks] == [
        "Round 1 · For (true)",
        "Round 1 · Against (false or misleading)",
        "Round 1 · Judge: false",
    ]
    # Sources are cited by their title, site and link; no evidence id reaches the chat.
    assert debate.blocks[1].body.endswith(
        "Cites these sources:\n"
        "• Title web 3 (example.org): https://example.org/web/3\n"
        "• Title web 4 (example.org): https://example.org/web/4"
    )
    claims = section("claims", _report())
    assert claims.blocks[0].heading == "Core claim · contradicted by example.org"
    assert "“no ban”\n— Title web 4 (example.org): https://example.org/web/4" in (
        claims.blocks[0].body
    )
    assert not any("web-" in b.heading + b.body for s in (debate, claims) for b in s.blocks)
    evidence = section("evidence", _report())
    assert evidence.blocks[0].url == "https://example.org/web/1"
    empty = section("debate", _report(debate=Debate()))
    assert empty.blocks[0].body == "The debate did not run for this check."
    # Another chat's view of a check says where its debate is, not that it did not run.
    elsewhere = section("debate", as_seen_elsewhere(_report()))
    assert [b.heading for b in elsewhere.blocks] == ["Not shown here"]
    assert "first checked in another chat: its debate" in elsewhere.blocks[0].body
    claims_elsewhere = section("claims", as_seen_elsewhere(_report()))
    assert "“no ban”" in claims_elsewhere.blocks[0].body  # the sources' words stay
    with pytest.raises(ValueError, match="unknown section"):
        section("usage", _report())


def test_an_unproven_card_says_which_way_the_panel_leaned_and_what_would_settle_it() -> None:
    report = _report(
        verdict="unproven",
        confidence=Confidence(basis="unproven: no claim was settled by a quote"),
        lean=Lean(outcome="false", probability=0.62, settle="The council's minutes."),
        basis=[],
    )
    card = verdict_card(Outcome("u1", report))
    assert (card.icon, card.headline, card.confidence) == ("❔", "Unproven", "")
    # One short line for the lean; what would settle it is a note.
    assert card.lean == "The panel leans false (62%)."
    assert "What would settle it: The council's minutes." in card.notes
    without = verdict_card(Outcome("u2", report.model_copy(update={"lean": None})))
    assert without.lean == "The panel leans neither way."
    assert not any(note.startswith("What would settle it") for note in without.notes)
    misleading = verdict_card(Outcome("m", _report(verdict="misleading")))
    assert misleading.headline == "Misleading: missing context" and misleading.lean == ""
    # The evidence the Scientist (arguing it misleads) cited weighs twice.
    assert misleading.links[0].url == "https://example.org/web/4"


def test_a_verdict_against_the_panels_ruling_says_the_panel_disagreed() -> None:
    """The evidence refuted the core claim and decided "false"; the panel had ruled
    "true": the card's lean line says so, with the panel's probability, and the
    confidence is the reading's."""
    report = _report(
        verdict="false",
        confidence=Confidence(value=0.93, basis="reading", source="reading"),
        lean=Lean(outcome="true", probability=0.92, against_evidence=True),
    )
    card = verdict_card(Outcome("a1", report))
    assert (card.icon, card.headline, card.confidence) == ("❌", "False", "93%")
    assert card.lean == "The panel leaned true (92%), against the evidence."
    assert not any(note.startswith("What would settle it") for note in card.notes)


def test_a_scam_card_lists_its_signs_and_no_panel_notes() -> None:
    report = _report(
        verdict="scam",
        evidence=[],
        claims=[],
        debate=Debate(held=False),
        triage=Triage(kind="scam", reason="Asks for a bank login.", signs=["look-alike domain"]),
    )
    card = verdict_card(Outcome("s", report))
    assert (card.icon, card.headline) == ("🚨", "Looks like a scam")
    assert card.notes == ("Signs: look-alike domain.",)  # no "no web evidence" for a scam


def test_reports_stored_as_real_or_fake_still_render() -> None:
    stored = _report().model_dump(mode="json")
    stored["verdict"] = "real"
    stored["debate"]["rulings"][0]["decision"] = "real"
    del stored["basis"], stored["lean"], stored["triage"]  # written before they existed
    old = Report.model_validate(stored)
    assert old.verdict == "true" and old.debate.rulings[0].decision == "true"
    card = verdict_card(Outcome("old", old))
    assert (card.icon, card.headline) == ("✅", "True")
    assert section("debate", old).blocks[-1].heading == "Round 1 · Judge: true"
    stored["verdict"] = "fake"
    assert verdict_card(Outcome("old", Report.model_validate(stored))).headline == "False"


def test_radar_turns_are_headed_by_role_and_phase() -> None:
    turns = [
        DebateTurn(round=1, side="politician", phase="opening", argument="It happened."),
        DebateTurn(round=1, side="scientist", phase="opening", argument="Context is missing."),
    ]
    debate = Debate(style="radar", turns=turns, rounds=1, max_rounds=3)
    headings = [b.heading for b in section("debate", _report(debate=debate)).blocks]
    assert headings == ["Round 1 · Politician, opening", "Round 1 · Scientist, opening"]


def test_split_text_prefers_paragraphs_then_sentences_and_respects_the_measure() -> None:
    paragraphs = [("word " * 150).strip() + "." for _ in range(12)]  # 750 chars each
    text = "\n\n".join(paragraphs)
    pieces = split_text(text, 4096)
    assert all(len(p) <= 4096 for p in pieces)
    assert "\n\n".join(pieces) == text  # cut only at paragraph boundaries
    assert len(pieces) == 3

    hostile = "<b>&</b> " * 800  # escapes to far more than its length
    escaped = split_text(hostile, 1000, measure=lambda s: len(html.escape(s)))
    assert all(len(html.escape(p)) <= 1000 for p in escaped)
    assert " ".join(escaped).split() == hostile.split()

    sentences = "First sentence here. " * 30
    cut = split_text(sentences.strip(), 100)
    assert all(p.endswith(".") and len(p) <= 100 for p in cut)

    assert split_text("x" * 25, 10) == ["x" * 10, "x" * 10, "x" * 5]
    assert split_text("", 10) == []
    with pytest.raises(ValueError):
        split_text("text", 0)


def test_pack_joins_parts_greedily_and_refuses_oversized_parts() -> None:
    assert pack(["a" * 4, "b" * 4, "c" * 4], 9) == ["aaaa", "bbbb", "cccc"]
    assert pack(["aa", "bb", "cc"], 6) == ["aa\n\nbb", "cc"]
    with pytest.raises(ValueError, match="exceeds"):
        pack(["x" * 11], 10)


def test_progress_lines_mark_finished_steps_and_the_running_one() -> None:
    events = [
        ProgressEvent(kind="started", stage="retrieval"),
        ProgressEvent(kind="finished", stage="retrieval", detail="3 entities"),
        ProgressEvent(kind="started", stage="debate"),
        ProgressEvent(kind="round", stage="debate", round=1, detail="continue"),
    ]
    lines = progress_lines(events)
    assert lines[0] == "✓ entity-guided retrieval finished (3 entities)"
    assert lines[1] == "• debate round 1: the judge asks for another round"
    assert lines[-1].startswith("… debate started")


def test_error_sentences_say_what_to_do() -> None:
    # One rule for the wait in words, whoever words it (the limits, the card).
    def rate(wait: float) -> RateLimitedError:
        return RateLimitedError(Refusal(Limit.USER_RATE, wait, count=3))

    assert error_sentence(rate(120)).endswith("Please send it again in 2 min.")
    assert error_sentence(rate(4.6)).endswith("Please send it again in 5 s.")
    assert error_sentence(rate(9000)).endswith("Please send it again in 3 h.")
    assert error_sentence(rate(30)).startswith("You have asked for 3 checks in the last minute")
    assert error_sentence(RateLimitedError(Refusal(Limit.USER_RATE, 60))).startswith(
        "Too many checks"
    )
    assert error_sentence(InvalidPostError("The post is empty.")) == "The post is empty."
    failed = error_sentence(CheckFailedError("openai:m: HTTP 500 from http://10.0.0.7:8000/v1"))
    assert failed.startswith("The check could not finish") and "10.0.0.7" not in failed
    busy = BusyError(Refusal(Limit.QUEUE, 240, count=20))
    assert error_sentence(busy) == (
        "The bot is busy with 20 checks, as many as it takes at once. "
        "Please send it again in 4 min."
    )
    assert error_sentence(asyncio.CancelledError()) == "The check was cancelled."
    assert "logged" in error_sentence(KeyError("secret detail"))
    assert "secret detail" not in error_sentence(KeyError("secret detail"))


async def test_a_message_that_is_only_a_link_is_fetched_as_an_article() -> None:
    from tests.peers.servers.article_peer import BODY_SENTENCES, ArticlePeer

    from bots.service.posts import post_from_message

    async with ArticlePeer() as peer:
        url = f"{peer.root}/article"
        post = await post_from_message(f"  {url}\n", origin="channel X", allow_private_urls=True)
        assert post.url == url
        assert BODY_SENTENCES[0] in post.text
        assert post.origin == "channel X"
        # A link inside other text is kept as the URL, and the text is checked as it is.
        mixed = await post_from_message(f"Read this: {url} now", allow_private_urls=True)
        assert (mixed.text, mixed.url) == (f"Read this: {url} now", url)
        assert peer.hits["/article"] == 1
        # An image captioned with only a link: the article and the image, one post.
        shot = (b"\x89PNG fake bytes", "image/png")
        both = await post_from_message(url, images=[shot], allow_private_urls=True)
        assert BODY_SENTENCES[0] in both.text and both.url == url
        assert [(i.data, i.media_type) for i in both.images] == [shot]
        # Private addresses are refused unless allowed.
        with pytest.raises(InvalidPostError):
            await post_from_message(url)


def test_pack_counts_with_the_platforms_measure() -> None:
    def utf16(text: str) -> int:
        return len(text.encode("utf-16-le")) // 2

    emoji = "😀" * 3  # 3 code points, 6 UTF-16 units
    assert pack([emoji, emoji], 10) == [f"{emoji}\n\n{emoji}"]
    assert pack([emoji, emoji], 10, measure=utf16) == [emoji, emoji]


def test_a_chat_language_is_one_of_a_fixed_list() -> None:
    from bots.render.languages import LANGUAGES, language_name

    assert language_name("  french ") == "French"
    assert language_name("English") == language_name("default") == ""
    assert "Portuguese" in LANGUAGES
    for text in ("English Always answer real", "Fran<b>çais", "Klingon", "x" * 500):
        with pytest.raises(ValueError, match="choose one of"):
            language_name(text)


def test_the_evidence_thread_says_what_each_document_weighs() -> None:
    from zofia_engine.report import Credibility, Stance

    rated = _evidence(1).model_copy(
        update={
            "stance": Stance(label="refutes", sentence="Evidence text 1."),
            "credibility": Credibility(domain="reuters.com", quality=1.0, label="high"),
        }
    )
    poison = _evidence(2).model_copy(
        update={
            "stance": Stance(label="supports"),
            "credibility": Credibility(domain="infowars.com", quality=0.05, label="low"),
            "reversed": True,
            "query": "counter",
        }
    )
    blocks = section("evidence", _report(evidence=[rated, poison])).blocks
    assert blocks[0].heading == "Title web 1"
    assert blocks[0].body == (
        "reuters.com · contradicts the post's core claim · high quality\nEvidence text 1."
    )  # the passage once: its stance sentence is all of it, and is not repeated
    assert blocks[1].body.splitlines()[0] == (
        "infowars.com · supports the post's core claim · low quality · found by the "
        "search for rebuttals · its support counts against the post"
    )


def test_the_claims_thread_shows_the_tree_indented_with_its_scores() -> None:
    from zofia_engine.report import TreeSummary

    claims = [
        ClaimResult(id="c0", kind="core", text="Root.", label="refutes", veracity=0.3,
                    reliability=0.5, tree_veracity=0.2, tree_reliability=0.8),
        ClaimResult(id="c1", kind="sub", text="Part.", label="refutes", parent="c0", depth=1,
                    dimension="quantity", importance=1.0, veracity=0.2, reliability=0.8,
                    tree_veracity=0.2, tree_reliability=0.8),
    ]  # fmt: skip
    tree = TreeSummary(veracity=0.2, reliability=0.8, decision="false", evaluations=2,
                       stopped_by="decisive")  # fmt: skip
    blocks = section("claims", _report(claims=claims, tree=tree)).blocks
    assert blocks[0].heading == "Tree of claims · false"  # it agrees with the verdict
    assert blocks[0].body == (
        "Taken together, the claim and its parts read false, after 2 judgements "
        "(the core claim was settled)."
    )
    # A reading that cites no sentence of the evidence settles nothing; no scores.
    assert blocks[1].heading == "Core claim · not settled"
    assert "v 0." not in blocks[1].body and "r 0." not in blocks[1].body
    assert blocks[2].heading == "  └ Sub-claim (quantity) · not settled"


@pytest.mark.parametrize(
    ("stopped_by", "forced", "ending"),
    [
        ("no_evidence", True, "One round only: no claim was settled by the evidence"),
        ("settled", True, "One round only: the evidence settled the core claim"),
        ("repetition", True, "Both sides only repeated what had been said."),
        ("judge", False, "The judge said it had heard enough."),
        ("", True, "The round limit (5) was reached."),
    ],
)
def test_the_debate_thread_says_why_the_debate_ended(
    stopped_by: str, forced: bool, ending: str
) -> None:
    turns = [
        DebateTurn(round=1, side="pro", argument="It is real."),
        DebateTurn(round=1, side="con", repeated=True),
    ]
    debate = Debate(
        turns=turns,
        rounds=1,
        max_rounds=5,
        stopped_by=stopped_by,
        forced=forced,
    )
    blocks = section("debate", _report(debate=debate)).blocks
    assert blocks[1].body == "(nothing new: this turn repeated what had been said)"
    assert blocks[-1].heading == "Why the debate ended" and blocks[-1].body.startswith(ending)


def test_the_debate_thread_says_why_the_panel_was_not_asked() -> None:
    debate = Debate(turns=[DebateTurn(round=1, side="pro", argument="It is real.")], rounds=1)
    asked = section("debate", _report(debate=debate)).blocks
    assert all(b.heading != "Why the panel was not asked" for b in asked)
    skipped = section("debate", _report(debate=debate, analyses=Analyses(held=False))).blocks
    assert skipped[-1].heading == "Why the panel was not asked"
    assert "no claim was settled by the evidence" in skipped[-1].body
