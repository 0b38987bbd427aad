"""The gettext catalogues of the card's words (``bots/render/locales/*/LC_MESSAGES``).

English is the code's own words: every string the code wraps (``words("…")``,
``words.plural("…", "…", n)``, ``N_("…")``), extracted from ``bots/`` with Babel at run
time, so that a message added to the code fails here until every catalogue says it.
Each catalogue must:

- translate every such message, with no empty or fuzzy entry, and keep no entry the code
  no longer says;
- fill the same blanks as the English, each with its conversion and format spec
  (``{count}``, ``{wait}``, ``{value:.0%}``, ``%(name)s``), and no other; a plural form
  that only one number takes (Arabic's "one" and "two") may say it in words instead of
  ``{count}``;
- have the plural forms of its language: as many as the CLDR plural categories Babel
  knows for it (``babel.Locale.plural_form``) over whole numbers, in CLDR's order, and a
  ``Plural-Forms`` rule that picks each number's category (Arabic six, Russian three,
  Indonesian one); Babel's own checkers (``Catalog.check``) find nothing.
"""

from __future__ import annotations

import functools
import gettext
import re
import string
from collections.abc import Callable
from pathlib import Path

import pytest
from babel import Locale
from babel.messages.catalog import Catalog
from babel.messages.extract import extract_from_file
from babel.messages.pofile import read_po

import bots
from bots.render.languages import LANGUAGE_TAGS
from bots.render.privacy import PRIVACY_TITLE, privacy_paragraphs, privacy_text
from bots.render.words import DOMAIN, LOCALES, translated_languages, words_for

#: how the code wraps a string (bots/render/words.py): words("…"), words.plural("…",
#: "…", n), and N_("…") for a string kept in a table
KEYWORDS = {"words": None, "plural": (1, 2), "N_": None}
#: the languages the card must be able to speak (issue 40), beside English
REQUIRED = {"de", "fr", "es", "pt", "hi", "id", "ar", "ru", "it"}
#: CLDR's order of the plural categories, which gettext's forms follow
CATEGORIES = ("zero", "one", "two", "few", "many", "other")
#: the whole numbers a rule is compared on (a million is "many" in CLDR for French,
#: Spanish, Italian and Portuguese, which gettext's two forms do not tell apart; the
#: bot's counts stay far below it)
NUMBERS = range(1001)
_FIELDS = string.Formatter()
_PERCENT = re.compile(r"%(?:\((\w+)\))?[-#0 +]*\d*(?:\.\d+)?[diouxXeEfFgGcrsa%]")

Message = str | tuple[str, ...] | list[str]  # as Babel types an id: a plural's is a tuple


def _wrapped() -> list[Message]:
    """Every string the code wraps, in bots/, as Babel extracts it (a new list each call,
    of one extraction a session)."""
    return list(_extracted())


@functools.cache
def _extracted() -> tuple[Message, ...]:
    """Babel's extraction of every file of bots/ (about 0.4 s), made once: nineteen tests
    read it, and none changes the code it reads."""
    found: list[Message] = []
    for path in sorted(Path(bots.__file__).parent.rglob("*.py")):
        for _, message, _, _ in extract_from_file("python", str(path), keywords=KEYWORDS):
            if message not in found:
                found.append(message)
    return tuple(found)


def _catalogues() -> list[Path]:
    return sorted(LOCALES.glob(f"*/LC_MESSAGES/{DOMAIN}.po"))


def _read(path: Path) -> Catalog:
    with path.open("rb") as file:
        return read_po(file, locale=path.parts[-3], domain=DOMAIN)


def _key(message: Message) -> str:
    return message if isinstance(message, str) else message[0]


def blanks(text: str) -> set[str]:
    """The blanks ``text`` fills: ``{name}``, ``{name!r:>4}``, ``%(name)s``, ``%d``.

    Raises:
        ValueError: a brace is not closed or not doubled (``str.format`` would fail).
    """
    found = {
        "{" + name + (f"!{conversion}" if conversion else "") + (f":{spec}" if spec else "") + "}"
        for _, name, spec, conversion in _FIELDS.parse(text)
        if name is not None
    }
    return found | {match[0] for match in _PERCENT.finditer(text) if match[0] != "%%"}


