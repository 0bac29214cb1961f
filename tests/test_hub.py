"""The review hub on a real PostgreSQL server: schema, push and pull, the merge rules carried
over, quarantine, suites, proposals, and the command line.

The server is started by the session (tests/pg.py); every test gets a fresh hub database.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from reviewer.identity import Identity, new_secret
from store.db.connection import connect
from store.hub.server import HUB_SCHEMA, HubOffline, HubRefused, PgHub, safe_url
from store.hub.sync import local_state, pending_count, sync
from store.imports.loader import import_bundle
from store.reviewlog.conflicts import conflicts
from store.reviewlog.events import ReviewLog
from store.reviews.proposals import accept, proposals, propose
from store.scores.cache import rebuild_scores, update_scores
from tests.builders import tiny_bundle
from tests.pg import free_port
from tui.cli import main

pytestmark = pytest.mark.usefixtures("hub_url")


class Reviewer:
    """One reviewer's own database (a copy of the sample) and signing identity."""

    def __init__(self, folder: Path, template: Path, name: str) -> None:
        self.name = name
        self.path = folder / f"{name}.db"
        shutil.copy(template, self.path)
        self.conn = connect(self.path)
        self.log = ReviewLog(self.conn, name, Identity(name, new_secret()))

    def decide(self, judgment: int, value: str, rationale: str = "") -> str:
        recorded = self.log.decide(judgment, value, rationale or f"{self.name} says {value}")
        update_scores(self.conn, [recorded.report_id or 0])
        return recorded.uuid

    def events(self) -> set[str]:
        return {u for (u,) in self.conn.execute("SELECT uuid FROM review_event")}

    def decision(self, judgment: int) -> tuple[str | None, str] | None:
        row = self.conn.execute(
            "SELECT d.value, d.status FROM decision d JOIN judgment j "
            "ON j.subject_id = d.subject_id WHERE j.id = ?",
            (judgment,),
        ).fetchone()
        return None if row is None else (row[0], row[1])


def claims(conn: sqlite3.Connection, n: int) -> list[int]:
    return [
        int(r[0])
        for r in conn.execute(
            "SELECT id FROM judgment WHERE kind = 'claim' AND value = 'correct' ORDER BY id "
            "LIMIT ?",
            (n,),
        )
    ]


@pytest.fixture
def team(sample_db_template: Path, tmp_path: Path) -> Iterator[list[Reviewer]]:
    people = [Reviewer(tmp_path, sample_db_template, name) for name in ("ana", "ben", "cy")]
    yield people
    for person in people:
        person.conn.close()


def test_init_is_idempotent_and_the_server_keeps_the_log_append_only(hub_url: str) -> None:
    import psycopg

    hub = PgHub(hub_url)
    first = hub.hub_id()
    assert hub.init() == first  # again: same hub, nothing replaced
    hub.close()
    with psycopg.connect(hub_url, autocommit=True) as conn:
        conn.execute(f"""INSERT INTO {HUB_SCHEMA}.event (uuid, target, reviewer, action,
                         rationale, created_at) VALUES ('u-0000001', 's:x/y/claim/k', 'ana',
                         'confirm', '', '2026-01-01T00:00:00+00:00')""")
        for statement in (
            f"UPDATE {HUB_SCHEMA}.event SET reviewer = 'mallory'",
            f"DELETE FROM {HUB_SCHEMA}.event",
            f"TRUNCATE {HUB_SCHEMA}.event",
            f"UPDATE {HUB_SCHEMA}.meta SET value = 'x'",
            f"DELETE FROM {HUB_SCHEMA}.suite",
        ):
            with pytest.raises(psycopg.errors.RaiseException, match="append-only"):
                conn.execute(statement)
        with pytest.raises(psycopg.errors.CheckViolation):  # not an action Gavel knows
            conn.execute(f"""INSERT INTO {HUB_SCHEMA}.event (uuid, target, reviewer, action,
                             rationale, created_at) VALUES ('u-0000002', 's:x', 'ana', 'drop',
                             '', '2026-01-01T00:00:00+00:00')""")
        assert conn.execute(f"SELECT reviewer FROM {HUB_SCHEMA}.event").fetchall() == [("ana",)]


