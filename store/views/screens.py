"""Read models for the workstation's screens: one call per screen state, plain dataclasses.

Each function runs a few indexed queries and returns everything a screen draws, so a screen
never talks SQL and a worker thread can build the whole view off the UI thread.
"""

from __future__ import annotations

import json
import sqlite3
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from reviewer.registry import frameworks, get_kind
from reviewer.suspicion import suspicion
from store.reviewlog.subjects import verdicts_of
from store.scores import report_rows as stored_scores
from store.scores.inputs import EFFECTIVE_SQL
from store.triage.premises import Side
from store.triage.suspicion import Suspicion, report_suspicion, subject_suspicions


@dataclass(frozen=True, slots=True)
class Headline:
    framework: str
    metric: str
    label: str
    digits: int


def headlines() -> list[Headline]:
    """Every framework's headline metrics, in registry order (the queue's score columns)."""
    out: list[Headline] = []
    for fw in frameworks().values():
        out.extend(Headline(fw.name, m.name, m.label, m.digits) for m in fw.metrics if m.headline)
    return out


@dataclass(slots=True)
class QueueRow:
    report_id: int
    suite: str
    report: str
    task: str
    system: str
    domain: str
    task_type: str
    frameworks: tuple[str, ...]
    words: int
    judge: dict[str, float | None] = field(default_factory=dict)
    adjudicated: dict[str, float | None] = field(default_factory=dict)
    total: int = 0
    decided: int = 0
    differs: int = 0
    conflicts: int = 0
    flags: int = 0
    rated: str | None = None
    suspects: int = 0
    """Undecided verdicts with suspicion flags (store.triage.suspicion)."""
    suspicion: float = 0.0
    """Their summed suspicion: the queue's suspicion order."""

    @property
    def status(self) -> str:
        if self.total and self.decided >= self.total:
            return "done"
        return "in progress" if self.decided else "new"


@dataclass(frozen=True, slots=True)
class Progress:
    judgments: int
    decided: int
    reports: int
    reports_done: int
    conflicts: int
    flags: int


_FEW_REPORTS = 1_000
"""More reports than this are read with the rest (bound parameters have a limit)."""


def queue_rows(conn: sqlite3.Connection, report_ids: Sequence[int] | None = None) -> list[QueueRow]:
    """Every scored report with headline scores (both variants) and review progress; only
    those of ``report_ids`` when given (the rows a decision changed: reading the whole queue
    to keep one would cost far more)."""
    if report_ids is not None and len(report_ids) > _FEW_REPORTS:
        wanted = set(report_ids)
        return [row for row in queue_rows(conn) if row.report_id in wanted]
    chosen = _Chosen(None if report_ids is None else tuple(report_ids))
    rows = _queue_reports(conn, chosen)
    _add_headlines(conn, rows, chosen)
    _add_progress(conn, rows, chosen)
    for rid, value in conn.execute(
        "SELECT report_id, group_concat(reviewer || ':' || value, ' ') FROM report_rating "
        f"WHERE 1{chosen.only('report_id')} GROUP BY report_id",
        chosen.params,
    ):
        if rid in rows:
            rows[rid].rated = value
    for rid, (count, weight) in report_suspicion(conn, report_ids).items():
        if rid in rows:
            rows[rid].suspects, rows[rid].suspicion = count, weight
    return list(rows.values())


@dataclass(frozen=True, slots=True)
class _Chosen:
    """The reports a queue read is of: every one (``ids`` None), or those of ``ids``."""

    ids: tuple[int, ...] | None

    @property
    def params(self) -> tuple[int, ...]:
        return () if self.ids is None else self.ids

    def only(self, column: str) -> str:
        """The SQL condition keeping ``column`` to the chosen reports (after a WHERE)."""
        if self.ids is None:
            return ""
        return f" AND {column} IN ({','.join('?' * len(self.ids))})"

    def rows_of(self, conn: sqlite3.Connection, table: Literal["decision", "flag"]) -> str:
        """``table`` (as ``d``) joined to its subjects' verdicts (as ``j``): a few reports'
        rows are found through their verdicts; the whole queue's, from the decisions or flags
        when they are few."""
        if self.ids is not None:
            return f"{table} d JOIN judgment j ON j.subject_id = d.subject_id"
        return verdicts_of(conn, table)


