"""Reading a claim part by part (``zofia_engine.agents.parts``).

The comparisons and the parts of a claim are pure code and tested as such. The reader's
two questions go to a :class:`ScriptedBackend` that answers the way a model reading the
passage would (the first option the grammar allows, or "not stated"): these tests prove
what the code decides from the answers, not how a model answers; ``bench/settle.py``
measures the packaged model.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import ClassVar

import pytest

from zofia_engine.agents.context import PanelContext
from zofia_engine.agents.evidence_sentences import SentenceIndex
from zofia_engine.agents.parts import NO_KNOWLEDGE, PartsRules, read_by_parts
from zofia_engine.agents.parts.claim import ClaimParts, Part, claim_parts, reported_clause
from zofia_engine.agents.parts.compare import Comparer
from zofia_engine.agents.parts.names import (
    compare_names,
    compare_nationalities,
    compare_places,
    name_key,
)
from zofia_engine.agents.parts.parse import parse_claims, whole_claims
from zofia_engine.agents.parts.passage import Source, about_subject, options_for
from zofia_engine.agents.parts.presence import Held, agrees, presence
from zofia_engine.agents.parts.ranks import compare_ranks
from zofia_engine.agents.parts.values import compare_dates, compare_numbers
from zofia_engine.config import EngineSettings
from zofia_engine.encoder import SentenceTransformerEncoder
from zofia_engine.llm.base import CompletionRequest
from zofia_engine.llm.router import LLMRouter
from zofia_engine.llm.scripted import scripted
from zofia_engine.records.reading import PartCheck
from zofia_engine.report import ClaimResult, EvidenceItem
from zofia_engine.retrieval.ner.parser import SpacyParser
from zofia_engine.retrieval.ner.sentences import split_sentences
from zofia_engine.retrieval.wikipedia.offline import OfflineWikipedia

pytest_plugins = ["tests.peers.fixtures.model_fixtures"]


class Described:
    """Knowledge of a few places, as an encyclopedia's short descriptions give it."""

    DESCRIPTIONS: ClassVar[dict[str, str]] = {
        "melbourne": "Capital city of Victoria, Australia",
        "sydney": "Capital city of New South Wales, Australia",
        "liberty island": "Island in New York Harbor, United States",
    }

    def description(self, name: str) -> str:
        return self.DESCRIPTIONS.get(name_key(name), "")


# ------------------------------------------------------------------ comparing names


@pytest.mark.parametrize(
    ("claimed", "found", "outcome"),
    [
        (["Melbourne", "Victoria"], ["Sydney", "New South Wales", "Australia"], "differs"),
        (["Sydney"], ["Sydney", "New South Wales", "Australia"], "agrees"),
        (["Australia"], ["Sydney"], "agrees"),  # the claim is broader: consistent
        (["Sydney"], ["New South Wales", "Australia"], "unstated"),  # the passage is broader
        (["Melbourne"], ["New South Wales"], "differs"),  # a state it is not in
        (["Liberty Island"], ["New York Harbor"], "unstated"),  # containment, described
        (["Holland"], ["Netherlands"], "agrees"),  # another name of the same place
        (["New York"], ["New York City"], "agrees"),  # a generic word aside
        (["Zürich"], ["Zurich"], "agrees"),  # diacritics
        (["Москва"], ["Moscow"], "unstated"),  # another script is never called different
        (["Berlin", "Germany"], ["Paris", "France"], "differs"),
    ],
)
def test_places_compare_with_aliases_containment_diacritics_and_scripts(
    claimed: list[str], found: list[str], outcome: str
) -> None:
    assert compare_places(claimed, found, Described()) == outcome


def test_containment_comes_from_the_offline_descriptions(offline_wiki: OfflineWikipedia) -> None:
    assert compare_places(["Florence"], ["Tuscany", "Italy"], offline_wiki) == "unstated"
    assert compare_places(["Italy"], ["Florence"], offline_wiki) == "agrees"
    assert compare_places(["Melbourne", "Victoria"], ["Sydney"], offline_wiki) == "differs"


@pytest.mark.parametrize(
    ("claimed", "found", "outcome"),
    [
        ("Leonardo", "Leonardo da Vinci", "agrees"),
        ("Sir Isaac Newton", "Isaac Newton", "agrees"),
        ("Rembrandt", "Leonardo da Vinci", "differs"),
        ("Dvořák", "Antonín Dvorak", "agrees"),
        ("Чайковский", "Tchaikovsky", "unstated"),
    ],
)
def test_people_compare_by_their_names_words(claimed: str, found: str, outcome: str) -> None:
    assert compare_names(claimed, found) == outcome


