"""Progress counted per report (held events, in-force counts, the few decided or released
subjects one by one) equals progress counted from one (subject, reviewer) pair each, over
random mixes of report and subject assignments, overlaps, take-backs, decisions, conflicts
and adjudications."""

from __future__ import annotations

import shutil
import sqlite3
import tempfile
from collections import defaultdict
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from store.assignments.hand_out import Target, hand_out, report_targets
from store.assignments.progress import (
    ReviewerProgress,
    TeamProgress,
    Work,
    assignments,
    decided_by,
    my_status,
    my_subjects,
    my_work,
    overlap_reviewers,
    reviewer_progress,
    team_progress,
)
from store.assignments.take_back import Scope, take_back
from store.db.connection import connect
from store.imports.loader import import_bundle
from store.reviewlog.events import ReviewError, ReviewLog
from store.scores.cache import rebuild_scores
from tests.builders import tiny_bundle

NAMES = ("ana", "ben", "cy")
VALUES = ("correct", "incorrect", "support", "conflict", "unknown", "0", "0.5", "1", "yes", "no")


@pytest.fixture(scope="module")
def tiny_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("tiny") / "tiny.db"
    conn = connect(path)
    import_bundle(conn, tiny_bundle(), "h")
    rebuild_scores(conn)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return path


# -- the reference: one pair per (subject, reviewer) -----------------------------------------


def _ref_my_work(conn: sqlite3.Connection, reviewer: str) -> dict[int, Work]:
    decided = decided_by(conn, reviewer)
    counts: dict[int, list[int]] = defaultdict(lambda: [0, 0])
    for item in assignments(conn, reviewer):
        counts[item.report_id][0] += 1
        counts[item.report_id][1] += (item.target, reviewer) in decided
    return {rid: Work(total, done) for rid, (total, done) in counts.items()}


def _ref_overlap(conn: sqlite3.Connection) -> dict[int, tuple[str, ...]]:
    who: dict[int, set[str]] = defaultdict(set)
    for item in assignments(conn):
        who[item.subject_id].add(item.reviewer)
    return {sid: tuple(sorted(names)) for sid, names in who.items() if len(names) > 1}


def _ref_team(conn: sqlite3.Connection) -> TeamProgress:
    assigned = assignments(conn)
    if not assigned:
        return TeamProgress(0, 0, 0, 0, 0, 0)
    decided = decided_by(conn)
    overlap = _ref_overlap(conn)
    targets = {item.subject_id: item.target for item in assigned}
    statuses = dict(conn.execute("SELECT subject_id, status FROM decision").fetchall())
    complete = [
        sid for sid, names in overlap.items() if all((targets[sid], n) in decided for n in names)
    ]
    return TeamProgress(
        len(assigned),
        sum((item.target, item.reviewer) in decided for item in assigned),
        len(overlap),
        len(complete),
        sum(statuses.get(sid) == "conflict" for sid in complete),
        sum(statuses.get(sid) == "adjudicated" for sid in overlap),
    )


def _ref_reviewers(conn: sqlite3.Connection) -> dict[str, ReviewerProgress]:
    decided = decided_by(conn)
    per: dict[str, list[int]] = {}
    for item in assignments(conn):
        counts = per.setdefault(item.reviewer, [0, 0, 0])
        counts[0] += 1
        counts[1] += (item.target, item.reviewer) in decided
        counts[2] += item.k > 1
    return {name: ReviewerProgress(*c) for name, c in sorted(per.items())}


# -- random histories -------------------------------------------------------------------------


def _subjects(conn: sqlite3.Connection) -> list[Target]:
    return [
        Target(str(t), int(r))
        for t, r in conn.execute("SELECT target, report_id FROM subject ORDER BY id LIMIT 8")
    ]


def _decide(conn: sqlite3.Connection, reviewer: str, target: str, pick: int, adj: bool) -> None:
    row = conn.execute(
        "SELECT j.id FROM judgment j JOIN subject s ON s.id = j.subject_id "
        "WHERE s.target = ? AND j.current = 1",
        (target,),
    ).fetchone()
    if row is None:
        return
    log = ReviewLog(conn, reviewer)
    if pick == 0 and not adj:
        log.confirm(int(row[0]))
        return
    for value in VALUES if pick == 1 else VALUES[::-1]:
        try:
            log.decide(int(row[0]), value, "r", adjudicate=adj)
            return
        except ReviewError:
            continue


Op = tuple[str, int, int, int]
OPS = st.lists(
    st.tuples(
        st.sampled_from(
            ["assign", "assign", "report", "report", "move", "take", "decide", "decide", "adj"]
        ),
        st.integers(0, 2),
        st.integers(0, 2),
        st.integers(0, 1_000),
    ),
    min_size=1,
    max_size=20,
)


def _apply(conn: sqlite3.Connection, op: Op) -> None:
    action, who, other, pick = op
    lead = ReviewLog(conn, "lead")
    subjects = _subjects(conn)
    subject = subjects[pick % len(subjects)]
    names = list(dict.fromkeys([NAMES[who], NAMES[other]]))
    if action == "assign":
        hand_out(conn, lead, [subject], names, 1.0 if len(names) > 1 else 0.0)
    elif action == "report":
        targets = report_targets(conn, [subject.report_id])
        hand_out(conn, lead, targets, names, 1.0 if len(names) > 1 else 0.0)
    elif action == "move" and who != other:
        take_back(conn, lead, NAMES[who], [NAMES[other]])
    elif action == "take":
        take_back(conn, lead, NAMES[who], scope=Scope(reports=frozenset({subject.report_id})))
    elif action in ("decide", "adj"):
        _decide(conn, NAMES[who], subject.target, other, action == "adj")


@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(sequence=OPS)
def test_counted_progress_equals_progress_from_pairs(tiny_db: Path, sequence: list[Op]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        shutil.copy(tiny_db, Path(tmp) / "db.db")
        conn = connect(Path(tmp) / "db.db")
        for op in sequence:
            _apply(conn, op)
        assert team_progress(conn) == _ref_team(conn)
        assert overlap_reviewers(conn) == _ref_overlap(conn)
        assert reviewer_progress(conn) == _ref_reviewers(conn)
        for name in (*NAMES, "nobody"):
            assert my_work(conn, name) == _ref_my_work(conn, name)
            mine = {a.subject_id for a in assignments(conn, name)}
            assert my_subjects(conn, name) == mine
            decided = decided_by(conn, name)
            done = {a.subject_id for a in assignments(conn, name) if (a.target, name) in decided}
            assert my_status(conn, name) == (mine, done)
        conn.close()


def test_a_report_held_by_two_with_one_subject_taken_back_counts_that_subject_once(
    tiny_db: Path,
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        shutil.copy(tiny_db, Path(tmp) / "db.db")
        conn = connect(Path(tmp) / "db.db")
        subject = _subjects(conn)[0]
        lead = ReviewLog(conn, "lead")
        hand_out(conn, lead, report_targets(conn, [subject.report_id]), ["ana", "ben"], 1.0)
        in_report = [s for s in _subjects(conn) if s.report_id == subject.report_id]
        _decide(conn, "ana", in_report[1].target, 0, False)
        take_back(conn, lead, "ana", scope=Scope(reports=frozenset({subject.report_id})))
        team = team_progress(conn)
        assert team == _ref_team(conn)
        assert team.overlap == 1
        assert my_work(conn, "ana")[subject.report_id] == Work(1, 1)
        conn.close()
