"""`gavel bench --hub URL`: the review hub's figures — push and pull throughput, the time a new
database takes to pull the whole log, and the round trip of one decision — each beside the
bare operation it is built on (a COPY of the same rows; a fetch of them; a file merge of the
same events).

It works in a scratch PostgreSQL schema of its own (``gavel_bench_…``), dropped afterwards, so
it can run against any database the user may create schemas in, a live hub's included.
Nothing here is asserted: figures are printed.
"""

from __future__ import annotations

import io
import random
import sqlite3
import statistics
import time
import uuid as uuidlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from reviewer.identity import Identity, new_secret
from reviewer.logfile import LogEvent, event_line, read_events
from reviewer.registry import get_kind
from store.db.connection import connect
from store.hub.server import EVENT_FIELDS, PgHub
from store.hub.sync import sync
from store.reviewlog.events import ReviewLog
from store.reviews.merge import merge_events
from store.scores.cache import update_scores
from store.sqlite.tx import now_iso, transaction

REVIEWERS = 4


def copy_db(source: Path, target: Path) -> sqlite3.Connection:
    """A consistent copy (WAL included) through SQLite's backup API."""
    for suffix in ("", "-wal", "-shm"):
        Path(f"{target}{suffix}").unlink(missing_ok=True)
    src = sqlite3.connect(source)
    dst = sqlite3.connect(target)
    src.backup(dst)
    src.close()
    dst.close()
    return connect(target)


