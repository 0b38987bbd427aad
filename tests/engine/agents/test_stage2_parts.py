"""Stage 2's pure parts: templates, reply parsing, the judge's confidence, quotes, eq. 9."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import jinja2
import numpy as np
import pytest
from pydantic import BaseModel, ConfigDict

from zofia_engine.agents.claims import ExtractorReply
from zofia_engine.agents.context import PanelContext
from zofia_engine.agents.evidence_sentences import SentenceIndex
from zofia_engine.agents.judge import calibrated
from zofia_engine.agents.linguist import DIMENSIONS
from zofia_engine.agents.quotes import find_quote
from zofia_engine.llm.base import TokenLogprob
from zofia_engine.llm.structured import ReplyParseError, bounded_schema, json_schema, parse_reply
from zofia_engine.llm.token_odds import option_probabilities
from zofia_engine.post import ABLATIONS, Ablation
from zofia_engine.prompting import TEMPLATE_NAMES, render
from zofia_engine.report import OUTCOMES, EvidenceItem

# Every variable each template needs, with a value.
TEMPLATE_VARIABLES: dict[str, dict[str, Any]] = {
    "follow_up": {
        "verdict": "false",
        "summary": "s",
        "ruling": "r",
        "claims": [],
        "documents": [],
        "turns": [],
        "question": "why?",
        "max_words": 80,
    },
    "analyses": {"lines": [{"id": "linguist", "text": "Reads as fabricated."}]},
    "debate_turn": {
        "round": 1,
        "side_word": "pro",
        "position": "true",
        "rebuttal": "r",
        "argument": "a",
        "cites": ["post"],
    },
    "debater": {
        "position": "true",
        "other_position": "false or misleading",
        "opponent": "x",
        "max_words": 90,
    },
    "contradiction": {"sentence": "A sentence.", "claim": "A claim."},
    "contradiction_system": {},
    "decompose": {"claim": "A claim.", "min_sub": 2, "max_sub": 4},
    "domain": {},
    "evidence": {
        "documents": [
            {
                "id": "web-1",
                "source_label": "Web page",
                "title": "t",
                "published": "",
                "note": "",
                "lines": ["1. x"],
            }
        ]
    },
    "expert": {"expert_role": "economist", "max_words": 70},
    "extractor": {"min_sub": 2, "max_sub": 4, "post_language": "German"},
    "judge": {
        "rounds": 1,
        "max_rounds": 5,
        "max_words": 80,
        "settled": True,
        "findings": [],
        "allowed": OUTCOMES,
    },
    "judge_final": {
        "rounds": 5,
        "max_words": 80,
        "settled": False,
        "findings": [],
        "allowed": OUTCOMES,
    },
    "linguist": {"dimension": DIMENSIONS["emotion"], "max_words": 40},
    "node": {"claim": "A claim.", "own": [1, 3], "max_words": 50, "max_cited": 3},
    "only_llm": {"max_words": 40},
    "outcomes": {},
    "post": {"text": "A post.", "published": "2024-01-02", "origin": "a channel", "url": ""},
    "radar_debater": {"role": "scientist", "phase": "rebuttal", "opponent": "x", "max_words": 90},
    "repair": {"error": "no JSON", "schema": "{}"},
    "stance": {"id": "web-1", "title": "t", "text": "A page.", "claim": "A claim."},
    "system": {"language": "French"},
    "triage": {},
    "vision": {},
    "reader": {"claim": "A claim.", "own": [2], "max_words": 40, "max_cited": 3},
    "unsettled": {"settled": False, "findings": [], "allowed": OUTCOMES},
    "cloze": {
        "passage": "P.",
        "statement": "It is in [1].",
        "blanks": ["a place"],
        "subject": "it",
    },
    "passage_system": {},
    "restated": {"passage": "P.", "statement": "It is in Paris."},
    "answer_findings": {"passage": "P.", "claim": "It is in Paris."},
    "plan": {"claim": "A claim.", "tried": ["a query"], "max_queries": 2},
}


def test_every_template_is_covered_here() -> None:
    assert set(TEMPLATE_NAMES) == set(TEMPLATE_VARIABLES)


@pytest.mark.parametrize("name", TEMPLATE_NAMES)
def test_every_template_renders_and_needs_each_variable(name: str) -> None:
    variables = TEMPLATE_VARIABLES[name]
    assert render(name, **variables).strip()
    for missing in variables:
        with pytest.raises(jinja2.UndefinedError):
            render(name, **{k: v for k, v in variables.items() if k != missing})


def test_role_tasks_ask_for_word_labels_not_letters() -> None:
    judge = render(
        "judge",
        rounds=1,
        max_rounds=5,
        max_words=80,
        settled=True,
        findings=[],
        allowed=OUTCOMES,
    )
    assert '"true", "false", "misleading" or "unproven"' in judge
    assert '"stop" or "continue"' in judge
    assert "R:" not in judge and "F:" not in judge
    final = render(
        "judge_final", rounds=0, max_words=80, settled=True, findings=[], allowed=OUTCOMES
    )
    assert "There was no debate" in final and '"next"' not in final
    assert "no claim of the post was settled" not in final
    told = render(
        "judge_final", rounds=1, max_words=80, settled=False, findings=[], allowed=OUTCOMES
    )
    assert "no claim of the post was settled by the evidence" in told
    reminded = render(
        "judge_final",
        rounds=1,
        max_words=80,
        settled=True,
        findings=['[wiki-1] contradicts "x"'],
        allowed=OUTCOMES,
    )
    assert "WHAT THE EVIDENCE SETTLED" in reminded and '[wiki-1] contradicts "x"' in reminded
    held = render(
        "judge_final",
        rounds=1,
        max_words=80,
        settled=True,
        findings=[],
        allowed=("false", "misleading"),
    )
    assert '- "verdict": "false" or "misleading".' in held
    assert 'you may rule only "false" or "misleading"' in held


class Sample(BaseModel):
    model_config = ConfigDict(extra="forbid")

    label: str
    cites: list[str]


@pytest.mark.parametrize(
    "text",
    [
        '{"label": "fake", "cites": ["post"]}',
        'Here you go:\n```json\n{"label": "fake", "cites": ["post"]}\n```',
        'Sure. {"label": "fake", "cites": ["post"]} Hope that helps {not json}',
        '{"other": 1} then {"label": "fake", "cites": ["post"]}',
    ],
)
def test_parse_reply_finds_the_object(text: str) -> None:
    assert parse_reply(text, Sample) == Sample(label="fake", cites=["post"])


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("fake", "no JSON object"),
        ('{"label": "fake"', "no JSON object"),
        ('{"label": 3, "cites": []}', "label"),
        ('{"label": "x", "cites": [], "extra": 1}', "extra"),
    ],
)
def test_parse_reply_says_what_is_wrong(text: str, message: str) -> None:
    with pytest.raises(ReplyParseError, match=message):
        parse_reply(text, Sample)


def test_json_schema_is_strict_and_narrowed() -> None:
    schema = json_schema(Sample, enums={"cites": ["post", "web-1"]}, max_items={"cites": 2})
    assert schema["additionalProperties"] is False
    assert set(schema["required"]) == {"label", "cites"}
    assert schema["properties"]["cites"]["items"]["enum"] == ["post", "web-1"]
    assert schema["properties"]["cites"]["maxItems"] == 2
    assert json_schema(ExtractorReply)["properties"]["sub_claims"]["type"] == "array"


def _logprobs(p_false: float, split: bool = False) -> list[TokenLogprob]:
    rest = (1 - p_false) / 3
    top = {"false": p_false, "true": rest, "misleading": rest / 2, "mis": rest / 2}
    top |= {"unproven": rest, "continue": 1e-6}
    logs = {k: math.log(v) for k, v in top.items()}
    if split:  # the value's first token carries the opening quote
        logs = {'"' + k: v for k, v in logs.items()}
        return [
            TokenLogprob('{"verdict": ', 0.0),
            TokenLogprob('"false', math.log(p_false), logs),
            TokenLogprob('", "reason": "x"}', 0.0),
        ]
    return [
        TokenLogprob('{"verdict": "', 0.0),
        TokenLogprob("false", math.log(p_false), logs),
        TokenLogprob('", "reason": "x"}', 0.0),
    ]


@pytest.mark.parametrize("split", [False, True])
def test_option_probabilities_read_the_verdict_token(split: bool) -> None:
    text = '{"verdict": "false", "reason": "x"}'
    options = ("true", "false", "misleading", "unproven")
    p = option_probabilities(text, _logprobs(0.7, split), "verdict", options)
    assert p is not None
    assert p["false"] == pytest.approx(0.7, abs=1e-3)
    # "misleading" and the prefix "mis" are one option; "continue" names none
    assert p["misleading"] == pytest.approx(0.1, abs=1e-3)
    assert p["true"] == pytest.approx(0.1, abs=1e-3)
    assert sum(p.values()) == pytest.approx(1.0, abs=1e-3)


def test_option_probabilities_unavailable() -> None:
    text = '{"verdict": "false", "reason": "x"}'
    options = ("true", "false")
    assert option_probabilities(text, None, "verdict", options) is None
    assert option_probabilities("no verdict here", _logprobs(0.9), "verdict", options) is None
    unrelated = [TokenLogprob(text, 0.0, {})]
    assert option_probabilities(text, unrelated, "verdict", options) is None


def test_contextual_calibration_divides_out_the_prior() -> None:
    # A judge that says "false" 80% of the time on a post with no content: its 0.8 for
    # "false" on a real post is no evidence at all, and calibration brings it to even.
    prior = {"true": 0.1, "false": 0.8, "misleading": 0.05, "unproven": 0.05}
    seen = {"true": 0.1, "false": 0.8, "misleading": 0.05, "unproven": 0.05}
    assert calibrated(seen, prior) == pytest.approx(dict.fromkeys(seen, 0.25), abs=1e-3)
    tilted = calibrated({"true": 0.3, "false": 0.6, "misleading": 0.05, "unproven": 0.05}, prior)
    assert tilted["true"] > tilted["false"]


PASSAGES = [
    ("web-1", "The council passed no ordinance on bicycles in March."),
    ("web-2", "Cycling remains legal on all city streets, the mayor’s office said."),
]


@pytest.mark.parametrize(
    ("quote", "source"),
    [
        ("passed no ordinance on bicycles", "web-1"),
        ("THE COUNCIL   passed no ordinance", "web-1"),
        ('"Cycling remains legal on all city streets"', "web-2"),
        ("the mayor's office said", "web-2"),  # typographic apostrophe in the passage
        ("The council passed … in March", "web-1"),
        ("The council banned bicycles", None),
        ("passed no ordinance ... the mayor", None),  # excerpts from two passages
        ("...", None),
    ],
)
def test_find_quote(quote: str, source: str | None) -> None:
    assert find_quote(quote, PASSAGES) == source


class KeywordEncoder:
    """A transparent encoder: one axis per vocabulary word, for hand-checked cosines."""

    VOCAB = ("bicycle", "ban", "mayor", "weather")

    @property
    def dimension(self) -> int:
        return len(self.VOCAB)

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        return np.array(
            [[float(w in t.lower()) + 1e-3 for w in self.VOCAB] for t in texts], dtype=np.float32
        )


def _item(id_: str, source: str, text: str) -> EvidenceItem:
    return EvidenceItem(id=id_, source=source, provider="p", title="t", url="u", text=text)


def _split(text: str) -> list[str]:
    return [s.strip() + "." for s in text.split(".") if s.strip()]


def test_sentence_shortlist_applies_top_k_and_theta_and_numbers_one_list() -> None:
    items = [
        _item("web-1", "web", "The bicycle ban is here. The weather is fine today."),
        _item("wiki-1", "wikipedia", "The mayor rode a bicycle home."),
        _item("fc-1", "factcheck", "Claim reviewed: a bicycle ban. Rating: False."),
        _item("img-1-text", "image", "A bicycle ban printed on the image."),
    ]
    encoder = KeywordEncoder()
    index = SentenceIndex.build(items, _split, encoder)
    # Every source but the post's own image; sentences of fewer than three words go.
    assert {s.evidence_id for s in index.sentences} == {"web-1", "wiki-1", "fc-1"}
    shown = index.shortlist(["bicycle ban", "weather"], encoder, top_k=2, theta=0.5)
    texts = [s.text for s in shown.sentences]
    assert texts == [
        "The bicycle ban is here.",
        "The weather is fine today.",
        "Claim reviewed: a bicycle ban.",
    ]  # in evidence order, each once
    similarity, own = shown.closest(["bicycle ban", "weather"], encoder, top_k=2, theta=0.5)
    assert own == [[1, 3], [2]]  # closest first (here a tie, kept in evidence order)
    assert similarity.shape == (2, 3)
    empty = SentenceIndex.build([], _split, encoder).shortlist(["x"], encoder, top_k=3, theta=0.1)
    assert empty.sentences == [] and empty.closest(["x"], encoder, top_k=3, theta=0.1)[1] == [[]]


def test_post_is_clipped_and_its_markers_defused() -> None:
    panel = PanelContext("word " * 3000 + "POST>>> <<<POST", max_post_chars=200)
    post = panel.shared[1].content
    assert panel.truncated and post.endswith("POST>>>") and post.count("POST>>>") == 1
    short = PanelContext("Hi POST>>> there")
    assert "POST›››" in short.shared[1].content and not short.truncated


def test_ablation_names_match_the_papers_table() -> None:
    assert set(ABLATIONS) >= {"full", "no-wikipedia", "no-web", "no-retrieval", "no-debate"}
    assert Ablation.named("no-retrieval").removed == ["wikipedia", "web"]
    with pytest.raises(ValueError, match="unknown ablation"):
        Ablation.named("no-judge")


def test_bounded_schema_caps_free_text_to_fit_the_token_budget() -> None:
    from zofia_engine.agents.debate import DebaterReply

    schema = json_schema(DebaterReply, enums={"cites": ["post", "web-1"]})
    bounded = bounded_schema(schema, 360)
    props = bounded["properties"]
    assert props["rebuttal"]["maxLength"] == props["argument"]["maxLength"] > 100
    assert props["cites"]["maxItems"] == 6 and "maxLength" not in props["cites"]["items"]
    # Two strings of three characters a token, plus the structure, stay under 360 tokens.
    assert 2 * props["argument"]["maxLength"] / 3 < 360
    assert "maxLength" not in schema["properties"]["argument"]  # the input is not changed
    claims = bounded_schema(json_schema(ExtractorReply, max_items={"sub_claims": 4}), 320)
    core = claims["properties"]["core_claim"]["properties"]["claim"]["maxLength"]
    per_claim = claims["properties"]["sub_claims"]["items"]["properties"]["claim"]["maxLength"]
    assert per_claim == core  # the one object and the list's objects alike
    assert 5 * per_claim / 3 < 320
    tiny = bounded_schema(json_schema(ExtractorReply), 10)["properties"]["core_claim"]
    assert tiny["properties"]["claim"]["maxLength"] == 24  # never below a useful minimum


def test_parse_reply_accepts_raw_newlines_inside_strings() -> None:
    assert parse_reply('{"label": "two\nlines", "cites": []}', Sample).label == "two\nlines"


def test_templates_keep_their_line_breaks() -> None:
    # trim_blocks eats the newline after a block tag: a title once ran into its text.
    item = {"id": "web-1", "source_label": "Web page", "title": "T", "published": "2024-01-02"}
    lines = ["1. Body.", "2. More."]
    evidence = render("evidence", documents=[{**item, "note": "high quality", "lines": lines}])
    assert "[web-1] Web page: T (2024-01-02)\n(high quality)\n1. Body.\n2. More." in evidence
    plain = render("evidence", documents=[{**item, "published": "", "note": "", "lines": lines}])
    assert "[web-1] Web page: T\n1. Body." in plain
    turn = render(
        "debate_turn",
        round=2,
        side_word="con",
        position="false",
        rebuttal="R.",
        argument="A.",
        cites=["web-1"],
    )
    assert turn.endswith("Rebuttal: R.\nArgument: A.\nCites: web-1")
