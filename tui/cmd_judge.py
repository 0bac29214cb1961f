"""Subcommands that run the LLM judge and compare its runs: judge, fetch, runs, compare.

``gavel judge`` re-judges selected reports against any OpenAI-compatible endpoint and stores the
result as a new judge run (never overwriting another); ``gavel fetch`` fetches the pages reports
cite; ``gavel runs`` lists runs and switches which ones count; ``gavel compare`` shows verdict
agreement and score differences between runs, and the spread of scores over repeated runs.
The API key is read from ``GAVEL_API_KEY`` or ``OPENAI_API_KEY`` and nowhere else.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import re
import signal
import sqlite3
import sys
import threading
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from reviewer.errors import InputError
from reviewer.frameworks.dailyreport.judge_pipeline import (
    STEPS,
    JudgeJob,
    Pipeline,
    PipelineOptions,
    ReportOutcome,
    StepError,
    new_run,
)
from reviewer.frameworks.dailyreport.judge_prompts import PROMPT_VERSION
from reviewer.judge.client import (
    ENV_KEYS,
    ChatClient,
    ClientConfig,
    api_key_from_env,
    public_url,
)
from reviewer.judge.compare import (
    DEFAULT_STD,
    STD_CHOICES,
    ItemVerdict,
    agreement_by_kind,
    mean_sd,
)
from reviewer.judge.costs import Price, price_for
from reviewer.judge.fetch import FetchConfig, MappingPages, Page, PageFetcher, PageSource
from reviewer.registry import frameworks
from store.runs import (
    LoadedJob,
    SqliteJudgeCache,
    cited_urls,
    create_run,
    finish_run,
    list_runs,
    load_jobs,
    record_page,
    run_report_ids,
    run_scores,
    run_verdicts,
    select_reports,
    set_active,
    stored_pages,
    unique_run_id,
    write_outcome,
)
from store.scores import ensure_scores
from tui.cmd_data import open_db
from tui.render import emit, fmt_delta, fmt_number

DEFAULT_BASE_URL = "https://api.openai.com/v1"
LOCAL_HOSTS = frozenset({"localhost", "127.0.0.1", "::1", "0.0.0.0"})
ERRORS_KEPT = 200
"""Step errors kept in a run's usage record (the rest are counted)."""


