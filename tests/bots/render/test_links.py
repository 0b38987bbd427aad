"""Which links a card may show: one rule, the same on every platform."""

from __future__ import annotations

import pytest

from bots.discord.render import safe_url as discord_link
from bots.render.links import MAX_URL, safe_url
from bots.telegram.render import safe_href as telegram_link

HOSTILE = [
    "javascript:alert(1)",
    "JAVASCRIPT:alert(1)",
    "data:text/html,<script>alert(1)</script>",
    "file:///etc/passwd",
    "http://",
    "https:///no-host",
    "https://example.org/a b",
    "https://example.org/\x1b[31m",
    "https://example.org/\u0085next-line",
    "https://[::1/broken",
    "https://example.org/" + "a" * MAX_URL,
]


@pytest.mark.parametrize("url", HOSTILE)
def test_no_platform_links_what_the_rule_refuses(url: str) -> None:
    assert safe_url(url) == ""
    assert telegram_link(url) == "" and discord_link(url) == ""


def test_a_plain_web_address_is_linked_everywhere() -> None:
    url = "https://news.example.org/2026/11/story?id=7&x=1"
    assert safe_url(url) == url
    assert telegram_link(url) == "https://news.example.org/2026/11/story?id=7&amp;x=1"
    assert discord_link(url) == url
