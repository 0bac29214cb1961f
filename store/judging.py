"""A judge run from request to stored run, and fetching cited pages, for every interface.

One lifecycle for every interface that judges: :func:`prepare_judge` checks the request and
loads what is to be judged, :func:`plan_judge` says what a run would send (a dry run, as data),
and :func:`run_judge` creates the run, judges, hands each finished report to a *sink* and
finishes the run. The sink decides how a report's results are written: ``gavel judge`` stores
them on its own connection (the default); a caller with a single writer thread (the
workstation) hands in a sink that submits them there. Either way a report's results are written
whole, at once, so a run stopped half-way keeps every report it finished. The run's own rows
(created, finished with its usage and status), the response cache and, unless a page sink says
otherwise, fetched pages are written through the connection handed in.

The judging itself is DailyReport's pipeline (the only one Gavel has); runs never overwrite
one another, see :mod:`store.runs`.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import signal
import sqlite3
import threading
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

from reviewer.errors import InputError
from reviewer.frameworks.dailyreport.judge_pipeline import (
    FRAMEWORK,
    STEPS,
    JudgeJob,
    Pipeline,
    PipelineOptions,
    ReportOutcome,
    StepError,
    new_run,
)
from reviewer.frameworks.dailyreport.judge_prompts import PROMPT_VERSION
from reviewer.judge.cache import CachedReply
from reviewer.judge.client import ChatClient, ClientConfig, public_url
from reviewer.judge.costs import Price, price_for
from reviewer.judge.fetch import FetchConfig, MappingPages, Page, PageFetcher, PageSource
from reviewer.registry import frameworks
from store.runs import (
    LoadedJob,
    SqliteJudgeCache,
    cited_urls,
    create_run,
    finish_run,
    load_jobs,
    record_page,
    select_reports,
    stored_pages,
    unique_run_id,
    write_outcome,
)
from store.scores import ensure_scores

DEFAULT_BASE_URL = "https://api.openai.com/v1"
LOCAL_HOSTS = frozenset({"localhost", "127.0.0.1", "::1", "0.0.0.0"})
ERRORS_KEPT = 200
"""Step errors kept in a run's usage record (the rest are counted)."""

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


def selected_reports(conn: sqlite3.Connection, selection: Selection) -> list[int]:
    """The selected DailyReport report ids; a name that matches nothing is an error."""
    if selection.limit is not None and selection.limit < 1:
        raise InputError("command line", "--limit must be at least 1", field="--limit")
    return select_reports(conn, reports=selection.reports, systems=selection.systems,
                          tasks=selection.tasks, framework=FRAMEWORK, limit=selection.limit)


def parse_price(text: str | None) -> Price | None:
    """``IN,OUT`` US dollars per million tokens, or None for the built-in table."""
    if text is None:
        return None
    try:
        low, high = (float(x) for x in text.split(","))
    except ValueError:
        raise InputError("command line", "--price takes IN,OUT, e.g. 0.15,0.60",
                         field="--price") from None
    return Price(low, high)


# -- the request ----------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class JudgeRequest:
    """Everything a judge run needs besides the database and the API key. ``sources`` is
    ``fetch`` (fetch the cited pages now) or ``stored`` (the newest fetched, else the bundle's
    sources)."""

    model: str | None
    base_url: str = DEFAULT_BASE_URL
    selection: Selection = field(default_factory=Selection)
    steps: frozenset[str] = frozenset(STEPS)
    concurrency: int = 4
    timeout: float = 120.0
    max_retries: int = 4
    temperature: float = 0.0
    max_tokens: int | None = None
    json_mode: bool = False
    price: Price | None = None
    sources: str = "fetch"
    fetch: FetchConfig = field(default_factory=FetchConfig)
    use_cache: bool = True
    run_id: str | None = None
    description: str = ""
    today: str | None = None
    """The judge's current date for tasks without ``cur_date`` (default: today, UTC)."""


@dataclass(frozen=True, slots=True)
class PreparedJudge:
    """A checked request and the jobs it selects (none: nothing matched)."""

    request: JudgeRequest
    config: ClientConfig
    options: PipelineOptions
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


def check_request(request: JudgeRequest) -> None:
    """Raise :class:`InputError` naming the field at fault (before anything is opened)."""
    if not request.model:
        raise InputError("command line", "name the model: --model NAME (or set GAVEL_MODEL)",
                         field="--model")
    base = urlsplit(request.base_url)
    if base.scheme not in ("http", "https") or not base.hostname:
        raise InputError("command line", f"--base-url must be an http(s) URL, got "
                         f"{public_url(request.base_url)!r}", field="--base-url")
    unknown = sorted(request.steps - set(STEPS))
    if unknown or not request.steps:
        raise InputError("command line", f"unknown step(s) {', '.join(unknown) or '(none)'}; "
                         f"choose from {', '.join(STEPS)}", field="--only")


