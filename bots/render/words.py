"""The fixed words a chat reader gets, in the chat's language.

The card's verdict names, its fixed sentences, the buttons and the renderers' labels
are English in the code; each other language has a gettext catalogue,
``locales/<tag>/LC_MESSAGES/zofia.po`` beside this module. A catalogue is read when a
chat first needs it, with Babel (:func:`babel.messages.pofile.read_po`, compiled in
memory into a :class:`babel.support.Translations`), so there is no compile step and no
``.mo`` file to keep in step with its ``.po``.

Nothing here is global: whoever builds words for a chat is given a :class:`Words`
(:func:`words_for` the chat's language) and passes it on. English is the identity: the
words as the code writes them.

A string is wrapped where it is said: ``words("Confidence")``, ``words("From
{origin}", origin=…)``, ``words.plural("{count} check", "{count} checks", n)``; a
string kept in a table is marked with :func:`N_` and said with ``words(…)`` where it is
used. ``tests/bots/render/test_catalogues.py`` extracts every wrapped string with Babel and checks
that each catalogue translates it.
"""

from __future__ import annotations

import functools
import gettext
import io
from pathlib import Path

from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from babel.numbers import format_decimal, format_percent
from babel.support import Translations

from .languages import ENGLISH_NAME, LANGUAGE_TAGS, own_name

__all__ = [
    "DOMAIN",
    "ENGLISH",
    "LOCALES",
    "N_",
    "Words",
    "catalogue_path",
    "chat_language",
    "language_named",
    "locale_language",
    "translated_languages",
    "words_for",
]

#: the catalogues' gettext domain (their file name)
DOMAIN = "zofia"
#: where the catalogues are: ``<tag>/LC_MESSAGES/zofia.po``
LOCALES = Path(__file__).parent / "locales"


def N_(message: str) -> str:  # gettext's conventional name for the marker
    """Mark ``message`` for the catalogues where it is kept (a table); it is translated
    where it is said, with ``words(message)``."""
    return message


class Words:
    """The fixed words in one language.

    Args:
        tag: the language's BCP 47 tag (``"en"``, ``"fr"``).
        translations: its catalogue; ``None``: none, the words as written (English).
    """

    def __init__(self, tag: str = "en", translations: gettext.NullTranslations | None = None):
        self.tag = tag
        self._catalogue = translations or gettext.NullTranslations()

    def __call__(self, message: str, /, **values: object) -> str:
        """``message`` in this language, with ``{name}`` filled in from ``values``."""
        said = self._catalogue.gettext(message)
        return said.format(**values) if values else said

    def plural(self, singular: str, plural: str, count: int, /, **values: object) -> str:
        """The form for ``count`` of a message with a count (``{count}`` in it), with
        ``{count}`` and ``{name}`` filled in."""
        said = self._catalogue.ngettext(singular, plural, count)
        return said.format(count=self.number(count), **values)

    def number(self, value: int) -> str:
        """A whole number as this language writes it: "12,345", "12.345", "12 345"."""
        return f"{value:,}" if self.tag == "en" else format_decimal(value, locale=self.tag)

    def percent(self, value: float) -> str:
        """A share (0 to 1) as a whole percentage: "87%", "87 %"."""
        return f"{value:.0%}" if self.tag == "en" else format_percent(value, locale=self.tag)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Words) and other.tag == self.tag

    def __hash__(self) -> int:
        return hash(self.tag)

    def __repr__(self) -> str:
        return f"Words({self.tag!r})"


#: the words as the code writes them
ENGLISH = Words()


def catalogue_path(tag: str) -> Path:
    """Where the catalogue of the language ``tag`` is (it may not be there)."""
    return LOCALES / tag / "LC_MESSAGES" / f"{DOMAIN}.po"


@functools.cache
def translated_languages() -> dict[str, str]:
    """The languages with a catalogue, by their English name (as a chat's setting
    stores it): ``{"French": "fr", "German": "de"}``."""
    return {name: tag for name, tag in LANGUAGE_TAGS.items() if catalogue_path(tag).is_file()}


@functools.cache
def _load(tag: str) -> Words:
    with catalogue_path(tag).open("rb") as file:
        catalogue = read_po(file, locale=tag, domain=DOMAIN)
    compiled = io.BytesIO()
    write_mo(compiled, catalogue)  # fuzzy entries are left out, as msgfmt does
    compiled.seek(0)
    return Words(tag, Translations(compiled, domain=DOMAIN))


def words_for(language: str) -> Words:
    """The fixed words of a chat whose language is ``language`` (a stored name,
    ``"French"``; ``""``: English). A language with no catalogue gets English words
    (the panel still writes its own text in it)."""
    tag = translated_languages().get(language)
    return ENGLISH if tag is None else _load(tag)


def locale_language(locale: str | None) -> str:
    """The language of a user's platform locale (Telegram's ``language_code``
    ``"de"``, Discord's ``"fr"`` or ``"en-US"``) as a stored name, when the bot has
    its words (:func:`translated_languages`); ``""`` (English) otherwise."""
    tag = (locale or "").replace("_", "-").split("-")[0].strip().casefold()
    by_tag = {code: name for name, code in translated_languages().items()}
    return by_tag.get(tag, "")


def chat_language(setting: str | None, locale: str | None) -> str:
    """The language a chat is answered in: its ``/settings language`` (``""`` when
    set to English), and in a chat that never set one, the asker's own
    (:func:`locale_language`), else English.

    Args:
        setting: the chat's stored language; ``None`` when it never set one.
        locale: the asker's platform locale, if known.
    """
    return str(setting) if setting is not None else locale_language(locale)


def language_named(language: str, words: Words) -> str:
    """The chat's ``language`` (a stored name; ``""``: English) as a readout in ``words``
    names it: by its own name when ``words`` are its words ("français"), else by its
    English name, the one the settings take ("Japanese")."""
    if words.tag != "en" and LANGUAGE_TAGS.get(language) == words.tag:
        return own_name(language)
    return language or ENGLISH_NAME
