"""Streaming import of a bundle, in one transaction.

Records arrive in dependency order (tasks … judgments), are checked one at a time by
:class:`reviewer.formats.checks.BundleChecker`, turned into rows with ids assigned here in Python,
and written in large ``executemany`` batches. Nothing is read back mid-import, memory stays flat
however large the run, and an error anywhere rolls the whole transaction back: a bad bundle
imports nothing. Re-importing the same content is a no-op; different content under an existing
suite id is refused, because inputs are immutable once reviewers have decided on them.
"""

from __future__ import annotations

import json
import sqlite3
from array import array
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from reviewer.errors import InputError
from reviewer.formats.checks import REPEATED_VERDICT, BundleChecker, ResolvedReport
from reviewer.formats.jsonl import Where
from reviewer.grading import Verdict
from reviewer.models import (
    Bundle,
    JudgeRun,
    JudgmentRecord,
    Report,
    Source,
    Suite,
    System,
    Task,
)
from store.reviewlog.subjects import subject_target
from store.scores.cache import mark_scores_behind
from store.scores.claim_facts import claim_cited, verdict_cited
from store.sqlite.bulk import gc_paused
from store.sqlite.tx import now_iso, transaction
from store.triage.suspicion import FreshFlags, as_verdict, refresh_suspicion

Row = Sequence[Any]
"""A row's values in its table's column order (a verdict's is a list: its subject id comes last)."""
Records = Iterable[tuple[str, BaseModel | JudgmentRecord, Where]]

INSERTS: dict[str, str] = {
    "suite": "INSERT INTO suite VALUES (?,?,?,?,?,?,?,?,?)",
    "task": "INSERT INTO task VALUES (?,?,?,?,?,?,?,?,?)",
    "subtask": "INSERT INTO subtask VALUES (?,?,?,?,?,?,?,?)",
    "criterion": "INSERT INTO criterion VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
    "system": "INSERT INTO system VALUES (?,?,?,?,?,?,?,?)",
    "report": "INSERT INTO report VALUES (?,?,?,?,?,?,?,?)",
    "reference": "INSERT INTO reference VALUES (?,?,?,?)",
    "claim": "INSERT INTO claim VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
    "source": "INSERT INTO source VALUES (?,?,?,?,?,?,?,?,?)",
    "judge_run": "INSERT INTO judge_run VALUES (?,?,?,?,?,?,?,?,?,?)",
    "subject": "INSERT INTO subject (id, report_id, kind, key, target) VALUES (?,?,?,?,?)",
    "judgment": "INSERT INTO judgment (id, run_id, report_id, kind, criterion_id, claim_id, "
    "ref_idx, key, subject, value, explanation, evidence, raw, error, source_sha256, "
    "current, subtask_id, claim_cited, subject_id) "
    "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
}
"""Table -> INSERT, in foreign-key order (batches are flushed in this order)."""

FTS_FILL = (
    (
        "report",
        "INSERT INTO report_fts(rowid, markdown) SELECT id, markdown FROM report WHERE id >= ?",
    ),
    (
        "claim",
        "INSERT INTO claim_fts(rowid, fact, extract) SELECT id, fact, extract FROM claim "
        "WHERE id >= ?",
    ),
    (
        "source",
        "INSERT INTO source_fts(rowid, title, text) SELECT id, title, text FROM source "
        "WHERE id >= ?",
    ),
)

BATCH_ROWS = 20_000

_FTS_AUTOMERGE = 4
"""FTS5's default 'automerge' setting, for an index that has none of its own."""


def bulk_fts_fill(conn: sqlite3.Connection, fts: str, fill: str, first: int) -> None:
    """Fill a search index without merging its segments as it grows (merging as it grows was
    much of a large import); its crisis merges still bound the segment count, and the index's
    own setting is back before the transaction commits."""
    row = conn.execute(f"SELECT v FROM {fts}_config WHERE k = 'automerge'").fetchone()
    setting = int(row[0]) if row is not None else _FTS_AUTOMERGE
    conn.execute(f"INSERT INTO {fts}({fts}, rank) VALUES ('automerge', 0)")
    conn.execute(fill, (first,))
    conn.execute(f"INSERT INTO {fts}({fts}, rank) VALUES ('automerge', ?)", (setting,))


