"""Cross-record checks of a parsed bundle, and what the store needs resolved from it.

Field-level validity is the models' business; this is everything that needs two records at once:
a judgment naming a report that does not exist, a value outside its kind's scale, a claim span
that falls outside its report. All of it runs before the store opens a transaction, so a bad
bundle imports nothing.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from reviewer.citations import citations_near, locate, parse_references
from reviewer.errors import InputError
from reviewer.models import Bundle, Reference
from reviewer.scales import ScaleError
from reviewer.scoring.registry import frameworks, get_kind


@dataclass(slots=True)
class ResolvedClaim:
    span: tuple[int, int] | None
    citations: tuple[int, ...]


@dataclass(slots=True)
class Resolved:
    """Values derived during the checks, aligned with the bundle's lists."""

    references: list[list[Reference]] = field(default_factory=list)
    claims: list[list[ResolvedClaim]] = field(default_factory=list)
    values: list[str | None] = field(default_factory=list)
    source_hashes: list[str] = field(default_factory=list)


def _where(bundle: Bundle, rtype: str, index: int, fallback: str) -> tuple[str, int | None]:
    file, line = bundle.locations.get((rtype, index), (fallback, 0))
    return file, line or None


def check_bundle(bundle: Bundle) -> Resolved:
    suite = bundle.suite
    known = frameworks()
    for name in suite.frameworks:
        if name not in known:
            raise InputError(
                "suite.json",
                f"unknown framework {name!r} (known: {', '.join(sorted(known))})",
                field="frameworks",
            )

    def fail(rtype: str, index: int, fallback: str, message: str, fld: str) -> InputError:
        file, line = _where(bundle, rtype, index, fallback)
        return InputError(file, message, line=line, field=fld)

    tasks: dict[str, tuple[set[str], dict[str, str]]] = {}
    for i, task in enumerate(bundle.tasks):
        if task.id in tasks:
            raise fail("task", i, "tasks.jsonl", f"task id {task.id!r} repeats", "id")
        for criterion in task.criteria:
            if criterion.framework not in suite.frameworks:
                raise fail(
                    "task", i, "tasks.jsonl",
                    f"criterion {criterion.id} is for framework {criterion.framework!r}, "
                    f"which the suite does not list",
                    "criteria.framework",
                )
        tasks[task.id] = ({s.id for s in task.subtasks}, {c.id: c.framework for c in task.criteria})

    systems: set[str] = set()
    for i, system in enumerate(bundle.systems):
        if system.id in systems:
            raise fail("system", i, "systems.jsonl", f"system id {system.id!r} repeats", "id")
        systems.add(system.id)

    resolved = Resolved()
    reports: dict[str, tuple[str, set[str], set[int]]] = {}
    pairs: set[tuple[str, str]] = set()
    for i, report in enumerate(bundle.reports):
        if report.id in reports:
            raise fail("report", i, "reports.jsonl", f"report id {report.id!r} repeats", "id")
        if report.task not in tasks:
            raise fail("report", i, "reports.jsonl", f"unknown task {report.task!r}", "task")
        if report.system not in systems:
            raise fail("report", i, "reports.jsonl", f"unknown system {report.system!r}", "system")
        if (report.task, report.system) in pairs:
            raise fail(
                "report", i, "reports.jsonl",
                f"a second report for task {report.task!r} and system {report.system!r}",
                "system",
            )
        pairs.add((report.task, report.system))
        subtasks, criteria = tasks[report.task]
        if report.references is None:
            refs = [Reference(index=r.index, title=r.title, url=r.url)
                    for r in parse_references(report.markdown)]
        else:
            refs = list(report.references)
            indices = [r.index for r in refs]
            if len(set(indices)) != len(indices):
                raise fail("report", i, "reports.jsonl", "reference indices repeat", "references")
        resolved.references.append(refs)
        claim_out: list[ResolvedClaim] = []
        cursor = 0
        for j, claim in enumerate(report.claims):
            if claim.subtask is not None and claim.subtask not in subtasks:
                raise fail(
                    "report", i, "reports.jsonl",
                    f"claim {claim.id} names unknown subtask {claim.subtask!r}",
                    f"claims.{j}.subtask",
                )
            if claim.criterion is not None and claim.criterion not in criteria:
                raise fail(
                    "report", i, "reports.jsonl",
                    f"claim {claim.id} names unknown criterion {claim.criterion!r}",
                    f"claims.{j}.criterion",
                )
            if claim.span is not None:
                start, end = claim.span
                if end > len(report.markdown):
                    raise fail(
                        "report", i, "reports.jsonl",
                        f"claim {claim.id} span ends at {end}, past the report's "
                        f"{len(report.markdown)} characters",
                        f"claims.{j}.span",
                    )
                span: tuple[int, int] | None = (start, end)
            else:
                span = locate(report.markdown, claim.fact, cursor)
            if span is not None:
                cursor = span[0]
            if claim.citations is not None:
                cites = tuple(claim.citations)
            elif span is not None:
                cites = citations_near(report.markdown, span[0], span[1])
            else:
                cites = ()
            claim_out.append(ResolvedClaim(span, cites))
        resolved.claims.append(claim_out)
        reports[report.id] = (report.task, {c.id for c in report.claims}, {r.index for r in refs})

    urls: set[str] = set()
    for i, source in enumerate(bundle.sources):
        if source.url in urls:
            raise fail("source", i, "sources.jsonl", f"source url {source.url!r} repeats", "url")
        urls.add(source.url)
        digest = hashlib.sha256(source.text.encode("utf-8")).hexdigest()
        if source.sha256 is not None and source.sha256 != digest and source.text:
            raise fail(
                "source", i, "sources.jsonl",
                "sha256 does not match the text (the page changed after hashing?)",
                "sha256",
            )
        resolved.source_hashes.append(source.sha256 or digest)

    runs: set[str] = set()
    for i, run in enumerate(bundle.runs):
        if run.id in runs:
            raise fail("run", i, "runs.jsonl", f"run id {run.id!r} repeats", "id")
        runs.add(run.id)

    seen: set[tuple[str, str, str, str]] = set()
    for i, judgment in enumerate(bundle.judgments):
        def bad(message: str, fld: str, i: int = i) -> InputError:
            return fail("judgment", i, "judgments.jsonl", message, fld)

        if judgment.run not in runs:
            raise bad(f"unknown run {judgment.run!r}", "run")
        target = reports.get(judgment.report)
        if target is None:
            raise bad(f"unknown report {judgment.report!r}", "report")
        kind = get_kind(judgment.kind)
        if kind is None:
            raise bad(f"unknown verdict kind {judgment.kind!r}", "kind")
        if kind.framework not in suite.frameworks:
            raise bad(f"kind {kind.name} belongs to {kind.framework}, not in this suite", "kind")
        task_id, claim_ids, ref_indices = target
        _, criteria = tasks[task_id]
        if kind.subject == "criterion":
            if judgment.criterion is None:
                raise bad(f"a {kind.name} verdict needs a criterion", "criterion")
            if judgment.criterion not in criteria:
                raise bad(f"unknown criterion {judgment.criterion!r} for task {task_id}",
                          "criterion")
        if kind.subject in ("claim", "claim_ref"):
            if judgment.claim is None:
                raise bad(f"a {kind.name} verdict needs a claim", "claim")
            if judgment.claim not in claim_ids:
                raise bad(f"unknown claim {judgment.claim!r} in report {judgment.report}", "claim")
        if kind.subject == "claim_ref":
            if judgment.ref is None:
                raise bad(f"a {kind.name} verdict needs a ref (reference index)", "ref")
            if ref_indices and judgment.ref not in ref_indices:
                raise bad(f"report {judgment.report} has no reference [{judgment.ref}]", "ref")
        if kind.subject == "key" and judgment.key is None:
            raise bad(f"a {kind.name} verdict needs a key", "key")
        identity = (judgment.run, judgment.report, judgment.kind, judgment.subject())
        if identity in seen:
            raise bad("a second verdict on the same subject in the same run", "kind")
        seen.add(identity)
        if judgment.value is None:
            if judgment.error is None:
                raise bad("no value: give a value, or an error saying why there is none",
                          "value")
            resolved.values.append(None)
            continue
        try:
            resolved.values.append(kind.scale.normalize(judgment.value))
        except ScaleError as exc:
            raise bad(str(exc), "value") from exc
    return resolved
