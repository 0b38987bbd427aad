"""Reading a claim against a fact-checker's answer to it (``zofia_engine.agents.answers``).

What a claim asserts, its figures and the rule that two readings must agree are pure
code and tested as such. The findings question goes to a :class:`ScriptedBackend` that
answers "yes" or "no" as told, and a whole check runs with Stage 1 on its real models
over a small local archive of fact-checks (SQLite FTS5) and the panel scripted in
process: these tests prove what the code decides from the answers, not how a model
answers; ``bench/liar_settle.py`` measures the packaged model on LIAR-PLUS.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import pytest_asyncio

from tests.peers.fakes.panel_script import ScriptedPanel, numbered_sentences, schema_name
from tests.peers.fixtures.engine_setup import script

from zofia_engine.agents.answers import Answer, AnswerRules, answer_for, read_answered
from zofia_engine.agents.answers.asserts import asserted, claim_kind
from zofia_engine.agents.answers.figures import compare_figures, figures_in
from zofia_engine.agents.answers.passage import repeats_claim
from zofia_engine.agents.answers.reader import agreed
from zofia_engine.agents.confidence import reading_confidence
from zofia_engine.agents.context import PanelContext
from zofia_engine.agents.evidence_sentences import Sentence, SentenceIndex
from zofia_engine.config import EngineSettings
from zofia_engine.encoder import SentenceTransformerEncoder
from zofia_engine.engine import Engine
from zofia_engine.llm.base import CompletionRequest
from zofia_engine.llm.router import LLMRouter
from zofia_engine.llm.scripted import scripted
from zofia_engine.post import Post
from zofia_engine.report import ClaimResult, EvidenceItem, Quote, Report
from zofia_engine.retrieval.ner import NERBackend
from zofia_engine.retrieval.pipeline import EntityGuidedRetrieval
from zofia_engine.retrieval.web.corpus import CorpusSearch, index_corpus

pytest_plugins = ["tests.peers.fixtures.model_fixtures"]

# ------------------------------------------------------------------ what a claim asserts


@pytest.mark.parametrize(
    ("claim", "kind"),
    [
        ("Says George Washington said a free people should be armed.", "statement"),
        ("Bernie Sanders admits he is a Democratic Socialist.", "statement"),
        ("On the Iraq war, I said it loud and clear.", "event"),  # the speaker's own record
        ("Household incomes are down more than $4,000 since the year 2000.", "figure"),
        ("Says nearly half of Oregon's children are poor.", "figure"),
        ("Fast and Furious began under the Bush administration in 2006.", "event"),  # a year
        ("Martin Luther King Jr. was a Republican!", "event"),
    ],
)
def test_a_claim_asserts_a_statement_a_figure_or_an_event(claim: str, kind: str) -> None:
    assert claim_kind(claim) == kind


def test_the_archives_says_is_the_filing_not_the_claim() -> None:
    assert asserted("Says his boots are made in Wisconsin.") == "His boots are made in Wisconsin."
    assert asserted("Says that under Texas law, it takes six years.") == (
        "Under Texas law, it takes six years."
    )
    assert asserted("Sayings are old.") == "Sayings are old."


# ------------------------------------------------------------------ figures


def test_figures_carry_their_unit_and_years_are_not_figures() -> None:
    found = figures_in(
        "In 2009 I saved $500 million, 65 percent, half the 18,000 jobs, in the 1970s"
    )
    assert [(f.value, f.unit) for f in found] == [
        (500e6, "$"),
        (65.0, "%"),
        (50.0, "%"),
        (18000.0, "job"),
    ]


@pytest.mark.parametrize(
    ("claimed", "given", "outcome"),
    [
        ("unemployment rose 65 percent", "it rose 12 percent", "differs"),
        ("a $4,000 drop", "down about $4,100 a household", "agrees"),
        ("nearly half of children", "about a quarter are poor", "differs"),
        ("18,000 jobs lost", "74 school shootings", "unstated"),  # counts of other things
        ("18,000 jobs lost", "the plan cost $18,000", "unstated"),  # another unit
        ("65 percent", "up 60 percent", "unstated"),  # between agreeing and differing
    ],
)
def test_figures_compare_only_in_one_unit(claimed: str, given: str, outcome: str) -> None:
    assert compare_figures(figures_in(claimed), figures_in(given)) == outcome


# ------------------------------------------------------------------ the answer


def test_a_sentence_that_holds_the_claims_own_words_repeats_it() -> None:
    claim = "His boots are made in Wisconsin."
    assert repeats_claim('Rubio said his boots are "made in Wisconsin."', claim)
    assert not repeats_claim("Most Florsheim shoes are made in India.", claim)


def _item(n: int, source: str = "web", provider: str = CorpusSearch.name) -> EvidenceItem:
    return EvidenceItem(
        id=f"web-{n}",
        source=source,
        provider=provider,
        title="t",
        url=f"corpus:{n}",
        text="x",
    )


def test_only_a_fact_check_archive_answers_and_only_close_enough() -> None:
    pool = [Sentence("web-1", "A sentence of an archived check."), Sentence("web-2", "Other.")]
    index = SentenceIndex(pool, np.array([[1.0, 0.0], [0.0, 1.0]]))
    archive = {"web-1": _item(1), "web-2": _item(2)}
    near, far = AnswerRules(answered_at=0.7, max_sentences=4), AnswerRules(answered_at=0.9)
    found = answer_for("c", np.array([0.8, 0.6]), index, archive, near)
    assert found is not None and found.evidence_id == "web-1" and found.similarity == 0.8
    assert answer_for("c", np.array([0.6, 0.8]), index, archive, far) is None
    wiki = {
        "web-1": _item(1, "wikipedia", "wikipedia:offline"),
        "web-2": _item(2, provider="web:brave"),
    }
    anything = AnswerRules(answered_at=0.1)
    assert answer_for("c", np.array([0.8, 0.6]), index, wiki, anything) is None


# ------------------------------------------------------------------ two readings


@pytest.mark.parametrize(
    ("said", "others", "lean", "settles"),
    [
        ("refutes", ["refutes", None], "refutes", True),
        ("refutes", [None, "refutes"], "refutes", True),  # figures and the question
        ("refutes", ["supports", "refutes"], "refutes", False),  # one reading against
        ("supports", ["refutes", None], "supports", False),  # the two disagree
        ("supports", [None, None], "supports", False),  # one reading alone
        (None, ["refutes", None], "refutes", False),  # the question does not lean
    ],
)
def test_a_claim_settles_only_when_two_readings_agree_and_none_disagrees(
    said: Any, others: list[Any], lean: str, settles: bool
) -> None:
    assert agreed(said, others) == (lean, settles)


# ------------------------------------------------------------------ the reader, scripted

RUBIO = (
    'Rubio said his much-discussed boots are "made in Wisconsin."',
    "His Florsheim ankle boots are not made in the Badger State.",
    "Florsheim told us most of its shoes are made in China, and these came from India.",
)
KITZHABER = (
    "Under Gov. Kitzhaber, unemployment rose 65 percent, his opponent said.",
    "State figures show unemployment rose 12 percent over his two terms.",
)
WASHINGTON = (
    "Gohmert said George Washington said a free people should be armed.",
    "Washington was not speaking about citizens arming themselves against government tyranny.",
    "He was calling for disciplined troops to fight on behalf of the government.",
)


def _answer(sentences: tuple[str, ...], claim: str) -> Answer:
    repeats = tuple(repeats_claim(s, asserted(claim)) for s in sentences)
    return Answer("web-1", sentences, 0.8, repeats)


def _as_read(claim: str, label: str = "not enough information", *cited: str) -> ClaimResult:
    """``claim`` as the stance reader left it: ``label``, citing ``cited``."""
    quotes = [Quote(text=s, evidence_id="web-1") for s in cited]
    return ClaimResult(id="claim-0", kind="core", text=claim, label=label, quotes=quotes)


async def _read(
    claim: ClaimResult, answer: Answer, correct: str
) -> tuple[ClaimResult, list[CompletionRequest]]:
    """``claim`` read against ``answer``, the findings question answered ``correct``."""

    def model(request: CompletionRequest) -> str:
        assert request.schema_name == "findingsreply", request.schema_name
        return json.dumps({"correct": correct})

    backends = scripted(model)
    session = LLMRouter(EngineSettings().llm, backends=backends).session()
    (read,) = await read_answered(
        session, PanelContext(claim.text), [claim], [answer], AnswerRules()
    )
    return read, backends["verifier"].requests  # type: ignore[attr-defined]


async def test_a_figure_the_answer_gives_differently_refutes_only_when_the_question_agrees() -> (
    None
):
    text = "Says under Gov. Kitzhaber, unemployment rose 65 percent."
    answer = _answer(KITZHABER, text)
    read, asked = await _read(_as_read(text), answer, "no")
    assert (read.label, read.read_by) == ("refutes", "answer")
    assert read.answer is not None and read.answer.kind == "figure"
    assert (read.answer.figures, read.answer.said_lean, read.answer.agrees) == (
        "differs",
        "refutes",
        True,
    )
    assert [q.text for q in read.quotes] == [KITZHABER[1]]  # the figure the answer gives
    assert "unemployment rose 65 percent" in asked[0].messages[-1].content
    again, _ = await _read(_as_read(text), answer, "yes")  # the question reads it as so
    assert again.label == "not enough information" and again.quotes == []
    assert again.answer is not None and (again.answer.lean, again.answer.agrees) == (
        "supports",
        False,
    )


async def test_a_statement_the_answer_says_was_never_made_is_refuted() -> None:
    text = "Says George Washington said a free people should be armed to guard against tyranny."
    claim = _as_read(text, "refutes", WASHINGTON[1])
    # The stance reading alone does not settle it: with the findings question reading
    # the claim as so, its label and quote are dropped.
    unsettled, _ = await _read(claim, _answer(WASHINGTON, text), "yes")
    assert unsettled.label == "not enough information" and unsettled.quotes == []
    read, _ = await _read(claim, _answer(WASHINGTON, text), "no")
    assert read.label == "refutes" and read.answer is not None
    assert (read.answer.kind, read.answer.stance, read.answer.agrees) == (
        "statement",
        "refutes",
        True,
    )
    assert [q.text for q in read.quotes] == [WASHINGTON[1]]


async def test_two_readings_that_disagree_leave_the_claim_unsettled_with_the_lean_kept() -> None:
    text = "Says his much-discussed boots are made in Wisconsin."
    read, _ = await _read(_as_read(text, "supports", RUBIO[2]), _answer(RUBIO, text), "no")
    assert read.label == "not enough information" and read.quotes == []
    assert read.answer is not None
    assert (read.answer.stance, read.answer.said_lean, read.answer.lean) == (
        "supports",
        "refutes",
        "refutes",
    )
    assert not read.answer.agrees


async def test_a_sentence_that_only_repeats_the_claim_carries_no_reading() -> None:
    text = "Says his much-discussed boots are made in Wisconsin."
    answer = _answer(RUBIO, text)
    assert answer.repeats == (True, False, False)
    read, _ = await _read(_as_read(text, "supports", RUBIO[0]), answer, "yes")
    assert read.label == "not enough information"
    assert read.answer is not None and read.answer.stance is None and not read.answer.agrees


# ------------------------------------------------------------------ a whole check

ARCHIVE = [
    {"id": "1", "title": "louie gohmert", "text": " ".join(WASHINGTON)},
    {"id": "2", "title": "marco rubio", "text": " ".join(RUBIO)},
]
POST = "George Washington said a free people should be armed to guard against government tyranny."


def _reader(body: dict[str, Any]) -> dict[str, Any]:
    """Refutes the claim with the answer's finding when it is shown."""
    for number, _, text in numbered_sentences(body):
        if "was not speaking" in text:
            return {"stance": "refutes", "sentences": [number], "reason": "Not his meaning."}
    return {"stance": "neither", "sentences": [], "reason": "The sentences do not say."}


