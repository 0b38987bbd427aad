"""A fake Telegram Bot API server speaking the real JSON protocol.

``POST /bot<token>/<method>`` on 127.0.0.1 answers ``{"ok": true, "result": ...}`` or
``{"ok": false, "error_code": ..., "description": ...}`` as Telegram does. It serves
``getMe``, ``getUpdates`` (long polling), ``deleteWebhook``, ``sendMessage``,
``editMessageText``, ``editMessageReplyMarkup``, ``answerCallbackQuery``,
``sendChatAction``, ``getChatMember``, ``getChatAdministrators``, ``setMyCommands``,
``setMessageReaction``, ``answerGuestQuery`` and ``getFile``, and serves the files it
registered at ``GET /file/bot<token>/<file_path>`` (``getFile`` refuses a file over
20 MB, as Telegram does for bots). HTML is parsed as
Telegram parses it: a stray ``<`` or ``&``, an unknown or unbalanced tag, or more
than 4096 characters of text is a 400; so is an inline keyboard Telegram refuses (a
button whose ``callback_data`` is not 1 to 64 bytes, whose text is empty, whose link is
not http(s) or tg, or with none or several actions). A callback query is answered once,
within :attr:`FakeBotAPI.callback_deadline_s` of the tap, with at most 200 characters
(else "query is too old …", or ``MESSAGE_TOO_LONG``); :meth:`FakeBotAPI.unanswered`
lists the taps not answered. A per-chat leaky bucket (opt-in) answers
429 with ``retry_after`` when a chat gets more than Telegram allows, and
:meth:`FakeBotAPI.refuse_next` makes the next call of a method a 429. ``getUpdates``
gives only the update types its last ``allowed_updates`` named, as Telegram does.

Guest mode (Bot API 10.0): :meth:`FakeBotAPI.send_guest` puts a ``guest_message`` from
a chat the bot is not in on the queue (every method naming that chat is then a 403, as
for any chat the bot is not a member of), and ``answerGuestQuery`` answers it once.

Tests put updates in with :meth:`FakeBotAPI.send` and :meth:`FakeBotAPI.press`,
delete a message as a user would with :meth:`FakeBotAPI.delete`, and wait on what the
bot did with :meth:`FakeBotAPI.wait_for`. Images are made into messages with
:meth:`FakeBotAPI.photo` (a photo's sizes), :meth:`FakeBotAPI.document` and
:meth:`FakeBotAPI.send_album`; voice notes with :meth:`FakeBotAPI.voice` and
:meth:`FakeBotAPI.audio`, served through ``getFile`` as any file.
"""

from __future__ import annotations

import asyncio
import contextlib
import html
import io
import itertools
import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from html.parser import HTMLParser
from typing import Any, cast

from aiohttp import web
from PIL import Image
from telegram.constants import ReactionEmoji

from .loopback import LoopbackServer

__all__ = ["BOT_ID", "BOT_USERNAME", "TOKEN", "BotCall", "FakeBotAPI", "channel", "group", "user"]

TOKEN = "123456:TEST-token_abcdefghijklmnopqrstuvwxyz"
BOT_ID = 123456
BOT_USERNAME = "zofia_test_bot"
MAX_TEXT = 4096
MAX_CALLBACK_DATA = 64  # bytes of a button's callback_data
MAX_CALLBACK_ANSWER = 200  # characters of a callback query's answer
#: what a button may do besides carry ``callback_data`` (one action a button)
_BUTTON_ACTIONS = (
    "url",
    "callback_data",
    "web_app",
    "login_url",
    "switch_inline_query",
    "switch_inline_query_current_chat",
    "switch_inline_query_chosen_chat",
    "copy_text",
    "callback_game",
    "pay",
)
_TOO_OLD = "Bad Request: query is too old and response timeout expired or query ID is invalid"
MAX_DOWNLOAD = 20_000_000  # the largest file a bot may download from the Bot API
#: how often :meth:`FakeBotAPI.wait_for` checks its condition between requests
RECHECK_S = 0.02

# Form fields PTB sends JSON-encoded; every other field is a plain string.
_JSON_FIELDS = {
    "chat_id",
    "message_id",
    "message_thread_id",
    "user_id",
    "offset",
    "limit",
    "timeout",
    "reply_markup",
    "reply_parameters",
    "link_preview_options",
    "allowed_updates",
    "show_alert",
    "cache_time",
    "disable_notification",
    "drop_pending_updates",
    "commands",
    "entities",
    "reaction",
    "is_big",
    "result",
}
_TAGS = {
    "b", "strong", "i", "em", "u", "ins", "s", "strike", "del", "a", "code", "pre",
    "blockquote", "tg-spoiler", "span", "tg-emoji",
}  # fmt: skip
_BAD_AMP = re.compile(r"&(?!(?:lt|gt|amp|quot|#\d+|#x[0-9a-fA-F]+);)")


