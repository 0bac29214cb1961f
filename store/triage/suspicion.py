"""Suspicion flags, kept per subject: computed at import, after a judge run, on activation.

The flags are derived from the judges' verdicts and the inputs only (never from human
decisions), so they change when verdicts do: a bundle imported, a judge run finished (its
verdicts may disagree with the counting ones), a run activated or retired (which verdicts
count changed). :func:`refresh_suspicion` recomputes them for a set of reports in the caller's
transaction; the rules themselves live in :mod:`reviewer.suspicion` and in each framework's
:class:`~reviewer.grading.Grading`.
"""

from __future__ import annotations

import functools
import itertools
import json
import operator
import sqlite3
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from reviewer.grading import Claim, Criterion, Evidence, Flag, Grading, Page, Verdict
from reviewer.registry import frameworks
from reviewer.suspicion import flags, reads_claims, suspicion
from store.sqlite.tx import transaction

BATCH = 300
"""Reports loaded and checked at a time: memory stays flat however large the suite."""

CREATE = """CREATE TABLE suspicion (
    subject_id INTEGER NOT NULL REFERENCES subject(id),
    rule TEXT NOT NULL,
    weight REAL NOT NULL,
    reason TEXT NOT NULL,
    PRIMARY KEY (subject_id, rule)
) STRICT, WITHOUT ROWID"""


@dataclass(frozen=True, slots=True)
class Suspicion:
    """One flag as the screens show it."""

    rule: str
    weight: float
    reason: str


def _in(ids: Sequence[object]) -> str:
    return ",".join("?" * len(ids))


def _json(text: str | None) -> dict[str, Any]:
    if not text or text == "{}":
        return {}
    value = json.loads(text)
    return value if isinstance(value, dict) else {}


def _gradings(names: Iterable[str]) -> list[Grading]:
    registry = frameworks()
    out = []
    for name in names:
        grading = registry[name].grading if name in registry else None
        if grading is not None:
            out.append(grading)
    return out


def _citations(text: str) -> tuple[int, ...]:
    """A claim's citations column ('[3, 4]'), without the cost of a JSON parser per claim."""
    inner = text.strip()[1:-1]
    return tuple(int(part) for part in inner.split(",") if part.strip()) if inner.strip() else ()


Head = tuple[int, str, int, str, str, str, int]
"""(report id, report ext id, task id, task prompt, task metadata, suite frameworks, suite id)
of a report whose evidence is loaded."""


def evidence(
    conn: sqlite3.Connection,
    report_ids: Sequence[int],
    with_text: Callable[[Sequence[str]], bool] = lambda names: True,
    verdicts: Mapping[int, list[Verdict]] | None = None,
    with_claims: Callable[[Sequence[str]], bool] = lambda names: True,
) -> Iterator[tuple[int, list[str], str, Evidence]]:
    """(report id, framework names, task prompt, evidence) of each report, loaded in one query
    per table; the report text only where ``with_text(framework names)`` says so, and its
    claims only where ``with_claims`` says so or a page cited for its task is unreachable (see
    :func:`reviewer.suspicion.reads_claims`). ``verdicts``: each report's verdicts, when the
    caller holds them (an import that has just written them, every one current): they are
    then not read back."""
    ids = sorted(set(report_ids))
    if not ids:
        return
    heads = _heads(conn, ids)
    names = {h[0]: json.loads(h[5]) for h in heads}
    texts = _texts(conn, [h[0] for h in heads if with_text(names[h[0]])])
    task_ids = sorted({h[2] for h in heads})
    criteria = _criteria(conn, task_ids)
    references = _references(conn, ids)
    of_task = _task_pages(conn, heads, _task_urls(conn, task_ids))
    reading = _reading_claims(heads, names, of_task, with_claims)
    claims = _claims(conn, reading, _citing_dead_pages(heads, references, of_task))
    current, others = _verdicts(conn, ids) if verdicts is None else _held(verdicts)
    for rid, rext, task, prompt, tmeta, _, _ in heads:
        yield (
            rid,
            list(names[rid]),
            prompt,
            Evidence(
                rext,
                texts.get(rid, ""),
                _json(tmeta),
                criteria[task],
                claims[rid],
                references[rid],
                of_task[task],
                current[rid],
                others[rid],
            ),
        )


