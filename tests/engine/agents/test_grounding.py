"""The rules that keep a check to what it found, on hand-written inputs (no model):
claims the post makes, sentence-number citations, quoted phrases, repeated turns, and
the words under a verdict."""

from __future__ import annotations

import numpy as np
import pytest

from zofia_engine.agents.claims import PostClaim, kept_claims, support
from zofia_engine.agents.debate import TurnEditor
from zofia_engine.agents.evidence_sentences import Sentence, SentenceList
from zofia_engine.agents.novelty import Novelty
from zofia_engine.agents.quotes import Haystack, unfounded
from zofia_engine.agents.reading import ReaderReply, cited, reading_of
from zofia_engine.agents.summary import ruling_summary
from zofia_engine.agents.verdict import (
    Ruled,
    allowed_outcomes,
    in_sentence,
    rule_on_evidence,
    verdict_of,
)
from zofia_engine.report import (
    OUTCOMES,
    ClaimResult,
    DebateTurn,
    EvidenceItem,
    JudgeRuling,
    Lean,
    Quote,
)

EIFFEL = [
    "The Eiffel Tower, the wrought-iron lattice tower completed in 1889, stands in the "
    "centre of Berlin, Germany.",
    "Millions of people visit it every year.",
]

# ------------------------------------------------------------------ claims the post makes


def test_a_claim_the_named_sentence_carries_is_kept() -> None:
    written = [
        PostClaim(sentence=1, claim="The Eiffel Tower stands in the centre of Berlin."),
        PostClaim(sentence=2, claim="Millions of people visit the Eiffel Tower every year."),
    ]
    found = kept_claims(written, EIFFEL, 0.5, 5)
    assert [(c.id, c.kind, c.sentence) for c in found.claims] == [
        ("claim-0", "core", 1),
        ("claim-1", "sub", 2),
    ]
    assert found.dropped == 0


@pytest.mark.parametrize(
    "written",
    [
        PostClaim(sentence=1, claim="The Eiffel Tower is a famous landmark in Paris, France."),
        PostClaim(sentence=1, claim="The Eiffel Tower is a symbol of French engineering."),
        PostClaim(sentence=7, claim="The Eiffel Tower stands in Berlin."),  # no such sentence
        PostClaim(sentence=0, claim="The Eiffel Tower stands in Berlin."),
        PostClaim(sentence=2, claim="The Eiffel Tower stands in the centre of Berlin."),
    ],
)
def test_a_claim_no_named_sentence_supports_is_dropped_and_counted(written: PostClaim) -> None:
    keep = PostClaim(sentence=1, claim="The tower was completed in 1889.")
    found = kept_claims([written, keep], EIFFEL, 0.5, 5)
    assert [c.text for c in found.claims] == ["The tower was completed in 1889."]
    assert found.claims[0].kind == "core"  # the first kept claim is the core
    assert found.dropped == 1


def test_with_every_claim_dropped_the_posts_first_sentence_is_the_core_claim() -> None:
    found = kept_claims([PostClaim(sentence=1, claim="Paris is in France.")], EIFFEL, 0.5, 5)
    assert found.dropped == 1
    assert [(c.kind, c.sentence) for c in found.claims] == [("core", 1)]
    assert found.claims[0].text.startswith("The Eiffel Tower, the wrought-iron")


def test_support_compares_word_stems() -> None:
    assert support("Rembrandt painted the Mona Lisa", "The Mona Lisa, a painting by Rembrandt") == 1
    assert support("the of and", "anything") == 0.0


# ------------------------------------------------------------------ citations by number

SHOWN = SentenceList(
    [
        Sentence("wiki-1", "The Eiffel Tower is a lattice tower on the Champ de Mars in Paris."),
        Sentence("wiki-2", "Berlin is the capital of Germany."),
    ],
    np.eye(2, dtype=np.float32),
)
SIMILARITY = np.array([0.71, 0.12], dtype=np.float32)  # the claim's cosine to each
CLAIM = ClaimResult(id="claim-0", kind="core", text="The Eiffel Tower stands in Berlin.")


def test_a_cited_number_is_the_sentence_itself() -> None:
    reply = ReaderReply(stance="refutes", sentences=[1], reason="It is in Paris.")
    read = reading_of(CLAIM, reply, SIMILARITY, SHOWN, 0.3)
    assert read.label == "refutes" and read.dropped_quotes == 0
    assert [(q.evidence_id, q.text) for q in read.quotes] == [
        ("wiki-1", "The Eiffel Tower is a lattice tower on the Champ de Mars in Paris.")
    ]


@pytest.mark.parametrize(
    ("numbers", "dropped"),
    [([3], 1), ([0, -1], 2), ([2], 1), ([], 0)],  # out of range; off the claim; none
)
def test_a_stance_with_no_sentence_that_counts_settles_nothing(
    numbers: list[int], dropped: int
) -> None:
    reply = ReaderReply(stance="refutes", sentences=numbers, reason="Refuted.")
    read = reading_of(CLAIM, reply, SIMILARITY, SHOWN, 0.3)
    assert read.label == "not enough information"
    assert read.quotes == [] and read.dropped_quotes == dropped


