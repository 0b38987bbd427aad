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
from ..llm.session import Answer, CheckSession, answer_or_failed
from ..prompting import render
from ..report import Debate, DebateTurn
from .context import PanelContext
from .debate import DebateOutcome, Moderator, shown

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
    session: CheckSession,
    panel: PanelContext,
    material: list[ChatMessage],
    role: Role,
    phase: Phase,
    round_no: int,
    opponent: DebateTurn | None,
    citable: list[str],
) -> DebateTurn:
    last = opponent.argument if opponent is not None and opponent.status == "ok" else ""
    task = render("radar_debater", role=role, phase=phase, opponent=last, max_words=MAX_WORDS)
    answer = await answer_or_failed(
        DebateTurn(round=round_no, side=role, phase=phase),
        session.ask(
            "debater",
            f"debate:{role}:{round_no}",
            panel.conversation(*material, task=task),
            RadarReply,
            max_tokens=MAX_TOKENS,
            enums={"cites": citable},
        ),
    )
    if not isinstance(answer, Answer):
        return answer
    known = set(citable)
    return DebateTurn(
        round=round_no,
        side=role,
        phase=phase,
        argument=answer.value.argument.strip(),
        cites=list(dict.fromkeys(c for c in answer.value.cites if c in known)),
    )


async def hold_radar_debate(
    moderator: Moderator, pool: list[ChatMessage], citable: list[str], *, max_rounds: int
) -> DebateOutcome:
    """The Politician and the Scientist over the evidence pool ``pool``."""
    session, panel, edit = moderator.session, moderator.panel, moderator.editor.turn
    plan = phases(max_rounds)
    debate = Debate(style="radar", max_rounds=len(plan))
    material = list(pool)
    last: dict[Role, DebateTurn | None] = {"politician": None, "scientist": None}
    for round_no, phase in enumerate(plan, start=1):
        said = await asyncio.gather(
            _speak(
                session, panel, material, "politician", phase, round_no, last["scientist"], citable
            ),
            _speak(
                session, panel, material, "scientist", phase, round_no, last["politician"], citable
            ),
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
