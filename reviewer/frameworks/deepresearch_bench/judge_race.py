"""RACE's judge: per-criterion 0–10 scores of the target report and the reference report, side
by side, as ``deepresearch_bench_race.py`` asks for them.

One call per report: the published merged scoring template (English or Chinese by the task's
language) with the task, the target article, the reference article (the task's report by the
reference system) and the task's criteria as ``{dimension: [{criterion, explanation}]}``
JSON without weights, as the reference code's ``format_criteria_list`` writes it. The reply
must hold all four dimensions (the code retries otherwise; here that is the repair turn); each
item is matched to a criterion as the code does (exact text, case-insensitive, substring), and
gives ``race_target`` (``article_1_score``) and ``race_reference`` (``article_2_score``) on that
criterion, the ``analysis`` as explanation. A task without a reference report is scored with
the published point-wise template (``target_score`` only), which RACE scores in the tickr fork's
``no_reference`` mode.

Articles are the citation-stripped text the benchmark scores (``cleaned``); a report imported
without it is first cleaned with the published cleaning prompt (step ``clean``), as the
reference code cleans raw articles before scoring.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from reviewer.frameworks.deepresearch_bench.format import _match
from reviewer.frameworks.deepresearch_bench.judge_templates import (
    CLEAN_EN,
    CLEAN_ZH,
    RACE_POINTWISE_EN,
    RACE_POINTWISE_ZH,
    RACE_SCORE_EN,
    RACE_SCORE_ZH,
)
from reviewer.frameworks.deepresearch_bench.race import DIMENSIONS, NAME
from reviewer.judge.fetch import Page, PageSource
from reviewer.judge.pipeline import (
    Completer,
    JudgeJob,
    PipelineOptions,
    PipelineSpec,
    PlannedCall,
    ReportOutcome,
    StepError,
    raw_of,
    tokens,
)
from reviewer.judge.prompting import Fences, Prompt
from reviewer.judge.replies import TextReply
from reviewer.models import Criterion, Judgment, Report

PROMPT_VERSION = "drb-race-1"
"""Gavel's version of the published RACE templates (bump on any change: it keys the cache)."""

STEPS = ("race",)
OUTPUT_TOKENS_PER_CRITERION = 120


class RaceItem(BaseModel):
    model_config = ConfigDict(extra="ignore")

    criterion: str
    analysis: str = ""
    article_1_score: float | None = None
    article_2_score: float | None = None
    target_score: float | None = None

    @field_validator("criterion", "analysis", mode="before")
    @classmethod
    def _text(cls, value: Any) -> Any:
        if isinstance(value, list):  # the template shows [Text content ...] in brackets
            return " ".join(str(v) for v in value)
        return value

    @field_validator("article_1_score", "article_2_score", "target_score", mode="before")
    @classmethod
    def _number(cls, value: Any) -> Any:
        if isinstance(value, list) and len(value) == 1:
            value = value[0]
        if isinstance(value, str):
            return float(value.strip())
        return value


class RaceReply(BaseModel):
    """The reply's four dimensions, each a list of criterion items (the code requires all)."""

    model_config = ConfigDict(extra="ignore")

    dimensions: dict[str, list[RaceItem]] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _wrap(cls, data: Any) -> Any:
        if isinstance(data, dict) and "dimensions" not in data:
            data = {"dimensions": {k: v for k, v in data.items() if isinstance(v, list)}}
        return data

    @model_validator(mode="after")
    def _all_dimensions(self) -> RaceReply:
        missing = [d for d in DIMENSIONS if d not in self.dimensions]
        if missing:
            raise ValueError(f"Missing expected dimensions: {missing}")
        return self


class CleanReply(TextReply):
    """The cleaned article, as the model returns it (the code takes the reply text whole)."""

    text: str

    REPAIR_HINT = "Return the cleaned article in full, without any additional comments."

    @classmethod
    def parse_text(cls, text: str) -> CleanReply:
        cleaned = text.strip()
        if not cleaned:
            raise ValueError("the cleaned article is empty")
        return cls(text=cleaned)


def _zh(job: JudgeJob) -> bool:
    return job.task.language.lower().startswith("zh")


