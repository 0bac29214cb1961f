"""Errors that point a person at the exact place in an input file that is wrong."""

from __future__ import annotations

from pathlib import Path
from typing import Any


class InputError(Exception):
    """Bad input: names the file, the line (1-based, when the format has lines) and the field.

    Importers raise it before anything is written, so the message is the whole story: the
    database is untouched and the user fixes the named place and runs the import again.
    """

    def __init__(
        self,
        file: str | Path,
        message: str,
        *,
        line: int | None = None,
        field: str | None = None,
    ) -> None:
        self.file = str(file)
        self.line = line
        self.field = field
        self.message = message
        super().__init__(str(self))

    def __reduce__(self) -> tuple[Any, ...]:
        # Pickled whole (a pipelined import's reading child sends it to the writing process):
        # the default would call __init__ with the formatted message alone.
        return (_input_error, (type(self), self.file, self.message, self.line, self.field))

    def __str__(self) -> str:
        where = self.file
        if self.line is not None:
            where += f":{self.line}"
        if self.field:
            where += f": field '{self.field}'"
        return f"{where}: {self.message}"


def _input_error(
    kind: type[InputError], file: str, message: str, line: int | None, field: str | None
) -> InputError:
    return kind(file, message, line=line, field=field)


class ConfigError(Exception):
    """A configuration file (keymap, options) that cannot be used as written."""
