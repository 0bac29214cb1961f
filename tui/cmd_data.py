"""Subcommands that move data in and read it out: import, demo, schema, scores, verdicts."""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
import time
from pathlib import Path
from typing import Any

from rich.console import Console

from reviewer.errors import InputError
from reviewer.formats import hash_path
from reviewer.models import RECORD_TYPES
from reviewer.scoring.registry import frameworks
from store.db import connect, default_path
from store.importer import ImportResult, import_bundle
from store.queries import counts, score_rows, verdict_rows
from store.reviewlog import rebuild_state
from store.scores import ensure_scores, load_options, rebuild_scores, set_options
from tui.paths import sample_bundles
from tui.render import emit, fmt_delta, fmt_number


def open_db(args: argparse.Namespace) -> sqlite3.Connection:
    path: Path = args.db or default_path()
    return connect(path)


def import_path(conn: sqlite3.Connection, path: Path, fmt: str = "native",
                suite_id: str | None = None) -> ImportResult:
    """Read, check and store one run; rebuilds the score cache when something was added."""
    if fmt != "native":
        from reviewer.formats.registry import reader

        bundle = reader(fmt)(path, suite_id)
    else:
        from reviewer.formats.native import read_bundle

        bundle = read_bundle(path)
        if suite_id:
            bundle.suite = bundle.suite.model_copy(update={"id": suite_id})
    result = import_bundle(conn, bundle, hash_path(path), str(path))
    if result.created:
        rebuild_scores(conn)
    return result


def import_cmd(args: argparse.Namespace) -> int:
    conn = open_db(args)
    started = time.perf_counter()
    result = import_path(conn, args.path, args.input_format, args.suite_id)
    elapsed = time.perf_counter() - started
    if not result.created:
        print(f"suite {result.suite} is already imported with identical content: nothing to do")
        return 0
    parts = ", ".join(f"{n:,} {name}" for name, n in result.counts.items() if n)
    print(f"imported suite {result.suite}: {parts} in {elapsed:.2f} s")
    for warning in result.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    return 0


def build_demo(conn: sqlite3.Connection) -> list[ImportResult]:
    bundles = sample_bundles()
    if not bundles:
        raise InputError("sample_data/", "no sample bundles found (expected */suite.json)")
    results = [import_path(conn, folder) for folder in bundles]
    ensure_scores(conn)
    return results


def demo(args: argparse.Namespace) -> int:
    conn = open_db(args)
    results = build_demo(conn)
    if args.quiet:
        return 0
    for result in results:
        state = "imported" if result.created else "already present"
        print(f"{result.suite}: {state}")
    print()
    args.framework = None
    args.system = None
    args.per = "system"
    args.fmt = "table"
    args.include_parts = False
    _print_scores(conn, args)
    db = args.db or default_path()
    print(f"\ndatabase: {db}   open it with:  gavel review --db {db}")
    return 0


def schema(args: argparse.Namespace) -> int:
    """One JSON Schema document with a definition per record type."""
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
        "JSONL lines tagged with \"type\".",
        "oneOf": [{"$ref": f"#/$defs/{m.__name__}"} for m in RECORD_TYPES.values()],
        "x-record-types": {tag: m.__name__ for tag, m in RECORD_TYPES.items()},
        "$defs": defs,
    }
    print(json.dumps(document, indent=2, ensure_ascii=False))
    return 0


def scores(args: argparse.Namespace) -> int:
    conn = open_db(args)
    ensure_scores(conn)
    return _print_scores(conn, args)


