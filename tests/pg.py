"""A throwaway PostgreSQL server for the hub tests: initdb in a temp folder, pg_ctl on a free
loopback port, trust authentication, no Unix socket.

Where the server binaries come from, in order: ``$GAVEL_PG_BINDIR``; ``initdb`` on PATH;
Debian's ``/usr/lib/postgresql/<version>/bin`` (the ``postgresql`` package, which ``.ci/run``
installs when it is missing); ``pg_config --bindir``. PostgreSQL refuses to run as root, so a
root test session runs the server as the ``postgres`` system user (Debian's package makes it)
through ``runuser``. :func:`find_server` says why when none of this works, and the tests skip
with that reason.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

SERVER_USER = "postgres"


def _bindirs() -> list[Path]:
    found: list[Path] = []
    explicit = os.environ.get("GAVEL_PG_BINDIR")
    if explicit:
        found.append(Path(explicit))
    initdb = shutil.which("initdb")
    if initdb:
        found.append(Path(initdb).resolve().parent)
    debian = sorted(
        Path("/usr/lib/postgresql").glob("*/bin"),
        key=lambda p: int(p.parent.name) if p.parent.name.isdigit() else 0,
        reverse=True,
    )
    found.extend(debian)
    pg_config = shutil.which("pg_config")
    if pg_config:
        out = subprocess.run(
            [pg_config, "--bindir"], capture_output=True, text=True, check=False
        ).stdout.strip()
        if out:
            found.append(Path(out))
    return [d for d in found if (d / "initdb").is_file() and (d / "pg_ctl").is_file()]


def _runner() -> list[str] | str:
    """The command prefix that runs the server as a non-root user, or why there is none."""
    if os.geteuid() != 0:
        return []
    runuser = shutil.which("runuser")
    try:
        import pwd

        pwd.getpwnam(SERVER_USER)
    except KeyError:
        return f"running as root and there is no {SERVER_USER!r} user to run PostgreSQL as"
    if runuser is None:
        return "running as root and runuser is not available to drop privileges"
    return [runuser, "-u", SERVER_USER, "--"]


def find_server() -> tuple[Path, list[str]] | str:
    """(bin folder, command prefix) of a usable PostgreSQL server, or why there is none."""
    dirs = _bindirs()
    if not dirs:
        return (
            "no PostgreSQL server binaries (initdb, pg_ctl) found: install Debian's "
            "`postgresql` package (.ci/run does) or set GAVEL_PG_BINDIR"
        )
    prefix = _runner()
    if isinstance(prefix, str):
        return prefix
    return dirs[0], prefix


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class PgServer:
    bindir: Path
    prefix: list[str]
    datadir: Path
    port: int
    user: str = "gavel"

    def url(self, dbname: str = "postgres") -> str:
        return f"postgresql://{self.user}@127.0.0.1:{self.port}/{dbname}"

    def _run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*self.prefix, *args], capture_output=True, text=True, check=check, timeout=120
        )

    def start(self) -> None:
        log = self.datadir.parent / "server.log"
        self._run(
            str(self.bindir / "pg_ctl"),
            "-D",
            str(self.datadir),
            "-l",
            str(log),
            "-w",
            "-t",
            "60",
            "-o",
            f"-p {self.port} -c listen_addresses=127.0.0.1 "
            "-c unix_socket_directories='' -c fsync=off -c full_page_writes=off "
            "-c max_connections=60",
            "start",
        )
        self.wait_ready()

    def wait_ready(self, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while True:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    return
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    def stop(self, mode: str = "fast") -> None:
        self._run(
            str(self.bindir / "pg_ctl"),
            "-D",
            str(self.datadir),
            "-m",
            mode,
            "-w",
            "stop",
            check=False,
        )

    def create_database(self, name: str) -> str:
        import psycopg

        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')  # a test's own name, no quoting needed
        return self.url(name)

    def destroy(self) -> None:
        self.stop("immediate")
        shutil.rmtree(self.datadir.parent, ignore_errors=True)


def start_server() -> PgServer | str:
    """A running server in a fresh temp folder, or why there cannot be one."""
    found = find_server()
    if isinstance(found, str):
        return found
    bindir, prefix = found
    root = Path(tempfile.mkdtemp(prefix="gavel-pg-"))
    datadir = root / "data"
    if prefix:
        # The server's user must own its folder (pytest's own temp folders are root-only).
        shutil.chown(root, user=SERVER_USER)
        root.chmod(0o700)
    server = PgServer(bindir, prefix, datadir, free_port())
    try:
        server._run(
            str(bindir / "initdb"),
            "-D",
            str(datadir),
            "-U",
            server.user,
            "--auth=trust",
            "--no-sync",
            "-E",
            "UTF8",
            "--locale=C",
        )
        server.start()
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired, OSError) as exc:
        detail = getattr(exc, "stderr", "") or str(exc)
        shutil.rmtree(root, ignore_errors=True)
        return f"PostgreSQL could not start ({bindir}): {detail.strip()[:300]}"
    _watch(server)
    return server


WATCHDOG = """
import os, shutil, subprocess, sys, time
pid, prefix, pg_ctl, data, root = int(sys.argv[1]), sys.argv[2].split(), *sys.argv[3:6]
while True:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        break
    time.sleep(1)
if os.path.isdir(data):
    subprocess.run([*prefix, pg_ctl, "-D", data, "-m", "immediate", "stop"],
                   capture_output=True, timeout=60)
    shutil.rmtree(root, ignore_errors=True)
"""


def _watch(server: PgServer) -> None:
    """A test session killed before its teardown (ctrl+c twice, a CI timeout, kill -9) must
    not leave a server running: a detached watchdog stops it when this process is gone."""
    import atexit
    import sys

    atexit.register(server.destroy)
    subprocess.Popen(
        [
            sys.executable,
            "-c",
            WATCHDOG,
            str(os.getpid()),
            " ".join(server.prefix),
            str(server.bindir / "pg_ctl"),
            str(server.datadir),
            str(server.datadir.parent),
        ],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