def register(sub: Any, parents: Any) -> None:
    db = parents.db

    p = sub.add_parser(
        "judge", parents=[db],
        help="re-judge reports with an OpenAI-compatible model (adds a new judge run)",
        description="Run the DailyReport judging pipeline (instruction following, claim "
        "extraction, claim-reference consistency, rationality) on the selected reports and "
        "store it as a new judge run. The API key comes from the environment ("
        + " or ".join(f"${name}" for name in ENV_KEYS)
        + "); none is sent when neither is set, for local servers.")
    _selection(p)
    p.add_argument("--only", default=",".join(STEPS), metavar="STEPS",
                   help=f"comma-separated steps out of {', '.join(STEPS)} (default: all)")
    p.add_argument("--base-url", default=os.environ.get("GAVEL_BASE_URL") or DEFAULT_BASE_URL,
                   help="OpenAI-compatible API root, e.g. http://localhost:8000/v1 "
                   "(default: $GAVEL_BASE_URL or the OpenAI API)")
    p.add_argument("--model", default=os.environ.get("GAVEL_MODEL"),
                   help="model name as the server knows it (default: $GAVEL_MODEL)")
    p.add_argument("--concurrency", type=int, default=4, help="requests in flight (default 4)")
    p.add_argument("--timeout", type=float, default=120.0,
                   help="seconds per request before it is retried (default 120)")
    p.add_argument("--max-retries", type=int, default=4,
                   help="retries on 429, 5xx, timeouts and dropped connections (default 4)")
    p.add_argument("--temperature", type=float, default=0.0)
    p.add_argument("--max-tokens", type=int, default=None, help="reply token limit")
    p.add_argument("--json-mode", action="store_true",
                   help="ask for response_format json_object (OpenAI, vLLM, llama.cpp)")
    p.add_argument("--price", default=None, metavar="IN,OUT",
                   help="US dollars per million input and output tokens (overrides the table)")
    p.add_argument("--sources", choices=("fetch", "stored"), default="fetch",
                   help="fetch cited pages now (default), or use pages already stored: the "
                   "newest `gavel fetch`, else the bundle's sources")
    _fetch_options(p)
    p.add_argument("--no-cache", action="store_true",
                   help="neither read nor write the response cache")
    p.add_argument("--run-id", default=None, help="id of the new run (default: judge-<time>)")
    p.add_argument("--description", default="", help="stored with the run")
    p.add_argument("--today", default=None,
                   help="the judge's current date for tasks without cur_date (default: today)")
    p.add_argument("--dry-run", action="store_true",
                   help="print the calls it would make with estimated tokens; send nothing")
    parents.fmt(p, "table", "json")
    p.set_defaults(handler=judge_cmd)

    p = sub.add_parser("fetch", parents=[db],
                       help="fetch the pages the selected reports cite (kept in page_fetch)")
    _selection(p)
    _fetch_options(p)
    parents.fmt(p, "table", "json", "csv")
    p.set_defaults(handler=fetch_cmd)

    p = sub.add_parser("runs", parents=[db],
                       help="list judge runs; --activate/--deactivate choose which ones count")
    group = p.add_mutually_exclusive_group()
    group.add_argument("--activate", metavar="RUN", default=None)
    group.add_argument("--deactivate", metavar="RUN", default=None)
    parents.fmt(p, "table", "json", "csv")
    p.set_defaults(handler=runs_cmd)

    p = sub.add_parser("compare", parents=[db],
                       help="verdict agreement and score differences between judge runs; "
                       "mean ± sd of system scores over runs")
    p.add_argument("runs", nargs="+", metavar="RUN", help="two or more judge run ids")
    p.add_argument("--metric", action="append", default=None,
                   help="system metric to compare (repeatable; default: headline metrics, "
                   "SubTaskPass and Refer_Claim_Consistency)")
    p.add_argument("--std", choices=tuple(STD_CHOICES), default=DEFAULT_STD,
                   help="sample (n-1, default) or population (n) standard deviation")
    p.add_argument("--variant", choices=("judge", "adjudicated"), default="judge",
                   help="score each run from its own values (default) or with human decisions")
    parents.fmt(p, "table", "json")
    p.set_defaults(handler=compare_cmd)


def _selection(p: argparse.ArgumentParser) -> None:
    p.add_argument("--report", action="append", default=[], help="report id (repeatable)")
    p.add_argument("--system", action="append", default=[], help="system id or name")
    p.add_argument("--task", action="append", default=[], help="task id (repeatable)")
    p.add_argument("--limit", type=int, default=None, metavar="N",
                   help="at most N reports (in import order)")


def _fetch_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--fetch-timeout", type=float, default=30.0,
                   help="seconds per page, redirects included (default 30)")
    p.add_argument("--max-page-bytes", type=int, default=5_000_000,
                   help="larger pages are recorded as too large (default 5,000,000)")
    p.add_argument("--max-redirects", type=int, default=5)
    p.add_argument("--per-host", type=int, default=2,
                   help="pages fetched from one host at a time (default 2)")
    p.add_argument("--fetch-concurrency", type=int, default=8,
                   help="pages fetched at a time (default 8)")


def _fetch_config(args: argparse.Namespace) -> FetchConfig:
    return FetchConfig(timeout=args.fetch_timeout, max_bytes=args.max_page_bytes,
                       max_redirects=args.max_redirects, per_host=args.per_host,
                       concurrency=args.fetch_concurrency)


