"""Why the engine refuses a post, as data: a :class:`PostRefusal` kind per reason, its
English sentence with its values as blanks (:data:`POST_REFUSALS`), and how English
writes a size or a duration in one. :class:`~zofia_engine.errors.InvalidPostError`
carries a kind and its values; ``bots/render`` words them in a chat's language.
"""

from __future__ import annotations

import functools
import math
import string
from collections.abc import Mapping
from enum import StrEnum

__all__ = [
    "POST_REFUSALS",
    "PostRefusal",
    "SizeOver",
    "duration_parts",
    "duration_words",
    "english",
    "refusal_blanks",
    "size_parts",
    "size_words",
]


class PostRefusal(StrEnum):
    """Why the engine refused a post: one kind per sentence (:data:`POST_REFUSALS`)."""

    #: a sentence said already (by the platform code, in the chat's language): its one
    #: value is ``sentence``
    SAID = "said"
    EMPTY = "empty"
    IMAGES_OFF = "images_off"
    NO_TEXT_IN_IMAGES = "no_text_in_images"
    TOO_MANY_IMAGES = "too_many_images"
    NO_WORDS_HEARD = "no_words_heard"
    UNREACHABLE = "unreachable"
    NOT_WEB = "not_web"
    NOT_A_URL = "not_a_url"
    PAGE_TOO_LARGE = "page_too_large"
    ERROR_STATUS = "error_status"
    NOT_A_PAGE = "not_a_page"
    TOO_MANY_REDIRECTS = "too_many_redirects"
    TOO_COMPLEX = "too_complex"
    NO_ARTICLE = "no_article"
    IMAGE_TOO_LARGE = "image_too_large"
    FILE_TOO_LARGE = "file_too_large"
    NTH_IMAGE_TOO_LARGE = "nth_image_too_large"
    NTH_FILE_TOO_LARGE = "nth_file_too_large"
    #: one image of several refused: ``refusal`` is that image's own refusal
    NTH_IMAGE = "nth_image"
    IMAGE_SVG = "image_svg"
    NOT_AN_IMAGE = "not_an_image"
    IMAGE_DAMAGED = "image_damaged"
    IMAGE_TOO_MANY_PIXELS = "image_too_many_pixels"
    IMAGE_OUT_OF_SHAPE = "image_out_of_shape"
    IMAGES_BUSY = "images_busy"
    IMAGE_TOO_SLOW = "image_too_slow"
    VOICE_TOO_LARGE = "voice_too_large"
    VOICE_TOO_LONG = "voice_too_long"
    VOICE_UNREADABLE = "voice_unreadable"
    VOICE_DAMAGED = "voice_damaged"
    VOICES_OFF = "voices_off"
    VOICE_NEEDS_SERVER = "voice_needs_server"
    VOICE_NOT_TRANSCRIBED = "voice_not_transcribed"
    VOICES_BUSY = "voices_busy"
    VOICE_TOO_SLOW = "voice_too_slow"
    LINKS_BUSY = "links_busy"


_TOO_LARGE = "{which} is {{size:size}}; images up to {{max_size:size}} are checked."

