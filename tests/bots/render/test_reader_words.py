"""What a person reads: the card and its threads in a reader's words (no evidence ids,
role ids or scores; numbers that agree; the claim in its own case), and each passage
once in the Evidence thread. (A blank post: test_blank_posts.py.)"""

from __future__ import annotations

import logging
import re

import pytest

from tests.factories import full_report

from bots.discord.render import verdict_embed
from bots.render.card import report_card
from bots.render.progress import progress_lines
from bots.render.sections import already_shown, claim_status, section
from bots.render.sentences import counted, listed, passage_once
from bots.telegram.render import card_html
from zofia_engine.agents.verdict import in_sentence, rule_on_evidence
from zofia_engine.post import ProgressEvent
from zofia_engine.records import notes
from zofia_engine.records.stage1 import Keyword, Stage1Result, WikipediaEntry
from zofia_engine.report import (
    ClaimResult,
    Credibility,
    Debate,
    DebateTurn,
    EvidenceItem,
    ExpertFinding,
    JudgeRuling,
    Lean,
    LinguistFinding,
    Quote,
    Report,
    Stance,
    TreeSummary,
)
from zofia_engine.run_progress import Progress

# An evidence id, a claim's id, a panel member's id or a score, as the panel and the JSON
# write them.
_IDS = re.compile(
    r"\b(?:web|wiki|fc)-\d+\b|\bimg-\d+|\bclaim-\d+|Cites: |\bv \d\.\d\d|\br \d\.\d\d"
)


def _page(n: int, **changes: object) -> EvidenceItem:
    item = EvidenceItem(
        id=f"web-{n}",
        source="web",
        provider="web:corpus",
        title=f"Mayor signs no ban {n}",
        url=f"https://www.example.org/{n}",
        text=f"Passage {n}.",
    )
    return item.model_copy(update=changes)


def _card_notes(**changes: object) -> tuple[str, ...]:
    report = Report(verdict="false", summary="x.").model_copy(update=changes)
    return report_card("c", report).notes


# ------------------------------------------------------------ cards and threads in words


@pytest.mark.parametrize("verdict", ["true", "false", "misleading", "unproven"])
def test_no_thread_shows_an_evidence_id_a_role_id_or_a_score(verdict: str) -> None:
    report = full_report(verdict)
    card = report_card("c", report)
    shown = [card.summary, card.lean, *card.notes]
    shown += [f"{link.title}\n{link.url}" for link in (*card.links, *card.checked_by)]
    # As each platform renders the card: the Telegram message, the Discord embed.
    embed = verdict_embed(card).to_dict()
    fields = [f"{f['name']}\n{f['value']}" for f in embed.get("fields", [])]
    shown += [card_html(card), str(embed.get("title")), str(embed.get("description")), *fields]
    for kind in ("debate", "evidence", "claims"):
        shown += [f"{b.heading}\n{b.body}" for b in section(kind, report).blocks]
    assert [text for text in shown if _IDS.search(text)] == []
    assert report.evidence[0].id in {c for t in report.debate.turns for c in t.cites} | {
        q.evidence_id for c in report.claims for q in c.quotes
    }  # the report itself keeps every id


@pytest.mark.parametrize(
    ("cites", "said"),
    [
        (["expert", "tree"], "Cites the domain expert and the tree of claims."),
        (["claims", "post"], "Cites the claims as read and the post."),
        (["linguist", "stances", "post"], "Cites the linguist, each source's stance and the post."),
        (
            ["post", "web-1"],
            "Cites the post and this source:\n"
            "• Mayor signs no ban 1 (example.org): https://www.example.org/1",
        ),
    ],
)
def test_a_turn_cites_by_who_said_it_and_sources_by_name_and_link(
    cites: list[str], said: str
) -> None:
    turn = DebateTurn(round=1, side="con", argument="As web-1 shows, no ban.", cites=cites)
    ruling = JudgeRuling(round=1, decision="continue", reason="[web-1] outweighs the post.")
    debate = Debate(turns=[turn], rulings=[ruling], rounds=1, max_rounds=3)
    blocks = section("debate", Report(verdict="false", evidence=[_page(1)], debate=debate)).blocks
    assert blocks[0].body == f"As example.org shows, no ban.\n\n{said}"
    assert blocks[1].heading == "Round 1 · Judge: another round"
    assert blocks[1].body == "example.org outweighs the post."


