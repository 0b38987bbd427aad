"""Reports for the tests and the benchmarks, built in one place.

- :func:`full_report`: a full one of any verdict, for the report pages (a tree of
  claims, stances and source quality, a published fact-check, an image, three debate
  rounds, every analysis, a failed step);
- a hostile one whose model- and web-written strings try to run script, break out of
  attributes, link to ``javascript:`` and reverse text;
- :func:`sample_report`: one of about the size a real check stores (``bench/store.py``).

:func:`stored_check` writes a report into a store as the service would, so the pages
are read back through the real store.
"""

from __future__ import annotations

import datetime as dt

from storage.store import CheckRow, CheckStore
from zofia_engine.post import Post
from zofia_engine.records.images import ImageFinding, ImageSighting, LabelHit, VisionFinding
from zofia_engine.records.notes import note, source_failed
from zofia_engine.report import (
    Analyses,
    ClaimResult,
    Confidence,
    Credibility,
    Debate,
    DebateTurn,
    EvidenceItem,
    ExpertFinding,
    JudgeRuling,
    Lean,
    LinguistFinding,
    LLMCall,
    Quote,
    Report,
    Stance,
    TreeSummary,
    Triage,
    Usage,
)

__all__ = [
    "ATTRIBUTE",
    "JS_URL",
    "POST",
    "RTL",
    "SCRIPT",
    "SPOOFED_URL",
    "full_report",
    "hostile_report",
    "stored_check",
]

POST = (
    "The city council of Springfield banned bicycles from every street in March, and "
    "cyclists now face a 500 dollar fine, says a post shared 40,000 times."
)
#: a script that, if it ever ran, would leave a flag on the window
SCRIPT = '<script>window.__xss = "script"</script><img src=x onerror="window.__xss=\'img\'">'
#: text that tries to close an attribute and open an event handler
ATTRIBUTE = '" onerror="window.__xss=\'attr\'" autofocus onfocus="window.__xss=\'focus\'" x="'
JS_URL = "javascript:window.__xss='link'//"
#: a right-to-left override that would show "evil.com" reversed, and hide what follows
RTL = "\u202eexe.tnemucod\u202c harmless"
#: an address whose override character makes it read as ending in ".png"
SPOOFED_URL = "https://example.org/\u202egnp.exe"
_SENTENCE = "The council's minutes of 12 March record no vote on bicycles or fines."


def _evidence() -> list[EvidenceItem]:
    def web(n: int, stance: str, domain: str, quality: float | None, label: str) -> EvidenceItem:
        return EvidenceItem(
            id=f"web-{n}",
            source="web",
            provider="brave",
            title=f"Springfield council report {n} ({domain})",
            url=f"https://{domain}/springfield/{n}",
            text=f"{_SENTENCE} Page {n} adds detail on the budget debate. " * 3,
            published=dt.date(2026, 3, 10 + n),
            query="counter" if n == 4 else "main",
            stance=Stance(label=stance, sentence=_SENTENCE),
            credibility=Credibility(domain=domain, quality=quality, label=label),
        )

    return [
        EvidenceItem(
            id="fc-1",
            source="factcheck",
            provider="google-factcheck",
            title="No, Springfield did not ban bicycles",
            url="https://www.politifact.com/factchecks/2026/mar/20/springfield-bikes/",
            text="PolitiFact found no ordinance banning bicycles.",
            published=dt.date(2026, 3, 20),
            publisher="PolitiFact",
            rating="False",
        ),
        web(1, "refutes", "reuters.com", 1.0, "high"),
        web(2, "refutes", "apnews.com", 0.998, "high"),
        web(3, "neutral", "sj-r.com", 0.55, "medium"),
        web(4, "supports", "bikefreedomnews.example", None, "unknown"),
        web(5, "supports", "infowars.com", 0.046, "low"),
        EvidenceItem(
            id="wiki-1",
            source="wikipedia",
            provider="wikipedia:offline",
            title="Springfield, Illinois",
            url="https://en.wikipedia.org/wiki/Springfield,_Illinois",
            text="Springfield is the capital of the U.S. state of Illinois.",
        ),
    ]


