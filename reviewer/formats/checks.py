"""Cross-record checks of a bundle, one record at a time, in the bundle's file order.

Field-level validity is the models' business; this is everything that needs two records at once:
a judgment naming a report that does not exist, a value outside its kind's scale, a claim span
that falls outside its report. The checker sees records as a stream (suite, tasks, systems,
reports, sources, runs, judgments) and keeps only ids, so a large bundle is checked in constant
memory; the store's importer writes each record right after its check, inside one transaction
that an error rolls back, so a bad bundle still imports nothing.

What a benchmark expects beyond the format (each subtask scored through a criterion of some
dimension) is what its framework declares in its :class:`~reviewer.grading.Grading`; nothing
here knows a benchmark by name.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import NamedTuple, cast

from reviewer.citations import citations_near, locate, parse_references
from reviewer.errors import InputError
from reviewer.formats.jsonl import Where
from reviewer.framework import VerdictKind
from reviewer.grading import SubtaskCriterion
from reviewer.models import (
    TRACE_COUNTS,
    TRACE_KEY,
    Bundle,
    Claim,
    JudgeRun,
    JudgmentRecord,
    Report,
    Source,
    Suite,
    System,
    Task,
    subject_key,
)
from reviewer.registry import frameworks, verdict_kinds
from reviewer.scales import ScaleError


class ResolvedClaim(NamedTuple):
    span: tuple[int, int] | None
    citations: tuple[int, ...]
    subtask: str | None = None
    """The subtask the claim belongs to: its own ``subtask``, else its ``criterion``'s (a claim
    answers "only one most matching accuracy question", DailyReport App. C)."""


_resolved_claim = functools.partial(tuple.__new__, ResolvedClaim)
"""(span, citations, subtask) as a ResolvedClaim, without a Python call per claim."""


@dataclass(frozen=True, slots=True)
class ResolvedReport:
    references: list[tuple[int, str, str | None]]
    claims: list[ResolvedClaim]


class ResolvedJudgment(NamedTuple):
    value: str | None
    """The value as its scale's code (None: the judge failed on the item)."""
    subject: str


@dataclass(slots=True)
class Resolved:
    """What a full check derived, aligned with the bundle's lists (for callers that want it)."""

    reports: list[ResolvedReport] = field(default_factory=list)
    judgments: list[ResolvedJudgment] = field(default_factory=list)
    source_hashes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def values(self) -> list[str | None]:
        return [j.value for j in self.judgments]

    @property
    def claims(self) -> list[list[ResolvedClaim]]:
        return [r.claims for r in self.reports]


REPEATED_VERDICT = "a second verdict on the same subject in the same run"


class _Target(NamedTuple):
    """The report a run of verdicts is about (they come together), with what they may name."""

    ext: str
    task: str
    criteria: Mapping[str, str | None]
    """The task's criteria (id -> subtask)."""
    claims: frozenset[str]
    references: frozenset[int]


_NO_TARGET = _Target("", "", {}, frozenset(), frozenset())


