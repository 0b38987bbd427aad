"""The ``zofia`` command line. A thin layer: each option is one argument of the engine.

Subcommands are imported when they run (or when ``--help`` lists them by name), so
``zofia check`` never imports python-telegram-bot or discord.py.
"""

from __future__ import annotations

import importlib

import click

__all__ = ["main"]

#: command → "module:function", imported on first use
COMMANDS = {
    "check": "bots.cli.check:check",
    "config": "bots.cli.config:config",
    "keywords": "bots.cli.check:keywords",
    "history": "bots.cli.records:history",
    "show": "bots.cli.records:show",
    "review": "bots.cli.review:review",
    "export": "bots.cli.records:export",
    "doctor": "bots.cli.doctor:doctor",
    "eval": "bots.cli.evaluate:eval_command",
    "calibrate": "bots.cli.calibrate:calibrate",
    "corpus": "bots.cli.corpus:corpus",
    "telegram": "bots.cli.serve:telegram",
    "discord": "bots.cli.serve:discord",
    "whatsapp": "bots.cli.serve:whatsapp",
    "web": "bots.cli.web:web",
    "worker": "bots.cli.worker:worker",
    "queue": "bots.cli.worker:queue",
    "api": "bots.cli.api:api",
    "api-key": "bots.cli.api:api_key",
}


class LazyGroup(click.Group):
    """A group whose subcommands are imported only when one is invoked."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = COMMANDS.get(cmd_name)
        if target is None:
            return None
        module, name = target.split(":")
        command = getattr(importlib.import_module(module), name)
        assert isinstance(command, click.Command)
        return command


@click.group(cls=LazyGroup)
@click.version_option(package_name="zofia-factcheck")
def main() -> None:
    """Fact-check posts with ZoFia: entity-guided retrieval and multi-LLM debate."""
