"""Ground-truth exports: verdicts, scores and ground-truth expansions, as JSONL or CSV.

Every export streams (records come from cursors one at a time, nothing is collected into a
list) and is deterministic: the same database gives a byte-identical file, and so do two
databases that imported the same bundles in the same order and hold the same review log. That
is why records are ordered by stable ids and carry no export timestamp.

What re-imports: the review log (``gavel log export``) merges into any database with the same
bundles and carries everything human, proposals included. These exports are *derived* from it
and are not read back: ``verdicts`` and ``scores`` are recomputed from inputs and log on any
database, and ``gt-expansions`` is a gold diff for the benchmark's maintainers, applied to the
benchmark's own files (its items are in the benchmark's shape).
"""

from __future__ import annotations

import csv
import hashlib
import json
import sqlite3
from collections.abc import Callable, Iterable, Iterator
from itertools import groupby
from operator import itemgetter
from pathlib import Path
from typing import Any, TextIO

from reviewer.identity import SIGNED_FIELDS
from reviewer.proposals import EFFECT_NEW, EFFECT_REVISE, canonical_json, effect, gold_item
from reviewer.registry import get_kind
from store.exports.context import claim_dimensions, suspicion_type, suspicions
from store.exports.gold import GOLD_COLUMNS, gold_arrow_schema, gold_records
from store.reviewlog.conflicts import decisions_by_subject
from store.reviewlog.events import display_name
from store.scores import report_rows as report_scores
from store.scores.inputs import PROPOSAL_STATUS_SQL
from store.sqlite.named import database

Record = dict[str, Any]

GOLD_DIFF_FORMAT = "gavel-gold-diff"
GOLD_DIFF_VERSION = 1


# -- verdicts ----------------------------------------------------------------------------------

VERDICT_COLUMNS = (
    "target",
    "judgment",
    "suite",
    "task",
    "system",
    "report",
    "run",
    "model",
    "framework",
    "kind",
    "dimension",
    "subject",
    "current",
    "judge_value",
    "judge_error",
    "effective_value",
    "provenance",
    "decided_by",
    "rationale",
    "reason",
    "decided_at",
    "decisions",
    "suspicion",
)

_VERDICTS_SQL = """
    SELECT j.id AS judgment, s.ext_id AS suite, t.ext_id AS task, y.ext_id AS system,
           r.ext_id AS report, jr.ext_id AS run, jr.model, j.kind,
           coalesce(c.dimension, kc.dimension, '') AS dimension, j.subject, j.current,
           j.value AS judge_value, j.error AS judge_error, d.status, d.value AS human_value,
           e.reviewer, e.key, e.rationale, e.reason, e.created_at AS decided_at,
           j.subject_id, sj.target, k.subtask_id AS claim_subtask
    FROM judgment j
    JOIN subject sj ON sj.id = j.subject_id
    JOIN judge_run jr ON jr.id = j.run_id
    JOIN suite s ON s.id = jr.suite_id
    JOIN report r ON r.id = j.report_id
    JOIN task t ON t.id = r.task_id
    JOIN system y ON y.id = r.system_id
    LEFT JOIN criterion c ON c.id = j.criterion_id
    LEFT JOIN claim k ON k.id = j.claim_id
    LEFT JOIN criterion kc ON kc.id = k.criterion_id
    LEFT JOIN decision d ON d.subject_id = j.subject_id
    LEFT JOIN review_event e ON e.uuid = d.event_uuid
    ORDER BY j.id
"""


