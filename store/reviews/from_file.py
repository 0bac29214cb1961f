"""Decisions from a file (``gavel decide --from FILE``): every line checked first, then all of
them written in one transaction, or none.

A line is a JSON object (a ``.jsonl`` file) or a CSV row under a header (a ``.csv`` file) with
the fields of ``gavel decide``:

``id``
    the judgment id (``gavel verdicts``);
``target``
    instead of ``id`` (or beside it, when they agree): the subject's portable target
    (``s:SUITE/REPORT/KIND/SUBJECT``, as ``gavel plan export`` and ``gavel export`` give it);
    the decision is on the verdict in force on it;
``value``
    a value on the judgment's scale (equal to the judge's value, it is a confirmation);
``rationale``
    why (required, as on the command line);
``reason``
    optional: a judge-error reason code (``gavel reasons``).

A line of ``gavel plan export`` may be used as it is, with ``value`` and ``rationale`` added:
its other fields (``PLAN_FIELDS``) are read and left alone.

Each decision is one signed review event written by :class:`store.reviewlog.events.ReviewLog`, as
``gavel decide`` writes it; the touched reports are rescored once, in the same transaction. A
file with any bad line — unreadable, a missing or unknown field, an unknown judgment, a value
off the judgment's scale — writes nothing, and the error lists every bad line with its file,
line number and field.
"""

from __future__ import annotations

import csv
import json
import sqlite3
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TextIO

from reviewer.actions import REASON_CODES
from reviewer.errors import InputError
from reviewer.registry import get_kind
from reviewer.scales import ScaleError
from store.reviewlog.events import Recorded, ReviewError, ReviewLog, judgment_ref, report_frameworks
from store.scores.cache import update_scores
from store.sqlite.tx import transaction

FIELDS = ("id", "target", "value", "rationale", "reason")
PLAN_FIELDS = frozenset({"position", "stratum", "p", "pi", "weight", "judge", "human", "decided"})
"""Fields of a ``gavel plan export`` line that a decision does not use: allowed, ignored."""
MAX_REPORTED = 20
"""Bad lines listed in full; the rest are counted."""


@dataclass(frozen=True, slots=True)
class Line:
    """One decision as read, with where it came from."""

    line: int
    judgment_id: int
    value: str
    rationale: str
    reason: str | None
    target: str | None = None
    """The subject the line names instead of (or beside) its judgment id; resolved by
    :func:`resolve_targets`."""


class BatchError(InputError):
    """Every bad line of a decisions file (nothing was written)."""

    def __init__(self, file: Path, problems: list[InputError]) -> None:
        self.problems = problems
        shown = "\n".join(f"  {p}" for p in problems[:MAX_REPORTED])
        more = (
            f"\n  … and {len(problems) - MAX_REPORTED} more" if len(problems) > MAX_REPORTED else ""
        )
        count = f"{len(problems)} bad line{'s' if len(problems) != 1 else ''}"
        super().__init__(file, f"{count}:\n{shown}{more}")


def _rows(path: Path) -> Iterator[tuple[int, dict[str, Any] | InputError]]:
    """(line number, fields or the reason the line cannot be read), CSV or JSON lines."""
    try:
        handle = path.open(encoding="utf-8", newline="")
    except OSError as exc:
        raise InputError(path, f"cannot read: {exc.strerror or exc}") from None
    with handle:
        try:
            if path.suffix.lower() == ".csv":
                yield from _csv_rows(path, handle)
            else:
                yield from _json_rows(path, handle)
        except UnicodeDecodeError:
            raise InputError(path, "not UTF-8 text") from None
        except csv.Error as exc:
            raise InputError(path, f"not CSV: {exc}") from None


