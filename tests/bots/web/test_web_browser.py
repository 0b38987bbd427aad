"""The report pages in a real browser: ``zofia web`` started as a process on 127.0.0.1
over a store holding a report of every verdict (and a hostile one), driven by headless
Chromium (Debian's ``chromium`` and ``chromium-driver``) through Selenium.

Each page must show the verdict, every claim and every debate turn; the folded
sections must open; the console must stay free of errors (a Content-Security-Policy
refusal is one); every request must go to 127.0.0.1; at 360 px nothing may scroll
sideways. Screenshots at 360 and 1280 px are written under the test's tmp_path.
Script injected through the report would set ``window.__xss``: it must stay unset.
A check answered in Arabic is laid out right to left, as the mirror image of an English
one.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import socket
import struct
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from tests.factories import POST, full_report, hostile_report, stored_check
from tests.peers.fakes.fake_checker import scripted_report
from tests.peers.fixtures.service_steps import review

from bots.app.settings import Settings
from bots.render.card import VERDICTS
from storage.keys import hash_user
from storage.opening import open_store
from zofia_engine.post import Post
from zofia_engine.report import TRIAGED, Report

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not CHROMIUM.exists() or not Path(CHROMEDRIVER).exists(),
        reason="needs Debian's chromium and chromium-driver (apt-get install chromium "
        "chromium-driver): /usr/bin/chromium or chromedriver is missing",
    ),
]

from selenium import webdriver  # noqa: E402  (after the skip: only when there is a browser)
from selenium.common.exceptions import NoAlertPresentException  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402

ROOT = Path(__file__).resolve().parents[3]
REVIEW_NOTE = "The council minutes show no such vote."
REVIEW_LINK = "https://example.org/minutes"
ARABIC_POST = (
    "عاجل: عمدة سبرينغفيلد حظر الدراجات في كل شوارع المدينة، ومن يخالف يدفع غرامة 500 دولار!"
)
ARABIC_SUMMARY = (
    "لا تسجّل محاضر مجلس مدينة سبرينغفيلد ولا تقريرا وكالتَي الأنباء أي حظر للدراجات "
    "ولا أي غرامة، وقد صنّف موقع PolitiFact هذا الادعاء بأنه خطأ."
)
#: each claim of full_report's, as the panel writes it in Arabic: (claim, reason)
ARABIC_CLAIMS = [
    (
        "حظرت سبرينغفيلد الدراجات في كل شوارعها في مارس.",
        "لا تُظهر المحاضر ولا تقريرا الوكالتين أي قرار من هذا النوع.",
    ),
    ("صوّت المجلس على حظر الدراجات في مارس.", "لم يُسجَّل أي تصويت."),
    ("جرى التصويت في جلسة 12 مارس.", "جدول أعمال الجلسة ليس ضمن الوثائق."),
    ("يواجه راكبو الدراجات غرامة قدرها 500 دولار.", "لا يذكر أي جدول للغرامات الدراجات."),
]
#: a folder to keep the screenshots in (``docs/`` writes the docs' images), else tmp_path
SHOTS = os.environ.get("ZOFIA_SCREENSHOTS", "")


@dataclass
class Site:
    """The running ``zofia web``, and the checks it serves by verdict."""

    root: str
    checks: dict[str, tuple[str, Report]]

    def url(self, name: str) -> str:
        return f"{self.root}/c/{self.checks[name][0]}"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _arabic_report() -> Report:
    """A full check whose panel wrote in Arabic: the summary, the claims, the debate and
    the analyses (the sources and the image's text stay as they were written)."""
    report = full_report("false", summary=ARABIC_SUMMARY)
    claims = [
        claim.model_copy(update={"text": text, "reason": reason})
        for claim, (text, reason) in zip(report.claims, ARABIC_CLAIMS, strict=True)
    ]
    turns = [
        turn.model_copy(
            update={
                "argument": f"الجولة {turn.round}، "
                + (
                    "مع الادعاء: نشرت مدونة محلية خبر الحظر (web-4)."
                    if turn.side == "pro"
                    else "ضد الادعاء: لا تسجّل المحاضر أي تصويت (web-1، web-2)."
                ),
                "rebuttal": f"الجولة {turn.round}: لا تستشهد المدونة بأي قرار بلدي."
                if turn.rebuttal
                else "",
            }
        )
        for turn in report.debate.turns
    ]
    rulings = [
        ruling.model_copy(
            update={"reason": f"بعد الجولة {ruling.round}، ترجح تقارير الوكالتين على المدونة."}
        )
        for ruling in report.debate.rulings
    ]
    linguist = [
        finding.model_copy(update={"analysis": "تبدو الصياغة مثيرة للذعر."})
        for finding in report.analyses.linguist
    ]
    return report.model_copy(
        update={
            "claims": claims,
            "debate": report.debate.model_copy(update={"turns": turns, "rulings": rulings}),
            "analyses": report.analyses.model_copy(update={"linguist": linguist}),
        }
    )


def _report(verdict: str) -> Report:
    if verdict in TRIAGED:
        return scripted_report(Post(text=POST), verdict=verdict)
    return full_report(verdict)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    folder = tmp_path_factory.mktemp("site")
    config = folder / "zofia.toml"
    config.write_text(
        f'[storage]\npath = "{folder / "zofia.db"}"\nsecret = "s3cret-for-tests-only"\n',
        encoding="utf-8",
    )
    store, _ = open_store(
        Settings.model_validate(
            {"storage": {"path": str(folder / "zofia.db"), "secret": "s3cret-for-tests-only"}}
        ).storage
    )
    checks = {}
    for verdict in VERDICTS:
        report = _report(verdict)
        checks[verdict] = (stored_check(store, report, text=f"{POST} ({verdict})").id, report)
    hostile = hostile_report()
    row = stored_check(
        store,
        hostile,
        text=f"{POST} <script>window.__xss='post'</script>",
        url="javascript:window.__xss='post'",
        language="Arabic",
    )
    checks["hostile"] = (row.id, hostile)
    reviewed = full_report("unproven")
    reviewed_id = stored_check(store, reviewed, text=f"{POST} (reviewed)").id
    review(
        store,
        reviewed_id,
        reviewer=hash_user(b"s3cret-for-tests-only", "cli", "operator"),
        platform="cli",
        verdict="false",
        note=REVIEW_NOTE,
        link=REVIEW_LINK,
        queued=False,
    )
    checks["reviewed"] = (reviewed_id, reviewed)
    arabic = _arabic_report()
    row = stored_check(store, arabic, text=ARABIC_POST, language="Arabic")
    checks["arabic"] = (row.id, arabic)
    store.close()
    port = _free_port()
    command = ["web", "--port", str(port), "--config", str(config)]
    log = (folder / "web.log").open("wb")
    server = subprocess.Popen(
        [sys.executable, "-c", "from bots.cli import main; main()", *command],
        cwd=ROOT,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    root = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"{root}/healthz", timeout=2) as answer:
                    if answer.status == 200:
                        break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    said = (folder / "web.log").read_text(errors="replace")[-2000:]
                    raise RuntimeError(f"zofia web did not start: {said}") from None
                time.sleep(0.2)
        yield Site(root, checks)
    finally:
        server.terminate()
        server.wait(timeout=20)
        log.close()


def _chrome(javascript: bool = True) -> webdriver.Chrome:
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-default-apps",
        "--disable-sync",
        "--disable-extensions",
        "--no-first-run",
        "--window-size=1280,900",
    ):
        options.add_argument(flag)
    if not javascript:
        options.add_experimental_option(
            "prefs", {"profile.managed_default_content_settings.javascript": 2}
        )
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    return webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)


