"""A crash mid-debate loses nothing: the check is resumed on the next start.

A subprocess runs the real check service against the fake OpenAI server, whose
debaters answer only after a long delay; once the check is running and the
debate has begun, the test kills the process with SIGKILL, starts a new
service on the same database, and waits for the check to finish.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from tests.peers.fakes.panel_script import DEFAULTS, PanelScript, schema_name
from tests.peers.servers.loopback import running_in_thread
from tests.peers.servers.openai_peer import ChatReply, FakeOpenAI

from bots.app.runtime import build_service
from bots.app.settings import Settings
from zofia_engine.encoder import SentenceTransformerEncoder
from zofia_engine.engine import Engine
from zofia_engine.retrieval.ner import NERBackend
from zofia_engine.retrieval.pipeline import EntityGuidedRetrieval
from zofia_engine.retrieval.wikipedia.offline import OfflineWikipedia

pytest_plugins = ["tests.peers.fixtures.model_fixtures"]

pytestmark = pytest.mark.slow

POST = "The mayor of Springfield banned bicycles from every street, officials said on Monday."

WORKER = textwrap.dedent(
    """
    import asyncio, sys
    from bots.app.runtime import running_service
    from bots.app.settings import load_settings
    from bots.service.records import Message, Requester

    async def main() -> None:
        settings = load_settings(None)
        async with running_service(settings, load=False, purge_every_s=None) as service:
            asker = Requester("cli", "u1", "c1")
            async with service.take(Message(sys.argv[1]), asker) as handle:
                print(handle.check_id, flush=True)
                await handle.result()

    asyncio.run(main())
    """
)


def _status(db: Path) -> list[tuple[str, str]]:
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        return conn.execute("SELECT id, status FROM checks").fetchall()


def test_a_check_killed_mid_debate_is_resumed(
    tmp_path: Path,
    ner: NERBackend,
    encoder: SentenceTransformerEncoder,
    offline_wiki: OfflineWikipedia,
) -> None:
    slow = {"on": True}

    def debater(body: dict[str, Any]) -> ChatReply:
        default = DEFAULTS["debaterreply"]
        content = json.dumps(default(body) if callable(default) else default)
        return ChatReply(content=content, delay_s=60.0 if slow["on"] else 0.0)

    db = tmp_path / "zofia.db"
    script = PanelScript(debaterreply=debater)
    with running_in_thread(FakeOpenAI(script, api_key="sk-crash")) as peer:
        assert isinstance(peer, FakeOpenAI)
        env = {
            **os.environ,
            "ZOFIA__LLM__BACKEND": "openai",
            "ZOFIA__LLM__OPENAI__BASE_URL": peer.base_url,
            "OPENAI_API_KEY": "sk-crash",
            "ZOFIA__STORAGE__PATH": str(db),
            "ZOFIA__STORAGE__SECRET": "crash-test-secret",
        }
        worker = subprocess.Popen(
            [sys.executable, "-c", WORKER, POST],
            env=env,
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        try:
            assert worker.stdout is not None
            check_id = worker.stdout.readline().strip()
            deadline = time.monotonic() + 120
            while not any(schema_name(b) == "debaterreply" for b in peer.requests):
                assert time.monotonic() < deadline, "the debate never started"
                assert worker.poll() is None, "the worker died on its own"
                time.sleep(0.1)
            assert _status(db) == [(check_id, "running")]
            worker.send_signal(signal.SIGKILL)
            worker.wait(timeout=30)
        finally:
            if worker.poll() is None:
                worker.kill()
                worker.wait(timeout=30)
            if worker.stdout is not None:
                worker.stdout.close()
        assert worker.returncode == -signal.SIGKILL
        assert _status(db) == [(check_id, "running")]  # what the crash left behind

        slow["on"] = False
        settings = Settings.model_validate(
            {
                "llm": {
                    "backend": "openai",
                    "openai": {"base_url": peer.base_url, "api_key": "sk-crash"},
                },
                "storage": {"path": str(db), "secret": "crash-test-secret"},
            }
        )

        async def restart() -> None:
            stage1 = EntityGuidedRetrieval(
                settings.engine, ner=ner, encoder=encoder, wikipedia=offline_wiki
            )
            async with Engine(settings.engine, retrieval=stage1) as engine:
                service = build_service(settings, engine, encoder)
                store = service.store
                assert store.integrity_ok()
                assert await service.start() == [check_id]
                handle = service.handle(check_id)
                assert handle is not None
                outcome = await handle.result()
            # Offline, the scripted "false" has no web page to rest on.
            assert outcome.check_id == check_id and outcome.report.verdict == "unproven"
            row = store.checks.get(check_id)
            assert row is not None and row.status == "done"
            assert store.reports.get(check_id) == outcome.report
            assert store.integrity_ok()

        asyncio.run(restart())
    assert _status(db) == [(check_id, "done")]
