"""DR. Bench (released as RigorousBench) tasks, and optionally reports on them, as one bundle.

``PATH`` is either the task file itself (``RigorousBench.jsonl``: tasks only) or a folder
holding it (``RigorousBench.jsonl``, else the folder's only other ``.jsonl`` file) and,
optionally, ``reports.jsonl`` — the layout ``docs/frameworks/drbench.md`` documents::

    task file, one entry a line:
      {"uid": "07001", "query": "...", "qsr": ["<rubric>? Yes=2, No=0", ...],
       "tsl": ["https://...", ...], "fak": [5 anchor keywords], "fdk": [5 drift keywords]}
    reports.jsonl, one response a line:
      {"uid": "07001", "system": "agent-x", "report": "<markdown>",
       "citations": [{"url": "...", "title": "..."} or "url", ...],      (optional)
       "token_usage": {"total": 12000, "input": 2000},                     (optional)
       "judge": {"model": "...", "qsr": [points|answer|null, ...], "grr": [48 of them],
                 "fak": [5 relevances 1-5|null], "fdk": [5 of them]}}       (optional)

What becomes what:

- each entry is a task (id = uid, domain from the uid's first two digits) with criteria
  ``qsr-NN`` (its rubric points; the point scale parsed from each text — a text without a
  readable scale is an error naming the file, line and ``qsr.<index>``), ``grr-NN`` (the 48
  general rubrics, :mod:`.general_rubrics`), ``fak-N`` / ``fdk-N`` (keywords, dimensions
  ``anchor_keyword`` / ``drift_keyword``) and ``tsl-N`` (trusted sources, ``trusted_source``);
- each response is a report ``<uid>-<system>`` whose references are its citations (else the
  report's own references section); two deterministic runs judge it at import:
  ``keyword-matcher-v2`` (one ``drb_keyword_hit`` per keyword occurrence in the citation-free
  text, which since v2 leaves out citation chips and link titles; value true, the sentence
  around it as evidence) and ``url-matcher-v1`` (one ``drb_trusted`` per distinct cited URL:
  full / host / none, raw, normalised and host in the evidence and explanation);
- a response's ``judge`` scores become a run ``judge-<model>`` with ``drb_qsr`` / ``drb_grr``
  (a number is the paper's point output and is read through the rubric's scale; ``yes`` /
  ``partial`` / ``no`` are answers; null is a failed call, kept as an error verdict) and
  ``drb_relevance`` verdicts; a number inside a rubric's Partial *range* also becomes a
  ``drb_partial_points`` verdict holding that number.

Fields beyond these are kept in the task's or report's metadata, never dropped silently.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from reviewer.citations import parse_references
from reviewer.errors import InputError
from reviewer.formats.jsonl import Where, field_path, read_jsonl
from reviewer.frameworks.dr_bench.general_rubrics import GENERAL_RUBRICS, GRR_GROUPS, grr_id
from reviewer.frameworks.dr_bench.keywords import excluded_spans, find_hits
from reviewer.frameworks.dr_bench.points import PointScale, PointScaleError, parse_point_scale
from reviewer.frameworks.dr_bench.urls import (
    RULES,
    UrlMatch,
    match_annotations,
    normalise_url,
    under_a_tsl,
)
from reviewer.models import (
    Bundle,
    Criterion,
    JudgeRun,
    Judgment,
    Reference,
    Report,
    Suite,
    System,
    Task,
    id_problem,
)

TASK_FILE = "RigorousBench.jsonl"
REPORTS_FILE = "reports.jsonl"
KEYWORD_RUN = "keyword-matcher-v2"
URL_RUN = "url-matcher-v1"
FRAMEWORK = "drbench"

DOMAINS: dict[str, str] = {
    "00": "Unclassified",
    "01": "Academia & Research",
    "02": "News & Current Affairs",
    "03": "Sports & Competitions",
    "04": "Commonsense & Education",
    "05": "Law & Politics",
    "06": "Business & Finance",
    "07": "Technology Intelligence",
    "08": "Environment & Sustainability",
    "09": "History & Social Sciences",
    "10": "Health & Medicine",
}
"""Domain codes of the paper's Table 4 (the uid's first two digits)."""

_TASK_FIELDS = ("uid", "query", "qsr", "tsl", "fak", "fdk")
_REPORT_FIELDS = ("uid", "system", "report", "citations", "token_usage", "judge")
_BAD_ID = re.compile(r"[/\s]")


def read(path: Path, suite_id: str | None = None) -> Bundle:
    """Parse a DR. Bench task file (or a folder with one, a reports file, and the authors'
    notebook outputs ``Log_<model>.jsonl`` / ``Eval_<model>.jsonl``) into a bundle.

    Raises :class:`InputError` naming the file, line and field of anything malformed.
    """
    path = Path(path)
    tasks_file, reports_file = _locate(path)
    logs = _notebook_files(path, "Log_")
    evals = _notebook_files(path, "Eval_")
    if tasks_file is None and not logs:
        raise InputError(
            path,
            f"expected {TASK_FILE} (or exactly one task .jsonl file), or "
            "the notebook's Log_<model>.jsonl files, in the folder",
        )
    anchor = tasks_file or logs[0]
    reader = _Reader(suite_id or _suite_id(anchor))
    if tasks_file is not None:
        reader.read_tasks(tasks_file)
    if reports_file is not None:
        reader.read_reports(reports_file)
    for log in logs:
        reader.read_log(log, tasks_file is None)
    for evaluation in evals:
        reader.read_eval(evaluation)
    if not reader.tasks:
        raise InputError(anchor, "no tasks in the file")
    return reader.bundle(anchor, reports_file, logs + evals)


def _notebook_files(path: Path, prefix: str) -> list[Path]:
    if not path.is_dir():
        return []
    return sorted(p for p in path.glob(f"{prefix}*.jsonl") if p.is_file())


def _locate(path: Path) -> tuple[Path | None, Path | None]:
    if path.is_file():
        return path, None
    if not path.is_dir():
        raise InputError(path, "no such file or folder")
    tasks = path / TASK_FILE
    if not tasks.is_file():
        others = sorted(
            p
            for p in path.glob("*.jsonl")
            if p.name != REPORTS_FILE and not p.name.startswith(("Log_", "Eval_"))
        )
        if not others:
            return None, None
        if len(others) != 1:
            raise InputError(
                path,
                f"expected {TASK_FILE} (or exactly one task .jsonl file) in "
                f"the folder, found {len(others)} candidates",
            )
        tasks = others[0]
    reports = path / REPORTS_FILE
    return tasks, reports if reports.is_file() else None


def _suite_id(tasks_file: Path) -> str:
    stem = re.sub(r"[^A-Za-z0-9._-]+", "-", tasks_file.stem).strip("-").lower() or "tasks"
    return f"drbench-{stem}"


def _err(where: Where, message: str, fld: str | None = None) -> InputError:
    return InputError(where[0], message, line=where[1], field=fld)


def _strings(record: dict[str, Any], key: str, where: Where, *, minimum: int = 0) -> list[str]:
    value = record.get(key)
    if not isinstance(value, list):
        raise _err(where, f"expected a list of strings, found {type(value).__name__}", key)
    for i, item in enumerate(value):
        if not isinstance(item, str) or not item.strip():
            raise _err(where, "expected a non-empty string", f"{key}.{i}")
    if len(value) < minimum:
        raise _err(where, f"expected at least {minimum} item(s), found {len(value)}", key)
    return [item.strip() for item in value]


def _text(record: dict[str, Any], key: str, where: Where) -> str:
    value = record.get(key)
    if isinstance(value, int) and not isinstance(value, bool) and key == "uid":
        value = str(value)
    if not isinstance(value, str) or not value.strip():
        raise _err(where, "expected a non-empty string", key)
    return value


class _Reader:
    def __init__(self, suite_id: str) -> None:
        self.suite_id = suite_id
        self.tasks: list[Task] = []
        self.task_where: list[Where] = []
        self.by_uid: dict[str, Task] = {}
        self.scales: dict[str, dict[str, PointScale]] = {}
        self.systems: dict[str, None] = {}
        self.reports: list[Report] = []
        self.report_ids: set[str] = set()
        self.report_where: list[Where] = []
        self.runs: dict[str, JudgeRun] = {}
        self.judgments: list[Judgment] = []
        self.judgment_where: list[Where] = []
        self.notes: list[str] = []

    # -- tasks -------------------------------------------------------------------------

    def read_tasks(self, path: Path) -> None:
        for number, record in read_jsonl(path):
            where = (str(path), number)
            self.add_task(record, where)
        if not self.tasks:
            raise InputError(path, "no tasks in the file")

    def add_task(self, record: dict[str, Any], where: Where) -> Task:
        task, scales = self.task(record, where)
        if task.id in self.by_uid:
            raise _err(where, f"uid {task.id!r} repeats", "uid")
        self.by_uid[task.id] = task
        self.scales[task.id] = scales
        self.tasks.append(task)
        self.task_where.append(where)
        return task

    # -- the authors' notebook outputs ------------------------------------------------

    def read_log(self, path: Path, tasks_from_log: bool) -> None:
        """``Log_<model>.jsonl``: one deep-research response per line, as the notebook logs
        it; the model (from the file name) is the system. Without a task file the tasks are
        the log's own entries (each carries its query, rubrics, sources and keywords)."""
        system = _system_of(path, "Log_")
        for number, record in read_jsonl(path):
            where = (str(path), number)
            uid = _text(record, "uid", where).strip()
            self.log_task(uid, record, where, tasks_from_log)
            text = record.get("text")
            if not isinstance(text, str):
                raise _err(where, "expected the report text as a string", "text")
            urls = _log_urls(record, where)
            usage = _log_usage(record, where)
            extra = {k: record[k] for k in ("output_tokens", "reasoning_tokens") if k in record}
            self.note_unmapped(record, where, _LOG_FIELDS)
            self.report(
                where,
                {
                    "uid": uid,
                    "system": system,
                    "report": text,
                    "citations": list(dict.fromkeys(u.strip() for u in urls if u.strip())),
                    **({"token_usage": usage} if usage else {}),
                    **({"notebook_log": extra} if extra else {}),
                },
            )

    def log_task(
        self, uid: str, record: dict[str, Any], where: Where, tasks_from_log: bool
    ) -> None:
        """A log line brings its own task when there is no task file; with one, the line's copy
        of the task's lists is only compared with it."""
        task = self.by_uid.get(uid)
        if task is None:
            if not tasks_from_log:
                raise _err(where, f"no task with uid {uid!r} in the task file", "uid")
            self.add_task({k: record[k] for k in _TASK_FIELDS if k in record}, where)
        else:
            self.note_log_differences(task, record, where)

    def note_log_differences(self, task: Task, record: dict[str, Any], where: Where) -> None:
        for key, dimension in _LOG_COMPARED:
            given = record.get(key)
            stored = [c.text for c in task.criteria if c.dimension == dimension]
            if isinstance(given, list) and [str(g).strip() for g in given] != stored:
                self.note(where, key, "differs from the task file's; the task file's is used")

    def read_eval(self, path: Path) -> None:
        """``Eval_<model>.jsonl``: the notebook's per-task evaluation. Keyword relevances
        become ``drb_relevance`` verdicts of a run ``notebook-<model>``; the rubric sums
        cannot become per-rubric verdicts (the notebook keeps only the sums) and, like the
        counts Gavel recomputes itself, are kept in the report's metadata and noted."""
        system = _system_of(path, "Eval_")
        run_id = f"notebook-{system}"
        for number, record in read_jsonl(path):
            where = (str(path), number)
            uid = _text(record, "uid", where).strip()
            report = self.notebook_report(uid, system, where)
            if run_id not in self.runs:
                self.runs[run_id] = _notebook_run(run_id, path)
            for key, dimension in _EVAL_RELEVANCES:
                values = record.get(key)
                if values is not None:
                    self.eval_relevances(report.id, uid, dimension, key, values, run_id, where)
            kept = {k: record[k] for k in _EVAL_KEPT if k in record}
            for key in ("qsr_sum", "grr_sum"):
                if key in record:
                    self.note(
                        where,
                        key,
                        "a sum only: no per-rubric verdict to import (kept "
                        "in the report's metadata as notebook_eval)",
                    )
            self.note_unmapped(record, where, ("uid", *(k for k, _ in _EVAL_RELEVANCES), *kept))
            index = self.reports.index(report)
            self.reports[index] = report.model_copy(
                update={"metadata": {**report.metadata, "notebook_eval": kept}}
            )

    def notebook_report(self, uid: str, system: str, where: Where) -> Report:
        """The report an Eval line is about: the one its model's Log file brought."""
        report_id = f"{uid}-{system}"
        report = next((r for r in self.reports if r.id == report_id), None)
        if report is None:
            raise _err(
                where,
                f"no report of {system} on task {uid} (Log_{system}.jsonl has none)",
                "uid",
            )
        return report

    def eval_relevances(
        self,
        report_id: str,
        uid: str,
        dimension: str,
        key: str,
        values: object,
        run_id: str,
        where: Where,
    ) -> None:
        """One ``drb_relevance`` verdict per keyword of the dimension, in the task's order."""
        keywords = [c for c in self.by_uid[uid].criteria if c.dimension == dimension]
        if not isinstance(values, list) or len(values) != len(keywords):
            raise _err(
                where,
                f"expected {len(keywords)} relevances, one per keyword of task {uid}",
                key,
            )
        for i, (criterion, value) in enumerate(zip(keywords, values, strict=True)):
            if not _is_relevance(value):
                raise _err(
                    where,
                    f"relevance must be a number from 1 to 5, not {value!r}",
                    f"{key}.{i}",
                )
            self.add(
                Judgment(
                    run=run_id,
                    report=report_id,
                    kind="drb_relevance",
                    criterion=criterion.id,
                    value=value,
                    raw=f"[{value:g}]",
                ),
                where,
            )

    def note_unmapped(self, record: dict[str, Any], where: Where, known: Sequence[str]) -> None:
        for key in record:
            if key not in known:
                self.note(where, key, "not mapped (kept out of the import)")

    def note(self, where: Where, fld: str, message: str) -> None:
        self.notes.append(f"{Path(where[0]).name}:{where[1]}: {fld}: {message}")

    def task(self, record: dict[str, Any], where: Where) -> tuple[Task, dict[str, PointScale]]:
        uid = _task_uid(record, where)
        query = _text(record, "query", where)
        rubrics = _strings(record, "qsr", where, minimum=1)
        tsls = _strings(record, "tsl", where)
        anchors = _strings(record, "fak", where)
        drifts = _strings(record, "fdk", where)
        scales: dict[str, PointScale] = {}
        criteria = [
            *_qsr_criteria(rubrics, scales, where),
            *_grr_criteria(scales),
            *_keyword_criteria("fak", "anchor_keyword", anchors),
            *_keyword_criteria("fdk", "drift_keyword", drifts),
            *_tsl_criteria(tsls, where),
        ]
        code = uid[:2]
        metadata: dict[str, Any] = {
            "uid": uid,
            "domain_code": code,
            "qsr_full": sum(s.full for cid, s in scales.items() if cid.startswith("qsr")),
        }
        extra = {k: v for k, v in record.items() if k not in _TASK_FIELDS}
        if extra:
            metadata["extra"] = extra
        try:
            task = Task(
                id=uid,
                prompt=query,
                domain=DOMAINS.get(code, ""),
                category=code if code in DOMAINS else "",
                task_type="report",
                metadata=metadata,
                criteria=criteria,
            )
        except ValidationError as exc:
            loc, message = field_path(exc)
            raise _err(where, message, loc or None) from exc
        return task, scales

    # -- reports -----------------------------------------------------------------------

    def read_reports(self, path: Path) -> None:
        for number, record in read_jsonl(path):
            self.report((str(path), number), record)

    def report(self, where: Where, record: dict[str, Any]) -> None:
        uid = _text(record, "uid", where).strip()
        task = self.by_uid.get(uid)
        if task is None:
            raise _err(where, f"no task with uid {uid!r} in the task file", "uid")
        system = _system_name(record, where)
        markdown = record.get("report")
        if not isinstance(markdown, str):
            raise _err(where, "expected the report text as a string", "report")
        notebook = record.pop("notebook_log", None)
        report_id = f"{uid}-{system}"
        if report_id in self.report_ids:
            raise _err(where, f"a second report of system {system!r} on task {uid}", "system")
        references = self.citations(record, where)
        metadata = _report_metadata(record, notebook, where)
        self.systems.setdefault(system, None)
        self.report_ids.add(report_id)
        self.reports.append(
            Report(
                id=report_id,
                task=uid,
                system=system,
                markdown=markdown,
                references=references,
                metadata=metadata,
            )
        )
        self.report_where.append(where)
        self.match(report_id, task, markdown, _cited_urls(references, markdown), where)
        judge = record.get("judge")
        if judge is not None:
            self.judge(report_id, task, judge, where)

    @staticmethod
    def citations(record: dict[str, Any], where: Where) -> list[Reference] | None:
        cites = record.get("citations")
        if cites is None:
            return None
        if not isinstance(cites, list):
            raise _err(where, "expected a list of citations", "citations")
        out: list[Reference] = []
        for i, cite in enumerate(cites):
            if isinstance(cite, str):
                url, title = cite, ""
            elif isinstance(cite, dict) and isinstance(cite.get("url"), str):
                url = cite["url"]
                title = str(cite.get("title") or "")
            else:
                raise _err(where, 'expected a URL or {"url": ..., "title": ...}', f"citations.{i}")
            out.append(Reference(index=i + 1, title=title or "", url=url.strip() or None))
        return out

    def add(self, judgment: Judgment, where: Where) -> None:
        self.judgments.append(judgment)
        self.judgment_where.append(where)

    def match(
        self, report_id: str, task: Task, markdown: str, urls: list[str], where: Where
    ) -> None:
        """The two deterministic runs of import: keyword hits, then trusted-source matches."""
        self.keyword_hits(report_id, task, markdown, where)
        self.trusted_matches(report_id, task, urls, where)

    def keyword_hits(self, report_id: str, task: Task, markdown: str, where: Where) -> None:
        spans = excluded_spans(markdown)
        keywords = [c for c in task.criteria if c.dimension in ("anchor_keyword", "drift_keyword")]
        if KEYWORD_RUN not in self.runs:
            self.runs[KEYWORD_RUN] = _keyword_run()
        for criterion in keywords:
            for hit in find_hits(markdown, criterion.text, spans):
                self.add(
                    Judgment(
                        run=KEYWORD_RUN,
                        report=report_id,
                        kind="drb_keyword_hit",
                        criterion=criterion.id,
                        key=hit.key,
                        value=True,
                        explanation=hit.describe(),
                        evidence=hit.context,
                    ),
                    where,
                )

    def trusted_matches(self, report_id: str, task: Task, urls: list[str], where: Where) -> None:
        tsls = [c for c in task.criteria if c.dimension == "trusted_source"]
        matches = match_annotations([c.text for c in tsls], [u for u in urls if u.strip()])
        if URL_RUN not in self.runs:
            self.runs[URL_RUN] = _url_run()
        normalised = {normalise_url(c.text).normalised: c for c in tsls}
        for m in matches:
            how = _how_matched(m, tsls, normalised)
            self.add(
                Judgment(
                    run=URL_RUN,
                    report=report_id,
                    kind="drb_trusted",
                    key=m.url.normalised,
                    value=m.match,
                    explanation=f"normalised: {m.url.normalised} · "
                    f"host: {m.url.host or '(none)'} · {how}",
                    evidence="\n".join(m.spellings),
                ),
                where,
            )

    def judge(self, report_id: str, task: Task, judge: object, where: Where) -> None:
        if not isinstance(judge, dict):
            raise _err(where, "expected an object of judge scores", "judge")
        run_id = self.judge_run(judge, where)
        for key, dimension in _JUDGE_GROUPS:
            values = judge.get(key)
            if values is None:
                continue
            criteria = [c for c in task.criteria if c.dimension == dimension]
            if not isinstance(values, list) or len(values) != len(criteria):
                raise _err(
                    where,
                    f"expected a list of {len(criteria)} values, one per {key} of task {task.id}",
                    f"judge.{key}",
                )
            scales = self.scales[task.id]
            for i, (criterion, raw) in enumerate(zip(criteria, values, strict=True)):
                self.judge_value(
                    run_id, report_id, key, criterion, scales, raw, where, f"judge.{key}.{i}"
                )

    def judge_run(self, judge: dict[str, Any], where: Where) -> str:
        """The run a reports file's judge scores go to, one per judge model."""
        model = judge.get("model", "judge")
        if not isinstance(model, str) or not model.strip():
            raise _err(where, "expected the judge model's name", "judge.model")
        run_id = "judge-" + re.sub(r"[/\s]+", "_", model.strip())
        if run_id not in self.runs:
            self.runs[run_id] = JudgeRun(
                id=run_id,
                model=model.strip(),
                prompt_version="drbench-appD",
                description="Judge scores from the reports file.",
            )
        return run_id

    def judge_value(
        self,
        run_id: str,
        report_id: str,
        key: str,
        criterion: Criterion,
        scales: dict[str, PointScale],
        raw: object,
        where: Where,
        fld: str,
    ) -> None:
        """One judge score as a verdict, plus the points it gave when they fall inside a
        Partial range."""
        value = _judge_value(raw, key, scales, criterion.id, where, fld)
        self.add(
            Judgment(
                run=run_id,
                report=report_id,
                kind=_JUDGE_KINDS.get(key, "drb_relevance"),
                criterion=criterion.id,
                value=value,
                raw=f"[{raw:g}]" if isinstance(raw, int | float) else "",
                error=None if raw is not None else "the judge returned no score",
            ),
            where,
        )
        scale = scales.get(criterion.id)
        if (
            key == "qsr"
            and value == "partial"
            and scale is not None
            and scale.ranged
            and isinstance(raw, int | float)
        ):
            # The judge's own number inside a Partial range: the points it gave.
            self.add(
                Judgment(
                    run=run_id,
                    report=report_id,
                    kind="drb_partial_points",
                    criterion=criterion.id,
                    value=raw,
                    raw=f"[{raw:g}]",
                    explanation=f"The judge gave {raw:g} points, inside the Partial range "
                    f"of {scale.describe()}.",
                ),
                where,
            )

    # -- the bundle --------------------------------------------------------------------

    def bundle(
        self, tasks_file: Path, reports_file: Path | None, notebook: list[Path] | None = None
    ) -> Bundle:
        sources = (
            [tasks_file.name]
            + ([reports_file.name] if reports_file else [])
            + [p.name for p in notebook or [] if p != tasks_file]
        )
        suite = Suite(
            id=self.suite_id,
            name=f"DR. Bench: {tasks_file.stem}",
            frameworks=[FRAMEWORK],
            source=" + ".join(sources),
            description=self.description(),
        )
        return Bundle(
            suite=suite,
            tasks=self.tasks,
            systems=[System(id=name, name=name) for name in self.systems],
            reports=self.reports,
            runs=list(self.runs.values()) if self.reports else [],
            judgments=self.judgments,
            locations=self.locations(),
        )

    def description(self) -> str:
        description = "DR. Bench (RigorousBench) tasks" + (
            " with reports; keyword hits and trusted-source matches computed at import"
            if self.reports
            else " only (no reports)"
        )
        if self.notes:
            description += "\nImport notes:\n" + "\n".join(f"- {n}" for n in self.notes[:200])
        return description

    def locations(self) -> dict[tuple[str, int], Where]:
        locations: dict[tuple[str, int], Where] = {}
        for kind, wheres in (
            ("task", self.task_where),
            ("report", self.report_where),
            ("judgment", self.judgment_where),
        ):
            for i, where in enumerate(wheres):
                locations[(kind, i)] = where
        return locations