@pytest.fixture(scope="module")
def browser() -> Iterator[webdriver.Chrome]:
    driver = _chrome()
    try:
        yield driver
    finally:
        driver.quit()


def _load(driver: webdriver.Chrome, url: str) -> None:
    driver.get_log("performance")  # drop what earlier pages left
    driver.get_log("browser")
    driver.get(url)


def _console_errors(driver: webdriver.Chrome) -> list[str]:
    return [str(e["message"]) for e in driver.get_log("browser") if e["level"] == "SEVERE"]


def _requested(driver: webdriver.Chrome) -> list[str]:
    urls = []
    for entry in driver.get_log("performance"):
        message: dict[str, Any] = json.loads(entry["message"])["message"]
        if message["method"] == "Network.requestWillBeSent":
            urls.append(str(message["params"]["request"]["url"]))
    return urls


def _only_loopback(urls: list[str]) -> list[str]:
    return [u for u in urls if urlsplit(u).hostname != "127.0.0.1" and not u.startswith("data:")]


@pytest.mark.parametrize("verdict", list(VERDICTS))
def test_each_page_shows_the_verdict_every_claim_and_turn(
    site: Site, browser: webdriver.Chrome, verdict: str
) -> None:
    _, report = site.checks[verdict]
    _load(browser, site.url(verdict))
    heading = browser.find_element(By.ID, "verdict")
    assert heading.is_displayed() and VERDICTS[verdict][1] in heading.text
    claims = browser.find_elements(By.CSS_SELECTOR, ".claim-text")
    assert [c.text for c in claims if c.is_displayed()] == [c.text for c in report.claims]
    turns = browser.find_elements(By.CSS_SELECTOR, "article.turn")
    assert len(turns) == len(report.debate.turns) and all(t.is_displayed() for t in turns)
    for shown, turn in zip(turns, report.debate.turns, strict=True):
        assert turn.argument in shown.text
    assert _console_errors(browser) == []
    requested = _requested(browser)
    assert requested and _only_loopback(requested) == []


