"""fetch_article against a fake news site on loopback, and its SSRF guard.

The peer lives on 127.0.0.1, which the guard refuses by default; tests that
need its pages pass ``allow_private=True``. The guard itself is tested on URLs
that must be refused before any connection is made (a patched event loop fails
the test on any connect), and on redirect hops and host names resolved through
a patched ``getaddrinfo``, with the guard told that 127.0.0.1 is public. Every refusal
for where a link points is the same sentence (``UNREACHABLE``); which it was is read
from the log.
"""

from __future__ import annotations

import asyncio
import datetime
import logging
import socket
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from typing import Any

import aiohttp
import pytest
import pytest_asyncio
import yarl

from tests.peers.servers.article_peer import BODY_SENTENCES, IMAGE, PLAIN_TEXT, ArticlePeer

from zofia_engine import fetch
from zofia_engine.errors import InvalidPostError
from zofia_engine.fetch import (
    UNREACHABLE,
    FetchedArticle,
    GuardedResolver,
    fetch_article,
    refusal_kind,
)


@pytest_asyncio.fixture
async def peer() -> AsyncIterator[ArticlePeer]:
    async with ArticlePeer() as server:
        yield server


@contextmanager
def forbid_connections() -> Iterator[list[Any]]:
    """Fail any TCP connect made on the running loop; yields the attempts."""
    loop = asyncio.get_running_loop()
    attempts: list[Any] = []

    async def refuse(*args: Any, **kwargs: Any) -> Any:
        attempts.append(args)
        raise AssertionError(f"a connection was attempted: {args!r}")

    saved = {name: getattr(loop, name) for name in ("sock_connect", "create_connection")}
    for name in saved:
        setattr(loop, name, refuse)
    try:
        yield attempts
    finally:
        for name, value in saved.items():
            setattr(loop, name, value)


@pytest.fixture
def fake_dns(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """Names added to the returned dict resolve to the given address; ``*.invalid`` fails."""
    table: dict[str, str] = {}
    real = socket.getaddrinfo

    def getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(host, str) and host in table:
            return real(table[host], port, *args, **kwargs)
        if isinstance(host, str) and host.endswith(".invalid"):
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return table


@pytest.fixture
def loopback_is_public(monkeypatch: pytest.MonkeyPatch) -> None:
    """Let the guard treat 127.0.0.1 (the peer) as public; everything else as usual."""
    real = fetch.refusal_kind
    monkeypatch.setattr(fetch, "refusal_kind", lambda ip: None if ip == "127.0.0.1" else real(ip))


async def refusal(url: str, **kwargs: Any) -> InvalidPostError:
    with pytest.raises(InvalidPostError) as info:
        await fetch_article(url, **kwargs)
    return info.value


def unreachable(error: InvalidPostError, url: str) -> bool:
    """Whether ``error`` is the one sentence for a link that cannot be reached."""
    return str(error) == UNREACHABLE.format(url=yarl.URL(url))


# --- the address table ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("ip", "public"),
    [
        ("8.8.8.8", True),
        ("1.1.1.1", True),
        ("2606:4700::1111", True),
        ("::ffff:8.8.8.8", True),
        ("127.0.0.1", False),
        ("127.8.9.10", False),
        ("::1", False),
        ("10.0.0.1", False),
        ("172.16.5.4", False),
        ("192.168.1.1", False),
        ("100.64.0.1", False),  # carrier-grade NAT
        ("169.254.169.254", False),  # cloud metadata
        ("fe80::1", False),
        ("fe80::1%eth0", False),
        ("fc00::1", False),
        ("fd12:3456::1", False),
        ("0.0.0.0", False),
        ("::", False),
        ("224.0.0.1", False),
        ("ff02::1", False),
        ("255.255.255.255", False),
        ("240.0.0.1", False),
        ("::ffff:127.0.0.1", False),
        ("::ffff:10.0.0.1", False),
        ("::ffff:169.254.169.254", False),
        ("2002:7f00:1::", False),  # 6to4 wrapping 127.0.0.1
        ("localhost", False),
        ("not an address", False),
    ],
)
def test_only_public_addresses_are_allowed(ip: str, public: bool) -> None:
    assert (refusal_kind(ip) is None) is public