def _select(conn: sqlite3.Connection, args: argparse.Namespace) -> list[int]:
    if args.limit is not None and args.limit < 1:
        raise InputError("command line", "--limit must be at least 1", field="--limit")
    return select_reports(conn, reports=args.report, systems=args.system, tasks=args.task,
                          limit=args.limit)


def _steps(text: str) -> frozenset[str]:
    steps = frozenset(s.strip() for s in text.split(",") if s.strip())
    unknown = sorted(steps - set(STEPS))
    if unknown or not steps:
        raise InputError("command line", f"unknown step(s) {', '.join(unknown) or '(none)'}; "
                         f"choose from {', '.join(STEPS)}", field="--only")
    return steps


def _price(text: str | None) -> Price | None:
    if text is None:
        return None
    try:
        low, high = (float(x) for x in text.split(","))
    except ValueError:
        raise InputError("command line", "--price takes IN,OUT, e.g. 0.15,0.60",
                         field="--price") from None
    return Price(low, high)


def _stamp() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def _compact_stamp() -> str:
    return datetime.now(UTC).strftime("%Y%m%d-%H%M%S")


def _console() -> Console:
    """Wide tables stay readable when piped (rich assumes 80 columns off a terminal)."""
    return Console() if sys.stdout.isatty() else Console(width=200)


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-")[:40] or "model"


# -- judge ----------------------------------------------------------------------------------------

@dataclass(slots=True)
class _Tally:
    """What the progress bar and the summary show, updated from callbacks."""

    requests: int = 0
    cache_hits: int = 0
    finished: list[int] = field(default_factory=list)
    judgments: Counter[str] = field(default_factory=Counter)
    judge_errors: int = 0
    claims: int = 0
    step_errors: list[StepError] = field(default_factory=list)
    pages: int = 0
    page_errors: int = 0

    def calls_text(self) -> str:
        return f"{self.requests} requests, {self.cache_hits} cached"


