"""The ``[discord]`` settings section."""

from __future__ import annotations

from pydantic import Field

from zofia_engine.config import SettingsSection

__all__ = ["MAX_COOLDOWN_S", "PLATFORM", "DiscordSettings"]

PLATFORM = "discord"
#: the longest cooldown a server's admins may set
MAX_COOLDOWN_S = 3600.0


class DiscordSettings(SettingsSection):
    """The Discord bot. The token is read from the environment variable named here.

    ``dev_guild`` set syncs the commands to that one guild at once (development);
    empty syncs them globally.
    """

    token_env: str = "DISCORD_BOT_TOKEN"
    dev_guild: int = Field(0, ge=0)
    progress_interval_s: float = Field(1.5, ge=0)
    guild_cooldown_s: float = Field(10.0, ge=0)
