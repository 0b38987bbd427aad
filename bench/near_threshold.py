"""Near-repeat threshold: how forwarded variants and different posts score under SBERT.

The check service answers a post from a stored report when the cosine between
the post and a stored post is at least ``service.near_threshold``. A false match
answers someone's post with a DIFFERENT post's verdict; a missed repeat only
costs one more check. This measures both sides with the packaged
all-MiniLM-L6-v2:

Positives ("same post"): each post against forward variants built with a fixed
seed: ``Fwd:`` and ``Forwarded from X:`` prefixes, a hashtag line, a "share
before they delete this" line, emoji, whitespace and case changes, the first
80% of the words, the leading line removed, a few words dropped, and all the
forward decorations at once.

Negatives ("different post"): each post against its most similar OTHER post in
the sample (the hardest negative: same topic), and each title alone against the
most similar other title. A variant whose best match is another post also counts.

Regimes:

- ``post``: ``title`` + the first 300 words of ``text``, first N items of
  ../shared/data/politifact_fnn.jsonl (the main figures);
- ``title``: the title alone, a short post;
- ``claim`` (extra): LIAR-PLUS claims, one sentence each: variants of the first
  N, hardest negative among all 1,284, plus edited claims (a ``not`` inserted,
  a number changed), which are different claims a cosine cannot tell apart.

Each regime is scored twice: on the raw text, and on ``canonical_text`` (forward
decorations stripped before encoding); "guard" rows also require
``same_particulars`` (no negation or number edited between the two texts).

all-MiniLM-L6-v2 reads at most 256 tokens; longer strings are cut here exactly
where the model would cut them (so the run takes less time), and the variants
that leave those tokens unchanged are counted ("invisible").

Finally, NearDuplicateIndex.nearest is timed at 100k random unit vectors (``--index-vectors``;
the keys keep their ``_100k`` names whatever the count).

    python bench/near_threshold.py [--limit 120] [--claims 1284] [--index-vectors 100000]
        [--smoke]

The last line is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from lib.near_scores import Encoder, Scores
from lib.near_variants import VARIANTS, negated, number_changed
from lib.smoke import sample_data, smoke_args

from bots.service.near import NearDuplicateIndex, canonical_text, same_particulars

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
THRESHOLDS = (0.85, 0.90, 0.92, 0.95, 0.97)
SEED = 20240601
POST_WORDS = 300


# --- figures -------------------------------------------------------------------------


def pct(values: Sequence[float] | np.ndarray, q: float) -> float:
    return round(float(np.percentile(np.asarray(values), q)), 4)


def rate(values: Sequence[float] | np.ndarray, t: float) -> float:
    array = np.asarray(values)
    return round(float((array >= t).mean()), 4) if array.size else float("nan")


def row(label: str, values: np.ndarray, note: str = "") -> str:
    return f"  {label:<24}" + "".join(f"{rate(values, t):>7.3f}" for t in THRESHOLDS) + note


def variant_pairs(name: str, texts: list[str]) -> list[tuple[int, str, str]]:
    """(original index, kind, variant) for each forward variant that changes its text."""
    rng = random.Random(f"{SEED}-{name}")
    pairs: list[tuple[int, str, str]] = []
    for i, text in enumerate(texts):
        for kind, make in VARIANTS.items():
            variant = make(text, rng)
            if variant is not None and variant != text:
                pairs.append((i, kind, variant))
    return pairs


def edited_claims(texts: list[str]) -> list[tuple[int, str, str]]:
    """(original index, kind, edited text) for each edit that applies: a different claim."""
    edited: list[tuple[int, str, str]] = []
    for i, text in enumerate(texts):
        for kind, edit in (("negated", negated), ("number_changed", number_changed)):
            changed = edit(text)
            if changed is not None:
                edited.append((i, kind, changed))
    return edited


@dataclass
class Regime:
    """One regime's texts, variants and edits, scored raw and on ``canonical_text``."""

    name: str
    texts: list[str]
    pool: list[str]
    pairs: list[tuple[int, str, str]]
    edited: list[tuple[int, str, str]]
    raw: Scores
    canon: Scores
    seconds: float
    invisible: np.ndarray  # per pair: the model reads the same tokens as the original's
    kinds: np.ndarray
    guard: np.ndarray  # per pair: same_particulars
    edit_kinds: np.ndarray
    edit_guard: np.ndarray


