"""The ``gavel`` command line.

Every subcommand works on one database (``--db PATH``, else ``$GAVEL_DB``, else ``gavel.db`` in
the current folder). With no subcommand, ``gavel`` opens the review workstation, building the
database from the bundled sample data on first run.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from reviewer.errors import ConfigError, InputError
from reviewer.registry import format_descriptions, formats
from store.reviewlog import ReviewError
from store.schema import SchemaError

Handler = Callable[[argparse.Namespace], int]

EPILOG = """\
examples:
  gavel                                  open the workstation (sample data on first run)
  gavel import runs/my-bundle            import a native bundle folder or .jsonl file
  gavel import ../shared/anchors/deep_research_bench --format drb
  gavel scores --per system              judge → adjudicated scores with deltas
  gavel verdicts --report t02-kestrel --kind claim
  gavel decide 42 incorrect --rationale "source gives 11, not 12" --reason other
  gavel undo
  gavel bench --quick                    performance figures beside their baselines
"""


def _db_parent(default: object = argparse.SUPPRESS) -> argparse.ArgumentParser:
    """``--db``, accepted before or after the subcommand.

    Subcommands use SUPPRESS as default so that ``gavel --db x scores`` is not reset to None by
    the subcommand's own default.
    """
    parent = argparse.ArgumentParser(add_help=False)
    parent.add_argument("--db", type=Path, default=default,
                        help="database file (default: $GAVEL_DB or ./gavel.db)")
    return parent


def _fmt(parser: argparse.ArgumentParser, *choices: str) -> None:
    parser.add_argument("--format", dest="fmt", choices=choices or ("table", "json", "csv"),
                        default="table", help="output format (default: table)")


def _reviewer(parser: argparse.ArgumentParser, default: object = argparse.SUPPRESS) -> None:
    parser.add_argument("--reviewer", default=default,
                        help="reviewer name (default: config file, $GAVEL_REVIEWER, login name)")


def build_parser() -> argparse.ArgumentParser:
    from tui import cmd_data, cmd_review

    db = _db_parent()
    parser = argparse.ArgumentParser(
        prog="gavel",
        description="Gavel: adjudicate LLM-judge evaluations of deep-research reports, by "
        "keyboard, with every benchmark score recomputed as you decide.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        parents=[_db_parent(None)],
    )
    _reviewer(parser, None)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser("review", parents=[db], help="open the review workstation (the default)")
    _reviewer(p)
    p.set_defaults(handler=cmd_review.review_app)

    p = sub.add_parser("demo", parents=[db],
                       help="build a database from sample_data/ (idempotent) and show its scores")
    p.add_argument("--quiet", action="store_true", help="only build, print nothing")
    p.set_defaults(handler=cmd_data.demo)

    p = sub.add_parser("import", parents=[db], help="import a benchmark run")
    p.add_argument("path", type=Path, help="a bundle folder or .jsonl file, or a DRB repository")
    p.add_argument("--format", dest="input_format", choices=tuple(formats()), default="native",
                   help="; ".join(f"{name}: {text}"
                                  for name, text in format_descriptions().items()))
    p.add_argument("--suite-id", default=None, help="suite id for formats that do not carry one")
    p.set_defaults(handler=cmd_data.import_cmd)

    p = sub.add_parser("schema", help="print the JSON Schema of the native bundle records")
    p.set_defaults(handler=cmd_data.schema)

    p = sub.add_parser("scores", parents=[db],
                       help="every metric in both variants (judge, adjudicated) with the delta")
    p.add_argument("--framework", default=None, help="only this framework (cascade, race, …)")
    p.add_argument("--system", default=None, help="only this system (id or name)")
    p.add_argument("--per", choices=("system", "report"), default="system",
                   help="aggregate per system (default) or list every report")
    p.add_argument("--all", dest="include_parts", action="store_true",
                   help="include the hidden aggregation parts (metrics starting with _)")
    _fmt(p)
    p.set_defaults(handler=cmd_data.scores)

    p = sub.add_parser("verdicts", parents=[db],
                       help="list judgments with judge and effective value")
    p.add_argument("--report", default=None, help="report id")
    p.add_argument("--kind", default=None, help="verdict kind (ins, rat, claim, consistency, …)")
    p.add_argument("--undecided", action="store_true", help="only those no human decided")
    p.add_argument("--differs", action="store_true", help="only those where human ≠ judge")
    p.add_argument("--all-runs", action="store_true", help="include non-current judge runs")
    _fmt(p)
    p.set_defaults(handler=cmd_data.verdicts)

    p = sub.add_parser("decide", parents=[db], help="record a human verdict on a judgment")
    p.add_argument("id", type=int, help="judgment id (see `gavel verdicts`)")
    p.add_argument("value", help="a value on the judgment's scale (e.g. 0, 0.5, 1, correct)")
    p.add_argument("--rationale", required=True, help="why (stored with the decision)")
    p.add_argument("--reason", default=None, help="judge-error reason code (see `gavel reasons`)")
    p.add_argument("--adjudicate", action="store_true",
                   help="an adjudication: resolves a conflict between reviewers")
    _reviewer(p)
    _fmt(p, "table", "json")
    p.set_defaults(handler=cmd_review.decide)

    p = sub.add_parser("confirm", parents=[db], help="confirm the judge's verdict")
    p.add_argument("id", type=int, help="judgment id")
    p.add_argument("--rationale", default="", help="optional note")
    _reviewer(p)
    _fmt(p, "table", "json")
    p.set_defaults(handler=cmd_review.confirm)

    p = sub.add_parser("rate", parents=[db], help="rate a whole report 1–4 (UserPref scale)")
    p.add_argument("report", help="report id")
    p.add_argument("value", help="1 Unhelpful, 2 Deficient, 3 Acceptable, 4 Perfect")
    p.add_argument("--rationale", default="", help="optional note")
    _reviewer(p)
    _fmt(p, "table", "json")
    p.set_defaults(handler=cmd_review.rate)

    for name, text in (("undo", "undo your last decision (persistent)"),
                       ("redo", "redo your last undone decision")):
        p = sub.add_parser(name, parents=[db], help=text)
        _reviewer(p)
        _fmt(p, "table", "json")
        p.set_defaults(handler=getattr(cmd_review, name))

    p = sub.add_parser("reasons", help="list the judge-error reason codes")
    p.set_defaults(handler=cmd_review.reasons)

    p = sub.add_parser("keys", help="list every key binding by id (remap them in the config file)")
    _fmt(p)
    p.set_defaults(handler=cmd_review.keys)

    p = sub.add_parser("options", parents=[db],
                       help="show or set the named scoring options ([CHOICE]s of the specs)")
    p.add_argument("settings", nargs="*", metavar="FRAMEWORK.OPTION=VALUE",
                   help="e.g. cascade.v2_without_groups=literal (rebuilds the scores)")
    _fmt(p)
    p.set_defaults(handler=cmd_data.options)

    p = sub.add_parser("rebuild", parents=[db],
                       help="rebuild every derived table (decisions, scores) from inputs and log")
    p.set_defaults(handler=cmd_data.rebuild)

    p = sub.add_parser("bench",
                       help="performance figures beside baselines measured in the same run")
    p.add_argument("--tasks", type=int, default=150,
                   help="synthetic tasks (default 150, DailyReport's size)")
    p.add_argument("--systems", type=int, default=17,
                   help="synthetic systems, each reporting on every task (default 17)")
    p.add_argument("--quick", action="store_true", help="a 1/10 run for a fast look")
    p.add_argument("--workdir", type=Path, default=None,
                   help="keep the synthetic run and databases here, and reuse the run next "
                        "time (default: a temporary folder, removed afterwards)")
    p.add_argument("--skip-ui", action="store_true", help="skip the TUI figures")
    p.set_defaults(handler=cmd_data.bench)

    for module_name in COMMAND_MODULES:
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name == module_name:
                continue
            raise
        module.register(sub, Parents(db=db, fmt=_fmt, reviewer=_reviewer))
    return parser


@dataclass(frozen=True)
class Parents:
    """What a command module needs to declare its subcommands like the built-in ones."""

    db: argparse.ArgumentParser
    fmt: Callable[..., None]
    reviewer: Callable[..., None]


COMMAND_MODULES: tuple[str, ...] = (
    "tui.cmd_gt",       # agreement, review-log export/merge, conflicts, exports, proposals
    "tui.cmd_judge",    # judge, fetch, runs, compare
)
"""Modules that add subcommands through ``register(subparsers, parents)``."""


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    handler: Handler | None = getattr(args, "handler", None)
    if handler is None:
        from tui import cmd_review

        handler = cmd_review.review_app
    try:
        return handler(args)
    except InputError as exc:
        print(f"gavel: bad input: {exc}", file=sys.stderr)
        if getattr(args, "command", None) == "import":
            print("nothing was imported.", file=sys.stderr)
        else:
            print("nothing was changed.", file=sys.stderr)
        return 2
    except (ReviewError, ConfigError, SchemaError) as exc:
        print(f"gavel: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("gavel: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # Output piped into `head` and the like: not an error of ours.
        sys.stderr.close()
        return 0


if __name__ == "__main__":
    raise SystemExit(main())
