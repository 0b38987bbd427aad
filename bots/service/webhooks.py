"""The HTTP API's webhooks: a key's registered address is called once when each of its
checks ends (``done``) and once per correction of its verdict (``corrected``), each call
signed with the key's own secret, retried with backoff and given up after a day
(``[api] webhook_*``); ``store.webhook_calls`` keeps every call owed, so that a restart
loses none and ``GET /v1/checks/<id>`` shows what was delivered.

A call is a POST of the body the API makes (:func:`bots.api.checks.webhook_body`: the
event, the call's id and the check as ``GET /v1/checks/<id>`` shows it), with the headers
``Zofia-Event``, ``Zofia-Call`` (the same on every retry of one call: receivers answer
a repeat once) and ``Zofia-Signature: t=<unix time>,v1=<hex>``, where ``v1`` is the
HMAC-SHA256 of ``"<t>.<body>"`` under the key's secret, as Stripe signs its calls
(:func:`verify` is the receiver's check). Only an https address on the public internet
is taken, and every connection goes through the same guard as a link post's
(:mod:`bots.service.outbound`): a webhook cannot reach the deployment's
own network.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import hmac
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass

import aiohttp

from storage.api_keys import Webhook
from storage.shown_cards import CardPlace
from storage.webhook_calls import WebhookCall as OwedCall

from .checks import CheckService
from .outbound import address_refusal, guarded_session
from .records import ChatCorrection
from .rounds import every

__all__ = [
    "PLATFORM",
    "SIGNATURE",
    "CallPolicy",
    "MakeBody",
    "Webhooks",
    "sign",
    "target_refusal",
    "verify",
]

log = logging.getLogger(__name__)

SIGNATURE = "Zofia-Signature"
#: the platform the API's checks are asked on
PLATFORM = "api"
#: the body of a call: (check id, key name, event, call id) → JSON bytes
MakeBody = Callable[[str, str, str, str], Awaitable[bytes]]


@dataclass(frozen=True)
class CallPolicy:
    """How the calls are made (``[api] webhook_*``): a round every ``poll_s``, each
    attempt within ``timeout_s``, a retry after ``retry_s`` doubling up to an hour, given
    up ``give_up_s`` after the call was owed; ``allow_private``: local addresses too."""

    poll_s: float = 5.0
    timeout_s: float = 10.0
    retry_s: float = 30.0
    give_up_s: float = 86_400.0
    allow_private: bool = False


#: how many calls a round owes or sends at most
BATCH = 50
MAX_RETRY_S = 3600.0


def sign(secret: str, timestamp: int, body: bytes) -> str:
    """The ``Zofia-Signature`` header of ``body`` sent at ``timestamp``."""
    mac = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256)
    return f"t={timestamp},v1={mac.hexdigest()}"


def verify(secret: str, header: str, body: bytes, *, now: float, tolerance_s: float = 300) -> bool:
    """The receiver's check: ``header`` signs ``body`` with ``secret``, within
    ``tolerance_s`` of ``now`` (a replayed old call fails)."""
    fields = dict(part.split("=", 1) for part in header.split(",") if "=" in part)
    try:
        timestamp = int(fields.get("t", ""))
    except ValueError:
        return False
    expected = sign(secret, timestamp, body).rsplit("v1=", 1)[1]
    fresh = abs(now - timestamp) <= tolerance_s
    return fresh and hmac.compare_digest(expected, fields.get("v1", ""))


def target_refusal(url: str, *, allow_private: bool) -> str | None:
    """Why ``url`` cannot be a webhook, in one sentence (:func:`address_refusal`)."""
    refusal = address_refusal(url, allow_private=allow_private)
    return None if refusal is None else refusal.replace("The address", "The webhook")


class Webhooks:
    """Owes and sends a running API's webhook calls.

    Args:
        service: the check service (its store holds the keys and the calls).
        policy: how the calls are made.
        body: makes a call's body (the API's answer about the check).
    """

    def __init__(self, service: CheckService, policy: CallPolicy, body: MakeBody) -> None:
        self.service = service
        self.policy = policy
        self.body = body
        self._run = service.threads.run
        self._calls = service.store.webhook_calls
        self._keys = service.api_keys.keys

    async def correct(self, correction: ChatCorrection) -> None:
        """The API's sender of corrections: a ``corrected`` call owed for each check of
        the key's (``correction.chat``) whose verdict changed."""
        for shown, _ in correction.cards:
            await self._run(
                self._calls.owe, shown.check_id, correction.chat, "corrected", correction.verdict
            )

    async def round(self, session: aiohttp.ClientSession) -> int:
        """Owe a ``done`` call for each ended check of a key with a webhook, then send
        what is due; how many calls were sent (or tried)."""
        hooks = {hook.key_name: hook for hook in await self._run(self._keys.webhooks)}
        for registered in hooks.values():
            await self._owe_done(registered)
        due = await self._run(self._calls.due, BATCH)
        for call in due:
            hook = hooks.get(call.key_name)
            if hook is None:  # its key was revoked or its webhook taken away
                await self._run(self._calls.failed, call.id, "no webhook", None)
                continue
            await self._send(session, hook, call)
        return len(due)

    async def _owe_done(self, hook: Webhook) -> None:
        chat = self.service.namer.chat(PLATFORM, hook.key_name)
        ended = await self._run(
            self._calls.ended_without_call, hook.key_name, chat, hook.since, BATCH
        )
        for check_id in ended:
            found = await self.service.chats.stored(check_id, PLATFORM, hook.key_name)
            verdict = found[1].verdict if found is not None and found[1] is not None else ""
            await self._run(self._calls.owe, check_id, hook.key_name, "done", verdict)
            if verdict:  # a later correction of it is owed a call too (see correct)
                place = CardPlace(PLATFORM, hook.key_name, check_id, verdict)
                await self.service.record_card(check_id, place)

    async def _send(self, session: aiohttp.ClientSession, hook: Webhook, call: OwedCall) -> None:
        body = await self.body(call.check_id, hook.key_name, call.event, call.id)
        headers = {
            "Content-Type": "application/json",
            "Zofia-Event": call.event,
            "Zofia-Call": call.id,
            SIGNATURE: sign(hook.secret, int(time.time()), body),
        }
        try:
            async with session.post(hook.url, data=body, headers=headers) as response:
                if 200 <= response.status < 300:
                    await self._run(self._calls.delivered, call.id)
                    return
                error = f"HTTP {response.status}"
        except (aiohttp.ClientError, TimeoutError, OSError) as exc:
            error = type(exc).__name__
        log.info("webhook call %s of key %s failed: %s", call.id, hook.key_name, error)
        await self._run(self._calls.failed, call.id, error, self._retry_at(call))

    def _retry_at(self, call: OwedCall) -> dt.datetime | None:
        """When to try ``call`` again (backoff doubling from ``webhook_retry_s`` up to an
        hour), or ``None`` once ``webhook_give_up_s`` has passed since it was owed."""
        now = self.service.store.clock()
        wait = min(self.policy.retry_s * 2**call.attempts, MAX_RETRY_S)
        if (now - call.created_at).total_seconds() + wait > self.policy.give_up_s:
            return None
        return now + dt.timedelta(seconds=wait)

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """Owe and send calls every ``poll_s`` while the block runs (and send the
        API's corrections through :meth:`correct`)."""
        policy = self.policy
        session = guarded_session(allow_private=policy.allow_private, timeout_s=policy.timeout_s)

        async def round_() -> None:
            await self.round(session)

        async with (
            session,
            self.service.serving(PLATFORM, _no_cards, self.correct),
            every(lambda: policy.poll_s, round_, "a round of webhook calls"),
        ):
            yield


async def _no_cards(*_: object) -> None:
    """The API posts no cards (its answers are polled, or called back)."""
