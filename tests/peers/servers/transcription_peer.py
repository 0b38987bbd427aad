"""A fake OpenAI-compatible transcription server: ``POST /v1/audio/transcriptions`` on
127.0.0.1, checking the request as OpenAI's API does.

The body must be ``multipart/form-data`` with a ``file`` part whose file name has an
extension the API takes (flac, m4a, mp3, mp4, mpeg, mpga, oga, ogg, wav, webm) and at most
25 MB of bytes, a ``model`` it serves, and optionally ``language`` (ISO 639-1),
``prompt``, ``temperature`` and ``response_format`` (json, text, srt, verbose_json, vtt);
with ``api_key`` set, ``Authorization: Bearer <key>``. What it refuses, it refuses with
OpenAI's status and error body. Every request that reaches it is recorded (its fields and
the file: name, content type, bytes) before it is checked, so a test can say that nothing
was sent. Answers come from one-shot replies queued with :meth:`FakeTranscription.script`,
then from ``transcripts`` (the text for a file's SHA-256), then ``"ok"``: the fake hears
nothing, it proves the wire, not a transcription.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from aiohttp import BodyPartReader, web

from .loopback import LoopbackServer

__all__ = ["MAX_UPLOAD", "FakeTranscription", "Received", "TranscriptionReply"]

#: OpenAI's cap on an upload (its 413 names it)
MAX_UPLOAD = 26_214_400
EXTENSIONS = ("flac", "m4a", "mp3", "mp4", "mpeg", "mpga", "oga", "ogg", "wav", "webm")
FORMATS = ("json", "text", "srt", "verbose_json", "vtt")


@dataclass(frozen=True)
class TranscriptionReply:
    """One answer: ``text`` as the transcription (``language`` added to the JSON when
    set, as some servers add it); a ``status`` of 400 or more sends ``error`` as OpenAI's
    error body instead, with ``headers`` (``Retry-After``); ``hang`` holds the answer
    until the server closes or the client goes."""

    text: str = "ok"
    language: str = ""
    status: int = 200
    error: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    hang: bool = False


@dataclass(frozen=True)
class Received:
    """A request as it arrived: its text fields, its headers and its file part."""

    fields: dict[str, str]
    headers: dict[str, str]
    filename: str = ""
    content_type: str = ""
    data: bytes = b""


def _error(status: int, message: str, code: str | None = None) -> web.Response:
    kind = "server_error" if status >= 500 else "invalid_request_error"
    body = {"error": {"message": message, "type": kind, "param": None, "code": code}}
    return web.json_response(body, status=status)


class FakeTranscription(LoopbackServer):
    """The transcription endpoint of an OpenAI-compatible server, for tests.

    Args:
        api_key: when set, requests must carry it as a bearer key.
        models: the models served (OpenAI's 404 for another).
        transcripts: the text answered for a file, by the file's SHA-256.
    """

    def __init__(
        self,
        *,
        api_key: str | None = None,
        models: tuple[str, ...] = ("whisper-1",),
        transcripts: dict[str, str] | None = None,
    ) -> None:
        super().__init__()
        self.api_key = api_key
        self.models = models
        self.transcripts = dict(transcripts or {})
        self.requests: list[Received] = []
        self._script: deque[TranscriptionReply] = deque()

    @property
    def base_url(self) -> str:
        """The API root a client is configured with (``.../v1``)."""
        return f"{self.root}/v1"

    def script(self, *replies: TranscriptionReply | str) -> None:
        """Queue one-shot replies, given in order before ``transcripts`` is asked."""
        self._script.extend(
            r if isinstance(r, TranscriptionReply) else TranscriptionReply(text=r) for r in replies
        )

    def add_routes(self, app: web.Application) -> None:
        # a multipart body is streamed: aiohttp's client_max_size does not cap it
        app.router.add_post("/v1/audio/transcriptions", self._transcribe)

    async def _received(self, request: web.Request) -> Received | str:
        headers = dict(request.headers)
        if not request.content_type.startswith("multipart/form-data"):
            self.requests.append(Received({}, headers))
            return "Invalid Content-Type header: expected multipart/form-data."
        fields: dict[str, str] = {}
        upload: tuple[str, str, bytes] | None = None
        reader = await request.multipart()
        async for part in reader:
            if not isinstance(part, BodyPartReader):
                continue  # a nested multipart: nothing the API reads
            data = await part.read()
            if part.name == "file" and part.filename is not None:
                upload = (part.filename, part.headers.get("Content-Type", ""), bytes(data))
            elif part.name:
                fields[part.name] = bytes(data).decode("utf-8", errors="replace")
        filename, kind, payload = upload or ("", "", b"")
        self.requests.append(Received(fields, headers, filename, kind, payload))
        return self.requests[-1]

    async def _transcribe(self, request: web.Request) -> web.Response:
        received = await self._received(request)
        if isinstance(received, str):
            return _error(400, received)
        if self.api_key is not None and received.headers.get("Authorization") != (
            f"Bearer {self.api_key}"
        ):
            return _error(401, "Incorrect API key provided.", "invalid_api_key")
        problem = self._problem(received)
        if problem is not None:
            return problem
        reply = self._script.popleft() if self._script else None
        if reply is None:
            text = self.transcripts.get(hashlib.sha256(received.data).hexdigest(), "ok")
            reply = TranscriptionReply(text=text)
        if reply.hang:
            await self.release.wait()
            await asyncio.sleep(0)
        if reply.status >= 400:
            response = _error(reply.status, reply.error or f"HTTP {reply.status}")
            response.headers.update(reply.headers)
            return response
        return self._answer(received, reply)

    def _problem(self, received: Received) -> web.Response | None:
        """OpenAI's refusal of a request it cannot serve, or ``None``."""
        fields = received.fields
        if not received.filename:
            return _error(400, "'file' is a required property")
        if len(received.data) > MAX_UPLOAD:
            size = len(received.data)
            return _error(
                413, f"Maximum content size limit ({MAX_UPLOAD}) exceeded ({size} bytes read)"
            )
        extension = received.filename.rpartition(".")[2].lower()
        if extension not in EXTENSIONS:
            return _error(400, f"Invalid file format. Supported formats: {list(EXTENSIONS)}")
        if not fields.get("model"):
            return _error(400, "'model' is a required property")
        if fields["model"] not in self.models:
            message = (
                f"The model `{fields['model']}` does not exist or you do not have access to it."
            )
            return _error(404, message, "model_not_found")
        language = fields.get("language")
        if language is not None and not (len(language) == 2 and language.isalpha()):
            return _error(
                400,
                f"Invalid language '{language}'. Language parameter must be specified in "
                "ISO-639-1 format.",
            )
        if fields.get("response_format", "json") not in FORMATS:
            return _error(400, f"'{fields['response_format']}' is not one of {list(FORMATS)}")
        return None

    def _answer(self, received: Received, reply: TranscriptionReply) -> web.Response:
        fmt = received.fields.get("response_format", "json")
        if fmt in ("text", "srt", "vtt"):
            return web.Response(text=reply.text)
        body: dict[str, Any] = {"text": reply.text}
        if fmt == "verbose_json" or reply.language:
            body["language"] = reply.language or "english"
        return web.json_response(body)
