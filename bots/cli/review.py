"""``zofia review``: a moderator's review of a check's verdict, from the terminal."""

from __future__ import annotations

from pathlib import Path

import click

from bots.app.runtime import queue_due_for
from bots.render.sentences import review_refusal
from bots.service.records import CheckNotFoundError
from bots.service.refusals import ReviewRefused
from bots.service.reviews import add_review
from storage.keys import hash_user
from storage.opening import open_store
from storage.reviews import Review
from zofia_engine.report import OUTCOMES

from .options import CONFIG_OPTION, settings_from

__all__ = ["OPERATOR", "review"]

#: who reviews from the terminal (stored, as every reviewer, as an HMAC on platform "cli")
OPERATOR = "operator"


@click.command()
@click.argument("check_id")
@click.option(
    "--verdict",
    type=click.Choice(OUTCOMES),
    required=True,
    help="The verdict it should have; its own verdict confirms it.",
)
@click.option("--note", default="", help="Why, in a few words (at most 300 characters).")
@click.option("--link", default="", help="An http(s) address that backs the review.")
@CONFIG_OPTION
def review(check_id: str, verdict: str, note: str, link: str, config: Path | None) -> None:
    """Confirm or change the verdict of check CHECK_ID, as the operator.

    The review is added to the check's audit trail (never edited; a newer one supersedes
    it), and repeats of the post are answered with it from then on. A changed verdict
    reaches the chats that were shown the card: the running bot edits it there and says
    so once.
    """
    settings = settings_from(config)
    store, secret = open_store(settings.storage)
    operator = hash_user(secret, "cli", OPERATOR)
    asked = Review("", check_id, operator, "cli", store.clock(), "", verdict, note, link)
    try:
        done = add_review(store, asked, queue_due_for(settings, store))
    except CheckNotFoundError:
        raise click.ClickException(f"no check with id {check_id}") from None
    except ReviewRefused as exc:
        raise click.ClickException(review_refusal(exc)) from None
    finally:
        store.close()
    if done.from_verdict == done.to_verdict:
        click.echo(f"check {done.check_id}: {done.to_verdict} confirmed")
    else:
        click.echo(f"check {done.check_id}: {done.from_verdict} changed to {done.to_verdict}")