def _system_of(path: Path, prefix: str) -> str:
    """The system a notebook output is about: its file name after ``Log_`` / ``Eval_``."""
    name = path.stem[len(prefix) :].strip()
    name = re.sub(r"[/\s]+", "_", name)
    if not name:
        raise InputError(path, f"the file name names no model ({prefix}<model>.jsonl)")
    return name


_LOG_COMPARED = (
    ("qsr", "qsr"),
    ("fak", "anchor_keyword"),
    ("fdk", "drift_keyword"),
    ("tsl", "trusted_source"),
)
"""A Log line's copies of the task's lists, and the criterion dimension each is compared with."""

_LOG_FIELDS = (
    *_TASK_FIELDS,
    "text",
    "pure_text",
    "annotations",
    "pure_annotations",
    "total_tokens",
    "input_tokens",
    "output_tokens",
    "reasoning_tokens",
)
"""The fields of a Log line that the import reads (anything else is noted as not mapped)."""

_EVAL_RELEVANCES = (
    ("keywords_fak_relevance", "anchor_keyword"),
    ("keywords_fdk_relevance", "drift_keyword"),
)
_EVAL_KEPT = (
    "qsr_sum",
    "grr_sum",
    "keywords_fak_count",
    "keywords_fdk_count",
    "url_full_match",
    "url_host_match",
    "ref_url_num",
    "report_url_num",
)
"""The notebook's sums and counts, kept in the report's metadata (Gavel recomputes its own)."""