class BundleChecker:
    """Checks records in bundle order and returns what the store needs resolved."""

    def __init__(
        self,
        suite: Suite,
        suite_file: str = "suite.json",
        *,
        repeats_checked_by_store: bool = False,
    ) -> None:
        """``repeats_checked_by_store``: the caller finds a second verdict on the same subject
        in the same run itself (the store's unique index does, naming the line), so the
        checker need not remember every verdict's identity — a set that would grow with the
        run."""
        self._remember = not repeats_checked_by_store
        self._needs = _subtask_criteria(suite, suite_file)
        self.suite = suite
        self._kinds: dict[str, VerdictKind] = verdict_kinds()
        self._suite_kinds: dict[str, VerdictKind] = {}
        """The kinds already found to belong to one of the suite's frameworks."""
        self._tasks: dict[str, tuple[frozenset[str], dict[str, str | None]]] = {}
        self._systems: set[str] = set()
        # Per report: its task, its claim ids in order (a tuple: a run holds a million of
        # them) and its reference indices; the report whose verdicts are coming (they come
        # together) as a _Target.
        self._reports: dict[str, tuple[str, tuple[str, ...], frozenset[int]]] = {}
        self._target = _NO_TARGET
        self._pairs: set[tuple[str, str]] = set()
        self._urls: set[str] = set()
        self._runs: set[str] = set()
        self._seen: set[tuple[str, str, str, str]] = set()
        self._normalized: dict[tuple[str, object, type], str] = {}
        self.warnings: list[str] = []
        """Accepted, but worth a look (named like errors: file, line, field)."""

    # -- tasks, systems --------------------------------------------------------------------

    def task(self, task: Task, where: Where) -> None:
        if task.id in self._tasks:
            raise _err(where, f"task id {task.id!r} repeats", "id")
        for i, criterion in enumerate(task.criteria):
            if criterion.framework not in self.suite.frameworks:
                raise _err(
                    where,
                    f"criterion {criterion.id} is for framework {criterion.framework!r}, "
                    "which the suite does not list",
                    f"criteria.{i}.framework",
                )
        for framework, need in self._needs:
            self._warn_subtasks_without(task, framework, need, where)
        self._tasks[task.id] = (
            frozenset(s.id for s in task.subtasks),
            {c.id: c.subtask for c in task.criteria},
        )

    def _warn_subtasks_without(
        self, task: Task, framework: str, need: SubtaskCriterion, where: Where
    ) -> None:
        covered = {
            c.subtask
            for c in task.criteria
            if c.framework == framework and c.dimension == need.dimension
        }
        for i, sub in enumerate(task.subtasks):
            if sub.id not in covered:
                message = (
                    f"subtask {sub.id!r} of task {task.id!r} has no {need.dimension} "
                    f"criterion: {need.consequence}"
                )
                self.warnings.append(str(_err(where, message, f"subtasks.{i}")))

    def system(self, system: System, where: Where) -> None:
        if system.id in self._systems:
            raise _err(where, f"system id {system.id!r} repeats", "id")
        self._systems.add(system.id)

    # -- reports ---------------------------------------------------------------------------

    def report(self, report: Report, where: Where) -> ResolvedReport:
        self._check_report_names(report, where)
        _check_trace(report, where)
        subtasks, criteria = self._tasks[report.task]
        refs = _references(report, where)
        claims: list[ResolvedClaim] = []
        cursor = 0
        for j, claim in enumerate(report.claims):
            subtask = _claim_subtask(claim, j, subtasks, criteria, where)
            span, cites = _claim_place(claim, j, report.markdown, cursor, where)
            if span is not None:
                cursor = span[0]
            claims.append(_resolved_claim((span, cites, subtask)))
        self._reports[report.id] = (
            report.task,
            tuple(c.id for c in report.claims),
            frozenset(r[0] for r in refs),
        )
        return ResolvedReport(refs, claims)

    def _check_report_names(self, report: Report, where: Where) -> None:
        """A new report id, for a known task and system, the first for the pair."""
        if report.id in self._reports:
            raise _err(where, f"report id {report.id!r} repeats", "id")
        if report.task not in self._tasks:
            raise _err(where, f"unknown task {report.task!r}", "task")
        if report.system not in self._systems:
            raise _err(where, f"unknown system {report.system!r}", "system")
        if (report.task, report.system) in self._pairs:
            raise _err(
                where,
                f"a second report for task {report.task!r} and system {report.system!r}",
                "system",
            )
        self._pairs.add((report.task, report.system))

    # -- sources, runs ---------------------------------------------------------------------

    def source(self, source: Source, where: Where) -> str:
        """Returns the sha256 of the source text (computed, or checked when given)."""
        if source.url in self._urls:
            raise _err(where, f"source url {source.url!r} repeats", "url")
        self._urls.add(source.url)
        digest = hashlib.sha256(source.text.encode("utf-8")).hexdigest()
        if source.sha256 is not None and source.text and source.sha256 != digest:
            raise _err(
                where, "sha256 does not match the text (the page changed after hashing?)", "sha256"
            )
        return source.sha256 or digest

    def run(self, run: JudgeRun, where: Where) -> None:
        if run.id in self._runs:
            raise _err(where, f"run id {run.id!r} repeats", "id")
        self._runs.add(run.id)

    # -- judgments -------------------------------------------------------------------------

    def judgment(self, judgment: JudgmentRecord, where: Where) -> tuple[str | None, str]:
        """The verdict's value as its scale's code (None: the judge failed) and its subject's
        text; an InputError names the first thing wrong (run, report, kind, subject, value)."""
        if judgment["run"] not in self._runs:
            raise _err(where, f"unknown run {judgment['run']!r}", "run")
        report = judgment["report"]
        target = self._target if report == self._target.ext else self._target_of(report, where)
        kind = self._suite_kinds.get(judgment["kind"]) or self._kind_of(judgment["kind"], where)
        criterion, claim, ref, key = (
            judgment["criterion"],
            judgment["claim"],
            judgment["ref"],
            judgment["key"],
        )
        _SUBJECTS.get(kind.subject, _key_subject)(kind, target, criterion, claim, ref, key, where)
        subject = subject_key(criterion, claim, ref, key)
        if self._remember:
            self._once((judgment["run"], report, judgment["kind"], subject), where)
        value = judgment["value"]
        if value is None:
            if judgment["error"] is None:
                raise _err(
                    where, "no value: give a value, or an error saying why there is none", "value"
                )
            return None, subject
        code = self._normalized.get((kind.scale.name, value, type(value)))
        if code is None:
            code = self._code(kind, value, where)
        return code, subject

    def _once(self, identity: tuple[str, str, str, str], where: Where) -> None:
        """A verdict's identity (run, report, kind, subject), refused the second time."""
        if identity in self._seen:
            raise _err(where, REPEATED_VERDICT, "kind")
        self._seen.add(identity)

    def _target_of(self, report: str, where: Where) -> _Target:
        found = self._reports.get(report)
        if found is None:
            raise _err(where, f"unknown report {report!r}", "report")
        task, claims, references = found
        self._target = _Target(report, task, self._tasks[task][1], frozenset(claims), references)
        return self._target

    def _kind_of(self, name: str, where: Where) -> VerdictKind:
        kind = self._kinds.get(name)
        if kind is None:
            raise _err(where, f"unknown verdict kind {name!r}", "kind")
        if kind.framework not in self.suite.frameworks:
            raise _err(
                where,
                f"kind {kind.name} belongs to {kind.framework}, which the suite does not list",
                "kind",
            )
        self._suite_kinds[name] = kind
        return kind

    def _code(self, kind: VerdictKind, value: str | float | bool, where: Where) -> str:
        """A value as its kind's scale code (each distinct value normalised once)."""
        try:
            code = kind.scale.normalize(value)
        except ScaleError as exc:
            raise _err(where, str(exc), "value") from exc
        self._normalized[(kind.scale.name, value, type(value))] = code
        return code


