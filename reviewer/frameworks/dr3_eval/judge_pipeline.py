"""DR3-Eval's judge: the five evaluators of the public code (``evaluators/*.py``), with their
published prompts (:mod:`.judge_templates`), batch sizes and reply parsing.

- ``insight`` (``information_recall.py``): per origin (I_SC from the sandbox, ``long_context``;
  I_UF from the user files, ``source_documents``), gold insights in batches of 10 labelled
  1 / 0.5 / 0 against the report; a score off the scale is snapped (≥ 0.75 → 1, ≥ 0.25 → 0.5),
  an insight the reply leaves out is NOT FOUND; when the detailed reply is unusable the compact
  prompt is tried, as the code does.
- ``citation`` (``citation_coverage.py``): no model call. Each required document (supportive
  page title, user file name) is matched against the report's citations by the evaluator's
  title-matching rule (:func:`.format.match_required`).
- ``claims`` (``factual_accuracy.py`` phase 1): one call extracts every cited statement with
  its citations in the standard forms; each becomes a claim ``jd1``, ``jd2``, … citing the
  references its citation strings resolve to (the evaluator's resolution,
  :func:`.format.resolve_citation`; a citation the report's reference list does not name yet
  becomes a new reference).
- ``support`` (phase 2): (claim, citation) pairs grouped by source document, 20 a call, judged
  by the published lenient prompt with the document before it (over 20,000 characters: the 5
  most relevant 500-character chunks by BM25, as the code retrieves); a citation whose source
  cannot be found is unsupported without a call ("Source not found"). Without ``claims`` the
  report's working claims are verified again (the same subjects, comparable with human labels).
- ``checklist`` (``format_compliance.py``): requirements in batches of 5, true / false.
- ``depth`` (``depth_quality.py``): one call, an XML ``<depth_quality><score>`` answer read as
  the code reads it (integer, clipped to 1–10).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterator, Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from reviewer.citations import locate
from reviewer.frameworks.dr3_eval.format import _Src, match_required, resolve_citation
from reviewer.frameworks.dr3_eval.judge_templates import (
    CHECKLIST_SYSTEM,
    CHECKLIST_USER,
    CLAIMS_SYSTEM,
    CLAIMS_USER,
    DEPTH_SYSTEM,
    DEPTH_USER,
    INSIGHT_COMPACT_SYSTEM,
    INSIGHT_COMPACT_USER,
    INSIGHT_SYSTEM,
    INSIGHT_USER,
    SUPPORT_USER,
)
from reviewer.frameworks.dr3_eval.scoring import (
    DIM_CHECK,
    DIM_DEPTH,
    DIM_FILE,
    DIM_PAGE,
    DIM_SC,
    DIM_UF,
    NAME,
    SANDBOX_CLASSES,
)
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
    chunks,
    raw_of,
    tokens,
)
from reviewer.judge.prompting import Fences, Prompt
from reviewer.judge.replies import TextReply
from reviewer.models import RUN_CLAIM_KEY, Claim, Criterion, Judgment, Reference

PROMPT_VERSION = "dr3-eval-1"
STEPS = ("insight", "citation", "claims", "support", "checklist", "depth")
INSIGHT_BATCH = 10
CHECKLIST_BATCH = 5
SUPPORT_BATCH = 20
MAX_CONTENT_CHARS = 20_000
BM25_CHUNK = 500
BM25_TOP_K = 5
MAX_REPORT_CHARS = 50_000
CLAIM_PREFIX = "jd"


# -- replies --------------------------------------------------------------------------------------


def _snap(score: float) -> float:
    if score in (0.0, 0.5, 1.0):
        return score
    return 1.0 if score >= 0.75 else 0.5 if score >= 0.25 else 0.0


def _texts(value: Any) -> list[str]:
    if isinstance(value, list):
        return [str(v) for v in value if str(v).strip()]
    return [str(value)] if isinstance(value, str) and value.strip() else []


class InsightItem(BaseModel):
    model_config = ConfigDict(extra="ignore")

    id: int
    score: float = 0.0
    core_points: list[str] = Field(default_factory=list)
    core_meaning: Any = ""
    found_in_report: str = ""
    missing_points: list[str] = Field(default_factory=list)
    reasoning: str = ""
    explanation: str = ""

    @field_validator("core_points", "missing_points", mode="before")
    @classmethod
    def _lists(cls, value: Any) -> list[str]:
        return _texts(value)


class InsightReply(BaseModel):
    model_config = ConfigDict(extra="ignore")

    results: list[InsightItem]


class ChecklistItem(BaseModel):
    model_config = ConfigDict(extra="ignore")

    id: int
    satisfied: bool
    explanation: str = ""


class ChecklistReply(BaseModel):
    model_config = ConfigDict(extra="ignore")

    results: list[ChecklistItem]


class ExtractedClaim(BaseModel):
    model_config = ConfigDict(extra="ignore")

    claim_text: str
    citations: list[str] = Field(default_factory=list)
    source_type: str = ""

    @field_validator("citations", mode="before")
    @classmethod
    def _list(cls, value: Any) -> list[str]:
        return _texts(value)


class ClaimsReply(BaseModel):
    model_config = ConfigDict(extra="ignore")

    claims: list[ExtractedClaim]


class SupportItem(BaseModel):
    model_config = ConfigDict(extra="ignore")

    id: int
    supported: bool = False
    explanation: str = ""


class SupportReply(BaseModel):
    model_config = ConfigDict(extra="ignore")

    results: list[SupportItem]


_BLOCK = re.compile(
    r"<depth_quality>\s*<score>\s*(.*?)\s*</score>\s*<justification>\s*(.*?)"
    r"\s*</justification>\s*</depth_quality>",
    re.S | re.I,
)
_SCORE_ONLY = re.compile(
    r"<depth_quality>.*?<score>\s*(.*?)\s*</score>.*?</depth_quality>", re.S | re.I
)
_NUMBER = re.compile(r"depth_quality.*?(\d+\.?\d*)", re.I)


class DepthReply(TextReply):
    """The XML answer, read as ``_parse_evaluation_response`` reads it: the block with score
    and justification, else the score alone, else a number after ``depth_quality``; the score
    as an integer clipped to 1–10."""

    score: int
    justification: str = ""

    REPAIR_HINT = (
        "Format your response EXACTLY as:\n<evaluation>\n<depth_quality>\n"
        "<score>6</score>\n<justification>Your justification</justification>\n"
        "</depth_quality>\n</evaluation>"
    )

    @classmethod
    def parse_text(cls, text: str) -> DepthReply:
        found = _BLOCK.search(text)
        if found:
            return cls(score=_clip(found.group(1)), justification=found.group(2).strip())
        found = _SCORE_ONLY.search(text)
        if found:
            return cls(score=_clip(found.group(1)), justification="No justification provided")
        found = _NUMBER.search(text)
        if found:
            return cls(
                score=_clip(found.group(1)), justification="Extracted from unstructured response"
            )
        raise ValueError("no <depth_quality><score> in the reply")


def _clip(text: str) -> int:
    try:
        value = int(float(text.strip()))
    except ValueError as exc:
        raise ValueError(f"the score {text!r} is not a number") from exc
    return max(1, min(10, value))


# -- prompts --------------------------------------------------------------------------------------


def _system(base: str, fences: Fences) -> str:
    return f"{base}\n\n{fences.rule}" if base else fences.rule


def insight_prompt(query: str, report: str, insights: list[str]) -> Prompt:
    listed = "\n".join(f"{i + 1}. {t}" for i, t in enumerate(insights))
    fences = Fences.over(report, listed)
    return Prompt(
        "insight",
        _system(INSIGHT_SYSTEM, fences),
        INSIGHT_USER.format(
            query=query or "No specific query provided",
            count=len(insights),
            insights=fences.block("insights", listed),
            report=fences.block("report", report),
        ),
    )


def insight_compact_prompt(report: str, insights: list[str]) -> Prompt:
    listed = "\n".join(f"{i + 1}. {t}" for i, t in enumerate(insights))
    fences = Fences.over(report, listed)
    return Prompt(
        "insight",
        _system(INSIGHT_COMPACT_SYSTEM, fences),
        INSIGHT_COMPACT_USER.format(
            count=len(insights),
            insights=fences.block("insights", listed),
            report=fences.block("report", report),
        ),
    )


def checklist_prompt(report: str, requirements: list[str]) -> Prompt:
    listed = "\n".join(f"{i + 1}. {t}" for i, t in enumerate(requirements))
    example = ", ".join(
        f'{{"id": {i + 1}, "satisfied": true/false}}' for i in range(len(requirements))
    )
    fences = Fences.over(report, listed)
    return Prompt(
        "checklist",
        _system(CHECKLIST_SYSTEM, fences),
        CHECKLIST_USER.format(
            count=len(requirements),
            requirements=fences.block("requirements", listed),
            report=fences.block("report", report),
            example=example,
        ),
    )


def depth_prompt(question: str, report: str) -> Prompt:
    fences = Fences.over(report)
    return Prompt(
        "depth",
        _system(DEPTH_SYSTEM, fences),
        DEPTH_USER.format(
            question=question or "No question specified", report=fences.block("report", report)
        ),
    )


def claims_prompt(report: str) -> Prompt:
    text = report[:MAX_REPORT_CHARS]
    fences = Fences.over(text)
    return Prompt(
        "claims",
        _system(CLAIMS_SYSTEM, fences),
        CLAIMS_USER.format(report=fences.block("report", text)),
    )


def support_prompt(name: str, content: str, lines: list[str]) -> Prompt:
    """The code's content parts joined: the document (``文档内容 (name):``), then the prompt."""
    listed = "\n".join(lines)
    fences = Fences.over(name, content, listed)
    document = f"文档内容 ({name}):\n\n" + fences.block("document", content)
    return Prompt(
        "support",
        fences.rule,
        document + "\n\n" + SUPPORT_USER.format(claims=fences.block("claims", listed)),
    )


