"""Not a bench script: the baseline of ``bench/language_detect.py`` (``bench/lib/`` holds
such). The stopword counter ``zofia_engine/language.py`` was until a library replaced it,
kept as it was, with one change: :func:`detect_language` answers ``""`` where it answered
English for a text too short or too mixed to tell, so the bench counts that as unsure.

It counts each language's stopwords (articles, pronouns, prepositions, auxiliaries); each
word found counts for every language it is a stopword of, split between them, and the
language with the highest score wins when it is clearly ahead. It knows 7 languages.
"""

from __future__ import annotations

import re
from collections import Counter

__all__ = ["DETECTED", "detect_language", "language_scores"]

#: the least score (stopwords found, shared ones split) the winner needs
MIN_SCORE = 1.5
#: how far ahead of the runner-up the winner must be, as a share of its score
MIN_LEAD = 0.2
#: only the start of a long post is read: a few sentences tell its language
MAX_CHARS = 4000

_STOPWORDS: dict[str, str] = {
    "en": """the a an and or but of to in on at for with from by is are was were be been
        has have had will would it its this that these those they he she his her their
        we you i not as which who what said says after than there about into more can
        all also over one two if because him them our your my do does did just only
        now then when where out""",
    "de": """der die das den dem des ein eine einen einem einer und oder aber ist sind
        war waren wird werden wurde wurden hat haben hatte nicht kein keine mit von zu
        zum zur auf für im am bei nach aus auch sich es er sie wir ich dass daß als wie
        noch nur schon über unter vor durch dieser diese dieses sein seine ihre mehr
        zwei alle wenn weil man um bis gegen seit doch was wer ihm ihn uns sei""",
    "fr": """le la les un une des du de et ou mais est sont était a ont été sera il elle
        ils elles nous vous on ce cette ces qui que dans sur pour par avec sans pas
        ne n' plus au aux en l' d' se s' son sa ses leur leurs y comme aussi selon après
        avant très tout tous toute toutes deux entre depuis dont chez lors même où
        cela ça être avoir fait je j' tu me te moi mon ma mes c' notre votre qu'""",
    "es": """el la los las un una unos unas y o pero es son era fue fueron ha han había
        está están de del al en con por para sin que se su sus lo le les no más como
        también este esta estos ese esa muy hay cuando donde según entre sobre ya
        desde hasta durante dos ni todo todos todas otro otra porque así solo aunque
        tiene tienen ser cada""",
    "it": """il lo la i gli le un uno una e o ma è sono era erano stato stata ha hanno
        di del della dei delle dello degli al alla ai nel nella nei con per su sul
        sulla da dal dalla che non si suo sua loro come anche più questo questa dopo
        tra fra secondo molto ci l' dell' all' nell' sull' un' due tutti tutte tutto ogni
        perché però ancora già cui essere allo agli alle negli nello quello quella""",
    "nl": """de het een en of maar is zijn was waren wordt worden werd heeft hebben had
        niet geen met van voor op in aan bij naar uit ook zich hij zij ze we wij ik
        dat die dit deze als om te tot door over nog al er meer dan wel kan zal je
        jij zo hun haar zou zouden nu na omdat wat wie twee alle tegen""",
    "pt": """o a os as um uma uns umas e ou mas é são foi foram era está estão tem têm
        de do da dos das no na nos nas em ao aos à com por pelo pela para sem que se
        seu sua seus suas não mais como também este esta isso isto ele ela eles elas
        muito já quando onde segundo entre sobre até após dois duas todos todas
        porque ser num numa nem às sempre ainda depois essa esse""",
}
#: the languages the detector tells apart
DETECTED = tuple(_STOPWORDS)


def _weights() -> dict[str, dict[str, float]]:
    """Each stopword's weight for each language it belongs to: 1, split between them."""
    owners: dict[str, list[str]] = {}
    for code, words in _STOPWORDS.items():
        for word in set(words.casefold().split()):
            owners.setdefault(word, []).append(code)
    return {word: {code: 1.0 / len(codes) for code in codes} for word, codes in owners.items()}


_WEIGHTS = _weights()
# A word: letters, with the apostrophe of an elision ("l'homme" is "l'" and "homme");
# "2024" is none. A link says nothing of the post's language: it is left out.
_WORD = re.compile(r"[^\W\d_]+(?:'(?=[^\W\d_]))?")
_LINK = re.compile(r"(?:https?://|www\.)\S+", re.IGNORECASE)


def language_scores(text: str) -> dict[str, float]:
    """Each detected language's score for ``text``: the stopwords of it found there,
    a word shared by ``k`` languages counting ``1/k`` for each (every language is
    listed, at 0 when none was found)."""
    scores = dict.fromkeys(DETECTED, 0.0)
    plain = _LINK.sub(" ", text[:MAX_CHARS]).replace("’", "'").casefold()
    words = Counter(_WORD.findall(plain))
    for word, count in words.items():
        for code, share in _WEIGHTS.get(word, {}).items():
            scores[code] += share * count
    return scores


def detect_language(text: str) -> str:
    """The ISO 639-1 code of the language ``text`` is written in, one of
    :data:`DETECTED`; ``""`` (the engine said English) when the text is too short or too
    mixed to tell: the best score under :data:`MIN_SCORE`, or less than
    :data:`MIN_LEAD` ahead of the next."""
    ranked = sorted(language_scores(text).items(), key=lambda item: -item[1])
    (best, score), (_, second) = ranked[0], ranked[1]
    if score < MIN_SCORE or score - second < MIN_LEAD * score:
        return ""
    return best