def judge_cmd(args: argparse.Namespace) -> int:
    if not args.model:
        raise InputError("command line", "name the model: --model NAME (or set GAVEL_MODEL)",
                         field="--model")
    base = urlsplit(args.base_url)
    if base.scheme not in ("http", "https") or not base.hostname:
        raise InputError("command line", f"--base-url must be an http(s) URL, got "
                         f"{public_url(args.base_url)!r}", field="--base-url")
    steps = _steps(args.only)
    conn = open_db(args)
    ensure_scores(conn)
    ids = _select(conn, args)
    if not ids:
        print("no DailyReport (cascade) reports match the selection", file=sys.stderr)
        return 1
    loaded = load_jobs(conn, ids)
    config = ClientConfig(
        base_url=args.base_url, model=args.model, concurrency=max(1, args.concurrency),
        timeout=args.timeout, max_retries=max(0, args.max_retries),
        temperature=args.temperature, max_tokens=args.max_tokens, json_mode=args.json_mode,
        price=_price(args.price))
    today = args.today or datetime.now(UTC).date().isoformat()
    options = PipelineOptions(steps=steps, today=today)
    suites = sorted({lj.suite_id for lj in loaded})
    stored = stored_pages(conn, suites) if args.sources == "stored" else {}
    cache = None if args.no_cache else SqliteJudgeCache(conn)
    api_key = api_key_from_env()
    if api_key is None and not args.dry_run and base.hostname not in LOCAL_HOSTS:
        print(f"gavel: no API key in {' or '.join('$' + k for k in ENV_KEYS)}; sending "
              f"requests to {base.hostname} without one", file=sys.stderr)
    if args.dry_run:
        client = ChatClient(config, prompt_version=PROMPT_VERSION, cache=cache)
        return _dry_run(args, loaded, Pipeline(client, None, "dry-run", options), stored,
                        price_for(config.model, config.price))
    before = _system_headlines(conn)
    run_id = unique_run_id(conn, args.run_id or f"judge-{_compact_stamp()}-{_slug(args.model)}")
    params = {**config.params(), "base_url": public_url(args.base_url), "steps": sorted(steps),
              "sources": args.sources, "concurrency": config.concurrency, "today": today}
    run = new_run(run_id, args.model, params, _stamp(), args.description)
    rows = create_run(conn, suites, run)
    tally = _Tally()
    console = Console(stderr=True)
    progress = Progress(
        TextColumn("[bold]judging"), BarColumn(), MofNCompleteColumn(), TextColumn("reports"),
        TimeElapsedColumn(), TextColumn("eta"), TimeRemainingColumn(),
        TextColumn("{task.fields[calls]}"), console=console)
    bar = progress.add_task("judging", total=len(loaded), calls=tally.calls_text())

    def on_request(cached: bool) -> None:
        if cached:
            tally.cache_hits += 1
        else:
            tally.requests += 1
        progress.update(bar, calls=tally.calls_text())

    client = ChatClient(config, prompt_version=PROMPT_VERSION, api_key=api_key, cache=cache,
                        on_request=on_request)
    by_job = {id(lj.job): lj for lj in loaded}

    def on_done(job: JudgeJob, outcome: ReportOutcome) -> None:
        lj = by_job[id(job)]
        write_outcome(conn, rows[lj.suite_id], lj.report_id, outcome)
        tally.finished.append(lj.report_id)
        tally.judgments.update(outcome.counts())
        tally.judge_errors += sum(1 for j in outcome.judgments if j.error is not None)
        tally.claims += len(outcome.claims)
        tally.step_errors.extend(outcome.errors)
        progress.advance(bar)

    url_suites: dict[str, list[int]] = defaultdict(list)
    for suite_id, url in cited_urls(conn, ids):
        url_suites[url].append(suite_id)

    def on_fetch(page: Page) -> None:
        tally.pages += 1
        tally.page_errors += page.error is not None
        for suite_id in url_suites.get(page.url, suites[:1]):
            record_page(conn, suite_id, rows.get(suite_id), page)

    async def main() -> None:
        async with client:
            if args.sources == "stored":
                await _drive(client, MappingPages(stored), run_id, options, loaded, on_done,
                             config.concurrency)
            else:
                async with PageFetcher(_fetch_config(args), on_fetch=on_fetch) as fetcher:
                    await _drive(client, fetcher, run_id, options, loaded, on_done,
                                 config.concurrency)

    status = "complete"
    _INTERRUPTED.clear()
    try:
        with progress:
            asyncio.run(main())
    except (KeyboardInterrupt, asyncio.CancelledError):
        status = "interrupted"
    except BaseException:
        # Keep what finished and say the run failed; the traceback still reaches the user.
        _finish(conn, client, rows, tally, loaded, "failed")
        raise
    if _INTERRUPTED.is_set():
        status = "interrupted"
    usage = _finish(conn, client, rows, tally, loaded, status)
    _judge_summary(args, run_id, usage, before, _system_headlines(conn))
    if status == "interrupted":
        print(f"gavel: interrupted; kept {len(tally.finished)} finished reports in run "
              f"{run_id} (re-running reuses every cached reply)", file=sys.stderr)
        return 130
    return 0


def _finish(conn: sqlite3.Connection, client: ChatClient, rows: dict[int, int], tally: _Tally,
            loaded: Sequence[LoadedJob], status: str) -> dict[str, Any]:
    usage = client.usage.to_json(client.price)
    usage.update(
        status=status,
        reports=len(tally.finished), reports_selected=len(loaded),
        judgments=dict(tally.judgments), judge_errors=tally.judge_errors,
        claims=tally.claims, pages=tally.pages, page_errors=tally.page_errors,
        step_errors=[{"report": e.report, "step": e.step, "subject": e.subject,
                      "error": client.redact(e.error)} for e in tally.step_errors[:ERRORS_KEPT]],
        step_errors_total=len(tally.step_errors))
    finish_run(conn, rows.values(), usage, tally.finished)
    return usage


