"""``gavel export``: the gold labels, verdicts, scores or ground-truth expansions, as JSONL, CSV
or Parquet (the records are :mod:`store.exports`'; this only picks the file)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from store.exports import EXPORTS, write_export, write_parquet
from store.scores import ensure_scores
from tui.cli.options import db_option, open_db
from tui.cli.output import output_file


@click.command(help="Export the gold labels, verdicts, scores or ground-truth expansions (JSONL, "
               "CSV or Parquet). The same database always gives the same bytes.")
@db_option
@click.argument("kind", type=click.Choice(tuple(EXPORTS)),
                help="gold: one typed row per subject the humans resolved, with every judge "
                     "run's value and the decisions' provenance; verdicts: every judgment with "
                     "judge, human and effective value; scores: every score in both variants; "
                     "gt-expansions: the gold diff")
@click.option("-o", "--output", type=click.Path(path_type=Path), default=None,
              help="file (default: stdout)")
@click.option("--format", "fmt", type=click.Choice(("jsonl", "csv", "parquet")),
              default="jsonl", help="jsonl (default), csv, or parquet (needs -o)")
def export(db: Path | None, kind: str, output: Path | None, fmt: str) -> int:
    conn = open_db(db)
    ensure_scores(conn)
    if fmt == "parquet":
        if output is None:
            raise click.UsageError("--format parquet writes a file: give -o PATH")
        n = write_parquet(conn, kind, output)
        print(f"wrote {n:,} {kind} records to {output}", file=sys.stderr)
        return 0
    with output_file(output, json_lines=fmt == "jsonl") as out:
        n = write_export(conn, kind, out, fmt)
    if output is not None:
        print(f"wrote {n:,} {kind} records to {output}", file=sys.stderr)
    return 0
