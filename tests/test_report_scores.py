"""A report's scores stored as one row (store.scores.report_rows): every value comes back exactly,
a metric without a value comes back as None, and a row that is not well formed reads as no
scores rather than as wrong ones."""

from __future__ import annotations

import math
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from store.db.connection import connect
from store.scores import report_rows as report_scores

names = st.text(min_size=1, max_size=12)
values = st.one_of(st.none(), st.floats(allow_nan=False), st.integers(-(10**6), 10**6))


@given(st.dictionaries(names, values, max_size=40))
def test_scores_come_back_exactly(scores: dict[str, float | None]) -> None:
    metrics, data = report_scores.encode(scores)
    back = report_scores.decode(metrics, data)
    assert back == scores
    assert back is not None and list(back) == list(scores)  # in the same order
    wanted = tuple(sorted(scores)[:3])
    assert report_scores.pick(metrics, data, wanted) == {k: scores[k] for k in wanted}


def test_nan_is_no_value_as_sqlite_itself_stores_it() -> None:
    metrics, data = report_scores.encode({"a": math.nan, "b": 1.5})
    assert report_scores.decode(metrics, data) == {"a": None, "b": 1.5}


def test_malformed_rows_read_as_no_scores(tmp_path: Path) -> None:
    conn = connect(tmp_path / "g.db")
    report_scores.write(
        conn, [(1, "fw", "judge", {"x": 1.0, "y": None}), (2, "fw", "judge", {"x": 2.0})]
    )
    good = report_scores.encode({"x": 3.0})
    rows = [
        (3, "[1, 2]", good[1]),  # names that are not names
        (4, '["x", "x"]', good[1] * 2),  # a name twice
        (5, '["x"]', good[1][:7]),  # a value cut short
        (6, "not json", good[1]),
        (7, '{"x": 1}', good[1]),
    ]
    conn.executemany("INSERT INTO report_score VALUES (?, 'fw', 'judge', ?, ?)", rows)
    assert [(rid, scores) for rid, _, _, scores in report_scores.read(conn)] == [
        (1, {"x": 1.0, "y": None}),
        (2, {"x": 2.0}),
    ]
    assert [scores for *_, scores in report_scores.read_metrics(conn, ["x"])] == [
        {"x": 1.0},
        {"x": 2.0},
        {},
        {},
        {},
        {},
        {},
    ]
    # A report whose scores become empty has no row, as before it had no score rows.
    report_scores.write(conn, [(1, "fw", "judge", {})])
    assert [rid for rid, *_ in report_scores.read(conn)] == [2]
    # Many report ids are filtered without binding one parameter each.
    many = list(range(2, 20_002))
    assert [rid for rid, *_ in report_scores.read(conn, many)] == [2]
    conn.close()
