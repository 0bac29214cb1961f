"""LiveDRBench's judge: claim matching and key grading as the reference evaluator
(``src/evals/*.py``) does it, one task's prediction at a time, with its published prompts.

The grader follows the category (:func:`.ground_truth.scoring_mode`):

- dictionaries (NovelDS, Flights): a dictionary answer part is graded key by key against the
  ground truth's (the ``dict`` prompt: 0–3 per key). A list part is matched prediction by
  prediction, in order, against the ground-truth items not matched yet (the
  ``list_of_dicts_match`` prompt, on the primary keys and the task's evaluation note; an empty
  answer is no match); a matched prediction is then graded key by key against the item it
  matched, and that item leaves the list (the code's ``find_and_remove_dict``).
- strings (Entities; PriorArt by reference title): each predicted string, in order, is looked
  for in the ground-truth strings not matched yet (the ``str_search`` prompt of the category);
  a match leaves the list.
- SciFacts: each (prediction, ground-truth entry) pair is compared per field (``paper_title``,
  and ``material`` for Materials) with the ``EM`` prompt, against each accepted variant of the
  field: an exactly equal string matches without a call (as the code short-circuits); the
  model's reply counts as a match only if it is exactly ``true`` in any case. The code stops at
  the first variant that matches; here every pair is asked, which gives the same matches.

What the grader finds becomes evaluation records of the reference code's shape, read into
verdicts exactly as an import of such records is (:func:`.format.judgments_from_records`):
``cf1_match`` on every (prediction, ground-truth claim) pair of a list part, ``cf1_key`` on
every graded key. The matching is sequential (each match changes the list the next prediction
is matched against), so a batch run needs one round per prediction of a list part.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, RootModel, field_validator

from reviewer.errors import InputError
from reviewer.frameworks.livedrbench.format import judgments_from_records
from reviewer.frameworks.livedrbench.ground_truth import (
    FRAMEWORK_NAME,
    META_KEY,
    flatten,
    part_shape,
    scoring_mode,
    title_of,
    variants,
)
from reviewer.frameworks.livedrbench.judge_templates import (
    DICT,
    EM,
    LIST_MATCH,
    STR_SEARCH_ENTITIES,
    STR_SEARCH_PRIOR_ART,
)
from reviewer.judge.client import CallResult
from reviewer.judge.fetch import Page, PageSource
from reviewer.judge.pipeline import (
    Completer,
    JudgeJob,
    PipelineOptions,
    PipelineSpec,
    PlannedCall,
    ReportOutcome,
    StepError,
    tokens,
)
from reviewer.judge.prompting import Fences, Prompt
from reviewer.judge.replies import TextReply

PROMPT_VERSION = "livedrbench-eval-1"
T = TypeVar("T", bound=BaseModel)
STEPS = ("grade",)


class KeyGrades(RootModel[dict[str, int]]):
    """The ``dict`` prompt's answer: each key graded 0, 1, 2 or 3."""

    @field_validator("root")
    @classmethod
    def _grades(cls, value: dict[str, int]) -> dict[str, int]:
        bad = {k: v for k, v in value.items() if v not in (0, 1, 2, 3)}
        if bad:
            raise ValueError(f"grades must be 0, 1, 2 or 3: {bad}")
        return value


class Matched(RootModel[dict[str, Any]]):
    """The ``list_of_dicts_match`` answer: the matched ground-truth dictionary, or {}."""


class StrMatch(BaseModel):
    """The ``str_search`` answer: ``{"match": <string>}``, or {} for no match."""

    model_config = ConfigDict(extra="ignore")

    match: str | None = None

    @field_validator("match", mode="before")
    @classmethod
    def _text(cls, value: Any) -> Any:
        return None if value is None else str(value)


class ExactMatch(TextReply):
    """The ``EM`` answer: a match exactly when the reply, lower-cased, is ``true`` (the code
    compares ``content.lower() == "true"``; any other reply is no match, never an error)."""

    match: bool

    @classmethod
    def parse_text(cls, text: str) -> ExactMatch:
        return cls(match=text.lower() == "true")


def _dumps(value: object) -> str:
    return json.dumps(value)


