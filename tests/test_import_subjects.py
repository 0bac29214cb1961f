"""Subjects written beside their verdicts at import (issue 20): a bundle of one run gives each
verdict a new subject as it streams in, instead of linking them afterwards with an UPDATE of
every verdict row. The result must be exactly what linking afterwards gives (same ids, in the
same (report, kind, subject) order, so a plan's seed draws the same subjects), whatever order
the verdicts come in, and a repeated verdict is still bad input naming its line.

Their suspicion flags are computed the same way, from the verdicts the import holds rather
than read back: they must be exactly what a refresh from the stored rows gives."""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

import pytest

import store.imports.loader as importer
from reviewer.errors import InputError
from reviewer.models import Bundle
from store.db.connection import connect
from store.imports.from_path import import_path
from store.imports.loader import import_bundle
from tests.builders import tiny_bundle

LINKED = (
    "SELECT j.id, j.subject_id, s.report_id = j.report_id AND s.kind = j.kind "
    "AND s.key = j.subject FROM judgment j LEFT JOIN subject s ON s.id = j.subject_id "
    "ORDER BY j.id"
)
SUBJECTS = "SELECT id, report_id, kind, key, target FROM subject ORDER BY id"


def _state(db: Path) -> tuple[list[tuple[object, ...]], list[tuple[object, ...]]]:
    with sqlite3.connect(db) as conn:
        return conn.execute(SUBJECTS).fetchall(), conn.execute(LINKED).fetchall()


def _import(folder: Path, db: Path) -> None:
    conn = connect(db)
    import_path(conn, folder)
    conn.close()


def test_subjects_written_beside_verdicts_equal_subjects_linked_afterwards(
    synthetic: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _import(synthetic, tmp_path / "streamed.db")
    streamed = _state(tmp_path / "streamed.db")
    original = importer.Loader.__init__

    def init(self: importer.Loader, *args: object, **kwargs: object) -> None:
        original(self, *args, **kwargs)  # type: ignore[arg-type]
        self._own_subjects = False

    monkeypatch.setattr(importer.Loader, "__init__", init)
    _import(synthetic, tmp_path / "linked.db")
    linked = _state(tmp_path / "linked.db")
    subjects, links = streamed
    assert len(subjects) == len(links) > 1000
    assert all(ok for _, _, ok in links)
    assert streamed == linked


def test_verdicts_not_grouped_by_report_are_still_all_linked(
    synthetic: Path, tmp_path: Path
) -> None:
    shuffled = tmp_path / "shuffled"
    shuffled.mkdir()
    for path in synthetic.iterdir():
        lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
        if path.name == "judgments.jsonl":
            # The first report's verdicts first, then the rest in any order: the import
            # starts writing subjects itself and must hand over when a report comes back.
            head = [line for line in lines if '"report":"t000-sys00"' in line]
            rest = [line for line in lines if line not in head]
            random.Random(3).shuffle(rest)
            lines = head + rest
        (shuffled / path.name).write_text("".join(lines), encoding="utf-8")
    _import(synthetic, tmp_path / "grouped.db")
    _import(shuffled, tmp_path / "shuffled.db")
    grouped_subjects, _ = _state(tmp_path / "grouped.db")
    subjects, links = _state(tmp_path / "shuffled.db")
    assert all(ok for _, _, ok in links), "a verdict left without its subject"
    assert {s[1:] for s in subjects} == {s[1:] for s in grouped_subjects}
    with sqlite3.connect(tmp_path / "shuffled.db") as conn:
        assert (
            conn.execute("SELECT count(*) FROM judgment WHERE subject_id IS NULL").fetchone()[0]
            == 0
        )


FLAGS = (
    "SELECT r.ext_id, s.kind, s.key, x.rule, x.weight, x.reason FROM suspicion x "
    "JOIN subject s ON s.id = x.subject_id JOIN report r ON r.id = s.report_id ORDER BY 1, 2, 3, 4"
)


def test_flags_written_beside_verdicts_equal_flags_refreshed(
    synthetic: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from store.triage.suspicion import refresh_suspicion

    def refresh(*args: object) -> int:
        raise AssertionError("a bundle of one run is flagged as it is written")

    monkeypatch.setattr(importer, "refresh_suspicion", refresh)
    _import(synthetic, tmp_path / "streamed.db")
    with sqlite3.connect(tmp_path / "streamed.db") as conn:
        streamed = conn.execute(FLAGS).fetchall()
        assert len(streamed) >= 5
        conn.execute("DELETE FROM suspicion")
        refresh_suspicion(conn)
        assert conn.execute(FLAGS).fetchall() == streamed


def test_verdicts_not_grouped_by_report_are_flagged_from_their_rows(
    synthetic: Path, tmp_path: Path
) -> None:
    shuffled = tmp_path / "shuffled"
    shuffled.mkdir()
    for path in synthetic.iterdir():
        lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
        if path.name == "judgments.jsonl":
            lines = lines[: len(lines) // 2][::-1] + lines[len(lines) // 2 :]
        (shuffled / path.name).write_text("".join(lines), encoding="utf-8")
    _import(synthetic, tmp_path / "grouped.db")
    _import(shuffled, tmp_path / "shuffled.db")
    with sqlite3.connect(tmp_path / "grouped.db") as grouped:
        expected = grouped.execute(FLAGS).fetchall()
    with sqlite3.connect(tmp_path / "shuffled.db") as conn:
        assert conn.execute(FLAGS).fetchall() == expected


def _repeat_next_to(bundle: Bundle, index: int) -> int:
    """Insert a second verdict on judgment ``index``'s subject right after it (the same
    report's group); returns its line."""
    first = bundle.judgments[index]
    bundle.judgments.insert(index + 1, first.model_copy(update={"explanation": "said twice"}))
    bundle.locations.clear()
    for n in range(len(bundle.judgments)):
        bundle.locations[("judgment", n)] = ("judgments.jsonl", n + 1)
    return index + 2


@pytest.mark.parametrize("batch", [importer.BATCH_ROWS, 5])
def test_a_repeated_verdict_among_its_reports_verdicts_names_its_line(
    conn: sqlite3.Connection, monkeypatch: pytest.MonkeyPatch, batch: int
) -> None:
    monkeypatch.setattr(importer, "BATCH_ROWS", batch)
    bundle = tiny_bundle()
    line = _repeat_next_to(bundle, 2)
    with pytest.raises(InputError) as caught:
        import_bundle(conn, bundle, "h")
    assert (caught.value.file, caught.value.line, caught.value.field) == (
        "judgments.jsonl",
        line,
        "kind",
    )
    assert conn.execute("SELECT count(*) FROM subject").fetchone()[0] == 0
    assert conn.execute("SELECT count(*) FROM judgment").fetchone()[0] == 0
