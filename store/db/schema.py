"""The database schema and its migrations.

``PRAGMA user_version`` holds the number of migrations applied; each migration is a list of
statements run in one transaction, so a database is always at exactly one version. Inputs are
immutable after import; the review log is append-only (triggers refuse UPDATE and DELETE); the
``decision``, ``event_live``, ``report_rating`` and ``score`` tables are derived and can be
rebuilt from the inputs and the log at any time.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from store.scores.claim_facts import CLAIM_CITED_SQL
from store.sqlite.fts import SEARCHED, search_index_sql
from store.sqlite.tx import transaction
from store.trust.schema import TABLES as TRUST_TABLES

Migration = list[str] | Callable[[sqlite3.Connection], None]


def _subjects(conn: sqlite3.Connection) -> None:
    """Version 2: human decisions belong to subjects; judge runs are activated in order.

    * ``subject`` holds what a verdict is about, with its portable target; every judgment
      links to its subject.
    * Review events name subjects (``s:<suite>/<report>/<kind>/<subject>``): decision and flag
      events written against one run's judgment (``j:<suite>/<report>/<run>/<kind>/<subject>``)
      are rewritten to their subject, and the run they were made on is kept in ``run``.
      Events also gain the author's public key and signature (none for events before this).
    * ``decision`` and ``flag`` are keyed by subject; ``report_rating`` by reviewer identity.
    * ``judge_run.active`` becomes the activation order (0: a candidate that does not count);
      active runs keep their order by creation.
    * Claims that name only their fac criterion are placed in its subtask.

    The derived tables are rebuilt from the log afterwards (see ``migrate``).
    """
    for statement in (
        """CREATE TABLE subject (
            id INTEGER PRIMARY KEY,
            report_id INTEGER NOT NULL REFERENCES report(id),
            kind TEXT NOT NULL,
            key TEXT NOT NULL,
            target TEXT NOT NULL UNIQUE,
            UNIQUE (report_id, kind, key)
        ) STRICT""",
        # A claim that names only its fac criterion belongs to that criterion's subtask (the
        # previous release left it without one), and so do the verdicts about it.
        """UPDATE claim SET subtask_id = (SELECT subtask_id FROM criterion c
                                          WHERE c.id = claim.criterion_id)
           WHERE subtask_id IS NULL AND criterion_id IS NOT NULL""",
        """UPDATE judgment SET subtask_id = (SELECT subtask_id FROM claim k
                                             WHERE k.id = judgment.claim_id)
           WHERE subtask_id IS NULL AND claim_id IS NOT NULL""",
        "ALTER TABLE judgment ADD COLUMN subject_id INTEGER REFERENCES subject(id)",
        """INSERT INTO subject (report_id, kind, key, target)
           SELECT j.report_id, j.kind, j.subject,
                  's:' || s.ext_id || '/' || r.ext_id || '/' || j.kind || '/' || j.subject
           FROM judgment j JOIN report r ON r.id = j.report_id
           JOIN system y ON y.id = r.system_id JOIN suite s ON s.id = y.suite_id
           GROUP BY j.report_id, j.kind, j.subject""",
        """UPDATE judgment SET subject_id = (
               SELECT s.id FROM subject s WHERE s.report_id = judgment.report_id
               AND s.kind = judgment.kind AND s.key = judgment.subject)""",
        "CREATE INDEX judgment_subject ON judgment(subject_id)",
        "DROP INDEX judgment_scoring",
        # Covering index for score loading: a full recompute scans this, not the wide rows.
        """CREATE INDEX judgment_scoring ON judgment(current, report_id, kind, subtask_id,
            criterion_id, claim_id, ref_idx, key, value, error, subject_id)""",
        "DROP TRIGGER review_event_no_update",
        "ALTER TABLE review_event ADD COLUMN run TEXT",
        "ALTER TABLE review_event ADD COLUMN key TEXT",
        "ALTER TABLE review_event ADD COLUMN sig TEXT",
    ):
        conn.execute(statement)
    rewritten = []
    for seq, target in conn.execute(
        "SELECT seq, target FROM review_event WHERE target LIKE 'j:%'"
    ).fetchall():
        suite, report, run, kind, subject = target[2:].split("/", 4)
        rewritten.append((f"s:{suite}/{report}/{kind}/{subject}", run, seq))
    conn.executemany("UPDATE review_event SET target = ?, run = ? WHERE seq = ?", rewritten)
    for statement in (
        """CREATE TRIGGER review_event_no_update BEFORE UPDATE ON review_event
           BEGIN SELECT RAISE(ABORT, 'the review log is append-only'); END""",
        "CREATE INDEX review_event_target ON review_event(target, seq)",
        "DROP TABLE decision",
        """CREATE TABLE decision (
            subject_id INTEGER PRIMARY KEY REFERENCES subject(id),
            value TEXT,
            status TEXT NOT NULL
                CHECK (status IN ('single', 'unanimous', 'adjudicated', 'conflict')),
            reviewers INTEGER NOT NULL,
            event_uuid TEXT NOT NULL
        ) STRICT""",
        "DROP TABLE flag",
        """CREATE TABLE flag (
            subject_id INTEGER PRIMARY KEY REFERENCES subject(id),
            event_uuid TEXT NOT NULL,
            note TEXT NOT NULL
        ) STRICT""",
        "DROP TABLE report_rating",
        """CREATE TABLE report_rating (
            report_id INTEGER NOT NULL REFERENCES report(id),
            reviewer TEXT NOT NULL,
            value TEXT NOT NULL,
            event_uuid TEXT NOT NULL,
            PRIMARY KEY (report_id, reviewer)
        ) STRICT, WITHOUT ROWID""",
        # Who has written events: a name is shown alone unless two identities share it.
        """CREATE TABLE reviewer_identity (
            name TEXT NOT NULL,
            key TEXT NOT NULL,
            PRIMARY KEY (name, key)
        ) STRICT, WITHOUT ROWID""",
        """UPDATE judge_run SET active = (
               SELECT count(*) FROM judge_run o WHERE o.active > 0
               AND (o.created_at, o.id) <= (judge_run.created_at, judge_run.id))
           WHERE active > 0""",
    ):
        conn.execute(statement)


PLANS: list[str] = [
    # Version 3: review plans. A plan is configuration a team makes, not a derived table and
    # not part of the review log: its frame (the subjects it could draw, each with its
    # stratum), its strata and its draws in review order with their probabilities.
    """CREATE TABLE plan (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL UNIQUE,
        suite_id INTEGER NOT NULL REFERENCES suite(id),
        design TEXT NOT NULL CHECK (design IN ('uniform', 'stratified', 'weighted')),
        strata TEXT NOT NULL,
        allocation TEXT,
        weight_by TEXT,
        floor REAL,
        budget INTEGER NOT NULL,
        seed INTEGER NOT NULL,
        frameworks TEXT NOT NULL,
        frame INTEGER NOT NULL,
        created_at TEXT NOT NULL,
        created_by TEXT NOT NULL,
        note TEXT NOT NULL
    ) STRICT""",
    """CREATE TABLE plan_stratum (
        plan_id INTEGER NOT NULL REFERENCES plan(id),
        stratum INTEGER NOT NULL,
        label TEXT NOT NULL,
        size INTEGER NOT NULL,
        draws INTEGER NOT NULL,
        spread REAL,
        PRIMARY KEY (plan_id, stratum)
    ) STRICT, WITHOUT ROWID""",
    """CREATE TABLE plan_frame (
        plan_id INTEGER NOT NULL REFERENCES plan(id),
        subject_id INTEGER NOT NULL REFERENCES subject(id),
        stratum INTEGER NOT NULL,
        PRIMARY KEY (plan_id, subject_id)
    ) STRICT, WITHOUT ROWID""",
    """CREATE TABLE plan_draw (
        plan_id INTEGER NOT NULL REFERENCES plan(id),
        position INTEGER NOT NULL,
        subject_id INTEGER NOT NULL REFERENCES subject(id),
        stratum INTEGER NOT NULL,
        p REAL NOT NULL,
        pi REAL NOT NULL,
        weight REAL NOT NULL,
        PRIMARY KEY (plan_id, position)
    ) STRICT, WITHOUT ROWID""",
    "CREATE INDEX plan_draw_subject ON plan_draw(subject_id, plan_id)",
]


def _suspicion(conn: sqlite3.Connection) -> None:
    """Version 4: suspicion flags per subject (derived from the verdicts and the inputs; see
    :mod:`store.triage.suspicion`), computed now for a database that has reports."""
    from store.triage.suspicion import CREATE, refresh_suspicion

    conn.execute(CREATE)
    if conn.execute("SELECT 1 FROM report LIMIT 1").fetchone() is not None:
        refresh_suspicion(conn)


INPUTS: list[str] = [
    # Version 1: the inputs, the review log and what is derived from them (the search
    # indexes follow, made by :func:`_first`).
    """CREATE TABLE meta (
            key TEXT PRIMARY KEY,
            value TEXT NOT NULL
        ) STRICT""",
    """CREATE TABLE suite (
            id INTEGER PRIMARY KEY,
            ext_id TEXT NOT NULL UNIQUE,
            name TEXT NOT NULL,
            frameworks TEXT NOT NULL,
            version TEXT NOT NULL,
            source TEXT NOT NULL,
            description TEXT NOT NULL,
            content_hash TEXT NOT NULL,
            imported_at TEXT NOT NULL
        ) STRICT""",
    """CREATE TABLE task (
            id INTEGER PRIMARY KEY,
            suite_id INTEGER NOT NULL REFERENCES suite(id),
            ext_id TEXT NOT NULL,
            prompt TEXT NOT NULL,
            language TEXT NOT NULL,
            domain TEXT NOT NULL,
            category TEXT NOT NULL,
            task_type TEXT NOT NULL,
            metadata TEXT NOT NULL,
            UNIQUE (suite_id, ext_id)
        ) STRICT""",
    """CREATE TABLE subtask (
            id INTEGER PRIMARY KEY,
            task_id INTEGER NOT NULL REFERENCES task(id),
            ext_id TEXT NOT NULL,
            ordinal INTEGER NOT NULL,
            text TEXT NOT NULL,
            importance TEXT NOT NULL CHECK (importance IN ('P0', 'P1', 'P2', 'P2a')),
            grp TEXT,
            constraint_types TEXT NOT NULL,
            UNIQUE (task_id, ext_id)
        ) STRICT""",
    """CREATE TABLE criterion (
            id INTEGER PRIMARY KEY,
            task_id INTEGER NOT NULL REFERENCES task(id),
            subtask_id INTEGER REFERENCES subtask(id),
            ext_id TEXT NOT NULL,
            ordinal INTEGER NOT NULL,
            framework TEXT NOT NULL,
            dimension TEXT NOT NULL,
            text TEXT NOT NULL,
            explanation TEXT NOT NULL,
            weight REAL,
            scale TEXT,
            metadata TEXT NOT NULL,
            UNIQUE (task_id, ext_id)
        ) STRICT""",
    """CREATE TABLE system (
            id INTEGER PRIMARY KEY,
            suite_id INTEGER NOT NULL REFERENCES suite(id),
            ext_id TEXT NOT NULL,
            name TEXT NOT NULL,
            family TEXT NOT NULL,
            version TEXT NOT NULL,
            collected_at TEXT NOT NULL,
            is_reference INTEGER NOT NULL,
            UNIQUE (suite_id, ext_id)
        ) STRICT""",
    """CREATE TABLE report (
            id INTEGER PRIMARY KEY,
            task_id INTEGER NOT NULL REFERENCES task(id),
            system_id INTEGER NOT NULL REFERENCES system(id),
            ext_id TEXT NOT NULL,
            markdown TEXT NOT NULL,
            cleaned TEXT,
            words INTEGER NOT NULL,
            metadata TEXT NOT NULL,
            UNIQUE (task_id, system_id)
        ) STRICT""",
    "CREATE INDEX report_system ON report(system_id)",
    """CREATE TABLE reference (
            report_id INTEGER NOT NULL REFERENCES report(id),
            idx INTEGER NOT NULL,
            title TEXT NOT NULL,
            url TEXT,
            PRIMARY KEY (report_id, idx)
        ) STRICT, WITHOUT ROWID""",
    "CREATE INDEX reference_url ON reference(url)",
    """CREATE TABLE claim (
            id INTEGER PRIMARY KEY,
            report_id INTEGER NOT NULL REFERENCES report(id),
            ext_id TEXT NOT NULL,
            ordinal INTEGER NOT NULL,
            subtask_id INTEGER REFERENCES subtask(id),
            criterion_id INTEGER REFERENCES criterion(id),
            fact TEXT NOT NULL,
            extract TEXT NOT NULL,
            span_start INTEGER,
            span_end INTEGER,
            citations TEXT NOT NULL,
            url TEXT,
            metadata TEXT NOT NULL,
            UNIQUE (report_id, ext_id)
        ) STRICT""",
    """CREATE TABLE source (
            id INTEGER PRIMARY KEY,
            suite_id INTEGER NOT NULL REFERENCES suite(id),
            url TEXT NOT NULL,
            title TEXT NOT NULL,
            fetched_at TEXT NOT NULL,
            text TEXT NOT NULL,
            sha256 TEXT NOT NULL,
            error TEXT,
            metadata TEXT NOT NULL DEFAULT '{}',
            UNIQUE (suite_id, url)
        ) STRICT""",
    """CREATE TABLE judge_run (
            id INTEGER PRIMARY KEY,
            suite_id INTEGER NOT NULL REFERENCES suite(id),
            ext_id TEXT NOT NULL,
            model TEXT NOT NULL,
            prompt_version TEXT NOT NULL,
            params TEXT NOT NULL,
            created_at TEXT NOT NULL,
            description TEXT NOT NULL,
            active INTEGER NOT NULL DEFAULT 1,
            usage TEXT NOT NULL DEFAULT '{}',
            UNIQUE (suite_id, ext_id)
        ) STRICT""",
    """CREATE TABLE judgment (
            id INTEGER PRIMARY KEY,
            run_id INTEGER NOT NULL REFERENCES judge_run(id),
            report_id INTEGER NOT NULL REFERENCES report(id),
            kind TEXT NOT NULL,
            criterion_id INTEGER REFERENCES criterion(id),
            claim_id INTEGER REFERENCES claim(id),
            ref_idx INTEGER,
            key TEXT,
            subject TEXT NOT NULL,
            value TEXT,
            explanation TEXT NOT NULL,
            evidence TEXT NOT NULL,
            raw TEXT NOT NULL,
            error TEXT,
            source_sha256 TEXT,
            current INTEGER NOT NULL DEFAULT 1,
            subtask_id INTEGER REFERENCES subtask(id),
            UNIQUE (run_id, report_id, kind, subject)
        ) STRICT""",
    "CREATE INDEX judgment_report ON judgment(report_id, current)",
    # Covering index for score loading: a full recompute scans this, not the wide rows.
    """CREATE INDEX judgment_scoring ON judgment(current, report_id, kind, subtask_id,
            criterion_id, claim_id, ref_idx, key, value, error)""",
    "CREATE INDEX judgment_claim ON judgment(claim_id)",
    """CREATE TABLE review_event (
            seq INTEGER PRIMARY KEY,
            uuid TEXT NOT NULL UNIQUE,
            target TEXT NOT NULL,
            judgment_id INTEGER REFERENCES judgment(id),
            report_id INTEGER REFERENCES report(id),
            reviewer TEXT NOT NULL,
            action TEXT NOT NULL CHECK (action IN
                ('confirm', 'override', 'adjudicate', 'flag', 'rate', 'propose', 'accept',
                 'reject', 'undo', 'redo')),
            value TEXT,
            rationale TEXT NOT NULL,
            reason TEXT,
            created_at TEXT NOT NULL,
            supersedes TEXT
        ) STRICT""",
    "CREATE INDEX review_event_reviewer ON review_event(reviewer, seq)",
    "CREATE INDEX review_event_judgment ON review_event(judgment_id, seq)",
    "CREATE INDEX review_event_report ON review_event(report_id, seq)",
    "CREATE INDEX review_event_supersedes ON review_event(supersedes)",
    """CREATE TRIGGER review_event_no_update BEFORE UPDATE ON review_event
           BEGIN SELECT RAISE(ABORT, 'the review log is append-only'); END""",
    """CREATE TRIGGER review_event_no_delete BEFORE DELETE ON review_event
           BEGIN SELECT RAISE(ABORT, 'the review log is append-only'); END""",
    """CREATE TABLE event_live (
            uuid TEXT PRIMARY KEY,
            live INTEGER NOT NULL
        ) STRICT, WITHOUT ROWID""",
    """CREATE TABLE decision (
            judgment_id INTEGER PRIMARY KEY REFERENCES judgment(id),
            value TEXT,
            status TEXT NOT NULL
                CHECK (status IN ('single', 'unanimous', 'adjudicated', 'conflict')),
            reviewers INTEGER NOT NULL,
            event_uuid TEXT NOT NULL
        ) STRICT""",
    """CREATE TABLE flag (
            judgment_id INTEGER PRIMARY KEY REFERENCES judgment(id),
            event_uuid TEXT NOT NULL
        ) STRICT""",
    """CREATE TABLE report_rating (
            report_id INTEGER NOT NULL REFERENCES report(id),
            reviewer TEXT NOT NULL,
            value TEXT NOT NULL,
            event_uuid TEXT NOT NULL,
            PRIMARY KEY (report_id, reviewer)
        ) STRICT, WITHOUT ROWID""",
    """CREATE TABLE score (
            scope TEXT NOT NULL,
            framework TEXT NOT NULL,
            metric TEXT NOT NULL,
            variant TEXT NOT NULL,
            value REAL,
            n INTEGER NOT NULL,
            PRIMARY KEY (scope, framework, variant, metric)
        ) STRICT, WITHOUT ROWID""",
    # Ground-truth expansions proposed by reviewers. The row is the immutable proposal;
    # its status (accepted, rejected) comes from review events that target it.
    """CREATE TABLE proposal (
            id INTEGER PRIMARY KEY,
            uuid TEXT NOT NULL UNIQUE,
            suite_id INTEGER NOT NULL REFERENCES suite(id),
            task_id INTEGER NOT NULL REFERENCES task(id),
            report_id INTEGER REFERENCES report(id),
            framework TEXT NOT NULL,
            kind TEXT NOT NULL
                CHECK (kind IN ('new_claim', 'new_rubric', 'alias', 'extra_evidence')),
            target TEXT,
            payload TEXT NOT NULL,
            normalized TEXT NOT NULL,
            span_start INTEGER,
            span_end INTEGER,
            reviewer TEXT NOT NULL,
            rationale TEXT NOT NULL,
            duplicate_of TEXT,
            created_at TEXT NOT NULL
        ) STRICT""",
    "CREATE INDEX proposal_task ON proposal(task_id)",
    # LLM judge responses, keyed by (prompt version, model, input hash): a re-run is free.
    """CREATE TABLE judge_cache (
            key TEXT PRIMARY KEY,
            model TEXT NOT NULL,
            prompt_version TEXT NOT NULL,
            response TEXT NOT NULL,
            usage TEXT NOT NULL,
            created_at TEXT NOT NULL
        ) STRICT, WITHOUT ROWID""",
    # Pages fetched by `gavel fetch` / `gavel judge`: every fetch is kept (a page can change
    # between runs); judgments name the version they saw by sha256.
    """CREATE TABLE page_fetch (
            id INTEGER PRIMARY KEY,
            suite_id INTEGER NOT NULL REFERENCES suite(id),
            run_id INTEGER REFERENCES judge_run(id),
            url TEXT NOT NULL,
            final_url TEXT,
            fetched_at TEXT NOT NULL,
            status INTEGER,
            content_type TEXT,
            title TEXT NOT NULL,
            text TEXT NOT NULL,
            sha256 TEXT NOT NULL,
            error TEXT
        ) STRICT""",
    "CREATE INDEX page_fetch_url ON page_fetch(suite_id, url, fetched_at)",
    """CREATE TABLE impact (
            report_id INTEGER PRIMARY KEY REFERENCES report(id),
            primary_delta REAL NOT NULL,
            secondary_delta REAL NOT NULL,
            judgment_id INTEGER
        ) STRICT""",
]


def _first(conn: sqlite3.Connection) -> None:
    """Version 1: the tables, then the search indexes over reports, claims and sources (in
    the form sqlite-utils writes: :func:`store.sqlite.fts.search_index_sql`)."""
    for statement in INPUTS:
        conn.execute(statement)
    for table in SEARCHED:
        conn.execute(search_index_sql(table))


def _general_actions(conn: sqlite3.Connection) -> None:
    """The review log's table with its action checked for form, not against a list: which
    actions exist is the event model's to say (:mod:`reviewer.logfile`), so a new kind of
    event (a claim of a name, an assignment) needs no copy of the whole log. SQLite cannot
    change a CHECK in place; the table is copied once, in log order, with its indexes and
    append-only triggers."""
    conn.execute(
        """CREATE TABLE review_event_general (
            seq INTEGER PRIMARY KEY,
            uuid TEXT NOT NULL UNIQUE,
            target TEXT NOT NULL,
            judgment_id INTEGER REFERENCES judgment(id),
            report_id INTEGER REFERENCES report(id),
            reviewer TEXT NOT NULL,
            action TEXT NOT NULL CHECK (length(action) BETWEEN 1 AND 32
                AND action NOT GLOB '*[^a-z_-]*'),
            value TEXT,
            rationale TEXT NOT NULL,
            reason TEXT,
            created_at TEXT NOT NULL,
            supersedes TEXT,
            run TEXT,
            key TEXT,
            sig TEXT
        ) STRICT"""
    )
    conn.execute(
        """INSERT INTO review_event_general (seq, uuid, target, judgment_id, report_id,
               reviewer, action, value, rationale, reason, created_at, supersedes, run, key, sig)
           SELECT seq, uuid, target, judgment_id, report_id, reviewer, action, value,
               rationale, reason, created_at, supersedes, run, key, sig
           FROM review_event ORDER BY seq"""
    )
    conn.execute("DROP TABLE review_event")
    conn.execute("ALTER TABLE review_event_general RENAME TO review_event")
    for statement in (
        "CREATE INDEX review_event_reviewer ON review_event(reviewer, seq)",
        "CREATE INDEX review_event_judgment ON review_event(judgment_id, seq)",
        "CREATE INDEX review_event_report ON review_event(report_id, seq)",
        "CREATE INDEX review_event_supersedes ON review_event(supersedes)",
        "CREATE INDEX review_event_target ON review_event(target, seq)",
        """CREATE TRIGGER review_event_no_update BEFORE UPDATE ON review_event
           BEGIN SELECT RAISE(ABORT, 'the review log is append-only'); END""",
        """CREATE TRIGGER review_event_no_delete BEFORE DELETE ON review_event
           BEGIN SELECT RAISE(ABORT, 'the review log is append-only'); END""",
    ):
        conn.execute(statement)
    # The keys whose adjudications rule here (store.reviewlog.events.rulings): those that
    # already adjudicated in this database keep doing so.
    conn.execute(
        """CREATE TABLE IF NOT EXISTS adjudicator_key (
            name TEXT NOT NULL,
            key TEXT NOT NULL,
            added_at TEXT NOT NULL,
            how TEXT NOT NULL,
            PRIMARY KEY (name, key)
        ) STRICT, WITHOUT ROWID"""
    )
    conn.execute(
        """INSERT OR IGNORE INTO adjudicator_key
           SELECT reviewer, key, strftime('%Y-%m-%dT%H:%M:%fZ'), 'adjudicated before keys were'
               || ' trusted' FROM review_event
           WHERE action = 'adjudicate' AND key IS NOT NULL ORDER BY seq"""
    )


# Version 8: assignments are review events (reviewer.assignment) that version 7's check already
# admits; a reviewer's queue reads only their own, through this index.
_ASSIGNEES: list[str] = [
    """CREATE INDEX review_event_assignee ON review_event(json_extract(value, '$.to'), target)
       WHERE action = 'assign'""",
]


# Version 9: a proposal of kind 'revise_item' (reviewer.judge_card: a rubric item the judge
# and the humans disagree on); SQLite cannot widen a CHECK in place, so the table is rebuilt.
_REVISE_ITEM: list[str] = [
    """CREATE TABLE proposal_widened (
            id INTEGER PRIMARY KEY,
            uuid TEXT NOT NULL UNIQUE,
            suite_id INTEGER NOT NULL REFERENCES suite(id),
            task_id INTEGER NOT NULL REFERENCES task(id),
            report_id INTEGER REFERENCES report(id),
            framework TEXT NOT NULL,
            kind TEXT NOT NULL CHECK (kind IN
                ('new_claim', 'new_rubric', 'alias', 'extra_evidence', 'revise_item')),
            target TEXT,
            payload TEXT NOT NULL,
            normalized TEXT NOT NULL,
            span_start INTEGER,
            span_end INTEGER,
            reviewer TEXT NOT NULL,
            rationale TEXT NOT NULL,
            duplicate_of TEXT,
            created_at TEXT NOT NULL
        ) STRICT""",
    "INSERT INTO proposal_widened SELECT * FROM proposal",
    "DROP TABLE proposal",
    "ALTER TABLE proposal_widened RENAME TO proposal",
    "CREATE INDEX proposal_task ON proposal(task_id)",
]


# Version 11: releases of assignments (``unassign`` events, reviewer.assignment.Release), which
# version 7's check already admits; whoever reads who holds what finds them through this index.
_RELEASES: list[str] = [
    """CREATE INDEX review_event_released ON review_event(json_extract(value, '$.from'), target)
       WHERE action = 'unassign'""",
]


MIGRATIONS: list[Migration] = [
    _first,  # 1: inputs, review log, derived tables, search indexes
    _subjects,  # 2: decisions belong to subjects; runs are candidates until activated
    PLANS,  # 3: review plans
    _suspicion,  # 4: suspicion flags per subject
    [  # 5: each system's report scores as columns, beside the score rows (store.scores.columns)
        """CREATE TABLE score_columns (
            system_id INTEGER NOT NULL,
            framework TEXT NOT NULL,
            variant TEXT NOT NULL,
            data BLOB NOT NULL,
            PRIMARY KEY (system_id, framework, variant)
        ) STRICT, WITHOUT ROWID""",
    ],
    [  # 6: a report's scores in one row (store.scores.report_rows); a claim verdict carries its
        # claim's citation fact (store.scores.claim_facts), so a full recompute joins nothing
        """CREATE TABLE report_score (
            report_id INTEGER NOT NULL,
            framework TEXT NOT NULL,
            variant TEXT NOT NULL,
            metrics TEXT NOT NULL,
            data BLOB NOT NULL,
            PRIMARY KEY (report_id, framework, variant)
        ) STRICT, WITHOUT ROWID""",
        "DELETE FROM score WHERE scope >= 'report:' AND scope < 'report;'",
        # The few claims with metadata (a judge run's extractions), without reading the rest.
        "CREATE INDEX claim_metadata ON claim(report_id) WHERE metadata != '{}'",
        "ALTER TABLE judgment ADD COLUMN claim_cited INTEGER",
        # (Filled before any index holds it: the index is built once, not row by row.)
        f"UPDATE judgment SET claim_cited = {CLAIM_CITED_SQL} WHERE claim_id IS NOT NULL",
        # Covering for what a decision's or flag's verdict is read for: a few thousand
        # decisions find theirs without reading a wide row each (or scanning every verdict).
        "DROP INDEX judgment_subject",
        """CREATE INDEX judgment_subject ON judgment(subject_id, current, report_id, kind,
            value, subtask_id, claim_cited)""",
        "DROP INDEX judgment_scoring",
        # Covering index for score loading: a full recompute scans this, not the wide rows,
        # counting in its order down to the value.
        """CREATE INDEX judgment_scoring ON judgment(current, report_id, kind, subtask_id,
            claim_cited, value, criterion_id, claim_id, ref_idx, key, error, subject_id)""",
    ],
    _general_actions,  # 7: actions checked for form (a claim, ...); trusted adjudicators
    _ASSIGNEES,  # 8: who each assignment is for, indexed
    _REVISE_ITEM,  # 9: a proposal may ask to revise a rubric item (the judge card)
    TRUST_TABLES,  # 10: trust rules and the verdicts they accept (store.trust.schema)
    _RELEASES,  # 11: who each release of an assignment is from, indexed
]

_DERIVED_UNCHANGED = {2, 3, 4, 7, 8, 9, 10}
"""Migrations (by index) that leave every derived table valid: no rebuild after them (the
suspicion migration, 3, computes its own derived table; the score columns, 4, are filled by
the next full recompute, and a system without them is read from its score rows meanwhile; the
assignees' index, 7, is an index; a proposal kind, 8, and the trust tables, 9, are new inputs
that nothing derived reads yet; the releases' index, 10, is an index)."""

SCHEMA_VERSION = len(MIGRATIONS)


class SchemaError(Exception):
    """The database was written by a newer Gavel."""


def migrate(conn: sqlite3.Connection) -> int:
    """Bring the schema to ``SCHEMA_VERSION``; returns the number of migrations applied."""
    current = int(conn.execute("PRAGMA user_version").fetchone()[0])
    if current > SCHEMA_VERSION:
        raise SchemaError(
            f"database schema version {current} is newer than this Gavel's ({SCHEMA_VERSION})"
        )
    applied = 0
    for version in range(current, SCHEMA_VERSION):
        with transaction(conn):
            # Read again under the write lock: another connection (the workstation's
            # reader and writer open the file at once) may have applied this step since.
            if int(conn.execute("PRAGMA user_version").fetchone()[0]) > version:
                continue
            step = MIGRATIONS[version]
            if callable(step):
                step(conn)
            else:
                for statement in step:
                    conn.execute(statement)
            if version > 0 and version not in _DERIVED_UNCHANGED:
                _rebuild_derived(conn, scores=_last_rebuild(version))
            conn.execute(f"PRAGMA user_version = {version + 1}")
        applied += 1
    return applied


def _last_rebuild(version: int) -> bool:
    """Whether no later migration rebuilds derived state (this one then computes scores)."""
    return all(later in _DERIVED_UNCHANGED for later in range(version + 1, SCHEMA_VERSION))


def _rebuild_derived(conn: sqlite3.Connection, *, scores: bool) -> None:
    """After a migration of a database with content: derived tables from inputs and log, so
    each version committed is consistent (a later migration reads them: the suspicion flags
    read which verdicts are in force).

    Scores only by the last migration that rebuilds: the code that computes them reads
    today's tables. An earlier one marks them behind, so that an upgrade stopped half-way —
    or one whose last step keeps derived tables — rebuilds them on the next open
    (:func:`store.scores.cache.ensure_scores`), whichever release opens it."""
    if (
        conn.execute("SELECT 1 FROM judgment LIMIT 1").fetchone() is None
        and conn.execute("SELECT 1 FROM review_event LIMIT 1").fetchone() is None
    ):
        return
    from store.reviewlog.events import rebuild_state
    from store.reviewlog.subjects import refresh_current
    from store.scores.cache import mark_scores_behind, rebuild_scores

    refresh_current(conn)
    rebuild_state(conn)
    if scores:
        rebuild_scores(conn)
    else:
        mark_scores_behind(conn, "schema upgraded")
