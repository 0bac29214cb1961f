"""``gavel trust``: calibrate a rule that accepts judge verdicts without review where their
agreement with the humans is guaranteed, apply it, show it, clear it (docs/trust.md)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from tui.cli.options import db_option, format_option, open_db, reviewer_name, reviewer_option
from tui.cli.output import emit

if TYPE_CHECKING:
    import sqlite3

    from store.trust.rules import TrustCalibration

_LEVELS = click.FloatRange(0.0, 1.0, min_open=True, max_open=True)


@click.group(
    help="Trust or escalate: from a review plan's gold labels, calibrate a rule that "
    "accepts a judge verdict without review only where its agreement with the humans "
    "is at least 1 − α with confidence 1 − δ; everything else goes to review. Accepted "
    "verdicts are never human labels: scores and estimates keep their judge values. "
    "Method and assumptions: docs/trust.md."
)
def trust() -> None:
    pass


def _calibration_options(func: click.decorators.FC) -> click.decorators.FC:
    for option in reversed(
        (
            click.option(
                "--alpha",
                type=_LEVELS,
                default=0.1,
                show_default=True,
                help="largest disagreement rate allowed among accepted verdicts",
            ),
            click.option(
                "--delta",
                type=_LEVELS,
                default=0.1,
                show_default=True,
                help="chance allowed that the guarantee fails",
            ),
            click.option(
                "--plan",
                "plan_name",
                default=None,
                help="the plan whose decided draws calibrate the rule (default: the newest)",
            ),
            click.option("--suite", default=None, help="benchmark run of the newest plan"),
        )
    ):
        func = option(func)
    return func


def _calibrated(
    db: Path | None, alpha: float, delta: float, plan_name: str | None, suite: str | None
) -> tuple[sqlite3.Connection, TrustCalibration]:
    from store.trust.rules import calibrate_plan

    conn = open_db(db)
    return conn, calibrate_plan(conn, alpha, delta, plan_name, suite)


def _print(result: TrustCalibration) -> None:
    c = result.calibration
    step = c.chosen
    print(
        f"plan {result.plan.name}: {c.labels} gold labels (decided plan draws), "
        f"α={c.alpha:g}, δ={c.delta:g}"
    )
    if c.threshold is None or step is None:
        print("no threshold passes: every verdict goes to review (weak calibration)")
    else:
        print(
            f"guaranteed agreement ≥ {c.guaranteed:.1%} with confidence {1 - c.delta:.0%} "
            f"at threshold {c.threshold:.4f} ({step.labels} labels above it, {step.errors} "
            f"disagreements, bound {step.upper:.3f})"
        )
    print(
        f"accepted: {result.accepted:,} of {result.verdicts:,} undecided verdicts "
        f"({result.share:.1%})"
    )
    emit(
        [
            {
                "kind": k.kind,
                "verdicts": k.verdicts,
                "accepted": k.accepted,
                "share": f"{k.share:.1%}",
                "labels above": k.labels,
                "disagree above": k.errors,
            }
            for k in result.kinds
        ],
        ("kind", "verdicts", "accepted", "share", "labels above", "disagree above"),
        "table",
        title="per kind",
        numeric=("verdicts", "accepted", "share", "labels above", "disagree above"),
    )
    for note in result.notes:
        print(f"note: {note}", file=sys.stderr)


@trust.command(
    "calibrate",
    help="Calibrate the rule on a plan's decided draws and print the guaranteed "
    "agreement, the threshold and the share of verdicts it would accept, per kind. "
    "Stores nothing (`gavel trust apply` does).",
)
@db_option
@_calibration_options
@format_option("table", "json")
def calibrate(
    db: Path | None,
    alpha: float,
    delta: float,
    plan_name: str | None,
    suite: str | None,
    fmt: str,
) -> int:
    from store.trust.rules import dumps

    _conn, result = _calibrated(db, alpha, delta, plan_name, suite)
    if fmt == "json":
        print(dumps(result))
    else:
        _print(result)
    return 0


@trust.command(
    "apply",
    help="Calibrate as `calibrate` does and record the verdicts the rule accepts, "
    "replacing the rule in force. They are marked 'accepted by rule' in the workstation "
    "and can be hidden from the queue; undo with `gavel trust clear`.",
)
@db_option
@reviewer_option
@_calibration_options
def apply(
    db: Path | None,
    reviewer: str | None,
    alpha: float,
    delta: float,
    plan_name: str | None,
    suite: str | None,
) -> int:
    from store.trust.rules import apply_rule

    conn, result = _calibrated(db, alpha, delta, plan_name, suite)
    _print(result)
    if result.calibration.threshold is None:
        print("nothing applied", file=sys.stderr)
        return 1
    rule = apply_rule(conn, result, reviewer_name(reviewer))
    print(f"applied {rule.describe()}: {rule.accepted:,} verdicts accepted")
    return 0


@trust.command("show", help="The rule in force and how many of its acceptances stand.")
@db_option
def show(db: Path | None) -> int:
    from store.trust.standing import current_rule

    rule = current_rule(open_db(db))
    if rule is None:
        print("no trust rule in force (`gavel trust apply` makes one)")
        return 0
    print(f"{rule.describe()}, applied {rule.created_at} by {rule.created_by}")
    print(
        f"{rule.accepted:,} verdicts accepted and still standing (undecided, verdict current); "
        f"guaranteed agreement ≥ {1 - rule.alpha:.1%} with confidence {1 - rule.delta:.0%}"
    )
    return 0


@trust.command(
    "clear",
    help="Remove the rule in force and every verdict it accepted: they go back to review.",
)
@db_option
def clear(db: Path | None) -> int:
    from store.trust.rules import clear_rules

    removed = clear_rules(open_db(db))
    print(f"cleared: {removed:,} accepted verdicts go back to review")
    return 0
