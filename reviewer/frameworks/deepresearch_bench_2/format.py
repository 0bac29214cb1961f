"""DeepResearch Bench II from its repository layout, as one bundle.

Layout read (``gavel import PATH --format drb2``; PATH may also be the tasks file alone)::

    tasks_and_rubrics.jsonl          one task a line: {id, idx, language, theme, description,
                                     prompt, content: {task, rubric: {info_recall, analysis,
                                     presentation: [text, ...]}, blocked: {title, authors, urls}}}
    report/<model>/idx-<n>.<ext>     model outputs, one folder per model (Markdown, text, HTML)
    *.jsonl, results/*.jsonl         judge outputs of the evaluation script, one judge run a
                                     file: {model, idx, result: {task, scores: {dimension:
                                     {rubric text: {score, reason, evidence}}}, ...}}

Ids: a task is ``idx-<n>`` (the file names and judge outputs use ``idx``; the release's own
``id`` is kept in the task's metadata with the theme's description, the text the judge is given
as the task, and the ``blocked`` reference); a rubric item is ``ir-001``, ``an-001`` or
``pr-001`` by its place in its dimension; a report is ``<model>:idx-<n>``.

Decisions where the files leave a choice (each leaves a line in the suite description):

- A judge item is matched to the first rubric item of its dimension with the same text (the
  script keys verdicts by the text), then by the text with surrounding space removed. An item
  that matches nothing is not imported: the script's aggregation would count it, so the note
  says the recomputed score may differ.
- A score that is not a number (or missing) becomes a verdict without a value, its error saying
  so: the script leaves such an item out of every share, as Gavel's default does. A number
  other than 1, 0 or -1 is bad input.
- A result without scores (``{"error": ...}``: every batch of the task failed) gives every
  rubric item a verdict without a value carrying that error.
- Repeated lines for one (model, idx) in one file: the last is kept. The script averages the
  repeated lines' shares instead.
- A judge output for a (model, idx) without a model output file gets an empty placeholder
  report (metadata ``placeholder``), so system means are over the same reports as the script's.
- PDF, Word and image outputs are refused, naming the file: convert them to Markdown or text
  first (the judge must see the same text the reviewer reads).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reviewer.errors import InputError
from reviewer.formats.jsonl import Where, loads, read_jsonl
from reviewer.frameworks.deepresearch_bench_2.scoring import ITEM_SCALE, KIND
from reviewer.models import (
    Bundle,
    Criterion,
    JudgeRun,
    Judgment,
    Report,
    Suite,
    System,
    Task,
    id_problem,
)
from reviewer.scales import ScaleError

TASKS_FILE = "tasks_and_rubrics.jsonl"
REPORT_FOLDER = "report"
RESULT_FOLDER = "results"
PREFIXES = {"info_recall": "ir", "analysis": "an", "presentation": "pr"}
TEXT_SUFFIXES = (".md", ".markdown", ".txt", ".html", ".htm")
REFUSED_SUFFIXES = {
    ".pdf": "PDF",
    ".docx": "Word",
    ".doc": "Word",
    ".png": "image",
    ".jpg": "image",
    ".jpeg": "image",
    ".webp": "image",
    ".gif": "image",
    ".bmp": "image",
    ".tiff": "image",
}
_OUTPUT_NAME = re.compile(r"^idx-(\d+)(\..+)?$", re.IGNORECASE)
MAX_NOTES = 200


def task_id(idx: int) -> str:
    return f"idx-{idx}"


def report_id(model: str, idx: int) -> str:
    return f"{model}:{task_id(idx)}"


@dataclass(slots=True)
class _Task:
    idx: int
    task: Task
    where: Where
    by_text: dict[str, dict[str, str]] = field(default_factory=dict)
    """dimension -> rubric text -> the first item's id with that text."""


@dataclass(slots=True)
class _Output:
    model: str
    idx: int
    markdown: str
    where: Where
    placeholder: bool = False


@dataclass(slots=True)
class _Run:
    run: JudgeRun
    where: Where
    lines: dict[tuple[str, int], tuple[dict[str, Any], Where]] = field(default_factory=dict)


def read(path: Path, suite_id: str | None = None) -> Bundle:
    """Parse a DeepResearch Bench II checkout (or its tasks file) into a bundle.

    Raises :class:`InputError` naming the file, line and field of anything malformed.
    """
    return _Reader(Path(path), suite_id).read()


def _err(where: Where, message: str, fld: str | None = None) -> InputError:
    return InputError(where[0], message, line=where[1], field=fld)