_WORD = re.compile(r"[A-Za-z0-9]+|[\u4e00-\u9fff]")


def _terms(text: str) -> list[str]:
    return [t.lower() for t in _WORD.findall(text)]


def bm25_chunks(content: str, query: str, size: int = BM25_CHUNK, top: int = BM25_TOP_K) -> str:
    """The ``top`` chunks of ``size`` characters most relevant to ``query`` by Okapi BM25
    (k1 1.5, b 0.75), in document order, as the evaluator retrieves from a long document.
    The code tokenises with jieba; here words and single CJK characters, so Chinese documents
    rank on character overlap."""
    parts = [content[i : i + size] for i in range(0, len(content), size)]
    parts = [p for p in parts if p.strip()]
    if not parts:
        return content[:MAX_CONTENT_CHARS]
    scores = _bm25_scores([Counter(_terms(p)) for p in parts], _terms(query))
    best = sorted(sorted(range(len(parts)), key=lambda i: -scores[i])[:top])
    return "\n\n".join(f"[片段 {i + 1}]\n{parts[i]}" for i in best)


def _bm25_scores(docs: list[Counter[str]], query_terms: list[str]) -> list[float]:
    """Okapi BM25 (k1 1.5, b 0.75) of each document for the query."""
    lengths = [sum(d.values()) for d in docs]
    avg = sum(lengths) / len(lengths) or 1.0
    n = len(docs)
    df = Counter(t for d in docs for t in d)
    scores = []
    for doc, length in zip(docs, lengths, strict=True):
        score = 0.0
        for term in query_terms:
            tf = doc.get(term, 0)
            if not tf:
                continue
            idf = math.log((n - df[term] + 0.5) / (df[term] + 0.5) + 1.0)
            score += idf * tf * 2.5 / (tf + 1.5 * (0.25 + 0.75 * length / avg))
        scores.append(score)
    return scores


