"""``gavel.db`` as Datasette shows it: titles, descriptions, search, labels and canned queries.

Datasette (and ``sqlite-utils``) can open a Gavel database as it is; this metadata makes it
read like Gavel: the review queue, the judge's disagreements with the humans and the gold
labels as canned queries, each table described, search boxes on reports, claims and sources,
and foreign keys shown by what a person would call the row. The queries read the same tables,
with the same rules, as the workstation and the exports do (tests/test_datasette.py holds
them to :func:`store.views.screens.queue_rows` and :func:`store.exports.gold.gold_records`).

Datasette keys a database's metadata by the file's name without its suffix, so the file is
written for one database: ``python -m store.db.datasette gavel.db > metadata.json``
(docs/datasette.md). Nothing here imports Datasette: the metadata is plain data.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

RESOLVED = "d.status IN ('single', 'unanimous', 'adjudicated')"
"""A human label: decided by one reviewer, by every reviewer alike, or adjudicated (a
conflict is not a label yet)."""

QUEUE_SQL = """
SELECT su.ext_id AS suite, t.ext_id AS task, y.ext_id AS system, r.ext_id AS report,
       r.id AS report_id, t.domain, r.words,
       CASE WHEN v.verdicts > 0 AND coalesce(h.decided, 0) >= v.verdicts THEN 'done'
            WHEN h.decided > 0 THEN 'in progress' ELSE 'new' END AS status,
       coalesce(v.verdicts, 0) AS verdicts, coalesce(h.decided, 0) AS decided,
       coalesce(h.differs, 0) AS judge_overruled, coalesce(h.conflicts, 0) AS conflicts,
       coalesce(f.flags, 0) AS flags, coalesce(x.suspects, 0) AS suspicious_undecided,
       g.ratings
FROM report r
JOIN task t ON t.id = r.task_id
JOIN system y ON y.id = r.system_id
JOIN suite su ON su.id = y.suite_id
LEFT JOIN (SELECT report_id, count(*) AS verdicts FROM judgment WHERE current = 1
           GROUP BY report_id) v ON v.report_id = r.id
LEFT JOIN (SELECT j.report_id, count(*) AS decided,
                  sum(d.status != 'conflict' AND d.value IS NOT j.value) AS differs,
                  sum(d.status = 'conflict') AS conflicts
           FROM decision d JOIN judgment j ON j.subject_id = d.subject_id
           WHERE j.current = 1 GROUP BY j.report_id) h ON h.report_id = r.id
LEFT JOIN (SELECT j.report_id, count(*) AS flags
           FROM flag f JOIN judgment j ON j.subject_id = f.subject_id
           WHERE j.current = 1 GROUP BY j.report_id) f ON f.report_id = r.id
LEFT JOIN (SELECT s.report_id, count(DISTINCT x.subject_id) AS suspects
           FROM suspicion x JOIN subject s ON s.id = x.subject_id
           LEFT JOIN decision d ON d.subject_id = x.subject_id
           WHERE d.subject_id IS NULL OR d.status = 'conflict'
           GROUP BY s.report_id) x ON x.report_id = r.id
LEFT JOIN (SELECT report_id, group_concat(reviewer || ':' || value, ' ') AS ratings
           FROM report_rating GROUP BY report_id) g ON g.report_id = r.id
WHERE y.is_reference = 0
ORDER BY status = 'done', suspicious_undecided DESC, su.id, t.id, y.id
"""

DISAGREEMENTS_SQL = f"""
SELECT sj.target, su.ext_id AS suite, t.ext_id AS task, y.ext_id AS system,
       r.ext_id AS report, sj.kind, coalesce(c.dimension, kc.dimension, '') AS dimension,
       sj.key AS subject, coalesce(c.text, k.extract) AS what,
       jr.ext_id AS judge_run, jr.model AS judge_model, j.value AS judge_value,
       d.value AS human_value, d.status, d.reviewers, e.reviewer AS decided_by,
       e.rationale, e.reason, j.explanation AS judge_explanation
FROM decision d
JOIN subject sj ON sj.id = d.subject_id
JOIN judgment j ON j.subject_id = d.subject_id AND j.current = 1
JOIN judge_run jr ON jr.id = j.run_id
JOIN report r ON r.id = sj.report_id
JOIN task t ON t.id = r.task_id
JOIN system y ON y.id = r.system_id
JOIN suite su ON su.id = y.suite_id
LEFT JOIN criterion c ON c.id = j.criterion_id
LEFT JOIN claim k ON k.id = j.claim_id
LEFT JOIN criterion kc ON kc.id = k.criterion_id
LEFT JOIN review_event e ON e.uuid = d.event_uuid
WHERE {RESOLVED} AND j.value IS NOT NULL AND d.value IS NOT j.value
ORDER BY su.ext_id, r.ext_id, sj.kind, sj.key
"""

GOLD_SQL = f"""
SELECT s.target, su.ext_id AS suite, t.ext_id AS task, y.ext_id AS system,
       r.ext_id AS report, s.kind, s.key AS subject, d.value AS human_value, d.status,
       d.reviewers, j.value AS judge_value, jr.ext_id AS judge_run,
       CASE WHEN j.value IS NULL THEN NULL ELSE d.value IS j.value END AS judge_agrees,
       f.subject_id IS NOT NULL AS flagged, f.note AS flag_note