def race_criteria(job: JudgeJob) -> list[Criterion]:
    return [c for c in job.task.criteria if c.framework == NAME]


def criteria_list(criteria: list[Criterion]) -> str:
    """``format_criteria_list``: {dimension: [{criterion, explanation}]}, no weights."""
    grouped: dict[str, list[dict[str, str]]] = {}
    for c in criteria:
        grouped.setdefault(c.dimension, []).append(
            {"criterion": c.text, "explanation": c.explanation}
        )
    return json.dumps(grouped, ensure_ascii=False, indent=2)


def clean_prompt(article: str, zh: bool) -> Prompt:
    fences = Fences.over(article)
    template = CLEAN_ZH if zh else CLEAN_EN
    return Prompt("clean", fences.rule, template.format(article=fences.block("article", article)))


def score_prompt(
    task_prompt: str, target: str, reference: str | None, criteria: str, zh: bool
) -> Prompt:
    if reference is None:
        fences = Fences.over(target)
        template = RACE_POINTWISE_ZH if zh else RACE_POINTWISE_EN
        user = template.format(
            task_prompt=task_prompt,
            criteria_list=criteria,
            article=fences.block("target_article", target),
        )
    else:
        fences = Fences.over(target, reference)
        template = RACE_SCORE_ZH if zh else RACE_SCORE_EN
        user = template.format(
            task_prompt=task_prompt,
            criteria_list=criteria,
            article_1=fences.block("article_1", target),
            article_2=fences.block("article_2", reference),
        )
    return Prompt("race", fences.rule, user)


