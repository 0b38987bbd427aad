"""What Discord refuses, as its API documentation states it (API v10), for the fake
Discord (:mod:`.discord_peer`): a message's content and embeds, its components, a
modal, an application command as it is registered, and the option values a Discord
client lets a member send.

Each ``*_errors`` function returns what is wrong with a payload, one line each (empty
when Discord takes it); the peer answers a request with any as Discord does, a 400
``Invalid Form Body`` (code 50035). :func:`refused_option` is what the client refuses
before the bot sees anything (a paste longer than the option's ``max_length``).

Sources: Discord's developer documentation, "Message Resource → Embed Limits",
"Message Components" (action rows, buttons, string selects, text inputs), "Receiving
and Responding → Interaction Callback" (modals), "Application Commands" (names,
descriptions, options, ``max_length`` of at most 6000, 4000 characters in all).
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "CONTENT_LIMIT",
    "command_errors",
    "invalid_form_body",
    "message_errors",
    "modal_errors",
    "refused_option",
]

CONTENT_LIMIT = 2000
EMBEDS_PER_MESSAGE = 10
EMBED_TOTAL = 6000
#: an embed's text fields and their limits
EMBED_FIELDS = {"title": 256, "description": 4096}
FIELDS_PER_EMBED = 25
FIELD_NAME, FIELD_VALUE, FOOTER_TEXT, AUTHOR_NAME = 256, 1024, 2048, 256
ROWS_PER_MESSAGE = 5
BUTTONS_PER_ROW = 5
BUTTON_LABEL, CUSTOM_ID, LINK_URL = 80, 100, 512
SELECT_OPTIONS, OPTION_TEXT, PLACEHOLDER = 25, 100, 150
MODAL_TITLE, MODAL_ROWS, INPUT_LABEL, INPUT_TEXT, INPUT_PLACEHOLDER = 45, 5, 45, 4000, 100
COMMAND_NAME, COMMAND_DESCRIPTION, COMMAND_OPTIONS = 32, 100, 25
STRING_OPTION_LENGTH, COMMAND_TOTAL, CHOICES = 6000, 4000, 25
LINK_STYLE = 5


def invalid_form_body(errors: list[str]) -> dict[str, Any]:
    """Discord's answer to a payload it refuses (HTTP 400)."""
    return {"code": 50035, "message": "Invalid Form Body", "errors": {"_errors": errors}}


def _too_long(what: str, text: Any, limit: int, *, least: int = 0) -> list[str]:
    size = len(text) if isinstance(text, str) else 0
    if size > limit:
        return [f"{what}: must be {limit} or fewer in length (is {size})"]
    if size < least:
        return [f"{what}: must be {least} or more in length"]
    return []


def _localized_errors(at: str, thing: dict[str, Any]) -> list[str]:
    """A command's or an option's ``description_localizations``: each as long as its
    ``description`` may be (Discord refuses the whole command otherwise)."""
    said = thing.get("description_localizations") or {}
    return [
        e
        for locale, text in said.items()
        for e in _too_long(f"{at}description_localizations.{locale}", text, COMMAND_DESCRIPTION)
    ]


def _embed_errors(embed: dict[str, Any], at: str) -> tuple[list[str], int]:
    """What is wrong with one embed, and how many characters it counts."""
    errors: list[str] = []
    counted = 0
    for key, limit in EMBED_FIELDS.items():
        errors += _too_long(f"{at}.{key}", embed.get(key), limit)
        counted += len(embed.get(key) or "")
    fields = embed.get("fields") or []
    if len(fields) > FIELDS_PER_EMBED:
        errors.append(f"{at}.fields: must be {FIELDS_PER_EMBED} or fewer in length")
    for n, field in enumerate(fields):
        errors += _too_long(f"{at}.fields.{n}.name", field.get("name"), FIELD_NAME, least=1)
        errors += _too_long(f"{at}.fields.{n}.value", field.get("value"), FIELD_VALUE, least=1)
        counted += len(field.get("name") or "") + len(field.get("value") or "")
    footer = (embed.get("footer") or {}).get("text")
    author = (embed.get("author") or {}).get("name")
    errors += _too_long(f"{at}.footer.text", footer, FOOTER_TEXT)
    errors += _too_long(f"{at}.author.name", author, AUTHOR_NAME)
    counted += len(footer or "") + len(author or "")
    return errors, counted


