"""Reading JSON replies: schemas from pydantic models, tolerant parsing.

Servers that enforce a schema return clean JSON; others wrap it in prose or
code fences. :func:`parse_reply` finds the first JSON object in the text and
validates it against the model, so both kinds are read the same way.
"""

from __future__ import annotations

import json
import re
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

__all__ = ["ReplyParseError", "json_schema", "parse_reply"]

T = TypeVar("T", bound=BaseModel)

_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL | re.IGNORECASE)


class ReplyParseError(ValueError):
    """The reply holds no JSON object that fits the schema; the message says why."""


def json_schema(
    model: type[BaseModel],
    enums: dict[str, list[str]] | None = None,
    max_items: dict[str, int] | None = None,
) -> dict[str, Any]:
    """The JSON schema of ``model`` in the strict form OpenAI and llama.cpp accept.

    Args:
        model: a pydantic model whose fields are all required and extra-forbidding.
        enums: restrict string fields (or the items of string-list fields) to
            these values, e.g. the evidence ids a debater may cite.
    """
    schema = model.model_json_schema()
    for name, values in (enums or {}).items():
        prop = schema["properties"][name]
        target = prop["items"] if prop.get("type") == "array" else prop
        target["enum"] = list(values)
    for name, limit in (max_items or {}).items():
        schema["properties"][name]["maxItems"] = limit
    return schema


def _candidates(text: str) -> list[Any]:
    """Top-level JSON objects found in ``text``: fenced ones first, then the rest in order."""
    found: list[Any] = []
    decoder = json.JSONDecoder()
    for source in [*_FENCE.findall(text), text]:
        pos = source.find("{")
        while pos != -1:
            try:
                value, end = decoder.raw_decode(source, pos)
            except json.JSONDecodeError:
                pos = source.find("{", pos + 1)
                continue
            if isinstance(value, dict):
                found.append(value)
            pos = source.find("{", end)
    return found


def parse_reply(text: str, model: type[T]) -> T:
    """The first JSON object in ``text`` that validates as ``model``.

    Raises:
        ReplyParseError: no object was found, or none fits; the message is
            short enough to show the model in a repair request.
    """
    objects = _candidates(text)
    if not objects:
        snippet = text.strip()[:80]
        raise ReplyParseError(f"no JSON object found in the reply (it began: {snippet!r})")
    problem = ""
    for obj in objects:
        try:
            return model.model_validate(obj)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "the object"
            problem = f"{where}: {first['msg']}"
    raise ReplyParseError(f"the JSON object does not fit the schema ({problem})")
