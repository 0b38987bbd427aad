"""What reaches an OpenAI-compatible server: the SDK client, holding a key only for the
server it was set for, and the messages, with chat-template control strings defused.

**Keys.** A key goes only to the base URL it was configured with (:func:`key_for`): a
role that names another server without a key of its own sends none. The SDK would
otherwise fill what it is not given from the environment (``OPENAI_API_KEY``,
``OPENAI_BASE_URL``, ``OPENAI_CUSTOM_HEADERS``, ``OPENAI_ORG_ID``, ``OPENAI_PROJECT_ID``),
so :func:`client_for` gives it everything: the base URL, the key (:data:`NO_KEY` when
there is none), the ``Authorization`` header itself, and, for any server but
api.openai.com, no organisation or project.

**Messages.** :func:`chat_message` defuses every message's text with the one rule of
:func:`~zofia_engine.llm.special_tokens.defuse`, whatever built it (a prompt, a web
passage, a claim, a debate turn), as the request is built.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from .base import ChatMessage
from .special_tokens import defuse

if TYPE_CHECKING:
    import openai

__all__ = [
    "NO_KEY",
    "OFFICIAL_URL",
    "chat_message",
    "client_for",
    "key_for",
    "same_server",
    "with_text",
]

#: The API root an empty ``base_url`` means.
OFFICIAL_URL = "https://api.openai.com/v1"
#: What is sent as the bearer key to a server no key was set for (the SDK needs one).
NO_KEY = "none"


def _normal(base_url: str) -> tuple[str, str, str]:
    """``base_url`` as (scheme, host:port, path), lowercased where case does not count;
    empty means api.openai.com."""
    parts = urlsplit((base_url or OFFICIAL_URL).strip())
    return parts.scheme.lower(), parts.netloc.lower(), parts.path.rstrip("/")


def same_server(a: str, b: str) -> bool:
    """Whether base URLs ``a`` and ``b`` name the same API root (a trailing slash, the
    case of the scheme and host aside; empty is api.openai.com)."""
    return _normal(a) == _normal(b)


def key_for(base_url: str, own_key: str, default_url: str, default_key: str) -> str:
    """The key a server at ``base_url`` is sent: ``own_key`` (set beside it), else
    ``default_key`` only when ``base_url`` is ``default_url``, the server that key was
    set for (``[llm.openai]``); otherwise none (``""``)."""
    if own_key:
        return own_key
    return default_key if same_server(base_url, default_url) else ""


def client_for(base_url: str, api_key: str, timeout_s: float) -> openai.AsyncOpenAI:
    """The SDK's client for exactly ``base_url`` (empty: api.openai.com) and ``api_key``
    (empty: :data:`NO_KEY`): no key, base URL or ``Authorization`` header is taken from
    the environment, and an OpenAI organisation or project only for api.openai.com."""
    import openai

    url = base_url or OFFICIAL_URL
    key = api_key or NO_KEY
    client = openai.AsyncOpenAI(
        base_url=url,
        api_key=key,
        max_retries=0,
        timeout=timeout_s,
        default_headers={"Authorization": f"Bearer {key}"},
    )
    if not same_server(url, OFFICIAL_URL):  # an OpenAI account's ids, read from the env
        client.organization = None
        client.project = None
    return client


def chat_message(m: ChatMessage) -> dict[str, Any]:
    """A message in the chat-completions format, its text defused (no chat-template
    control string survives as one); with images, a list of content parts (the text,
    then each image as an ``image_url`` part)."""
    text = defuse(m.content)
    if not m.images:
        return {"role": m.role, "content": text}
    parts: list[dict[str, Any]] = [{"type": "text", "text": text}]
    parts += [{"type": "image_url", "image_url": {"url": url}} for url in m.images]
    return {"role": m.role, "content": parts}


def with_text(message: dict[str, Any], extra: str) -> dict[str, Any]:
    """``message`` (as :func:`chat_message` made it) with ``extra``, the engine's own
    words, added to its text."""
    content = message["content"]
    if isinstance(content, str):
        return {**message, "content": content + extra}
    first, *rest = content
    return {**message, "content": [{**first, "text": first["text"] + extra}, *rest]}
