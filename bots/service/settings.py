"""The settings sections the check service owns: ``[service]`` and ``[queue]``."""

from __future__ import annotations

import re

from pydantic import Field, field_validator, model_validator

from zofia_engine.config import SettingsSection

__all__ = ["QueueSettings", "ServiceSettings"]

_REVIEWER = re.compile(r"(telegram|discord|whatsapp):[0-9]{1,20}")


class ServiceSettings(SettingsSection):
    """The check service: repeats, concurrency, rate limits and quotas.

    ``reviewers`` names who may review verdicts for every chat, each as
    ``"telegram:USER_ID"``, ``"discord:USER_ID"`` or ``"whatsapp:WA_ID"`` (the phone
    number in international form, digits only; kept only as HMACs); a chat's admins
    review for their own chat only, unless ``chat_reviews`` is off.
    """

    repeat_window_hours: float = Field(72.0, ge=0)
    near_threshold: float = Field(0.95, gt=0, le=1)
    max_concurrent_checks: int = Field(2, ge=1)
    # Checks waiting for or holding an engine slot; past it, new checks are refused
    # ("busy, try again in N min") while repeats are still answered from the store.
    max_pending_checks: int = Field(20, ge=1)
    # LLM tokens (prompt + completion) all checks may spend per UTC day; 0: no budget.
    daily_token_budget: int = Field(2_000_000, ge=0)
    user_per_minute: int = Field(3, ge=1)
    chat_per_minute: int = Field(10, ge=1)
    user_daily: int = Field(50, ge=1)
    chat_daily: int = Field(300, ge=1)
    # The shares: how much of the pending checks and of the day's token budget one user,
    # or one chat, may hold (fractions of max_pending_checks and daily_token_budget).
    user_pending_share: float = Field(0.25, gt=0, le=1)
    chat_pending_share: float = Field(0.5, gt=0, le=1)
    user_budget_share: float = Field(0.1, gt=0, le=1)
    chat_budget_share: float = Field(0.25, gt=0, le=1)
    # Requests one user may have answered at once in a private chat, and how many more
    # may wait their turn there (a batch of forwards is answered in turn; past the queue
    # they are refused). Each counts in the user's pending share from its admission.
    private_in_flight: int = Field(1, ge=1)
    private_queue: int = Field(4, ge=0, le=50)
    # The longest a chat request waits for its answer once admitted (its turn, an engine
    # slot, its check); past it the wait is given up and the asker told so in one
    # sentence. A card queued on workers still comes from its deliver job.
    answer_within_s: float = Field(1800.0, gt=0)
    # At SIGINT or SIGTERM, how long a bot gives the checks it took to finish (`--grace`
    # overrides it); then the rest go back to the queue and their askers are told.
    shutdown_grace_s: float = Field(30.0, ge=0)
    # Who may review verdicts in any chat, besides its admins (docs/moderators.md).
    reviewers: list[str] = Field(default_factory=list)
    # A chat's admins (Telegram) or server-wide Manage Messages (Discord) review the
    # verdicts shown in their own chat, for that chat only; off: only the reviewers.
    chat_reviews: bool = True

    @field_validator("reviewers")
    @classmethod
    def _reviewers_name_a_platform_and_a_user(cls, value: list[str]) -> list[str]:
        for entry in value:
            if not _REVIEWER.fullmatch(entry.strip()):
                raise ValueError(
                    f"service.reviewers: {entry!r} is not telegram:USER_ID, discord:USER_ID "
                    "or whatsapp:WA_ID"
                )
        return [entry.strip() for entry in value]


class QueueSettings(SettingsSection):
    """Checks on worker processes, with PostgreSQL (``storage.url``); unused on SQLite.

    Heartbeats and the stall limit are Procrastinate's: a job whose worker has sent no
    heartbeat for ``stalled_after_s`` is put back in the queue and run again from the
    start by another worker (it must exceed every worker's ``heartbeat_s``).
    """

    worker_concurrency: int = Field(2, ge=1)
    heartbeat_s: float = Field(10.0, gt=0)
    stalled_after_s: float = Field(30.0, gt=0)
    # How often workers look for jobs without a NOTIFY (retries, a missed wake-up).
    poll_s: float = Field(2.0, gt=0)
    # Engine runs a check's job gets in all (a run cut short by a lost database counts).
    max_attempts: int = Field(3, ge=1)
    # A card is posted this long after its check ends: a progress edit already on its
    # way to the chat lands first instead of over the card.
    deliver_delay_s: float = Field(1.0, ge=0)
    # /healthz and /metrics on 127.0.0.1 of every worker and bot; 0: off.
    health_port: int = Field(0, ge=0, le=65535)
    # How often the bots look for corrections due (a send that failed waits its backoff,
    # a minute at first, then is due again): one look per platform, whatever the replicas.
    corrections_poll_s: float = Field(10.0, gt=0, le=60)

    @model_validator(mode="after")
    def _stall_outlasts_heartbeats(self) -> QueueSettings:
        if self.stalled_after_s <= self.heartbeat_s:
            raise ValueError(
                "queue.stalled_after_s must exceed queue.heartbeat_s, or live workers'"
                " checks would be taken from them"
            )
        return self