def dict_prompt(gt: object, pred: object) -> Prompt:
    gt_text, pred_text = _dumps(gt), _dumps(pred)
    fences = Fences.over(gt_text, pred_text)
    return Prompt(
        "grade",
        fences.rule,
        DICT.format(
            dict_gt=fences.block("ground_truth", gt_text),
            dict_pred=fences.block("model_output", pred_text),
        ),
    )


def match_prompt(gt: list[Any], pred: object, primary: list[str], note: object) -> Prompt:
    gt_text, pred_text = _dumps(gt), _dumps(pred)
    fences = Fences.over(gt_text, pred_text)
    return Prompt(
        "match",
        fences.rule,
        LIST_MATCH.format(
            list_gt=fences.block("ground_truth_list", gt_text),
            dict_pred=fences.block("model_output", pred_text),
            primary_keys=_dumps(primary),
            note=_dumps(note),
        ),
    )


def str_prompt(gt: list[str], pred: str, prior_art: bool) -> Prompt:
    gt_text, pred_text = _dumps(gt), _dumps(pred)
    fences = Fences.over(gt_text, pred_text)
    template = STR_SEARCH_PRIOR_ART if prior_art else STR_SEARCH_ENTITIES
    return Prompt(
        "match",
        fences.rule,
        template.format(
            gt_list=fences.block("ground_truth_list", gt_text),
            pred_str=fences.block("predicted_string", pred_text),
        ),
    )


def em_prompt(actual: str, pred: str) -> Prompt:
    fences = Fences.over(actual, pred)
    user = (
        f"Golden Answer: {fences.block('golden_answer', actual)}\n"
        f"Predicted Answer: {fences.block('predicted_answer', pred)}"
    )
    return Prompt("em", f"{EM}\n\n{fences.rule}", user)


def _same_keys(value: object, other: Mapping[str, Any], keys: list[str]) -> bool:
    return isinstance(value, dict) and all(value.get(k) == other.get(k) for k in keys)


