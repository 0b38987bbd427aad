"""Source credibility of evidence documents, from news-domain quality ratings.

Ratings: the pc1 score of Lin et al. (2023, PNAS Nexus 2(9) pgad286), 0 lowest quality
and 1 highest, for 11,520 news domains; a few rows rate a path (``youtube.com/<channel>``).
A short hand-made list labels fact-checkers and satire sites on top (``data/README.md``).

AgentFact (Xu et al., "Multimodal Fact-Checking: An Agent-based Approach") grades every
retrieved source as reliable, unreliable, satire, unsure or fact-checker, because a model
that ignores where evidence comes from is misled by deceptive or satirical pages. Its
reliability prompt (appendix, Agent-TR-2) trusts reliable sources at face value but asks
for "reverse use" of the others ("presence of information is itself evidence of low
credibility"): a claim carried by a dubious or satirical site is, for that reason, less
believable. ``counts_against`` applies that rule to a verifier's stance.
"""

from __future__ import annotations

import contextlib
import csv
import functools
import io
import ipaddress
import threading
from dataclasses import dataclass
from importlib import resources
from typing import Literal
from urllib.parse import urlsplit

from ..report import Credibility

__all__ = [
    "Credibility",
    "SourceQuality",
    "Stance",
    "counts_against",
    "domain_candidates",
]

Label = Literal["high", "medium", "low", "fact-checker", "satire", "unknown"]
# The verifier's labels (agents/claims.py) and the stance step's "neutral".
Stance = Literal["supports", "refutes", "neutral", "not enough information"]

# Defaults measured on the packaged CSV (quantiles in data/README.md): 27% of domains fall
# below 0.4 and 23% reach 0.7. 0.4 puts breitbart (.297), infowars (.046), rt.com (.293),
# newsmax (.287), zerohedge (.272) and dailymail.co.uk (.384) in "low" while foxnews (.534),
# huffpost (.568) and cnn (.658) stay "medium"; 0.7 puts reuters (1.0), apnews (.998),
# nytimes (.859) and bbc.co.uk (.718) in "high". Borderline: oann.com (.415) is "medium".
LOW_BELOW = 0.4
HIGH_FROM = 0.7

# Second levels under a two-letter country code that act as public suffixes (co.uk,
# com.au, org.eg, gouv.fr, or.jp, ...): the registrable domain then has three labels.
_SECOND_LEVELS = frozenset(
    {"ac", "co", "com", "edu", "go", "gob", "gouv", "gov", "govt", "ltd", "mil", "ne", "net"}
    | {"nic", "or", "org", "plc", "sch"}
)
# Hosts of other people's content: the platform's own rating says nothing about a page
# under it (a blog at x.blogspot.com, a channel at youtube.com/...). Their bare entry is
# used only for the platform itself; subdomain and path entries still match.
_PLATFORMS = frozenset(
    {"blogspot.com", "wordpress.com", "medium.com", "substack.com", "tumblr.com", "weebly.com"}
    | {"altervista.org", "wixsite.com", "github.io", "facebook.com", "youtube.com", "x.com"}
    | {"twitter.com", "instagram.com", "tiktok.com", "reddit.com"}
)


@dataclass(frozen=True)
class _Tables:
    ratings: dict[str, float]
    labels: dict[str, Label]
    depth: int  # the most path segments in any rating key


def _ascii(host: str) -> str:
    """``host`` in the ASCII (IDNA) form; raises UnicodeError for an invalid name."""
    return host if host.isascii() else host.encode("idna").decode("ascii")


def _rows(name: str) -> list[dict[str, str]]:
    text = (resources.files("zofia_engine") / "data" / name).read_text(encoding="utf-8")
    return list(csv.DictReader(io.StringIO(text)))


def _key(raw: str) -> str:
    host, slash, path = raw.strip().lower().partition("/")
    with contextlib.suppress(UnicodeError):  # a malformed row keeps its text, never matches
        host = _ascii(host)
    return host + slash + path


_LIST_LABELS: dict[str, Label] = {"fact-checker": "fact-checker", "satire": "satire"}