_SPACE_OR_WORD = bytes.maketrans(
    bytes(range(256)),
    bytes(32 if chr(c).isspace() else 120 for c in range(128)) + b"x" * 128,
)
"""ASCII as str.split() sees it: each whitespace character a space, anything else an x."""


def word_count(text: str) -> int:
    """``len(text.split())``; ASCII text is counted without building its words (a word starts
    where an x follows a space, or at the start)."""
    if not text.isascii():
        return len(text.split())
    marks = text.encode("ascii").translate(_SPACE_OR_WORD)
    return marks.count(b" x") + (marks[:1] == b"x")


def _dumps(value: Any) -> str:
    if not value:
        return "{}" if isinstance(value, dict) else "[]"
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


@dataclass(frozen=True, slots=True)
class ImportResult:
    suite_id: int
    suite: str
    created: bool
    counts: dict[str, int]
    warnings: tuple[str, ...] = ()
    """What the checks accepted but a person should look at (file, line, field, why)."""
    repaired: bool = False
    """Already imported, but its scores were missing and are rebuilt now."""


def insert_batch(
    conn: sqlite3.Connection, rows: dict[str, list[Row]], judgment_where: Sequence[Where]
) -> None:
    """A batch of rows, table by table in foreign-key order; a verdict repeated in the bundle
    is named by its file and line (``judgment_where``: the batch's verdicts' places)."""
    for table, sql in INSERTS.items():
        batch = rows[table]
        if not batch:
            continue
        try:
            conn.executemany(sql, batch)
        except sqlite3.IntegrityError:
            if table in ("subject", "judgment"):
                _repeated_verdict(conn, table, rows, judgment_where)
            raise


def _repeated_verdict(
    conn: sqlite3.Connection,
    table: str,
    rows: dict[str, list[Row]],
    judgment_where: Sequence[Where],
) -> None:
    """Name the first verdict of the batch whose (run, report, kind, subject) is already
    stored: the rows of this batch before it went in, so a repeat is always found at its second
    occurrence. Returns when the failure was something else.

    A bundle of one run writes each verdict's subject first, so there the repeat shows as a
    repeated subject: looked for from the verdict rows (in the order they were read; a
    verdict's row names its subject's id last, None when it has none written beside it)."""
    if table == "subject":
        query = "SELECT 1 FROM subject WHERE report_id = ? AND kind = ? AND key = ? AND id != ?"
        keys: list[Row] = [(row[2], row[3], row[8], row[18]) for row in rows["judgment"]]
    else:
        query = (
            "SELECT 1 FROM judgment WHERE run_id = ? AND report_id = ? AND kind = ? "
            "AND subject = ? AND id != ?"
        )
        keys = [(row[1], row[2], row[3], row[8], row[0]) for row in rows["judgment"]]
    for key, where in zip(keys, judgment_where, strict=True):
        if conn.execute(query, key).fetchone() is not None:
            raise InputError(where[0], REPEATED_VERDICT, line=where[1], field="kind")


@dataclass(slots=True)
class _Pending:
    rows: dict[str, list[Row]] = field(default_factory=lambda: {t: [] for t in INSERTS})
    size: int = 0


@dataclass(frozen=True, slots=True)
class _ReportAt:
    """The report whose verdicts are being read (a report's verdicts come together), with
    the row ids they name."""

    ext: str
    id: int
    criteria: dict[str, int]
    """Its task's criteria: id in the bundle -> row id."""
    claims: dict[str, int]
    """Its claims: id in the bundle -> row id."""


_NOWHERE = _ReportAt("", 0, {}, {})

Checked = tuple[JudgmentRecord, Where, str | None, str]
"""A verdict, where it was read, its value's code and its subject's text."""