def test_a_failed_step_says_so_without_what_the_backend_said() -> None:
    leak = "HTTP 500 from http://10.0.0.7:8000/v1"
    debate = Debate(
        turns=[DebateTurn(round=1, side="pro", status="failed", error=leak)],
        rulings=[JudgeRuling(round=1, decision=None, status="failed", error=leak)],
    )
    claim = ClaimResult(id="c0", kind="core", text="X.", status="failed", error=leak)
    report = Report(verdict="undetermined", debate=debate, claims=[claim])
    shown = [
        f"{b.heading} {b.body}" for k in ("debate", "claims") for b in section(k, report).blocks
    ]
    assert shown == [
        "Round 1 · For (true) (this turn failed)",
        "Round 1 · Judge: no ruling (the judge's step failed)",
        "Core claim · could not be read X.\n\nIts reading failed; the verdict used the rest.",
    ]


def test_a_claims_status_is_said_in_words() -> None:
    rated = Credibility(domain="example.org", quality=1.0, label="high")
    low = Credibility(domain="infowars.com", quality=0.05, label="low")
    evidence = [
        _page(1, credibility=rated),
        _page(2, credibility=low),
        EvidenceItem(
            id="wiki-1",
            source="wikipedia",
            provider="offline",
            title="Springfield",
            url="",
            text=".",
        ),
    ]

    def status(label: str | None, *ids: str, **changes: object) -> str:
        quotes = [Quote(text="q", evidence_id=i) for i in ids]
        claim = ClaimResult(id="c", kind="core", text="T.", label=label, quotes=quotes)
        return claim_status(claim.model_copy(update=changes), evidence)

    assert status("supports", "web-1") == "supported by example.org"
    assert status("refutes", "web-1", "wiki-1") == (
        "contradicted by example.org and Wikipedia (Springfield)"
    )
    assert status("supports", "web-2") == (
        "supported only by infowars.com, whose support does not count"
    )
    assert status("refutes") == status("not enough information", "web-1") == "not settled"
    assert status(None) == "not read"
    assert status("supports", "web-1", status="failed") == "could not be read"


@pytest.mark.parametrize(
    ("verdict", "decision", "heading"),
    [
        ("false", "false", "Tree of claims · false"),
        ("unproven", None, "Tree of claims · not settled"),
        ("unproven", "true", None),  # "true" beside an unproven card: not shown
        ("misleading", "false", None),
        ("true", "false", None),
    ],
)
def test_the_trees_summary_agrees_with_the_verdict_or_is_not_shown(
    verdict: str, decision: str | None, heading: str | None
) -> None:
    tree = TreeSummary(veracity=0.5, reliability=0.1, decision=decision, evaluations=1)
    claim = ClaimResult(id="c0", kind="core", text="T.", label="not enough information")
    blocks = section("claims", Report(verdict=verdict, claims=[claim], tree=tree)).blocks
    trees = [b for b in blocks if b.heading.startswith("Tree of claims")]
    assert [b.heading for b in trees] == ([heading] if heading else [])
    if trees:
        assert "after 1 judgement." in trees[0].body  # one judgement, not "1 judgements"


def test_numbers_agree_with_their_nouns() -> None:
    assert counted(1, "judgement") == "1 judgement" and counted(0, "document") == "0 documents"
    assert counted(2, "entity", "entities") == "2 entities"
    assert counted(12345, "character") == "12,345 characters"
    assert listed([]) == "" and listed(["a"]) == "a" and listed(["a", "b"]) == "a and b"
    assert listed(["a", "b", "c"], "or") == "a, b or c"
    assert already_shown("claims") == "The claims are already in this thread."
    assert already_shown("debate") == "The debate is already in this thread."
    forced = Debate(turns=[], forced=True, max_rounds=1, held=True)
    assert "The judge did not decide within 1 round; the ruling was forced." in _card_notes(
        debate=forced
    )
    failed = Debate(turns=[DebateTurn(round=1, side="pro", status="failed")])
    assert "1 of 1 analysis step failed; the verdict used the rest." in _card_notes(debate=failed)


@pytest.mark.parametrize("stopped_by", ["repetition", "no_evidence", "probabilities"])
def test_a_debate_that_stopped_early_is_not_called_forced(stopped_by: str) -> None:
    # The last ruling of a debate that stopped early is a forced one too, but the round
    # limit did not cut it short: the card must not say so.
    ended = Debate(turns=[], forced=True, max_rounds=5, held=True, stopped_by=stopped_by)
    assert not any("did not decide" in note for note in _card_notes(debate=ended))