# --- refused before any connection ---------------------------------------------------


@pytest.mark.parametrize(
    ("url", "kind"),
    [
        ("http://localhost/", "loopback"),
        ("http://LOCALHOST.:8080/admin", "loopback"),
        ("http://api.localhost/", "loopback"),
        ("http://127.0.0.1/", "loopback"),
        ("http://[::1]/", "loopback"),
        ("http://169.254.169.254/latest/meta-data/", "link-local"),
        ("http://10.0.0.1/", "private"),
        ("https://192.168.0.1/router", "private"),
        ("http://0.0.0.0:8000/", "unspecified"),
        ("http://[::ffff:127.0.0.1]/", "IPv4-embedded loopback"),
        ("http://2130706433/", "loopback"),  # 127.0.0.1 as one decimal number
        ("http://127.1/", "loopback"),
        ("http://0x7f.0.0.1/", "loopback"),
    ],
)
async def test_local_addresses_are_refused_without_connecting(
    url: str, kind: str, caplog: pytest.LogCaptureFixture
) -> None:
    with forbid_connections() as attempts, caplog.at_level(logging.INFO, "zofia_engine.fetch"):
        error = await refusal(url)
    assert unreachable(error, url) and kind not in str(error)
    assert f"is a {kind} address" in caplog.text  # which it was: the log alone
    assert attempts == []  # refused before any connection, not after a timeout


@pytest.mark.parametrize(
    "url", ["ftp://example.com/file.txt", "file:///etc/passwd", "gopher://example.com/"]
)
async def test_other_schemes_are_refused_without_connecting(url: str) -> None:
    with forbid_connections() as attempts:
        error = await refusal(url, allow_private=True)
    assert "is not an http or https URL" in str(error)
    assert attempts == []


async def test_the_loopback_peer_is_refused_by_default(
    peer: ArticlePeer, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO, "zofia_engine.fetch"):
        error = await refusal(f"{peer.root}/article")
    assert unreachable(error, f"{peer.root}/article")
    assert "is a loopback address" in caplog.text
    assert sum(peer.hits.values()) == 0


async def test_a_name_resolving_to_loopback_is_refused_by_the_resolver(
    peer: ArticlePeer, fake_dns: dict[str, str], caplog: pytest.LogCaptureFixture
) -> None:
    fake_dns["news.example"] = "127.0.0.1"
    url = f"http://news.example:{peer.port}/article"
    with caplog.at_level(logging.INFO, "zofia_engine.fetch"):
        error = await refusal(url)
    assert unreachable(error, url)
    assert "resolves to a loopback address" in caplog.text
    assert isinstance(error.__cause__, aiohttp.ClientConnectorDNSError)
    assert sum(peer.hits.values()) == 0
    # The same name fetches fine when private addresses are allowed: the refusal was the guard.
    article = await fetch_article(url, allow_private=True)
    assert BODY_SENTENCES[0] in article.text
    assert peer.hits["/article"] == 1


async def test_guarded_resolver_keeps_only_public_addresses() -> None:
    class Fixed(aiohttp.abc.AbstractResolver):
        def __init__(self, *hosts: str) -> None:
            self.hosts = hosts

        async def resolve(self, host: str, port: int = 0, family: Any = 0) -> Any:
            return [
                {"hostname": host, "host": h, "port": port, "family": 2, "proto": 6, "flags": 0}
                for h in self.hosts
            ]

        async def close(self) -> None:
            pass

    mixed = GuardedResolver(Fixed("10.0.0.5", "93.184.216.34", "::1"))
    assert [r["host"] for r in await mixed.resolve("mixed.example", 80)] == ["93.184.216.34"]
    with pytest.raises(OSError, match="private"):
        await GuardedResolver(Fixed("192.168.1.9", "10.1.1.1")).resolve("lan.example")


# --- redirect hops are checked too ---------------------------------------------------