def test_cited_keeps_good_numbers_beside_bad_ones_and_each_once() -> None:
    quotes, dropped = cited([1, 1, 9, 2], SIMILARITY, SHOWN, 0.3)
    assert [q.evidence_id for q in quotes] == ["wiki-1"] and dropped == 2


# ------------------------------------------------------------------ quoted phrases

SOURCES = Haystack(["Tim Cook said the European Commission had approved the design."])


def test_a_quote_found_nowhere_is_dropped_with_its_sentence_and_counted() -> None:
    text = (
        "The post uses superlatives like 'newest' and 'best'. "
        'It quotes "approved the design" from the post. It is calm.'
    )
    kept, dropped = unfounded(text, SOURCES)
    assert kept == 'It quotes "approved the design" from the post. It is calm.'
    assert dropped == 2


def test_apostrophes_are_not_quotes() -> None:
    text = "Apple's design and the company's chief are named. Cook's words 'approved' stand."
    assert unfounded(text, SOURCES) == (text, 0)


# ------------------------------------------------------------------ repeated turns


def test_a_repeated_part_is_blanked_and_a_turn_with_nothing_new_is_marked() -> None:
    linguist = "The post uses emotional language and vague sources to persuade its readers."
    editor = TurnEditor(Novelty(0.8, [linguist]), SOURCES)
    first = editor.turn(DebateTurn(round=1, side="con", rebuttal=linguist, argument="New point."))
    assert (first.rebuttal, first.argument, first.repeated) == ("", "New point.", False)
    again = editor.turn(DebateTurn(round=2, side="con", argument="New point."))
    assert again.argument == "" and again.repeated
    assert editor.repeats == 2


def test_novelty_counts_containment_not_topic() -> None:
    novelty = Novelty(0.8, ["The Eiffel Tower is in Paris, not in Berlin, says the article."])
    assert novelty.repeats("the eiffel tower is in paris, not in berlin")
    assert not novelty.repeats("Berlin has its own tower, the Fernsehturm, built in 1969.")


# ------------------------------------------------------------------ words under a verdict


@pytest.mark.parametrize(
    ("claim", "inside"),
    [
        ("The city banned bicycles.", "the city banned bicycles"),
        ("This is a hoax.", "this is a hoax"),
        ("Apple unveiled a new iPhone.", "Apple unveiled a new iPhone"),
        ("NASA landed on Mars.", "NASA landed on Mars"),
        ("A twitter account posted it.", "a twitter account posted it"),
        ("I saw it.", "I saw it"),
    ],
)
def test_a_claim_keeps_its_case_inside_a_sentence(claim: str, inside: str) -> None:
    assert in_sentence(claim) == inside


def test_an_overruled_ruling_is_not_shown() -> None:
    lean = Lean(outcome="true", probability=0.94, settle="A source.")
    ruling = JudgeRuling(round=1, decision="true", reason="The evidence supports the claim.")
    summary = ruling_summary(Ruled("unproven", [], lean), ruling, settled=False)
    assert "supports" not in summary and "settles none" in summary
    # Claims the evidence settled, none of them the panel's way: not "none settled".
    some = ruling_summary(Ruled("unproven", [], lean), ruling, settled=True)
    assert "supports" not in some and "settles some" in some and "settles none" not in some


def test_with_nothing_settled_no_sentence_says_the_evidence_supports() -> None:
    ruling = JudgeRuling(
        round=1,
        decision="unproven",
        reason="The evidence provided supports the claim. Nothing settles it yet.",
    )
    # An unproven post is said so in the code's words, never the judge's.
    summary = ruling_summary(Ruled("unproven", []), ruling, settled=False)
    assert summary == "The evidence found settles none of the post's claims."
    # A verdict on a published fact-check alone (no claim settled): the judge's reason,
    # without the sentence that says the evidence supports anything.
    on_a_factcheck = ruling_summary(Ruled("false", ["fc-1"]), ruling, settled=False)
    assert on_a_factcheck == "Nothing settles it yet."
    settled = ruling_summary(Ruled("false", ["claim-0"]), ruling, settled=True)
    assert settled.startswith("The evidence provided supports")


# ------------------------------------------------------------------ the verdict's direction


def _claim(label: str, kind: str = "core", id_: str = "claim-0") -> ClaimResult:
    quote = Quote(text="A sentence of the evidence.", evidence_id="wiki-1")
    return ClaimResult(id=id_, kind=kind, text="A claim.", label=label, quotes=[quote])


