"""A judge run from request to stored run, and fetching cited pages, for every interface and
every framework.

One lifecycle for every interface that judges: :func:`prepare_judge` checks the request and
loads what is to be judged, :func:`plan_judge` says what a run would send (a dry run, as data),
:func:`run_judge` creates the run, judges, hands each finished report to a *sink* and finishes
the run, and :func:`resume_judge` carries a Batch API run forward from another process. The
sink decides how a report's results are written: ``gavel judge`` stores them on its own
connection (the default); a caller with a single writer thread (the workstation) hands in a
``write`` that submits them there. Either way a report's results are written whole, at once,
so a run stopped half-way keeps every report it finished.

Which judging happens is the framework's: each declares its pipeline
(:class:`reviewer.judge.pipeline.PipelineSpec`, through ``Rejudge.pipeline``), and nothing here
branches on a framework's name. Runs never overwrite one another, see :mod:`store.runs.records`.

A run records who runs it (host, pid) and a heartbeat while it runs, so a run whose process
died is recognised as interrupted (:func:`store.runs.records.mark_stale_runs`); a run whose every
model call failed ends ``failed``, and the command line exits non-zero for it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import signal
import sqlite3
import threading
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from reviewer.errors import InputError
from reviewer.judge.batch import (
    BatchApi,
    BatchApiError,
    BatchCollector,
    BatchState,
    batch_file,
    batch_name,
    current_report,
    ingest,
    remember,
    split_round,
)
from reviewer.judge.cache import CachedReply
from reviewer.judge.client import ChatClient, ClientConfig, public_url
from reviewer.judge.costs import BATCH_DISCOUNT, Price, RunUsage, price_for
from reviewer.judge.fetch import FetchConfig, MappingPages, Page, PageFetcher, PageSource
from reviewer.judge.pipeline import (
    JudgeJob,
    JudgePipeline,
    PipelineError,
    PipelineOptions,
    PipelineSpec,
    ReportOutcome,
    StepError,
    drive,
    load_spec,
    new_run,
)
from reviewer.registry import frameworks
from store.runs.records import (
    HEARTBEAT_SECONDS,
    LoadedJob,
    SqliteJudgeCache,
    cited_urls,
    create_run,
    finish_run,
    heartbeat,
    load_jobs,
    mark_stale_runs,
    record_page,
    run_rows,
    select_reports,
    stored_pages,
    unique_run_id,
    write_outcome,
)
from store.scores.cache import ensure_scores
from store.sqlite.tx import transaction

DEFAULT_BASE_URL = "https://api.openai.com/v1"
DEFAULT_FRAMEWORK = "cascade"
LOCAL_HOSTS = frozenset({"localhost", "127.0.0.1", "::1", "0.0.0.0"})
ERRORS_KEPT = 200
"""Step errors kept in a run's usage record (the rest are counted)."""
POLL_SECONDS = 30.0
"""How often a waiting batch is polled."""

OutcomeSink = Callable[[int, int, ReportOutcome], None]
"""(report id, ``judge_run`` row, outcome), once per finished report, on the thread running the
judge. The outcome must be stored when the sink returns: finishing the run rescores what it
judged. A sink that raises fails the run (the finished reports stay)."""

PageSink = Callable[[int, int | None, Page], None]
"""(suite id, ``judge_run`` row or None, page), once per suite citing a fetched page."""

Headlines = dict[tuple[str, str], float | None]
"""(system, metric) -> judge-variant system score."""


# -- what to judge --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Selection:
    """Reports by id, systems by id or name, tasks by id (each empty: all), at most ``limit``
    in import order."""

    reports: Sequence[str] = ()
    systems: Sequence[str] = ()
    tasks: Sequence[str] = ()
    limit: int | None = None
    ids: Sequence[int] | None = None
    """Only these report ids (a second opinion's draw); None: no such restriction."""


def selected_reports(
    conn: sqlite3.Connection, selection: Selection, framework: str = DEFAULT_FRAMEWORK
) -> list[int]:
    """The selected reports of suites scored by ``framework``; a name that matches nothing is
    an error."""
    if selection.limit is not None and selection.limit < 1:
        raise InputError("command line", "--limit must be at least 1", field="--limit")
    found = select_reports(
        conn,
        reports=selection.reports,
        systems=selection.systems,
        tasks=selection.tasks,
        framework=framework,
        limit=selection.limit if selection.ids is None else None,
    )
    if selection.ids is None:
        return found
    wanted = set(selection.ids)
    kept = [rid for rid in found if rid in wanted]
    return kept[: selection.limit] if selection.limit is not None else kept


# -- a second opinion -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SecondOpinionDraw:
    """The reports a second opinion re-judges, and how they were drawn (for the record).

    The unit is the report: a framework's pipeline judges a report's subjects together (one
    prompt holds all its criteria), so a share of subjects is drawn as the share of reports
    that hold them."""

    reports: list[int]
    population: int
    """Reports of the framework with a verdict of an active run (what could be drawn)."""
    share: float
    seed: int
    flagged: bool
    flagged_available: int
    """Reports with at least one suspicion flag (``flagged`` draws only among these)."""

    def describe(self) -> str:
        how = (
            "the most suspicious first (suspicion flags)"
            if self.flagged
            else f"at random, seed {self.seed}"
        )
        return (
            f"second opinion on {len(self.reports)} of {self.population} reports "
            f"(share {self.share:g}, {how})"
        )


