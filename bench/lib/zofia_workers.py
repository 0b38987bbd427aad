"""Not a bench script: helpers of ``bench/scale.py`` and ``bench/abuse.py``
(``bench/lib/`` holds such): the ``zofia worker`` processes, each with its log, started,
waited for until ready, and stopped (SIGTERM, a bounded wait, then SIGKILL)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

ZOFIA = [sys.executable, "-c", "from bots.cli import main; main()"]


class Workers:
    """``zofia worker`` processes with their logs; stopped (bounded) by :meth:`stop`."""

    def __init__(self, env: dict[str, str], folder: Path) -> None:
        self.env, self.folder = env, folder
        self.procs: list[subprocess.Popen[str]] = []

    def start(self, count: int, concurrency: int) -> None:
        for i in range(count):
            log = (self.folder / f"worker-{i}.log").open("w")
            self.procs.append(
                subprocess.Popen(
                    [*ZOFIA, "worker", "--concurrency", str(concurrency)],
                    env=self.env,
                    cwd=self.folder,
                    stdout=log,
                    stderr=log,
                    text=True,
                )
            )
            log.close()  # the child holds its own descriptor

    def log(self, i: int) -> str:
        return (self.folder / f"worker-{i}.log").read_text(errors="replace")

    async def ready(self, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        for i, proc in enumerate(self.procs):
            while "worker ready" not in self.log(i):
                if proc.poll() is not None:
                    raise RuntimeError(f"worker {i} exited:\n{self.log(i)[-3000:]}")
                if time.monotonic() > deadline:
                    raise RuntimeError(f"worker {i} not ready in {timeout_s} s")
                await asyncio.sleep(0.2)

    def stop(self, wait_s: float = 30.0) -> None:
        for proc in self.procs:
            with contextlib.suppress(ProcessLookupError):
                proc.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + wait_s
        for proc in self.procs:
            try:
                proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)
        self.procs.clear()


def worker_env(
    url: str, secret: str, llm_url: str, api_key: str, **settings: str
) -> dict[str, str]:
    """What a ``zofia worker`` reads: the store at ``url`` and its secret, the fake LLM
    at ``llm_url``, and further settings as ``ZOFIA__…`` environment names."""
    return {
        **os.environ,
        "ZOFIA__STORAGE__URL": url,
        "ZOFIA__STORAGE__SECRET": secret,
        "ZOFIA__LLM__BACKEND": "openai",
        "ZOFIA__LLM__OPENAI__BASE_URL": llm_url,
        "OPENAI_API_KEY": api_key,
        **settings,
    }
