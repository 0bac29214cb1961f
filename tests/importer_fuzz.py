"""A seeded mutation fuzzer for the five import formats (used by tests/test_importer_fuzz.py).

Each case copies a small valid input of one format, damages one file the way the reliability
trial did — a value swapped for NaN, ±Infinity, 1e400, a lone surrogate, 100,000 levels of
nesting or a value of the wrong type; a key dropped; a line duplicated (duplicate ids); the file
truncated or its bytes garbled — and imports it into a copy of a database that already holds
another suite. The import must either succeed or raise :class:`InputError` naming the file (and
its line where the file has lines), and a refused import must leave the database exactly as it
was. Some damage must always be refused: a non-finite number, deep nesting, a lone surrogate, a
duplicated record.
"""

from __future__ import annotations

import json
import random
import shutil
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reviewer.errors import InputError

DEPTH = 100_000

# Placeholders written as JSON strings, then replaced by raw JSON text the standard library
# would not write.
_NAN, _INF, _NEGINF, _BIG, _DEEP = (
    f"\u0001{n}\u0001" for n in ("NAN", "INF", "NEGINF", "BIG", "DEEP")
)
_RAW = {
    _NAN: "NaN",
    _INF: "Infinity",
    _NEGINF: "-Infinity",
    _BIG: "1e400",
    _DEEP: "[" * DEPTH + "]" * DEPTH,
}

MUST_REFUSE = frozenset(
    {"nan", "inf", "-inf", "1e400", "deep", "surrogate", "huge int", "duplicate line"}
)
"""Damage no import may accept (wherever it lands in a record)."""

VALUES: dict[str, Any] = {
    "nan": _NAN,
    "inf": _INF,
    "-inf": _NEGINF,
    "1e400": _BIG,
    "deep": _DEEP,
    "surrogate": "text \ud800 more",
    "object": {"a": 1},
    "list": [1, "x"],
    "string": "x",
    "empty string": "",
    "zero": 0,
    "negative": -7,
    "true": True,
    "null": None,
    "float": 0.25,
    "huge int": 10**30,
    "long string": "ab" * 50_000,
    "terminal escape": "\x1b]0;owned\x07\x1b[2J",
    "bidi override": "abc\u202edcba",
    "zero width": "a\u200bb",
}


@dataclass(frozen=True, slots=True)
class Case:
    format: str
    file: str
    damage: str
    where: str

    def __str__(self) -> str:
        return f"{self.format}: {self.damage} in {self.file} ({self.where})"


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out: list[tuple[Any, ...]] = []
    if isinstance(value, dict):
        for key, item in value.items():
            out.append((*prefix, key))
            out.extend(_paths(item, (*prefix, key)))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            out.append((*prefix, index))
            out.extend(_paths(item, (*prefix, index)))
    return out


