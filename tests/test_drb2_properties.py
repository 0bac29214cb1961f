"""DeepResearch Bench II property tests: after any sequence of decisions, the incremental score
update equals a full recompute, and undo restores the exact previous scores.

Hypothesis draws the run (tasks with rubric items in the three dimensions, some texts repeated
within a dimension, reports of up to three systems, the judge's 1 / 0 / -1 verdicts, some
failed and some items never judged) and imports it through the real importer into a real
SQLite file.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from reviewer.models import Bundle, Criterion, JudgeRun, Judgment, Report, Suite, System, Task
from store.db.connection import connect
from store.imports.loader import import_bundle
from store.reviewlog.events import ReviewLog
from store.scores.cache import (
    SystemScoreCache,
    cached,
    compute_all,
    rebuild_scores,
    update_scores,
)
from tests.test_scores_property import SLOW, differences, normalised, play

Draw = Callable[..., Any]
DIMENSIONS = {"info_recall": "ir", "analysis": "an", "presentation": "pr"}
VALUES = ("1", "0", "-1")


@st.composite
def drb2_bundle(draw: Draw) -> Bundle:
    systems = ["s1", "s2", "s3"][: draw(st.integers(1, 3))]
    tasks: list[Task] = []
    reports: list[Report] = []
    judgments: list[Judgment] = []
    for t in range(1, draw(st.integers(1, 3)) + 1):
        criteria = []
        for dimension, prefix in DIMENSIONS.items():
            for n in range(1, draw(st.integers(0, 4)) + 1):
                text = f"{dimension} item {draw(st.integers(1, 3))}"  # repeats now and then
                criteria.append(
                    Criterion(
                        id=f"{prefix}-{n:03d}", framework="drb2", dimension=dimension, text=text
                    )
                )
        tasks.append(Task(id=f"idx-{t}", prompt=f"task {t}", criteria=criteria))
        for system in systems:
            rid = f"{system}:idx-{t}"
            reports.append(Report(id=rid, task=f"idx-{t}", system=system, markdown="text"))
            for criterion in criteria:
                pick = draw(st.integers(0, 9))
                if pick == 9:
                    continue  # never judged
                value = None if pick == 8 else VALUES[pick % 3]
                judgments.append(
                    Judgment(
                        run="judge",
                        report=rid,
                        kind="drb2_item",
                        criterion=criterion.id,
                        value=value,
                        error="the batch failed" if value is None else None,
                    )
                )
    return Bundle(
        suite=Suite(id="p-drb2", name="drb2", frameworks=["drb2"]),
        tasks=tasks,
        systems=[System(id=s) for s in systems],
        reports=reports,
        runs=[JudgeRun(id="judge", model="m", created_at="2026-11-01T00:00:00Z")],
        judgments=judgments,
    )


_counter = iter(range(10**9))


def judgment_ids(conn: sqlite3.Connection) -> list[int]:
    return [row[0] for row in conn.execute("SELECT id FROM judgment ORDER BY id")]


def drb2_world(draw: Draw, root: Path) -> Path:
    path = root / f"drb2-{next(_counter)}.db"
    conn = connect(path)
    import_bundle(conn, draw(drb2_bundle()), "p-drb2")
    rebuild_scores(conn)
    conn.close()
    return path


def judged_world(data: st.DataObject, root: Path) -> tuple[sqlite3.Connection, list[int]]:
    """A drawn run with at least one verdict, opened, and its verdicts' ids."""
    conn = connect(drb2_world(data.draw, root))
    judgments = judgment_ids(conn)
    if not judgments:
        conn.close()
    assume(judgments)
    return conn, judgments


ops = st.lists(
    st.tuples(
        st.sampled_from(["decide", "decide", "decide", "undo", "redo", "adjudicate", "confirm"]),
        st.integers(0, 1),
        st.integers(0, 10_000),
        st.sampled_from(VALUES),
    ),
    min_size=1,
    max_size=12,
)


@settings(max_examples=30, deadline=None, suppress_health_check=SLOW)
@given(data=st.data(), sequence=ops)
def test_incremental_update_equals_full_recompute(
    tmp_path: Path, data: st.DataObject, sequence: list[tuple[str, int, int, str]]
) -> None:
    conn, judgments = judged_world(data, tmp_path)
    reviewers = [ReviewLog(conn, "ana"), ReviewLog(conn, "ben")]
    cache = SystemScoreCache()
    for action, who, index, value in sequence:
        recorded = play(reviewers[who], action, judgments[index % len(judgments)], value)
        if recorded is not None and recorded.report_id is not None:
            update_scores(conn, [recorded.report_id], cache=cache)
        assert differences(cached(conn), compute_all(conn)) == []
    conn.close()


@settings(max_examples=20, deadline=None, suppress_health_check=SLOW)
@given(data=st.data(), index=st.integers(0, 10_000), value=st.sampled_from(VALUES))
def test_undo_restores_the_exact_previous_scores(
    tmp_path: Path, data: st.DataObject, index: int, value: str
) -> None:
    conn, judgments = judged_world(data, tmp_path)
    before = normalised(cached(conn))
    log = ReviewLog(conn, "ana")
    recorded = log.decide(judgments[index % len(judgments)], value, "why")
    update_scores(conn, [recorded.report_id or 0])
    undone = log.undo()
    assert undone is not None
    update_scores(conn, [undone.report_id or 0])
    assert normalised(cached(conn)) == before
    conn.close()