def _index(value: object, where: Where, fld: str) -> int:
    """A task index: an integer, or a string of one (the script reads it with ``int``)."""
    if isinstance(value, bool):
        raise _err(where, "expected a task index (an integer)", fld)
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    raise _err(where, f"expected a task index (an integer), found {value!r}", fld)


def _text(value: object, where: Where, fld: str, required: bool = True) -> str:
    if value is None and not required:
        return ""
    if not isinstance(value, str) or (required and not value.strip()):
        raise _err(where, "expected non-empty text" if required else "expected text", fld)
    return value


def _blocked(value: object, where: Where) -> dict[str, Any] | None:
    """The reference a task blocks (title, authors, urls), checked; None when it has none."""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise _err(where, "expected an object {title, authors, urls}", "content.blocked")
    title = value.get("title", "")
    if not isinstance(title, str):
        raise _err(where, "expected text", "content.blocked.title")
    out: dict[str, Any] = {"title": title}
    for key in ("authors", "urls"):
        items = value.get(key, [])
        if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
            raise _err(where, "expected a list of text", f"content.blocked.{key}")
        out[key] = list(items)
    return out


def _criteria(rubric: object, where: Where) -> list[Criterion]:
    if not isinstance(rubric, dict):
        raise _err(where, "expected an object of dimensions", "content.rubric")
    unknown = sorted(set(rubric) - set(PREFIXES))
    if unknown:
        raise _err(where, f"unknown dimension {unknown[0]!r}", "content.rubric")
    out: list[Criterion] = []
    for dimension, prefix in PREFIXES.items():
        items = rubric.get(dimension, [])
        if not isinstance(items, list):
            raise _err(where, "expected a list of rubric items", f"content.rubric.{dimension}")
        for n, item in enumerate(items, 1):
            text = _text(item, where, f"content.rubric.{dimension}[{n - 1}]")
            out.append(
                Criterion(id=f"{prefix}-{n:03d}", framework="drb2", dimension=dimension, text=text)
            )
    return out


def _task(record: dict[str, Any], where: Where) -> tuple[int, Task]:
    idx = _index(record.get("idx"), where, "idx")
    content = record.get("content")
    if not isinstance(content, dict):
        raise _err(where, "expected an object {task, rubric, blocked}", "content")
    metadata: dict[str, Any] = {
        "drb2_id": _text(record.get("id"), where, "id", required=False),
        "description": _text(record.get("description"), where, "description", required=False),
        "judge_task": _text(content.get("task"), where, "content.task", required=False),
        "blocked": _blocked(content.get("blocked"), where),
    }
    task = Task(
        id=task_id(idx),
        prompt=_text(record.get("prompt"), where, "prompt"),
        language=_text(record.get("language"), where, "language", required=False) or "en",
        domain=_text(record.get("theme"), where, "theme", required=False),
        metadata=metadata,
        criteria=_criteria(content.get("rubric"), where),
    )
    return idx, task


