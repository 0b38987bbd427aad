"""A request the API refuses: one sentence, its status, and its headers.

Every refusal, wherever it is decided (the bounds before the key, the key, the body,
the service's limits), is raised as a :class:`Refusal` and answered by the server's
one error middleware as ``{"error": <the sentence>}``. A post the engine refuses (422)
also says why as a code a client can act on or translate: ``{"error": …, "reason":
"unreachable"}`` (:func:`refused_post`).
"""

from __future__ import annotations

from typing import cast

from zofia_engine.errors import InvalidPostError
from zofia_engine.refusals import PostRefusal

from ..render.sentences import error_sentence

__all__ = ["Refusal", "refused_post", "too_many"]


class Refusal(Exception):
    """A request refused, in one sentence, with its status (and headers, and the
    engine's ``reason`` when it refused the post)."""

    def __init__(
        self,
        status: int,
        sentence: str,
        headers: dict[str, str] | None = None,
        reason: PostRefusal | None = None,
    ):
        super().__init__(sentence)
        self.status = status
        self.headers = headers or {}
        self.reason = reason

    def __reduce__(self) -> tuple[object, ...]:
        # Pickled whole: a body parsed in a worker process is refused from there.
        return (Refusal, (self.status, str(self), self.headers, self.reason))


def refused_post(exc: InvalidPostError) -> Refusal:
    """A 422 for a post the engine refused: its sentence, and its kind as the reason
    (none for a sentence said already, which has no kind of its own; for one image of
    several, that image's own)."""
    refused = exc
    while refused.kind is PostRefusal.NTH_IMAGE:
        refused = cast("InvalidPostError", refused.values["refusal"])
    reason = None if refused.kind is PostRefusal.SAID else refused.kind
    return Refusal(422, error_sentence(exc), reason=reason)


def too_many(sentence: str, retry_after_s: int) -> Refusal:
    """A 429: ``sentence``, and ``Retry-After`` in whole seconds (at least 1)."""
    return Refusal(429, sentence, {"Retry-After": str(max(1, retry_after_s))})