async def _drive(client: ChatClient, pages: PageSource, run_id: str, options: PipelineOptions,
                 loaded: Sequence[LoadedJob], on_done: Callable[[JudgeJob, ReportOutcome], None],
                 workers: int) -> None:
    """Run the pipeline; ctrl+c stops it: no new report starts, the ones in flight are
    cancelled, the finished ones are already stored."""
    pipeline = Pipeline(client, pages, run_id, options)
    loop = asyncio.get_running_loop()
    main_task = asyncio.current_task()

    def on_sigint() -> None:
        _INTERRUPTED.set()
        if main_task is not None:
            main_task.cancel()

    # Not available off the main thread or on Windows: then ctrl+c is asyncio.run's own.
    unsupported = (NotImplementedError, RuntimeError, ValueError)
    with contextlib.suppress(*unsupported):
        loop.add_signal_handler(signal.SIGINT, on_sigint)
    try:
        await pipeline.run((lj.job for lj in loaded), on_done, workers=workers,
                           stopped=_INTERRUPTED.is_set)
    finally:
        with contextlib.suppress(*unsupported):
            loop.remove_signal_handler(signal.SIGINT)


_INTERRUPTED = threading.Event()
"""Set by ctrl+c during a judge run (the signal handler and the workers share it)."""


def _system_headlines(conn: sqlite3.Connection) -> dict[tuple[str, str], float | None]:
    """(system, metric) -> judge-variant system score of the cascade headline metrics."""
    fw = frameworks().get("cascade")
    heads = [m.name for m in fw.metrics if m.headline] if fw else []
    if not heads:
        return {}
    return {(system, metric): value for system, metric, value in conn.execute(
        f"""SELECT y.ext_id, s.metric, s.value FROM score s
            JOIN system y ON s.scope = 'system:' || y.id
            WHERE s.framework = 'cascade' AND s.variant = 'judge'
              AND s.metric IN ({','.join('?' * len(heads))})""", heads)}


def _money(value: float | None) -> str:
    return "unknown (no price for this model; use --price)" if value is None else f"${value:.4f}"


def _judge_summary(args: argparse.Namespace, run_id: str, usage: dict[str, Any],
                   before: dict[tuple[str, str], float | None],
                   after: dict[tuple[str, str], float | None]) -> None:
    changes: list[dict[str, Any]] = []
    for (system, metric), value in sorted(after.items()):
        old = before.get((system, metric))
        changes.append({"system": system, "metric": metric, "before": old, "after": value,
                        "delta": None if value is None or old is None else value - old})
    if args.fmt == "json":
        emit([{"run": run_id, "model": args.model, "prompt_version": PROMPT_VERSION,
               "usage": usage, "scores": changes}], [], "json")
        return
    judged = ", ".join(f"{k} {n}" for k, n in sorted(usage["judgments"].items())) or "none"
    print(f"judge run {run_id}: {usage['status']}, {usage['reports']} of "
          f"{usage['reports_selected']} reports judged by {args.model} at "
          f"{public_url(args.base_url)} (prompts {PROMPT_VERSION})")
    print(f"  a candidate run: no score changes until you activate it, after checking its "
          f"agreement with the human labels (`gavel runs --activate {run_id}`)")
    print(f"  judgments: {judged}; judge errors: {usage['judge_errors']}; "
          f"new claims: {usage['claims']}; step errors: {usage['step_errors_total']}")
    print(f"  requests: {usage['requests']} (retries {usage['retries']}, repair requests "
          f"{usage['repair_requests']}, local repairs {usage['local_repairs']}), cache hits: "
          f"{usage['cache_hits']}")
    print(f"  tokens: {usage['prompt_tokens']:,} in / {usage['completion_tokens']:,} out "
          f"(saved by the cache: {usage['saved_prompt_tokens']:,} / "
          f"{usage['saved_completion_tokens']:,}); cost: {_money(usage['cost_usd'])}")
    if args.sources == "fetch":
        print(f"  pages fetched: {usage['pages']} ({usage['page_errors']} unusable; verdicts "
              "on those are 'unknown' without a model call)")
    if changes:
        emit([{**c, "before": fmt_number(c["before"]), "after": fmt_number(c["after"]),
               "delta": fmt_delta(c["delta"])} for c in changes],
             ["system", "metric", "before", "after", "delta"], "table",
             title="system scores (judge): before → after",
             numeric=("before", "after", "delta"), console=_console())