@pytest.mark.parametrize(
    ("claimed", "found", "outcome"),
    [
        ("Dutch", "Italian", "differs"),
        ("Dutch", "Netherlands", "agrees"),
        ("German-born", "German", "agrees"),
        ("Romans", "Chinese", "differs"),
        ("English", "British", "unstated"),  # one country within the other
    ],
)
def test_nationalities_compare_by_their_country(claimed: str, found: str, outcome: str) -> None:
    assert compare_nationalities(claimed, found) == outcome


@pytest.mark.parametrize(
    ("claimed", "found", "outcome"),
    [
        ("1889", "1887 to 1889", "agrees"),
        ("1889", "1901", "differs"),
        ("1889", "the 19th century", "unstated"),  # consistent, but does not say 1889
        ("the 1880s", "1889", "agrees"),
        ("March 31, 1889", "1889", "agrees"),
        ("1500", "1503–1519", "differs"),
        ("Tuesday", "January 9, 2007", "unstated"),  # a date relative to the post
        ("next spring", "2024", "unstated"),
    ],
)
def test_dates_compare_as_spans_of_days(claimed: str, found: str, outcome: str) -> None:
    assert compare_dates(claimed, found) == outcome


@pytest.mark.parametrize(
    ("claimed", "found", "outcome"),
    [
        ("8,849 m", "8,848.86 m", "agrees"),
        ("9,500 metres", "8,848.86 m", "differs"),
        ("3.2 million", "3,200,000", "agrees"),
        ("five", "5", "agrees"),
        ("300 feet", "324 m", "unstated"),  # units differ: not compared
    ],
)
def test_numbers_compare_within_a_tolerance(claimed: str, found: str, outcome: str) -> None:
    assert compare_numbers(claimed, found) == outcome


# ------------------------------------------------------------------ a claim's parts


@pytest.fixture(scope="module")
def parser() -> SpacyParser:
    made = SpacyParser()
    made.load()
    return made


def _parts(parser: SpacyParser, text: str) -> ClaimParts:
    return claim_parts(parser.parse([text])[0])


def test_a_claims_subject_is_not_one_of_its_parts(parser: SpacyParser) -> None:
    opera = _parts(parser, "The Sydney Opera House is a performing arts centre in Melbourne.")
    assert opera.subject == "The Sydney Opera House" and opera.named
    assert [(p.kind, p.text) for p in opera.parts] == [
        ("category", "arts centre"),
        ("place", "Melbourne"),
    ]
    assert opera.blanked() == "The Sydney Opera House is a performing [1] in [2]."
    wall = _parts(parser, "The Great Wall of China was built by the Romans.")
    assert wall.subject == "The Great Wall of China"  # "China" names the wall, not a place
    assert [(p.kind, p.text) for p in wall.parts] == [("nationality", "Romans")]
    play = _parts(parser, "Romeo and Juliet was written by Charles Dickens.")
    assert play.subject == "Romeo and Juliet"  # names joined by "and" are one subject
    assert [(p.kind, p.text) for p in play.parts] == [("person", "Charles Dickens")]
    pets = _parts(parser, "The cat and the dog live in Paris.")
    assert pets.subject == "The cat"  # common nouns joined by "and" stay apart


def test_a_place_run_is_one_part_and_a_relative_date_is_never_checked(parser: SpacyParser) -> None:
    eiffel = _parts(parser, "The Eiffel Tower stands in the centre of Berlin, Germany.")
    assert [(p.kind, p.names) for p in eiffel.parts] == [("place", ("Berlin", "Germany"))]
    apple = _parts(parser, "Apple unveiled a new iPhone in Cupertino on Tuesday.")
    assert [(p.kind, p.text, p.comparable) for p in apple.parts] == [
        ("place", "Cupertino", True),
        ("date", "Tuesday", False),
    ]
    assert apple.blanked() == "Apple unveiled a new iPhone in [1] on Tuesday."


