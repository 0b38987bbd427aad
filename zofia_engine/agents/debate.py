"""ZoFia's adversarial debate (paper §4.2, Algorithm 1).

Each round the pro debater (the post is true) rebuts the con side's last argument
and adds new evidence, the con debater (false or misleading) does the same against
it, and the judge reads the whole history. The debate ends when the judge rules
(:class:`~zofia_engine.agents.early_stop.EarlyStop` decides from its token
probabilities, or its word), after a round in which both sides only repeated
themselves, or at ``max_rounds``, where the judge must rule and the report marks the
ruling as forced. Every turn passes through a :class:`TurnEditor` first: a quoted phrase
found in neither the post nor the evidence is dropped with its sentence, and a part that
repeats what the debate has shown is not shown twice.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict

from ..config import DebateSettings
from ..llm.base import ChatMessage
from ..llm.session import CheckSession, StepFailed
from ..prompting import render
from ..report import Debate, DebateTurn, JudgeRuling
from .context import PanelContext
from .early_stop import EarlyStop
from .judge import UNSAID, EvidenceSettled, Judged, final_ruling, round_ruling
from .novelty import Novelty
from .quotes import Haystack, unfounded

__all__ = [
    "DebateOutcome",
    "Moderator",
    "RoundHook",
    "TurnBrief",
    "TurnEditor",
    "hold_debate",
    "hold_opening_round",
    "turn_message",
]

MAX_WORDS = 60  # each of the rebuttal and the argument
MAX_TOKENS = 260

RoundHook = Callable[[JudgeRuling], Awaitable[None]]


class DebaterReply(BaseModel):
    model_config = ConfigDict(extra="forbid")

    rebuttal: str
    argument: str
    cites: list[str]


class DebateOutcome(BaseModel):
    """The transcript and the judgement that ended it."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    debate: Debate
    judged: Judged


_POSITIONS = {"pro": "true", "con": "false or misleading"}


def turn_message(turn: DebateTurn) -> ChatMessage:
    """One turn as the next speakers and the judge read it."""
    text = render(
        "debate_turn",
        round=turn.round,
        side_word=(turn.phase and f"{turn.side}, {turn.phase}") or turn.side,
        position=_POSITIONS.get(turn.side, ""),
        rebuttal=turn.rebuttal,
        argument=turn.argument,
        cites=turn.cites,
    )
    return ChatMessage("user", text)


def shown(turn: DebateTurn) -> list[ChatMessage]:
    """``turn`` as the next speakers and the judge read it; nothing when it failed or
    said nothing new."""
    return [turn_message(turn)] if turn.status == "ok" and not turn.repeated else []


@dataclass(frozen=True)
class TurnBrief:
    """What every turn of one debate is asked with: the session and the panel's context
    (the moderator's), and the ids a turn may cite (``post``, evidence ids, analysis
    ids)."""

    session: CheckSession
    panel: PanelContext
    citable: list[str]

    @classmethod
    def of(cls, moderator: Moderator, citable: list[str]) -> TurnBrief:
        return cls(moderator.session, moderator.panel, citable)

    def cited(self, cites: Sequence[str]) -> list[str]:
        """``cites`` that name something citable, each once, in order."""
        known = set(self.citable)
        return list(dict.fromkeys(c for c in cites if c in known))


async def _argue(
    brief: TurnBrief,
    material: list[ChatMessage],
    side: Literal["pro", "con"],
    round_no: int,
    opponent: DebateTurn | None,
) -> DebateTurn:
    other = "con" if side == "pro" else "pro"
    last = opponent.argument if opponent is not None and opponent.status == "ok" else ""
    task = render(
        "debater",
        position=_POSITIONS[side],
        other_position=_POSITIONS[other],
        opponent=last,
        max_words=MAX_WORDS,
    )
    try:
        answer = await brief.session.ask(
            "debater",
            f"debate:{side}:{round_no}",
            brief.panel.conversation(*material, task=task),
            DebaterReply,
            max_tokens=MAX_TOKENS,
            enums={"cites": brief.citable},
        )
    except StepFailed as exc:
        return DebateTurn(round=round_no, side=side, status="failed", error=exc.reason)
    reply = answer.value
    return DebateTurn(
        round=round_no,
        side=side,
        rebuttal=reply.rebuttal.strip() if last else "",
        argument=reply.argument.strip(),
        cites=brief.cited(reply.cites),
    )


@dataclass
class TurnEditor:
    """What a turn may show: quoted phrases found in the post or the evidence, and text
    the debate has not shown already (see :mod:`~zofia_engine.agents.novelty`).

    Args:
        novelty: the texts shown so far, the panel's analyses among them; ``None``:
            repeats are shown (the papers' debate, at the full depth).
        sources: where a quoted phrase must occur.
    """

    novelty: Novelty | None
    sources: Haystack
    dropped_quotes: int = 0
    repeats: int = 0

    def text(self, text: str) -> str:
        """``text`` without its unfounded quotes, or ``""`` if it repeats what was shown."""
        text, dropped = unfounded(text, self.sources)
        self.dropped_quotes += dropped
        if not text or self.novelty is None:
            return text
        fresh = self.novelty.fresh(text)
        self.repeats += not fresh
        return fresh

    def turn(self, turn: DebateTurn) -> DebateTurn:
        """``turn`` as shown: a part that repeats is blanked; a turn left with nothing new
        is marked ``repeated``."""
        if turn.status != "ok":
            return turn
        rebuttal, argument = self.text(turn.rebuttal), self.text(turn.argument)
        update = {"rebuttal": rebuttal, "argument": argument, "repeated": not argument}
        return turn.model_copy(update=update)


