"""The score cache: every framework's scores per report and per system, in both variants.

Derived and disposable: :func:`rebuild_scores` recomputes it from inputs and the review log;
:func:`update_scores` recomputes only the reports a decision touched and the aggregates of their
systems. Property tests hold the two to the same result. Options (the [CHOICE] readings) are
stored in ``meta``; changing them rebuilds.

Both read their inputs inside the write transaction they write in: inputs read before taking
the lock could be another writer's past, and scores computed from them would overwrite that
writer's fresher ones. A writer that changes inputs without rescoring in the same transaction
(an import through :func:`store.imports.loader.import_records`) leaves ``meta.scores_behind``
set, and :func:`ensure_scores` — which every command and the workstation call on open —
rebuilds: a process killed between the two cannot leave stale scores behind.
"""

from __future__ import annotations

import json
import sqlite3
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING

from reviewer.framework import (
    ColumnAggregation,
    Framework,
    ReportScores,
    Variant,
    resolve_options,
)
from reviewer.registry import find_framework, frameworks
from store.scores import report_rows as report_scores
from store.scores.columns import SystemColumns, load_columns, store_columns
from store.scores.inputs import load_inputs, report_meta
from store.sqlite.bulk import gc_paused
from store.sqlite.tx import transaction

if TYPE_CHECKING:
    from store.scores.counted import Part

OPTIONS_KEY = "options"
SCORES_BEHIND = "scores_behind"
"""``meta`` key: present while the score cache is known to lag the inputs (value: why)."""
_INSERT = "INSERT INTO score (scope, framework, variant, metric, value, n) VALUES (?,?,?,?,?,?)"


def report_scope(report_id: int) -> str:
    return f"report:{report_id}"


def system_scope(system_id: int) -> str:
    return f"system:{system_id}"


def load_options(
    conn: sqlite3.Connection, names: Iterable[str] | None = None
) -> dict[str, dict[str, str]]:
    """Resolved options per framework: stored overrides on top of each framework's defaults
    (every framework, or those of ``names`` that exist)."""
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (OPTIONS_KEY,)).fetchone()
    stored: dict[str, dict[str, str]] = json.loads(row[0]) if row else {}
    chosen = (
        frameworks()
        if names is None
        else {name: fw for name in names if (fw := find_framework(name)) is not None}
    )
    return {name: resolve_options(fw, stored.get(name, {})) for name, fw in chosen.items()}


def set_options(
    conn: sqlite3.Connection, framework: str, overrides: Mapping[str, str], *, rebuild: bool = True
) -> None:
    """Store option overrides for one framework and rebuild the cache under them (a caller that
    sets several in its own transaction passes ``rebuild=False`` and rebuilds once)."""
    fw = frameworks()[framework]
    resolve_options(fw, overrides)  # validates
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (OPTIONS_KEY,)).fetchone()
    stored: dict[str, dict[str, str]] = json.loads(row[0]) if row else {}
    merged = {**stored.get(framework, {}), **overrides}
    stored[framework] = {
        k: v for k, v in merged.items() if v != next(o.default for o in fw.options if o.name == k)
    }
    with transaction(conn):
        conn.execute(
            "INSERT OR REPLACE INTO meta VALUES (?, ?)",
            (OPTIONS_KEY, json.dumps(stored, sort_keys=True)),
        )
        if rebuild:
            rebuild_scores(conn)
        else:
            mark_scores_behind(conn, "options changed")


@dataclass(slots=True)
class ScoreTable:
    """Computed scores, keyed like the cache: (scope, framework, variant) -> metric -> value."""

    reports: dict[tuple[int, str, Variant], ReportScores]
    systems: dict[tuple[int, str, Variant], dict[str, tuple[float | None, int]]]


def compute_all(conn: sqlite3.Connection) -> ScoreTable:
    """Every score from scratch, in memory (the definition the cache must always equal).

    Frameworks that can be scored from counts are, from what SQL counts; every other
    framework, and any report counts cannot describe, from its rows (:func:`score_rows`).
    """
    return _table(conn, _score_all(conn))