@pytest.mark.parametrize(
    ("report", "clause"),
    [
        (
            "Last year my cousin told me the Great Pyramid of Giza was built in 1850.",
            "The Great Pyramid of Giza was built in 1850.",
        ),
        (
            "Yesterday a friend claimed the Titanic sank after hitting an iceberg in 1912.",
            "The Titanic sank after hitting an iceberg in 1912.",
        ),
        ("Scientists say black holes are made of ice.", "Black holes are made of ice."),
        ("Historians agree that the Titanic sank in 1912.", "The Titanic sank in 1912."),
        ("The Titanic sank in 1912.", None),
        ("Romeo and Juliet was written by Charles Dickens.", None),  # who made it, no report
        ("It is said that the Titanic sank in 1912.", "The Titanic sank in 1912."),
    ],
)
def test_a_reported_claim_is_the_clause_the_report_wraps(
    parser: SpacyParser, report: str, clause: str | None
) -> None:
    assert reported_clause(parser.parse([report])[0]) == clause
    if clause is not None:
        parts = _parts(parser, clause)
        assert parts.subject.casefold().startswith(("the", "black"))
        assert all(p.text not in ("Last year", "Yesterday") for p in parts.parts)


def test_a_sentence_about_a_word_of_the_post_is_not_about_its_subject(
    parser: SpacyParser,
) -> None:
    post = (
        "The mayor of Little Harwick announced on Thursday that the town's bridge will be "
        "painted purple by a volunteer group next spring."
    )
    bridge = _parts(parser, post)
    assert bridge.subject == "The mayor of Little Harwick" and not bridge.checked
    purple = "Purple is a color similar in appearance to violet light."
    assert not about_subject(bridge, "Purple", purple)
    assert not about_subject(bridge, "Mayor", "A mayor is the head of a town.")
    whales = _parts(parser, "Whales are fish.")
    assert about_subject(whales, "Whale", "Whales are marine mammals.")
    opera = _parts(parser, "The Sydney Opera House is in Melbourne.")
    assert about_subject(opera, "Sydney Opera House", "It opened in 1973.")
    assert not about_subject(opera, "Melbourne", "Melbourne is the capital of Victoria.")
    # A web page names its subject in its own words: its head word or a proper name.
    mayor = _parts(parser, "The mayor of Springfield banned bicycles.")
    minutes = "Mayor Misty Buscher signed no law on cycling in March."
    assert about_subject(mayor, "City council minutes", minutes, encyclopedic=False)
    assert not about_subject(mayor, "Bike lanes", "Bike lanes are safe.", encyclopedic=False)


# ------------------------------------------------------------------ the reader, scripted


def _model(fill: Callable[[list[str]], str], said: str = "yes") -> Callable[..., str]:
    """A model that fills each blank with ``fill(options)`` (the options the grammar
    allows, "not stated" last) and answers ``said`` to "does the passage say it"."""

    def answer(request: CompletionRequest) -> str:
        schema = request.schema or {}
        if request.schema_name == "blanksreply":
            props = schema["properties"]
            return json.dumps({k: fill(v["enum"]) for k, v in props.items()})
        if request.schema_name == "saidreply":
            return json.dumps({"said": said})
        raise AssertionError(f"unexpected call {request.schema_name}")

    return answer


async def _read(
    claim: str,
    evidence: list[tuple[str, str]],
    model: Callable[..., str],
    encoder: SentenceTransformerEncoder,
    parser: SpacyParser,
    rules: PartsRules | None = None,
    post: str = "",
) -> tuple[ClaimResult, list[CompletionRequest]]:
    """Read ``claim`` against Wikipedia articles (title, text) with the scripted ``model``
    (``post``: the post's one sentence it was extracted from, when not the claim itself)."""
    settings = EngineSettings()
    backends = scripted(model)
    session = LLMRouter(settings.llm, backends=backends).session()
    panel = PanelContext(post or claim)
    panel.evidence = [
        EvidenceItem(id=f"wiki-{i}", source="wikipedia", provider="t", title=t, url="", text=text)
        for i, (t, text) in enumerate(evidence, 1)
    ]
    index = SentenceIndex.build(panel.evidence, split_sentences, encoder)
    claims = [ClaimResult(id="claim-0", kind="core", text=claim, sentence=1 if post else None)]
    split = await parse_claims(parser, claims, panel.sentences)
    read = await read_by_parts(
        session,
        panel,
        list(zip(claims, split, strict=True)),
        index.sentences,
        index.vectors,
        parser=parser,
        knowledge=NO_KNOWLEDGE,
        encoder=encoder,
        rules=rules or PartsRules(),
    )
    return read[0], backends["verifier"].requests  # type: ignore[attr-defined]


def _first(options: list[str]) -> str:
    return options[0]


def _unstated(options: list[str]) -> str:
    return options[-1]


OPERA = (
    "Sydney Opera House",
    "The Sydney Opera House is a multi-venue performing arts centre in Sydney, New South "
    "Wales, Australia. It opened in 1973.",
)