class Loader:
    """Turns checked records into rows and writes them in batches (caller holds the tx)."""

    def __init__(
        self,
        conn: sqlite3.Connection | None,
        suite: Suite,
        content_hash: str,
        suite_file: str = "suite.json",
    ) -> None:
        self.conn = conn
        # With a database, a repeated verdict is found by the judgment table's unique index
        # (see flush), not by a set of every verdict's identity.
        self.checker = BundleChecker(suite, suite_file, repeats_checked_by_store=conn is not None)
        self.suite = suite
        self.stamp = now_iso()
        self.ids = {t: self._next_id(t) for t in INSERTS if t != "reference"}
        self.first = dict(self.ids)
        self.suite_id = self.ids["suite"]
        self.pending = _Pending()
        self._judgments = self.pending.rows["judgment"]
        self._judgment_where: list[Where] = []
        self.counts: dict[str, int] = defaultdict(int)
        self._task: dict[str, tuple[int, dict[str, int], dict[str, int]]] = {}
        self._system: dict[str, int] = {}
        # Per report: row id, task, its first claim's row id and its claim ids in order (its
        # claims' row ids are consecutive). A run has a million claims: a tuple of ids a
        # report, not a dict, and a dict only for the report whose verdicts are coming.
        self._report: dict[str, tuple[int, str, int, tuple[str, ...]]] = {}
        self._at = _NOWHERE
        self._run: dict[str, tuple[int, tuple[str, int]]] = {}
        self._model: dict[str, str] = {}
        self._newest_run: str | None = None
        self.fresh = FreshFlags(conn) if conn is not None else None
        """The new reports' flags, given as their verdicts are written (one run's import)."""
        self._own_subjects: bool | None = None
        """Whether each verdict is its own new subject, its row written beside it: so in a
        bundle of one run (the common case), decided at its first verdict, when every run
        has been read. Linking them afterwards rewrote every verdict row."""
        self._held: list[Checked] = []
        """The checked verdicts of the report being read, written with their subjects at its
        end."""
        self._held_at = _NOWHERE
        self._released_up_to = 0
        self._cites: dict[tuple[int, ...], str] = {(): "[]"}
        self._crit_subtask: dict[int, int | None] = {}
        self._claim_subtask = array("q")
        """The subtask row id of each claim (0: none), by claim row id - the first one's."""
        self._claim_cited = array("b")
        """Each claim's :func:`store.scores.claim_facts.claim_cited` flag, by claim row id
        likewise."""
        self._readers: dict[str, Callable[[Any, Where], None]] = {
            "judgment": self.judgment,
            "report": self.report,
            "task": self.task,
            "system": self.system,
            "source": self.source,
            "run": self.run,
        }
        self._add(
            "suite",
            (
                self.suite_id,
                suite.id,
                suite.name,
                _dumps(suite.frameworks),
                suite.version,
                suite.source,
                suite.description,
                content_hash,
                self.stamp,
            ),
        )
        self.ids["suite"] += 1

    def _next_id(self, table: str) -> int:
        if self.conn is None:
            return 1
        return int(self.conn.execute(f"SELECT coalesce(max(id), 0) + 1 FROM {table}").fetchone()[0])

    def _take(self, table: str) -> int:
        value = self.ids[table]
        self.ids[table] = value + 1
        return value

    def _add(self, table: str, row: Row) -> None:
        self.pending.rows[table].append(row)
        self.pending.size += 1
        self.counts[table] += 1
        if self.pending.size >= BATCH_ROWS:
            self.flush()

    def _extend(self, table: str, rows: list[Row]) -> None:
        self.pending.rows[table].extend(rows)
        self.pending.size += len(rows)
        self.counts[table] += len(rows)
        if self.pending.size >= BATCH_ROWS:
            self.flush()

    def _add_judgment(self, row: list[Any], where: Where) -> None:
        self._judgments.append(row)
        self._judgment_where.append(where)
        self.pending.size += 1
        if self.pending.size >= BATCH_ROWS:
            self.flush()

    def flush(self) -> None:
        if self.conn is not None:
            insert_batch(self.conn, self.pending.rows, self._judgment_where)
        self.counts["judgment"] += len(self._judgments)
        self.pending = _Pending()
        self._judgments = self.pending.rows["judgment"]
        self._judgment_where = []

    # -- records -----------------------------------------------------------------------

    def add(self, rtype: str, record: object, where: Where) -> None:
        reader = self._readers.get(rtype)
        if reader is None:
            raise InputError(where[0], f"unexpected {rtype} record", line=where[1])
        reader(record, where)

    def task(self, task: Task, where: Where) -> None:
        self.checker.task(task, where)
        tid = self._take("task")
        self._add(
            "task",
            (
                tid,
                self.suite_id,
                task.id,
                task.prompt,
                task.language,
                task.domain,
                task.category,
                task.task_type,
                _dumps(task.metadata),
            ),
        )
        subtasks: dict[str, int] = {}
        for ordinal, sub in enumerate(task.subtasks):
            sid = self._take("subtask")
            subtasks[sub.id] = sid
            self._add(
                "subtask",
                (
                    sid,
                    tid,
                    sub.id,
                    ordinal,
                    sub.text,
                    sub.importance,
                    sub.group,
                    _dumps(sub.constraint_types),
                ),
            )
        criteria: dict[str, int] = {}
        for ordinal, crit in enumerate(task.criteria):
            cid = self._take("criterion")
            criteria[crit.id] = cid
            sub_id = subtasks[crit.subtask] if crit.subtask is not None else None
            self._crit_subtask[cid] = sub_id
            self._add(
                "criterion",
                (
                    cid,
                    tid,
                    sub_id,
                    crit.id,
                    ordinal,
                    crit.framework,
                    crit.dimension,
                    crit.text,
                    crit.explanation,
                    crit.weight,
                    crit.scale,
                    _dumps(crit.metadata),
                ),
            )
        self._task[task.id] = (tid, subtasks, criteria)

    def system(self, system: System, where: Where) -> None:
        self.checker.system(system, where)
        sid = self._take("system")
        self._system[system.id] = sid
        self._add(
            "system",
            (
                sid,
                self.suite_id,
                system.id,
                system.name or system.id,
                system.family,
                system.version,
                system.collected_at,
                int(system.is_reference),
            ),
        )

    def report(self, report: Report, where: Where) -> None:
        resolved = self.checker.report(report, where)
        rid = self._take("report")
        tid, subtasks, criteria = self._task[report.task]
        self._add(
            "report",
            (
                rid,
                tid,
                self._system[report.system],
                report.id,
                report.markdown,
                report.cleaned,
                word_count(report.markdown),
                _dumps(report.metadata),
            ),
        )
        self._extend("reference", [(rid, *ref) for ref in resolved.references])
        first_claim = self.ids["claim"]
        self._extend(
            "claim", self._claim_rows(first_claim, rid, report, resolved, subtasks, criteria)
        )
        self.ids["claim"] = first_claim + len(report.claims)
        self._report[report.id] = (
            rid,
            report.task,
            first_claim,
            tuple(c.id for c in report.claims),
        )

    def _claim_rows(
        self,
        first: int,
        rid: int,
        report: Report,
        resolved: ResolvedReport,
        subtasks: dict[str, int],
        criteria: dict[str, int],
    ) -> list[Row]:
        """A report's claim rows (ids from ``first`` on), each claim's subtask and cited flag
        kept for its verdicts' rows. A claim is placed in its own subtask, else its
        criterion's (resolved by the checker), so claims linked only through their fac rubric
        count for it."""
        rows: list[Row] = []
        memo, claim_subtask, cited = self._cites, self._claim_subtask, self._claim_cited
        for ordinal, (claim, (span, citations, place)) in enumerate(
            zip(report.claims, resolved.claims, strict=True)
        ):
            cites = memo.get(citations)
            if cites is None:
                cites = self._cite_list(citations)
            subtask = subtasks[place] if place is not None else None
            claim_subtask.append(subtask or 0)
            cited.append(claim_cited(cites, claim.url))
            rows.append(
                (
                    first + ordinal,
                    rid,
                    claim.id,
                    ordinal,
                    subtask,
                    criteria[claim.criterion] if claim.criterion is not None else None,
                    claim.fact,
                    claim.extract or claim.fact,
                    span[0] if span else None,
                    span[1] if span else None,
                    cites,
                    claim.url,
                    _dumps(claim.metadata) if claim.metadata else "{}",
                )
            )
        return rows

    def _cite_list(self, citations: tuple[int, ...]) -> str:
        """A claim's citations as stored (JSON), kept in a memo of the lists seen (not a
        record of every claim)."""
        if len(self._cites) > 50_000:
            self._cites = {(): "[]"}
        cites = self._cites[citations] = json.dumps(list(citations))
        return cites

    def source(self, source: Source, where: Where) -> None:
        digest = self.checker.source(source, where)
        self._add(
            "source",
            (
                self._take("source"),
                self.suite_id,
                source.url,
                source.title,
                source.fetched_at,
                source.text,
                digest,
                source.error,
                _dumps(source.metadata),
            ),
        )

    def run(self, run: JudgeRun, where: Where) -> None:
        self.checker.run(run, where)
        rid = self._take("judge_run")
        order = (run.created_at, len(self._run))
        self._run[run.id] = (rid, order)
        self._model[run.id] = run.model
        if self._newest_run is None or order > self._run[self._newest_run][1]:
            self._newest_run = run.id
        self._add(
            "judge_run",
            (
                rid,
                self.suite_id,
                run.id,
                run.model,
                run.prompt_version,
                _dumps(run.params),
                run.created_at or self.stamp,
                run.description,
                1,
                "{}",
            ),
        )

    # -- verdicts ----------------------------------------------------------------------

    def judgment(self, judgment: JudgmentRecord, where: Where) -> None:
        """A verdict, checked (the hot path of a large import: a quarter of a million calls).
        In a bundle of one run its report's verdicts are held and written together at its end
        (see :meth:`_release_held`), else each is written as it comes."""
        value, subject = self.checker.judgment(judgment, where)
        if judgment["report"] == self._held_at.ext:
            self._held.append((judgment, where, value, subject))
            return
        if self._own_subjects is None:
            self._own_subjects = self.conn is not None and len(self._run) == 1
        if self._own_subjects:
            self._release_held()
            at = self._enter(judgment["report"])
            if at.id > self._released_up_to:
                self._held_at = at
                self._held.append((judgment, where, value, subject))
                return
            # Verdicts not grouped by report: these and the rest are written bare, and their
            # subjects linked afterwards.
            self._own_subjects = False
            self._held_at = _NOWHERE
        at = self._at if judgment["report"] == self._at.ext else self._enter(judgment["report"])
        (row,) = self._rows(at, [(judgment, where, value, subject)])
        self._add_judgment(row, where)

    def _enter(self, ext: str) -> _ReportAt:
        """The report whose verdicts come next, with the row ids they name."""
        rid, task, first_claim, claim_order = self._report[ext]
        claims = {claim: first_claim + n for n, claim in enumerate(claim_order)}
        self._at = _ReportAt(ext, rid, self._task[task][2], claims)
        return self._at

    def _rows(self, at: _ReportAt, verdicts: list[Checked]) -> list[list[Any]]:
        """The rows of checked verdicts of one report, their ids taken in order. A claim's
        verdict is filed under its criterion's subtask when it names a criterion, else under
        its claim's; its cited flag is its claim's unless it is filed elsewhere."""
        first_claim, crit_subtask = self.first["claim"], self._crit_subtask
        claim_subtask, claim_cited = self._claim_subtask, self._claim_cited
        runs, newest = self._run, self._newest_run
        jid = self.ids["judgment"]
        rows = []
        for judgment, _, value, subject in verdicts:
            criterion, claim = judgment["criterion"], judgment["claim"]
            crit_id = at.criteria[criterion] if criterion is not None else None
            subtask = crit_subtask.get(crit_id) if crit_id is not None else None
            claim_id = cited = None
            if claim is not None:
                claim_id = at.claims[claim]
                k = claim_id - first_claim
                of_claim = claim_subtask[k] or None
                if crit_id is None:
                    subtask = of_claim
                cited = verdict_cited(claim_cited[k], subtask, of_claim)
            rows.append(
                [
                    jid,
                    runs[judgment["run"]][0],
                    at.id,
                    judgment["kind"],
                    crit_id,
                    claim_id,
                    judgment["ref"],
                    judgment["key"],
                    subject,
                    value,
                    judgment["explanation"],
                    judgment["evidence"],
                    judgment["raw"],
                    judgment["error"],
                    judgment["source_sha256"],
                    int(judgment["run"] == newest),
                    subtask,
                    cited,
                    None,  # the subject's id, when its subject is written beside it
                ]
            )
            jid += 1
        self.ids["judgment"] = jid
        return rows

    def _release_held(self) -> None:
        """Write the held verdicts of one report with a new subject each, numbered in (kind,
        subject) order as linking them afterwards numbered them: a plan's frame is in subject
        order, so a seed draws the same subjects from the same run whichever way it came in.
        One run judges a subject once (the judgment table's unique index says so) and the
        report is new, so every verdict is a new subject."""
        held = self._held
        if not held:
            return
        self._held = []
        at = self._held_at
        rows = self._rows(at, held)
        suite = self.suite.id
        # In id order, as the table and its index keep them (cheaper to insert).
        self.pending.rows["subject"].extend(
            [
                (r[18], at.id, r[3], r[8], subject_target(suite, at.ext, r[3], r[8]))
                for r in self._number_subjects(rows)
            ]
        )
        self._judgments.extend(rows)
        self._judgment_where.extend([where for _, where, _, _ in held])
        self.pending.size += 2 * len(rows)
        self._released_up_to = at.id
        if self.fresh is None:
            if self.pending.size >= BATCH_ROWS:
                self.flush()
            return
        if self.fresh.add(at.id, self._verdicts(rows, [judgment for judgment, *_ in held])):
            self.flush()  # (the flags name the subjects: they are stored first)
            self.fresh.write()
        elif self.pending.size >= BATCH_ROWS:
            self.flush()

    def _number_subjects(self, rows: list[list[Any]]) -> list[list[Any]]:
        """Each verdict row's new subject id (its last column), in (kind, subject) order; the
        rows in that order."""
        first = self.ids["subject"]
        ranked = [rows[i] for _, _, i in sorted([(r[3], r[8], i) for i, r in enumerate(rows)])]
        for rank, row in enumerate(ranked, start=first):
            row[18] = rank
        self.ids["subject"] = first + len(rows)
        return ranked

    def _verdicts(self, held: list[list[Any]], records: list[JudgmentRecord]) -> list[Verdict]:
        """A report's verdict rows as the suspicion rules see them (as they would be read
        back: the value of a failed verdict is None, and the run is active)."""
        run = records[0]["run"]
        model = self._model[run]
        return [
            as_verdict(
                (
                    r[0],
                    r[18],
                    r[3],
                    r[9] if r[13] is None else None,
                    r[10],
                    r[11],
                    run,
                    record["criterion"],
                    record["claim"],
                    r[6],
                    r[7],
                    model,
                    r[15],
                    1,
                )
            )
            for r, record in zip(held, records, strict=True)
        ]

    def read(self, records: Records) -> None:
        """Every record of the stream, in turn."""
        readers = self._readers
        for rtype, record, where in records:
            reader = readers.get(rtype)
            if reader is None:
                raise InputError(where[0], f"unexpected {rtype} record", line=where[1])
            reader(record, where)

    def drain(self) -> None:
        """Every row read so far handed on: the last report's held verdicts and the batch
        (and the flags of the reports whose verdicts were held)."""
        self._release_held()
        self.flush()
        if self.fresh is not None and self._own_subjects:
            self.fresh.write()

    @property
    def flagged(self) -> bool:
        """Whether every new report's flags are written (as its verdicts were: one run, its
        verdicts grouped by report), or the import must refresh them from its rows."""
        return bool(self._own_subjects)

    def fill_search(self) -> None:
        """Index the new text for search (after :meth:`finish`): nothing else of the import
        reads the indexes."""
        assert self.conn is not None
        for table, sql in FTS_FILL:
            if self.counts[table]:
                bulk_fts_fill(self.conn, f"{table}_fts", sql, self.first[table])

    def report_ids(self) -> list[int]:
        """Row ids of the reports this import wrote."""
        return [row[0] for row in self._report.values()]

    def finish(self) -> Sequence[int]:
        """Flush, link judgments to their subjects and order the runs (the text is indexed
        by :meth:`fill_search`).

        The bundle's runs are the suite's released verdicts, so they are active from the
        start, the newest last; judgments are written as current when they come from the
        newest run, and a bundle of several runs has each subject's current judgment chosen
        afterwards (rare: one run is the common case).
        """
        self.drain()
        if self.conn is None:
            return []
        from store.reviewlog.subjects import ensure_subjects, refresh_current

        subjects: Sequence[int] = range(self.first["subject"], self.ids["subject"])
        if not self._own_subjects:
            subjects = [*subjects, *ensure_subjects(self.conn, self.first["judgment"])]
        base = int(
            self.conn.execute(
                "SELECT coalesce(max(active), 0) FROM judge_run WHERE suite_id != ?",
                (self.suite_id,),
            ).fetchone()[0]
        )
        ranked = sorted(self._run.values(), key=lambda v: v[1])
        self.conn.executemany(
            "UPDATE judge_run SET active = ? WHERE id = ?",
            [(base + n, rid) for n, (rid, _) in enumerate(ranked, start=1)],
        )
        if len(self._run) > 1:
            refresh_current(self.conn, [row[0] for row in self._report.values()])
        return subjects


