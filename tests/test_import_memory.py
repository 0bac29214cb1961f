"""The import keeps no per-verdict state (issue 20): a second verdict on the same subject in the
same run is found by the judgment table's unique index, and still reported as bad input naming
the file, the line of the second verdict and the field, with nothing imported; a native bundle
folder is streamed record by record from disk, never read whole."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import store.imports.loader as importer
from reviewer.errors import InputError
from reviewer.formats.checks import check_bundle
from reviewer.formats.native import write_bundle
from store.imports.from_path import import_path
from store.imports.loader import import_bundle
from tests.builders import tiny_bundle


def _tables(conn: sqlite3.Connection) -> dict[str, int]:
    return {
        t: conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
        for t in ("suite", "report", "claim", "judgment", "review_event")
    }


@pytest.mark.parametrize("batch", [importer.BATCH_ROWS, 7])
def test_a_repeated_verdict_names_its_line_and_imports_nothing(
    conn: sqlite3.Connection, monkeypatch: pytest.MonkeyPatch, batch: int
) -> None:
    monkeypatch.setattr(importer, "BATCH_ROWS", batch)  # 7: the repeat in a later batch
    bundle = tiny_bundle()
    first = bundle.judgments[2]
    bundle.judgments.append(first.model_copy(update={"explanation": "said twice"}))
    line = len(bundle.judgments)
    bundle.locations[("judgment", line - 1)] = ("judgments.jsonl", line)
    before = _tables(conn)
    with pytest.raises(InputError) as caught:
        import_bundle(conn, bundle, "h")
    assert (caught.value.file, caught.value.line, caught.value.field) == (
        "judgments.jsonl",
        line,
        "kind",
    )
    assert "second verdict on the same subject" in caught.value.message
    assert _tables(conn) == before
    # Without a database, the checker still remembers every verdict itself.
    with pytest.raises(InputError, match="second verdict"):
        check_bundle(bundle)


def test_a_native_folder_is_streamed_not_read_whole(
    conn: sqlite3.Connection, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import reviewer.formats.native as native

    def whole(*args: object, **kwargs: object) -> object:
        raise AssertionError("the bundle was read whole")

    monkeypatch.setattr(native, "read_bundle", whole)
    monkeypatch.setattr(native, "read_bundle_path", whole)
    folder = tmp_path / "bundle"
    write_bundle(tiny_bundle(), folder)
    result = import_path(conn, folder)
    assert result.created and result.counts["judgments"] == len(tiny_bundle().judgments)
    renamed = import_path(conn, folder, suite_id="tiny-2")
    assert renamed.created and renamed.suite == "tiny-2"


def test_an_import_keeps_temporary_storage_on_disk_and_restores_it(
    conn: sqlite3.Connection, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import store.imports.from_path as importing

    seen: list[int] = []
    real = importing.import_records

    def spy(*args: object, **kwargs: object) -> object:
        seen.append(conn.execute("PRAGMA temp_store").fetchone()[0])
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(importing, "import_records", spy)
    folder = tmp_path / "bundle"
    write_bundle(tiny_bundle(), folder)
    assert conn.execute("PRAGMA temp_store").fetchone()[0] == 2  # MEMORY, as opened
    import_path(conn, folder)
    assert seen == [1]  # FILE while importing
    assert conn.execute("PRAGMA temp_store").fetchone()[0] == 2


@pytest.mark.parametrize(
    "line",
    [
        '{"a": NaN}',
        '{"a": -Infinity}',
        '{"a": 1e400}',
        '{"a": 1e+999}',
        '{"a": 12345678901234567890}',
        '{"a": "\\ud800"}',
        '{"a": "\\uDBFF"}',
        '{"a": 1.5e0400}',
        '{"a": -9223372036854775809}',
        '{"a": ' + "1" * 320 + ".0}",
        '{"a": [1, 2e999]}',
    ],
)
def test_the_quick_line_scan_flags_every_line_loads_refuses(line: str) -> None:
    from reviewer.formats.jsonl import _may_refuse, _suspect, loads

    with pytest.raises(InputError):
        loads(line, "x.jsonl", 1)
    assert _suspect(line)
    # The chunk scan finds it too, among other lines and in text that is not ASCII.
    assert _may_refuse("[" + ",".join(['{"a": "ä 1"}\n', line + "\n", '{"b": 2}']) + "]")


@pytest.mark.parametrize(
    "line",
    [
        '{"a": "\\u00e9 and 2025, prose in 20 languages"}',
        '{"a": 1e12, "b": 9223372036854775}',
        '{"text": "code e123 and E-999 are words here"}',
        "",
    ],
)
def test_the_quick_line_scan_lets_plain_lines_through(line: str) -> None:
    from reviewer.formats.jsonl import _suspect

    assert not _suspect(line)


@given(
    mantissa=st.text("0123456789", min_size=1, max_size=40),
    fraction=st.text("0123456789", max_size=5),
    exponent=st.integers(-1200, 1200),
    sign=st.sampled_from(["", "-"]),
    form=st.sampled_from(["int", "frac", "exp", "both"]),
)
@settings(max_examples=400, deadline=None)
def test_no_number_loads_refuses_escapes_the_scan(
    mantissa: str, fraction: str, exponent: int, sign: str, form: str
) -> None:
    from reviewer.formats.jsonl import _may_refuse, _suspect, loads

    digits = mantissa.lstrip("0") or "0"
    number = sign + digits
    if form in ("frac", "both") and fraction:
        number += "." + fraction
    if form in ("exp", "both"):
        number += f"e{exponent:+d}"
    line = f'{{"value": {number}, "note": "n"}}'
    try:
        loads(line, "x.jsonl", 1)
    except InputError:
        assert _suspect(line), line
    if _suspect(line):
        assert _may_refuse(line), line


@given(st.text(max_size=60))
@settings(max_examples=400, deadline=None)
def test_the_chunk_scan_misses_no_line_the_line_scan_flags(text: str) -> None:
    from reviewer.formats.jsonl import _may_refuse, _suspect

    if _suspect(text):
        assert _may_refuse(text), text


def test_a_refused_number_is_named_by_its_line_in_a_large_chunk(tmp_path: Path) -> None:
    from reviewer.formats.jsonl import line_chunks, validate_lines
    from reviewer.models import Judgment, JudgmentRecord

    path = tmp_path / "judgments.jsonl"
    good = '{"run": "r", "report": "x", "kind": "claim", "claim": "c%d", "value": "correct"}\n'
    lines = [good % i for i in range(300)]
    lines[211] = lines[211].replace('"correct"', "1e400")
    path.write_text("".join(lines), encoding="utf-8")
    ((numbers, chunk),) = list(line_chunks(path))
    with pytest.raises(InputError) as caught:
        validate_lines(Judgment, path, numbers, chunk, JudgmentRecord)
    assert caught.value.line == 212 and "beyond the range" in str(caught.value)


@given(st.text(st.sampled_from(" \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f\x00\x85\u3000ab.é"), max_size=30))
@settings(max_examples=500, deadline=None)
def test_a_reports_words_are_counted_as_split_counts_them(text: str) -> None:
    from store.imports.loader import word_count

    assert word_count(text) == len(text.split())
