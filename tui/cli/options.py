"""Options every subcommand spells the same way, and opening the database they name.

``--db`` and ``--reviewer`` are accepted before the subcommand (``gavel --db x scores``) and
after it (``gavel scores --db x``); given in both places, the later one counts.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

if TYPE_CHECKING:
    import sqlite3

F = TypeVar("F", bound=Callable[..., Any])

DB_HELP = "database file (default: $GAVEL_DB or ./gavel.db)"
REVIEWER_HELP = "reviewer name (default: config file, $GAVEL_REVIEWER, login name)"
REPORT_HELP = (
    "report: SUITE/REPORT, or REPORT when only one suite has it, or its row id "
    "(an id several suites share is refused, listing them)"
)


def _inherited(ctx: click.Context, param: click.Parameter, value: object) -> object:
    """The value given here, else the one given to an enclosing command."""
    parent = ctx.parent
    while value is None and parent is not None and param.name is not None:
        value = parent.params.get(param.name)
        parent = parent.parent
    return value


def db_option(func: F) -> F:
    return click.option(
        "--db", type=click.Path(path_type=Path), default=None, callback=_inherited, help=DB_HELP
    )(func)


def reviewer_option(func: F) -> F:
    return click.option("--reviewer", default=None, callback=_inherited, help=REVIEWER_HELP)(func)


def format_option(*choices: str) -> Callable[[F], F]:
    """``--format``, one of ``choices`` (default: table, json, csv), the first the default."""
    names = choices or ("table", "json", "csv")
    return click.option(
        "--format",
        "fmt",
        type=click.Choice(names),
        default=names[0],
        help=f"output format (default: {names[0]})",
    )


_opened: list[Path] = []


def open_db(path: Path | None) -> sqlite3.Connection:
    from store.db.connection import connect, default_path

    target = path or default_path()
    _opened.append(target)
    return connect(target)


def opened_database() -> Path | None:
    """The database this command opened last (what a "database busy" message is about)."""
    return _opened[-1] if _opened else None


def reviewer_name(reviewer: str | None) -> str:
    """The name given, else the config file's, ``$GAVEL_REVIEWER`` or the login name.

    With no config file and a plain name, the answer needs no parsing or validation models
    (a script calling ``gavel decide`` in a loop pays for neither); otherwise the config's
    own checks decide, and word any problem."""
    from tui.paths import config_path, default_reviewer

    if not config_path().is_file():
        from reviewer.textsafety import hidden_characters

        name = reviewer or default_reviewer()
        if name.strip() and not hidden_characters(name):
            return name.strip()
    from tui.config import load_config

    return load_config(reviewer=reviewer).reviewer
