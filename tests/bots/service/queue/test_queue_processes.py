"""Two ``zofia worker`` and two ``zofia telegram`` processes on one real PostgreSQL, the
real engine (Stage 1 on the embedded models, Stage 2 through the fake OpenAI server)
and the fake Bot API: posts reach the bots' webhooks as Telegram would send them,
alternately, as a load balancer would.

The fake LLM answers from a script, so these tests prove the deployment's behaviour
(one engine run per text, every requester answered once, nothing lost when a worker,
a bot or the database goes away), not the verdicts' quality.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import os
import shlex
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from tests.peers.fakes.panel_script import DEFAULTS, PanelScript, schema_name
from tests.peers.servers.loopback import running_in_thread
from tests.peers.servers.openai_peer import ChatReply, FakeOpenAI
from tests.peers.servers.pg_server import PostgresServer
from tests.peers.servers.telegram_peer import TOKEN, FakeBotAPI, user

from storage.postgres import PostgresDatabase
from storage.sql import first_row
from storage.store import CheckStore

pytestmark = pytest.mark.slow

SECRET = "deployment-test-secret-0123"
HOOK_SECRET = "hook-secret-0123456789"
ENGINE_S = 240.0  # the longest any wait below may take (bounded loops only)
ZOFIA = [sys.executable, "-c", "from bots.cli import main; main()"]
PROCFILE = Path(__file__).parents[4] / "Procfile"
TOPICS = [
    "Springfield", "Shelbyville", "Ogdenville", "North Haverbrook", "Capital City",
    "Brockway", "Cypress Creek", "Waverly Hills", "Rome", "Paris",
]  # fmt: skip
ACTS = ["banned bicycles", "closed the river bridge", "raised the bus fare", "cancelled the fair"]


def post_text(n: int) -> str:
    """Forty different claims (ten towns, four acts)."""
    return f"The mayor of {TOPICS[n % 10]} {ACTS[n // 10]} on Monday, officials said. ({n})"


def procfile() -> dict[str, list[str]]:
    """The README's process file: name → the ``zofia`` command's arguments."""
    found = {}
    for line in PROCFILE.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, command = line.split(":", 1)
            program, *args = shlex.split(command)
            assert program == "zofia", line
            found[name.strip()] = args
    return found


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def private_chat(uid: int) -> dict[str, Any]:
    return {"id": uid, "type": "private", "first_name": f"User{uid}"}


def is_card(message: dict[str, Any]) -> bool:
    rows = (message.get("reply_markup") or {}).get("inline_keyboard") or []
    return any(b.get("callback_data", "").startswith("d:") for row in rows for b in row)


class Deployment:
    """The processes of one deployment, each stopped (bounded) when the test ends."""

    def __init__(self, env: dict[str, str], folder: Path) -> None:
        self.env = env
        self.folder = folder
        self.procs: dict[str, subprocess.Popen[str]] = {}
        self.hooks: dict[str, int] = {}
        self.logs: list[Any] = []

    def start_worker(self, name: str) -> None:
        self._start(name, procfile()["worker"], self.env)

    def start_bot(self, name: str) -> None:
        port = free_port()
        env = {
            **self.env,
            "ZOFIA__TELEGRAM__WEBHOOK_URL": f"http://127.0.0.1:{port}/hook",
            "ZOFIA__TELEGRAM__WEBHOOK_PORT": str(port),
            "TELEGRAM_WEBHOOK_SECRET": HOOK_SECRET,
        }
        self.hooks[name] = port
        self._start(name, [*procfile()["telegram"], "--grace", "1"], env)

    def _start(self, name: str, args: list[str], env: dict[str, str]) -> None:
        log = (self.folder / f"{name}.log").open("a")
        self.logs.append(log)
        self.procs[name] = subprocess.Popen(
            [*ZOFIA, *args], env=env, cwd=self.folder, stdout=log, stderr=log, text=True
        )

    def log(self, name: str) -> str:
        return (self.folder / f"{name}.log").read_text(errors="replace")[-3000:]

    async def ready(self, name: str) -> None:
        deadline = time.monotonic() + 120
        while True:
            proc = self.procs[name]
            assert proc.poll() is None, f"{name} exited:\n{self.log(name)}"
            if name in self.hooks:
                with contextlib.suppress(OSError):
                    socket.create_connection(("127.0.0.1", self.hooks[name]), timeout=1).close()
                    return
            elif "worker ready" in self.log(name):
                return
            assert time.monotonic() < deadline, f"{name} never got ready:\n{self.log(name)}"
            await asyncio.sleep(0.2)

    def kill(self, name: str) -> None:
        proc = self.procs.pop(name)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)

    def stop_all(self) -> None:
        for proc in self.procs.values():
            with contextlib.suppress(ProcessLookupError):
                proc.send_signal(signal.SIGTERM)
        for name, proc in list(self.procs.items()):
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)
            self.procs.pop(name)
        for log in self.logs:
            log.close()

    async def post(self, session: aiohttp.ClientSession, bot: str, update: dict[str, Any]) -> None:
        url = f"http://127.0.0.1:{self.hooks[bot]}/hook"
        headers = {"X-Telegram-Bot-Api-Secret-Token": HOOK_SECRET}
        async with session.post(url, json=update, headers=headers) as response:
            assert response.status == 200, await response.text()


@pytest.fixture
def deployment_env(postgres_url: str, tmp_path: Path) -> Iterator[tuple[dict[str, str], Any]]:
    """The environment every process shares, with the fake LLM and Bot API running."""
    slow: dict[str, Any] = {"hang": "", "delay": "", "delay_s": 0.0}

    def debater(body: dict[str, Any]) -> ChatReply:
        text = json.dumps(body)
        content = json.dumps(DEFAULTS["debaterreply"])
        if slow["hang"] and slow["hang"] in text:
            return ChatReply(content=content, hang=True)
        if slow["delay"] and slow["delay"] in text:
            return ChatReply(content=content, delay_s=slow["delay_s"])
        return ChatReply(content=content)

    script = PanelScript(debaterreply=debater)
    with (
        running_in_thread(FakeOpenAI(script, api_key="sk-deploy")) as llm,
        running_in_thread(FakeBotAPI()) as bot_api,
    ):
        assert isinstance(llm, FakeOpenAI) and isinstance(bot_api, FakeBotAPI)
        env = {
            **os.environ,
            "ZOFIA__STORAGE__URL": postgres_url,
            "ZOFIA__STORAGE__SECRET": SECRET,
            "ZOFIA__LLM__BACKEND": "openai",
            "ZOFIA__LLM__OPENAI__BASE_URL": llm.base_url,
            "OPENAI_API_KEY": "sk-deploy",
            "TELEGRAM_BOT_TOKEN": TOKEN,
            "ZOFIA__TELEGRAM__BASE_URL": f"{bot_api.root}/bot",
            "ZOFIA__TELEGRAM__PROGRESS_INTERVAL_S": "0",
            "ZOFIA__TELEGRAM__CHAT_COOLDOWN_S": "0",
            "ZOFIA__SERVICE__USER_PER_MINUTE": "1000",
            "ZOFIA__SERVICE__CHAT_PER_MINUTE": "1000",
            "ZOFIA__SERVICE__MAX_PENDING_CHECKS": "1000",
            # 1,000 pending checks would reserve 1,000 x llm.max_tokens_per_check: no budget
            "ZOFIA__SERVICE__DAILY_TOKEN_BUDGET": "0",
            "ZOFIA__QUEUE__HEARTBEAT_S": "1",
            "ZOFIA__QUEUE__STALLED_AFTER_S": "4",
            "ZOFIA__QUEUE__POLL_S": "0.5",
        }
        yield env, (llm, bot_api, slow)


def runs_of(llm: FakeOpenAI) -> int:
    """Engine runs the fake LLM saw: each asks for a triage exactly once."""
    return sum(schema_name(body) == "triagereply" for body in llm.requests)


async def wait_until(
    condition: Any, what: str, state: Any = None, timeout: float = ENGINE_S
) -> None:
    """Poll ``condition`` until it holds; on timeout, fail with ``state()`` in the message."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out waiting for {what}: {state() if state else ''}")
        await asyncio.sleep(0.25)


