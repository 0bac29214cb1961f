"""Subcommands about judge runs: ``runs`` lists them (or ranks them against the human labels),
``runs activate`` validates a candidate and makes it count, ``runs retire`` retires one,
``gavel compare`` (tui/cli/compare.py) sets two or more side by side."""

from __future__ import annotations

import sqlite3
import sys
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from reviewer.textsafety import printable
from store.runs.records import list_runs, mark_stale_runs, set_active
from store.scores.cache import ensure_scores
from tui.cli.options import db_option, format_option, open_db
from tui.cli.output import emit, wide_console
from tui.render.tables import fmt_number

if TYPE_CHECKING:
    from store.runs.activation import ActivationPreview


@click.group(
    invoke_without_command=True,
    help="Judge runs (imported and Gavel's own) with their counts, tokens and cost. A "
    "run Gavel makes is a candidate: nothing it says counts until it is "
    "activated, after its agreement with the human labels and the scores it "
    "would change are shown (`gavel runs activate RUN`).",
)
@db_option
@click.option(
    "--against-gold",
    is_flag=True,
    help="rank the runs by agreement with the human decisions, best first",
)
@format_option("table", "json", "csv")
@click.pass_context
def runs(ctx: click.Context, db: Path | None, against_gold: bool, fmt: str) -> int:
    if ctx.invoked_subcommand is not None:
        return 0
    conn = open_db(db)
    ensure_scores(conn)
    mark_stale_runs(conn)  # a run whose process died shows as interrupted
    if against_gold:
        return _against_gold(conn, fmt)
    records = []
    for info in list_runs(conn):
        usage = info.usage
        records.append(
            {
                "run": info.id,
                "model": info.model,
                "prompt_version": info.prompt_version,
                "created": info.created_at[:19].replace("T", " "),
                "active": "yes" if info.active else "candidate",
                "status": usage.get("status", "imported"),
                "reports": info.reports,
                "judgments": " ".join(f"{k}:{n}" for k, n in sorted(info.judgments.items())),
                "errors": info.errors,
                "claims": info.claims,
                "tokens": (
                    f"{usage.get('prompt_tokens', 0):,}/{usage.get('completion_tokens', 0):,}"
                    if "prompt_tokens" in usage
                    else ""
                ),
                "cost_usd": usage.get("cost_usd"),
                "suites": ",".join(info.suites),
                "usage": usage if fmt == "json" else None,
            }
        )
    columns = [
        "run",
        "model",
        "prompt_version",
        "created",
        "active",
        "status",
        "reports",
        "judgments",
        "errors",
        "claims",
        "tokens",
        "cost_usd",
    ]
    if fmt == "json":
        columns += ["suites", "usage"]
    if not records:
        print("no judge runs", file=sys.stderr)
        return 1
    emit(
        records,
        columns,
        fmt,
        numeric=("reports", "errors", "claims", "cost_usd"),
        console=wide_console() if fmt == "table" else None,
    )
    return 0


def _against_gold(conn: sqlite3.Connection, fmt: str) -> int:
    from store.runs.activation import runs_against_gold

    rows: list[dict[str, Any]] = [
        {
            "run": s.run,
            "model": s.model,
            "active": "yes" if s.active else "candidate",
            "decided_subjects": s.gold.n,
            "agreed": s.gold.agreed,
            "accuracy": s.gold.accuracy,
            "kinds": " ".join(f"{k.kind}:{k.n}" for k in s.gold.kinds),
        }
        for s in runs_against_gold(conn)
    ]
    if fmt == "table":
        rows = [
            {
                **r,
                "accuracy": fmt_number(r["accuracy"])
                if r["decided_subjects"]
                else "n/a (no decided subject)",
            }
            for r in rows
        ]
    emit(
        rows,
        ["run", "model", "active", "decided_subjects", "agreed", "accuracy", "kinds"],
        fmt,
        numeric=("decided_subjects", "agreed"),
        title="judge runs against the human labels (subjects both judged; best first)",
        console=wide_console() if fmt == "table" else None,
    )
    return 0


@runs.command(
    help="Activate a judge run: from now on it counts, subject by subject, above "
    "every run activated before it (a subject it judged with an error keeps "
    "another active run's valid verdict). Shows first its agreement with the "
    "human labels beside what counts now, its errors and every system's "
    "headline scores and rank before → after; asks for confirmation when it "
    "has errors or agrees with the humans less than what counts now."
)
@db_option
@click.argument("run", help="the judge run's id (see `gavel runs`)")
@click.option(
    "--yes",
    "-y",
    "confirmed",
    is_flag=True,
    help="activate without asking, whatever the preview says",
)
@click.option(
    "--preview",
    "only_preview",
    is_flag=True,
    help="show what activating would change, change nothing",
)
@format_option("table", "json")
def activate(db: Path | None, run: str, confirmed: bool, only_preview: bool, fmt: str) -> int:
    from store.runs.activation import activate as make_active
    from store.runs.activation import preview

    conn = open_db(db)
    ensure_scores(conn)
    seen = preview(conn, run)
    _print_preview(seen, fmt, conn)
    if only_preview:
        return 0
    if seen.needs_confirmation and not confirmed:
        print(
            "gavel: activating needs a confirmation: " + printable("; ".join(seen.reasons)),
            file=sys.stderr,
        )
        if not sys.stdin.isatty() or not click.confirm(
            "activate it anyway?", default=False, err=True
        ):
            print("nothing changed (run again with --yes to activate)", file=sys.stderr)
            return 1
    touched = make_active(conn, run, confirmed=True)
    print(
        f"run {run} is active; current verdicts and scores recomputed for {len(touched)} reports",
        file=sys.stderr,
    )
    return 0


@runs.command(
    "retire",
    help="Retire a judge run: it stops counting (subjects fall back to the other "
    "active runs); its verdicts stay, and it can be activated again. "
    "(`runs deactivate` is the same command under its old name.)",
)
@db_option
@click.argument("run", help="the judge run's id (see `gavel runs`)")
def retire(db: Path | None, run: str) -> int:
    conn = open_db(db)
    ensure_scores(conn)
    touched = set_active(conn, run, False)
    print(
        f"run {run} no longer counts; current verdicts and scores recomputed for "
        f"{len(touched)} reports",
        file=sys.stderr,
    )
    return 0


runs.add_command(
    click.Command(
        "deactivate",
        callback=retire.callback,
        params=retire.params,
        help="The old name of `gavel runs retire`.",
        hidden=True,
    )
)


def _print_preview(seen: ActivationPreview, fmt: str, conn: sqlite3.Connection) -> None:
    from reviewer.judge_card.text import card_record
    from store.runs.card import run_card

    card = run_card(conn, seen.run)
    if fmt == "json":
        record = asdict(seen) | {"needs_confirmation": seen.needs_confirmation}
        emit([record | {"card": card_record(card)}], [], "json")
        return
    from tui.render.activation import preview_renderables

    console = wide_console()
    for renderable in preview_renderables(seen, card):
        console.print(renderable)


def _register_card() -> None:
    """``runs card`` lives in its own module (tui.cli.runs_card)."""
    from tui.cli.runs_card import card

    runs.add_command(card)


_register_card()
