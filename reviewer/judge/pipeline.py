"""What a benchmark's judge pipeline is to the rest of Gavel: the job it gets, the outcome it
returns, and the spec a framework declares so the store can run it without knowing its name.

Every benchmark judges differently (DailyReport's cascade, RACE's side-by-side scoring, FACT's
statement extraction and page support, DR3-Eval's five evaluators, LiveDRBench's claim
matching, DR. Bench's rubric points), but a run's lifecycle is the same for all of them: load
the reports, ask the model, write each finished report whole, finish the run. So a framework
declares a :class:`PipelineSpec` (through ``Rejudge.pipeline``, a ``"module:ATTR"`` imported
only when judging) and :mod:`store.runs.judging` drives whatever it builds through the
:class:`JudgePipeline` protocol: ``judge(job)`` returns the report's verdicts, claims and new
references; ``plan(job)`` says what it would send, sending nothing.

Pipelines talk to the model only through a :class:`Completer` (the chat client, or the batch
collector of :mod:`reviewer.judge.batch`) and to cited pages through a page source, both handed
in, so tests point them at servers on loopback.
"""

from __future__ import annotations

import asyncio
import importlib
import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypeVar

from pydantic import BaseModel

from reviewer.judge.client import CallResult
from reviewer.judge.fetch import Page, PageSource
from reviewer.judge.prompting import Prompt
from reviewer.models import Claim, JudgeRun, Judgment, Reference, Report, Source, Task

T = TypeVar("T", bound=BaseModel)

CHARS_PER_TOKEN = 4
"""Token estimates (dry runs, servers that report no usage) assume 4 characters a token, the
usual figure for English; CJK text runs nearer 1–2, so treat estimates as lower bounds there."""

ASSUMED_PAGE_CHARS = 8_000
"""What a dry run assumes a not-yet-fetched page adds to a prompt that quotes it."""

EXPLANATION_LIMIT = 4_000
"""Characters of a judge's explanation or evidence kept with a verdict (a hostile reply cannot
grow the database through them; the raw reply is capped separately)."""


class Completer(Protocol):
    """The part of :class:`reviewer.judge.client.ChatClient` a pipeline uses."""

    async def complete(self, prompt: Prompt, schema: type[T]) -> CallResult[T]: ...

    def is_cached(self, prompt: Prompt) -> bool: ...


@dataclass(frozen=True, slots=True)
class JudgeJob:
    """One report to judge, with its task.

    ``report.claims`` are the working claims; ``taken_claim_ids`` every claim id the report
    already has (new ids must avoid them); ``reference`` the task's reference-system report
    (RACE scores the two side by side); ``sources`` the suite's stored sources without their
    text (url, title, metadata), for pipelines that resolve citations to documents (DR3-Eval).
    """

    task: Task
    report: Report
    taken_claim_ids: frozenset[str] = frozenset()
    reference: Report | None = None
    sources: tuple[Source, ...] = ()

    @property
    def references(self) -> dict[int, Reference]:
        return {r.index: r for r in self.report.references or []}


@dataclass(frozen=True, slots=True)
class PipelineOptions:
    steps: frozenset[str]
    today: str = ""
    """The judge's "current date" when a task's metadata gives none."""
    max_source_chars: int = 60_000
    """Page text beyond this is cut from a prompt (the hash still names the whole page)."""


@dataclass(frozen=True, slots=True)
class StepError:
    """A failed call that produced no verdict to hang the error on (e.g. claim extraction)."""

    report: str
    step: str
    subject: str
    error: str


@dataclass(slots=True)
class ReportOutcome:
    report: str
    judgments: list[Judgment] = field(default_factory=list)
    claims: list[Claim] = field(default_factory=list)
    errors: list[StepError] = field(default_factory=list)
    references: list[Reference] = field(default_factory=list)
    """References the run adds to the report (a new claim citing a document the report's
    reference list does not name yet); indices continue after the existing ones."""
    deferred: bool = False
    """A call waits in a batch: work that depends on its answer was not done (batch runs
    judge the report again once the answer is in)."""

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for judgment in self.judgments:
            out[judgment.kind] = out.get(judgment.kind, 0) + 1
        return out


@dataclass(frozen=True, slots=True)
class PlannedCall:
    report: str
    step: str
    prompt_tokens: int
    output_tokens: int
    cached: bool | None
    """Whether the exact prompt is already cached; None when the prompt depends on results of
    the run itself (claims extracted in it, pages fetched in it)."""