def cards(bot_api: FakeBotAPI, uid: int) -> list[dict[str, Any]]:
    return [m for m in bot_api.bot_messages(uid) if is_card(m)]


def send_update(bot_api: FakeBotAPI, uid: int, text: str) -> dict[str, Any]:
    """A user's private message, as the Bot API would post it to a webhook."""
    bot_api.send(private_chat(uid), user(uid), text)
    return bot_api.updates[-1]


async def test_fifty_posts_on_two_bots_and_two_workers_then_a_worker_and_a_bot_die(
    deployment_env: tuple[dict[str, str], Any], postgres_url: str, tmp_path: Path
) -> None:
    env, (llm, bot_api, slow) = deployment_env
    deployment = Deployment(env, tmp_path)
    try:
        for name in ("worker-1", "worker-2", "bot-1", "bot-2"):
            (deployment.start_worker if name.startswith("worker") else deployment.start_bot)(name)
        for name in ("worker-1", "worker-2", "bot-1", "bot-2"):
            await deployment.ready(name)

        # 1. Fifty posts, ten of them repeats of others, on alternate bots: each repeat
        # sent again in the private chat that sent it first (a private chat's check
        # answers no other chat: storage.other_chats).
        texts = [post_text(n) for n in range(40)] + [post_text(n) for n in range(0, 40, 4)]
        users = list(range(1001, 1041)) + list(range(1001, 1041, 4))
        expected = collections.Counter(users)
        async with aiohttp.ClientSession() as session:
            await asyncio.gather(
                *(
                    deployment.post(session, f"bot-{1 + i % 2}", send_update(bot_api, uid, text))
                    for i, (uid, text) in enumerate(zip(users, texts, strict=True))
                )
            )
            await wait_until(
                lambda: all(len(cards(bot_api, uid)) >= n for uid, n in expected.items()),
                "50 cards",
                lambda: {
                    uid: bot_api.bot_messages(uid)
                    for uid, n in expected.items()
                    if len(cards(bot_api, uid)) < n
                },
            )
            await asyncio.sleep(1.0)  # no further card comes for anyone
        assert {uid: len(cards(bot_api, uid)) for uid in expected} == dict(expected)
        assert runs_of(llm) == 40
        db = PostgresDatabase(postgres_url)
        store = CheckStore(db)
        (reports,) = first_row(db.execute("SELECT count(*) FROM reports"))
        statuses = db.execute("SELECT status, count(*) FROM checks GROUP BY status").fetchall()
        assert reports == 40 and dict(statuses) == {"done": 50}

        # 2. A worker killed mid-debate: the other finishes the check, one report, one card.
        deployment.procs["worker-2"].send_signal(signal.SIGTERM)
        deployment.procs.pop("worker-2").wait(timeout=60)
        slow["hang"] = "Zanzibar"
        async with aiohttp.ClientSession() as session:
            await deployment.post(
                session, "bot-1", send_update(bot_api, 2001, "Zanzibar's mayor banned cars.")
            )
            await wait_until(
                lambda: any(
                    schema_name(b) == "debaterreply" and "Zanzibar" in json.dumps(b)
                    for b in llm.requests
                ),
                "the debate on worker 1",
            )
            deployment.start_worker("worker-2")
            await deployment.ready("worker-2")
            slow["hang"] = ""
            deployment.kill("worker-1")
            await wait_until(lambda: cards(bot_api, 2001), "the card after the worker died")
        (zanzibar,) = db.execute(
            "SELECT id, status FROM checks WHERE repeat_of IS NULL AND rowid = (SELECT max(rowid)"
            " FROM checks)"
        ).fetchall()
        assert zanzibar[1] == "done"
        reports_of = db.execute("SELECT count(*) FROM reports WHERE check_id = ?", [zanzibar[0]])
        assert first_row(reports_of)[0] == 1 and len(cards(bot_api, 2001)) == 1

        # 3. A bot killed while its user waits: the other bot delivers the card.
        slow["delay"], slow["delay_s"] = "Atlantis", 6.0
        async with aiohttp.ClientSession() as session:
            await deployment.post(
                session, "bot-1", send_update(bot_api, 3001, "Atlantis's mayor banned boats.")
            )
            await wait_until(lambda: bot_api.bot_messages(3001), "the checking… message")
            deployment.kill("bot-1")
            await wait_until(lambda: cards(bot_api, 3001), "the card from the other bot")
        (message,) = bot_api.bot_messages(3001)  # the progress message became the card
        assert is_card(message)
        assert store.integrity_ok()
        db.close()
    finally:
        deployment.stop_all()