def _queue_reports(conn: sqlite3.Connection, chosen: _Chosen) -> dict[int, QueueRow]:
    """The chosen reports of the systems under test (not the reference), in queue order."""
    rows: dict[int, QueueRow] = {}
    for rid, suite, rext, text, sext, domain, ttype, fws, words in conn.execute(
        f"""SELECT r.id, s.ext_id, r.ext_id, t.ext_id, y.ext_id, t.domain, t.task_type,
                  s.frameworks, r.words
           FROM report r JOIN task t ON t.id = r.task_id JOIN system y ON y.id = r.system_id
           JOIN suite s ON s.id = y.suite_id
           WHERE y.is_reference = 0{chosen.only("r.id")} ORDER BY s.id, t.id, y.id""",
        chosen.params,
    ):
        rows[rid] = QueueRow(
            rid, suite, rext, text, sext, domain, ttype, tuple(json.loads(fws)), words
        )
    return rows


def _add_headlines(conn: sqlite3.Connection, rows: dict[int, QueueRow], chosen: _Chosen) -> None:
    """Each report's headline scores in both variants. Only headline metrics are unpacked: a
    report has a dozen or two cached metrics, the queue shows four, and this read is most of
    what the queue takes to open."""
    heads = {f"{h.framework}.{h.metric}" for h in headlines()}
    metrics = {h.metric for h in headlines()}
    for rid, framework, variant, values in stored_scores.read_metrics(conn, metrics, chosen.ids):
        row = rows.get(rid)
        if row is None:
            continue
        into = row.judge if variant == "judge" else row.adjudicated
        for metric, value in values.items():
            name = f"{framework}.{metric}"
            if name in heads:
                into[name] = value


def _add_progress(conn: sqlite3.Connection, rows: dict[int, QueueRow], chosen: _Chosen) -> None:
    """Each report's verdicts in force, how many a human decided, overruled or left in
    conflict, and its flags."""
    for rid, total in conn.execute(
        "SELECT report_id, count(*) FROM judgment INDEXED BY judgment_scoring "
        f"WHERE current = 1{chosen.only('report_id')} GROUP BY report_id",
        chosen.params,
    ):
        if rid in rows:
            rows[rid].total = total
    for rid, decided, differs, conflicts in conn.execute(
        f"""SELECT j.report_id, count(*),
                  sum(d.status != 'conflict' AND d.value IS NOT j.value),
                  sum(d.status = 'conflict')
           FROM {chosen.rows_of(conn, "decision")}
           WHERE j.current = 1{chosen.only("j.report_id")} GROUP BY j.report_id""",
        chosen.params,
    ):
        if rid in rows:
            row = rows[rid]
            row.decided, row.differs, row.conflicts = decided, differs or 0, conflicts or 0
    for rid, flags in conn.execute(
        f"SELECT j.report_id, count(*) FROM {chosen.rows_of(conn, 'flag')} "
        f"WHERE j.current = 1{chosen.only('j.report_id')} GROUP BY j.report_id",
        chosen.params,
    ):
        if rid in rows:
            rows[rid].flags = flags


def progress(rows: list[QueueRow]) -> Progress:
    return Progress(
        judgments=sum(r.total for r in rows),
        decided=sum(min(r.decided, r.total) for r in rows),
        reports=len(rows),
        reports_done=sum(1 for r in rows if r.status == "done"),
        conflicts=sum(r.conflicts for r in rows),
        flags=sum(r.flags for r in rows),
    )