def compute_rows(conn: sqlite3.Connection) -> ScoreTable:
    """Every score from every row, in Python: what :func:`compute_all` computes, read the
    slow way (the reference the counted path is tested against)."""
    pairs = {rid: list(meta.frameworks) for rid, meta in report_meta(conn).items()}
    return _table(conn, _score_rows(conn, pairs))


def _table(conn: sqlite3.Connection, scored: Iterable[Scored]) -> ScoreTable:
    """Report scores as they come, and each system's aggregate of its reports (in id order)."""
    reports: dict[tuple[int, str, Variant], ReportScores] = {}
    by_system: dict[tuple[int, str, Variant], dict[int, ReportScores]] = defaultdict(dict)
    for rid, system_id, name, judge, adjudicated in scored:
        both: tuple[tuple[Variant, ReportScores], ...] = (
            ("judge", judge),
            ("adjudicated", adjudicated),
        )
        for variant, scores in both:
            reports[(rid, name, variant)] = scores
            by_system[(system_id, name, variant)][rid] = scores
    registry, options = frameworks(), load_options(conn)
    systems = {
        key: _aggregate(registry[key[1]], [values[rid] for rid in sorted(values)], options[key[1]])
        for key, values in by_system.items()
    }
    return ScoreTable(dict(sorted(reports.items())), systems)


Scored = tuple[int, int, str, ReportScores, ReportScores]
"""(report id, system id, framework, judge scores, adjudicated scores)."""

_CHUNK = 256
"""Reports scored from rows at a time: memory holds one chunk's rows."""


def _score_all(conn: sqlite3.Connection) -> Iterator[Scored]:
    """Every report's scores in every framework of its suite, both variants: counted by SQL
    where the framework allows it, else from the rows, a chunk of reports at a time."""
    # (numpy, which counting needs, is imported for a full recompute only.)
    from store.scores.counted import plan, score_counted, scored_reports

    options = load_options(conn)
    registry = frameworks()
    counted, from_rows = plan(report_meta(conn), registry)
    for name, wanted in counted.items():
        spec = registry[name].bulk
        assert spec is not None
        scored = score_counted(conn, spec, wanted, options[name])
        for rid in scored.uncounted:
            from_rows[rid].append(name)
        for rid, judge, adjudicated in scored_reports(scored):
            yield rid, wanted[rid].system_id, name, judge, adjudicated
    yield from _score_rows(conn, from_rows)


def _score_rows(conn: sqlite3.Connection, pairs: Mapping[int, Sequence[str]]) -> Iterator[Scored]:
    """The given (report, frameworks) scored from their rows, a chunk at a time.

    A report no human has decided on has identical verdicts in both variants, so its judge
    scores are reused as its adjudicated scores instead of being computed twice.
    """
    if not pairs:
        return
    options = load_options(conn)
    registry = frameworks()
    decided = {
        rid
        for (rid,) in conn.execute(
            "SELECT DISTINCT s.report_id FROM decision d JOIN subject s ON s.id = d.subject_id"
        )
    }
    ids = sorted(pairs)
    for start in range(0, len(ids), _CHUNK):
        inputs = load_inputs(conn, ids[start : start + _CHUNK])
        for rid, report in inputs.items():
            for name in pairs[rid]:
                fw = registry[name]
                judge = fw.score_report(report, "judge", options[name])
                # Contract: a score depends on the variant only through verdict values, so an
                # undecided report's adjudicated scores are its judge scores.
                adjudicated = (
                    fw.score_report(report, "adjudicated", options[name])
                    if rid in decided or report.expansions
                    else judge
                )
                yield rid, report.system_id, name, judge, adjudicated


def _aggregate(
    fw: Framework, values: Sequence[ReportScores], options: Mapping[str, str]
) -> dict[str, tuple[float | None, int]]:
    return {m: (a.value, a.n) for m, a in fw.aggregate(values, options).items()}


