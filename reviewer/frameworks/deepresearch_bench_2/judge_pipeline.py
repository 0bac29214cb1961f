"""DeepResearch Bench II's judge, as its evaluation script runs it on a text report: the
task's rubric items in the order info_recall, analysis, presentation, in batches of 50, each
batch one call with the published prompt (the report, cut at 150,000 characters, and the task,
the batch's items and the blocked reference as JSON); the reply's ``results`` matched back to
the items by their exact text.

Where Gavel differs, and why:

- The report is fenced (:mod:`reviewer.judge.prompting`) and the fence rule sent as a system
  message: report text is material to evaluate, never instructions to the judge.
- The script sends a whole batch again when a reply misses an item (up to ``MAX_RETRIES``);
  here the client asks once more when a reply is unreadable, and an item the reply leaves out
  (or scores off the scale) becomes a verdict without a value saying so, for a reviewer to
  decide or a later run to fill.
- A rubric text repeated in a batch is sent as often as the rubric has it, as the script does;
  every copy gets the reply's verdict for that text (the default ``repeated_items = once``
  counts it once, as the script's dictionary does).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from reviewer.frameworks.deepresearch_bench_2.judge_templates import (
    CHUNK_SIZE,
    MAX_PAPER_CHARS,
    PROMPT,
)
from reviewer.frameworks.deepresearch_bench_2.scoring import DIMENSIONS, ITEM_SCALE, KIND, NAME
from reviewer.judge.fetch import Page, PageSource
from reviewer.judge.pipeline import (
    Completer,
    JudgeJob,
    PipelineOptions,
    PipelineSpec,
    PlannedCall,
    ReportOutcome,
    chunks,
    clip,
    raw_of,
    tokens,
)
from reviewer.judge.prompting import Fences, Prompt
from reviewer.models import Criterion, Judgment
from reviewer.scales import ScaleError

PROMPT_VERSION = "drb2-run_evaluation-9d365ed"
STEP = "rubric"
OUTPUT_TOKENS_PER_ITEM = 80
"""What a dry run assumes one item's score, reason and evidence cost in output."""


class ItemResult(BaseModel):
    """One entry of the reply's ``results``."""

    model_config = ConfigDict(extra="ignore")

    rubric_item: str
    score: Any = None
    reason: str = ""
    evidence: str = ""

    @field_validator("reason", "evidence", mode="before")
    @classmethod
    def _text(cls, value: Any) -> Any:
        if value is None:
            return ""
        if isinstance(value, list):
            return "\n".join(str(v) for v in value)
        return value if isinstance(value, str) else str(value)


class BatchReply(BaseModel):
    """The reply the prompt asks for: ``{"results": [...]}``."""

    model_config = ConfigDict(extra="ignore")

    results: list[ItemResult] = Field(min_length=1)


def rubric_items(job: JudgeJob) -> list[Criterion]:
    """The task's rubric items in the script's order: by dimension, then as listed."""
    mine = [c for c in job.task.criteria if c.framework == NAME and c.dimension in DIMENSIONS]
    return sorted(mine, key=lambda c: DIMENSIONS.index(c.dimension))


def batch_prompt(job: JudgeJob, items: list[Criterion]) -> Prompt:
    """One call: the report (cut as the script cuts it) and the batch as the script's JSON."""
    report = job.report.markdown[:MAX_PAPER_CHARS]
    metadata = job.task.metadata
    rubric = {
        "task": metadata.get("judge_task") or job.task.prompt,
        "rubric_items": [c.text for c in items],
        "blocked": metadata.get("blocked") or {},
    }
    rubric_json = json.dumps(rubric, ensure_ascii=False, indent=2)
    fences = Fences.over(report, rubric_json)
    return Prompt(
        STEP,
        fences.rule,
        PROMPT.format(paper=fences.block("passage", report), rubric=rubric_json),
        meta={"items": [c.id for c in items]},
    )


def _value(score: Any) -> tuple[str | None, str | None]:
    """The score as a scale code, or the reason it is none."""
    if isinstance(score, bool) or not isinstance(score, int | float | str):
        return None, f"score {score!r} is not 1, 0 or -1"
    try:
        return ITEM_SCALE.normalize(score), None
    except ScaleError:
        return None, f"score {score!r} is not 1, 0 or -1"


class Drb2Pipeline:
    def __init__(
        self, client: Completer, pages: PageSource | None, run_id: str, options: PipelineOptions
    ) -> None:
        self.client = client
        self.run_id = run_id
        self.options = options

    def _batches(self, job: JudgeJob) -> list[tuple[list[Criterion], Prompt]]:
        if STEP not in self.options.steps:
            return []
        return [
            (items, batch_prompt(job, items)) for items in chunks(rubric_items(job), CHUNK_SIZE)
        ]

    async def judge(self, job: JudgeJob) -> ReportOutcome:
        out = ReportOutcome(job.report.id)
        for items, prompt in self._batches(job):
            result = await self.client.complete(prompt, BatchReply)
            if result.deferred:
                out.deferred = True
                continue
            if result.value is None:
                out.judgments += [
                    self._failed(job, c, result.error or "no usable reply", result.content)
                    for c in items
                ]
                continue
            out.judgments += self._read(job, items, result.value)
        return out

    def _failed(self, job: JudgeJob, criterion: Criterion, error: str, raw: str) -> Judgment:
        return Judgment(
            run=self.run_id,
            report=job.report.id,
            kind=KIND,
            criterion=criterion.id,
            error=error,
            raw=clip(raw),
        )

    def _read(self, job: JudgeJob, items: list[Criterion], reply: BatchReply) -> list[Judgment]:
        """Each item's verdict from the first result with its exact text (then stripped)."""
        by_text: dict[str, ItemResult] = {}
        for entry in reply.results:
            by_text.setdefault(entry.rubric_item, entry)
            by_text.setdefault(entry.rubric_item.strip(), entry)
        out = []
        for criterion in items:
            found = by_text.get(criterion.text) or by_text.get(criterion.text.strip())
            if found is None:
                out.append(self._failed(job, criterion, "the reply has no result for it", ""))
                continue
            value, error = _value(found.score)
            out.append(
                Judgment(
                    run=self.run_id,
                    report=job.report.id,
                    kind=KIND,
                    criterion=criterion.id,
                    value=value,
                    error=error,
                    explanation=clip(found.reason),
                    evidence=clip(found.evidence),
                    raw=raw_of(found),
                )
            )
        return out

    def plan(
        self, job: JudgeJob, known_pages: Mapping[str, Page] | None = None
    ) -> list[PlannedCall]:
        return [
            PlannedCall(
                job.report.id,
                STEP,
                tokens(prompt.chars),
                OUTPUT_TOKENS_PER_ITEM * len(items),
                self.client.is_cached(prompt),
            )
            for items, prompt in self._batches(job)
        ]


SPEC = PipelineSpec(
    framework=NAME,
    prompt_version=PROMPT_VERSION,
    steps=(STEP,),
    build=lambda client, pages, run_id, options: Drb2Pipeline(client, pages, run_id, options),
    sources="none",
    description="DeepResearch Bench II: every rubric item 1 / 0 / -1 with reason and evidence, "
    "in batches of 50 (the published run_evaluation.py prompt)",
)
