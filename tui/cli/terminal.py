"""Standard output guarded on a terminal: see :func:`guard_terminal`.

Kept apart from :mod:`tui.cli.output` (and light: ``re`` and a small domain module) because
every command installs it before anything else runs, ``gavel --help`` included.
"""

from __future__ import annotations

import io
import re
import sys
from collections.abc import Callable
from typing import TextIO

from reviewer.textsafety import is_safe, printable

__all__ = ["CleanStream", "Guard", "guard_terminal", "to_terminal", "unguard_terminal"]


def to_terminal(stream: TextIO) -> bool:
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty()) if isatty is not None else False
    except ValueError:  # a closed stream
        return False


class CleanStream(io.TextIOBase):
    """A text stream that passes everything written through ``clean`` on its way to a
    terminal (the exports and the log, written to stdout)."""

    def __init__(self, target: TextIO, clean: Callable[[str], str]) -> None:
        super().__init__()
        self._target = target
        self._clean = clean

    def write(self, text: str) -> int:
        self._target.write(self._clean(text))
        return len(text)

    def flush(self) -> None:
        self._target.flush()

    def isatty(self) -> bool:
        return True

    def writable(self) -> bool:
        return True


_SGR = re.compile(r"(\x1b\[[0-9;:]*m)")


def _guarded(text: str) -> str:
    """Everything unsafe shown visibly, except complete SGR (colour) sequences, which are
    harmless and are how Rich draws tables."""
    if is_safe(text):
        return text
    parts = _SGR.split(text)
    return "".join(part if i % 2 else printable(part) for i, part in enumerate(parts))


class Guard(CleanStream):
    """sys.stdout while a command runs on a terminal: see :func:`guard_terminal`."""

    def __init__(self, target: TextIO) -> None:
        super().__init__(target, _guarded)
        self.inner = target

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return str(getattr(self.inner, "encoding", "utf-8"))

    def fileno(self) -> int:
        return self.inner.fileno()


def guard_terminal() -> None:
    """When stdout is a terminal, route it through a filter that shows every control,
    bidirectional and zero-width character visibly (Rich's colour sequences pass): the net
    under whatever a command prints without going through :func:`emit`."""
    if to_terminal(sys.stdout) and not isinstance(sys.stdout, Guard):
        sys.stdout = Guard(sys.stdout)


def unguard_terminal() -> None:
    """The real stdout again (the workstation draws the screen with control sequences)."""
    if isinstance(sys.stdout, Guard):
        sys.stdout = sys.stdout.inner