def _dry_run(args: argparse.Namespace, loaded: Sequence[LoadedJob], pipeline: Pipeline,
             stored: dict[str, Page], price: Price | None) -> int:
    steps: dict[str, dict[str, Any]] = {}
    for lj in loaded:
        for call in pipeline.plan(lj.job, stored):
            row = steps.setdefault(call.step, {"step": call.step, "calls": 0, "cached": 0,
                                               "unknown_cache": 0, "input_tokens": 0,
                                               "output_tokens": 0})
            row["calls"] += 1
            row["input_tokens"] += call.prompt_tokens
            row["output_tokens"] += call.output_tokens
            if call.cached is None:
                row["unknown_cache"] += 1
            elif call.cached:
                row["cached"] += 1
    rows = list(steps.values())
    total_in = sum(r["input_tokens"] for r in rows)
    total_out = sum(r["output_tokens"] for r in rows)
    uncached_in = sum(r["input_tokens"] * (r["calls"] - r["cached"]) // max(1, r["calls"])
                      for r in rows)
    uncached_out = sum(r["output_tokens"] * (r["calls"] - r["cached"]) // max(1, r["calls"])
                       for r in rows)
    cost = None if price is None else price.cost(uncached_in, uncached_out)
    if args.fmt == "json":
        emit([{"reports": len(loaded), "steps": rows, "input_tokens": total_in,
               "output_tokens": total_out, "estimated_cost_usd": cost}], [], "json")
        return 0
    emit(rows, ["step", "calls", "cached", "unknown_cache", "input_tokens", "output_tokens"],
         "table", title=f"dry run: {len(loaded)} reports, model {args.model}, "
         f"prompts {PROMPT_VERSION}",
         numeric=("calls", "cached", "unknown_cache", "input_tokens", "output_tokens"))
    print(f"estimated tokens: {total_in:,} in / {total_out:,} out (about 4 characters a token; "
          f"claim-matching calls depend on what extraction finds and are not counted); "
          f"estimated cost of the uncached calls: {_money(cost)}")
    print("nothing was sent.")
    return 0


# -- fetch ----------------------------------------------------------------------------------------

def fetch_cmd(args: argparse.Namespace) -> int:
    conn = open_db(args)
    ids = _select(conn, args)
    urls = cited_urls(conn, ids)
    if not urls:
        print("no cited URLs in the selected reports", file=sys.stderr)
        return 1
    url_suites: dict[str, list[int]] = defaultdict(list)
    for suite_id, url in urls:
        url_suites[url].append(suite_id)
    pages: list[Page] = []
    console = Console(stderr=True)
    progress = Progress(TextColumn("[bold]fetching"), BarColumn(), MofNCompleteColumn(),
                        TextColumn("pages"), TimeElapsedColumn(), TextColumn("eta"),
                        TimeRemainingColumn(), console=console)
    bar = progress.add_task("fetching", total=len(url_suites))

    def on_fetch(page: Page) -> None:
        pages.append(page)
        for suite_id in url_suites[page.url]:
            record_page(conn, suite_id, None, page)
        progress.advance(bar)

    async def main() -> None:
        async with PageFetcher(_fetch_config(args), on_fetch=on_fetch) as fetcher:
            await asyncio.gather(*(fetcher.get(url) for url in url_suites))

    interrupted = False
    with progress:
        try:
            asyncio.run(main())
        except KeyboardInterrupt:
            interrupted = True
    records = [{"url": p.url, "status": p.status, "type": (p.content_type or "").split(";")[0],
                "chars": len(p.text), "sha256": p.sha256[:12], "error": p.error or ""}
               for p in sorted(pages, key=lambda p: p.url)]
    emit(records, ["url", "status", "type", "chars", "sha256", "error"], args.fmt,
         numeric=("status", "chars"), console=_console() if args.fmt == "table" else None)
    if args.fmt == "table":
        failed = sum(1 for p in pages if p.error)
        print(f"{len(pages)} pages fetched ({failed} unusable), kept in page_fetch; "
              "`gavel judge --sources stored` judges against them")
    return 130 if interrupted else 0


