"""Reading JSON replies: schemas from pydantic models, tolerant parsing.

Servers that enforce a schema return clean JSON; others wrap it in prose or
code fences. :func:`parse_reply` finds the first JSON object in the text and
validates it against the model, so both kinds are read the same way.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

__all__ = ["ReplyParseError", "bounded_schema", "json_schema", "parse_reply"]

T = TypeVar("T", bound=BaseModel)

_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL | re.IGNORECASE)


class ReplyParseError(ValueError):
    """The reply holds no JSON object that fits the schema; the message says why."""


def json_schema(
    model: type[BaseModel],
    enums: Mapping[str, Sequence[str] | Sequence[int]] | None = None,
    max_items: dict[str, int] | None = None,
) -> dict[str, Any]:
    """The JSON schema of ``model`` in the strict form OpenAI and llama.cpp accept.

    Args:
        model: a pydantic model whose fields are all required and extra-forbidding.
        enums: restrict string fields (or the items of string-list fields) to
            these values, e.g. the evidence ids a debater may cite.
    """
    schema = _inlined(model.model_json_schema())
    for name, values in (enums or {}).items():
        prop = schema["properties"][name]
        target = prop["items"] if prop.get("type") == "array" else prop
        target["enum"] = list(values)
    for name, limit in (max_items or {}).items():
        schema["properties"][name]["maxItems"] = limit
    return schema


def _inlined(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with every ``$ref`` to its ``$defs`` replaced by the definition, so that
    nested objects (a list of sub-claims) are bounded and checked like the top level."""
    defs = schema.pop("$defs", {})

    def resolve(node: Any) -> Any:
        if isinstance(node, dict):
            ref = node.get("$ref", "")
            if ref.startswith("#/$defs/"):
                return resolve(defs[ref.removeprefix("#/$defs/")])
            return {k: resolve(v) for k, v in node.items()}
        if isinstance(node, list):
            return [resolve(v) for v in node]
        return node

    resolved: dict[str, Any] = resolve(schema)
    return resolved


CHARS_PER_TOKEN = 3  # conservative for English prose inside JSON strings
DEFAULT_ITEMS = 4
ENUM_ITEMS = 6


def bounded_schema(schema: dict[str, Any], max_tokens: int) -> dict[str, Any]:
    """``schema`` with a ``maxLength`` on every free-text string, so that a reply
    generated under a grammar closes its JSON within ``max_tokens``.

    Small models otherwise write until the token cap and leave the object open.
    Only for backends that enforce the schema with a grammar (llama.cpp); strict
    OpenAI mode does not accept ``maxLength``.
    """
    schema = json.loads(json.dumps(schema))
    props: dict[str, Any] = schema.get("properties", {})
    slots: list[tuple[dict[str, Any], int]] = []
    overhead = 8 * len(props) + 16  # keys, quotes, punctuation, enum values
    for prop in props.values():
        if prop.get("type") == "array" and "enum" in prop.get("items", {}):
            prop.setdefault("maxItems", ENUM_ITEMS)
            overhead += 4 * int(prop["maxItems"])
        if prop.get("type") == "string" and "enum" not in prop and "maxLength" not in prop:
            slots.append((prop, 1))
        elif prop.get("type") == "object":  # one object: its strings
            overhead += _object_slots(prop, 1, slots)
        elif prop.get("type") == "array":
            items = prop.get("items", {})
            count = int(prop.get("maxItems", DEFAULT_ITEMS))
            if items.get("type") == "string" and "enum" not in items and "maxLength" not in items:
                prop.setdefault("maxItems", count)
                slots.append((items, count))
            elif items.get("type") == "object":  # a list of objects: each one's strings
                prop.setdefault("maxItems", count)
                overhead += _object_slots(items, count, slots)
    if not slots:
        return schema
    budget = max(0, max_tokens - overhead) * CHARS_PER_TOKEN
    per_slot = max(24, budget // sum(weight for _, weight in slots))
    for target, _ in slots:
        if not target.get("maxLength"):
            target["maxLength"] = per_slot
    return schema


def _object_slots(node: dict[str, Any], count: int, slots: list[tuple[dict[str, Any], int]]) -> int:
    """Add the free-text strings of object ``node`` (``count`` of them) to ``slots``;
    return the tokens its structure takes."""
    inner = node.get("properties", {})
    for field in inner.values():
        if field.get("type") == "string" and "enum" not in field:
            field.setdefault("maxLength", 0)
            slots.append((field, count))
    return count * (8 * len(inner) + 4)


def _candidates(text: str) -> list[Any]:
    """Top-level JSON objects found in ``text``: fenced ones first, then the rest in order."""
    found: list[Any] = []
    decoder = json.JSONDecoder(strict=False)  # raw newlines inside strings are common
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
