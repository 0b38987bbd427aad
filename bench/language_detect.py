"""The post's language: two offline detectors against the old stopword counter, on the
same sentences.

The sentences are ``bench/data/language_sentences.tsv``: 20 in each of English, German,
French, Spanish, Italian, Dutch, Portuguese and Polish, 12 short (3 to 8 words, as chat
posts are) and 8 medium (15 to 30 words), written for this bench, and 10 texts no
detector can tell the language of (a link, a name, "lol ok", emoji). Every row is asked
the same texts, each in its own fresh process:

- ``stopwords``: the counter the engine had (``bench/lib/stopword_language.py``), which
  knows 7 of the 8 languages (no Polish);
- ``py3langid``: langid.py's naive Bayes model (``LanguageIdentifier``, normalised
  probabilities), restricted to the languages the project names
  (``bots/render/languages.py``, and English) plus its "no linguistic content" class;
- ``lingua``: lingua-language-detector in its default high-accuracy mode, its models
  preloaded, restricted the same way; ``lingua_low`` the same in its low-accuracy mode;
- ``engine``: ``zofia_engine.language.detect_language`` as it ships (the chosen library,
  its threshold, the links taken out first).

A library's answer counts only when its confidence (its top probability) reaches the
row's threshold (:data:`THRESHOLDS`); below it the row says "unsure" (``""``), as the
engine does. For the libraries, a table shows the same answers at other thresholds.

    pip install lingua-language-detector==2.1.1   # the candidate not chosen: not in the lock
    python bench/language_detect.py [--rounds 5] [--smoke]

A row whose package is not installed is left out, and the bench says so.

Per row: ``accuracy`` (right answers over the 160 labelled sentences; unsure is not
right), ``short_accuracy`` (over the 96 short ones), ``unsure`` and ``wrong`` (shares of
the labelled sentences answered "" and answered another language), ``undecidable_unsure``
(share of the 10 undecidable texts answered ""), ``us_per_call`` (mean microseconds of
one call, over ``--rounds`` passes after the first), ``import_s`` (import, build and the
first call, in a fresh process), ``rss_mb`` (resident memory that added, numpy already
imported as the engine has it), ``wheel_mb`` (the size of the files the package
installed, from its RECORD). The last line is one JSON object, one key per row.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import re
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from lib.smoke import smoke_args

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "bench" / "data" / "language_sentences.tsv"
UNDECIDABLE = "?"
SHORT = range(3, 9)  # words
MEDIUM = range(15, 31)
_WORD = re.compile(r"[^\W\d_]+(?:['’-][^\W\d_]+)*")

Detect = Callable[[str], tuple[str, float]]  # (ISO 639-1 code or "", confidence)

#: each row's confidence threshold: an answer below it is "unsure". A library's is its
#: best in its table: no wrong answer, and as many undecidable texts unsure as that
#: allows without losing right answers (py3langid's is the engine's MIN_CONFIDENCE);
#: the rows that answer "" themselves (stopwords, engine) need none
THRESHOLDS = {"stopwords": 0.0, "py3langid": 0.5, "lingua": 0.5, "lingua_low": 0.95, "engine": 0.0}
#: the thresholds each library's table shows
SWEEP = (0.0, 0.3, 0.5, 0.7, 0.8, 0.9, 0.95, 0.99)
#: the package behind each row, for its size (the engine's: the one it uses)
PACKAGES = {
    "stopwords": None,
    "py3langid": "py3langid",
    "lingua": "lingua-language-detector",
    "lingua_low": "lingua-language-detector",
    "engine": "py3langid",
}


def sentences() -> list[tuple[str, str]]:
    """The bench's ``(code, text)`` pairs, ``code`` ``"?"`` for the undecidable texts."""
    pairs = []
    for line in DATA.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        code, text = line.split("\t")
        words = len(_WORD.findall(text))
        if code != UNDECIDABLE and words not in SHORT and words not in MEDIUM:
            raise ValueError(f"{text!r}: {words} words, neither short nor medium")
        pairs.append((code, text))
    return pairs


def project_codes() -> list[str]:
    """The languages the project names (a chat's languages, and English)."""
    from bots.render.languages import LANGUAGE_TAGS

    return sorted({"en", *LANGUAGE_TAGS.values()})