@pytest.mark.parametrize(
    ("claim", "article", "kind"),
    [
        ("The Sydney Opera House is in Melbourne, Victoria.", OPERA, "place"),
        (
            "The Mona Lisa was painted by Rembrandt.",
            ("Mona Lisa", "The Mona Lisa is a portrait painting by Leonardo da Vinci."),
            "person",
        ),
        (
            "The Mona Lisa is a Dutch painting.",
            ("Mona Lisa", "The Mona Lisa is a portrait painting by the Italian artist Leonardo."),
            "nationality",
        ),
        ("The Sydney Opera House opened in 1990.", OPERA, "date"),
        (
            "Mount Everest is 6,000 metres high.",
            ("Mount Everest", "Mount Everest has an elevation of 8,849 metres."),
            "number",
        ),
    ],
)
async def test_another_place_person_nationality_date_or_number_refutes(
    claim: str,
    article: tuple[str, str],
    kind: str,
    encoder: SentenceTransformerEncoder,
    parser: SpacyParser,
) -> None:
    read, asked = await _read(claim, [article], _model(_first), encoder, parser)
    assert read.label == "refutes", read.reason
    # spaCy's small model labels some people as organisations ("Rembrandt"); both are
    # compared as names.
    kinds = {kind, "organisation"} if kind == "person" else {kind}
    assert any(p.kind in kinds and p.outcome == "differs" for p in read.parts)
    assert read.quotes and read.quotes[0].text in article[1]
    assert read.reason.startswith("The evidence says otherwise:")
    # The model never saw the claim's own value: every checked part was a blank.
    blanks = next(r for r in asked if r.schema_name == "blanksreply")
    differing = next(p for p in read.parts if p.outcome == "differs")
    assert differing.claimed not in blanks.messages[-1].content.split("STATEMENT:")[1]


async def test_the_same_parts_support(
    encoder: SentenceTransformerEncoder, parser: SpacyParser
) -> None:
    read, _ = await _read(
        "The Sydney Opera House is in Sydney.", [OPERA], _model(_first), encoder, parser
    )
    assert read.label == "supports" and read.read_by == "parts"
    assert read.reason.startswith("The evidence says the same: “Sydney")
    assert read.reason.endswith("” for “Sydney”.")


async def test_a_sentence_that_does_not_answer_the_part_leaves_the_claim_unsettled(
    encoder: SentenceTransformerEncoder, parser: SpacyParser
) -> None:
    read, asked = await _read(
        "The Sydney Opera House is in Melbourne.", [OPERA], _model(_unstated), encoder, parser
    )
    assert read.label == "not enough information" and not read.quotes
    assert [p.outcome for p in read.parts] == ["unstated"]
    assert [r.schema_name for r in asked] == ["blanksreply"]  # nothing to confirm
    # A passage with no words of the part's kind is not even asked.
    read, asked = await _read(
        "The Sydney Opera House opened in 1973.",
        [("Sydney Opera House", "The Sydney Opera House is a famous building in Sydney.")],
        _model(_first),
        encoder,
        parser,
    )
    assert read.label == "not enough information" and asked == []


async def test_a_sentence_about_another_event_with_a_date_refutes_nothing(
    encoder: SentenceTransformerEncoder, parser: SpacyParser
) -> None:
    iphone = (
        "IPhone",
        "The iPhone is a line of smartphones by Apple. The first-generation iPhone was "
        "announced by Steve Jobs on January 9, 2007.",
    )
    read, _ = await _read(
        "Apple unveiled a new iPhone in Cupertino on Tuesday.",
        [iphone],
        _model(_first),
        encoder,
        parser,
    )
    assert read.label == "not enough information"
    assert all(p.outcome != "differs" for p in read.parts)


async def test_no_says_so_leaves_a_differing_part_unsettled(
    encoder: SentenceTransformerEncoder, parser: SpacyParser
) -> None:
    """The place the passage names is about something else ("lived in", not "died in"):
    the model says the passage does not say the claim with it, so nothing is refuted."""
    picasso = (
        "Pablo Picasso",
        "Pablo Picasso was a Spanish painter who spent most of his adult life in France.",
    )
    read, asked = await _read(
        "Pablo Picasso died in Madrid.", [picasso], _model(_first, said="no"), encoder, parser
    )
    assert read.label == "not enough information" and read.restated == 0.0
    assert [r.schema_name for r in asked] == ["blanksreply", "saidreply"]
    said = asked[1].messages[-1].content
    assert "STATEMENT: Pablo Picasso died in France." in said


