"""``zofia web``: serve the report pages, over the same database as the bots."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import click

from .options import CONFIG_OPTION, settings_from

__all__ = ["web"]


@click.command()
@click.option("--listen", help="Address to listen on (default: [site] listen, 127.0.0.1).")
@click.option("--port", type=click.IntRange(1, 65535), help="Port (default: [site] port, 8080).")
@CONFIG_OPTION
def web(listen: str | None, port: int | None, config: Path | None) -> None:
    """Serve each check's full report at /c/<check id> (and its JSON at /c/<check id>.json).

    Reads the store the bots write ([storage] path); put it behind a reverse proxy
    with TLS and set [site] public_url so the cards link to it.
    """
    from bots.service.pages import ReportPages
    from bots.web.app import serve_until_stopped
    from storage.opening import open_store

    settings = settings_from(config)
    update = {k: v for k, v in (("listen", listen), ("port", port)) if v is not None}
    site = settings.site.model_copy(update=update)
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    store, _ = open_store(settings.storage)
    pages = ReportPages(store)
    try:
        asyncio.run(serve_until_stopped(pages, site, settings.storage.retention_days))
    finally:
        pages.threads.close()
        store.close()  # once page reads still under way are through