def print_regime(r: Regime) -> None:
    texts, pairs, raw, canon = r.texts, r.pairs, r.raw, r.canon
    pos, neg, kinds = raw.positive, raw.negative, r.kinds
    print(f"\n== {r.name}: {len(texts)} texts, {len(pairs)} variant pairs ({r.seconds:.0f} s)")
    print(
        f"positives: min {pct(pos, 0)}  p5 {pct(pos, 5)}  p50 {pct(pos, 50)}"
        f"   ({int(r.invisible.sum())} variants leave the tokens the model reads unchanged)"
    )
    print(
        f"hardest negatives: p50 {pct(neg, 50)}  p95 {pct(neg, 95)}  p99 {pct(neg, 99)}  "
        f"max {pct(neg, 100)};  variant vs other text: max {pct(raw.variant_negative, 100)}"
    )
    header = f"  {'':<24}" + "".join(f"{t:>7}" for t in THRESHOLDS)
    print("recall (share of variant pairs ≥ t), raw text")
    print(header)
    for kind in VARIANTS:
        if (kinds == kind).any():
            print(row(kind, pos[kinds == kind]))
    print(row("ALL", pos))
    print(row("ALL, visible changes", pos[~r.invisible]))
    print(row("ALL, canonical_text", canon.positive))
    print(row("ALL, canonical + guard", np.where(r.guard, canon.positive, -1.0)))
    print("false match (share ≥ t)")
    print(row("hardest other", neg))
    print(row("variant vs other", raw.variant_negative))
    print(row("hardest other, canonical", canon.negative))
    print(row("variant vs other, canon.", canon.variant_negative))
    if r.edited:
        print("edited claim ≥ t (different claim, same words otherwise)")
        for kind in ("negated", "number_changed"):
            mask = r.edit_kinds == kind
            note = f"   n={int(mask.sum())}, p50 {pct(raw.edited[mask], 50)}"
            print(row(kind, raw.edited[mask], note))
            kept = np.where(r.edit_guard[mask], canon.edited[mask], -1.0)
            print(row(f"{kind}, canon. + guard", kept))
    print("closest different pairs (raw):")
    for i in np.argsort(-neg)[:3]:
        print(f"  {neg[i]:.3f}  {texts[i][:55]!r} ~ {r.pool[raw.neighbour[i]][:55]!r}")
    print("lowest-scoring variants (raw):")
    for k in np.argsort(pos)[:3]:
        i, kind, _ = pairs[k]
        print(f"  {pos[k]:.3f}  {kind:<18} {texts[i][:70]!r}")


def regime_figures(r: Regime) -> dict[str, object]:
    raw, canon, kinds = r.raw, r.canon, r.kinds
    pos, neg = raw.positive, raw.negative
    figures: dict[str, object] = {
        "pairs": len(r.pairs),
        "invisible_variants": int(r.invisible.sum()),
        "positive_min": pct(pos, 0),
        "positive_p5": pct(pos, 5),
        "positive_p50": pct(pos, 50),
        "hard_negative_p50": pct(neg, 50),
        "hard_negative_p95": pct(neg, 95),
        "hard_negative_p99": pct(neg, 99),
        "hard_negative_max": pct(neg, 100),
        "variant_vs_other_max": pct(raw.variant_negative, 100),
        "top1_correct": round(float((raw.variant_negative < pos).mean()), 4),
        "guard_keeps": round(float(r.guard.mean()), 4),
        "recall_0.95_by_kind": {
            kind: rate(pos[kinds == kind], 0.95) for kind in VARIANTS if (kinds == kind).any()
        },
        "canon_recall_0.95_by_kind": {
            kind: rate(canon.positive[kinds == kind], 0.95)
            for kind in VARIANTS
            if (kinds == kind).any()
        },
        "positive_scores": pos,
        "negative_scores": neg,
        "variant_negative_scores": raw.variant_negative,
    }
    for t in THRESHOLDS:
        figures[f"recall_{t}"] = rate(pos, t)
        figures[f"canon_recall_{t}"] = rate(canon.positive, t)
        figures[f"false_match_{t}"] = rate(neg, t)
        figures[f"canon_false_match_{t}"] = rate(
            np.concatenate([canon.negative, canon.variant_negative]), t
        )
    for kind in ("negated", "number_changed"):
        mask = r.edit_kinds == kind
        if mask.any():
            figures[f"{kind}_0.95"] = rate(raw.edited[mask], 0.95)
            figures[f"{kind}_guarded_0.95"] = rate(
                np.where(r.edit_guard[mask], canon.edited[mask], -1.0), 0.95
            )
    return figures