def _aggregate_columns(
    aggregation: ColumnAggregation, columns: SystemColumns, options: Mapping[str, str]
) -> dict[str, tuple[float | None, int]]:
    return {
        m: (a.value, a.n)
        for m, a in aggregation.aggregate(columns.columns, len(columns.ids), options).items()
    }


def rebuild_scores(conn: sqlite3.Connection) -> None:
    """Every score recomputed, in one transaction."""
    with gc_paused(), transaction(conn):
        _rebuild(conn)


def _rebuild(conn: sqlite3.Connection) -> None:
    """Every score recomputed and stored: a report's scores are written as they are scored
    (one row each, :mod:`store.scores.report_rows`), in batches; counted reports first, then
    those scored from their rows."""
    # (numpy, which counting needs, is imported for a full recompute only.)
    from store.scores.counted import count_all

    registry, options = frameworks(), load_options(conn)
    write = partial(report_scores.insert_encoded, conn)
    systems = _Systems()
    from_rows: dict[int, list[str]] = defaultdict(list)
    _clear_scores(conn)
    counted = count_all(conn, options, write)
    for name, part in counted.parts:
        systems.add(name, part)
    for rid, names in counted.from_rows.items():
        from_rows[rid].extend(names)
    batch: list[tuple[int, str, str, str, bytes]] = []
    for rid, system_id, name, judge, adjudicated in _score_rows(conn, from_rows):
        batch.extend(report_scores.encoded_rows(rid, name, judge, adjudicated))
        systems.scores[(system_id, name, "judge")][rid] = judge
        systems.scores[(system_id, name, "adjudicated")][rid] = adjudicated
        if len(batch) > 4_096:
            write(batch)
            batch.clear()
    write(batch)
    for (sid, name, variant), values in systems.merged(registry).items():
        fw = registry[name]
        if isinstance(values, SystemColumns):
            assert fw.columns is not None
            store_columns(conn, sid, name, variant, values)
            aggregates = _aggregate_columns(fw.columns, values, options[name])
        else:
            aggregates = _aggregate(fw, [values[rid] for rid in sorted(values)], options[name])
        conn.executemany(
            _INSERT,
            [(system_scope(sid), name, variant, m, v, n) for m, (v, n) in aggregates.items()],
        )
    conn.execute("DELETE FROM meta WHERE key = ?", (SCORES_BEHIND,))


def _clear_scores(conn: sqlite3.Connection) -> None:
    for table in ("score", "report_score", "impact", "score_columns"):
        conn.execute(f"DELETE FROM {table}")


@dataclass(slots=True)
class _Systems:
    """What a full recompute aggregates, by (system, framework, variant): the column slices of
    counted parts, and report scores (counted by a framework without columns, or scored from
    rows)."""

    slices: dict[tuple[int, str, Variant], list[SystemColumns]] = field(
        default_factory=lambda: defaultdict(list)
    )
    scores: dict[tuple[int, str, Variant], dict[int, ReportScores]] = field(
        default_factory=lambda: defaultdict(dict)
    )

    def add(self, name: str, part: Part) -> None:
        for (sid, variant), columns in part.columns.items():
            self.slices[(sid, name, variant)].append(columns)
        for (sid, variant), scores in part.scores.items():
            self.scores[(sid, name, variant)].update(scores)

    def merged(
        self, registry: Mapping[str, Framework]
    ) -> dict[tuple[int, str, Variant], SystemColumns | dict[int, ReportScores]]:
        """Each system's columns where its framework aggregates from columns, else its
        report scores."""
        out: dict[tuple[int, str, Variant], SystemColumns | dict[int, ReportScores]] = {}
        for key in sorted({*self.slices, *self.scores}):  # the same order every time
            aggregation = registry[key[1]].columns
            scores = self.scores.get(key, {})
            if aggregation is None:
                out[key] = scores
                continue
            slices = self.slices.get(key, [])
            if scores or not slices:
                slices = [*slices, SystemColumns.of(scores, aggregation.metrics)]
            out[key] = SystemColumns.merged(slices)
        return out


def mark_scores_behind(conn: sqlite3.Connection, why: str) -> None:
    """Record, in the caller's transaction, that the cache lags inputs it just changed."""
    conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (SCORES_BEHIND, why))


