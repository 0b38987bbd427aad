"""The engine's refusal of a post (:class:`~zofia_engine.errors.InvalidPostError`), said
in the chat's language: one sentence per :class:`~zofia_engine.refusals.PostRefusal` kind,
its values filled in (a number, a size, a duration as the language writes them). One
image's refusal among several is said in it too; a sentence said already (the kind
``SAID``: the platform code's own) is said as it is."""

from __future__ import annotations

from zofia_engine.errors import InvalidPostError
from zofia_engine.refusals import PostRefusal, SizeOver, duration_parts, size_parts

from .words import ENGLISH, N_, Words

__all__ = ["POST_REFUSED", "post_refusal"]

#: each kind's sentence, as the catalogues translate it (the same English and the same
#: blanks as the engine's :data:`~zofia_engine.refusals.POST_REFUSALS`)
POST_REFUSED: dict[PostRefusal, str] = {
    PostRefusal.EMPTY: N_(
        "The post is empty: send the text of a post, a caption or a link to check."
    ),
    PostRefusal.IMAGES_OFF: N_("Images are not checked here; send the claim as text."),
    PostRefusal.NO_TEXT_IN_IMAGES: N_(
        "I found no text to check in the image; add a caption that says what it claims, "
        "or send the claim as text."
    ),
    PostRefusal.TOO_MANY_IMAGES: N_("The post has {count} images; up to {max_images} are checked."),
    PostRefusal.NO_WORDS_HEARD: N_(
        "I heard no words in the voice note; send it again where it is quieter, or send the "
        "claim as text."
    ),
    PostRefusal.UNREACHABLE: N_("{url} could not be fetched."),
    PostRefusal.NOT_WEB: N_("{url} is not an http or https URL; only web pages can be fetched."),
    PostRefusal.NOT_A_URL: N_("{url} is not a valid URL."),
    PostRefusal.PAGE_TOO_LARGE: N_("The page at {url} is larger than {max_bytes} bytes."),
    PostRefusal.ERROR_STATUS: N_("{url} answered {status} {reason}."),
    PostRefusal.NOT_A_PAGE: N_(
        "{url} is {content_type}; only HTML and plain-text pages and images can be checked."
    ),
    PostRefusal.TOO_MANY_REDIRECTS: N_(
        "{url} redirected more than {max_redirects} times; giving up."
    ),
    PostRefusal.TOO_COMPLEX: N_("The page at {url} is too complex to read."),
    PostRefusal.NO_ARTICLE: N_("No article text found at {url}."),
    PostRefusal.IMAGE_TOO_LARGE: N_("The image is {size}; images up to {max_size} are checked."),
    PostRefusal.FILE_TOO_LARGE: N_("The file is {size}; images up to {max_size} are checked."),
    PostRefusal.NTH_IMAGE_TOO_LARGE: N_(
        "Image {n} of {of}: the image is {size}; images up to {max_size} are checked."
    ),
    PostRefusal.NTH_FILE_TOO_LARGE: N_(
        "Image {n} of {of}: the file is {size}; images up to {max_size} are checked."
    ),
    PostRefusal.NTH_IMAGE: N_("Image {n} of {of}: {refusal}"),
    PostRefusal.IMAGE_SVG: N_(
        "SVG drawings are not checked; send the image as PNG, JPEG, WebP or GIF."
    ),
    PostRefusal.NOT_AN_IMAGE: N_(
        "This file is not an image I can read; send a PNG, JPEG, WebP or GIF."
    ),
    PostRefusal.IMAGE_DAMAGED: N_("The image is damaged or cut short; send it again."),
    PostRefusal.IMAGE_TOO_MANY_PIXELS: N_(
        "The image is {megapixels} megapixels; images up to {max_megapixels} megapixels "
        "are checked."
    ),
    PostRefusal.IMAGE_OUT_OF_SHAPE: N_(
        "The image is {width}×{height} pixels, too long or thin to read; send the part "
        "that matters."
    ),
    PostRefusal.IMAGES_BUSY: N_(
        "Too many images are being read right now; please send this one again in a minute."
    ),
    PostRefusal.IMAGE_TOO_SLOW: N_(
        "The image took too long to read; send a smaller one, or its text."
    ),
    PostRefusal.VOICE_TOO_LARGE: N_(
        "The voice note is {size}; voice notes up to {max_size} are transcribed."
    ),
    PostRefusal.VOICE_TOO_LONG: N_(
        "The voice note is {duration} long; voice notes up to {max_duration} are transcribed."
    ),
    PostRefusal.VOICE_UNREADABLE: N_(
        "I can transcribe voice notes and audio files in OGG, MP3, M4A, WAV or FLAC, not "
        "this file; send the claim as text."
    ),
    PostRefusal.VOICE_DAMAGED: N_("The voice note is damaged or cut short; send it again."),
    PostRefusal.VOICES_OFF: N_(
        "Voice notes are not transcribed here; send the claim as text, a link to it, or an "
        "image of it."
    ),
    PostRefusal.VOICE_NEEDS_SERVER: N_(
        "Voice notes need a transcription server, and none is set up here; send the claim "
        "as text, a link to it, or an image of it."
    ),
    PostRefusal.VOICE_NOT_TRANSCRIBED: N_(
        "I could not transcribe the voice note just now; please send it again in a few "
        "minutes, or send its words as text."
    ),
    PostRefusal.VOICES_BUSY: N_(
        "Too many voice notes are being transcribed right now; please send this one again "
        "in a minute."
    ),
    PostRefusal.VOICE_TOO_SLOW: N_(
        "The voice note took too long to transcribe; send a shorter one, or its words as text."
    ),
    PostRefusal.LINKS_BUSY: N_(
        "Too many links are being read right now; please send this one again in a minute."
    ),
}

