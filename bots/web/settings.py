"""The ``[site]`` settings section: the report pages' server.

The engine's ``[web]`` section already names the open-web search; the pages that show
a report to a reader are the deployment's *site*.
"""

from __future__ import annotations

from pydantic import Field, field_validator

from bots.render.links import safe_url
from zofia_engine.config import SettingsSection

__all__ = ["SiteSettings"]


class SiteSettings(SettingsSection):
    """The report pages (``zofia web``).

    ``public_url`` is the address readers reach the server at (``https://…``, behind a
    reverse proxy); set, every verdict card links to ``<public_url>/c/<check id>``,
    empty, the cards have no link. The server listens on ``listen:port``;
    ``with_bot`` also serves the pages from inside the Telegram or Discord bot's
    process (one of them: the port is taken once). Each client address may make
    ``per_minute`` requests a minute (the address a proxy puts last in
    ``X-Forwarded-For`` when ``forwarded_for`` is on; only turn that on behind a proxy
    that sets it). A report's JSON over ``max_json_bytes`` is sent without its call
    log and with the documents' texts cut, and refused when still over. ``publisher``
    names who publishes the checks: set, a report page of a check the service's
    reviewers reviewed carries ClaimReview JSON-LD with it as the author (an automated
    verdict alone never does), and the API's ClaimReview names it; empty, no page carries
    one and the API's names "ZoFia".
    """

    public_url: str = ""
    listen: str = "127.0.0.1"
    port: int = Field(8080, ge=1, le=65535)
    with_bot: bool = False
    per_minute: int = Field(60, ge=1)
    forwarded_for: bool = False
    max_json_bytes: int = Field(1_000_000, ge=10_000)
    publisher: str = Field("", max_length=200)

    @field_validator("public_url")
    @classmethod
    def _http_address(cls, value: str) -> str:
        value = value.strip()
        if value and not safe_url(value):
            raise ValueError("must be an http(s) address with a host, e.g. https://example.org")
        if "?" in value or "#" in value:
            raise ValueError("must not have a query or a fragment")
        return value.rstrip("/")
