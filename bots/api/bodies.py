"""A post's body, read and parsed within the API's bounds.

A body is read only in one of the body slots (:class:`~.bounds.BodySlots`), into one
buffer, and refused as soon as it passes ``[api] max_body_bytes``. Then it is parsed
(:func:`parse`): the JSON, the post's fields, the images' sizes against the caps, and
the images decoded. Parsing a large body is CPU work that holds the interpreter's lock
(a 20 MB body: about a third of a second), and on a thread of the server's process it
would take that lock from the event loop again and again, slowing every other request.
So a body of :data:`IN_PROCESS_BYTES` or more is parsed in a worker process of the
server's own (:class:`~zofia_engine.bounded_work.KillablePool`, one per slot, started on
first use, under a memory and a time limit), and a smaller one on a thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os

from aiohttp import web
from pydantic import ValidationError

from bots.service.images import size_words
from zofia_engine.bounded_work import KillablePool
from zofia_engine.errors import InvalidPostError
from zofia_engine.image_settings import ImageSettings

from .bounds import BodySlots
from .checks import post_images
from .models import CheckIn
from .refusal import Refusal, refused_post
from .settings import ApiSettings

__all__ = [
    "BODIES",
    "IN_PROCESS_BYTES",
    "PARSE_TIMEOUT_S",
    "WORKER_NICENESS",
    "Bodies",
    "Posted",
    "parse",
    "parse_aside",
]

#: a body at least this large is parsed in a worker process, a smaller one on a thread
IN_PROCESS_BYTES = 1_000_000
#: a body's parse past this is stopped (its process killed) and the post refused
PARSE_TIMEOUT_S = 30.0
#: how much lower a worker process's priority is than the server's (os.nice)
WORKER_NICENESS = 10
#: what a worker process may take beyond its bodies: the interpreter and the models'
#: modules (about 200 MB of address space)
_WORKER_BASE = 512 * 2**20
#: a post as parsed: its fields (its images' base64 left out), and its images decoded,
#: each with its media type
Posted = tuple[CheckIn, list[tuple[bytes, str]]]


class Bodies:
    """The body slots and the worker processes of one server.

    Args:
        api: the ``[api]`` section (the slots, the largest body).
        caps: the images' caps.
    """

    def __init__(self, api: ApiSettings, caps: ImageSettings) -> None:
        self.slots = BodySlots(api.max_bodies)
        self.max_bytes = api.max_body_bytes
        self.caps = caps
        self.workers = KillablePool(
            workers=api.max_bodies,
            waiting=0,  # the slots hold the rest
            busy="Too many posts are being read at once; send this one again in a few seconds.",
            too_slow="The post took too long to read; send fewer or smaller images.",
            max_memory=_WORKER_BASE + 8 * api.max_body_bytes,
        )

    async def post(self, request: web.Request) -> Posted:
        """The post ``request`` sends, or the refusal of what it sends.

        Raises:
            Refusal: 413, 415, 400 (not JSON, not a post) or 422 (too many or too large
                images), or 429 (every slot taken and the line full).
        """
        if request.content_type != "application/json":
            raise Refusal(415, "Send the post as JSON, with Content-Type: application/json.")
        too_large = Refusal(
            413, f"The request is over {size_words(self.max_bytes)}; send fewer or smaller images."
        )
        if (request.content_length or 0) > self.max_bytes:
            raise too_large
        async with self.slots.slot():
            raw = await self._read(request, too_large)
            try:
                if len(raw) < IN_PROCESS_BYTES:
                    return await asyncio.to_thread(parse, raw, self.caps)
                work = self.workers.run(parse_aside, raw, self.caps, timeout_s=PARSE_TIMEOUT_S)
                return await work
            except InvalidPostError as exc:  # images refused, or a parse past its time
                raise refused_post(exc) from None
            except MemoryError:
                raise too_large from None

    async def _read(self, request: web.Request, too_large: Refusal) -> bytearray:
        """The body, read into one buffer that goes with the parse (``request.read()``
        would keep a copy of it for as long as the request runs)."""
        raw = bytearray()
        while chunk := await request.content.readany():
            raw += chunk
            if len(raw) > self.max_bytes:
                raise too_large
        return raw

    def close(self) -> None:
        """Stop the worker processes."""
        self.workers.close()


def parse(raw: bytearray, caps: ImageSettings) -> Posted:
    """(blocking) The post ``raw`` holds, or the refusal of what it holds.

    Raises:
        Refusal: a 400, in one sentence.
        InvalidPostError: too many or too large images (nothing decoded).
    """
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise Refusal(
            400, f"The body is not JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}."
        ) from None
    except ValueError:
        raise Refusal(400, "The body is not JSON: it is not UTF-8 text.") from None
    except RecursionError:
        raise Refusal(400, "The body is not a post: its JSON is nested too deeply.") from None
    try:
        check = CheckIn.model_validate(data)
    except ValidationError as exc:
        raise Refusal(400, _first_error(exc)) from None
    if check.empty:
        raise Refusal(400, "The post has no text, no url and no image: send at least one.")
    images = post_images(check, caps)
    # The base64 goes here: the decoded images are all that is held of them from now on.
    return check.model_copy(update={"images": []}), images


def parse_aside(raw: bytearray, caps: ImageSettings) -> Posted:
    """(blocking, in a worker process) :func:`parse`, at a lower priority than the
    server's: when the CPU is short, the event loop gets it first."""
    with contextlib.suppress(OSError):
        lower = WORKER_NICENESS - os.nice(0)  # once: the process keeps its niceness
        if lower > 0:
            os.nice(lower)
    return parse(raw, caps)


def _first_error(exc: ValidationError) -> str:
    """A validation error in one sentence: where, and what is wrong there."""
    errors = exc.errors()
    first = errors[0]
    where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in first["loc"])
    what = str(first["msg"]).removeprefix("Value error, ")
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    field = f"{where.lstrip('.')}: " if where else ""
    return f"The post is not a check: {field}{what}{more}."


#: the bodies of an API server
BODIES: web.AppKey[Bodies] = web.AppKey("bodies", Bodies)