def _hint(citation: str) -> str:
    """The page or chunk the citation names, as the code points the judge at it."""
    page = re.search(r"(?:page|第)\s*(\d+)(?:\s*-\s*(\d+))?", citation, re.I)
    if page:
        a, b = page.group(1), page.group(2)
        return f" (请重点关注第 {a}-{b} 页)" if b and b != a else f" (请重点关注第 {a} 页)"
    chunk = re.search(r"chunk\s*(\d+)(?:\s*-\s*(\d+))?", citation, re.I)
    if chunk:
        a, b = chunk.group(1), chunk.group(2)
        return f" (请重点关注 chunk {a}-{b})" if b and b != a else f" (请重点关注 chunk {a})"
    return ""


# -- the pipeline ---------------------------------------------------------------------------------


def _criteria(job: JudgeJob, dimension: str) -> list[Criterion]:
    return [c for c in job.task.criteria if c.framework == NAME and c.dimension == dimension]


def task_documents(job: JudgeJob) -> tuple[list[_Src], list[_Src]]:
    """(sandbox pages, user files) of the job's task, in import order (RAG-N counts pages)."""
    pages: list[_Src] = []
    files: list[_Src] = []
    for source in job.sources:
        meta = source.metadata
        found = meta.get("class_by_task")
        by_task: dict[str, Any] = found if isinstance(found, dict) else {}
        klass = str(by_task.get(job.task.id) or meta.get("class") or "")
        if meta.get("task") != job.task.id and job.task.id not in by_task:
            continue
        if klass == "user_file":
            files.append(_Src(source.url, source.title, "user_file", "user_file", None))
        elif klass in SANDBOX_CLASSES or klass == "unlabelled":
            pages.append(_Src(source.url, source.title, "sandbox", klass, None))
    return pages, files


