"""The tables of trust rules (one migration step, :data:`store.db.schema.MIGRATIONS`).

A rule and the verdicts it accepted are local state, not review events: an acceptance is
no one's decision, so it never enters the review log, never merges and never reaches the
hub. Another database gets its own by calibrating on its own labels (``gavel trust apply``).
"""

from __future__ import annotations

TABLES: list[str] = [
    # AUTOINCREMENT: a cleared rule's name is never given to another.
    """CREATE TABLE trust_rule (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        name TEXT NOT NULL UNIQUE,
        plan_id INTEGER NOT NULL REFERENCES plan(id),
        alpha REAL NOT NULL,
        delta REAL NOT NULL,
        threshold REAL NOT NULL,
        labels INTEGER NOT NULL,
        effective REAL NOT NULL,
        upper REAL NOT NULL,
        weighted INTEGER NOT NULL,
        created_at TEXT NOT NULL,
        created_by TEXT NOT NULL
    ) STRICT""",
    """CREATE TABLE trust_accepted (
        subject_id INTEGER NOT NULL REFERENCES subject(id),
        rule_id INTEGER NOT NULL REFERENCES trust_rule(id),
        judgment_id INTEGER NOT NULL REFERENCES judgment(id),
        report_id INTEGER NOT NULL REFERENCES report(id),
        score REAL NOT NULL,
        PRIMARY KEY (subject_id, rule_id)
    ) STRICT, WITHOUT ROWID""",
    "CREATE INDEX trust_accepted_report ON trust_accepted(report_id)",
]
