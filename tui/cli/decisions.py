"""Subcommands that write the review log: ``decide``, ``confirm``, ``adjudicate``, ``rate``,
``undo``, ``redo`` (and ``reasons``, the codes a decision may give).

They write through the same :class:`store.reviewlog.events.ReviewLog` as the workstation, so a
decision made here shows there and the other way round; each prints what the event did to its
report's headline scores.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from reviewer.actions import RATIONALE_POLICY, REASON_CODES, rationale_required
from store.reviewlog.events import Recorded, ReviewLog
from store.reviews.decisions import record
from store.scores.cache import ensure_scores
from store.views.queries import report_ext_id, resolve_report
from tui.cli.options import (
    REPORT_HELP,
    db_option,
    format_option,
    open_db,
    reviewer_name,
    reviewer_option,
)
from tui.cli.output import emit, print_json
from tui.render.tables import fmt_delta, fmt_number

F = Callable[..., Any]

RATIONALE_REQUIRED = (
    "why (stored with the decision); an override needs one unless the config file sets "
    "require_rationale = false"
)
REASON_HELP = "judge-error reason code (see `gavel reasons`)"


def _writer(func: F) -> F:
    """The options every log-writing command takes."""
    return db_option(reviewer_option(format_option("table", "json")(func)))


def _rationale_or_refuse(
    conn: sqlite3.Connection,
    judgment_id: int,
    value: str,
    rationale: str | None,
    as_adjudication: bool,
) -> str:
    """The rationale to store; a usage error where the policy asks for one and there is
    none (an adjudication always needs one, an override by the policy)."""
    if rationale is None and as_adjudication:
        raise click.UsageError("Missing option '--rationale'.")
    if not rationale and _override_needs_rationale(conn, judgment_id, value):
        raise click.UsageError(f"--rationale: {RATIONALE_POLICY}")
    return rationale or ""


def _override_needs_rationale(conn: sqlite3.Connection, judgment_id: int, value: str) -> bool:
    """The workstation's policy (:func:`reviewer.actions.rationale_required`): an override
    needs a rationale unless the config file turns ``require_rationale`` off. A judgment or
    value that does not exist is left for the review log to refuse, with its own message."""
    from reviewer.registry import get_kind
    from store.reviewlog.events import judgment_ref, report_frameworks
    from tui.config import load_config

    try:
        ref = judgment_ref(conn, judgment_id)
        kind = get_kind(ref.kind, report_frameworks(conn, ref.report_id))
        code = kind.scale.normalize(value) if kind is not None else value
    except ValueError:  # ReviewError and ScaleError are ValueErrors
        return False
    return rationale_required(load_config().require_rationale, code, ref.value)


def _open(db: Path | None, reviewer: str | None) -> tuple[sqlite3.Connection, ReviewLog]:
    conn = open_db(db)
    ensure_scores(conn)
    return conn, ReviewLog(conn, reviewer_name(reviewer))


def print_recorded(
    conn: sqlite3.Connection, write: Callable[[], Recorded | None], fmt: str, command: str
) -> int:
    """Write the event with its report's scores (one transaction) and say what it did (exit 1:
    nothing to undo or redo)."""
    recorded, changes = record(conn, write)
    if recorded is None:
        if fmt == "json":
            print_json({"result": None}, indent=None)
        else:
            print(f"nothing to {command}")
        return 1
    if fmt == "json":
        print_json(
            {
                "event": recorded.uuid,
                "action": recorded.action,
                "judgment": recorded.judgment_id,
                "report": recorded.report_id,
                "value": recorded.value,
                "reverted": recorded.reverted,
                "scores": [
                    {
                        "framework": c.framework,
                        "metric": c.metric,
                        "before": c.before,
                        "after": c.after,
                    }
                    for c in changes
                ],
            }
        )
        return 0
    what = recorded.action + (f" of {recorded.reverted}" if recorded.reverted else "")
    if recorded.judgment_id:
        target = f"judgment {recorded.judgment_id}"
    else:
        ext = report_ext_id(conn, recorded.report_id) if recorded.report_id else None
        target = f"report {ext or recorded.report_id}"
    value = f" = {recorded.value}" if recorded.value is not None else ""
    print(f"recorded {what} on {target}{value}  (event {recorded.uuid[:8]}, committed)")
    if changes:
        emit(
            [
                {
                    "metric": f"{c.framework}.{c.metric}",
                    "before": fmt_number(c.before),
                    "after": fmt_number(c.after),
                    "delta": fmt_delta(c.delta),
                }
                for c in changes
            ],
            ["metric", "before", "after", "delta"],
            "table",
            title="report scores (adjudicated)",
            numeric=("before", "after", "delta"),
        )
    return 0


@click.command(
    help="Record a human verdict on a judgment: a confirmation when it equals the "
    "judge's value, else an override. Prints the report's scores before → after.\n\n"
    "With --from FILE, records every decision of a file instead (.jsonl: one JSON "
    "object per line; .csv: a header row), each line with the fields id (or target: "
    "a subject's portable s:SUITE/REPORT/KIND/SUBJECT, deciding the verdict in force "
    "on it), value, rationale and optionally reason: all lines are checked first and "
    "written in one transaction; any bad line writes nothing and is listed with its "
    "line number and field. Lines of `gavel plan export --format jsonl` (or csv) work "
    "as they are once value and rationale are added."
)
@click.argument("id", type=int, required=False, help="judgment id (see `gavel verdicts`)")
@click.argument(
    "value", required=False, help="a value on the judgment's scale (e.g. 0, 0.5, 1, correct)"
)
@click.option("--rationale", default=None, help=RATIONALE_REQUIRED)
@click.option("--reason", default=None, help=REASON_HELP)
@click.option(
    "--adjudicate",
    "as_adjudication",
    is_flag=True,
    help="an adjudication: resolves a conflict between reviewers",
)
@click.option(
    "--from",
    "source",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="decisions from a .jsonl or .csv file (fields id or target, value, rationale, "
    "reason), all or nothing",
)
@_writer
def decide(
    id: int | None,
    value: str | None,
    rationale: str | None,
    reason: str | None,
    as_adjudication: bool,
    source: Path | None,
    db: Path | None,
    reviewer: str | None,
    fmt: str,
) -> int:
    if source is not None:
        if (
            id is not None
            or value is not None
            or rationale is not None
            or reason is not None
            or as_adjudication
        ):
            raise click.UsageError(
                "--from takes the decisions from the file: give no ID, "
                "VALUE, --rationale, --reason or --adjudicate with it"
            )
        return decide_batch(source, db, reviewer, fmt)
    if id is None or value is None:
        raise click.UsageError("give a judgment ID and a VALUE (or --from FILE)")
    conn, log = _open(db, reviewer)
    rationale = _rationale_or_refuse(conn, id, value, rationale, as_adjudication)
    if as_adjudication:
        from store.reviewlog.conflicts import adjudicate as adjudicate_judgment

        # An adjudication records the sides it resolves (reviewer, value, rationale) with it.
        return print_recorded(
            conn,
            lambda: adjudicate_judgment(conn, log.reviewer, id, value, rationale, reason),
            fmt,
            "decide",
        )
    return print_recorded(conn, lambda: log.decide(id, value, rationale, reason), fmt, "decide")


def decide_batch(source: Path, db: Path | None, reviewer: str | None, fmt: str) -> int:
    """``gavel decide --from FILE``: every decision of the file, committed together."""
    from store.reviews.from_file import decide_from
    from store.sqlite.tx import transaction
    from store.sqlite.writelock import announced

    conn, log = _open(db, reviewer)
    # Checked and written under one write lock: no other writer slips in between.
    with transaction(conn), announced(conn, f"decide --from {source}"):
        recorded = decide_from(conn, log, source)
    if fmt == "json":
        print_json(
            [
                {
                    "event": r.uuid,
                    "action": r.action,
                    "judgment": r.judgment_id,
                    "report": r.report_id,
                    "value": r.value,
                }
                for r in recorded
            ]
        )
        return 0
    actions: dict[str, int] = {}
    for r in recorded:
        actions[r.action] = actions.get(r.action, 0) + 1
    kinds = ", ".join(f"{n} {a}{'s' if n != 1 else ''}" for a, n in sorted(actions.items()))
    reports = len({r.report_id for r in recorded})
    print(
        f"recorded {len(recorded)} decision{'s' if len(recorded) != 1 else ''} ({kinds}) on "
        f"{reports} report{'s' if reports != 1 else ''} from {source}  (one transaction, "
        "committed; `gavel scores` shows the new scores)"
    )
    return 0


@click.command(help="Confirm the judge's verdict on a judgment.")
@click.argument("id", type=int, help="judgment id")
@click.option("--rationale", default="", help="optional note")
@_writer
def confirm(id: int, rationale: str, db: Path | None, reviewer: str | None, fmt: str) -> int:
    conn, log = _open(db, reviewer)
    return print_recorded(conn, lambda: log.confirm(id, rationale), fmt, "confirm")


@click.command(
    help="Resolve a conflict between reviewers; the event records every side it "
    "resolves (reviewer, value, rationale)."
)
@click.argument("id", type=int, help="judgment id (see `gavel conflicts`)")
@click.argument("value", help="the adjudicated value on the judgment's scale")
@click.option("--rationale", required=True, help="why")
@click.option("--reason", default=None, help=REASON_HELP)
@_writer
def adjudicate(
    id: int,
    value: str,
    rationale: str,
    reason: str | None,
    db: Path | None,
    reviewer: str | None,
    fmt: str,
) -> int:
    from store.reviewlog.conflicts import adjudicate as adjudicate_judgment

    conn = open_db(db)
    ensure_scores(conn)
    name = reviewer_name(reviewer)
    return print_recorded(
        conn,
        lambda: adjudicate_judgment(conn, name, id, value, rationale, reason),
        fmt,
        "adjudicate",
    )


@click.command(
    help="Rate a whole report 1–4 on the UserPref scale (compared with the computed "
    "level by `gavel agreement`)."
)
@click.argument("report", help=REPORT_HELP)
@click.argument("value", help="1 Unhelpful, 2 Deficient, 3 Acceptable, 4 Perfect")
@click.option("--rationale", default="", help="optional note")
@_writer
def rate(
    report: str, value: str, rationale: str, db: Path | None, reviewer: str | None, fmt: str
) -> int:
    conn, log = _open(db, reviewer)
    report_id = resolve_report(conn, report)
    return print_recorded(conn, lambda: log.rate(report_id, value, rationale), fmt, "rate")


@click.command(help="Undo your last decision (persistent: the undo is an event in the log).")
@_writer
def undo(db: Path | None, reviewer: str | None, fmt: str) -> int:
    conn, log = _open(db, reviewer)
    return print_recorded(conn, log.undo, fmt, "undo")


@click.command(help="Redo your last undone decision.")
@_writer
def redo(db: Path | None, reviewer: str | None, fmt: str) -> int:
    conn, log = _open(db, reviewer)
    return print_recorded(conn, log.redo, fmt, "redo")


@click.command(help="List the judge-error reason codes a decision can give (--reason).")
def reasons() -> int:
    emit([{"code": k, "meaning": v} for k, v in REASON_CODES.items()], ["code", "meaning"], "table")
    return 0