AMAZON = (
    "Amazon River",
    "The Amazon River is a river in South America, flowing through Brazil, Peru and "
    "Colombia into the Atlantic Ocean.",
)


async def test_the_same_words_for_two_blanks_answer_neither(
    encoder: SentenceTransformerEncoder, parser: SpacyParser
) -> None:
    read, _ = await _read(
        "The Amazon River flows through Brazil into the Atlantic Ocean.",
        [AMAZON],
        _model(lambda options: "South America" if "South America" in options else options[-1]),
        encoder,
        parser,
    )
    assert read.label == "not enough information"
    assert [p.outcome for p in read.parts] == ["unstated", "unstated"]


async def test_another_word_chosen_over_the_claims_own_is_a_guess_not_a_difference(
    encoder: SentenceTransformerEncoder, parser: SpacyParser
) -> None:
    """The passage names the claimed discoverer and another person: picking the other
    one for the blank cannot refute the claim, since the passage names the claimed one."""
    penicillin = (
        "Penicillin",
        "Penicillin was discovered in 1928 by Alexander Fleming, and Howard Florey "
        "purified it in 1941.",
    )
    read, _ = await _read(
        "Penicillin was discovered by Alexander Fleming.",
        [penicillin],
        _model(lambda options: "Howard Florey" if "Howard Florey" in options else options[0]),
        encoder,
        parser,
    )
    assert read.label == "not enough information"
    assert [(p.found, p.outcome) for p in read.parts] == [("Howard Florey", "unstated")]


async def test_a_word_of_another_kind_cannot_contradict_a_part(
    encoder: SentenceTransformerEncoder, parser: SpacyParser
) -> None:
    """A place offered for a part the tagger called a person (it confuses the two) may
    agree with it but never contradicts it."""
    picasso = ("Pablo Picasso", "Pablo Picasso spent most of his adult life in France.")
    read, _ = await _read(
        "Pablo Picasso was born in Málaga.", [picasso], _model(_first), encoder, parser
    )
    assert read.label == "not enough information"
    assert all(p.outcome != "differs" for p in read.parts)


def test_an_acronym_is_the_name_it_abbreviates() -> None:
    assert compare_names("the United Nations", "UN") == "agrees"
    assert compare_names("NASA", "National Aeronautics and Space Administration") == "agrees"
    assert compare_names("UN", "the European Union") == "differs"


async def test_a_fragment_of_a_claim_is_read_as_the_sentence_it_names(parser: SpacyParser) -> None:
    post = ["BREAKING!!", "Romeo and Juliet was written by Charles Dickens."]
    claims = [
        ClaimResult(id="claim-0", kind="core", text="By Charles Dickens.", sentence=2),
        ClaimResult(id="claim-1", kind="sub", text="It is a play.", sentence=2),
        ClaimResult(id="claim-2", kind="sub", text="In 1597.", sentence=None),
    ]
    whole = await whole_claims(parser, claims, post)
    assert [c.text for c in whole] == [post[1], "It is a play.", "In 1597."]
    split = await parse_claims(parser, whole)
    assert split[0].subject == "Romeo and Juliet"


def test_a_place_every_place_lies_in_fills_no_blank(parser: SpacyParser) -> None:
    from zofia_engine.agents.parts.passage import options_for

    claim = _parts(parser, "Mount Everest lies in the Andes.")
    (place,) = claim.parts
    highest = parser.parse(["Mount Everest is the highest mountain on Earth above sea level."])[0]
    border = parser.parse(["It marks part of the China–Nepal border at its summit."])[0]
    assert options_for(place, highest, claim) == {}
    assert "China" in options_for(place, border, claim)
    # Nor is it a part of a claim: "one orbit of Earth" is not where Vostok 1 was.
    orbit = _parts(parser, "Yuri Gagarin completed one orbit of Earth on 12 April 1961.")
    assert "place" not in {p.kind for p in orbit.parts}


def test_the_subjects_own_acronym_fills_no_blank(parser: SpacyParser) -> None:
    from zofia_engine.agents.parts.passage import options_for

    claim = _parts(parser, "The United Nations was founded in Geneva.")
    (place,) = [p for p in claim.parts if p.kind == "place"]
    said = parser.parse(["The UN was founded in San Francisco by 50 states."])[0]
    assert set(options_for(place, said, claim)) == {"San Francisco"}


