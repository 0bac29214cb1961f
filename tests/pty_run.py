"""Run a command with its standard output and error on a pseudo-terminal, as a person's shell
would: what it prints there is what a terminal would interpret."""

from __future__ import annotations

import fcntl
import os
import pty
import select
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path


def run_on_terminal(
    args: list[str],
    *,
    cwd: Path,
    env: dict[str, str] | None = None,
    timeout: float = 120.0,
    columns: int = 200,
) -> tuple[int, str]:
    """(exit status, everything written to the terminal) of ``python -m tui.cli ARGS``."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    environment = {**os.environ, "TERM": "xterm-256color", **(env or {})}
    environment.pop("COLUMNS", None)
    environment.pop("NO_COLOR", None)
    process = subprocess.Popen(
        [sys.executable, "-m", "tui.cli", *args],
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=slave,
        stderr=slave,
        env=environment,
        close_fds=True,
    )
    os.close(slave)
    chunks: list[bytes] = []
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.1)
            if ready:
                try:
                    data = os.read(master, 1 << 16)
                except OSError:  # the child closed the terminal
                    break
                if not data:
                    break
                chunks.append(data)
            elif process.poll() is not None:
                break
        else:
            process.kill()
        status = process.wait(timeout=10)
    finally:
        os.close(master)
    return status, b"".join(chunks).decode("utf-8", errors="replace")
