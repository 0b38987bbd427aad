"""HTML for the report pages: Jinja2 templates (package data) with autoescape on, and
one stylesheet inlined in every page and allowed by its hash in the
Content-Security-Policy (no other style, and no script at all, may run).

A report page's ``<html>`` carries the language its panel wrote in (``lang``) and that
language's direction (``dir="rtl"`` for Arabic, Hebrew, Persian and Urdu); the
stylesheet places everything by the text's start and end, never its left and right,
so a right-to-left page is laid out as its mirror image.
"""

from __future__ import annotations

import base64
import hashlib
from importlib.resources import files

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
from markupsafe import Markup

from bots.render.card import VERDICTS
from bots.render.languages import text_direction
from bots.render.privacy import PRIVACY_TITLE, privacy_paragraphs
from bots.service.records import Missing

from .page import ReportPage
from .safety import shown
from .svg import claim_tree, confidence_gauge, stance_bar

__all__ = [
    "CONTENT_SECURITY_POLICY",
    "STYLESHEET",
    "missing_html",
    "privacy_html",
    "report_html",
]

#: why a check has no page: no such id; its report was deleted after the retention;
#: it is still being checked; it ended without a report

_ENV = Environment(
    loader=PackageLoader("bots.web", "templates"),
    autoescape=select_autoescape(("html",)),
    undefined=StrictUndefined,
    finalize=shown,
    auto_reload=False,  # package data: no stat of the templates on every request
    trim_blocks=True,
    lstrip_blocks=True,
)


def _stylesheet() -> str:
    base = (files("bots.web") / "templates" / "page.css").read_text(encoding="utf-8")
    colours = "".join(
        f".v-{verdict}{{--c:#{colour:06x}}}" for verdict, (_, _, colour) in VERDICTS.items()
    )
    return base + colours + "\n"


#: the page's one stylesheet, verdict colours included
STYLESHEET = _stylesheet()
_STYLE_HASH = base64.b64encode(hashlib.sha256(STYLESHEET.encode()).digest()).decode()
#: nothing but this stylesheet: no script, no other style, no image, font, frame or form
CONTENT_SECURITY_POLICY = (
    f"default-src 'none'; style-src 'sha256-{_STYLE_HASH}'; base-uri 'none'; "
    "form-action 'none'; frame-ancestors 'none'"
)
_CSS = Markup(STYLESHEET)

_MISSING: dict[str, tuple[str, str]] = {
    "unknown": (
        "No such fact-check",
        "No check has this id. Check the link: it must be copied whole, 16 characters after /c/.",
    ),
    "purged": (
        "This fact-check was deleted",
        "The check existed, but its report, the post and the evidence were deleted after "
        "{days} days, as this service keeps them no longer.",
    ),
    "pending": (
        "This fact-check is not finished",
        "The post is still being checked. Reload this page in a minute.",
    ),
    "failed": (
        "This fact-check has no report",
        "The check ended without a verdict (it failed or was cancelled). Send the post "
        "again to check it anew.",
    ),
}


def report_html(page: ReportPage) -> str:
    """The report page."""
    return _ENV.get_template("report.html").render(
        lang=page.lang,
        dir=text_direction(page.lang),
        css=_CSS,
        page=page,
        gauge=confidence_gauge(page.confidence_value, page.colour),
        bar=stance_bar([*page.factchecks, *page.evidence]),
        tree=claim_tree(page.claims),
        claim_review=Markup(page.claim_review),  # json_ld escaped it for a script element
    )


def missing_html(kind: Missing, *, retention_days: int) -> str:
    """The page for a check with no report to show, saying why."""
    heading, detail = _MISSING[kind]
    return _ENV.get_template("missing.html").render(
        lang="en",
        dir="ltr",
        css=_CSS,
        kind=kind,
        heading=heading,
        detail=detail.format(days=retention_days),
    )


def privacy_html(*, retention_days: int) -> str:
    """The ``/privacy`` page: the bots' own ``/privacy`` text."""
    return _ENV.get_template("privacy.html").render(
        lang="en",
        dir="ltr",
        css=_CSS,
        title=PRIVACY_TITLE,
        paragraphs=privacy_paragraphs(retention_days),
    )