def verdict_records(conn: sqlite3.Connection) -> Iterator[Record]:
    """Every judgment (all runs) with judge value, the human decisions on its subject and
    its effective value.

    ``provenance``: ``judge-only`` (no human decision), ``single``, ``unanimous``,
    ``adjudicated``, or ``conflict`` (reviewers disagree and nobody adjudicated yet; the
    effective value is still the judge's). ``suspicion``: the subject's ◆ flags. A claim's
    ``dimension`` is its rubric's, else the one its subtask's claims count in.
    """
    decisions = decisions_by_subject(conn)
    flags = suspicions(conn)
    claim_dimension = claim_dimensions(conn)
    framework_of: dict[str, str | None] = {}
    for row in database(conn).query(_VERDICTS_SQL):
        mine = decisions.get(row["subject_id"], [])
        kind = row["kind"]
        if kind not in framework_of:
            framework_of[kind] = _framework(kind)
        yield {
            "target": row["target"],
            "judgment": row["judgment"],
            "suite": row["suite"],
            "task": row["task"],
            "system": row["system"],
            "report": row["report"],
            "run": row["run"],
            "model": row["model"],
            "framework": framework_of[kind],
            "kind": kind,
            "dimension": row["dimension"] or claim_dimension.get(row["claim_subtask"], ("", ""))[0],
            "subject": row["subject"],
            "current": bool(row["current"]),
            "judge_value": row["judge_value"],
            "judge_error": row["judge_error"],
            **_human_fields(conn, row, mine),
            "decisions": mine,
            "suspicion": flags.get(row["subject_id"], []),
        }


def _human_fields(conn: sqlite3.Connection, row: Record, mine: list[Record]) -> Record:
    """The value in effect and who decided it how: the human decision's when the subject is
    resolved, else the judge's value and no decider (a conflict is not resolved)."""
    status = row["status"]
    resolved = status is not None and status != "conflict"
    return {
        "effective_value": row["human_value"] if resolved else row["judge_value"],
        "provenance": status or "judge-only",
        "decided_by": _decided_by(conn, status, mine, row) if resolved else None,
        "rationale": row["rationale"] if resolved else None,
        "reason": row["reason"] if resolved else None,
        "decided_at": row["decided_at"] if resolved else None,
    }


def _framework(kind: str) -> str | None:
    spec = get_kind(kind)
    return spec.framework if spec else None


def _decided_by(conn: sqlite3.Connection, status: str, mine: list[Record], row: Record) -> str:
    """Who a resolved subject's decision is by: every reviewer of a unanimous decision, else
    the deciding event's author (named with their key where two share a name)."""
    if status == "unanimous":
        return ";".join(sorted({d["reviewer"] for d in mine if d["action"] != "adjudicate"}))
    return display_name(conn, row["reviewer"], row["key"])


# -- scores ------------------------------------------------------------------------------------

SCORE_COLUMNS = (
    "scope",
    "suite",
    "system",
    "task",
    "report",
    "framework",
    "metric",
    "part",
    "judge",
    "adjudicated",
    "delta",
    "n_judge",
    "n_adjudicated",
)


def score_records(conn: sqlite3.Connection) -> Iterator[Record]:
    """Every cached score in both variants: per report (in report order), then per system."""
    reports = conn.execute(
        """SELECT r.id, s.ext_id, y.ext_id, t.ext_id, r.ext_id FROM report r
           JOIN task t ON t.id = r.task_id JOIN system y ON y.id = r.system_id
           JOIN suite s ON s.id = y.suite_id ORDER BY r.id"""
    )
    stored = groupby(report_scores.read(conn), key=itemgetter(0))
    head = next(stored, None)
    for rid, suite, system, task, report in reports:
        while head is not None and head[0] < rid:
            head = next(stored, None)
        if head is None or head[0] != rid:
            continue
        rows = [
            (framework, metric, variant, value, 0 if value is None else 1)
            for _, framework, variant, scores in head[1]
            for metric, value in scores.items()
        ]
        rows.sort(key=itemgetter(0, 1, 2))
        yield from _scope_records(rows, "report", suite, system, task, report)
    systems = conn.execute(
        "SELECT y.id, s.ext_id, y.ext_id FROM system y JOIN suite s ON s.id = y.suite_id "
        "ORDER BY y.id"
    )
    for sid, suite, system in systems:
        rows = conn.execute(
            "SELECT framework, metric, variant, value, n FROM score WHERE scope = ? "
            "ORDER BY framework, metric, variant",
            (f"system:{sid}",),
        ).fetchall()
        yield from _scope_records(rows, "system", suite, system, None, None)