# -- what a verdict's subject must name, by the kind's subject --------------------------------

SubjectCheck = Callable[
    [VerdictKind, _Target, str | None, str | None, int | None, str | None, Where], None
]
"""(kind, report, criterion, claim, ref, key, where): raises when the verdict does not name
what its kind's subject needs, or names what its report does not have."""


def _known_criterion(target: _Target, criterion: str, where: Where) -> None:
    if criterion not in target.criteria:
        raise _err(where, f"unknown criterion {criterion!r} for task {target.task}", "criterion")


def _criterion_subject(
    kind: VerdictKind,
    target: _Target,
    criterion: str | None,
    claim: str | None,
    ref: int | None,
    key: str | None,
    where: Where,
) -> None:
    if criterion is None:
        raise _err(where, f"a {kind.name} verdict needs a criterion", "criterion")
    _known_criterion(target, criterion, where)


def _claim_subject(
    kind: VerdictKind,
    target: _Target,
    criterion: str | None,
    claim: str | None,
    ref: int | None,
    key: str | None,
    where: Where,
) -> None:
    if claim is None:
        raise _err(where, f"a {kind.name} verdict needs a claim", "claim")
    if claim not in target.claims:
        raise _err(where, f"unknown claim {claim!r} in report {target.ext}", "claim")
    if criterion is not None:  # (a claim's verdict may name its criterion too)
        _known_criterion(target, criterion, where)


def _claim_ref_subject(
    kind: VerdictKind,
    target: _Target,
    criterion: str | None,
    claim: str | None,
    ref: int | None,
    key: str | None,
    where: Where,
) -> None:
    if claim is None:
        raise _err(where, f"a {kind.name} verdict needs a claim", "claim")
    if claim not in target.claims:
        raise _err(where, f"unknown claim {claim!r} in report {target.ext}", "claim")
    if ref is None:
        raise _err(where, f"a {kind.name} verdict needs a ref (reference index)", "ref")
    if target.references and ref not in target.references:
        raise _err(where, f"report {target.ext} has no reference [{ref}]", "ref")
    if criterion is not None:
        _known_criterion(target, criterion, where)


def _key_subject(
    kind: VerdictKind,
    target: _Target,
    criterion: str | None,
    claim: str | None,
    ref: int | None,
    key: str | None,
    where: Where,
) -> None:
    if key is None:
        raise _err(where, f"a {kind.name} verdict needs a key", "key")
    if criterion is not None:
        _known_criterion(target, criterion, where)


_SUBJECTS: dict[str, SubjectCheck] = {
    "criterion": _criterion_subject,
    "claim": _claim_subject,
    "claim_ref": _claim_ref_subject,
    "key": _key_subject,
}


# -- what a report's parts resolve to ---------------------------------------------------------


def _references(report: Report, where: Where) -> list[tuple[int, str, str | None]]:
    """The report's reference list: as given (indices must not repeat), else parsed from its
    text."""
    if report.references is None:
        return [(r.index, r.title, r.url) for r in parse_references(report.markdown)]
    refs = [(r.index, r.title, r.url) for r in report.references]
    if len({r[0] for r in refs}) != len(refs):
        raise _err(where, "reference indices repeat", "references")
    return refs