@functools.cache
def _load() -> _Tables:
    ratings = {_key(r["domain"]): float(r["pc1"]) for r in _rows("domain_quality_pc1.csv")}
    labels: dict[str, Label] = {}
    for row in _rows("source_labels.csv"):
        label = _LIST_LABELS.get(row["label"])
        if label is None:
            raise ValueError(f"source_labels.csv: unexpected label {row['label']!r}")
        labels[_key(row["domain"])] = label
    return _Tables(ratings, labels, max(k.count("/") for k in ratings))


_LOCK = threading.Lock()


def _tables() -> _Tables:
    with _LOCK:  # the first caller loads; the others wait for the cached tables
        return _load()


def _split(url_or_host: str) -> tuple[str, list[str]]:
    """The normalised ASCII host ('' when there is none) and the lowercased path segments."""
    text = url_or_host.strip()
    if "://" not in text and not text.startswith("//"):
        text = "//" + text  # a bare host, maybe with a port or a path
    try:
        parts = urlsplit(text)
        host = (parts.hostname or "").rstrip(".")  # lowercased; no userinfo or port
        host = _ascii(host).lower() if host else ""
    except (ValueError, UnicodeError):
        return "", []
    host = host.removeprefix("www.")
    return host, [s for s in parts.path.lower().split("/") if s]


def domain_candidates(host: str) -> list[str]:
    """``host`` and its parent domains down to the registrable one, most specific first:
    the keys a lookup tries (``news.bbc.co.uk``, ``bbc.co.uk``; never ``co.uk``). An IP
    address is its own only candidate."""
    try:
        ipaddress.ip_address(host.strip("[]"))
        return [host]
    except ValueError:
        pass
    labels = host.split(".")
    keep = 2
    if len(labels) >= 3 and len(labels[-1]) == 2 and labels[-2] in _SECOND_LEVELS:
        keep = 3
    return [".".join(labels[i:]) for i in range(max(len(labels) - keep, 0) + 1)]


class SourceQuality:
    """Classifies a URL or host by the packaged ratings and fact-checker/satire labels."""

    def __init__(self, low_below: float = LOW_BELOW, high_from: float = HIGH_FROM) -> None:
        if not 0.0 <= low_below <= high_from <= 1.0:
            raise ValueError("need 0 <= low_below <= high_from <= 1")
        self.low_below = low_below
        self.high_from = high_from

    def _band(self, quality: float) -> Label:
        if quality < self.low_below:
            return "low"
        return "high" if quality >= self.high_from else "medium"

    def classify(self, url_or_host: str) -> Credibility:
        host, segments = _split(url_or_host)
        if not host:
            return Credibility(domain="", quality=None, label="unknown")
        tables = _tables()
        label_hit = next((d for d in domain_candidates(host) if d in tables.labels), None)
        rating_hit = None
        for domain in domain_candidates(host):
            depth = min(len(segments), tables.depth)
            keys = ["/".join([domain, *segments[:n]]) for n in range(depth, 0, -1)]
            if domain not in _PLATFORMS or (domain == host and not segments):
                keys.append(domain)
            rating_hit = next((k for k in keys if k in tables.ratings), None)
            if rating_hit is not None:
                break
        quality = None if rating_hit is None else tables.ratings[rating_hit]
        if label_hit is not None:
            return Credibility(domain=label_hit, quality=quality, label=tables.labels[label_hit])
        if rating_hit is None or quality is None:
            return Credibility(domain=host, quality=None, label="unknown")
        return Credibility(domain=rating_hit, quality=quality, label=self._band(quality))


def counts_against(stance: Stance, credibility: Credibility) -> bool:
    """Whether a piece of evidence weighs against the post, reading its source (AgentFact).

    Support from a low-quality or satire source counts against the post (reverse use), not
    for it. A refutation counts against unless it comes from such a source: an unreliable
    page is no evidence either way, and its refutation is not turned into support. Sources
    of unknown quality are taken at face value; "neutral" and "not enough information" never
    count.
    """
    dubious = credibility.label in ("low", "satire")
    if stance == "supports":
        return dubious
    if stance == "refutes":
        return not dubious
    return False