@dataclass(slots=True)
class SystemScoreCache:
    """The per-report scores of whole systems, kept between decisions by one long-lived writer.

    Re-aggregating a system after a decision needs every report of that system; reading them
    back from the score table was most of an incremental update. This cache holds them in
    memory for the connection that owns it. It is only valid while nothing else changes the
    score table: ``PRAGMA data_version`` moves when another connection commits, which clears
    it, and whoever writes scores on the same connection by other means must ``clear()`` it.
    """

    data_version: int | None = None
    systems: dict[tuple[int, str, str], dict[int, ReportScores]] = field(default_factory=dict)
    columns: dict[tuple[int, str, str], SystemColumns] = field(default_factory=dict)
    """The same, for frameworks that aggregate from columns (:mod:`store.scores.columns`)."""

    def clear(self) -> None:
        self.systems.clear()
        self.columns.clear()
        self.data_version = None

    def check(self, conn: sqlite3.Connection) -> None:
        version = int(conn.execute("PRAGMA data_version").fetchone()[0])
        if version != self.data_version:
            self.systems.clear()
            self.columns.clear()
            self.data_version = version


def update_scores(
    conn: sqlite3.Connection,
    report_ids: Iterable[int],
    variants: Sequence[Variant] = ("adjudicated",),
    cache: SystemScoreCache | None = None,
) -> None:
    """Recompute the given reports and their systems' aggregates (after a decision)."""
    ids = sorted(set(report_ids))
    if not ids:
        return
    with transaction(conn):
        _update(conn, ids, variants, cache)


def _update(
    conn: sqlite3.Connection,
    ids: list[int],
    variants: Sequence[Variant],
    cache: SystemScoreCache | None,
) -> None:
    if cache is not None:
        cache.check(conn)
    fresh: dict[tuple[int, str, str], dict[int, ReportScores]] = defaultdict(dict)
    inputs = load_inputs(conn, ids)
    metas = report_meta(conn, ids)
    # Only the frameworks these reports are scored by: a decision imports one benchmark.
    names = sorted({name for rid in inputs for name in metas[rid].frameworks})
    options = load_options(conn, names)
    registry = {name: fw for name in names if (fw := find_framework(name)) is not None}
    touched: set[tuple[int, str]] = set()
    conn.execute(f"DELETE FROM impact WHERE report_id IN ({','.join('?' * len(ids))})", ids)
    for rid, report in inputs.items():
        for name in metas[rid].frameworks:
            fw = registry.get(name)
            if fw is None:
                continue
            touched.add((report.system_id, name))
            for variant in variants:
                scores = fw.score_report(report, variant, options[name])
                fresh[(report.system_id, name, variant)][rid] = scores
                report_scores.write(conn, [(rid, name, variant, scores)])
    for system_id, name in sorted(touched):
        for variant in variants:
            key = (system_id, name, variant)
            aggregates = _reaggregated(conn, registry[name], key, fresh[key], cache, options[name])
            scope = system_scope(system_id)
            conn.execute(
                "DELETE FROM score WHERE scope = ? AND framework = ? AND variant = ?",
                (scope, name, variant),
            )
            conn.executemany(
                _INSERT,
                [(scope, name, variant, m, v, n) for m, (v, n) in aggregates.items()],
            )


def _reaggregated(
    conn: sqlite3.Connection,
    fw: Framework,
    key: tuple[int, str, Variant],
    fresh: Mapping[int, ReportScores],
    cache: SystemScoreCache | None,
    options: Mapping[str, str],
) -> dict[str, tuple[float | None, int]]:
    """A system's aggregate with ``fresh`` in place: from its columns where the framework
    aggregates from columns, else from its report scores."""
    if fw.columns is not None:
        columns = _system_columns(conn, key, fw.columns, fresh, cache)
        return _aggregate_columns(fw.columns, columns, options)
    return _aggregate(fw, _system_reports(conn, key, fresh, cache), options)


