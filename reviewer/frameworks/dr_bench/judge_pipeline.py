"""DR. Bench's judge, as the authors' notebook (``MultidimensionalEvaluation.ipynb``) runs it:
one call per rubric and one per keyword, the published system prompts, and the answer read as
the notebook reads it, the first ``[n]`` of the reply.

- ``qsr``: each query-specific rubric point with the report text as submitted (``text``); the
  points are read through the rubric's own point scale into an answer (Yes / Partial / No), a
  number inside a Partial *range* also kept as ``drb_partial_points`` (as the importer does);
  a number the rubric does not allow is an unusable reply (asked once more, then an error).
- ``grr``: each of the 48 general rubrics the same way (Yes / No).
- ``relevance``: each anchor and drift keyword against the citation-free text (``pure_text``:
  the notebook removes ``([title](url))`` citation chips), relevance 1–5.

The keyword counts and trusted-source matches are not a model's: they stay with the
importer's deterministic runs.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Mapping
from typing import Any

from reviewer.frameworks.dr_bench.judge_templates import (
    KEYWORDS_SYSTEM,
    KEYWORDS_USER,
    RULES_SYSTEM,
    RULES_USER,
)
from reviewer.frameworks.dr_bench.points import PointScale, PointScaleError, parse_point_scale
from reviewer.frameworks.dr_bench.scoring import ANCHOR, DRIFT, GRR, NAME, QSR
from reviewer.judge.fetch import Page, PageSource
from reviewer.judge.pipeline import (
    Completer,
    JudgeJob,
    PipelineOptions,
    PipelineSpec,
    PlannedCall,
    ReportOutcome,
    tokens,
)
from reviewer.judge.prompting import Fences, Prompt
from reviewer.judge.replies import TextReply
from reviewer.models import Criterion, Judgment

PROMPT_VERSION = "drbench-notebook-1"
STEPS = ("qsr", "grr", "relevance")
_CHIP = re.compile(r"\(\[[^\]]+\]\([^)]+\)\)")
_SCORE = re.compile(r"\[(\d+)\]")
_KINDS = {"qsr": "drb_qsr", "grr": "drb_grr"}


class BracketScore(TextReply):
    """``int(re.findall(r"\\[(\\d+)\\]", reply)[0])`` and the rest of the reply."""

    score: int
    reason: str = ""

    REPAIR_HINT = (
        "Your output must begin with the score in square brackets [], followed by "
        "a one-sentence reason."
    )

    @classmethod
    def parse_text(cls, text: str) -> BracketScore:
        found = _SCORE.search(text)
        if found is None:
            raise ValueError("the reply has no [score]")
        return cls(score=int(found.group(1)), reason=text[found.end() :].strip())


def pure_text(text: str) -> str:
    """The notebook's ``pure_text``: the report without ``([title](url))`` citation chips."""
    return _CHIP.sub("", text)


def rule_prompt(report: str, rule: str) -> Prompt:
    fences = Fences.over(report)
    return Prompt(
        "rubric",
        f"{RULES_SYSTEM}\n{fences.rule}",
        RULES_USER.format(text=fences.block("report", report), rule=rule),
    )


def keyword_prompt(report: str, keyword: str) -> Prompt:
    text = pure_text(report)
    fences = Fences.over(text)
    return Prompt(
        "relevance",
        f"{KEYWORDS_SYSTEM}\n{fences.rule}",
        KEYWORDS_USER.format(text=fences.block("report", text), keyword=keyword),
    )


def _criteria(job: JudgeJob, *dimensions: str) -> list[Criterion]:
    return [c for c in job.task.criteria if c.framework == NAME and c.dimension in dimensions]