def run_regime(
    name: str,
    texts: list[str],
    enc: Encoder,
    pool: list[str] | None = None,
    edits: bool = False,
) -> dict[str, object]:
    """Variants of ``texts`` vs their originals; hardest other text in ``pool`` (default texts)."""
    pairs = variant_pairs(name, texts)
    edited = edited_claims(texts) if edits else []
    pool = texts if pool is None else pool
    started = time.perf_counter()
    raw = Scores(enc, texts, pool, pairs, edited, lambda t: t)
    canon = Scores(enc, texts, pool, pairs, edited, canonical_text)
    seconds = time.perf_counter() - started
    same_tokens = enc.tokens(texts)
    regime = Regime(
        name=name,
        texts=texts,
        pool=pool,
        pairs=pairs,
        edited=edited,
        raw=raw,
        canon=canon,
        seconds=seconds,
        invisible=np.array([enc.tokens([v])[0] == same_tokens[i] for i, _, v in pairs]),
        kinds=np.array([k for _, k, _ in pairs]),
        guard=np.array([same_particulars(texts[i], v) for i, _, v in pairs]),
        edit_kinds=np.array([k for _, k, _ in edited]),
        edit_guard=np.array([same_particulars(texts[i], v) for i, _, v in edited], dtype=bool),
    )
    print_regime(regime)
    return regime_figures(regime)


