"""``gavel judge`` re-judges selected reports against any OpenAI-compatible endpoint and
stores the result as a new judge run (never overwriting another); ``gavel fetch`` fetches the
pages reports cite. The work is :mod:`store.judging`'s; this shows progress and the outcome.

The API key is read from ``GAVEL_API_KEY`` or ``OPENAI_API_KEY`` and nowhere else: a key on a
command line ends up in shell history.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
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

from reviewer.frameworks.dailyreport.judge_pipeline import STEPS
from reviewer.frameworks.dailyreport.judge_prompts import PROMPT_VERSION
from reviewer.judge.client import ENV_KEYS, api_key_from_env, public_url
from reviewer.judge.fetch import FetchConfig
from store.judging import (
    DEFAULT_BASE_URL,
    JudgePlan,
    JudgeRequest,
    JudgeResult,
    JudgeTally,
    Selection,
    check_request,
    cited_url_suites,
    fetch_pages,
    parse_price,
    plan_judge,
    prepare_judge,
    run_judge,
    selected_reports,
)
from tui.cli.options import db_option, format_option, open_db
from tui.cli.output import emit, wide_console
from tui.render.tables import fmt_delta, fmt_number

F = Callable[..., Any]


def _selection_options(func: F) -> F:
    for decorator in reversed((
        click.option("--report", "reports", multiple=True,
                     help="report: SUITE/REPORT, or REPORT when one suite has it (repeatable)"),
        click.option("--system", "systems", multiple=True,
                     help="system id or name (repeatable)"),
        click.option("--task", "tasks", multiple=True, help="task id (repeatable)"),
        click.option("--limit", type=int, default=None, metavar="N",
                     help="at most N reports (in import order)"),
    )):
        func = decorator(func)
    return func


def _fetch_options(func: F) -> F:
    for decorator in reversed((
        click.option("--fetch-timeout", type=float, default=30.0,
                     help="seconds per page, redirects included (default 30)"),
        click.option("--max-page-bytes", type=int, default=5_000_000,
                     help="larger pages are recorded as too large (default 5,000,000)"),
        click.option("--max-redirects", type=int, default=5,
                     help="redirects followed per page (default 5)"),
        click.option("--per-host", type=int, default=2,
                     help="pages fetched from one host at a time (default 2)"),
        click.option("--fetch-concurrency", type=int, default=8,
                     help="pages fetched at a time (default 8)"),
        click.option("--allow-private-hosts", is_flag=True,
                     help="also fetch loopback, private and link-local addresses (a local test "
                          "server); refused by default, since report URLs are untrusted"),
    )):
        func = decorator(func)
    return func


def _fetch_config(options: dict[str, Any]) -> FetchConfig:
    return FetchConfig(timeout=options["fetch_timeout"], max_bytes=options["max_page_bytes"],
                       max_redirects=options["max_redirects"], per_host=options["per_host"],
                       concurrency=options["fetch_concurrency"],
                       allow_private=options["allow_private_hosts"])


def _selection(options: dict[str, Any]) -> Selection:
    return Selection(reports=options["reports"], systems=options["systems"],
                     tasks=options["tasks"], limit=options["limit"])


def _bar(what: str, unit: str, *extra: TextColumn) -> Progress:
    return Progress(TextColumn(f"[bold]{what}"), BarColumn(), MofNCompleteColumn(),
                    TextColumn(unit), TimeElapsedColumn(), TextColumn("eta"),
                    TimeRemainingColumn(), *extra, console=Console(stderr=True))


# -- judge ----------------------------------------------------------------------------------------

@click.command(help="Run the DailyReport judging pipeline (instruction following, claim "
               "extraction, claim-reference consistency, rationality) on the selected reports "
               "and store it as a new judge run. The API key comes from the environment ("
               + " or ".join(f"${name}" for name in ENV_KEYS)
               + "); none is sent when neither is set, for local servers.")
@db_option
@_selection_options
@click.option("--only", default=",".join(STEPS), metavar="STEPS",
              help=f"comma-separated steps out of {', '.join(STEPS)} (default: all)")
@click.option("--base-url", envvar="GAVEL_BASE_URL", default=DEFAULT_BASE_URL,
              help="OpenAI-compatible API root, e.g. http://localhost:8000/v1 "
                   "(default: $GAVEL_BASE_URL or the OpenAI API)")
@click.option("--model", envvar="GAVEL_MODEL", default=None,
              help="model name as the server knows it (default: $GAVEL_MODEL)")
@click.option("--concurrency", type=int, default=4, help="requests in flight (default 4)")
@click.option("--timeout", type=float, default=120.0,
              help="seconds per request before it is retried (default 120)")
@click.option("--max-retries", type=int, default=4,
              help="retries on 429, 5xx, timeouts and dropped connections (default 4)")
@click.option("--temperature", type=float, default=0.0, help="sampling temperature (default 0)")
@click.option("--max-tokens", type=int, default=None, help="reply token limit")
@click.option("--json-mode", is_flag=True,
              help="ask for response_format json_object (OpenAI, vLLM, llama.cpp)")
@click.option("--price", default=None, metavar="IN,OUT",
              help="US dollars per million input and output tokens (overrides the table)")
@click.option("--sources", type=click.Choice(("fetch", "stored")), default="fetch",
              help="fetch cited pages now (default), or use pages already stored: the "
                   "newest `gavel fetch`, else the bundle's sources")
@_fetch_options
@click.option("--no-cache", is_flag=True, help="neither read nor write the response cache")
@click.option("--run-id", default=None, help="id of the new run (default: judge-<time>)")
@click.option("--description", default="", help="stored with the run")
@click.option("--today", default=None,
              help="the judge's current date for tasks without cur_date (default: today)")
@click.option("--dry-run", is_flag=True,
              help="print the calls it would make with estimated tokens; send nothing")
@format_option("table", "json")
def judge(db: Path | None, only: str, base_url: str, model: str | None, concurrency: int,
          timeout: float, max_retries: int, temperature: float, max_tokens: int | None,
          json_mode: bool, price: str | None, sources: str, no_cache: bool,
          run_id: str | None, description: str, today: str | None, dry_run: bool, fmt: str,
          **options: Any) -> int:
    request = JudgeRequest(
        model=model, base_url=base_url, selection=_selection(options),
        steps=frozenset(s.strip() for s in only.split(",") if s.strip()),
        concurrency=concurrency, timeout=timeout, max_retries=max_retries,
        temperature=temperature, max_tokens=max_tokens, json_mode=json_mode,
        price=parse_price(price), sources=sources, fetch=_fetch_config(options),
        use_cache=not no_cache, run_id=run_id, description=description, today=today)
    check_request(request)
    conn = open_db(db)
    prepared = prepare_judge(conn, request, api_key_from_env())
    if not prepared.loaded:
        print("no DailyReport (cascade) reports match the selection", file=sys.stderr)
        return 1
    if dry_run:
        return _print_plan(plan_judge(conn, prepared), model or "", fmt)
    if prepared.sends_without_key:
        print(f"gavel: no API key in {' or '.join('$' + k for k in ENV_KEYS)}; sending "
              f"requests to {urlsplit(base_url).hostname} without one", file=sys.stderr)
    progress = _bar("judging", "reports", TextColumn("{task.fields[calls]}"))
    bar = progress.add_task("judging", total=len(prepared.loaded),
                            calls=_calls(JudgeTally(len(prepared.loaded))))

    def show(tally: JudgeTally) -> None:
        progress.update(bar, completed=len(tally.finished), calls=_calls(tally))

    with progress:
        result = run_judge(conn, prepared, progress=show)
    _print_result(result, model or "", base_url, sources, fmt)
    if result.status == "interrupted":
        print(f"gavel: interrupted; kept {result.usage['reports']} finished reports in run "
              f"{result.run_id} (re-running reuses every cached reply)", file=sys.stderr)
        return 130
    return 0


def _calls(tally: JudgeTally) -> str:
    return f"{tally.requests} requests, {tally.cache_hits} cached"


def _money(value: float | None) -> str:
    return "unknown (no price for this model; use --price)" if value is None else f"${value:.4f}"


def _print_result(result: JudgeResult, model: str, base_url: str, sources: str,
                  fmt: str) -> None:
    usage = result.usage
    changes: list[dict[str, Any]] = [
        {"system": c.system, "metric": c.metric, "before": c.before, "after": c.after,
         "delta": c.delta} for c in result.changes]
    if fmt == "json":
        emit([{"run": result.run_id, "model": model, "prompt_version": PROMPT_VERSION,
               "usage": usage, "scores": changes}], [], "json")
        return
    judged = ", ".join(f"{k} {n}" for k, n in sorted(usage["judgments"].items())) or "none"
    print(f"judge run {result.run_id}: {usage['status']}, {usage['reports']} of "
          f"{usage['reports_selected']} reports judged by {model} at "
          f"{public_url(base_url)} (prompts {PROMPT_VERSION})")
    print(f"  a candidate run: no score changes until you activate it, after seeing its "
          f"agreement with the human labels (`gavel runs activate {result.run_id}`)")
    print(f"  judgments: {judged}; judge errors: {usage['judge_errors']}; "
          f"new claims: {usage['claims']}; step errors: {usage['step_errors_total']}")
    print(f"  requests: {usage['requests']} (retries {usage['retries']}, repair requests "
          f"{usage['repair_requests']}, local repairs {usage['local_repairs']}), cache hits: "
          f"{usage['cache_hits']}")
    print(f"  tokens: {usage['prompt_tokens']:,} in / {usage['completion_tokens']:,} out "
          f"(saved by the cache: {usage['saved_prompt_tokens']:,} / "
          f"{usage['saved_completion_tokens']:,}); cost: {_money(usage['cost_usd'])}")
    if sources == "fetch":
        print(f"  pages fetched: {usage['pages']} ({usage['page_errors']} unusable; verdicts "
              "on those are 'unknown' without a model call)")
    if any(c["before"] != c["after"] for c in changes):
        emit([{**c, "before": fmt_number(c["before"]), "after": fmt_number(c["after"]),
               "delta": fmt_delta(c["delta"])} for c in changes],
             ["system", "metric", "before", "after", "delta"], "table",
             title="system scores (judge): before → after",
             numeric=("before", "after", "delta"), console=wide_console())


def _print_plan(plan: JudgePlan, model: str, fmt: str) -> int:
    rows = [{"step": s.step, "calls": s.calls, "cached": s.cached,
             "unknown_cache": s.unknown_cache, "input_tokens": s.input_tokens,
             "output_tokens": s.output_tokens} for s in plan.steps]
    if fmt == "json":
        emit([{"reports": plan.reports, "steps": rows, "input_tokens": plan.input_tokens,
               "output_tokens": plan.output_tokens, "estimated_cost_usd": plan.cost}], [],
             "json")
        return 0
    emit(rows, ["step", "calls", "cached", "unknown_cache", "input_tokens", "output_tokens"],
         "table", title=f"dry run: {plan.reports} reports, model {model}, "
         f"prompts {PROMPT_VERSION}",
         numeric=("calls", "cached", "unknown_cache", "input_tokens", "output_tokens"))
    print(f"estimated tokens: {plan.input_tokens:,} in / {plan.output_tokens:,} out (about 4 "
          "characters a token; claim-matching calls depend on what extraction finds and are "
          f"not counted); estimated cost of the uncached calls: {_money(plan.cost)}")
    print("nothing was sent.")
    return 0


# -- fetch ----------------------------------------------------------------------------------------

@click.command(help="Fetch the pages the selected reports cite and keep them (table "
               "page_fetch), so that `gavel judge --sources stored` judges against them. "
               "ctrl+c stops, keeping what was fetched (exit 130).")
@db_option
@_selection_options
@_fetch_options
@format_option("table", "json", "csv")
def fetch(db: Path | None, fmt: str, **options: Any) -> int:
    conn = open_db(db)
    urls = cited_url_suites(conn, selected_reports(conn, _selection(options)))
    if not urls:
        print("no cited URLs in the selected reports", file=sys.stderr)
        return 1
    progress = _bar("fetching", "pages")
    bar = progress.add_task("fetching", total=len(urls))
    with progress:
        result = fetch_pages(conn, urls, _fetch_config(options),
                             progress=lambda n: progress.update(bar, completed=n))
    pages = result.pages
    records = [{"url": p.url, "status": p.status, "type": (p.content_type or "").split(";")[0],
                "chars": len(p.text), "sha256": p.sha256[:12], "error": p.error or ""}
               for p in pages]
    emit(records, ["url", "status", "type", "chars", "sha256", "error"], fmt,
         numeric=("status", "chars"), console=wide_console() if fmt == "table" else None)
    if fmt == "table":
        failed = sum(1 for p in pages if p.error)
        print(f"{len(pages)} pages fetched ({failed} unusable), kept in page_fetch; "
              "`gavel judge --sources stored` judges against them")
    return 130 if result.interrupted else 0