async def test_the_same_head_word_with_another_kind_of_it_supports_nothing(
    encoder: SentenceTransformerEncoder, parser: SpacyParser
) -> None:
    """A muscular organ is an organ, but not the bony organ a post says (the settle
    bench's one confident error of the kind)."""
    heart = ("Heart", "The heart is a muscular organ found in humans and other animals.")
    claim = "The heart is a bony organ found in humans and other animals."
    read, _ = await _read(claim, [heart], _model(_first), encoder, parser)
    assert read.label != "supports", read.reason
    same, _ = await _read(
        "The heart is a muscular organ.", [heart], _model(_first), encoder, parser
    )
    assert same.label == "supports", same.reason


# ------------------------------------------------------------------ spans, ranks, two readings


@pytest.mark.parametrize(
    ("claimed", "found", "outcome"),
    [
        ("1979 to 1990", "1979 to 1990", "agrees"),
        ("from 1988 to 1990", "1988–90", "agrees"),
        ("1969 to 1990", "1979 to 1990", "differs"),  # holds it, but says another start
        ("1979 to 1990", "1975 to 1990", "differs"),
        ("1979 to 1990", "1985", "unstated"),  # a year inside says nothing of its ends
        ("1979 to 1990", "1995", "differs"),
        ("1889", "1887 to 1889", "agrees"),  # a year inside a short span, as before
    ],
)
def test_a_span_of_years_compares_as_a_span(claimed: str, found: str, outcome: str) -> None:
    assert compare_dates(claimed, found) == outcome


@pytest.mark.parametrize(
    ("claimed", "found", "outcome"),
    [
        ("second-largest", "largest", "differs"),
        ("second largest", "second-largest", "agrees"),
        ("largest", "smallest", "differs"),
        ("most populous", "least populous", "differs"),
        ("third", "first", "differs"),
        ("15th", "15th", "agrees"),
        ("largest", "oldest", "unstated"),  # two scales: neither says the other
        ("first", "largest", "unstated"),
    ],
)
def test_ranks_compare_by_place_on_one_scale(claimed: str, found: str, outcome: str) -> None:
    assert compare_ranks(claimed, found) == outcome


def test_a_span_and_a_rank_are_one_part_each(parser: SpacyParser) -> None:
    bhutto = _parts(
        parser,
        "Benazir Bhutto served as prime minister of Pakistan from 1988 to 1990 and again "
        "from 1993 to 1996.",
    )
    assert [(p.kind, p.text) for p in bhutto.parts if p.kind == "date"] == [
        ("date", "1988 to 1990"),
        ("date", "1993 to 1996"),
    ]
    nile = _parts(parser, "The Nile is the second-longest river in the world.")
    assert ("ordinal", "second-longest") in [(p.kind, p.text) for p in nile.parts]


THATCHER = (
    "Margaret Thatcher",
    "Margaret Thatcher was a British stateswoman who served as Prime Minister of the United "
    "Kingdom from 1979 to 1990 and Leader of the Conservative Party from 1975 to 1990.",
)


def _last(options: list[str]) -> str:
    """A reader that takes the wrong one of two values: the last the grammar offers."""
    return options[-2] if len(options) > 2 else options[0]


async def test_a_true_span_the_model_mismatches_is_not_called_false(
    encoder: SentenceTransformerEncoder, parser: SpacyParser
) -> None:
    claim = "Margaret Thatcher served as Prime Minister of the United Kingdom from 1979 to 1990."
    read, _ = await _read(claim, [THATCHER], _model(_last), encoder, parser)
    # The model filled the date with the other office's span: no difference stands.
    assert ("1979 to 1990", "1975 to 1990") in [(p.claimed, p.found) for p in read.parts]
    assert read.label == "not enough information"
    right, _ = await _read(claim, [THATCHER], _model(_first), encoder, parser)
    assert right.label == "supports" and right.second is not None and right.second.agrees


async def test_a_false_value_the_passage_gives_for_another_relation_settles_nothing(
    encoder: SentenceTransformerEncoder, parser: SpacyParser
) -> None:
    claim = "Margaret Thatcher served as Prime Minister of the United Kingdom from 1975 to 1990."
    read, _ = await _read(claim, [THATCHER], _model(_first), encoder, parser)
    assert read.label == "not enough information"


def _sources(parser: SpacyParser, title: str, sentences: list[str]) -> list[Source]:
    parsed = parser.parse(sentences)
    return [
        Source(f"wiki-{i}", title, True, s, p)
        for i, (s, p) in enumerate(zip(sentences, parsed, strict=True))
    ]