class LiveDrPipeline:
    def __init__(
        self, client: Completer, pages: PageSource | None, run_id: str, options: PipelineOptions
    ) -> None:
        self.client = client
        self.run_id = run_id
        self.options = options

    async def judge(self, job: JudgeJob) -> ReportOutcome:
        out = ReportOutcome(job.report.id)
        info = job.task.metadata.get(META_KEY)
        preds = (job.report.metadata.get(META_KEY) or {}).get("preds")
        if (
            not isinstance(info, dict)
            or not isinstance(preds, list)
            or "grade" not in self.options.steps
        ):
            return out
        records = await self._records(info, preds, out)
        if out.deferred:
            return out
        try:
            judgments, notes = judgments_from_records(
                job.task.metadata, job.report.metadata, self.run_id, job.report.id, records
            )
        except InputError as exc:
            out.errors.append(StepError(job.report.id, "grade", "records", str(exc)))
            return out
        out.judgments.extend(judgments)
        out.errors.extend(StepError(job.report.id, "grade", "records", n) for n in notes)
        return out

    async def _records(
        self, info: dict[str, Any], preds: list[Any], out: ReportOutcome
    ) -> list[dict[str, Any]]:
        """Each answer part graded as the category's grader does, as evaluation records; the
        grading stops at the first part whose calls wait in a batch."""
        parts = list(info.get("ground_truths") or [])
        category = str(info.get("category", ""))
        mode = scoring_mode(category, info.get("mode"))
        eval_info = info.get("eval_info") if isinstance(info.get("eval_info"), dict) else {}
        assert isinstance(eval_info, dict)
        records: list[dict[str, Any]] = []
        for p, (gt, pred) in enumerate(zip(parts, preds, strict=False)):
            if mode == "scifacts":
                await self._scifacts(p, gt, pred, records, out)
            elif mode == "strings":
                await self._strings(p, gt, pred, category == "prior-art", records, out)
            else:
                await self._dicts(p, gt, pred, eval_info, records, out)
            if out.deferred:
                break
        return records

    async def _dicts(
        self,
        part: int,
        gt: Any,
        pred: Any,
        eval_info: dict[str, Any],
        records: list[dict[str, Any]],
        out: ReportOutcome,
    ) -> None:
        if part_shape(gt) == "dict":
            await self._dict_part(part, gt, pred, records, out)
        elif isinstance(gt, list) and isinstance(pred, list):
            await self._dict_list(part, gt, pred, eval_info, records, out)

    async def _dict_part(
        self, part: int, gt: Any, pred: Any, records: list[dict[str, Any]], out: ReportOutcome
    ) -> None:
        """A dictionary answer graded key by key against the ground truth's."""
        if not isinstance(pred, dict) or not pred:
            return  # nothing predicted for this part: nothing to grade
        grades = await self.client.complete(dict_prompt(gt, pred), KeyGrades)
        value = _answer(out, grades, "grade", f"part {part + 1}")
        if value is not None:
            records.append({"type": "dict", "part": part, "eval_output": value.root})

    async def _dict_list(
        self,
        part: int,
        gt: list[Any],
        pred: list[Any],
        eval_info: dict[str, Any],
        records: list[dict[str, Any]],
        out: ReportOutcome,
    ) -> None:
        """Each predicted dictionary, in order, matched against the items not matched yet."""
        remaining = list(gt)
        primary = [str(k) for k in eval_info.get("primary_keys", [])]
        note = eval_info.get("evaluation_note", {})
        for i, row in enumerate(pred):
            record = await self._match_dict(part, i, row, remaining, primary, note, out)
            if out.deferred:
                return
            if record is None:
                continue
            if record["extracted_gt"] is not None:
                remaining = _remove(remaining, record["extracted_gt"], primary)
            records.append(record)

    async def _match_dict(
        self,
        part: int,
        i: int,
        row: Any,
        remaining: list[Any],
        primary: list[str],
        note: Any,
        out: ReportOutcome,
    ) -> dict[str, Any] | None:
        """One prediction's match, graded key by key against the item it matched."""
        subject = f"part {part + 1} item {i + 1}"
        result = await self.client.complete(match_prompt(remaining, row, primary, note), Matched)
        matched = _answer(out, result, "match", subject)
        if matched is None:
            return None
        record = {"type": "list_of_dicts_match", "part": part, "pred_index": i}
        if not matched.root:
            return {**record, "extracted_gt": None, "eval_output": None}
        graded = await self.client.complete(dict_prompt(matched.root, row), KeyGrades)
        grades = _answer(out, graded, "grade", subject)
        if grades is None:
            return None
        return {**record, "extracted_gt": matched.root, "eval_output": grades.root}

    async def _strings(
        self,
        part: int,
        gt: Any,
        pred: Any,
        prior_art: bool,
        records: list[dict[str, Any]],
        out: ReportOutcome,
    ) -> None:
        if not isinstance(gt, list) or not isinstance(pred, list):
            return
        remaining = [title_of(g) for g in gt]
        for i, row in enumerate(pred):
            prompt = str_prompt(remaining, title_of(row), prior_art)
            result = await self.client.complete(prompt, StrMatch)
            value = _answer(out, result, "match", f"part {part + 1} item {i + 1}")
            if result.deferred:
                return
            if value is None:
                continue
            found = value.match
            records.append(
                {"type": "str_search", "part": part, "pred_index": i, "extracted_gt": found}
            )
            if found is not None:
                _drop_title(remaining, found)

    async def _scifacts(
        self, part: int, gt: Any, pred: Any, records: list[dict[str, Any]], out: ReportOutcome
    ) -> None:
        if not isinstance(gt, list) or not isinstance(pred, list):
            return
        fields = _em_fields(gt)
        for i, row in enumerate(pred):
            if not isinstance(row, dict):
                continue
            for j, entry in enumerate(gt):
                if not isinstance(entry, dict):
                    continue
                for name in fields:
                    matched = await self._field_match(row, entry, name, out)
                    if out.deferred:
                        return
                    records.append(
                        {
                            "type": "em",
                            "part": part,
                            "pred_index": i,
                            "gt_index": j,
                            "field": name,
                            "match": matched,
                        }
                    )

    async def _field_match(
        self, row: dict[str, Any], entry: dict[str, Any], name: str, out: ReportOutcome
    ) -> bool:
        """Does the predicted field match any accepted variant of the entry's?"""
        predicted = str(row.get(name, "") or "")
        if not predicted:
            return False
        matched = False
        for actual in variants(entry.get(name)):
            hit = await self._em(str(actual), predicted, out)
            if out.deferred:
                return False
            if hit:
                matched = True
        return matched

    async def _em(self, actual: str, pred: str, out: ReportOutcome) -> bool:
        if pred.lower().strip() == actual.lower().strip():
            return True
        result = await self.client.complete(em_prompt(actual, pred), ExactMatch)
        if result.deferred:
            out.deferred = True
            return False
        return bool(result.value is not None and result.value.match)

    def plan(
        self, job: JudgeJob, known_pages: Mapping[str, Page] | None = None
    ) -> list[PlannedCall]:
        info = job.task.metadata.get(META_KEY)
        preds = (job.report.metadata.get(META_KEY) or {}).get("preds")
        if not isinstance(info, dict) or not isinstance(preds, list):
            return []
        parts = list(info.get("ground_truths") or [])
        mode = scoring_mode(str(info.get("category", "")), info.get("mode"))
        gt_chars = len(_dumps(parts))
        return [
            call
            for gt, pred in zip(parts, preds, strict=False)
            for call in self._part_calls(job.report.id, mode, gt, pred, gt_chars)
        ]

    def _part_calls(
        self, report: str, mode: str, gt: Any, pred: Any, gt_chars: int
    ) -> list[PlannedCall]:
        """The calls grading one answer part makes."""
        n_pred = len(flatten([pred])) if pred else 0
        if mode == "scifacts":
            n_gt = len(gt) if isinstance(gt, list) else 0
            return [PlannedCall(report, "em", 60, 2, None) for _ in range(n_pred * n_gt)]
        if part_shape(gt) == "dict":
            if not pred:
                return []
            prompt = dict_prompt(gt, pred)
            return [
                PlannedCall(
                    report, "grade", tokens(prompt.chars), 40, self.client.is_cached(prompt)
                )
            ]
        calls = []
        for _ in range(n_pred):
            # Each match depends on the ones before it: the cache cannot be asked.
            calls.append(PlannedCall(report, "match", tokens(gt_chars + 400), 60, None))
            if mode == "dicts":
                calls.append(PlannedCall(report, "grade", 300, 40, None))
        return calls


