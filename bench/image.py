"""Image posts: 20 generated screenshots (10 rendered headlines, 10 tweet-like posts, at
phone resolution) through the image steps up to the engine: decoding within the caps,
EXIF and metadata dropped, the text read by RapidOCR, the labels searched.

    python bench/image.py [--images 20] [--smoke]

Prints per image the OCR time and its character error rate against the text that
was rendered; the last line is one JSON object: OCR p50 and p95 (ms), the mean and
worst character error rate, and the peak RSS over the process before the OCR was
loaded: after loading it, after the first image, and after all of them.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from lib.smoke import smoke_args

from tests.peers.fixtures.images import cer, headline, tweet

from zofia_engine.image_settings import ImageSettings
from zofia_engine.images.reader import ImageReader
from zofia_engine.post import Post, PostImage

HEADLINES = [
    ["Springfield mayor bans bicycles", "from every street in the city"],
    ["BREAKING: 5G towers spread the virus", "says a study nobody can find"],
    ["The council approved 12 new bike lanes", "on Monday, 3 March 2025"],
    ["NASA confirms the Moon is moving away", "by 3.8 centimetres a year"],
    ["Drinking bleach cures the flu,", "claims viral video"],
    ["Unemployment fell to 3.9 percent", "in April, the bureau said"],
    ["Scientists grow coffee in the lab", "without a single coffee plant"],
    ["Senator Jane Doe voted 47 times", "against her own bill"],
    ["Eiffel Tower to be sold for scrap", "Paris officials deny the report"],
    ["Vaccines contain microchips,", "posts claim without evidence"],
]
TWEETS = [
    (
        "Daily News",
        "@dailynews",
        ["Wildfire smoke reaches New York,", "air quality alert issued today"],
    ),
    (
        "Ann Lee",
        "@annlee",
        ["My cousin works at the bank and", "says all accounts freeze on Friday"],
    ),
    ("City Hall", "@cityhall", ["Water will be off on Elm Street", "from 9 am to 3 pm on Tuesday"]),
    (
        "Health Desk",
        "@healthdesk",
        ["Eating carrots improves night vision?", "Not really, experts explain"],
    ),
    ("Sports Now", "@sportsnow", ["The final ended 2-1 after", "extra time in Madrid"]),
    ("Tech Wire", "@techwire", ["A new phone battery lasts 30 days,", "the company claims"]),
    ("Weather Pro", "@weatherpro", ["Snow expected in Miami this weekend,", "say forecasters"]),
    ("Old Photos", "@oldphotos", ["This photo shows the 1906 earthquake", "in San Francisco"]),
    ("Market Watch", "@marketwatch", ["Gold rose 2 percent on Thursday", "as the dollar weakened"]),
    ("Science Daily", "@sciencedaily", ["Octopuses have three hearts", "and blue blood"]),
]


def images(count: int) -> list[tuple[bytes, str]]:
    made = [(headline(lines), "\n".join(lines)) for lines in HEADLINES]
    made += [
        (tweet(name, handle, lines, seed=i), "\n".join([name, handle, *lines]))
        for i, (name, handle, lines) in enumerate(TWEETS)
    ]
    return made[:count]


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--images", type=int, default=20)
    parser.add_argument(
        "--max-ocr-pixels", type=int, default=ImageSettings().max_ocr_pixels,
        help="[images] max_ocr_pixels: images are scaled down to this area before OCR",
    )  # fmt: skip
    args = smoke_args(parser, {"images": 1})
    made = images(args.images)
    reader = ImageReader(ImageSettings(max_ocr_pixels=args.max_ocr_pixels))
    before = peak_mb()
    reader.load()
    loaded = peak_mb()
    times, errors, after_first = [], [], 0.0
    for n, (data, truth) in enumerate(made, 1):
        started = time.perf_counter()
        read = await reader.read(Post(text="", images=(PostImage(data=data),)))
        times.append((time.perf_counter() - started) * 1000)
        finding = read.findings[0]
        errors.append(cer(finding.text, truth))
        after_first = after_first or peak_mb()
        print(f"{n:2d}  {times[-1]:7.0f} ms  CER {errors[-1]:.3f}  {finding.text!r}", flush=True)
    ordered = sorted(times)
    print(
        json.dumps(
            {
                "images": len(made),
                "ocr_p50_ms": round(statistics.median(times)),
                "ocr_p95_ms": round(ordered[max(0, int(0.95 * len(ordered)) - 1)]),
                "first_ms": round(times[0]),
                "cer_mean": round(statistics.mean(errors), 4),
                "cer_max": round(max(errors), 4),
                "max_ocr_pixels": args.max_ocr_pixels,
                "load_rss_mb": round(loaded - before, 1),
                "first_image_rss_mb": round(after_first - before, 1),
                "extra_peak_rss_mb": round(peak_mb() - before, 1),
            }
        )
    )


if __name__ == "__main__":
    asyncio.run(main())
