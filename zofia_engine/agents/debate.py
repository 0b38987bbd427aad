"""The adversarial debate (paper §4.2, Algorithm 1).

Each round the pro debater (the post is real) rebuts the con side's last
argument and adds new evidence, the con debater (fake) does the same against
it, and the judge reads the whole history and answers real, fake or continue.
The debate ends on the judge's ruling or at ``max_rounds``, where the judge
must rule and the report marks the ruling as forced.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Literal

from pydantic import BaseModel, ConfigDict

from ..llm.base import ChatMessage, Completion
from ..llm.session import CheckSession, StepFailed
from ..prompting import render
from ..report import Debate, DebateTurn, JudgeRuling
from .context import PanelContext
from .judge import final_ruling, rule_on_round

__all__ = ["DebateOutcome", "hold_debate"]

MAX_WORDS = 90
MAX_TOKENS = 360

RoundHook = Callable[[JudgeRuling], Awaitable[None]]


class DebaterReply(BaseModel):
    model_config = ConfigDict(extra="forbid")

    rebuttal: str
    argument: str
    cites: list[str]


class DebateOutcome(BaseModel):
    """The transcript and the ruling that ended it, with the completion it came from."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    debate: Debate
    ruling: JudgeRuling
    completion: Completion | None = None


_WORDS = {"pro": ("real", "fake"), "con": ("fake", "real")}


def _turn_message(turn: DebateTurn) -> ChatMessage:
    claim_word = _WORDS[turn.side][0]
    text = render(
        "debate_turn",
        round=turn.round,
        side_word=turn.side,
        claim_word=claim_word,
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
    side_word, other_word = _WORDS[side]
    last = opponent.argument if opponent is not None and opponent.status == "ok" else ""
    task = render(
        "debater", side_word=side_word, other_word=other_word, opponent=last, max_words=MAX_WORDS
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
    cites = list(dict.fromkeys(c for c in reply.cites if c in known))
    return DebateTurn(
        round=round_no,
        side=side,
        rebuttal=reply.rebuttal.strip() if last else "",
        argument=reply.argument.strip(),
        cites=cites,
    )


async def hold_debate(
    session: CheckSession,
    ctx: PanelContext,
    pool: list[ChatMessage],
    citable: list[str],
    *,
    max_rounds: int,
    min_rounds: int = 1,
    on_round: RoundHook | None = None,
) -> DebateOutcome:
    """Run Algorithm 1 over the evidence pool ``pool`` (evidence and analyses messages).

    Args:
        citable: ids a debater may cite (``post``, evidence ids, analysis ids).
        max_rounds: the cap (the paper: 5); the judge is forced to rule there.
        min_rounds: rulings before this round are read as ``continue``.
        on_round: awaited after each round with the judge's ruling.
    """
    debate = Debate(max_rounds=max_rounds)
    material = list(pool)
    con_turn: DebateTurn | None = None
    for round_no in range(1, max_rounds + 1):
        pro_turn = await _argue(session, ctx, material, "pro", round_no, con_turn, citable)
        if pro_turn.status == "ok":
            material.append(_turn_message(pro_turn))
        con_turn = await _argue(session, ctx, material, "con", round_no, pro_turn, citable)
        if con_turn.status == "ok":
            material.append(_turn_message(con_turn))
        debate.turns += [pro_turn, con_turn]
        debate.rounds = round_no
        ruling, completion = await rule_on_round(session, ctx, material, round_no, max_rounds)
        debate.rulings.append(ruling)
        if on_round is not None:
            await on_round(ruling)
        if ruling.decision in ("real", "fake") and round_no >= min_rounds:
            debate.decided_in_round = round_no
            return DebateOutcome(debate=debate, ruling=ruling, completion=completion)
    ruling, completion = await final_ruling(session, ctx, material, debate.rounds)
    debate.rulings.append(ruling)
    debate.forced = True
    return DebateOutcome(debate=debate, ruling=ruling, completion=completion)
