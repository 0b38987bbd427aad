"""The report pages at 100,000 stored checks: server time, page size, throughput.

Fills a temporary SQLite store with N checks, each with a full report (a tree of 4
claims, 7 documents with stance and source quality, a published fact-check, an
image, 3 debate rounds, 5 linguist findings, 24 model calls: about 16 KB of JSON),
the first few through ``CheckStore.save_report`` and the rest copied in bulk. Then
``zofia web`` runs as its own process on loopback (the per-address rate lifted) and
this script, as its client:

- asks for ``--pages`` random pages one at a time: the server's own time per page
  (its ``Server-Timing`` header: lookup, JSON parse, view model, Jinja2) at p50 and
  p95, and the page's size;
- asks for as many pages as it can with ``--clients`` concurrent clients for
  ``--seconds``: requests per second.

    python bench/web.py [--checks 100000] [--pages 500] [--clients 20] [--seconds 10] [--smoke]
    python bench/web.py --checks 1000 --screenshot docs/web-report.png

``--screenshot`` also writes the top of one page, as headless Chromium shows it at
800 px, as a small PNG (Debian's chromium and chromium-driver). The last line is one
JSON object.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import datetime as dt
import io
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

import aiohttp
import sqlite_utils

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from lib.smoke import free_port, smoke_args  # noqa: E402

from tests.factories import POST, full_report, stored_check  # noqa: E402

from storage.database import open_database  # noqa: E402
from storage.keys import new_check_id  # noqa: E402
from storage.store import CheckStore  # noqa: E402

SECRET = "bench-secret-0123456"
VERDICTS = ("true", "false", "misleading", "unproven")


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def fill(store: CheckStore, db: sqlite_utils.Database, checks: int) -> list[str]:
    """``checks`` done checks with full reports, the store's ``db`` (an SQLite file the
    bench opened) filled in bulk past the first few; their ids."""
    ids = [stored_check(store, full_report(v), text=f"{POST} ({v})").id for v in VERDICTS]
    reports = [full_report(v).model_dump_json() for v in VERDICTS]
    now = dt.datetime.now(dt.UTC).isoformat(timespec="microseconds")
    conn = db.conn
    for start in range(len(ids), checks, 5_000):
        batch = [new_check_id() for _ in range(min(5_000, checks - start))]
        with conn:
            conn.executemany(
                "INSERT INTO checks (id, platform, chat, requester, status, post_text,"
                " text_hash, created_at, finished_at, error) VALUES (?, 'bench', ?, ?, 'done',"
                " ?, ?, ?, ?, '')",
                [
                    (cid, f"chat-{k % 1000}", f"user-{k % 5000}", f"{POST} #{k}", cid, now, now)
                    for k, cid in enumerate(batch, start)
                ],
            )
            conn.executemany(
                "INSERT INTO reports (check_id, verdict, confidence, summary, report_json,"
                " n_evidence, n_claims, rounds, llm_calls, prompt_tokens, completion_tokens,"
                " created_at) VALUES (?, ?, 0.87, '', ?, 7, 4, 3, 24, 0, 0, ?)",
                [(cid, VERDICTS[k % 4], reports[k % 4], now) for k, cid in enumerate(batch, start)],
            )
        ids += batch
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return ids


def start_server(folder: Path, port: int) -> subprocess.Popen[bytes]:
    config = folder / "zofia.toml"
    config.write_text(
        f'[storage]\npath = "{folder / "bench.db"}"\nsecret = "{SECRET}"\n'
        f"[site]\nport = {port}\nper_minute = 1000000000\n",
        encoding="utf-8",
    )
    server = subprocess.Popen(
        [sys.executable, "-c", "from bots.cli import main; main()", "web", "--config", str(config)],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while True:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2):
                return server
        except OSError:
            if server.poll() is not None or time.monotonic() > deadline:
                raise SystemExit("zofia web did not start") from None
            time.sleep(0.2)


def _server_ms(response: aiohttp.ClientResponse) -> float:
    return float(response.headers["Server-Timing"].split("dur=")[1])


async def measure(
    root: str, ids: list[str], pages: int, clients: int, seconds: float
) -> dict[str, Any]:
    rng = random.Random(0)
    server_ms, client_ms, sizes = [], [], []
    async with aiohttp.ClientSession() as session:
        for _ in range(pages):
            t = time.perf_counter()
            async with session.get(f"{root}/c/{rng.choice(ids)}") as response:
                body = await response.read()
                assert response.status == 200, response.status
            client_ms.append((time.perf_counter() - t) * 1000)
            server_ms.append(_server_ms(response))
            sizes.append(len(body))
        json_ms = []
        for _ in range(min(pages, 200)):
            async with session.get(f"{root}/c/{rng.choice(ids)}.json") as response:
                await response.read()
                json_ms.append(_server_ms(response))

    done = 0
    stop = time.perf_counter() + seconds

    async def client(session: aiohttp.ClientSession, seed: int) -> None:
        nonlocal done
        picks = random.Random(seed)
        while time.perf_counter() < stop:
            async with session.get(f"{root}/c/{picks.choice(ids)}") as response:
                await response.read()
                assert response.status == 200, response.status
            done += 1

    connector = aiohttp.TCPConnector(limit=clients)
    async with aiohttp.ClientSession(connector=connector) as session:
        started = time.perf_counter()
        await asyncio.gather(*(client(session, n) for n in range(clients)))
        elapsed = time.perf_counter() - started
    return {
        "page_server_p50_ms": round(statistics.median(server_ms), 2),
        "page_server_p95_ms": round(percentile(server_ms, 0.95), 2),
        "page_client_p50_ms": round(statistics.median(client_ms), 2),
        "json_server_p50_ms": round(statistics.median(json_ms), 2),
        "page_bytes": max(sizes),
        "clients": clients,
        "requests_per_s": round(done / elapsed, 1),
    }


def screenshot(url: str, path: Path, width: int = 800, height: int = 1500) -> int:
    """The top ``height`` px of the page at ``width`` px, as a palette PNG; its bytes."""
    from PIL import Image
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    try:
        metrics = {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False}
        driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", metrics)
        driver.get(url)
        shot = driver.execute_cdp_cmd(
            "Page.captureScreenshot",
            {
                "format": "png",
                "clip": {"x": 0, "y": 0, "width": width, "height": height, "scale": 1},
            },
        )
    finally:
        driver.quit()
    image = Image.open(io.BytesIO(base64.b64decode(shot["data"]))).convert("RGB")
    image.quantize(colors=64, method=Image.Quantize.MEDIANCUT).save(path, optimize=True)
    return path.stat().st_size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checks", type=int, default=100_000)
    parser.add_argument("--pages", type=int, default=500)
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--port", type=int, default=8766)
    parser.add_argument("--screenshot", type=Path, help="Also write a PNG of a page here.")
    args = smoke_args(
        parser, {"checks": 20, "pages": 5, "clients": 2, "seconds": 1.0, "port": free_port}
    )

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        db = open_database(folder / "bench.db", secret=SECRET.encode())
        store = CheckStore(db, secret=SECRET.encode())
        t = time.perf_counter()
        ids = fill(store, db, args.checks)
        fill_s = time.perf_counter() - t
        store.close()
        db_mb = (folder / "bench.db").stat().st_size / 1e6
        server = start_server(folder, args.port)
        root = f"http://127.0.0.1:{args.port}"
        try:
            result = asyncio.run(measure(root, ids, args.pages, args.clients, args.seconds))
            if args.screenshot is not None:
                result["screenshot_bytes"] = screenshot(f"{root}/c/{ids[1]}", args.screenshot)
        finally:
            server.terminate()
            server.wait(timeout=20)
    print(
        json.dumps(
            {"checks": len(ids), "db_mb": round(db_mb), "fill_s": round(fill_s, 1), **result}
        )
    )


if __name__ == "__main__":
    main()