# -- runs -----------------------------------------------------------------------------------------

def runs_cmd(args: argparse.Namespace) -> int:
    conn = open_db(args)
    ensure_scores(conn)
    if args.activate or args.deactivate:
        name = args.activate or args.deactivate
        touched = set_active(conn, name, bool(args.activate))
        state = "active" if args.activate else "inactive"
        print(f"run {name} is now {state}; current verdicts and scores recomputed for "
              f"{len(touched)} reports", file=sys.stderr)
    records = []
    for info in list_runs(conn):
        usage = info.usage
        records.append({
            "run": info.id, "model": info.model, "prompt_version": info.prompt_version,
            "created": info.created_at[:19].replace("T", " "),
            "active": "yes" if info.active else "no",
            "status": usage.get("status", "imported"), "reports": info.reports,
            "judgments": " ".join(f"{k}:{n}" for k, n in sorted(info.judgments.items())),
            "errors": info.errors, "claims": info.claims,
            "tokens": (f"{usage.get('prompt_tokens', 0):,}/{usage.get('completion_tokens', 0):,}"
                       if "prompt_tokens" in usage else ""),
            "cost_usd": usage.get("cost_usd"), "suites": ",".join(info.suites),
            "usage": usage if args.fmt == "json" else None,
        })
    columns = ["run", "model", "prompt_version", "created", "active", "status", "reports",
               "judgments", "errors", "claims", "tokens", "cost_usd"]
    if args.fmt == "json":
        columns += ["suites", "usage"]
    if not records:
        print("no judge runs", file=sys.stderr)
        return 1
    emit(records, columns, args.fmt, numeric=("reports", "errors", "claims", "cost_usd"),
         console=_console() if args.fmt == "table" else None)
    return 0


# -- compare --------------------------------------------------------------------------------------

def _metrics(args: argparse.Namespace) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    if args.metric:
        for name in args.metric:
            framework, dot, metric = name.partition(".")
            out.append((framework, metric) if dot else ("cascade", name))
        return out
    for name, fw in frameworks().items():
        out += [(name, m.name) for m in fw.metrics if m.headline]
        if name == "cascade":
            out += [(name, "SubTaskPass"), (name, "Refer_Claim_Consistency")]
    return out