def _notebook_run(run_id: str, path: Path) -> JudgeRun:
    return JudgeRun(
        id=run_id,
        model="the notebook's judge (model not recorded)",
        prompt_version="drbench-notebook",
        description=f"Keyword relevances from {path.name}, the authors' notebook "
        "output (rubric sums are not per-rubric verdicts: re-judge with `gavel "
        "judge --framework drbench`)",
    )


def _log_urls(record: dict[str, Any], where: Where) -> list[str]:
    urls = record.get("pure_annotations", record.get("annotations", []))
    if not isinstance(urls, list) or not all(isinstance(u, str) for u in urls):
        raise _err(where, "expected a list of URLs", "pure_annotations")
    return urls


def _is_count(value: object) -> bool:
    return (
        not isinstance(value, bool)
        and isinstance(value, int | float)
        and math.isfinite(value)
        and value >= 0
    )


def _is_relevance(value: object) -> bool:
    return not isinstance(value, bool) and isinstance(value, int | float) and 1 <= value <= 5


def _log_usage(record: dict[str, Any], where: Where) -> dict[str, Any]:
    """The notebook's token counts as the ``token_usage`` a report file would give (empty
    unless both are there)."""
    for key in ("total_tokens", "input_tokens"):
        value = record.get(key)
        if value is not None and not _is_count(value):
            raise _err(where, "expected a number of tokens", key)
    total, given = record.get("total_tokens"), record.get("input_tokens")
    if isinstance(total, int | float) and isinstance(given, int | float):
        return {"total": total, "input": given}
    return {}


