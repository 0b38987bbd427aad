"""llama-cpp-python's own OpenAI-compatible server, started for real on 127.0.0.1.

Not a fake: ``python -m llama_cpp.server`` (the package's ``server`` extra) serving
SmolLM2-135M, so the tests see exactly what that server accepts and answers. The
start-up wait and the shutdown are bounded.
"""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

__all__ = ["MODEL_ALIAS", "llama_server"]

MODEL_ALIAS = "smollm2-135m"
START_TIMEOUT_S = 120.0


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def llama_server(model: Path, log: Path, *, n_ctx: int = 4096) -> Iterator[str]:
    """Serve ``model`` and yield the API root (``http://127.0.0.1:<port>/v1``).

    Raises:
        RuntimeError: the server did not answer ``GET /v1/models`` in time (its log says why).
    """
    port = _free_port()
    command = [
        sys.executable,
        "-m",
        "llama_cpp.server",
        "--model",
        str(model),
        "--model_alias",
        MODEL_ALIAS,
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--n_ctx",
        str(n_ctx),
        "--n_threads",
        "2",
        "--verbose",
        "false",
    ]
    with log.open("wb") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
        root = f"http://127.0.0.1:{port}/v1"
        try:
            deadline = time.monotonic() + START_TIMEOUT_S
            while True:
                if process.poll() is not None:
                    raise RuntimeError(
                        f"the server exited: {log.read_text(errors='replace')[-2000:]}"
                    )
                try:
                    with urllib.request.urlopen(f"{root}/models", timeout=2) as answer:
                        if answer.status == 200:
                            break
                except (urllib.error.URLError, OSError):
                    pass
                if time.monotonic() > deadline:
                    raise RuntimeError(f"no answer within {START_TIMEOUT_S:.0f} s")
                time.sleep(0.25)
            yield root
        finally:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=10)