def _button_errors(button: dict[str, Any], at: str) -> list[str]:
    errors = _too_long(f"{at}.label", button.get("label"), BUTTON_LABEL)
    if button.get("style") == LINK_STYLE:
        if "custom_id" in button or not button.get("url"):
            errors.append(f"{at}: a link button has a url and no custom_id")
        errors += _too_long(f"{at}.url", button.get("url"), LINK_URL)
    else:
        errors += _too_long(f"{at}.custom_id", button.get("custom_id"), CUSTOM_ID, least=1)
    if not button.get("label") and not button.get("emoji"):
        errors.append(f"{at}: a button has a label or an emoji")
    return errors


def _select_errors(select: dict[str, Any], at: str) -> list[str]:
    errors = _too_long(f"{at}.custom_id", select.get("custom_id"), CUSTOM_ID, least=1)
    errors += _too_long(f"{at}.placeholder", select.get("placeholder"), PLACEHOLDER)
    options = select.get("options") or []
    if select.get("type") == 3 and not 1 <= len(options) <= SELECT_OPTIONS:
        errors.append(f"{at}.options: must be 1 to {SELECT_OPTIONS} in length")
    for n, option in enumerate(options):
        for key in ("label", "value", "description"):
            least = 0 if key == "description" else 1
            errors += _too_long(
                f"{at}.options.{n}.{key}", option.get(key), OPTION_TEXT, least=least
            )
    return errors


def _component_errors(rows: list[dict[str, Any]]) -> list[str]:
    errors: list[str] = []
    if len(rows) > ROWS_PER_MESSAGE:
        errors.append(f"components: must be {ROWS_PER_MESSAGE} or fewer in length")
    seen: set[str] = set()
    for r, row in enumerate(rows):
        parts = row.get("components") or []
        at = f"components.{r}.components"
        buttons = [part for part in parts if part.get("type") == 2]
        if buttons and len(buttons) != len(parts):
            errors.append(f"{at}: a row holds buttons or one select, not both")
        if len(buttons) > BUTTONS_PER_ROW or not parts:
            errors.append(f"{at}: must be 1 to {BUTTONS_PER_ROW} in length")
        if not buttons and len(parts) > 1:
            errors.append(f"{at}: a select fills its row")
        for n, part in enumerate(parts):
            check = _button_errors if part.get("type") == 2 else _select_errors
            errors += check(part, f"{at}.{n}")
            custom = part.get("custom_id")
            if custom in seen:
                errors.append(f"{at}.{n}.custom_id: component custom id is already used")
            if custom:
                seen.add(custom)
    return errors


def message_errors(body: dict[str, Any]) -> list[str]:
    """What Discord refuses in a message it is asked to post or edit into (a channel
    message, a webhook's, an interaction's response or follow-up)."""
    errors = _too_long("content", body.get("content"), CONTENT_LIMIT)
    embeds = body.get("embeds") or []
    if len(embeds) > EMBEDS_PER_MESSAGE:
        errors.append(f"embeds: must be {EMBEDS_PER_MESSAGE} or fewer in length")
    total = 0
    for n, embed in enumerate(embeds):
        found, counted = _embed_errors(embed, f"embeds.{n}")
        errors += found
        total += counted
    if total > EMBED_TOTAL:
        errors.append(f"embeds: embed size exceeds maximum size of {EMBED_TOTAL} (is {total})")
    return errors + _component_errors(body.get("components") or [])