def _claims(verdict: str) -> list[ClaimResult]:
    label = "supports" if verdict == "true" else "refutes"
    return [
        ClaimResult(
            id="claim-0",
            kind="core",
            text="Springfield banned bicycles from every street in March.",
            label=label,
            veracity=0.12,
            reliability=0.81,
            tree_veracity=0.15,
            tree_reliability=0.78,
            reason="The minutes and two wire reports show no such ordinance.",
            quotes=[Quote(text="record no vote on bicycles", evidence_id="web-1")],
            context=["web-1", "web-2"],
        ),
        ClaimResult(
            id="claim-1",
            kind="sub",
            parent="claim-0",
            depth=1,
            dimension="event",
            importance=0.6,
            text="The council voted on a bicycle ban in March.",
            label=label,
            veracity=0.1,
            reliability=0.85,
            reason="No vote is recorded.",
            quotes=[Quote(text="no vote on bicycles", evidence_id="web-2")],
            context=["web-2"],
        ),
        ClaimResult(
            id="claim-1a",
            kind="sub",
            parent="claim-1",
            depth=2,
            dimension="time",
            importance=0.5,
            text="The vote took place at the 12 March session.",
            label="not enough information",
            reason="The session's agenda is not among the documents.",
            context=["web-3"],
        ),
        ClaimResult(
            id="claim-2",
            kind="sub",
            parent="claim-0",
            depth=1,
            dimension="amount",
            importance=0.4,
            text="Cyclists face a 500 dollar fine.",
            label=label,
            veracity=0.2,
            reliability=0.7,
            reason="No fine schedule mentions bicycles.",
            context=["web-1"],
        ),
    ]


def _debate(verdict: str) -> Debate:
    decision = verdict if verdict in ("true", "false", "misleading", "unproven") else "false"
    turns, rulings = [], []
    for r in (1, 2, 3):
        turns += [
            DebateTurn(
                round=r,
                side="pro",
                rebuttal="" if r == 1 else f"Round {r}: the opposing side ignores the local blog.",
                argument=f"Round {r}, for: a local blog reported the ban (web-4).",
                cites=["web-4", "post"],
            ),
            DebateTurn(
                round=r,
                side="con",
                rebuttal=f"Round {r}: the blog cites no ordinance.",
                argument=f"Round {r}, against: the minutes record no vote (web-1, web-2).",
                cites=["web-1", "web-2", "fc-1"],
            ),
        ]
        rulings.append(
            JudgeRuling(
                round=r,
                decision="continue" if r < 3 else decision,
                outcome=decision,
                reason=f"After round {r} the wire reports outweigh the blog.",
                stop_margin=-0.3 + 0.2 * r,
                label_confidence=0.6 + 0.1 * r,
                probabilities={"false": 0.7, "true": 0.1, "misleading": 0.15, "unproven": 0.05},
            )
        )
    return Debate(turns=turns, rulings=rulings, rounds=3, max_rounds=5, decided_in_round=3)


def _usage() -> Usage:
    roles = ["triage", "linguist", "expert", "claims", "debater", "judge"]
    calls = [
        LLMCall(
            role=roles[n % len(roles)],
            step=f"step-{n}",
            backend="openai:gpt-4o-mini",
            prompt_tokens=1200 + n,
            completion_tokens=150,
            cached_tokens=800,
            latency_ms=900.0 + n,
            ok=n != 7,
            error="timed out at http://10.0.0.5:8080/v1" if n == 7 else "",
        )
        for n in range(24)
    ]
    return Usage.of(calls)


def full_report(verdict: str = "false", *, summary: str = "") -> Report:
    """A report as a full check of :data:`POST` gives it, with ``verdict``."""
    grounded = verdict in ("true", "false", "misleading")
    return Report(
        verdict=verdict,
        confidence=Confidence(value=0.87 if grounded else None, basis="judge's probabilities"),
        summary=summary
        or (
            "Springfield's council minutes and two wire reports record no bicycle ban "
            "and no fine; PolitiFact rated the claim False."
        ),
        evidence=_evidence(),
        claims=_claims(verdict),
        analyses=Analyses(
            linguist=[
                LinguistFinding(
                    dimension=dimension,
                    analysis=f"The {dimension.replace('_', ' ')} reads as alarmist.",
                    lean="fake",
                )
                for dimension in ("emotion", "sourcing", "style", "logic", "intent")
            ],
            expert=ExpertFinding(
                domain="local government",
                expert_role="municipal law reporter",
                knowledge_concordance="Ordinances are published; none matches.",
                logical_integrity="A citywide ban would have left a record.",
                lean="fake",
            ),
        ),
        debate=_debate(verdict),
        usage=_usage(),
        timings={"retrieval_ms": 2100.0, "analyses_ms": 5400.0, "debate_ms": 9800.0},
        notes=[
            source_failed("searxng", "connection refused at http://192.168.1.20:8888"),
            note("no reverse image search configured"),
        ],
        basis=["claim-0", "fc-1"] if grounded else [],
        lean=Lean(outcome="false", probability=0.62, settle="The council's minutes.")
        if verdict == "unproven"
        else None,
        triage=Triage(kind="claim", reason="A checkable claim about a city ordinance."),
        tree=TreeSummary(
            veracity=0.15, reliability=0.78, decision="false", evaluations=6, stopped_by="decisive"
        ),
        images=[
            ImageFinding(
                index=1,
                sha256="0" * 64,
                bytes=48_000,
                width=800,
                height=600,
                media_type="image/png",
                text="BIKES BANNED IN SPRINGFIELD — $500 FINE",
                ocr_confidence=0.93,
                labels=[LabelHit(word="false", line="FALSE: no ban exists", outcome="false")],
                notes=["no vision model configured"],
            )
        ],
    )