def _scope_records(
    rows: Iterable[tuple[str, str, str, float | None, int]],
    level: str,
    suite: str,
    system: str,
    task: str | None,
    report: str | None,
) -> Iterator[Record]:
    """One scope's records from its (framework, metric, variant, value, n) rows, in order."""
    for (framework, metric), group in groupby(rows, key=itemgetter(0, 1)):
        values = {variant: (value, n) for _, _, variant, value, n in group}
        judge, n_judge = values.get("judge", (None, None))
        adjudicated, n_adjudicated = values.get("adjudicated", (None, None))
        yield {
            "scope": level,
            "suite": suite,
            "system": system,
            "task": task,
            "report": report,
            "framework": framework,
            "metric": metric,
            "part": metric.startswith("_"),
            "judge": judge,
            "adjudicated": adjudicated,
            "delta": None if judge is None or adjudicated is None else adjudicated - judge,
            "n_judge": n_judge,
            "n_adjudicated": n_adjudicated,
        }


# -- ground-truth expansions -------------------------------------------------------------------

GT_COLUMNS = (
    "gt_version",
    "suite",
    "task",
    "framework",
    "kind",
    "effect",
    "target",
    "item",
    "proposal",
    "system",
    "report",
    "span",
    "proposed_by",
    "proposed_at",
    "rationale",
    "accepted_by",
    "accepted_at",
    "acceptance_rationale",
    "duplicate_of",
)

_ACCEPTED_SQL = f"""
    SELECT p.suite_id, s.ext_id AS suite, s.version, t.ext_id AS task, p.framework, p.kind,
           p.target, p.payload, p.uuid AS proposal, y.ext_id AS system, r.ext_id AS report,
           p.span_start, p.span_end, p.reviewer AS proposed_by, p.created_at AS proposed_at,
           p.rationale, st.reviewer AS accepted_by, st.created_at AS accepted_at,
           st.rationale AS acceptance_rationale, p.duplicate_of
    FROM proposal p
    JOIN ({PROPOSAL_STATUS_SQL}) st ON st.proposal = p.uuid AND st.rn = 1
    JOIN suite s ON s.id = p.suite_id
    JOIN task t ON t.id = p.task_id
    LEFT JOIN report r ON r.id = p.report_id
    LEFT JOIN system y ON y.id = r.system_id
    WHERE st.action = 'accept'
    ORDER BY p.suite_id, p.task_id, p.created_at, p.uuid
"""

_PROVENANCE = (
    "proposal",
    "system",
    "report",
    "span",
    "proposed_by",
    "proposed_at",
    "rationale",
    "accepted_by",
    "accepted_at",
    "acceptance_rationale",
    "duplicate_of",
)
"""An accepted item's provenance, in the order the gold diff lists it."""


def _gold_items(conn: sqlite3.Connection) -> Iterator[tuple[int, str, str, Record]]:
    """(suite id, suite, suite version, item record) of every accepted proposal."""
    for row in database(conn).query(_ACCEPTED_SQL):
        framework, kind = row["framework"], row["kind"]
        start = row["span_start"]
        row["span"] = [start, row["span_end"]] if start is not None else None
        yield (
            row["suite_id"],
            row["suite"],
            row["version"],
            {
                "type": "item",
                "suite": row["suite"],
                "task": row["task"],
                "framework": framework,
                "kind": kind,
                "effect": effect(kind),
                "target": row["target"],
                "item": gold_item(framework, kind, json.loads(row["payload"])),
                "provenance": {name: row[name] for name in _PROVENANCE},
            },
        )


_COUNTED = {EFFECT_NEW: "new_items", EFFECT_REVISE: "under_revision"}
"""The header count an item's effect adds to (aliases and evidence otherwise)."""


