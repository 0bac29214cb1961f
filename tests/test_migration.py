"""A database and a review log from the previous release (schema version 1, decisions keyed to
one run's judgment rows) upgrade to subjects without losing or changing a decision."""

from __future__ import annotations

import io
import shutil
import sqlite3
from pathlib import Path

import pytest

from reviewer.logfile import read_events
from store.db.connection import connect
from store.db.schema import SCHEMA_VERSION
from store.imports.loader import import_bundle
from store.reviewlog.events import ReviewLog, pending_events, rebuild_state
from store.reviews.merge import merge_events, write_log
from store.scores.cache import cached, compute_all, rebuild_scores
from tests.builders import tiny_bundle
from tests.score_rows import score_rows

V1 = Path(__file__).resolve().parent / "fixtures" / "v1"


def v1_state(path: Path) -> dict[str, object]:
    """What the old release had derived, read with plain SQL on the old schema."""
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == 1
        return {
            "events": conn.execute(
                "SELECT uuid, reviewer, action, value, rationale, created_at, supersedes "
                "FROM review_event ORDER BY seq"
            ).fetchall(),
            "decisions": sorted(
                conn.execute(
                    """SELECT r.ext_id, j.kind, j.subject, d.value, d.status, d.reviewers
                   FROM decision d JOIN judgment j ON j.id = d.judgment_id
                   JOIN report r ON r.id = j.report_id"""
                ).fetchall()
            ),
            "flags": sorted(
                conn.execute(
                    """SELECT r.ext_id, j.kind, j.subject FROM flag f
                   JOIN judgment j ON j.id = f.judgment_id
                   JOIN report r ON r.id = j.report_id"""
                ).fetchall()
            ),
            "ratings": sorted(
                conn.execute(
                    """SELECT r.ext_id, rr.reviewer, rr.value FROM report_rating rr
                   JOIN report r ON r.id = rr.report_id"""
                ).fetchall()
            ),
            "scores": sorted(
                conn.execute(
                    "SELECT scope, framework, variant, metric, value, n FROM score"
                ).fetchall()
            ),
        }
    finally:
        conn.close()


def v2_state(conn: sqlite3.Connection) -> dict[str, object]:
    return {
        "events": conn.execute(
            "SELECT uuid, reviewer, action, value, rationale, created_at, supersedes "
            "FROM review_event ORDER BY seq"
        ).fetchall(),
        "decisions": sorted(
            conn.execute(
                """SELECT r.ext_id, s.kind, s.key, d.value, d.status, d.reviewers
               FROM decision d JOIN subject s ON s.id = d.subject_id
               JOIN report r ON r.id = s.report_id"""
            ).fetchall()
        ),
        "flags": sorted(
            conn.execute(
                """SELECT r.ext_id, s.kind, s.key FROM flag f JOIN subject s ON s.id = f.subject_id
               JOIN report r ON r.id = s.report_id"""
            ).fetchall()
        ),
        "ratings": sorted(
            conn.execute(
                """SELECT r.ext_id, rr.reviewer, rr.value FROM report_rating rr
               JOIN report r ON r.id = rr.report_id"""
            ).fetchall()
        ),
        "scores": score_rows(conn),
    }