def draw_second_opinion(
    conn: sqlite3.Connection,
    framework: str,
    share: float,
    seed: int,
    *,
    flagged: bool = False,
    selection: Selection | None = None,
) -> SecondOpinionDraw:
    """``share`` of the reports the active runs judged (within ``selection``), rounded up:
    a uniform draw without replacement with ``seed``, or with ``flagged`` the reports with
    the heaviest suspicion flags on their counting verdicts (only flagged ones, so possibly
    fewer)."""
    import math
    import random

    if not 0.0 < share <= 1.0:
        raise InputError("command line", "--share must be in (0, 1]", field="--share")
    candidates = set(selected_reports(conn, selection or Selection(), framework))
    active = [
        int(rid)
        for (rid,) in conn.execute(
            """SELECT DISTINCT j.report_id FROM judgment j JOIN judge_run r ON r.id = j.run_id
               WHERE r.active > 0 AND j.current = 1 ORDER BY j.report_id"""
        )
        if rid in candidates
    ]
    wanted = math.ceil(share * len(active)) if active else 0
    weights = _suspicion_by_report(conn, active)
    if flagged:
        ranked = sorted(weights, key=lambda rid: (-weights[rid], rid))
        chosen = sorted(ranked[:wanted])
    else:
        chosen = sorted(random.Random(seed).sample(active, wanted))
    return SecondOpinionDraw(chosen, len(active), share, seed, flagged, len(weights))


def _suspicion_by_report(conn: sqlite3.Connection, report_ids: Sequence[int]) -> dict[int, float]:
    """Total weight of the suspicion flags on each report's counting verdicts (flagged
    reports only)."""
    if not report_ids:
        return {}
    out: dict[int, float] = {}
    marks = ",".join("?" * len(report_ids))
    for rid, weight in conn.execute(
        f"""SELECT s.report_id, sum(x.weight) FROM suspicion x
            JOIN subject s ON s.id = x.subject_id
            WHERE s.report_id IN ({marks}) GROUP BY s.report_id""",
        list(report_ids),
    ):
        if weight and weight > 0:
            out[int(rid)] = float(weight)
    return out


def parse_price(text: str | None) -> Price | None:
    """``IN,OUT`` US dollars per million tokens, or None for the built-in table."""
    if text is None:
        return None
    try:
        low, high = (float(x) for x in text.split(","))
    except ValueError:
        raise InputError(
            "command line", "--price takes IN,OUT, e.g. 0.15,0.60", field="--price"
        ) from None
    return Price(low, high)


def judgeable() -> dict[str, str]:
    """framework -> its judge pipeline's description, for every framework that has one."""
    out: dict[str, str] = {}
    for name, fw in frameworks().items():
        if fw.rejudge is not None and fw.rejudge.pipeline:
            out[name] = fw.label
    return out


def spec_for(framework: str) -> PipelineSpec:
    """The judge pipeline ``framework`` declares; InputError naming the ones that have one."""
    fw = frameworks().get(framework)
    if fw is None or fw.rejudge is None or not fw.rejudge.pipeline:
        known = ", ".join(sorted(judgeable()))
        what = "is not a framework" if fw is None else "has no judge pipeline"
        raise InputError(
            "command line", f"{framework!r} {what} (judge pipelines: {known})", field="--framework"
        )
    try:
        return load_spec(fw.rejudge.pipeline)
    except PipelineError as exc:
        raise InputError("command line", str(exc), field="--framework") from exc


# -- the request ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class JudgeRequest:
    """Everything a judge run needs besides the database and the API key.

    ``steps`` and ``sources`` default to the framework's (``sources``: ``fetch`` the cited
    pages now, ``stored`` the newest fetched else the imported ones, ``none``). ``batch``
    sends the requests through the provider's Batch API (:mod:`reviewer.judge.batch`).
    """

    model: str | None
    base_url: str = DEFAULT_BASE_URL
    framework: str = DEFAULT_FRAMEWORK
    selection: Selection = field(default_factory=Selection)
    steps: frozenset[str] | None = None
    concurrency: int = 4
    timeout: float = 120.0
    max_retries: int = 4
    temperature: float = 0.0
    max_tokens: int | None = None
    json_mode: bool = False
    price: Price | None = None
    sources: str | None = None
    fetch: FetchConfig = field(default_factory=FetchConfig)
    use_cache: bool = True
    run_id: str | None = None
    description: str = ""
    today: str | None = None
    """The judge's current date for tasks without ``cur_date`` (default: today, UTC)."""
    time_budget: float | None = None
    """Seconds the whole run may spend on model calls and waits (None: no limit)."""
    max_reply_bytes: int = 2_000_000
    batch: bool = False
    retry_after_max: float = 60.0
    batch_dir: Path | None = None
    """Where each round's batch file is written before it is uploaded (kept for audit);
    None: uploaded from memory only."""


@dataclass(frozen=True, slots=True)
class PreparedJudge:
    """A checked request and the jobs it selects (none: nothing matched)."""

    request: JudgeRequest
    spec: PipelineSpec
    config: ClientConfig
    options: PipelineOptions
    sources: str
    api_key: str | None
    loaded: list[LoadedJob]
    suites: list[int]
    stored: dict[str, Page]

    @property
    def report_ids(self) -> list[int]:
        return [lj.report_id for lj in self.loaded]

    @property
    def sends_without_key(self) -> bool:
        """No key, and the server is not this machine: worth a warning before sending."""
        host = urlsplit(self.request.base_url).hostname
        return self.api_key is None and host not in LOCAL_HOSTS


def check_request(request: JudgeRequest) -> PipelineSpec:
    """Raise :class:`InputError` naming the field at fault (before anything is opened)."""
    if not request.model:
        raise InputError(
            "command line", "name the model: --model NAME (or set GAVEL_MODEL)", field="--model"
        )
    base = urlsplit(request.base_url)
    if base.scheme not in ("http", "https") or not base.hostname:
        raise InputError(
            "command line",
            f"--base-url must be an http(s) URL, got {public_url(request.base_url)!r}",
            field="--base-url",
        )
    spec = spec_for(request.framework)
    steps = request.steps if request.steps is not None else frozenset(spec.defaults)
    unknown = sorted(steps - set(spec.steps))
    if unknown or not steps:
        raise InputError(
            "command line",
            f"unknown step(s) {', '.join(unknown) or '(none)'} "
            f"for {request.framework}; choose from {', '.join(spec.steps)}",
            field="--only",
        )
    if request.sources not in (None, "fetch", "stored", "none"):
        raise InputError("command line", "--sources is fetch, stored or none", field="--sources")
    return spec