def hostile_report() -> Report:
    """A full report whose every model- and web-written string is an attack."""
    report = full_report("false", summary=f"Summary {SCRIPT} {ATTRIBUTE} {RTL}")
    evidence = [
        item.model_copy(
            update={
                "title": f"{item.title} {SCRIPT} {ATTRIBUTE} {RTL}",
                "url": JS_URL if n % 2 else SPOOFED_URL,
                "text": f"{SCRIPT}{ATTRIBUTE}",
            }
        )
        for n, item in enumerate(report.evidence)
    ]
    evidence.append(
        EvidenceItem(
            id='web-9"><script>window.__xss="id"</script>',
            source="web",
            provider=f"brave {SCRIPT}",
            title=f"Data link {ATTRIBUTE}",
            url="data:text/html,<script>window.__xss='data'</script>",
            text="x",
        )
    )
    turns = [
        turn.model_copy(
            update={
                "argument": f"{turn.argument} {SCRIPT} [click](javascript:alert(1)) {RTL}",
                "rebuttal": ATTRIBUTE,
                "cites": [*turn.cites, '"><script>window.__xss="cite"</script>'],
            }
        )
        for turn in report.debate.turns
    ]
    claims = [
        claim.model_copy(update={"text": f"{claim.text} {SCRIPT}", "reason": ATTRIBUTE})
        for claim in report.claims
    ]
    # Text read from a user's image is the most attacker-written of all.
    image = report.images[0].model_copy(
        update={
            "text": f"{SCRIPT}{ATTRIBUTE}",
            "labels": [LabelHit(word="false", line=ATTRIBUTE, outcome="false")],
            "notes": [SCRIPT],
            "vision": VisionFinding(
                description=SCRIPT,
                miscaption_rate=70,
                band="misleading",
                miscaption_reason=ATTRIBUTE,
                tampering=10,
                tampering_reason=RTL,
            ),
            "sightings": [ImageSighting(url=JS_URL, title=SCRIPT + RTL, relation="same source")],
        }
    )
    return report.model_copy(
        update={
            "images": [image],
            "evidence": evidence,
            "debate": report.debate.model_copy(update={"turns": turns}),
            "claims": claims,
            "notes": [*report.notes, note(SCRIPT)],
        }
    )


def stored_check(
    store: CheckStore,
    report: Report | None,
    *,
    text: str = POST,
    url: str = "",
    language: str = "",
    status: str = "done",
) -> CheckRow:
    """A check of ``text`` in ``store`` as a Telegram chat's, with ``report`` saved (none:
    left at ``status``)."""
    row = store.checks.create(
        platform="telegram",
        chat="chat-hash-3f9a",
        requester="requester-hash-77c1",
        post=Post(text=text, url=url, origin="user Alice Example (@alice)", language=language),
        text_hash=f"hash-{text[:20]}",
        status="running" if report is not None else status,  # type: ignore[arg-type]
    )
    if report is not None:
        store.reports.save(row.id, report)
    stored = store.checks.get(row.id)
    assert stored is not None
    return stored


_BENCH_SENTENCE = "The council discussed the budget, the new bike lanes and the harbour plan."


def sample_report(i: int) -> Report:
    """A report of about the size a real check stores (10 documents, 5 claims, 3 rounds)."""
    text = " ".join([_BENCH_SENTENCE] * 4)
    return Report(
        verdict="false" if i % 2 else "true",
        confidence=Confidence(value=0.8, basis="judge's token probabilities"),
        summary=text,
        evidence=[
            EvidenceItem(
                id=f"web-{j}",
                source="web",
                provider="brave",
                title=f"Page {j}",
                url=f"https://example.org/{i}/{j}",
                text=text,
            )
            for j in range(1, 11)
        ],
        claims=[
            ClaimResult(
                id=f"claim-{j}",
                kind="sub" if j else "core",
                text=_BENCH_SENTENCE,
                label="refutes",
                reason=_BENCH_SENTENCE,
            )
            for j in range(5)
        ],
        analyses=Analyses(
            linguist=[
                LinguistFinding(dimension=f"d{j}", analysis=_BENCH_SENTENCE, lean="fake")
                for j in range(5)
            ]
        ),
        debate=Debate(
            turns=[
                DebateTurn(round=r, side=side, rebuttal=text, argument=text, cites=["post"])
                for r in range(1, 4)
                for side in ("pro", "con")
            ],
            rulings=[
                JudgeRuling(round=r, decision="continue", reason=_BENCH_SENTENCE)
                for r in range(1, 4)
            ],
            rounds=3,
            max_rounds=5,
        ),
        timings={"total_ms": 1.0},
    )