def plural_rule(catalogue: Catalog) -> Callable[[int], int]:
    """The catalogue's ``Plural-Forms`` rule, as gettext evaluates it."""
    return gettext.c2py(catalogue.plural_expr)


def cldr_forms(tag: str) -> list[str]:
    """The plural categories whole numbers take in the language ``tag``, in CLDR's order:
    the forms its catalogue must have."""
    rule = Locale.parse(tag).plural_form
    taken = {rule(n) for n in NUMBERS}
    return [category for category in CATEGORIES if category in taken]


def single_number_forms(catalogue: Catalog) -> set[int]:
    """The forms only one whole number takes (Arabic's 0, 1 and 2): those may say the
    number in words."""
    rule = plural_rule(catalogue)
    taken: dict[int, set[int]] = {}
    for n in NUMBERS:
        taken.setdefault(rule(n), set()).add(n)
    return {form for form, numbers in taken.items() if len(numbers) == 1}


def problems(catalogue: Catalog, wrapped: list[Message]) -> list[str]:
    """What is wrong with ``catalogue`` against the code's messages, one line each."""
    found: list[str] = []
    single = single_number_forms(catalogue)
    for message in wrapped:
        key = _key(message)
        entry = catalogue.get(key)
        if entry is None:
            found.append(f"no entry for {key!r}")
            continue
        if entry.fuzzy:
            found.append(f"{key!r} is fuzzy")
        forms = entry.string if isinstance(entry.string, tuple) else (entry.string,)
        if isinstance(message, tuple) != isinstance(entry.id, tuple):
            found.append(f"{key!r}: a plural in one and not in the other")
            continue
        english = blanks(key) | (blanks(message[1]) if isinstance(message, tuple) else set())
        for index, form in enumerate(forms):
            assert isinstance(form, str), key  # read_po gives "" for an empty one
            if not form.strip():
                found.append(f"{key!r} form {index} is not translated")
                continue
            try:
                said = blanks(form)
            except ValueError as exc:
                found.append(f"{key!r} → {form!r}: {exc}")
                continue
            if said != english and not (
                isinstance(message, tuple) and index in single and said == english - {"{count}"}
            ):
                found.append(f"{key!r} → {form!r}: fills {sorted(said)}, not {sorted(english)}")
    said_by_code = {_key(message) for message in wrapped}
    stale = sorted(_key(m.id) for m in catalogue if m.id and _key(m.id) not in said_by_code)
    found += [f"entry no code says: {key!r}" for key in stale]
    return found


# ------------------------------------------------------------------------------ the tests


def test_the_languages_the_card_speaks() -> None:
    assert {path.parts[-3] for path in _catalogues()} >= REQUIRED
    assert set(translated_languages().values()) == {path.parts[-3] for path in _catalogues()}
    assert set(translated_languages().values()) <= set(LANGUAGE_TAGS.values())
    wrapped = _wrapped()
    assert len(wrapped) > 60 and "Misleading: missing context" in wrapped


@pytest.mark.parametrize("path", _catalogues(), ids=lambda path: path.parts[-3])
def test_a_catalogue_translates_every_message_with_its_blanks(path: Path) -> None:
    catalogue = _read(path)
    assert catalogue.locale is not None and str(catalogue.locale) == path.parts[-3]
    found = problems(catalogue, _wrapped())
    assert not found, "\n".join(found)
    assert not [errors for _, errors in catalogue.check()]  # Babel's own checkers


@pytest.mark.parametrize("path", _catalogues(), ids=lambda path: path.parts[-3])
def test_a_catalogue_has_its_languages_plural_forms(path: Path) -> None:
    tag = path.parts[-3]
    catalogue = _read(path)
    forms = cldr_forms(tag)
    assert catalogue.num_plurals == len(forms), catalogue.plural_forms
    rule, cldr = plural_rule(catalogue), Locale.parse(tag).plural_form
    wrong = [n for n in NUMBERS if rule(n) != forms.index(cldr(n))]
    assert not wrong, f"{tag}: {catalogue.plural_forms} picks the wrong form for {wrong[:10]}"
    for message in catalogue:
        if isinstance(message.id, tuple):
            assert isinstance(message.string, tuple), message.id
            assert len(message.string) == len(forms), message.id


