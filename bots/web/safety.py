"""What a page may link to and how untrusted text is shown: one rule for the HTML, the
charts and the JSON.

Every string a model, a web page or a poster wrote is untrusted. The templates escape
it (Jinja2's autoescape); here it also loses the characters that change the direction
of the text around it or hide in it, so a title cannot reverse what follows it or
disguise a link. A link is made only from an address
:func:`~bots.render.links.safe_url` accepts that has none of those characters.
"""

from __future__ import annotations

import re

from markupsafe import Markup

from bots.render.links import safe_url

__all__ = ["href", "redact", "shown"]

# Bidirectional embeddings, overrides and isolates; zero-width and invisible characters.
_FORMAT = re.compile(r"[\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]")
_BIDI = re.compile(r"[\u202a-\u202e\u2066-\u2069]")
# What a backend's error may say of where it runs: URLs, IPv4 addresses, localhost:port.
_ADDRESS = re.compile(
    r"\b[a-z][a-z0-9+.-]*://\S+|\b(?:\d{1,3}\.){3}\d{1,3}(?::\d+)?\b|\blocalhost(?::\d+)?\b",
    re.IGNORECASE,
)


def href(url: str) -> str:
    """``url`` when it may be a link (``http`` or ``https`` with a host, nothing invisible
    or direction-changing in it), else ``""``."""
    url = safe_url(url)
    return "" if _FORMAT.search(url) else url


def shown(value: object) -> object:
    """A value as a template prints it: text without direction overrides or isolates
    (the page isolates each text itself); markup the page built, and numbers, as they are.
    Jinja2's ``finalize``: it runs before autoescape."""
    if isinstance(value, Markup) or not isinstance(value, str):
        return value
    return _BIDI.sub("", value)


def redact(text: str) -> str:
    """An error or a note with the addresses of the deployment's backends replaced by
    ``[address]``: a public page says what failed, not where it runs."""
    return _ADDRESS.sub("[address]", text)
