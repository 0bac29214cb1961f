"""``gavel judge`` re-judges selected reports against any OpenAI-compatible endpoint and
stores the result as a new judge run (never overwriting another); ``gavel fetch`` fetches the
pages reports cite. The work is :mod:`store.runs.judging`'s; this shows progress and the outcome.

The API key is read from ``GAVEL_API_KEY`` or ``OPENAI_API_KEY`` and nowhere else: a key on a
command line ends up in shell history.
"""

from __future__ import annotations

import json
import math
import sqlite3
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import click
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from reviewer.judge.client import ENV_KEYS, api_key_from_env, public_url
from reviewer.judge.fetch import FetchConfig
from store.runs.judging import (
    DEFAULT_BASE_URL,
    JudgePlan,
    JudgeRequest,
    JudgeResult,
    JudgeTally,
    PreparedJudge,
    SecondOpinionDraw,
    Selection,
    check_request,
    cited_url_suites,
    draw_second_opinion,
    fetch_pages,
    parse_price,
    plan_judge,
    prepare_judge,
    resume_judge,
    run_judge,
    selected_reports,
)
from tui.cli.options import db_option, format_option, open_db
from tui.cli.output import emit, wide_console
from tui.render.tables import fmt_delta, fmt_number

F = Callable[..., Any]


def _selection_options(func: F) -> F:
    for decorator in reversed(
        (
            click.option(
                "--report",
                "reports",
                multiple=True,
                help="report: SUITE/REPORT, or REPORT when one suite has it (repeatable)",
            ),
            click.option(
                "--system", "systems", multiple=True, help="system id or name (repeatable)"
            ),
            click.option("--task", "tasks", multiple=True, help="task id (repeatable)"),
            click.option(
                "--limit",
                type=int,
                default=None,
                metavar="N",
                help="at most N reports (in import order)",
            ),
        )
    ):
        func = decorator(func)
    return func


def _fetch_options(func: F) -> F:
    for decorator in reversed(
        (
            click.option(
                "--fetch-timeout",
                type=float,
                default=30.0,
                help="seconds per page, redirects included (default 30)",
            ),
            click.option(
                "--max-page-bytes",
                type=int,
                default=5_000_000,
                help="larger pages are recorded as too large (default 5,000,000)",
            ),
            click.option(
                "--max-redirects",
                type=int,
                default=5,
                help="redirects followed per page (default 5)",
            ),
            click.option(
                "--per-host",
                type=int,
                default=2,
                help="pages fetched from one host at a time (default 2)",
            ),
            click.option(
                "--fetch-concurrency",
                type=int,
                default=8,
                help="pages fetched at a time (default 8)",
            ),
            click.option(
                "--allow-private-hosts",
                is_flag=True,
                help="also fetch loopback, private and link-local addresses (a local test "
                "server); refused by default, since report URLs are untrusted",
            ),
        )
    ):
        func = decorator(func)
    return func


def _fetch_config(options: dict[str, Any]) -> FetchConfig:
    return FetchConfig(
        timeout=options["fetch_timeout"],
        max_bytes=options["max_page_bytes"],
        max_redirects=options["max_redirects"],
        per_host=options["per_host"],
        concurrency=options["fetch_concurrency"],
        allow_private=options["allow_private_hosts"],
    )


def _selection(options: dict[str, Any]) -> Selection:
    return Selection(
        reports=options["reports"],
        systems=options["systems"],
        tasks=options["tasks"],
        limit=options["limit"],
    )