_JUDGE_GROUPS = (
    ("qsr", "qsr"),
    ("grr", "grr"),
    ("fak", "anchor_keyword"),
    ("fdk", "drift_keyword"),
)
"""The lists of a reports file's judge scores, and the criterion dimension each scores."""
_JUDGE_KINDS = {"qsr": "drb_qsr", "grr": "drb_grr"}
"""The verdict kind of a rubric score; a keyword's score is a ``drb_relevance``."""


def _judge_value(
    raw: object, key: str, scales: dict[str, PointScale], cid: str, where: Where, fld: str
) -> object:
    """A judge score as a verdict value: None for a failed call, a keyword's relevance as
    given, a rubric's points or word as its answer."""
    if raw is None:
        return None
    if key in ("fak", "fdk"):
        if not _is_relevance(raw):
            raise _err(where, f"relevance must be a number from 1 to 5, not {raw!r}", fld)
        return raw
    return _answer(raw, scales[cid], key, where, fld)


def _keyword_run() -> JudgeRun:
    return JudgeRun(
        id=KEYWORD_RUN,
        model="reviewer.frameworks.dr_bench.keywords",
        prompt_version="v2",
        params={
            "matching": "case-insensitive substring, non-overlapping; whitespace, "
            "dash and apostrophe variants equal",
            "text": "citation-free: "
            "references section, citation markers, citation chips, Markdown links "
            "(title and target) and URLs skipped; offsets are the report's",
        },
        description="Deterministic keyword counting at import: one verdict per hit.",
    )