def _insight_explanation(item: InsightItem, value: float) -> str:
    parts = []
    core = item.core_points or _texts(item.core_meaning)
    if core:
        parts.append("Core points: " + "; ".join(core))
    if item.missing_points:
        parts.append("Missing: " + "; ".join(item.missing_points))
    if item.reasoning or item.explanation:
        parts.append(item.reasoning or item.explanation)
    if value != item.score:
        parts.append(f"(judge gave {item.score:g}, snapped to {value:g} as the evaluator does)")
    return "\n".join(parts)


class Dr3Pipeline:
    def __init__(
        self, client: Completer, pages: PageSource | None, run_id: str, options: PipelineOptions
    ) -> None:
        self.client = client
        self.pages = pages
        self.run_id = run_id
        self.options = options

    def _j(self, job: JudgeJob, kind: str, **fields: Any) -> Judgment:
        return Judgment(run=self.run_id, report=job.report.id, kind=kind, **fields)

    async def judge(self, job: JudgeJob) -> ReportOutcome:
        out = ReportOutcome(job.report.id)
        steps = self.options.steps
        if "citation" in steps:
            self._citation(job, out)
        if "insight" in steps:
            for dimension in (DIM_SC, DIM_UF):
                await self._insight(job, _criteria(job, dimension), out)
        if "checklist" in steps:
            await self._checklist(job, out)
        if "depth" in steps:
            await self._depth(job, out)
        if "claims" in steps or "support" in steps:
            await self._claims_and_support(job, out)
        return out

    async def _claims_and_support(self, job: JudgeJob, out: ReportOutcome) -> None:
        """Support is judged on the claims this run extracts, else on the report's own."""
        steps = self.options.steps
        claims = list(job.report.claims)
        references = dict(job.references)
        if "claims" in steps:
            claims, added = await self._extract(job, out)
            if out.deferred:
                return
            out.claims.extend(claims)
            out.references.extend(added)
            references.update({r.index: r for r in added})
        if "support" in steps:
            await self._support(job, claims, references, out)

    # -- citation coverage (the rule; no model) -------------------------------------------------

    def _citation(self, job: JudgeJob, out: ReportOutcome) -> None:
        report = job.report.markdown
        for c in _criteria(job, DIM_PAGE) + _criteria(job, DIM_FILE):
            match = match_required(c.text, report)
            text = (
                f"match rule: {match.match_type} (decided by Gavel's implementation of the "
                "evaluator's rule)"
            )
            if match.cited and match.matched_citation:
                text += f"\nmatched citation: {match.matched_citation}"
            out.judgments.append(
                self._j(
                    job,
                    "dr3_citation",
                    criterion=c.id,
                    value="cited" if match.cited else "missed",
                    explanation=text,
                    evidence=match.matched_citation,
                    raw=raw_of(
                        {"match_type": match.match_type, "matched_citation": match.matched_citation}
                    ),
                )
            )

    # -- information recall ---------------------------------------------------------------------

    async def _insight(self, job: JudgeJob, criteria: list[Criterion], out: ReportOutcome) -> None:
        for batch in chunks(criteria, INSIGHT_BATCH):
            result = await self._insight_reply(job, [c.text for c in batch])
            if result.deferred:
                out.deferred = True
                continue
            if result.value is None:
                out.judgments.extend(
                    self._j(
                        job, "dr3_insight", criterion=c.id, error=result.error, raw=result.content
                    )
                    for c in batch
                )
                continue
            given = {item.id: item for item in result.value.results}
            for n, c in enumerate(batch, 1):
                out.judgments.append(self._insight_verdict(job, c, given.get(n), result.content))

    async def _insight_reply(self, job: JudgeJob, texts: list[str]) -> CallResult[InsightReply]:
        """The detailed prompt's reply; when it is unusable, the compact prompt's, as the code
        does."""
        report = job.report.markdown
        result = await self.client.complete(
            insight_prompt(job.task.prompt, report, texts), InsightReply
        )
        if result.deferred or result.value is not None:
            return result
        return await self.client.complete(insight_compact_prompt(report, texts), InsightReply)

    def _insight_verdict(
        self, job: JudgeJob, c: Criterion, item: InsightItem | None, content: str
    ) -> Judgment:
        if item is None:
            return self._j(
                job,
                "dr3_insight",
                criterion=c.id,
                error="no result from the judge (NOT FOUND)",
                raw=content,
            )
        value = _snap(item.score)
        return self._j(
            job,
            "dr3_insight",
            criterion=c.id,
            value=value,
            explanation=_insight_explanation(item, value),
            evidence=item.found_in_report,
            raw=raw_of(item),
        )

    # -- checklist ------------------------------------------------------------------------------

    async def _checklist(self, job: JudgeJob, out: ReportOutcome) -> None:
        for batch in chunks(_criteria(job, DIM_CHECK), CHECKLIST_BATCH):
            result = await self.client.complete(
                checklist_prompt(job.report.markdown, [c.text for c in batch]), ChecklistReply
            )
            if result.deferred:
                out.deferred = True
                continue
            given = {} if result.value is None else {i.id: i for i in result.value.results}
            for n, c in enumerate(batch, 1):
                item = given.get(n)
                if item is None:
                    out.judgments.append(
                        self._j(
                            job,
                            "dr3_checklist",
                            criterion=c.id,
                            error=result.error
                            if result.value is None
                            else "No result from LLM for this item",
                            raw=result.content,
                        )
                    )
                    continue
                out.judgments.append(
                    self._j(
                        job,
                        "dr3_checklist",
                        criterion=c.id,
                        value=item.satisfied,
                        explanation=item.explanation,
                        raw=raw_of(item),
                    )
                )

    # -- depth ----------------------------------------------------------------------------------

    async def _depth(self, job: JudgeJob, out: ReportOutcome) -> None:
        criteria = _criteria(job, DIM_DEPTH)
        if not criteria:
            return
        result = await self.client.complete(
            depth_prompt(job.task.prompt, job.report.markdown), DepthReply
        )
        if result.deferred:
            out.deferred = True
            return
        for c in criteria:
            if result.value is None:
                out.judgments.append(
                    self._j(
                        job, "dr3_depth", criterion=c.id, error=result.error, raw=result.content
                    )
                )
            else:
                out.judgments.append(
                    self._j(
                        job,
                        "dr3_depth",
                        criterion=c.id,
                        value=float(result.value.score),
                        explanation=result.value.justification,
                        raw=result.content,
                    )
                )

    # -- factual accuracy -----------------------------------------------------------------------

    async def _extract(
        self, job: JudgeJob, out: ReportOutcome
    ) -> tuple[list[Claim], list[Reference]]:
        result = await self.client.complete(claims_prompt(job.report.markdown), ClaimsReply)
        if result.deferred:
            out.deferred = True
            return [], []
        if result.value is None:
            out.errors.append(
                StepError(job.report.id, "claims", "report", result.error or "no reply")
            )
            return [], []
        book = _References(job.report.references or [], *task_documents(job))
        ids = _fresh_ids(job)
        claims: list[Claim] = []
        for item in result.value.claims:
            fact = item.claim_text.strip()
            if not fact:
                continue
            indices = [book.index_of(raw) for raw in dict.fromkeys(item.citations)]
            claims.append(
                Claim(
                    id=next(ids),
                    fact=fact,
                    extract=fact,
                    span=locate(job.report.markdown, fact),
                    citations=indices,
                    metadata={
                        RUN_CLAIM_KEY: self.run_id,
                        "source_type": item.source_type,
                        "citations": item.citations,
                    },
                )
            )
        return claims, book.added

    async def _support(
        self,
        job: JudgeJob,
        claims: list[Claim],
        references: dict[int, Reference],
        out: ReportOutcome,
    ) -> None:
        for url, pairs in _by_source(claims, references).items():
            page = await self.pages.get(url) if url and self.pages is not None else None
            if page is None or not page.usable:
                out.judgments.extend(
                    self._j(
                        job,
                        "dr3_support",
                        claim=claim.id,
                        ref=ref.index,
                        value="unsupported",
                        explanation=f"Citation {ref.title} → Source not found (no call: the "
                        "evaluator marks it unsupported)",
                    )
                    for claim, ref in pairs
                )
                continue
            for batch in chunks(pairs, SUPPORT_BATCH):
                await self._support_batch(job, page, batch, out)

    async def _support_batch(
        self, job: JudgeJob, page: Page, batch: list[tuple[Claim, Reference]], out: ReportOutcome
    ) -> None:
        """One call judging a batch of (claim, citation) pairs against one document."""
        result = await self.client.complete(self._support_prompt(page, batch), SupportReply)
        if result.deferred:
            out.deferred = True
            return
        given = {} if result.value is None else {i.id: i for i in result.value.results}
        for n, (claim, ref) in enumerate(batch, 1):
            item = given.get(n)
            if item is None:
                out.judgments.append(
                    self._j(
                        job,
                        "dr3_support",
                        claim=claim.id,
                        ref=ref.index,
                        error=result.error
                        if result.value is None
                        else "not verified (no result for this citation)",
                        raw=result.content,
                        source_sha256=page.sha256,
                    )
                )
                continue
            out.judgments.append(
                self._j(
                    job,
                    "dr3_support",
                    claim=claim.id,
                    ref=ref.index,
                    value="supported" if item.supported else "unsupported",
                    explanation=f"Citation {ref.title}\nJudge: {item.explanation}",
                    raw=raw_of(item),
                    source_sha256=page.sha256,
                )
            )

    def _support_prompt(self, page: Page, batch: list[tuple[Claim, Reference]]) -> Prompt:
        content = page.text
        if len(content) > MAX_CONTENT_CHARS:
            content = bm25_chunks(content, " ".join(c.fact for c, _ in batch))
        lines = [
            f"[{n}] {claim.extract or claim.fact}{_hint(ref.title)}"
            for n, (claim, ref) in enumerate(batch, 1)
        ]
        return support_prompt(page.title or page.url, content, lines)

    # -- dry run --------------------------------------------------------------------------------

    def plan(
        self, job: JudgeJob, known_pages: Mapping[str, Page] | None = None
    ) -> list[PlannedCall]:
        steps = self.options.steps
        calls = [call for step, planned in _PLANNED if step in steps for call in planned(job)]
        if "support" in steps:
            calls += self._support_calls(job, known_pages or {}, "claims" in steps)
        return [
            PlannedCall(
                job.report.id,
                prompt.step,
                tokens(prompt.chars),
                output,
                self.client.is_cached(prompt) if exact else None,
            )
            for prompt, output, exact in calls
        ]

    def _support_calls(
        self, job: JudgeJob, pages: Mapping[str, Page], extracting: bool
    ) -> list[tuple[Prompt, int, bool]]:
        """The support calls, grouped by document as :meth:`_support` makes them; a page not
        fetched yet is assumed of a typical size, and the cache is asked only about prompts
        known in full (stored pages, the report's own claims)."""
        groups = _by_source(job.report.claims, job.references)
        groups.pop("", None)  # a reference without a URL is not fetched: no call
        calls: list[tuple[Prompt, int, bool]] = []
        for url, pairs in groups.items():
            page = pages.get(url) or Page(url=url, text="x" * ASSUMED_PAGE_CHARS, sha256="")
            if not page.usable:
                continue
            for batch in chunks(pairs, SUPPORT_BATCH):
                calls.append(
                    (
                        self._support_prompt(page, batch),
                        40 * len(batch),
                        url in pages and not extracting,
                    )
                )
        return calls


