"""DeepResearch Bench (and its forks) from a repository checkout, as one bundle.

Layout read (every file optional except the task data; ``<system>`` is a file or folder name)::

    data/prompt_data/*.jsonl               tasks {id, topic, language, prompt}
    data/criteria_data/*.jsonl             RACE rubrics {id, prompt, dimension_weight, criterions}
    data/test_data/raw_data/<system>.jsonl      reports as submitted {id, prompt, article}
    data/test_data/cleaned_data/<system>.jsonl  citation-stripped text the RACE judge saw
    results/race/<system>/raw_results.jsonl     stored per-task RACE results   -> race_stored
    results/race/<system>/race_result.txt       summary (kept in the run's params)
    judgements/<system>.jsonl                   per-criterion RACE verdicts (tickr fork)
                                                -> race_target (and race_reference)
    results/fact/<system>/validated.jsonl       FACT statements, pages, verdicts -> fact
        (else scraped.jsonl, deduplicated.jsonl or extracted.jsonl: statements, no verdicts)

A fork's results also import without the repository: one system's ``raw_results.jsonl`` (or
the folder holding it) or judgements file, given as the path; tasks then come from the records'
prompts and a task's rubric from the judge's items (no weights). A results folder or judgements
file named differently from its report file is matched by ``system_map`` (``--system-map``), by
the shared-parts rule of ``_Reader.result_systems``, or refused naming both names
(docs/frameworks/deepresearch_bench.md).

How things join, as the reference code does: reports, rubrics and results to tasks by the exact
prompt text (then the stripped text; a record without a prompt by its id). ``reference.jsonl``
is the reference system (``is_reference``), never scored. Ids may be integers or strings.

Decisions where the files leave a choice (each one leaves a line in the suite description, so
an import never silently drops or invents anything):

- A record whose prompt matches no task creates the task (fork results may cover tasks that
  only exist in their own prompt files); a record with neither a known prompt nor a prompt to
  create the task from is skipped. Two tasks with one id get ``<id>~2``… for the later one.
- A result for a (task, system) without a report file gets a report: from the FACT file's
  ``article`` when there is one, else an empty placeholder report (metadata ``placeholder``),
  so system means stay the means over the same rows as the benchmark's summary files.
- Repeated lines for the same (task, system) in one file: the last one wins (the reference
  code builds dicts keyed by prompt, which keep the last).
- A judge item in ``judgements/`` is matched to a rubric criterion of its dimension as the
  reference code does: exact (stripped) text, then case-insensitive, then substring either way.
  An item that matches nothing, or a criterion already matched by an earlier item, is *not*
  imported (a verdict needs its criterion); the run's params list it under ``unmatched`` /
  ``duplicates``. The reference code would instead weigh an unmatched item with the
  dimension's mean weight and count a duplicate twice: with such items the recomputed score
  differs from the code's, and the note says so.
- A judge item whose score is missing or not a number becomes a verdict without a value whose
  ``error`` says why (a reviewer can supply the score); a number outside 0–10 is bad input.
- FACT: each deduplicated (statement, URL) pair is a claim with ``url`` (and ``citations``
  = its numeric ``ref_idx`` values); ``url_content`` becomes a source (``scrape failed: …`` is
  the source's ``error``); ``validate_res`` gives one ``fact`` verdict per statement, matched
  by ``idx`` (0- or 1-based, detected per URL); ``validate_error`` gives verdicts without a
  value carrying the error; a statement the judge returned no result for gets an error
  verdict too. ``citations: "extraction failed"`` is recorded in the report's metadata.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from reviewer.errors import InputError
from reviewer.formats.jsonl import M, Where, field_path, read_jsonl
from reviewer.models import (
    Bundle,
    Claim,
    Criterion,
    JudgeRun,
    Judgment,
    Report,
    Source,
    Suite,
    System,
    Task,
    id_problem,
)
from reviewer.scales import SUPPORT, ScaleError

REFERENCE_SYSTEM = "reference"
STORED_KEYS = (
    "comprehensiveness",
    "insight",
    "instruction_following",
    "readability",
    "overall_score",
)
FACT_STAGES = ("validated.jsonl", "scraped.jsonl", "deduplicated.jsonl", "extracted.jsonl")
SCRAPE_FAILED = "scrape failed"
MAX_NOTES = 200
_CJK = re.compile(r"[\u3400-\u9fff]")


@dataclass(slots=True)
class _TaskDraft:
    ext_id: str
    prompt: str
    language: str
    domain: str
    where: Where
    metadata: dict[str, Any] = field(default_factory=dict)
    criteria: list[Criterion] = field(default_factory=list)


@dataclass(slots=True)
class _ReportDraft:
    task: _TaskDraft
    system: str
    markdown: str
    where: Where
    cleaned: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    claims: list[Claim] = field(default_factory=list)

    @property
    def ext_id(self) -> str:
        return f"{self.system}:{self.task.ext_id}"


@dataclass(slots=True)
class _RunDraft:
    run: JudgeRun
    where: Where
    judgments: list[tuple[Judgment, Where]] = field(default_factory=list)


def read_drb(
    root: Path, suite_id: str | None = None, *, system_map: Mapping[str, str] | None = None
) -> Bundle:
    """Parse a DeepResearch Bench repository checkout (or a fork's results without it) into a
    bundle (see the module doc). ``system_map`` names the system of a results folder or
    judgements file whose name is not its report file's (``{result name: system}``).

    Raises :class:`InputError` naming the file, line and field of anything malformed.
    """
    return _Reader(Path(root), suite_id, dict(system_map or {})).read()


def _model(model: type[M], data: dict[str, Any], where: Where, prefix: str = "") -> M:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        loc, message = field_path(exc)
        name = ".".join(p for p in (prefix, loc) if p)
        raise InputError(where[0], message, line=where[1] or None, field=name or None) from exc


def _number(value: object) -> float | None:
    """A JSON number or numeric string as float (None when it is neither)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        number = float(value)
    elif isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            return None
    else:
        return None
    # "nan", "inf" and "1e400" are numeric strings to float(), never a weight or a score.
    return number if math.isfinite(number) else None


def _language(prompt: str) -> str:
    return "zh" if _CJK.search(prompt) else "en"


class _Reader:
    def __init__(self, root: Path, suite_id: str | None, system_map: dict[str, str]) -> None:
        self.root = root
        self.suite_id = suite_id
        self.system_map = system_map
        self.mapped: set[str] = set()
        self.file_systems: set[str] = set()
        """Systems with a report file (raw_data or cleaned_data), known once they are read."""
        self.only: Path | None = None
        """The one results file read, when the input is a file and not a repository."""
        self.notes: list[str] = []
        self.tasks: list[_TaskDraft] = []
        self.by_prompt: dict[str, _TaskDraft] = {}
        self.by_stripped: dict[str, _TaskDraft] = {}
        self.by_id: dict[str, _TaskDraft] = {}
        self.ext_ids: set[str] = set()
        self.systems: dict[str, Where] = {}
        self.reports: dict[tuple[str, str], _ReportDraft] = {}
        self.sources: dict[str, tuple[Source, Where, str | None]] = {}
        self.source_conflicts = 0
        self.runs: list[_RunDraft] = []
        self.has_fact = False

    # -- helpers -----------------------------------------------------------------------

    def rel(self, path: Path) -> str:
        try:
            return str(path.relative_to(self.root))
        except ValueError:
            return str(path)

    def note(self, where: Where | Path, message: str) -> None:
        if isinstance(where, Path):
            place = self.rel(where)
        else:
            place = self.rel(Path(where[0])) + (f":{where[1]}" if where[1] else "")
        self.notes.append(f"{place}: {message}")

    def records(self, path: Path) -> Iterator[tuple[Where, dict[str, Any]]]:
        for number, record in read_jsonl(path):
            yield (str(path), number), record

    @staticmethod
    def jsonl_files(folder: Path) -> list[Path]:
        if not folder.is_dir():
            return []
        return sorted(p for p in folder.iterdir() if p.is_file() and p.suffix == ".jsonl")

    @staticmethod
    def text(
        record: dict[str, Any], key: str, where: Where, *, required: bool = True
    ) -> str | None:
        value = record.get(key)
        if value is None:
            if required:
                raise InputError(where[0], "missing", line=where[1], field=key)
            return None
        if not isinstance(value, str):
            raise InputError(
                where[0],
                f"must be a string, found {type(value).__name__}",
                line=where[1],
                field=key,
            )
        return value

    @staticmethod
    def ident(value: object, where: Where, fld: str = "id") -> str:
        if isinstance(value, bool) or value is None:
            raise InputError(where[0], "must be an integer or a string", line=where[1], field=fld)
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        text = str(value).strip()
        problem = id_problem(text)
        if problem:
            raise InputError(
                where[0], f"{text[:60]!r} is not a usable id ({problem})", line=where[1], field=fld
            )
        return text

    @staticmethod
    def repeated(
        where: Where, task: _TaskDraft, what: str, first: Where | None = None
    ) -> InputError:
        """A task's second line in a file: refused, since either line silently replacing the
        other would score something nobody can see was dropped."""
        origin = first or task.where
        at = f" (the first is line {origin[1]})" if origin[0] == where[0] and origin[1] else ""
        return InputError(
            where[0],
            f"{what} task {task.ext_id}{at}: each task once per file",
            line=where[1],
            field="id",
        )

    def system(self, name: str, where: Where) -> str:
        self.systems.setdefault(name, where)
        return name

    # -- tasks -------------------------------------------------------------------------

    def add_task(
        self,
        ident: str | None,
        prompt: str,
        where: Where,
        *,
        language: str | None,
        domain: str | None,
    ) -> _TaskDraft:
        base = ident or str(len(self.tasks) + 1)
        ext = base
        n = 2
        while ext in self.ext_ids:
            ext = f"{base}~{n}"
            n += 1
        if ext != base:
            self.note(
                where, f"task id {base} is already taken by another prompt; this task is {ext}"
            )
        task = _TaskDraft(ext, prompt, language or _language(prompt), domain or "", where)
        self.tasks.append(task)
        self.ext_ids.add(ext)
        self.by_prompt.setdefault(prompt, task)
        self.by_stripped.setdefault(prompt.strip(), task)
        if ident is not None:
            self.by_id.setdefault(ident, task)
        return task

    def task_of(self, record: dict[str, Any], where: Where) -> _TaskDraft | None:
        """The record's task by prompt (exact, then stripped), else by id; created if new."""
        prompt = self.text(record, "prompt", where, required=False)
        if prompt is not None and not prompt.strip():
            prompt = None
        raw_id = record.get("id")
        ident = self.ident(raw_id, where) if raw_id is not None else None
        if prompt is not None:
            task = self.by_prompt.get(prompt) or self.by_stripped.get(prompt.strip())
            if task is not None:
                return task
            language = record.get("language")
            task = self.add_task(
                ident,
                prompt,
                where,
                language=language if isinstance(language, str) else None,
                domain=None,
            )
            self.note(
                where,
                f"prompt matches no task in data/prompt_data; created task "
                f"{task.ext_id} from this record",
            )
            return task
        elif ident is not None:
            task = self.by_id.get(ident)
            if task is not None:
                return task
        else:
            raise InputError(
                where[0], "missing: needs a 'prompt' (or an 'id')", line=where[1], field="prompt"
            )
        self.note(where, f"skipped: no task with id {ident} and no prompt to create it from")
        return None

    def read_tasks(self) -> None:
        for path in self.jsonl_files(self.root / "data" / "prompt_data"):
            for where, record in self.records(path):
                prompt = self.text(record, "prompt", where)
                assert prompt is not None
                if not prompt.strip():
                    raise InputError(where[0], "empty", line=where[1], field="prompt")
                ident = self.ident(record["id"], where) if record.get("id") is not None else None
                if prompt in self.by_prompt:
                    raise self.repeated(where, self.by_prompt[prompt], "the prompt of")
                language = self.text(record, "language", where, required=False)
                topic = self.text(record, "topic", where, required=False)
                self.add_task(ident, prompt, where, language=language, domain=topic)

    def read_criteria(self) -> None:
        for path in self.jsonl_files(self.root / "data" / "criteria_data"):
            for where, record in self.records(path):
                task = self.task_of(record, where)
                if task is None:
                    continue
                weights = record.get("dimension_weight")
                if weights is None:
                    raise InputError(where[0], "missing", line=where[1], field="dimension_weight")
                if not isinstance(weights, dict):
                    raise InputError(
                        where[0],
                        "must be an object of dimension -> weight",
                        line=where[1],
                        field="dimension_weight",
                    )
                dimension_weight: dict[str, float] = {}
                for dim, value in weights.items():
                    number = _number(value) if not isinstance(value, str) else None
                    if number is None:
                        raise InputError(
                            where[0],
                            f"must be a number, found {value!r}",
                            line=where[1],
                            field=f"dimension_weight.{dim}",
                        )
                    dimension_weight[str(dim)] = number
                criteria = self.parse_criteria(record, where)
                if task.criteria:
                    raise self.repeated(where, task, "a second rubric for")
                task.criteria = criteria
                task.metadata["dimension_weight"] = dimension_weight

    def parse_criteria(self, record: dict[str, Any], where: Where) -> list[Criterion]:
        groups = record.get("criterions")
        if groups is None:
            raise InputError(where[0], "missing", line=where[1], field="criterions")
        if not isinstance(groups, dict):
            raise InputError(
                where[0],
                "must be an object of dimension -> criteria list",
                line=where[1],
                field="criterions",
            )
        out: list[Criterion] = []
        for dim, items in groups.items():
            prefix = f"criterions.{dim}"
            if not isinstance(items, list):
                raise InputError(where[0], "must be a list", line=where[1], field=prefix)
            slug = str(dim).replace("/", "_").strip() or "dimension"
            out += [
                _criterion(item, str(dim), f"{slug}.{k + 1}", where, f"{prefix}.{k}")
                for k, item in enumerate(items)
            ]
        return out

    # -- reports -----------------------------------------------------------------------

    def report_for(
        self, task: _TaskDraft, system: str, where: Where, origin: str, article: str | None = None
    ) -> _ReportDraft:
        """The (task, system) report, created from ``article`` or as a placeholder if new."""
        key = (task.ext_id, system)
        draft = self.reports.get(key)
        if draft is None:
            draft = _ReportDraft(task, system, article or "", where)
            if article is None:
                draft.metadata["placeholder"] = (
                    f"no report text in the repository; created for the results in {origin}"
                )
                self.note(
                    where,
                    f"no report for task {task.ext_id} of {system}: empty "
                    "placeholder report created",
                )
            else:
                draft.metadata["origin"] = origin
                self.note(
                    where,
                    f"no report file for task {task.ext_id} of {system}: report "
                    f"created from the article in {origin}",
                )
            self.reports[key] = draft
        return draft

    def read_reports(self) -> None:
        data = self.root / "data" / "test_data"
        for _path, where, task, system, article in self._articles(data / "raw_data"):
            key = (task.ext_id, system)
            if key in self.reports:
                raise self.repeated(where, task, "a second report for", self.reports[key].where)
            self.reports[key] = _ReportDraft(task, system, article, where)
        cleaned: dict[tuple[str, str], Where] = {}
        for path, where, task, system, article in self._articles(data / "cleaned_data"):
            if (task.ext_id, system) in cleaned:
                raise self.repeated(
                    where, task, "a second cleaned text of", cleaned[(task.ext_id, system)]
                )
            cleaned[(task.ext_id, system)] = where
            draft = self.reports.get((task.ext_id, system))
            if draft is None:
                draft = self.report_for(task, system, where, self.rel(path), article)
                draft.metadata["markdown_is_cleaned"] = True
            draft.cleaned = article

    def _articles(self, folder: Path) -> Iterator[tuple[Path, Where, _TaskDraft, str, str]]:
        """(file, where, task, system, article) of every report in a raw/cleaned folder: one
        system per file, named by the file."""
        for path in self.jsonl_files(folder):
            system = self.system(path.stem, (str(path), 0))
            for where, record in self.records(path):
                task = self.task_of(record, where)
                if task is None:
                    continue
                article = self.text(record, "article", where)
                assert article is not None
                yield path, where, task, system, article

    # -- which system a result belongs to ---------------------------------------------

    def result_systems(self, what: str, found: dict[str, Path]) -> dict[str, str]:
        """Result name (a results folder or judgements file) -> the system it is of: the one
        ``--system-map`` gives; else the system of the report file with that name; else, the
        rule for forks that name results differently from report files, the one report file
        (of those with no result of this kind) whose name's parts (split at - _ . and spaces)
        are all among the result name's parts or hold all of them. A result name matching no
        report file while report files lack results of this kind, or matching several, is
        refused naming both sides: a placeholder report must never carry the scores of a
        report that is there under another name."""
        files = self.file_systems - {REFERENCE_SYSTEM}
        out: dict[str, str] = {}
        for name in found:
            if name in self.system_map:
                out[name] = self.system_map[name]
                self.mapped.add(name)
            elif name in self.file_systems or not files:
                out[name] = name
        for name, path in found.items():
            if name not in out:
                out[name] = self.matched_system(what, name, path, files, found, out)
        return out

    def matched_system(
        self,
        what: str,
        name: str,
        path: Path,
        files: set[str],
        found: dict[str, Path],
        taken: dict[str, str],
    ) -> str:
        """The report file a differently named result is of, by the rule of
        :meth:`result_systems`; refused when the rule finds none or several."""
        free = files - set(taken.values()) - set(found)
        mine = _parts(name)
        candidates = sorted(s for s in free if _parts(s) <= mine or mine <= _parts(s))
        where = self.rel(path)
        if len(candidates) == 1:
            self.note(
                path,
                f"{what} {name!r} taken as system {candidates[0]} (report file "
                f"{candidates[0]}.jsonl: every part of one name is in the other); "
                f"--system-map {name}=SYSTEM says otherwise",
            )
            return candidates[0]
        if candidates:
            raise InputError(
                where,
                f"{what} {name!r} could be of {' or '.join(candidates)} (each shares every "
                f"part of its name): say which with --system-map {name}=SYSTEM",
            )
        if free:
            reports = ", ".join(f"{s}.jsonl" for s in sorted(free))
            raise InputError(
                where,
                f"{what} {name!r} has no report file of that name, and report file(s) "
                f"{reports} have no {what}: say whose they are with --system-map {name}=SYSTEM "
                f"(or --system-map {name}={name} to import them as a system of their own, "
                "with placeholder reports)",
            )
        return name

    def check_system_map(self) -> None:
        """Every ``--system-map`` name is a results folder or judgements file that was read."""
        unused = sorted(set(self.system_map) - self.mapped)
        if unused:
            raise InputError(
                self.root,
                f"--system-map {unused[0]}=…: no results folder or judgements file is named "
                f"{unused[0]!r}",
                field="system_map",
            )

    # -- RACE --------------------------------------------------------------------------

    def new_run(
        self, run_id: str, where: Where, description: str, params: dict[str, Any]
    ) -> _RunDraft:
        run = _model(JudgeRun, {"id": run_id, "description": description, "params": params}, where)
        draft = _RunDraft(run, where)
        self.runs.append(draft)
        return draft

    def read_race_results(self) -> None:
        base = self.root / "results" / "race"
        found = (
            {p.name: p / "raw_results.jsonl" for p in sorted(base.iterdir()) if p.is_dir()}
            if base.is_dir()
            else {}
        )
        if (self.root / "raw_results.jsonl").is_file():  # one system's results folder
            found[self.root.resolve().name] = self.root / "raw_results.jsonl"
        found = {name: path for name, path in found.items() if path.is_file()}
        for name, system in self.result_systems("RACE results", found).items():
            self.race_results(found[name], system)

    def race_results(self, path: Path, name: str) -> None:
        """One system's stored per-task RACE results, as a ``race_stored`` run."""
        folder = path.parent
        system = self.system(name, (str(path), 0))
        per_report: dict[tuple[str, str], tuple[_ReportDraft, dict[str, float], Where]] = {}
        for where, record in self.records(path):
            if record.get("error") is not None:
                self.note(
                    where,
                    f"task failed in the benchmark run ({record['error']!s:.80}); skipped",
                )
                continue
            task = self.task_of(record, where)
            if task is None:
                continue
            values = _stored_values(record, where)
            report = self.report_for(task, system, where, self.rel(path))
            if (task.ext_id, system) in per_report:
                raise self.repeated(
                    where,
                    task,
                    "a second stored result for",
                    per_report[(task.ext_id, system)][2],
                )
            per_report[(task.ext_id, system)] = (report, values, where)
        params: dict[str, Any] = {"source": self.rel(path)}
        summary = self.read_summary(folder / "race_result.txt")
        if summary:
            params["race_result"] = summary
        run = self.new_run(
            f"{system}:race_stored",
            (str(path), 0),
            f"stored RACE results of {system} ({self.rel(path)})",
            params,
        )
        for report, values, where in per_report.values():
            for key, number in values.items():
                run.judgments.append(
                    (
                        Judgment(
                            run=run.run.id,
                            report=report.ext_id,
                            kind="race_stored",
                            key=key,
                            value=number,
                        ),
                        where,
                    )
                )

    @staticmethod
    def read_summary(path: Path) -> dict[str, float]:
        if not path.is_file():
            return {}
        out: dict[str, float] = {}
        try:
            for line in path.read_text(encoding="utf-8").splitlines():
                name, sep, value = line.partition(":")
                number = _number(value) if sep else None
                if number is not None:
                    out[name.strip()] = number
        except (OSError, UnicodeDecodeError):
            return {}
        return out

    def read_judgements(self) -> None:
        found = {path.stem: path for path in self.jsonl_files(self.root / "judgements")}
        for name, system in self.result_systems("judgements", found).items():
            self.judgements(found[name], system)

    def judgements(self, path: Path, name: str) -> None:
        """One system's per-criterion RACE verdicts, as a ``race_judgements`` run."""
        system = self.system(name, (str(path), 0))
        latest = self.latest_records(path, "a second judgement of", _check_judge_details)
        modes = sorted({str(r.get("mode") or "pairwise") for _, r, _ in latest.values()})
        params: dict[str, Any] = {"source": self.rel(path), "mode": modes}
        run = self.new_run(
            f"{system}:race_judgements",
            (str(path), 0),
            f"per-criterion RACE verdicts of {system} ({self.rel(path)})",
            params,
        )
        unmatched: list[str] = []
        duplicates: list[str] = []
        for task, record, where in latest.values():
            report = self.report_for(task, system, where, self.rel(path))
            if not report.task.criteria:
                self.rubric_from_judge(report.task, record, where)
            self.judge_items(run, report, record, where, unmatched, duplicates)
        self.note_left_out(path, run, params, unmatched, duplicates)

    def rubric_from_judge(self, task: _TaskDraft, record: dict[str, Any], where: Where) -> None:
        """A task without a rubric (results read without data/criteria_data) gets one from the
        judge's items: each criterion as the judge names it, without a weight (RACE then
        weighs a dimension's criteria alike and the dimensions alike)."""
        criteria: list[Criterion] = []
        for dim, items in record["judge_details"].items():
            if not isinstance(items, list):
                continue  # judge_items names the field
            slug = str(dim).replace("/", "_").strip() or "dimension"
            seen: set[str] = set()
            for item in items:
                text = item.get("criterion") if isinstance(item, dict) else None
                if not isinstance(text, str) or not text.strip() or text.strip() in seen:
                    continue
                seen.add(text.strip())
                criteria.append(
                    _model(
                        Criterion,
                        {
                            "id": f"{slug}.{len(seen)}",
                            "framework": "race",
                            "dimension": str(dim),
                            "text": text.strip(),
                            "metadata": {"from": "judge item"},
                        },
                        where,
                        f"judge_details.{dim}",
                    )
                )
        task.criteria = criteria
        self.note(
            where,
            f"task {task.ext_id} has no rubric (no data/criteria_data): its "
            f"{len(criteria)} criteria are the judge's items, without weights",
        )

    def latest_records(
        self,
        path: Path,
        what: str,
        check: Callable[[dict[str, Any], Where], None] | None = None,
    ) -> dict[str, tuple[_TaskDraft, dict[str, Any], Where]]:
        """Each task's record in a per-system file (a task twice is refused), in file order."""
        latest: dict[str, tuple[_TaskDraft, dict[str, Any], Where]] = {}
        for where, record in self.records(path):
            task = self.task_of(record, where)
            if task is None:
                continue
            if check is not None:
                check(record, where)
            if task.ext_id in latest:
                raise self.repeated(where, task, what, latest[task.ext_id][2])
            latest[task.ext_id] = (task, record, where)
        return latest

    def note_left_out(
        self,
        path: Path,
        run: _RunDraft,
        params: dict[str, Any],
        unmatched: list[str],
        duplicates: list[str],
    ) -> None:
        """Judge items not imported go in the run's params and the notes, with why the
        recomputed score may then differ from the reference code's."""
        if unmatched:
            params["unmatched"] = unmatched
            self.note(
                path,
                f"{len(unmatched)} judge item(s) match no criterion and were "
                "not imported (the reference code would weigh them with the "
                "dimension's mean weight)",
            )
        if duplicates:
            params["duplicates"] = duplicates
            self.note(
                path,
                f"{len(duplicates)} judge item(s) repeat a criterion already "
                "scored and were not imported (the reference code counts them twice)",
            )
        if unmatched or duplicates:
            run.run = run.run.model_copy(update={"params": params})

    def judge_items(
        self,
        run: _RunDraft,
        report: _ReportDraft,
        record: dict[str, Any],
        where: Where,
        unmatched: list[str],
        duplicates: list[str],
    ) -> None:
        details: dict[str, Any] = record["judge_details"]
        by_dim: dict[str, list[Criterion]] = {}
        for stored in report.task.criteria:
            by_dim.setdefault(stored.dimension, []).append(stored)
        used: set[str] = set()
        for dim, items in details.items():
            if not isinstance(items, list):
                raise InputError(
                    where[0], "must be a list", line=where[1], field=f"judge_details.{dim}"
                )
            for k, item in enumerate(items):
                at = f"judge_details.{dim}.{k}"
                if not isinstance(item, dict):
                    raise InputError(where[0], "must be an object", line=where[1], field=at)
                text = item.get("criterion")
                label = f"task {report.task.ext_id} {dim}: {str(text)[:80]!r}"
                criterion = (
                    _match(text, by_dim.get(str(dim), []))
                    if isinstance(text, str) and text.strip()
                    else None
                )
                if criterion is None:
                    unmatched.append(label)
                elif criterion.id in used:
                    duplicates.append(label)
                else:
                    used.add(criterion.id)
                    self.judge_item(run, report, criterion, item, where, at)

    def judge_item(
        self,
        run: _RunDraft,
        report: _ReportDraft,
        criterion: Criterion,
        item: dict[str, Any],
        where: Where,
        at: str,
    ) -> None:
        """One judge item's target score, and its reference score when it has one."""
        analysis = item.get("analysis")
        explanation = analysis if isinstance(analysis, str) else ""
        raw = json.dumps(item, ensure_ascii=False)
        for kind, value, key in _score_pairs(item):
            judgment = self.score_judgment(
                run.run.id, report.ext_id, kind, criterion.id, value, where, f"{at}.{key}"
            )
            run.judgments.append(
                (
                    judgment.model_copy(update={"explanation": explanation, "raw": raw}),
                    where,
                )
            )

    @staticmethod
    def score_judgment(
        run: str, report: str, kind: str, criterion: str, value: object, where: Where, fld: str
    ) -> Judgment:
        if value is None:
            return Judgment(
                run=run,
                report=report,
                kind=kind,
                criterion=criterion,
                error="the judge gave no score for this criterion",
            )
        number = _number(value)
        if number is None:
            return Judgment(
                run=run,
                report=report,
                kind=kind,
                criterion=criterion,
                error=f"the judge's score {value!r:.60} is not a number",
            )
        if not 0.0 <= number <= 10.0:
            raise InputError(where[0], f"{number} is outside 0–10", line=where[1], field=fld)
        return Judgment(run=run, report=report, kind=kind, criterion=criterion, value=number)

    # -- FACT --------------------------------------------------------------------------

    def read_fact(self) -> None:
        base = self.root / "results" / "fact"
        found: dict[str, Path] = {}
        for folder in sorted(base.iterdir()) if base.is_dir() else ():
            path = next((folder / s for s in FACT_STAGES if (folder / s).is_file()), None)
            if folder.is_dir() and path is not None:
                found[folder.name] = path
        for name, system in self.result_systems("FACT results", found).items():
            self.fact_stage(found[name], system)

    def fact_stage(self, path: Path, name: str) -> None:
        """One system's latest FACT stage: verdicts from ``validated``, statements only from
        an earlier stage."""
        system = self.system(name, (str(path), 0))
        stage = path.stem
        latest = self.latest_records(path, "a second FACT record of")
        self.has_fact = self.has_fact or bool(latest)
        run: _RunDraft | None = None
        if stage == "validated":
            run = self.new_run(
                f"{system}:fact",
                (str(path), 0),
                f"FACT support verdicts of {system} ({self.rel(path)})",
                {"source": self.rel(path), "stage": stage},
            )
        elif latest:
            self.note(
                path, f"no validated.jsonl: statements from the {stage} stage, without verdicts"
            )
        for task, record, where in latest.values():
            self.fact_record(system, task, record, where, path, run)

    def fact_record(
        self,
        system: str,
        task: _TaskDraft,
        record: dict[str, Any],
        where: Where,
        path: Path,
        run: _RunDraft | None,
    ) -> None:
        article = self.text(record, "article", where, required=False)
        report = self.report_for(task, system, where, self.rel(path), article)
        report.metadata["fact_stage"] = path.stem
        if article is not None and article != report.markdown:
            report.metadata["fact_article_differs"] = True
        citations = record.get("citations")
        if isinstance(citations, str):
            report.metadata["fact_citations"] = citations
            self.note(where, f"task {task.ext_id}: citations {citations!r:.60}; no statements")
            return
        if citations is not None and not isinstance(citations, list):
            raise InputError(
                where[0],
                "must be a list (or 'extraction failed')",
                line=where[1],
                field="citations",
            )
        ref_idx = self.extracted_refs(citations or [], where)
        deduped = record.get("citations_deduped")
        if deduped is not None:
            report.claims.extend(self.deduped_claims(report, deduped, ref_idx, where, run))
        else:
            report.claims.extend(self.extracted_claims(ref_idx, where))

    def deduped_claims(
        self,
        report: _ReportDraft,
        deduped: object,
        ref_idx: dict[tuple[str, str], list[object]],
        where: Where,
        run: _RunDraft | None,
    ) -> list[Claim]:
        """The deduplicated stage's statements, URL by URL, with their pages and verdicts."""
        if not isinstance(deduped, dict):
            raise InputError(
                where[0],
                "must be an object of url -> entry",
                line=where[1],
                field="citations_deduped",
            )
        claims: list[Claim] = []
        for i, (url, entry) in enumerate(deduped.items()):
            claims.extend(self.fact_url(report, i, str(url), entry, ref_idx, where, run))
        return claims

    def extracted_claims(
        self, ref_idx: dict[tuple[str, str], list[object]], where: Where
    ) -> list[Claim]:
        """The extraction stage's distinct (statement, URL) pairs, numbered in order."""
        pairs: dict[tuple[str, str], None] = {}
        for fact, url in ref_idx:
            pairs.setdefault((fact, url), None)
        return [
            self.claim(f"{n}", fact, url, ref_idx, where, f"citations.{n - 1}")
            for n, (fact, url) in enumerate(pairs, 1)
        ]

    def extracted_refs(
        self, citations: list[Any], where: Where
    ) -> dict[tuple[str, str], list[object]]:
        """(statement, url) -> its ref_idx values, from the extraction stage's list."""
        out: dict[tuple[str, str], list[object]] = {}
        for k, item in enumerate(citations):
            if not isinstance(item, dict):
                raise InputError(
                    where[0],
                    "must be an object {fact, ref_idx, url}",
                    line=where[1],
                    field=f"citations.{k}",
                )
            fact, url = item.get("fact"), item.get("url")
            if not isinstance(fact, str) or not isinstance(url, str):
                raise InputError(
                    where[0], "needs string 'fact' and 'url'", line=where[1], field=f"citations.{k}"
                )
            if not fact.strip():
                self.note(where, f"citations.{k}: empty statement skipped")
                continue
            refs = out.setdefault((fact, url), [])
            if item.get("ref_idx") is not None and item["ref_idx"] not in refs:
                refs.append(item["ref_idx"])
        return out

    def claim(
        self,
        claim_id: str,
        fact: str,
        url: str,
        ref_idx: dict[tuple[str, str], list[object]],
        where: Where,
        at: str,
    ) -> Claim:
        raw = ref_idx.get((fact, url), [])
        numeric = [
            int(r) if isinstance(r, int) else int(str(r).strip())
            for r in raw
            if (isinstance(r, int) and not isinstance(r, bool) and r >= 0)
            or (isinstance(r, str) and r.strip().isdigit())
        ]
        data: dict[str, Any] = {"id": claim_id, "fact": fact, "url": url}
        if numeric:
            data["citations"] = sorted(set(numeric))
        if raw:
            data["metadata"] = {"ref_idx": raw}
        return _model(Claim, data, where, at)

    def fact_url(
        self,
        report: _ReportDraft,
        i: int,
        url: str,
        entry: object,
        ref_idx: dict[tuple[str, str], list[object]],
        where: Where,
        run: _RunDraft | None,
    ) -> list[Claim]:
        at = f"citations_deduped.{url}"
        if not isinstance(entry, dict):
            raise InputError(where[0], "must be an object {facts, ...}", line=where[1], field=at)
        facts = entry.get("facts")
        if not isinstance(facts, list):
            raise InputError(where[0], "missing or not a list", line=where[1], field=f"{at}.facts")
        claims = self.url_claims(i, url, facts, ref_idx, where, at)
        digest = self.url_source(url, entry.get("url_content"), len(facts), where)
        if run is not None:
            self.url_verdicts(run, report, claims, entry, len(facts), digest, where, at)
        return claims

    def url_claims(
        self,
        i: int,
        url: str,
        facts: list[Any],
        ref_idx: dict[tuple[str, str], list[object]],
        where: Where,
        at: str,
    ) -> list[Claim]:
        claims: list[Claim] = []
        for j, fact in enumerate(facts):
            if not isinstance(fact, str):
                raise InputError(
                    where[0], "must be a string", line=where[1], field=f"{at}.facts.{j}"
                )
            if not fact.strip():
                self.note(where, f"{at}.facts.{j}: empty statement skipped")
                continue
            claims.append(
                self.claim(f"{i + 1}.{j + 1}", fact, url, ref_idx, where, f"{at}.facts.{j}")
            )
        return claims

    def url_source(self, url: str, content: object, n_facts: int, where: Where) -> str | None:
        """The page the statements were validated against, as a source; its sha256."""
        if not isinstance(content, str):
            return None
        if url.strip():
            return self.add_source(url, content, where)
        self.note(
            where,
            f"{n_facts} statement(s) cite an empty URL (page: "
            f"{content!r:.60}); imported with url '' and no source",
        )
        return None

    def url_verdicts(
        self,
        run: _RunDraft,
        report: _ReportDraft,
        claims: list[Claim],
        entry: dict[str, Any],
        n_facts: int,
        digest: str | None,
        where: Where,
        at: str,
    ) -> None:
        """One ``fact`` verdict per statement: the judge's result, else an error saying why
        there is none."""
        error = entry.get("validate_error")
        results = entry.get("validate_res")
        by_pos: dict[int, tuple[str, dict[str, Any]]] = {}
        if error is None and isinstance(results, list):
            by_pos = self.verdicts(results, n_facts, where, at)
        elif error is None and results is not None:
            raise InputError(where[0], "must be a list", line=where[1], field=f"{at}.validate_res")
        for claim in claims:
            position = int(claim.id.rsplit(".", 1)[1]) - 1
            value, problem, raw = _fact_verdict(error, results, by_pos.get(position))
            run.judgments.append(
                (
                    Judgment(
                        run=run.run.id,
                        report=report.ext_id,
                        kind="fact",
                        claim=claim.id,
                        value=value,
                        error=problem,
                        raw=raw,
                        source_sha256=digest,
                    ),
                    where,
                )
            )

    def verdicts(
        self, results: list[Any], n_facts: int, where: Where, at: str
    ) -> dict[int, tuple[str, dict[str, Any]]]:
        """validate_res entries by statement position (idx 0- or 1-based, else list order)."""
        out: dict[int, tuple[str, dict[str, Any]]] = {}
        for k, (position, item) in enumerate(zip(_positions(results), results, strict=True)):
            fld = f"{at}.validate_res.{k}"
            if not isinstance(item, dict):
                raise InputError(
                    where[0], "must be an object {idx, result}", line=where[1], field=fld
                )
            try:
                code = SUPPORT.normalize(item.get("result"))
            except ScaleError as exc:
                raise InputError(where[0], str(exc), line=where[1], field=f"{fld}.result") from exc
            if not 0 <= position < n_facts or position in out:
                self.note(
                    where,
                    f"{fld}: idx {item.get('idx')!r} names no statement (or repeats); ignored",
                )
                continue
            out[position] = (code, item)
        return out

    def add_source(self, url: str, content: str, where: Where) -> str | None:
        """Record the fetched page once per URL; the sha256 of what this verdict saw."""
        failed = content.startswith(SCRAPE_FAILED)
        digest = None if failed else hashlib.sha256(content.encode("utf-8")).hexdigest()
        known = self.sources.get(url)
        if known is not None:
            if known[2] != digest:
                self.source_conflicts += 1
            return digest
        if failed:
            source = Source(url=url, error=content)
        else:
            first = content.lstrip().split("\n", 1)[0].strip()
            source = Source(url=url, text=content, title=first if len(first) <= 300 else "")
        self.sources[url] = (source, where, digest)
        return digest

    # -- assembly ----------------------------------------------------------------------

    def read(self) -> Bundle:
        root = self.root
        if root.is_file():
            self.read_results_file(root)
            self.check_system_map()
            return self.bundle()
        if not root.is_dir():
            raise InputError(root, "no such folder")
        if not self.has_results_or_data():
            raise InputError(
                root,
                "not a DeepResearch Bench repository: no data/prompt_data, "
                "data/criteria_data, results/race, results/fact or judgements folder and no "
                "raw_results.jsonl (a fork's results alone import too: give the "
                "raw_results.jsonl or judgements file itself, or the folder holding it)",
            )
        self.read_tasks()
        self.read_criteria()
        self.read_reports()
        self.file_systems = {system for _, system in self.reports}
        self.read_fact()
        self.read_race_results()
        self.read_judgements()
        self.check_system_map()
        return self.bundle()

    def has_results_or_data(self) -> bool:
        root = self.root
        folders = ("data/prompt_data", "data/criteria_data", "results/race", "results/fact")
        return (
            any((root / f).is_dir() for f in folders)
            or (root / "judgements").is_dir()
            or (root / "raw_results.jsonl").is_file()
        )

    def read_results_file(self, path: Path) -> None:
        """One system's results without the repository: a ``raw_results.jsonl`` (stored RACE
        scores; the system is its folder's name) or a judgements file (per-criterion verdicts,
        either layout; the system is the file's name). Tasks come from the records' prompts,
        rubrics from the judge's items."""
        self.only = path
        first = next(iter(read_jsonl(path)), None)
        if first is None:
            raise InputError(path, "no records")
        record = first[1]
        if isinstance(record, dict) and "judge_details" in record:
            found = {path.stem: path}
            for system in self.result_systems("judgements", found).values():
                self.judgements(path, system)
            return
        if isinstance(record, dict) and any(key in record for key in STORED_KEYS):
            name = path.parent.resolve().name if path.stem == "raw_results" else path.stem
            for _, system in self.result_systems("RACE results", {name: path}).items():
                self.race_results(path, system)
            return
        raise InputError(
            path,
            "neither a raw_results.jsonl (comprehensiveness, insight, …, overall_score) nor "
            "a judgements file (judge_details): a DeepResearch Bench repository is a folder",
            line=first[0],
        )

    def bundle(self) -> Bundle:
        if self.source_conflicts:
            self.notes.append(
                f"{self.source_conflicts} URL(s) were fetched with different "
                "content for different reports; the first page is stored"
            )
        name = self.root.resolve().name
        if self.only is not None:  # one results file: the suite is named after its system
            name = next(iter(self.systems), self.only.stem)
        suite = _model(
            Suite,
            {
                "id": self.suite_id or f"drb-{name}",
                "name": f"DeepResearch Bench: {name}",
                "frameworks": self.frameworks(),
                "source": str(self.root),
                "description": self.description(name),
            },
            (str(self.root), 0),
            "suite",
        )
        bundle = Bundle(suite=suite)
        self.add_tasks(bundle)
        self.add_systems(bundle)
        self.add_reports(bundle)
        loc = bundle.locations
        for source, where, _ in self.sources.values():
            loc[("source", len(bundle.sources))] = where
            bundle.sources.append(source)
        for run in self.runs:
            loc[("run", len(bundle.runs))] = run.where
            bundle.runs.append(run.run)
        for run in self.runs:
            for judgment, where in run.judgments:
                loc[("judgment", len(bundle.judgments))] = where
                bundle.judgments.append(judgment)
        return bundle

    def frameworks(self) -> list[str]:
        """RACE when there are rubrics or RACE verdicts, FACT when there are FACT records;
        RACE when there is neither."""
        has_race = any(t.criteria for t in self.tasks) or any(
            j.kind.startswith("race") for r in self.runs for j, _ in r.judgments
        )
        return [
            name for name, present in (("race", has_race), ("fact", self.has_fact)) if present
        ] or ["race"]

    def description(self, name: str) -> str:
        description = f"Imported from the DeepResearch Bench layout at {name}."
        if self.notes:
            shown = self.notes[:MAX_NOTES]
            more = len(self.notes) - len(shown)
            description += "\nImport notes:\n" + "\n".join(f"- {n}" for n in shown)
            if more:
                description += f"\n- … and {more} more"
        return description

    def add_tasks(self, bundle: Bundle) -> None:
        for task in self.tasks:
            bundle.locations[("task", len(bundle.tasks))] = task.where
            bundle.tasks.append(
                _model(
                    Task,
                    {
                        "id": task.ext_id,
                        "prompt": task.prompt,
                        "language": task.language,
                        "domain": task.domain,
                        "metadata": task.metadata,
                        "criteria": task.criteria,
                    },
                    task.where,
                )
            )

    def add_systems(self, bundle: Bundle) -> None:
        for system, where in self.systems.items():
            bundle.locations[("system", len(bundle.systems))] = where
            bundle.systems.append(
                _model(
                    System,
                    {
                        "id": system,
                        "name": system,
                        "is_reference": system == REFERENCE_SYSTEM,
                    },
                    where,
                    "system",
                )
            )

    def add_reports(self, bundle: Bundle) -> None:
        for draft in self.reports.values():
            bundle.locations[("report", len(bundle.reports))] = draft.where
            bundle.reports.append(
                _model(
                    Report,
                    {
                        "id": draft.ext_id,
                        "task": draft.task.ext_id,
                        "system": draft.system,
                        "markdown": draft.markdown,
                        "cleaned": draft.cleaned,
                        "metadata": draft.metadata,
                        "claims": draft.claims,
                    },
                    draft.where,
                )
            )


def _criterion(item: object, dim: str, cid: str, where: Where, at: str) -> Criterion:
    """One rubric criterion; fields the format does not name go to its metadata."""
    if not isinstance(item, dict):
        raise InputError(where[0], "must be an object", line=where[1], field=at)
    text = item.get("criterion")
    if not isinstance(text, str) or not text.strip():
        raise InputError(where[0], "missing or empty", line=where[1], field=f"{at}.criterion")
    explanation = item.get("explanation", "")
    if not isinstance(explanation, str):
        raise InputError(where[0], "must be a string", line=where[1], field=f"{at}.explanation")
    extra = {
        key: value
        for key, value in item.items()
        if key not in ("criterion", "explanation", "weight")
    }
    return _model(
        Criterion,
        {
            "id": cid,
            "framework": "race",
            "dimension": dim,
            "text": text,
            "explanation": explanation,
            "weight": _weight(item, where, at),
            "metadata": extra,
        },
        where,
        at,
    )


def _weight(item: dict[str, Any], where: Where, at: str) -> float | None:
    """A criterion's stored weight: a JSON number (a numeric string is refused), or None."""
    if item.get("weight") is None:
        return None
    weight = _number(item["weight"]) if not isinstance(item["weight"], str) else None
    if weight is None:
        raise InputError(
            where[0],
            f"must be a number, found {item['weight']!r}",
            line=where[1],
            field=f"{at}.weight",
        )
    return weight


def _stored_values(record: dict[str, Any], where: Where) -> dict[str, float]:
    """A stored result's scores by key, each a JSON number in 0–1."""
    values: dict[str, float] = {}
    for key in STORED_KEYS:
        if record.get(key) is None:
            continue
        number = _number(record[key]) if not isinstance(record[key], str) else None
        if number is None:
            raise InputError(
                where[0],
                f"must be a number, found {record[key]!r}",
                line=where[1],
                field=key,
            )
        if not 0.0 <= number <= 1.0:
            raise InputError(where[0], f"{number} is outside 0–1", line=where[1], field=key)
        values[key] = number
    return values


def _check_judge_details(record: dict[str, Any], where: Where) -> None:
    if not isinstance(record.get("judge_details"), dict):
        raise InputError(
            where[0],
            "missing or not an object of dimension -> items",
            line=where[1],
            field="judge_details",
        )


def _score_pairs(item: dict[str, Any]) -> list[tuple[str, object, str]]:
    """(kind, score, field) of a judge item: the target's score (``article_1_score``, else
    ``target_score``) and, in pairwise mode, the reference's."""
    target = item.get("article_1_score")
    if target is None:
        target = item.get("target_score")
    pairs: list[tuple[str, object, str]] = [
        (
            "race_target",
            target,
            "article_1_score" if "article_1_score" in item else "target_score",
        )
    ]
    if "article_2_score" in item:
        pairs.append(("race_reference", item["article_2_score"], "article_2_score"))
    return pairs


def _positions(results: list[Any]) -> list[int]:
    """Statement positions of validate_res entries: their idx when every entry has an integer
    one (1-based unless a 0 is among them), else list order."""
    indices = [r.get("idx") if isinstance(r, dict) else None for r in results]
    ints = [i for i in indices if isinstance(i, int) and not isinstance(i, bool)]
    if len(ints) == len(indices) and ints:
        base = 0 if 0 in ints else 1
        return [i - base for i in ints]
    return list(range(len(results)))


def _fact_verdict(
    error: object, results: object, found: tuple[str, dict[str, Any]] | None
) -> tuple[str | None, str | None, str]:
    """(value, error, raw) of one statement's verdict."""
    if error is not None:
        return None, str(error)[:2000] or "validation failed", ""
    if results is None:
        return None, "this URL was not validated", ""
    if found is not None:
        value, item = found
        return value, None, json.dumps(item, ensure_ascii=False)
    return None, "the judge returned no verdict for this statement", ""


def _parts(name: str) -> frozenset[str]:
    """A system name's parts, for matching result names to report files."""
    return frozenset(p for p in re.split(r"[-_.\s]+", name.lower()) if p)


def _match(text: str, criteria: list[Criterion]) -> Criterion | None:
    """The reference code's fuzzy match: exact, case-insensitive, then substring either way."""
    wanted = text.strip()
    for c in criteria:
        if c.text.strip() == wanted:
            return c
    lower = wanted.lower()
    for c in criteria:
        if c.text.strip().lower() == lower:
            return c
    for c in criteria:
        key = c.text.strip().lower()
        if lower in key or key in lower:
            return c
    return None


read = read_drb
"""The format registry's entry point (``gavel import PATH --format drb``)."""