def _heads(conn: sqlite3.Connection, ids: Sequence[int]) -> list[Head]:
    return conn.execute(
        f"""SELECT r.id, r.ext_id, r.task_id, t.prompt, t.metadata, s.frameworks, s.id
            FROM report r JOIN task t ON t.id = r.task_id JOIN system y ON y.id = r.system_id
            JOIN suite s ON s.id = y.suite_id WHERE r.id IN ({_in(ids)})""",
        ids,
    ).fetchall()


def _reading_claims(
    heads: Sequence[Head],
    names: Mapping[int, Sequence[str]],
    of_task: Mapping[int, dict[str, Page]],
    with_claims: Callable[[Sequence[str]], bool],
) -> list[int]:
    """The reports whose claims a rule may read: where the frameworks' own rules may, or a
    page cited for the task could not be fetched (the shared rules read them then)."""
    return [
        rid
        for rid, _, task, *_ in heads
        if with_claims(names[rid]) or any(p.unreachable for p in of_task[task].values())
    ]


def _texts(conn: sqlite3.Connection, ids: Sequence[int]) -> dict[int, str]:
    if not ids:
        return {}
    return dict(conn.execute(f"SELECT id, markdown FROM report WHERE id IN ({_in(ids)})", ids))


def _criteria(conn: sqlite3.Connection, task_ids: Sequence[int]) -> dict[int, dict[str, Criterion]]:
    criteria: dict[int, dict[str, Criterion]] = defaultdict(dict)
    for task, ext, dim, text, expl, meta in conn.execute(
        f"SELECT task_id, ext_id, dimension, text, explanation, metadata FROM criterion "
        f"WHERE task_id IN ({_in(task_ids)})",
        task_ids,
    ):
        criteria[task][ext] = Criterion(ext, dim, text, expl, _json(meta))
    return criteria


def _references(conn: sqlite3.Connection, ids: Sequence[int]) -> dict[int, dict[int, str]]:
    """Report id -> its reference index -> URL."""
    references: dict[int, dict[int, str]] = defaultdict(dict)
    for rid, idx, url in conn.execute(
        f"SELECT report_id, idx, url FROM reference WHERE report_id IN ({_in(ids)}) "
        "AND url IS NOT NULL",
        ids,
    ):
        references[rid][idx] = url
    return references


def _task_urls(conn: sqlite3.Connection, task_ids: Sequence[int]) -> dict[int, set[str]]:
    """The pages of each task: those any report on it cites (a reference or a claim's URL)."""
    task_urls: dict[int, set[str]] = defaultdict(set)
    for task, url in conn.execute(
        f"""SELECT r.task_id, x.url FROM report r JOIN reference x ON x.report_id = r.id
                WHERE r.task_id IN ({_in(task_ids)}) AND x.url IS NOT NULL
                UNION SELECT r.task_id, c.url FROM report r JOIN claim c ON c.report_id = r.id
                WHERE r.task_id IN ({_in(task_ids)}) AND c.url IS NOT NULL""",
        (*task_ids, *task_ids),
    ):
        task_urls[task].add(url)
    return task_urls


def _task_pages(
    conn: sqlite3.Connection, heads: Sequence[Head], task_urls: Mapping[int, set[str]]
) -> dict[int, dict[str, Page]]:
    """Task id -> URL -> stored page, of the pages cited for the task (in URL order). Each
    report sees its task's pages, whichever reports share its batch: the flags must not
    depend on how a refresh is cut into batches."""
    wanted: dict[int, set[str]] = defaultdict(set)
    for _, _, task, _, _, _, suite in heads:
        wanted[suite].update(task_urls.get(task, ()))
    pages: dict[int, dict[str, Page]] = defaultdict(dict)
    for suite, urls in wanted.items():
        ordered = sorted(urls)
        for start in range(0, len(ordered), 500):
            chunk = ordered[start : start + 500]
            for url, title, text, error, meta in conn.execute(
                f"SELECT url, title, text, error, metadata FROM source WHERE suite_id = ? "
                f"AND url IN ({_in(chunk)})",
                (suite, *chunk),
            ):
                pages[suite][url] = Page(url, title, text, error, _json(meta))
    of_task: dict[int, dict[str, Page]] = {}
    for _, _, task, _, _, _, suite in heads:
        if task not in of_task:
            stored = pages[suite]
            of_task[task] = {
                url: page
                for url in sorted(task_urls.get(task, ()))
                if (page := stored.get(url)) is not None
            }
    return of_task


