"""The report's charts as inline SVG, drawn on the server: the evidence's stance, the
confidence as a gauge, the tree of claims. No script, no style attribute (the page's
Content-Security-Policy allows neither): only presentation attributes, and every text
escaped. Each chart scales to the width of the page and says in its title what it
shows, for a screen reader and a hovering pointer.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from markupsafe import Markup, escape

from .parts import ClaimView, EvidenceView
from .safety import shown

__all__ = ["STANCE_COLOURS", "claim_tree", "confidence_gauge", "stance_bar"]

#: a stance (or a claim's label) → its colour
STANCE_COLOURS = {
    "supports": "#2e7d32",
    "neutral": "#78909c",
    "refutes": "#c62828",
    "not enough information": "#78909c",
}
_OTHER = "#f9a825"  # a failed or skipped step
# How strongly a document counts, when its domain has no numeric rating.
_LABEL_QUALITY = {
    "high": 0.9,
    "fact-checker": 1.0,
    "medium": 0.6,
    "low": 0.25,
    "satire": 0.15,
}
_UNRATED = 0.45


def _text(value: str) -> Markup:
    return escape(shown(value))


def _opacity(item: EvidenceView) -> float:
    quality = item.quality
    if quality is None:
        quality = _LABEL_QUALITY.get(item.quality_class, _UNRATED)
    return round(0.25 + 0.75 * max(0.0, min(1.0, quality)), 2)


def stance_bar(evidence: Sequence[EvidenceView]) -> Markup:
    """One bar split among the documents whose stance was judged: supporting ones on the
    left, neutral in the middle, refuting on the right; each the darker the better its
    source. Empty markup when no stance was judged."""
    judged = [item for item in evidence if item.stance]
    if not judged:
        return Markup("")
    order = {"supports": 0, "neutral": 1, "refutes": 2}
    judged.sort(key=lambda item: (order[item.stance], -_opacity(item)))
    counts = {stance: sum(item.stance == stance for item in judged) for stance in order}
    said = ", ".join(f"{n} {stance}" for stance, n in counts.items() if n)
    width, height = 320.0, 22.0
    step = width / len(judged)
    parts = [
        f'<svg class="pic bar" viewBox="0 0 {width:g} 40" role="img" '
        f'aria-label="Stance of {len(judged)} documents: {_text(said)}">'
    ]
    for n, item in enumerate(judged):
        tip = f"{item.id}: {item.stance}, {item.quality_label or 'unrated source'} — {item.title}"
        parts.append(
            f'<rect x="{n * step:.2f}" y="0" width="{step:.2f}" height="{height:g}" '
            f'fill="{STANCE_COLOURS[item.stance]}" fill-opacity="{_opacity(item)}" '
            f'stroke="#fff" stroke-width="1"><title>{_text(tip)}</title></rect>'
        )
    for stance, n in counts.items():
        if n:
            anchor = {"supports": "start", "neutral": "middle", "refutes": "end"}[stance]
            at = {"supports": 0.0, "neutral": width / 2, "refutes": width}[stance]
            parts.append(
                f'<text x="{at:g}" y="36" font-size="12" text-anchor="{anchor}" '
                f'fill="{STANCE_COLOURS[stance]}">{n} {stance}</text>'
            )
    parts.append("</svg>")
    return Markup("".join(parts))


def confidence_gauge(value: float | None, colour: str) -> Markup:
    """A half-circle gauge filled to ``value`` (0 to 1) in the verdict's colour, with the
    percentage under it; a grey gauge saying "n/a" when the backend gave no probability."""
    head = '<svg class="pic gauge" viewBox="0 0 120 72" role="img" aria-label="Confidence: {}">'
    track = (
        '<path d="M 10 62 A 50 50 0 0 1 110 62" fill="none" stroke="#cfd8dc" '
        'stroke-width="12" stroke-linecap="round"/>'
    )
    if value is None:
        return Markup(
            head.format("not given")
            + track
            + '<text x="60" y="58" font-size="16" text-anchor="middle" fill="#607d8b">n/a</text>'
            + "</svg>"
        )
    v = max(0.0, min(1.0, value))
    angle = math.pi * (1 - v)
    x, y = 60 + 50 * math.cos(angle), 62 - 50 * math.sin(angle)
    arc = (
        f'<path d="M 10 62 A 50 50 0 0 1 {x:.2f} {y:.2f}" fill="none" stroke="{colour}" '
        'stroke-width="12" stroke-linecap="round"/>'
        if v > 0
        else ""
    )
    words = f"{v:.0%}"
    return Markup(
        head.format(words)
        + track
        + arc
        + f'<text x="60" y="60" font-size="20" font-weight="bold" text-anchor="middle" '
        f'fill="{colour}">{words}</text></svg>'
    )


def _fit(text: str, chars: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= chars else text[: max(chars - 1, 1)].rstrip() + "…"


def claim_tree(claims: Sequence[ClaimView]) -> Markup:
    """The tree of claims: one row per claim in tree order, indented by depth, joined to
    its parent, its dot coloured by its label. Empty markup for a single claim."""
    if len(claims) < 2:
        return Markup("")
    row, indent, width = 26, 18, 360
    height = row * len(claims) + 6
    parts = [
        f'<svg class="pic tree" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="Tree of {len(claims)} claims">'
    ]
    last_at_depth: dict[int, float] = {}
    for n, claim in enumerate(claims):
        x, y = 10 + claim.depth * indent, 14 + n * row
        if claim.depth and claim.depth - 1 in last_at_depth:
            px, py = 10 + (claim.depth - 1) * indent, last_at_depth[claim.depth - 1]
            parts.append(
                f'<path d="M {px} {py + 6:g} V {y} H {x - 7}" fill="none" stroke="#90a4ae"/>'
            )
        last_at_depth[claim.depth] = y
        for deeper in [d for d in last_at_depth if d > claim.depth]:
            del last_at_depth[deeper]
        colour = STANCE_COLOURS.get(claim.label, _OTHER)
        label = {"not enough information": "not enough info"}.get(claim.label, claim.label)
        room = (width - x - 12) // 7
        line = _fit(f"{label}: {claim.text}", room)
        parts.append(
            f"<g><title>{_text(f'{claim.kind} ({claim.label}): {claim.text}')}</title>"
            f'<circle cx="{x}" cy="{y}" r="6" fill="{colour}"/>'
            f'<text x="{x + 11}" y="{y + 4}" font-size="12" fill="currentColor">'
            f"{_text(line)}</text></g>"
        )
    parts.append("</svg>")
    return Markup("".join(parts))
