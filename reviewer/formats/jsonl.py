"""Reading JSONL with errors that name the file, the line and the field."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, TypeAdapter, ValidationError

from reviewer.errors import InputError

M = TypeVar("M", bound=BaseModel)
Where = tuple[str, int | None]
"""Where a record came from: file label and line (None for a whole file)."""


def field_path(error: ValidationError) -> tuple[str, str]:
    """The dotted location and message of the first error pydantic reports."""
    first = error.errors(include_url=False)[0]
    loc = ".".join(str(part) for part in first["loc"])
    message = first["msg"]
    if first["type"] == "extra_forbidden":
        message = "unknown field (not part of the format)"
    return loc, message


def iter_lines(path: Path) -> Iterator[tuple[int, str]]:
    """Non-blank lines with their 1-based numbers; a file that is not UTF-8 is an InputError."""
    try:
        with path.open("r", encoding="utf-8") as handle:
            for number, line in enumerate(handle, 1):
                if line.strip():
                    yield number, line
    except UnicodeDecodeError as exc:
        raise InputError(path, f"not UTF-8 text ({exc.reason} at byte {exc.start})") from exc
    except OSError as exc:
        raise InputError(path, f"cannot read: {exc.strerror or exc}") from exc


def parse_object(path: Path, number: int, line: str) -> dict[str, Any]:
    try:
        value = json.loads(line)
    except json.JSONDecodeError as exc:
        message = f"invalid JSON: {exc.msg} (column {exc.colno})"
        raise InputError(path, message, line=number) from exc
    if not isinstance(value, dict):
        raise InputError(path, f"expected a JSON object, found {type(value).__name__}", line=number)
    return value


def validate(model: type[M], data: Any, path: Path, number: int | None) -> M:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        loc, message = field_path(exc)
        raise InputError(path, message, line=number, field=loc or None) from exc


def validate_json_line(model: type[M], path: Path, number: int, line: str) -> M:
    """Parse and validate in one pass (pydantic's JSON parser); errors as for ``validate``."""
    try:
        return model.model_validate_json(line)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        if first["type"] == "json_invalid":
            parse_object(path, number, line)  # re-parse for the standard library's message
        if first["type"] == "model_type":
            raise InputError(path, "expected a JSON object", line=number) from exc
        loc, message = field_path(exc)
        raise InputError(path, message, line=number, field=loc or None) from exc


def read_jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    for number, line in iter_lines(path):
        yield number, parse_object(path, number, line)


_ADAPTERS: dict[type[BaseModel], TypeAdapter[list[Any]]] = {}


def validate_lines(model: type[M], path: Path, lines: list[tuple[int, str]]) -> list[M]:
    """Validate a chunk of lines in one pydantic call, falling back per line to locate errors.

    One call for a few thousand lines costs about what ``json.loads`` alone would per line, so
    large bundles validate at close to parse speed; only a failing chunk pays for the slow path
    that names the exact line and field.
    """
    adapter = _ADAPTERS.get(model)
    if adapter is None:
        adapter = _ADAPTERS[model] = TypeAdapter(list[model])  # type: ignore[valid-type]
    try:
        records: list[M] = adapter.validate_json("[" + ",".join(text for _, text in lines) + "]")
        if len(records) == len(lines):
            return records
    except ValidationError:
        pass
    for number, text in lines:
        validate_json_line(model, path, number, text)
    raise InputError(path, "a line holds more than one JSON value", line=lines[0][0])


def iter_models(model: type[M], path: Path, chunk: int = 2000) -> Iterator[tuple[int, M]]:
    """(line number, validated record) for every non-blank line, validated in chunks."""
    pending: list[tuple[int, str]] = []
    for number, line in iter_lines(path):
        pending.append((number, line))
        if len(pending) >= chunk:
            yield from zip((n for n, _ in pending), validate_lines(model, path, pending),
                           strict=True)
            pending = []
    if pending:
        yield from zip((n for n, _ in pending), validate_lines(model, path, pending), strict=True)
