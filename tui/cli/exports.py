"""``gavel export``: verdicts, scores or ground-truth expansions, as JSONL or CSV (the records
are :mod:`store.exports`'; this only picks the file)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from store.exports import EXPORTS, write_export
from store.scores import ensure_scores
from tui.cli.options import db_option, open_db
from tui.cli.output import output_file


@click.command(help="Export verdicts, scores or ground-truth expansions (JSONL or CSV). The "
               "same database always gives the same bytes.")
@db_option
@click.argument("kind", type=click.Choice(tuple(EXPORTS)),
                help="verdicts: every judgment with judge, human and effective value; "
                     "scores: every score in both variants; gt-expansions: the gold diff")
@click.option("-o", "--output", type=click.Path(path_type=Path), default=None,
              help="file (default: stdout)")
@click.option("--format", "fmt", type=click.Choice(("jsonl", "csv")), default="jsonl",
              help="jsonl (default) or csv")
def export(db: Path | None, kind: str, output: Path | None, fmt: str) -> int:
    conn = open_db(db)
    ensure_scores(conn)
    with output_file(output) as out:
        n = write_export(conn, kind, out, fmt)
    if output is not None:
        print(f"wrote {n:,} {kind} records to {output}", file=sys.stderr)
    return 0