def _csv_rows(path: Path, handle: TextIO) -> Iterator[tuple[int, dict[str, Any] | InputError]]:
    """Rows under a header naming the fields (an empty cell is a field left out)."""
    reader = csv.DictReader(handle)
    _check_header(path, reader.fieldnames)
    for row in reader:
        if None in row:
            yield (
                reader.line_num,
                InputError(path, "more cells than the header has columns", line=reader.line_num),
            )
            continue
        yield reader.line_num, {k: v for k, v in row.items() if v not in ("", None)}


def _check_header(path: Path, names: Sequence[str] | None) -> None:
    unknown = [f for f in names or () if f not in FIELDS and f not in PLAN_FIELDS]
    if names is None or not {"id", "target"} & set(names) or unknown:
        raise InputError(
            path,
            f"the header must name the columns id (or target), value, "
            f"rationale and optionally reason (got "
            f"{', '.join(names or ()) or 'nothing'})",
            line=1,
        )


def _json_rows(path: Path, handle: TextIO) -> Iterator[tuple[int, dict[str, Any] | InputError]]:
    """One JSON object a line (blank lines skipped)."""
    for number, text in enumerate(handle, 1):
        if not text.strip():
            continue
        try:
            record = json.loads(text)
        except json.JSONDecodeError as exc:
            yield number, InputError(path, f"not JSON: {exc.msg}", line=number)
            continue
        except RecursionError:  # the parser recurses once per level of nesting
            yield number, InputError(path, "arrays or objects nested too deep", line=number)
            continue
        if not isinstance(record, dict):
            yield number, InputError(path, "expected a JSON object", line=number)
            continue
        yield number, record


def _text(value: Any) -> str | None:
    if isinstance(value, bool) or value is None:
        return None if value is None else str(value).lower()
    if isinstance(value, int | float | str):
        return str(value)
    return None


def read_decisions(path: Path) -> tuple[list[Line], list[InputError]]:
    """Every line of ``path`` checked for its fields: the good ones, and what is wrong with
    the others."""
    lines: list[Line] = []
    problems: list[InputError] = []
    for number, row in _rows(path):
        read = row if isinstance(row, InputError) else _line(path, number, row)
        if isinstance(read, InputError):
            problems.append(read)
        else:
            lines.append(read)
    return lines, problems


def _line(path: Path, number: int, row: dict[str, Any]) -> Line | InputError:
    """One line's decision, or what is wrong with its first bad field."""

    def bad(field: str, message: str) -> InputError:
        return InputError(path, message, line=number, field=field)

    unknown = sorted(set(row) - set(FIELDS) - PLAN_FIELDS)
    if unknown:
        return bad(unknown[0], f"unknown field (known: {', '.join(FIELDS)})")
    naming = _naming_problem(row)
    if naming is not None:
        return bad(*naming)
    # 0 until resolve_targets finds the verdict in force on the line's target.
    judgment_id, target = _judgment_id(row.get("id")) or 0, row.get("target")
    value = _text(row.get("value"))
    if value is None or not value.strip():
        return bad("value", "missing: a value on the judgment's scale")
    rationale = row.get("rationale")
    if not isinstance(rationale, str) or not rationale.strip():
        return bad("rationale", "missing: why (stored with the decision)")
    reason = row.get("reason")
    if not _known_reason(reason):
        return bad("reason", f"unknown reason code {reason!r} (known: {', '.join(REASON_CODES)})")
    return Line(number, judgment_id, value, rationale, reason, target)


def _naming_problem(row: dict[str, Any]) -> tuple[str, str] | None:
    """(field, what is wrong) when a line names its judgment by neither a judgment id nor a
    subject target, or by a malformed one."""
    raw_id, target = row.get("id"), row.get("target")
    if target is not None and (not isinstance(target, str) or not target.startswith("s:")):
        return "target", f"not a subject target (s:SUITE/REPORT/KIND/SUBJECT): {target!r}"
    if raw_id is None and target is None:
        return "id", "missing (give id or target)"
    if raw_id is not None and _judgment_id(raw_id) is None:
        return "id", f"not a judgment id: {raw_id!r}"
    return None


