"""What the API takes and answers, as typed models: the handlers validate with them and
the OpenAPI document (:mod:`.openapi`) is built from their JSON schemas."""

from __future__ import annotations

import base64
import binascii
import datetime as dt
from collections.abc import Iterator
from typing import Any, Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, field_validator

from bots.render.languages import LANGUAGE_TAGS, language_name
from bots.render.links import safe_url
from bots.render.votes import Category
from zofia_engine.refusals import PostRefusal
from zofia_engine.report import Verdict

__all__ = [
    "Accepted",
    "CheckIn",
    "CheckState",
    "Problem",
    "Status",
    "VoteBody",
    "VoteState",
    "WebhookCall",
    "WebhookCallState",
    "WebhookIn",
    "WebhookSet",
]

#: where a check is: waiting for an engine run, in one, answered, or not answered
#: ``verdict``: running, with the verdict fixed before the debate (its report's
#: ``complete`` false: verdict, confidence, summary and evidence final; the debate still
#: being written); ``done`` follows with the whole report.
Status = Literal["queued", "running", "verdict", "done", "failed"]
_BY_TAG = {tag: name for name, tag in LANGUAGE_TAGS.items()}
# Base64 characters decoded at a time (a multiple of 4): about 1 MB of bytes.
_BASE64_SLICE = 4 * 2**18


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Image(_Model):
    """An image of the post, its file's bytes in base64."""

    data: str = Field(
        description="The file's bytes, base64-encoded (RFC 4648, with padding).",
        json_schema_extra={"contentEncoding": "base64"},
    )
    media_type: str = Field("", max_length=100, examples=["image/jpeg"])

    @field_validator("data")
    @classmethod
    def _base64(cls, value: str) -> str:
        try:
            for _ in _base64_slices(value):  # checked, and each slice dropped at once
                pass
        except (binascii.Error, ValueError):
            raise ValueError("is not base64") from None
        return value

    @property
    def size(self) -> int:
        """The file's size in bytes, read from the base64's length (nothing decoded)."""
        return len(self.data) * 3 // 4 - len(self.data[-2:]) + len(self.data[-2:].rstrip("="))

    @property
    def content(self) -> bytes:
        return base64_bytes(self.data)


def base64_bytes(text: str) -> bytes:
    """The bytes of strict base64 ``text`` (RFC 4648, with padding), decoded a slice at a
    time: a slice holds the interpreter's lock for milliseconds, so a 20 MB image decoded
    on a worker thread never stops the event loop for longer.

    Raises:
        binascii.Error: ``text`` is not strict base64.
    """
    return b"".join(_base64_slices(text))


def _base64_slices(text: str) -> Iterator[bytes]:
    if len(text) % 4:
        raise binascii.Error("incomplete base64")
    for start in range(0, len(text), _BASE64_SLICE):
        yield base64.b64decode(text[start : start + _BASE64_SLICE], validate=True)


class CheckIn(_Model):
    """A post to check (``POST /v1/checks``) or to vote on (``POST /v1/votes``): its
    text, or only a link (the article is fetched), or images with their caption."""

    text: str = Field("", description="The post's text, or its caption; may hold links.")
    url: str = Field(
        "",
        description="Where the post was found; alone, without text, its article is checked.",
    )
    images: list[Image] = Field(
        default_factory=list,
        max_length=10,
        # "pictures", the field's first name, is still taken from clients written for it
        validation_alias=AliasChoices("images", "pictures"),
    )
    language: str = Field(
        "",
        description="The report's language: an English name or a tag ('Portuguese', 'pt');"
        " empty: English.",
    )
    published: dt.date | None = Field(None, description="When the post was first published.")
    asker: str = Field(
        "",
        max_length=64,
        description="Your own pseudonymous id of who asked (kept only as a keyed hash):"
        " each asker has the limits of one user, the key those of one chat.",
    )

    @field_validator("url")
    @classmethod
    def _link(cls, value: str) -> str:
        value = value.strip()
        if value and not safe_url(value):
            raise ValueError("must be an http(s) address with a host")
        return value

    @field_validator("language")
    @classmethod
    def _language(cls, value: str) -> str:
        tag = value.strip().lower()
        if tag == "en":
            return ""
        return _BY_TAG.get(tag) or language_name(value)

    @property
    def empty(self) -> bool:
        return not (self.text.strip() or self.url or self.images)


class Accepted(_Model):
    """A check taken: poll ``poll`` for its answer."""

    id: str
    status: Status
    poll: str = Field(description="Where the answer will be (a path on this server).")


class VoteBody(_Model):
    """A report's vote (docs/api.md has the table it is read from)."""

    category: Category
    truth_score: int | None = Field(ge=1, le=5, description="1 false … 5 true; only for info.")
    verdict: Verdict
    sure: bool = Field(description="The confidence was at least 60%, or a moderator ruled.")
    reviewed: bool = Field(description="A moderator's review is in force.")


class CheckState(_Model):
    """A check, and its report once there is one."""

    id: str
    status: Status
    created_at: dt.datetime
    repeat: Literal["exact", "near"] | None = Field(
        description="Answered from an earlier check of the same post (or a near copy)."
    )
    report: dict[str, Any] | None = Field(
        description="The report, as the report page's JSON serves it (docs/report-site.md)."
    )
    vote: VoteBody | None
    page: str = Field(description="The report page, when the site has a public address.")
    error: str = Field(description="Why there is no report, in one sentence; else empty.")
    webhooks: list[WebhookCallState] = Field(
        [], description="The calls owed to the key's webhook about this check."
    )
    claim_review: dict[str, Any] | None = Field(
        None,
        description=(
            "The report as schema.org's ClaimReview (MediaReview for a picture post whose "
            "verdict says what was done with the picture): claimReviewed, itemReviewed "
            "(with appearance, where the post was seen), author, datePublished, url and "
            "reviewRating (ratingValue 1 false … 5 true, none for unproven; alternateName "
            "the verdict). Null without a report or a claim (a greeting, a scam warning)."
        ),
    )


class WebhookCallState(_Model):
    """A call owed to the key's webhook about a check, and how it stands."""

    event: Literal["done", "corrected"]
    verdict: str = Field(description="The verdict the call reports.")
    status: Literal["pending", "delivered", "given_up"]
    attempts: int
    created_at: dt.datetime
    delivered_at: dt.datetime | None


class WebhookIn(_Model):
    """Where the key's webhook calls go (``""``: none)."""

    url: str = Field(max_length=2000)


class WebhookSet(_Model):
    """The key's webhook, and the secret its calls are signed with (shown only here)."""

    url: str
    secret: str = Field(description="HMAC-SHA256 key of the Zofia-Signature header.")


class WebhookCall(_Model):
    """What a webhook receives: the event, its id (the same on every retry of it), and
    the check as ``GET /v1/checks/<id>`` shows it then."""

    event: Literal["done", "corrected"]
    call: str
    check: CheckState


class VoteState(_Model):
    """A vote on a message: its check, and the vote once the check is done."""

    id: str
    status: Status
    vote: VoteBody | None
    error: str = Field(description="Why there is no vote, in one sentence; else empty.")


class Problem(_Model):
    """A refusal or a failure, in one sentence."""

    error: str
    reason: PostRefusal | None = Field(
        default=None,
        description=(
            "Why the engine refused the post (422 only, and only when it has a kind): "
            "a code to act on or to word in the client's own language."
        ),
    )
