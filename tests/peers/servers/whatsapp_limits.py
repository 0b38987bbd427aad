"""What the Cloud API refuses in a message's content, as Meta's documentation says
(developers.facebook.com/docs/whatsapp/cloud-api/reference/messages): a text body of 1
to 4,096 characters; an interactive body of 1 to 1,024; 1 to 3 reply buttons with
unique titles of 1 to 20 characters and unique ids of 1 to 256; a list of 1 to 10 rows,
each titled in 1 to 24 characters with an id of at most 200, behind a button of 1 to 20.
Each refusal is Graph's error code and message (:class:`GraphRefusal`)."""

from __future__ import annotations

from typing import Any

__all__ = ["GraphRefusal", "check_interactive", "check_text"]


class GraphRefusal(Exception):
    def __init__(self, code: int, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.code, self.message, self.status = code, message, status


def check_text(body: dict[str, Any]) -> None:
    text = str(body.get("body") or "")
    if not text or len(text) > 4096:
        raise GraphRefusal(100, "Param text['body'] must be 1 to 4096 characters long.")


def _invalid(what: str) -> GraphRefusal:
    return GraphRefusal(131009, f"Parameter value is not valid: {what}")


def check_interactive(body: dict[str, Any]) -> None:
    text = str((body.get("body") or {}).get("text") or "")
    if not text or len(text) > 1024:
        raise _invalid("body text must be 1 to 1024 characters")
    action = body.get("action") or {}
    if body.get("type") == "button":
        buttons = action.get("buttons") or []
        if not 1 <= len(buttons) <= 3:
            raise _invalid("buttons must have 1 to 3 items")
        titles = [str(b["reply"]["title"]) for b in buttons]
        ids = [str(b["reply"]["id"]) for b in buttons]
        if any(not 1 <= len(t) <= 20 for t in titles) or len(set(titles)) < len(titles):
            raise _invalid("button titles must be unique and 1 to 20 characters")
        if any(not 1 <= len(i) <= 256 for i in ids) or len(set(ids)) < len(ids):
            raise _invalid("button ids must be unique and 1 to 256 characters")
    elif body.get("type") == "list":
        if not 1 <= len(str(action.get("button") or "")) <= 20:
            raise _invalid("the list's button must be 1 to 20 characters")
        rows = [row for section in action.get("sections") or [] for row in section["rows"]]
        if not 1 <= len(rows) <= 10:
            raise _invalid("a list has 1 to 10 rows")
        if any(not 1 <= len(str(row["title"])) <= 24 or len(row["id"]) > 200 for row in rows):
            raise _invalid("a row's title must be 1 to 24 characters, its id at most 200")
    else:
        raise _invalid(f"interactive type {body.get('type')}")
