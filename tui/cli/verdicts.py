"""``gavel verdicts``: judgments with the judge's value beside the effective one."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from reviewer.registry import verdict_kinds
from store.views.queries import verdict_rows
from tui.cli.options import REPORT_HELP, db_option, format_option, open_db
from tui.cli.output import emit


@click.command(
    help="List judgments with the judge's value, the effective value (the latest "
    "live human decision, else the judge's), whether a human decided and the "
    "suspicion flags on it (the ◆ reasons the workstation shows: in JSON a list of "
    "{rule, weight, reason}, in a table and CSV the reasons joined by ' | '). Exits 1 "
    "when none match."
)
@db_option
@click.option("--report", default=None, help=REPORT_HELP)
@click.option("--kind", default=None, help="verdict kind (ins, rat, claim, consistency, …)")
@click.option("--undecided", is_flag=True, help="only those no human decided")
@click.option("--differs", is_flag=True, help="only those where human ≠ judge")
@click.option(
    "--suspicious",
    is_flag=True,
    help="only those with a suspicion flag (◆; with --undecided: what the queue counts)",
)
@click.option("--all-runs", is_flag=True, help="include non-current judge runs")
@format_option()
def verdicts(
    db: Path | None,
    report: str | None,
    kind: str | None,
    undecided: bool,
    differs: bool,
    suspicious: bool,
    all_runs: bool,
    fmt: str,
) -> int:
    conn = open_db(db)
    rows = verdict_rows(
        conn,
        report=report,
        kind=kind,
        undecided=undecided,
        differs=differs,
        include_stale=all_runs,
        suspicious=suspicious,
    )
    kinds = verdict_kinds()
    records = [
        {
            "id": r.id,
            "report": r.report,
            "kind": r.kind,
            "subject": r.subject,
            "judge_value": r.judge_value,
            "value": r.value,
            "decided": r.status or "",
            "scale": kinds[r.kind].scale.name if r.kind in kinds else "",
            "run": r.run,
            "error": r.error,
            "suspicion": _suspicion(r.suspicions, fmt),
        }
        for r in rows
    ]
    columns = ["id", "report", "kind", "subject", "judge_value", "value", "decided", "scale"]
    columns += ["suspicion"] if fmt == "table" else ["run", "suspicion"]
    if fmt == "table":
        if not records:
            print("no verdicts match", file=sys.stderr)
            return 1
        _short_values(records)
    emit(records, columns + (["error"] if fmt != "table" else []), fmt, numeric=("id",))
    return 0


def _short_values(records: list[dict[str, Any]]) -> None:
    """A table is for people: four significant digits (JSON and CSV keep every digit)."""
    from tui.numfmt import short_value

    for record in records:
        for key in ("judge_value", "value"):
            if record[key] is not None:
                record[key] = short_value(str(record[key]))


def _suspicion(flags: tuple[tuple[str, float, str], ...], fmt: str) -> object:
    """A verdict's flags as JSON objects, or as one cell of reasons (a table marks each ◆ as
    the workstation does; CSV keeps the bare reasons)."""
    if fmt == "json":
        return [
            {"rule": rule, "weight": weight, "reason": reason} for rule, weight, reason in flags
        ]
    mark = "◆ " if fmt == "table" else ""
    return " | ".join(f"{mark}{reason}" for _, _, reason in flags)
