"""ZoFia's adversarial debate (paper §4.2, Algorithm 1).

Each round the pro debater (the post is true) rebuts the con side's last argument
and adds new evidence, the con debater (false or misleading) does the same against
it, and the judge reads the whole history. The debate ends when the judge rules
(:class:`~zofia_engine.agents.early_stop.EarlyStop` decides from its token
probabilities, or its word) or at ``max_rounds``, where the judge must rule and the
report marks the ruling as forced.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict

from ..llm.base import ChatMessage
from ..llm.session import CheckSession, StepFailed
from ..prompting import render
from ..report import Debate, DebateTurn, JudgeRuling
from .context import PanelContext
from .early_stop import EarlyStop
from .judge import Judged, final_ruling, round_ruling

__all__ = ["DebateOutcome", "Moderator", "RoundHook", "hold_debate", "turn_message"]

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


async def _argue(
    session: CheckSession,
    ctx: PanelContext,
    material: list[ChatMessage],
    side: Literal["pro", "con"],
    round_no: int,
    opponent: DebateTurn | None,
    citable: list[str],
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
        answer = await session.ask(
            "debater",
            f"debate:{side}:{round_no}",
            ctx.conversation(*material, task=task),
            DebaterReply,
            max_tokens=MAX_TOKENS,
            enums={"cites": citable},
        )
    except StepFailed as exc:
        return DebateTurn(round=round_no, side=side, status="failed", error=exc.reason)
    reply = answer.value
    known = set(citable)
    return DebateTurn(
        round=round_no,
        side=side,
        rebuttal=reply.rebuttal.strip() if last else "",
        argument=reply.argument.strip(),
        cites=list(dict.fromkeys(c for c in reply.cites if c in known)),
    )


@dataclass(frozen=True)
class Moderator:
    """The judge's part in either debate: a ruling after each round, read by the early
    stop controller, and the ruling it must give when the debate is over.

    Args:
        min_rounds: rulings before this round are read as ``continue``.
        on_round: awaited after each round with the judge's ruling.
    """

    session: CheckSession
    ctx: PanelContext
    controller: EarlyStop
    min_rounds: int = 1
    on_round: RoundHook | None = None

    async def after_round(
        self, debate: Debate, material: list[ChatMessage], round_no: int, cap: int
    ) -> DebateOutcome | None:
        """The ruling after ``round_no`` of at most ``cap``; the outcome if it ends the
        debate, else ``None``."""
        judged = await round_ruling(self.session, self.ctx, material, round_no, cap)
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
        judged = await final_ruling(self.session, self.ctx, material, debate.rounds)
        debate.rulings.append(judged.ruling)
        debate.forced = True
        return DebateOutcome(debate=debate, judged=judged)


async def hold_debate(
    session: CheckSession,
    ctx: PanelContext,
    pool: list[ChatMessage],
    citable: list[str],
    *,
    max_rounds: int,
    controller: EarlyStop,
    min_rounds: int = 1,
    on_round: RoundHook | None = None,
) -> DebateOutcome:
    """Run Algorithm 1 over the evidence pool ``pool`` (evidence and analyses messages).

    Args:
        citable: ids a debater may cite (``post``, evidence ids, analysis ids).
        max_rounds: the cap (the paper: 5); the judge is forced to rule there.
        controller: decides after each round whether the debate may stop.
        min_rounds: rulings before this round are read as ``continue``.
        on_round: awaited after each round with the judge's ruling.
    """
    debate = Debate(style="zofia", max_rounds=max_rounds)
    moderator = Moderator(session, ctx, controller, min_rounds, on_round)
    material = list(pool)
    con_turn: DebateTurn | None = None
    for round_no in range(1, max_rounds + 1):
        pro_turn = await _argue(session, ctx, material, "pro", round_no, con_turn, citable)
        if pro_turn.status == "ok":
            material.append(turn_message(pro_turn))
        con_turn = await _argue(session, ctx, material, "con", round_no, pro_turn, citable)
        if con_turn.status == "ok":
            material.append(turn_message(con_turn))
        debate.turns += [pro_turn, con_turn]
        debate.rounds = round_no
        if round_no == max_rounds:
            break  # the cap: the judge must rule, below
        ended = await moderator.after_round(debate, material, round_no, max_rounds)
        if ended is not None:
            return ended
    return await moderator.final(debate, material)