def prepare_judge(conn: sqlite3.Connection, request: JudgeRequest,
                  api_key: str | None) -> PreparedJudge:
    """Check the request, select and load the reports. The key is handed in, never read here
    (see :func:`reviewer.judge.client.api_key_from_env`)."""
    check_request(request)
    ensure_scores(conn)
    ids = selected_reports(conn, request.selection)
    loaded = load_jobs(conn, ids) if ids else []
    config = ClientConfig(
        base_url=request.base_url, model=request.model or "",
        concurrency=max(1, request.concurrency), timeout=request.timeout,
        max_retries=max(0, request.max_retries), temperature=request.temperature,
        max_tokens=request.max_tokens, json_mode=request.json_mode, price=request.price)
    today = request.today or datetime.now(UTC).date().isoformat()
    suites = sorted({lj.suite_id for lj in loaded})
    stored = stored_pages(conn, suites) if request.sources == "stored" and suites else {}
    return PreparedJudge(request, config, PipelineOptions(steps=request.steps, today=today),
                         api_key, loaded, suites, stored)


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
    """What a run would send, estimated (about 4 characters a token; claim-matching calls
    depend on what extraction finds and are not counted)."""

    reports: int
    steps: list[StepPlan]
    input_tokens: int
    output_tokens: int
    cost: float | None
    """US dollars for the calls the cache cannot answer; None without a price."""


def plan_judge(conn: sqlite3.Connection, prepared: PreparedJudge) -> JudgePlan:
    """The calls :func:`run_judge` would make, per step, sending nothing."""
    client = ChatClient(prepared.config, prompt_version=PROMPT_VERSION,
                        cache=_cache(conn, prepared))
    pipeline = Pipeline(client, None, "dry-run", prepared.options)
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
        reports=len(prepared.loaded), steps=rows,
        input_tokens=sum(r.input_tokens for r in rows),
        output_tokens=sum(r.output_tokens for r in rows),
        cost=None if price is None else price.cost(uncached_in, uncached_out))


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
    """``complete`` or ``interrupted`` (a failed run raises, after being marked failed)."""
    usage: dict[str, Any]
    """As stored with the run: the client's counts, tokens and cost, and the tally's."""
    changes: list[ScoreChange]
    """The judged framework's headline system scores (judge variant), before → after."""


def stamp() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def default_run_id(model: str) -> str:
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", model).strip("-")[:40] or "model"
    return f"judge-{datetime.now(UTC).strftime('%Y%m%d-%H%M%S')}-{slug}"


Write = Callable[[Callable[[sqlite3.Connection], Any]], Any]
"""Runs one write on the connection that owns the writing: ``write(lambda conn: ...)``.

The command line writes on its own connection; the workstation hands in its single writer
(:meth:`store.backend.Backend.call`), so a judge run it starts never writes past it."""


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


