"""A fake Google Cloud Vision API on 127.0.0.1: ``POST /v1/images:annotate`` with
``WEB_DETECTION``, answered as the real API answers (``responses[0].webDetection`` with
``pagesWithMatchingImages``), its key checked as the ``key`` query parameter, and every
request recorded (the image arrives base64-encoded in ``image.content``)."""

from __future__ import annotations

import base64
from typing import Any

from aiohttp import web

from .loopback import LoopbackServer

__all__ = ["VISION_KEY", "FakeVision", "page"]

VISION_KEY = "vision-test-key"


def page(url: str, title: str, *, full: bool = False, partial: bool = False) -> dict[str, Any]:
    """A ``pagesWithMatchingImages`` entry; neither flag: only similar images."""
    entry: dict[str, Any] = {"url": url, "pageTitle": title}
    if full:
        entry["fullMatchingImages"] = [{"url": url + "/photo.jpg"}]
    if partial:
        entry["partialMatchingImages"] = [{"url": url + "/crop.jpg"}]
    return entry


class FakeVision(LoopbackServer):
    """Answers web detection with ``pages``; ``images`` holds each image received."""

    def __init__(self, pages: list[dict[str, Any]] | None = None) -> None:
        super().__init__()
        self.pages = pages or []
        self.images: list[bytes] = []
        self.status = 200

    @property
    def base_url(self) -> str:
        return f"{self.root}/v1"

    def add_routes(self, app: web.Application) -> None:
        app.router.add_post("/v1/images:annotate", self._annotate)

    async def _annotate(self, request: web.Request) -> web.Response:
        if request.query.get("key") != VISION_KEY:
            # The request echoed back, as some gateways do: the client must not pass it on.
            message = f"API key not valid: {request.path_qs}"
            error = {"code": 400, "message": message, "status": "INVALID_ARGUMENT"}
            return web.json_response({"error": error}, status=400)
        if self.status != 200:
            return web.json_response({"error": {"code": self.status}}, status=self.status)
        body = await request.json()
        [one] = body["requests"]
        assert one["features"] == [
            {"type": "WEB_DETECTION", "maxResults": one["features"][0]["maxResults"]}
        ]
        self.images.append(base64.b64decode(one["image"]["content"]))
        detection = {"pagesWithMatchingImages": self.pages, "webEntities": []}
        return web.json_response({"responses": [{"webDetection": detection}]})
