"""Three reviewers on three databases and one hub, with everything happening at once: each
database has a writer (decisions, overrides of each other's subjects, undo, redo, flags,
adjudications) and a syncer running concurrently on their own connections, syncing in random
order, while the hub's server is killed and started again mid-session.

At the end every database holds every event, the conflicts are the same subjects in each (each
listed once), and the gold exports are byte-identical — also in a fourth database that joins
afterwards and pulls the whole log.
"""

from __future__ import annotations

import hashlib
import io
import random
import shutil
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from reviewer.identity import Identity
from reviewer.registry import get_kind
from store.db.connection import connect
from store.exports.files import write_export
from store.hub.server import HubOffline, PgHub
from store.hub.sync import pending_count, sync
from store.reviewlog.conflicts import conflicts
from store.reviewlog.events import ReviewError, ReviewLog, rebuild_state, trust_adjudicator
from store.scores.cache import rebuild_scores, update_scores
from store.sqlite.tx import transaction
from tests.pg import PgServer, start_server

STEPS = 45
"""Actions per writer."""


@pytest.fixture
def own_server() -> Iterator[PgServer]:
    """A server of this test's own: the test stops and restarts it."""
    pytest.importorskip("psycopg", reason="psycopg (the hub's client) is not installed")
    server = start_server()
    if isinstance(server, str):
        pytest.skip(f"no PostgreSQL server for the hub tests: {server}")
    yield server
    server.destroy()


def gold(path: Path) -> str:
    conn = connect(path)
    out = io.StringIO()
    write_export(conn, "gold", out, "jsonl")
    conn.close()
    return out.getvalue()


def until(condition: Callable[[], bool], timeout: float = 120.0) -> None:
    """Wait for a condition, not for a guessed time; fail after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def team_identity(name: str) -> Identity:
    """A team member's identity, the same in every thread (its key is made from the name)."""
    return Identity(name, hashlib.sha256(name.encode()).digest())


def team_database(path: Path, names: list[str]) -> None:
    """One team: every database holds the same adjudicators."""
    conn = connect(path)
    for name in names:
        trust_adjudicator(conn, name, team_identity(name).public_key, "the team")
    conn.close()


def writer(
    path: Path,
    name: str,
    seed: int,
    pool: list[int],
    written: list[str],
    errors: list[BaseException],
) -> None:
    """One reviewer deciding, undoing, flagging and adjudicating on their own database."""
    rng = random.Random(seed)
    conn = connect(path)
    log = ReviewLog(conn, name, team_identity(name))
    try:
        for _ in range(STEPS):
            judgment = rng.choice(pool)
            kind = get_kind(
                conn.execute("SELECT kind FROM judgment WHERE id = ?", (judgment,)).fetchone()[0]
            )
            assert kind is not None
            value = rng.choice(kind.scale.choices).code
            roll = rng.random()
            with transaction(conn):
                try:
                    if roll < 0.6:
                        recorded = log.decide(judgment, value, f"{name}: {value}")
                    elif roll < 0.7:
                        recorded = log.decide(
                            judgment, value, f"{name} settles it", adjudicate=True
                        )
                    elif roll < 0.8:
                        recorded = log.flag(judgment, rng.random() < 0.6, f"{name} flags")
                    elif roll < 0.92:
                        recorded = log.undo()
                    else:
                        recorded = log.redo()
                except ReviewError:
                    recorded = None
                if recorded is not None:
                    written.append(recorded.uuid)
                    if recorded.report_id is not None:
                        update_scores(conn, [recorded.report_id])
            time.sleep(rng.random() * 0.02)
    except BaseException as exc:  # reported by the test, not lost in a thread
        errors.append(exc)
    finally:
        conn.close()


def syncer(
    path: Path,
    url: str,
    seed: int,
    stop: threading.Event,
    offline: list[int],
    errors: list[BaseException],
    synced: list[int] | None = None,
) -> None:
    """The background sync of one database, on its own connection, at random intervals;
    each sync that reached the hub is counted in ``synced``."""
    rng = random.Random(seed)
    conn = connect(path)
    hub = PgHub(url, connect_timeout=2, statement_timeout=20)
    try:
        while not stop.is_set():
            try:
                sync(conn, hub)
                if synced is not None:
                    synced.append(seed)
            except HubOffline:
                offline.append(1)
            time.sleep(rng.random() * 0.08)
    except BaseException as exc:
        errors.append(exc)
    finally:
        hub.close()
        conn.close()