def modal_errors(data: dict[str, Any]) -> list[str]:
    """What Discord refuses in a modal (an interaction callback of type 9)."""
    errors = _too_long("title", data.get("title"), MODAL_TITLE, least=1)
    errors += _too_long("custom_id", data.get("custom_id"), CUSTOM_ID, least=1)
    rows = data.get("components") or []
    if not 1 <= len(rows) <= MODAL_ROWS:
        errors.append(f"components: must be 1 to {MODAL_ROWS} in length")
    for r, row in enumerate(rows):
        for n, field in enumerate(row.get("components") or []):
            at = f"components.{r}.components.{n}"
            errors += _too_long(f"{at}.custom_id", field.get("custom_id"), CUSTOM_ID, least=1)
            errors += _too_long(f"{at}.label", field.get("label"), INPUT_LABEL, least=1)
            errors += _too_long(f"{at}.value", field.get("value"), INPUT_TEXT)
            errors += _too_long(f"{at}.placeholder", field.get("placeholder"), INPUT_PLACEHOLDER)
            for key in ("min_length", "max_length"):
                if key in field and not 0 <= int(field[key]) <= INPUT_TEXT:
                    errors.append(f"{at}.{key}: must be between 0 and {INPUT_TEXT}")
    return errors


def _option_errors(option: dict[str, Any], at: str) -> tuple[list[str], int]:
    errors = _too_long(f"{at}.name", option.get("name"), COMMAND_NAME, least=1)
    errors += _too_long(
        f"{at}.description", option.get("description"), COMMAND_DESCRIPTION, least=1
    )
    errors += _localized_errors(f"{at}.", option)
    for key in ("min_length", "max_length"):
        if key in option and not 0 <= int(option[key]) <= STRING_OPTION_LENGTH:
            errors.append(f"{at}.{key}: must be between 0 and {STRING_OPTION_LENGTH}")
    choices = option.get("choices") or []
    if len(choices) > CHOICES:
        errors.append(f"{at}.choices: must be {CHOICES} or fewer in length")
    counted = len(option.get("name") or "") + len(option.get("description") or "")
    counted += sum(len(c.get("name") or "") + len(str(c.get("value", ""))) for c in choices)
    return errors, counted


def command_errors(command: dict[str, Any]) -> list[str]:
    """What Discord refuses in an application command being registered."""
    slash = command.get("type", 1) == 1
    errors = _too_long("name", command.get("name"), COMMAND_NAME, least=1)
    least = 1 if slash else 0
    errors += _too_long("description", command.get("description"), COMMAND_DESCRIPTION, least=least)
    errors += _localized_errors("", command)
    options = command.get("options") or []
    if len(options) > COMMAND_OPTIONS:
        errors.append(f"options: must be {COMMAND_OPTIONS} or fewer in length")
    total = len(command.get("name") or "") + len(command.get("description") or "")
    for n, option in enumerate(options):
        found, counted = _option_errors(option, f"options.{n}")
        errors += found
        total += counted
    if total > COMMAND_TOTAL:
        errors.append(f"command: {total} characters in all, more than {COMMAND_TOTAL}")
    return errors


def refused_option(command: dict[str, Any], name: str, value: Any) -> str:
    """Why a Discord client would not send ``value`` for the option ``name`` of the
    registered ``command`` (``""``: it would): a text shorter than ``min_length`` or
    longer than ``max_length``, a number out of its range."""
    option = next((o for o in command.get("options") or [] if o.get("name") == name), None)
    if option is None:
        return f"/{command.get('name')} has no option {name!r}"
    if isinstance(value, str) and option.get("type") == 3:
        most, least = option.get("max_length", STRING_OPTION_LENGTH), option.get("min_length", 0)
        if not least <= len(value) <= most:
            return f"{name}: {len(value)} characters, not {least} to {most}"
    if isinstance(value, int | float) and option.get("type") in (4, 10):
        low, high = option.get("min_value"), option.get("max_value")
        if (low is not None and value < low) or (high is not None and value > high):
            return f"{name}: {value} is not within {low} to {high}"
    return ""
