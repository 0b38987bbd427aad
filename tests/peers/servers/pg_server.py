"""A real, throwaway PostgreSQL server for the tests: ``initdb`` into a temporary directory.

Not a fake: Debian's own ``postgres`` (``tests/system-packages.sh`` installs it),
listening on 127.0.0.1 on a free port, with trust authentication for the user ``zofia``
and durability switched off (fsync, synchronous_commit, full_page_writes) for speed.
Every wait is bounded; a failed start raises with the tail of the server's log.

``initdb`` and ``postgres`` refuse to run as root, so as root (Debian containers) the
binaries run as ``nobody`` (``subprocess``'s ``user``/``group``, without the supplementary
groups) and the temporary directory is chowned to it.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from typing import TypedDict

import psycopg
from psycopg import sql

__all__ = ["PostgresServer", "find_bindir"]

USER = "zofia"
TEMPLATE = "zofia_template"
START_TIMEOUT_S = 60
COMMAND_TIMEOUT_S = 120
UNPRIVILEGED_USER = "nobody"
SETTINGS = {
    "listen_addresses": "'127.0.0.1'",
    "fsync": "off",
    "synchronous_commit": "off",
    "full_page_writes": "off",
    "max_connections": "200",
}


def find_bindir() -> Path:
    """The directory of ``initdb``/``pg_ctl``/``postgres``.

    ``ZOFIA_PG_BIN``, else ``pg_config --bindir``, else the newest
    ``/usr/lib/postgresql/*/bin``; a candidate counts only if it holds ``pg_ctl`` and
    ``initdb`` (Debian's ``pg_config`` comes with libpq-dev, without the server).
    """
    explicit = os.environ.get("ZOFIA_PG_BIN")
    if explicit:
        path = Path(explicit)
        if not _has_server(path):
            raise RuntimeError(f"ZOFIA_PG_BIN={explicit} has no initdb and pg_ctl")
        return path
    candidates: list[Path] = []
    if shutil.which("pg_config"):
        try:
            answer = subprocess.run(
                ["pg_config", "--bindir"], capture_output=True, text=True, timeout=10
            )
            if answer.returncode == 0 and answer.stdout.strip():
                candidates.append(Path(answer.stdout.strip()))
        except subprocess.TimeoutExpired:
            pass
    versions = glob.glob("/usr/lib/postgresql/*/bin")
    candidates += [Path(p) for p in sorted(versions, key=_version_key, reverse=True)]
    for path in candidates:
        if _has_server(path):
            return path
    raise RuntimeError(
        "no PostgreSQL server binaries (set ZOFIA_PG_BIN, or run tests/system-packages.sh)"
    )


def _has_server(path: Path) -> bool:
    return all(os.access(path / name, os.X_OK) for name in ("initdb", "pg_ctl", "postgres"))


def _version_key(path: str) -> tuple[int, ...]:
    version = Path(path).parent.name
    return tuple(int(part) for part in version.split(".") if part.isdigit())


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class _RunAs(TypedDict, total=False):
    """The user a server binary runs as (``subprocess.run``'s keywords)."""

    user: int
    group: int
    extra_groups: list[int]


