"""RADAR's role-anchored debate (RADAR §3.3, half-truth detection).

Two debaters with expertise roles argue over the same evidence: a Politician, who
builds the strongest evidence-backed narrative for the post, and a Scientist, who
looks for missing context, weak support and selective framing. A debate has three
phases, at most one round each: opening, rebuttal (each answers the other's last
argument) and closing. Both debaters of a round speak at once, each having heard the
rounds before. After each round the judge gives the outcome it would rule now and
whether it has heard enough (the early-stop controller reads its tokens); after the
closing round it must rule, on the four outcomes.
"""

from __future__ import annotations

import asyncio
from typing import Literal

from pydantic import BaseModel, ConfigDict

from ..llm.base import ChatMessage
from ..llm.session import Answer, answer_or_failed
from ..prompting import render
from ..report import Debate, DebateTurn
from .debate import DebateOutcome, Moderator, TurnBrief, shown

__all__ = ["MAX_RADAR_ROUNDS", "hold_radar_debate", "phases"]

MAX_RADAR_ROUNDS = 3
MAX_WORDS = 70
MAX_TOKENS = 200

Phase = Literal["opening", "rebuttal", "closing"]
Role = Literal["politician", "scientist"]


class RadarReply(BaseModel):
    model_config = ConfigDict(extra="forbid")

    argument: str
    cites: list[str]


_PLANS: dict[int, list[Phase]] = {
    1: ["opening"],
    2: ["opening", "closing"],
    3: ["opening", "rebuttal", "closing"],
}


def phases(max_rounds: int) -> list[Phase]:
    """The phases of a debate of at most ``max_rounds`` (capped at 3): opening, then
    rebuttal, then closing; a 2-round debate opens and closes."""
    return _PLANS[max(1, min(max_rounds, MAX_RADAR_ROUNDS))]


async def _speak(
    brief: TurnBrief, material: list[ChatMessage], turn: DebateTurn, opponent: DebateTurn | None
) -> DebateTurn:
    """``turn`` (its round, its role as its side, its phase) taken, answering
    ``opponent``'s last argument."""
    last = opponent.argument if opponent is not None and opponent.status == "ok" else ""
    task = render(
        "radar_debater", role=turn.side, phase=turn.phase, opponent=last, max_words=MAX_WORDS
    )
    answer = await answer_or_failed(
        turn,
        brief.session.ask(
            "debater",
            f"debate:{turn.side}:{turn.round}",
            brief.panel.conversation(*material, task=task),
            RadarReply,
            max_tokens=MAX_TOKENS,
            enums={"cites": brief.citable},
        ),
    )
    if not isinstance(answer, Answer):
        return answer
    update = {
        "argument": answer.value.argument.strip(),
        "cites": brief.cited(answer.value.cites),
    }
    return turn.model_copy(update=update)


async def hold_radar_debate(
    moderator: Moderator, pool: list[ChatMessage], citable: list[str], *, max_rounds: int
) -> DebateOutcome:
    """The Politician and the Scientist over the evidence pool ``pool``."""
    brief, edit = TurnBrief.of(moderator, citable), moderator.editor.turn
    plan = phases(max_rounds)
    debate = Debate(style="radar", max_rounds=len(plan))
    material = list(pool)
    last: dict[Role, DebateTurn | None] = {"politician": None, "scientist": None}
    for round_no, phase in enumerate(plan, start=1):
        politician = DebateTurn(round=round_no, side="politician", phase=phase)
        scientist = DebateTurn(round=round_no, side="scientist", phase=phase)
        said = await asyncio.gather(
            _speak(brief, material, politician, last["scientist"]),
            _speak(brief, material, scientist, last["politician"]),
        )
        politician, scientist = edit(said[0]), edit(said[1])
        last = {"politician": politician, "scientist": scientist}
        material += [*shown(politician), *shown(scientist)]
        if moderator.round_over(debate, [politician, scientist]):
            break
        if round_no == len(plan):
            break  # after the closing round the judge must rule, below
        ended = await moderator.after_round(debate, material, round_no, len(plan))
        if ended is not None:
            return ended
    return await moderator.final(debate, material)
