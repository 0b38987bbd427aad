"""The material every agent of one check shares, laid out for prefix caches.

Each conversation starts with the same system message and the same post
message, byte for byte; evidence and analyses follow in a fixed order; the
role's task always comes last. Servers with prefix caching (OpenAI, vLLM,
llama.cpp) then evaluate the shared part once per check.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field
from typing import Literal

from ..llm.base import ChatMessage
from ..llm.special_tokens import defuse
from ..post import Post
from ..prompting import render
from ..records.stage1 import Stage1Result, WebResult, WikipediaEntry
from ..report import EvidenceItem
from ..retrieval.credibility import counts_against
from ..retrieval.ner.sentences import sentence_spans
from ..stage2_settings import AgentSettings
from ..text import clip
from .evidence_sentences import READ_SOURCES, SentenceList

__all__ = [
    "MAX_FIELD_CHARS",
    "SOURCE_LABELS",
    "EvidenceQuery",
    "PanelContext",
    "clip",
    "evidence_items",
    "evidence_note",
    "page_text",
    "reversed_support",
    "untrusted",
    "web_item",
    "wiki_item",
]

_MARKER_RUN = re.compile(r"<{3,}|>{3,}")
SOURCE_LABELS = {
    "web": "Web page",
    "wikipedia": "Wikipedia",
    "factcheck": "Published fact-check",
    "image": "Image of the post",
}
MAX_FIELD_CHARS = 300  # the origin, the link, an evidence title


def untrusted(text: str) -> str:
    """Keep untrusted text (a post, where it came from, a page, a reader's question)
    from closing or opening any delimiters of a prompt (a run of ``<<<`` or ``>>>`` is
    broken) or forging a chat role (see :mod:`~zofia_engine.llm.special_tokens`)."""
    text = _MARKER_RUN.sub(lambda m: m[0].replace("<", "‹").replace(">", "›"), text)
    return defuse(text)


def evidence_note(item: EvidenceItem) -> str:
    """What is known of a document besides its text, in words: its stance on the core
    claim, its source and the source's quality, whether the counter-evidence query
    found it, and when support counts against the post (AgentFact: a low-quality or
    satire source agreeing with a post is a warning sign, not support)."""
    parts = []
    if item.source == "factcheck":
        parts.append(f"rated {item.rating!r} by {item.publisher}")
    if item.source == "image" and item.rating:
        parts.append(f"a finding on the post's own image that points to {item.rating!r}")
    if item.stance is not None and item.stance.status == "ok":
        parts.append(item.stance.label)
    if item.credibility is not None:
        parts.append(f"{item.credibility.domain} · {item.credibility.words}")
    if item.query == "counter":
        parts.append("found by the counter-evidence search")
    if item.query == "planned":
        parts.append("found by a second search, planned for the claim")
    if item.reversed:
        parts.append("support from this source counts against the post")
    return " · ".join(parts)


def reversed_support(item: EvidenceItem) -> bool:
    """A document that supports the claim from a source whose support counts against
    the post (AgentFact's reverse use; the rule is :func:`counts_against`)."""
    return (
        item.stance is not None
        and item.stance.label == "supports"
        and item.credibility is not None
        and counts_against("supports", item.credibility)
    )


#: Which search found a document: Stage 1's query, its counter-query, or a planned one.
EvidenceQuery = Literal["main", "counter", "planned"]


def evidence_items(stage1: Stage1Result) -> list[EvidenceItem]:
    """Stage 1's documents as citable evidence: ``wiki-N`` first, then ``web-N``."""
    items = [wiki_item(entry, i) for i, entry in enumerate(stage1.wikipedia, 1)]
    items += [web_item(hit, i, hit.query) for i, hit in enumerate(stage1.web, 1)]
    return items


def wiki_item(entry: WikipediaEntry, n: int, query: EvidenceQuery = "main") -> EvidenceItem:
    """An encyclopedia entry as evidence ``wiki-<n>``, found by ``query``."""
    return EvidenceItem(
        id=f"wiki-{n}",
        source="wikipedia",
        provider=entry.source,
        title=entry.title,
        url=entry.url,
        text=entry.text,
        query=query,
    )


def web_item(hit: WebResult, n: int, query: EvidenceQuery) -> EvidenceItem:
    """A web page as evidence ``web-<n>``, found by ``query``, its text as
    :func:`page_text` keeps it."""
    return EvidenceItem(
        id=f"web-{n}",
        source="web",
        provider=hit.source,
        title=hit.title,
        url=hit.url,
        text=page_text(hit.snippet, hit.description),
        published=hit.published,
        query=query,
    )


def _words(text: str) -> tuple[str, ...]:
    return tuple(re.findall(r"\w+", text.casefold()))


def _within(part: str, whole: tuple[str, ...]) -> bool:
    run = _words(part)
    return any(whole[at : at + len(run)] == run for at in range(len(whole) - len(run) + 1))


def page_text(snippet: str, description: str) -> str:
    """A web page's text: its snippet and its description, each passage once. When the
    words of one come whole in the other (a short page's snippet and description are
    both its whole text; a snippet cut with "…" is pieces of its page), only the other
    is kept, whatever the punctuation."""
    pieces = [p for p in re.split(r"…|\.\.\.", snippet) if _words(p)]
    in_description = all(_within(piece, _words(description)) for piece in pieces)
    in_snippet = _within(description, _words(snippet))
    if description and in_description and not (in_snippet and len(snippet) > len(description)):
        return description
    if snippet and in_snippet:  # the same words: the one with more of its stops
        return snippet
    return " ".join(t for t in (snippet, description) if t)


def _numbered(text: str, spans: list[tuple[int, int]]) -> str:
    """``text`` with "[S1] ", "[S2] " … before each sentence, its layout kept."""
    parts, at = [], 0
    for n, (start, _) in enumerate(spans, 1):
        parts += [text[at:start], f"[S{n}] "]
        at = start
    return "".join([*parts, text[at:]])


@dataclass
class PanelContext:
    """Shared prompt material of one check.

    Args:
        text: the cleaned post.
        published, origin, url: what is known about where the post came from.
        language: the language of the panel's free text; empty: English.
        max_post_chars: the post is cut to this length for the models.
        max_evidence_chars: each evidence item is cut to this length.

    The models see the post with its sentences numbered; ``sentences`` are those
    sentences, ``sentences[0]`` being [S1]. ``post_language`` is the language the post
    is written in (ISO 639-1, as :func:`~zofia_engine.language.detect_language` tells
    it): Stage 1 searches with it as a hint, the claims are extracted in it and the
    published fact-checks looked up in it. ``""`` is unknown (a name, "lol ok"): the
    search gets no language, the extractor is told the post's own language unnamed and
    the fact-checks are looked up in the panel's language.
    """

    text: str
    published: dt.date | None = None
    origin: str = ""
    url: str = ""
    language: str = ""
    max_post_chars: int = 6000
    max_evidence_chars: int = 600
    evidence: list[EvidenceItem] = field(default_factory=list)
    truncated: bool = False
    sentences: list[str] = field(default_factory=list)
    readable: SentenceList = field(default_factory=SentenceList.empty)
    post_language: str = ""

    @classmethod
    def of_post(
        cls, text: str, post: Post, agents: AgentSettings, post_language: str = ""
    ) -> PanelContext:
        """The material of ``post`` (``text``: its cleaned text), cut as ``[agents]`` says."""
        return cls(
            text,
            published=post.published,
            origin=post.origin,
            url=post.url,
            language=post.language,
            max_post_chars=agents.max_post_chars,
            max_evidence_chars=agents.max_evidence_chars,
            post_language=post_language,
        )

    def __post_init__(self) -> None:
        self.truncated = len(self.text) > self.max_post_chars
        seen = clip(self.text, self.max_post_chars) if self.truncated else self.text
        spans = sentence_spans(seen)
        self.sentences = [seen[a:b] for a, b in spans]
        self._evidence_message: ChatMessage | None = None
        shown = untrusted(_numbered(seen, spans))
        self._shared = (
            ChatMessage("system", render("system", language=self.language)),
            ChatMessage(
                "user",
                render(
                    "post",
                    text=shown,
                    published=self.published.isoformat() if self.published else "",
                    origin=untrusted(clip(self.origin, MAX_FIELD_CHARS)),
                    url=untrusted(clip(self.url, MAX_FIELD_CHARS)),
                ),
            ),
        )

    def untrusted(self, text: str) -> str:
        """``text`` from outside (a page, a title) made safe to put in a prompt."""
        return untrusted(text)

    @property
    def shared(self) -> tuple[ChatMessage, ...]:
        """The system and post messages every conversation starts with."""
        return self._shared

    def show(self, readable: SentenceList) -> None:
        """Fix the evidence the panel reads from now on: ``self.evidence`` with the
        numbered sentences of ``readable`` (one message, byte for byte the same for every
        agent that follows, so prefix caches evaluate it once)."""
        self.readable = readable
        self._evidence_message = self._render_evidence()

    def evidence_message(self) -> ChatMessage:
        """The evidence as :meth:`show` fixed it; before that, the documents alone."""
        return self._evidence_message or self._render_evidence()

    def _render_evidence(self) -> ChatMessage:
        lines: dict[str, list[str]] = {}
        for n, sentence in enumerate(self.readable.sentences, 1):
            lines.setdefault(sentence.evidence_id, []).append(f"{n}. {untrusted(sentence.text)}")
        documents = [
            {
                "id": e.id,
                "source_label": SOURCE_LABELS[e.source],
                "title": untrusted(clip(e.title, MAX_FIELD_CHARS)),
                "published": e.published.isoformat() if e.published else "",
                "note": untrusted(evidence_note(e)),
                "lines": lines.get(e.id) or [untrusted(clip(e.text, self.max_evidence_chars))],
            }
            for e in self.evidence
            if e.id in lines or e.source not in READ_SOURCES or not self.readable.sentences
        ]
        return ChatMessage("user", render("evidence", documents=documents))

    def conversation(self, *middle: ChatMessage, task: str) -> list[ChatMessage]:
        """Shared prefix, then ``middle``, then the role's ``task`` last."""
        return [*self._shared, *middle, ChatMessage("user", task)]
