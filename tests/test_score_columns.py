"""Each system's report scores kept as columns (store.scores.columns): exact round trip, any
blob from elsewhere read safely, in-place updates equal to building afresh, and the store's
cold path aggregating from them and repairing them."""

from __future__ import annotations

import math
import random
import struct
from array import array
from itertools import pairwise
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from reviewer.framework import columns_of
from reviewer.frameworks.dailyreport.scoring import FRAMEWORK as CASCADE
from reviewer.frameworks.dailyreport.scoring import aggregate_columns
from reviewer.frameworks.dailyreport.synthetic import SyntheticSpec, write_synthetic
from reviewer.registry import frameworks
from store.db.connection import connect
from store.imports.from_path import import_path
from store.reviewlog.events import ReviewLog
from store.scores.cache import cached, compute_all, system_report_scores, update_scores
from store.scores.columns import SystemColumns, load_columns

assert CASCADE.columns is not None
AGGREGATED = CASCADE.columns.metrics
assert CASCADE.columns.aggregate is aggregate_columns

values = st.one_of(st.none(), st.floats(allow_nan=False), st.just(-0.0), st.just(math.inf))
reports = st.dictionaries(
    st.integers(1, 10_000), st.dictionaries(st.sampled_from(["a", "b", "c", "d"]), values)
)


def bits(columns: SystemColumns) -> tuple[list[int], dict[str, list[bytes]]]:
    """Compared bit for bit: NaN equals NaN, -0.0 differs from 0.0."""
    return columns.ids, {
        name: [struct.pack("<d", v) for v in column] for name, column in columns.columns.items()
    }


@given(reports)
def test_a_blob_reads_back_bit_for_bit(by_id: dict[int, dict[str, float | None]]) -> None:
    columns = SystemColumns.of(by_id, ["a", "b", "c"])
    decoded = SystemColumns.decode(columns.encode())
    assert decoded is not None
    assert bits(decoded) == bits(columns)
    assert decoded.ids == sorted(rid for rid, scores in by_id.items() if scores)


@given(
    reports,
    st.lists(
        st.tuples(
            st.integers(1, 10_000), st.dictionaries(st.sampled_from(["a", "b", "x"]), values)
        ),
        max_size=8,
    ),
)
def test_put_equals_building_afresh(
    by_id: dict[int, dict[str, float | None]], changes: list[tuple[int, dict[str, float | None]]]
) -> None:
    columns = SystemColumns.of(by_id, ["a", "b"])
    for rid, scores in changes:
        columns.put(rid, scores)
        by_id[rid] = scores
    assert bits(columns) == bits(SystemColumns.of(by_id, ["a", "b"]))


@given(reports, st.lists(st.integers(0, 10_000), max_size=4), st.randoms())
def test_slices_merge_into_the_columns_of_the_whole(
    by_id: dict[int, dict[str, float | None]], cuts: list[int], rnd: random.Random
) -> None:
    ids = sorted(by_id)
    bounds = [0, *sorted(cuts), 10_001]
    slices = [
        SystemColumns.of({rid: by_id[rid] for rid in ids if lo <= rid < hi}, ["a", "b"])
        for lo, hi in pairwise(bounds)
    ]
    rnd.shuffle(slices)  # in order (as a full recompute's parts come) or not
    assert bits(SystemColumns.merged(slices)) == bits(SystemColumns.of(by_id, ["a", "b"]))


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
        good[:-1],  # truncated
        good + b"\0",  # trailing bytes
        b"GVC2" + good[4:],  # another format
        struct.pack("<4sI", b"GVC1", len(header)) + header + bytes(8 * 2 * 3),  # repeated
        SystemColumns([2, 1], {"a": array("d", [0.0, 1.0])}).encode(),  # ids out of order
        SystemColumns([1, 1], {"a": array("d", [0.0, 1.0])}).encode(),  # an id twice
        struct.pack("<4sI", b"GVC1", 5) + b"[1,2]",  # header not an object
    ]
    assert [SystemColumns.decode(blob) for blob in refused] == [None] * len(refused)


