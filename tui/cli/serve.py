"""``gavel serve``: the workstation in a browser, for reviewers who do not live in a terminal.

Each browser session is its own workstation process (textual-serve), run as the reviewer who
signed in, with that reviewer's signing key. Reviewers are admitted with
``gavel serve add-reviewer NAME``, which prints a token once (or, with ``--password``, takes a
password) and keeps only its hash; ``reset-reviewer`` replaces it and ``remove-reviewer``
stops admitting them, both ending the reviewer's open sessions at once.
"""

from __future__ import annotations

import ipaddress
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from tui.cli.options import db_option

if TYPE_CHECKING:
    from tui.serve.accounts import Accounts


def _accounts(db: Path | None, folder: Path | None) -> tuple[Path, Accounts]:
    from store.db.connection import default_path
    from tui.serve.accounts import Accounts, accounts_dir

    path = db or default_path()
    return path, Accounts(folder or accounts_dir(path))


ACCOUNTS_HELP = "folder of the reviewers' hashed tokens and signing keys (default: <db>.serve/)"


@click.group(
    "serve",
    invoke_without_command=True,
    epilog="""\b
examples:
  gavel serve add-reviewer ana          prints ana's token (once)
  gavel serve add-reviewer ana --password   asks for ana's password (twice)
  gavel serve reset-reviewer ana        a new token; ana's old one and sessions end
  gavel serve                           http://127.0.0.1:8000, loopback only
  gavel serve --public-url https://gavel.example.org   behind a TLS reverse proxy
see docs/serve.md for the reverse proxy and TLS.""",
)
@db_option
@click.option("--accounts", type=click.Path(path_type=Path), default=None, help=ACCOUNTS_HELP)
@click.option("--host", default="127.0.0.1", show_default=True, help="address to listen on")
@click.option(
    "--port",
    type=click.IntRange(1, 65535),
    default=8000,
    show_default=True,
    help="port to listen on",
)
@click.option(
    "--public-url",
    default=None,
    help="the address browsers use, behind a reverse proxy (https://… makes cookies "
    "secure and websockets wss://)",
)
@click.option(
    "--session-hours",
    type=click.FloatRange(0.01, 24 * 30),
    default=12.0,
    show_default=True,
    help="a sign-in lasts this long",
)
@click.pass_context
def serve(
    ctx: click.Context,
    db: Path | None,
    accounts: Path | None,
    host: str,
    port: int,
    public_url: str | None,
    session_hours: float,
) -> int:
    """Serve the workstation to browsers (textual-serve), every session signed in."""
    if ctx.invoked_subcommand is not None:
        return 0
    from tui.serve.server import GavelServer

    path, folder = _accounts(db, accounts)
    if not folder.load():
        raise click.UsageError("no reviewer can sign in yet: gavel serve add-reviewer NAME")
    if not path.is_file():
        raise click.UsageError(f"no database at {path} (gavel import or gavel demo first)")
    if not _loopback(host) and not public_url:
        print(
            f"gavel serve: listening on {host}, beyond this machine, without --public-url: "
            "put it behind a TLS reverse proxy (docs/serve.md)",
            file=sys.stderr,
        )
    _impacts_once(path)
    server = GavelServer(
        path, folder, host=host, port=port, public_url=public_url, session_hours=session_hours
    )
    print(f"gavel serve: {public_url or f'http://{host}:{port}'} (ctrl+c stops)", flush=True)
    server.run()
    return 0


def _impacts_once(path: Path) -> None:
    """Fill the queue's impact column before the first session opens: otherwise every
    session would start its own impact process on the same reports at once, and they would
    take the cores and the write lock from the reviewers' decisions."""
    import subprocess

    from store.db.connection import connect
    from store.triage.impact import missing_impacts

    conn = connect(path)
    try:
        missing = len(missing_impacts(conn))
    finally:
        conn.close()
    if missing:
        print(f"gavel serve: the impact of {missing:,} reports first, once for every session…")
        subprocess.run(
            [sys.executable, "-m", "store.backend.impact_worker", str(path)],
            stdout=subprocess.DEVNULL,
            check=False,
        )


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@serve.command("session", hidden=True)
@db_option
@click.option("--reviewer", required=True, help="the signed-in reviewer")
def session(db: Path | None, reviewer: str) -> int:
    """One browser session's workstation (the server starts it; not for people)."""
    from tui.cli.workstation import open_workstation
    from tui.serve.server import exit_with_parent

    exit_with_parent()
    return open_workstation(db, reviewer, served=True)