def test_every_decision_reaches_every_database_and_a_conflict_shows_once_in_each(
    team: list[Reviewer], hub_url: str
) -> None:
    ana, ben, cy = team
    c1, c2, c3 = claims(ana.conn, 3)
    ana.decide(c1, "incorrect")
    ben.decide(c1, "unknown")  # ana and ben disagree: a conflict
    ben.decide(c2, "incorrect")
    cy.decide(c3, "incorrect")
    hub = PgHub(hub_url)
    first = sync(ana.conn, hub)
    assert (first.pushed, first.pending, first.new_conflicts) == (1, 0, [])
    for person in (ben, cy, ana, ben):  # everyone twice-ish, in no particular order
        sync(person.conn, hub)
    everything = ana.events() | ben.events() | cy.events()
    assert len(everything) == 4
    for person in team:
        assert person.events() == everything
        assert person.decision(c1) == (None, "conflict")
        assert person.decision(c2) == ("incorrect", "single")
        assert person.decision(c3) == ("incorrect", "single")
        found = conflicts(person.conn)
        assert len(found) == 1 and sorted(s.reviewer for s in found[0].sides) == ["ana", "ben"]
        assert pending_count(person.conn, hub.hub_id()) == 0
    hub.close()


def test_pending_counts_only_local_events_the_hub_lacks(team: list[Reviewer], hub_url: str) -> None:
    ana, ben, _ = team
    hub = PgHub(hub_url)
    assert local_state(ana.conn).pending == 0  # never synced, nothing written
    c1, c2 = claims(ana.conn, 2)
    ana.decide(c1, "incorrect")
    assert local_state(ana.conn).pending == 1
    sync(ana.conn, hub)
    ben.decide(c2, "incorrect")
    sync(ben.conn, hub)
    result = sync(ana.conn, hub)  # pulls ben's: not pending here
    assert (result.merged, result.pending) == (1, 0)
    ana.decide(c2, "unknown")
    assert local_state(ana.conn, hub.hub_id()).pending == 1
    assert sync(ana.conn, hub, pull=False).pending == 0
    hub.close()


def test_undo_and_flags_travel_and_only_the_author_can_undo(
    team: list[Reviewer], hub_url: str
) -> None:
    ana, ben, _ = team
    (c1,) = claims(ana.conn, 1)
    hub = PgHub(hub_url)
    ana.decide(c1, "incorrect")
    ana.log.flag(c1, True, "look at the source again")
    sync(ana.conn, hub)
    sync(ben.conn, hub)
    assert ben.decision(c1) == ("incorrect", "single")
    assert ben.conn.execute("SELECT note FROM flag").fetchall() == [("look at the source again",)]
    assert ben.log.undo() is None  # nothing of ben's to undo
    ana.log.undo()  # the flag
    ana.log.undo()  # the decision
    sync(ana.conn, hub)
    sync(ben.conn, hub)
    assert ben.decision(c1) is None
    assert ben.conn.execute("SELECT count(*) FROM flag").fetchone()[0] == 0
    hub.close()


def test_a_forged_hub_event_is_quarantined_in_every_database_and_the_rest_merges(
    team: list[Reviewer], hub_url: str
) -> None:
    import psycopg

    ana, ben, cy = team
    c1, c2 = claims(ana.conn, 2)
    uuid = ana.decide(c1, "incorrect")
    hub = PgHub(hub_url)
    sync(ana.conn, hub)
    mallory = Identity("mallory", new_secret())
    target = ana.conn.execute("SELECT target FROM review_event WHERE uuid = ?", (uuid,)).fetchone()[
        0
    ]
    undo = {
        "uuid": "f" * 32,
        "target": target,
        "reviewer": "mallory",
        "action": "undo",
        "value": None,
        "rationale": "",
        "reason": None,
        "created_at": "2026-11-20T10:00:00+00:00",
        "supersedes": uuid,
        "run": None,
        "key": mallory.public_key,
    }
    undo["sig"] = mallory.sign(undo)
    edited = {
        **undo,
        "uuid": "e" * 32,
        "action": "override",
        "supersedes": None,
        "value": "unknown",
        "reviewer": "ana",
    }  # signature no longer verifies
    with psycopg.connect(hub_url, autocommit=True) as conn:
        for event in (undo, edited):
            columns = ", ".join(event)
            conn.execute(
                f"INSERT INTO {HUB_SCHEMA}.event ({columns}) VALUES "
                f"({', '.join(['%s'] * len(event))})",
                list(event.values()),
            )
    ben.decide(c2, "incorrect")
    sync(ben.conn, hub)
    for person in (cy, ben, ana):
        result = sync(person.conn, hub)
        assert result.quarantined == 2
        assert person.decision(c1) == ("incorrect", "single")  # nobody undid ana's decision
        assert person.decision(c2) == ("incorrect", "single")
        reasons = [
            row[0]
            for row in person.conn.execute("SELECT reason FROM hub_rejected ORDER BY hub_event")
        ]
        assert "only undo or supersede its own author's events" in reasons[0]
        assert "signature does not verify" in reasons[1]
        assert sync(person.conn, hub).rejected == []  # reported once, kept out
    hub.close()