def _url_run() -> JudgeRun:
    return JudgeRun(
        id=URL_RUN,
        model="reviewer.frameworks.dr_bench.urls",
        prompt_version="v1",
        params=dict(RULES),
        description="Deterministic trusted-source matching at import: one verdict per "
        "distinct cited URL.",
    )


def _how_matched(m: UrlMatch, tsls: list[Criterion], normalised: dict[str, Criterion]) -> str:
    """The explanation of one citation's match: which TSL it equals or shares a host with,
    and whether ``tsl_match = under`` would count it full."""
    if m.match == "none":
        return "matches no trusted source"
    tsl = tsls[m.tsl or 0]
    how = (
        f"equals {tsl.id} ({tsl.text})"
        if m.match == "full"
        else f"shares host {m.url.host} with {tsl.id} ({tsl.text})"
    )
    parent = next(
        (
            c
            for url, c in normalised.items()
            if m.match == "host" and under_a_tsl(m.url.normalised, {url})
        ),
        None,
    )
    if parent is not None:
        how += f"; lies under {parent.id}, so a full match under tsl_match = under"
    return how


def _task_uid(record: dict[str, Any], where: Where) -> str:
    uid = _text(record, "uid", where).strip()
    if _BAD_ID.search(uid):
        raise _err(where, "a uid may not contain '/' or spaces", "uid")
    problem = id_problem(uid)
    if problem:
        raise _err(where, f"not a usable uid ({problem})", "uid")
    return uid