@dataclass(frozen=True, slots=True)
class SubtaskView:
    id: int
    ext: str
    ordinal: int
    text: str
    importance: str
    group: str | None
    constraint_types: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class CriterionView:
    id: int
    ext: str
    subtask_id: int | None
    framework: str
    dimension: str
    text: str
    explanation: str
    weight: float | None
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ClaimView:
    id: int
    ext: str
    subtask_id: int | None
    fact: str
    extract: str
    span: tuple[int, int] | None
    citations: tuple[int, ...]
    url: str | None
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class SourceView:
    url: str
    title: str
    text: str
    sha256: str
    error: str | None
    fetched_at: str
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class JudgmentView:
    id: int
    kind: str
    scale: str
    criterion_id: int | None
    claim_id: int | None
    subtask_id: int | None
    ref_idx: int | None
    key: str | None
    judge: str | None
    effective: str | None
    status: str | None
    reviewers: int
    flagged: bool
    explanation: str
    evidence: str
    error: str | None
    source_sha256: str | None
    run: str
    subject: str = ""
    subject_id: int = 0
    flag_note: str | None = None
    suspicions: tuple[Suspicion, ...] = ()
    """Why the judge's verdict deserves a look (store.triage.suspicion), strongest first, as
    stored: from the judges' verdicts alone."""
    rechecked: dict[str, str | None] = field(default_factory=dict)
    """Rule -> its reason as the reviewers' decisions leave it, None where one settled it
    (:func:`recheck_premises`); rules not here stand as stored."""

    @property
    def live_suspicions(self) -> tuple[Suspicion, ...]:
        """The flags that stand, with their reasons as things are now."""
        return tuple(
            s if s.rule not in self.rechecked else Suspicion(s.rule, s.weight, reason)
            for s in self.suspicions
            if (reason := self.rechecked.get(s.rule, s.reason)) is not None
        )

    @property
    def settled(self) -> tuple[Suspicion, ...]:
        """The flags a decision on another subject settled."""
        return tuple(
            s for s in self.suspicions if s.rule in self.rechecked and not self.rechecked[s.rule]
        )

    @property
    def suspicious(self) -> bool:
        return bool(self.live_suspicions)

    @property
    def suspicion(self) -> float:
        return suspicion([s.weight for s in self.live_suspicions])

    @property
    def decided(self) -> bool:
        return self.status is not None and self.status != "conflict"

    @property
    def differs(self) -> bool:
        return self.decided and self.effective != self.judge


@dataclass(slots=True)
class ReportView:
    report_id: int
    report: str
    task: str
    task_id: int
    system: str
    system_id: int
    prompt: str
    domain: str
    category: str
    task_type: str
    markdown: str
    cleaned: str | None
    frameworks: tuple[str, ...]
    subtasks: list[SubtaskView]
    criteria: dict[int, CriterionView]
    claims: dict[int, ClaimView]
    references: dict[int, tuple[str, str | None]]
    sources: dict[str, SourceView]
    judgments: list[JudgmentView]
    ratings: dict[str, str]
    task_metadata: dict[str, Any] = field(default_factory=dict)


def report_view(conn: sqlite3.Connection, report_id: int) -> ReportView:
    head = conn.execute(
        """SELECT r.ext_id, t.ext_id, t.id, y.ext_id, y.id, t.prompt, t.domain, t.category,
                  t.task_type, r.markdown, r.cleaned, s.frameworks, s.id, t.metadata
           FROM report r JOIN task t ON t.id = r.task_id JOIN system y ON y.id = r.system_id
           JOIN suite s ON s.id = y.suite_id WHERE r.id = ?""",
        (report_id,),
    ).fetchone()
    if head is None:
        raise KeyError(f"no report {report_id}")
    (
        rext,
        text,
        task_id,
        sext,
        system_id,
        prompt,
        domain,
        category,
        ttype,
        markdown,
        cleaned,
        fws,
        suite_id,
        task_meta,
    ) = head
    subtasks = [
        SubtaskView(sid, ext, ordinal, stext, importance, grp, tuple(json.loads(ctypes)))
        for sid, ext, ordinal, stext, importance, grp, ctypes in conn.execute(
            "SELECT id, ext_id, ordinal, text, importance, grp, constraint_types FROM subtask "
            "WHERE task_id = ? ORDER BY ordinal",
            (task_id,),
        )
    ]
    criteria = {
        cid: CriterionView(cid, ext, sub, fw, dim, ctext, expl, weight, _meta(meta))
        for cid, ext, sub, fw, dim, ctext, expl, weight, meta in conn.execute(
            "SELECT id, ext_id, subtask_id, framework, dimension, text, explanation, weight, "
            "metadata FROM criterion WHERE task_id = ? ORDER BY ordinal",
            (task_id,),
        )
    }
    claims = _claims(conn, report_id)
    references = {
        idx: (title, url)
        for idx, title, url in conn.execute(
            "SELECT idx, title, url FROM reference WHERE report_id = ? ORDER BY idx",
            (report_id,),
        )
    }
    urls = {url for _, url in references.values() if url}
    urls.update(c.url for c in claims.values() if c.url)
    sources = _sources(conn, suite_id, sorted(urls))
    judgments = _with_suspicions(
        conn,
        [
            _judgment_view(row)
            for row in conn.execute(
                f"{_JUDGMENT_VIEW_SQL} WHERE j.report_id = ? AND j.current = 1 ORDER BY j.id",
                (report_id,),
            )
        ],
    )
    ratings = dict(
        conn.execute(
            "SELECT reviewer, value FROM report_rating WHERE report_id = ?", (report_id,)
        ).fetchall()
    )
    view = ReportView(
        report_id,
        rext,
        text,
        task_id,
        sext,
        system_id,
        prompt,
        domain,
        category,
        ttype,
        markdown,
        cleaned,
        tuple(json.loads(fws)),
        subtasks,
        criteria,
        claims,
        references,
        sources,
        judgments,
        ratings,
        _meta(task_meta),
    )
    recheck_premises(view)
    return view