def _replace(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        return {k: (_replace(v, rest, new) if k == head else v) for k, v in value.items()}
    return [(_replace(v, rest, new) if i == head else v) for i, v in enumerate(value)]


def _drop(value: Any, path: tuple[Any, ...]) -> Any:
    head, rest = path[0], path[1:]
    if not rest:
        if isinstance(value, dict):
            return {k: v for k, v in value.items() if k != head}
        return [v for i, v in enumerate(value) if i != head]
    if isinstance(value, dict):
        return {k: (_drop(v, rest) if k == head else v) for k, v in value.items()}
    return [(_drop(v, rest) if i == head else v) for i, v in enumerate(value)]


def _dumps(value: Any, indent: int | None) -> str:
    text = json.dumps(value, ensure_ascii=True, indent=indent)
    for placeholder, raw in _RAW.items():
        text = text.replace(json.dumps(placeholder), raw)
    return text


def mutate(rng: random.Random, folder: Path, fmt: str) -> Case:
    """Damage one file under ``folder`` in place; what was done."""
    files = sorted(
        p for p in folder.rglob("*") if p.suffix in (".json", ".jsonl") and p.read_bytes().strip()
    )
    file = rng.choice(files)
    name = str(file.relative_to(folder))
    raw = file.read_bytes()
    damage = rng.choices(
        ["value", "drop key", "duplicate line", "truncate", "garble"], weights=[12, 2, 2, 1, 1]
    )[0]
    if damage == "truncate":
        file.write_bytes(raw[: rng.randrange(max(1, len(raw)))])
        return Case(fmt, name, damage, "whole file")
    if damage == "garble":
        data = bytearray(raw)
        for _ in range(rng.randint(1, 4)):
            data[rng.randrange(len(data))] = rng.choice(b'\xff\xc3\x00{}[]",:\\')
        file.write_bytes(bytes(data))
        return Case(fmt, name, damage, "whole file")
    if file.suffix == ".jsonl":
        lines = raw.decode("utf-8").splitlines()
        candidates = [i for i, line in enumerate(lines) if line.strip()]
        index = rng.choice(candidates)
        if damage == "duplicate line":
            lines.insert(index, lines[index])
            file.write_text("\n".join(lines) + "\n", encoding="utf-8")
            return Case(fmt, name, damage, f"line {index + 1}")
        record = json.loads(lines[index])
        new, where = _damage_value(rng, record, damage)
        lines[index] = _dumps(new, None)
        file.write_text("\n".join(lines) + "\n", encoding="utf-8")
        return Case(fmt, name, where[0], f"line {index + 1}: {where[1]}")
    document = json.loads(raw)
    if damage == "duplicate line":
        damage = "value"
    new, where = _damage_value(rng, document, damage)
    file.write_text(_dumps(new, 2), encoding="utf-8")
    return Case(fmt, name, where[0], where[1])


def _damage_value(rng: random.Random, record: Any, damage: str) -> tuple[Any, tuple[str, str]]:
    paths = _paths(record)
    if not paths:
        return VALUES["nan"], ("nan", "the whole record")
    path = rng.choice(paths)
    where = ".".join(map(str, path))
    if damage == "drop key":
        return _drop(record, path), ("drop key", where)
    kind = rng.choice(sorted(VALUES))
    return _replace(record, path, VALUES[kind]), (kind, where)


def snapshot(conn: sqlite3.Connection) -> list[tuple[str, object]]:
    """Row counts of every table and the ``meta`` rows: what a partial import would change."""
    tables = [
        t
        for (t,) in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
            "AND sql NOT LIKE '%VIRTUAL%' ORDER BY name"
        )
    ]
    out: list[tuple[str, object]] = [
        (table, int(conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]))
        for table in tables
    ]
    out.append(("meta rows", conn.execute("SELECT key, value FROM meta ORDER BY key").fetchall()))
    return out


@dataclass(slots=True)
class Outcome:
    case: Case
    result: str
    """'imported', 'refused' or the failure."""
    error: InputError | None = None
    failure: str | None = None


def run_case(
    case: Case,
    folder: Path,
    database: Path,
    do_import: Callable[[sqlite3.Connection, Path], object],
    connect: Callable[[Path], sqlite3.Connection],
) -> Outcome:
    conn = connect(database)
    try:
        before = snapshot(conn)
        try:
            do_import(conn, folder)
        except InputError as exc:
            after = snapshot(conn)
            outcome = Outcome(case, "refused", error=exc)
            if after != before:
                outcome.failure = "a refused import changed the database"
            elif not exc.file.startswith(str(folder)):
                outcome.failure = f"the error does not name a file of the input: {exc}"
            return outcome
        except Exception as exc:  # the bug this fuzzer exists to find
            import traceback

            return Outcome(
                case,
                "crashed",
                failure="".join(traceback.format_exception_only(type(exc), exc)).strip()[:300],
            )
        outcome = Outcome(case, "imported")
        if case.damage in MUST_REFUSE:
            outcome.failure = "accepted damage that must be refused"
        return outcome
    finally:
        conn.close()


def copy_seed(seed: Path, target: Path) -> Path:
    if target.exists():
        shutil.rmtree(target)
    if seed.is_file():
        target.mkdir(parents=True)
        shutil.copy(seed, target / seed.name)
        return target / seed.name
    shutil.copytree(seed, target)
    return target