def _system_name(record: dict[str, Any], where: Where) -> str:
    system = _text(record, "system", where).strip()
    if _BAD_ID.search(system):
        raise _err(where, "a system name may not contain '/' or spaces", "system")
    problem = id_problem(system)
    if problem:
        raise _err(where, f"not a usable system name ({problem})", "system")
    return system


def _qsr_criteria(
    rubrics: list[str], scales: dict[str, PointScale], where: Where
) -> list[Criterion]:
    """The task's own rubric points, each with the point scale its text ends with."""
    criteria: list[Criterion] = []
    for i, text in enumerate(rubrics):
        try:
            scale = parse_point_scale(text)
        except PointScaleError as exc:
            raise _err(where, str(exc), f"qsr.{i}") from exc
        cid = f"qsr-{i + 1:02d}"
        scales[cid] = scale
        criteria.append(_rubric(cid, "qsr", text, scale, "drb_answer", {"number": i + 1}))
    return criteria


def _grr_criteria(scales: dict[str, PointScale]) -> list[Criterion]:
    """The 48 general rubrics every task shares."""
    criteria: list[Criterion] = []
    for number, group, text in GENERAL_RUBRICS:
        scale = parse_point_scale(text)
        cid = grr_id(number)
        scales[cid] = scale
        criteria.append(
            _rubric(
                cid,
                "grr",
                text,
                scale,
                "drb_yes_no",
                {"number": number, "group": GRR_GROUPS[group]},
            )
        )
    return criteria