class DrBenchPipeline:
    def __init__(
        self, client: Completer, pages: PageSource | None, run_id: str, options: PipelineOptions
    ) -> None:
        self.client = client
        self.run_id = run_id
        self.options = options

    def _j(self, job: JudgeJob, kind: str, **fields: Any) -> Judgment:
        return Judgment(run=self.run_id, report=job.report.id, kind=kind, **fields)

    def _steps(self, job: JudgeJob) -> list[tuple[str, Criterion, Prompt]]:
        out: list[tuple[str, Criterion, Prompt]] = []
        report = job.report.markdown
        for step, dims in (("qsr", (QSR,)), ("grr", (GRR,))):
            if step in self.options.steps:
                out += [(step, c, rule_prompt(report, c.text)) for c in _criteria(job, *dims)]
        if "relevance" in self.options.steps:
            out += [
                ("relevance", c, keyword_prompt(report, c.text))
                for c in _criteria(job, ANCHOR, DRIFT)
            ]
        return out

    async def judge(self, job: JudgeJob) -> ReportOutcome:
        out = ReportOutcome(job.report.id)
        steps = self._steps(job)
        # Every call of a report is independent: all are asked at once, and the client's
        # --concurrency bounds how many are in flight (one slow or rate-limited call does not
        # hold the others back); the replies are read in step order.
        results = await asyncio.gather(
            *(self.client.complete(prompt, BracketScore) for _, _, prompt in steps)
        )
        for (step, criterion, _), result in zip(steps, results, strict=True):
            if result.deferred:
                out.deferred = True
                continue
            kind = _KINDS.get(step, "drb_relevance")
            if result.value is None:
                out.judgments.append(
                    self._j(
                        job, kind, criterion=criterion.id, error=result.error, raw=result.content
                    )
                )
                continue
            read = self._relevance if step == "relevance" else self._rubric
            out.judgments += read(job, step, kind, criterion, result.value, result.content)
        return out

    def _relevance(
        self,
        job: JudgeJob,
        step: str,
        kind: str,
        criterion: Criterion,
        reply: BracketScore,
        raw: str,
    ) -> list[Judgment]:
        """A keyword's relevance stands as the judge gave it, if it is on the 1–5 scale."""
        score = reply.score
        if not 1 <= score <= 5:
            return [
                self._j(
                    job,
                    kind,
                    criterion=criterion.id,
                    raw=raw,
                    error=f"relevance {score} is not 1–5",
                )
            ]
        return [
            self._j(
                job, kind, criterion=criterion.id, value=score, explanation=reply.reason, raw=raw
            )
        ]

    def _rubric(
        self,
        job: JudgeJob,
        step: str,
        kind: str,
        criterion: Criterion,
        reply: BracketScore,
        raw: str,
    ) -> list[Judgment]:
        """A rubric's points read through its own scale as an answer; a number inside a Partial
        range is also kept as the points given."""
        score, reason = reply.score, reply.reason
        try:
            scale = parse_point_scale(criterion.text)
            answer = scale.answer_for(float(score))
        except PointScaleError as exc:
            return [
                self._j(
                    job,
                    kind,
                    criterion=criterion.id,
                    raw=raw,
                    error=f"the judge's [{score}]: {exc}",
                )
            ]
        if step == "grr" and answer == "partial":
            return [
                self._j(
                    job,
                    kind,
                    criterion=criterion.id,
                    raw=raw,
                    error=f"[{score}] is Partial; general rubrics have none",
                )
            ]
        out = [
            self._j(
                job,
                kind,
                criterion=criterion.id,
                value=answer,
                explanation=f"[{score}] {reason}".strip(),
                raw=raw,
            )
        ]
        if answer == "partial" and _ranged(scale):
            out.append(
                self._j(
                    job,
                    "drb_partial_points",
                    criterion=criterion.id,
                    value=float(score),
                    raw=raw,
                    explanation=f"The judge gave {score} points, inside the Partial "
                    f"range of {scale.describe()}.",
                )
            )
        return out

    def plan(
        self, job: JudgeJob, known_pages: Mapping[str, Page] | None = None
    ) -> list[PlannedCall]:
        return [
            PlannedCall(
                job.report.id, step, tokens(prompt.chars), 30, self.client.is_cached(prompt)
            )
            for step, _, prompt in self._steps(job)
        ]


def _ranged(scale: PointScale) -> bool:
    return scale.ranged


SPEC = PipelineSpec(
    framework=NAME,
    prompt_version=PROMPT_VERSION,
    steps=STEPS,
    build=lambda client, pages, run_id, options: DrBenchPipeline(client, pages, run_id, options),
    sources="none",
    description="DR. Bench: query-specific and general rubric points, keyword relevance (the "
    "authors' notebook prompts)",
)
