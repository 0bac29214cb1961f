"""Each system's report scores kept as columns (store.score_columns): exact round trip, any
blob from elsewhere read safely, in-place updates equal to building afresh, and the store's
cold path aggregating from them and repairing them."""

from __future__ import annotations

import math
import struct
from array import array
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from reviewer.framework import column_aggregating, columns_of
from reviewer.frameworks.dailyreport.scoring import FRAMEWORK as CASCADE
from reviewer.frameworks.dailyreport.synthetic import SyntheticSpec, write_synthetic
from reviewer.registry import frameworks
from store.db import connect
from store.importing import import_path
from store.reviewlog import ReviewLog
from store.score_columns import SystemColumns, load_columns
from store.scores import cached, compute_all, system_report_scores, update_scores

values = st.one_of(st.none(), st.floats(allow_nan=False), st.just(-0.0), st.just(math.inf))
reports = st.dictionaries(st.integers(1, 10_000),
                          st.dictionaries(st.sampled_from(["a", "b", "c", "d"]), values))


def bits(columns: SystemColumns) -> tuple[list[int], dict[str, list[bytes]]]:
    """Compared bit for bit: NaN equals NaN, -0.0 differs from 0.0."""
    return columns.ids, {name: [struct.pack("<d", v) for v in column]
                         for name, column in columns.columns.items()}


@given(reports)
def test_a_blob_reads_back_bit_for_bit(by_id: dict[int, dict[str, float | None]]) -> None:
    columns = SystemColumns.of(by_id, ["a", "b", "c"])
    decoded = SystemColumns.decode(columns.encode())
    assert decoded is not None
    assert bits(decoded) == bits(columns)
    assert decoded.ids == sorted(rid for rid, scores in by_id.items() if scores)


@given(reports, st.lists(st.tuples(st.integers(1, 10_000),
                                   st.dictionaries(st.sampled_from(["a", "b", "x"]), values)),
                         max_size=8))
def test_put_equals_building_afresh(by_id: dict[int, dict[str, float | None]],
                                    changes: list[tuple[int, dict[str, float | None]]]) -> None:
    columns = SystemColumns.of(by_id, ["a", "b"])
    for rid, scores in changes:
        columns.put(rid, scores)
        by_id[rid] = scores
    assert bits(columns) == bits(SystemColumns.of(by_id, ["a", "b"]))


@settings(max_examples=300)
@given(st.binary(max_size=200))
def test_any_bytes_decode_to_columns_or_none(data: bytes) -> None:
    decoded = SystemColumns.decode(data)
    assert decoded is None or isinstance(decoded, SystemColumns)


def test_malformed_blobs_are_refused() -> None:
    good = SystemColumns.of({1: {"a": 1.0}, 2: {"a": None}}, ["a"]).encode()
    assert SystemColumns.decode(good) is not None
    header = b'{"n": 2, "metrics": ["a", "a"]}'
    refused = [
        good[:-1],                                       # truncated
        good + b"\0",                                    # trailing bytes
        b"GVC2" + good[4:],                              # another format
        struct.pack("<4sI", b"GVC1", len(header)) + header + bytes(8 * 2 * 3),  # repeated
        SystemColumns([2, 1], {"a": array("d", [0.0, 1.0])}).encode(),   # ids out of order
        SystemColumns([1, 1], {"a": array("d", [0.0, 1.0])}).encode(),   # an id twice
        struct.pack("<4sI", b"GVC1", 5) + b"[1,2]",      # header not an object
    ]
    assert [SystemColumns.decode(blob) for blob in refused] == [None] * len(refused)


@given(st.lists(st.dictionaries(st.sampled_from(sorted(CASCADE.aggregated)),
                                st.one_of(st.none(), st.floats(0, 5, allow_nan=False))),
                max_size=6),
       st.sampled_from(["macro", "micro"]))
def test_the_cascade_aggregate_is_its_column_aggregate(
        rows: list[dict[str, float | None]], aggregation: str) -> None:
    options = {**{o.name: o.default for o in CASCADE.options}, "aggregation": aggregation}
    kept = [r for r in rows if r]
    by_columns = CASCADE.aggregate_columns(columns_of(kept, CASCADE.aggregated), len(kept),
                                           options)
    assert repr(CASCADE.aggregate(rows, options)) == repr(by_columns)
    # Hand check of one figure: UserPref is the mean over the reports that have one.
    levels = [v for r in kept if (v := r.get("UserPref")) is not None]
    assert by_columns["UserPref"].n == len(levels)
    if levels and aggregation == "macro":
        assert by_columns["UserPref"].value == sum(levels[1:], levels[0]) / len(levels)


def _imported(tmp_path: Path) -> Path:
    bundle = tmp_path / "bundle"
    write_synthetic(bundle, SyntheticSpec(tasks=6, systems=3, seed=3))
    db = tmp_path / "g.db"
    conn = connect(db)
    import_path(conn, bundle)
    conn.close()
    return db


def test_every_system_has_its_columns_after_import(tmp_path: Path) -> None:
    conn = connect(_imported(tmp_path))
    fw = column_aggregating(frameworks()["cascade"])
    assert fw is not None
    systems = [row[0] for row in conn.execute("SELECT id FROM system ORDER BY id")]
    for system_id in systems:
        for variant in ("judge", "adjudicated"):
            stored = load_columns(conn, system_id, "cascade", variant)
            expected = SystemColumns.of(
                system_report_scores(conn, system_id, "cascade", variant), fw.aggregated)
            assert stored is not None and bits(stored) == bits(expected)


def test_a_broken_blob_is_read_from_the_rows_and_repaired(tmp_path: Path) -> None:
    conn = connect(_imported(tmp_path))
    jid, report_id, system_id = conn.execute(
        """SELECT j.id, j.report_id, r.system_id FROM judgment j
           JOIN report r ON r.id = j.report_id WHERE j.kind = 'ins' LIMIT 1""").fetchone()
    conn.execute("UPDATE score_columns SET data = x'00' WHERE system_id = ?", (system_id,))
    conn.commit()
    recorded = ReviewLog(conn, "ana").decide(jid, 0.0, "not covered")
    update_scores(conn, [recorded.report_id or report_id])
    assert cached(conn).systems == compute_all(conn).systems
    assert load_columns(conn, system_id, "cascade", "adjudicated") is not None