# ------------------------------------------------------------------ the rows' detectors


def load_stopwords() -> Detect:
    sys.path.insert(0, str(ROOT / "bench"))
    from lib.stopword_language import detect_language

    def detect(text: str) -> tuple[str, float]:
        code = detect_language(text)
        return code, float(bool(code))

    return detect


def load_py3langid() -> Detect:
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    identifier = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
    # "nn" (Nynorsk) is Norwegian too; "zxx" is the model's "no linguistic content".
    identifier.set_languages([*project_codes(), "nn", "zxx"])
    names = {"nn": "no", "zxx": ""}

    def detect(text: str) -> tuple[str, float]:
        code, confidence = identifier.classify(text)
        return names.get(code, code), float(confidence)

    return detect


def _load_lingua(low: bool) -> Detect:
    from lingua import IsoCode639_1, Language, LanguageDetectorBuilder

    wanted = set(project_codes()) | {"nb", "nn"}  # lingua has no "no": Bokmål, Nynorsk
    languages = [
        language for language in Language.all() if language.iso_code_639_1.name.lower() in wanted
    ]
    assert len(languages) == len(wanted) - 1, "a project language lingua lacks"
    builder = LanguageDetectorBuilder.from_languages(*languages).with_preloaded_language_models()
    detector = (builder.with_low_accuracy_mode() if low else builder).build()
    names = {IsoCode639_1.NB: "no", IsoCode639_1.NN: "no"}

    def detect(text: str) -> tuple[str, float]:
        values = detector.compute_language_confidence_values(text)
        if not values or values[0].value <= 0.0:
            return "", 0.0
        iso = values[0].language.iso_code_639_1
        return names.get(iso, iso.name.lower()), float(values[0].value)

    return detect


def load_engine() -> Detect:
    from zofia_engine.language import detect_language

    def detect(text: str) -> tuple[str, float]:
        code = detect_language(text)
        return code, float(bool(code))

    return detect


LOADERS: dict[str, Callable[[], Detect]] = {
    "stopwords": load_stopwords,
    "py3langid": load_py3langid,
    "lingua": lambda: _load_lingua(low=False),
    "lingua_low": lambda: _load_lingua(low=True),
    "engine": load_engine,
}


# ------------------------------------------------------------ one row, in its own process


def _rss() -> int:
    import psutil

    return int(psutil.Process().memory_info().rss)


def run_row(name: str, rounds: int) -> dict[str, object]:
    """One row's answers and costs, measured in this (fresh) process."""
    import numpy  # noqa: F401 - the engine imports it anyway: not the row's memory

    texts = [text for _, text in sentences()]
    before = _rss()
    started = time.perf_counter()
    detect = LOADERS[name]()
    detect("A first call, which may load what the build left for later.")
    import_s = time.perf_counter() - started
    answers = [detect(text) for text in texts]
    rss = _rss() - before
    started = time.perf_counter()
    for _ in range(rounds):
        for text in texts:
            detect(text)
    per_call = (time.perf_counter() - started) / (rounds * len(texts))
    return {
        "answers": answers,
        "import_s": round(import_s, 3),
        "rss_mb": round(rss / 1e6, 1),
        "us_per_call": round(per_call * 1e6, 1),
    }


# ------------------------------------------------------------------------- the summary


def wheel_mb(package: str | None) -> float:
    """The size of the files ``package`` installed (its RECORD), in MB."""
    if package is None:
        return 0.0
    files = importlib.metadata.distribution(package).files or []
    return round(sum(f.size or 0 for f in files) / 1e6, 1)


def installed(package: str | None) -> bool:
    try:
        return package is None or bool(importlib.metadata.version(package))
    except importlib.metadata.PackageNotFoundError:
        return False


def score(pairs: list[tuple[str, str]], answers: list[str]) -> dict[str, float]:
    """Accuracy overall and on short sentences, unsure, wrong, undecidable caught."""
    labelled = [(c, t, a) for (c, t), a in zip(pairs, answers, strict=True) if c != UNDECIDABLE]
    short = [(c, a) for c, t, a in labelled if len(_WORD.findall(t)) in SHORT]
    undecidable = [a for (c, _), a in zip(pairs, answers, strict=True) if c == UNDECIDABLE]
    n = len(labelled)
    return {
        "accuracy": round(sum(c == a for c, _, a in labelled) / n, 3),
        "short_accuracy": round(sum(c == a for c, a in short) / len(short), 3),
        "unsure": round(sum(a == "" for _, _, a in labelled) / n, 3),
        "wrong": round(sum(a not in ("", c) for c, _, a in labelled) / n, 3),
        "undecidable_unsure": round(sum(a == "" for a in undecidable) / len(undecidable), 3),
    }


