"""Which judge calls to make for a report, and how their replies become bundle records.

The DailyReport judging of one report (paper §4, App. B.3, App. C), as steps:

- ``ins``: one call scores every instruction-following criterion of the task (0 / 0.5 / 1).
- ``claims``: one call per factuality criterion extracts the claims that answer it (verbatim
  ``fact`` plus context-completed ``extract``, assigned to the criterion's subtask); each fact
  is located in the report by exact then whitespace-insensitive search, and its citation
  markers are read from the text; facts that cannot be found go to one matching call (App. C
  "Match Claims with References") that quotes the passage and lists its references.
- ``consistency``: per cited reference, one call judges all the claims citing it against the
  page text (support / conflict / unknown). A reference without a URL, or whose page could not
  be fetched or has no text, gets ``unknown`` for every claim without calling the model: the
  paper defines an invalid page as unknown, and a model asked about an empty page can only
  guess.
- ``rat``: one call per rationality criterion finds the paragraphs answering it, judges each,
  and scores their reasoning (0 / 0.5 / 1), with the subtask's claims excluded as already
  checked.

Claim *factuality* verdicts (the ``claim`` kind, correct / incorrect / unknown) need the paper's
web-search verification workflow and are not produced here; runs that re-extract claims leave
the imported factuality verdicts in force. Consistency and rationality use the claims extracted
in the same run when ``claims`` runs, else the report's working claims (see the store).

Pure orchestration: the chat client and the page source are handed in, the results come back
as :class:`reviewer.models.Judgment` and :class:`reviewer.models.Claim` records, and writing
them anywhere is the caller's business. A failed call becomes judgments with ``error`` set, so
one bad reply never stops a run.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import BaseModel

from reviewer.citations import citations_near, locate
from reviewer.frameworks.dailyreport.judge_prompts import (
    PROMPT_VERSION,
    consistency_prompt,
    extract_prompt,
    ins_prompt,
    match_prompt,
    rat_prompt,
)
from reviewer.frameworks.dailyreport.judge_replies import (
    ConsistencyReply,
    ExtractReply,
    InsReply,
    MatchReply,
    RatReply,
)
from reviewer.frameworks.dailyreport.judge_replies import Match as ClaimMatch
from reviewer.judge.client import CallResult
from reviewer.judge.fetch import Page, PageSource
from reviewer.judge.pipeline import (
    ASSUMED_PAGE_CHARS,
    Completer,
    JudgeJob,
    PipelineOptions,
    PipelineSpec,
    PlannedCall,
    ReportOutcome,
    StepError,
    tokens,
)
from reviewer.judge.prompting import Prompt
from reviewer.models import (
    RUN_CLAIM_KEY,
    Claim,
    Criterion,
    Judgment,
    Reference,
    Task,
)

__all__ = ["FRAMEWORK", "SPEC", "STEPS", "JudgeJob", "Pipeline", "ReportOutcome", "StepError"]

T = TypeVar("T", bound=BaseModel)

STEPS = ("ins", "claims", "consistency", "rat")
"""What ``gavel judge --only`` accepts; the default runs all four."""

FRAMEWORK = "cascade"

STATEMENTS_PER_CALL = 20
CLAIMS_PER_MATCH_CALL = 30
CLAIM_PREFIX = "jc"

_OUTPUT_TOKENS = {"ins": 60, "extract": 600, "match": 60, "consistency": 70, "rat": 400}
"""Rough reply sizes for dry-run estimates: per criterion, per call, per claim, per statement,
per call."""


def cascade_criteria(task: Task, dimension: str) -> list[Criterion]:
    return [c for c in task.criteria if c.framework == FRAMEWORK and c.dimension == dimension]


def _question(criterion: Criterion) -> str:
    if criterion.explanation:
        return f"{criterion.text}\nScoring note: {criterion.explanation}"
    return criterion.text


def _norm(text: str) -> str:
    return " ".join(text.split()).casefold()


def _raw(item: BaseModel) -> str:
    return json.dumps(item.model_dump(), ensure_ascii=False)


@dataclass(slots=True)
class _Draft:
    fact: str
    extract: str
    criterion: Criterion
    span: tuple[int, int] | None
    citations: tuple[int, ...]
    located_by: str
    extracted_fact: str | None = None


def _draft(
    markdown: str, fact: str, extract: str, criterion: Criterion, seen: set[str]
) -> _Draft | None:
    """An extracted claim located in the report text, or None when it is empty or the same
    claim was extracted already (for another criterion)."""
    fact = fact.strip()
    if not fact:
        return None
    extract = extract.strip() or fact
    keys = {"f:" + _norm(fact), "e:" + _norm(extract)}
    if keys & seen:
        return None
    seen.update(keys)
    span = locate(markdown, fact)
    cites = citations_near(markdown, *span) if span else ()
    return _Draft(fact, extract, criterion, span, cites, "text" if span else "none")


def _relocate(markdown: str, draft: _Draft, match: ClaimMatch) -> None:
    """Places a claim where the judge found it, when its original text is report text."""
    if not match.located or not match.original_text:
        return
    span = locate(markdown, match.original_text.strip())
    if span is None:
        return
    # The fact must be report text: keep the model's version only as metadata.
    draft.extracted_fact = draft.fact
    draft.fact = markdown[span[0] : span[1]]
    draft.span = span
    draft.citations = (
        tuple(match.references) if match.references else citations_near(markdown, *span)
    )
    draft.located_by = "judge"


def _page_problem(page: Page) -> str | None:
    """Why a fetched page cannot be judged against (None: it can)."""
    if page.error is not None:
        return f"the cited page could not be used ({page.error})"
    if not page.text.strip():
        return "the cited page has no text"
    return None


class Pipeline:
    def __init__(
        self,
        client: Completer,
        pages: PageSource | None,
        run_id: str,
        options: PipelineOptions | None = None,
    ) -> None:
        self.client = client
        self.pages = pages
        self.run_id = run_id
        self.options = options or PipelineOptions(frozenset(STEPS))

    async def judge(self, job: JudgeJob) -> ReportOutcome:
        out = ReportOutcome(job.report.id)
        steps = self.options.steps

        async def claims_and_dependants() -> None:
            claims = list(job.report.claims)
            if "claims" in steps:
                claims = await self._extract(job, out)
                if out.deferred:
                    return  # claims still wait in a batch: nothing depends on them yet
                out.claims.extend(claims)
            async with asyncio.TaskGroup() as group:
                if "consistency" in steps:
                    group.create_task(self._consistency(job, claims, out))
                if "rat" in steps:
                    group.create_task(self._rat(job, claims, out))

        async with asyncio.TaskGroup() as group:
            if "ins" in steps:
                group.create_task(self._ins(job, out))
            group.create_task(claims_and_dependants())
        order = {"ins": 0, "rat": 1, "consistency": 2}
        out.judgments.sort(key=lambda j: (order.get(j.kind, 9), j.subject()))
        return out

    def _judgment(self, job: JudgeJob, kind: str, **fields: Any) -> Judgment:
        return Judgment(run=self.run_id, report=job.report.id, kind=kind, **fields)

    def _cur_date(self, task: Task) -> str:
        value = task.metadata.get("cur_date")
        return str(value) if value else self.options.today

    # -- instruction following ----------------------------------------------------------------

    def _ins_prompt(self, job: JudgeJob) -> tuple[Prompt, list[Criterion]] | None:
        criteria = cascade_criteria(job.task, "ins")
        if not criteria:
            return None
        numbered = [(n, c.text, c.explanation) for n, c in enumerate(criteria, 1)]
        prompt = ins_prompt(
            job.task.prompt, job.report.markdown, numbered, self._cur_date(job.task)
        )
        return prompt, criteria

    async def _ins(self, job: JudgeJob, out: ReportOutcome) -> None:
        built = self._ins_prompt(job)
        if built is None:
            return
        prompt, criteria = built
        result = await self.client.complete(prompt, InsReply)
        if result.value is None:
            for criterion in criteria:
                out.judgments.append(
                    self._judgment(
                        job, "ins", criterion=criterion.id, error=result.error, raw=result.content
                    )
                )
            return
        scores = {s.id: s for s in result.value.scores}
        for n, criterion in enumerate(criteria, 1):
            score = scores.get(n)
            if score is None:
                out.judgments.append(
                    self._judgment(
                        job,
                        "ins",
                        criterion=criterion.id,
                        error=f"the reply has no score for criterion {n}",
                        raw=result.content,
                    )
                )
            else:
                out.judgments.append(
                    self._judgment(
                        job,
                        "ins",
                        criterion=criterion.id,
                        value=score.score,
                        explanation=score.explanation,
                        raw=_raw(score),
                    )
                )

    # -- claims -------------------------------------------------------------------------------

    def _extract_prompts(self, job: JudgeJob) -> list[tuple[Criterion, Prompt]]:
        subtasks = {s.id: s for s in job.task.subtasks}
        out = []
        for criterion in cascade_criteria(job.task, "fac"):
            question = _question(criterion)
            sub = subtasks.get(criterion.subtask or "")
            if sub is not None:
                question += f"\nThe part of the task it belongs to: {sub.text}"
            out.append((criterion, extract_prompt(job.task.prompt, job.report.markdown, question)))
        return out

    async def _extract(self, job: JudgeJob, out: ReportOutcome) -> list[Claim]:
        prompts = self._extract_prompts(job)
        results = await asyncio.gather(*(self.client.complete(p, ExtractReply) for _, p in prompts))
        if any(r.deferred for r in results):
            out.deferred = True
            return []
        drafts = self._drafts(job, [c for c, _ in prompts], results, out)
        unlocated = [d for d in drafts if d.span is None]
        if unlocated:
            await self._match(job, unlocated, out)
            if out.deferred:
                return []
        ids = self._claim_ids(job)
        return [self._claim(next(ids), d) for d in drafts]

    def _drafts(
        self,
        job: JudgeJob,
        criteria: list[Criterion],
        results: Sequence[CallResult[ExtractReply]],
        out: ReportOutcome,
    ) -> list[_Draft]:
        """Each criterion's extracted claims, located in the report, without repeats; a failed
        reply is a step error."""
        markdown = job.report.markdown
        drafts: list[_Draft] = []
        seen: set[str] = set()
        for criterion, result in zip(criteria, results, strict=True):
            if result.value is None:
                out.errors.append(
                    StepError(job.report.id, "claims", criterion.id, result.error or "no reply")
                )
                continue
            for item in result.value.claims:
                draft = _draft(markdown, item.fact, item.extract, criterion, seen)
                if draft is not None:
                    drafts.append(draft)
        return drafts

    def _claim(self, claim_id: str, d: _Draft) -> Claim:
        return Claim(
            id=claim_id,
            subtask=d.criterion.subtask,
            criterion=d.criterion.id,
            fact=d.fact,
            extract=d.extract,
            span=d.span,
            citations=list(d.citations),
            metadata={
                RUN_CLAIM_KEY: self.run_id,
                "located_by": d.located_by,
                **({"extracted_fact": d.extracted_fact} if d.extracted_fact else {}),
            },
        )

    async def _match(self, job: JudgeJob, drafts: Sequence[_Draft], out: ReportOutcome) -> None:
        size = max(1, CLAIMS_PER_MATCH_CALL)
        markdown = job.report.markdown
        for start in range(0, len(drafts), size):
            chunk = drafts[start : start + size]
            prompt = match_prompt(
                markdown, [(n, d.fact, d.extract) for n, d in enumerate(chunk, 1)]
            )
            result = await self.client.complete(prompt, MatchReply)
            if result.deferred:
                out.deferred = True
                continue
            if result.value is None:
                out.errors.append(
                    StepError(
                        job.report.id, "match", f"{len(chunk)} claims", result.error or "no reply"
                    )
                )
                continue
            matches = {m.id: m for m in result.value.matches}
            for n, draft in enumerate(chunk, 1):
                match = matches.get(n)
                if match is not None:
                    _relocate(markdown, draft, match)

    def _claim_ids(self, job: JudgeJob) -> Iterator[str]:
        prefix = CLAIM_PREFIX
        pattern = re.compile(re.escape(prefix) + r"(\d+)")
        taken = set(job.taken_claim_ids) | {c.id for c in job.report.claims}
        n = max((int(m.group(1)) for cid in taken if (m := pattern.fullmatch(cid))), default=0)
        while True:
            n += 1
            candidate = f"{prefix}{n}"
            if candidate not in taken:
                yield candidate

    # -- consistency --------------------------------------------------------------------------

    def _groups(self, job: JudgeJob, claims: Sequence[Claim]) -> dict[int, list[Claim]]:
        refs = job.references
        groups: dict[int, list[Claim]] = {}
        for claim in claims:
            for index in dict.fromkeys(claim.citations or ()):
                if index in refs:
                    groups.setdefault(index, []).append(claim)
        return dict(sorted(groups.items()))

    async def _consistency(
        self, job: JudgeJob, claims: Sequence[Claim], out: ReportOutcome
    ) -> None:
        groups = self._groups(job, claims)
        async with asyncio.TaskGroup() as group:
            for index, cited in groups.items():
                group.create_task(self._consistency_ref(job, job.references[index], cited, out))

    async def _consistency_ref(
        self, job: JudgeJob, ref: Reference, claims: Sequence[Claim], out: ReportOutcome
    ) -> None:
        if not ref.url:
            self._not_sent(job, ref, claims, f"reference [{ref.index}] has no URL", None, out)
            return
        if self.pages is None:
            self._not_sent(job, ref, claims, "no page source was given to the judge", None, out)
            return
        page = await self.pages.get(ref.url)
        problem = _page_problem(page)
        if problem is not None:
            self._not_sent(job, ref, claims, problem, page.sha256, out)
            return
        size = max(1, STATEMENTS_PER_CALL)
        for start in range(0, len(claims), size):
            chunk = claims[start : start + size]
            prompt = self._consistency_prompt(ref, page, chunk)
            result = await self.client.complete(prompt, ConsistencyReply)
            out.judgments += self._consistency_verdicts(job, ref, chunk, result, page.sha256)

    def _not_sent(
        self,
        job: JudgeJob,
        ref: Reference,
        claims: Sequence[Claim],
        reason: str,
        sha: str | None,
        out: ReportOutcome,
    ) -> None:
        """Claims whose cited page cannot be judged are unknown, saying why."""
        for claim in claims:
            out.judgments.append(
                self._judgment(
                    job,
                    "consistency",
                    claim=claim.id,
                    ref=ref.index,
                    value="unknown",
                    explanation=f"Not sent to the model: {reason}.",
                    source_sha256=sha,
                )
            )

    def _consistency_verdicts(
        self,
        job: JudgeJob,
        ref: Reference,
        chunk: Sequence[Claim],
        result: CallResult[ConsistencyReply],
        sha: str | None,
    ) -> list[Judgment]:
        """One verdict per statement of a call, by its 1-based position; an error verdict when
        the reply failed or has no verdict for it."""
        verdicts = {} if result.value is None else {r.idx: r for r in result.value.results}
        out: list[Judgment] = []
        for n, claim in enumerate(chunk, 1):
            verdict = verdicts.get(n)
            fields: dict[str, Any]
            if result.value is None:
                fields = {"error": result.error, "raw": result.content}
            elif verdict is None:
                fields = {
                    "error": f"the reply has no verdict for statement {n}",
                    "raw": result.content,
                }
            else:
                fields = {
                    "value": verdict.result,
                    "explanation": verdict.explanation,
                    "evidence": verdict.context,
                    "raw": _raw(verdict),
                }
            out.append(
                self._judgment(
                    job,
                    "consistency",
                    claim=claim.id,
                    ref=ref.index,
                    source_sha256=sha,
                    **fields,
                )
            )
        return out

    def _consistency_prompt(self, ref: Reference, page: Page, claims: Sequence[Claim]) -> Prompt:
        text = page.text[: self.options.max_source_chars]
        statements = [(n, c.extract or c.fact) for n, c in enumerate(claims, 1)]
        return consistency_prompt(
            ref.index, page.title or ref.title, ref.url or page.url, text, statements
        )

    # -- rationality --------------------------------------------------------------------------

    def _rat_prompts(
        self, job: JudgeJob, claims: Sequence[Claim]
    ) -> list[tuple[Criterion, Prompt]]:
        ins = {c.subtask: c for c in cascade_criteria(job.task, "ins")}
        out = []
        for criterion in cascade_criteria(job.task, "rat"):
            instruction = ins.get(criterion.subtask)
            related = [
                c.extract or c.fact
                for c in claims
                if criterion.subtask is not None and c.subtask == criterion.subtask
            ]
            out.append(
                (
                    criterion,
                    rat_prompt(
                        job.task.prompt,
                        job.report.markdown,
                        _question(criterion),
                        instruction.text if instruction else "",
                        related,
                        self._cur_date(job.task),
                    ),
                )
            )
        return out

    async def _rat(self, job: JudgeJob, claims: Sequence[Claim], out: ReportOutcome) -> None:
        prompts = self._rat_prompts(job, claims)
        results = await asyncio.gather(*(self.client.complete(p, RatReply) for _, p in prompts))
        for (criterion, _), result in zip(prompts, results, strict=True):
            reply = result.value
            if reply is None:
                out.judgments.append(
                    self._judgment(
                        job, "rat", criterion=criterion.id, error=result.error, raw=result.content
                    )
                )
                continue
            notes = [reply.explanation] if reply.explanation else []
            for p in reply.paragraphs:
                if not p.reasonable:
                    head = " ".join(p.paragraph.split())[:80]
                    notes.append(f"Unreasonable: “{head}…” — {p.reason}")
            out.judgments.append(
                self._judgment(
                    job,
                    "rat",
                    criterion=criterion.id,
                    value=reply.score,
                    explanation="\n".join(notes),
                    evidence="\n\n".join(p.paragraph for p in reply.paragraphs),
                    raw=result.content,
                )
            )

    # -- dry run ------------------------------------------------------------------------------

    def plan(
        self, job: JudgeJob, known_pages: Mapping[str, Page] | None = None
    ) -> list[PlannedCall]:
        """The calls :meth:`judge` would make, with token estimates, without making any.

        Prompts that depend on the run's own results are estimated with stand-ins: the
        report's working claims for claims still to be extracted, ``ASSUMED_PAGE_CHARS`` for a
        page not yet fetched. Matching calls depend on what extraction finds and are not
        counted.
        """
        steps = self.options.steps
        calls: list[PlannedCall] = []
        if "ins" in steps:
            built = self._ins_prompt(job)
            if built is not None:
                calls.append(
                    self._call(job, "ins", built[0], _OUTPUT_TOKENS["ins"] * len(built[1]), True)
                )
        extracting = "claims" in steps
        if extracting:
            calls += [
                self._call(job, "extract", prompt, _OUTPUT_TOKENS["extract"], True)
                for _, prompt in self._extract_prompts(job)
            ]
        claims = list(job.report.claims)
        if "consistency" in steps:
            calls += self._consistency_calls(job, claims, known_pages or {}, extracting)
        if "rat" in steps:
            calls += [
                self._call(job, "rat", prompt, _OUTPUT_TOKENS["rat"], not extracting)
                for _, prompt in self._rat_prompts(job, claims)
            ]
        return calls

    def _call(
        self, job: JudgeJob, step: str, prompt: Prompt, output: int, exact: bool
    ) -> PlannedCall:
        """A planned call; its cache state is known only when its prompt is exactly the one
        the run would send."""
        cached = self.client.is_cached(prompt) if exact else None
        return PlannedCall(job.report.id, step, tokens(prompt.chars), output, cached)

    def _consistency_calls(
        self,
        job: JudgeJob,
        claims: list[Claim],
        pages: Mapping[str, Page],
        extracting: bool,
    ) -> list[PlannedCall]:
        """The consistency calls per cited reference with a URL whose page is not known to be
        unusable; a page not yet fetched is sized as a typical one."""
        calls: list[PlannedCall] = []
        size = max(1, STATEMENTS_PER_CALL)
        for index, cited in self._groups(job, claims).items():
            ref = job.references[index]
            page = pages.get(ref.url) if ref.url else None
            if not ref.url or (page is not None and not page.usable):
                continue
            stand_in = page or Page(url=ref.url, text="x" * ASSUMED_PAGE_CHARS, sha256="")
            for start in range(0, len(cited), size):
                chunk = cited[start : start + size]
                calls.append(
                    self._call(
                        job,
                        "consistency",
                        self._consistency_prompt(ref, stand_in, chunk),
                        _OUTPUT_TOKENS["consistency"] * len(chunk),
                        page is not None and not extracting,
                    )
                )
        return calls


SPEC = PipelineSpec(
    framework=FRAMEWORK,
    prompt_version=PROMPT_VERSION,
    steps=STEPS,
    build=lambda client, pages, run_id, options: Pipeline(client, pages, run_id, options),
    extraction_steps=frozenset({"claims"}),
    sources="fetch",
    description="DailyReport (App. C): instruction following, claim extraction, claim ↔ "
    "reference consistency, rationality",
)
"""What ``cascade``'s ``Rejudge.pipeline`` names."""
