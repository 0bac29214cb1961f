"""``gavel hub`` (create a review hub on PostgreSQL, show its state) and ``gavel sync`` (push
this database's events to the hub and pull everyone else's).

The hub URL comes from the argument, else ``$GAVEL_HUB``, else the config file's ``hub``.
Exit codes: 0 synced, 2 refused (not a hub, a suite id naming different content), 3 offline
(nothing lost: the events wait here and go with the next sync), 4 the hub's event ids jump
(the pull stopped before the jump; `gavel hub status` also reports it).
"""

from __future__ import annotations

import json
import os
import re
import sys
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    import sqlite3

    from store.hub.sync import SyncResult

from tui.cli.options import db_option, format_option, open_db

EXIT_REFUSED = 2
EXIT_OFFLINE = 3
EXIT_GAP = 4

URL_HELP = "the hub's PostgreSQL URL (default: $GAVEL_HUB, else the config file's `hub`)"

_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]")


def shown(text: str) -> str:
    """Text that came from the hub (targets, reasons) as printed: control, bidi and
    zero-width characters visible as escapes, never acted on by the terminal."""
    return _UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def hub_url(url: str | None) -> str:
    if url:
        return url
    if os.environ.get("GAVEL_HUB"):
        return os.environ["GAVEL_HUB"]
    from tui.config import load_config

    configured = load_config().hub
    if configured:
        return configured
    raise click.UsageError(
        'no hub: give its URL, set $GAVEL_HUB, or put hub = "postgresql://…" in the config file'
    )


def _fail(exc: Exception, pending: int | None = None) -> int:
    from store.hub.server import HubOffline, HubRefused

    print(f"gavel: {shown(str(exc))}", file=sys.stderr)
    if isinstance(exc, HubOffline):
        waiting = f" ({pending:,} events wait here)" if pending is not None else ""
        print(
            f"nothing is lost: decisions stay in the local database{waiting} and go to the "
            "hub with the next sync that reaches it.",
            file=sys.stderr,
        )
        return EXIT_OFFLINE
    return EXIT_REFUSED if isinstance(exc, HubRefused) else 1


@click.group(
    help="A review hub: one PostgreSQL database through which several reviewers' Gavel "
    "databases sync their review logs (decisions, flags, ratings, proposals). Each "
    "reviewer keeps working on a local database; `gavel sync` (or the workstation, "
    "every `sync_every` seconds when the config names a `hub`) pushes local events "
    "and pulls everyone else's, merged with the same rules as `gavel merge`: union "
    "by event, signatures checked, conflicts surfaced, never last-write-wins."
)
def hub() -> None:
    pass


@hub.command(
    "init",
    short_help="create a hub's append-only tables on PostgreSQL",
    help="Create the hub's tables on a PostgreSQL database (idempotent): one "
    "append-only event table (UPDATE, DELETE and TRUNCATE are refused by triggers) and "
    "the suites it serves, in the schema gavel_hub. Needs PostgreSQL 14 or later.",
)
@click.argument(
    "url", help="postgresql://user@host:port/dbname of a database you may create tables in"
)
@click.option(
    "--grant",
    "grant",
    metavar="ROLE",
    default=None,
    help="also give ROLE (the reviewers' login role) SELECT, and INSERT of an event's "
    "columns only (never its id, which the server assigns)",
)
def hub_init(url: str, grant: str | None) -> int:
    from store.hub.server import HubError, PgHub

    target = PgHub(url)
    try:
        hub_id = target.init(grant)
    except HubError as exc:
        return _fail(exc)
    finally:
        target.close()
    print(
        f"hub ready at {target.name} (hub id {hub_id})"
        + (f"; role {grant} may read and append" if grant else "")
    )
    print('reviewers: `gavel sync URL`, or hub = "URL" in the config file for the workstation')
    return 0