def test_the_folded_sections_open(site: Site, browser: webdriver.Chrome) -> None:
    _load(browser, site.url("false"))
    folded = browser.find_elements(By.CSS_SELECTOR, "details:not([open])")
    assert len(folded) >= 8  # each document's text, the linguist's findings, the cost
    cost = browser.find_element(By.ID, "cost")
    table = cost.find_element(By.TAG_NAME, "table")
    assert not table.is_displayed()
    for details in folded:
        details.find_element(By.TAG_NAME, "summary").click()
        assert details.get_attribute("open") is not None
    assert table.is_displayed() and "judge" in table.text
    assert _console_errors(browser) == []


def _png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def _screenshot(driver: webdriver.Chrome, url: str, width: int, path: Path, height: int = 0) -> int:
    """The whole page (or its top ``height`` pixels) at ``width`` CSS pixels, as a phone
    (under 600) or a desktop shows it; returns how wide the page's content is."""
    metrics = {"width": width, "height": 800, "deviceScaleFactor": 1, "mobile": width < 600}
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", metrics)
    try:
        _load(driver, url)
        scroll_width = int(driver.execute_script("return document.documentElement.scrollWidth"))
        height = height or int(
            driver.execute_script("return document.documentElement.scrollHeight")
        )
        shot = driver.execute_cdp_cmd(
            "Page.captureScreenshot",
            {
                "format": "png",
                "captureBeyondViewport": True,
                "clip": {"x": 0, "y": 0, "width": width, "height": height, "scale": 1},
            },
        )
        path.write_bytes(base64.b64decode(shot["data"]))
    finally:
        driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
    return scroll_width


def test_screenshots_at_phone_and_desktop_width(
    site: Site, browser: webdriver.Chrome, tmp_path: Path
) -> None:
    for width in (360, 1280):
        path = tmp_path / f"report-{width}.png"
        scroll_width = _screenshot(browser, site.url("false"), width, path)
        assert scroll_width <= width  # nothing scrolls sideways
        shot_width, shot_height = _png_size(path.read_bytes())
        assert shot_width == width and shot_height > 1500
        assert _console_errors(browser) == []


def test_a_reviewed_check_shows_the_review_beside_the_machines_verdict(
    site: Site, browser: webdriver.Chrome, tmp_path: Path
) -> None:
    path = Path(SHOTS or tmp_path) / "reviewed-card.png"
    scroll_width = _screenshot(browser, site.url("reviewed"), 800, path, height=330)
    assert scroll_width <= 800
    heading = browser.find_element(By.ID, "verdict").text
    page = browser.find_element(By.TAG_NAME, "body").text
    assert f"Changed by the service's reviewers from Unproven to False: {REVIEW_NOTE}" in page
    assert VERDICTS["false"][1] in heading or VERDICTS["unproven"][1] in heading
    assert VERDICTS["unproven"][1] in page and VERDICTS["false"][1] in page
    assert f"{REVIEW_NOTE} ({REVIEW_LINK})" in page
    assert _png_size(path.read_bytes()) == (800, 330)
    assert _console_errors(browser) == []


def test_a_hostile_report_runs_nothing(site: Site, browser: webdriver.Chrome) -> None:
    _load(browser, site.url("hostile"))
    assert browser.find_element(By.ID, "verdict").is_displayed()
    with pytest.raises(NoAlertPresentException):
        browser.switch_to.alert.text  # noqa: B018  (reading it is the check)
    assert browser.execute_script("return window.__xss === undefined") is True
    assert browser.execute_script("return document.scripts.length") == 0
    assert browser.find_elements(By.TAG_NAME, "img") == []
    handlers = browser.execute_script(
        "return [...document.querySelectorAll('*')].flatMap(e => [...e.attributes])"
        ".map(a => a.name).filter(n => n.startsWith('on') || n === 'autofocus')"
    )
    assert handlers == []
    protocols = browser.execute_script(
        "return [...document.links].map(a => a.protocol + (a.host === location.host ? '' : 'x'))"
    )
    assert set(protocols) <= {"http:", "https:x", "http:x"}
    # The attacks show as text; the direction override is gone.
    summary = browser.find_element(By.ID, "summary").text
    assert '<script>window.__xss = "script"</script>' in summary and "\u202e" not in summary
    assert browser.find_element(By.TAG_NAME, "html").get_attribute("lang") == "ar"
    # Clicking around (a summary, a citation) runs nothing either.
    browser.find_element(By.CSS_SELECTOR, "#cost summary").click()
    browser.find_element(By.CSS_SELECTOR, ".cites a").click()
    assert browser.execute_script("return window.__xss === undefined") is True
    assert _console_errors(browser) == []
    assert _only_loopback(_requested(browser)) == []