def _citing_dead_pages(
    heads: Sequence[Head],
    references: Mapping[int, dict[int, str]],
    of_task: Mapping[int, dict[str, Page]],
) -> set[int]:
    """The reports a reference of which is an unreachable page: the only ones whose claims'
    citations a rule reads (parsing them for every claim of a large import would cost more
    than every rule together)."""
    dead = set()
    for rid, _, task, _, _, _, _ in heads:
        stored = of_task.get(task, {})
        cited = references.get(rid, {}).values()
        if any((page := stored.get(url)) is not None and page.unreachable for url in cited):
            dead.add(rid)
    return dead


def _claims(
    conn: sqlite3.Connection, ids: Sequence[int], dead: set[int]
) -> dict[int, dict[str, Claim]]:
    """Report id -> its claims by id (with their citations only where ``dead`` says)."""
    claims: dict[int, dict[str, Claim]] = defaultdict(dict)
    if not ids:
        return claims
    for rid, ext, fact, extract, cites, url, meta in conn.execute(
        f"SELECT report_id, ext_id, fact, extract, citations, url, metadata FROM claim "
        f"WHERE report_id IN ({_in(ids)})",
        ids,
    ):
        claims[rid][ext] = Claim(
            ext, fact, extract, _citations(cites) if rid in dead else (), url, _json(meta)
        )
    return claims


_VERDICTS = """SELECT j.report_id, j.current, j.id, j.subject_id, j.kind,
        CASE WHEN j.error IS NULL THEN j.value END, j.explanation, j.evidence, jr.ext_id,
        c.ext_id, k.ext_id, j.ref_idx, j.key, jr.model, j.current, jr.active > 0
    FROM judgment j JOIN judge_run jr ON jr.id = j.run_id
    LEFT JOIN criterion c ON c.id = j.criterion_id
    LEFT JOIN claim k ON k.id = j.claim_id
    WHERE j.report_id IN ({}) AND j.subject_id IS NOT NULL
    ORDER BY j.report_id, j.current, j.id"""
"""The verdicts of some reports, each row its (report, current) and then a
:class:`~reviewer.grading.Verdict`'s fields; in the judgment_report index's own order."""

_AS_VERDICT = functools.partial(tuple.__new__, Verdict)
"""A row's last fields as a Verdict (what ``Verdict._make`` does, without a Python call per
row: a refresh of a large import reads a quarter of a million of them)."""
_VERDICT_FIELDS = operator.itemgetter(slice(2, None))


def _held(
    verdicts: Mapping[int, list[Verdict]],
) -> tuple[dict[int, list[Verdict]], dict[int, list[Verdict]]]:
    """Verdicts a caller holds, every one current."""
    return defaultdict(list, verdicts), defaultdict(list)


def _verdicts(
    conn: sqlite3.Connection, ids: Sequence[int]
) -> tuple[dict[int, list[Verdict]], dict[int, list[Verdict]]]:
    """Report id -> its verdicts that count (current), and -> its other verdicts (other
    runs'), each in id order."""
    current: dict[int, list[Verdict]] = defaultdict(list)
    others: dict[int, list[Verdict]] = defaultdict(list)
    rows = conn.execute(_VERDICTS.format(_in(ids)), ids).fetchall()
    for (report, counts), group in itertools.groupby(rows, operator.itemgetter(0, 1)):
        (current if counts else others)[report] = list(
            map(_AS_VERDICT, map(_VERDICT_FIELDS, group))
        )
    return current, others


Found = list[tuple[int, list[str], str, Evidence]]
"""A batch of evidence as :func:`evidence` yields it."""


class _Rules:
    """The flags of a batch of evidence, with each suite's gradings resolved once."""

    def __init__(self) -> None:
        self._cache: dict[tuple[str, ...], list[Grading]] = {}

    def gradings(self, names: Sequence[str]) -> list[Grading]:
        key = tuple(names)
        if key not in self._cache:
            self._cache[key] = _gradings(names)
        return self._cache[key]

    def reads_text(self, names: Sequence[str]) -> bool:
        return any(g.reads_text for g in self.gradings(names))

    def reads_claims(self, names: Sequence[str]) -> bool:
        return reads_claims(self.gradings(names))

    def flags(self, found: Found) -> dict[int, list[Flag]]:
        return {
            rid: flags(evidence, self.gradings(names), prompt)
            for rid, names, prompt, evidence in found
        }


