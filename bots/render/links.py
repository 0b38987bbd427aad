"""Which links a card may show: one rule for every platform."""

from __future__ import annotations

from urllib.parse import urlsplit

__all__ = ["MAX_URL", "report_url", "safe_url"]

MAX_URL = 400  # a longer address is shown as text, never linked


def safe_url(url: str) -> str:
    """``url`` when it may be linked: ``http`` or ``https``, with a host, no spaces or
    control characters, at most :data:`MAX_URL` long; otherwise ``""`` (no link).

    Each renderer still escapes what it returns for its own markup.
    """
    if not url or len(url) > MAX_URL:
        return ""
    if any(char.isspace() or ord(char) < 32 or 127 <= ord(char) < 160 for char in url):
        return ""
    try:
        parts = urlsplit(url)
    except ValueError:  # e.g. a malformed IPv6 host
        return ""
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        return ""
    return url


def report_url(public_url: str, check_id: str) -> str:
    """The address of a check's report page under ``public_url`` (``[site]
    public_url``), or ``""`` when no public address is set (the cards get no link)."""
    if not public_url:
        return ""
    return f"{public_url.rstrip('/')}/c/{check_id}"
