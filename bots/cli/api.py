"""``zofia api`` and ``zofia api-key``: the HTTP API other tiplines call, and its keys."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from collections.abc import Iterator
from pathlib import Path

import click

from bots.app.runtime import StartupError
from bots.app.settings import Settings
from storage.api_keys import ApiKeyError, ApiKeys
from storage.opening import open_store

from .options import CONFIG_OPTION, settings_from

__all__ = ["api", "api_key"]


@click.command()
@click.option("--host", help="Address to listen on (default: [api] listen, 127.0.0.1).")
@click.option("--port", type=click.IntRange(1, 65535), help="Port (default: [api] port, 8090).")
@CONFIG_OPTION
def api(host: str | None, port: int | None, config: Path | None) -> None:
    """Serve the HTTP API: POST /v1/checks and /v1/votes, with a key (docs/api.md).

    Checks go through the same service as the bots' (limits, repeats; on PostgreSQL
    the workers run them). Put it behind a reverse proxy with TLS.
    """
    settings = settings_from(config)
    update = {k: v for k, v in (("listen", host), ("port", port)) if v is not None}
    settings = settings.model_copy(update={"api": settings.api.model_copy(update=update)})
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    try:
        asyncio.run(_serve_until_stopped(settings))
    except StartupError as exc:
        raise click.ClickException(str(exc)) from None


async def _serve_until_stopped(settings: Settings) -> None:
    from bots.api.app import ApiConfig, serving_api
    from bots.app.runtime import running_service

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    site = settings.site
    config = ApiConfig(settings.api, settings.engine.images, site.public_url, site.publisher)
    async with running_service(settings) as service, serving_api(service, config):
        await stop.wait()


@click.group("api-key")
def api_key() -> None:
    """Make, list and revoke the keys of the HTTP API."""


@contextlib.contextmanager
def _keys(config: Path | None) -> Iterator[ApiKeys]:
    """The store's keys, the store closed after; a refusal said in its one sentence."""
    store, secret = open_store(settings_from(config).storage)
    try:
        yield ApiKeys(store.database, secret)
    except ApiKeyError as exc:
        raise click.ClickException(str(exc)) from None
    finally:
        store.close()


@api_key.command("add")
@click.argument("name")
@CONFIG_OPTION
def add(name: str, config: Path | None) -> None:
    """Make a key named NAME and print it: it is shown this once, and stored hashed."""
    with _keys(config) as keys:
        key = keys.add(name)
    click.echo(key)
    click.echo(f"(the key {name!r}: shown once, keep it; zofia api-key revoke {name})", err=True)


@api_key.command("list")
@CONFIG_OPTION
def list_keys(config: Path | None) -> None:
    """List the keys by name, with when each was made (and revoked)."""
    with _keys(config) as keys:
        found = keys.all()
    if not found:
        click.echo("No API keys; make one with: zofia api-key add NAME")
    for key in found:
        made = key.created_at.strftime("%Y-%m-%d %H:%M")
        revoked = key.revoked_at.strftime(", revoked %Y-%m-%d %H:%M") if key.revoked_at else ""
        click.echo(f"{key.name}\tmade {made} UTC{revoked}")


@api_key.command("revoke")
@click.argument("name")
@CONFIG_OPTION
def revoke(name: str, config: Path | None) -> None:
    """Revoke the key named NAME: it is refused from now on (its name stays taken)."""
    with _keys(config) as keys:
        keys.revoke(name)
    click.echo(f"Revoked {name!r}.")