def _stage1(keywords: int, documents: int) -> Stage1Result:
    keyword = Keyword(text="Springfield", label="LOC", salience=1, mmr_score=1, lambda_k=1)
    entry = WikipediaEntry(
        keyword="Springfield",
        title="Springfield",
        url="https://en.wikipedia.org/wiki/Springfield",
        text="A city.",
        description="",
        score=1.0,
        candidates=[],
        source="offline",
    )
    return Stage1Result(
        entities=[],
        threshold=None,
        keywords=[keyword] * keywords,
        query="q",
        web=[],
        wikipedia=[entry] * documents,
        sources=[],
        timings_ms={},
        notes=[],
    )


@pytest.mark.parametrize(
    ("result", "shown"),
    [
        (_stage1(1, 0), "✓ entity-guided retrieval finished (1 keyword, 0 documents)"),
        (_stage1(11, 1), "✓ entity-guided retrieval finished (11 keywords, 1 document)"),
        ([], "✓ entity-guided retrieval finished"),
        (
            [LinguistFinding(dimension="word"), LinguistFinding(dimension="x", status="failed")],
            "✓ entity-guided retrieval finished (1 of 2 done)",
        ),
    ],
)
async def test_progress_lines_count_in_words(result: object, shown: str) -> None:
    """The engine counts in words where it summarises a step; the line shows it as is."""
    events: list[ProgressEvent] = []

    async def work() -> object:
        return result

    await Progress(events.append, 0.0).stage("retrieval", work(), {})
    assert progress_lines([events[-1]]) == [shown]


async def test_a_failed_steps_progress_line_says_so_and_its_error_stays_in_the_log(
    caplog: pytest.LogCaptureFixture,
) -> None:
    leak = "HTTP 500 from http://10.0.0.7:8000/v1"
    failed = ExpertFinding(expert_role="epidemiologist", status="failed", error=leak)
    events: list[ProgressEvent] = []

    async def work() -> ExpertFinding:
        return failed

    caplog.set_level(logging.WARNING, logger="zofia_engine.run_progress")
    assert await Progress(events.append, 0.0).stage("expert", work(), {}) is failed
    assert progress_lines([events[-1]]) == [
        "✓ domain expert finished (failed; the check goes on without it)"
    ]
    assert [r.getMessage() for r in caplog.records] == [f"step expert failed: {leak}"]

    async def fine() -> ExpertFinding:
        return ExpertFinding(expert_role="epidemiologist")

    await Progress(events.append, 0.0).stage("expert", fine(), {})
    assert progress_lines([events[-1]]) == ["✓ domain expert finished (epidemiologist)"]


@pytest.mark.parametrize(
    ("claim", "settle"),
    [
        ("This is a hoax.", "confirms or denies that this is a hoax."),
        ("“This is a hoax.”", "confirms or denies that “this is a hoax”."),
        ("It's  a\nhoax.", "confirms or denies that it's a hoax."),
        ("In 2020 the WHO lied.", "confirms or denies that in 2020 the WHO lied."),
        ("NASA faked it.", "confirms or denies that NASA faked it."),
        ("Springfield banned bicycles.", "confirms or denies that Springfield banned bicycles."),
        ("I saw it.", "confirms or denies that I saw it."),
    ],
)
def test_the_claim_keeps_its_own_case_in_what_would_settle_it(claim: str, settle: str) -> None:
    core = ClaimResult(id="c0", kind="core", text=claim, label="not enough information")
    ruled = rule_on_evidence("false", 0.6, [core])
    assert ruled.lean is not None and ruled.lean.settle.endswith(settle)
    assert in_sentence(claim) in ruled.lean.settle


def test_the_lean_is_one_short_line_and_what_would_settle_it_a_note() -> None:
    settle = "A trustworthy source that confirms or denies that the city banned bicycles."
    report = Report(verdict="unproven", lean=Lean(outcome="misleading", settle=settle))
    card = report_card("u", report)
    assert card.lean == "The panel leans misleading."
    assert f"What would settle it: {settle}" in card.notes
    assert report_card("t", Report(verdict="true")).lean == ""