_KEYWORD_EXPLANATIONS = {
    "fak": "focus-anchor keyword: missing it raises drift",
    "fdk": "focus-deviation keyword: using it raises drift",
}


def _keyword_criteria(prefix: str, dimension: str, words: list[str]) -> list[Criterion]:
    return [
        Criterion(
            id=f"{prefix}-{i + 1}",
            framework=FRAMEWORK,
            dimension=dimension,
            text=word,
            scale="drb_relevance",
            explanation=_KEYWORD_EXPLANATIONS[prefix],
        )
        for i, word in enumerate(words)
    ]


def _tsl_criteria(tsls: list[str], where: Where) -> list[Criterion]:
    """The trusted sources, each with the normalised form and host citations match against."""
    criteria: list[Criterion] = []
    for i, url in enumerate(tsls):
        normal = normalise_url(url)
        if not normal.host:
            raise _err(where, f"{url!r} has no host to match citations against", f"tsl.{i}")
        criteria.append(
            Criterion(
                id=f"tsl-{i + 1}",
                framework=FRAMEWORK,
                dimension="trusted_source",
                text=url,
                scale="drb_match",
                explanation=f"normalised: {normal.normalised} · host: {normal.host}",
                metadata={"raw": url, "normalised": normal.normalised, "host": normal.host},
            )
        )
    return criteria