def test_a_hub_serves_several_runs_and_events_wait_for_their_subjects(
    tmp_path: Path, hub_url: str, sample_db_template: Path
) -> None:
    ana = Reviewer(tmp_path, sample_db_template, "ana")
    tiny = connect(tmp_path / "tiny.db")  # only the tiny run, for now
    import_bundle(tiny, tiny_bundle("tiny"), "tiny-hash")
    rebuild_scores(tiny)
    (c1,) = claims(ana.conn, 1)
    ana.decide(c1, "incorrect")
    hub = PgHub(hub_url)
    sync(ana.conn, hub)
    result = sync(tiny, hub)
    assert (result.merged, result.pending_subjects) == (1, 1)  # kept, not applied, not lost
    assert tiny.execute("SELECT count(*) FROM decision").fetchone()[0] == 0
    assert {s for s, _ in hub.stats().suites} == {
        *(row[0] for row in ana.conn.execute("SELECT ext_id FROM suite")),
        "tiny",
    }
    # The same suite id from different content is refused, with nothing pushed or pulled.
    other = connect(tmp_path / "other.db")
    import_bundle(other, tiny_bundle("tiny"), "another-hash")
    with pytest.raises(HubRefused, match=r"'tiny'.*different content"):
        sync(other, hub)
    hub.close()
    ana.conn.close()
    tiny.close()
    other.close()


def test_proposals_and_their_acceptance_sync(team: list[Reviewer], hub_url: str) -> None:
    ana, ben, cy = team
    task = int(
        ana.conn.execute(
            "SELECT t.id FROM task t JOIN suite s ON s.id = t.suite_id "
            "WHERE s.frameworks LIKE '%cascade%' ORDER BY t.id LIMIT 1"
        ).fetchone()[0]
    )
    subtask = ana.conn.execute(
        "SELECT ext_id FROM subtask WHERE task_id = ? ORDER BY ordinal LIMIT 1", (task,)
    ).fetchone()[0]
    payload = {"subtask": subtask, "dimension": "ins", "text": "Names the data's vintage"}
    made = propose(
        ana.conn, "ana", task, None, "cascade", "new_rubric", payload, None, "the rubric misses it"
    )
    hub = PgHub(hub_url)
    sync(ana.conn, hub)
    sync(ben.conn, hub)
    accept(ben.conn, "ben", made.proposal.uuid, "agreed")
    sync(ben.conn, hub)
    sync(cy.conn, hub)
    sync(ana.conn, hub)
    for person in team:
        (found,) = proposals(person.conn)
        assert (found.uuid, found.status, found.decided_by) == (
            made.proposal.uuid,
            "accepted",
            "ben",
        )
    hub.close()


def test_offline_hub_is_an_error_that_loses_nothing(team: list[Reviewer]) -> None:
    ana = team[0]
    (c1,) = claims(ana.conn, 1)
    ana.decide(c1, "incorrect")
    nowhere = PgHub(f"postgresql://gavel:secret@127.0.0.1:{free_port()}/hub", connect_timeout=2)
    with pytest.raises(HubOffline) as err:
        sync(ana.conn, nowhere)
    assert "secret" not in str(err.value)
    assert local_state(ana.conn).pending == 1
    assert safe_url("postgresql://u:pw@h:5/db") == "postgresql://u@h:5/db"


def test_a_diverged_event_is_reported_and_the_hubs_copy_stands(
    team: list[Reviewer], hub_url: str
) -> None:
    import psycopg

    ana = team[0]
    (c1,) = claims(ana.conn, 1)
    uuid = ana.decide(c1, "incorrect")
    row = ana.conn.execute(
        "SELECT target, created_at FROM review_event WHERE uuid = ?", (uuid,)
    ).fetchone()
    with psycopg.connect(hub_url, autocommit=True) as conn:  # someone got there first
        conn.execute(
            f"""INSERT INTO {HUB_SCHEMA}.event (uuid, target, reviewer, action,
                         rationale, created_at) VALUES (%s, %s, 'ana', 'confirm', '', %s)""",
            (uuid, row[0], row[1]),
        )
    hub = PgHub(hub_url)
    result = sync(ana.conn, hub)
    assert result.diverged == [uuid] and result.pushed == 0
    assert result.pending == 0  # reported, not retried forever
    assert sync(ana.conn, hub).diverged == []
    hub.close()