def compare_cmd(args: argparse.Namespace) -> int:
    if len(args.runs) < 2 or len(set(args.runs)) != len(args.runs):
        raise InputError("command line", "compare needs two or more different runs",
                         field="RUN")
    conn = open_db(args)
    ensure_scores(conn)
    verdicts = {run: [ItemVerdict(v.kind, (v.report_id, v.subject), v.value)
                      for v in run_verdicts(conn, run)] for run in args.runs}
    shared = set.intersection(*(set(run_report_ids(conn, run)) for run in args.runs))
    metrics = _metrics(args)
    scores = {run: run_scores(conn, run, sorted(shared), args.variant) for run in args.runs}
    used = {fw for s in scores.values() for (_, fw) in s.systems}
    metrics = [m for m in metrics if m[0] in used]
    systems = sorted({system for s in scores.values() for (system, _) in s.systems})

    agreement_rows: list[dict[str, Any]] = []
    matrices: list[tuple[str, Any]] = []
    for i, first in enumerate(args.runs):
        for second in args.runs[i + 1:]:
            for agreed in agreement_by_kind(verdicts[first], verdicts[second]):
                agreement_rows.append({
                    "a": first, "b": second, "kind": agreed.kind, "n": agreed.n,
                    "accuracy": agreed.accuracy.value,
                    "kappa": agreed.kappa.value if agreed.kappa else None,
                    "weighted_kappa": (agreed.weighted_kappa.value if agreed.weighted_kappa
                                       else None),
                    "only_a": agreed.only_a, "only_b": agreed.only_b,
                    "errors_a": agreed.failed_a, "errors_b": agreed.failed_b,
                })
                if agreed.confusion is not None and agreed.n and len(args.runs) == 2:
                    matrices.append((agreed.kind, agreed.confusion))

    def value(run: str, system: str, fw: str, metric: str) -> float | None:
        agg = scores[run].systems.get((system, fw), {}).get(metric)
        return None if agg is None else agg.value

    diff_rows: list[dict[str, Any]] = []
    if len(args.runs) == 2:
        a, b = args.runs
        for system in systems:
            for fw, metric in metrics:
                va, vb = value(a, system, fw, metric), value(b, system, fw, metric)
                diff_rows.append({"system": system, "metric": metric, "a": va, "b": vb,
                                  "delta": None if va is None or vb is None else vb - va})
    spread_rows: list[dict[str, Any]] = []
    for system in systems:
        for fw, metric in metrics:
            spread = mean_sd([value(run, system, fw, metric) for run in args.runs], args.std)
            spread_rows.append({"system": system, "metric": metric, "mean": spread.mean,
                                "sd": spread.sd, "runs": spread.n})
    if args.fmt == "json":
        emit([{"runs": args.runs, "reports": len(shared), "variant": args.variant,
               "std": args.std, "agreement": agreement_rows,
               "confusion": [{"kind": k, "labels": list(m.labels), "counts": m.counts}
                             for k, m in matrices],
               "score_differences": diff_rows, "robustness": spread_rows}], [], "json")
        return 0
    console = _console()
    emit([{**r, **{k: fmt_number(r[k]) for k in ("accuracy", "kappa", "weighted_kappa")}}
          for r in agreement_rows],
         ["a", "b", "kind", "n", "accuracy", "kappa", "weighted_kappa", "only_a", "only_b",
          "errors_a", "errors_b"], "table",
         title="verdict agreement between runs (items both judged; errors left out)",
         numeric=("n", "accuracy", "kappa", "weighted_kappa", "only_a", "only_b"),
         console=console)
    for kind, matrix in matrices:
        labels = [str(label) for label in matrix.labels]
        emit([{"a \\ b": labels[i], **{labels[j]: matrix.counts[i][j]
                                       for j in range(len(labels))}}
              for i in range(len(labels))], ["a \\ b", *labels], "table",
             title=f"{kind}: a in rows, b in columns",
             numeric=labels, console=console)
    if diff_rows:
        emit([{**r, "a": fmt_number(r["a"]), "b": fmt_number(r["b"]),
               "delta": fmt_delta(r["delta"])} for r in diff_rows],
             ["system", "metric", "a", "b", "delta"], "table",
             title=f"system scores, {args.variant} variant, {len(shared)} reports both judged",
             numeric=("a", "b", "delta"), console=console)
    emit([{"system": r["system"], "metric": r["metric"],
           "mean ± sd": f"{fmt_number(r['mean'])} ± {fmt_number(r['sd'])}", "runs": r["runs"]}
          for r in spread_rows], ["system", "metric", "mean ± sd", "runs"], "table",
         title=f"robustness over {len(args.runs)} runs ({args.std} standard deviation, "
         f"{len(shared)} reports every run judged)", numeric=("runs",), console=console)
    return 0

