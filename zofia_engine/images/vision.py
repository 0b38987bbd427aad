"""A vision model's look at each image (AgentFact's image checks): what it shows,
how far the post's words misrepresent it (the miscaption rate, scored on the paper's
guide) and how likely it was tampered with. Only with ``[llm.roles.vision]``."""

from __future__ import annotations

import base64

from pydantic import BaseModel, Field

from ..llm.base import ChatMessage
from ..llm.session import CheckSession
from ..post import PostImage
from ..prompting import render
from ..records.images import MiscaptionBand, VisionFinding

__all__ = ["VisionReply", "band_of", "look_at"]

MAX_TOKENS = 300


class VisionReply(BaseModel):
    description: str = Field(max_length=400)
    miscaption_rate: int = Field(ge=0, le=100)
    miscaption_reason: str = Field(max_length=300)
    tampering: int = Field(ge=0, le=100)
    tampering_reason: str = Field(max_length=300)


def band_of(rate: int) -> MiscaptionBand:
    """AgentFact's scoring guide: 0–20 supports, 30–50 missing context, 60–80
    misleading, 90–100 unrelated; a score between two bands goes to the nearer."""
    if rate <= 25:
        return "supports"
    if rate <= 55:
        return "missing context"
    if rate <= 85:
        return "misleading"
    return "unrelated"


def data_url(image: PostImage) -> str:
    return f"data:{image.media_type};base64,{base64.b64encode(image.data).decode('ascii')}"


async def look_at(
    session: CheckSession, shared: tuple[ChatMessage, ...], image: PostImage, index: int
) -> VisionFinding:
    """The vision model's finding on image ``index`` (1-based) of the post whose
    ``shared`` messages (system, post) open the conversation.

    Raises:
        StepFailed: the call failed or its reply did not parse.
    """
    task = ChatMessage("user", render("vision"), images=(data_url(image),))
    answer = await session.ask(
        "vision", f"image:{index}:vision", [*shared, task], VisionReply, max_tokens=MAX_TOKENS
    )
    reply = answer.value
    return VisionFinding(
        description=reply.description.strip(),
        miscaption_rate=reply.miscaption_rate,
        band=band_of(reply.miscaption_rate),
        miscaption_reason=reply.miscaption_reason.strip(),
        tampering=reply.tampering,
        tampering_reason=reply.tampering_reason.strip(),
    )
