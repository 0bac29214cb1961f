"""``gavel migrate-judge``: re-judge a run's reports with a new model, validated against the
human labels first (the work is :mod:`store.runs.migration`'s and :mod:`store.runs.judging`'s)."""

from __future__ import annotations

import sqlite3
import sys
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from reviewer.judge.client import ENV_KEYS, api_key_from_env
from store.runs.judging import DEFAULT_BASE_URL, JudgePlan, JudgeRequest, parse_price, run_judge
from tui.cli.options import db_option, format_option, open_db
from tui.cli.output import emit, wide_console

if TYPE_CHECKING:
    from store.runs.migration import MigrationPlan


def _money(value: float | None) -> str:
    return "unknown (use --price)" if value is None else f"${value:.4f}"


def _plan_row(phase: str, plan: JudgePlan) -> dict[str, Any]:
    return {
        "phase": phase,
        "reports": plan.reports,
        "calls": sum(s.calls for s in plan.steps),
        "uncached_calls": plan.uncached_calls,
        "input_tokens": plan.input_tokens,
        "output_tokens": plan.output_tokens,
        "cost_usd": plan.cost,
        "batch_cost_usd": plan.batch_cost,
    }


@click.command(
    help="Move a judge run to a new model, checked against the humans first: the "
    "new model judges the reports where humans labelled subjects of RUN (cheap), "
    "its agreement with those labels is shown beside what counts now, with the "
    "exact score and rank changes activating it would make; then, on "
    "confirmation, it judges every report RUN judged (the labelled ones come from "
    "the cache). The cost of both phases is estimated first (tokens x price, and "
    "through the Batch API at its discount). Both runs are candidates: activate "
    "with `gavel runs activate`. The API key comes from "
    + " or ".join(f"${k}" for k in ENV_KEYS)
    + "."
)
@db_option
@click.option(
    "--from",
    "source",
    required=True,
    metavar="RUN",
    help="the judge run to migrate (see `gavel runs`)",
)
@click.option(
    "--model",
    envvar="GAVEL_MODEL",
    required=True,
    help="the new judge model (default: $GAVEL_MODEL)",
)
@click.option(
    "--base-url",
    envvar="GAVEL_BASE_URL",
    default=DEFAULT_BASE_URL,
    help="OpenAI-compatible API root (default: $GAVEL_BASE_URL or the OpenAI API)",
)
@click.option(
    "--framework",
    default=None,
    metavar="NAME",
    help="the framework to re-judge (default: the one RUN judged)",
)
@click.option(
    "--sources",
    type=click.Choice(("fetch", "stored", "none")),
    default=None,
    help="cited pages (default: the framework's; the workstation's pages are `stored`)",
)
@click.option(
    "--price",
    default=None,
    metavar="IN,OUT",
    help="US dollars per million input and output tokens (overrides the table)",
)
@click.option("--concurrency", type=int, default=4, help="requests in flight (default 4)")
@click.option(
    "--batch",
    is_flag=True,
    help="send both phases through the Batch API (waits for each; half price)",
)
@click.option(
    "--poll",
    "poll_seconds",
    type=float,
    default=30.0,
    metavar="SECONDS",
    help="seconds between batch polls (default 30)",
)
@click.option("--run-id", default=None, help="id of the full run (the labelled phase is <id>-gold)")
@click.option("--gold-only", is_flag=True, help="stop after the labelled phase")
@click.option("--yes", "-y", "confirmed", is_flag=True, help="run the full phase without asking")
@click.option("--dry-run", is_flag=True, help="print the cost estimate; send nothing")
@format_option("table", "json")
def migrate_judge(
    db: Path | None,
    source: str,
    model: str,
    base_url: str,
    framework: str | None,
    sources: str | None,
    price: str | None,
    concurrency: int,
    batch: bool,
    poll_seconds: float,
    run_id: str | None,
    gold_only: bool,
    confirmed: bool,
    dry_run: bool,
    fmt: str,
) -> int:
    from store.runs.migration import plan_migration

    conn = open_db(db)
    request = JudgeRequest(
        model=model,
        base_url=base_url,
        sources=sources,
        price=parse_price(price),
        concurrency=concurrency,
        batch=batch,
        run_id=run_id,
        description=f"migration of {source} to {model}",
    )
    plan = plan_migration(conn, source, request, api_key_from_env(), framework)
    rows = [
        _plan_row("labelled reports", plan.gold_plan),
        _plan_row("every report", plan.full_plan),
    ]
    if fmt == "table":
        _print_estimate(plan, model, rows)
    if dry_run:
        if fmt == "json":
            emit([{**_summary(plan), "steps": sorted(plan.steps), "phases": rows}], [], "json")
        return 0
    if not plan.gold_reports and not _without_labels(source, confirmed):
        return 1
    summary = _summary(plan)
    if plan.gold_reports:
        stop = _labelled_first(
            conn,
            plan,
            summary,
            fmt=fmt,
            poll_seconds=poll_seconds,
            gold_only=gold_only,
            model=model,
            confirmed=confirmed,
        )
        if stop is not None:
            return stop
    return _full_phase(conn, plan, summary, fmt=fmt, poll_seconds=poll_seconds)