@dataclass(frozen=True)
class Moderator:
    """The judge's part in either debate: a ruling after each round, read by the early
    stop controller, and the ruling it must give when the debate is over; and the
    editor every turn passes through.

    Args:
        min_rounds: rulings before this round are read as ``continue``.
        on_round: awaited with each of the judge's rulings: after each round, and the
            ruling it must give when the debate is over (:meth:`final`).
        settled: whether any claim was settled by the evidence; the judge is told when
            none was.
    """

    session: CheckSession
    panel: PanelContext
    controller: EarlyStop
    editor: TurnEditor
    min_rounds: int = 1
    on_round: RoundHook | None = None
    settled: EvidenceSettled = UNSAID

    @classmethod
    def of(
        cls,
        session: CheckSession,
        panel: PanelContext,
        settings: DebateSettings,
        sources: Haystack,
        *,
        shown: Sequence[str] | None,
        on_round: RoundHook | None = None,
        settled: EvidenceSettled = UNSAID,
    ) -> Moderator:
        """The moderator ``[debate]`` describes, for the judge's model; ``shown``: the
        analyses' texts no turn may repeat (``None``: repeats are shown, as in the
        papers' run); ``sources``: where a quoted phrase must occur."""
        stop_margin, confidence = settings.taus(session.routes["judge"].model)
        novelty = Novelty(settings.repeat_threshold, shown) if shown is not None else None
        return cls(
            session,
            panel,
            EarlyStop(settings.early_stop, stop_margin, confidence),
            TurnEditor(novelty, sources),
            min_rounds=min(settings.min_rounds, settings.max_rounds),
            on_round=on_round,
            settled=settled,
        )

    def round_over(self, debate: Debate, turns: Sequence[DebateTurn]) -> bool:
        """Record a round's edited ``turns``; true when both sides only repeated
        themselves, which ends the debate."""
        debate.turns += turns
        debate.rounds = max(t.round for t in turns)
        if all(t.status == "ok" and t.repeated for t in turns):
            debate.stopped_by = "repetition"
            return True
        return False

    async def after_round(
        self, debate: Debate, material: list[ChatMessage], round_no: int, cap: int
    ) -> DebateOutcome | None:
        """The ruling after ``round_no`` of at most ``cap``; the outcome if it ends the
        debate, else ``None``."""
        judged = await round_ruling(
            self.session, self.panel, material, round_no, cap, settled=self.settled
        )
        ruling, stop, by = self.controller.apply(judged.ruling)
        if round_no < self.min_rounds:
            ruling, stop = ruling.model_copy(update={"decision": "continue"}), False
        debate.rulings.append(ruling)
        if self.on_round is not None:
            await self.on_round(ruling)
        if not stop:
            return None
        debate.decided_in_round = round_no
        debate.stopped_by = by
        return DebateOutcome(
            debate=debate, judged=Judged(ruling, judged.outcomes, judged.completion)
        )

    async def final(self, debate: Debate, material: list[ChatMessage]) -> DebateOutcome:
        """The ruling the judge must give when no round ended the debate."""
        judged = await final_ruling(
            self.session, self.panel, material, debate.rounds, settled=self.settled
        )
        debate.rulings.append(judged.ruling)
        debate.forced = True
        if self.on_round is not None:  # the last round's ruling, as progress shows rounds
            await self.on_round(judged.ruling)
        return DebateOutcome(debate=debate, judged=judged)


async def hold_debate(
    moderator: Moderator,
    pool: list[ChatMessage],
    citable: list[str],
    *,
    max_rounds: int,
) -> DebateOutcome:
    """Run Algorithm 1 over the evidence pool ``pool`` (evidence and analyses messages).

    Args:
        moderator: the judge, the early stop and the editor of turns.
        citable: ids a debater may cite (``post``, evidence ids, analysis ids).
        max_rounds: the cap (the paper: 5); the judge is forced to rule there.

    The debate also ends after a round in which both sides only repeated themselves.
    """
    brief = TurnBrief.of(moderator, citable)
    debate = Debate(style="zofia", max_rounds=max_rounds)
    material = list(pool)
    con_turn: DebateTurn | None = None
    edit = moderator.editor.turn
    for round_no in range(1, max_rounds + 1):
        pro_turn = edit(await _argue(brief, material, "pro", round_no, con_turn))
        material += shown(pro_turn)
        con_turn = edit(await _argue(brief, material, "con", round_no, pro_turn))
        material += shown(con_turn)
        if moderator.round_over(debate, [pro_turn, con_turn]):
            break
        if round_no == max_rounds:
            break  # the cap: the judge must rule, below
        ended = await moderator.after_round(debate, material, round_no, max_rounds)
        if ended is not None:
            return ended
    return await moderator.final(debate, material)


async def hold_opening_round(
    moderator: Moderator,
    pool: list[ChatMessage],
    citable: list[str],
    *,
    stopped_by: Literal["no_evidence", "settled"] = "no_evidence",
) -> DebateOutcome:
    """One round, both sides at once from the same material, then the judge's ruling:
    the debate held when no claim was settled, so that the card still has the panel's
    lean, both sides' case and what would settle it (``no_evidence``), or when the
    evidence settled the core claim, which decides the verdict (``settled``)."""
    brief = TurnBrief.of(moderator, citable)
    debate = Debate(style="zofia", max_rounds=1)
    material = list(pool)
    said = await asyncio.gather(
        _argue(brief, material, "pro", 1, None), _argue(brief, material, "con", 1, None)
    )
    turns = [moderator.editor.turn(t) for t in said]
    material += [m for t in turns for m in shown(t)]
    moderator.round_over(debate, turns)
    debate.stopped_by = stopped_by
    return await moderator.final(debate, material)