class JudgePipeline(Protocol):
    async def judge(self, job: JudgeJob) -> ReportOutcome: ...

    def plan(
        self, job: JudgeJob, known_pages: Mapping[str, Page] | None = None
    ) -> list[PlannedCall]: ...


Builder = Callable[[Completer, PageSource | None, str, PipelineOptions], JudgePipeline]
"""(client, page source, run id, options) -> the pipeline for one run."""

Sources = Literal["fetch", "stored", "none"]


@dataclass(frozen=True, slots=True)
class PipelineSpec:
    """What a framework's judge needs and offers, as data the store and interfaces read.

    ``extraction_steps`` create new subjects (claims a run extracts itself): a run that should
    be comparable with the human labels (``gavel migrate-judge``) leaves them out, so it
    re-judges the subjects that already have labels. ``sources`` is where cited pages come
    from by default: fetched now, the pages stored in the database, or none needed.
    """

    framework: str
    prompt_version: str
    steps: tuple[str, ...]
    build: Builder
    default_steps: tuple[str, ...] = ()
    extraction_steps: frozenset[str] = frozenset()
    sources: Sources = "none"
    needs_reference: bool = False
    needs_sources: bool = False
    description: str = ""

    @property
    def defaults(self) -> tuple[str, ...]:
        return self.default_steps or self.steps

    @property
    def gold_steps(self) -> tuple[str, ...]:
        """The default steps that re-judge existing subjects (no extraction)."""
        kept = tuple(s for s in self.defaults if s not in self.extraction_steps)
        return kept or self.defaults


class PipelineError(RuntimeError):
    """A framework names a pipeline that cannot be loaded."""


def load_spec(reference: str) -> PipelineSpec:
    """The spec named ``"module:ATTR"`` (imported now: listing frameworks imports no judge)."""
    module_name, _, attr = reference.partition(":")
    try:
        spec = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as exc:
        raise PipelineError(f"judge pipeline {reference!r} does not load: {exc}") from exc
    if not isinstance(spec, PipelineSpec):
        raise PipelineError(f"{reference} is not a PipelineSpec")
    return spec


def new_run(
    spec: PipelineSpec,
    run_id: str,
    model: str,
    params: Mapping[str, Any],
    created_at: str,
    description: str = "",
) -> JudgeRun:
    return JudgeRun(
        id=run_id,
        model=model,
        prompt_version=spec.prompt_version,
        params=dict(params),
        created_at=created_at,
        description=description,
    )


async def drive(
    pipeline: JudgePipeline,
    jobs: Iterable[JudgeJob],
    on_done: Callable[[JudgeJob, ReportOutcome], None],
    workers: int = 4,
    stopped: Callable[[], bool] = lambda: False,
) -> None:
    """Judge ``jobs`` with ``workers`` reports in flight; ``on_done`` sees each finished report
    at once, so an interrupted run keeps every report it finished. Once ``stopped()`` is true
    no further report is started (the caller's stop, e.g. ctrl+c, does not depend on task
    cancellation reaching every await)."""
    pending: Iterator[JudgeJob] = iter(jobs)

    async def worker() -> None:
        for job in pending:
            if stopped():
                return
            try:
                outcome = await pipeline.judge(job)
            except Exception as exc:  # one report's surprise never ends the run
                outcome = ReportOutcome(
                    job.report.id,
                    errors=[
                        StepError(
                            job.report.id,
                            "pipeline",
                            "report",
                            f"{type(exc).__name__}: {exc}"[:500],
                        )
                    ],
                )
            on_done(job, outcome)

    async with asyncio.TaskGroup() as group:
        for _ in range(max(1, workers)):
            group.create_task(worker())


# -- helpers every pipeline uses ------------------------------------------------------------------


def tokens(chars: int) -> int:
    return max(1, chars // CHARS_PER_TOKEN)


def raw_of(item: BaseModel | Mapping[str, Any]) -> str:
    data = item.model_dump() if isinstance(item, BaseModel) else dict(item)
    return json.dumps(data, ensure_ascii=False)


def clip(text: str, limit: int = EXPLANATION_LIMIT) -> str:
    return text if len(text) <= limit else text[:limit] + " …[cut]"


def chunks(items: list[Any], size: int) -> Iterator[list[Any]]:
    size = max(1, size)
    for start in range(0, len(items), size):
        yield items[start : start + size]