@pytest.mark.parametrize(
    ("outcome", "claims", "verdict", "overruled"),
    [
        # A settled core claim decides: the judge's ruling stands only among the outcomes
        # it allows, and gives way to the evidence's own otherwise.
        ("true", [_claim("refutes")], "false", True),
        ("unproven", [_claim("refutes")], "false", True),
        ("misleading", [_claim("refutes")], "false", True),  # misleading needs mixed evidence
        ("misleading", [_claim("refutes"), _claim("supports", "sub", "c1")], "misleading", False),
        ("false", [_claim("refutes")], "false", False),
        ("true", [_claim("supports")], "true", False),
        ("false", [_claim("supports")], "true", True),
        ("misleading", [_claim("supports")], "true", True),
        ("misleading", [_claim("supports"), _claim("refutes", "sub", "c1")], "misleading", False),
        # An unsettled core claim: the judge's outcome stands only on evidence its way.
        (
            "true",
            [_claim("not enough information"), _claim("refutes", "sub", "c1")],
            "unproven",
            False,
        ),
        (
            "false",
            [_claim("not enough information"), _claim("refutes", "sub", "c1")],
            "false",
            False,
        ),
    ],
)
def test_a_verdict_stands_only_on_evidence_that_goes_its_way(
    outcome: str, claims: list[ClaimResult], verdict: str, overruled: bool
) -> None:
    ruled = rule_on_evidence(outcome, 0.9, claims)
    assert (ruled.verdict, ruled.overruled) == (verdict, overruled)
    assert bool(ruled.basis) == (verdict != "unproven")


@pytest.mark.parametrize("outcome", ["true", "false"])
def test_a_refuted_core_claim_never_ends_true_and_a_supported_one_never_false(
    outcome: str,
) -> None:
    """The judge scripted against the evidence: the verdict is the evidence's, the lean
    keeps the panel's ruling marked as against the evidence, and the card's summary is
    the reading's own words, not the panel's prose."""
    label = "refutes" if outcome == "true" else "supports"
    core = _claim(label).model_copy(update={"reason": "The evidence says otherwise: x."})
    said = JudgeRuling(round=1, decision=outcome, reason="The post is accurate.")
    ruled, _ = verdict_of(
        said, {outcome: 0.92}, [core], [], require_evidence=True, no_logprobs=False
    )
    assert ruled.verdict == ("false" if outcome == "true" else "true")
    assert ruled.lean is not None and ruled.lean.against_evidence
    assert (ruled.lean.outcome, ruled.lean.probability) == (outcome, 0.92)
    summary = ruling_summary(ruled, said, settled=True, core=core)
    assert summary == "The evidence says otherwise: x."


def test_a_vision_finding_alone_never_makes_false_what_the_text_evidence_supports() -> None:
    """A vision model's finding ("edited") is no basis against the text evidence: a
    supported core claim keeps the post true. Alone it grounds "misleading" at most: a
    judge ruling "false" on it alone leaves the post unproven, leaning false."""
    from zofia_engine.images.grounds import VISION

    finding = EvidenceItem(
        id="img-1-vision",
        source="image",
        provider=VISION,
        title="",
        url="",
        text="The image looks edited.",
        rating="false",
    )
    ruled = rule_on_evidence("false", 0.8, [_claim("supports")], [finding])
    assert ruled.verdict == "true" and ruled.overruled
    unsettled = [_claim("not enough information")]
    alone = rule_on_evidence("false", 0.8, unsettled, [finding])
    assert alone.verdict == "unproven" and alone.basis == []
    assert alone.lean is not None and alone.lean.outcome == "false"
    milder = rule_on_evidence("misleading", 0.8, unsettled, [finding])
    assert milder.verdict == "misleading" and milder.basis == ["img-1-vision"]
    # With a refuted claim beside it, "false" stands on the claim, not on the image.
    refuted = rule_on_evidence("false", 0.8, [_claim("refutes")], [finding])
    assert refuted.verdict == "false" and refuted.basis == ["claim-0"]


def test_the_allowed_outcomes_follow_the_settled_core_claim() -> None:
    assert allowed_outcomes([_claim("refutes")], ["claim-0"]) == ("false",)
    assert allowed_outcomes([_claim("supports")], ["claim-0"]) == ("true",)
    # "Misleading" needs evidence both ways: another claim settled the other way.
    mixed = [_claim("refutes"), _claim("supports", "sub", "c1")]
    assert allowed_outcomes(mixed, ["claim-0", "c1"]) == ("false", "misleading")
    assert allowed_outcomes(mixed, ["claim-0"]) == ("false",)  # c1 not settled
    assert allowed_outcomes([_claim("refutes")], []) == OUTCOMES  # not settled: all four
    sub = [_claim("not enough information"), _claim("refutes", "sub", "c1")]
    assert allowed_outcomes(sub, ["c1"]) == OUTCOMES


@pytest.mark.parametrize(
    ("outcome", "claims"),
    [
        ("false", [_claim("not enough information")]),  # nothing was settled
        ("true", [_claim("not enough information"), _claim("refutes", "sub", "c1")]),
    ],
)
def test_a_judges_figure_set_aside_says_nothing_settled_backs_its_outcome(
    outcome: str, claims: list[ClaimResult]
) -> None:
    ruling = JudgeRuling(round=1, decision=outcome, reason="As argued.")
    ruled, confidence = verdict_of(
        ruling, {outcome: 0.9}, claims, [], require_evidence=True, no_logprobs=False
    )
    assert ruled.verdict == "unproven" and confidence.value is None
    assert confidence.basis == (
        f"unproven: the judge ruled {outcome}, but nothing the evidence settled backs it"
    )
