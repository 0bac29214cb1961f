"""Subcommands about scores: ``scores`` (both variants with the delta), ``options`` (the named
scoring choices) and ``rebuild`` (every derived table from inputs and the log)."""

from __future__ import annotations

import sqlite3
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from reviewer.errors import InputError
from reviewer.registry import find_framework, frameworks
from store.reviewlog.events import rebuild_state
from store.reviewlog.subjects import RUN_SELECTION_KEY, RUN_SELECTIONS, run_selection
from store.scores.cache import ensure_scores, load_options, rebuild_scores, set_options
from store.sqlite.tx import transaction
from store.sqlite.writelock import announced
from store.views.queries import ScoreRow, counts, score_rows
from tui.cli.options import db_option, format_option, open_db
from tui.cli.output import emit
from tui.render.tables import fmt_delta, fmt_number

if TYPE_CHECKING:
    from rich.console import Console


@click.command(
    help="Every metric in both variants (judge, adjudicated) with the delta, per "
    "system or per report. Exits 1 when no score matches."
)
@db_option
@click.option("--framework", default=None, help="only this framework (cascade, race, …)")
@click.option("--system", default=None, help="only this system (id or name)")
@click.option(
    "--per",
    type=click.Choice(("system", "report")),
    default="system",
    help="aggregate per system (default) or list every report",
)
@click.option(
    "--all",
    "include_parts",
    is_flag=True,
    help="include the hidden aggregation parts (metrics starting with _)",
)
@format_option()
def scores(
    db: Path | None,
    framework: str | None,
    system: str | None,
    per: str,
    include_parts: bool,
    fmt: str,
) -> int:
    conn = open_db(db)
    ensure_scores(conn)
    return print_scores(
        conn, per=per, framework=framework, system=system, include_parts=include_parts, fmt=fmt
    )


def print_scores(
    conn: sqlite3.Connection,
    *,
    per: str,
    framework: str | None,
    system: str | None,
    include_parts: bool,
    fmt: str,
) -> int:
    rows = score_rows(
        conn, per=per, framework=framework, system=system, include_parts=include_parts
    )
    if not rows:
        _explain_no_scores(conn, framework, system)
        return 1
    records = [_record(row, per) for row in rows]
    columns = (
        ["framework", "system"]
        + (["task"] if per == "report" else [])
        + ["metric", "judge", "adjudicated", "delta", "n"]
    )
    if fmt != "table":
        emit(records, columns, fmt)
        return 0
    console = None
    if sys.stdout.isatty():  # piped: plain tables, without Rich (tui.cli.output)
        from rich.console import Console

        console = Console()
    for name in dict.fromkeys(r["framework"] for r in records):
        _framework_table(name, [r for r in records if r["framework"] == name], columns, console)
    return 0


def _explain_no_scores(conn: sqlite3.Connection, framework: str | None, system: str | None) -> None:
    """Why nothing is listed: the filters match nothing, or there are no scores at all."""
    filters = [
        f"--{name} {value}"
        for name, value in (("framework", framework), ("system", system))
        if value
    ]
    if filters and conn.execute("SELECT 1 FROM score LIMIT 1").fetchone():
        print(
            f"no scores match {' '.join(filters)} (gavel scores without them lists what there is)",
            file=sys.stderr,
        )
    else:
        print("no scores: import a run first (gavel import PATH, or gavel demo)", file=sys.stderr)


def _record(row: ScoreRow, per: str) -> dict[str, Any]:
    record: dict[str, Any] = {"framework": row.framework, "system": row.system}
    if per == "report":
        record["task"] = row.task
        record["report"] = row.report
    record.update(
        metric=row.metric,
        judge=row.judge,
        adjudicated=row.adjudicated,
        delta=row.delta,
        n=row.n,
    )
    return record