def _summary(plan: MigrationPlan) -> dict[str, Any]:
    return {"source": plan.source, "framework": plan.framework}


def _print_estimate(plan: MigrationPlan, model: str, rows: list[dict[str, Any]]) -> None:
    print(
        f"migrating {plan.source} ({plan.framework}) to {model}: steps "
        f"{', '.join(sorted(plan.steps))}; {len(plan.gold_reports)} of "
        f"{len(plan.reports)} reports carry {plan.labelled_subjects} human labels"
    )
    emit(
        [
            {
                **r,
                "cost_usd": _money(r["cost_usd"]),
                "batch_cost_usd": _money(r["batch_cost_usd"]),
            }
            for r in rows
        ],
        [
            "phase",
            "reports",
            "calls",
            "uncached_calls",
            "input_tokens",
            "output_tokens",
            "cost_usd",
            "batch_cost_usd",
        ],
        "table",
        title="estimated cost (about 4 characters a token; the full phase costs less "
        "once the labelled phase is cached)",
        numeric=("reports", "calls", "uncached_calls", "input_tokens", "output_tokens"),
        console=wide_console(),
    )


def _without_labels(source: str, confirmed: bool) -> bool:
    """No human label to validate against: say so; go on only if the full run was
    confirmed up front."""
    print(
        f"gavel: no human labels on the subjects {source} judged: nothing to validate "
        "the new model against",
        file=sys.stderr,
    )
    if not confirmed:
        print("label some subjects first, or run the full migration with --yes", file=sys.stderr)
    return confirmed


def _labelled_first(
    conn: sqlite3.Connection,
    plan: MigrationPlan,
    summary: dict[str, Any],
    *,
    fmt: str,
    poll_seconds: float,
    gold_only: bool,
    model: str,
    confirmed: bool,
) -> int | None:
    """The labelled phase, then whether to go on: the exit status where the migration stops
    there (the new model failed, ``--gold-only``, or no confirmation), else None."""
    if not _labelled_phase(conn, plan, summary, fmt=fmt, poll_seconds=poll_seconds):
        return 1
    if not gold_only and _full_phase_wanted(plan, model, confirmed):
        return None
    if fmt == "json":
        emit([summary], [], "json")
    return 0


def _labelled_phase(
    conn: sqlite3.Connection,
    plan: MigrationPlan,
    summary: dict[str, Any],
    *,
    fmt: str,
    poll_seconds: float,
) -> bool:
    """Judge the labelled reports and show the agreement preview; False if the new model
    failed every call."""
    from store.runs.activation import preview

    gold = run_judge(conn, plan.gold, wait=True, poll_seconds=poll_seconds)
    seen = preview(conn, gold.run_id)
    summary["gold_run"] = gold.run_id
    summary["gold_status"] = gold.status
    summary["preview"] = asdict(seen)
    if fmt == "table":
        from tui.render.activation import preview_renderables

        print(f"labelled phase: candidate run {gold.run_id} ({gold.status})")
        console = wide_console()
        for renderable in preview_renderables(seen):
            console.print(renderable)
    if gold.status == "failed":
        print(f"gavel: the new model failed every call of {gold.run_id}", file=sys.stderr)
        return False
    return True


def _full_phase_wanted(plan: MigrationPlan, model: str, confirmed: bool) -> bool:
    """Confirmed up front, or asked on a terminal; otherwise say how to go on."""
    if confirmed or (
        sys.stdin.isatty()
        and click.confirm(
            f"judge all {len(plan.reports)} reports with {model}?", default=False, err=True
        )
    ):
        return True
    print(
        f"stopped after the labelled phase; run again with --yes for the full "
        f"run (its {len(plan.gold_reports)} labelled reports are cached)",
        file=sys.stderr,
    )
    return False


def _full_phase(
    conn: sqlite3.Connection,
    plan: MigrationPlan,
    summary: dict[str, Any],
    *,
    fmt: str,
    poll_seconds: float,
) -> int:
    full = run_judge(conn, plan.full, wait=True, poll_seconds=poll_seconds)
    summary.update(full_run=full.run_id, full_status=full.status, usage=full.usage)
    if fmt == "json":
        emit([summary], [], "json")
    else:
        usage = full.usage
        print(
            f"full phase: candidate run {full.run_id} ({full.status}): {usage['reports']} "
            f"reports, {usage['requests']} requests, {usage['cache_hits']} from the cache; "
            f"cost {_money(usage['cost_usd'])}. Activate it with `gavel runs activate "
            f"{full.run_id}` (it shows the agreement and score changes again first)"
        )
    return 1 if full.status == "failed" else (130 if full.status == "interrupted" else 0)