def margins(pairs: list[tuple[str, str]], raw: list[tuple[str, float]]) -> str:
    """The highest probability an undecidable text got, and the lowest a right answer
    got: the room the threshold has."""
    undecidable = [(p, t) for (c, t), (_, p) in zip(pairs, raw, strict=True) if c == UNDECIDABLE]
    right = [(p, t) for (c, t), (a, p) in zip(pairs, raw, strict=True) if a == c]
    high, low = max(undecidable), min(right)
    return (
        f"undecidable texts at most {high[0]:.2f} ({high[1]!r}); "
        f"right answers at least {low[0]:.2f} ({low[1]!r})"
    )


def thresholded(answers: list[tuple[str, float]], threshold: float) -> list[str]:
    return [code if confidence >= threshold else "" for code, confidence in answers]


def per_language(pairs: list[tuple[str, str]], answers: list[str]) -> str:
    """Right answers per language, short/medium (of 12/8)."""
    cells = []
    for code in dict.fromkeys(c for c, _ in pairs if c != UNDECIDABLE):
        rows = [(t, a) for (c, t), a in zip(pairs, answers, strict=True) if c == code]
        short = sum(a == code for t, a in rows if len(_WORD.findall(t)) in SHORT)
        medium = sum(a == code for t, a in rows if len(_WORD.findall(t)) in MEDIUM)
        cells.append(f"{code} {short:>2}/{medium}")
    return "  ".join(cells)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="timed passes over the texts")
    parser.add_argument("--row", choices=sorted(LOADERS), help=argparse.SUPPRESS)
    args = smoke_args(parser, {"rounds": 1})
    if args.row:  # the child process of one row
        print(json.dumps(run_row(args.row, args.rounds)))
        return

    pairs = sentences()
    figures: dict[str, dict[str, float]] = {}
    print(f"{len(pairs)} texts; right answers per language, short/medium (of 12/8)")
    for name in LOADERS:
        if not installed(PACKAGES[name]):
            print(f"{name:>10}: left out, {PACKAGES[name]} is not installed")
            continue
        out = subprocess.run(
            [sys.executable, __file__, "--row", name, "--rounds", str(args.rounds)],
            capture_output=True,
            text=True,
            check=True,
            cwd=ROOT,
        )
        row = json.loads(out.stdout.splitlines()[-1])
        raw = [(code, confidence) for code, confidence in row["answers"]]
        answers = thresholded(raw, THRESHOLDS[name])
        figures[name] = {
            **score(pairs, answers),
            "us_per_call": row["us_per_call"],
            "import_s": row["import_s"],
            "rss_mb": row["rss_mb"],
            "wheel_mb": wheel_mb(PACKAGES[name]),
        }
        print(f"{name:>10} (threshold {THRESHOLDS[name]}): {per_language(pairs, answers)}")
        if name == "py3langid":
            print(f"{'':>12}{margins(pairs, raw)}")
        if name in ("py3langid", "lingua", "lingua_low"):
            for threshold in SWEEP:
                s = score(pairs, thresholded(raw, threshold))
                print(
                    f"{'':>12}at {threshold:<4}: accuracy {s['accuracy']:.3f}, short "
                    f"{s['short_accuracy']:.3f}, unsure {s['unsure']:.3f}, wrong "
                    f"{s['wrong']:.3f}, undecidable unsure {s['undecidable_unsure']:.1f}"
                )

    header = ("accuracy", "short_accuracy", "unsure", "wrong", "undecidable_unsure")
    costs = ("us_per_call", "import_s", "rss_mb", "wheel_mb")
    print(f"\n{'row':>10} " + " ".join(f"{k:>18}" for k in (*header, *costs)))
    for name, f in figures.items():
        print(f"{name:>10} " + " ".join(f"{f[k]:>18}" for k in (*header, *costs)))
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