def signed_events(conn: sqlite3.Connection, n: int, seed: int = 1) -> list[dict[str, Any]]:
    """``n`` decisions on the database's subjects by a few reviewers, each signed: what a team
    produces over a review campaign (one decision per subject and reviewer)."""
    rng = random.Random(seed)
    people = [Identity(f"reviewer{i}", new_secret()) for i in range(REVIEWERS)]
    keys = [p.public_key for p in people]
    subjects = conn.execute(
        "SELECT s.target, s.kind, min(j.value) FROM subject s JOIN judgment j "
        "ON j.subject_id = s.id GROUP BY s.id ORDER BY s.id"
    ).fetchall()
    out: list[dict[str, Any]] = []
    for i in range(n):
        target, kind_name, judged = subjects[i % len(subjects)]
        who = (i // len(subjects)) % REVIEWERS
        kind = get_kind(kind_name)
        assert kind is not None
        value = rng.choice(kind.scale.choices).code
        event: dict[str, Any] = {
            "uuid": str(uuidlib.UUID(int=rng.getrandbits(128), version=4)),
            "target": target,
            "reviewer": people[who].name,
            "action": "confirm" if value == judged else "override",
            "value": value,
            "rationale": "bench",
            "reason": None,
            "created_at": now_iso(),
            "supersedes": None,
            "run": None,
            "key": keys[who],
        }
        event["sig"] = people[who].sign(event)
        out.append(event)
    return out


def _time(fn: Callable[[], object]) -> float:
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


def hub_figures(
    db: Path, url: str, n: int, root: Path, say: Callable[[str], object] = lambda _: None
) -> list[dict[str, Any]]:
    """Every hub figure as a dict (name, value, unit, baseline name, baseline)."""
    import psycopg

    schema = f"gavel_bench_{uuidlib.uuid4().hex[:8]}"
    hub = PgHub(url, schema=schema, statement_timeout=600)
    hub.init()
    figures: list[dict[str, Any]] = []

    def figure(
        name: str, value: float, unit: str, baseline_name: str = "—", baseline: float | None = None
    ) -> None:
        figures.append(
            {
                "name": name,
                "value": value,
                "unit": unit,
                "baseline_name": baseline_name,
                "baseline": baseline,
            }
        )

    try:
        say(f"signing {n:,} synthetic decisions…")
        a = copy_db(db, root / "hub-a.db")
        events = signed_events(a, n)
        say("merging them into reviewer A's database…")
        merge_events(a, ((i, LogEvent.model_validate(e)) for i, e in enumerate(events, 1)), "bench")

        say(f"pushing {n:,} events…")
        push = _time(lambda: sync(a, hub, pull=False))
        bare_copy = _bare_copy(url, schema, events)
        figure(
            f"push {n:,} events (A → hub)",
            n / push,
            "events/s",
            "bare COPY of the same rows",
            n / bare_copy,
        )

        say("fetching them back…")
        fetch = _time(lambda: _fetch_all(hub))
        bare_fetch = _time(lambda: _bare_fetch(url, schema))
        figure(
            f"fetch {n:,} events (hub → client, no merge)",
            n / fetch,
            "events/s",
            "bare SELECT of the same rows",
            n / bare_fetch,
        )

        say(f"a new database pulls all {n:,} events…")
        b = copy_db(db, root / "hub-b.db")
        pull = _time(lambda: sync(b, hub))
        log = io.StringIO("".join(event_line(LogEvent.model_validate(e)) + "\n" for e in events))
        c = copy_db(db, root / "hub-c.db")
        file_merge = _time(lambda: merge_events(c, read_events(log, "bench.jsonl"), "bench.jsonl"))
        figure(
            f"new database pulls {n:,} events (verified, merged, rescored)",
            pull,
            "s",
            "gavel merge of the same events from a file",
            file_merge,
        )
        figure("… as a rate", n / pull, "events/s", "file merge", n / file_merge)

        say("round trips of single decisions…")
        trip, idle = _round_trips(a, b, hub)
        figure("one decision: A's sync (push) + B's sync (pull, merge, rescore)", trip, "s")
        figure("a sync with nothing to do (each tick of the workstation)", idle, "s")
        for conn in (a, b, c):
            conn.close()
    finally:
        hub.close()
        with psycopg.connect(url, autocommit=True) as pg:
            pg.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
    return figures


def _bare_copy(url: str, schema: str, events: list[dict[str, Any]]) -> float:
    import psycopg

    with psycopg.connect(url) as conn:
        started = time.perf_counter()
        with conn.transaction():
            conn.execute(f"CREATE TABLE {schema}.bare (LIKE {schema}.event)")
            with conn.cursor().copy(
                f"COPY {schema}.bare ({', '.join(EVENT_FIELDS)}, id, pushed_at) FROM STDIN"
            ) as copy:
                for i, event in enumerate(events):
                    copy.write_row((*(event.get(k) for k in EVENT_FIELDS), i, "now"))
        elapsed = time.perf_counter() - started
        conn.execute(f"DROP TABLE {schema}.bare")
        conn.commit()
    return elapsed


def _fetch_all(hub: PgHub, batch: int = 20_000) -> int:
    after, n = 0, 0
    while rows := hub.pull(after, batch):
        after = rows[-1].id
        n += len(rows)
    return n


def _bare_fetch(url: str, schema: str) -> None:
    import psycopg

    with psycopg.connect(url) as conn:
        conn.execute(f"SELECT {', '.join(EVENT_FIELDS)} FROM {schema}.event").fetchall()


def _round_trips(
    a: sqlite3.Connection, b: sqlite3.Connection, hub: PgHub, n: int = 15
) -> tuple[float, float]:
    """Median time from a decision stored in A to it being merged in B (A syncs, then B),
    and the median cost of a sync that finds nothing to do."""
    log = ReviewLog(a, "latency", Identity("latency", new_secret()))
    picks = [
        int(r[0])
        for r in a.execute(
            "SELECT id FROM judgment WHERE kind = 'claim' AND value = 'correct' AND current = 1 "
            "ORDER BY id DESC LIMIT ?",
            (n,),
        )
    ]
    trips, idle = [], []
    sync(a, hub)
    sync(b, hub)
    for judgment in picks:
        with transaction(a):
            recorded = log.decide(judgment, "incorrect", "latency")
            update_scores(a, [recorded.report_id or 0])
        started = time.perf_counter()
        sync(a, hub)
        result = sync(b, hub)
        trips.append(time.perf_counter() - started)
        assert result.merged == 1
        idle.append(_time(lambda: sync(b, hub)))
    return statistics.median(trips), statistics.median(idle)
