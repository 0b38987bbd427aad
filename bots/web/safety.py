"""What a page may link to and how untrusted text is shown: one rule for the HTML, the
charts and the JSON.

Every string a model, a web page or a poster wrote is untrusted. The templates escape
it (Jinja2's autoescape); here it also loses the characters that change the direction
of the text around it or hide in it, so a title cannot reverse what follows it or
disguise a link. A link is made only from an address
:func:`~bots.render.links.safe_url` accepts that has none of those characters.
"""

from __future__ import annotations

import ipaddress
import re

from markupsafe import Markup

from bots.render.links import safe_url

__all__ = ["href", "redact", "shown"]

# Bidirectional embeddings, overrides and isolates; zero-width and invisible characters.
_FORMAT = re.compile(r"[\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]")
_BIDI = re.compile(r"[\u202a-\u202e\u2066-\u2069]")
# What a backend's error may say of where it runs: URLs; IPv6 addresses, bracketed (with
# a port) or bare, and IPv4 ones; localhost; any host:port without a scheme
# ("searxng:8080", "vision.internal:8000"). An IPv6 candidate ("10:30:15" is one too) is
# taken out only when it parses as an address.
_ADDRESS = re.compile(
    r"\b[a-z][a-z0-9+.-]*://\S+"
    r"|\[(?P<bracketed>[0-9a-f:.]*:[0-9a-f:.]*)(?:%[\w.-]+)?\](?::\d{1,5})?"
    r"|(?<![\w:.])(?P<bare>(?:[0-9a-f]{0,4}:){2,7}(?:(?:\d{1,3}\.){3}\d{1,3}|[0-9a-f]{0,4}))"
    r"(?:%[\w.-]+)?(?![\w:])"
    r"|\b(?:\d{1,3}\.){3}\d{1,3}(?::\d+)?\b|\blocalhost(?::\d+)?\b"
    r"|\b[a-z][a-z0-9-]*(?:\.[a-z0-9-]+)*:\d{1,5}\b",
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


def _redacted(found: re.Match[str]) -> str:
    ipv6 = found["bracketed"] or found["bare"]
    if ipv6 is not None:
        try:
            ipaddress.IPv6Address(ipv6)
        except ValueError:
            return found[0]
    return "[address]"


def redact(text: str) -> str:
    """An error or a note with the addresses of the deployment's backends replaced by
    ``[address]``: a public page says what failed, not where it runs."""
    return _ADDRESS.sub(_redacted, text)
