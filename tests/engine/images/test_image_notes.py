"""What the report says when an image's vision model or reverse search fails: fixed
words, the same for every deployment; the backend's own words (its host, a URL with its
key) go to the log only, since the notes reach the report page's JSON and the API
(issue 45)."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from zofia_engine.errors import LLMConfigError, SourceResponseError
from zofia_engine.images.analysis import examine_images
from zofia_engine.images.labels import find_labels
from zofia_engine.images.reverse import ReverseImageBackend
from zofia_engine.llm.base import CompletionRequest
from zofia_engine.llm.scripted import ScriptedBackend
from zofia_engine.llm.session import CheckSession, Route
from zofia_engine.post import Post, PostImage, ReadPost
from zofia_engine.records.images import ImageFinding, ImageSighting

#: what a failing backend says of where it runs
LEAKS = ("10.0.0.7", "vision.internal", "AIzaSECRETKEY", "8443")


class _Refusing(ReverseImageBackend):
    """Reverse search that fails as Cloud Vision's client does, naming its endpoint."""

    name = "images:test"

    async def search(self, image: PostImage, max_results: int) -> list[ImageSighting]:
        raise SourceResponseError(
            self.name, "HTTP 403 from https://10.0.0.7:8443/v1/images:annotate?key=AIzaSECRETKEY"
        )


def _refuse(request: CompletionRequest) -> str:
    raise LLMConfigError(
        "openai:vision", "http://vision.internal:8000/v1 takes no images", "[llm.roles.vision]"
    )


def _post() -> ReadPost:
    text = "Springfield bans bicycles"
    finding = ImageFinding(
        index=1, bytes=3, width=1, height=1, media_type="image/png", text=text,
        labels=find_labels(text),
    )  # fmt: skip
    return ReadPost.of(Post(text=text, images=(PostImage(data=b"png"),)), (finding,))


async def test_a_failing_image_backend_leaves_fixed_words_and_its_details_in_the_log(
    caplog: pytest.LogCaptureFixture,
) -> None:
    session = CheckSession({"vision": Route(ScriptedBackend(_refuse), "scripted")})
    with caplog.at_level(logging.WARNING, logger="zofia_engine.images.analysis"):
        found = await examine_images(
            _post(), session, (), vision=True, reverse=_Refusing(), max_results=5
        )
    assert found.notes == [
        "image 1: the vision model refused it",
        "image 1: reverse image search failed",
    ]
    logged = caplog.text
    assert all(leak in logged for leak in LEAKS)  # the operator still learns what failed
    assert not any(leak in note for leak in LEAKS for note in found.notes)


async def test_a_vision_reply_that_never_parses_is_a_fixed_note(
    caplog: pytest.LogCaptureFixture,
) -> None:
    replies: list[Any] = []

    def babble(request: CompletionRequest) -> str:
        replies.append(request)
        return "I see http://10.0.0.7:8443/ in the picture"  # not the reply's JSON

    session = CheckSession({"vision": Route(ScriptedBackend(babble), "scripted")})
    with caplog.at_level(logging.WARNING, logger="zofia_engine.images.analysis"):
        found = await examine_images(_post(), session, (), vision=True, reverse=None, max_results=5)
    assert replies  # the model was asked
    assert "image 1: the vision model failed" in found.notes
    assert not any("10.0.0.7" in note for note in found.notes)
    assert "image 1: the vision model failed:" in caplog.text