def prepare_judge(
    conn: sqlite3.Connection, request: JudgeRequest, api_key: str | None
) -> PreparedJudge:
    """Check the request, select and load the reports. The key is handed in, never read here
    (see :func:`reviewer.judge.client.api_key_from_env`)."""
    spec = check_request(request)
    ensure_scores(conn)
    ids = selected_reports(conn, request.selection, request.framework)
    loaded = (
        load_jobs(conn, ids, reference=spec.needs_reference, sources=spec.needs_sources)
        if ids
        else []
    )
    config = ClientConfig(
        base_url=request.base_url,
        model=request.model or "",
        concurrency=max(1, request.concurrency),
        timeout=request.timeout,
        max_retries=max(0, request.max_retries),
        temperature=request.temperature,
        max_tokens=request.max_tokens,
        json_mode=request.json_mode,
        price=request.price,
        time_budget=request.time_budget,
        max_reply_bytes=request.max_reply_bytes,
        retry_after_max=request.retry_after_max,
    )
    today = request.today or datetime.now(UTC).date().isoformat()
    suites = sorted({lj.suite_id for lj in loaded})
    sources = request.sources or spec.sources
    stored = stored_pages(conn, suites) if sources == "stored" and suites else {}
    steps = request.steps if request.steps is not None else frozenset(spec.defaults)
    return PreparedJudge(
        request,
        spec,
        config,
        PipelineOptions(steps=steps, today=today),
        sources,
        api_key,
        loaded,
        suites,
        stored,
    )


def _cache(conn: sqlite3.Connection, prepared: PreparedJudge) -> SqliteJudgeCache | None:
    return SqliteJudgeCache(conn) if prepared.request.use_cache else None


# -- a dry run ------------------------------------------------------------------------------------


@dataclass(slots=True)
class StepPlan:
    step: str
    calls: int = 0
    cached: int = 0
    unknown_cache: int = 0
    """Calls whose prompt depends on the run's own results, so the cache cannot be asked."""
    input_tokens: int = 0
    output_tokens: int = 0


@dataclass(frozen=True, slots=True)
class JudgePlan:
    """What a run would send, estimated (about 4 characters a token; calls that depend on what
    an earlier step finds are estimated with stand-ins or not counted, per pipeline)."""

    reports: int
    steps: list[StepPlan]
    input_tokens: int
    output_tokens: int
    cost: float | None
    """US dollars for the calls the cache cannot answer, direct; None without a price."""
    price: Price | None = None

    @property
    def batch_cost(self) -> float | None:
        """The same through the Batch API (``BATCH_DISCOUNT`` of the list price)."""
        return None if self.cost is None else self.cost * BATCH_DISCOUNT

    @property
    def uncached_calls(self) -> int:
        return sum(s.calls - s.cached for s in self.steps)