def _insight_calls(job: JudgeJob) -> list[tuple[Prompt, int, bool]]:
    report = job.report.markdown
    return [
        (insight_prompt(job.task.prompt, report, [c.text for c in batch]), 80 * len(batch), True)
        for dimension in (DIM_SC, DIM_UF)
        for batch in chunks(_criteria(job, dimension), INSIGHT_BATCH)
    ]


def _checklist_calls(job: JudgeJob) -> list[tuple[Prompt, int, bool]]:
    return [
        (checklist_prompt(job.report.markdown, [c.text for c in batch]), 15 * len(batch), True)
        for batch in chunks(_criteria(job, DIM_CHECK), CHECKLIST_BATCH)
    ]


def _depth_calls(job: JudgeJob) -> list[tuple[Prompt, int, bool]]:
    if not _criteria(job, DIM_DEPTH):
        return []
    return [(depth_prompt(job.task.prompt, job.report.markdown), 120, True)]


def _claims_calls(job: JudgeJob) -> list[tuple[Prompt, int, bool]]:
    report = job.report.markdown
    return [(claims_prompt(report), tokens(len(report)) // 2, True)]


_PLANNED = (
    ("insight", _insight_calls),
    ("checklist", _checklist_calls),
    ("depth", _depth_calls),
    ("claims", _claims_calls),
)
"""The calls each model step makes, as (prompt, expected output tokens, ask the cache?), in
the order :meth:`Dr3Pipeline.judge` makes them; support depends on the pages (its own method)."""


def _by_source(
    claims: list[Claim], references: Mapping[int, Reference]
) -> dict[str, list[tuple[Claim, Reference]]]:
    """(claim, reference) pairs grouped by the reference's URL ("" for none), each citation
    of a claim once."""
    groups: dict[str, list[tuple[Claim, Reference]]] = {}
    for claim in claims:
        for index in dict.fromkeys(claim.citations or ()):
            ref = references.get(index)
            if ref is None:
                continue
            groups.setdefault(ref.url or "", []).append((claim, ref))
    return groups


class _References:
    """The report's references by citation string and by URL, for new claims: a citation
    resolving to no known reference becomes a new one, numbered after the last."""

    def __init__(self, known: list[Reference], pages: list[_Src], files: list[_Src]) -> None:
        self.by_title = {r.title: r for r in known}
        self.by_url = {r.url: r for r in known if r.url}
        self.next_index = max((r.index for r in known), default=0) + 1
        self.pages = pages
        self.files = files
        self.added: list[Reference] = []

    def index_of(self, raw: str) -> int:
        ref = self.by_title.get(raw)
        if ref is None:
            ref = self.resolve(raw)
            self.by_title[raw] = ref
        return ref.index

    def resolve(self, raw: str) -> Reference:
        src, _ = resolve_citation(raw, self.pages, self.files)
        known = self.by_url.get(src.url) if src is not None else None
        if known is not None:
            return known
        ref = Reference(index=self.next_index, title=raw, url=src.url if src is not None else None)
        self.next_index += 1
        self.added.append(ref)
        if ref.url:
            self.by_url[ref.url] = ref
        return ref


def _fresh_ids(job: JudgeJob) -> Iterator[str]:
    pattern = re.compile(re.escape(CLAIM_PREFIX) + r"(\d+)")
    taken = set(job.taken_claim_ids) | {c.id for c in job.report.claims}
    n = max((int(m.group(1)) for cid in taken if (m := pattern.fullmatch(cid))), default=0)
    while True:
        n += 1
        if f"{CLAIM_PREFIX}{n}" not in taken:
            yield f"{CLAIM_PREFIX}{n}"


SPEC = PipelineSpec(
    framework=NAME,
    prompt_version=PROMPT_VERSION,
    steps=STEPS,
    build=lambda client, pages, run_id, options: Dr3Pipeline(client, pages, run_id, options),
    extraction_steps=frozenset({"claims"}),
    sources="stored",
    needs_sources=True,
    description="DR3-Eval: insight coverage, citation coverage (the title rule), claim "
    "extraction and support, checklist, depth (the evaluators' published prompts)",
)