def _system_reports(
    conn: sqlite3.Connection,
    key: tuple[int, str, Variant],
    fresh: Mapping[int, ReportScores],
    cache: SystemScoreCache | None,
) -> list[ReportScores]:
    """A system's report scores with ``fresh`` in place, in report-id order (as the full
    recompute sums them: floating point)."""
    known = cache.systems.get(key) if cache is not None else None
    if known is None:
        known = system_report_scores(conn, *key)  # already holds the fresh rows
        if cache is not None:
            cache.systems[key] = known
    else:
        for rid, scores in fresh.items():
            if scores:
                known[rid] = scores
            else:  # no report row: absent, as when read back
                known.pop(rid, None)
    return [known[rid] for rid in sorted(known)]


def _system_columns(
    conn: sqlite3.Connection,
    key: tuple[int, str, Variant],
    aggregation: ColumnAggregation,
    fresh: Mapping[int, ReportScores],
    cache: SystemScoreCache | None,
) -> SystemColumns:
    """A system's columns with ``fresh`` in place, stored back for the next reader: from the
    cache, else its stored columns, else (missing or malformed) its report rows."""
    columns = cache.columns.get(key) if cache is not None else None
    if columns is None:
        columns = load_columns(conn, *key)
        if columns is None or set(columns.columns) != set(aggregation.metrics):
            columns = SystemColumns.of(system_report_scores(conn, *key), aggregation.metrics)
        if cache is not None:
            cache.columns[key] = columns
    for rid, scores in fresh.items():
        columns.put(rid, scores)
    store_columns(conn, *key, columns)
    return columns


def system_report_scores(
    conn: sqlite3.Connection, system_id: int, framework: str, variant: str
) -> dict[int, ReportScores]:
    """The cached per-report scores of one system, by report id."""
    return report_scores.system_reports(conn, system_id, framework, variant)


def cached(conn: sqlite3.Connection) -> ScoreTable:
    """The cache read back into the shape :func:`compute_all` returns (for comparisons)."""
    reports: dict[tuple[int, str, Variant], ReportScores] = defaultdict(dict)
    systems: dict[tuple[int, str, Variant], dict[str, tuple[float | None, int]]] = defaultdict(dict)
    for scope, framework, variant, metric, value, n in conn.execute(
        "SELECT scope, framework, variant, metric, value, n FROM score"
    ):
        kind, _, ident = scope.partition(":")
        if kind == "system":
            systems[(int(ident), framework, variant)][metric] = (value, n)
    for rid, framework, variant, scores in report_scores.read(conn):
        reports[(rid, framework, "judge" if variant == "judge" else "adjudicated")] = scores
    return ScoreTable(dict(reports), dict(systems))


def ensure_scores(conn: sqlite3.Connection) -> bool:
    """Build the cache if it is empty but there is something to score (first open, new DB),
    or if a writer recorded that it lags (killed between inputs and scores); True if rebuilt.

    Cheap when nothing is wrong (two indexed lookups), so every command can call it on open.
    """
    behind = conn.execute("SELECT 1 FROM meta WHERE key = ?", (SCORES_BEHIND,)).fetchone()
    if behind is None:
        has_scores = (
            report_scores.has_any(conn) or conn.execute("SELECT 1 FROM score LIMIT 1").fetchone()
        )
        has_reports = conn.execute("SELECT 1 FROM report LIMIT 1").fetchone()
        if not has_reports or has_scores:
            return False
    rebuild_scores(conn)
    return True


def suite_unscored(conn: sqlite3.Connection, suite_id: int) -> bool:
    """Whether none of a suite's reports has a score: what a process killed between an import
    and its scores left behind before imports and scores committed together."""
    return bool(
        conn.execute(
            """SELECT EXISTS (SELECT 1 FROM report r JOIN system y ON y.id = r.system_id
                          WHERE y.suite_id = ?)
              AND NOT EXISTS (SELECT 1 FROM report r JOIN system y ON y.id = r.system_id
                              JOIN report_score s ON s.report_id = r.id
                              WHERE y.suite_id = ?)""",
            (suite_id, suite_id),
        ).fetchone()[0]
    )
