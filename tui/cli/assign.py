"""``gavel assign``: hand a plan's subjects or a set of reports to reviewers, with an overlap
that two or more reviewers decide independently; with no ``--to``, each reviewer's progress.

Assignments are signed events in the review log (by the reviewer who hands the work out), so
they travel through ``gavel merge`` and the hub like decisions.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING

import click

from tui.cli.options import db_option, format_option, open_db, reviewer_name, reviewer_option
from tui.cli.output import emit, print_json

if TYPE_CHECKING:
    from store.assignments.hand_out import HandedOut, Target
    from store.assignments.take_back import Moved, Scope


@click.command(
    "assign",
    epilog="""\b
examples:
  gavel assign --plan p1 --to ana,ben,cy --overlap 0.2      20% of p1 to two of them
  gavel assign --system kestrel --to ana,ben --overlap 0.1 --k 2
  gavel assign                                    who has what, and how far they got
  gavel assign --reassign ana --to cy,dan         ana's undecided work to cy and dan
  gavel assign --take-back ana --plan p1          release ana's undecided subjects of p1

Decided work stays with whoever decided it. Anyone who may assign may reassign or take back;
each is a signed event that travels through merges and the hub like an assignment.""",
)
@click.option("--plan", default=None, help="hand out this plan's subjects, in the plan's order")
@click.option("--suite", default=None, help="hand out the reports of this suite")
@click.option("--system", default=None, help="hand out the reports of this system")
@click.option("--domain", default=None, help="hand out the reports of this domain")
@click.option("--to", "to", default=None, help="reviewers, comma-separated (ana,ben,cy)")
@click.option(
    "--overlap",
    type=click.FloatRange(0.0, 1.0),
    default=0.0,
    show_default=True,
    help="share of the targets that goes to k reviewers independently",
)
@click.option(
    "--k", type=click.IntRange(2), default=2, show_default=True, help="reviewers per overlap target"
)
@click.option("--seed", type=int, default=0, show_default=True, help="the deal's random seed")
@click.option(
    "--reassign",
    "reassign",
    default=None,
    metavar="NAME",
    help="move NAME's undecided assignments (in the plan or filter, if given) to --to, "
    "each to whoever has the least open work",
)
@click.option(
    "--take-back",
    "take_back",
    default=None,
    metavar="NAME",
    help="release NAME's undecided assignments (in the plan or filter, if given)",
)
@db_option
@reviewer_option
@format_option("table", "json")
def assign(
    plan: str | None,
    suite: str | None,
    system: str | None,
    domain: str | None,
    to: str | None,
    overlap: float,
    k: int,
    seed: int,
    reassign: str | None,
    take_back: str | None,
    db: Path | None,
    reviewer: str | None,
    fmt: str,
) -> int:
    """Hand a plan's subjects (--plan) or reports (--suite/--system/--domain) to reviewers
    (--to); each reviewer's queue and plan mode serve their own assignments first. Targets
    already assigned are left alone. Without --to: every reviewer's progress. With
    --reassign NAME --to or --take-back NAME: move or release NAME's undecided work."""
    conn = open_db(db)
    if reassign is not None or take_back is not None:
        return _move(conn, reassign, take_back, to, (plan, suite, system, domain), reviewer, fmt)
    if to is None:
        if plan or suite or system or domain:
            raise click.UsageError("name the reviewers to hand the work to with --to")
        return _show(conn, fmt)
    from reviewer.assignment import AssignmentError
    from store.assignments.hand_out import hand_out
    from store.reviewlog.events import ReviewLog

    try:
        targets = _targets(conn, plan, suite, system, domain)
        log = ReviewLog(conn, reviewer_name(reviewer))
        done = hand_out(conn, log, targets, to.split(","), overlap, k, seed)
    except AssignmentError as exc:
        raise click.UsageError(str(exc)) from None
    _print_handed(done, "subjects" if plan else "reports", k, fmt)
    return 0


def _move(
    conn: sqlite3.Connection,
    reassign: str | None,
    take_back: str | None,
    to: str | None,
    where: tuple[str | None, str | None, str | None, str | None],
    reviewer: str | None,
    fmt: str,
) -> int:
    """``--reassign NAME --to …`` or ``--take-back NAME``, within the plan or filter given."""
    from reviewer.assignment import AssignmentError
    from store.assignments.take_back import take_back as release
    from store.reviewlog.events import ReviewLog

    giver = _giver(reassign, take_back, to)
    try:
        scope = _scope(conn, *where)
        log = ReviewLog(conn, reviewer_name(reviewer))
        moved = release(conn, log, giver, to.split(",") if to else (), scope)
    except AssignmentError as exc:
        raise click.UsageError(str(exc)) from None
    _print_moved(moved, fmt)
    return 0


