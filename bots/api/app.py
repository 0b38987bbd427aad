"""The API's server: aiohttp, beside the report pages on a port of its own.

Routes: ``POST /v1/checks`` and ``GET /v1/checks/<id>`` (a check and its report),
``POST /v1/votes`` and ``GET /v1/votes/<id>`` (the same check, seen as a vote), and
``GET /v1/openapi.json`` (:mod:`.openapi`, the one route without a key). Every other
request needs ``Authorization: Bearer <key>`` with a key ``zofia api-key add`` made; a
key sees only its own checks. Every refusal is one sentence in ``{"error": …}``, with
its status: 400 (not JSON, not a check), 401, 404, 413, 415, 422 (a post that cannot
be checked) and 429 (a limit, with ``Retry-After``); a request refused before it was
admitted costs the key nothing. Store reads run off the event loop, as the pages'.

In order, a request meets its client address's rate (:mod:`.bounds`), its key and the
key's rate (:mod:`.keys`), and a post one of the body slots; only then does it reach
the check service and its limits.
"""

from __future__ import annotations

import contextlib
import logging
import math
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass

from aiohttp import web
from pydantic import BaseModel, ValidationError

from bots.render.sentences import error_sentence
from bots.service.checks import CheckService
from bots.service.refusals import RateLimitedError
from bots.service.webhooks import CallPolicy, Webhooks, target_refusal
from bots.web.app import ACCESS_LOG_FORMAT, CHECK_ID
from bots.web.clients import ClientLimits
from zofia_engine.errors import InvalidPostError
from zofia_engine.image_settings import ImageSettings
from zofia_engine.refusals import PostRefusal

from .bodies import BODIES, Bodies
from .bounds import address_limit
from .checks import Followers, read_state, submit, vote_state, webhook_body
from .keys import KEY_NAME, KNOWN_KEYS, KnownKeys, authenticated
from .models import Accepted, CheckState, Problem, VoteState, WebhookIn, WebhookSet
from .openapi import OPENAPI_PATH, openapi_document
from .refusal import Refusal, refused_post
from .settings import ApiSettings

__all__ = ["ApiConfig", "build_app", "serving_api"]

log = logging.getLogger(__name__)

HEADERS = {
    "Cache-Control": "no-store",
    "Content-Security-Policy": "default-src 'none'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
}
#: what the router's and aiohttp's own refusals say
#: the most a webhook registration's body may hold
_WEBHOOK_BODY = 4096
_HTTP_SENTENCES = {
    404: "There is no such route; the routes are listed at /v1/openapi.json.",
    405: "This route does not take that method; see /v1/openapi.json.",
}
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@dataclass(frozen=True)
class ApiConfig:
    """What the server needs besides the service: the ``[api]`` section, the images'
    caps (``[images]``) and the report pages' public address (``[site] public_url``)."""

    api: ApiSettings
    images: ImageSettings
    public_url: str = ""
    publisher: str = ""  # [site] publisher: the ClaimReview's author ("" → "ZoFia")


_SERVICE: web.AppKey[CheckService] = web.AppKey("service", CheckService)
_CONFIG: web.AppKey[ApiConfig] = web.AppKey("config", ApiConfig)
_FOLLOWERS: web.AppKey[Followers] = web.AppKey("followers", Followers)


def _problem(
    status: int,
    sentence: str,
    headers: dict[str, str] | None = None,
    reason: PostRefusal | None = None,
) -> web.Response:
    return _answer(Problem(error=sentence, reason=reason), status, headers, exclude_none=True)


@web.middleware
async def _refusals(request: web.Request, handler: Handler) -> web.StreamResponse:
    try:
        return await handler(request)
    except Refusal as refusal:
        refused = _problem(refusal.status, str(refusal), refusal.headers, refusal.reason)
        if request.can_read_body:
            # A body refused unread is not read to its end (aiohttp would read and drop
            # up to 10 s of it to keep the connection): the connection closes instead.
            refused.force_close()
        return refused
    except web.HTTPException as exc:  # the router's 404 and 405
        if exc.status < 400:
            raise
        sentence = _HTTP_SENTENCES.get(exc.status, f"{exc.reason}.")
        allow = {"Allow": exc.headers["Allow"]} if "Allow" in exc.headers else None
        return _problem(exc.status, sentence, allow)
    except Exception as exc:
        log.exception("API request %s %s failed", request.method, request.path)
        return _problem(500, error_sentence(exc))


async def _secure(request: web.Request, response: web.StreamResponse) -> None:
    response.headers.update(HEADERS)
    response.headers["Server"] = "zofia"


def _answer(
    model: BaseModel,
    status: int = 200,
    headers: dict[str, str] | None = None,
    *,
    exclude_none: bool = False,
) -> web.Response:
    """``model`` as the JSON body (``exclude_none``: a field left unset is left out)."""
    body = model.model_dump_json(exclude_none=exclude_none)
    return web.Response(text=body, status=status, content_type="application/json", headers=headers)


def _check_id(request: web.Request) -> str:
    check_id = request.match_info["id"]
    if not CHECK_ID.fullmatch(check_id):
        raise Refusal(404, "No check of this key has this id.")
    return check_id


