"""The ``[api]`` settings section: the HTTP API other tiplines call (``zofia api``)."""

from __future__ import annotations

from pydantic import Field

from zofia_engine.config import SettingsSection

__all__ = ["ApiSettings"]


class ApiSettings(SettingsSection):
    """The HTTP API (``zofia api``, docs/api.md), beside the report pages on a port of
    its own. Each client sends a key made with ``zofia api-key add NAME``.

    The server listens on ``listen:port``; put it behind a reverse proxy with TLS. A
    request body over ``max_body_bytes`` is refused (images come base64-encoded in
    the JSON, a third larger than their files). A check not answered at once is
    polled at ``GET /v1/checks/<id>``; the answers ask for no more than one poll every
    ``poll_after_s`` seconds (``Retry-After``).
    """

    listen: str = "127.0.0.1"
    port: int = Field(8090, ge=1, le=65535)
    max_body_bytes: int = Field(20_000_000, ge=100_000)
    poll_after_s: int = Field(5, ge=1, le=600)
