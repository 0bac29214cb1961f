"""``gavel export``: the gold labels, verdicts, scores or ground-truth expansions, as JSONL, CSV
or Parquet, or all of them as a Hugging Face dataset folder (the records are
:mod:`store.exports.files`'; this only picks the file)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from store.exports.files import EXPORTS, write_export, write_parquet
from store.scores.cache import ensure_scores
from tui.cli.options import db_option, open_db
from tui.cli.output import output_file


@click.command(
    help="Export the gold labels, verdicts, scores or ground-truth expansions (JSONL, "
    "CSV or Parquet), or all of them with --to-hub-dataset DIR as a Hugging Face "
    "dataset folder (Parquet per configuration and a README.md dataset card naming "
    "the judge-only, human and adjudicated columns and the provenance). The same "
    "database always gives the same bytes; files get the mode your umask gives new "
    "files."
)
@db_option
@click.argument(
    "kind",
    type=click.Choice(tuple(EXPORTS)),
    required=False,
    help="gold: one typed row per subject the humans resolved, with what the judge "
    "saw (rubric levels, the claim's sentence, explanation, evidence, the cited "
    "passage), its suspicion flags, every judge run's value and the decisions' "
    "provenance; verdicts: every judgment with judge, human and effective value and "
    "its suspicion flags; scores: every score in both variants; gt-expansions: the "
    "gold diff",
)
@click.option(
    "-o", "--output", type=click.Path(path_type=Path), default=None, help="file (default: stdout)"
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(("jsonl", "csv", "parquet")),
    default="jsonl",
    help="jsonl (default), csv, or parquet (needs -o)",
)
@click.option(
    "--to-hub-dataset",
    "dataset",
    type=click.Path(path_type=Path),
    default=None,
    metavar="DIR",
    help="write every export as a Hugging Face dataset folder in DIR "
    "(load it with datasets.load_dataset(DIR, 'gold'), or read the Parquet files "
    "with DuckDB or pandas)",
)
def export(
    db: Path | None, kind: str | None, output: Path | None, fmt: str, dataset: Path | None
) -> int:
    if dataset is not None:
        if kind is not None or output is not None:
            raise click.UsageError("--to-hub-dataset writes every export: give no KIND or -o")
        return _dataset(db, dataset)
    if kind is None:
        raise click.UsageError(
            "name the export (gold, verdicts, scores, gt-expansions) or give --to-hub-dataset DIR"
        )
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


def _dataset(db: Path | None, folder: Path) -> int:
    from store.exports.hfdataset import write_hub_dataset

    conn = open_db(db)
    ensure_scores(conn)
    written = write_hub_dataset(conn, folder)
    counts = ", ".join(f"{config} {n:,}" for config, n in written.rows.items())
    print(
        f"wrote a dataset folder to {folder}: {counts} rows; dataset card {folder}/README.md",
        file=sys.stderr,
    )
    return 0