def run_judge(
    conn: sqlite3.Connection,
    prepared: PreparedJudge,
    *,
    sink: OutcomeSink | None = None,
    page_sink: PageSink | None = None,
    progress: Callable[[JudgeTally], None] | None = None,
    stop: threading.Event | None = None,
    write: Write | None = None,
) -> JudgeResult:
    """Create the run, judge every prepared report, finish the run.

    ``conn`` is read; every write (the run, each report's results, fetched pages, cached
    replies, the run's end) goes through ``write`` (default: ``conn`` itself).

    Blocks; runs its own event loop, so call it from a plain thread (a worker), not from
    inside one. ``progress`` sees the tally after each model call and each finished report.
    Setting ``stop`` (or ctrl+c, when called on the main thread) starts no further report
    and cancels the ones in flight; the result is then ``interrupted``.
    """
    request = prepared.request
    assert request.model is not None, "prepare_judge checks the model"
    write = write or direct(conn)
    sink = sink or (lambda rid, row, outcome: write(
        lambda c: write_outcome(c, row, rid, outcome)))
    page_sink = page_sink or (lambda sid, row, page: write(
        lambda c: record_page(c, sid, row, page)))
    stop = stop or threading.Event()
    before = system_headlines(conn)
    run_id = unique_run_id(conn, request.run_id or default_run_id(request.model))
    config = prepared.config
    params = {**config.params(), "base_url": public_url(request.base_url),
              "steps": sorted(prepared.options.steps), "sources": request.sources,
              "concurrency": config.concurrency, "today": prepared.options.today}
    run = new_run(run_id, request.model, params, stamp(), request.description)
    rows: dict[int, int] = write(lambda c: create_run(c, prepared.suites, run))
    tally = JudgeTally(selected=len(prepared.loaded))

    def report() -> None:
        if progress is not None:
            progress(tally)

    def on_request(cached: bool) -> None:
        if cached:
            tally.cache_hits += 1
        else:
            tally.requests += 1
        report()

    client = ChatClient(config, prompt_version=PROMPT_VERSION, api_key=prepared.api_key,
                        cache=_RoutedCache(conn, write) if request.use_cache else None,
                        on_request=on_request)
    by_job = {id(lj.job): lj for lj in prepared.loaded}

    def on_done(job: JudgeJob, outcome: ReportOutcome) -> None:
        lj = by_job[id(job)]
        sink(lj.report_id, rows[lj.suite_id], outcome)
        tally.finished.append(lj.report_id)
        tally.judgments.update(outcome.counts())
        tally.judge_errors += sum(1 for j in outcome.judgments if j.error is not None)
        tally.claims += len(outcome.claims)
        tally.step_errors.extend(outcome.errors)
        report()

    url_suites = cited_url_suites(conn, prepared.report_ids)

    def on_fetch(page: Page) -> None:
        tally.pages += 1
        tally.page_errors += page.error is not None
        for suite_id in url_suites.get(page.url, prepared.suites[:1]):
            page_sink(suite_id, rows.get(suite_id), page)

    async def main() -> None:
        async with client:
            if request.sources == "stored":
                await _drive(client, MappingPages(prepared.stored), run_id, prepared, on_done,
                             stop)
            else:
                async with PageFetcher(request.fetch, on_fetch=on_fetch) as fetcher:
                    await _drive(client, fetcher, run_id, prepared, on_done, stop)

    status = "complete"
    try:
        asyncio.run(main())
    except (KeyboardInterrupt, asyncio.CancelledError):
        status = "interrupted"
    except BaseException:
        # Keep what finished and say the run failed; the error still reaches the caller.
        _finish(write, client, rows, tally, "failed")
        raise
    if stop.is_set():
        status = "interrupted"
    usage = _finish(write, client, rows, tally, status)
    after = system_headlines(conn)
    changes = [ScoreChange(system, metric, before.get((system, metric)), value)
               for (system, metric), value in sorted(after.items())]
    return JudgeResult(run_id, status, usage, changes)


def _finish(write: Write, client: ChatClient, rows: dict[int, int],
            tally: JudgeTally, status: str) -> dict[str, Any]:
    usage = client.usage.to_json(client.price)
    usage.update(
        status=status,
        reports=len(tally.finished), reports_selected=tally.selected,
        judgments=dict(tally.judgments), judge_errors=tally.judge_errors,
        claims=tally.claims, pages=tally.pages, page_errors=tally.page_errors,
        step_errors=[{"report": e.report, "step": e.step, "subject": e.subject,
                      "error": client.redact(e.error)} for e in tally.step_errors[:ERRORS_KEPT]],
        step_errors_total=len(tally.step_errors))
    write(lambda c: finish_run(c, rows.values(), usage, tally.finished))
    return usage


async def _drive(client: ChatClient, pages: PageSource, run_id: str, prepared: PreparedJudge,
                 on_done: Callable[[JudgeJob, ReportOutcome], None],
                 stop: threading.Event) -> None:
    """Run the pipeline until done or stopped: no new report starts, the ones in flight are
    cancelled, the finished ones are already stored."""
    pipeline = Pipeline(client, pages, run_id, prepared.options)
    loop = asyncio.get_running_loop()
    main_task = asyncio.current_task()

    def cancel() -> None:
        stop.set()
        if main_task is not None:
            main_task.cancel()

    async def watch() -> None:
        # A stop set from another thread (the workstation's cancel) reaches the loop here.
        while not stop.is_set():
            await asyncio.sleep(0.2)
        cancel()

    # Not available off the main thread or on Windows: then ctrl+c is asyncio.run's own.
    unsupported = (NotImplementedError, RuntimeError, ValueError)
    with contextlib.suppress(*unsupported):
        loop.add_signal_handler(signal.SIGINT, cancel)
    watcher = asyncio.create_task(watch())
    try:
        await pipeline.run((lj.job for lj in prepared.loaded), on_done,
                           workers=prepared.config.concurrency, stopped=stop.is_set)
    finally:
        watcher.cancel()
        with contextlib.suppress(*unsupported):
            loop.remove_signal_handler(signal.SIGINT)


def system_headlines(conn: sqlite3.Connection) -> Headlines:
    """The judged framework's headline metrics per system, judge variant."""
    fw = frameworks().get(FRAMEWORK)
    heads = [m.name for m in fw.metrics if m.headline] if fw else []
    if not heads:
        return {}
    return {(system, metric): value for system, metric, value in conn.execute(
        f"""SELECT y.ext_id, s.metric, s.value FROM score s
            JOIN system y ON s.scope = 'system:' || y.id
            WHERE s.framework = ? AND s.variant = 'judge'
              AND s.metric IN ({','.join('?' * len(heads))})""", [FRAMEWORK, *heads])}


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
