"""Who speaks for a name's unsigned events, and whose adjudications rule.

Events written before signing carry no key. A key that merely says the name (a fresh key with
``"reviewer": "ana"``) must not undo or supersede them; only the key that claimed the name
with ``gavel identity claim`` (a signed, logged event) may, and two claimants cancel out. An
adjudication rules only when signed by an identity the database holds as an adjudicator's;
an unsigned one, or one by an identity never trusted here, is one more side.
"""

from __future__ import annotations

import io
import shutil
import sqlite3
from pathlib import Path

import pytest

from reviewer.errors import InputError
from reviewer.identity import Identity, key_id, label, new_secret
from reviewer.logfile import LogEvent, read_events
from store.db.connection import connect
from store.imports.loader import import_bundle
from store.reviewlog.events import ReviewLog, legacy_owner
from store.reviews.merge import MergeResult, merge_events
from store.scores.cache import rebuild_scores
from tests.builders import tiny_bundle
from tests.test_hostile_logs import ANA, ANA_ELSEWHERE, BEN, MALLORY, SAME_TIME, event, text
from tui.cli import main

TARGET = "s:tiny/t1-alpha/claim/k=c1"
LATER = "2026-11-20T11:00:00.000000+00:00"


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("claims") / "tiny.db"
    conn = connect(path)
    import_bundle(conn, tiny_bundle(), "h")
    rebuild_scores(conn)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return path


@pytest.fixture
def db(template: Path, tmp_path: Path) -> tuple[Path, sqlite3.Connection]:
    path = tmp_path / "ana.db"
    shutil.copy(template, path)
    return path, connect(path)


def merge(conn: sqlite3.Connection, events: list[LogEvent]) -> MergeResult:
    return merge_events(conn, read_events(io.StringIO(text(events)), "log.jsonl"), "log.jsonl")


def decision(conn: sqlite3.Connection) -> tuple[str | None, str] | None:
    row = conn.execute(
        "SELECT d.value, d.status FROM decision d JOIN subject s ON s.id = d.subject_id "
        "WHERE s.target = ?",
        (TARGET,),
    ).fetchone()
    return None if row is None else (row[0], row[1])


def test_a_key_that_only_says_the_name_cannot_take_over_its_unsigned_events(
    db: tuple[Path, sqlite3.Connection],
) -> None:
    _, conn = db
    legacy = event(None, TARGET, "override", "incorrect", SAME_TIME, name="ana")
    merge(conn, [legacy])
    assert decision(conn) == ("incorrect", "single")
    undo = event(ANA_ELSEWHERE, TARGET, "undo", None, LATER, supersedes=legacy.uuid)
    supersede = event(ANA_ELSEWHERE, TARGET, "override", "correct", LATER, supersedes=legacy.uuid)
    for hostile in (undo, supersede):
        with pytest.raises(InputError, match="gavel identity claim ana") as err:
            merge(conn, [hostile])
        assert "unsigned event of 'ana'" in str(err.value)
        assert decision(conn) == ("incorrect", "single")  # nothing merged
    # Saying the name without reversing anything: one more side, a conflict to show.
    beside = event(ANA_ELSEWHERE, TARGET, "override", "correct", LATER)
    assert merge(conn, [beside]).conflicts == 1
    assert decision(conn) == (None, "conflict")


def test_the_key_that_claimed_the_name_may_reverse_its_unsigned_events_everywhere(
    db: tuple[Path, sqlite3.Connection], template: Path, tmp_path: Path
) -> None:
    path, conn = db
    legacy = event(None, TARGET, "override", "incorrect", SAME_TIME, name="ana")
    merge(conn, [legacy])
    ana = ReviewLog(conn, "ana", ANA)
    assert ana.undo() is None  # not hers until she claims them
    ana.claim("my events from before signing")
    assert legacy_owner(conn, "ana") == ANA.public_key
    undone = ana.undo()
    assert undone is not None and undone.reverted == "override"
    assert decision(conn) is None
    # Her log (claim, then undo) merges into a database that has only the legacy event.
    other_path = tmp_path / "ben.db"
    shutil.copy(template, other_path)
    other = connect(other_path)
    merge(other, [legacy])
    assert main(["merge", str(path), "--db", str(other_path)]) == 0
    assert decision(other) is None
    # A second key claiming the name cancels the first: the legacy decision stands again.
    rival = ReviewLog(other, "ana", ANA_ELSEWHERE)
    rival.claim()
    assert legacy_owner(other, "ana") is None
    assert decision(other) == ("incorrect", "single")
    other.close()