def _sides(view: ReportView) -> list[Side]:
    """Every verdict of the report as the premise check reads it (claims by their ids)."""
    return [
        Side(
            j.subject_id,
            j.kind,
            view.claims[j.claim_id].ext if j.claim_id in view.claims else None,
            j.ref_idx,
            j.judge,
            j.effective if j.differs else None,
        )
        for j in view.judgments
    ]


def recheck_premises(view: ReportView) -> list[int]:
    """Check again the flags whose premise is another subject's verdict, with the reviewers'
    overrides in place of the judge's values (:mod:`store.triage.premises`); returns the
    judgments whose flags read differently than before."""
    from reviewer.registry import frameworks
    from store.triage.premises import RULE, entailments_of, recheck

    entailments = entailments_of(view.frameworks, frameworks())
    flagged = {j.subject_id for j in view.judgments if any(s.rule == RULE for s in j.suspicions)}
    if not entailments or not flagged:
        return []
    found = recheck(_sides(view), flagged, entailments)
    changed = []
    for judgment in view.judgments:
        now = {RULE: found[judgment.subject_id]} if judgment.subject_id in found else {}
        if now != judgment.rechecked:
            judgment.rechecked = now
            changed.append(judgment.id)
    return changed


def _claims(conn: sqlite3.Connection, report_id: int) -> dict[int, ClaimView]:
    """The report's claims in report order."""
    return {
        kid: ClaimView(
            kid,
            ext,
            sub,
            fact,
            extract,
            (start, end) if start is not None else None,
            tuple(json.loads(cites)),
            url,
            _meta(meta),
        )
        for kid, ext, sub, fact, extract, start, end, cites, url, meta in conn.execute(
            "SELECT id, ext_id, subtask_id, fact, extract, span_start, span_end, citations, url, "
            "metadata FROM claim WHERE report_id = ? ORDER BY ordinal",
            (report_id,),
        )
    }


def _sources(conn: sqlite3.Connection, suite_id: int, urls: list[str]) -> dict[str, SourceView]:
    """The cited pages by URL: the bundle's, else the newest fetched by `gavel judge` or
    `gavel fetch` for URLs the bundle itself had no page for."""
    sources: dict[str, SourceView] = {}
    if not urls:
        return sources
    for url, title, stext, sha, error, fetched, meta in conn.execute(
        f"SELECT url, title, text, sha256, error, fetched_at, metadata FROM source "
        f"WHERE suite_id = ? AND url IN ({','.join('?' * len(urls))})",
        (suite_id, *urls),
    ):
        sources[url] = SourceView(
            url, title, stext, sha, error, fetched, json.loads(meta) if meta != "{}" else {}
        )
    missing = [u for u in urls if u not in sources]
    if missing:
        for url, title, ptext, sha, error, fetched in conn.execute(
            f"SELECT url, title, text, sha256, error, fetched_at FROM page_fetch "
            f"WHERE suite_id = ? AND url IN ({','.join('?' * len(missing))}) "
            "ORDER BY fetched_at DESC, id DESC",
            (suite_id, *missing),
        ):
            sources.setdefault(url, SourceView(url, title, ptext, sha, error, fetched))
    return sources