def time_index(n: int = 100_000, dim: int = 384, queries: int = 200) -> dict[str, float]:
    rng = np.random.default_rng(SEED)
    rows = rng.standard_normal((n, dim), dtype=np.float32)
    index = NearDuplicateIndex(dim)
    started = time.perf_counter()
    index.load([f"c{i}" for i in range(n)], rows)
    load_s = time.perf_counter() - started
    adds = rng.standard_normal((min(10_000, n), dim), dtype=np.float32)
    started = time.perf_counter()
    for i, vector in enumerate(adds):
        index.add(f"a{i}", vector)
    add_us = (time.perf_counter() - started) / len(adds) * 1e6
    index.remove(f"a{i}" for i in range(len(adds)))
    probes = rng.standard_normal((queries, dim), dtype=np.float32)
    probes[::2] = rows[: queries // 2 * 2 : 2] + 0.05 * probes[::2]  # half near a stored row
    times = []
    hits = 0
    for probe in probes:
        started = time.perf_counter()
        hits += index.nearest(probe, threshold=0.95) is not None
        times.append(time.perf_counter() - started)
    ms = np.array(times) * 1000
    figures = {
        "query_p50_ms_100k": round(float(np.percentile(ms, 50)), 2),
        "query_p95_ms_100k": round(float(np.percentile(ms, 95)), 2),
        "load_s_100k": round(load_s, 2),
        "add_us": round(add_us, 1),
    }
    print(
        f"\n== NearDuplicateIndex, {n} x {dim}: nearest p50 {figures['query_p50_ms_100k']} ms, "
        f"p95 {figures['query_p95_ms_100k']} ms ({hits}/{queries} hits); "
        f"load {load_s:.2f} s; add {add_us:.0f} µs"
    )
    return figures


def read_posts(data: Path, limit: int) -> tuple[list[str], list[str]]:
    """The first ``limit`` politifact items: posts (title + the first words), and titles."""
    with (data / "politifact_fnn.jsonl").open(encoding="utf-8") as f:
        items = [json.loads(line) for line in f][:limit]
    posts = [f"{x['title'].strip()}\n{' '.join(x['text'].split()[:POST_WORDS])}" for x in items]
    titles = [x["title"].strip() for x in items]
    return posts, titles


def read_claims(data: Path, count: int) -> list[str]:
    """The first ``count`` LIAR-PLUS claims, each once."""
    with (data / "liar_plus_val.jsonl").open(encoding="utf-8") as f:
        claims = [json.loads(line)["claim"].strip() for line in f][:count]
    return list(dict.fromkeys(claims))


def headline(
    posts: int, post: dict[str, object], title: dict[str, object], claim: dict[str, object]
) -> dict[str, object]:
    """The headline, printed as a table: recall over post variants; false matches over the
    hard negatives (each post vs its most similar other post, each title vs its most
    similar other title). Its figures, with the post regime's."""
    positives: np.ndarray = post["positive_scores"]  # type: ignore[assignment]
    negatives = np.concatenate([post["negative_scores"], title["negative_scores"]])
    variant_negatives: np.ndarray = post["variant_negative_scores"]  # type: ignore[assignment]
    print("\n== headline: post variants vs hard negatives (post + title); short texts beside")
    print(
        f"{'threshold':<10}{'recall':>8}{'false':>8}{'var.fm':>8}"
        f"{'title':>8}{'claim':>8}{'canon:post':>11}{'title':>7}{'claim':>7}"
    )
    summary: dict[str, object] = {"posts": posts}
    for t in THRESHOLDS:
        summary[f"recall_{t}"] = rate(positives, t)
        summary[f"false_match_{t}"] = rate(negatives, t)
        summary[f"variant_false_match_{t}"] = rate(variant_negatives, t)
        line = (
            f"{t:<10}{rate(positives, t):>8.3f}{rate(negatives, t):>8.3f}"
            f"{rate(variant_negatives, t):>8.3f}{title[f'recall_{t}']:>8.3f}"
            f"{claim.get(f'recall_{t}', float('nan')):>8.3f}"
            f"{post[f'canon_recall_{t}']:>11.3f}{title[f'canon_recall_{t}']:>7.3f}"
            f"{claim.get(f'canon_recall_{t}', float('nan')):>7.3f}"
        )
        print(line)
    summary["hard_negative_max"] = pct(negatives, 100)
    summary["hard_negative_p99"] = pct(negatives, 99)
    summary["variant_vs_other_max"] = post["variant_vs_other_max"]
    summary["positive_min"] = post["positive_min"]
    summary["positive_p5"] = post["positive_p5"]
    summary["positive_p50"] = post["positive_p50"]
    summary["recall_0.95_by_kind"] = post["recall_0.95_by_kind"]
    summary["invisible_variants"] = post["invisible_variants"]
    summary["top1_correct"] = post["top1_correct"]
    for t in (0.9, 0.92, 0.95):
        summary[f"canon_recall_{t}"] = post[f"canon_recall_{t}"]
    return summary


def short_text_figures(title: dict[str, object], claim: dict[str, object]) -> dict[str, object]:
    """The title and claim regimes' figures (none for a regime not run)."""
    summary: dict[str, object] = {}
    for regime_name, regime in (("title", title), ("claim", claim)):
        if not regime:
            continue
        for t in (0.85, 0.9, 0.92, 0.95):
            summary[f"{regime_name}_recall_{t}"] = regime[f"recall_{t}"]
            summary[f"{regime_name}_canon_recall_{t}"] = regime[f"canon_recall_{t}"]
        summary[f"{regime_name}_hard_negative_max"] = regime["hard_negative_max"]
        for key in ("negated_0.95", "number_changed_0.95", "negated_guarded_0.95"):
            summary[f"{regime_name}_{key}"] = regime.get(key)
        summary[f"{regime_name}_number_changed_guarded_0.95"] = regime.get(
            "number_changed_guarded_0.95"
        )
    return summary


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--limit", type=int, default=120, help="politifact items (and claims)")
    parser.add_argument("--claims", type=int, default=1284, help="LIAR claims in the pool; 0: skip")
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument(
        "--index-vectors", type=int, default=100_000, help="rows of the timed index"
    )
    args = smoke_args(parser, {"limit": 4, "claims": 6, "index_vectors": 1000, "data": sample_data})
    started = time.perf_counter()
    posts, titles = read_posts(args.data, args.limit)
    enc = Encoder()

    post = run_regime("post", posts, enc)
    title = run_regime("title", titles, enc, edits=True)
    claim: dict[str, object] = {}
    if args.claims:
        pool = read_claims(args.data, args.claims)
        claim = run_regime("claim", pool[: args.limit], enc, pool=pool, edits=True)

    summary = headline(len(posts), post, title, claim)
    summary.update(short_text_figures(title, claim))
    summary["guard_keeps_post_variants"] = post["guard_keeps"]
    summary.update(time_index(args.index_vectors))
    summary["texts_encoded"] = enc.encoded
    summary["seconds"] = round(time.perf_counter() - started, 1)
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