def test_a_version_1_database_upgrades_with_every_decision(tmp_path: Path) -> None:
    path = tmp_path / "ana.db"
    shutil.copy(V1 / "ana.db", path)
    before = v1_state(path)
    # By construction (tests/fixtures/v1/README.md): 11 events; ana and ben disagree on c1,
    # agree on beta's s1-ins; ana's s2-ins override stands, her k=c2 override is undone.
    assert len(before["events"]) == 11  # type: ignore[arg-type]
    assert before["decisions"] == [
        ("t1-alpha", "claim", "k=c1", None, "conflict", 2),
        ("t1-alpha", "ins", "c=s2-ins", "0.5", "single", 1),
        ("t1-beta", "ins", "c=s1-ins", "0", "unanimous", 2),
    ]
    conn = connect(path)  # migrates
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 11
    tables = {n for (n,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert {"plan", "plan_draw", "suspicion"} <= tables  # 3: review plans, 4: suspicion flags
    assert {"trust_rule", "trust_accepted"} <= tables  # 9: trust rules
    after = v2_state(conn)
    # Every event, decision, flag and rating; the scores are recomputed (below) under this
    # release's scoring, which pools system numbers over subtasks by default.
    assert {k: v for k, v in after.items() if k != "scores"} == {
        k: v for k, v in before.items() if k != "scores"
    }
    headline = ("Ins", "Fac", "Rat", "UserPref")
    old: list[tuple[str, ...]] = before["scores"]  # type: ignore[assignment]
    new: list[tuple[str, ...]] = after["scores"]  # type: ignore[assignment]
    assert {s for s in old if s[0].startswith("report:") and s[3] in headline} <= set(new)
    targets = conn.execute("SELECT target, run FROM review_event ORDER BY seq").fetchall()
    assert targets[0] == ("s:tiny/t1-alpha/claim/k=c1", "r1")  # the run kept as provenance
    assert ("r:tiny/t1-alpha", None) in targets
    assert not any(t.startswith("j:") for t, _ in targets)
    # Derived state is exactly what the log gives from scratch, and scores a full recompute.
    rebuild_state(conn)
    assert v2_state(conn) == after
    assert cached(conn).reports == compute_all(conn).reports
    # ana, now signing, can still undo her own decisions from before signing, once she has
    # claimed them (a key that merely says "ana" cannot).
    ana = ReviewLog(conn, "ana")
    assert ana.undo() is None
    ana.claim()
    undone = ana.undo()
    assert undone is not None and undone.action == "undo" and undone.reverted == "rate"
    assert conn.execute("SELECT count(*) FROM report_rating").fetchone()[0] == 0
    conn.close()


def test_a_version_1_log_merges_into_a_new_database(tmp_path: Path) -> None:
    fresh = connect(tmp_path / "fresh.db")
    import_bundle(fresh, tiny_bundle(), "h")
    rebuild_scores(fresh)
    text = (V1 / "ana-v1.jsonl").read_text(encoding="utf-8")
    assert text.count('"j:') == 10  # the old form: one run's judgment
    result = merge_events(fresh, read_events(io.StringIO(text), "ana-v1.jsonl"), "ana-v1.jsonl")
    assert (result.added, result.pending, result.unsigned) == (11, 0, 11)
    upgraded = tmp_path / "ana.db"
    shutil.copy(V1 / "ana.db", upgraded)
    migrated = connect(upgraded)
    assert v2_state(fresh)["decisions"] == v2_state(migrated)["decisions"]
    # The migrated database holds the same events as the old log: merging it adds nothing,
    # and the two export the same log.
    again = merge_events(migrated, read_events(io.StringIO(text), "ana-v1.jsonl"), "x")
    assert again.added == 0 and again.already_present == 11
    out_fresh, out_migrated = io.StringIO(), io.StringIO()
    write_log(fresh, out_fresh)
    write_log(migrated, out_migrated)
    assert out_fresh.getvalue() == out_migrated.getvalue()
    assert pending_events(fresh) == pending_events(migrated) == 0
    fresh.close()
    migrated.close()


def test_a_system_without_stored_columns_gains_them_as_it_is_used(tmp_path: Path) -> None:
    # A database upgraded to version 5 has no score columns until a full recompute; meanwhile
    # a decision reads its system from the report scores and stores the columns.
    from store.scores.columns import load_columns

    conn = connect(tmp_path / "v5.db")
    import_bundle(conn, tiny_bundle(), "h")
    rebuild_scores(conn)
    conn.execute("DELETE FROM score_columns")
    conn.commit()
    jid, system_id = conn.execute(
        """SELECT j.id, r.system_id FROM judgment j JOIN report r ON r.id = j.report_id
           WHERE j.kind = 'ins' AND j.value IS NOT NULL LIMIT 1"""
    ).fetchone()
    from store.scores.cache import update_scores

    recorded = ReviewLog(conn, "ana").decide(jid, "0", "not covered")
    update_scores(conn, [recorded.report_id or 0])
    assert cached(conn) == compute_all(conn)
    assert load_columns(conn, system_id, "cascade", "adjudicated") is not None


def _as_version_5(conn: sqlite3.Connection) -> None:
    """Turn a database of this release back into version 5: report scores as score rows, no
    citation fact on the verdicts (and the indexes as they were)."""
    rows = [r for r in score_rows(conn) if r[0].startswith("report:")]
    conn.execute("DROP TABLE trust_accepted")  # 10: trust rules
    conn.execute("DROP TABLE trust_rule")
    conn.execute("DROP TABLE report_score")
    conn.execute("DROP INDEX claim_metadata")
    conn.execute("DROP INDEX judgment_scoring")
    conn.execute("DROP INDEX judgment_subject")
    conn.execute("ALTER TABLE judgment DROP COLUMN claim_cited")
    conn.execute("""CREATE INDEX judgment_scoring ON judgment(current, report_id, kind,
        subtask_id, criterion_id, claim_id, ref_idx, key, value, error, subject_id)""")
    conn.execute("CREATE INDEX judgment_subject ON judgment(subject_id)")
    conn.executemany(
        "INSERT INTO score (scope, framework, variant, metric, value, n) VALUES (?,?,?,?,?,?)", rows
    )
    conn.execute("PRAGMA user_version = 5")
    conn.commit()


def test_a_version_5_database_gains_report_rows_and_citation_facts(
    synthetic: Path, tmp_path: Path
) -> None:
    from store.imports.from_path import import_path

    path = tmp_path / "v5.db"
    conn = connect(path)
    import_path(conn, synthetic)
    rebuild_scores(conn)
    jid = conn.execute("SELECT id FROM judgment WHERE kind = 'claim' LIMIT 1").fetchone()[0]
    ReviewLog(conn, "ana").decide(jid, "incorrect", "unsupported")
    rebuild_scores(conn)
    written = conn.execute("SELECT id, claim_cited FROM judgment ORDER BY id").fetchall()
    before = score_rows(conn)
    assert {c for _, c in written} >= {1, None}
    _as_version_5(conn)
    conn.close()
    conn = connect(path)  # migrates to 6, 7 (claims, trusted adjudicators), 8 (assignees), 9, 10
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 11
    # The migration computes in SQL what the importer wrote: every verdict the same fact.
    assert conn.execute("SELECT id, claim_cited FROM judgment ORDER BY id").fetchall() == written
    assert conn.execute("SELECT count(*) FROM score WHERE scope LIKE 'report:%'").fetchone()[0] == 0
    assert score_rows(conn) == before
    assert cached(conn) == compute_all(conn)


def test_an_upgrade_computes_suspicion_from_the_verdicts_in_force(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Version 4's suspicion flags read which verdicts are in force: version 2's rebuild must
    # have chosen them (here the old database had none marked) before version 4 computes.
    import store.triage.suspicion as suspicion

    path = tmp_path / "ana.db"
    shutil.copy(V1 / "ana.db", path)
    raw = sqlite3.connect(path)
    raw.execute("UPDATE judgment SET current = 0")
    raw.commit()
    raw.close()
    seen: list[int] = []
    real = suspicion.refresh_suspicion

    def spy(conn: sqlite3.Connection, *args: object, **kwargs: object) -> int:
        seen.append(conn.execute("SELECT sum(current) FROM judgment").fetchone()[0] or 0)
        return real(conn, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(suspicion, "refresh_suspicion", spy)
    conn = connect(path)
    in_force = conn.execute("SELECT sum(current) FROM judgment").fetchone()[0]
    assert seen and seen[0] == in_force > 0
    assert conn.execute("SELECT 1 FROM meta WHERE key = 'scores_behind'").fetchone() is None
    conn.close()


def test_two_connections_migrating_at_once_apply_each_step_once(tmp_path: Path) -> None:
    """The workstation's reader and writer open an old file together: both read its version
    before either holds the write lock, and the second must not apply a step again."""
    import threading

    from store.db.schema import migrate

    path = tmp_path / "old.db"
    connect(path).close()
    setup = sqlite3.connect(path, isolation_level=None)
    setup.execute("DROP TABLE trust_accepted")  # back to the version before the last steps
    setup.execute("DROP TABLE trust_rule")
    setup.execute("DROP INDEX review_event_released")
    setup.execute(f"PRAGMA user_version = {SCHEMA_VERSION - 2}")
    setup.execute("BEGIN IMMEDIATE")  # holds both migrations at their first write
    waiting = threading.Barrier(3)
    errors: list[BaseException] = []

    def migrate_from_a_second_connection() -> None:
        conn = sqlite3.connect(path, isolation_level=None, timeout=30)
        began = threading.Event()

        def trace(statement: str) -> None:
            if statement == "BEGIN IMMEDIATE" and not began.is_set():
                began.set()
                waiting.wait(timeout=30)

        conn.set_trace_callback(trace)
        try:
            migrate(conn)
        except BaseException as error:  # reported by the test thread
            errors.append(error)
        finally:
            conn.close()

    threads = [threading.Thread(target=migrate_from_a_second_connection) for _ in range(2)]
    for thread in threads:
        thread.start()
    waiting.wait(timeout=30)  # both have read the old version and asked for the lock
    setup.execute("COMMIT")
    for thread in threads:
        thread.join(timeout=60)
    assert errors == []
    assert setup.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    tables = {r[0] for r in setup.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert {"trust_rule", "trust_accepted"} <= tables