def test_the_command_line_inits_syncs_and_reports(
    team: list[Reviewer],
    hub_url: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    ana, ben, _ = team
    (c1,) = claims(ana.conn, 1)
    ana.decide(c1, "incorrect")
    ben.decide(c1, "unknown")
    assert main(["hub", "init", hub_url]) == 0
    assert "hub ready" in capsys.readouterr().out
    assert main(["--db", str(ana.path), "sync", hub_url]) == 0
    out = capsys.readouterr().out
    assert "pushed 1 events" in out and "pending: 0" in out
    assert main(["--db", str(ben.path), "sync", hub_url, "--format", "json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert (result["pushed"], result["merged"], len(result["new_conflicts"])) == (1, 1, 1)
    monkeypatch.delenv("GAVEL_HUB", raising=False)
    monkeypatch.setenv("GAVEL_CONFIG", str(tmp_path / "none.toml"))
    assert main(["--db", str(ana.path), "sync"]) == 2  # no hub named anywhere
    assert "no hub" in capsys.readouterr().err
    monkeypatch.setenv("GAVEL_HUB", hub_url)
    assert main(["--db", str(ana.path), "sync", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["merged"] == 1  # ben's, via $GAVEL_HUB
    assert main(["--db", str(ana.path), "hub", "status", hub_url]) == 0
    status = capsys.readouterr().out
    assert "2 events from 2 reviewer identities" in status and "0 events not yet" in status
    closed = f"postgresql://gavel@127.0.0.1:{free_port()}/hub"
    assert main(["--db", str(ana.path), "sync", closed]) == 3
    assert "nothing is lost" in capsys.readouterr().err


def test_the_hub_bench_runs_in_a_scratch_schema_it_drops(
    sample_db: Path, hub_url: str, tmp_path: Path
) -> None:
    import psycopg

    from tui.bench.hub import hub_figures

    figures = hub_figures(sample_db, hub_url, 300, tmp_path)
    names = [f["name"] for f in figures]
    assert any(n.startswith("push 300 events") for n in names)
    assert any(n.startswith("new database pulls 300 events") for n in names)
    assert all(f["value"] > 0 for f in figures)
    with psycopg.connect(hub_url) as conn:
        left = conn.execute(
            "SELECT nspname FROM pg_namespace WHERE nspname LIKE 'gavel_bench_%'"
        ).fetchall()
    assert left == []


# -- ids the server alone assigns (a hostile insert cannot cut clients off) -----------------------


def _reviewer_role(hub_url: str) -> str:
    """A login role with only what `gavel hub init --grant` gives; its URL."""
    import uuid

    import psycopg

    role = f"reviewer_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(hub_url, autocommit=True) as conn:
        conn.execute(f"CREATE ROLE {role} LOGIN")
        conn.execute(f"GRANT CONNECT ON DATABASE {hub_url.rsplit('/', 1)[1]} TO {role}")
    hub = PgHub(hub_url)
    hub.init(grant=role)
    hub.close()
    return hub_url.replace("://gavel@", f"://{role}@")


def _junk(uuid: str) -> dict[str, object]:
    return {
        "uuid": uuid,
        "target": "s:x/y/claim/k",
        "reviewer": "mallory",
        "action": "confirm",
        "rationale": "",
        "created_at": "2026-11-20T10:00:00+00:00",
    }


def test_a_reviewer_role_cannot_choose_an_event_id_nor_cut_other_clients_off(
    team: list[Reviewer], hub_url: str
) -> None:
    import psycopg

    ana, ben, _ = team
    c1, c2 = claims(ana.conn, 2)
    role_url = _reviewer_role(hub_url)
    ana.decide(c1, "incorrect")
    sync(ana.conn, PgHub(role_url))
    hostile = _junk("h" * 32)
    columns = ", ".join(["id", *hostile])
    with psycopg.connect(role_url, autocommit=True) as conn:
        for overriding in ("OVERRIDING SYSTEM VALUE", ""):
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                conn.execute(
                    f"INSERT INTO {HUB_SCHEMA}.event ({columns}) {overriding} VALUES "
                    f"(9000000000000000000, {', '.join(['%s'] * len(hostile))})",
                    list(hostile.values()),
                )
        for statement in (
            f"UPDATE {HUB_SCHEMA}.event SET id = 5",
            f"DELETE FROM {HUB_SCHEMA}.event",
        ):
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                conn.execute(statement)
        # What the role may insert is numbered by the server, next in line, and quarantined.
        junk = _junk("j" * 32)
        conn.execute(
            f"INSERT INTO {HUB_SCHEMA}.event ({', '.join(junk)}) VALUES "
            f"({', '.join(['%s'] * len(junk))})",
            list(junk.values()),
        )
        ids = [r[0] for r in conn.execute(f"SELECT id FROM {HUB_SCHEMA}.event ORDER BY id")]
    assert ids == [1, 2]
    ben_hub = PgHub(role_url)
    first = sync(ben.conn, ben_hub)
    assert (first.merged, first.quarantined, first.gap) == (1, 1, None)
    ana.decide(c2, "incorrect")  # after the hostile attempts: still reaches ben
    sync(ana.conn, PgHub(role_url))
    later = sync(ben.conn, ben_hub)
    assert (later.merged, later.gap) == (1, None)
    assert ben.decision(c2) == ("incorrect", "single")
    ben_hub.close()


def test_a_jump_in_hub_ids_stops_every_cursor_before_it_and_is_reported(
    team: list[Reviewer], hub_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    import psycopg

    ana, ben, _ = team
    c1, c2 = claims(ana.conn, 2)
    ana.decide(c1, "incorrect")
    hub = PgHub(hub_url)
    sync(ana.conn, hub)
    with psycopg.connect(hub_url, autocommit=True) as conn:  # the owner goes around the server
        conn.execute(f"ALTER TABLE {HUB_SCHEMA}.event DISABLE TRIGGER event_number")
        hostile = _junk("h" * 32)
        conn.execute(
            f"INSERT INTO {HUB_SCHEMA}.event (id, {', '.join(hostile)}) VALUES "
            f"(9000000000000000000, {', '.join(['%s'] * len(hostile))})",
            list(hostile.values()),
        )
        conn.execute(f"ALTER TABLE {HUB_SCHEMA}.event ENABLE TRIGGER event_number")
    ana.decide(c2, "incorrect")
    sync(ana.conn, hub)  # numbered after the jump
    result = sync(ben.conn, hub)
    assert result.gap == (1, 9000000000000000000)
    assert (result.pulled, result.merged, result.quarantined) == (1, 1, 0)
    cursor = ben.conn.execute("SELECT pulled_id FROM hub_sync").fetchone()[0]
    assert cursor == 1  # never past an id it did not read in order
    assert ben.decision(c2) is None  # after the jump: not merged
    assert main(["--db", str(ben.path), "sync", hub_url]) == 4
    err = capsys.readouterr().err
    assert "ids jump from 1 to 9,000,000,000,000,000,000" in err
    assert main(["--db", str(ben.path), "hub", "status", hub_url]) == 4
    assert "ids jump from 1 to 9,000,000,000,000,000,000" in capsys.readouterr().err
    assert PgHub(hub_url).stats().gap == (1, 9000000000000000000)
    hub.close()


def test_a_version_1_hub_is_refused_until_init_upgrades_it_and_old_cursors_restart(
    team: list[Reviewer], hub_url: str
) -> None:
    import psycopg

    ana, ben, _ = team
    (c1,) = claims(ana.conn, 1)
    ana.decide(c1, "incorrect")
    hub = PgHub(hub_url)
    sync(ana.conn, hub)
    sync(ben.conn, hub)
    hub.close()
    with psycopg.connect(hub_url, autocommit=True) as conn:
        conn.execute(f"ALTER TABLE {HUB_SCHEMA}.meta DISABLE TRIGGER meta_append_only")
        conn.execute(f"UPDATE {HUB_SCHEMA}.meta SET value = '1' WHERE key = 'schema_version'")
        conn.execute(f"ALTER TABLE {HUB_SCHEMA}.meta ENABLE TRIGGER meta_append_only")
    with pytest.raises(HubRefused, match="hub init URL"):
        sync(ben.conn, PgHub(hub_url))
    PgHub(hub_url).init()
    # A cursor kept by a Gavel that trusted client-chosen ids may have jumped: pull again.
    ben.conn.execute("ALTER TABLE hub_sync DROP COLUMN ordered")
    ben.conn.execute("UPDATE hub_sync SET pulled_id = 9000000000000000000")
    result = sync(ben.conn, PgHub(hub_url))
    assert (result.pulled, result.merged, result.gap) == (1, 0, None)
    assert ben.conn.execute("SELECT pulled_id, ordered FROM hub_sync").fetchone() == (1, 1)
