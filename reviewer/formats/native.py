"""The native bundle format: a folder of JSONL files, or one JSONL file of tagged records.

Folder form::

    suite.json          the manifest (Suite)
    tasks.jsonl         one Task a line, with its subtasks and criteria
    systems.jsonl       one System a line
    reports.jsonl       one Report a line, with its references and claims
    sources.jsonl       one Source (fetched cited page) a line          (optional)
    runs.jsonl          one JudgeRun a line                             (optional)
    judgments.jsonl     one Judgment a line                             (optional)

Single-file form: one ``.jsonl`` file whose lines carry ``"type"``: suite (first line), task,
system, report, source, run or judgment. ``docs/format.md`` documents both with an example.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from itertools import repeat
from pathlib import Path
from typing import Any, cast

from pydantic import BaseModel

from reviewer.errors import InputError
from reviewer.formats.jsonl import iter_lines, model_chunks, parse_object, read_json, validate
from reviewer.models import (
    RECORD_FILES,
    RECORD_TYPES,
    Bundle,
    JudgeRun,
    Judgment,
    JudgmentRecord,
    Report,
    Source,
    Suite,
    System,
    Task,
)

_LIST_OF: dict[type[BaseModel], str] = {
    Task: "tasks",
    System: "systems",
    Report: "reports",
    Source: "sources",
    JudgeRun: "runs",
    Judgment: "judgments",
}
_TYPE_OF: dict[type[BaseModel], str] = {model: tag for tag, model in RECORD_TYPES.items()}


Record = tuple[str, BaseModel | JudgmentRecord, tuple[str, int | None]]
"""(record type, validated record, (file, line)) — what the store's streaming import consumes.
A judgment comes as a :class:`~reviewer.models.JudgmentRecord`, every other record as its
model."""

_READ_AS: dict[type[BaseModel], object] = {Judgment: JudgmentRecord}
"""Records a large run holds most of, read into plain dicts (see JudgmentRecord)."""


def read_bundle(path: Path) -> Bundle:
    """Parse a whole bundle into memory. Raises InputError naming file, line and field."""
    if path.is_dir():
        return _read_folder(path)
    if path.is_file():
        return _read_single_file(path)
    raise InputError(path, "no such file or folder")


def read_bundle_path(path: Path, suite_id: str | None = None) -> Bundle:
    """The native format as a registered reader: ``--suite-id`` renames the suite."""
    bundle = read_bundle(path)
    if suite_id:
        bundle.suite = bundle.suite.model_copy(update={"id": suite_id})
    return bundle


def iter_records(path: Path) -> tuple[Suite, Iterator[Record]]:
    """The suite and a lazy stream of records in dependency order (tasks … judgments).

    The folder form streams file by file in chunks, so a large run is never all in memory;
    the single-file form is buffered (its records may come in any order).
    """
    if path.is_dir():
        suite = _read_manifest(path)
        _refuse_stray_files(path)
        return suite, _stream_folder(path)
    if path.is_file():
        bundle = _read_single_file(path)
        return bundle.suite, bundle_records(bundle)
    raise InputError(path, "no such file or folder")


def bundle_records(bundle: Bundle) -> Iterator[Record]:
    """An in-memory bundle as the same record stream (DRB imports, tests)."""
    for model, attr in _LIST_OF.items():
        rtype = _TYPE_OF[model]
        default = next(name for name, m in RECORD_FILES.items() if m is model)
        for i, record in enumerate(getattr(bundle, attr)):
            file, line = bundle.locations.get((rtype, i), (default, 0))
            yield (
                rtype,
                judgment_record(record) if model is Judgment else record,
                (file, line or None),
            )


def judgment_record(judgment: Judgment) -> JudgmentRecord:
    """A judgment model as the stream carries it."""
    return cast(JudgmentRecord, dict(judgment))


def _stream_folder(
    folder: Path, read_as: dict[type[BaseModel], object] = _READ_AS
) -> Iterator[Record]:
    for name, model in RECORD_FILES.items():
        file = folder / name
        if not file.exists():
            continue
        kind, label = repeat(_TYPE_OF[model]), repeat(str(file))
        for numbers, records in model_chunks(model, file, read_as.get(model)):
            # (The repeats are endless; a chunk's records and numbers are as many.)
            yield from zip(kind, records, zip(label, numbers, strict=False), strict=False)


def _read_manifest(folder: Path) -> Suite:
    manifest = folder / "suite.json"
    if not manifest.is_file():
        raise InputError(manifest, "missing: a bundle folder needs a suite.json manifest")
    return validate(Suite, read_json(manifest), manifest, None)


def _refuse_stray_files(folder: Path) -> None:
    known = {*RECORD_FILES, "suite.json"}
    stray = sorted(
        p.name for p in folder.iterdir() if p.suffix in (".jsonl", ".json") and p.name not in known
    )
    if stray:
        raise InputError(
            folder / stray[0],
            f"not a bundle file (expected one of: suite.json, {', '.join(RECORD_FILES)})",
        )


def _read_folder(folder: Path) -> Bundle:
    bundle = Bundle(suite=_read_manifest(folder))
    _refuse_stray_files(folder)
    for rtype, record, (file, line) in _stream_folder(folder, read_as={}):
        target: list[Any] = getattr(bundle, _LIST_OF[RECORD_TYPES[rtype]])
        bundle.locations[(rtype, len(target))] = (file, line or 0)
        target.append(record)
    return bundle


def _read_single_file(file: Path) -> Bundle:
    suite: Suite | None = None
    lists: dict[str, list[Any]] = {name: [] for name in _LIST_OF.values()}
    locations: dict[tuple[str, int], tuple[str, int]] = {}
    for number, line in iter_lines(file):
        data = parse_object(file, number, line)
        tag = data.pop("type", None)
        if not isinstance(tag, str) or tag not in RECORD_TYPES:
            allowed = ", ".join(RECORD_TYPES)
            raise InputError(file, f"needs a 'type' of {allowed}", line=number, field="type")
        model = RECORD_TYPES[tag]
        if model is Suite:
            if suite is not None:
                raise InputError(file, "a second suite record", line=number, field="type")
            suite = validate(Suite, data, file, number)
            continue
        if suite is None:
            raise InputError(file, "the first record must be the suite", line=number, field="type")
        target = lists[_LIST_OF[model]]
        locations[(tag, len(target))] = (str(file), number)
        target.append(validate(model, data, file, number))
    if suite is None:
        raise InputError(file, "empty: no suite record")
    return Bundle(suite=suite, locations=locations, **lists)


def write_bundle(bundle: Bundle, folder: Path) -> None:
    """Write the folder form (used by the synthetic-run generator and by exports)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "suite.json").write_text(
        bundle.suite.model_dump_json(indent=2) + "\n", encoding="utf-8"
    )
    for name, model in RECORD_FILES.items():
        records: Iterable[BaseModel] = getattr(bundle, _LIST_OF[model])
        write_jsonl(folder / name, records)


def write_jsonl(path: Path, records: Iterable[BaseModel]) -> None:
    with path.open("w", encoding="utf-8") as handle:
        for record in records:
            handle.write(record.model_dump_json(exclude_defaults=True))
            handle.write("\n")