@pytest.mark.parametrize(
    ("changes", "note"),
    [
        (
            {"notes": [notes.web_off()]},
            "No web evidence: web search is off on this bot.",
        ),
        (
            {"notes": [notes.left_out("web")]},
            "No web evidence: web search was left out of this check.",
        ),
        (
            {"notes": [notes.source_failed("web:brave", "HTTP 429")], "search_mode": "live"},
            "No web evidence: the web search failed.",
        ),
        ({"search_mode": "live"}, "No web evidence: the web search found nothing on this post."),
        (
            {"search_mode": "paper"},
            "No web evidence: the web search, which leaves out news sites, found nothing.",
        ),
    ],
)
def test_no_web_evidence_says_why(changes: dict[str, object], note: str) -> None:
    notes = _card_notes(**changes)
    assert note in notes
    assert "HTTP 429" not in " ".join(notes)
    assert not any("No web" in n for n in _card_notes(evidence=[_page(1)], **changes))


def test_the_card_says_when_the_post_was_cut_and_how_much_was_read() -> None:
    both = [notes.post_cut(12_345, 10_000), notes.models_cut(6000)]
    cut = "The post was cut: it has 12,345 characters and only the first 10,000 were checked"
    assert f"{cut}; the panel read its first 6,000 characters." in _card_notes(notes=both)
    seen = _card_notes(notes=both[1:], verdict="no_claim")  # triaged: still said
    assert seen == ("The post was cut: the panel read its first 6,000 characters.",)
    failed = [notes.source_failed("web:brave", "x")]
    assert not any("cut" in n for n in _card_notes(notes=failed))
    # The card reads the notes' kinds and numbers, not their words: reworded, the same.
    reworded = [n.model_copy(update={"text": "something else"}) for n in both]
    assert f"{cut}; the panel read its first 6,000 characters." in _card_notes(notes=reworded)


def test_help_describes_the_four_outcomes_and_what_comes_when() -> None:
    from bots.telegram.commands import HELP

    text = HELP.format(days=30)
    assert "true, false, misleading or unproven" in text
    for outcome in (
        "✅ <b>True</b>",
        "❌ <b>False</b>",
        "⚠️ <b>Misleading</b>",
        "❔ <b>Unproven</b>",
    ):
        assert outcome in text
    assert '"Checking…" message at once' in text and "about a minute" in text
    assert "real or fake" not in text


# ------------------------------------------------------------------ each passage once


@pytest.mark.parametrize(
    ("text", "once"),
    [
        (
            "The mayor did not sign… The mayor did not sign any ban on bicycles.",
            "The mayor did not sign any ban on bicycles.",
        ),
        (
            "The mayor did not sign any ban. No fine was set... The mayor did not sign any "
            "ban. No fine was set for cyclists.",
            "The mayor did not sign any ban. No fine was set for cyclists.",
        ),
        ("Same passage. Same passage.", "Same passage."),
        ("First.\n\nSecond… Third.", "First.\n\nSecond… Third."),  # a cut, said once: kept
        ("", ""),
    ],
)
def test_each_passage_is_shown_once(text: str, once: str) -> None:
    assert passage_once(text) == once


def test_an_evidence_block_names_its_source_date_stance_and_quality() -> None:
    import datetime as dt

    snippet = "Springfield's mayor signed no… Springfield's mayor signed no bicycle ban."
    page = _page(
        3,
        text=snippet,
        published=dt.date(2026, 11, 3),
        stance=Stance(label="refutes", sentence="Springfield's mayor signed no bicycle ban."),
        credibility=Credibility(domain="example.org", quality=0.9, label="high"),
    )
    bare = _page(4, url="", title="A page with no address")
    wiki = EvidenceItem(
        id="wiki-1", source="wikipedia", provider="offline", title="Springfield", url="", text="S."
    )
    check = EvidenceItem(
        id="fc-1",
        source="factcheck",
        provider="politifact.com",
        publisher="PolitiFact",
        rating="False",
        title="No, Springfield did not ban bicycles",
        url="https://www.politifact.com/x",
        text="No ordinance.",
        published=dt.date(2026, 3, 20),
    )
    report = Report(verdict="false", evidence=[page, bare, wiki, check])
    blocks = section("evidence", report).blocks
    assert (blocks[0].heading, blocks[0].url) == ("Mayor signs no ban 3", page.url)
    assert blocks[0].body == (
        "example.org · 2026-11-03 · contradicts the post's core claim · high quality\n"
        "Springfield's mayor signed no bicycle ban."
    )
    assert blocks[0].body.count("mayor signed no") == 1
    assert blocks[1].body == "Passage 4."  # no domain, no date, no rating: nothing to say
    assert blocks[2].body == "Wikipedia\nS."
    assert blocks[3].body.splitlines()[0] == (
        "published fact-check by PolitiFact · rated “False” · 2026-03-20"
    )
    assert all("web:corpus" not in b.body and "[" not in b.heading for b in blocks)
