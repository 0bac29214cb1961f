"""``gavel runs card RUN``: a judge run's agreement with the human labels per benchmark, kind
and rubric item (:mod:`reviewer.judge_card`), as a table, JSON or Markdown; ``--propose``
turns the items below the threshold into "revise this rubric item" proposals."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from tui.cli.options import db_option, open_db, reviewer_name, reviewer_option

if TYPE_CHECKING:
    import sqlite3

    from reviewer.judge_card.build import Card


@click.command(
    "card",
    help="The judge card of a run: its agreement with the human decisions per "
    "benchmark, kind/dimension and rubric item (worst first) — accuracy, κ, "
    "weighted κ or AC1 as fits the scale, the confusion matrix and the direction "
    "of bias, each with an interval and the number of labels behind it. Rows "
    "with fewer than --min-labels labels get no coefficient interval (too few "
    "labels). --propose records each item whose coefficient's upper bound is "
    "below --threshold as a 'revise_item' proposal (once per item and run).",
)
@db_option
@click.argument("run", help="the judge run's id (see `gavel runs`)")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(("table", "json", "markdown")),
    default="table",
    help="output format (default: table)",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="write to this file instead of standard output (a table is written as Markdown)",
)
@click.option(
    "--threshold",
    type=click.FloatRange(-1.0, 1.0),
    default=0.4,
    show_default=True,
    help="an item whose coefficient's upper bound is below this is to be revised",
)
@click.option(
    "--min-labels",
    type=click.IntRange(2),
    default=20,
    show_default=True,
    help="labels below which a row gets no coefficient interval",
)
@click.option(
    "--confidence",
    type=click.FloatRange(0.5, 0.999),
    default=0.95,
    show_default=True,
    help="confidence of every interval",
)
@click.option(
    "--resamples", type=click.IntRange(100), default=1000, show_default=True, help="bootstrap"
)
@click.option("--seed", type=int, default=0, show_default=True, help="bootstrap seed")
@click.option(
    "--propose",
    is_flag=True,
    help="record the items below the threshold as 'revise_item' proposals",
)
@reviewer_option
def card(
    db: Path | None,
    run: str,
    fmt: str,
    output: Path | None,
    threshold: float,
    min_labels: int,
    confidence: float,
    resamples: int,
    seed: int,
    propose: bool,
    reviewer: str | None,
) -> int:
    from reviewer.judge_card.build import Settings
    from store.runs.card import run_card
    from store.scores.cache import ensure_scores

    conn = open_db(db)
    ensure_scores(conn)
    found = run_card(conn, run, Settings(confidence, min_labels, threshold, resamples, seed))
    _write(found, fmt, output)
    if propose:
        _propose(conn, found, reviewer_name(reviewer))
    return 0


def _write(found: Card, fmt: str, output: Path | None) -> None:
    from reviewer.judge_card.text import card_markdown, card_record

    if fmt == "table" and output is None:
        from tui.cli.output import wide_console
        from tui.render.judge_card import card_renderables

        console = wide_console()
        for renderable in card_renderables(found):
            console.print(renderable)
        return
    if fmt == "json":
        import json

        text = json.dumps(card_record(found), ensure_ascii=False, indent=2) + "\n"
    else:
        text = card_markdown(found)
    if output is None:
        if fmt == "json":
            from tui.cli.output import print_json

            print_json(card_record(found))
        else:
            sys.stdout.write(text)
        return
    output.write_text(text, encoding="utf-8")
    print(f"wrote the judge card of {found.run} to {output}", file=sys.stderr)


def _propose(conn: sqlite3.Connection, found: Card, reviewer: str) -> None:
    from reviewer.judge_card.build import revision_payload
    from store.reviews.proposals import propose_revision
    from store.runs.records import run_rows

    rows = run_rows(conn, found.run)
    marks = ",".join("?" * len(rows))
    suites = [
        int(s)
        for (s,) in conn.execute(
            f"SELECT DISTINCT suite_id FROM judge_run WHERE id IN ({marks})", rows
        )
    ]
    made = kept = 0
    for row in found.flagged:
        task, criterion = row.criteria[0]
        value = row.stats.value
        upper = value.upper if value is not None else None
        rationale = (
            f"judge card of {found.run}: {row.stats.coefficient} upper bound "
            f"{upper:.3f} < {found.settings.threshold} on {row.stats.n} labels"
            if upper is not None
            else f"judge card of {found.run}"
        )
        proposed = propose_revision(
            conn,
            reviewer,
            suites,
            task,
            criterion,
            row.framework,
            revision_payload(found, row),
            rationale,
        )
        if proposed is None:
            kept += 1
        else:
            made += 1
            print(
                f"proposed revise_item {proposed.uuid[:8]} for {row.kind} {row.item}",
                file=sys.stderr,
            )
    print(
        f"{made} revise_item proposal(s) recorded, {kept} already proposed for this run "
        f"({len(found.flagged)} item(s) below the threshold; see `gavel proposals --kind "
        "revise_item`)",
        file=sys.stderr,
    )