DAYS_HELP = "the token or password expires after this many days"
PASSWORD_HELP = (
    "a password instead of a token: asked twice without echo (two lines on standard input "
    "when it is not a terminal); at least 12 characters, not the name"
)


@serve.command("add-reviewer")
@click.argument("name", help="the reviewer's name, as their decisions will carry it")
@click.option(
    "--days", type=click.FloatRange(0.0, 3650), default=30.0, show_default=True, help=DAYS_HELP
)
@click.option("--password", "password", is_flag=True, help=PASSWORD_HELP)
@db_option
@click.option("--accounts", type=click.Path(path_type=Path), default=None, help=ACCOUNTS_HELP)
def add_reviewer(
    name: str, days: float, password: bool, db: Path | None, accounts: Path | None
) -> int:
    """Admit NAME (again: a new token replaces the old); prints the token once, or with
    --password asks for a password."""
    _, folder = _accounts(db, accounts)
    _admit(folder, name, days, password)
    return 0


@serve.command("reset-reviewer")
@click.argument("name", help="the reviewer whose token or password to replace")
@click.option(
    "--days", type=click.FloatRange(0.0, 3650), default=30.0, show_default=True, help=DAYS_HELP
)
@click.option("--password", "password", is_flag=True, help=PASSWORD_HELP)
@db_option
@click.option("--accounts", type=click.Path(path_type=Path), default=None, help=ACCOUNTS_HELP)
def reset_reviewer(
    name: str, days: float, password: bool, db: Path | None, accounts: Path | None
) -> int:
    """Give NAME a new token (printed once) or, with --password, a new password: the old one
    stops working at once, and NAME's signed-in sessions and open workstations end."""
    _, folder = _accounts(db, accounts)
    if name not in folder.load():
        print(f"gavel serve: no reviewer {name!r} (gavel serve add-reviewer)", file=sys.stderr)
        return 1
    _admit(folder, name, days, password)
    return 0


def _admit(folder: Accounts, name: str, days: float, password: bool) -> None:
    """A new token (printed once) or password for ``name``, replacing any they had."""
    from reviewer.assignment import AssignmentError, check_reviewer_name
    from tui.serve.accounts import PasswordRefused

    try:
        name = check_reviewer_name(name)
        if password:
            folder.add_password(name, _read_password(), days)
        else:
            token = folder.add(name, days)
    except (AssignmentError, PasswordRefused) as exc:
        raise click.UsageError(str(exc)) from None
    if password:
        print(f"the password for {name} is set (kept only hashed in {folder.folder})")
        return
    print(token)
    print(
        f"the token for {name} (shown once; kept only hashed in {folder.folder})",
        file=sys.stderr,
    )


def _read_password() -> str:
    """The password, typed twice without echo at a terminal; two lines of standard input
    otherwise (scripts, tests)."""
    if sys.stdin.isatty():
        import getpass

        first = getpass.getpass("password: ")
        second = getpass.getpass("again: ")
    else:
        first, second = sys.stdin.readline(), sys.stdin.readline()
        if not second:
            raise click.UsageError("--password reads the password twice: two lines on stdin")
        first, second = first.rstrip("\r\n"), second.rstrip("\r\n")
    if first != second:
        raise click.UsageError("the two passwords differ: nothing changed")
    return first


@serve.command("remove-reviewer")
@click.argument("name", help="the reviewer to stop admitting")
@db_option
@click.option("--accounts", type=click.Path(path_type=Path), default=None, help=ACCOUNTS_HELP)
def remove_reviewer(name: str, db: Path | None, accounts: Path | None) -> int:
    """Stop admitting NAME: their token or password stops working, and their signed-in
    sessions and open workstations end at once (what they decided stays)."""
    _, folder = _accounts(db, accounts)
    if not folder.remove(name):
        print(f"gavel serve: no reviewer {name!r}", file=sys.stderr)
        return 1
    return 0


@serve.command("reviewers")
@db_option
@click.option("--accounts", type=click.Path(path_type=Path), default=None, help=ACCOUNTS_HELP)
def reviewers(db: Path | None, accounts: Path | None) -> int:
    """The reviewers who may sign in, when their tokens or passwords expire, and which."""
    _, folder = _accounts(db, accounts)
    for account in sorted(folder.load().values(), key=lambda a: a.name):
        print(f"{account.name}\texpires {account.expires}\t{account.kind}")
    return 0
