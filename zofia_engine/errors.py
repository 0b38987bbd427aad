"""The engine's exceptions, one tree.

    ZofiaError
     ├── ConfigError            a setting is unknown, mistyped or missing
     ├── ModelUnavailableError  a model or its package is not installed
     ├── SourceError            a retrieval backend did not deliver
     │    ├── SourceRateLimitedError   HTTP 429 after every retry
     │    ├── SourceTimeoutError       no answer within the timeout
     │    └── SourceResponseError      bad status, or a body that is not the API's format
     ├── LLMError               a language-model call did not deliver
     │    ├── LLMRateLimitedError      HTTP 429 after every retry
     │    ├── LLMTimeoutError          no answer within the timeout
     │    ├── LLMResponseError         an error status, or a reply that is not the API's format
     │    │    └── LLMConfigError      the server refused the request as configured
     │    └── LLMBudgetExceededError   the check spent its call or token budget
     └── InvalidPostError       the post cannot be checked (empty, an unreadable URL, an
                                image or voice note refused, too much such work waiting):
                                its ``kind`` and ``values`` say why (:mod:`.refusals`),
                                ``str()`` says it in English; ``bots/render`` words it
                                in a chat's language from the kind and values

Third-party errors (aiohttp, json, tenacity) are translated at the boundary
where they happen, with the original kept as ``__cause__``.
"""

from __future__ import annotations

from .refusals import PostRefusal, english, refusal_blanks

__all__ = [
    "ConfigError",
    "InvalidPostError",
    "LLMBudgetExceededError",
    "LLMConfigError",
    "LLMError",
    "LLMRateLimitedError",
    "LLMResponseError",
    "LLMTimeoutError",
    "ModelUnavailableError",
    "SourceError",
    "SourceRateLimitedError",
    "SourceResponseError",
    "SourceTimeoutError",
    "ZofiaError",
]


class ZofiaError(Exception):
    """Base class of every error the engine raises on purpose."""


class ConfigError(ZofiaError):
    """A setting is wrong; the message names it."""


class ModelUnavailableError(ZofiaError):
    """A model could not be loaded; the message says what to install."""


class SourceError(ZofiaError):
    """A retrieval source failed. ``source`` names it (``web:brave``, ``wikipedia:mediawiki``)."""

    def __init__(self, source: str, message: str) -> None:
        super().__init__(f"{source}: {message}")
        self.source = source
        self.detail = message


class SourceRateLimitedError(SourceError):
    """The source kept answering 429 Too Many Requests."""


class SourceTimeoutError(SourceError):
    """The source did not answer in time."""


class SourceResponseError(SourceError):
    """The source answered with an error status or a malformed body."""


class LLMError(ZofiaError):
    """A language-model call failed. ``backend`` names it (``openai:gpt-4o-mini``)."""

    def __init__(self, backend: str, message: str) -> None:
        super().__init__(f"{backend}: {message}")
        self.backend = backend
        self.detail = message


class LLMRateLimitedError(LLMError):
    """The server kept answering 429 Too Many Requests."""


class LLMTimeoutError(LLMError):
    """The server did not answer in time."""


class LLMResponseError(LLMError):
    """The server answered with an error status or a malformed body."""


class LLMConfigError(LLMResponseError):
    """The server refused the request as the settings make it (a 400 or 422, an unknown
    model, a bad key): retrying cannot help, so the check stops. ``setting`` names the
    setting to change."""

    def __init__(self, backend: str, message: str, setting: str) -> None:
        super().__init__(backend, message)
        self.setting = setting


class LLMBudgetExceededError(LLMError):
    """The check has used up its LLM call or token budget."""


class InvalidPostError(ZofiaError):
    """The post cannot be checked, for a reason of a :class:`PostRefusal` kind.

    ``InvalidPostError(PostRefusal.TOO_MANY_IMAGES, count=5, max_images=4)`` carries its
    ``kind`` and ``values``; ``str()`` is its English sentence (:mod:`.refusals`),
    and ``bots/render`` words it in a chat's language from the two. A sentence said
    already, ``InvalidPostError("Le fichier est trop gros.")`` (the platform code's, in
    the chat's language), is of the kind :attr:`PostRefusal.SAID`, its one value
    ``sentence``, and is said as it is. A size (``{size:size}``) is a number of bytes (a
    :class:`SizeOver` for "over 20 MB"), a duration
    (``{duration:duration}``) a number of seconds: ``str()`` writes them in English
    words (:func:`size_words`, :func:`duration_words`), render/ in the chat's language.

    Raises:
        TypeError: ``kind`` is neither a :class:`PostRefusal` nor a sentence, or the
            values are not exactly the blanks its sentence needs (a sentence said
            already takes none): a refusal fails where it is raised, not in a chat.
    """

    def __init__(self, kind: PostRefusal | str, /, **values: object) -> None:
        if not isinstance(kind, str):
            raise TypeError(f"a post's refusal is a PostRefusal or a sentence, not {kind!r}")
        if not isinstance(kind, PostRefusal):
            if values:
                raise TypeError(f"a sentence said already takes no values: {sorted(values)}")
            kind, values = PostRefusal.SAID, {"sentence": kind}
        needed = refusal_blanks(kind)
        if set(values) != needed:
            raise TypeError(f"{kind} needs the values {sorted(needed)}, not {sorted(values)}")
        super().__init__(english(kind, values))
        self.kind = kind
        self.values = values

    def __reduce__(self) -> tuple[object, ...]:
        # A copy or a pickle keeps the kind, and a subclass's own fields (its state).
        return _refusal, (type(self), self.kind, self.values), self.__dict__


def _refusal(
    cls: type[InvalidPostError], kind: PostRefusal, values: dict[str, object]
) -> InvalidPostError:
    if kind is PostRefusal.SAID:
        return cls(str(values["sentence"]))
    return cls(kind, **values)
