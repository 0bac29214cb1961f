"""The gold labels: one row per subject the humans resolved, ready for analysis.

Each row is a subject (what a verdict is about, in every judge run) with its text, the human
value (a code, and as a number where the scale has one; ``unknown`` has none), every judge
run's value on it side by side, what the judge whose verdict is in force saw (the rubric's
levels, the claim's sentence in the report, its explanation and evidence, the cited page around
that evidence), the suspicion flags on it, and its provenance: who decided, their rationales
and reason codes, flags with notes, and whether an adjudication settled it. ``gold_version``
is a digest of the resolved labels: two databases holding the same decisions agree on it, and
it changes exactly when a label does.

Subjects in conflict (reviewers disagree and nobody adjudicated) are not gold and are left out;
``gold_summary`` counts them.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from reviewer.registry import get_kind
from store.exports.context import JudgeSaw, claim_dimensions, suspicion_type, suspicions
from store.reviewlog.conflicts import decisions_by_subject
from store.sqlite.named import database

Record = dict[str, Any]

RESOLVED = ("single", "unanimous", "adjudicated")

_SUBJECTS_SQL = """
    SELECT s.id, s.target, su.ext_id AS suite, t.ext_id AS task, y.ext_id AS system,
           r.ext_id AS report, s.kind, s.key, d.value, d.status, f.note,
           f.subject_id IS NOT NULL AS flagged
    FROM decision d
    JOIN subject s ON s.id = d.subject_id
    JOIN report r ON r.id = s.report_id
    JOIN task t ON t.id = r.task_id
    JOIN system y ON y.id = r.system_id
    JOIN suite su ON su.id = y.suite_id
    LEFT JOIN flag f ON f.subject_id = s.id
    WHERE d.status IN ('single', 'unanimous', 'adjudicated')
    ORDER BY su.ext_id, r.ext_id, s.kind, s.key
"""

_JUDGES_SQL = """
    SELECT j.subject_id, jr.ext_id AS run, jr.model, jr.active > 0 AS active, j.current,
           j.value, j.error, coalesce(c.text, '') AS criterion,
           coalesce(c.dimension, kc.dimension, '') AS dimension, k.fact, k.extract, j.ref_idx,
           rf.title, rf.url, j.key, coalesce(c.explanation, kc.explanation, '') AS levels,
           j.explanation, j.evidence, j.report_id, jr.suite_id, k.subtask_id AS claim_subtask,
           k.span_start, k.span_end, k.citations, k.url AS claim_url
    FROM judgment j
    JOIN judge_run jr ON jr.id = j.run_id
    JOIN decision d ON d.subject_id = j.subject_id
    LEFT JOIN criterion c ON c.id = j.criterion_id
    LEFT JOIN claim k ON k.id = j.claim_id
    LEFT JOIN criterion kc ON kc.id = k.criterion_id
    LEFT JOIN reference rf ON rf.report_id = j.report_id AND rf.idx = j.ref_idx
    WHERE d.status IN ('single', 'unanimous', 'adjudicated')
    ORDER BY j.subject_id, jr.active DESC, jr.ext_id
