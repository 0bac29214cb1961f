"""The ``gavel`` command group: its subcommands by name, and what a failure prints and returns.

Every subcommand works on one database (``--db PATH``, else ``$GAVEL_DB``, else ``gavel.db`` in
the current folder). With no subcommand, ``gavel`` opens the review workstation, building the
database from the bundled sample data on first run.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click

from tui.cli.lazy import LazyGroup
from tui.cli.options import db_option, reviewer_option

COMMANDS: dict[str, tuple[str, str]] = {
    "review": ("tui.cli.workstation:review", "open the review workstation (the default)"),
    "demo": (
        "tui.cli.importing:demo",
        "build a database from sample_data/ (idempotent) and show its scores",
    ),
    "import": ("tui.cli.importing:import_run", "import a benchmark run"),
    "schema": ("tui.cli.importing:schema", "print the JSON Schema of the native bundle records"),
    "scores": (
        "tui.cli.scores:scores",
        "every metric in both variants (judge, adjudicated) with the delta",
    ),
    "verdicts": ("tui.cli.verdicts:verdicts", "list judgments with judge and effective value"),
    "decide": (
        "tui.cli.decisions:decide",
        "record a human verdict on a judgment (or a file of them: --from FILE)",
    ),
    "confirm": ("tui.cli.decisions:confirm", "confirm the judge's verdict"),
    "rate": ("tui.cli.decisions:rate", "rate a whole report 1–4 (UserPref scale)"),
    "undo": ("tui.cli.decisions:undo", "undo your last decision (persistent)"),
    "redo": ("tui.cli.decisions:redo", "redo your last undone decision"),
    "reasons": ("tui.cli.decisions:reasons", "list the judge-error reason codes"),
    "keys": (
        "tui.cli.workstation:keys",
        "list every key binding by id (remap them in the config file)",
    ),
    "options": (
        "tui.cli.scores:options",
        "show or set the named scoring options ([CHOICE]s of the specs)",
    ),
    "rebuild": (
        "tui.cli.scores:rebuild",
        "rebuild every derived table (decisions, scores) from inputs and log",
    ),
    "bench": (
        "tui.cli.bench:bench",
        "performance figures beside baselines measured in the same run",
    ),
    "agreement": (
        "tui.cli.agreement:agreement",
        "judge vs human, reviewer vs reviewer, UserPref vs overall ratings",
    ),
    "log": ("tui.cli.logs:log", "the review log (export as JSONL)"),
    "merge": (
        "tui.cli.logs:merge",
        "merge another reviewer's log (a .jsonl export or a gavel database)",
    ),
    "hub": (
        "tui.cli.hub:hub",
        "a review hub on PostgreSQL: `hub init URL` creates it, `hub status` shows it",
    ),
    "sync": (
        "tui.cli.hub:sync",
        "push this database's review events to the hub and pull everyone else's",
    ),
    "identity": (
        "tui.cli.identity:identity",
        "your signing identity: claim your unsigned events, trust an adjudicator",
    ),
    "conflicts": (
        "tui.cli.logs:conflicts_",
        "judgments reviewers decided differently, with both sides",
    ),
    "adjudicate": (
        "tui.cli.decisions:adjudicate",
        "resolve a conflict; the event records every side it resolves",
    ),
    "export": (
        "tui.cli.exports:export",
        "export the gold labels, verdicts, scores or ground-truth expansions (JSONL, "
        "CSV or Parquet)",
    ),
    "propose": (
        "tui.cli.proposals:propose",
        "propose a ground-truth expansion (new claim or rubric item, alias, extra evidence)",
    ),
    "proposals": ("tui.cli.proposals:proposals_", "list ground-truth proposals"),
    "accept": (
        "tui.cli.proposals:accept",
        "accept a proposal into the ground truth (rescores the task)",
    ),
    "reject": ("tui.cli.proposals:reject", "reject a proposal"),
    "judge": (
        "tui.cli.judge:judge",
        "judge reports with any framework's pipeline and an OpenAI-compatible model "
        "(a new candidate run; --batch for the Batch API)",
    ),
    "fetch": (
        "tui.cli.judge:fetch",
        "fetch the pages the selected reports cite (kept in page_fetch)",
    ),
    "migrate-judge": (
        "tui.cli.migrate:migrate_judge",
        "re-judge a run's reports with a new model: the human-labelled ones "
        "first, checked against the labels, then the rest",
    ),
    "runs": (
        "tui.cli.runs:runs",
        "list judge runs, rank them against the human labels, activate or retire one",
    ),
    "plan": (
        "tui.cli.plans:plan",
        "review plans: draw a random sample of subjects to review (new, list, show, export)",
    ),
    "estimate": (
        "tui.cli.plans:estimate",
        "judge scores corrected by a plan's reviews (PPI++), with intervals, judge "
        "bias, reviews needed and ranks that could swap",
    ),
    "serve": (
        "tui.cli.serve:serve",
        "the workstation in a browser, every session signed in as its reviewer "
        "(add-reviewer NAME first)",
    ),
    "assign": (
        "tui.cli.assign:assign",
        "hand a plan's subjects or reports to reviewers, with an overlap decided "
        "independently (no --to: who has what)",
    ),
    "trust": (
        "tui.cli.trust:trust",
        "accept judge verdicts without review where agreement with the humans is "
        "guaranteed (calibrate, apply, show, clear)",
    ),
    "compare": (
        "tui.cli.compare:compare",
        "verdict agreement and score differences between judge runs; mean ± sd of "
        "system scores over runs",
    ),
}
"""Subcommand -> (where it is defined, its line in ``gavel --help``)."""

EPILOG = """\
\b
examples:
  gavel                                  open the workstation (sample data on first run)
  gavel import runs/my-bundle            import a native bundle folder or .jsonl file
  gavel import ../shared/anchors/deep_research_bench --format drb
  gavel scores --per system              judge → adjudicated scores with deltas
  gavel verdicts --report t02-kestrel --kind claim
  gavel decide 42 incorrect --rationale "source gives 11, not 12" --reason other
  gavel decide --from decisions.jsonl    a file of decisions (JSONL or CSV), all or nothing
  gavel undo
  gavel sync postgresql://ana@hub.example/gavel   share decisions through a review hub
  gavel plan new --budget 300 --design stratified --by system
  gavel assign --plan p1 --to ana,ben --overlap 0.2   hand out p1, 20% to both
  gavel estimate --plan p1               corrected scores with intervals and rank swaps
  gavel trust calibrate --alpha 0.1 --delta 0.1   verdicts that need no review
  gavel bench --quick                    performance figures beside their baselines
  gavel judge --framework race --model gpt-4.1 --dry-run
  gavel judge --framework fact --batch --no-wait && gavel judge --resume RUN
  gavel migrate-judge --from judge-2025 --model gpt-5-mini