def _meta(text: str | None) -> dict[str, Any]:
    if not text or text == "{}":
        return {}
    value = json.loads(text)
    return value if isinstance(value, dict) else {}


def _with_suspicions(conn: sqlite3.Connection, views: list[JudgmentView]) -> list[JudgmentView]:
    found = subject_suspicions(conn, [v.subject_id for v in views])
    for view in views:
        view.suspicions = tuple(found.get(view.subject_id, ()))
    return views


def judgment_views(conn: sqlite3.Connection, ids: list[int]) -> dict[int, JudgmentView]:
    """Fresh views of a few judgments (after a decision), without reloading the report."""
    if not ids:
        return {}
    views = _with_suspicions(
        conn,
        [
            _judgment_view(row)
            for row in conn.execute(
                f"{_JUDGMENT_VIEW_SQL} WHERE j.id IN ({','.join('?' * len(ids))})", ids
            )
        ],
    )
    return {view.id: view for view in views}


_JUDGMENT_VIEW_SQL = f"""
    SELECT j.id, j.kind, j.criterion_id, j.claim_id, j.subtask_id, j.ref_idx, j.key,
           j.value, {EFFECTIVE_SQL}, d.status, coalesce(d.reviewers, 0),
           f.subject_id IS NOT NULL, j.explanation, j.evidence, j.error,
           j.source_sha256, jr.ext_id, j.subject, j.subject_id, f.note
    FROM judgment j
    JOIN judge_run jr ON jr.id = j.run_id
    LEFT JOIN decision d ON d.subject_id = j.subject_id
    LEFT JOIN flag f ON f.subject_id = j.subject_id"""
"""What a JudgmentView is made of; callers add the WHERE (a report's, or a few ids)."""


def _judgment_view(row: tuple[Any, ...]) -> JudgmentView:
    kind = get_kind(row[1])
    return JudgmentView(
        row[0],
        row[1],
        kind.scale.name if kind else "",
        row[2],
        row[3],
        row[4],
        row[5],
        row[6],
        row[7],
        row[8],
        row[9],
        row[10],
        bool(row[11]),
        row[12],
        row[13],
        row[14],
        row[15],
        row[16],
        row[17],
        row[18],
        row[19],
    )


@dataclass(frozen=True, slots=True)
class ScoreLine:
    framework: str
    metric: str
    label: str
    digits: int
    judge: float | None
    adjudicated: float | None


def report_scores(conn: sqlite3.Connection, report_id: int) -> list[ScoreLine]:
    """The report's visible metrics in both variants, headline metrics first."""
    values: dict[tuple[str, str, str], float | None] = {}
    for _, framework, variant, scores in stored_scores.read(conn, [report_id]):
        for name, value in scores.items():
            values[(framework, name, variant)] = value
    out: list[ScoreLine] = []
    for fw in frameworks().values():
        for metric in sorted(fw.metrics, key=lambda m: not m.headline):
            if (fw.name, metric.name, "judge") in values:
                out.append(
                    ScoreLine(
                        fw.name,
                        metric.name,
                        metric.label,
                        metric.digits,
                        values[(fw.name, metric.name, "judge")],
                        values.get((fw.name, metric.name, "adjudicated")),
                    )
                )
    return out


@dataclass(frozen=True, slots=True)
class Rank:
    metric: str
    judge: int | None
    adjudicated: int | None
    of: int


def system_rank(conn: sqlite3.Connection, system_id: int, framework: str, metric: str) -> Rank:
    """The system's rank among its suite's systems on one metric, in both variants."""
    by_variant: dict[str, list[tuple[float, int]]] = defaultdict(list)
    for sid, variant, value in conn.execute(
        """SELECT y.id, s.variant, s.value FROM score s
           JOIN system y ON s.scope = 'system:' || y.id
           WHERE s.framework = ? AND s.metric = ?
             AND y.suite_id = (SELECT suite_id FROM system WHERE id = ?)""",
        (framework, metric, system_id),
    ):
        if value is not None:
            by_variant[variant].append((value, sid))

    def rank(variant: str) -> int | None:
        values = by_variant[variant]
        mine = next((value for value, sid in values if sid == system_id), None)
        if mine is None:
            return None
        return 1 + sum(1 for other, _ in values if other > mine)  # ties share the better rank

    return Rank(metric, rank("judge"), rank("adjudicated"), len(by_variant["judge"]))


