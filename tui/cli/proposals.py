"""Subcommands of the ground-truth expansion workflow: ``propose`` a new claim or rubric item
(or an alias, or extra evidence), list ``proposals``, ``accept`` or ``reject`` one."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import click

from reviewer.errors import InputError
from reviewer.proposals import ALL_KINDS, DUPLICATE_THRESHOLD, PROPOSAL_KINDS
from store.reviews.proposals import (
    Proposal,
    get_proposal,
    proposals,
    task_id_by_name,
)
from store.reviews.proposals import (
    accept as accept_proposal,
)
from store.reviews.proposals import (
    propose as propose_item,
)
from store.reviews.proposals import (
    reject as reject_proposal,
)
from store.scores.cache import ensure_scores
from store.views.queries import resolve_report
from tui.cli.options import db_option, format_option, open_db, reviewer_name, reviewer_option
from tui.cli.output import emit, print_json


def _payload(text: str) -> Any:
    """The payload as given (JSON), or read from ``@FILE``."""
    source = "--payload"
    if text.startswith("@"):
        source = text[1:]
        try:
            text = Path(source).read_text(encoding="utf-8")
        except OSError as exc:
            raise InputError(source, f"cannot read the payload ({exc.strerror})") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(
            source, f"the payload is not JSON ({exc.msg})", line=exc.lineno, field="payload"
        ) from None


def _span(text: str | None) -> tuple[int, int] | None:
    if text is None:
        return None
    start, colon, end = text.partition(":")
    if not colon or not start.isdigit() or not end.isdigit():
        raise InputError("--span", f"expected START:END character offsets, got {text!r}")
    return int(start), int(end)


@click.command(
    help="Propose a ground-truth expansion: a new claim or rubric item the "
    "benchmark lacks, an alias of an existing item, or extra evidence for one. "
    "Prints the nearest existing item, and flags a likely duplicate."
)
@db_option
@click.argument("task", help="task id (TASK or SUITE/TASK)")
@click.option("--kind", required=True, type=click.Choice(PROPOSAL_KINDS), help="what is proposed")
@click.option(
    "--payload", required=True, help="the item as JSON in the benchmark's shape, or @FILE"
)
@click.option(
    "--framework",
    default=None,
    help="the benchmark it belongs to (default: the suite's first framework)",
)
@click.option(
    "--report",
    default=None,
    help="the report it was found in: SUITE/REPORT, or REPORT when one suite has it",
)
@click.option(
    "--target",
    default=None,
    help="alias/extra evidence: the existing item (criterion id, REPORT/CLAIM, or p:UUID)",
)
@click.option(
    "--span", default=None, metavar="START:END", help="character span of the evidence in the report"
)
@click.option("--rationale", required=True, help="why it belongs in the ground truth")
@reviewer_option
@format_option("table", "json")
def propose(
    db: Path | None,
    task: str,
    kind: str,
    payload: str,
    framework: str | None,
    report: str | None,
    target: str | None,
    span: str | None,
    rationale: str,
    reviewer: str | None,
    fmt: str,
) -> int:
    conn = open_db(db)
    ensure_scores(conn)
    task_id = task_id_by_name(conn, task)
    report_id = None
    if report is not None:
        report_id = resolve_report(conn, report)
    result = propose_item(
        conn,
        reviewer_name(reviewer),
        task_id,
        report_id,
        framework,
        kind,
        _payload(payload),
        _span(span),
        rationale,
        target,
    )
    near = result.nearest
    if fmt == "json":
        print_json(
            {
                "proposal": asdict(result.proposal),
                "nearest": asdict(near) if near else None,
                "duplicate": bool(near and near.is_duplicate),
            }
        )
        return 0
    p = result.proposal
    print(
        f"proposed {p.kind} for task {p.suite}/{p.task} ({p.framework}): {p.uuid}  "
        f"(event committed; status {p.status})"
    )
    if near is not None:
        verdict = "DUPLICATE" if near.is_duplicate else "nearest existing item"
        print(
            f"{verdict}: {near.ref} (similarity {near.score:.2f}, threshold "
            f"{DUPLICATE_THRESHOLD:.2f}): {near.text!r}"
        )
    return 0


def _proposal_rows(found: Sequence[Proposal]) -> list[dict[str, Any]]:
    return [
        {
            "uuid": p.uuid,
            "task": p.task,
            "framework": p.framework,
            "kind": p.kind,
            "effect": p.effect,
            "status": p.status,
            "by": p.reviewer,
            "decided_by": p.decided_by or "",
            "report": p.report or "",
            "item": json.dumps(p.payload, ensure_ascii=False),
            "target": p.target or "",
            "duplicate_of": p.duplicate_of or "",
            "rationale": p.rationale,
        }
        for p in found
    ]


@click.command("proposals", help="List ground-truth proposals (uuid prefixes work as ids).")
@db_option
@click.option("--task", default=None, help="only this task")
@click.option(
    "--status",
    type=click.Choice(("proposed", "accepted", "rejected", "in conflict")),
    default=None,
    help="only proposals with this status",
)
@click.option(
    "--kind",
    type=click.Choice(ALL_KINDS),
    default=None,
    help="only proposals of this kind (revise_item: the judge card's, see `gavel runs card`)",
)
@format_option()
def proposals_(
    db: Path | None, task: str | None, status: str | None, kind: str | None, fmt: str
) -> int:
    conn = open_db(db)
    task_id = task_id_by_name(conn, task) if task else None
    found = proposals(conn, task_id, status, kind)
    if fmt == "json":
        print_json([asdict(p) for p in found])
        return 0
    if fmt == "table" and not found:
        print("no proposals")
        return 0
    columns = [
        "uuid",
        "task",
        "framework",
        "kind",
        "effect",
        "status",
        "by",
        "decided_by",
        "report",
        "item",
        "target",
        "duplicate_of",
        "rationale",
    ]
    rows = _proposal_rows(found)
    if fmt == "table":
        columns = ["uuid", "task", "kind", "status", "by", "item", "duplicate_of"]
        for row in rows:
            row["uuid"] = row["uuid"][:8]
            row["task"] = f"{row['task']}/{row['report']}" if row["report"] else row["task"]
            row["status"] += f" ({row['decided_by']})" if row["decided_by"] else ""
            row["item"] = _short_item(row)
    emit(rows, columns, fmt, title="ground-truth proposals (uuid prefixes work as ids)")
    return 0


def _short_item(row: dict[str, Any]) -> str:
    """The item as the table shows it: a revision names its criterion and the agreement
    that put it below the threshold."""
    item = str(row["item"])
    if row["kind"] == "revise_item":
        payload = json.loads(item)
        low_high = payload.get("interval") or [None, None]
        upper = "" if low_high[1] is None else f", upper bound {low_high[1]:.3f}"
        item = (
            f"{row['target']} (run {payload.get('run')}, {payload.get('coefficient')}{upper}, "
            f"{len(payload.get('examples') or [])} examples): {payload.get('text', '')}"
        )
    return item if len(item) <= 70 else item[:69] + "…"


def _decided(proposal: Proposal, before: str, fmt: str, verb: str) -> int:
    if fmt == "json":
        print_json(asdict(proposal))
        return 0
    print(
        f"{verb} proposal {proposal.uuid} ({proposal.kind}, task "
        f"{proposal.suite}/{proposal.task}): {before} → {proposal.status}; the task's "
        "reports were rescored (both variants)"
    )
    return 0


PROPOSAL_HELP = "proposal uuid (or a unique prefix)"


@click.command(
    help="Accept a proposal into the ground truth; the task's reports are rescored (both variants)."
)
@db_option
@click.argument("proposal", help=PROPOSAL_HELP)
@click.option("--rationale", default="", help="why")
@click.option(
    "--force", is_flag=True, help="accept a new item even though it duplicates an existing one"
)
@reviewer_option
@format_option("table", "json")
def accept(
    db: Path | None, proposal: str, rationale: str, force: bool, reviewer: str | None, fmt: str
) -> int:
    conn = open_db(db)
    ensure_scores(conn)
    before = get_proposal(conn, proposal).status
    decided = accept_proposal(conn, reviewer_name(reviewer), proposal, rationale, force=force)
    return _decided(decided, before, fmt, "accepted")


@click.command(help="Reject a proposal.")
@db_option
@click.argument("proposal", help=PROPOSAL_HELP)
@click.option("--rationale", default="", help="why")
@reviewer_option
@format_option("table", "json")
def reject(db: Path | None, proposal: str, rationale: str, reviewer: str | None, fmt: str) -> int:
    conn = open_db(db)
    ensure_scores(conn)
    before = get_proposal(conn, proposal).status
    decided = reject_proposal(conn, reviewer_name(reviewer), proposal, rationale)
    return _decided(decided, before, fmt, "rejected")
