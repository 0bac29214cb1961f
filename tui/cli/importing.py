"""Subcommands that bring runs in: ``import``, ``demo`` (the sample data) and ``schema`` (what
a native bundle must look like)."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import click

from reviewer.textsafety import printable
from tui.cli.options import db_option, open_db
from tui.cli.output import print_json


class FormatOption(click.Option):
    """``--format``: its choices and their descriptions come from the benchmark registry, read
    when the option is checked or its help shown, so only ``gavel import`` loads the registry."""

    def get_help_record(self, ctx: click.Context) -> tuple[str, str] | None:
        from reviewer.registry import format_descriptions

        record = super().get_help_record(ctx)
        if record is None:
            return None
        return record[0], "; ".join(
            f"{name}: {text}" for name, text in format_descriptions().items()
        )


def _known_format(ctx: click.Context, param: click.Parameter, value: str) -> str:
    from reviewer.registry import formats

    known = tuple(formats())
    if value not in known:
        raise click.BadParameter(f"{value!r} is not one of {', '.join(map(repr, known))}.")
    return value


@click.command(
    "import",
    help="Import a benchmark run: read and check every record, then store it in one "
    "transaction (bad input names the file, line and field, and imports nothing). "
    "Importing the same files again does nothing. With --as-run NAME, the files are "
    "another judge run of reports already imported (a repeated RACE run, a second "
    "judgements file): their verdicts attach to the suite's reports as the inactive run "
    "NAME, for `gavel compare` and the noise screen. A run of 16 MB or more is read "
    "on a second core while this process writes it (GAVEL_IMPORT_PIPELINE=never "
    "reads and writes in turn; =always pipelines any size).",
)
@db_option
@click.argument(
    "path",
    type=click.Path(path_type=Path),
    help="a bundle folder or .jsonl file, a DRB repository, or a DRB fork's "
    "raw_results.jsonl or judgements file alone",
)
@click.option(
    "--format",
    "input_format",
    cls=FormatOption,
    metavar="FORMAT",
    default="native",
    callback=_known_format,
    help="the run's format (default: native)",
)
@click.option("--suite-id", default=None, help="suite id for formats that do not carry one")
@click.option(
    "--system-map",
    "system_map",
    multiple=True,
    metavar="RESULT=SYSTEM",
    help="deepresearch_bench: the system of a results folder or judgements file named "
    "differently from its report file (repeatable; RESULT=RESULT keeps it a system of its own)",
)
@click.option(
    "--as-run",
    "as_run",
    default=None,
    metavar="NAME",
    help="attach the files' verdicts to the reports already in their suite as the new "
    "inactive judge run NAME (every report, criterion and claim must be there already; "
    "nothing is imported on a mismatch)",
)
def import_run(
    db: Path | None,
    path: Path,
    input_format: str,
    suite_id: str | None,
    system_map: tuple[str, ...],
    as_run: str | None,
) -> int:
    from store.imports.from_path import attach_path, import_path

    mapping: dict[str, str] = {}
    for pair in system_map:
        name, sep, system = pair.partition("=")
        if not sep or not name.strip() or not system.strip():
            raise click.BadParameter(
                f"expected RESULT=SYSTEM, got {pair!r}", param_hint="--system-map"
            )
        mapping[name.strip()] = system.strip()
    conn = open_db(db)
    if as_run is not None:
        attached = attach_path(conn, path, as_run, input_format, suite_id, mapping)
        runs = ", ".join(attached.runs)
        if not attached.created:
            print(f"run {runs} is already attached with identical content: nothing to do")
        else:
            print(
                f"attached run {runs} to suite {attached.suite}: "
                f"{attached.judgments:,} judgments on {attached.reports:,} reports "
                f"(inactive; `gavel compare` shows it beside the other runs)"
            )
        return 0
    started = time.perf_counter()
    result = import_path(conn, path, input_format, suite_id, mapping)
    elapsed = time.perf_counter() - started
    if not result.created:
        print(f"suite {result.suite} is already imported with identical content: nothing to do")
        return 0
    parts = ", ".join(f"{n:,} {name}" for name, n in result.counts.items() if n)
    print(f"imported suite {result.suite}: {parts} in {elapsed:.2f} s")
    for warning in result.warnings:
        print(f"warning: {printable(warning)}", file=sys.stderr)
    return 0


@click.command(help="Build a database from sample_data/ (idempotent) and show its scores.")
@db_option
@click.option("--quiet", is_flag=True, help="only build, print nothing")
def demo(db: Path | None, quiet: bool) -> int:
    from store.db.connection import default_path
    from store.imports.from_path import build_demo
    from tui.cli.scores import print_scores
    from tui.paths import sample_data_dir

    conn = open_db(db)
    results = build_demo(conn, sample_data_dir())
    if quiet:
        return 0
    for result in results:
        state = "imported" if result.created else "already present"
        print(f"{result.suite}: {state}")
    print()
    print_scores(conn, per="system", framework=None, system=None, include_parts=False, fmt="table")
    path = db or default_path()
    print(f"\ndatabase: {path}   open it with:  gavel review --db {path}")
    return 0


@click.command(
    help="Print the JSON Schema of the native bundle records: one document with a "
    "definition per record type (docs/format.md explains them)."
)
def schema() -> int:
    from reviewer.models import RECORD_TYPES

    defs: dict[str, Any] = {}
    for model in RECORD_TYPES.values():
        schema_doc = model.model_json_schema(ref_template="#/$defs/{model}")
        defs.update(schema_doc.pop("$defs", {}))
        defs[model.__name__] = schema_doc
    document = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "Gavel native bundle (format_version 1)",
        "description": "Record types of a gavel-bundle: see docs/format.md. Folder form: "
        "suite.json + tasks/systems/reports/sources/runs/judgments.jsonl; single-file form: "
        'JSONL lines tagged with "type".',
        "oneOf": [{"$ref": f"#/$defs/{m.__name__}"} for m in RECORD_TYPES.values()],
        "x-record-types": {tag: m.__name__ for tag, m in RECORD_TYPES.items()},
        "$defs": defs,
    }
    print_json(document)
    return 0