def subject_label(view: ReportView, judgment: JudgmentView) -> str:
    """A short human name for a judgment's subject."""
    if judgment.claim_id is not None:
        claim = view.claims.get(judgment.claim_id)
        name = claim.ext if claim else str(judgment.claim_id)
        if judgment.ref_idx is not None:
            return f"{name} ↔ [{judgment.ref_idx}]"
        if judgment.key is not None:
            return f"{name} → {judgment.key}"
        return name
    if judgment.criterion_id is not None:
        criterion = view.criteria.get(judgment.criterion_id)
        name = criterion.ext if criterion else str(judgment.criterion_id)
        return f"{name} @{judgment.key}" if judgment.key is not None else name
    return judgment.key or "—"


History = list[tuple[str, str, str | None, str, str | None]]
"""(reviewer, action, value, rationale, reason) of a judgment's live decisions, oldest first."""


def judgment_history(conn: sqlite3.Connection, ids: list[int]) -> dict[int, History]:
    """Live (not undone) decisions and flags on each judgment's subject, for the detail pane
    (whichever judge run's verdict they were made on)."""
    out: dict[int, History] = defaultdict(list)
    if not ids:
        return out
    for jid, reviewer, action, value, rationale, reason in conn.execute(
        f"""SELECT j.id, e.reviewer, e.action, e.value, e.rationale, e.reason
            FROM judgment j JOIN subject s ON s.id = j.subject_id
            JOIN review_event e ON e.target = s.target
            JOIN event_live l ON l.uuid = e.uuid
            WHERE l.live = 1 AND j.id IN ({",".join("?" * len(ids))})
            ORDER BY j.id, e.created_at, e.uuid""",
        ids,
    ):
        out[jid].append((reviewer, action, value, rationale, reason))
    return out


def report_history(conn: sqlite3.Connection, report_id: int) -> dict[int, History]:
    ids = [
        jid
        for (jid,) in conn.execute(
            """SELECT j.id FROM judgment j JOIN subject s ON s.id = j.subject_id
           WHERE j.report_id = ? AND j.current = 1
             AND EXISTS (SELECT 1 FROM review_event e WHERE e.target = s.target)""",
            (report_id,),
        )
    ]
    return judgment_history(conn, ids)


@dataclass(frozen=True, slots=True)
class OtherVerdict:
    run: str
    model: str
    value: str | None
    explanation: str
    current: bool
    active: bool = True
    """False for a candidate run (it does not count until activated)."""


def other_run_verdicts(
    conn: sqlite3.Connection, report_id: int
) -> dict[tuple[str, str], list[OtherVerdict]]:
    """Every run's verdict per (kind, subject) of a report, for runs side by side.

    Keyed by (kind, subject) because a judgment's subject text is the same in every run.
    """
    out: dict[tuple[str, str], list[OtherVerdict]] = defaultdict(list)
    for kind, subject, run, model, value, explanation, current, active in conn.execute(
        """SELECT j.kind, j.subject, r.ext_id, r.model, j.value, j.explanation, j.current,
                  r.active > 0
           FROM judgment j JOIN judge_run r ON r.id = j.run_id
           WHERE j.report_id = ? ORDER BY r.created_at, r.id""",
        (report_id,),
    ):
        out[(kind, subject)].append(
            OtherVerdict(run, model, value, explanation, bool(current), bool(active))
        )
    return {key: runs for key, runs in out.items() if len(runs) > 1}


def primary_metric(frameworks: tuple[str, ...]) -> tuple[str, str] | None:
    """The (framework, metric) a report is ranked by: its first framework's first headline."""
    from reviewer.registry import frameworks as registry

    for name in frameworks:
        fw = registry().get(name)
        if fw is not None:
            for metric in fw.metrics:
                if metric.headline:
                    return name, metric.name
    return None


def report_primary(conn: sqlite3.Connection, report_id: int) -> tuple[str, str] | None:
    row = conn.execute(
        "SELECT s.frameworks FROM report r JOIN system y ON y.id = r.system_id "
        "JOIN suite s ON s.id = y.suite_id WHERE r.id = ?",
        (report_id,),
    ).fetchone()
    return primary_metric(tuple(json.loads(row[0]))) if row else None
