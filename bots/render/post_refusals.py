"""The engine's refusal of a post (:class:`~zofia_engine.errors.InvalidPostError`), said
in the chat's language: one sentence per :class:`~zofia_engine.errors.PostRefusal` kind,
its values filled in (a number as the language writes it). A sentence said already (the
kind ``SAID``: the platform code's own, or an image's or voice note's refusal) is said as
it is."""

from __future__ import annotations

from zofia_engine.errors import InvalidPostError, PostRefusal

from .words import ENGLISH, N_, Words

__all__ = ["POST_REFUSED", "post_refusal"]

#: each kind's sentence, as the catalogues translate it (the same English and the same
#: blanks as the engine's :data:`~zofia_engine.errors.POST_REFUSALS`)
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
}

#: the values that are counts, written as the chat's language writes a number
_NUMBERS = frozenset({"count", "max_images", "max_bytes", "max_redirects"})


def post_refusal(exc: InvalidPostError, words: Words = ENGLISH) -> str:
    """Why the engine refused a post, in one sentence of ``words``' language (English:
    ``str(exc)``, the same sentence)."""
    if exc.kind is PostRefusal.SAID:
        return str(exc)
    values = {
        name: words.number(value) if name in _NUMBERS and isinstance(value, int) else value
        for name, value in exc.values.items()
    }
    return words(POST_REFUSED[exc.kind], **values)