"""


NO_NUMBER = frozenset({"unknown"})
"""Labels that say nobody could tell: kept as labels, with no number. The scoring maps some
of them to 0 (DailyReport counts an unknown claim as not verified), but as a number beside
the label it would read as "incorrect" to anyone averaging the column."""


def _number(kind: str, code: str | None) -> float | None:
    spec = get_kind(kind)
    if spec is None or code is None or code in NO_NUMBER:
        return None
    try:
        return spec.scale.numeric(code)
    except ValueError:
        return None


def _subject_text(row: Record) -> tuple[str, str]:
    """(dimension, what the subject is, as a reader would name it)."""
    criterion, fact, ref, key = row["criterion"], row["fact"], row["ref_idx"], row["key"]
    parts: list[str] = []
    if criterion:
        parts.append(criterion)
    if fact:
        extract = row["extract"]
        parts.append(extract if extract and extract != fact else fact)
    if ref is not None:
        parts.append(f"↔ [{ref}] {row['title'] or ''} {row['url'] or ''}".strip())
    if key is not None:
        parts.extend(_key_text(str(key), criterion, fact))
    return row["dimension"], " ".join(parts)


def _key_text(key: str, criterion: str, fact: str | None) -> list[str]:
    """A key names the subject alone when there is neither criterion nor claim, and points
    from a claim to what it keys otherwise."""
    if not criterion and not fact:
        return [key]
    return [f"→ {key}"] if fact else []


def gold_version(conn: sqlite3.Connection) -> str:
    digest = hashlib.sha256()
    for target, value, status in conn.execute(
        """SELECT s.target, d.value, d.status FROM decision d JOIN subject s ON s.id = d.subject_id
           WHERE d.status IN ('single', 'unanimous', 'adjudicated') ORDER BY s.target"""
    ):
        digest.update(json.dumps([target, value, status]).encode())
        digest.update(b"\n")
    return "gold-" + digest.hexdigest()[:12]


def gold_records(conn: sqlite3.Connection) -> Iterator[Record]:
    """One record per resolved subject, in (suite, report, kind, subject) order."""
    version = gold_version(conn)
    decisions = decisions_by_subject(conn)
    judges, seen = _judges(conn)
    flags = suspicions(conn)
    for row in database(conn).query(_SUBJECTS_SQL):
        sid = int(row["id"])
        yield _gold_record(
            version,
            row,
            decisions.get(sid, []),
            judges.get(sid, []),
            seen.get(sid, _NOTHING_SEEN),
            flags.get(sid, []),
        )


_NOTHING_SEEN: Record = {
    "dimension": "",
    "subject_text": "",
    "rubric_levels": "",
    "claim_sentence": "",
    "judge_explanation": "",
    "judge_evidence": "",
    "cited_url": None,
    "cited_passage": "",
}
"""The subject columns of a label no verdict is stored for."""


def _gold_record(
    version: str,
    row: Record,
    mine: list[Record],
    runs: list[Record],
    seen: Record,
    flags: list[Record],
) -> Record:
    """A resolved subject's record: what it is and what the judge saw of it, the label, the
    verdicts in force and of every run, and who decided it how."""
    kind, value = row["kind"], row["value"]
    spec = get_kind(kind)
    for judge in runs:
        judge["value_number"] = _number(kind, judge["value"])
    current = next((j for j in runs if j["current"]), None)
    return {
        "gold_version": version,
        "target": row["target"],
        "suite": row["suite"],
        "task": row["task"],
        "system": row["system"],
        "report": row["report"],
        "framework": spec.framework if spec else None,
        "kind": kind,
        "dimension": seen["dimension"],
        "subject": row["key"],
        "subject_text": seen["subject_text"],
        "rubric_levels": seen["rubric_levels"],
        "claim_sentence": seen["claim_sentence"],
        "scale": spec.scale.name if spec else None,
        "human_value": value,
        "human_value_number": _number(kind, value),
        **_judge_fields(current, value),
        "judge_explanation": seen["judge_explanation"],
        "judge_evidence": seen["judge_evidence"],
        "cited_url": seen["cited_url"],
        "cited_passage": seen["cited_passage"],
        "suspicion": flags,
        "judges": runs,
        "status": row["status"],
        **_decision_fields(mine),
        "flagged": bool(row["flagged"]),
        "flag_note": row["note"],
    }


def _judges(conn: sqlite3.Connection) -> tuple[dict[int, list[Record]], dict[int, Record]]:
    """Per resolved subject: every run's verdict on it (active runs first), and what it is
    and what the judge whose verdict is in force saw of it (of the first run listed when
    none is in force)."""
    judges: dict[int, list[Record]] = defaultdict(list)
    seen: dict[int, Record] = {}
    in_force: set[int] = set()
    saw = JudgeSaw(conn)
    claim_dimension = claim_dimensions(conn)
    for row in database(conn).query(_JUDGES_SQL):
        sid = int(row["subject_id"])
        if sid not in in_force and (row["current"] or sid not in seen):
            if row["current"]:
                in_force.add(sid)
            if not row["dimension"]:
                row["dimension"], row["levels"] = claim_dimension.get(
                    row["claim_subtask"], ("", row["levels"])
                )
            dimension, text = _subject_text(row)
            seen[sid] = {"dimension": dimension, "subject_text": text, **saw.of(row)}
        judges[sid].append(
            {
                "run": row["run"],
                "model": row["model"],
                "active": bool(row["active"]),
                "current": bool(row["current"]),
                "value": row["value"],
                "error": row["error"],
            }
        )
    return judges, seen


def _decision_fields(mine: list[Record]) -> Record:
    """Who decided a label: the reviewers whose standing decision it is, the adjudicator if
    any, every decision, and the reason codes given."""
    adjudication = next((d for d in reversed(mine) if d["action"] == "adjudicate"), None)
    return {
        "reviewers": sorted({d["reviewer"] for d in mine if d["action"] != "adjudicate"}),
        "adjudicated_by": adjudication["reviewer"] if adjudication else None,
        "decisions": mine,
        "reasons": sorted({d["reason"] for d in mine if d["reason"]}),
    }


def _judge_fields(current: Record | None, human: str | None) -> Record:
    """The verdict in force beside the label: its value, as a number, and whether it agrees
    (None when the judge gave no value)."""
    if current is None:
        return {"judge_value": None, "judge_value_number": None, "judge_agrees": None}
    return {
        "judge_value": current["value"],
        "judge_value_number": current["value_number"],
        "judge_agrees": None if current["value"] is None else current["value"] == human,
    }


@dataclass(frozen=True, slots=True)
class GoldSummary:
    version: str
    resolved: int
    conflicts: int


def gold_summary(conn: sqlite3.Connection) -> GoldSummary:
    resolved, conflicts = conn.execute(
        f"""SELECT sum(status IN {RESOLVED}), sum(status = 'conflict') FROM decision"""
    ).fetchone()
    return GoldSummary(gold_version(conn), int(resolved or 0), int(conflicts or 0))


GOLD_COLUMNS = (
    "gold_version",
    "target",
    "suite",
    "task",
    "system",
    "report",
    "framework",
    "kind",
    "dimension",
    "subject",
    "subject_text",
    "rubric_levels",
    "claim_sentence",
    "scale",
    "human_value",
    "human_value_number",
    "judge_value",
    "judge_value_number",
    "judge_agrees",
    "judge_explanation",
    "judge_evidence",
    "cited_url",
    "cited_passage",
    "suspicion",
    "judges",
    "status",
    "reviewers",
    "adjudicated_by",
    "decisions",
    "reasons",
    "flagged",
    "flag_note",
)


def gold_arrow_schema() -> Any:
    """The Parquet schema: typed columns, nested lists of runs and decisions."""
    import pyarrow as pa

    text = pa.string()
    judge = pa.struct(
        [
            ("run", text),
            ("model", text),
            ("active", pa.bool_()),
            ("current", pa.bool_()),
            ("value", text),
            ("error", text),
            ("value_number", pa.float64()),
        ]
    )
    decision = pa.struct(
        [
            ("reviewer", text),
            ("action", text),
            ("value", text),
            ("rationale", text),
            ("reason", text),
            ("created_at", text),
            ("run", text),
            ("event", text),
        ]
    )
    fields = {
        "human_value_number": pa.float64(),
        "judge_value_number": pa.float64(),
        "judge_agrees": pa.bool_(),
        "judges": pa.list_(judge),
        "reviewers": pa.list_(text),
        "decisions": pa.list_(decision),
        "reasons": pa.list_(text),
        "flagged": pa.bool_(),
        "suspicion": suspicion_type(),
    }
    return pa.schema([(name, fields.get(name, text)) for name in GOLD_COLUMNS])