def _known_reason(reason: Any) -> bool:
    """No reason code, or a known one."""
    return reason is None or (isinstance(reason, str) and reason in REASON_CODES)


def _judgment_id(raw: Any) -> int | None:
    """A judgment id given as a number or as digits."""
    if isinstance(raw, int) and not isinstance(raw, bool):
        return raw
    if isinstance(raw, str) and raw.strip().isdigit():
        return int(raw.strip())
    return None


def resolve_targets(
    conn: sqlite3.Connection, path: Path, lines: list[Line]
) -> tuple[list[Line], list[InputError]]:
    """Lines naming a target get the id of the verdict in force on it (the current verdict
    of the run that counts: the one ``gavel verdicts`` lists); a target no database subject
    has, one with no verdict in force, or one that disagrees with the line's id is a bad
    line."""
    resolved: list[Line] = []
    problems: list[InputError] = []
    for line in lines:
        if line.target is None:
            resolved.append(line)
            continue
        found = conn.execute(
            "SELECT s.id, (SELECT j.id FROM judgment j WHERE j.subject_id = s.id "
            "AND j.current = 1 ORDER BY j.id LIMIT 1) FROM subject s WHERE s.target = ?",
            (line.target,),
        ).fetchone()
        problem = _target_problem(line, found)
        if problem is not None:
            problems.append(InputError(path, problem, line=line.line, field="target"))
            continue
        resolved.append(replace(line, judgment_id=found[1]))
    return resolved, problems


def _target_problem(line: Line, found: tuple[int, int | None] | None) -> str | None:
    if found is None:
        return f"no subject {line.target!r} in this database"
    if found[1] is None:
        return f"no verdict in force on {line.target!r} (its runs are retired or errored)"
    if line.judgment_id and line.judgment_id != found[1]:
        return (
            f"names judgment {found[1]}, but the line's id is {line.judgment_id}: "
            "give one of them, or both agreeing"
        )
    return None


def check_decisions(conn: sqlite3.Connection, path: Path, lines: list[Line]) -> list[InputError]:
    """What is wrong with lines whose judgment does not exist or whose value is off its
    judgment's scale (read only)."""
    problems: list[InputError] = []
    for line in lines:
        try:
            ref = judgment_ref(conn, line.judgment_id)
        except ReviewError as exc:
            problems.append(InputError(path, str(exc), line=line.line, field="id"))
            continue
        kind = get_kind(ref.kind, report_frameworks(conn, ref.report_id))
        if kind is None:
            problems.append(
                InputError(
                    path,
                    f"judgment {line.judgment_id} has unknown kind {ref.kind}",
                    line=line.line,
                    field="id",
                )
            )
            continue
        try:
            kind.scale.normalize(line.value)
        except ScaleError as exc:
            problems.append(InputError(path, str(exc), line=line.line, field="value"))
    return problems


def decide_from(conn: sqlite3.Connection, log: ReviewLog, path: Path) -> list[Recorded]:
    """Read, check and record every decision of ``path`` with the scores of the reports they
    touch: one transaction, all or nothing."""
    lines, problems = read_decisions(path)
    lines, unresolved = resolve_targets(conn, path, lines)
    problems += unresolved
    problems += check_decisions(conn, path, lines)
    if problems:
        raise BatchError(path, sorted(problems, key=lambda p: p.line or 0))
    if not lines:
        raise InputError(path, "no decisions in the file")
    recorded: list[Recorded] = []
    with transaction(conn):
        for line in lines:
            try:
                recorded.append(
                    log.decide(line.judgment_id, line.value, line.rationale, line.reason)
                )
            except ReviewError as exc:
                raise BatchError(path, [InputError(path, str(exc), line=line.line)]) from None
        update_scores(conn, {r.report_id for r in recorded if r.report_id is not None})
    return recorded
