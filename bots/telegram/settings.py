"""The ``[telegram]`` settings section."""

from __future__ import annotations

from pydantic import Field

from zofia_engine.config import SettingsSection

__all__ = ["TelegramSettings"]


class TelegramSettings(SettingsSection):
    """The Telegram bot. The token is read from the environment variable named here.

    ``webhook_url`` empty means long polling; set, the library's webhook server
    listens on ``webhook_listen:webhook_port`` and Telegram must reach ``webhook_url``.
    An album's images come as messages of their own: they are gathered into one post
    until none came for ``album_wait_s`` seconds.
    """

    token_env: str = "TELEGRAM_BOT_TOKEN"
    base_url: str = "https://api.telegram.org/bot"
    webhook_url: str = ""
    webhook_listen: str = "127.0.0.1"
    webhook_port: int = Field(8443, ge=1, le=65535)
    webhook_secret_env: str = "TELEGRAM_WEBHOOK_SECRET"
    progress_interval_s: float = Field(1.5, ge=0)
    chat_cooldown_s: float = Field(10.0, ge=0)
    album_wait_s: float = Field(1.0, ge=0, le=10)