def user(user_id: int, first_name: str = "Ann", username: str = "") -> dict[str, Any]:
    found = {"id": user_id, "is_bot": False, "first_name": first_name}
    return found | ({"username": username} if username else {})


def group(chat_id: int, title: str = "Rumour mill", *, forum: bool = False) -> dict[str, Any]:
    found = {"id": chat_id, "type": "supergroup", "title": title}
    return found | ({"is_forum": True} if forum else {})


def channel(chat_id: int, title: str, username: str = "") -> dict[str, Any]:
    found = {"id": chat_id, "type": "channel", "title": title}
    return found | ({"username": username} if username else {})


class TelegramError(Exception):
    def __init__(self, code: int, description: str, retry_after: int | None = None) -> None:
        super().__init__(description)
        self.code = code
        self.description = description
        self.retry_after = retry_after


class _TelegramHTML(HTMLParser):
    """Telegram's HTML mode: a few tags, balanced, and entities only where escaped."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=False)
        self.open: list[str] = []
        self.text: list[str] = []
        self.blockquotes: list[bool] = []  # expandable or not, one per blockquote

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in _TAGS:
            raise TelegramError(
                400, f'Bad Request: can\'t parse entities: Unsupported start tag "{tag}"'
            )
        if tag == "blockquote":
            if "blockquote" in self.open:
                raise TelegramError(400, "Bad Request: can't parse entities: nested blockquote")
            self.blockquotes.append(any(name == "expandable" for name, _ in attrs))
        self.open.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if not self.open or self.open[-1] != tag:
            raise TelegramError(
                400,
                f"Bad Request: can't parse entities: Can't find end tag corresponding to \"{tag}\"",
            )
        self.open.pop()

    def handle_data(self, data: str) -> None:
        if "<" in data or ">" in data:
            raise TelegramError(400, "Bad Request: can't parse entities: Unsupported start tag")
        self.text.append(data)

    def handle_entityref(self, name: str) -> None:
        self.text.append(html.unescape(f"&{name};"))

    def handle_charref(self, name: str) -> None:
        self.text.append(html.unescape(f"&#{name};"))


def parse_html(text: str) -> tuple[str, list[bool]]:
    """The plain text of a Telegram HTML message and its blockquotes; 400 if it is malformed."""
    if _BAD_AMP.search(text):
        raise TelegramError(400, "Bad Request: can't parse entities: Unexpected end of name token")
    parser = _TelegramHTML()
    parser.feed(text)
    parser.close()
    if parser.rawdata:  # HTMLParser keeps what it could not parse, e.g. a stray "<"
        raise TelegramError(400, "Bad Request: can't parse entities: Unexpected end tag")
    if parser.open:
        raise TelegramError(
            400,
            "Bad Request: can't parse entities: Can't find end tag corresponding to start tag"
            f' "{parser.open[-1]}"',
        )
    return "".join(parser.text), parser.blockquotes


@dataclass
class BotCall:
    """One request the bot made, with its parameters decoded."""

    method: str
    params: dict[str, Any]
    at: float
    error: str = ""


@dataclass
class _Bucket:
    level: float = 0.0
    at: float = field(default_factory=time.monotonic)


class FakeBotAPI(LoopbackServer):
    """The Bot API on loopback. Point the bot at ``f"{peer.root}/bot"``.

    Args:
        chat_burst: with ``chat_rate``, a per-chat leaky bucket: this many requests at
            once, refilled at ``chat_rate`` a second; beyond it, 429. ``0``: no limit.
        chat_rate: requests a second a chat is allowed in the long run.
        admins: user ids that ``getChatMember`` and ``getChatAdministrators`` report as
            administrators (of every group; a test demotes one by removing it).

    Attributes:
        reactions: the bot's reaction on each message it reacted to, ``(chat id,
            message id)`` → emoji (gone when it took its reaction back).
        no_reactions: chats whose admins allow no reactions: ``setMessageReaction``
            there is a 400 ``REACTION_INVALID``, as Telegram answers.
    """

    def __init__(
        self, *, chat_burst: int = 0, chat_rate: float = 1.0, admins: set[int] | None = None
    ) -> None:
        super().__init__()
        self.calls: list[BotCall] = []
        self.updates: list[dict[str, Any]] = []
        self.messages: dict[tuple[int, int], dict[str, Any]] = {}  # everything in every chat
        self.html: dict[tuple[int, int], str] = {}  # the bot's messages as it sent them
        self.touched_at: dict[tuple[int, int], float] = {}  # when each was last sent or edited
        self.answered: set[str] = set()
        self.refused = 0
        self.admins = admins or set()
        self.chat_burst = chat_burst
        self.chat_rate = chat_rate
        self._buckets: dict[int, _Bucket] = {}
        self._refusals: dict[str, int] = {}
        self._update_ids = itertools.count(1)
        self._message_ids: dict[int, itertools.count[int]] = {}
        self._query_ids = itertools.count(1)
        self._changed = asyncio.Condition()
        self._chats: dict[int, dict[str, Any]] = {}
        self.webhook: dict[str, Any] = {}  # what setWebhook was given
        self.polls = 0  # getUpdates calls (not kept in ``calls``)
        self.last_update_id = 0  # the newest update put on the queue
        self.confirmed = 0  # updates up to this id were confirmed by a later getUpdates offset
        self.unauthorized = 0  # requests refused for a wrong token
        self.files: dict[str, _File] = {}  # file_id → what getFile and downloads give
        self.downloads: list[str] = []  # the file_path of every file downloaded
        self._file_ids = itertools.count(1)
        self.reactions: dict[tuple[int, int], str] = {}
        self.no_reactions: set[int] = set()
        #: update types ``getUpdates`` gives (its last ``allowed_updates``; ``None``: the
        #: default, all but the chat member and reaction updates)
        self.allowed_updates: list[str] | None = None
        self.outside: set[int] = set()  # chats the bot is not a member of (guest mode)
        self.blocked: set[int] = set()  # private chats whose user blocked the bot
        self.gone: set[int] = set()  # chats deleted: every call naming them is "not found"
        # An outage of the Bot API's front: while set, these methods answer 502 Bad
        # Gateway, as the real API does when its backend is down.
        self.down: set[str] = set()
        #: guest query id → what ``answerGuestQuery`` sent (``None``: not answered yet)
        self.guest_answers: dict[str, dict[str, Any] | None] = {}
        #: callback query id → when it was tapped (put on the queue)
        self.pressed: dict[str, float] = {}
        #: how long a callback query may wait for its answer (Telegram does not document
        #: it; bots report seconds, and its clients show a spinner until then)
        self.callback_deadline_s = 15.0

    def add_routes(self, app: web.Application) -> None:
        app.router.add_post("/bot{token}/{method}", self._serve)
        app.router.add_get("/file/bot{token}/{path:.+}", self._download)

    # -- what tests do ----------------------------------------------------------------------

    def add_file(
        self,
        data: bytes,
        *,
        file_size: int | None = None,
        name: str = "file.jpg",
        folder: str = "",
    ) -> dict[str, Any]:
        """Register ``data`` as a file the bot may ask for; its ``file_id``,
        ``file_unique_id`` and ``file_size`` (the length of ``data`` unless declared
        otherwise, e.g. larger than what is served). ``folder`` is where Telegram keeps
        it (``voice``, ``music``; by default ``photos`` or ``documents``)."""
        n = next(self._file_ids)
        suffix = name.rpartition(".")[2] if "." in name else "bin"
        folder = folder or ("photos" if name.startswith("photo") else "documents")
        file = _File(
            file_id=f"AgAD-file-{n}",
            unique_id=f"uniq{n}",
            data=data,
            size=len(data) if file_size is None else file_size,
            path=f"{folder}/file_{n}.{suffix}",
        )
        self.files[file.file_id] = file
        return {"file_id": file.file_id, "file_unique_id": file.unique_id, "file_size": file.size}

    def photo(self, data: bytes, *, file_size: int | None = None) -> list[dict[str, Any]]:
        """A photo's ``PhotoSize`` list, smallest first, as Telegram sends it: thumbnails
        at 90 and 320 pixels wide when it is wider (each a smaller image of its own)
        and ``data`` at its full size, declared as ``file_size`` if given."""
        try:
            with Image.open(io.BytesIO(data)) as image:
                full = image.size
                thumbnails = []
                for width in (w for w in (90, 320) if w < full[0]):
                    small = image.copy()
                    small.thumbnail((width, width * full[1] // max(full[0], 1)))
                    out = io.BytesIO()
                    small.convert("RGB").save(out, format="JPEG", quality=80)
                    thumbnails.append((small.size, out.getvalue()))
        except (OSError, ValueError, Image.DecompressionBombError):
            full = (1280, 960)
            thumbnails = [((90, 68), data), ((320, 240), data)]
        sizes = [
            {**self.add_file(thumb, name="photo.jpg"), "width": size[0], "height": size[1]}
            for size, thumb in thumbnails
        ]
        original = self.add_file(data, file_size=file_size, name="photo.jpg")
        return [*sizes, {**original, "width": full[0], "height": full[1]}]

    def document(
        self, data: bytes, *, file_name: str, mime_type: str, file_size: int | None = None
    ) -> dict[str, Any]:
        """A ``Document`` holding ``data``, sent as ``mime_type`` under ``file_name``."""
        found = self.add_file(data, file_size=file_size, name=file_name)
        return {**found, "file_name": file_name, "mime_type": mime_type}

    def voice(self, data: bytes, *, duration: int, file_size: int | None = None) -> dict[str, Any]:
        """A ``Voice`` holding ``data`` (an OGG/Opus voice message, as Telegram's apps
        record them), declaring ``duration`` seconds and ``file_size`` if given."""
        found = self.add_file(data, file_size=file_size, name="voice.oga", folder="voice")
        return {**found, "duration": duration, "mime_type": "audio/ogg"}

    def audio(
        self,
        data: bytes,
        *,
        duration: int,
        file_name: str,
        mime_type: str,
        file_size: int | None = None,
    ) -> dict[str, Any]:
        """An ``Audio`` file holding ``data`` (an MP3, an M4A), as Telegram sends a
        music file, declaring ``duration`` seconds and ``file_size`` if given."""
        found = self.add_file(data, file_size=file_size, name=file_name, folder="music")
        return {**found, "duration": duration, "file_name": file_name, "mime_type": mime_type}

    def send_album(
        self,
        chat: dict[str, Any],
        sender: dict[str, Any],
        images: list[bytes],
        *,
        caption: str | None = None,
        forward_origin: dict[str, Any] | None = None,
    ) -> list[dict[str, Any]]:
        """An album of photos: one message each, sharing a ``media_group_id``, the
        caption on the first, all put on the queue at once."""
        group_id = f"album{next(self._file_ids)}"
        return [
            self.send(
                chat,
                sender,
                caption=caption if n == 0 else None,
                photo=self.photo(data),
                media_group_id=group_id,
                forward_origin=forward_origin,
            )
            for n, data in enumerate(images)
        ]

    def send(
        self,
        chat: dict[str, Any],
        sender: dict[str, Any],
        text: str = "",
        *,
        caption: str | None = None,
        photo: bool | list[dict[str, Any]] = False,
        document: dict[str, Any] | None = None,
        voice: dict[str, Any] | None = None,
        audio: dict[str, Any] | None = None,
        media_group_id: str | None = None,
        forward_origin: dict[str, Any] | None = None,
        reply_to: dict[str, Any] | None = None,
        thread_id: int | None = None,
    ) -> dict[str, Any]:
        """Put a message from ``sender`` in ``chat`` on the update queue; return it.

        ``photo`` is a list from :meth:`photo`, or ``True`` for a small blank photo;
        ``document`` one from :meth:`document`, ``voice`` from :meth:`voice`, ``audio``
        from :meth:`audio`.
        """
        message = self.compose(
            chat,
            sender,
            text,
            caption=caption,
            photo=photo,
            document=document,
            voice=voice,
            audio=audio,
            media_group_id=media_group_id,
            forward_origin=forward_origin,
            reply_to=reply_to,
            thread_id=thread_id,
        )
        self._push({"message": message})
        return message

    def compose(
        self,
        chat: dict[str, Any],
        sender: dict[str, Any],
        text: str = "",
        *,
        caption: str | None = None,
        photo: bool | list[dict[str, Any]] = False,
        document: dict[str, Any] | None = None,
        voice: dict[str, Any] | None = None,
        audio: dict[str, Any] | None = None,
        media_group_id: str | None = None,
        forward_origin: dict[str, Any] | None = None,
        reply_to: dict[str, Any] | None = None,
        thread_id: int | None = None,
    ) -> dict[str, Any]:
        """A message from ``sender`` in ``chat``, kept in the chat but put on no queue
        (a post in a chat the bot is not in); arguments as :meth:`send`'s."""
        self._chats[chat["id"]] = chat
        message: dict[str, Any] = {
            "message_id": self._next_message_id(chat["id"]),
            "from": sender,
            "chat": chat,
            "date": int(time.time()),
        }
        body = caption if caption is not None else text
        if caption is not None:
            message["caption"] = caption
        elif text:
            message["text"] = text
        entities = _entities(body)
        if entities:
            message["caption_entities" if caption is not None else "entities"] = entities
        if photo is True:
            photo = self.photo(_blank())
        if photo:
            message["photo"] = photo
        if document is not None:
            message["document"] = document
        if voice is not None:
            message["voice"] = voice
        if audio is not None:
            message["audio"] = audio
        if media_group_id is not None:
            message["media_group_id"] = media_group_id
        if forward_origin is not None:
            message["forward_origin"] = forward_origin
        if reply_to is not None:
            message["reply_to_message"] = reply_to
        if thread_id is not None:
            message["message_thread_id"] = thread_id
            message["is_topic_message"] = True
        self.messages[(chat["id"], message["message_id"])] = message
        return message

    def send_guest(
        self,
        chat: dict[str, Any],
        sender: dict[str, Any],
        text: str,
        *,
        reply_to: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Put a guest message on the queue: ``sender`` in ``chat``, which the bot is not
        in, mentions the bot in ``text`` (in a reply to ``reply_to``, e.g. a message of
        :meth:`compose`); it carries a new ``guest_query_id``. Return it."""
        self.outside.add(chat["id"])
        message = self.compose(chat, sender, text, reply_to=reply_to)
        query_id = f"guest-{next(self._query_ids)}"
        message["guest_query_id"] = query_id
        self.guest_answers[query_id] = None
        self._push({"guest_message": message})
        return message

    def press(self, message: dict[str, Any], data: str, sender: dict[str, Any]) -> str:
        """Tap the button with callback ``data`` under the bot's ``message``; the query id."""
        query_id = str(next(self._query_ids))
        current = self.messages[(message["chat"]["id"], message["message_id"])]
        self._push(
            {
                "callback_query": {
                    "id": query_id,
                    "from": sender,
                    "message": current,
                    "chat_instance": f"ci{current['chat']['id']}",
                    "data": data,
                }
            }
        )
        return query_id

    def delete(self, chat_id: int, message_id: int) -> dict[str, Any]:
        """Delete a message of the chat, as a user (or an admin) may: every later call
        naming it is "message to edit not found" (or, to reply to it, "not found")."""
        return self.messages.pop((chat_id, message_id))

    def unanswered(self) -> list[str]:
        """The callback queries tapped (:meth:`press`) and not answered yet."""
        return [query for query in self.pressed if query not in self.answered]

    def refuse_next(self, method: str, times: int = 1) -> None:
        """Answer the next ``times`` calls of ``method`` with 429, retry after 1 s."""
        self._refusals[method] = self._refusals.get(method, 0) + times

    def bot_messages(self, chat_id: int) -> list[dict[str, Any]]:
        """The bot's messages in a chat as they stand now, oldest first."""
        found = [
            m
            for (chat, _), m in self.messages.items()
            if chat == chat_id and m["from"]["id"] == BOT_ID
        ]
        return sorted(found, key=lambda m: m["message_id"])

    def sent(self, method: str, chat_id: int | None = None) -> list[BotCall]:
        """The successful calls of ``method`` (in a chat), in order."""
        return [
            c
            for c in self.calls
            if c.method == method
            and not c.error
            and (chat_id is None or c.params.get("chat_id") == chat_id)
        ]

    async def wait_for(self, condition: Callable[[], Any], timeout: float = 20.0) -> Any:
        """Wait until ``condition()`` is truthy; return it. It is checked after every
        request, and every :data:`RECHECK_S` as well, for what no request of the bot
        announces (a row in the store, a log line): such a wait ends once it holds, not
        at the bot's next long poll."""
        async with asyncio.timeout(timeout), self._changed:
            while not (found := condition()):
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(RECHECK_S):
                        await self._changed.wait()
            return found

    # -- the protocol -----------------------------------------------------------------------

    async def _serve(self, request: web.Request) -> web.Response:
        method = request.match_info["method"]
        if request.match_info["token"] != TOKEN:
            self.unauthorized += 1
            return web.json_response(
                {"ok": False, "error_code": 401, "description": "Unauthorized"}, status=401
            )
        params = _decode(dict(await request.post()))
        call = BotCall(method, params, time.monotonic())
        try:
            if method in self.down:
                raise TelegramError(502, "Bad Gateway")
            if params.get("chat_id") in self.outside:
                raise TelegramError(403, "Forbidden: bot is not a member of the supergroup chat")
            if params.get("chat_id") in self.blocked:
                raise TelegramError(403, "Forbidden: bot was blocked by the user")
            if params.get("chat_id") in self.gone:
                raise TelegramError(400, "Bad Request: chat not found")
            self._limit(method, params)
            handler = getattr(self, f"_m_{method}", None)
            if handler is None:
                raise TelegramError(404, "Not Found: method not found")
            result = await handler(params)
        except TelegramError as exc:
            call.error = exc.description
            body: dict[str, Any] = {
                "ok": False,
                "error_code": exc.code,
                "description": exc.description,
            }
            if exc.retry_after is not None:
                body["parameters"] = {"retry_after": exc.retry_after}
            await self._record(call)
            return web.json_response(body, status=exc.code)
        await self._record(call)
        return web.json_response({"ok": True, "result": result})

    async def _download(self, request: web.Request) -> web.Response:
        """``GET /file/bot<token>/<file_path>``: the bytes of a file ``getFile`` gave."""
        if request.match_info["token"] != TOKEN:
            self.unauthorized += 1
            return web.json_response(
                {"ok": False, "error_code": 401, "description": "Unauthorized"}, status=401
            )
        path = request.match_info["path"]
        file = next((f for f in self.files.values() if f.path == path), None)
        if file is None:
            return web.json_response(
                {"ok": False, "error_code": 404, "description": "Not Found"}, status=404
            )
        self.downloads.append(path)
        await self._record(BotCall("download", {"file_path": path}, time.monotonic()))
        return web.Response(body=file.data, content_type="application/octet-stream")

    async def _record(self, call: BotCall) -> None:
        if call.method != "getUpdates":
            self.calls.append(call)
        async with self._changed:
            self._changed.notify_all()

    def _limit(self, method: str, params: dict[str, Any]) -> None:
        if self._refusals.get(method):
            self._refusals[method] -= 1
            self.refused += 1
            raise TelegramError(429, "Too Many Requests: retry after 1", retry_after=1)
        chat_id = params.get("chat_id")
        if not self.chat_burst or not isinstance(chat_id, int) or method.startswith("getChat"):
            return
        bucket = self._buckets.setdefault(chat_id, _Bucket())
        now = time.monotonic()
        bucket.level = max(0.0, bucket.level - (now - bucket.at) * self.chat_rate)
        bucket.at = now
        if bucket.level + 1 > self.chat_burst:
            self.refused += 1
            wait = max(1, round((bucket.level + 1 - self.chat_burst) / self.chat_rate))
            raise TelegramError(429, f"Too Many Requests: retry after {wait}", retry_after=wait)
        bucket.level += 1

    def _push(self, update: dict[str, Any]) -> None:
        if "callback_query" in update:  # a tap: answered in time, once
            self.pressed[str(update["callback_query"]["id"])] = time.monotonic()
        self.last_update_id = next(self._update_ids)
        self.updates.append({"update_id": self.last_update_id, **update})
        with contextlib.suppress(RuntimeError):
            asyncio.get_running_loop().create_task(self._notify())

    async def _notify(self) -> None:
        async with self._changed:
            self._changed.notify_all()

    def _next_message_id(self, chat_id: int) -> int:
        return next(self._message_ids.setdefault(chat_id, itertools.count(1)))

    def _chat(self, chat_id: Any) -> dict[str, Any]:
        if not isinstance(chat_id, int):
            raise TelegramError(400, "Bad Request: chat not found")
        kind = "private" if chat_id > 0 else "supergroup"
        return self._chats.get(chat_id, {"id": chat_id, "type": kind})

    def _stored(self, params: dict[str, Any]) -> dict[str, Any]:
        key = (params.get("chat_id"), params.get("message_id"))  # as the request names them
        message = self.messages.get(cast("tuple[int, int]", key))
        if message is None:
            raise TelegramError(400, "Bad Request: message to edit not found")
        if message["from"]["id"] != BOT_ID:
            raise TelegramError(400, "Bad Request: message can't be edited")
        return message

    @staticmethod
    def _text(params: dict[str, Any]) -> tuple[str, list[bool]]:
        _keyboard(params.get("reply_markup"))
        text = str(params.get("text", ""))
        plain, quotes = parse_html(text) if params.get("parse_mode") == "HTML" else (text, [])
        if not plain.strip():
            raise TelegramError(400, "Bad Request: message text is empty")
        if len(plain) > MAX_TEXT:
            raise TelegramError(400, "Bad Request: message is too long")
        return plain, quotes

    # Methods, named _m_<method>.

    async def _m_getMe(self, params: dict[str, Any]) -> dict[str, Any]:
        return {
            "id": BOT_ID,
            "is_bot": True,
            "first_name": "ZoFia",
            "username": BOT_USERNAME,
            "can_join_groups": True,
            "can_read_all_group_messages": False,
            "supports_inline_queries": False,
            "supports_guest_queries": True,
        }

    async def _m_deleteWebhook(self, params: dict[str, Any]) -> bool:
        return True

    async def _m_setMyCommands(self, params: dict[str, Any]) -> bool:
        return True

    async def _m_setWebhook(self, params: dict[str, Any]) -> bool:
        if not str(params.get("url", "")).startswith(("http://127.0.0.1", "https://")):
            raise TelegramError(400, "Bad Request: bad webhook: An HTTPS URL must be provided")
        self.webhook = dict(params)
        return True

    async def _m_sendChatAction(self, params: dict[str, Any]) -> bool:
        self._chat(params.get("chat_id"))
        return True

    async def _m_getChatMember(self, params: dict[str, Any]) -> dict[str, Any]:
        return self._member(int(params["user_id"]))

    async def _m_getChatAdministrators(self, params: dict[str, Any]) -> list[dict[str, Any]]:
        """The chat's administrators (:attr:`admins`, the same in every group); a private
        chat has none, as Telegram says."""
        if self._chat(params.get("chat_id"))["type"] == "private":
            raise TelegramError(400, "Bad Request: there are no administrators in the private chat")
        return [self._member(uid) for uid in sorted(self.admins)]

    def _member(self, uid: int) -> dict[str, Any]:
        status = "administrator" if uid in self.admins else "member"
        member: dict[str, Any] = {"status": status, "user": user(uid)}
        if status == "administrator":
            member |= {
                "can_be_edited": False,
                "is_anonymous": False,
                "can_manage_chat": True,
                "can_delete_messages": True,
                "can_manage_video_chats": True,
                "can_restrict_members": True,
                "can_promote_members": False,
                "can_change_info": True,
                "can_invite_users": True,
                "can_post_stories": False,
                "can_edit_stories": False,
                "can_delete_stories": False,
            }
        return member

    async def _m_getUpdates(self, params: dict[str, Any]) -> list[dict[str, Any]]:
        self.polls += 1
        offset = int(params.get("offset") or 0)
        limit = int(params.get("limit") or 100)
        self.confirmed = max(self.confirmed, offset - 1)
        timeout = float(params.get("timeout") or 0)
        if isinstance(params.get("allowed_updates"), list):  # not given: the last setting
            self.allowed_updates = params["allowed_updates"] or None
        self.updates = [u for u in self.updates if u["update_id"] >= offset]
        if not self._wanted() and timeout > 0:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(min(timeout, 1.0)), self._changed:
                    while not self._wanted() and not self.release.is_set():
                        await self._changed.wait()
        return self._wanted()[:limit]

    def _wanted(self) -> list[dict[str, Any]]:
        """The queued updates of the types the bot asked for; Telegram drops the others."""
        allowed = self.allowed_updates
        default = {"chat_member", "message_reaction", "message_reaction_count"}
        self.updates = [
            u
            for u in self.updates
            if any(
                (kind in allowed) if allowed is not None else (kind not in default)
                for kind in u
                if kind != "update_id"
            )
        ]
        return self.updates

    async def _m_sendMessage(self, params: dict[str, Any]) -> dict[str, Any]:
        chat = self._chat(params.get("chat_id"))
        plain, _ = self._text(params)
        message: dict[str, Any] = {
            "message_id": self._next_message_id(chat["id"]),
            "from": await self._m_getMe({}),
            "chat": chat,
            "date": int(time.time()),
            "text": plain,
        }
        reply = params.get("reply_parameters") or {}
        if reply:
            key = (chat["id"], reply.get("message_id"))  # as the request names them
            target = self.messages.get(cast("tuple[int, int]", key))
            if target is None and not reply.get("allow_sending_without_reply"):
                raise TelegramError(400, "Bad Request: message to be replied not found")
            if target is not None:
                message["reply_to_message"] = target
        if params.get("message_thread_id"):
            message["message_thread_id"] = params["message_thread_id"]
            message["is_topic_message"] = True
        markup = params.get("reply_markup") or {}
        if "inline_keyboard" in markup:  # a message shows only its inline keyboard (a
            message["reply_markup"] = markup  # ForceReply is in the call, not the message)
        self.messages[(chat["id"], message["message_id"])] = message
        self.html[(chat["id"], message["message_id"])] = str(params.get("text", ""))
        self.touched_at[(chat["id"], message["message_id"])] = time.monotonic()
        return message

    async def _m_editMessageText(self, params: dict[str, Any]) -> dict[str, Any]:
        message = self._stored(params)
        plain, _ = self._text(params)
        markup = params.get("reply_markup")
        if plain == message.get("text") and markup == message.get("reply_markup"):
            raise TelegramError(
                400,
                "Bad Request: message is not modified: specified new message content and reply"
                " markup are exactly the same as a current content and reply markup of the message",
            )
        message["text"] = plain
        message.pop("reply_markup", None)
        if markup:
            message["reply_markup"] = markup
        message["edit_date"] = int(time.time())
        self.html[(message["chat"]["id"], message["message_id"])] = str(params["text"])
        self.touched_at[(message["chat"]["id"], message["message_id"])] = time.monotonic()
        return message

    async def _m_editMessageReplyMarkup(self, params: dict[str, Any]) -> dict[str, Any]:
        message = self._stored(params)
        markup = params.get("reply_markup")
        _keyboard(markup)
        if markup == message.get("reply_markup"):
            raise TelegramError(
                400,
                "Bad Request: message is not modified: specified new message content and reply"
                " markup are exactly the same as a current content and reply markup of the message",
            )
        message.pop("reply_markup", None)
        if markup:
            message["reply_markup"] = markup
        return message

    async def _m_setMessageReaction(self, params: dict[str, Any]) -> bool:
        """A bot sets at most one reaction, an emoji of Telegram's list, on a message the
        chat holds; an empty list takes its reaction back."""
        chat_id = params.get("chat_id")
        key = (chat_id, params.get("message_id"))
        if key not in self.messages:
            raise TelegramError(400, "Bad Request: message to react not found")
        reaction = params.get("reaction") or []
        if not isinstance(reaction, list):
            raise TelegramError(400, "Bad Request: can't parse reaction types json object")
        if len(reaction) > 1:
            raise TelegramError(400, "Bad Request: REACTIONS_TOO_MANY")
        emoji = [r.get("emoji") for r in reaction if r.get("type") == "emoji"]
        if len(emoji) != len(reaction) or chat_id in self.no_reactions:
            raise TelegramError(400, "Bad Request: REACTION_INVALID")
        if any(e not in set(ReactionEmoji) for e in emoji):
            raise TelegramError(400, "Bad Request: REACTION_INVALID")
        if emoji:
            self.reactions[key] = str(emoji[0])
        else:
            self.reactions.pop(key, None)
        return True

    async def _m_getFile(self, params: dict[str, Any]) -> dict[str, Any]:
        file = self.files.get(str(params.get("file_id", "")))
        if file is None:
            raise TelegramError(400, "Bad Request: invalid file_id")
        if file.size > MAX_DOWNLOAD:
            raise TelegramError(400, "Bad Request: file is too big")
        return {
            "file_id": file.file_id,
            "file_unique_id": file.unique_id,
            "file_size": file.size,
            "file_path": file.path,
        }

    async def _m_answerGuestQuery(self, params: dict[str, Any]) -> dict[str, Any]:
        """A guest query's one answer: an ``InlineQueryResult`` whose message is sent to
        the chat the guest message came from (kept in :attr:`guest_answers`)."""
        query_id = str(params.get("guest_query_id", ""))
        if query_id not in self.guest_answers:
            raise TelegramError(400, "Bad Request: QUERY_ID_INVALID")
        if self.guest_answers[query_id] is not None:
            raise TelegramError(
                400,
                "Bad Request: query is too old and response timeout expired or query ID is invalid",
            )
        result = params.get("result")
        if not isinstance(result, dict):
            raise TelegramError(400, "Bad Request: can't parse inline query result")
        if not 1 <= len(str(result.get("id", "")).encode()) <= 64:
            raise TelegramError(400, "Bad Request: RESULT_ID_INVALID")
        if result.get("type") != "article" or not str(result.get("title", "")).strip():
            raise TelegramError(400, "Bad Request: RESULT_TYPE_INVALID")
        content = result.get("input_message_content") or {}
        plain, _ = self._text(
            {"text": content.get("message_text", ""), "parse_mode": content.get("parse_mode")}
        )
        self.guest_answers[query_id] = {
            "result": result,
            "text": plain,
            "html": str(content.get("message_text", "")),
        }
        return {"inline_message_id": f"inline-{query_id}"}

    async def _m_answerCallbackQuery(self, params: dict[str, Any]) -> bool:
        """A tap's one answer, in time, of at most 200 characters."""
        query_id = str(params.get("callback_query_id", ""))
        tapped = self.pressed.get(query_id)
        if query_id in self.answered or tapped is None:
            raise TelegramError(400, _TOO_OLD)
        if time.monotonic() - tapped > self.callback_deadline_s:
            raise TelegramError(400, _TOO_OLD)
        if len(str(params.get("text") or "")) > MAX_CALLBACK_ANSWER:
            raise TelegramError(400, "Bad Request: MESSAGE_TOO_LONG")
        self.answered.add(query_id)
        return True


@dataclass(frozen=True)
class _File:
    file_id: str
    unique_id: str
    data: bytes
    size: int  # as declared to the bot
    path: str


def _keyboard(markup: Any) -> None:
    """Refuse an inline keyboard as Telegram does (a 400); other markups pass."""
    if not isinstance(markup, dict) or "inline_keyboard" not in markup:
        return
    rows = markup["inline_keyboard"]
    if not isinstance(rows, list) or not all(isinstance(row, list) for row in rows):
        raise TelegramError(400, "Bad Request: can't parse inline keyboard button")
    for button in (button for row in rows for button in row):
        if not str(button.get("text") or "").strip():
            raise TelegramError(400, "Bad Request: BUTTON_TEXT_INVALID")
        actions = [action for action in _BUTTON_ACTIONS if action in button]
        if len(actions) != 1:
            raise TelegramError(400, "Bad Request: can't parse inline keyboard button")
        data = button.get("callback_data")
        if data is not None and not 1 <= len(str(data).encode()) <= MAX_CALLBACK_DATA:
            raise TelegramError(400, "Bad Request: BUTTON_DATA_INVALID")
        url = button.get("url")
        if url is not None and not str(url).startswith(("http://", "https://", "tg://")):
            raise TelegramError(400, "Bad Request: BUTTON_URL_INVALID")


def _blank() -> bytes:
    """A small white image with nothing written on it."""
    out = io.BytesIO()
    Image.new("RGB", (90, 60), "white").save(out, format="PNG")
    return out.getvalue()


def _decode(form: dict[str, Any]) -> dict[str, Any]:
    params: dict[str, Any] = {}
    for name, value in form.items():
        if name in _JSON_FIELDS and isinstance(value, str):
            try:
                params[name] = json.loads(value)
            except json.JSONDecodeError:
                params[name] = value
        else:
            params[name] = value
    return params


def _entities(text: str) -> list[dict[str, Any]]:
    """The entities Telegram finds in plain text: a leading command, and @mentions."""
    found = []
    command = re.match(r"/\w+(@\w+)?", text)
    if command:
        found.append({"type": "bot_command", "offset": 0, "length": command.end()})
    for mention in re.finditer(r"(?<!\w)@\w{5,32}", text):
        # Offsets count UTF-16 code units, as Telegram's do.
        offset = len(text[: mention.start()].encode("utf-16-le")) // 2
        found.append({"type": "mention", "offset": offset, "length": len(mention.group(0))})
    return found