def _bar(what: str, unit: str, *extra: TextColumn) -> Progress:
    return Progress(
        TextColumn(f"[bold]{what}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn(unit),
        TimeElapsedColumn(),
        TextColumn("eta"),
        TimeRemainingColumn(),
        *extra,
        console=Console(stderr=True),
    )


# -- judge ----------------------------------------------------------------------------------------

JUDGE_HELP = (
    """Run a benchmark's judge pipeline on the selected reports and store the result as a
new judge run: a candidate, validated against the human labels before it counts (`gavel runs
activate RUN`). --framework picks the benchmark (default cascade): cascade (DailyReport:
instruction following, claim extraction, claim-reference consistency, rationality), race
(DeepResearch Bench RACE: per-criterion scores of target and reference report), fact
(DeepResearch Bench FACT: statement-URL extraction and support against fetched pages), dr3
(DR3-Eval: insight coverage, citation coverage, claim support, checklist, depth), claims_f1
(LiveDRBench: claim matching and key grading), drbench (DR. Bench: rubric points and keyword
relevance). --batch sends the requests through the provider's Batch API at its discount and
can exit while the batch runs (--no-wait); `gavel judge --resume RUN` carries it on. The API
key comes from the environment ("""
    + " or ".join(f"${name}" for name in ENV_KEYS)
    + """); none is
sent when neither is set, for local servers. Exit status: 0 done (or a batch submitted), 1
when every model call failed or nothing matched, 2 bad input, 130 interrupted."""
)


FRAMEWORK_ALIASES = {"dailyreport": "cascade"}
"""Benchmark names accepted for the framework that scores them (DailyReport's is cascade)."""


def framework_name(value: str | None) -> str | None:
    """``--framework`` as given, or the framework a benchmark's name stands for."""
    return FRAMEWORK_ALIASES.get(value.strip().lower(), value) if value else value


@click.command(help=JUDGE_HELP)
@db_option
@_selection_options
@click.option(
    "--framework",
    "framework",
    default="cascade",
    metavar="NAME",
    callback=lambda ctx, param, value: framework_name(value),
    help="the benchmark framework whose judge runs: cascade (or dailyreport), race, fact, "
    "dr3, claims_f1 or drbench (default: cascade)",
)
@click.option(
    "--only",
    default=None,
    metavar="STEPS",
    help="comma-separated steps of the framework's pipeline (default: its default "
    "steps; see docs/judge.md)",
)
@click.option(
    "--base-url",
    envvar="GAVEL_BASE_URL",
    default=DEFAULT_BASE_URL,
    help="OpenAI-compatible API root, e.g. http://localhost:8000/v1 "
    "(default: $GAVEL_BASE_URL or the OpenAI API)",
)
@click.option(
    "--model",
    envvar="GAVEL_MODEL",
    default=None,
    help="model name as the server knows it (default: $GAVEL_MODEL)",
)
@click.option("--concurrency", type=int, default=4, help="requests in flight (default 4)")
@click.option(
    "--timeout",
    type=float,
    default=120.0,
    help="seconds per request before it is retried (default 120)",
)
@click.option(
    "--max-retries",
    type=int,
    default=4,
    help="retries on 429, 5xx, timeouts and dropped connections (default 4)",
)
@click.option(
    "--time-budget",
    type=float,
    default=None,
    metavar="SECONDS",
    help="total seconds the run may spend on model calls and waits; calls past it "
    "fail as judge errors (default: no limit)",
)
@click.option(
    "--max-reply-bytes",
    type=int,
    default=2_000_000,
    help="a larger reply is refused as a judge error (default 2,000,000)",
)
@click.option("--temperature", type=float, default=0.0, help="sampling temperature (default 0)")
@click.option("--max-tokens", type=int, default=None, help="reply token limit")
@click.option(
    "--json-mode",
    is_flag=True,
    help="ask for response_format json_object (OpenAI, vLLM, llama.cpp)",
)
@click.option(
    "--price",
    default=None,
    metavar="IN,OUT",
    help="US dollars per million input and output tokens (overrides the table)",
)
@click.option(
    "--sources",
    type=click.Choice(("fetch", "stored", "none")),
    default=None,
    help="cited pages: fetch now, use pages already stored (the newest `gavel "
    "fetch`, else the bundle's sources), or none (default: the framework's)",
)
@_fetch_options
@click.option("--no-cache", is_flag=True, help="neither read nor write the response cache")
@click.option("--run-id", default=None, help="id of the new run (default: judge-<time>)")
@click.option("--description", default="", help="stored with the run")
@click.option(
    "--today",
    default=None,
    help="the judge's current date for tasks without cur_date (default: today)",
)
@click.option(
    "--dry-run",
    is_flag=True,
    help="print the calls it would make with estimated tokens and cost (direct and "
    "batch); send nothing",
)
@click.option(
    "--batch",
    is_flag=True,
    help="send the requests through the Batch API: each round's requests are "
    "written as a batch file (gavel-batches/ beside the database), uploaded, "
    "submitted and polled; results are ingested into the same run and cache",
)
@click.option(
    "--resume",
    "resume",
    default=None,
    metavar="RUN",
    help="carry on batch run RUN: poll its batch, ingest, submit the next round",
)
@click.option(
    "--no-wait",
    is_flag=True,
    help="with --batch or --resume: submit (or check) and exit; resume later",
)
@click.option(
    "--poll",
    "poll_seconds",
    type=float,
    default=30.0,
    metavar="SECONDS",
    help="seconds between polls of a batch (default 30)",
)
@click.option(
    "--second-opinion",
    "second_opinion",
    default=None,
    metavar="MODEL",
    help="re-judge a share of the reports the active runs judged with MODEL, into a "
    "candidate run whose disagreements with the counting verdicts become suspicion "
    "flags; its cost is estimated and confirmed first (--yes skips the question)",
)
@click.option(
    "--share",
    type=click.FloatRange(0.0, 1.0, min_open=True),
    default=0.1,
    show_default=True,
    help="with --second-opinion: the share of reports to re-judge (rounded up)",
)
@click.option(
    "--flagged",
    is_flag=True,
    help="with --second-opinion: the most suspicious reports (by their flags) instead "
    "of a random draw",
)
@click.option(
    "--seed",
    type=int,
    default=None,
    help="with --second-opinion: the random draw's seed (default: a fresh one, printed)",
)
@click.option("--yes", "-y", "confirmed", is_flag=True, help="with --second-opinion: do not ask")
@format_option("table", "json")
def judge(
    db: Path | None,
    framework: str,
    only: str | None,
    base_url: str,
    model: str | None,
    concurrency: int,
    timeout: float,
    max_retries: int,
    time_budget: float | None,
    max_reply_bytes: int,
    temperature: float,
    max_tokens: int | None,
    json_mode: bool,
    price: str | None,
    sources: str | None,
    no_cache: bool,
    run_id: str | None,
    description: str,
    today: str | None,
    dry_run: bool,
    batch: bool,
    resume: str | None,
    no_wait: bool,
    poll_seconds: float,
    second_opinion: str | None,
    share: float,
    flagged: bool,
    seed: int | None,
    confirmed: bool,
    fmt: str,
    **options: Any,
) -> int:
    if resume is not None:
        return _resume(db, resume, parse_price(price), not no_wait, poll_seconds, fmt)
    steps = frozenset(s.strip() for s in only.split(",") if s.strip()) if only is not None else None
    model, selection, description, draw = _second_opinion(
        db,
        second_opinion,
        (share, seed, flagged),
        framework,
        model,
        _selection(options),
        description,
    )
    request = JudgeRequest(
        model=model,
        base_url=base_url,
        framework=framework,
        selection=selection,
        steps=steps,
        concurrency=concurrency,
        timeout=timeout,
        max_retries=max_retries,
        temperature=temperature,
        max_tokens=max_tokens,
        json_mode=json_mode,
        price=parse_price(price),
        sources=sources,
        fetch=_fetch_config(options),
        use_cache=not no_cache,
        run_id=run_id,
        description=description,
        today=today,
        time_budget=time_budget,
        max_reply_bytes=max_reply_bytes,
        batch=batch,
        batch_dir=_batch_dir(db) if batch else None,
    )
    check_request(request)
    conn = open_db(db)
    prepared = prepare_judge(conn, request, api_key_from_env())
    if not prepared.loaded:
        print(f"no reports of framework {framework} match the selection", file=sys.stderr)
        return 1
    if dry_run:
        return _print_plan(plan_judge(conn, prepared), model or "", fmt, prepared)
    if not _confirm_cost(conn, prepared, draw, confirmed):
        return 1
    if prepared.sends_without_key:
        print(
            f"gavel: no API key in {' or '.join('$' + k for k in ENV_KEYS)}; sending "
            f"requests to {urlsplit(base_url).hostname} without one",
            file=sys.stderr,
        )
    progress, show = _progress(len(prepared.loaded))
    with progress:
        result = run_judge(
            conn, prepared, progress=show, wait=not no_wait, poll_seconds=poll_seconds
        )
    return _outcome(result, model or "", prepared.request.base_url, prepared.sources, fmt)


def _second_opinion(
    db: Path | None,
    second_opinion: str | None,
    how: tuple[float, int | None, bool],
    framework: str,
    model: str | None,
    selection: Selection,
    description: str,
) -> tuple[str | None, Selection, str, SecondOpinionDraw | None]:
    """With ``--second-opinion MODEL``: that model, the drawn reports and a description that
    records the draw; else the request as given. Exits 1 when there is nothing to draw."""
    if second_opinion is None:
        return model, selection, description, None
    share, seed, flagged = how
    draw = _draw(db, framework, share, seed, flagged, selection)
    if not draw.reports:
        print("gavel: nothing to re-judge: no report of the active runs matches", file=sys.stderr)
        raise click.exceptions.Exit(1)
    return (
        second_opinion,
        replace(selection, ids=draw.reports),
        description or draw.describe(),
        draw,
    )


def _draw(
    db: Path | None,
    framework: str,
    share: float,
    seed: int | None,
    flagged: bool,
    selection: Selection,
) -> SecondOpinionDraw:
    """The second opinion's reports, the draw said on standard error (with its seed, so that
    it can be drawn again)."""
    import secrets

    used = seed if seed is not None else secrets.randbelow(2**31)
    draw = draw_second_opinion(
        open_db(db), framework, share, used, flagged=flagged, selection=selection
    )
    print(f"gavel: {draw.describe()}", file=sys.stderr)
    if flagged and len(draw.reports) < math.ceil(share * draw.population):
        print(
            f"gavel: only {draw.flagged_available} reports carry a suspicion flag",
            file=sys.stderr,
        )
    return draw


def _confirm_cost(
    conn: sqlite3.Connection,
    prepared: PreparedJudge,
    draw: SecondOpinionDraw | None,
    confirmed: bool,
) -> bool:
    """A second opinion says what it will cost before anything is sent, and asks unless told
    not to (a pipe cannot answer: it needs --yes). Any other run goes ahead."""
    if draw is None:
        return True
    plan = plan_judge(conn, prepared)
    print(
        f"gavel: {len(draw.reports)} reports, {plan.uncached_calls} uncached calls, about "
        f"{plan.input_tokens:,} input and {plan.output_tokens:,} output tokens: estimated "
        f"cost {_money(plan.cost)}",
        file=sys.stderr,
    )
    if confirmed:
        return True
    if not sys.stdin.isatty() or not click.confirm("send it?", default=False, err=True):
        print("nothing sent (run again with --yes to send)", file=sys.stderr)
        return False
    return True


def _batch_dir(db: Path | None) -> Path:
    """Batch files are kept beside the database, in ``gavel-batches/``."""
    from store.db.connection import default_path

    return (db or default_path()).resolve().parent / "gavel-batches"


def _progress(total: int) -> tuple[Progress, Callable[[JudgeTally], None]]:
    progress = _bar("judging", "reports", TextColumn("{task.fields[calls]}"))
    bar = progress.add_task("judging", total=total, calls=_calls(JudgeTally(total)))

    def show(tally: JudgeTally) -> None:
        progress.update(bar, completed=len(set(tally.finished)), calls=_calls(tally))

    return progress, show


def _resume(
    db: Path | None, run: str, price: Any, wait: bool, poll_seconds: float, fmt: str
) -> int:
    conn = open_db(db)
    progress, show = _progress(0)
    with progress:
        result = resume_judge(
            conn,
            run,
            api_key_from_env(),
            price=price,
            progress=show,
            wait=wait,
            poll_seconds=poll_seconds,
            batch_dir=_batch_dir(db),
        )
    params = conn.execute(
        "SELECT params FROM judge_run WHERE ext_id = ? LIMIT 1", (result.run_id,)
    ).fetchone()
    stored = json.loads(params[0]) if params else {}
    model = conn.execute(
        "SELECT model FROM judge_run WHERE ext_id = ? LIMIT 1", (result.run_id,)
    ).fetchone()
    return _outcome(
        result,
        model[0] if model else "",
        stored.get("base_url", ""),
        stored.get("sources", ""),
        fmt,
    )


def _outcome(result: JudgeResult, model: str, base_url: str, sources: str, fmt: str) -> int:
    _print_result(result, model, base_url, sources, fmt)
    if result.status == "interrupted":
        print(
            f"gavel: interrupted; kept {result.usage['reports']} finished reports in run "
            f"{result.run_id} (re-running reuses every cached reply"
            + (
                "; `gavel judge --resume " + result.run_id + "` carries the batch on)"
                if result.usage.get("batch")
                else ")"
            ),
            file=sys.stderr,
        )
        return 130
    if result.status == "waiting":
        batch = result.usage.get("batch") or {}
        print(
            f"gavel: batch round {batch.get('round')} of run {result.run_id} is submitted "
            f"({len(batch.get('waiting') or {})} requests); `gavel judge --resume "
            f"{result.run_id}` polls it and carries the run on",
            file=sys.stderr,
        )
        return 0
    if result.status == "failed":
        print(
            f"gavel: run {result.run_id} failed: every model call failed "
            f"({result.usage.get('errors', 0)} errors; see `gavel runs --format json`)",
            file=sys.stderr,
        )
        return 1
    if result.status == "incomplete":
        usage = result.usage
        print(
            f"gavel: run {result.run_id} is incomplete: {usage.get('judge_errors', 0)} judge "
            f"errors, {usage.get('step_errors_total', 0)} failed steps, "
            f"{usage.get('reports', 0)} of {usage.get('reports_selected', 0)} reports finished "
            "(see `gavel runs --format json`; the replies it got are cached, so judging "
            "again asks only what failed)",
            file=sys.stderr,
        )
        return 1
    return 0


def _calls(tally: JudgeTally) -> str:
    text = f"{tally.requests} requests, {tally.cache_hits} cached"
    if tally.phase:
        text += f", {tally.phase}" + (f" ({tally.waiting} in batch)" if tally.waiting else "")
    return text


def _money(value: float | None) -> str:
    return "unknown (no price for this model; use --price)" if value is None else f"${value:.4f}"


def _print_result(result: JudgeResult, model: str, base_url: str, sources: str, fmt: str) -> None:
    usage = result.usage
    changes: list[dict[str, Any]] = [
        {
            "system": c.system,
            "metric": c.metric,
            "before": c.before,
            "after": c.after,
            "delta": c.delta,
        }
        for c in result.changes
    ]
    if fmt == "json":
        emit(
            [
                {
                    "run": result.run_id,
                    "model": model,
                    "framework": result.framework,
                    "prompt_version": result.prompt_version,
                    "status": result.status,
                    "usage": usage,
                    "scores": changes,
                }
            ],
            [],
            "json",
        )
        return
    judged = ", ".join(f"{k} {n}" for k, n in sorted(usage["judgments"].items())) or "none"
    print(
        f"judge run {result.run_id} ({result.framework}): {usage['status']}, "
        f"{usage['reports']} of {usage['reports_selected']} reports judged by {model} at "
        f"{public_url(base_url)} (prompts {result.prompt_version})"
    )
    print(
        f"  a candidate run: no score changes until you activate it, after seeing its "
        f"agreement with the human labels (`gavel runs activate {result.run_id}`)"
    )
    print(
        f"  judgments: {judged}; judge errors: {usage['judge_errors']}; "
        f"new claims: {usage['claims']}; step errors: {usage['step_errors_total']}"
    )
    print(
        f"  requests: {usage['requests']} (batch {usage.get('batch_requests', 0)}, retries "
        f"{usage['retries']}, repair requests {usage['repair_requests']}, local repairs "
        f"{usage['local_repairs']}), cache hits: {usage['cache_hits']}"
    )
    print(
        f"  tokens: {usage['prompt_tokens']:,} in / {usage['completion_tokens']:,} out "
        f"(saved by the cache: {usage['saved_prompt_tokens']:,} / "
        f"{usage['saved_completion_tokens']:,}); cost: {_money(usage['cost_usd'])}"
    )
    if sources == "fetch":
        print(
            f"  pages fetched: {usage['pages']} ({usage['page_errors']} unusable; verdicts "
            "on those are 'unknown' without a model call)"
        )
    if any(c["before"] != c["after"] for c in changes):
        emit(
            [
                {
                    **c,
                    "before": fmt_number(c["before"]),
                    "after": fmt_number(c["after"]),
                    "delta": fmt_delta(c["delta"]),
                }
                for c in changes
            ],
            ["system", "metric", "before", "after", "delta"],
            "table",
            title="system scores (judge): before → after",
            numeric=("before", "after", "delta"),
            console=wide_console(),
        )


def _print_plan(plan: JudgePlan, model: str, fmt: str, prepared: PreparedJudge) -> int:
    rows = [
        {
            "step": s.step,
            "calls": s.calls,
            "cached": s.cached,
            "unknown_cache": s.unknown_cache,
            "input_tokens": s.input_tokens,
            "output_tokens": s.output_tokens,
        }
        for s in plan.steps
    ]
    version = prepared.spec.prompt_version
    if fmt == "json":
        emit(
            [
                {
                    "reports": plan.reports,
                    "framework": prepared.request.framework,
                    "prompt_version": version,
                    "steps": rows,
                    "input_tokens": plan.input_tokens,
                    "output_tokens": plan.output_tokens,
                    "estimated_cost_usd": plan.cost,
                    "estimated_batch_cost_usd": plan.batch_cost,
                }
            ],
            [],
            "json",
        )
        return 0
    emit(
        rows,
        ["step", "calls", "cached", "unknown_cache", "input_tokens", "output_tokens"],
        "table",
        title=f"dry run: {plan.reports} reports, {prepared.request.framework}, "
        f"model {model}, prompts {version}",
        numeric=("calls", "cached", "unknown_cache", "input_tokens", "output_tokens"),
    )
    print(
        f"estimated tokens: {plan.input_tokens:,} in / {plan.output_tokens:,} out (about 4 "
        "characters a token; calls that depend on what an earlier step finds are estimated "
        "with stand-ins or not counted); estimated cost of the uncached calls: "
        f"{_money(plan.cost)} direct, {_money(plan.batch_cost)} through the Batch API"
    )
    print("nothing was sent.")
    return 0


# -- fetch ----------------------------------------------------------------------------------------


@click.command(
    help="Fetch the pages the selected reports cite and keep them (table "
    "page_fetch), so that `gavel judge --sources stored` judges against them. "
    "ctrl+c stops, keeping what was fetched (exit 130)."
)
@db_option
@_selection_options
@click.option(
    "--framework",
    default="cascade",
    metavar="NAME",
    callback=lambda ctx, param, value: framework_name(value),
    help="reports of suites scored by this framework (default: cascade, also called dailyreport)",
)
@_fetch_options
@format_option("table", "json", "csv")
def fetch(db: Path | None, fmt: str, **options: Any) -> int:
    conn = open_db(db)
    urls = cited_url_suites(conn, selected_reports(conn, _selection(options), options["framework"]))
    if not urls:
        print("no cited URLs in the selected reports", file=sys.stderr)
        return 1
    progress = _bar("fetching", "pages")
    bar = progress.add_task("fetching", total=len(urls))
    with progress:
        result = fetch_pages(
            conn, urls, _fetch_config(options), progress=lambda n: progress.update(bar, completed=n)
        )
    pages = result.pages
    records = [
        {
            "url": p.url,
            "status": p.status,
            "type": (p.content_type or "").split(";")[0],
            "chars": len(p.text),
            "sha256": p.sha256[:12],
            "error": p.error or "",
        }
        for p in pages
    ]
    emit(
        records,
        ["url", "status", "type", "chars", "sha256", "error"],
        fmt,
        numeric=("status", "chars"),
        console=wide_console() if fmt == "table" else None,
    )
    if fmt == "table":
        failed = sum(1 for p in pages if p.error)
        print(
            f"{len(pages)} pages fetched ({failed} unusable), kept in page_fetch; "
            "`gavel judge --sources stored` judges against them"
        )
    return 130 if result.interrupted else 0
