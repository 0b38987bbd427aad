"""What an OpenAI-compatible server accepts, and how to read its refusals.

Servers that speak the chat-completions protocol differ in how they take a JSON
schema. OpenAI, vLLM and llama.cpp's ``llama-server`` take ``json_schema``;
llama-cpp-python's own server refuses that type but takes a ``schema`` inside a
``json_object`` response format; DeepSeek takes plain ``json_object``; some take
none. :data:`MODES` lists them from the strictest to the loosest, and
:func:`response_format` writes each. ``structured_output = "auto"`` walks the list
until the server accepts one (see :class:`~zofia_engine.llm.openai_backend.OpenAIBackend`).

A refusal is read from the error's status and body: :func:`refused_field` says which
request field the server named, so that a 400 about ``response_format`` moves to the
next mode, and one about anything else stops the check with the setting to change.
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal

from .structured import bounded_schema

__all__ = [
    "MODES",
    "StructuredMode",
    "refused_field",
    "response_format",
    "schema_instruction",
    "setting_for",
]

StructuredMode = Literal["json_schema", "json_object_schema", "json_object", "none"]
#: structured-output modes, strictest first: the order ``auto`` tries them in
MODES: tuple[StructuredMode, ...] = ("json_schema", "json_object_schema", "json_object", "none")

# Request fields a server may name when it refuses a request, and the setting that sends each.
_FIELDS = {
    "response_format": "llm.openai.structured_output",
    "json_schema": "llm.openai.structured_output",
    "top_logprobs": "llm.openai.logprobs",
    "logprobs": "llm.openai.logprobs",
    "max_tokens": "llm.roles.<role>.max_tokens",
    "model": "llm.openai.model",
    "temperature": "llm.temperature",
}
_WORD = re.compile(r"[A-Za-z_]+")


def response_format(
    mode: StructuredMode, schema: dict[str, Any], name: str, max_tokens: int
) -> dict[str, Any] | None:
    """The ``response_format`` of a request in ``mode``, or ``None`` when it sends none.

    ``json_object_schema`` is llama.cpp's grammar from the schema, so its strings get a
    ``maxLength`` that lets the reply close within ``max_tokens`` (as the embedded
    backend's do); strict ``json_schema`` servers are sent the schema as it is.
    """
    if mode == "json_schema":
        spec = {"name": name, "schema": schema, "strict": True}
        return {"type": "json_schema", "json_schema": spec}
    if mode == "json_object_schema":
        return {"type": "json_object", "schema": bounded_schema(schema, max_tokens)}
    if mode == "json_object":
        return {"type": "json_object"}
    return None


def schema_instruction(mode: StructuredMode, schema: dict[str, Any]) -> str:
    """Words to add to the last message when the server does not enforce the schema:
    the schema itself, so the model knows the keys. Empty when the server enforces it."""
    if mode in ("json_schema", "json_object_schema"):
        return ""
    compact = json.dumps(schema, separators=(",", ":"), ensure_ascii=False)
    return f"\n\nThe JSON object must follow this JSON schema:\n{compact}"


def refused_field(status: int, body: str) -> str | None:
    """The request field a refusal names, when the refusal is about the request itself.

    A 400 or 422 is always about the request (``""`` when no known field is named);
    a 500 only when its body names a field, as llama-cpp-python's server does for a
    response format it does not know. Anything else (429, 502, a bare 500) is ``None``:
    a passing failure, worth a retry.
    """
    words = set(_WORD.findall(body.replace(".", " ")))
    named = next((f for f in _FIELDS if f in words), None)
    if status in (400, 422):
        return named or ""
    if status == 500 and named is not None:
        return named
    return None


def setting_for(field: str) -> str:
    """The setting that puts ``field`` into the request (``llm.openai`` when unknown)."""
    return _FIELDS.get(field, "llm.openai")