def _answer(out: ReportOutcome, result: CallResult[T], step: str, subject: str) -> T | None:
    """A call's value; None when it has none: it waits in a batch (the report is deferred)
    or it failed (a step error)."""
    if result.deferred:
        out.deferred = True
        return None
    if result.value is None:
        out.errors.append(StepError(out.report, step, subject, result.error or "no reply"))
    return result.value


def _drop_title(remaining: list[str], found: str) -> None:
    """A matched string leaves the list (the first equal one, ignoring case)."""
    lowered = found.lower()
    for k, g in enumerate(remaining):
        if g.lower() == lowered:
            del remaining[k]
            break


def _em_fields(gt: list[Any]) -> tuple[str, ...]:
    """The fields compared: the paper title, and the material when the truth has one."""
    if any(isinstance(g, dict) and "material" in g for g in gt):
        return ("material", "paper_title")
    return ("paper_title",)


def _remove(items: list[Any], found: Mapping[str, Any], primary: list[str]) -> list[Any]:
    """``find_and_remove_dict``: drop the first item whose primary-key values equal ``found``'s
    (as the code compares; a dictionary in no item leaves the list as it was)."""
    for k, item in enumerate(items):
        if _same_keys(item, found, primary):
            return items[:k] + items[k + 1 :]
    return items


SPEC = PipelineSpec(
    framework=FRAMEWORK_NAME,
    prompt_version=PROMPT_VERSION,
    steps=STEPS,
    build=lambda client, pages, run_id, options: LiveDrPipeline(client, pages, run_id, options),
    sources="none",
    description="LiveDRBench: claim matching and key grading as the reference evaluator does "
    "(published dict, list match, string search and EM prompts)",
)