def _evidence(value: object, where: Where, fld: str) -> str:
    """Evidence as text: the script asks for sentences, and models sometimes give a list."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return "\n".join(value)
    raise _err(where, "expected text (or a list of sentences)", fld)


class _Reader:
    def __init__(self, path: Path, suite_id: str | None) -> None:
        self.path = path
        self.root = path if path.is_dir() else path.parent
        self.suite_id = suite_id
        self.tasks: dict[int, _Task] = {}
        self.outputs: dict[tuple[str, int], _Output] = {}
        self.runs: list[_Run] = []
        self.notes: list[str] = []

    def rel(self, path: Path) -> str:
        try:
            return str(path.relative_to(self.root))
        except ValueError:
            return str(path)

    def read(self) -> Bundle:
        if not self.path.exists():
            raise InputError(self.path, "no such file or folder")
        tasks_file = self.path if self.path.is_file() else self.path / TASKS_FILE
        if not tasks_file.is_file():
            raise InputError(
                self.path, f"not a DeepResearch Bench II checkout: no {TASKS_FILE} in it"
            )
        self.read_tasks(tasks_file)
        if self.path.is_dir():
            self.read_outputs(self.path / REPORT_FOLDER)
            for result in self.result_files():
                self.read_results(result)
        return self.bundle()

    def read_tasks(self, path: Path) -> None:
        for number, record in read_jsonl(path):
            where: Where = (str(path), number)
            idx, task = _task(record, where)
            if idx in self.tasks:
                raise _err(where, f"task idx {idx} repeats line {self.tasks[idx].where[1]}", "idx")
            draft = _Task(idx, task, where)
            for criterion in task.criteria:
                draft.by_text.setdefault(criterion.dimension, {}).setdefault(
                    criterion.text, criterion.id
                )
            self.tasks[idx] = draft
        if not self.tasks:
            raise InputError(path, "no tasks in the file")

    def result_files(self) -> list[Path]:
        files = [p for p in sorted(self.path.glob("*.jsonl")) if p.name != TASKS_FILE]
        folder = self.path / RESULT_FOLDER
        if folder.is_dir():
            files += sorted(folder.glob("*.jsonl"))
        return files

    def read_outputs(self, folder: Path) -> None:
        if not folder.is_dir():
            return
        for model_dir in sorted(p for p in folder.iterdir() if p.is_dir()):
            problem = id_problem(model_dir.name)
            if problem:
                raise InputError(model_dir, f"a model folder name cannot be an id: {problem}")
            for path in sorted(p for p in model_dir.iterdir() if p.is_file()):
                self.read_output(model_dir.name, path)

    def read_output(self, model: str, path: Path) -> None:
        match = _OUTPUT_NAME.match(path.name)
        if match is None:
            self.notes.append(f"{self.rel(path)}: not named idx-<n>.<ext>, not read")
            return
        idx = int(match.group(1))
        suffix = (match.group(2) or "").lower()
        if suffix in REFUSED_SUFFIXES:
            raise InputError(
                path,
                f"{REFUSED_SUFFIXES[suffix]} model outputs are not read: convert it to Markdown "
                "or text (idx-<n>.md) so the judge and the reviewer see the same text",
            )
        if suffix not in TEXT_SUFFIXES:
            raise InputError(
                path, f"unknown output format {suffix or '(none)'!r}: use .md, .txt or .html"
            )
        if idx not in self.tasks:
            self.notes.append(f"{self.rel(path)}: no task idx {idx} in {TASKS_FILE}, not read")
            return
        if (model, idx) in self.outputs:
            first = self.outputs[(model, idx)].where[0]
            raise InputError(path, f"a second output for idx {idx} of {model} (first: {first})")
        try:
            markdown = path.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            raise InputError(path, f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None
        self.outputs[(model, idx)] = _Output(model, idx, markdown, (str(path), None))

    def read_results(self, path: Path) -> None:
        stem = path.stem
        problem = id_problem(stem)
        if problem:
            raise InputError(path, f"a judge output file's name cannot be a run id: {problem}")
        run = _Run(
            JudgeRun(
                id=f"drb2-{stem}",
                prompt_version="drb2-release",
                description=f"DeepResearch Bench II judge output {self.rel(path)}",
                params={"file": self.rel(path)},
            ),
            (str(path), None),
        )
        repeated = 0
        for number, record in read_jsonl(path):
            where: Where = (str(path), number)
            model = _text(record.get("model"), where, "model")
            problem = id_problem(model)
            if problem:
                raise _err(where, f"a model name cannot be an id: {problem}", "model")
            idx = _index(record.get("idx"), where, "idx")
            if idx not in self.tasks:
                self.notes.append(f"{self.rel(path)}:{number}: no task idx {idx}, not read")
                continue
            repeated += (model, idx) in run.lines
            run.lines[(model, idx)] = (record, where)
        if repeated:
            self.notes.append(
                f"{self.rel(path)}: {repeated} repeated (model, idx) line(s), the last kept "
                "(the aggregation script averages repeated lines)"
            )
        self.runs.append(run)

    def judgments(self, run: _Run) -> list[tuple[Judgment, Where]]:
        out: list[tuple[Judgment, Where]] = []
        for (model, idx), (record, where) in run.lines.items():
            if (model, idx) not in self.outputs:
                self.outputs[(model, idx)] = _Output(model, idx, "", where, placeholder=True)
            out += self.line_judgments(run.run.id, model, self.tasks[idx], record, where)
        return out

    def line_judgments(
        self, run: str, model: str, task: _Task, record: dict[str, Any], where: Where
    ) -> list[tuple[Judgment, Where]]:
        result = _result(record, where)
        report = report_id(model, task.idx)
        scores = result.get("scores")
        if scores is None:
            error = str(result.get("error") or "the judge output has no scores")
            return [
                (Judgment(run=run, report=report, kind=KIND, criterion=c.id, error=error), where)
                for c in task.task.criteria
            ]
        out: list[tuple[Judgment, Where]] = []
        for dimension, items in _dimensions(scores, where):
            for text, item in items.items():
                judgment = self.item(run, report, task, dimension, text, item, where)
                if judgment is not None:
                    out.append((judgment, where))
        return out

    def item(
        self,
        run: str,
        report: str,
        task: _Task,
        dimension: str,
        text: str,
        item: object,
        where: Where,
    ) -> Judgment | None:
        fld = f"result.scores.{dimension}"
        known = task.by_text.get(dimension, {})
        criterion = known.get(text) or known.get(text.strip())
        if criterion is None:
            self.notes.append(
                f"{where[0]}:{where[1]}: a {dimension} item of {report} matches no rubric item "
                f"of its task, not imported (the script would count it): {text[:80]!r}"
            )
            return None
        if not isinstance(item, dict):
            raise _err(where, "expected an object {score, reason, evidence}", fld)
        value, error = _score(item.get("score"), where, fld + ".score")
        return Judgment(
            run=run,
            report=report,
            kind=KIND,
            criterion=criterion,
            value=value,
            error=error,
            explanation=_text(item.get("reason"), where, fld + ".reason", required=False),
            evidence=_evidence(item.get("evidence"), where, fld + ".evidence"),
            raw=json.dumps(item, ensure_ascii=False),
        )

    def bundle(self) -> Bundle:
        name = self.root.resolve().name
        runs = [(run, self.judgments(run)) for run in self.runs]
        bundle = Bundle(
            suite=Suite(
                id=self.suite_id or f"drb2-{name}",
                name=f"DeepResearch Bench II: {name}",
                frameworks=["drb2"],
                source=str(self.path),
                description=self.description(name),
            )
        )
        loc = bundle.locations
        for draft in self.tasks.values():
            loc[("task", len(bundle.tasks))] = draft.where
            bundle.tasks.append(draft.task)
        models = sorted({model for model, _ in self.outputs})
        bundle.systems = [System(id=model, name=model) for model in models]
        for (model, idx), output in sorted(self.outputs.items()):
            loc[("report", len(bundle.reports))] = output.where
            bundle.reports.append(
                Report(
                    id=report_id(model, idx),
                    task=task_id(idx),
                    system=model,
                    markdown=output.markdown,
                    metadata={"placeholder": True} if output.placeholder else {},
                )
            )
        for run, judgments in runs:
            loc[("run", len(bundle.runs))] = run.where
            bundle.runs.append(run.run)
            for judgment, where in judgments:
                loc[("judgment", len(bundle.judgments))] = where
                bundle.judgments.append(judgment)
        return bundle

    def description(self, name: str) -> str:
        text = f"Imported from the DeepResearch Bench II layout at {name}."
        if self.notes:
            shown = self.notes[:MAX_NOTES]
            text += "\nImport notes:\n" + "\n".join(f"- {n}" for n in shown)
            if len(self.notes) > len(shown):
                text += f"\n- … and {len(self.notes) - len(shown)} more"
        return text


def _result(record: dict[str, Any], where: Where) -> dict[str, Any]:
    """A judge output line's result: an object, or an object written as a JSON string (the
    script's aggregation reads both; older outputs call it ``new_content``)."""
    result = record.get("result", record.get("new_content"))
    if isinstance(result, str):
        result = loads(result, where[0], where[1], "result")
    if not isinstance(result, dict):
        raise _err(where, "expected an object {task, scores, ...}", "result")
    return result


def _dimensions(scores: object, where: Where) -> list[tuple[str, dict[str, Any]]]:
    """The result's scores by dimension, checked: known dimensions of objects."""
    if not isinstance(scores, dict):
        raise _err(where, "expected an object of dimensions", "result.scores")
    out = []
    for dimension, items in scores.items():
        if dimension not in PREFIXES:
            raise _err(where, f"unknown dimension {dimension!r}", "result.scores")
        if not isinstance(items, dict):
            raise _err(where, "expected an object {rubric text: score}", "result.scores")
        out.append((dimension, items))
    return out


def _score(value: object, where: Where, fld: str) -> tuple[int | None, str | None]:
    """A judge score as a value, or no value with the reason (the script skips what is not a
    number); a number off the scale is bad input."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None, f"score is not a number: {value!r}"
    try:
        ITEM_SCALE.normalize(value)
    except ScaleError:
        raise _err(where, f"score {value!r} is not 1, 0 or -1", fld) from None
    return int(value), None