def plan_judge(conn: sqlite3.Connection, prepared: PreparedJudge) -> JudgePlan:
    """The calls :func:`run_judge` would make, per step, sending nothing."""
    client = ChatClient(
        prepared.config, prompt_version=prepared.spec.prompt_version, cache=_cache(conn, prepared)
    )
    pipeline = prepared.spec.build(client, None, "dry-run", prepared.options)
    steps: dict[str, StepPlan] = {}
    for lj in prepared.loaded:
        for call in pipeline.plan(lj.job, prepared.stored):
            row = steps.setdefault(call.step, StepPlan(call.step))
            row.calls += 1
            row.input_tokens += call.prompt_tokens
            row.output_tokens += call.output_tokens
            if call.cached is None:
                row.unknown_cache += 1
            elif call.cached:
                row.cached += 1
    rows = list(steps.values())
    uncached_in = sum(r.input_tokens * (r.calls - r.cached) // max(1, r.calls) for r in rows)
    uncached_out = sum(r.output_tokens * (r.calls - r.cached) // max(1, r.calls) for r in rows)
    price = price_for(prepared.config.model, prepared.config.price)
    return JudgePlan(
        reports=len(prepared.loaded),
        steps=rows,
        input_tokens=sum(r.input_tokens for r in rows),
        output_tokens=sum(r.output_tokens for r in rows),
        cost=None if price is None else price.cost(uncached_in, uncached_out),
        price=price,
    )


# -- a run ----------------------------------------------------------------------------------------


@dataclass(slots=True)
class JudgeTally:
    """A run's progress so far: what a progress display shows, and the run's usage counts."""

    selected: int
    """Reports the run set out to judge."""
    requests: int = 0
    cache_hits: int = 0
    finished: list[int] = field(default_factory=list)
    judgments: Counter[str] = field(default_factory=Counter)
    judge_errors: int = 0
    claims: int = 0
    step_errors: list[StepError] = field(default_factory=list)
    pages: int = 0
    page_errors: int = 0
    waiting: int = 0
    """Requests waiting in a submitted batch (batch runs)."""
    phase: str = ""
    """What a batch run is doing: collecting, submitting, waiting, ingesting."""


@dataclass(frozen=True, slots=True)
class ScoreChange:
    system: str
    metric: str
    before: float | None
    after: float | None

    @property
    def delta(self) -> float | None:
        if self.before is None or self.after is None:
            return None
        return self.after - self.before


@dataclass(frozen=True, slots=True)
class JudgeResult:
    run_id: str
    status: str
    """``complete``; ``interrupted`` (stopped, or ctrl+c); ``failed`` (every model call of the
    run failed); ``waiting`` (a batch is submitted: resume later). A run that crashed raises,
    after being marked failed."""
    usage: dict[str, Any]
    """As stored with the run: the client's counts, tokens and cost, and the tally's."""
    changes: list[ScoreChange]
    """The judged framework's headline system scores (judge variant), before → after."""
    framework: str = DEFAULT_FRAMEWORK
    prompt_version: str = ""


def stamp() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def default_run_id(model: str) -> str:
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", model).strip("-")[:40] or "model"
    return f"judge-{datetime.now(UTC).strftime('%Y%m%d-%H%M%S')}-{slug}"


Write = Callable[[Callable[[sqlite3.Connection], Any]], Any]
"""Runs one write on the connection that owns the writing: ``write(lambda conn: ...)``.

The command line writes on its own connection; the workstation hands in its single writer
(:meth:`store.backend.workstation.Backend.call`), so a judge run it starts never writes past it."""


def direct(conn: sqlite3.Connection) -> Write:
    def write(action: Callable[[sqlite3.Connection], Any]) -> Any:
        return action(conn)

    return write


class _RoutedCache:
    """The response cache read on the judge's connection, written through ``write``."""

    def __init__(self, conn: sqlite3.Connection, write: Write) -> None:
        self.reads = SqliteJudgeCache(conn)
        self.write = write

    def get(self, key: str) -> CachedReply | None:
        return self.reads.get(key)

    def put(self, key: str, model: str, prompt_version: str, reply: CachedReply) -> None:
        self.write(lambda conn: SqliteJudgeCache(conn).put(key, model, prompt_version, reply))


class _PinnedPages:
    """The pages a run has seen, served again: a resumed or multi-pass (batch) run judges
    against exactly the text it first fetched, so its prompts, and cache keys, do not move."""

    def __init__(self, source: PageSource, known: Mapping[str, Page]) -> None:
        self.source = source
        self.known = dict(known)

    async def get(self, url: str) -> Page:
        page = self.known.get(url)
        if page is None:
            page = self.known[url] = await self.source.get(url)
        return page


def store_outcomes(conn: sqlite3.Connection) -> OutcomeSink:
    """The sink that writes each report's results through ``conn``."""

    def sink(report_id: int, run_row: int, outcome: ReportOutcome) -> None:
        write_outcome(conn, run_row, report_id, outcome)

    return sink


def store_pages(conn: sqlite3.Connection) -> PageSink:
    """The sink that records each fetched page through ``conn``."""

    def sink(suite_id: int, run_row: int | None, page: Page) -> None:
        record_page(conn, suite_id, run_row, page)

    return sink


def _run_params(prepared: PreparedJudge) -> dict[str, Any]:
    """Everything needed to carry the run on from another process (``resume_judge``)."""
    request, config = prepared.request, prepared.config
    return {
        **config.params(),
        "framework": request.framework,
        "base_url": public_url(request.base_url),
        "steps": sorted(prepared.options.steps),
        "sources": prepared.sources,
        "concurrency": config.concurrency,
        "today": prepared.options.today,
        "timeout": config.timeout,
        "max_retries": config.max_retries,
        "time_budget": config.time_budget,
        "max_reply_bytes": config.max_reply_bytes,
        "json_mode": config.json_mode,
        "use_cache": request.use_cache,
        "price": None if request.price is None else [request.price.input, request.price.output],
        "batch": request.batch,
        "reports": prepared.report_ids,
        "fetch": asdict(request.fetch),
    }


@dataclass(slots=True)
class _Context:
    """One process's share of a run: its client, tally and where things are written."""

    conn: sqlite3.Connection
    prepared: PreparedJudge
    run_id: str
    rows: dict[int, int]
    write: Write
    sink: OutcomeSink
    page_sink: PageSink
    progress: Callable[[JudgeTally], None] | None
    stop: threading.Event
    tally: JudgeTally
    client: ChatClient
    previous: RunUsage = field(default_factory=RunUsage)
    state: BatchState | None = None

    def report(self) -> None:
        if self.progress is not None:
            self.progress(self.tally)

    def done(self, lj: LoadedJob, outcome: ReportOutcome) -> None:
        self.sink(lj.report_id, self.rows[lj.suite_id], outcome)
        self.tally.finished.append(lj.report_id)
        if self.state is not None:
            self.state.finished.append(lj.report_id)
            if not outcome.judgments:
                # Resuming tells written reports by their verdicts; one without any is
                # recorded now, so it is never written twice.
                _save_state(self)
        self.tally.judgments.update(outcome.counts())
        self.tally.judge_errors += sum(1 for j in outcome.judgments if j.error is not None)
        self.tally.claims += len(outcome.claims)
        self.tally.step_errors.extend(outcome.errors)
        self.report()


def run_judge(
    conn: sqlite3.Connection,
    prepared: PreparedJudge,
    *,
    sink: OutcomeSink | None = None,
    page_sink: PageSink | None = None,
    progress: Callable[[JudgeTally], None] | None = None,
    stop: threading.Event | None = None,
    write: Write | None = None,
    wait: bool = True,
    poll_seconds: float = POLL_SECONDS,
) -> JudgeResult:
    """Create the run, judge every prepared report, finish the run.

    ``conn`` is read; every write (the run, each report's results, fetched pages, cached
    replies, heartbeats, the run's end) goes through ``write`` (default: ``conn`` itself).

    Blocks; runs its own event loop, so call it from a plain thread (a worker), not from
    inside one. ``progress`` sees the tally after each model call and each finished report.
    Setting ``stop`` (or ctrl+c, when called on the main thread) starts no further report
    and cancels the ones in flight; the result is then ``interrupted``. A batch run
    (``request.batch``) submits its requests and, unless ``wait`` is false, polls every
    ``poll_seconds`` until done; with ``wait`` false it returns ``waiting`` after submitting.
    """
    request = prepared.request
    assert request.model is not None, "prepare_judge checks the model"
    write = write or direct(conn)
    write(lambda c: mark_stale_runs(c))
    run_id = unique_run_id(conn, request.run_id or default_run_id(request.model))
    run = new_run(
        prepared.spec, run_id, request.model, _run_params(prepared), stamp(), request.description
    )
    rows: dict[int, int] = write(lambda c: create_run(c, prepared.suites, run))
    state = BatchState() if request.batch else None
    return _execute(
        conn,
        prepared,
        run_id,
        rows,
        write,
        sink,
        page_sink,
        progress,
        stop,
        state,
        RunUsage(),
        wait,
        poll_seconds,
    )


def resume_judge(
    conn: sqlite3.Connection,
    run: str,
    api_key: str | None,
    *,
    price: Price | None = None,
    progress: Callable[[JudgeTally], None] | None = None,
    stop: threading.Event | None = None,
    write: Write | None = None,
    wait: bool = True,
    poll_seconds: float = POLL_SECONDS,
    batch_dir: Path | None = None,
) -> JudgeResult:
    """Carry a batch run on: poll its open batch, ingest the replies, judge what they answer,
    submit the next round; until every report is written (or, ``wait`` false, the next batch
    is submitted). The run's own parameters are used (model, endpoint, steps, date, pages),
    so every prompt, and so every cache key, is the one the run started with."""
    write = write or direct(conn)
    write(lambda c: mark_stale_runs(c))
    rows = run_rows(conn, run)
    found = conn.execute(
        f"SELECT ext_id, model, params, usage FROM judge_run WHERE id IN "
        f"({','.join('?' * len(rows))}) ORDER BY id",
        rows,
    ).fetchone()
    ext, model, params_text, usage_text = found
    params = json.loads(params_text)
    usage = json.loads(usage_text)
    if not params.get("batch"):
        raise InputError(
            "command line",
            f"run {ext} was not a batch run; re-run it with "
            "`gavel judge` (every reply it received is cached)",
            field="RUN",
        )
    status = usage.get("status")
    if status in ("complete", "incomplete", "failed"):
        raise InputError("command line", f"run {ext} is already {status}", field="RUN")
    if status == "running":
        raise InputError(
            "command line",
            f"run {ext} is running in process {usage.get('pid')} on {usage.get('host')}",
            field="RUN",
        )
    stored_price = params.get("price")
    request = JudgeRequest(
        model=model,
        base_url=params.get("base_url") or DEFAULT_BASE_URL,
        framework=params.get("framework", DEFAULT_FRAMEWORK),
        selection=Selection(reports=[str(r) for r in params.get("reports", [])]),
        steps=frozenset(params.get("steps") or ()) or None,
        concurrency=int(params.get("concurrency", 4)),
        timeout=float(params.get("timeout", 120.0)),
        max_retries=int(params.get("max_retries", 4)),
        temperature=float(params.get("temperature", 0.0)),
        max_tokens=params.get("max_tokens"),
        json_mode=bool(params.get("json_mode")),
        price=price or (Price(*stored_price) if stored_price else None),
        sources=params.get("sources"),
        fetch=FetchConfig(**params.get("fetch", {})),
        use_cache=True,
        run_id=ext,
        today=params.get("today"),
        time_budget=params.get("time_budget"),
        max_reply_bytes=int(params.get("max_reply_bytes", 2_000_000)),
        batch=True,
        batch_dir=batch_dir,
    )
    prepared = prepare_judge(conn, request, api_key)
    state = BatchState.from_json(usage.get("batch"))
    written = {
        int(r)
        for (r,) in conn.execute(
            f"SELECT DISTINCT report_id FROM judgment WHERE run_id IN "
            f"({','.join('?' * len(rows))})",
            rows,
        )
    }
    state.finished = sorted(set(state.finished) | written)
    previous = RunUsage.from_json(usage)
    suite_of = {lj.suite_id for lj in prepared.loaded}
    by_suite = {
        int(s): int(r)
        for r, s in conn.execute(
            f"SELECT id, suite_id FROM judge_run WHERE id IN ({','.join('?' * len(rows))})", rows
        )
    }
    missing = suite_of - set(by_suite)
    if missing:
        raise InputError(
            "command line", f"run {ext} does not cover every suite it selects", field="RUN"
        )
    write(lambda c: _set_status(c, rows, "running", restart=True))
    return _execute(
        conn,
        prepared,
        ext,
        by_suite,
        write,
        None,
        None,
        progress,
        stop,
        state,
        previous,
        wait,
        poll_seconds,
    )


def _set_status(
    conn: sqlite3.Connection, rows: Sequence[int], status: str, *, restart: bool = False
) -> None:
    from store.runs.records import running_usage

    with transaction(conn):
        for row, usage in conn.execute(
            f"SELECT id, usage FROM judge_run WHERE id IN ({','.join('?' * len(rows))})", list(rows)
        ).fetchall():
            data = json.loads(usage)
            data.update(running_usage() if restart else {"status": status})
            conn.execute(
                "UPDATE judge_run SET usage = ? WHERE id = ?",
                (json.dumps(data, ensure_ascii=False, sort_keys=True), row),
            )


def _execute(
    conn: sqlite3.Connection,
    prepared: PreparedJudge,
    run_id: str,
    rows: dict[int, int],
    write: Write,
    sink: OutcomeSink | None,
    page_sink: PageSink | None,
    progress: Callable[[JudgeTally], None] | None,
    stop: threading.Event | None,
    state: BatchState | None,
    previous: RunUsage,
    wait: bool,
    poll_seconds: float,
) -> JudgeResult:
    request = prepared.request
    framework = request.framework
    sink = sink or (lambda rid, row, outcome: write(lambda c: write_outcome(c, row, rid, outcome)))
    page_sink = page_sink or (
        lambda sid, row, page: write(lambda c: record_page(c, sid, row, page))
    )
    stop = stop or threading.Event()
    before = system_headlines(conn, framework)
    tally = JudgeTally(selected=len(prepared.loaded))

    def on_request(cached: bool) -> None:
        if cached:
            tally.cache_hits += 1
        else:
            tally.requests += 1
        if progress is not None:
            progress(tally)

    client = ChatClient(
        prepared.config,
        prompt_version=prepared.spec.prompt_version,
        api_key=prepared.api_key,
        cache=_RoutedCache(conn, write) if request.use_cache else None,
        on_request=on_request,
    )
    ctx = _Context(
        conn,
        prepared,
        run_id,
        rows,
        write,
        sink,
        page_sink,
        progress,
        stop,
        tally,
        client,
        previous,
        state,
    )
    if state is not None:
        tally.finished.extend(state.finished)
    url_suites = cited_url_suites(conn, prepared.report_ids)
    pinned = _run_pages(conn, list(rows.values()))

    def on_fetch(page: Page) -> None:
        tally.pages += 1
        tally.page_errors += page.error is not None
        for suite_id in url_suites.get(page.url, prepared.suites[:1]):
            page_sink(suite_id, rows.get(suite_id), page)

    async def main() -> str:
        async with client:
            if prepared.sources == "fetch":
                async with PageFetcher(request.fetch, on_fetch=on_fetch) as fetcher:
                    return await _drive(ctx, _PinnedPages(fetcher, pinned), wait, poll_seconds)
            pages: PageSource | None = (
                MappingPages({**prepared.stored, **pinned})
                if prepared.sources == "stored"
                else None
            )
            return await _drive(ctx, pages, wait, poll_seconds)

    status = "complete"
    try:
        status = asyncio.run(main())
    except (KeyboardInterrupt, asyncio.CancelledError):
        status = "interrupted"
    except BatchApiError as exc:
        # The provider refused or dropped a files/batches call: nothing is lost (the state
        # is saved at every step), so the run is carried on later, not failed.
        tally.step_errors.append(StepError("-", "batch", "api", str(exc)))
        status = "interrupted"
    except BaseException:
        # Keep what finished and say the run failed; the error still reaches the caller.
        _finish(ctx, "failed")
        raise
    if stop.is_set() and status not in ("complete", "waiting"):
        status = "interrupted"
    if status == "complete":
        status = _completed_status(ctx, previous)
    usage = _finish(ctx, status)
    after = system_headlines(conn, framework)
    changes = [
        ScoreChange(system, metric, before.get((system, metric)), value)
        for (system, metric), value in sorted(after.items())
    ]
    return JudgeResult(run_id, status, usage, changes, framework, prepared.spec.prompt_version)


def _completed_status(ctx: _Context, previous: RunUsage) -> str:
    """What a run that went through every report is called: failed when no call was
    answered, incomplete when some verdict or step failed, else complete."""
    if _all_calls_failed(ctx.client.usage, previous):
        return "failed"
    return "incomplete" if _not_all_judged(ctx) else "complete"


def _not_all_judged(ctx: _Context) -> bool:
    """Some report was not judged in full: a step failed, or a verdict is a judge error.
    Such a run is never called complete."""
    if ctx.tally.step_errors:
        return True
    return _stored_counts(ctx.conn, list(ctx.rows.values()))[1] > 0


def _all_calls_failed(usage: RunUsage, previous: RunUsage) -> bool:
    """Every model call of the run failed: nothing answered, from the model or the cache."""
    errors = usage.errors + previous.errors
    good = usage.answered + usage.cache_hits + previous.answered + previous.cache_hits
    return errors > 0 and good == 0


def _run_pages(conn: sqlite3.Connection, rows: Sequence[int]) -> dict[str, Page]:
    """The pages this run fetched so far (the first fetch of each URL)."""
    out: dict[str, Page] = {}
    if not rows:
        return out
    for url, final, fetched, status, ctype, title, text, sha, error in conn.execute(
        f"""SELECT url, final_url, fetched_at, status, content_type, title, text, sha256, error
            FROM page_fetch WHERE run_id IN ({",".join("?" * len(rows))})
            ORDER BY id""",
        list(rows),
    ):
        out.setdefault(
            url,
            Page(
                url=url,
                text=text,
                sha256=sha,
                error=error,
                title=title,
                final_url=final,
                status=status,
                content_type=ctype,
                fetched_at=fetched,
            ),
        )
    return out


def _finish(ctx: _Context, status: str) -> dict[str, Any]:
    client, tally = ctx.client, ctx.tally
    usage_counts = RunUsage.from_json(asdict(ctx.previous))
    usage_counts.merge(client.usage)
    usage = usage_counts.to_json(client.price)
    rows = list(ctx.rows.values())
    counts = _stored_counts(ctx.conn, rows)
    finished = sorted(set(tally.finished))
    usage.update(
        status=status,
        framework=ctx.prepared.request.framework,
        reports=len(finished),
        reports_selected=tally.selected,
        judgments=counts[0],
        judge_errors=counts[1],
        claims=counts[2],
        pages=tally.pages,
        page_errors=tally.page_errors,
        step_errors=[
            {
                "report": e.report,
                "step": e.step,
                "subject": e.subject,
                "error": client.redact(e.error),
            }
            for e in tally.step_errors[:ERRORS_KEPT]
        ],
        step_errors_total=len(tally.step_errors),
    )
    if ctx.state is not None:
        usage["batch"] = ctx.state.to_json()
    write_usage: dict[str, Any] = usage
    ctx.write(lambda c: finish_run(c, rows, write_usage, finished))
    return usage


def _stored_counts(
    conn: sqlite3.Connection, rows: Sequence[int]
) -> tuple[dict[str, int], int, int]:
    """(verdicts per kind, errored verdicts, claims) the run has written, from the database
    (so a run carried on by several processes counts everything once)."""
    if not rows:
        return {}, 0, 0
    marks = ",".join("?" * len(rows))
    kinds: dict[str, int] = {}
    errors = 0
    for kind, count, failed in conn.execute(
        f"SELECT kind, count(*), count(error) FROM judgment WHERE run_id IN ({marks}) "
        "GROUP BY kind",
        list(rows),
    ):
        kinds[kind] = count
        errors += failed
    ext = conn.execute(
        f"SELECT ext_id FROM judge_run WHERE id IN ({marks}) LIMIT 1", list(rows)
    ).fetchone()
    claims = 0
    if ext is not None:
        from reviewer.models import RUN_CLAIM_KEY

        claims = int(
            conn.execute(
                f"SELECT count(*) FROM claim WHERE json_extract(metadata, '$.{RUN_CLAIM_KEY}') = ?",
                (ext[0],),
            ).fetchone()[0]
        )
    return kinds, errors, claims


async def _watch(ctx: _Context) -> None:
    """Stop (set from another thread) reaches the loop; the heartbeat says the run lives."""
    beat = 0.0
    rows = list(ctx.rows.values())
    while not ctx.stop.is_set():
        await asyncio.sleep(0.2)
        beat += 0.2
        if beat >= HEARTBEAT_SECONDS:
            beat = 0.0
            with contextlib.suppress(Exception):
                ctx.write(lambda c: heartbeat(c, rows))


async def _drive(ctx: _Context, pages: PageSource | None, wait: bool, poll_seconds: float) -> str:
    """Run the pipeline until done or stopped: no new report starts, the ones in flight are
    cancelled, the finished ones are already stored. Returns the run's status."""
    loop = asyncio.get_running_loop()
    main_task = asyncio.current_task()

    def cancel() -> None:
        ctx.stop.set()
        if main_task is not None:
            main_task.cancel()

    async def watch() -> None:
        await _watch(ctx)
        cancel()

    # Not available off the main thread or on Windows: then ctrl+c is asyncio.run's own.
    unsupported = (NotImplementedError, RuntimeError, ValueError)
    with contextlib.suppress(*unsupported):
        loop.add_signal_handler(signal.SIGINT, cancel)
    watcher = asyncio.create_task(watch())
    try:
        if ctx.state is None:
            await _direct(ctx, pages)
            return "complete"
        return await _batched(ctx, pages, wait, poll_seconds)
    finally:
        watcher.cancel()
        with contextlib.suppress(*unsupported):
            loop.remove_signal_handler(signal.SIGINT)


async def _direct(ctx: _Context, pages: PageSource | None) -> None:
    prepared = ctx.prepared
    pipeline = prepared.spec.build(ctx.client, pages, ctx.run_id, prepared.options)
    by_job = {id(lj.job): lj for lj in prepared.loaded}
    await drive(
        pipeline,
        (lj.job for lj in prepared.loaded),
        lambda job, outcome: ctx.done(by_job[id(job)], outcome),
        workers=prepared.config.concurrency,
        stopped=ctx.stop.is_set,
    )


# -- batch runs -----------------------------------------------------------------------------------


async def _batched(ctx: _Context, pages: PageSource | None, wait: bool, poll_seconds: float) -> str:
    """Rounds of: wait for the open batch, ingest it, a pass over the unfinished reports, and
    submit what the pass could not answer from the cache."""
    state = ctx.state
    assert state is not None
    prepared = ctx.prepared
    api = BatchApi(prepared.config, prepared.api_key)
    try:
        while True:
            while (batch := state.open) is not None:  # every batch of the round first
                if not batch.get("id") and not batch.get("input_file_id"):
                    _abandon(state, batch)  # died before uploading: collect it again
                    _save_state(ctx)
                    continue
                ended = await _await_batch(ctx, api, batch, wait, poll_seconds)
                if ended is None:
                    return "interrupted" if ctx.stop.is_set() else "waiting"
                ctx.tally.phase = "ingesting"
                ctx.report()
                output = await api.download(ended.get("output_file_id"))
                errors = await api.download(ended.get("error_file_id"))
                got = ingest(state, ctx.client, output, errors, ended)
                ended.update(
                    answered=got.answered,
                    invalid=got.invalid,
                    retried=got.retried,
                    failed=got.failed,
                )
                _save_state(ctx)
            requests = await _pass(ctx, pages)
            if ctx.stop.is_set():
                return "interrupted"
            if not requests:
                return "complete"
            await _submit(ctx, api, requests)
            if not wait:
                return "waiting"
    finally:
        await api.close()


async def _pass(ctx: _Context, pages: PageSource | None) -> list[Any]:
    """Judge every unfinished report from the cache; write those that needed nothing else;
    return the requests the others are waiting for."""
    state = ctx.state
    assert state is not None
    prepared = ctx.prepared
    ctx.tally.phase = "collecting"
    ctx.report()
    collector = BatchCollector(ctx.client, state)
    pipeline: JudgePipeline = prepared.spec.build(collector, pages, ctx.run_id, prepared.options)
    done = set(state.finished)
    todo = [lj for lj in prepared.loaded if lj.report_id not in done]
    by_job = {id(lj.job): lj for lj in todo}

    def on_done(job: JudgeJob, outcome: ReportOutcome) -> None:
        if job.report.id in collector.deferred:
            return  # something still waits in a batch: judge it again next pass
        ctx.done(by_job[id(job)], outcome)

    await drive(
        _ReportScoped(pipeline),
        (lj.job for lj in todo),
        on_done,
        workers=prepared.config.concurrency,
        stopped=ctx.stop.is_set,
    )
    _save_state(ctx)
    return list(collector.requests.values())


class _ReportScoped:
    """Runs each report's judging with the batch collector told which report it is for."""

    def __init__(self, inner: JudgePipeline) -> None:
        self.inner = inner

    async def judge(self, job: JudgeJob) -> ReportOutcome:
        token = current_report.set(job.report.id)
        try:
            return await self.inner.judge(job)
        finally:
            current_report.reset(token)

    def plan(self, job: JudgeJob, known_pages: Mapping[str, Page] | None = None) -> Any:
        return self.inner.plan(job, known_pages)


async def _submit(ctx: _Context, api: BatchApi, requests: list[Any]) -> None:
    """Write the round's batch file(s), upload, create each batch; the state is saved after
    each step, so a crash in between never submits the same requests twice. A round beyond
    the provider's limits on one batch goes in several."""
    state = ctx.state
    assert state is not None
    state.round += 1
    parts = split_round(requests)
    entries: list[tuple[dict[str, Any], list[Any]]] = []
    for part, chunk in enumerate(parts, 1):
        entry: dict[str, Any] = {
            "round": state.round,
            "part": part,
            "requests": len(chunk),
            "submitted_at": stamp(),
        }
        remember(state, chunk, batch_name(entry))
        state.batches.append(entry)
        entries.append((entry, chunk))
    _save_state(ctx)
    ctx.tally.phase = "submitting"
    ctx.tally.waiting = len(requests)
    ctx.report()
    folder = ctx.prepared.request.batch_dir
    for entry, chunk in entries:
        data = batch_file(chunk)
        suffix = f"-part{entry['part']}" if len(parts) > 1 else ""
        name = f"gavel-{_slug(ctx.run_id)}-round{state.round}{suffix}.jsonl"
        if folder is not None:
            folder.mkdir(parents=True, exist_ok=True)
            partial = folder / (name + ".part")
            partial.write_bytes(data)
            partial.replace(folder / name)
            entry["file"] = str(folder / name)
        entry["input_file_id"] = await api.upload(data, name)
        _save_state(ctx)
        created = await api.create(entry["input_file_id"], _metadata(ctx, entry))
        entry.update(id=created["id"], status=created["status"])
        _save_state(ctx)


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-") or "run"


def _metadata(ctx: _Context, batch: dict[str, Any]) -> dict[str, str]:
    return {"gavel_run": ctx.run_id[:64], "gavel_batch": batch_name(batch)}


async def _await_batch(
    ctx: _Context, api: BatchApi, batch: dict[str, Any], wait: bool, poll_seconds: float
) -> dict[str, Any] | None:
    """The open batch once it has ended (completed, expired, failed, cancelled); None when
    not waiting and it has not ended yet."""
    state = ctx.state
    assert state is not None
    if not batch.get("id"):
        # The process died between upload and creation: find the batch, else create it.
        found = await api.find(_metadata(ctx, batch))
        if found is None:
            found = await api.create(batch["input_file_id"], _metadata(ctx, batch))
        batch.update(id=found["id"], status=found["status"])
        _save_state(ctx)
    ctx.tally.waiting = sum(
        1
        for item in state.waiting.values()
        if item.get("batch", batch_name(batch)) == batch_name(batch)
    )
    while True:
        current = await api.retrieve(batch["id"])
        batch.update(
            status=current["status"],
            counts=current.get("counts", {}),
            output_file_id=current.get("output_file_id"),
            error_file_id=current.get("error_file_id"),
        )
        ctx.tally.phase = f"batch {current['status']}"
        ctx.report()
        if current["status"] in ("completed", "failed", "expired", "cancelled"):
            batch["ended_at"] = stamp()
            _save_state(ctx)
            return batch
        if not wait:
            _save_state(ctx)
            return None
        await _sleep_unless(ctx.stop, poll_seconds)
        if ctx.stop.is_set():
            return None


def _abandon(state: BatchState, batch: dict[str, Any]) -> None:
    """A batch recorded but never uploaded (the process died in between): nothing was sent,
    so its requests are forgotten and the next pass collects them again."""
    name = batch_name(batch)
    mine = [cid for cid, item in state.waiting.items() if item.get("batch", name) == name]
    for custom_id in mine:
        state.attempts[custom_id] = max(0, state.attempts.get(custom_id, 1) - 1)
        del state.waiting[custom_id]
    state.submitted_requests -= len(mine)
    batch.update(ingested=True, status="abandoned")


async def _sleep_unless(stop: threading.Event, seconds: float) -> None:
    end = asyncio.get_running_loop().time() + seconds
    while not stop.is_set():
        left = end - asyncio.get_running_loop().time()
        if left <= 0:
            return
        await asyncio.sleep(min(0.2, left))


def _save_state(ctx: _Context) -> None:
    """The batch state into the run's usage (every step: a crash loses nothing)."""
    state = ctx.state
    assert state is not None
    data = state.to_json()
    rows = list(ctx.rows.values())

    def save(conn: sqlite3.Connection) -> None:
        with transaction(conn):
            for row, usage in conn.execute(
                f"SELECT id, usage FROM judge_run WHERE id IN ({','.join('?' * len(rows))})", rows
            ).fetchall():
                current = json.loads(usage)
                current["batch"] = data
                conn.execute(
                    "UPDATE judge_run SET usage = ? WHERE id = ?",
                    (json.dumps(current, ensure_ascii=False, sort_keys=True), row),
                )

    ctx.write(save)


def system_headlines(conn: sqlite3.Connection, framework: str = DEFAULT_FRAMEWORK) -> Headlines:
    """The judged framework's headline metrics per system, judge variant."""
    fw = frameworks().get(framework)
    heads = [m.name for m in fw.metrics if m.headline] if fw else []
    if not heads:
        return {}
    return {
        (system, metric): value
        for system, metric, value in conn.execute(
            f"""SELECT y.ext_id, s.metric, s.value FROM score s
            JOIN system y ON s.scope = 'system:' || y.id
            WHERE s.framework = ? AND s.variant = 'judge'
              AND s.metric IN ({",".join("?" * len(heads))})""",
            [framework, *heads],
        )
    }


# -- fetching cited pages -------------------------------------------------------------------------


def cited_url_suites(conn: sqlite3.Connection, report_ids: Sequence[int]) -> dict[str, list[int]]:
    """URL -> the suites whose selected reports cite it (a page is recorded per suite)."""
    out: dict[str, list[int]] = defaultdict(list)
    for suite_id, url in cited_urls(conn, report_ids):
        out[url].append(suite_id)
    return dict(out)


@dataclass(frozen=True, slots=True)
class FetchResult:
    pages: list[Page]
    """Every page fetched, by URL."""
    interrupted: bool


def fetch_pages(
    conn: sqlite3.Connection,
    urls: dict[str, list[int]],
    config: FetchConfig,
    *,
    sink: PageSink | None = None,
    progress: Callable[[int], None] | None = None,
) -> FetchResult:
    """Fetch each URL once and record it for every suite citing it (see
    :func:`cited_url_suites`); ``progress`` sees the number fetched so far. ctrl+c stops it,
    keeping what was fetched. Blocks, like :func:`run_judge`."""
    sink = sink or store_pages(conn)
    pages: list[Page] = []

    def on_fetch(page: Page) -> None:
        pages.append(page)
        for suite_id in urls[page.url]:
            sink(suite_id, None, page)
        if progress is not None:
            progress(len(pages))

    async def main() -> None:
        async with PageFetcher(config, on_fetch=on_fetch) as fetcher:
            await asyncio.gather(*(fetcher.get(url) for url in urls))

    interrupted = False
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        interrupted = True
    return FetchResult(sorted(pages, key=lambda p: p.url), interrupted)