def _print_scores(conn: sqlite3.Connection, args: argparse.Namespace) -> int:
    rows = score_rows(conn, per=args.per, framework=args.framework, system=args.system,
                      include_parts=args.include_parts)
    if not rows:
        filters = [f"--{name} {value}" for name, value in
                   (("framework", args.framework), ("system", args.system)) if value]
        if filters and conn.execute("SELECT 1 FROM score LIMIT 1").fetchone():
            print(f"no scores match {' '.join(filters)} (gavel scores without them lists what "
                  "there is)", file=sys.stderr)
        else:
            print("no scores: import a run first (gavel import PATH, or gavel demo)",
                  file=sys.stderr)
        return 1
    records: list[dict[str, Any]] = []
    for row in rows:
        record: dict[str, Any] = {"framework": row.framework, "system": row.system}
        if args.per == "report":
            record["task"] = row.task
            record["report"] = row.report
        record.update(metric=row.metric, judge=row.judge, adjudicated=row.adjudicated,
                      delta=row.delta, n=row.n)
        records.append(record)
    columns = ["framework", "system"] + (["task"] if args.per == "report" else []) + [
        "metric", "judge", "adjudicated", "delta", "n"]
    if args.fmt != "table":
        emit(records, columns, args.fmt)
        return 0
    console = Console()
    registry = frameworks()
    for framework in dict.fromkeys(r["framework"] for r in records):
        fw = registry.get(framework)
        order = {m.name: i for i, m in enumerate(fw.metrics)} if fw else {}
        digits = {m.name: m.digits for m in fw.metrics} if fw else {}
        subset = sorted(
            (r for r in records if r["framework"] == framework),
            key=lambda r: (r["system"], r.get("task") or "", order.get(r["metric"], 999),
                           r["metric"]),
        )
        shown = [
            {**r, "judge": fmt_number(r["judge"], digits.get(r["metric"], 3)),
             "adjudicated": fmt_number(r["adjudicated"], digits.get(r["metric"], 3)),
             "delta": fmt_delta(r["delta"], max(digits.get(r["metric"], 3), 2))}
            for r in subset
        ]
        label = fw.label if fw else framework
        emit(shown, columns[1:], "table", title=f"{label} ({framework}) — judge → adjudicated",
             numeric=("judge", "adjudicated", "delta", "n"), console=console)
    return 0


def verdicts(args: argparse.Namespace) -> int:
    conn = open_db(args)
    rows = verdict_rows(conn, report=args.report, kind=args.kind, undecided=args.undecided,
                        differs=args.differs, include_stale=args.all_runs)
    from reviewer.scoring.registry import verdict_kinds

    kinds = verdict_kinds()
    records = [
        {
            "id": r.id, "report": r.report, "kind": r.kind, "subject": r.subject,
            "judge_value": r.judge_value, "value": r.value,
            "decided": r.status or "", "scale": kinds[r.kind].scale.name if r.kind in kinds else "",
            "run": r.run, "error": r.error,
        }
        for r in rows
    ]
    columns = ["id", "report", "kind", "subject", "judge_value", "value", "decided", "scale",
               "run"]
    if args.fmt == "table":
        columns = columns[:-1]
        if not records:
            print("no verdicts match", file=sys.stderr)
            return 1
    emit(records, columns + (["error"] if args.fmt != "table" else []), args.fmt,
         numeric=("id",))
    return 0


def options(args: argparse.Namespace) -> int:
    conn = open_db(args)
    for setting in args.settings:
        name, sep, value = setting.partition("=")
        framework, dot, option = name.partition(".")
        if not sep or not dot:
            raise InputError("command line", f"expected FRAMEWORK.OPTION=VALUE, got {setting!r}")
        try:
            set_options(conn, framework, {option: value})
        except (KeyError, ValueError) as exc:
            raise InputError("command line", str(exc)) from exc
    current = load_options(conn)
    records = []
    for name, fw in frameworks().items():
        for spec in fw.options:
            records.append({
                "framework": name, "option": spec.name, "value": current[name][spec.name],
                "default": spec.default, "choices": " | ".join(spec.choices),
                "meaning": spec.description,
            })
    emit(records, ["framework", "option", "value", "default", "choices", "meaning"], args.fmt)
    return 0


def rebuild(args: argparse.Namespace) -> int:
    conn = open_db(args)
    started = time.perf_counter()
    rebuild_state(conn)
    rebuild_scores(conn)
    n = counts(conn)
    print(f"rebuilt {n['decided']:,} decisions from {n['review_event']:,} events and every "
          f"score in {time.perf_counter() - started:.2f} s")
    return 0


def bench(args: argparse.Namespace) -> int:
    from tui.bench import run_bench

    return run_bench(args)
