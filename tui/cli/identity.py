"""``gavel identity``: who this installation signs as, taking over a name's unsigned events
(``claim``), and which identities' adjudications rule in this database (``trust``).

A name in a log is not proof: anyone can write ``"reviewer": "ana"``. So the events a name
wrote before signing existed (unsigned) belong to no key until a person claims them with
``gavel identity claim``, a signed event that travels with the log; and an adjudication rules
in a database only when its identity is held there as an adjudicator's (whoever adjudicates
at a database is; ``gavel identity trust`` adds others).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from tui.cli.options import db_option, format_option, open_db, reviewer_name, reviewer_option


@click.group(
    help="This installation's signing identity: `show` it, `claim` your name's unsigned "
    "events (written before signing), `trust` another identity as an adjudicator here."
)
def identity() -> None:
    pass


@identity.command("show", help="The reviewer name and key this installation signs with.")
@reviewer_option
@format_option("table", "json")
def identity_show(reviewer: str | None, fmt: str) -> int:
    from reviewer.identity import key_id
    from store.reviewlog.identity import existing_identity, identity_path

    name = reviewer_name(reviewer)
    path = identity_path()
    mine = existing_identity(name, path)
    if mine is None:
        if fmt == "json":
            print(json.dumps({"reviewer": name, "key": None, "key_id": None}))
        else:
            print(f"{name}: no signing key yet ({path} is made by your first decision)")
        return 0
    public = mine.public_key
    if fmt == "json":
        print(json.dumps({"reviewer": name, "key": public, "key_id": key_id(public)}))
        return 0
    print(f"{name}#{key_id(public)}  (key {public}; secret in {path})")
    return 0


@identity.command(
    "claim",
    help="Take over NAME's unsigned events (written before signing) with this "
    "installation's key: a signed event that travels with your log, after which this key, "
    "and no other, may undo or supersede them in every database. NAME must be the name you "
    "review as. If a second key also claims NAME, the two claims cancel out.",
)
@click.argument("name", help="the reviewer name whose unsigned events you take over")
@db_option
@click.option("--rationale", default="", help="why (stored with the claim)")
def identity_claim(name: str, db: Path | None, rationale: str) -> int:
    from reviewer.identity import label
    from store.reviewlog.events import ReviewLog, legacy_owner
    from store.scores.cache import rebuild_scores

    if reviewer_name(name) != name:
        raise click.UsageError(f"not a reviewer name: {name!r}")
    conn = open_db(db)
    log = ReviewLog(conn, name)
    if log.key is not None and legacy_owner(conn, name) == log.key:
        print(f"{label(name, log.key)} already holds {name}'s unsigned events")
        return 0
    unsigned = int(
        conn.execute(
            "SELECT count(*) FROM review_event WHERE reviewer = ? AND key IS NULL", (name,)
        ).fetchone()[0]
    )
    log.claim(rationale)
    rebuild_scores(conn)
    owner = legacy_owner(conn, name)
    if owner != log.key:
        print(
            f"gavel: another key has claimed {name!r} too: neither may undo or supersede "
            f"{name}'s unsigned events (they stand beside both as their own side)",
            file=sys.stderr,
        )
        return 1
    print(
        f"{label(name, owner)} now holds {name}'s unsigned events ({unsigned:,} here); "
        "the claim travels with your log"
    )
    return 0


@identity.command(
    "trust",
    help="Hold IDENTITY (name#keyid, as `gavel merge` and `gavel conflicts` show it) as an "
    "adjudicator in this database: its adjudications then rule instead of standing as one "
    "more side. Local to this database, like the config.",
)
@click.argument("who", metavar="IDENTITY", help="name#keyid of the adjudicator")
@db_option
def identity_trust(who: str, db: Path | None) -> int:
    from reviewer.identity import key_id, label
    from reviewer.textsafety import printable
    from store.reviewlog.events import rebuild_state, trust_adjudicator
    from store.scores.cache import rebuild_scores

    name, sep, short = who.rpartition("#")
    if not sep or not name or len(short) != 8:
        raise click.UsageError(f"{printable(who)}: give an identity as name#keyid (8 hex digits)")
    conn = open_db(db)
    keys = [
        str(key)
        for (key,) in conn.execute(
            "SELECT DISTINCT key FROM review_event WHERE reviewer = ? AND key IS NOT NULL",
            (name,),
        )
        if key_id(str(key)) == short.lower()
    ]
    if len(keys) != 1:
        print(f"gavel: no events here by {printable(who)} (see `gavel conflicts`)", file=sys.stderr)
        return 1
    if trust_adjudicator(conn, name, keys[0], "trusted by a person (gavel identity trust)"):
        rebuild_state(conn)
        rebuild_scores(conn)
    print(f"{label(name, keys[0])} is an adjudicator here: its adjudications rule")
    return 0