@pytest_asyncio.fixture
async def archive_check(
    tmp_path: Path, ner: NERBackend, encoder: SentenceTransformerEncoder
) -> AsyncIterator[Callable[..., Any]]:
    """Checks ``POST`` against a local archive of two fact-checks, the panel scripted."""
    documents, database = tmp_path / "archive.jsonl", tmp_path / "archive.db"
    documents.write_text("".join(json.dumps(d) + "\n" for d in ARCHIVE), encoding="utf-8")
    index_corpus(documents, database)
    engines: list[Engine] = []

    async def check(panel: ScriptedPanel, **agents: Any) -> Report:
        settings = EngineSettings.model_validate(
            {
                "llm": {"backend": "openai", "openai": {"api_key": "sk-test", "model": "panel"}},
                "agents": {"depth": "adaptive", "search_rounds": 0, **agents},
                "web": {"backends": ["corpus"], "corpus": {"path": str(database)}},
                "wikipedia": {"backend": "none"},
            }
        )
        stage1 = EntityGuidedRetrieval(
            settings,
            ner=ner,
            encoder=encoder,
            search_backends=[CorpusSearch(database)],
            wikipedia=False,
        )
        llm = LLMRouter(settings.llm, backends=scripted(panel))
        engines.append(Engine(settings, retrieval=stage1, llm=llm))
        return await engines[-1].check(Post(text=POST))

    yield check
    for engine in engines:
        await engine.aclose()


async def test_a_check_reads_a_claim_against_the_archives_answer(
    archive_check: Callable[..., Any],
) -> None:
    panel = ScriptedPanel(lambda body: "{}")
    claims = {"core_claim": {"sentence": 1, "claim": POST}, "sub_claims": []}
    script(panel, extractorreply=claims, readerreply=_reader, findingsreply={"correct": "no"})
    report = await archive_check(panel, answered_at=0.55)
    core = report.claims[0]
    assert (report.verdict, core.read_by, core.label) == ("false", "answer", "refutes")
    assert core.answer is not None and core.answer.kind == "statement" and core.answer.agrees
    assert [q.text for q in core.quotes] == [WASHINGTON[1]]
    assert len([b for b in panel.requests if schema_name(b) == "findingsreply"]) == 1
    # The answer reading's packaged table is not fitted yet: it gives no confidence.
    assert reading_confidence(core) is None
    # With the answer reading off (the default), the same claim is read as before, with
    # no such question.
    panel.requests.clear()
    off = await archive_check(panel)
    assert off.claims[0].read_by != "answer" and off.claims[0].answer is None
    assert not [b for b in panel.requests if schema_name(b) == "findingsreply"]
