"""Which language a post is written in, told offline by py3langid.

py3langid (BSD-3-Clause, langid.py's naive Bayes model over byte n-grams, maintained
fork) ships its model in its wheel (4.6 MB) and needs nothing else at run time but
numpy. It is asked only about :data:`DETECTED`, the languages the project names (the
chats' languages of ``bots/render/languages.py``, and English), plus its own "no
linguistic content" class, with its probabilities normalised; Norwegian Nynorsk counts
as Norwegian. ``bench/language_detect.py`` measured it against lingua-language-detector
and the stopword counter it replaced (``docs/languages.md``).

The answer is an ISO 639-1 code of :data:`DETECTED`, or ``""`` (:data:`DEFAULT`,
unknown) when the best language's probability is under :data:`MIN_CONFIDENCE`: a
name, a number, "lol ok", an emoji, a link alone. The engine uses it as a hint only
(the web search's language, the claims' language, the published fact-checks'):
unknown gives no hint, and a wrong guess narrows a search, it never refuses a post.

The model (about 85 MB in memory, a second to read) is loaded on the first call, once
whatever the number of threads asking, or beforehand by :func:`load_detector`
(``Engine.load`` does); importing this module loads nothing.
"""

from __future__ import annotations

import functools
import re
import threading
from typing import Any

__all__ = [
    "DEFAULT",
    "DETECTED",
    "LANGUAGE_NAMES",
    "MIN_CONFIDENCE",
    "detect_language",
    "language_scores",
    "load_detector",
]

#: the answer for a text too short, too mixed or too bare to tell: unknown
DEFAULT = ""
#: the least probability the best language needs to be the answer. The bench's
#: undecidable texts peak at 0.47 ("Lewandowski" as Polish) and its 160 labelled
#: sentences in 8 languages, 96 of them short, start at 0.52
#: (``bench/language_detect.py``)
MIN_CONFIDENCE = 0.5
#: only the start of a long post is read: a few sentences tell its language
MAX_CHARS = 4000

#: each language the detector tells, ISO 639-1, by its English name (as the chat
#: settings and the prompts name it): ``bots/render/languages.py``'s, and English
LANGUAGE_NAMES = {
    "ar": "Arabic",
    "bn": "Bengali",
    "cs": "Czech",
    "da": "Danish",
    "de": "German",
    "el": "Greek",
    "en": "English",
    "es": "Spanish",
    "fa": "Persian",
    "fi": "Finnish",
    "fr": "French",
    "he": "Hebrew",
    "hi": "Hindi",
    "hu": "Hungarian",
    "id": "Indonesian",
    "it": "Italian",
    "ja": "Japanese",
    "ko": "Korean",
    "ms": "Malay",
    "nl": "Dutch",
    "no": "Norwegian",
    "pl": "Polish",
    "pt": "Portuguese",
    "ro": "Romanian",
    "ru": "Russian",
    "sv": "Swedish",
    "sw": "Swahili",
    "th": "Thai",
    "tl": "Tagalog",
    "tr": "Turkish",
    "uk": "Ukrainian",
    "ur": "Urdu",
    "vi": "Vietnamese",
    "zh": "Chinese",
}
#: the languages the detector tells apart
DETECTED = tuple(LANGUAGE_NAMES)
# The model's other labels it is asked about: what each one counts as ("": none).
_ALSO = {"nn": "no", "zxx": ""}
# A link or an @handle says nothing of the post's language: they are left out.
_NOT_WORDS = re.compile(r"(?:https?://|www\.)\S+|(?<!\w)@\w+", re.IGNORECASE)
_LETTER = re.compile(r"[^\W\d_]")


#: one load at a time: threads asking at once load the model once
_LOADING = threading.Lock()


@functools.cache
def _loaded() -> Any:
    """py3langid's LanguageIdentifier (untyped), loaded on first use and kept."""
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    identifier = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
    identifier.set_languages([*DETECTED, *_ALSO])
    return identifier


def _identifier() -> Any:
    with _LOADING:
        return _loaded()


def load_detector() -> None:
    """Load the model now, if no call has yet (it is loaded once)."""
    _identifier()


def language_scores(text: str) -> dict[str, float]:
    """Each detected language's probability for ``text`` (every one listed; all 0 for a
    text with no letters once its links and @handles are left out)."""
    scores = dict.fromkeys(DETECTED, 0.0)
    plain = _NOT_WORDS.sub(" ", text[:MAX_CHARS])
    if not _LETTER.search(plain):
        return scores
    for label, probability in _identifier().rank(plain):
        code = _ALSO.get(label, label)
        if code:
            scores[code] += float(probability)
    return scores


def detect_language(text: str) -> str:
    """The ISO 639-1 code of the language ``text`` is written in, one of
    :data:`DETECTED`; ``""`` (:data:`DEFAULT`, unknown) when no language reaches
    :data:`MIN_CONFIDENCE`."""
    best, probability = max(language_scores(text).items(), key=lambda item: item[1])
    return best if probability >= MIN_CONFIDENCE else DEFAULT