async def _take(request: web.Request, route: str) -> web.Response:
    """Take the post of ``request`` as a check (``/v1/checks``) or a vote (``/v1/votes``)."""
    check, images = await request.app[BODIES].post(request)
    service, config, key = request.app[_SERVICE], request.app[_CONFIG], request[KEY_NAME]
    try:
        handle = await submit(service, check, images, key)
    except RateLimitedError as exc:
        wait = str(max(1, math.ceil(exc.retry_after_s)))
        raise Refusal(429, error_sentence(exc), {"Retry-After": wait}) from None
    except InvalidPostError as exc:
        raise refused_post(exc) from None
    request.app[_FOLLOWERS].follow(handle)
    state = await _read(request, handle.check_id, route)
    if state.status in ("done", "failed"):  # a repeat, answered from the store
        return _answer(state)
    poll = f"{route}/{handle.check_id}"
    accepted = Accepted(id=handle.check_id, status=state.status, poll=poll)
    wait = str(config.api.poll_after_s)
    return _answer(accepted, 202, {"Location": poll, "Retry-After": wait})


async def _read(request: web.Request, check_id: str, route: str) -> CheckState | VoteState:
    service, key = request.app[_SERVICE], request[KEY_NAME]
    try:
        if route == "/v1/votes":
            return await vote_state(service, check_id, key)
        config = request.app[_CONFIG]
        return await read_state(service, check_id, key, config.public_url, config.publisher)
    except KeyError:
        raise Refusal(404, "No check of this key has this id.") from None


async def _poll(request: web.Request, route: str) -> web.Response:
    state = await _read(request, _check_id(request), route)
    if state.status in ("done", "failed"):
        return _answer(state)
    return _answer(state, headers={"Retry-After": str(request.app[_CONFIG].api.poll_after_s)})


async def _post_check(request: web.Request) -> web.Response:
    return await _take(request, "/v1/checks")


async def _get_check(request: web.Request) -> web.Response:
    return await _poll(request, "/v1/checks")


async def _post_vote(request: web.Request) -> web.Response:
    return await _take(request, "/v1/votes")


async def _get_vote(request: web.Request) -> web.Response:
    return await _poll(request, "/v1/votes")


async def _put_webhook(request: web.Request) -> web.Response:
    """Register the key's webhook (``{"url": ""}``: none); its signing secret, shown here
    only."""
    if request.content_length is not None and request.content_length > _WEBHOOK_BODY:
        raise Refusal(413, "The body is larger than a webhook's address needs.")
    try:
        asked = WebhookIn.model_validate_json(await request.read())
    except ValidationError:
        raise Refusal(400, 'The body must be JSON: {"url": "https://…"}.') from None
    url = asked.url.strip()
    allow = request.app[_CONFIG].api.webhook_allow_private
    refusal = target_refusal(url, allow_private=allow) if url else None
    if refusal is not None:
        raise Refusal(400, refusal)
    keys = request.app[_SERVICE].api_keys
    hook = await keys.set_webhook(request[KEY_NAME], url)
    return _answer(WebhookSet(url=hook.url, secret=hook.secret))


async def _openapi(request: web.Request) -> web.Response:
    return web.json_response(openapi_document())


def build_app(service: CheckService, config: ApiConfig) -> web.Application:
    """The API over the started check ``service``.

    Args:
        service: the check service (its store holds the keys).
        config: the ``[api]`` section, the images' caps, the pages' public address.
    """
    api = config.api
    known = KnownKeys(service.api_keys)
    middlewares = [
        _refusals,
        address_limit(ClientLimits(api.per_minute), forwarded_for=api.forwarded_for),
        authenticated(known, ClientLimits(api.key_per_minute), open_path=OPENAPI_PATH),
    ]
    app = web.Application(middlewares=middlewares, client_max_size=api.max_body_bytes)
    app[_SERVICE] = service
    app[KNOWN_KEYS] = known
    bodies = app[BODIES] = Bodies(api, config.images)
    app[_CONFIG] = config
    followers = app[_FOLLOWERS] = Followers()
    app.on_response_prepare.append(_secure)

    async def stop_following(app: web.Application) -> None:
        await followers.aclose()
        bodies.close()

    app.on_cleanup.append(stop_following)
    app.router.add_post("/v1/checks", _post_check)
    app.router.add_get("/v1/checks/{id}", _get_check)
    app.router.add_post("/v1/votes", _post_vote)
    app.router.add_get("/v1/votes/{id}", _get_vote)
    app.router.add_put("/v1/webhook", _put_webhook)
    app.router.add_get(OPENAPI_PATH, _openapi)
    return app


@contextlib.asynccontextmanager
async def serving_api(
    service: CheckService, config: ApiConfig, *, port: int | None = None
) -> AsyncIterator[web.AppRunner]:
    """The API served on ``[api] listen:port`` (or ``port``; ``0`` picks a free one,
    read from the runner's ``addresses``) until the block ends."""
    runner = web.AppRunner(
        build_app(service, config), access_log_format=ACCESS_LOG_FORMAT, shutdown_timeout=5.0
    )
    api = config.api
    policy = CallPolicy(
        api.webhook_poll_s,
        api.webhook_timeout_s,
        api.webhook_retry_s,
        api.webhook_give_up_s,
        api.webhook_allow_private,
    )
    body = webhook_body(service, config.public_url, config.publisher)
    webhooks = Webhooks(service, policy, body)
    await runner.setup()
    try:
        await web.TCPSite(runner, api.listen, api.port if port is None else port).start()
        log.info("API on http://%s:%d", *runner.addresses[0][:2])
        async with webhooks.running():  # the calls the keys' webhooks are owed
            yield runner
    finally:
        await runner.cleanup()
