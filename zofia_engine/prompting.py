"""Prompt templates: text files in ``zofia_engine/prompts``, rendered with Jinja2.

``StrictUndefined`` makes a missing variable an error instead of an empty
string, so a template and its caller cannot drift apart silently.
"""

from __future__ import annotations

from functools import lru_cache
from importlib import resources
from typing import Any

import jinja2

__all__ = ["TEMPLATE_NAMES", "render"]

_PACKAGE = "zofia_engine.prompts"


def _names() -> tuple[str, ...]:
    files = resources.files(_PACKAGE)
    return tuple(sorted(f.name[:-4] for f in files.iterdir() if f.name.endswith(".txt")))


TEMPLATE_NAMES = _names()


@lru_cache(maxsize=1)
def _environment() -> jinja2.Environment:
    def load(name: str) -> str:
        return resources.files(_PACKAGE).joinpath(f"{name}.txt").read_text(encoding="utf-8")

    # Plain text, not HTML: autoescape stays off on purpose.
    return jinja2.Environment(
        loader=jinja2.FunctionLoader(load),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=False,
    )


def render(name: str, **variables: Any) -> str:
    """Render the template ``prompts/<name>.txt``.

    Raises:
        jinja2.UndefinedError: a variable the template uses was not given.
        jinja2.TemplateNotFound: there is no such template.
    """
    return _environment().get_template(name).render(**variables).strip()