#: the values that are counts, written as the chat's language writes a number
_NUMBERS = frozenset(
    {"count", "max_images", "max_bytes", "max_redirects", "megapixels", "max_megapixels"}
)
#: the values that are sizes (bytes, or a size in words already) and durations (seconds)
_SIZES = frozenset({"size", "max_size"})
_DURATIONS = frozenset({"duration", "max_duration"})


def post_refusal(exc: InvalidPostError, words: Words = ENGLISH) -> str:
    """Why the engine refused a post, in one sentence of ``words``' language (English:
    ``str(exc)``, the same sentence)."""
    if exc.kind is PostRefusal.SAID:
        return str(exc)
    values = {name: _value(name, value, words) for name, value in exc.values.items()}
    return words(POST_REFUSED[exc.kind], **values)


def _value(name: str, value: object, words: Words) -> object:
    """One of a refusal's values as ``words``' language writes it."""
    if isinstance(value, InvalidPostError):  # one image's refusal among several
        return post_refusal(value, words)
    if name in _SIZES and isinstance(value, int):
        return size_in(value, words)
    if name in _DURATIONS and isinstance(value, int | float):
        return duration_in(value, words)
    if name in _NUMBERS and isinstance(value, int):
        return words.number(value)
    return value


def size_in(n: int, words: Words) -> str:
    """A byte count in ``words``' language, rounded as the engine's English rounds it
    (:func:`~zofia_engine.refusals.size_words`): "31 MB", "31 Mo"."""
    if isinstance(n, SizeOver):
        return words(N_("over {size}"), size=size_in(int(n), words))
    number, unit = size_parts(n)
    if unit == "MB":
        return words(N_("{count} MB"), count=number)
    return words(N_("{count} kB"), count=number)


def duration_in(seconds: float, words: Words) -> str:
    """A duration in ``words``' language, in whole seconds rounded up as the engine's
    English does (:func:`~zofia_engine.refusals.duration_words`): "7 minutes 30 seconds"."""
    minutes, rest = duration_parts(seconds)
    parts = []
    if minutes:
        parts.append(words.plural("{count} minute", "{count} minutes", minutes))
    if rest or not minutes:
        parts.append(words.plural("{count} second", "{count} seconds", rest))
    return " ".join(parts)