def import_records(
    conn: sqlite3.Connection,
    suite: Suite,
    records: Records,
    content_hash: str,
    label: str = "",
) -> ImportResult:
    """Import a record stream as one suite.

    The caller rebuilds scores, best in the same transaction; until someone does, the import
    leaves ``meta.scores_behind`` set (see :mod:`store.scores.cache`), so a process killed between
    the two leaves a database that repairs itself on the next open.
    """
    with gc_paused(), transaction(conn):
        # Checked under the write lock: two processes importing the same suite at once must
        # not both find it absent.
        existing = conn.execute(
            "SELECT id, content_hash FROM suite WHERE ext_id = ?", (suite.id,)
        ).fetchone()
        if existing is not None:
            if existing[1] == content_hash:
                return ImportResult(int(existing[0]), suite.id, False, {})
            raise InputError(
                label or suite.id,
                f"suite {suite.id!r} is already in this database with different content; "
                "inputs are immutable once reviewed: another judge run of the same reports "
                "attaches to them with --as-run NAME; changed reports need a new suite id (or "
                "a new version in its id)",
                field="id",
            )
        loader = Loader(conn, suite, content_hash, label or "suite.json")
        loader.read(records)
        subjects = loader.finish()
        _apply_waiting_events(conn, loader.suite_id, subjects)
        mark_scores_behind(conn, f"suite {suite.id} imported")
        loader.fill_search()
        if not loader.flagged:
            refresh_suspicion(conn, loader.report_ids())
    counts = {
        name: loader.counts[table]
        for name, table in (
            ("tasks", "task"),
            ("subtasks", "subtask"),
            ("criteria", "criterion"),
            ("systems", "system"),
            ("reports", "report"),
            ("claims", "claim"),
            ("sources", "source"),
            ("runs", "judge_run"),
            ("judgments", "judgment"),
        )
    }
    return ImportResult(loader.suite_id, suite.id, True, counts, tuple(loader.checker.warnings))


def _apply_waiting_events(conn: sqlite3.Connection, suite_id: int, subjects: Sequence[int]) -> None:
    """Decisions, ratings and proposals merged before this suite was here apply now."""
    if conn.execute("SELECT 1 FROM review_event LIMIT 1").fetchone() is None:
        return
    from store.reviewlog.events import refresh_subjects, refresh_suite_ratings
    from store.reviews.merge import materialize_proposals

    refresh_subjects(conn, subjects)
    refresh_suite_ratings(conn, suite_id)
    materialize_proposals(conn)


def import_bundle(
    conn: sqlite3.Connection, bundle: Bundle, content_hash: str, label: str = ""
) -> ImportResult:
    """Import an in-memory bundle (formats that parse to a Bundle; tests)."""
    from reviewer.formats.native import bundle_records

    return import_records(conn, bundle.suite, bundle_records(bundle), content_hash, label)