def previous_aggregate(
    reports: list[dict[str, float | None]], options: dict[str, str]
) -> dict[str, tuple[float | None, int]]:
    """DailyReport's system aggregate as it was written over dicts before it read columns
    (cdc7384), kept here as the reference the column version must equal."""
    from reviewer.frameworks.dailyreport.scoring import METRICS, SEARCH_METRICS, _mean, _ratio

    reports = [r for r in reports if r]

    def mean_of(key: str) -> tuple[float | None, int]:
        values = [v for r in reports if (v := r.get(key)) is not None]
        return (_mean(values) if values else None, len(values))

    def total(key: str) -> float:
        return sum(r.get(key) or 0.0 for r in reports)

    out: dict[str, tuple[float | None, int]] = {}
    if options["aggregation"] == "micro":
        n, claims, claims_ref = total("_n"), total("_claims"), total("_claims_ref")
        out = {
            "Ins": (_ratio(total("_ins_sum"), n), int(n)),
            "Fac": (_ratio(total("_fac_num"), total("_fac_den")), int(total("_fac_k"))),
            "Rat": (_ratio(total("_rat_num"), total("_rat_den")), int(total("_rat_k"))),
            "SubTaskPass": (_ratio(total("_pass"), n), int(n)),
            "Reference_Ratio": (_ratio(claims_ref, claims), int(claims)),
            "Reference_Support": (_ratio(total("_correct_ref"), claims_ref), int(claims_ref)),
            "No_Reference_Support": (
                _ratio(total("_correct_noref"), claims - claims_ref),
                int(claims - claims_ref),
            ),
            "Refer_Claim_Consistency": (
                _ratio(total("_pairs_support"), total("_pairs")),
                int(total("_pairs")),
            ),
        }
    else:
        for metric in METRICS:
            if metric.name not in ("NeedsReview", "Fac_na", "Rat_na", "Trace_na"):
                out[metric.name] = mean_of(metric.name)
    out["NeedsReview"] = (float(sum(1 for r in reports if r.get("NeedsReview"))), len(reports))
    for name in ("UserPref", *SEARCH_METRICS):
        out[name] = mean_of(name)
    for name in ("Fac", "Rat"):
        out[f"{name}_na"] = (float(sum(1 for r in reports if r.get(name) is None)), len(reports))
    out["Trace_na"] = (float(sum(1 for r in reports if r.get("Trace_na") != 0.0)), len(reports))
    return out


@settings(max_examples=300)
@given(
    st.lists(
        st.dictionaries(
            st.sampled_from(sorted(AGGREGATED)),
            st.one_of(
                st.none(), st.floats(-5, 5, allow_nan=False), st.just(-0.0), st.integers(0, 40)
            ),
        ),
        max_size=8,
    ),
    st.sampled_from(["macro", "micro"]),
)
def test_the_cascade_aggregate_over_columns_equals_the_one_over_dicts(
    rows: list[dict[str, float | None]], aggregation: str
) -> None:
    options = {**{o.name: o.default for o in CASCADE.options}, "aggregation": aggregation}
    kept = [r for r in rows if r]
    by_columns = aggregate_columns(columns_of(kept, AGGREGATED), len(kept), options)
    got = {m: (a.value, a.n) for m, a in by_columns.items()}
    assert repr(got) == repr(previous_aggregate(rows, options))  # bit for bit, -0.0 too


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
    aggregation = frameworks()["cascade"].columns
    assert aggregation is not None
    systems = [row[0] for row in conn.execute("SELECT id FROM system ORDER BY id")]
    for system_id in systems:
        for variant in ("judge", "adjudicated"):
            stored = load_columns(conn, system_id, "cascade", variant)
            expected = SystemColumns.of(
                system_report_scores(conn, system_id, "cascade", variant), aggregation.metrics
            )
            assert stored is not None and bits(stored) == bits(expected)


def test_a_broken_blob_is_read_from_the_rows_and_repaired(tmp_path: Path) -> None:
    conn = connect(_imported(tmp_path))
    jid, report_id, system_id = conn.execute(
        """SELECT j.id, j.report_id, r.system_id FROM judgment j
           JOIN report r ON r.id = j.report_id WHERE j.kind = 'ins' LIMIT 1"""
    ).fetchone()
    conn.execute("UPDATE score_columns SET data = x'00' WHERE system_id = ?", (system_id,))
    conn.commit()
    recorded = ReviewLog(conn, "ana").decide(jid, 0.0, "not covered")
    update_scores(conn, [recorded.report_id or report_id])
    assert cached(conn).systems == compute_all(conn).systems
    assert load_columns(conn, system_id, "cascade", "adjudicated") is not None


def test_a_trace_count_that_is_no_number_is_no_count() -> None:
    # NaN means "no value" in a column: a NaN count must not reach the scores as a value.
    from reviewer.frameworks.dailyreport.scoring import search_counts
    from reviewer.keys import TRACE_KEY

    for bad in (math.nan, math.inf):
        trace = {"search_calls": bad, "web_search": 2, "web_content_mining": 3}
        assert search_counts({TRACE_KEY: trace}) == (5.0, 2.0, 3.0)
