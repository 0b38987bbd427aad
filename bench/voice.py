"""Voice notes heard offline: the packaged Whisper base (faster-whisper, int8, on the CPU)
on the spoken voice notes of ``tests/data/voice`` (English and Portuguese; OGG/Opus, MP3
and M4A; a little over 5 s each), through the engine's reader: the caps and the header
read, the file decoded and heard, the words cleaned.

    python bench/voice.py [--notes 4] [--rounds 2] [--threads 2] [--smoke]

Prints per voice note the time to hear it and its word error rate against the sentence
spoken; the last line is one JSON object: the model's load (ms, once), the time to hear a
voice note (p50 and max, ms; the first round is the warm-up and is not counted when there
are more), the real-time factor (time to hear / the note's duration, p50), the mean and
worst word error rate, and the peak RSS the model and the hearing added (MB).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import resource
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from lib.smoke import smoke_args

from tests.peers.fixtures.audio import SAID, voice

from zofia_engine.audio.reader import VoiceReader
from zofia_engine.audio_settings import AudioSettings

#: the voice notes heard, each with the language it is in (a key of SAID)
NOTES = [("en.ogg", "en"), ("pt.ogg", "pt"), ("en.mp3", "en"), ("en.m4a", "en")]
_WORD = re.compile(r"\w+")


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def wer(heard: str, said: str) -> float:
    """The word error rate of ``heard`` against ``said``: word edits over words said,
    both lower-cased, punctuation aside."""
    ref, hyp = _WORD.findall(said.casefold()), _WORD.findall(heard.casefold())
    row = list(range(len(hyp) + 1))
    for i, word in enumerate(ref, 1):
        prev, row[0] = row[0], i
        for j, other in enumerate(hyp, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (word != other))
    return row[-1] / max(len(ref), 1)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notes", type=int, default=len(NOTES))
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--threads", type=int, default=AudioSettings().threads)
    args = smoke_args(parser, {"notes": 1, "rounds": 1})
    reader = VoiceReader(AudioSettings(backend="embedded", threads=args.threads))
    before = peak_mb()
    started = time.perf_counter()
    reader.load()
    load_ms = (time.perf_counter() - started) * 1000
    times, factors, errors = [], [], []
    for round_ in range(1, args.rounds + 1):
        for name, language in NOTES[: args.notes]:
            started = time.perf_counter()
            transcript = await reader.read(voice(name))
            ms = (time.perf_counter() - started) * 1000
            error = wer(transcript.text, SAID[language])
            print(f"{round_} {name:7s} {ms:7.0f} ms  WER {error:.3f}  {transcript.text!r}")
            if round_ > 1 or args.rounds == 1:
                times.append(ms)
                factors.append(ms / 1000 / transcript.duration_s)
                errors.append(error)
    await reader.aclose()
    print(
        json.dumps(
            {
                "notes": args.notes,
                "rounds": args.rounds,
                "threads": args.threads,
                "load_ms": round(load_ms),
                "hear_p50_ms": round(statistics.median(times)),
                "hear_max_ms": round(max(times)),
                "real_time_factor_p50": round(statistics.median(factors), 3),
                "wer_mean": round(statistics.mean(errors), 4),
                "wer_max": round(max(errors), 4),
                "extra_peak_rss_mb": round(peak_mb() - before, 1),
            }
        )
    )


if __name__ == "__main__":
    asyncio.run(main())
