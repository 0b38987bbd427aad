"""A fake Discord: the REST routes the bot uses and a gateway websocket, on loopback.

Point a real discord.py client at it with ``Route.BASE = peer.api_base`` and
``DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(peer.gateway_url)``. The gateway
sends HELLO, answers IDENTIFY with READY and the test guild's GUILD_CREATE (its roles:
``@everyone``, and moderators with ``ADMIN``'s rights across the server), and heartbeats
with ACK; a test then
sends ``INTERACTION_CREATE`` events with :meth:`FakeDiscord.dispatch`. Every
REST call is recorded in :attr:`FakeDiscord.calls`; messages the bot posts are
kept, so that a later button press can carry the message it was pressed on.
Attachments (:meth:`FakeDiscord.attachment`) are served from the peer as Discord's
CDN serves them (``url``) and its media proxy (``proxy_url``); each download is
recorded in :attr:`FakeDiscord.downloads`.

It refuses what Discord refuses (:mod:`.discord_limits`): a message, an embed or a
component past its documented limits, a modal past its own, or a command registered
past them is a 400 ``Invalid Form Body``; an interaction not acknowledged within
:attr:`FakeDiscord.ack_deadline_s` (3 s) of its dispatch is "Unknown interaction"
(404, code 10062), and a second acknowledgement "Interaction has already been
acknowledged" (400, code 40060). An option value that the member's Discord client
would not send (a text longer than the option's ``max_length``) is never dispatched:
:meth:`FakeDiscord.dispatch` raises :class:`ClientRefused` in the test.

Payloads follow Discord's JSON format (API v10).
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import itertools
import json
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import discord
from aiohttp import WSMsgType, web

from .discord_limits import (
    command_errors,
    invalid_form_body,
    message_errors,
    modal_errors,
    refused_option,
)
from .loopback import LoopbackServer

#: the bot token the fake accepts (tests/peers/fixtures/discord_fixtures.py starts it with it)
DISCORD_TOKEN = "MTIz.fake-bot-token.never-logged"

__all__ = [
    "ADMIN",
    "DISCORD_TOKEN",
    "MANAGER",
    "MEMBER",
    "Call",
    "ClientRefused",
    "FakeDiscord",
]

DISCORD_EPOCH_MS = 1420070400000
THREAD_TYPE = 11
ADMIN = "2248473465835135"  # a member's permissions, Manage Server (32) among them
MEMBER = "3072"  # view channel and send messages
MANAGER = "11264"  # a member's rights and Manage Messages (8192)


class ClientRefused(ValueError):
    """A member's Discord client would not send this interaction (an option's value past
    its registered limits): a test that builds one breaks a limit Discord enforces."""


@dataclass
class Call:
    """One REST request the bot made."""

    method: str
    path: str
    query: dict[str, str]
    body: Any
    status: int = 200
    answer: Any = field(default=None, repr=False)


def _iso(moment: dt.datetime) -> str:
    return moment.astimezone(dt.UTC).isoformat()


class FakeDiscord(LoopbackServer):
    """Discord's API v10 and gateway, as far as the fact-check bot uses them.

    Args:
        token: the bot token ``GET /users/@me`` accepts (others get 401).
    """

    APP_ID = 500000000000000001
    BOT_ID = 500000000000000001
    GUILD_ID = 600000000000000001
    #: the test guild's moderators' role: ``ADMIN``'s rights across the server
    MODERATOR_ROLE = 600000000000000002
    #: a role that may manage messages across the server (``MANAGER``'s rights), no admin
    MANAGER_ROLE = 600000000000000003
    OWNER_ID = 400000000000000001
    CHANNEL_ID = 700000000000000001

    def __init__(self, token: str = "fake-token") -> None:
        super().__init__()
        self.token = token
        self.calls: list[Call] = []
        self.messages: dict[int, dict[str, Any]] = {}
        self.threads: dict[int, dict[str, Any]] = {}
        self.unreadable_channels: set[int] = set()
        self.no_thread_channels: set[int] = set()
        self.expired_tokens: set[str] = set()
        self.foreign_channels: dict[int, int] = {}  # channel id → the other guild it is in
        self.dm_channels: dict[int, int] = {}  # user id → their DM channel with the bot
        self.originals: dict[str, int] = {}  # interaction token → its response message id
        self.pressed_on: dict[str, int] = {}  # a component's interaction token → its message
        self.channel_of: dict[str, int] = {}  # an interaction token → its channel id
        self.files: dict[int, tuple[bytes, str]] = {}  # attachment id → its bytes and type
        self.downloads: list[str] = []  # the path of every attachment download
        self.identified = asyncio.Event()
        self.identifies = 0
        #: the commands the bot registered, by name (what a client lets a member send)
        self.commands: dict[str, dict[str, Any]] = {}
        #: how long Discord waits for an interaction's acknowledgement
        self.ack_deadline_s = 3.0
        self.dispatched: dict[str, float] = {}  # interaction id → when it was sent
        self.acknowledged: set[str] = set()  # interaction ids with their one callback
        self.sockets: list[web.WebSocketResponse] = []
        self._seq = itertools.count(1)
        self._ids = itertools.count(1)
        self._changed = asyncio.Event()

    # -- addresses ---------------------------------------------------------------------------

    @property
    def api_base(self) -> str:
        return f"{self.root}/api/v10"

    @property
    def gateway_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/gw"

    def snowflake(self, moment: dt.datetime | None = None) -> int:
        """A fresh id whose timestamp is ``moment`` (now by default)."""
        moment = moment or dt.datetime.now(dt.UTC)
        ms = int(moment.timestamp() * 1000) - DISCORD_EPOCH_MS
        return (ms << 22) + (next(self._ids) % 4096)

    # -- payloads ----------------------------------------------------------------------------

    def user(self, user_id: int, name: str = "member") -> dict[str, Any]:
        return {
            "id": str(user_id),
            "username": name,
            "discriminator": "0",
            "global_name": name.title(),
            "avatar": None,
            "bot": user_id == self.BOT_ID,
        }

    def guild(self) -> dict[str, Any]:
        """The test guild as GUILD_CREATE gives it: its roles (``@everyone`` with
        ``MEMBER``'s rights, the moderators' with ``ADMIN``'s, the message managers' with
        ``MANAGER``'s), its owner; no channel or member lists (an interaction carries its
        own)."""
        named = [
            (self.GUILD_ID, "@everyone", MEMBER),
            (self.MODERATOR_ROLE, "Moderators", ADMIN),
            (self.MANAGER_ROLE, "Message managers", MANAGER),
        ]
        roles: list[dict[str, Any]] = [
            {"id": str(role), "name": name, "permissions": rights, "position": position}
            for position, (role, name, rights) in enumerate(named)
        ]
        return {
            "id": str(self.GUILD_ID),
            "name": "Rumour mill",
            "unavailable": False,
            "owner_id": str(self.OWNER_ID),
            "roles": [role | {"color": 0, "hoist": False, "managed": False} for role in roles],
            "member_count": 3,
            "channels": [],
            "members": [],
            "emojis": [],
            "stickers": [],
            "features": [],
            "joined_at": _iso(dt.datetime(2025, 1, 1, tzinfo=dt.UTC)),
        }

    def channel(self, channel_id: int | None = None) -> dict[str, Any]:
        """A text channel: in the test guild, or in the one ``foreign_channels`` says."""
        channel_id = channel_id or self.CHANNEL_ID
        return {
            "id": str(channel_id),
            "type": 0,
            "guild_id": str(self.foreign_channels.get(channel_id, self.GUILD_ID)),
            "name": "news",
            "position": 0,
            "permission_overwrites": [],
            "nsfw": False,
            "parent_id": None,
            "topic": None,
            "last_message_id": None,
            "rate_limit_per_user": 0,
            "flags": 0,
        }

    def attachment(
        self,
        data: bytes,
        filename: str,
        *,
        content_type: str | None = None,
        size: int | None = None,
        channel_id: int | None = None,
        duration_secs: float | None = None,
    ) -> dict[str, Any]:
        """An attachment payload whose ``url`` and ``proxy_url`` serve ``data`` from the
        peer; ``size`` is what Discord declares (the length of ``data`` by default), and
        ``content_type`` is left out when ``None`` (Discord sends none for some files).
        ``duration_secs`` makes it a voice message's (with its ``waveform``, as Discord
        sends one)."""
        attachment_id = self.snowflake()
        channel = channel_id or self.CHANNEL_ID
        self.files[attachment_id] = (data, content_type or "application/octet-stream")
        where = f"attachments/{channel}/{attachment_id}/{filename}"
        query = "?ex=6a000000&is=69f00000&hm=00ff"
        payload: dict[str, Any] = {
            "id": str(attachment_id),
            "filename": filename,
            "size": len(data) if size is None else size,
            "url": f"{self.root}/cdn/{where}{query}",
            "proxy_url": f"{self.root}/media/{where}{query}",
        }
        if content_type is not None:
            payload["content_type"] = content_type
        if duration_secs is not None:
            payload["duration_secs"] = duration_secs
            payload["waveform"] = "AAAAAAAAAAAA"  # base64 of a flat line (256 samples at most)
        return payload

    def message(
        self,
        content: str,
        *,
        author: dict[str, Any] | None = None,
        channel_id: int | None = None,
        attachments: list[dict[str, Any]] | None = None,
        extra: dict[str, Any] | None = None,
        store: bool = True,
    ) -> dict[str, Any]:
        """A message payload, kept so that ``GET`` finds it; ``attachments`` are
        :meth:`attachment` payloads."""
        message = {
            "id": str(self.snowflake()),
            "channel_id": str(channel_id or self.CHANNEL_ID),
            "author": author or self.user(self.BOT_ID, "zofia"),
            "content": content,
            "timestamp": _iso(dt.datetime.now(dt.UTC)),
            "edited_timestamp": None,
            "tts": False,
            "mention_everyone": False,
            "mentions": [],
            "mention_roles": [],
            "attachments": attachments or [],
            "embeds": [],
            "components": [],
            "pinned": False,
            "type": 0,
            "flags": 0,
            **(extra or {}),
        }
        if store:
            self.messages[int(message["id"])] = message
        return message

    def action_row(self, *custom_ids: str) -> list[dict[str, Any]]:
        """Message components: one row of buttons with these custom ids."""
        buttons = [
            {"type": 2, "style": 2, "label": custom, "custom_id": custom} for custom in custom_ids
        ]
        return [{"type": 1, "components": buttons}]

    def _interaction(
        self,
        kind: int,
        data: dict[str, Any],
        *,
        user_id: int,
        guild: bool,
        created: dt.datetime,
        permissions: str = ADMIN,
        where: tuple[int, int] | None = None,
        roles: list[int] | None = None,
    ) -> dict[str, Any]:
        guild_id, channel_id = where or (self.GUILD_ID, self.CHANNEL_ID)
        if roles is None:  # a member with an admin's rights is one of the server's moderators
            roles = [self.MODERATOR_ROLE] if permissions == ADMIN else []
        interaction_id = self.snowflake(created)
        self.channel_of[f"itoken-{interaction_id}"] = channel_id
        payload: dict[str, Any] = {
            "id": str(interaction_id),
            "application_id": str(self.APP_ID),
            "type": kind,
            "data": data,
            "token": f"itoken-{interaction_id}",
            "version": 1,
            "locale": "en-US",
            "app_permissions": "2248473465835073",
            "attachment_size_limit": 8388608,
            "entitlements": [],
            "authorizing_integration_owners": {"0": str(guild_id)} if guild else {},
            "context": 0 if guild else 1,
        }
        if guild:
            payload["guild_id"] = str(guild_id)
            payload["guild_locale"] = "en-US"
            payload["channel_id"] = str(channel_id)
            payload["channel"] = self.channel(channel_id) | {"guild_id": str(guild_id)}
            payload["member"] = {
                "user": self.user(user_id),
                "roles": [str(role) for role in roles],
                "joined_at": _iso(dt.datetime(2025, 1, 1, tzinfo=dt.UTC)),
                "deaf": False,
                "mute": False,
                "flags": 0,
                "permissions": permissions,
            }
        else:
            dm = 800000000000000000 + user_id % 1000
            payload["channel_id"] = str(dm)
            payload["channel"] = {"id": str(dm), "type": 1, "recipients": [self.user(user_id)]}
            payload["user"] = self.user(user_id)
        return payload

    def slash(
        self,
        name: str,
        options: dict[str, Any],
        *,
        user_id: int = 900000000000000001,
        guild: bool = True,
        created: dt.datetime | None = None,
        permissions: str = ADMIN,
        where: tuple[int, int] | None = None,
    ) -> dict[str, Any]:
        """An INTERACTION_CREATE payload for ``/name`` with string/number/bool options and
        attachment options (an :meth:`attachment` payload: the option's value is its id,
        and the attachment comes in ``resolved.attachments``, as Discord sends it);
        ``permissions`` are the member's (an admin's by default); ``where``: its guild
        and channel ids (the test guild's channel by default)."""
        kinds = {str: 3, bool: 5, int: 4, float: 10}
        opts = []
        resolved: dict[str, dict[str, Any]] = {}
        for key, value in options.items():
            if isinstance(value, dict):
                resolved[value["id"]] = value
                opts.append({"name": key, "type": 11, "value": value["id"]})
            else:
                opts.append({"name": key, "type": kinds[type(value)], "value": value})
        data: dict[str, Any] = {
            "id": str(self.snowflake()),
            "name": name,
            "type": 1,
            "options": opts,
        }
        if resolved:
            data["resolved"] = {"attachments": resolved}
        when = created or dt.datetime.now(dt.UTC)
        return self._interaction(
            2,
            data,
            user_id=user_id,
            guild=guild,
            created=when,
            permissions=permissions,
            where=where,
        )

    def message_command(
        self, name: str, target: dict[str, Any], *, user_id: int = 900000000000000001
    ) -> dict[str, Any]:
        """An INTERACTION_CREATE payload for a message context-menu command on ``target``."""
        data = {
            "id": str(self.snowflake()),
            "name": name,
            "type": 3,
            "target_id": target["id"],
            "resolved": {"messages": {target["id"]: target}},
        }
        return self._interaction(
            2, data, user_id=user_id, guild=True, created=dt.datetime.now(dt.UTC)
        )

    def button(
        self,
        custom_id: str,
        message: dict[str, Any],
        *,
        user_id: int = 900000000000000001,
        permissions: str = ADMIN,
        where: tuple[int, int] | None = None,
        roles: list[int] | None = None,
    ) -> dict[str, Any]:
        """An INTERACTION_CREATE payload for a press of ``custom_id`` on ``message``, by a
        member with ``permissions`` in its channel (an admin's by default) and ``roles``
        in its server (by default the moderators' role for an admin's permissions, none
        for others: a member whose rights in the channel come from an overwrite has
        ``ADMIN`` and no role), in ``where`` (guild and channel ids; the test guild's
        channel by default)."""
        data = {"custom_id": custom_id, "component_type": 2}
        return self._component(data, message, user_id, permissions, where, roles)

    def select(
        self,
        custom_id: str,
        message: dict[str, Any],
        values: list[str],
        *,
        user_id: int = 900000000000000001,
        permissions: str = ADMIN,
        where: tuple[int, int] | None = None,
        roles: list[int] | None = None,
    ) -> dict[str, Any]:
        """An INTERACTION_CREATE payload for choosing ``values`` in the string select
        ``custom_id`` on ``message`` (the member as :meth:`button`'s)."""
        data = {"custom_id": custom_id, "component_type": 3, "values": values}
        return self._component(data, message, user_id, permissions, where, roles)

    def modal_submit(
        self,
        custom_id: str,
        fields: dict[str, str],
        message: dict[str, Any],
        *,
        user_id: int = 900000000000000001,
        permissions: str = ADMIN,
        where: tuple[int, int] | None = None,
        roles: list[int] | None = None,
    ) -> dict[str, Any]:
        """An INTERACTION_CREATE payload for submitting the modal ``custom_id`` (opened from
        a component on ``message``) with its text inputs' ``fields`` by custom id (the
        member as :meth:`button`'s)."""
        rows = [
            {"type": 1, "components": [{"type": 4, "custom_id": key, "value": value}]}
            for key, value in fields.items()
        ]
        data = {"custom_id": custom_id, "components": rows}
        payload = self._interaction(
            5,
            data,
            user_id=user_id,
            guild=True,
            created=dt.datetime.now(dt.UTC),
            permissions=permissions,
            where=where,
            roles=roles,
        )
        payload["message"] = message
        return payload

    def _component(
        self,
        data: dict[str, Any],
        message: dict[str, Any],
        user_id: int,
        permissions: str,
        where: tuple[int, int] | None,
        roles: list[int] | None,
    ) -> dict[str, Any]:
        payload = self._interaction(
            3,
            data,
            user_id=user_id,
            guild=True,
            created=dt.datetime.now(dt.UTC),
            permissions=permissions,
            where=where,
            roles=roles,
        )
        payload["message"] = message
        self.pressed_on[payload["token"]] = int(message["id"])
        return payload

    def _client_sends(self, interaction: dict[str, Any]) -> None:
        """Raise :class:`ClientRefused` for a slash command whose option values its
        registered options refuse (a command the bot never registered is not checked)."""
        data = interaction.get("data") or {}
        command = self.commands.get(str(data.get("name")))
        if interaction.get("type") != 2 or data.get("type") != 1 or command is None:
            return
        for option in data.get("options") or []:
            if option.get("type") == 11:  # an attachment: its id, checked elsewhere
                continue
            why = refused_option(command, option["name"], option["value"])
            if why:
                raise ClientRefused(f"Discord's client would not send /{data['name']}: {why}")

    # -- gateway -----------------------------------------------------------------------------

    async def dispatch(self, event: str, data: dict[str, Any]) -> None:
        """Send a DISPATCH event to every connected gateway socket. An interaction is
        sent only if a Discord client would send it (see :class:`ClientRefused`), and
        its acknowledgement is awaited from now (:attr:`ack_deadline_s`)."""
        if event == "INTERACTION_CREATE":
            self._client_sends(data)
            self.dispatched[str(data["id"])] = time.monotonic()
        frame = json.dumps({"op": 0, "t": event, "s": next(self._seq), "d": data})
        for socket in list(self.sockets):
            if not socket.closed:
                await socket.send_str(frame)

    async def _gateway(self, request: web.Request) -> web.WebSocketResponse:
        socket = web.WebSocketResponse()
        await socket.prepare(request)
        self.sockets.append(socket)
        await socket.send_str(json.dumps({"op": 10, "d": {"heartbeat_interval": 45000}}))
        async for frame in socket:
            if frame.type != WSMsgType.TEXT:
                break
            message = json.loads(frame.data)
            if message["op"] == 1:
                await socket.send_str(json.dumps({"op": 11}))
            elif message["op"] == 2:
                if message["d"]["token"] != self.token:
                    await socket.close(code=4004, message=b"Authentication failed.")
                    break
                self.identifies += 1
                ready = {
                    "v": 10,
                    "user": self.user(self.BOT_ID, "zofia"),
                    "guilds": [{"id": str(self.GUILD_ID), "unavailable": True}],
                    "session_id": f"session-{self.identifies}",
                    "resume_gateway_url": self.gateway_url,
                    "application": {"id": str(self.APP_ID), "flags": 0},
                }
                if "shard" in message["d"]:  # an auto-sharded client names its shard
                    ready["shard"] = message["d"]["shard"]
                frame_out = {"op": 0, "t": "READY", "s": next(self._seq), "d": ready}
                await socket.send_str(json.dumps(frame_out))
                # As Discord does for a bot with the GUILDS intent: each guild READY names
                # comes whole in its GUILD_CREATE (its roles: a member's server-wide rights).
                guild = {"op": 0, "t": "GUILD_CREATE", "s": next(self._seq), "d": self.guild()}
                await socket.send_str(json.dumps(guild))
                self.identified.set()
        if socket in self.sockets:
            self.sockets.remove(socket)
        return socket

    # -- REST --------------------------------------------------------------------------------

    def add_routes(self, app: web.Application) -> None:
        app.router.add_get("/gw", self._gateway)
        app.router.add_route("*", "/api/v10/{tail:.*}", self._rest)
        for host in ("cdn", "media"):
            app.router.add_get(f"/{host}/attachments/{{channel}}/{{id}}/{{name}}", self._file)

    async def _file(self, request: web.Request) -> web.Response:
        """An attachment's bytes, as Discord's CDN (or media proxy) serves them."""
        self.downloads.append(request.path)
        self._changed.set()
        found = self.files.get(int(request.match_info["id"]))
        if found is None:
            return web.Response(status=404, text="Not Found")
        data, content_type = found
        return web.Response(body=data, headers={"Content-Type": content_type})

    async def _rest(self, request: web.Request) -> web.Response:
        body: Any = None
        if request.can_read_body:
            raw = await request.read()
            body = json.loads(raw) if raw else None
        call = Call(request.method, "/" + request.match_info["tail"], dict(request.query), body)
        status, answer = self._answer(request, call)
        call.status, call.answer = status, answer
        self.calls.append(call)
        self._changed.set()
        if status == 204:
            return web.Response(status=204)
        # discord.py reads a body as JSON only for exactly this content type.
        headers = {"Content-Type": "application/json"}
        return web.Response(body=json.dumps(answer).encode(), status=status, headers=headers)

    def _answer(self, request: web.Request, call: Call) -> tuple[int, Any]:
        parts = call.path.strip("/").split("/")
        method, body = call.method, call.body or {}
        if parts == ["users", "@me"]:
            if request.headers.get("Authorization") != f"Bot {self.token}":
                return 401, {"message": "401: Unauthorized", "code": 0}
            return 200, self.user(self.BOT_ID, "zofia")
        if parts == ["users", "@me", "channels"] and method == "POST":
            return 200, self._dm_channel(int(body["recipient_id"]))
        if parts == ["oauth2", "applications", "@me"]:
            return 200, self._application()
        if parts[:1] == ["gateway"]:
            return 200, {"url": self.gateway_url, "shards": 1, "session_start_limit": {}}
        if parts[:1] == ["applications"] and parts[-1] == "commands" and method == "PUT":
            refused = [f"{c.get('name')}: {e}" for c in body for e in command_errors(c)]
            if refused:
                return 400, invalid_form_body(refused)
            self.commands = {command["name"]: command for command in body}
            return 200, [
                {
                    "id": str(self.snowflake()),
                    "application_id": str(self.APP_ID),
                    "version": "1",
                    "default_member_permissions": None,
                    "description": "",
                    **command,
                }
                for command in body
            ]
        if parts[:1] == ["interactions"] and parts[-1] == "callback":
            return self._callback(parts[1], parts[2], body)
        if parts[:1] == ["webhooks"]:
            return self._webhook(method, parts[2], parts[3:], body)
        if parts[:1] == ["channels"]:
            return self._channel(method, int(parts[1]), parts[2:], body)
        return 404, {"message": "Unknown route", "code": 0}

    def _application(self) -> dict[str, Any]:
        return {
            "id": str(self.APP_ID),
            "name": "ZoFia",
            "icon": None,
            "description": "Fact-checks posts",
            "bot_public": True,
            "bot_require_code_grant": False,
            "owner": self.user(400000000000000001, "owner"),
            "verify_key": "0" * 64,
            "flags": 0,
        }

    def _callback(self, interaction_id: str, token: str, body: dict[str, Any]) -> tuple[int, Any]:
        """An interaction's one acknowledgement, within :attr:`ack_deadline_s` of its
        dispatch, its message or modal within Discord's limits."""
        sent = self.dispatched.get(interaction_id)
        if sent is not None and time.monotonic() - sent > self.ack_deadline_s:
            return 404, {"message": "Unknown interaction", "code": 10062}
        if interaction_id in self.acknowledged:
            return 400, {"message": "Interaction has already been acknowledged.", "code": 40060}
        data = body.get("data") or {}
        errors = modal_errors(data) if body["type"] == 9 else message_errors(data)
        if errors:
            return 400, invalid_form_body(errors)
        self.acknowledged.add(interaction_id)
        flags = data.get("flags", 0)
        interaction = {
            "id": token.removeprefix("itoken-"),
            "type": 2,
            "response_message_loading": body["type"] == 5,
            "response_message_ephemeral": bool(flags & 64),
        }
        resource = None
        if body["type"] in (4, 5, 7):
            data = body.get("data") or {}
            channel = self.channel_of.get(token)
            message = self.message(
                data.get("content", ""), channel_id=channel, extra=self._fields(data)
            )
            self.originals[token] = int(message["id"])
            resource = {"type": body["type"], "message": message}
        if body["type"] == 6 and token in self.pressed_on:  # a deferred update: the
            # response is the message the component is on, which @original then edits
            self.originals[token] = self.pressed_on[token]
        interaction["response_message_id"] = resource and resource["message"]["id"]
        return 200, {"interaction": interaction, "resource": resource}

    def _dm_channel(self, user_id: int) -> dict[str, Any]:
        """The DM channel with ``user_id`` (opened on first use, then the same one)."""
        channel_id = self.dm_channels.setdefault(user_id, 810000000000000000 + user_id % 1000)
        return {
            "id": str(channel_id),
            "type": 1,
            "last_message_id": None,
            "recipients": [self.user(user_id)],
        }

    def _fields(self, data: dict[str, Any]) -> dict[str, Any]:
        return {key: data[key] for key in ("embeds", "components", "flags") if key in data}

    def _webhook(
        self, method: str, token: str, rest: list[str], body: dict[str, Any]
    ) -> tuple[int, Any]:
        if token in self.expired_tokens:
            return 401, {"message": "Invalid Webhook Token", "code": 50027}
        if method in ("POST", "PATCH") and message_errors(body):
            return 400, invalid_form_body(message_errors(body))
        if rest == ["messages", "@original"] and method == "DELETE":
            message_id = self.originals.pop(token, None)
            if message_id is None or self.messages.pop(message_id, None) is None:
                return 404, {"message": "Unknown Message", "code": 10008}
            return 204, None
        if rest == ["messages", "@original"] and method == "PATCH":
            message_id = self.originals.get(token)
            if message_id is None or message_id not in self.messages:
                return 404, {"message": "Unknown Message", "code": 10008}
            message = self.messages[message_id]
            if "content" in body:
                message["content"] = body["content"] or ""
            message.update(self._fields(body))
            return 200, message
        if not rest and method == "POST":
            content, channel = body.get("content") or "", self.channel_of.get(token)
            return 200, self.message(content, channel_id=channel, extra=self._fields(body))
        return 404, {"message": "Unknown Webhook route", "code": 0}

    def _channel(
        self, method: str, channel_id: int, rest: list[str], body: dict[str, Any]
    ) -> tuple[int, Any]:
        if channel_id in self.unreadable_channels:
            return 403, {"message": "Missing Access", "code": 50001}
        if rest == ["messages"] and method == "POST":
            if message_errors(body):
                return 400, invalid_form_body(message_errors(body))
            content = body.get("content") or ""
            return 200, self.message(content, channel_id=channel_id, extra=self._fields(body))
        if len(rest) == 2 and rest[0] == "messages" and method == "GET":
            message = self.messages.get(int(rest[1]))
            if message is None or int(message["channel_id"]) != channel_id:
                return 404, {"message": "Unknown Message", "code": 10008}
            return 200, message
        if len(rest) == 3 and rest[2] == "threads" and method == "POST":
            if channel_id in self.no_thread_channels:
                return 403, {"message": "Missing Permissions", "code": 50013}
            message_id = int(rest[1])
            if message_id in self.threads:
                return 400, {"message": "A thread has already been created", "code": 160004}
            thread = {
                "id": str(message_id),
                "guild_id": str(self.GUILD_ID),
                "parent_id": str(channel_id),
                "owner_id": str(self.BOT_ID),
                "name": body.get("name", ""),
                "type": THREAD_TYPE,
                "last_message_id": None,
                "message_count": 0,
                "member_count": 1,
                "rate_limit_per_user": 0,
                "flags": 0,
                "thread_metadata": {
                    "archived": False,
                    "auto_archive_duration": body.get("auto_archive_duration", 1440),
                    "archive_timestamp": _iso(dt.datetime.now(dt.UTC)),
                    "locked": False,
                },
            }
            self.threads[message_id] = thread
            return 201, thread
        if not rest and method == "GET":
            known = self.threads.get(channel_id)
            return (200, known) if known else (200, self.channel(channel_id))
        return 404, {"message": "Unknown Channel route", "code": 0}

    # -- waiting -----------------------------------------------------------------------------

    async def wait_for(self, match: Callable[[Call], bool], timeout: float = 20.0) -> Call:
        """The first recorded call that ``match`` accepts, waiting at most ``timeout`` s."""
        async with asyncio.timeout(timeout):
            while True:
                for call in self.calls:
                    if match(call):
                        return call
                self._changed.clear()
                await self._changed.wait()

    def calls_to(self, method: str, prefix: str) -> list[Call]:
        """The recorded calls of ``method`` whose path starts with ``prefix``."""
        return [c for c in self.calls if c.method == method and c.path.startswith(prefix)]

    async def close(self) -> None:
        for socket in list(self.sockets):
            await socket.close()
        await super().close()


C = TypeVar("C", bound=discord.Client)


@contextlib.asynccontextmanager
async def running_client(bot: C, token: str = DISCORD_TOKEN) -> AsyncIterator[C]:
    """``bot`` logged in to the fake (which discord_fixtures.discord_api points it at)
    and ready; closed, and its task awaited, on the way out (both bounded)."""
    # discord.py waits ``guild_ready_timeout`` (2 s by default) after the last GUILD_CREATE
    # before it is ready, whatever comes: that would only delay every test. The test
    # guild is waited for below instead, once its GUILD_CREATE (its roles) is cached.
    bot._connection.guild_ready_timeout = 0.0
    async with bot:
        task = asyncio.create_task(bot.start(token))
        try:
            async with asyncio.timeout(30):
                await bot.wait_until_ready()
                while not bot.guilds or any(guild.unavailable for guild in bot.guilds):
                    await asyncio.sleep(0.01)
            yield bot
        finally:
            await bot.close()
            async with asyncio.timeout(10):
                await task