def _gold_headers(conn: sqlite3.Connection) -> dict[int, Record]:
    """First pass: per suite, the counts and the version the diff's content determines.

    ``gt_version`` is the suite's version plus a digest of the accepted items: it changes
    exactly when the expansions change, and two databases with the same ones agree on it.
    """
    headers: dict[int, Record] = {}
    digests: dict[int, Any] = {}
    for suite_id, suite, version, item in _gold_items(conn):
        header = headers.get(suite_id)
        if header is None:
            header = headers[suite_id] = {
                "type": "gold_diff",
                "format": GOLD_DIFF_FORMAT,
                "format_version": GOLD_DIFF_VERSION,
                "suite": suite,
                "base_version": version,
                "gt_version": "",
                "items": 0,
                "new_items": 0,
                "alias_or_evidence": 0,
                "under_revision": 0,
                "frameworks": [],
                "source_systems": [],
            }
            digests[suite_id] = hashlib.sha256()
        digests[suite_id].update(canonical_json(item).encode() + b"\n")
        header["items"] += 1
        header[_COUNTED.get(item["effect"], "alias_or_evidence")] += 1
        if item["framework"] not in header["frameworks"]:
            header["frameworks"] = sorted([*header["frameworks"], item["framework"]])
        system = item["provenance"]["system"]
        if system and system not in header["source_systems"]:
            header["source_systems"] = sorted([*header["source_systems"], system])
    for suite_id, header in headers.items():
        header["gt_version"] = (
            f"{header['base_version'] or 'v0'}+gt.{header['items']}."
            f"{digests[suite_id].hexdigest()[:12]}"
        )
    return headers


def gt_expansion_records(conn: sqlite3.Connection) -> Iterator[Record]:
    """The gold diff: per suite a ``gold_diff`` header, then its accepted items in task order.

    ``effect`` keeps the two kinds apart: ``new_item`` adds to the ground truth and raises the
    recall denominator; ``alias_or_evidence`` attaches to ``target`` and changes no
    denominator.
    """
    headers = _gold_headers(conn)
    current: int | None = None
    for suite_id, _, _, item in _gold_items(conn):
        if suite_id != current:
            current = suite_id
            yield headers[suite_id]
        yield {**item, "gt_version": headers[suite_id]["gt_version"]}


def _gt_csv_rows(conn: sqlite3.Connection) -> Iterator[Record]:
    for record in gt_expansion_records(conn):
        if record["type"] != "item":
            continue
        provenance = record["provenance"]
        yield {
            "gt_version": record["gt_version"],
            "suite": record["suite"],
            "task": record["task"],
            "framework": record["framework"],
            "kind": record["kind"],
            "effect": record["effect"],
            "target": record["target"],
            "item": record["item"],
            **{k: provenance[k] for k in GT_COLUMNS if k in provenance},
            "proposal": provenance["proposal"],
        }


# -- writing -----------------------------------------------------------------------------------

EXPORTS: dict[
    str,
    tuple[
        Callable[[sqlite3.Connection], Iterator[Record]],
        Callable[[sqlite3.Connection], Iterator[Record]],
        tuple[str, ...],
    ],
] = {
    "verdicts": (verdict_records, verdict_records, VERDICT_COLUMNS),
    "scores": (score_records, score_records, SCORE_COLUMNS),
    "gt-expansions": (gt_expansion_records, _gt_csv_rows, GT_COLUMNS),
    "gold": (gold_records, gold_records, GOLD_COLUMNS),
}
"""Export kind -> (JSONL records, CSV rows, CSV columns)."""


