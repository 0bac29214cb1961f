"""Property tests on a rough DailyReport-shaped run: the incremental score update always equals a
full recompute, and undo restores the exact previous scores — on what real runs have and a
tidy generator does not (claims nobody judged, failed judge calls, a subtask without an ins
criterion, claims named only by their fac criterion, reports with and without trace counts).
``test_scores_property.py`` draws runs of every framework."""

from __future__ import annotations

import json
import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reviewer.frameworks.dailyreport.synthetic import SyntheticSpec, write_synthetic
from reviewer.registry import get_kind
from store.db.connection import connect
from store.reviewlog.events import ReviewError, ReviewLog
from store.scores.cache import (
    ScoreTable,
    SystemScoreCache,
    cached,
    compute_all,
    rebuild_scores,
    update_scores,
)


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("syn")
    write_synthetic(
        folder / "bundle",
        SyntheticSpec(tasks=3, systems=3, subtasks=6, claims=6, words=120, seed=3),
    )
    _roughen(folder / "bundle")
    from reviewer.formats.native import iter_records
    from store.imports.loader import import_records

    path = folder / "template.db"
    conn = connect(path)
    suite, records = iter_records(folder / "bundle")
    import_records(conn, suite, records, "h")
    rebuild_scores(conn)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return path


def _roughen(bundle: Path) -> None:
    """What real runs have and the synthetic generator does not: claims nobody judged, judge
    calls that failed, a subtask without an ins criterion, claims named only by their fac
    criterion, reports with and without trace counts."""

    def rewrite(name: str, change: Callable[[int, dict[str, Any]], dict[str, Any] | None]) -> None:
        path = bundle / name
        records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
        kept = [r for i, rec in enumerate(records) if (r := change(i, rec)) is not None]
        path.write_text("".join(json.dumps(r) + "\n" for r in kept), encoding="utf-8")

    def task(i: int, rec: dict[str, Any]) -> dict[str, Any]:
        if i == 0:
            rec["criteria"] = [c for c in rec["criteria"] if c["id"] != "s2-ins"]
        return rec

    def report(i: int, rec: dict[str, Any]) -> dict[str, Any]:
        if i % 2:
            rec["metadata"] = {"trace": {"web_search": i, "web_content_mining": i // 2}}
        for j, claim in enumerate(rec["claims"]):
            if j % 3 == 1:
                claim["criterion"] = claim.pop("subtask") + "-fac"
        return rec

    counter = {"claim": 0, "rat": 0, "consistency": 0}

    def judgment(_: int, rec: dict[str, Any]) -> dict[str, Any] | None:
        kind = rec["kind"]
        if kind == "ins" and rec["report"].startswith("t000-") and rec["criterion"] == "s2-ins":
            return None
        if kind in counter:
            counter[kind] += 1
            if kind == "claim" and counter[kind] % 9 == 0:
                return None  # extracted, never judged
            if counter[kind] % 7 == 0:
                rec["value"] = None  # the judge call failed
                rec["error"] = "timeout"
        return rec

    rewrite("tasks.jsonl", task)
    rewrite("reports.jsonl", report)
    rewrite("judgments.jsonl", judgment)


def fresh(template: Path, tmp_path: Path, n: int) -> sqlite3.Connection:
    path = tmp_path / f"p{n}.db"
    shutil.copy(template, path)
    return connect(path)


def normalised(table: ScoreTable) -> tuple[dict[object, object], dict[object, object]]:
    reports = {k: dict(v) for k, v in table.reports.items()}
    return reports, {k: dict(v) for k, v in table.systems.items()}


Op = tuple[str, int, int, int]  # (action, reviewer index, judgment pick, value pick)
# Reviewers 0 and 1 share the connection that keeps a SystemScoreCache (the workstation's
# writer); reviewer 2 decides through another connection, as a second process would.

ops = st.lists(
    st.tuples(
        st.sampled_from(["decide", "decide", "decide", "undo", "redo", "adjudicate", "confirm"]),
        st.integers(0, 2),
        st.integers(0, 10_000),
        st.integers(0, 10),
    ),
    min_size=1,
    max_size=12,
)

_counter = iter(range(10**9))


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(sequence=ops)
def test_incremental_update_equals_full_recompute(
    template: Path, tmp_path: Path, sequence: list[Op]
) -> None:
    conn = fresh(template, tmp_path, next(_counter))
    other = connect(Path(conn.execute("PRAGMA database_list").fetchone()[2]))
    judgments = conn.execute("SELECT id, kind FROM judgment ORDER BY id").fetchall()
    reviewers = [ReviewLog(conn, "ana"), ReviewLog(conn, "ben"), ReviewLog(other, "carl")]
    cache = SystemScoreCache()
    for action, who, pick, value_pick in sequence:
        log = reviewers[who]
        jid, kind_name = judgments[pick % len(judgments)]
        kind = get_kind(kind_name)
        assert kind is not None
        value = kind.scale.choices[value_pick % len(kind.scale.choices)].code
        if action == "undo":
            recorded = log.undo()
        elif action == "redo":
            recorded = log.redo()
        elif action == "confirm":
            try:
                recorded = log.confirm(jid)
            except ReviewError:  # a failed judge call: nothing to confirm
                recorded = None
        else:
            recorded = log.decide(jid, value, "why", adjudicate=action == "adjudicate")
        if recorded is not None and recorded.report_id is not None:
            if who == 2:
                update_scores(other, [recorded.report_id])
            else:
                update_scores(conn, [recorded.report_id], cache=cache)
        assert normalised(cached(conn)) == normalised(compute_all(conn))
    other.close()
    conn.close()


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(sequence=ops, target=st.integers(0, 10_000), value_pick=st.integers(0, 10))
def test_undo_restores_the_exact_previous_scores(
    template: Path, tmp_path: Path, sequence: list[Op], target: int, value_pick: int
) -> None:
    conn = fresh(template, tmp_path, next(_counter))
    judgments = conn.execute("SELECT id, kind FROM judgment ORDER BY id").fetchall()
    log = ReviewLog(conn, "ana")
    for action, _, pick, vp in sequence:
        if action in ("decide", "adjudicate", "confirm"):
            jid, kind_name = judgments[pick % len(judgments)]
            kind = get_kind(kind_name)
            assert kind is not None
            recorded = log.decide(jid, kind.scale.choices[vp % len(kind.scale.choices)].code, "w")
            update_scores(conn, [recorded.report_id or 0])
    before = normalised(cached(conn))
    jid, kind_name = judgments[target % len(judgments)]
    kind = get_kind(kind_name)
    assert kind is not None
    recorded = log.decide(jid, kind.scale.choices[value_pick % len(kind.scale.choices)].code, "x")
    update_scores(conn, [recorded.report_id or 0])
    undone = log.undo()
    assert undone is not None and undone.uuid != recorded.uuid
    update_scores(conn, [undone.report_id or 0])
    assert normalised(cached(conn)) == before
    conn.close()
