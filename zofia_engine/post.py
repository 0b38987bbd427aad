"""What goes into a check: the post, the post as read, the parts of the method to run,
and progress events."""

from __future__ import annotations

import datetime as dt
from collections.abc import Awaitable, Callable
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from .records.audio import Transcript
from .records.images import ImageFinding
from .report import Report
from .text import checkable_text

__all__ = [
    "ABLATIONS",
    "MAX_POST_CHARS",
    "Ablation",
    "Post",
    "PostAudio",
    "PostImage",
    "ProgressEvent",
    "ProgressHook",
    "ReadPost",
    "cut_at_word",
]

#: The longest post text kept (about 50 kB of prose; a long article is under 30,000
#: characters). Anything longer is cut on the way in, whatever the front-end, so that
#: no step downstream (storage, repeat search, the models) meets an unbounded text.
MAX_POST_CHARS = 50_000


def cut_at_word(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters, at a space when one is near the end."""
    if len(text) <= limit:
        return text
    cut = text[:limit]
    space = cut.rfind(" ", max(0, limit - 200))
    return cut[:space] if space > 0 else cut


class PostImage(BaseModel):
    """An image of a post: its bytes and media type as received; in a :class:`ReadPost`,
    the cleaned image (no metadata)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    data: bytes = Field(repr=False)
    media_type: str = ""


class PostAudio(BaseModel):
    """A voice note or audio file of a post: its bytes and media type as received, and
    the duration the platform declared for it (``None``: not declared). The engine hears
    it (:meth:`~zofia_engine.ports.Checker.read`); no :class:`ReadPost` keeps it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    data: bytes = Field(repr=False)
    media_type: str = ""
    duration_s: float | None = None


class Post(BaseModel):
    """A post to check.

    Args:
        text: the post's text (news text, a caption, or an article fetched from ``url``).
        url: where it came from, if it was a link.
        published: its publication date; web search stops the day before.
        origin: who it was forwarded from, in words (a channel, a user).
        language: the language the panel writes its analyses, arguments and summary
            in (``"French"``); empty: English. Labels and JSON keys stay English.
        original_chars: set when the text was longer than :data:`MAX_POST_CHARS` and
            was cut: how long it was (the report says so).
        images: the post's images (a screenshot, a camera shot, an album).
        audio: the post's voice note or audio file; ``text`` is then its caption.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    text: str
    url: str = ""
    published: dt.date | None = None
    origin: str = ""
    language: str = Field("", max_length=40)
    original_chars: int | None = None
    images: tuple[PostImage, ...] = ()
    audio: PostAudio | None = None

    @model_validator(mode="before")
    @classmethod
    def _bounded(cls, data: object) -> object:
        if isinstance(data, dict):
            text = data.get("text")
            if isinstance(text, str) and len(text) > MAX_POST_CHARS:
                original = data.get("original_chars") or len(text)
                data = {
                    **data,
                    "text": cut_at_word(text, MAX_POST_CHARS),
                    "original_chars": original,
                }
        return data


class ReadPost(BaseModel):
    """A post as the engine read it (:meth:`~zofia_engine.ports.Checker.read`), once: what
    a check checks, and what reading found.

    Args:
        post: the post as read: its text is its caption, then the words heard in its
            voice note under their marker, then each image's text under its marker; its
            images the cleaned ones, and no audio.
        text: that text cleaned (:func:`~zofia_engine.text.clean_post`), never empty.
        cleaned: what cleaning changed, in words (the report's notes).
        findings: what was read from each image, in order.
        caption: false when the post's text was all read from its images or heard.
        heard: what was heard in the post's voice note, if it had one.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    post: Post
    text: str
    cleaned: tuple[str, ...] = ()
    findings: tuple[ImageFinding, ...] = ()
    caption: bool = True
    heard: Transcript | None = None

    @classmethod
    def of(
        cls, post: Post, findings: tuple[ImageFinding, ...] = (), *, caption: bool = True
    ) -> ReadPost:
        """``post`` read: the one place the empty-post rule runs.

        Raises:
            InvalidPostError: nothing is left to check once the text is cleaned.
        """
        text, cleaned = checkable_text(post.text)
        return cls(post=post, text=text, cleaned=tuple(cleaned), findings=findings, caption=caption)


class Ablation(BaseModel):
    """Which parts of ZoFia run; the switches of the paper's ablation study (Table 2)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    wikipedia: bool = True
    web: bool = True
    linguist: bool = True
    expert: bool = True
    claims: bool = True
    debate: bool = True

    @classmethod
    def named(cls, name: str) -> Ablation:
        """One of :data:`ABLATIONS` (``full``, ``no-wikipedia``, ``no-debate`` …)."""
        try:
            return cls(**ABLATIONS[name])
        except KeyError:
            raise ValueError(
                f"unknown ablation {name!r}; choose one of: {', '.join(ABLATIONS)}"
            ) from None

    @property
    def removed(self) -> list[str]:
        return [name for name, on in self.model_dump().items() if not on]


ABLATIONS: dict[str, dict[str, bool]] = {
    "full": {},
    "no-wikipedia": {"wikipedia": False},
    "no-web": {"web": False},
    "no-retrieval": {"wikipedia": False, "web": False},
    "no-linguist": {"linguist": False},
    "no-expert": {"expert": False},
    "no-linguist-expert": {"linguist": False, "expert": False},
    "no-claims": {"claims": False},
    "no-debate": {"debate": False},
}


class ProgressEvent(BaseModel):
    """A step of a running check, for progress displays.

    ``kind`` is ``started``, ``finished`` or ``failed`` for a stage
    (``retrieval``, ``linguist``, ``expert``, ``claims``, ``debate``, ``verdict``),
    or ``round`` after each debate round (``round`` set, ``detail`` the judge's call),
    or ``verdict_ready`` once the evidence fixed the verdict, before the debate
    (``report`` the early report: ``complete`` false; ``detail`` the verdict).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Literal["started", "finished", "failed", "round", "verdict_ready"]
    stage: str
    detail: str = ""
    round: int | None = None
    elapsed_ms: float = 0.0
    report: Report | None = None


ProgressHook = Callable[[ProgressEvent], Awaitable[None] | None]