def computed_batches(
    conn: sqlite3.Connection, ids: Sequence[int]
) -> Iterator[tuple[list[int], dict[int, list[Flag]]]]:
    """(report ids, their flags) for every batch of ``ids``, in order: one batch's evidence
    in memory at a time."""
    rules = _Rules()
    for begin in range(0, len(ids), BATCH):
        batch = list(ids[begin : begin + BATCH])
        found = evidence(conn, batch, rules.reads_text, with_claims=rules.reads_claims)
        yield batch, rules.flags(list(found))


as_verdict = _AS_VERDICT
"""A tuple of a :class:`~reviewer.grading.Verdict`'s fields, as one."""


class FreshFlags:
    """The flags of reports an import is writing, from the verdicts it holds: each report's
    are given once all of them are read (and written, with their subjects), and are flagged a
    batch at a time. For an import of one run, where every verdict is current; a refresh
    (:func:`refresh_suspicion`) gives the same flags from the stored rows."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.rules = _Rules()
        self.waiting: dict[int, list[Verdict]] = {}
        self.written = 0

    def add(self, report_id: int, verdicts: list[Verdict]) -> bool:
        """Keep a report's verdicts; True when a batch is ready (:meth:`write` it once its
        subjects are stored)."""
        self.waiting[report_id] = verdicts
        return len(self.waiting) >= BATCH

    def write(self) -> None:
        """Flag the waiting reports (their rows and subjects stored)."""
        if not self.waiting:
            return
        waiting, self.waiting = self.waiting, {}
        found = self.rules.flags(
            list(
                evidence(
                    self.conn,
                    list(waiting),
                    self.rules.reads_text,
                    waiting,
                    self.rules.reads_claims,
                )
            )
        )
        rows = [
            (f.subject, f.rule, f.weight, f.reason) for flagged in found.values() for f in flagged
        ]
        self.conn.executemany("INSERT OR REPLACE INTO suspicion VALUES (?,?,?,?)", rows)
        self.written += len(rows)


def refresh_suspicion(conn: sqlite3.Connection, report_ids: Iterable[int] | None = None) -> int:
    """Recompute the flags of the given reports (all when None) in the caller's transaction;
    returns how many flags they have now."""
    if report_ids is None:
        ids = [r for (r,) in conn.execute("SELECT id FROM report ORDER BY id")]
    else:
        ids = sorted(set(report_ids))
    written = 0
    with transaction(conn):
        for batch, found in computed_batches(conn, ids):
            conn.execute(
                f"DELETE FROM suspicion WHERE subject_id IN (SELECT id FROM subject "
                f"WHERE report_id IN ({_in(batch)}))",
                batch,
            )
            rows = [
                (f.subject, f.rule, f.weight, f.reason)
                for flagged in found.values()
                for f in flagged
            ]
            conn.executemany("INSERT OR REPLACE INTO suspicion VALUES (?,?,?,?)", rows)
            written += len(rows)
    return written


def subject_suspicions(
    conn: sqlite3.Connection, subject_ids: Sequence[int]
) -> dict[int, list[Suspicion]]:
    """Subject id -> its flags, strongest first."""
    out: dict[int, list[Suspicion]] = defaultdict(list)
    ids = sorted(set(subject_ids))
    for start in range(0, len(ids), 900):
        chunk = ids[start : start + 900]
        for sid, rule, weight, reason in conn.execute(
            f"SELECT subject_id, rule, weight, reason FROM suspicion "
            f"WHERE subject_id IN ({_in(chunk)}) ORDER BY weight DESC, rule",
            chunk,
        ):
            out[sid].append(Suspicion(rule, weight, reason))
    return out


def report_suspicion(
    conn: sqlite3.Connection, report_ids: Sequence[int] | None = None
) -> dict[int, tuple[int, float]]:
    """Report id -> (undecided suspicious subjects, their summed suspicion): what the queue
    shows and orders by (of ``report_ids`` only, when given). A decided subject has been
    looked at: it no longer counts."""
    weights: dict[int, dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
    only = "" if report_ids is None else f"AND s.report_id IN ({_in(report_ids)})"
    for rid, sid, weight in conn.execute(
        f"""SELECT s.report_id, x.subject_id, x.weight FROM suspicion x
               JOIN subject s ON s.id = x.subject_id
               LEFT JOIN decision d ON d.subject_id = x.subject_id
               WHERE (d.subject_id IS NULL OR d.status = 'conflict') {only}""",
        () if report_ids is None else tuple(report_ids),
    ):
        weights[rid][sid].append(weight)
    return {
        rid: (len(subjects), sum(suspicion(w) for w in subjects.values()))
        for rid, subjects in weights.items()
    }