"""


EXIT_BUSY = 75
"""Another process held the database's write lock past the wait (sysexits' EX_TEMPFAIL:
a temporary failure, worth trying again)."""

PARTIAL_WRITERS = frozenset({"judge", "fetch"})
"""Commands that store their work in several transactions as it finishes: a busy database
stops them, and what they stored before stays."""


class GavelGroup(LazyGroup):
    """Runs a command and turns the errors a user can fix into a message and an exit code
    (2 for bad input, 75 for a database another process kept busy, 130 for ctrl+c), never a
    traceback."""

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        # With $_GAVEL_COMPLETE set, print shell completions and exit (as click's own main).
        self._main_shell_completion(extra, prog_name or "gavel", complete_var)
        code = self.run(list(sys.argv[1:] if args is None else args), prog_name or "gavel", **extra)
        if standalone_mode:
            sys.exit(code)
        return code

    def run(self, args: list[str], prog_name: str, **extra: Any) -> int:
        if sys.stdout.isatty():  # nothing a command prints drives the terminal
            from tui.cli.terminal import guard_terminal

            guard_terminal()
        ctx: click.Context | None = None
        try:
            ctx = self.make_context(prog_name, args, **extra)
            with ctx:
                return int(self.invoke(ctx) or 0)
        except click.exceptions.Exit as exc:
            return exc.exit_code
        except click.ClickException as exc:
            exc.show()
            return exc.exit_code
        except KeyboardInterrupt:
            print("gavel: interrupted", file=sys.stderr)
            return 130
        except BrokenPipeError:
            # Output piped into `head` and the like: not an error of ours.
            sys.stderr.close()
            return 0
        except Exception as exc:
            code = _known_error(exc, ctx.invoked_subcommand if ctx is not None else None)
            if code is None:
                raise
            return code


def _known_error(exc: Exception, command: str | None) -> int | None:
    """Print an error the user can act on and return its exit code; None for a bug."""
    from reviewer.errors import ConfigError, InputError
    from reviewer.textsafety import printable
    from store.db.schema import SchemaError
    from store.reviewlog.events import ReviewError

    if isinstance(exc, InputError):
        print(f"gavel: bad input: {printable(str(exc))}", file=sys.stderr)
        print(
            "nothing was imported." if command == "import" else "nothing was changed.",
            file=sys.stderr,
        )
        return 2
    if isinstance(exc, ReviewError | ConfigError | SchemaError):
        print(f"gavel: {printable(str(exc))}", file=sys.stderr)
        return 2
    from store.sqlite.writelock import describe_holder, is_busy

    if is_busy(exc):
        from tui.cli.options import opened_database

        held = printable(describe_holder(opened_database()))
        if command in PARTIAL_WRITERS:
            print(
                f"gavel: database busy ({held}): stopped; what was stored before it stays",
                file=sys.stderr,
            )
        else:
            print(
                f"gavel: database busy ({held}), nothing changed; try again when it finishes",
                file=sys.stderr,
            )
        return EXIT_BUSY
    return _database_error(exc, command)


def _database_error(exc: Exception, command: str | None) -> int | None:
    """A damaged, read-only, unopenable or full database file: one line naming it and what
    to do (store.db.connection), never a traceback."""
    from reviewer.textsafety import printable
    from store.db.connection import database_problem
    from tui.cli.options import opened_database

    path = opened_database()
    problem = database_problem(path or "the database", exc)
    if problem is None or (isinstance(exc, UnicodeDecodeError) and not _damaged(path)):
        return None
    message = str(problem)
    if command in PARTIAL_WRITERS:
        message = message.replace("nothing was changed", "what was stored before it stays")
    print(f"gavel: {printable(message)}", file=sys.stderr)
    return problem.exit_code


def _damaged(path: Path | None) -> bool:
    """Whether SQLite finds the database damaged (asked only after an error that may say so:
    a decoding error can also be a bug of ours)."""
    import sqlite3

    if path is None:
        return False
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
        try:
            row = conn.execute("PRAGMA quick_check(1)").fetchone()
        finally:
            conn.close()
    except (sqlite3.Error, UnicodeDecodeError):
        return True
    return row is None or row[0] != "ok"


@click.group(
    cls=GavelGroup,
    lazy=COMMANDS,
    invoke_without_command=True,
    epilog=EPILOG,
    context_settings={"help_option_names": ["-h", "--help"]},
    help="Gavel: adjudicate LLM-judge evaluations of deep-research reports, by keyboard, "
    "with every benchmark score recomputed as you decide.",
)
@db_option
@reviewer_option
@click.pass_context
def gavel(ctx: click.Context, db: Path | None, reviewer: str | None) -> int:
    if ctx.invoked_subcommand is not None:
        return 0
    from tui.cli.workstation import open_workstation

    return open_workstation(db, reviewer)
