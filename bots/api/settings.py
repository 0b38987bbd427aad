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

    Before its key is read, each client address may make ``per_minute`` requests a
    minute (an IPv6 address counts by its /64; the address a proxy puts last in
    ``X-Forwarded-For`` when ``forwarded_for`` is on, as for the report pages); then
    each key ``key_per_minute``, polls and posts alike. At most ``max_bodies`` posts
    are read and parsed at once (one worker process each for those of 1 MB or more),
    and four times as many wait their turn; past that a post is refused before it is
    read. Every refusal is a 429 with ``Retry-After``.

    A key may register a webhook (``PUT /v1/webhook``): an https address on the public
    internet (``webhook_allow_private`` lets a test use a loopback one). The server looks
    for calls it owes every ``webhook_poll_s`` seconds, gives each attempt
    ``webhook_timeout_s``, retries a failed one after ``webhook_retry_s`` seconds,
    doubling up to an hour, and gives it up ``webhook_give_up_s`` after it was owed.
    """

    listen: str = "127.0.0.1"
    port: int = Field(8090, ge=1, le=65535)
    max_body_bytes: int = Field(20_000_000, ge=100_000)
    poll_after_s: int = Field(5, ge=1, le=600)
    per_minute: int = Field(600, ge=1)
    forwarded_for: bool = False
    key_per_minute: int = Field(300, ge=1)
    max_bodies: int = Field(2, ge=1, le=64)
    webhook_poll_s: float = Field(5.0, gt=0, le=600)
    webhook_timeout_s: float = Field(10.0, gt=0, le=120)
    webhook_retry_s: float = Field(30.0, gt=0, le=3600)
    webhook_give_up_s: float = Field(86_400.0, gt=0)
    webhook_allow_private: bool = False