def test_a_claim_is_signed_by_the_names_own_reviewer(db: tuple[Path, sqlite3.Connection]) -> None:
    _, conn = db
    for bad, why in (
        (event(None, "i:ana", "claim", None, SAME_TIME, name="ana"), "must be signed"),
        (event(BEN, "i:ana", "claim", None, SAME_TIME), "only their own name"),
        (event(ANA, "i:ana", "claim", "x", SAME_TIME), "no value"),
    ):
        with pytest.raises(InputError, match=why):
            merge(conn, [bad])


def test_identity_claim_on_the_command_line(
    db: tuple[Path, sqlite3.Connection],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    path, conn = db
    merge(conn, [event(None, TARGET, "override", "incorrect", SAME_TIME, name="ana")])
    monkeypatch.setenv("GAVEL_IDENTITY", str(tmp_path / "ana.key"))
    assert main(["identity", "claim", "ana", "--db", str(path)]) == 0
    out = capsys.readouterr().out
    assert "now holds ana's unsigned events (1 here)" in out
    assert main(["identity", "claim", "ana", "--db", str(path)]) == 0
    assert "already holds" in capsys.readouterr().out
    monkeypatch.setenv("GAVEL_IDENTITY", str(tmp_path / "other.key"))
    assert main(["identity", "claim", "ana", "--db", str(path)]) == 1
    assert "neither may undo or supersede" in capsys.readouterr().err


def test_an_unsigned_adjudication_does_not_overrule_a_signed_reviewer(
    db: tuple[Path, sqlite3.Connection], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path, conn = db
    merge(conn, [event(BEN, TARGET, "override", "incorrect", SAME_TIME)])
    log = tmp_path / "cleo.jsonl"
    log.write_text(
        text([event(None, TARGET, "adjudicate", "correct", LATER, name="cleo")]), encoding="utf-8"
    )
    assert main(["merge", str(log), "--db", str(path)]) == 0
    out = capsys.readouterr().out
    assert decision(conn) == (None, "conflict")  # a side, not a ruling
    assert "adjudications that do not rule here, by: cleo" in out
    assert "conflicts now: 1" in out
    assert "can never replace" not in out


def test_an_adjudication_by_an_identity_never_trusted_here_is_a_side_until_trusted(
    db: tuple[Path, sqlite3.Connection], capsys: pytest.CaptureFixture[str]
) -> None:
    path, conn = db
    merge(conn, [event(BEN, TARGET, "override", "incorrect", SAME_TIME)])
    result = merge(conn, [event(MALLORY, TARGET, "adjudicate", "correct", LATER)])
    who = label(MALLORY.name, MALLORY.public_key)
    assert (result.adjudicators, result.unruled) == ([who], [who])
    assert decision(conn) == (None, "conflict")
    assert (
        main(["identity", "trust", f"mallory#{key_id(MALLORY.public_key)}", "--db", str(path)]) == 0
    )
    assert decision(conn) == ("correct", "adjudicated")
    assert main(["identity", "trust", "nobody#00000000", "--db", str(path)]) == 1
    assert "no events here by nobody#00000000" in capsys.readouterr().err
    # Whoever adjudicates at this database is one of its adjudicators.
    local = ReviewLog(conn, "dora", Identity("dora", new_secret()))
    local.decide(
        int(
            conn.execute(
                "SELECT j.id FROM judgment j JOIN subject s ON s.id = j.subject_id "
                "WHERE s.target = ? AND j.current = 1",
                (TARGET,),
            ).fetchone()[0]
        ),
        "unknown",
        "ruling",
        adjudicate=True,
    )
    assert decision(conn) == (None, "conflict")  # two adjudicators disagree