@hub.command(
    "status",
    short_help="events per suite, and what this database has not pushed",
    help="The hub's events per suite, and this database's place in it "
    "(events not yet pushed, last sync, quarantined hub events).",
)
@db_option
@click.argument("url", required=False, help=URL_HELP)
@format_option("table", "json")
def hub_status(db: Path | None, url: str | None, fmt: str) -> int:
    from store.hub.server import HubError, PgHub
    from store.hub.sync import local_state

    conn = open_db(db)
    target = PgHub(hub_url(url))
    try:
        stats = target.stats()
    except HubError as exc:
        return _fail(exc, local_state(conn).pending)
    finally:
        target.close()
    here = local_state(conn, stats.hub_id)
    status = 0 if stats.gap is None else EXIT_GAP
    if fmt == "json":
        print(json.dumps({"hub": target.name, **asdict(stats), "local": asdict(here)}, indent=2))
        return status
    print(
        f"hub {target.name} (id {stats.hub_id}): {stats.events:,} events from "
        f"{stats.reviewers:,} reviewer identities"
    )
    for suite, n in stats.suites:
        print(f"  {shown(suite)}: {n:,} events")
    print(
        f"this database: {here.pending:,} events not yet on the hub; last synced "
        f"{here.synced_at or 'never'}"
        + (f"; {here.quarantined:,} hub events quarantined" if here.quarantined else "")
    )
    if stats.gap is not None:
        from store.hub.sync import gap_message

        print(f"gavel: {gap_message(stats.gap)}", file=sys.stderr)
    return status


@click.command(
    help="Sync this database with a review hub: push local events the hub lacks, "
    "pull everyone else's and merge them (union by event uuid, signatures and "
    "authorship checked, events about subjects not here kept until they appear). "
    "Reviewers who decided a subject differently become a conflict in every "
    "database, never a last-write-wins. A hub event this database refuses (forged, "
    "edited) is quarantined and reported, and the sync goes on. Safe to interrupt "
    "and to repeat."
)
@db_option
@click.argument("url", required=False, help=URL_HELP)
@format_option("table", "json")
def sync(db: Path | None, url: str | None, fmt: str) -> int:
    from store.hub.server import HubError, PgHub
    from store.hub.sync import local_state
    from store.hub.sync import sync as run_sync
    from store.scores.cache import ensure_scores

    conn = open_db(db)
    ensure_scores(conn)
    target = PgHub(hub_url(url))
    try:
        result = run_sync(conn, target)
    except HubError as exc:
        return _fail(exc, local_state(conn).pending)
    finally:
        target.close()
    status = 0 if result.gap is None else EXIT_GAP
    if result.gap is not None:
        from store.hub.sync import gap_message

        print(f"gavel: {gap_message(result.gap)}", file=sys.stderr)
    if fmt == "json":
        print(json.dumps(asdict(result), ensure_ascii=False, indent=2))
    else:
        _print_sync(conn, result)
    return status


def _print_sync(conn: sqlite3.Connection, result: SyncResult) -> None:
    print(
        f"synced with {result.hub} in {result.seconds:.2f} s: pushed {result.pushed:,} "
        f"events ({result.already_on_hub:,} were there already), pulled {result.pulled:,} "
        f"({result.merged:,} new here"
        + (
            f", {result.pending_subjects:,} waiting for subjects this database lacks"
            if result.pending_subjects
            else ""
        )
        + ")"
    )
    print(f"pending: {result.pending:,} local events not yet on the hub")
    if result.new_conflicts:
        print(f"new conflicts: {len(result.new_conflicts):,}")
        for target_name in result.new_conflicts[:20]:
            print(f"  {shown(target_name)}")
        if len(result.new_conflicts) > 20:
            print(f"  … and {len(result.new_conflicts) - 20:,} more")
    conflicts = result.conflicts
    if conflicts is None:
        conflicts = int(
            conn.execute("SELECT count(*) FROM decision WHERE status = 'conflict'").fetchone()[0]
        )
    print(
        f"conflicts now: {conflicts:,}"
        + (
            "  (list them with `gavel conflicts`, resolve with `gavel adjudicate`)"
            if conflicts
            else ""
        )
    )
    for hub_event, uuid, why in result.rejected[:20]:
        print(f"quarantined hub event {hub_event} ({shown(uuid or '?')}): {shown(why)}")
    if result.quarantined:
        print(
            f"quarantined: {result.quarantined:,} hub events refused here in all (never "
            "merged; `gavel hub status` counts them)"
        )
    for uuid in result.diverged[:20]:
        print(
            f"warning: the hub holds event {shown(uuid)} with different content; the hub's "
            "copy stands"
        )