def _report_metadata(record: dict[str, Any], notebook: object, where: Where) -> dict[str, Any]:
    """Token usage, fields the format does not name, and the notebook's own log fields."""
    metadata: dict[str, Any] = {}
    usage = record.get("token_usage")
    if usage is not None:
        if not isinstance(usage, dict) or not all(
            isinstance(usage.get(k), int | float) and not isinstance(usage.get(k), bool)
            for k in ("total", "input")
        ):
            raise _err(where, 'expected {"total": number, "input": number}', "token_usage")
        metadata["token_usage"] = {"total": usage["total"], "input": usage["input"]}
    extra = {k: v for k, v in record.items() if k not in _REPORT_FIELDS}
    if extra:
        metadata["extra"] = extra
    if notebook:
        metadata["notebook_log"] = notebook
    return metadata


def _cited_urls(references: list[Reference] | None, markdown: str) -> list[str]:
    """The URLs a report cites: its citations when given, else its own references section."""
    if references is not None:
        return [r.url for r in references if r.url]
    return [r.url for r in parse_references(markdown) if r.url]


def _rubric(
    cid: str,
    dimension: str,
    text: str,
    scale: PointScale,
    scale_name: str,
    metadata: dict[str, Any],
) -> Criterion:
    points: dict[str, Any] = {"yes": scale.yes, "no": scale.no, "full": scale.full}
    if scale.partial is not None:
        points["partial"] = list(scale.partial)
    return Criterion(
        id=cid,
        framework=FRAMEWORK,
        dimension=dimension,
        text=text,
        weight=scale.full,
        scale=scale_name,
        explanation=f"point scale: {scale.describe()}",
        metadata={**metadata, "points": points, "written": scale.written},
    )


def _answer(raw: object, scale: PointScale, key: str, where: Where, fld: str) -> str:
    """A judge's rubric value as an answer: points through the rubric's scale, or a word."""
    if isinstance(raw, str):
        word = raw.strip().lower()
        word = "yes" if word == "full" else word
        allowed = ("yes", "partial", "no") if key == "qsr" else ("yes", "no")
        if word not in allowed:
            raise _err(where, f"{raw!r} is not one of {', '.join(allowed)}", fld)
        return word
    if isinstance(raw, bool) or not isinstance(raw, int | float):
        raise _err(where, f"expected points or an answer, not {raw!r}", fld)
    try:
        answer = scale.answer_for(float(raw))
    except PointScaleError as exc:
        raise _err(where, str(exc), fld) from exc
    if key == "grr" and answer == "partial":
        raise _err(where, "general rubrics have no Partial", fld)
    return answer