async def test_a_database_restart_mid_run_loses_nothing(
    deployment_env: tuple[dict[str, str], Any],
    postgres_url: str,
    postgres_server: PostgresServer,
    tmp_path: Path,
) -> None:
    env, (llm, bot_api, slow) = deployment_env
    deployment = Deployment(env, tmp_path)
    try:
        deployment.start_worker("worker-1")
        deployment.start_bot("bot-1")
        await deployment.ready("worker-1")
        await deployment.ready("bot-1")
        slow["delay"], slow["delay_s"] = "Ruritania", 3.0
        users = list(range(4001, 4007))
        async with aiohttp.ClientSession() as session:
            for i, uid in enumerate(users):
                text = f"Ruritania's mayor banned kites on day {i}, officials said."
                await deployment.post(session, "bot-1", send_update(bot_api, uid, text))
            await wait_until(
                lambda: any(schema_name(b) == "debaterreply" for b in llm.requests), "a debate"
            )
            await asyncio.to_thread(postgres_server.restart)
            await wait_until(lambda: all(cards(bot_api, uid) for uid in users), "6 cards")
        assert [len(cards(bot_api, uid)) for uid in users] == [1] * 6
        db = PostgresDatabase(postgres_url)
        statuses = dict(db.execute("SELECT status, count(*) FROM checks GROUP BY status"))
        reports = first_row(db.execute("SELECT count(*) FROM reports"))[0]
        assert statuses == {"done": 6} and reports == 6
        assert CheckStore(db).integrity_ok()  # amcheck over every index
        db.close()
    finally:
        deployment.stop_all()