def test_the_second_reading_finds_a_value_in_any_sentence_about_the_subject(
    parser: SpacyParser, encoder: SentenceTransformerEncoder
) -> None:
    claim = _parts(parser, "Margaret Thatcher was Prime Minister from 1979 to 1990.")
    span = next(p for p in claim.parts if p.kind == "date")
    comparer = Comparer(NO_KNOWLEDGE, encoder)
    sources = _sources(
        parser,
        "Margaret Thatcher",
        [
            "Margaret Thatcher led the Conservative Party from 1975 to 1990.",
            "She was Prime Minister of the United Kingdom from 1979 to 1990.",
        ],
    )
    held = presence(claim, span, sources, comparer.compare)
    assert (held.status, held.value, held.evidence_id) == ("present", "1979 to 1990", "wiki-1")
    assert presence(claim, span, sources[:1], comparer.compare).status == "absent"
    assert presence(claim, span, [], comparer.compare).status == "unknown"
    # Two readings disagree: a difference the first found, a value the second found.
    checks = [
        PartCheck(kind="date", claimed="1979 to 1990", found="1975 to 1990", outcome="differs")
    ]
    assert not agrees("refutes", checks, {"1979 to 1990": Held("present")})
    assert agrees("refutes", checks, {"1979 to 1990": Held("absent")})
    assert not agrees("refutes", checks, {"1979 to 1990": Held("unknown")})


async def test_a_claim_with_two_spans_one_wrong_is_refuted_by_that_one(
    encoder: SentenceTransformerEncoder, parser: SpacyParser
) -> None:
    bhutto = (
        "Benazir Bhutto",
        "Benazir Bhutto was a Pakistani stateswoman who served as the prime minister of "
        "Pakistan from 1988 to 1990 and again from 1993 to 1996.",
    )
    claim = (
        "Benazir Bhutto served as the prime minister of Pakistan from 1988 to 1990 and again "
        "from 1993 to 2006."
    )
    read, _ = await _read(claim, [bhutto], _model(_first), encoder, parser)
    assert read.label == "refutes", read.reason
    differing = [p for p in read.parts if p.outcome == "differs"]
    assert [(p.claimed, p.found) for p in differing] == [("1993 to 2006", "1993 to 1996")]
    assert read.second is not None and read.second.absent == ["1993 to 2006"]


async def test_another_rank_refutes(
    encoder: SentenceTransformerEncoder, parser: SpacyParser
) -> None:
    nile = (
        "Nile",
        "The Nile is a major river in northeast Africa. It is the longest river in the world.",
    )
    read, _ = await _read(
        "The Nile is the second-longest river in the world.",
        [nile],
        _model(_first),
        encoder,
        parser,
    )
    assert read.label == "refutes", read.reason
    assert ("second-longest", "longest") in [(p.claimed, p.found) for p in read.parts]


@pytest.mark.parametrize(
    ("kind", "claimed", "found"),
    [
        ("person", "the Victorian era", "Alexandrina Victoria"),
        ("name", "the Renaissance", "Leonardo di ser Piero da Vinci"),
        ("place", "Florence", "the 15th century"),
        ("organisation", "the Ming dynasty", "Zhu Yuanzhang"),
    ],
)
def test_a_time_is_never_held_against_a_name(
    kind: str, claimed: str, found: str, encoder: SentenceTransformerEncoder
) -> None:
    part = Part(kind, claimed, 0, len(claimed), (claimed,))  # type: ignore[arg-type]
    assert Comparer(NO_KNOWLEDGE, encoder).compare(part, found, found) == "unstated"


async def test_an_emoji_is_not_a_word_of_the_claim(parser: SpacyParser) -> None:
    claim = ClaimResult(
        id="claim-0", kind="core", text="Alexander Dubček was a Slovak statesman 😳"
    )
    parts = (await parse_claims(parser, [claim]))[0]
    assert [(p.kind, p.names[0]) for p in parts.parts if p.kind == "category"] == [
        ("category", "statesman")
    ]


def test_species_is_one_kind_in_the_singular_and_the_plural(
    encoder: SentenceTransformerEncoder,
) -> None:
    part = Part("category", "species", 0, 7, ("specie",))
    said = "The alpaca is a species of South American camelid mammal."
    assert Comparer(NO_KNOWLEDGE, encoder).compare(part, "species", said) == "agrees"


