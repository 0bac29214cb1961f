"""``gavel decide --from FILE``: decisions from a JSONL or CSV file, every line checked before
anything is written, all of them signed events in one transaction, and a bad file answered with
every bad line (file, line, field) and no change at all."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from store.db.connection import connect
from store.reviewlog.events import ReviewLog
from store.scores.cache import cached, compute_all
from tests.score_rows import all_scores
from tui.cli.group import gavel


def run(*args: str | Path) -> Result:
    return CliRunner().invoke(gavel, [str(a) for a in args])


@pytest.fixture
def db(sample_db: Path) -> Iterator[Path]:
    yield sample_db


def _state(path: Path) -> tuple[list[tuple[object, ...]], list[tuple[object, ...]]]:
    conn = sqlite3.connect(path)
    try:
        events = conn.execute("SELECT * FROM review_event ORDER BY seq").fetchall()
        scores = conn.execute(f"SELECT * FROM {all_scores(conn)} ORDER BY 1, 2, 3, 4").fetchall()
        return events, scores
    finally:
        conn.close()


def _judge_value(path: Path, judgment_id: int) -> str:
    conn = sqlite3.connect(path)
    try:
        return str(
            conn.execute("SELECT value FROM judgment WHERE id = ?", (judgment_id,)).fetchone()[0]
        )
    finally:
        conn.close()


@pytest.mark.parametrize("suffix", [".jsonl", ".csv"])
def test_a_file_of_decisions_is_recorded_as_signed_events_with_the_scores(
    db: Path, tmp_path: Path, suffix: str
) -> None:
    source = tmp_path / f"decisions{suffix}"
    same = _judge_value(db, 2)
    if suffix == ".jsonl":
        source.write_text(
            '{"id": 1, "value": 0, "rationale": "source gives 11"}\n\n'
            f'{{"id": 2, "value": "{same}", "rationale": "agreed"}}\n'
            '{"id": 3, "value": 0.5, "rationale": "half", "reason": "other"}\n',
            encoding="utf-8",
        )
    else:
        source.write_text(
            "id,value,rationale,reason\n1,0,source gives 11,\n"
            f"2,{same},agreed,\n3,0.5,half,other\n",
            encoding="utf-8",
        )
    events_before, _ = _state(db)
    result = run("decide", "--from", source, "--db", db, "--reviewer", "ana")
    assert result.exit_code == 0, result.output
    assert "recorded 3 decisions" in result.output and "1 confirm" in result.output

    conn = connect(db)
    rows = conn.execute(
        "SELECT judgment_id, action, value, rationale, reason, reviewer, key, sig "
        "FROM review_event ORDER BY seq"
    ).fetchall()[len(events_before) :]
    assert [(r[0], r[1], r[2], r[3], r[4], r[5]) for r in rows] == [
        (1, "override", "0", "source gives 11", None, "ana"),
        (2, "confirm", same, "agreed", None, "ana"),
        (3, "override", "0.5", "half", "other", "ana"),
    ]
    key = ReviewLog(conn, "ana").key
    assert all(r[6] == key and r[7] for r in rows)  # signed by this installation
    full, cache = compute_all(conn), cached(conn)
    assert cache.reports == full.reports and cache.systems == full.systems
    conn.close()


def test_every_bad_line_is_named_with_its_field_and_nothing_is_written(
    db: Path, tmp_path: Path
) -> None:
    source = tmp_path / "bad.jsonl"
    source.write_text(
        "\n".join(
            [
                '{"id": 1, "value": 0, "rationale": "fine"}',
                '{"id": 999999, "value": 0, "rationale": "no such judgment"}',
                '{"id": 1, "value": 7, "rationale": "off the scale"}',
                '{"id": 1, "value": 0}',
                '{"id": 1, "value": 0, "rationale": "r", "reason": "nope"}',
                '{"id": 1, "value": 0, "rationale": "r", "colour": "red"}',
                "not json",
                '["a list"]',
                '{"id": "one", "value": 0, "rationale": "r"}',
            ]
        )
        + "\n",
        encoding="utf-8",
    )
    before = _state(db)
    result = run("decide", "--from", source, "--db", db, "--reviewer", "ana")
    assert result.exit_code == 2
    err = result.output
    assert "8 bad lines" in err and "nothing was changed" in err
    for expected in (
        f"{source}:2: field 'id': no judgment with id 999999",
        f"{source}:3: field 'value':",
        f"{source}:4: field 'rationale': missing",
        f"{source}:5: field 'reason': unknown reason code 'nope'",
        f"{source}:6: field 'colour': unknown field",
        f"{source}:7: not JSON",
        f"{source}:8: expected a JSON object",
        f"{source}:9: field 'id': not a judgment id",
    ):
        assert expected in err, expected
    assert f"{source}:1:" not in err
    assert _state(db) == before


def test_a_bad_csv_row_and_a_bad_header_are_named(db: Path, tmp_path: Path) -> None:
    rows = tmp_path / "rows.csv"
    rows.write_text(
        "id,value,rationale\n1,0,fine\n2,,no value\n3,1,r,extra cell\n", encoding="utf-8"
    )
    header = tmp_path / "header.csv"
    header.write_text("judgment,value,rationale\n1,0,r\n", encoding="utf-8")
    before = _state(db)
    bad_rows = run("decide", "--from", rows, "--db", db, "--reviewer", "ana")
    assert bad_rows.exit_code == 2
    assert f"{rows}:3: field 'value': missing" in bad_rows.output
    assert f"{rows}:4: more cells than the header" in bad_rows.output
    bad_header = run("decide", "--from", header, "--db", db, "--reviewer", "ana")
    assert bad_header.exit_code == 2 and f"{header}:1: the header" in bad_header.output
    assert _state(db) == before


def test_a_failure_while_writing_rolls_every_decision_back(
    db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from store.reviewlog.events import ReviewError

    source = tmp_path / "d.jsonl"
    source.write_text(
        '{"id": 1, "value": 0, "rationale": "a"}\n{"id": 3, "value": 0, "rationale": "b"}\n',
        encoding="utf-8",
    )
    decide = ReviewLog.decide
    calls: list[int] = []

    def second_fails(self: ReviewLog, judgment_id: int, *args: object, **kwargs: object) -> object:
        calls.append(judgment_id)
        if len(calls) == 2:
            raise ReviewError("the disk said no")
        return decide(self, judgment_id, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(ReviewLog, "decide", second_fails)
    before = _state(db)
    result = run("decide", "--from", source, "--db", db, "--reviewer", "ana")
    assert result.exit_code == 2 and f"{source}:2: the disk said no" in result.output
    assert calls == [1, 3]
    assert _state(db) == before


def test_from_takes_no_single_decision_arguments(db: Path, tmp_path: Path) -> None:
    source = tmp_path / "d.jsonl"
    source.write_text('{"id": 1, "value": 0, "rationale": "a"}\n', encoding="utf-8")
    both = run("decide", "1", "0", "--from", source, "--db", db)
    assert both.exit_code == 2 and "--from takes the decisions from the file" in both.output
    neither = run("decide", "--db", db)
    assert neither.exit_code == 2 and "--from FILE" in neither.output
    no_rationale = run("decide", "1", "0", "--db", db)
    assert no_rationale.exit_code == 2 and "--rationale" in no_rationale.output
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n", encoding="utf-8")
    nothing = run("decide", "--from", empty, "--db", db)
    assert nothing.exit_code == 2 and "no decisions" in nothing.output
