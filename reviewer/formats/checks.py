"""Cross-record checks of a bundle, one record at a time, in the bundle's file order.

Field-level validity is the models' business; this is everything that needs two records at once:
a judgment naming a report that does not exist, a value outside its kind's scale, a claim span
that falls outside its report. The checker sees records as a stream (suite, tasks, systems,
reports, sources, runs, judgments) and keeps only ids, so a large bundle is checked in constant
memory; the store's importer writes each record right after its check, inside one transaction
that an error rolls back, so a bad bundle still imports nothing.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from reviewer.citations import citations_near, locate, parse_references
from reviewer.errors import InputError
from reviewer.formats.jsonl import Where
from reviewer.framework import VerdictKind
from reviewer.models import (
    TRACE_COUNTS,
    TRACE_KEY,
    Bundle,
    JudgeRun,
    Judgment,
    Report,
    Source,
    Suite,
    System,
    Task,
    subject_of,
)
from reviewer.registry import frameworks, verdict_kinds
from reviewer.scales import ScaleError

"""(file, 1-based line or None) of the record being checked."""


@dataclass(frozen=True, slots=True)
class ResolvedClaim:
    span: tuple[int, int] | None
    citations: tuple[int, ...]
    subtask: str | None = None
    """The subtask the claim belongs to: its own ``subtask``, else its ``criterion``'s (a claim
    answers "only one most matching accuracy question", DailyReport App. C)."""


@dataclass(frozen=True, slots=True)
class ResolvedReport:
    references: list[tuple[int, str, str | None]]
    claims: list[ResolvedClaim]


@dataclass(frozen=True, slots=True)
class ResolvedJudgment:
    value: str | None
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
        run (~300 MB at 2.5 million verdicts)."""
        self._remember = not repeats_checked_by_store
        known = frameworks()
        for name in suite.frameworks:
            if name not in known:
                raise InputError(
                    suite_file,
                    f"unknown framework {name!r} (known: {', '.join(sorted(known))})",
                    field="frameworks",
                )
        self.suite = suite
        self._kinds: dict[str, VerdictKind] = verdict_kinds()
        self._tasks: dict[str, tuple[frozenset[str], dict[str, str | None]]] = {}
        self._systems: set[str] = set()
        # Per report: its task, its claim ids in order (a tuple: a run holds a million of
        # them) and its reference indices. Membership goes through a set of one report's ids,
        # kept while that report's verdicts come (they come together).
        self._reports: dict[str, tuple[str, tuple[str, ...], frozenset[int]]] = {}
        self._claims_of: tuple[str, frozenset[str]] = ("", frozenset())
        self._pairs: set[tuple[str, str]] = set()
        self._urls: set[str] = set()
        self._runs: set[str] = set()
        self._seen: set[tuple[str, str, str, str]] = set()
        self._normalized: dict[tuple[str, object, type], str] = {}
        self.warnings: list[str] = []
        """Accepted, but worth a look (named like errors: file, line, field)."""

    # -- records -----------------------------------------------------------------------

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
        if "cascade" in self.suite.frameworks:
            with_ins = {
                c.subtask
                for c in task.criteria
                if c.framework == "cascade" and c.dimension == "ins"
            }
            for i, sub in enumerate(task.subtasks):
                if sub.id not in with_ins:
                    self.warnings.append(
                        str(
                            _err(
                                where,
                                f"subtask {sub.id!r} of task {task.id!r} has no ins criterion: "
                                "its ins_k is 0 and the report is flagged 'needs review' (option "
                                "cascade.missing_ins=exclude leaves the subtask out instead)",
                                f"subtasks.{i}",
                            )
                        )
                    )
        self._tasks[task.id] = (
            frozenset(s.id for s in task.subtasks),
            {c.id: c.subtask for c in task.criteria},
        )

    def system(self, system: System, where: Where) -> None:
        if system.id in self._systems:
            raise _err(where, f"system id {system.id!r} repeats", "id")
        self._systems.add(system.id)

    def report(self, report: Report, where: Where) -> ResolvedReport:
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
        _check_trace(report, where)
        subtasks, criteria = self._tasks[report.task]
        if report.references is None:
            refs = [(r.index, r.title, r.url) for r in parse_references(report.markdown)]
        else:
            refs = [(r.index, r.title, r.url) for r in report.references]
            if len({r[0] for r in refs}) != len(refs):
                raise _err(where, "reference indices repeat", "references")
        claims: list[ResolvedClaim] = []
        cursor = 0
        markdown = report.markdown
        for j, claim in enumerate(report.claims):
            if claim.subtask is not None and claim.subtask not in subtasks:
                raise _err(
                    where,
                    f"claim {claim.id} names unknown subtask {claim.subtask!r}",
                    f"claims.{j}.subtask",
                )
            subtask = claim.subtask
            if claim.criterion is not None:
                if claim.criterion not in criteria:
                    raise _err(
                        where,
                        f"claim {claim.id} names unknown criterion {claim.criterion!r}",
                        f"claims.{j}.criterion",
                    )
                linked = criteria[claim.criterion]
                if subtask is None:
                    subtask = linked
                elif linked is not None and linked != subtask:
                    raise _err(
                        where,
                        f"claim {claim.id} names subtask {subtask!r} but its "
                        f"criterion {claim.criterion!r} belongs to subtask {linked!r}",
                        f"claims.{j}.criterion",
                    )
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
            if span is not None:
                cursor = span[0]
            if claim.citations is not None:
                cites = tuple(claim.citations)
            elif span is not None:
                cites = citations_near(markdown, span[0], span[1])
            else:
                cites = ()
            claims.append(ResolvedClaim(span, cites, subtask))
        self._reports[report.id] = (
            report.task,
            tuple(c.id for c in report.claims),
            frozenset(r[0] for r in refs),
        )
        return ResolvedReport(refs, claims)

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

    def judgment(self, judgment: Judgment, where: Where) -> ResolvedJudgment:
        if judgment.run not in self._runs:
            raise _err(where, f"unknown run {judgment.run!r}", "run")
        target = self._reports.get(judgment.report)
        if target is None:
            raise _err(where, f"unknown report {judgment.report!r}", "report")
        kind = self._kinds.get(judgment.kind)
        if kind is None:
            raise _err(where, f"unknown verdict kind {judgment.kind!r}", "kind")
        if kind.framework not in self.suite.frameworks:
            raise _err(
                where,
                f"kind {kind.name} belongs to {kind.framework}, which the suite does not list",
                "kind",
            )
        task_id, claim_order, ref_indices = target
        subject = kind.subject
        if subject == "criterion":
            if judgment.criterion is None:
                raise _err(where, f"a {kind.name} verdict needs a criterion", "criterion")
            if judgment.criterion not in self._tasks[task_id][1]:
                raise _err(
                    where,
                    f"unknown criterion {judgment.criterion!r} for task {task_id}",
                    "criterion",
                )
        elif subject == "claim" or subject == "claim_ref":
            if judgment.claim is None:
                raise _err(where, f"a {kind.name} verdict needs a claim", "claim")
            if self._claims_of[0] != judgment.report:
                self._claims_of = (judgment.report, frozenset(claim_order))
            if judgment.claim not in self._claims_of[1]:
                raise _err(
                    where, f"unknown claim {judgment.claim!r} in report {judgment.report}", "claim"
                )
            if subject == "claim_ref":
                if judgment.ref is None:
                    raise _err(where, f"a {kind.name} verdict needs a ref (reference index)", "ref")
                if ref_indices and judgment.ref not in ref_indices:
                    raise _err(
                        where, f"report {judgment.report} has no reference [{judgment.ref}]", "ref"
                    )
        elif judgment.key is None:
            raise _err(where, f"a {kind.name} verdict needs a key", "key")
        if (
            subject != "criterion"
            and judgment.criterion is not None
            and judgment.criterion not in self._tasks[task_id][1]
        ):
            raise _err(
                where, f"unknown criterion {judgment.criterion!r} for task {task_id}", "criterion"
            )
        subject_text = subject_of(judgment)
        if self._remember:
            identity = (judgment.run, judgment.report, judgment.kind, subject_text)
            if identity in self._seen:
                raise _err(where, REPEATED_VERDICT, "kind")
            self._seen.add(identity)
        if judgment.value is None:
            if judgment.error is None:
                raise _err(
                    where, "no value: give a value, or an error saying why there is none", "value"
                )
            return ResolvedJudgment(None, subject_text)
        memo = (kind.scale.name, judgment.value, type(judgment.value))
        code = self._normalized.get(memo)
        if code is None:
            try:
                code = kind.scale.normalize(judgment.value)
            except ScaleError as exc:
                raise _err(where, str(exc), "value") from exc
            self._normalized[memo] = code
        return ResolvedJudgment(code, subject_text)


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
        resolved.judgments.append(
            checker.judgment(judgment, where("judgment", i, "judgments.jsonl"))
        )
    resolved.warnings = checker.warnings
    return resolved
