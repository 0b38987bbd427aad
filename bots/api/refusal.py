"""A request the API refuses: one sentence, its status, and its headers.

Every refusal, wherever it is decided (the bounds before the key, the key, the body,
the service's limits), is raised as a :class:`Refusal` and answered by the server's
one error middleware as ``{"error": <the sentence>}``.
"""

from __future__ import annotations

__all__ = ["Refusal", "too_many"]


class Refusal(Exception):
    """A request refused, in one sentence, with its status (and headers)."""

    def __init__(self, status: int, sentence: str, headers: dict[str, str] | None = None):
        super().__init__(sentence)
        self.status = status
        self.headers = headers or {}

    def __reduce__(self) -> tuple[type[Refusal], tuple[int, str, dict[str, str]]]:
        # Pickled whole: a body parsed in a worker process is refused from there.
        return (Refusal, (self.status, str(self), self.headers))


def too_many(sentence: str, retry_after_s: int) -> Refusal:
    """A 429: ``sentence``, and ``Retry-After`` in whole seconds (at least 1)."""
    return Refusal(429, sentence, {"Retry-After": str(max(1, retry_after_s))})
