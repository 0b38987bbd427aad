"""What every platform's context shares (:class:`bots.chat.context.ChatContext`)."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import ClassVar

import pytest

from tests.peers.fakes.fake_checker import FakeChecker, fake_service

from bots.app.settings import Settings
from bots.chat.context import ChatContext
from bots.render.words import ENGLISH, words_for

CHAT = "4242424242"


class _Context(ChatContext):
    platform: ClassVar[str] = "telegram"


async def _french() -> str:
    return "French"


async def _store_down() -> str:
    raise OSError("the store is down")


async def test_courtesy_words_are_the_chat_s_or_english_when_its_language_cannot_be_read(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    settings = Settings.model_validate(
        {"storage": {"path": str(tmp_path / "zofia.db"), "secret": "s3cret-for-tests-only"}}
    )
    async with fake_service(settings, FakeChecker()) as service:
        ctx = _Context(service)
        assert await ctx.courtesy_words(CHAT, _french()) is words_for("French")
        with caplog.at_level(logging.WARNING):
            assert await ctx.courtesy_words(CHAT, _store_down()) is ENGLISH
    (record,) = [r for r in caplog.records if "could not read the language" in r.getMessage()]
    assert record.exc_info is not None and CHAT not in caplog.text  # named by its hash
