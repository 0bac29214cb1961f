"""Subcommands that write the review log (decide, confirm, rate, undo, redo) and open the app.

They use the same :class:`store.reviewlog.ReviewLog` as the workstation, so a decision made
here shows in the TUI and the other way round. Each prints what changed in the report's scores.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
from typing import Any

from reviewer.registry import frameworks
from reviewer.review import REASON_CODES
from store.db import default_path
from store.queries import report_id_by_ext, verdict_rows
from store.reviewlog import Recorded, ReviewError, ReviewLog
from store.scores import ensure_scores, report_scope, update_scores
from tui.cmd_data import open_db
from tui.config import load_config
from tui.render import emit, fmt_delta, fmt_number


def _log(conn: sqlite3.Connection, args: argparse.Namespace) -> ReviewLog:
    config = load_config(reviewer=args.reviewer)
    return ReviewLog(conn, config.reviewer)


def _headline(conn: sqlite3.Connection, report_id: int) -> dict[tuple[str, str], float | None]:
    heads = {(fw.name, m.name) for fw in frameworks().values() for m in fw.metrics if m.headline}
    out: dict[tuple[str, str], float | None] = {}
    for framework, metric, value in conn.execute(
        "SELECT framework, metric, value FROM score WHERE scope = ? AND variant = 'adjudicated'",
        (report_scope(report_id),),
    ):
        if (framework, metric) in heads:
            out[(framework, metric)] = value
    return out


def _record(conn: sqlite3.Connection, args: argparse.Namespace, recorded: Recorded | None,
            before: dict[tuple[str, str], float | None] | None = None) -> int:
    if recorded is None:
        message = f"nothing to {args.command}"
        print(json.dumps({"result": None}) if args.fmt == "json" else message)
        return 1
    report_id = recorded.report_id
    if before is None and report_id is not None:
        before = _headline(conn, report_id)
    if report_id is not None:
        update_scores(conn, [report_id])
    after = _headline(conn, report_id) if report_id is not None else {}
    changes: list[dict[str, Any]] = [
        {"framework": fw, "metric": metric, "before": before.get((fw, metric)) if before else None,
         "after": value}
        for (fw, metric), value in sorted(after.items())
    ]
    payload: dict[str, Any] = {
        "event": recorded.uuid, "action": recorded.action, "judgment": recorded.judgment_id,
        "report": report_id, "value": recorded.value, "reverted": recorded.reverted,
        "scores": changes,
    }
    if args.fmt == "json":
        print(json.dumps(payload, ensure_ascii=False, indent=2))
        return 0
    what = recorded.action + (f" of {recorded.reverted}" if recorded.reverted else "")
    if recorded.judgment_id:
        target = f"judgment {recorded.judgment_id}"
    else:
        ext = conn.execute("SELECT ext_id FROM report WHERE id = ?", (report_id,)).fetchone()
        target = f"report {ext[0] if ext else report_id}"
    value = f" = {recorded.value}" if recorded.value is not None else ""
    print(f"recorded {what} on {target}{value}  (event {recorded.uuid[:8]}, committed)")
    if changes:
        emit(
            [{"metric": f"{c['framework']}.{c['metric']}", "before": fmt_number(c["before"]),
              "after": fmt_number(c["after"]),
              "delta": fmt_delta(None if c["before"] is None or c["after"] is None
                                 else c["after"] - c["before"])}
             for c in changes],
            ["metric", "before", "after", "delta"], "table",
            title="report scores (adjudicated)", numeric=("before", "after", "delta"),
        )
    return 0


def _report_of(conn: sqlite3.Connection, judgment_id: int) -> int | None:
    rows = verdict_rows(conn, ids=[judgment_id], include_stale=True)
    if not rows:
        raise ReviewError(f"no judgment with id {judgment_id}")
    return report_id_by_ext(conn, rows[0].report)


def _prepare(args: argparse.Namespace) -> sqlite3.Connection:
    conn = open_db(args)
    ensure_scores(conn)
    return conn


def decide(args: argparse.Namespace) -> int:
    conn = _prepare(args)
    log = _log(conn, args)
    report_id = _report_of(conn, args.id)
    before = _headline(conn, report_id) if report_id is not None else None
    if args.adjudicate:
        # An adjudication records the sides it resolves (reviewer, value, rationale) with it.
        from store.conflicts import adjudicate

        recorded = adjudicate(conn, log.reviewer, args.id, args.value, args.rationale,
                              args.reason)
    else:
        recorded = log.decide(args.id, args.value, args.rationale, args.reason)
    return _record(conn, args, recorded, before)


def confirm(args: argparse.Namespace) -> int:
    conn = _prepare(args)
    log = _log(conn, args)
    report_id = _report_of(conn, args.id)
    before = _headline(conn, report_id) if report_id is not None else None
    return _record(conn, args, log.confirm(args.id, args.rationale), before)


def rate(args: argparse.Namespace) -> int:
    conn = _prepare(args)
    log = _log(conn, args)
    report_id = report_id_by_ext(conn, args.report)
    if report_id is None:
        raise ReviewError(f"no report {args.report!r}")
    return _record(conn, args, log.rate(report_id, args.value, args.rationale))


def undo(args: argparse.Namespace) -> int:
    conn = _prepare(args)
    return _record(conn, args, _log(conn, args).undo())


def redo(args: argparse.Namespace) -> int:
    conn = _prepare(args)
    return _record(conn, args, _log(conn, args).redo())


def reasons(args: argparse.Namespace) -> int:
    emit([{"code": k, "meaning": v} for k, v in REASON_CODES.items()], ["code", "meaning"],
         "table")
    return 0


def keys(args: argparse.Namespace) -> int:
    """Every binding with the key in force, and any problem the config's [keys] table causes."""
    from tui.keymap import KEYS, display_key, effective_keys, normalise_keymap, problems

    config = load_config()
    current = effective_keys(normalise_keymap(config.keys))
    rows = [
        {"id": k.id, "key": display_key(current[k.id]), "default": display_key(k.key),
         "screen": k.context, "does": k.description}
        for k in KEYS
    ]
    emit(rows, ["id", "key", "default", "screen", "does"], args.fmt)
    found = problems(config.keys)
    for problem in found:
        print(f"gavel: key bindings: {problem}", file=sys.stderr)
    return 1 if found else 0


def review_app(args: argparse.Namespace) -> int:
    """Open the workstation; on first run build the database from the sample data."""
    from tui.cmd_data import build_demo
    from tui.launch import run_app

    path = args.db or default_path()
    conn = open_db(args)
    if conn.execute("SELECT count(*) FROM report").fetchone()[0] == 0:
        print(f"first run: building {path} from the bundled sample data …")
        build_demo(conn)
    ensure_scores(conn)
    conn.close()
    config = load_config(reviewer=args.reviewer)
    return run_app(path, config)