#: each refusal's sentence in English (logs, the CLI, the HTTP API), its values as blanks
POST_REFUSALS: dict[PostRefusal, str] = {
    PostRefusal.SAID: "{sentence}",
    PostRefusal.EMPTY: "The post is empty: send the text of a post, a caption or a link to check.",
    PostRefusal.IMAGES_OFF: "Images are not checked here; send the claim as text.",
    PostRefusal.NO_TEXT_IN_IMAGES: (
        "I found no text to check in the image; add a caption that says what it claims, "
        "or send the claim as text."
    ),
    PostRefusal.TOO_MANY_IMAGES: "The post has {count} images; up to {max_images} are checked.",
    PostRefusal.NO_WORDS_HEARD: (
        "I heard no words in the voice note; send it again where it is quieter, or send the "
        "claim as text."
    ),
    PostRefusal.UNREACHABLE: "{url} could not be fetched.",
    PostRefusal.NOT_WEB: "{url} is not an http or https URL; only web pages can be fetched.",
    PostRefusal.NOT_A_URL: "{url} is not a valid URL.",
    PostRefusal.PAGE_TOO_LARGE: "The page at {url} is larger than {max_bytes:,} bytes.",
    PostRefusal.ERROR_STATUS: "{url} answered {status} {reason}.",
    PostRefusal.NOT_A_PAGE: (
        "{url} is {content_type}; only HTML and plain-text pages and images can be checked."
    ),
    PostRefusal.TOO_MANY_REDIRECTS: "{url} redirected more than {max_redirects} times; giving up.",
    PostRefusal.TOO_COMPLEX: "The page at {url} is too complex to read.",
    PostRefusal.NO_ARTICLE: "No article text found at {url}.",
    PostRefusal.IMAGE_TOO_LARGE: _TOO_LARGE.format(which="The image"),
    PostRefusal.FILE_TOO_LARGE: _TOO_LARGE.format(which="The file"),
    PostRefusal.NTH_IMAGE_TOO_LARGE: _TOO_LARGE.format(which="Image {n} of {of}: the image"),
    PostRefusal.NTH_FILE_TOO_LARGE: _TOO_LARGE.format(which="Image {n} of {of}: the file"),
    PostRefusal.NTH_IMAGE: "Image {n} of {of}: {refusal}",
    PostRefusal.IMAGE_SVG: (
        "SVG drawings are not checked; send the image as PNG, JPEG, WebP or GIF."
    ),
    PostRefusal.NOT_AN_IMAGE: (
        "This file is not an image I can read; send a PNG, JPEG, WebP or GIF."
    ),
    PostRefusal.IMAGE_DAMAGED: "The image is damaged or cut short; send it again.",
    PostRefusal.IMAGE_TOO_MANY_PIXELS: (
        "The image is {megapixels} megapixels; images up to {max_megapixels} megapixels "
        "are checked."
    ),
    PostRefusal.IMAGE_OUT_OF_SHAPE: (
        "The image is {width}×{height} pixels, too long or thin to read; send the part "
        "that matters."
    ),
    PostRefusal.IMAGES_BUSY: (
        "Too many images are being read right now; please send this one again in a minute."
    ),
    PostRefusal.IMAGE_TOO_SLOW: (
        "The image took too long to read; send a smaller one, or its text."
    ),
    PostRefusal.VOICE_TOO_LARGE: (
        "The voice note is {size:size}; voice notes up to {max_size:size} are transcribed."
    ),
    PostRefusal.VOICE_TOO_LONG: (
        "The voice note is {duration:duration} long; voice notes up to "
        "{max_duration:duration} are transcribed."
    ),
    PostRefusal.VOICE_UNREADABLE: (
        "I can transcribe voice notes and audio files in OGG, MP3, M4A, WAV or FLAC, not "
        "this file; send the claim as text."
    ),
    PostRefusal.VOICE_DAMAGED: "The voice note is damaged or cut short; send it again.",
    PostRefusal.VOICES_OFF: (
        "Voice notes are not transcribed here; send the claim as text, a link to it, or an "
        "image of it."
    ),
    PostRefusal.VOICE_NEEDS_SERVER: (
        "Voice notes need a transcription server, and none is set up here; send the claim "
        "as text, a link to it, or an image of it."
    ),
    PostRefusal.VOICE_NOT_TRANSCRIBED: (
        "I could not transcribe the voice note just now; please send it again in a few "
        "minutes, or send its words as text."
    ),
    PostRefusal.VOICES_BUSY: (
        "Too many voice notes are being transcribed right now; please send this one again "
        "in a minute."
    ),
    PostRefusal.VOICE_TOO_SLOW: (
        "The voice note took too long to transcribe; send a shorter one, or its words as text."
    ),
    PostRefusal.LINKS_BUSY: (
        "Too many links are being read right now; please send this one again in a minute."
    ),
}


class SizeOver(int):
    """A size known only to be over this many bytes (a platform's refusal of a larger
    file): written "over 20 MB"."""


def size_parts(n: int) -> tuple[str, str]:
    """A byte count as a whole number and its unit: ``("31", "MB")``, ``("870", "kB")``."""
    return (f"{n / 1_000_000:.0f}", "MB") if n >= 1_000_000 else (f"{n / 1000:.0f}", "kB")


def size_words(n: int) -> str:
    """A byte count in words: ``"31 MB"``, ``"870 kB"``."""
    return " ".join(size_parts(n))


def duration_parts(seconds: float) -> tuple[int, int]:
    """A duration as whole minutes and seconds, rounded up (so a duration over a cap
    never reads as the cap)."""
    minutes, rest = divmod(math.ceil(seconds), 60)
    return minutes, rest


def duration_words(seconds: float) -> str:
    """A duration in words: ``"45 seconds"``, ``"5 minutes"``, ``"7 minutes 30 seconds"``
    (whole seconds, rounded up, so a duration over a cap never reads as the cap)."""
    minutes, rest = duration_parts(seconds)
    parts = []
    if minutes:
        parts.append(f"{minutes} minute" + ("s" if minutes != 1 else ""))
    if rest or not minutes:
        parts.append(f"{rest} second" + ("s" if rest != 1 else ""))
    return " ".join(parts)


class _English(string.Formatter):
    """``str.format`` that also writes ``{size:size}`` (bytes: "31 MB", "over 20 MB")
    and ``{duration:duration}`` (seconds) in English words."""

    def format_field(self, value: object, format_spec: str) -> str:
        if format_spec == "size":
            if isinstance(value, SizeOver):
                return f"over {size_words(value)}"
            return size_words(value) if isinstance(value, int) else str(value)
        if format_spec == "duration" and isinstance(value, int | float):
            return duration_words(value)
        return str(super().format_field(value, format_spec))


_ENGLISH = _English()


def english(kind: PostRefusal, values: Mapping[str, object]) -> str:
    """The sentence of ``kind`` in English, ``values`` filled in (sizes and durations in
    words)."""
    return _ENGLISH.format(POST_REFUSALS[kind], **values)


@functools.cache
def refusal_blanks(kind: PostRefusal) -> frozenset[str]:
    """The values the sentence of ``kind`` needs (its blanks' names), read from its
    sentence once."""
    return frozenset(
        name for _, name, _, _ in string.Formatter().parse(POST_REFUSALS[kind]) if name
    )
