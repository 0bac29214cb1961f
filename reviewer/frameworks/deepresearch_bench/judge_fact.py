"""FACT's judge: statement–URL extraction and support verdicts against the cited pages, as the
reference pipeline (``utils/extract.py``, ``deduplicate.py``, ``validate.py``) does it.

- ``extract``: one call per report with the published extraction template (English or Chinese
  by the task's language): a JSON list of ``{fact, ref_idx, url}`` triplets; Markdown links in a
  fact are reduced to their titles, as the code does. The statements are grouped by URL; a URL
  with more than one statement gets the published de-duplication call (indices to keep; an
  unusable answer, a 0 or more indices than statements keeps every statement, the code's
  fallback). Each kept (statement, URL) pair becomes a claim ``jf1``, ``jf2``, … with its URL
  and numeric ``ref_idx`` as citation.
- ``validate``: per URL, the cited page and its statements numbered from 1 go to the published
  validation template; the reply is a JSON list of ``{idx, result}`` (supported / unsupported /
  unknown) and must have one entry per statement (the code retries otherwise: here the repair
  turn). A URL whose page could not be fetched, or has no text, gets ``unknown`` for every
  statement without a call: the template's own rule for a page without valid content (the
  reference code sends its "scrape failed" text and the model answers unknown).

Without ``extract`` the report's working statements (imported, or a previous run's) are
validated again: the same subjects, so the run is comparable with the human labels.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, RootModel, field_validator, model_validator

from reviewer.frameworks.deepresearch_bench.fact import NAME
from reviewer.frameworks.deepresearch_bench.judge_templates import (
    FACT_DEDUP_EN,
    FACT_DEDUP_ZH,
    FACT_EXTRACT_EN,
    FACT_EXTRACT_ZH,
    FACT_VALIDATE_EN,
    FACT_VALIDATE_ZH,
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
    raw_of,
    tokens,
)
from reviewer.judge.prompting import Fences, Prompt
from reviewer.judge.replies import TextReply, loads_reply, repair_json
from reviewer.models import RUN_CLAIM_KEY, Claim, Judgment
from reviewer.scales import SUPPORT, ScaleError

PROMPT_VERSION = "drb-fact-1"
STEPS = ("extract", "validate")
CLAIM_PREFIX = "jf"
_LINK = re.compile(r"\[([^\]]+)\]\(([^)]+)\)")


def _unwrapped(data: Any) -> Any:
    """A list wrapped in a one-key object (``{"citations": [...]}``) is the list."""
    if isinstance(data, dict) and len(data) == 1 and isinstance(next(iter(data.values())), list):
        return next(iter(data.values()))
    return data


class Triplet(BaseModel):
    model_config = ConfigDict(extra="ignore")

    fact: str
    ref_idx: Any = None
    url: str = ""

    @field_validator("url", mode="before")
    @classmethod
    def _url(cls, value: Any) -> Any:
        return "" if value is None else str(value)


class ExtractReply(TextReply):
    """The extraction reply: a JSON list of triplets (``{"citations": [...]}`` accepted), read
    as ``utils/extract.py`` reads it: Markdown fences dropped and the escapes models put in
    front of ``> < + ~`` (invalid JSON) removed (its ``clean_escape``) before parsing."""

    triplets: list[Triplet]

    REPAIR_HINT = (
        'Output only the JSON list of {"fact", "ref_idx", "url"} triplets, '
        "without any chitchat or explanations."
    )

    @classmethod
    def parse_text(cls, text: str) -> ExtractReply:
        cleaned = text.replace("```json", "").replace("```", "")
        for escaped in ("\\>", "\\<", "\\+", "\\~"):
            cleaned = cleaned.replace(escaped, escaped[-1])
        try:
            data = loads_reply(cleaned)
        except ValueError:
            data = json.loads(repair_json(cleaned))
        return cls(triplets=_unwrapped(data))


class DedupReply(RootModel[list[int]]):
    @model_validator(mode="before")
    @classmethod
    def _unwrap(cls, data: Any) -> Any:
        return _unwrapped(data)


class Verdict(BaseModel):
    model_config = ConfigDict(extra="ignore")

    idx: int
    result: str

    @field_validator("result", mode="before")
    @classmethod
    def _support(cls, value: Any) -> str:
        try:
            return SUPPORT.normalize(value)
        except ScaleError as exc:
            raise ValueError(str(exc)) from exc


class ValidateReply(RootModel[list[Verdict]]):
    @model_validator(mode="before")
    @classmethod
    def _unwrap(cls, data: Any) -> Any:
        return _unwrapped(data)


def _zh(job: JudgeJob) -> bool:
    return job.task.language.lower().startswith("zh")


def remove_urls(text: str) -> str:
    """``[title](url)`` -> ``[title]``, as the reference code cleans extracted facts."""
    return _LINK.sub(r"[\1]", text)


def extract_prompt(report: str, zh: bool) -> Prompt:
    fences = Fences.over(report)
    template = FACT_EXTRACT_ZH if zh else FACT_EXTRACT_EN
    return Prompt(
        "extract", fences.rule, template.format(report_text=fences.block("report", report))
    )


def _numbered(statements: list[str]) -> str:
    return "\n".join(f"{i + 1}. {s}" for i, s in enumerate(statements))


def dedup_prompt(statements: list[str], zh: bool) -> Prompt:
    text = _numbered(statements)
    fences = Fences.over(text)
    template = FACT_DEDUP_ZH if zh else FACT_DEDUP_EN
    return Prompt(
        "dedup", fences.rule, template.format(statements=fences.block("statements", text))
    )


def validate_prompt(page: Page, statements: list[str], zh: bool, limit: int) -> Prompt:
    reference = f"{page.title}\n\n{page.text[:limit]}" if page.title else page.text[:limit]
    text = _numbered(statements)
    fences = Fences.over(reference, text)
    template = FACT_VALIDATE_ZH if zh else FACT_VALIDATE_EN
    return Prompt(
        "validate",
        fences.rule,
        template.format(
            reference=fences.block("reference", reference),
            statements=fences.block("statements", text),
        ),
    )


def _ref_number(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if value >= 0 else None
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return None


class FactPipeline:
    def __init__(
        self, client: Completer, pages: PageSource | None, run_id: str, options: PipelineOptions
    ) -> None:
        self.client = client
        self.pages = pages
        self.run_id = run_id
        self.options = options

    async def judge(self, job: JudgeJob) -> ReportOutcome:
        out = ReportOutcome(job.report.id)
        steps = self.options.steps
        if "extract" in steps:
            claims = await self._extract(job, out)
            if out.deferred:
                return out
            out.claims.extend(claims)
        else:
            claims = [c for c in job.report.claims if c.url]
        if "validate" in steps:
            for url, group in _by_url(claims).items():
                await self._validate(job, url, group, out)
        return out

    async def _extract(self, job: JudgeJob, out: ReportOutcome) -> list[Claim]:
        zh = _zh(job)
        result = await self.client.complete(extract_prompt(job.report.markdown, zh), ExtractReply)
        if result.deferred:
            out.deferred = True
            return []
        if result.value is None:
            out.errors.append(
                StepError(job.report.id, "extract", "report", result.error or "no reply")
            )
            return []
        kept: list[tuple[str, Triplet]] = []
        for url, group in _group_triplets(result.value.triplets).items():
            keep = await self._dedup(group, zh)
            if keep is None:
                out.deferred = True
                continue
            kept.extend((url, group[i]) for i in keep)
        if out.deferred:
            return []
        return self._new_claims(job, kept)

    async def _dedup(self, group: list[Triplet], zh: bool) -> list[int] | None:
        """Which of one URL's statements stay after the model's de-duplication (None: the call
        was deferred)."""
        if len(group) <= 1:
            return list(range(len(group)))
        dedup = await self.client.complete(dedup_prompt([t.fact for t in group], zh), DedupReply)
        if dedup.deferred:
            return None
        chosen = dedup.value.root if dedup.value is not None else []
        if _usable_choice(chosen, len(group)):
            return [i - 1 for i in chosen]
        # The code's fallback: keep everything when the answer is unusable.
        return list(range(len(group)))

    def _new_claims(self, job: JudgeJob, kept: list[tuple[str, Triplet]]) -> list[Claim]:
        """The kept statements as new claims, one per distinct (statement, URL)."""
        ids = _fresh_ids(job)
        claims: list[Claim] = []
        seen: set[tuple[str, str]] = set()
        for url, item in kept:
            if (item.fact, url) in seen:
                continue
            seen.add((item.fact, url))
            number = _ref_number(item.ref_idx)
            claims.append(
                Claim(
                    id=next(ids),
                    fact=item.fact,
                    extract=item.fact,
                    url=url,
                    citations=[number] if number is not None else [],
                    metadata={RUN_CLAIM_KEY: self.run_id, "ref_idx": item.ref_idx},
                )
            )
        return claims

    async def _validate(
        self, job: JudgeJob, url: str, claims: list[Claim], out: ReportOutcome
    ) -> None:
        if not url.strip():
            self._not_sent(job, claims, "the statement cites no URL", None, out)
            return
        if self.pages is None:
            self._not_sent(job, claims, "no page source was given to the judge", None, out)
            return
        page = await self.pages.get(url)
        if not page.usable:
            reason = f"the cited page has no valid content ({page.error or 'no text'})"
            self._not_sent(job, claims, reason, page.sha256, out)
            return
        statements = [c.extract or c.fact for c in claims]
        prompt = validate_prompt(page, statements, _zh(job), self.options.max_source_chars)
        result = await self.client.complete(prompt, ValidateReply)
        if result.deferred:
            out.deferred = True
            return
        if result.value is not None and len(result.value.root) != len(claims):
            # The code asserts one result per statement; what the reply has is kept.
            out.errors.append(
                StepError(
                    job.report.id,
                    "validate",
                    url,
                    f"{len(result.value.root)} results for {len(claims)} statements",
                )
            )
        out.judgments += self._verdicts(job, claims, result, page.sha256)

    def _not_sent(
        self,
        job: JudgeJob,
        claims: list[Claim],
        reason: str,
        sha: str | None,
        out: ReportOutcome,
    ) -> None:
        """Statements whose page cannot be judged are unknown, saying why."""
        for claim in claims:
            out.judgments.append(
                Judgment(
                    run=self.run_id,
                    report=job.report.id,
                    kind="fact",
                    claim=claim.id,
                    value="unknown",
                    explanation=f"Not sent to the model: {reason}.",
                    source_sha256=sha,
                )
            )

    def _verdicts(
        self,
        job: JudgeJob,
        claims: list[Claim],
        result: CallResult[ValidateReply],
        sha: str | None,
    ) -> list[Judgment]:
        """One verdict per statement, by its 1-based position in the reply; an error verdict
        when the reply failed or has no result for it."""
        verdicts = {} if result.value is None else {v.idx: v for v in result.value.root}
        out: list[Judgment] = []
        for n, claim in enumerate(claims, 1):
            verdict = verdicts.get(n)
            if result.value is None or verdict is None:
                out.append(
                    Judgment(
                        run=self.run_id,
                        report=job.report.id,
                        kind="fact",
                        claim=claim.id,
                        error=result.error
                        if result.value is None
                        else f"the reply has no result for statement {n}",
                        raw=result.content,
                        source_sha256=sha,
                    )
                )
                continue
            out.append(
                Judgment(
                    run=self.run_id,
                    report=job.report.id,
                    kind="fact",
                    claim=claim.id,
                    value=verdict.result,
                    raw=raw_of(verdict),
                    source_sha256=sha,
                )
            )
        return out

    def plan(
        self, job: JudgeJob, known_pages: Mapping[str, Page] | None = None
    ) -> list[PlannedCall]:
        steps = self.options.steps
        zh = _zh(job)
        calls: list[PlannedCall] = []
        extracting = "extract" in steps
        if extracting:
            prompt = extract_prompt(job.report.markdown, zh)
            calls.append(
                PlannedCall(
                    job.report.id,
                    "extract",
                    tokens(prompt.chars),
                    tokens(len(job.report.markdown)) // 3,
                    self.client.is_cached(prompt),
                )
            )
        if "validate" in steps:
            cited = _by_url([c for c in job.report.claims if c.url])
            calls += self._validate_calls(job, cited, zh, known_pages or {}, extracting)
        return calls

    def _validate_calls(
        self,
        job: JudgeJob,
        cited: dict[str, list[Claim]],
        zh: bool,
        pages: Mapping[str, Page],
        extracting: bool,
    ) -> list[PlannedCall]:
        """One validation call per cited URL whose page is not known to be unusable; an unknown
        page is sized as a typical one, and its cache state is unknown."""
        calls: list[PlannedCall] = []
        for url, group in cited.items():
            page = pages.get(url)
            if page is not None and not page.usable:
                continue
            stand_in = page or Page(url=url, text="x" * ASSUMED_PAGE_CHARS, sha256="")
            prompt = validate_prompt(
                stand_in,
                [c.extract or c.fact for c in group],
                zh,
                self.options.max_source_chars,
            )
            calls.append(
                PlannedCall(
                    job.report.id,
                    "validate",
                    tokens(prompt.chars),
                    12 * len(group),
                    self.client.is_cached(prompt) if page is not None and not extracting else None,
                )
            )
        return calls


def _group_triplets(triplets: list[Triplet]) -> dict[str, list[Triplet]]:
    """The extracted statements by URL, URLs removed from their text, empty ones dropped."""
    groups: dict[str, list[Triplet]] = {}
    for item in triplets:
        fact = remove_urls(item.fact).strip()
        if fact:
            groups.setdefault(item.url, []).append(item.model_copy(update={"fact": fact}))
    return groups


def _usable_choice(chosen: list[int], n: int) -> bool:
    """The de-duplication answer is a list of 1-based positions of the group's statements."""
    return (
        bool(chosen) and 0 not in chosen and len(chosen) <= n and all(1 <= i <= n for i in chosen)
    )


def _by_url(claims: list[Claim]) -> dict[str, list[Claim]]:
    groups: dict[str, list[Claim]] = {}
    for claim in claims:
        groups.setdefault(claim.url or "", []).append(claim)
    return groups


def _fresh_ids(job: JudgeJob) -> Iterator[str]:
    pattern = re.compile(re.escape(CLAIM_PREFIX) + r"(\d+)")
    taken = set(job.taken_claim_ids) | {c.id for c in job.report.claims}
    n = max((int(m.group(1)) for cid in taken if (m := pattern.fullmatch(cid))), default=0)
    while True:
        n += 1
        candidate = f"{CLAIM_PREFIX}{n}"
        if candidate not in taken:
            yield candidate


SPEC = PipelineSpec(
    framework=NAME,
    prompt_version=PROMPT_VERSION,
    steps=STEPS,
    build=lambda client, pages, run_id, options: FactPipeline(client, pages, run_id, options),
    extraction_steps=frozenset({"extract"}),
    sources="fetch",
    description="DeepResearch Bench FACT: statement-URL extraction, de-duplication and support "
    "verdicts against the cited pages (published prompts)",
)
