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
from typing import Any

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
            if not isinstance(pred, dict) or not pred:
                return  # nothing predicted for this part: nothing to grade
            grades = await self.client.complete(dict_prompt(gt, pred), KeyGrades)
            if grades.deferred:
                out.deferred = True
                return
            if grades.value is None:
                out.errors.append(
                    StepError(out.report, "grade", f"part {part + 1}", grades.error or "no reply")
                )
                return
            records.append({"type": "dict", "part": part, "eval_output": grades.value.root})
            return
        if not isinstance(gt, list) or not isinstance(pred, list):
            return
        remaining = list(gt)
        primary = [str(k) for k in eval_info.get("primary_keys", [])]
        note = eval_info.get("evaluation_note", {})
        for i, row in enumerate(pred):
            result = await self.client.complete(
                match_prompt(remaining, row, primary, note), Matched
            )
            if result.deferred:
                out.deferred = True
                return
            if result.value is None:
                out.errors.append(
                    StepError(
                        out.report,
                        "match",
                        f"part {part + 1} item {i + 1}",
                        result.error or "no reply",
                    )
                )
                continue
            extracted = result.value.root
            if not extracted:
                records.append(
                    {
                        "type": "list_of_dicts_match",
                        "part": part,
                        "pred_index": i,
                        "extracted_gt": None,
                        "eval_output": None,
                    }
                )
                continue
            graded = await self.client.complete(dict_prompt(extracted, row), KeyGrades)
            if graded.deferred:
                out.deferred = True
                return
            if graded.value is None:
                out.errors.append(
                    StepError(
                        out.report,
                        "grade",
                        f"part {part + 1} item {i + 1}",
                        graded.error or "no reply",
                    )
                )
                continue
            remaining = _remove(remaining, extracted, primary)
            records.append(
                {
                    "type": "list_of_dicts_match",
                    "part": part,
                    "pred_index": i,
                    "extracted_gt": extracted,
                    "eval_output": graded.value.root,
                }
            )

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
            text = title_of(row)
            result = await self.client.complete(str_prompt(remaining, text, prior_art), StrMatch)
            if result.deferred:
                out.deferred = True
                return
            if result.value is None:
                out.errors.append(
                    StepError(
                        out.report,
                        "match",
                        f"part {part + 1} item {i + 1}",
                        result.error or "no reply",
                    )
                )
                continue
            found = result.value.match
            records.append(
                {"type": "str_search", "part": part, "pred_index": i, "extracted_gt": found}
            )
            if found is not None:
                lowered = found.lower()
                for k, g in enumerate(remaining):
                    if g.lower() == lowered:
                        del remaining[k]
                        break

    async def _scifacts(
        self, part: int, gt: Any, pred: Any, records: list[dict[str, Any]], out: ReportOutcome
    ) -> None:
        if not isinstance(gt, list) or not isinstance(pred, list):
            return
        fields = (
            ("material", "paper_title")
            if any(isinstance(g, dict) and "material" in g for g in gt)
            else ("paper_title",)
        )
        for i, row in enumerate(pred):
            if not isinstance(row, dict):
                continue
            for j, entry in enumerate(gt):
                if not isinstance(entry, dict):
                    continue
                for name in fields:
                    predicted = str(row.get(name, "") or "")
                    matched = False
                    if predicted:
                        for actual in variants(entry.get(name)):
                            hit = await self._em(str(actual), predicted, out)
                            if out.deferred:
                                return
                            if hit:
                                matched = True
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
        calls: list[PlannedCall] = []
        for gt, pred in zip(parts, preds, strict=False):
            n_pred = len(flatten([pred])) if pred else 0
            if mode == "scifacts":
                n_gt = len(gt) if isinstance(gt, list) else 0
                for _ in range(n_pred * n_gt):
                    calls.append(PlannedCall(job.report.id, "em", 60, 2, None))
            elif part_shape(gt) == "dict":
                if pred:
                    prompt = dict_prompt(gt, pred)
                    calls.append(
                        PlannedCall(
                            job.report.id,
                            "grade",
                            tokens(prompt.chars),
                            40,
                            self.client.is_cached(prompt),
                        )
                    )
            else:
                for _ in range(n_pred):
                    # Each match depends on the ones before it: the cache cannot be asked.
                    calls.append(
                        PlannedCall(job.report.id, "match", tokens(gt_chars + 400), 60, None)
                    )
                    if mode == "dicts":
                        calls.append(PlannedCall(job.report.id, "grade", 300, 40, None))
        return calls


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
