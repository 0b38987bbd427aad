"""A post's attachment downloaded from Discord's CDN, with one sentence when it cannot be.

Images, voice notes and text files are each refused before the download by what Discord
declares (their own modules say what); what fails during it reads the same for all three.
"""

from __future__ import annotations

import logging

import aiohttp
import discord

from zofia_engine.errors import InvalidPostError

__all__ = ["download"]

log = logging.getLogger(__name__)


async def download(attachment: discord.Attachment, refusal: str) -> bytes:
    """The bytes of ``attachment``.

    Raises:
        InvalidPostError: ``refusal``, when Discord did not give them (deleted, expired,
            unreachable).
    """
    try:
        return await attachment.read()
    except (discord.HTTPException, aiohttp.ClientError, TimeoutError) as exc:
        log.warning("could not download attachment %s: %s", attachment.id, exc)
        raise InvalidPostError(refusal) from None