def test_the_page_works_with_javascript_off(site: Site) -> None:
    driver = _chrome(javascript=False)
    try:
        _load(driver, site.url("misleading"))
        heading = driver.find_element(By.ID, "verdict")
        assert "Misleading" in heading.text
        cost = driver.find_element(By.ID, "cost")
        assert cost.get_attribute("open") is None
        cost.find_element(By.TAG_NAME, "summary").click()
        assert cost.get_attribute("open") is not None
        assert _console_errors(driver) == []
    finally:
        driver.quit()


def _box(driver: webdriver.Chrome, selector: str) -> dict[str, float]:
    """The first ``selector``'s box on the page: left, right, width."""
    box: dict[str, float] = driver.execute_script(
        "const r = document.querySelector(arguments[0]).getBoundingClientRect();"
        "return {left: r.left, right: r.right, width: r.width};",
        selector,
    )
    return box


def _text_box(driver: webdriver.Chrome, selector: str) -> dict[str, float]:
    """Where the first ``selector``'s text is drawn (its first line's box)."""
    box: dict[str, float] = driver.execute_script(
        "const range = document.createRange();"
        "range.selectNodeContents(document.querySelector(arguments[0]));"
        "const r = range.getClientRects()[0];"
        "return {left: r.left, right: r.right, width: r.width};",
        selector,
    )
    return box


def _edges(driver: webdriver.Chrome, selector: str) -> tuple[str, str]:
    """The first ``selector``'s left and right border widths."""
    found: list[str] = driver.execute_script(
        "const s = getComputedStyle(document.querySelector(arguments[0]));"
        "return [s.borderLeftWidth, s.borderRightWidth];",
        selector,
    )
    return found[0], found[1]


def test_an_arabic_page_reads_right_to_left(
    site: Site, browser: webdriver.Chrome, tmp_path: Path
) -> None:
    """The page of a check answered in Arabic says so on its <html> (lang and dir) and is
    laid out as the English page's mirror image: the verdict's coloured edge, the gauge,
    the headings and the claims' indentation start at the right."""
    path = Path(SHOTS or tmp_path) / "arabic-report.png"
    scroll_width = _screenshot(browser, site.url("arabic"), 800, path, height=1075)
    assert scroll_width <= 800
    assert _png_size(path.read_bytes()) == (800, 1075)
    html = browser.find_element(By.TAG_NAME, "html")
    assert (html.get_attribute("lang"), html.get_attribute("dir")) == ("ar", "rtl")
    assert browser.find_element(By.ID, "summary").text == ARABIC_SUMMARY
    claims = [c.text for c in browser.find_elements(By.CSS_SELECTOR, ".claim-text")]
    assert claims == [text for text, _ in ARABIC_CLAIMS]
    mirrored = _layout(browser)
    _load(browser, site.url("false"))
    assert browser.find_element(By.TAG_NAME, "html").get_attribute("dir") == "ltr"
    english = _layout(browser)
    assert mirrored == {
        "edge": english["edge"][::-1],
        "gauge": "right",
        "text": "right",
        "indent": "right",
    }
    assert english == {"edge": ("8px", "0px"), "gauge": "left", "text": "left", "indent": "left"}
    # Nothing scrolls sideways on a phone either.
    assert _screenshot(browser, site.url("arabic"), 360, tmp_path / "arabic-360.png") <= 360
    assert _console_errors(browser) == []


def _layout(driver: webdriver.Chrome) -> dict[str, Any]:
    """Which side the loaded page starts at: the verdict box's coloured edge (its left
    and right widths), the side of that box its gauge is on, the side a heading's text
    starts at, and the side a sub-claim is indented from."""
    verdict, gauge = _box(driver, ".verdict"), _box(driver, ".gauge")
    heading, text = _box(driver, "#claims h2"), _text_box(driver, "#claims h2")
    core, sub = _box(driver, ".claim.d0"), _box(driver, ".claim.d1")

    def nearer(left_gap: float, right_gap: float) -> str:
        return "left" if left_gap < right_gap else "right"

    return {
        "edge": _edges(driver, ".verdict"),
        "gauge": nearer(gauge["left"] - verdict["left"], verdict["right"] - gauge["right"]),
        "text": nearer(text["left"] - heading["left"], heading["right"] - text["right"]),
        "indent": nearer(core["right"] - sub["right"], sub["left"] - core["left"]),
    }
