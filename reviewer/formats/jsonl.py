"""Reading JSON and JSONL with errors that name the file, the line and the field.

Every importer reads its JSON through :func:`loads` (or the helpers built on it), which refuses
what JSON parsers let through but no benchmark file can mean and the database cannot hold:
``NaN``, ``Infinity`` and numbers beyond a double (``1e400``), which would otherwise arrive as
floats that SQLite stores as NULL or that fail later in a score; integers beyond 64 bits; strings
with a lone surrogate (``"\\ud800"``), which are not text and cannot be written as UTF-8; and
nesting so deep that the parser runs out of stack (100,000 levels of ``[``). Each is an
:class:`InputError` naming the file, line and, where it can be found, the field.

Lines validated by pydantic's own JSON parser (the native format) get the same checks: a quick
scan of the raw line for the few spellings that can carry such a value, and :func:`loads` on
the rare line that has one.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, TextIO, TypeVar

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


MAX_LINE_CHARS = 64_000_000
"""The longest line (one record) a reader takes, unless ``$GAVEL_MAX_LINE_CHARS`` says
otherwise: a report of 40,000 words is about 300,000 characters, and a line of hundreds of
millions would be read, parsed and validated whole (gigabytes of memory) before anything could
say it is wrong."""


def max_line_chars() -> int:
    try:
        return max(1, int(os.environ.get("GAVEL_MAX_LINE_CHARS") or MAX_LINE_CHARS))
    except ValueError:
        return MAX_LINE_CHARS


def numbered_lines(handle: TextIO, path: Path) -> Iterator[tuple[int, str]]:
    """Every line with its 1-based number, none longer than :func:`max_line_chars`: reading
    stops at the limit, so an oversized line costs no more memory than the limit."""
    limit = max_line_chars()
    number = 0
    while line := handle.readline(limit + 1):
        number += 1
        if len(line) > limit and not line.endswith("\n"):
            raise InputError(
                path,
                f"a line longer than {limit:,} characters: one record that large is refused "
                "(a report of 40,000 words is about 300,000); if the file is right, raise the "
                "limit with $GAVEL_MAX_LINE_CHARS",
                line=number,
            )
        yield number, line


def iter_lines(path: Path) -> Iterator[tuple[int, str]]:
    """Non-blank lines with their 1-based numbers; a file that is not UTF-8 is an InputError."""
    try:
        with path.open("r", encoding="utf-8") as handle:
            for number, line in numbered_lines(handle, path):
                if line and not line.isspace():  # (not strip(): that copies every line)
                    yield number, line
    except UnicodeDecodeError as exc:
        raise InputError(path, f"not UTF-8 text ({exc.reason} at byte {exc.start})") from exc
    except OSError as exc:
        raise InputError(path, f"cannot read: {exc.strerror or exc}") from exc


_INT64 = 2**63 - 1


class NotJSON(InputError):
    """Text that is not JSON at all (as opposed to JSON holding a value that is refused)."""


class _Refused(ValueError):
    """A value :func:`loads` refuses (its message says which and why)."""


def _constant(name: str) -> float:
    raise _Refused(
        f"{name} is not a number a benchmark file can hold (NaN and Infinity are refused)"
    )


def _float(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise _Refused(f"{text} is beyond the range of a number (it would be infinite)")
    return value


def _int(text: str) -> int:
    if len(text.lstrip("-")) > 19 or abs(value := int(text)) > _INT64:
        raise _Refused(
            f"{text[:30]}{'…' if len(text) > 30 else ''} is beyond the range of a 64-bit integer"
        )
    return value


def _surrogate_path(value: Any, path: tuple[str, ...] = ()) -> tuple[str, ...] | None:
    """Where the first string (or key) holding a lone surrogate is, if any."""
    if isinstance(value, str):
        return path if any("\ud800" <= c <= "\udfff" for c in value) else None
    if isinstance(value, dict):
        return _first_surrogate_in(value.items(), path)
    if isinstance(value, list):
        return _first_surrogate_in(enumerate(value), path)
    return None


def _first_surrogate_in(
    items: Iterable[tuple[Any, Any]], path: tuple[str, ...]
) -> tuple[str, ...] | None:
    """In an object's keys and values, or a list's items (keyed by their index), in order."""
    for key, item in items:
        step = (*path, str(key))
        found = _surrogate_path(key, step) or _surrogate_path(item, step)
        if found is not None:
            return found
    return None


def loads(text: str, file: str | Path, line: int | None = None, field: str | None = None) -> Any:
    """Parse JSON text; anything JSON allows but an input must not hold is an InputError
    (:class:`NotJSON` when the text is not JSON at all). ``field`` names where the text came
    from when it is itself a field of a record (JSON inside a JSON string)."""
    try:
        value = json.loads(text, parse_constant=_constant, parse_float=_float, parse_int=_int)
    except json.JSONDecodeError as exc:
        where = f"line {exc.lineno}, column {exc.colno}" if line is None else f"column {exc.colno}"
        raise NotJSON(file, f"invalid JSON: {exc.msg} ({where})", line=line, field=field) from None
    except _Refused as exc:
        raise InputError(file, str(exc), line=line, field=field) from None
    except RecursionError:  # the parser recurses once per level of nesting
        raise InputError(
            file,
            "arrays or objects nested too deep to read (hundreds of "
            "levels; no benchmark file needs more than a few)",
            line=line,
            field=field,
        ) from None
    except ValueError as exc:  # an integer too long to convert, and the like
        raise InputError(file, f"invalid JSON: {exc}", line=line, field=field) from None
    if "\\u" in text and _SURROGATE.search(text):
        _refuse_surrogates(value, file, line, field)
    return value


def _refuse_surrogates(value: Any, file: str | Path, line: int | None, field: str | None) -> None:
    """A lone surrogate escaped in the text is no text: named by its place in the value."""
    found = _surrogate_path(value)
    if found is not None:
        raise InputError(
            file,
            "a string with a lone surrogate (an escape such as "
            "\\ud800 that is not half of a pair): not text",
            line=line,
            field=".".join((*([field] if field else []), *found)) or None,
        )


_BIG_NUMBER = re.compile(r"[0-9](?:[0-9]{18}|(?:\.[0-9]+)?[eE][+-]?[0-9]{3})")
"""A JSON number that could be refused: 19 digits in a row (an integer beyond 64 bits, or a
mantissa too long to be finite) or an exponent of three digits. A JSON number's digits are
ASCII and its exponent follows a digit, which keeps the scan off the letters of prose; one
pattern, not two (a digit class of every script's digits, three times slower)."""
_SURROGATE = re.compile(r"\\u[dD][89a-fA-F]")


def _suspect(line: str) -> bool:
    """Whether the raw line may spell something :func:`loads` refuses (NaN, Infinity, a number
    beyond range, a surrogate escape); a line without one needs no check. Scanning every
    character of a large import is a cost of its own: plain substring tests first, then one
    scan for numbers (false alarms only cost the full check)."""
    return (
        "NaN" in line
        or "Infinity" in line
        or ("\\u" in line and _SURROGATE.search(line) is not None)
        or _BIG_NUMBER.search(line) is not None
    )


_DIGITS_AS_ZERO = bytes.maketrans(b"123456789E", b"000000000e")
_SURROGATE_READ = re.compile(rb"\\u[dD][0a-fA-F]")
""":data:`_SURROGATE` as :func:`_may_refuse` reads the text (8 and 9 as 0)."""


def _may_refuse(text: str) -> bool:
    """Whether any line of ``text`` may hold what :func:`_suspect` looks for: a quick test of
    a whole chunk that never misses one (a false alarm only costs the line by line check).

    Read with every digit as 0, E as e and signs dropped, each of :func:`_suspect`'s patterns
    contains a plain substring — 19 zeros, ``e000``, ``NaN``, ``Infinity``, ``\\u`` — and a
    substring is found by skipping through the text rather than trying a pattern at each
    digit, which is most of what scanning every character of a large import cost."""
    data = text.encode("utf-8", "surrogatepass").translate(_DIGITS_AS_ZERO, b"+-")
    return (
        b"0000000000000000000" in data
        or b"e000" in data
        or b"NaN" in data
        or b"Infinity" in data
        or (b"\\u" in data and _SURROGATE_READ.search(data) is not None)
    )


def check_line(path: Path, number: int, line: str) -> None:
    """For lines parsed elsewhere (pydantic): refuse what :func:`loads` refuses."""
    if _suspect(line):
        loads(line, path, number)


def read_json(path: Path) -> Any:
    """A whole JSON file, checked like :func:`loads`; unreadable or non-UTF-8 is an error."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(path, f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except OSError as exc:
        raise InputError(path, f"cannot read: {exc.strerror or exc}") from None
    return loads(text, path)


def parse_object(path: Path, number: int, line: str) -> dict[str, Any]:
    value = loads(line, path, number)
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


_ADAPTERS: dict[object, TypeAdapter[list[Any]]] = {}


def _adapter(shape: object) -> TypeAdapter[list[Any]]:
    adapter = _ADAPTERS.get(shape)
    if adapter is None:
        adapter = _ADAPTERS[shape] = TypeAdapter(list[shape])  # type: ignore[valid-type]
    return adapter


def validate_lines(
    model: type[M],
    path: Path,
    numbers: list[int],
    lines: list[str],
    read_as: object = None,
) -> list[Any]:
    """Validate a chunk of lines (and their numbers) in one pydantic call, falling back per
    line to locate errors.

    One call for a few thousand lines costs about what ``json.loads`` alone would per line, so
    large bundles validate at close to parse speed; only a failing chunk pays for the slow path
    that names the exact line and field. ``read_as``: a shape that validates exactly as
    ``model`` does but builds less (:class:`reviewer.models.JudgmentRecord`); the errors are
    still ``model``'s.
    """
    text = "[" + ",".join(lines) + "]"
    # One scan of the chunk: a line can hold what loads() refuses only if the chunk does
    # (no pattern spans a line break, and each line ends with one).
    if _may_refuse(text):
        for number, line in zip(numbers, lines, strict=True):
            check_line(path, number, line)
    try:
        records: list[Any] = _adapter(model if read_as is None else read_as).validate_json(text)
        if len(records) == len(lines):
            return records
    except ValidationError:
        pass
    for number, line in zip(numbers, lines, strict=True):
        validate_json_line(model, path, number, line)
    raise InputError(path, "a line holds more than one JSON value", line=numbers[0])


CHUNK_CHARS = 2_000_000
"""Text validated at once: a chunk ends at ``chunk`` lines or this many characters, whichever
comes first, so memory stays flat when lines are long (reports of 40,000 words, whose text
and models two thousand at a time would not)."""


def line_chunks(path: Path, chunk: int = 2000) -> Iterator[tuple[list[int], list[str]]]:
    """The non-blank lines of ``path`` (as :func:`iter_lines` reads them) and their numbers,
    in chunks of at most ``chunk`` lines and about :data:`CHUNK_CHARS` characters."""
    numbers: list[int] = []
    lines: list[str] = []
    size = 0
    try:
        with path.open("r", encoding="utf-8") as handle:
            for number, line in numbered_lines(handle, path):
                if not line or line.isspace():
                    continue
                numbers.append(number)
                lines.append(line)
                size += len(line)
                if len(lines) >= chunk or size >= CHUNK_CHARS:
                    yield numbers, lines
                    numbers, lines, size = [], [], 0
    except UnicodeDecodeError as exc:
        raise InputError(path, f"not UTF-8 text ({exc.reason} at byte {exc.start})") from exc
    except OSError as exc:
        raise InputError(path, f"cannot read: {exc.strerror or exc}") from exc
    if lines:
        yield numbers, lines


def model_chunks(
    model: type[M], path: Path, read_as: object = None, chunk: int = 2000
) -> Iterator[tuple[list[int], list[Any]]]:
    """(line numbers, validated records) of every non-blank line, a chunk at a time (see
    :func:`line_chunks`; ``read_as`` as for :func:`validate_lines`)."""
    for numbers, lines in line_chunks(path, chunk):
        yield numbers, validate_lines(model, path, numbers, lines, read_as)


def iter_models(model: type[M], path: Path, chunk: int = 2000) -> Iterator[tuple[int, M]]:
    """(line number, validated record) for every non-blank line (see :func:`model_chunks`)."""
    for numbers, records in model_chunks(model, path, chunk=chunk):
        yield from zip(numbers, records, strict=True)
