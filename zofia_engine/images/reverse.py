"""Where else an image appeared (reverse image search), behind a seam.

:class:`ReverseImageBackend` takes the image's bytes and gives pages that show it.
The one implementation is Google Cloud Vision's web detection (``images:annotate``
with ``WEB_DETECTION``): it takes the bytes themselves, so an image sent in a private
chat never needs a public address. Hits are sorted AgentFact's way: a page showing
the same image (a full match) is the *same source*, a page showing a crop or an
edit of it (a partial match) the *same event*, and pages with merely similar
images are unrelated and dropped.
"""

from __future__ import annotations

import abc
import base64
from typing import Any

from ..errors import SourceError
from ..image_settings import ReverseImageSettings
from ..post import PostImage
from ..records.images import ImageSighting
from ..retrieval.http import JsonHttpClient, required_key
from ..snippets import snippet_text

__all__ = ["GoogleVisionWeb", "ReverseImageBackend", "reverse_backend", "sightings_of"]


class ReverseImageBackend(abc.ABC):
    """Finds pages that show an image."""

    name: str

    @abc.abstractmethod
    async def search(self, image: PostImage, max_results: int) -> list[ImageSighting]:
        """Pages showing ``image`` (same source first), at most ``max_results``.

        Raises:
            SourceError: the service failed.
        """

    async def aclose(self) -> None:  # noqa: B027 - most backends hold nothing
        """Release connections."""


class GoogleVisionWeb(ReverseImageBackend):
    """Google Cloud Vision's web detection. The key is sent as the ``key`` parameter, as
    Google's APIs take it, and never logged."""

    name = "images:google"

    def __init__(self, api_key: str, *, base_url: str, timeout_s: float = 20.0) -> None:
        self._key = required_key(api_key, "images.reverse.api_key")
        self._endpoint = base_url.rstrip("/") + "/images:annotate"
        self._http = JsonHttpClient(self.name, timeout_s=timeout_s, retries=2)

    async def search(self, image: PostImage, max_results: int) -> list[ImageSighting]:
        request = {
            "requests": [
                {
                    "image": {"content": base64.b64encode(image.data).decode("ascii")},
                    "features": [{"type": "WEB_DETECTION", "maxResults": max_results}],
                }
            ]
        }
        try:
            body = await self._http.post_json(self._endpoint, request, {"key": self._key})
        except SourceError as exc:
            if self._key not in exc.detail:
                raise
            raise type(exc)(self.name, exc.detail.replace(self._key, "[key]")) from None
        return sightings_of(body, max_results)

    async def aclose(self) -> None:
        await self._http.aclose()


def sightings_of(body: Any, limit: int) -> list[ImageSighting]:
    """The pages of a web-detection answer that show the image or a part of it."""
    responses = body.get("responses") if isinstance(body, dict) else None
    first = responses[0] if isinstance(responses, list) and responses else {}
    pages = (first.get("webDetection") or {}).get("pagesWithMatchingImages") or []
    found: list[ImageSighting] = []
    for page in pages:
        if not isinstance(page, dict) or not str(page.get("url", "")).startswith("http"):
            continue
        if page.get("fullMatchingImages"):
            relation = "same source"
        elif page.get("partialMatchingImages"):
            relation = "same event"
        else:
            continue  # only similar images: unrelated
        title = snippet_text(str(page.get("pageTitle") or ""))[:200]
        found.append(ImageSighting(url=str(page["url"])[:2000], title=title, relation=relation))
    found.sort(key=lambda s: s.relation != "same source")
    return found[:limit]


def reverse_backend(settings: ReverseImageSettings) -> ReverseImageBackend | None:
    """The configured backend; ``None`` offline."""
    if settings.backend == "google":
        return GoogleVisionWeb(
            settings.api_key, base_url=settings.base_url, timeout_s=settings.timeout_s
        )
    return None