def _framework_table(
    name: str, records: list[dict[str, Any]], columns: list[str], console: Console | None
) -> None:
    """One benchmark's scores as a table, its metrics in the benchmark's order and digits."""
    fw = find_framework(name)  # only the benchmarks these scores are from
    order = {m.name: i for i, m in enumerate(fw.metrics)} if fw else {}
    digits = {m.name: m.digits for m in fw.metrics} if fw else {}
    subset = sorted(
        records,
        key=lambda r: (
            r["system"],
            r.get("task") or "",
            order.get(r["metric"], 999),
            r["metric"],
        ),
    )
    shown = [
        {
            **r,
            "judge": fmt_number(r["judge"], digits.get(r["metric"], 3)),
            "adjudicated": fmt_number(r["adjudicated"], digits.get(r["metric"], 3)),
            "delta": fmt_delta(r["delta"], max(digits.get(r["metric"], 3), 2)),
        }
        for r in subset
    ]
    label = fw.label if fw else name
    emit(
        shown,
        columns[1:],
        "table",
        title=f"{label} ({name}) — judge → adjudicated",
        numeric=("judge", "adjudicated", "delta", "n"),
        console=console,
    )


@click.command(
    help="Show or set the named scoring options (the [CHOICE]s of the specs); "
    "setting one rebuilds the scores. run_selection=subject|report says which active "
    "run's verdict counts: per subject the newest valid one (an errored verdict never "
    "replaces another run's valid one; the default), or per report and verdict kind "
    "every verdict of the newest run that judged it, as a benchmark's own script "
    "scores one run."
)
@db_option
@click.argument(
    "settings",
    nargs=-1,
    metavar="FRAMEWORK.OPTION=VALUE...",
    help="e.g. cascade.v2_without_groups=literal or run_selection=report (rebuilds the scores)",
)
@format_option()
def options(db: Path | None, settings: tuple[str, ...], fmt: str) -> int:
    conn = open_db(db)
    if settings:
        # Every setting and the one rebuild they need, in one transaction: all or none.
        with transaction(conn), announced(conn, "options " + " ".join(settings)):
            for setting in settings:
                name, sep, value = setting.partition("=")
                if sep and name == RUN_SELECTION_KEY:
                    _set_run_selection(conn, value)
                    continue
                framework, dot, option = name.partition(".")
                if not sep or not dot:
                    raise InputError(
                        "command line", f"expected FRAMEWORK.OPTION=VALUE, got {setting!r}"
                    )
                try:
                    set_options(conn, framework, {option: value}, rebuild=False)
                except (KeyError, ValueError) as exc:
                    raise InputError("command line", str(exc)) from exc
            rebuild_scores(conn)
    current = load_options(conn)
    records = [
        {
            "framework": "",
            "option": RUN_SELECTION_KEY,
            "value": run_selection(conn),
            "default": RUN_SELECTIONS[0],
            "choices": " | ".join(RUN_SELECTIONS),
            "meaning": "which active run's verdict counts: per subject the newest valid "
            "one, or per report and kind every verdict of the newest run that judged it",
        }
    ]
    for name, fw in frameworks().items():
        for spec in fw.options:
            records.append(
                {
                    "framework": name,
                    "option": spec.name,
                    "value": current[name][spec.name],
                    "default": spec.default,
                    "choices": " | ".join(spec.choices),
                    "meaning": spec.description,
                }
            )
    emit(records, ["framework", "option", "value", "default", "choices", "meaning"], fmt)
    return 0


def _set_run_selection(conn: sqlite3.Connection, value: str) -> None:
    from store.runs.records import set_run_selection

    try:
        set_run_selection(conn, value)
    except ValueError as exc:
        raise InputError("command line", str(exc)) from exc


@click.command(
    help="Rebuild every derived table (decisions, scores, suspicion flags) from the "
    "inputs and the review log."
)
@db_option
def rebuild(db: Path | None) -> int:
    conn = open_db(db)
    started = time.perf_counter()
    from store.triage.suspicion import refresh_suspicion

    # One transaction: a rebuild killed half-way leaves the database as it was.
    with transaction(conn), announced(conn, "rebuild"):
        rebuild_state(conn)
        rebuild_scores(conn)
        flagged = refresh_suspicion(conn)
    n = counts(conn)
    print(
        f"rebuilt {n['decided']:,} decisions from {n['review_event']:,} events, every "
        f"score and {flagged:,} suspicion flags in {time.perf_counter() - started:.2f} s"
    )
    return 0