def test_the_required_languages_have_the_forms_the_brief_names() -> None:
    counts = {tag: len(cldr_forms(tag)) for tag in ("ar", "ru", "id", "pt", "fr", "de")}
    assert counts == {"ar": 6, "ru": 3, "id": 1, "pt": 2, "fr": 2, "de": 2}


@pytest.mark.parametrize("path", _catalogues(), ids=lambda path: path.parts[-3])
def test_a_catalogue_is_what_the_bot_reads(path: Path) -> None:
    """The bot compiles the catalogue in memory (bots/render/words.py): the verdict's
    name, a plural, and the Discord embed's "Checked" prefix come out of it."""
    tag = path.parts[-3]
    name = next(name for name, code in translated_languages().items() if code == tag)
    words = words_for(name)
    assert words.tag == tag
    catalogue = _read(path)
    assert words("False") == catalogue["False"].string
    entry = catalogue["{count} image"]
    assert isinstance(entry.string, tuple)
    assert words.plural("{count} image", "{count} images", 3) == entry.string[
        plural_rule(catalogue)(3)
    ].format(count=3)
    # The embed's "Checked" field shows what follows the words of "Checked: {read}"
    # (bots/discord/render.py): both sentences start with them.
    prefix = words("Checked: {read}", read="")
    assert words("Checked: the caption and {read}", read="x").startswith(prefix)
    assert words("Checked: {read}", read="x") == prefix + "x"


def test_the_checks_catch_a_broken_catalogue() -> None:
    """The comparison itself: a dropped, renamed, retyped or unclosed blank, an empty
    form, a missing message and a stale one are each found."""
    wrapped: list[Message] = [
        "Too many checks for now: please try again in {wait}.",
        ("{count} image", "{count} images"),
        "Confidence",
        "{value:.0%} sure",
    ]
    catalogue = Catalog(locale="ru")
    catalogue.add(wrapped[0], "Слишком много проверок: попробуйте через {pause}.")
    catalogue.add(wrapped[1], ("{count} изображение", "", "изображений"))
    catalogue.add(wrapped[3], "{value:.1%} уверенности")
    catalogue.add("Gone", "Нет")
    found = problems(catalogue, wrapped)
    assert len(found) == 6, found
    assert "no entry for 'Confidence'" in found
    assert "entry no code says: 'Gone'" in found
    assert any("{pause}" in line for line in found)
    assert any("form 1 is not translated" in line for line in found)
    assert any("изображений" in line for line in found)  # {count} dropped: many numbers
    assert any("{value:.1%}" in line for line in found)
    assert blanks("%(name)s and %d, 100%%") == {"%(name)s", "%d"}
    with pytest.raises(ValueError):
        blanks("один {count")


@pytest.mark.parametrize("path", _catalogues(), ids=lambda path: path.parts[-3])
def test_a_catalogue_says_the_privacy_text_with_its_days(path: Path) -> None:
    """/privacy's text is in every catalogue: its title and each paragraph translated,
    the retention's days in each plural form (the days agree with the number), and the
    text of a deployment that keeps checks until they are deleted."""
    name = next(name for name, code in translated_languages().items() if code == path.parts[-3])
    words = words_for(name)
    wrapped = _wrapped()
    assert PRIVACY_TITLE in wrapped and words(PRIVACY_TITLE) != PRIVACY_TITLE
    for days in (1, 2, 5, 11, 21, 45, 100, 365):  # every language's every plural form
        english, said = privacy_paragraphs(days), privacy_paragraphs(days, words)
        assert len(said) == len(english) == 6
        assert [mine == theirs for mine, theirs in zip(said, english, strict=True)] == [False] * 6
        # "after N days … no check for N days", and "deleted after N days" again.
        assert [p.count(str(days)) for p in said] == [0, 2, 0, 0, 1, 0], (days, said)
    kept = privacy_paragraphs(None, words)
    assert not set(kept) & set(privacy_paragraphs(None)) and "{" not in "".join(kept)
    assert privacy_text(30, words).startswith(words(PRIVACY_TITLE) + "\n\n")