class PostgresServer:
    """One PostgreSQL cluster in a temporary directory; ``start()`` it, ``stop()`` it.

    Args:
        port: the TCP port on 127.0.0.1 (default: a free one).
        bindir: where the binaries are (default: :func:`find_bindir`).
    """

    def __init__(self, port: int | None = None, bindir: Path | None = None) -> None:
        self.bindir = bindir or find_bindir()
        self.port = port or _free_port()
        self.root: Path | None = None
        self._run_as: pwd.struct_passwd | None = None
        if os.geteuid() == 0:
            self._run_as = pwd.getpwnam(UNPRIVILEGED_USER)

    @property
    def data_dir(self) -> Path:
        assert self.root is not None, "the server was not started"
        return self.root / "data"

    @property
    def log_path(self) -> Path:
        assert self.root is not None, "the server was not started"
        return self.root / "postgres.log"

    @property
    def url(self) -> str:
        """The URL of the ``postgres`` database; :meth:`url_for` names another."""
        return self.url_for("postgres")

    def url_for(self, dbname: str) -> str:
        return f"postgresql://{USER}@127.0.0.1:{self.port}/{dbname}"

    def start(self) -> PostgresServer:
        """``initdb`` and ``pg_ctl start -w``; returns only once it accepts connections.

        Raises:
            RuntimeError: initdb or the start failed or timed out (with the log's tail).
        """
        if self.root is not None:
            raise RuntimeError("already started")
        self.root = Path(tempfile.mkdtemp(prefix="zofia-pg-"))
        try:
            socket_dir = self.root / "run"
            socket_dir.mkdir()
            if self._run_as is not None:
                for path in (self.root, socket_dir):
                    os.chown(path, self._run_as.pw_uid, self._run_as.pw_gid)
            self._run(
                "initdb",
                "-D",
                str(self.data_dir),
                "-U",
                USER,
                "--auth=trust",
                "-E",
                "UTF8",
                "--no-locale",
                "--no-sync",
                "--no-instructions",
            )
            settings = {
                **SETTINGS,
                "port": str(self.port),
                "unix_socket_directories": f"'{socket_dir}'",
            }
            with (self.data_dir / "postgresql.conf").open("a") as conf:
                conf.write("\n# tests/peers/servers/pg_server.py\n")
                conf.writelines(f"{key} = {value}\n" for key, value in settings.items())
            self._pg_ctl("start", "-l", str(self.log_path))
            self._wait_ready()
            with psycopg.connect(self.url, autocommit=True) as conn:
                conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(TEMPLATE)))
        except BaseException:
            self.stop()
            raise
        return self

    def create_database(self, name: str) -> str:
        """A fresh, empty database ``name`` (a copy of an empty template); returns its URL."""
        with psycopg.connect(self.url, autocommit=True, connect_timeout=10) as conn:
            conn.execute(
                sql.SQL("CREATE DATABASE {} TEMPLATE {} STRATEGY file_copy").format(
                    sql.Identifier(name), sql.Identifier(TEMPLATE)
                )
            )
        return self.url_for(name)

    def drop_database(self, name: str) -> None:
        """Drop ``name``, closing whatever connections are still open to it."""
        with psycopg.connect(self.url, autocommit=True, connect_timeout=10) as conn:
            conn.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )

    def restart(self) -> None:
        """``pg_ctl restart -m fast`` on the same port; returns once it accepts connections."""
        self._pg_ctl("restart", "-m", "fast", "-l", str(self.log_path))
        self._wait_ready()

    def stop(self) -> None:
        """``pg_ctl stop -m immediate`` (SIGKILL if that fails), then delete the directory.

        Safe to call twice, and after a failed start.
        """
        if self.root is None:
            return
        try:
            if (self.data_dir / "postmaster.pid").exists():
                try:
                    self._pg_ctl("stop", "-m", "immediate")
                except RuntimeError:
                    self._kill_postmaster()
        finally:
            shutil.rmtree(self.root, ignore_errors=True)
            self.root = None

    def __enter__(self) -> PostgresServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def log_tail(self, chars: int = 3000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-chars:]
        except (OSError, AssertionError):
            return "(no server log)"

    def _pg_ctl(self, action: str, *args: str) -> None:
        self._run(
            "pg_ctl", action, "-D", str(self.data_dir), "-w", "-t", str(START_TIMEOUT_S), *args
        )

    def _run(self, program: str, *args: str) -> None:
        """Run a server binary (as the unprivileged user when we are root), bounded."""
        label = program if args[0].startswith("-") else f"{program} {args[0]}"
        env = {key: value for key, value in os.environ.items() if not key.startswith("PG")}
        ids: _RunAs = {}
        if self._run_as is not None:
            ids = {"user": self._run_as.pw_uid, "group": self._run_as.pw_gid, "extra_groups": []}
        try:
            answer = subprocess.run(
                [str(self.bindir / program), *args],
                capture_output=True,
                text=True,
                env=env,
                cwd=self.root,
                timeout=COMMAND_TIMEOUT_S,
                check=False,
                **ids,
            )
        except subprocess.TimeoutExpired as exc:
            raise RuntimeError(
                f"{label} took over {COMMAND_TIMEOUT_S} s; server log:\n{self.log_tail()}"
            ) from exc
        if answer.returncode != 0:
            raise RuntimeError(
                f"{label} failed ({answer.returncode}): "
                f"{(answer.stdout + answer.stderr)[-2000:]}\nserver log:\n{self.log_tail()}"
            )

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            try:
                with psycopg.connect(self.url, connect_timeout=2) as conn:
                    conn.execute("SELECT 1")
                return
            except psycopg.OperationalError as exc:
                if time.monotonic() > deadline:
                    raise RuntimeError(
                        f"no connection within {START_TIMEOUT_S} s ({exc}); "
                        f"server log:\n{self.log_tail()}"
                    ) from exc
                time.sleep(0.05)

    def _kill_postmaster(self) -> None:
        try:
            pid = int((self.data_dir / "postmaster.pid").read_text().split()[0])
            os.kill(pid, signal.SIGKILL)
        except (OSError, ValueError, IndexError):
            pass
