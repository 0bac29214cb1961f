"""Subcommands that move review logs between reviewers: ``log export``, ``merge`` and
``conflicts`` (what two reviewers decided differently; ``gavel adjudicate`` resolves them)."""

from __future__ import annotations

import sys
from dataclasses import asdict
from pathlib import Path

import click

from store.reviewlog.conflicts import conflicts
from store.reviews.merge import MergeResult, merge_path, write_log
from store.scores.cache import ensure_scores
from tui.cli.options import db_option, format_option, open_db
from tui.cli.output import emit, output_file, print_json
from tui.render.tables import subject_name


@click.group(help="The review log: every review event, exportable as JSONL.")
@db_option
def log(db: Path | None) -> None:
    pass


@log.command(
    "export",
    help="Write every review event as JSONL (re-merges with `gavel merge`), "
    "or as Parquet for analysis.",
)
@db_option
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path),
    default=None,
    help="file (default, or -: stdout)",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(("jsonl", "parquet")),
    default="jsonl",
    help="jsonl (default; re-merges) or parquet (needs -o)",
)
def log_export(db: Path | None, output: Path | None, fmt: str) -> int:
    if output is not None and str(output) == "-":
        if fmt == "parquet":
            raise click.UsageError("--format parquet writes a file: give -o PATH, not -")
        output = None  # "-" is standard output, as everywhere else
    conn = open_db(db)
    if fmt == "parquet":
        from store.exports.files import write_log_parquet

        if output is None:
            raise click.UsageError("--format parquet writes a file: give -o PATH")
        n = write_log_parquet(conn, output)
        print(f"wrote {n:,} events to {output}", file=sys.stderr)
        return 0
    with output_file(output, json_lines=True) as out:
        n = write_log(conn, out)
    if output is not None:
        print(f"wrote {n:,} events to {output}", file=sys.stderr)
    return 0


@click.command(
    help="Merge another reviewer's log (a .jsonl export or a gavel database): a "
    "union by event, idempotent, in any order; every event's signature is checked "
    "and no event may undo another reviewer's; the same subject decided "
    "differently becomes a conflict, never a silent overwrite; events about "
    "subjects not here wait until they are imported."
)
@db_option
@click.argument("source", type=click.Path(path_type=Path), help="OTHER.db or LOG.jsonl")
@click.option(
    "--skip-unknown",
    is_flag=True,
    help="leave out events whose subject, report or task is not in this database "
    "(listed) instead of keeping them pending",
)
@format_option("table", "json")
def merge(db: Path | None, source: Path, skip_unknown: bool, fmt: str) -> int:
    conn = open_db(db)
    ensure_scores(conn)
    result = merge_path(conn, source, skip_unknown=skip_unknown)
    if fmt == "json":
        print_json(asdict(result))
        return 0
    print(
        f"merged {result.source}: {result.read:,} events read, {result.added:,} added, "
        f"{result.already_present:,} already present"
        + (f", {len(result.skipped):,} left out" if result.skipped else "")
    )
    if result.reviewers:
        print(f"reviewers added: {', '.join(result.reviewers)}")
    _print_authority(result)
    if result.proposals_added:
        print(f"proposals added: {result.proposals_added:,}")
    if result.pending:
        print(
            f"pending: {result.pending:,} events are about subjects, reports or tasks this "
            "database does not have yet; they apply when those are imported"
        )
    if result.future:
        print(
            f"{result.future:,} events are dated more than a day ahead of this clock "
            "(harmless: a time stamp only orders its own reviewer's events)"
        )
    for line, target, why in result.skipped[:20]:
        print(f"  left out line {line}: {target} ({why})")
    if len(result.skipped) > 20:
        print(f"  … and {len(result.skipped) - 20:,} more")
    print(
        f"conflicts now: {result.conflicts:,}"
        + (
            "  (list them with `gavel conflicts`, resolve with `gavel adjudicate`)"
            if result.conflicts
            else ""
        )
    )
    return 0


@click.command(
    "conflicts",
    help="Subjects reviewers decided differently, with every side "
    "(reviewer, value, reason, rationale); `gavel adjudicate ID` takes the id.",
)
@db_option
@format_option()
def conflicts_(db: Path | None, fmt: str) -> int:
    conn = open_db(db)
    found = conflicts(conn)
    if fmt == "json":
        print_json([asdict(c) for c in found])
        return 0
    rows = [
        {
            "id": c.judgment_id,
            "report": c.report,
            "kind": c.kind,
            "subject": subject_name(c.subject) if fmt == "table" else c.subject,
            "judge": c.judge_value,
            "reviewer": s.reviewer,
            "value": s.value,
            "reason": s.reason,
            "rationale": s.rationale,
            "at": s.created_at,
            "event": s.event,
        }
        for c in found
        for s in c.sides
    ]
    columns = [
        "id",
        "report",
        "kind",
        "subject",
        "judge",
        "reviewer",
        "value",
        "reason",
        "rationale",
    ]
    if fmt == "table" and not rows:
        print("no conflicts")
        return 0
    emit(
        rows,
        columns if fmt == "table" else [*columns, "at", "event"],
        fmt,
        title=f"{len(found)} conflicts — resolve with: gavel adjudicate ID VALUE --rationale …",
        numeric=("id",),
    )
    return 0


def _print_authority(result: MergeResult) -> None:
    """Which added adjudications rule here, which stand only as sides, and what unsigned
    events can and cannot do: what the merge actually did with them."""
    ruling = [who for who in result.adjudicators if who not in result.unruled]
    if ruling:
        print(
            f"adjudications added by: {', '.join(ruling)} (adjudicators here: their "
            "adjudications outrank reviewers)"
        )
    if result.unruled:
        print(
            f"adjudications that do not rule here, by: {', '.join(result.unruled)} (unsigned, "
            "or not an adjudicator of this database: each stands as one more side, a conflict "
            "where it differs; `gavel identity trust NAME#KEY` makes a signed one rule)"
        )
    if result.unsigned:
        print(
            f"unsigned events: {result.unsigned:,} (they speak for their name only: they undo "
            "or supersede no signed event and rule over no signed reviewer)"
        )
