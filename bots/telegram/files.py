"""A file of a Telegram message downloaded within a size cap: Telegram's ``getFile`` is
asked its size first, and nothing is downloaded past the cap. Images and voice notes
share it (:mod:`.images`, :mod:`.voice`); each says its own refusal.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from telegram import Bot
from telegram.error import BadRequest, TelegramError

from zofia_engine.errors import InvalidPostError
from zofia_engine.refusals import SizeOver

__all__ = ["download_file"]

log = logging.getLogger(__name__)


async def download_file(
    bot: Bot, file_id: str, cap: int, too_large: Callable[[int | str], Exception], failed: str
) -> bytes:
    """The bytes of ``file_id``, at most ``cap`` of them.

    Raises:
        Exception: ``too_large(size)`` when it is larger than the cap (by ``getFile``'s
            size, Telegram's refusal of a file over 20 MB, or the bytes received); the
            size is in bytes (a :class:`~zofia_engine.refusals.SizeOver` for Telegram's 20 MB).
        InvalidPostError: Telegram did not give it; the sentence ``failed``.
    """
    try:
        found = await bot.get_file(file_id)
        if found.file_size is not None and found.file_size > cap:
            raise too_large(found.file_size)
        data = bytes(await found.download_as_bytearray())
    except BadRequest as exc:
        if "too big" in exc.message.lower():  # bots cannot download over 20 MB
            raise too_large(SizeOver(20_000_000)) from None
        log.warning("could not download file %s: %s", file_id, exc)
        raise InvalidPostError(failed) from None
    except (TelegramError, RuntimeError) as exc:  # RuntimeError: no file_path given
        log.warning("could not download file %s: %s", file_id, exc)
        raise InvalidPostError(failed) from None
    if len(data) > cap:
        raise too_large(len(data))
    return data