def _giver(reassign: str | None, take_back: str | None, to: str | None) -> str:
    """Whose work moves, once the options ask for one thing that can be done."""
    if reassign is not None and take_back is not None:
        raise click.UsageError("--reassign moves work, --take-back releases it: one of them")
    if reassign is not None:
        if not to:
            raise click.UsageError("--reassign NAME needs --to: who takes NAME's undecided work")
        return reassign
    if to is not None:
        raise click.UsageError("--take-back releases work to nobody: use --reassign with --to")
    assert take_back is not None
    return take_back


def _scope(
    conn: sqlite3.Connection,
    plan: str | None,
    suite: str | None,
    system: str | None,
    domain: str | None,
) -> Scope:
    """The plan's subjects or the filter's reports; everything when neither is given."""
    from store.assignments.take_back import Scope

    if plan is not None and (suite or system or domain):
        raise click.UsageError("--plan names the plan's subjects: no report filter with it")
    if plan is not None:
        from store.assignments.hand_out import plan_targets

        return Scope(subjects=frozenset(t.target for t in plan_targets(conn, plan)))
    if suite or system or domain:
        return Scope(reports=frozenset(_reports(conn, suite, system, domain)))
    return Scope()


def _print_moved(moved: Moved, fmt: str) -> None:
    if fmt == "json":
        print_json(
            {
                "batch": moved.batch,
                "from": moved.giver,
                "moved": moved.moved,
                "kept_decided": moved.decided,
                "could_not_move": moved.stuck,
                "per_reviewer": moved.per_reviewer,
            }
        )
        return
    verb = "moved" if moved.per_reviewer else "took back"
    print(f"{verb} {moved.moved:,} of {moved.giver}'s undecided subjects, batch {moved.batch}")
    for name, count in moved.per_reviewer.items():
        print(f"  to {name}: {count:,}")
    if moved.decided:
        print(f"{moved.decided:,} subjects {moved.giver} decided stay theirs")
    if moved.stuck:
        print(
            f"could not move {moved.stuck:,} subjects: every reviewer named already holds "
            f"them; they stay with {moved.giver}"
        )


def _targets(
    conn: sqlite3.Connection,
    plan: str | None,
    suite: str | None,
    system: str | None,
    domain: str | None,
) -> list[Target]:
    """The plan's subjects, or the reports the filter selects."""
    from store.assignments.hand_out import plan_targets, report_targets

    if plan is not None and (suite or system or domain):
        raise click.UsageError("--plan hands out the plan's subjects: no report filter with it")
    if plan is not None:
        targets = plan_targets(conn, plan)
    else:
        targets = report_targets(conn, _reports(conn, suite, system, domain))
    if not targets:
        raise click.ClickException("nothing to hand out: no subject or report matches")
    return targets


def _print_handed(done: HandedOut, what: str, k: int, fmt: str) -> None:
    if fmt == "json":
        print_json(
            {
                "batch": done.batch,
                "targets": done.targets,
                "overlap": done.overlap,
                "skipped": done.skipped,
                "per_reviewer": done.per_reviewer,
            }
        )
        return
    print(
        f"assigned {done.targets:,} {what} ({done.overlap:,} to {k} reviewers each), "
        f"batch {done.batch}"
    )
    if done.skipped:
        print(f"{done.skipped:,} {what} were already assigned and are left as they were")
    for name, count in done.per_reviewer.items():
        print(f"  {name}: {count:,}")


def _reports(
    conn: sqlite3.Connection, suite: str | None, system: str | None, domain: str | None
) -> list[int]:
    from store.views.screens import queue_rows

    return [
        row.report_id
        for row in queue_rows(conn)
        if (suite is None or row.suite == suite)
        and (system is None or row.system == system)
        and (domain is None or row.domain == domain)
    ]


def _show(conn: sqlite3.Connection, fmt: str) -> int:
    from store.assignments.progress import reviewer_progress, team_progress

    rows = [
        {
            "reviewer": name,
            "assigned": p.assigned,
            "decided": p.decided,
            "open": p.assigned - p.decided,
            "overlap": p.overlap,
        }
        for name, p in reviewer_progress(conn).items()
    ]
    team = team_progress(conn)
    if fmt == "json":
        print_json(
            {
                "reviewers": rows,
                "team": {
                    "assigned": team.pairs,
                    "decided": team.done,
                    "overlap": team.overlap,
                    "overlap_decided": team.overlap_done,
                    "to_adjudicate": team.disagreements,
                    "adjudicated": team.adjudicated,
                },
            }
        )
        return 0
    if not rows:
        print("nothing is assigned (gavel assign --plan P --to ana,ben --overlap 0.2)")
        return 0
    emit(
        rows,
        ["reviewer", "assigned", "decided", "open", "overlap"],
        fmt,
        title="assignments (subjects)",
        numeric=["assigned", "decided", "open", "overlap"],
    )
    print(team.line())
    return 0