def _claim_subtask(
    claim: Claim,
    j: int,
    subtasks: frozenset[str],
    criteria: Mapping[str, str | None],
    where: Where,
) -> str | None:
    """The claim's subtask: its own, else its criterion's (they must agree when both say)."""
    if claim.subtask is not None and claim.subtask not in subtasks:
        raise _err(
            where,
            f"claim {claim.id} names unknown subtask {claim.subtask!r}",
            f"claims.{j}.subtask",
        )
    if claim.criterion is None:
        return claim.subtask
    if claim.criterion not in criteria:
        raise _err(
            where,
            f"claim {claim.id} names unknown criterion {claim.criterion!r}",
            f"claims.{j}.criterion",
        )
    linked = criteria[claim.criterion]
    if claim.subtask is None:
        return linked
    if linked is not None and linked != claim.subtask:
        raise _err(
            where,
            f"claim {claim.id} names subtask {claim.subtask!r} but its "
            f"criterion {claim.criterion!r} belongs to subtask {linked!r}",
            f"claims.{j}.criterion",
        )
    return claim.subtask


def _claim_place(
    claim: Claim, j: int, markdown: str, cursor: int, where: Where
) -> tuple[tuple[int, int] | None, tuple[int, ...]]:
    """Where the claim is in the report (given, else found from ``cursor`` on) and the
    references it cites (given, else the markers at its place)."""
    span: tuple[int, int] | None
    if claim.span is not None:
        if claim.span[1] > len(markdown):
            raise _err(
                where,
                f"claim {claim.id} span ends at {claim.span[1]}, past the "
                f"report's {len(markdown)} characters",
                f"claims.{j}.span",
            )
        span = (claim.span[0], claim.span[1])
    else:
        span = locate(markdown, claim.fact, cursor)
    if claim.citations is not None:
        return span, tuple(claim.citations)
    if span is not None:
        return span, citations_near(markdown, span[0], span[1])
    return span, ()


def _subtask_criteria(suite: Suite, suite_file: str) -> list[tuple[str, SubtaskCriterion]]:
    """(framework, what each subtask needs) for the suite's frameworks that declare it; an
    unknown framework is an error."""
    known = frameworks()
    needs = []
    for name in suite.frameworks:
        if name not in known:
            raise InputError(
                suite_file,
                f"unknown framework {name!r} (known: {', '.join(sorted(known))})",
                field="frameworks",
            )
        grading = known[name].grading
        if grading is not None and grading.subtask_criterion is not None:
            needs.append((name, grading.subtask_criterion))
    return needs


def _check_trace(report: Report, where: Where) -> None:
    """``metadata.trace``: the solving-trace counts behind DailyReport's search metrics."""
    trace = report.metadata.get(TRACE_KEY)
    if trace is None:
        return
    if not isinstance(trace, dict):
        raise _err(
            where,
            'trace counts must be an object such as {"web_search": 12, "web_content_mining": 5}',
            f"metadata.{TRACE_KEY}",
        )
    for key, value in trace.items():
        if key not in TRACE_COUNTS:
            raise _err(
                where,
                f"unknown trace count {key!r} (known: {', '.join(TRACE_COUNTS)})",
                f"metadata.{TRACE_KEY}.{key}",
            )
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise _err(
                where,
                f"a trace count is a whole number ≥ 0, not {value!r}",
                f"metadata.{TRACE_KEY}.{key}",
            )


def _err(where: Where, message: str, fld: str) -> InputError:
    return InputError(where[0], message, line=where[1], field=fld)


def check_bundle(bundle: Bundle) -> Resolved:
    """Check a whole in-memory bundle (what the store's import does, without writing)."""
    checker = BundleChecker(bundle.suite)
    resolved = Resolved()

    def where(rtype: str, index: int, default: str) -> Where:
        file, line = bundle.locations.get((rtype, index), (default, 0))
        return file, line or None

    for i, task in enumerate(bundle.tasks):
        checker.task(task, where("task", i, "tasks.jsonl"))
    for i, system in enumerate(bundle.systems):
        checker.system(system, where("system", i, "systems.jsonl"))
    for i, report in enumerate(bundle.reports):
        resolved.reports.append(checker.report(report, where("report", i, "reports.jsonl")))
    for i, source in enumerate(bundle.sources):
        resolved.source_hashes.append(checker.source(source, where("source", i, "sources.jsonl")))
    for i, run in enumerate(bundle.runs):
        checker.run(run, where("run", i, "runs.jsonl"))
    for i, judgment in enumerate(bundle.judgments):
        record = cast(JudgmentRecord, dict(judgment))
        value, subject = checker.judgment(record, where("judgment", i, "judgments.jsonl"))
        resolved.judgments.append(ResolvedJudgment(value, subject))
    resolved.warnings = checker.warnings
    return resolved
