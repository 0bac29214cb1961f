"""Bad input that used to reach a traceback or eat memory: deep nesting in a merged log or a
decide --from file, damaged strings in a Parquet shard, a lone surrogate in a DR3 checklist, a
record line past the size limit, a citation index no reference list has."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from reviewer.errors import InputError
from reviewer.frameworks.dr3_eval.format import read as read_dr3
from reviewer.frameworks.livedrbench.format import read as read_livedrbench
from tui.cli import main

FIXTURES = Path(__file__).parent / "fixtures"
NESTED = "[" * 100_000 + "]" * 100_000


def suites(db: Path) -> int:
    conn = sqlite3.connect(db)
    try:
        return int(conn.execute("SELECT count(*) FROM suite").fetchone()[0])
    except sqlite3.OperationalError:
        return 0
    finally:
        conn.close()


def test_deep_nesting_in_a_merged_log_is_a_line_not_a_recursion_error(
    sample_db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = tmp_path / "deep.jsonl"
    log.write_text('{"uuid": ' + NESTED + "}\n", encoding="utf-8")
    assert main(["--db", str(sample_db), "merge", str(log)]) == 2
    err = capsys.readouterr().err
    assert "deep.jsonl:1:" in err and "nested too deep" in err


def test_deep_nesting_in_a_decide_from_file_is_named(
    sample_db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = tmp_path / "decisions.jsonl"
    rows.write_text('{"judgment": ' + NESTED + "}\n", encoding="utf-8")
    code = main(["--db", str(sample_db), "decide", "--from", str(rows)])
    out, err = capsys.readouterr()
    assert code != 0
    assert "nested too deep" in out + err and "Traceback" not in out + err


def test_damaged_strings_in_a_parquet_shard_are_an_input_error(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    root = tmp_path / "ldr"
    root.mkdir()
    shard = root / "test-00000-of-00001.parquet"
    marker = "QUESTIONMARKERTEXT"
    pq.write_table(
        pa.table(
            {
                "key": ["1"],
                "category": ["novel"],
                "question": [marker],
                "ground_truths": ['[{"x": "y"}]'],
            }
        ),
        shard,
        compression="NONE",
        write_statistics=False,
        use_dictionary=False,
    )
    data = shard.read_bytes()
    at = data.index(marker.encode())
    shard.write_bytes(data[:at] + b"\xff\xfe\xfd" + data[at + 3 :])  # no longer UTF-8
    with pytest.raises(InputError) as caught:
        read_livedrbench(root)
    assert "test-00000-of-00001.parquet" in str(caught.value)


def test_a_lone_surrogate_in_a_dr3_checklist_is_refused_naming_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "dr3"
    shutil.copytree(FIXTURES / "dr3_release", root)
    checklist = root / "checklists" / "001" / "checklist.json"
    text = checklist.read_text(encoding="utf-8")
    last = text.rindex('"')  # inside the last string value (a requirement's category)
    checklist.write_text(text[:last] + "\\ud800" + text[last:], encoding="utf-8")
    with pytest.raises(InputError) as caught:
        read_dr3(root)
    assert "checklist.json" in str(caught.value) and "surrogate" in str(caught.value)
    db = tmp_path / "g.db"
    assert main(["import", str(root), "--format", "dr3", "--db", str(db)]) == 2
    assert "nothing was imported" in capsys.readouterr().err
    assert suites(db) == 0


def _bundle(tmp_path: Path, sample: Path) -> Path:
    target = tmp_path / "bundle"
    shutil.copytree(sample, target)
    return target


def test_a_record_line_past_the_limit_is_refused_naming_the_limit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _bundle(tmp_path, Path(__file__).parent.parent / "sample_data" / "dailyreport")
    reports = root / "reports.jsonl"
    lines = reports.read_text(encoding="utf-8").splitlines(keepends=True)
    record = json.loads(lines[0])
    record["markdown"] += " padding" * 40_000  # a 320,000-character line
    lines[0] = json.dumps(record) + "\n"
    reports.write_text("".join(lines), encoding="utf-8")
    monkeypatch.setenv("GAVEL_MAX_LINE_CHARS", "100000")
    db = tmp_path / "g.db"
    assert main(["import", str(root), "--db", str(db)]) == 2
    err = capsys.readouterr().err
    assert "reports.jsonl:1:" in err
    assert "100,000 characters" in err and "$GAVEL_MAX_LINE_CHARS" in err
    assert suites(db) == 0
    monkeypatch.setenv("GAVEL_MAX_LINE_CHARS", "1000000")  # raised: the same file imports
    assert main(["import", str(root), "--db", str(db)]) == 0


def test_a_citation_index_no_reference_list_has_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _bundle(tmp_path, Path(__file__).parent.parent / "sample_data" / "dailyreport")
    reports = root / "reports.jsonl"
    lines = reports.read_text(encoding="utf-8").splitlines(keepends=True)
    record = json.loads(lines[0])
    record["claims"][0]["citations"] = [-(10**18)]
    lines[0] = json.dumps(record) + "\n"
    reports.write_text("".join(lines), encoding="utf-8")
    db = tmp_path / "g.db"
    assert main(["import", str(root), "--db", str(db)]) == 2
    err = capsys.readouterr().err
    assert "reports.jsonl" in err and "citations" in err and "reference index" in err
    assert suites(db) == 0