async def test_a_part_left_unsettled_is_answered_by_the_sentence_that_holds_it(
    encoder: SentenceTransformerEncoder, parser: SpacyParser
) -> None:
    baybars = (
        "Baybars",
        "Baybars was the fourth Mamluk sultan of Egypt and Syria. He was of Turkic origin.",
    )
    claim = "Baybars was the fourth Mamluk sultan of Egypt."

    def rank_unstated(options: list[str]) -> str:
        return options[-1] if any(o in ("fourth",) for o in options) else options[0]

    model = _model(rank_unstated)
    unsettled = PartsRules(unsettled_part="unsettled")
    plain, _ = await _read(claim, [baybars], model, encoder, parser, unsettled)
    assert plain.label == "not enough information"
    rules = PartsRules(unsettled_part="presence")
    read, _ = await _read(claim, [baybars], model, encoder, parser, rules)
    assert read.label == "supports", read.reason
    assert ("fourth", "fourth", "agrees") in [(p.claimed, p.found, p.outcome) for p in read.parts]
    # The yes/no still decides: a "no" leaves it unsettled.
    said_no, _ = await _read(claim, [baybars], _model(rank_unstated, "no"), encoder, parser, rules)
    assert said_no.label == "not enough information"


def test_every_member_of_a_list_is_a_part(parser: SpacyParser) -> None:
    chinese = _parts(
        parser,
        "Chinese characters are logographs used to write the Chinese languages from regions "
        "influenced by Chinese culture including Japan, Korea, and Northern Ireland.",
    )
    places = [p.text for p in chinese.parts if p.kind == "place"]
    assert places == ["Japan", "Korea", "Northern Ireland"]  # not "Japan, Korea", one place
    opera = _parts(parser, "The Sydney Opera House is in Sydney, New South Wales, Australia.")
    assert [p.text for p in opera.parts if p.kind == "place"] == [
        "Sydney, New South Wales, Australia"
    ]


async def test_a_value_the_claim_left_out_of_its_sentence_keeps_it_from_being_confirmed(
    parser: SpacyParser,
) -> None:
    sentence = "Chinese characters are used in Japan, Korea and Northern Ireland."
    trimmed = ClaimResult(
        id="claim-0",
        kind="core",
        text="Chinese characters are used in Japan and Korea.",
        sentence=1,
    )
    parts = (await parse_claims(parser, [trimmed], [sentence]))[0]
    left_out = [p for p in parts.parts if not p.comparable]
    assert [(p.kind, p.text) for p in left_out] == [("place", "Northern Ireland")]
    assert len(parts.checked) < len(parts.parts)  # so it can never be "every part the same"
    whole = (
        await parse_claims(parser, [trimmed.model_copy(update={"text": sentence})], [sentence])
    )[0]
    assert all(p.comparable for p in whole.parts)


async def test_a_left_out_value_blocks_confirming_unless_the_evidence_holds_it(
    encoder: SentenceTransformerEncoder, parser: SpacyParser
) -> None:
    chinese = (
        "Chinese characters",
        "Chinese characters are logographs used in Japan, Korea and Vietnam.",
    )
    trimmed = "Chinese characters are logographs used in Japan and Korea."
    post = "Chinese characters are logographs used in Japan, Korea and {}."
    false, _ = await _read(
        trimmed, [chinese], _model(_first), encoder, parser, post=post.format("Northern Ireland")
    )
    assert false.label == "not enough information"
    assert false.second is not None and "Northern Ireland" not in false.second.present
    true, _ = await _read(
        trimmed, [chinese], _model(_first), encoder, parser, post=post.format("Vietnam")
    )
    assert true.label == "supports", true.reason


def test_a_place_named_within_another_name_is_not_different(parser: SpacyParser) -> None:
    assert compare_places(["the Habsburg Netherlands"], ["Netherlands"], NO_KNOWLEDGE) == "unstated"
    assert compare_places(["Netherlands"], ["Belgium"], NO_KNOWLEDGE) == "differs"
    stars = _parts(parser, "A dwarf galaxy is small beside the Milky Way's 100–400 billion stars.")
    assert not [p for p in stars.parts if p.kind == "date"]  # a range of amounts, not years


def test_words_with_a_quote_are_never_offered(parser: SpacyParser) -> None:
    """A quote in an option makes a grammar llama.cpp refuses (test_llm_embedded.py)."""
    claim = _parts(parser, "The Beatles were formed in Liverpool.")
    place = next(p for p in claim.parts if p.kind == "place")
    sentence = parser.parse(['The band was formed in Liverpool, the "Pool of Life" of England.'])[0]
    offered = options_for(place, sentence, claim)
    assert "Liverpool" in offered and not any('"' in o for o in offered)
