"""A check asked over the API, from the request to its state, as the bots ask theirs.

:func:`submit` builds a :class:`~bots.service.records.Message` from the body and
calls the check service's front door once, as a chat does
(:meth:`~bots.service.checks.CheckService.take`: refused when it needs no work, admitted
against the key's limits (a key is a chat, its asker a user: :func:`requester_of`), its
link fetched and its post read once, submitted, and released once taken). The service
answers a repeat from the store, joins a run of the same text, or starts one (on the
queued deployment, queues it for the workers). Nobody waits on the run here:
:class:`Followers` reads each outcome as it ends, and :func:`read_state` answers the
polls from the store.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from bots.render.claim_review import claim_review
from bots.render.links import report_url
from bots.render.sentences import error_sentence
from bots.render.votes import vote_of
from bots.service.checks import CheckHandle, CheckService
from bots.service.images import refuse_declared
from bots.service.records import CheckFailedError, CheckRow, Message, Requester
from bots.service.webhooks import MakeBody
from bots.web.app import public_json
from zofia_engine.errors import ZofiaError
from zofia_engine.image_settings import ImageSettings
from zofia_engine.report import Report

from .models import (
    CheckIn,
    CheckState,
    Status,
    VoteBody,
    VoteState,
    WebhookCall,
    WebhookCallState,
)

__all__ = [
    "PLATFORM",
    "Followers",
    "post_images",
    "read_state",
    "requester_of",
    "submit",
    "vote_state",
]

log = logging.getLogger(__name__)

#: the platform the API's checks are stored under
PLATFORM = "api"


def requester_of(key: str, asker: str = "") -> Requester:
    """Who asks for a check with the key named ``key``: the key is the chat (its share
    of the queue and of the day's budget are a chat's), and the asker the client names,
    or else the key itself, the user."""
    return Requester(PLATFORM, f"{key}/{asker}" if asker else key, chat_id=key)


def post_images(check: CheckIn, caps: ImageSettings) -> list[tuple[bytes, str]]:
    """(blocking) The images of ``check``, decoded, each with its media type, once their
    sizes (read from the base64's length) are within the caps.

    Raises:
        InvalidPostError: too many or too large images; nothing was decoded.
    """
    refuse_declared([image.size for image in check.images], caps)
    return [(image.content, image.media_type) for image in check.images]


async def submit(
    service: CheckService, check: CheckIn, images: list[tuple[bytes, str]], key: str
) -> CheckHandle:
    """Take ``check`` with its decoded ``images`` (:func:`post_images`) for the key
    named ``key``.

    Raises:
        InvalidPostError: a link that cannot be fetched, an image the engine refuses.
        RateLimitedError: a limit of the key, of its asker or of the deployment.
    """
    message = Message(
        check.text,
        url=check.url,
        images=tuple(images),
        published=check.published,
        language=check.language,
    )
    async with service.take(message, requester_of(key, check.asker)) as handle:
        return handle


class Followers:
    """The outcomes of the checks taken here, each read once its run ends (a failure is
    logged, as a bot logs it), so that no run's result goes unread."""

    def __init__(self) -> None:
        self._tasks: set[asyncio.Task[None]] = set()

    def follow(self, handle: CheckHandle) -> None:
        task = asyncio.get_running_loop().create_task(_read_outcome(handle))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def aclose(self) -> None:
        """Stop reading; the checks go on (or back to the queue, with the service)."""
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(asyncio.CancelledError):
                await task


async def _read_outcome(handle: CheckHandle) -> None:
    try:
        await handle.result()
    except ZofiaError as exc:
        log.warning("API check %s failed: %s", handle.check_id, exc)
    except asyncio.CancelledError:
        if handle.cancelled:  # the check was cancelled, not this reader
            return
        raise
    except Exception:
        log.exception("API check %s failed", handle.check_id)


def _status(stored: str) -> Status:
    if stored in ("queued", "running", "done"):
        return stored  # type: ignore[return-value]
    return "failed"


async def _found(
    service: CheckService, check_id: str, key: str
) -> tuple[CheckRow, Status, Report | None, str]:
    """The check, its status, its report and why it has none.

    Raises:
        KeyError: no check of this key has the id.
    """
    found = await service.chats.stored(check_id, PLATFORM, key, early=True)
    if found is None:
        raise KeyError(check_id)
    row, report = found
    status = _status(row.status)
    if status == "running" and report is not None:  # the verdict, before the debate
        return row, "verdict", report, ""
    if status == "failed":
        cancelled = row.status == "cancelled"
        why = asyncio.CancelledError() if cancelled else CheckFailedError(row.error)
        return row, status, None, error_sentence(why)
    if status != "done":
        return row, status, None, ""
    if report is None:
        days = service.retention.days if service.retention else 0
        why_not = f"The report is no longer kept: reports are kept {days} days."
        return row, status, None, why_not
    return row, status, report, ""


async def read_state(
    service: CheckService, check_id: str, key: str, public_url: str, publisher: str = ""
) -> CheckState:
    """The state of check ``check_id`` as the key named ``key`` sees it, its report as a
    ClaimReview too (``publisher`` its author: ``[site] publisher``, else "ZoFia").

    Raises:
        KeyError: no check of this key has the id (another key's is unknown here).
    """
    row, status, report, error = await _found(service, check_id, key)
    return CheckState(
        id=check_id,
        status=status,
        created_at=row.created_at,
        repeat=row.repeat_kind,
        report=None if report is None else public_json(report),
        vote=None if report is None else _vote_body(report),
        page=report_url(public_url, check_id),
        error=error,
        webhooks=await _calls_of(service, check_id),
        claim_review=None
        if report is None
        else claim_review(
            report,
            url=report_url(public_url, check_id) or f"/c/{check_id}",
            checked_on=row.created_at.date(),
            author=publisher or "ZoFia",
            appearance=row.url,
        ),
    )


async def vote_state(service: CheckService, check_id: str, key: str) -> VoteState:
    """The vote on check ``check_id``, once it is done.

    Raises:
        KeyError: no check of this key has the id.
    """
    _, status, report, error = await _found(service, check_id, key)
    vote = None if report is None else _vote_body(report)
    return VoteState(id=check_id, status=status, vote=vote, error=error)


async def _calls_of(service: CheckService, check_id: str) -> list[WebhookCallState]:
    """The calls owed to the key's webhook about ``check_id``, as its answer shows them."""
    calls = await service.threads.run(service.store.webhook_calls.of_check, check_id)
    fields = ("event", "verdict", "status", "attempts", "created_at", "delivered_at")
    return [WebhookCallState.model_validate({f: getattr(c, f) for f in fields}) for c in calls]


def _vote_body(report: Report) -> VoteBody:
    vote = vote_of(report)
    return VoteBody(
        category=vote.category,
        truth_score=vote.truth_score,
        verdict=report.verdict,
        sure=vote.sure,
        reviewed=vote.reviewed,
    )


def webhook_body(service: CheckService, public_url: str, publisher: str) -> MakeBody:
    """What a key's webhook is sent about a check: the event, the call's id and the check
    as ``GET /v1/checks/<id>`` shows it then (``public_url`` and ``publisher`` as
    :func:`read_state` takes them)."""

    async def body(check_id: str, key: str, event: str, call_id: str) -> bytes:
        state = await read_state(service, check_id, key, public_url, publisher)
        kind = "done" if event == "done" else "corrected"
        return WebhookCall(event=kind, call=call_id, check=state).model_dump_json().encode()

    return body