FROM decision d
JOIN subject s ON s.id = d.subject_id
JOIN report r ON r.id = s.report_id
JOIN task t ON t.id = r.task_id
JOIN system y ON y.id = r.system_id
JOIN suite su ON su.id = y.suite_id
LEFT JOIN judgment j ON j.subject_id = s.id AND j.current = 1
LEFT JOIN judge_run jr ON jr.id = j.run_id
LEFT JOIN flag f ON f.subject_id = s.id
WHERE {RESOLVED}
ORDER BY su.ext_id, r.ext_id, s.kind, s.key
"""

QUERIES: dict[str, dict[str, str]] = {
    "review_queue": {
        "title": "Review queue",
        "description": (
            "Every report of a system under test with its review progress, as the "
            "workstation's queue counts it: verdicts in force, how many a human decided, "
            "how many of those overrule the judge, conflicts between reviewers, flags, "
            "undecided verdicts with suspicion flags, and overall ratings. Unfinished "
            "reports first, the most suspicious first."
        ),
        "sql": QUEUE_SQL.strip(),
    },
    "judge_vs_human": {
        "title": "Judge vs human: disagreements",
        "description": (
            "Every verdict in force that a human label (single, unanimous or adjudicated) "
            "overrules: the judge's value and explanation beside the human value, who "
            "decided, their rationale and reason code."
        ),
        "sql": DISAGREEMENTS_SQL.strip(),
    },
    "gold_labels": {
        "title": "Gold labels",
        "description": (
            "One row per subject the humans resolved (`gavel export gold` holds the same "
            "labels with every run's verdict and every decision): the human value, the "
            "verdict in force and whether it agrees, and flags. Subjects reviewers decided "
            "differently, with nobody adjudicating, are not gold yet."
        ),
        "sql": GOLD_SQL.strip(),
    },
}
"""Canned query name -> title, description and SQL (what Datasette's ``queries`` holds)."""

LABELS = {
    "suite": "name",
    "task": "ext_id",
    "system": "name",
    "report": "ext_id",
    "subject": "target",
    "criterion": "text",
    "claim": "extract",
    "judge_run": "ext_id",
}
"""Table -> the column Datasette shows for a foreign key into it."""

TABLES: dict[str, str] = {
    "suite": "Imported benchmark runs (suites): name, frameworks, version, content hash.",
    "task": "Tasks of a suite: prompt, domain, category, task type.",
    "system": "Systems (agents) under test; a reference system is not reviewed.",
    "report": "One report per task and system: the Markdown as submitted.",
    "claim": "Claims extracted from reports, with their located span and citations.",
    "source": "Cited pages as imported: URL, title, text and its sha256.",
    "criterion": "Rubric items, checklist items and other criteria of a task.",
    "judge_run": "Judge runs: model, prompt version; active > 0 means its verdicts count.",
    "judgment": "The judge's verdicts; current = 1 marks the verdict in force per subject.",
    "subject": "What a verdict is about, shared by every run that judged it (target id).",
    "review_event": "The append-only review log: every human action, signed.",
    "decision": "Each subject's human decision as the log gives it (derived).",
    "flag": "Subjects flagged for discussion, with the note (derived).",
    "report_rating": "Reviewers' overall ratings of reports (derived).",
    "proposal": "Ground-truth expansions proposed by reviewers (status in the log).",
    "plan": "Review plans: how the sample of subjects to review was drawn.",
    "plan_draw": "A plan's draws in review order with their inclusion probabilities.",
    "suspicion": "Why a verdict deserves a look (derived from verdicts and inputs).",
    "score": "Cached system scores per framework, metric and variant (derived).",
}
"""Table -> its description in Datasette."""

HIDDEN = ("score_columns", "report_score", "event_live", "judge_cache")
"""Derived or cached tables whose rows are binary or internal: reachable by URL, not listed."""

SEARCH = {"report": "report_fts", "claim": "claim_fts", "source": "source_fts"}
"""Table -> its search index. Datasette finds those made by sqlite-utils by itself; a
database made before names them its own way (``content='report'``), so they are named
here for every database."""


def metadata(database: str = "gavel") -> dict[str, Any]:
    """Datasette's metadata for a database served under the name ``database`` (the file's
    name without its suffix)."""
    tables: dict[str, dict[str, Any]] = {
        name: {"description": text} for name, text in TABLES.items()
    }
    for name, column in LABELS.items():
        tables.setdefault(name, {})["label_column"] = column
    for name, fts in SEARCH.items():
        tables.setdefault(name, {}).update(fts_table=fts, fts_pk="id")
    for name in HIDDEN:
        tables.setdefault(name, {})["hidden"] = True
    tables["review_event"]["sort_desc"] = "seq"
    return {
        "title": "Gavel",
        "description": (
            "Human adjudication of LLM-judge verdicts on deep-research reports: inputs, "
            "verdicts, the review log and what is derived from them."
        ),
        "databases": {
            database: {
                "description": "A Gavel database (read it; write through gavel).",
                "tables": tables,
                "queries": QUERIES,
            }
        },
    }


def main(argv: list[str] | None = None) -> int:
    """``python -m store.db.datasette [DB]``: the metadata for DB as JSON on standard output."""
    parser = argparse.ArgumentParser(
        prog="python -m store.db.datasette",
        description="Write Datasette metadata (canned queries, descriptions) for a database.",
    )
    parser.add_argument("db", nargs="?", default="gavel.db", help="the database file")
    args = parser.parse_args(argv)
    json.dump(metadata(Path(args.db).stem), sys.stdout, indent=2, ensure_ascii=False)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
