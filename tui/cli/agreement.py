"""``gavel agreement``: judge vs human, reviewer vs reviewer, UserPref vs overall ratings.

The tables are :func:`tui.render.agreement.agreement_renderables`, the same the workstation's
agreement screen shows.
"""

from __future__ import annotations

import sys
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING

import click
from rich.console import Console

from store.scores.cache import ensure_scores
from store.views.agreement import agreement as agreement_report
from tui.cli.options import db_option, format_option, open_db
from tui.cli.output import print_json
from tui.render.agreement import DISAGREEMENTS_SHOWN, agreement_renderables

if TYPE_CHECKING:
    from store.assignments.agreement import OverlapReport


@click.command(
    help="Agreement of the judge with the human decisions (accuracy, Cohen's and "
    "weighted kappa with 95% bootstrap intervals, confusion matrices, the items "
    "that disagree), of reviewers with each other, and of the computed UserPref "
    "level with reviewers' overall ratings, and reviewers against each other on the "
    "overlap `gavel assign` hands out. Exits 1 when nobody has decided yet."
)
@db_option
@click.option("--framework", default=None, help="only this framework (cascade, race, …)")
@click.option(
    "--resamples",
    type=int,
    default=1000,
    help="bootstrap resamples for the 95% intervals (default 1000)",
)
@click.option(
    "--disagreements",
    type=int,
    default=DISAGREEMENTS_SHOWN,
    metavar="N",
    help=f"disagreeing items listed per group (default {DISAGREEMENTS_SHOWN}; -1 lists all)",
)
@click.option(
    "--overlap",
    "only_overlap",
    is_flag=True,
    help="only reviewers against each other on the overlap (subjects `gavel assign` handed "
    "to two or more), with intervals, per kind and per reviewer",
)
@format_option("table", "json")
def agreement(
    db: Path | None,
    framework: str | None,
    resamples: int,
    disagreements: int,
    only_overlap: bool,
    fmt: str,
) -> int:
    from store.assignments.agreement import overlap_agreement
    from tui.render.overlap import overlap_renderables

    conn = open_db(db)
    ensure_scores(conn)
    overlap = overlap_agreement(conn, n_resamples=resamples)
    if only_overlap:
        return _overlap_only(overlap, fmt)
    report = agreement_report(conn, framework, n_resamples=resamples)
    if fmt == "json":
        print_json({**asdict(report), "overlap": asdict(overlap)})
        return 0
    if not (report.judge_human or report.reviewers or report.ratings or overlap.subjects):
        print(
            "no human decisions or ratings yet: decide with `gavel decide`, rate reports with "
            "`gavel rate`, or merge a reviewer's log with `gavel merge`",
            file=sys.stderr,
        )
        return 1
    console = Console()
    for renderable in agreement_renderables(report, disagreements):
        console.print(renderable)
    for renderable in overlap_renderables(overlap):
        console.print(renderable)
    return 0


def _overlap_only(overlap: OverlapReport, fmt: str) -> int:
    """``--overlap``: exits 1 when nothing is on the overlap."""
    from tui.render.overlap import overlap_renderables

    if fmt == "json":
        print_json(asdict(overlap))
        return 0 if overlap.subjects else 1
    if not overlap.subjects:
        print(
            "nothing is on the overlap: hand work out with `gavel assign --to ana,ben "
            "--overlap 0.2`",
            file=sys.stderr,
        )
        return 1
    console = Console()
    for renderable in overlap_renderables(overlap):
        console.print(renderable)
    return 0