def write_export(conn: sqlite3.Connection, kind: str, out: TextIO, fmt: str = "jsonl") -> int:
    """Write one export; returns the number of records (lines after a CSV header)."""
    try:
        records, rows, columns = EXPORTS[kind]
    except KeyError:
        raise ValueError(f"unknown export {kind!r} (known: {', '.join(EXPORTS)})") from None
    n = 0
    if fmt == "jsonl":
        for record in records(conn):
            out.write(json.dumps(record, ensure_ascii=False, separators=(",", ":")))
            out.write("\n")
            n += 1
    elif fmt == "csv":
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(columns)
        cells = itemgetter(*columns)  # every row carries every column
        for row in rows(conn):
            writer.writerow(map(_csv_cell, cells(row)))
            n += 1
    else:
        raise ValueError(f"unknown export format {fmt!r} (jsonl, csv or parquet)")
    return n


def write_parquet(conn: sqlite3.Connection, kind: str, path: Path) -> int:
    """Write one export as a Parquet file with a fixed, typed schema (the same columns as the
    CSV, numbers as numbers, nested values as lists and structs): an empty export still has
    its columns, and a column that happens to be all null keeps its type, so files from
    different databases and days concatenate. Returns the number of rows."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        _, rows, columns = EXPORTS[kind]
    except KeyError:
        raise ValueError(f"unknown export {kind!r} (known: {', '.join(EXPORTS)})") from None
    schema = arrow_schema(kind)
    if kind == "gold":
        table = pa.Table.from_pylist(list(rows(conn)), schema=schema)
    else:
        table = pa.Table.from_pylist(
            [
                {name: _parquet_cell(row[name], schema.field(name).type) for name in columns}
                for row in rows(conn)
            ],
            schema=schema,
        )
    pq.write_table(table, path)
    written: int = table.num_rows
    return written


def write_log_parquet(conn: sqlite3.Connection, path: Path) -> int:
    """The review log as Parquet, one row per event in log order (``gavel log export`` as
    JSONL is what re-merges; this is for analysis). Returns the number of events."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from store.reviews.merge import log_events

    schema = pa.schema([(name, pa.string()) for name in LOG_COLUMNS])
    n = 0
    batch: list[dict[str, Any]] = []
    with pq.ParquetWriter(path, schema) as writer:
        for event in log_events(conn):
            batch.append(event.model_dump())
            if len(batch) == 50_000:  # bounded memory on a long log
                writer.write_table(pa.Table.from_pylist(batch, schema=schema))
                n += len(batch)
                batch = []
        if batch or n == 0:  # an empty log still has its columns
            writer.write_table(pa.Table.from_pylist(batch, schema=schema))
            n += len(batch)
    return n


LOG_COLUMNS = (*SIGNED_FIELDS, "sig")
"""An event's fields: what its signature covers, and the signature."""


def arrow_schema(kind: str) -> Any:
    """The Parquet (Arrow) schema of an export: its CSV columns, typed."""
    import pyarrow as pa

    if kind == "gold":
        return gold_arrow_schema()
    text, number, count, flag = pa.string(), pa.float64(), pa.int64(), pa.bool_()
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
    types: dict[str, Any] = {
        "judgment": count,
        "current": flag,
        "decisions": pa.list_(decision),
        "part": flag,
        "judge": number,
        "adjudicated": number,
        "delta": number,
        "n_judge": count,
        "n_adjudicated": count,
        "item": text,
        "span": pa.list_(count),
        "suspicion": suspicion_type(),
    }
    return pa.schema([(name, types.get(name, text)) for name in EXPORTS[kind][2]])


def _parquet_cell(value: Any, type_: Any) -> Any:
    """A record's value as its Parquet column holds it: a benchmark item (whose shape varies
    from framework to framework) as its JSON text; everything else as it is."""
    import pyarrow as pa

    if isinstance(value, dict) and pa.types.is_string(type_):
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return value


_CSV_AS_IS = frozenset({str, int, float, type(None)})
"""Cell types the csv module writes as wanted: None as empty, numbers as their exact repr."""


def _csv_cell(value: Any) -> Any:
    if type(value) in _CSV_AS_IS:
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return str(value)