async def test_a_redirect_to_the_metadata_address_is_refused(
    peer: ArticlePeer, loopback_is_public: None, caplog: pytest.LogCaptureFixture
) -> None:
    target = "http://169.254.169.254/latest/meta-data/iam/"
    with caplog.at_level(logging.INFO, "zofia_engine.fetch"):
        error = await refusal(f"{peer.root}/to?url={target}", timeout_s=5)
    assert unreachable(error, f"{peer.root}/to?url={target}")  # the link as it was sent
    assert f"{target} is a link-local address" in caplog.text
    assert peer.hits["/to"] == 1
    assert not isinstance(error.__cause__, TimeoutError)  # refused, not a connect timeout


async def test_a_redirect_to_a_name_resolving_to_a_private_address_is_refused(
    peer: ArticlePeer,
    loopback_is_public: None,
    fake_dns: dict[str, str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    fake_dns["intranet.example"] = "10.20.30.40"
    url = f"{peer.root}/to?url=http://intranet.example/secrets"
    with caplog.at_level(logging.INFO, "zofia_engine.fetch"):
        error = await refusal(url, timeout_s=5)
    assert unreachable(error, url)
    assert "intranet.example/secrets resolves to a private address" in caplog.text


async def test_a_redirect_to_another_scheme_is_refused(
    peer: ArticlePeer, loopback_is_public: None
) -> None:
    error = await refusal(f"{peer.root}/to?url=file:///etc/passwd")
    assert "file:///etc/passwd is not an http or https URL" in str(error)


async def test_the_guard_lets_public_hosts_through(
    peer: ArticlePeer, loopback_is_public: None
) -> None:
    article = await fetch_article(f"{peer.root}/article")
    assert BODY_SENTENCES[1] in article.text


# --- extraction ----------------------------------------------------------------------


async def test_article_text_title_and_date_without_boilerplate(peer: ArticlePeer) -> None:
    url = f"{peer.root}/article"
    article = await fetch_article(url, allow_private=True)
    assert isinstance(article, FetchedArticle)
    assert article.url == url
    assert article.final_url == url
    for sentence in BODY_SENTENCES:
        assert sentence in article.text
    for boilerplate in ("Subscribe now", "cheap widgets", "All rights reserved", "Most read"):
        assert boilerplate not in article.text
    assert "dataLayer" not in article.text
    assert "City council approves new bike lanes" in article.title
    assert article.published == datetime.date(2024, 3, 5)
    assert article.site == "The Daily Example"


async def test_broken_html_still_yields_text(peer: ArticlePeer) -> None:
    article = await fetch_article(f"{peer.root}/broken", allow_private=True)
    for sentence in BODY_SENTENCES:
        assert sentence in article.text
    assert article.published is None  # "by the end of 2026" in the text is no date
    assert article.site.startswith("127.0.0.1")


async def test_charset_from_meta_tag(peer: ArticlePeer) -> None:
    article = await fetch_article(f"{peer.root}/latin1", allow_private=True)
    assert "café near the Zürich station serves crème brûlée" in article.text
    assert "\ufffd" not in article.text


async def test_plain_text_is_returned_as_is(peer: ArticlePeer) -> None:
    article = await fetch_article(f"{peer.root}/plain", allow_private=True)
    assert article.text == PLAIN_TEXT.strip()
    assert (article.title, article.published, article.site) == ("", None, "127.0.0.1")


async def test_a_page_without_article_text_is_refused(peer: ArticlePeer) -> None:
    url = f"{peer.root}/empty"
    error = await refusal(url, allow_private=True)
    assert str(error) == f"No article text found at {url}."


# --- what is not fetched -------------------------------------------------------------


async def test_a_link_to_an_image_is_an_image_post(peer: ArticlePeer) -> None:
    article = await fetch_article(f"{peer.root}/image.png", allow_private=True)
    assert (article.image, article.media_type, article.text) == (IMAGE, "image/png", "")
    post = article.as_post()
    assert post.text == "" and [i.media_type for i in post.images] == ["image/png"]
    assert post.url == f"{peer.root}/image.png"


async def test_other_content_types_are_refused(peer: ArticlePeer) -> None:
    error = await refusal(f"{peer.root}/pdf", allow_private=True)
    assert "application/pdf" in str(error)
    assert "only HTML and plain-text pages and images can be checked" in str(error)


@pytest.mark.parametrize("path", ["/big", "/big-stream"])
async def test_pages_over_the_size_cap_are_refused(peer: ArticlePeer, path: str) -> None:
    error = await refusal(f"{peer.root}{path}", allow_private=True, max_bytes=10_000)
    assert "is larger than 10,000 bytes" in str(error)
    # The same page under a cap it fits is fetched.
    article = await fetch_article(f"{peer.root}{path}", allow_private=True, max_bytes=1_000_000)
    assert article.text


async def test_a_declared_oversize_is_refused_before_reading_the_body(
    peer: ArticlePeer,
) -> None:
    # The page sends its header and a few bytes, then holds on: only the declared size
    # can refuse it (reading on would end in the 3 s timeout, another sentence).
    error = await refusal(f"{peer.root}/huge-declared", allow_private=True, timeout_s=3)
    assert "is larger than 5,000,000 bytes" in str(error)
    assert not isinstance(error.__cause__, TimeoutError)


async def test_an_error_status_is_reported(peer: ArticlePeer) -> None:
    url = f"{peer.root}/missing"
    error = await refusal(url, allow_private=True)
    assert str(error) == f"{url} answered 404 Not Found."


async def test_a_redirect_chain_is_followed(peer: ArticlePeer) -> None:
    url = f"{peer.root}/r/3"
    article = await fetch_article(url, allow_private=True)
    assert article.url == url
    assert article.final_url == f"{peer.root}/article"
    assert BODY_SENTENCES[2] in article.text
    assert [peer.hits[f"/r/{n}"] for n in (3, 2, 1, 0)] == [1, 1, 1, 1]


async def test_a_chain_longer_than_max_redirects_is_refused(peer: ArticlePeer) -> None:
    error = await refusal(f"{peer.root}/r/3", allow_private=True, max_redirects=2)
    assert "redirected more than 2 times" in str(error)
    assert peer.hits["/article"] == 0


async def test_a_redirect_loop_is_bounded(peer: ArticlePeer) -> None:
    error = await refusal(f"{peer.root}/loop", allow_private=True, max_redirects=5)
    assert "redirected more than 5 times" in str(error)
    assert peer.hits["/loop"] == 6


async def test_a_slow_page_times_out(peer: ArticlePeer, caplog: pytest.LogCaptureFixture) -> None:
    # The page answers only when the peer closes: the timeout alone ends the wait.
    with caplog.at_level(logging.INFO, "zofia_engine.fetch"):
        error = await refusal(f"{peer.root}/slow", allow_private=True, timeout_s=0.3)
    assert unreachable(error, f"{peer.root}/slow")
    assert "no answer within 0.3 s" in caplog.text
    assert isinstance(error.__cause__, TimeoutError)


async def test_an_unknown_host_is_reported(
    fake_dns: dict[str, str], caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO, "zofia_engine.fetch"):
        error = await refusal("http://no-such-site.invalid/news", timeout_s=5)
    assert unreachable(error, "http://no-such-site.invalid/news")
    assert "could not be resolved" in caplog.text
    assert isinstance(error.__cause__, aiohttp.ClientConnectorDNSError)


async def test_a_closed_port_is_reported() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}/article"
    error = await refusal(url, allow_private=True, timeout_s=5)
    # The same sentence whatever the socket said: refused, reset and unreachable would
    # otherwise map a site's ports through the bot. The cause stays for the log.
    assert str(error) == f"{url} could not be fetched."
    assert isinstance(error.__cause__, aiohttp.ClientConnectorError)


async def test_private_unknown_and_closed_hosts_get_one_sentence(
    fake_dns: dict[str, str], loopback_is_public: None
) -> None:
    """A name that resolves to a private address, one that does not resolve, and a public
    address whose port is closed: whoever sends the link cannot tell them apart."""
    fake_dns["intranet.example"] = "10.20.30.40"
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    urls = [
        "http://intranet.example/admin",
        "http://no-such-site.invalid/admin",
        f"http://127.0.0.1:{port}/admin",
    ]
    said = {str(await refusal(url, timeout_s=5)).replace(url, "<link>") for url in urls}
    assert said == {UNREACHABLE.format(url="<link>")}