def test_three_databases_one_hub_converge_through_a_hub_restart(
    own_server: PgServer, sample_db_template: Path, tmp_path: Path
) -> None:
    url = own_server.create_database("hub")
    PgHub(url).init()
    names = ["ana", "ben", "cy"]
    paths = [tmp_path / f"{name}.db" for name in names]
    for path in paths:
        shutil.copy(sample_db_template, path)
        team_database(path, names)
    probe = connect(paths[0])
    # A small shared pool of subjects, so the three overlap, disagree and undo on the same ones.
    pool = [
        int(r[0])
        for r in probe.execute(
            "SELECT id FROM judgment WHERE kind IN ('claim', 'ins', 'consistency') "
            "AND value IS NOT NULL ORDER BY id LIMIT 14"
        )
    ]
    probe.close()

    written: list[list[str]] = [[], [], []]
    errors: list[BaseException] = []
    offline: list[int] = []
    stop = threading.Event()
    writers = [
        threading.Thread(
            target=writer, args=(paths[i], names[i], 100 + i, pool, written[i], errors)
        )
        for i in range(3)
    ]
    synced: list[int] = []
    syncers = [
        threading.Thread(
            target=syncer, args=(paths[i], url, 200 + i, stop, offline, errors, synced)
        )
        for i in range(3)
    ]
    for thread in (*writers, *syncers):
        thread.start()

    def decided() -> int:
        return sum(len(w) for w in written)

    def writing() -> bool:
        return any(thread.is_alive() for thread in writers)

    # Every database has reached the hub at least once, and reviewers are under way.
    until(lambda: set(synced) == {200, 201, 202} and decided() >= 6)
    own_server.stop("immediate")  # the hub dies mid-session, unannounced
    before = decided()
    # The syncers notice, and the reviewers keep deciding meanwhile.
    until(lambda: bool(offline) and (decided() >= before + 6 or not writing()))
    own_server.start()
    for thread in writers:
        thread.join(120)
    stop.set()
    for thread in syncers:
        thread.join(120)
    assert errors == []
    assert offline, "the syncers never noticed the hub was down"

    # Quiesce: sync in random order until a whole round moves nothing.
    rng = random.Random(7)
    conns = [connect(p) for p in paths]
    hub = PgHub(url)
    for _ in range(6):
        order = rng.sample(range(3), 3)
        moved = [sync(conns[i], hub) for i in order]
        if not any(r.pushed or r.merged for r in moved):
            break
    everything = {u for w in written for u in w}
    assert len(everything) >= 3 * STEPS // 2
    for conn in conns:
        held = {u for (u,) in conn.execute("SELECT uuid FROM review_event")}
        assert held == everything  # every event reaches every database
        assert pending_count(conn, hub.hub_id()) == 0

    # The same conflicts everywhere, each listed once.
    listed = [[c.target for c in conflicts(conn)] for conn in conns]
    assert listed[0], "the schedule produced no conflict to check"
    for targets in listed:
        assert len(targets) == len(set(targets)) and sorted(targets) == sorted(listed[0])

    # A fourth database joining now pulls everything and agrees.
    late = tmp_path / "dee.db"
    shutil.copy(sample_db_template, late)
    team_database(late, names)
    late_conn = connect(late)
    result = sync(late_conn, hub)
    assert result.merged == len(everything)
    late_conn.close()
    hub.close()
    for conn in conns:
        conn.close()

    exports = [gold(p) for p in [*paths, late]]
    assert exports[0].count("\n") > 0
    assert all(e == exports[0] for e in exports)
    # And the derived state equals a replay of the log from scratch.
    again = connect(paths[1])
    rebuild_state(again)
    rebuild_scores(again)
    again.close()
    assert gold(paths[1]) == exports[0]
