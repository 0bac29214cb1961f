"""The native bundle format: reading, errors that name file/line/field, all-or-nothing import."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from reviewer.errors import InputError
from reviewer.formats import hash_path
from reviewer.formats.native import iter_records, read_bundle, write_bundle
from store.imports.loader import import_bundle, import_records
from tests.builders import tiny_bundle

TABLES = (
    "suite",
    "task",
    "subtask",
    "criterion",
    "system",
    "report",
    "claim",
    "judge_run",
    "judgment",
    "source",
)


def row_counts(conn: sqlite3.Connection) -> dict[str, int]:
    return {t: conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in TABLES}


def write_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "bundle"
    write_bundle(tiny_bundle(), folder)
    return folder


def import_folder(conn: sqlite3.Connection, folder: Path) -> None:
    suite, records = iter_records(folder)
    import_records(conn, suite, records, hash_path(folder), str(folder))


def edit_line(path: Path, number: int, change: dict[str, object]) -> None:
    lines = path.read_text(encoding="utf-8").splitlines()
    record = json.loads(lines[number - 1])
    record.update(change)
    lines[number - 1] = json.dumps(record)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_folder_round_trip_and_idempotent_import(tmp_path: Path, conn: sqlite3.Connection) -> None:
    folder = write_folder(tmp_path)
    again = read_bundle(folder)
    assert again.suite == tiny_bundle().suite
    assert [r.id for r in again.reports] == ["t1-alpha", "t1-beta"]
    import_folder(conn, folder)
    first = row_counts(conn)
    assert first["judgment"] == len(tiny_bundle().judgments)
    import_folder(conn, folder)  # same content: a no-op
    assert row_counts(conn) == first


def test_single_file_form_equals_folder_form(tmp_path: Path) -> None:
    bundle = tiny_bundle()
    lines = [json.dumps({"type": "suite", **bundle.suite.model_dump()})]
    for tag, items in (
        ("judgment", bundle.judgments),
        ("report", bundle.reports),
        ("task", bundle.tasks),
        ("system", bundle.systems),
        ("run", bundle.runs),
    ):
        lines += [json.dumps({"type": tag, **item.model_dump()}) for item in items]
    single = tmp_path / "one.jsonl"
    single.write_text("\n".join(lines) + "\n", encoding="utf-8")
    parsed = read_bundle(single)
    assert parsed.tasks == bundle.tasks
    assert parsed.judgments == bundle.judgments


def test_changed_content_under_the_same_suite_id_is_refused(
    tmp_path: Path, conn: sqlite3.Connection
) -> None:
    folder = write_folder(tmp_path)
    import_folder(conn, folder)
    edit_line(folder / "systems.jsonl", 1, {"name": "Renamed"})
    with pytest.raises(InputError, match="already in this database with different content"):
        import_folder(conn, folder)


@pytest.mark.parametrize(
    ("file", "line", "change", "field", "message"),
    [
        ("judgments.jsonl", 3, {"value": "maybe"}, "value", "not one of"),
        ("judgments.jsonl", 2, {"report": "nope"}, "report", "unknown report"),
        ("judgments.jsonl", 4, {"kind": "vibes"}, "kind", "unknown verdict kind"),
        ("judgments.jsonl", 1, {"criterion": "s9-ins"}, "criterion", "unknown criterion"),
        ("judgments.jsonl", 5, {"colour": "red"}, "colour", "unknown field"),
        ("reports.jsonl", 2, {"system": "gamma"}, "system", "unknown system"),
        (
            "tasks.jsonl",
            1,
            {"subtasks": [{"id": "s1", "text": "x", "importance": "P2a"}]},
            "subtasks.0",
            "needs a 'group'",
        ),
        ("systems.jsonl", 2, {"id": "alpha"}, "id", "repeats"),
    ],
)
def test_bad_input_names_file_line_and_field_and_imports_nothing(
    tmp_path: Path,
    conn: sqlite3.Connection,
    file: str,
    line: int,
    change: dict[str, object],
    field: str,
    message: str,
) -> None:
    folder = write_folder(tmp_path)
    edit_line(folder / file, line, change)
    with pytest.raises(InputError) as caught:
        import_folder(conn, folder)
    error = caught.value
    assert error.file.endswith(file)
    assert error.line == line
    assert error.field is not None and error.field.startswith(field)
    assert message in error.message
    assert f"{file}:{line}" in str(error)
    assert all(n == 0 for n in row_counts(conn).values())


def test_a_late_error_rolls_back_rows_already_written(
    tmp_path: Path, conn: sqlite3.Connection
) -> None:
    # Force the bad record into a later batch than the first rows, so rows are already in the
    # transaction when the error comes: the rollback must remove them.
    from store.imports import loader as importer

    folder = write_folder(tmp_path)
    judgments = folder / "judgments.jsonl"
    count = len(judgments.read_text().splitlines())
    edit_line(judgments, count, {"value": "maybe"})
    old = importer.BATCH_ROWS
    importer.BATCH_ROWS = 3
    try:
        with pytest.raises(InputError):
            import_folder(conn, folder)
    finally:
        importer.BATCH_ROWS = old
    assert all(n == 0 for n in row_counts(conn).values())


def test_invalid_json_and_encoding_errors(tmp_path: Path, conn: sqlite3.Connection) -> None:
    folder = write_folder(tmp_path)
    path = folder / "runs.jsonl"
    path.write_text('{"id": "r1", "model": "m"\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"runs.jsonl:1: invalid JSON"):
        import_folder(conn, folder)
    path.write_bytes(b'{"id": "r1", "model": "\xff"}\n')
    with pytest.raises(InputError, match="not UTF-8"):
        import_folder(conn, folder)
    (folder / "notes.json").write_text("{}", encoding="utf-8")
    with pytest.raises(InputError, match="not a bundle file"):
        import_folder(conn, folder)


def test_claims_are_located_and_their_citations_parsed(tiny_db: sqlite3.Connection) -> None:
    from tests.builders import TINY_MARKDOWN

    rows = tiny_db.execute(
        "SELECT k.ext_id, k.span_start, k.span_end, k.citations FROM claim k "
        "JOIN report r ON r.id = k.report_id WHERE r.ext_id = 't1-alpha' ORDER BY k.ordinal"
    ).fetchall()
    c1, c2, c3 = rows
    assert TINY_MARKDOWN[c1[1] : c1[2]] == "Riders took 4.2 million trips in 2025"
    assert json.loads(c1[3]) == [1]
    assert json.loads(c2[3]) == [2]
    assert json.loads(c3[3]) == []  # the uncited sentence
    refs = tiny_db.execute(
        "SELECT idx, url FROM reference JOIN report r ON r.id = report_id "
        "WHERE r.ext_id = 't1-alpha' ORDER BY idx"
    ).fetchall()
    assert refs[0] == (1, "https://transit.example/2025")
    assert len(refs) == 3


def test_span_past_the_end_is_an_error(tmp_path: Path, conn: sqlite3.Connection) -> None:
    bundle = tiny_bundle()
    report = bundle.reports[0]
    claim = report.claims[0].model_copy(update={"span": (0, 10_000)})
    bundle.reports[0] = report.model_copy(update={"claims": [claim, *report.claims[1:]]})
    with pytest.raises(InputError, match="past the report"):
        import_bundle(conn, bundle, "h")


# -- verdicts read as plain records ----------------------------------------------------------


def test_a_judgment_record_has_exactly_the_judgments_fields() -> None:
    from typing import get_type_hints

    from pydantic import TypeAdapter

    from reviewer.models import Judgment, JudgmentRecord

    hints = get_type_hints(JudgmentRecord)
    fields = Judgment.model_fields
    assert list(hints) == list(fields)
    assert {name: hints[name] for name in hints} == {n: f.annotation for n, f in fields.items()}
    # The same defaults: a verdict that names only what it must reads the same both ways.
    bare = {"run": "r", "report": "x", "kind": "k"}
    assert TypeAdapter(JudgmentRecord).validate_python(bare) == dict(Judgment(**bare))
    with pytest.raises(ValueError):
        TypeAdapter(JudgmentRecord).validate_python({"run": "r", "report": "x"})


LINES = [
    '{"run": "r", "report": "x", "kind": "ins", "criterion": "c", "value": 1.0}',
    '{"run": "r", "report": "x", "kind": "ins", "value": "0.5", "explanation": "e"}',
    '{"run": "r", "report": "x", "kind": "k", "claim": "c", "ref": 3, "value": true}',
    '{"run": "r", "report": "x", "kind": "k", "ref": "3"}',
    '{"run": "r", "report": "x", "kind": "k", "ref": 3.5}',
    '{"run": "r", "report": "x", "kind": "k", "value": [1]}',
    '{"run": "r", "report": "x", "kind": "k", "value": null, "error": "timeout"}',
    '{"run": "r", "report": "x", "kind": "k", "explanation": null}',
    '{"run": "r", "report": "x", "kind": "k", "typo": 1}',
    '{"run": "r", "report": "x"}',
    '{"run": 1, "report": "x", "kind": "k"}',
    '{"run": "r", "report": "x", "kind": "k", "source_sha256": 5}',
    "[1, 2]",
    "3",
]


@pytest.mark.parametrize("line", LINES)
def test_a_judgment_record_accepts_and_refuses_what_the_model_does(line: str) -> None:
    from pydantic import TypeAdapter, ValidationError

    from reviewer.models import Judgment, JudgmentRecord

    try:
        model: object = dict(Judgment.model_validate_json(line))
    except ValidationError:
        model = None
    try:
        record: object = TypeAdapter(JudgmentRecord).validate_json(line)
    except ValidationError:
        record = None
    assert (model is None) == (record is None)
    if isinstance(model, dict) and isinstance(record, dict):
        assert record == model


def test_a_bad_verdict_line_is_named_as_the_model_names_it(
    tmp_path: Path, conn: sqlite3.Connection
) -> None:
    folder = write_folder(tmp_path)
    edit_line(folder / "judgments.jsonl", 2, {"ref": "third"})
    with pytest.raises(InputError) as caught:
        import_folder(conn, folder)
    error = caught.value
    assert (error.line, error.field) == (2, "ref")
    assert "valid integer" in str(error)
    assert row_counts(conn)["judgment"] == 0


# -- what a framework declares about its subtasks --------------------------------------------


def test_what_each_subtask_needs_is_the_frameworks_declaration(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import dataclasses

    import reviewer.formats.checks as checks
    from reviewer.frameworks.dailyreport.grading import GRADING
    from reviewer.grading import SubtaskCriterion
    from reviewer.registry import frameworks

    bundle = tiny_bundle()
    bundle.tasks[0].criteria.pop(0)  # s1 loses its ins criterion
    bundle.judgments = [j for j in bundle.judgments if j.criterion != "s1-ins"]
    assert [w.split(": ", 1)[1] for w in check_bundle_warnings(bundle)] == [
        "field 'subtasks.0': subtask 's1' of task 't1' has no ins criterion: its ins_k is 0 "
        "and the report is flagged 'needs review' (option cascade.missing_ins=exclude leaves "
        "the subtask out instead)"
    ]
    # Declared otherwise, the same check asks for what the declaration says ...
    cascade = frameworks()["cascade"]
    other = SubtaskCriterion("fac", "no facts for it")
    declared = type(
        "Declared", (), {"grading": dataclasses.replace(GRADING, subtask_criterion=other)}
    )
    monkeypatch.setattr(checks, "frameworks", lambda: {"cascade": declared()})
    warned = check_bundle_warnings(bundle)
    assert len(warned) == 2 and all("has no fac criterion: no facts for it" in w for w in warned)
    # ... and asks nothing of a framework that declares nothing.
    bare = type("Bare", (), {"grading": dataclasses.replace(GRADING, subtask_criterion=None)})
    monkeypatch.setattr(checks, "frameworks", lambda: {"cascade": bare()})
    assert check_bundle_warnings(bundle) == []
    assert cascade.grading is GRADING  # (the registered framework is left as it was)


def check_bundle_warnings(bundle: object) -> list[str]:
    from reviewer.formats.checks import check_bundle
    from reviewer.models import Bundle

    assert isinstance(bundle, Bundle)
    return check_bundle(bundle).warnings


def test_the_bundle_checks_name_no_framework() -> None:
    import reviewer.formats.checks as checks
    from reviewer.registry import frameworks

    source = Path(checks.__file__).read_text(encoding="utf-8")
    for name in frameworks():
        assert f'"{name}"' not in source and f"'{name}'" not in source, name
