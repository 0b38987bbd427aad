"""Follow-up answers hold only what their cited documents say
(``zofia_engine.agents.follow_up_grounding``), on the real MiniLM encoder."""

from __future__ import annotations

import pytest

from zofia_engine.agents.follow_up_grounding import grounded_answer
from zofia_engine.contacts import without_contacts
from zofia_engine.encoder import SentenceTransformerEncoder
from zofia_engine.report import EvidenceItem

pytest_plugins = ["tests.peers.fixtures.model_fixtures"]

MINUTES = EvidenceItem(
    id="web-1",
    source="web",
    provider="brave",
    title="City council minutes, March",
    url="https://springfield.il.us/council/minutes",
    text="The Springfield city council passed no ordinance on bicycles in March. "
    "Council members discussed new bike lanes on Capitol Avenue.",
)


def test_a_sentence_no_cited_document_supports_is_dropped(
    encoder: SentenceTransformerEncoder,
) -> None:
    answer = (
        "The council passed no ordinance on bicycles in March [web-1]. "
        "The mayor resigned on Friday after the vote."
    )
    kept = grounded_answer(answer, ["web-1"], [MINUTES], encoder)
    assert kept == "The council passed no ordinance on bicycles in March [web-1]."


def test_a_sentence_resting_only_on_an_unknown_id_is_dropped(
    encoder: SentenceTransformerEncoder,
) -> None:
    answer = "The council discussed bike lanes [web-1]. The ban was signed [web-9]."
    kept = grounded_answer(answer, ["web-1"], [MINUTES], encoder)
    assert kept == "The council discussed bike lanes [web-1]."


@pytest.mark.parametrize(
    "planted",
    [
        "see t.me/scamchannel",
        "write to @scamchannel",
        "call +1 (555) 010-9999",
        "visit https://scam.example/x",
    ],
)
def test_addresses_handles_and_phones_that_are_not_the_evidences_go(planted: str) -> None:
    said = without_contacts(f"The council passed no ordinance; {planted}.", [MINUTES])
    assert planted.split()[-1] not in said and said.startswith("The council passed")
    kept = without_contacts(f"Source: {MINUTES.url}.", [MINUTES])
    assert MINUTES.url in kept