class RacePipeline:
    def __init__(
        self, client: Completer, pages: PageSource | None, run_id: str, options: PipelineOptions
    ) -> None:
        self.client = client
        self.run_id = run_id
        self.options = options

    async def _article(self, report: Report, zh: bool, out: ReportOutcome) -> str | None:
        if report.cleaned is not None:
            return report.cleaned
        result = await self.client.complete(clean_prompt(report.markdown, zh), CleanReply)
        if result.deferred:
            out.deferred = True
            return None
        if result.value is None:
            out.errors.append(StepError(out.report, "clean", report.id, result.error or "no reply"))
            return None
        return result.value.text

    async def _articles(
        self, job: JudgeJob, criteria: list[Criterion], zh: bool, out: ReportOutcome
    ) -> tuple[str, str | None] | None:
        """The target's and the reference's text as the judge sees them (None when a cleaning
        call was deferred or failed: then every criterion fails)."""
        target = await self._article(job.report, zh, out)
        reference = (
            await self._article(job.reference, zh, out) if job.reference is not None else None
        )
        if out.deferred or target is None or (job.reference is not None and reference is None):
            if not out.deferred:
                self._fail(job, out, criteria, "the article could not be cleaned", "")
            return None
        return target, reference

    async def judge(self, job: JudgeJob) -> ReportOutcome:
        out = ReportOutcome(job.report.id)
        criteria = race_criteria(job)
        if not criteria or "race" not in self.options.steps:
            return out
        zh = _zh(job)
        articles = await self._articles(job, criteria, zh, out)
        if articles is None:
            return out
        target, reference = articles
        prompt = score_prompt(job.task.prompt, target, reference, criteria_list(criteria), zh)
        result = await self.client.complete(prompt, RaceReply)
        if result.deferred:
            out.deferred = True
            return out
        if result.value is None:
            self._fail(job, out, criteria, result.error or "no reply", result.content)
            return out
        scored = self._scored(job, criteria, result.value, out)
        paired = reference is not None
        for c in criteria:
            item = scored.get(c.id)
            if item is None:
                self._fail(
                    job,
                    out,
                    [c],
                    "the reply has no score for this criterion",
                    result.content,
                    paired,
                )
                continue
            out.judgments += [
                self._score(job, c, kind, value, item) for kind, value in _score_pairs(item, paired)
            ]
        return out

    def _scored(
        self, job: JudgeJob, criteria: list[Criterion], reply: RaceReply, out: ReportOutcome
    ) -> dict[str, RaceItem]:
        """The reply's items by the criterion each matches; an item that matches none, or one
        already matched, is reported and not used."""
        by_dim: dict[str, list[Criterion]] = {}
        for c in criteria:
            by_dim.setdefault(c.dimension, []).append(c)
        scored: dict[str, RaceItem] = {}
        for dim, items in reply.dimensions.items():
            for given in items:
                found = _match(given.criterion, by_dim.get(dim, []))
                if found is None or found.id in scored:
                    out.errors.append(
                        StepError(
                            job.report.id,
                            "race",
                            f"{dim}: {given.criterion[:80]}",
                            "the reply's item matches no criterion (or repeats one); not used",
                        )
                    )
                    continue
                scored[found.id] = given
        return scored

    def _score(
        self, job: JudgeJob, c: Criterion, kind: str, value: float | None, item: RaceItem
    ) -> Judgment:
        """A score on the 0–10 scale is a verdict; anything else an error verdict."""
        if value is None or not 0.0 <= value <= 10.0:
            return Judgment(
                run=self.run_id,
                report=job.report.id,
                kind=kind,
                criterion=c.id,
                error=f"the judge's score {value!r} is not a number from 0 to 10",
                raw=raw_of(item),
            )
        return Judgment(
            run=self.run_id,
            report=job.report.id,
            kind=kind,
            criterion=c.id,
            value=value,
            explanation=item.analysis,
            raw=raw_of(item),
        )

    def _fail(
        self,
        job: JudgeJob,
        out: ReportOutcome,
        criteria: list[Criterion],
        error: str,
        raw: str,
        paired: bool | None = None,
    ) -> None:
        paired = job.reference is not None if paired is None else paired
        kinds = ("race_target", "race_reference") if paired else ("race_target",)
        for c in criteria:
            for kind in kinds:
                out.judgments.append(
                    Judgment(
                        run=self.run_id,
                        report=job.report.id,
                        kind=kind,
                        criterion=c.id,
                        error=error,
                        raw=raw,
                    )
                )

    def plan(
        self, job: JudgeJob, known_pages: Mapping[str, Page] | None = None
    ) -> list[PlannedCall]:
        criteria = race_criteria(job)
        if not criteria or "race" not in self.options.steps:
            return []
        zh = _zh(job)
        reports = [job.report] + ([job.reference] if job.reference is not None else [])
        calls = self._clean_calls(job, reports, zh)
        exact = all(r.cleaned is not None for r in reports)
        target = job.report.cleaned or job.report.markdown
        reference = (
            None if job.reference is None else (job.reference.cleaned or job.reference.markdown)
        )
        prompt = score_prompt(job.task.prompt, target, reference, criteria_list(criteria), zh)
        calls.append(
            PlannedCall(
                job.report.id,
                "race",
                tokens(prompt.chars),
                OUTPUT_TOKENS_PER_CRITERION * len(criteria),
                self.client.is_cached(prompt) if exact else None,
            )
        )
        return calls

    def _clean_calls(self, job: JudgeJob, reports: list[Report], zh: bool) -> list[PlannedCall]:
        """A cleaning call for each article that has no cleaned text yet."""
        calls: list[PlannedCall] = []
        for report in reports:
            if report.cleaned is None:
                prompt = clean_prompt(report.markdown, zh)
                calls.append(
                    PlannedCall(
                        job.report.id,
                        "clean",
                        tokens(prompt.chars),
                        tokens(len(report.markdown)),
                        self.client.is_cached(prompt),
                    )
                )
        return calls


def _score_pairs(item: RaceItem, paired: bool) -> list[tuple[str, float | None]]:
    """(kind, score) of a reply item: both articles' scores when a reference was judged, else
    the target's (``target_score``, else ``article_1_score``)."""
    if paired:
        return [("race_target", item.article_1_score), ("race_reference", item.article_2_score)]
    target = item.target_score if item.target_score is not None else item.article_1_score
    return [("race_target", target)]


SPEC = PipelineSpec(
    framework=NAME,
    prompt_version=PROMPT_VERSION,
    steps=STEPS,
    build=lambda client, pages, run_id, options: RacePipeline(client, pages, run_id, options),
    needs_reference=True,
    sources="none",
    description="DeepResearch Bench RACE: per-criterion 0-10 scores of target and reference "
    "report (published merged scoring prompt)",
)
