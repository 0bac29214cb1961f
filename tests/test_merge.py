"""Several reviewers: review-log export, merge (union by uuid), conflicts and adjudication.

Two reviewers work on their own copies of the sample database (built by ``build_demo``), then
exchange logs. A merge must never lose a decision, must be idempotent, and must give the same
derived state and scores whichever way round and however often it is done.
"""

from __future__ import annotations

import io
import json
import shutil
import sqlite3
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reviewer.adjudication import SIDES_MARKER
from reviewer.errors import InputError
from reviewer.identity import key_id
from reviewer.logfile import LogEvent, read_events
from reviewer.registry import get_kind
from store.db.connection import connect
from store.imports.loader import import_bundle
from store.reviewlog.conflicts import adjudicate, conflicts, standing_decisions
from store.reviewlog.events import ReviewLog, trust_adjudicator
from store.reviews.merge import MergeResult, log_events, merge_events, merge_path, write_log
from store.reviews.proposals import accept, proposals, propose, reject
from store.scores.cache import rebuild_scores, update_scores
from tests.builders import tiny_bundle
from tests.score_rows import all_scores
from tui.cli import main

SUBJECT_OF = "(SELECT subject_id FROM judgment WHERE id = ?)"
"""SQL for the subject of a judgment id: decisions belong to subjects."""


def jid(conn: sqlite3.Connection, report: str, kind: str, subject: str) -> int:
    row = conn.execute(
        "SELECT j.id FROM judgment j JOIN report r ON r.id = j.report_id "
        "WHERE r.ext_id = ? AND j.kind = ? AND j.subject = ?",
        (report, kind, subject),
    ).fetchone()
    assert row is not None, (report, kind, subject)
    return int(row[0])


def sid(conn: sqlite3.Connection, judgment: int) -> int:
    """The subject a judgment is about (decisions belong to subjects)."""
    return int(
        conn.execute("SELECT subject_id FROM judgment WHERE id = ?", (judgment,)).fetchone()[0]
    )


def rid(conn: sqlite3.Connection, report: str) -> int:
    return int(conn.execute("SELECT id FROM report WHERE ext_id = ?", (report,)).fetchone()[0])


def decide(
    conn: sqlite3.Connection,
    reviewer: str,
    judgment: int,
    value: str,
    rationale: str = "",
    reason: str | None = None,
) -> str:
    recorded = ReviewLog(conn, reviewer).decide(judgment, value, rationale, reason)
    update_scores(conn, [recorded.report_id or 0])
    return recorded.uuid


def state(conn: sqlite3.Connection) -> tuple[object, ...]:
    """Everything derived from the log, in a comparable form."""
    return (
        conn.execute("SELECT * FROM event_live ORDER BY uuid").fetchall(),
        conn.execute("SELECT * FROM decision ORDER BY subject_id").fetchall(),
        conn.execute("SELECT * FROM flag ORDER BY subject_id").fetchall(),
        conn.execute("SELECT * FROM report_rating ORDER BY report_id, reviewer").fetchall(),
        conn.execute(
            f"SELECT * FROM {all_scores(conn)} ORDER BY scope, framework, variant, metric"
        ).fetchall(),
        conn.execute(
            "SELECT uuid, task_id, report_id, kind, payload, target, reviewer "
            "FROM proposal ORDER BY uuid"
        ).fetchall(),
        sorted((p.uuid, p.status, p.decided_by) for p in proposals(conn)),
    )


def events(conn: sqlite3.Connection) -> set[str]:
    return {u for (u,) in conn.execute("SELECT uuid FROM review_event")}


def log_text(conn: sqlite3.Connection) -> str:
    out = io.StringIO()
    write_log(conn, out)
    return out.getvalue()


def merge_text(
    conn: sqlite3.Connection, text: str, name: str = "log.jsonl", *, skip_unknown: bool = False
) -> MergeResult:
    return merge_events(conn, read_events(io.StringIO(text), name), name, skip_unknown=skip_unknown)


# -- two reviewers on the sample data ------------------------------------------------------------


class Pair:
    """ana's and ben's databases with the decisions each made alone."""

    def __init__(self, folder: Path, template: Path) -> None:
        self.ana_path = folder / "ana.db"
        self.ben_path = folder / "ben.db"
        shutil.copy(template, self.ana_path)
        shutil.copy(template, self.ben_path)
        self.ana = connect(self.ana_path)
        self.ben = connect(self.ben_path)
        a, b = self.ana, self.ben
        self.c7 = jid(a, "t01-atlas-dr", "claim", "k=c7")
        self.s8 = jid(a, "t03-atlas-dr", "ins", "c=s8-ins")
        self.t5 = jid(a, "t05-kestrel", "claim", "k=c2")
        self.r8 = jid(a, "t04-kestrel", "rat", "c=s8-rat")
        self.k3 = jid(a, "t03-kestrel", "consistency", "k=c3;r=2")
        # ana alone
        decide(a, "ana", self.c7, "correct", "opening deposit, not a minimum", "misread-rubric")
        decide(a, "ana", self.s8, "1", "four points for the GP")
        decide(
            a, "ana", self.t5, "incorrect", "19% is in-state only", "unsupported-judged-supported"
        )
        decide(a, "ana", self.r8, "0", "over budget by its own prices")
        decide(a, "ana", self.k3, "unknown", "changed my mind below")
        undone = ReviewLog(a, "ana").undo()  # the k3 decision no longer counts
        assert undone is not None and undone.judgment_id == self.k3
        ReviewLog(a, "ana").rate(rid(a, "t01-atlas-dr"), 4, "all there")
        # ben alone: agrees on c7, disagrees on t5 and r8, decides k3 himself
        decide(b, "ben", self.c7, "correct", "same as the page")
        decide(b, "ben", self.t5, "correct", "matches the census line")
        decide(b, "ben", self.r8, "0.5", "weak, not absurd", "misread-rubric")
        decide(b, "ben", self.k3, "conflict", "79.4%, not 82%")
        ReviewLog(b, "ben").flag(self.s8, True, "look again")
        ReviewLog(b, "ben").rate(rid(b, "t01-atlas-dr"), 3, "minor gaps")

    def close(self) -> None:
        self.ana.close()
        self.ben.close()


@pytest.fixture
def pair(sample_db_template: Path, tmp_path: Path) -> Iterator[Pair]:
    p = Pair(tmp_path, sample_db_template)
    yield p
    p.close()


def test_merging_both_ways_gives_the_same_state_and_loses_nothing(pair: Pair) -> None:
    ana_log, ben_log = log_text(pair.ana), log_text(pair.ben)
    ana_events, ben_events = events(pair.ana), events(pair.ben)
    result = merge_text(pair.ana, ben_log)
    assert (result.added, result.already_present, result.reviewers) == (len(ben_events), 0, ["ben"])
    merge_text(pair.ben, ana_log)
    assert state(pair.ana) == state(pair.ben)
    # Nothing lost: every event of both reviewers is in both databases ...
    assert events(pair.ana) == events(pair.ben) == ana_events | ben_events
    # ... and every reviewer's standing decision is the one they made.
    sides = {
        s: {side.reviewer: side.value for side in ss} for s, ss in standing_decisions(pair.ana)
    }
    a = pair.ana
    assert sides[sid(a, pair.c7)] == {"ana": "correct", "ben": "correct"}
    assert sides[sid(a, pair.t5)] == {"ana": "incorrect", "ben": "correct"}
    assert sides[sid(a, pair.r8)] == {"ana": "0", "ben": "0.5"}
    assert sides[sid(a, pair.k3)] == {"ben": "conflict"}  # ana's undone decision is not live
    assert sides[sid(a, pair.s8)] == {"ana": "1"}
    decisions = dict(
        pair.ana.execute(
            "SELECT j.id, d.status FROM decision d JOIN judgment j ON j.subject_id = d.subject_id "
            "AND j.current = 1"
        ).fetchall()
    )
    assert decisions == {
        pair.c7: "unanimous",
        pair.t5: "conflict",
        pair.r8: "conflict",
        pair.k3: "single",
        pair.s8: "single",
    }
    ratings = pair.ana.execute("SELECT reviewer, value FROM report_rating ORDER BY reviewer")
    assert ratings.fetchall() == [("ana", "4"), ("ben", "3")]
    assert pair.ana.execute("SELECT count(*) FROM flag").fetchone()[0] == 1


def test_merge_is_idempotent_and_a_database_merges_like_its_log(pair: Pair, tmp_path: Path) -> None:
    ben_log = log_text(pair.ben)
    merge_text(pair.ana, ben_log)
    after_once = state(pair.ana)
    again = merge_text(pair.ana, ben_log)
    assert (again.added, again.already_present) == (0, again.read)
    assert state(pair.ana) == after_once
    own = merge_text(pair.ana, log_text(pair.ana))  # its own log: a no-op
    assert own.added == 0
    # Merging the other *database file* is the same as merging its exported log.
    third = tmp_path / "third.db"
    copy = sqlite3.connect(third)
    pair.ana.backup(copy)
    copy.close()
    conn = connect(third)
    assert state(conn) == after_once
    result = merge_path(conn, pair.ben_path)
    assert result.added == 0 and state(conn) == after_once
    conn.close()


def test_exported_log_is_deterministic_and_re_merges(pair: Pair, tmp_path: Path) -> None:
    first, second = log_text(pair.ana), log_text(pair.ana)
    assert first == second
    lines = first.splitlines()
    assert len(lines) == len(events(pair.ana))
    for line in lines:
        event = LogEvent.model_validate_json(line)
        assert event.target.startswith(("s:", "r:", "p:"))
        assert event.key is not None and event.sig is not None  # every event is signed
    first_event = json.loads(lines[0])
    assert first_event["target"] == "s:dailyreport-sample-2026-11/t01-atlas-dr/claim/k=c7"
    assert first_event["run"] == "judge-2026-11-05"  # what the reviewer saw
    # Through the command line, to a file, merged into ben's database with `gavel merge`.
    path = tmp_path / "ana.jsonl"
    assert main(["log", "export", "--db", str(pair.ana_path), "-o", str(path)]) == 0
    assert path.read_text(encoding="utf-8") == first
    assert main(["merge", str(path), "--db", str(pair.ben_path)]) == 0
    assert events(pair.ben) >= events(pair.ana)


def test_conflicts_list_both_sides_and_adjudication_records_them(
    pair: Pair, capsys: pytest.CaptureFixture[str]
) -> None:
    merge_text(pair.ana, log_text(pair.ben))
    found = {c.judgment_id: c for c in conflicts(pair.ana)}
    assert set(found) == {pair.t5, pair.r8}
    t5 = found[pair.t5]
    assert t5.judge_value == "correct" and t5.report == "t05-kestrel"
    assert [(s.reviewer, s.value, s.rationale) for s in t5.sides] == [
        ("ana", "incorrect", "19% is in-state only"),
        ("ben", "correct", "matches the census line"),
    ]
    assert main(["conflicts", "--db", str(pair.ana_path), "--format", "json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert {c["judgment_id"] for c in listed} == {pair.t5, pair.r8}
    # Adjudicate: the event's rationale names both sides, their events and rationales.
    recorded = adjudicate(pair.ana, "cleo", pair.t5, "incorrect", "census: total +14.0%")
    update_scores(pair.ana, [recorded.report_id or 0])
    rationale = pair.ana.execute(
        "SELECT rationale FROM review_event WHERE uuid = ?", (recorded.uuid,)
    ).fetchone()[0]
    assert rationale.startswith("census: total +14.0%\n\n" + SIDES_MARKER)
    for side in t5.sides:
        assert f"{side.reviewer} → {side.value} (event {side.event}: " in rationale
        assert json.dumps(side.rationale) in rationale
    status = pair.ana.execute(
        "SELECT status, value FROM decision WHERE subject_id = " + SUBJECT_OF, (pair.t5,)
    ).fetchone()
    assert status == ("adjudicated", "incorrect")
    assert {c.judgment_id for c in conflicts(pair.ana)} == {pair.r8}
    # The adjudication travels: merged into ben's database it is one more side until ben's
    # database holds cleo as an adjudicator; then it resolves the conflict there too.
    merge_text(pair.ben, log_text(pair.ana))
    status = pair.ben.execute(
        "SELECT status, value FROM decision WHERE subject_id = " + SUBJECT_OF, (pair.t5,)
    ).fetchone()
    assert status == ("conflict", None)
    cleo = ReviewLog(pair.ana, "cleo").key
    assert main(["identity", "trust", f"cleo#{key_id(cleo)}", "--db", str(pair.ben_path)]) == 0
    assert state(pair.ben) == state(pair.ana)
    # And through the command line (the adjudicator's value is checked against the scale).
    assert (
        main(
            [
                "adjudicate",
                str(pair.r8),
                "0",
                "--rationale",
                "over budget",
                "--reviewer",
                "cleo",
                "--db",
                str(pair.ben_path),
            ]
        )
        == 0
    )
    assert conflicts(pair.ben) == []


def test_events_about_subjects_not_here_wait_until_the_subject_appears(
    pair: Pair, tmp_path: Path
) -> None:
    """A log from a database with suites this one lacks: its events are kept as pending,
    counted, and applied once the subjects are imported; nothing is dropped."""
    empty = connect(tmp_path / "empty.db")
    ben_log = log_text(pair.ben)
    result = merge_text(empty, ben_log, "ben.jsonl")
    assert result.added == len(events(pair.ben)) and result.pending == result.added
    assert empty.execute("SELECT count(*) FROM decision").fetchone()[0] == 0
    from store.reviewlog.events import pending_events

    assert pending_events(empty) == result.added
    # The sample data arrives afterwards: every waiting decision applies.
    from store.imports.from_path import build_demo
    from tui.paths import sample_data_dir

    build_demo(empty, sample_data_dir())
    assert pending_events(empty) == 0
    assert state(empty)[1:4] == state(pair.ben)[1:4]  # decisions, flags, ratings
    empty.close()


def test_skip_unknown_leaves_pending_events_out(pair: Pair) -> None:
    good = log_text(pair.ben).splitlines()
    bad = json.loads(good[0])
    bad.update(
        uuid="00000000-0000-0000-0000-000000000001",
        key=None,
        sig=None,
        target="s:dailyreport-sample-2026-11/t99-nowhere/claim/k=c1",
    )
    text = "\n".join([good[0], json.dumps(bad), *good[1:]]) + "\n"
    kept = merge_text(pair.ana, text, "ben.jsonl")
    assert kept.pending == 1 and kept.added == len(good) + 1 and kept.unsigned == 1
    other = merge_text(pair.ben, text, "ben.jsonl", skip_unknown=True)
    assert [(line, target) for line, target, _ in other.skipped] == [(2, bad["target"])]


def test_corrupted_or_malformed_logs_are_refused_naming_the_line(pair: Pair) -> None:
    lines = log_text(pair.ben).splitlines()
    merge_text(pair.ana, "\n".join(lines) + "\n")
    edited = json.loads(lines[1])
    edited["value"] = "unknown"  # same uuid, new content
    with pytest.raises(InputError, match="different content") as info:
        merge_text(pair.ana, json.dumps(edited) + "\n")
    assert info.value.line == 1
    with pytest.raises(InputError) as info:
        merge_text(pair.ana, lines[0] + "\n{not json\n")
    assert info.value.line == 2
    missing = json.loads(lines[0])
    del missing["created_at"]
    missing["uuid"] = "11111111-2222-3333-4444-555555555555"
    with pytest.raises(InputError) as info:
        merge_text(pair.ana, json.dumps(missing) + "\n")
    assert (info.value.line, info.value.field) == (1, "created_at")
    forged = json.loads(lines[0])  # a signed event, edited
    forged["uuid"] = "11111111-2222-3333-4444-666666666666"
    with pytest.raises(InputError) as info:
        merge_text(pair.ana, json.dumps(forged) + "\n")
    assert info.value.field == "sig" and "does not verify" in str(info.value)
    off_scale = {**forged, "key": None, "sig": None, "value": "maybe"}
    with pytest.raises(InputError) as info:
        merge_text(pair.ana, json.dumps(off_scale) + "\n")
    assert info.value.field == "value"
    for stamp in ("not a time", "2026-11-05 10:00"):  # no time zone
        bad_time = {**off_scale, "value": "correct", "created_at": stamp}
        with pytest.raises(InputError) as info:
            merge_text(pair.ana, json.dumps(bad_time) + "\n")
        assert info.value.field == "created_at"


# -- the property: order and repetition do not matter -------------------------------------------


@pytest.fixture(scope="module")
def tiny_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("tiny") / "tiny.db"
    conn = connect(path)
    import_bundle(conn, tiny_bundle(), "h")
    rebuild_scores(conn)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return path


Op = tuple[int, int, str, int, int]  # (database, reviewer, action, pick, value pick)

OPS = st.lists(
    st.tuples(
        st.integers(0, 1),
        st.integers(0, 2),
        st.sampled_from(
            [
                "decide",
                "decide",
                "decide",
                "undo",
                "redo",
                "adjudicate",
                "rate",
                "flag",
                "propose",
                "accept",
                "reject",
                "sync",
            ]
        ),
        st.integers(0, 10_000),
        st.integers(0, 10),
    ),
    min_size=1,
    max_size=14,
)
REVIEWERS = ("ana", "ben", "cleo")
RUBRICS = (
    "States the 2025 ridership figure",
    "Names the main driver of growth",
    "Gives the station count",
    "states the 2025 ridership figure!",
)


def apply(conn: sqlite3.Connection, op: Op) -> None:
    _, who, action, pick, value_pick = op
    reviewer = REVIEWERS[who]
    log = ReviewLog(conn, reviewer)
    judgments = conn.execute("SELECT id, kind, report_id FROM judgment ORDER BY id").fetchall()
    judgment, kind_name, report = judgments[pick % len(judgments)]
    kind = get_kind(kind_name)
    assert kind is not None
    value = kind.scale.choices[value_pick % len(kind.scale.choices)].code
    if action in ("decide", "adjudicate"):
        log.decide(judgment, value, f"{reviewer} on {judgment}", adjudicate=action == "adjudicate")
    elif action == "undo":
        log.undo()
    elif action == "redo":
        log.redo()
    elif action == "rate":
        log.rate(report, 1 + value_pick % 4)
    elif action == "flag":
        log.flag(judgment, value_pick % 2 == 0)
    elif action == "propose":
        payload = {"subtask": "s2", "dimension": "ins", "text": RUBRICS[value_pick % 4]}
        propose(conn, reviewer, 1, None, "cascade", "new_rubric", payload, None, "missing")
    else:
        found = conn.execute("SELECT uuid FROM proposal ORDER BY id").fetchall()
        if found:
            chosen = found[pick % len(found)][0]
            if action == "accept":
                accept(conn, reviewer, chosen, force=True)
            else:
                reject(conn, reviewer, chosen)


def _team_adjudicators(conn: sqlite3.Connection) -> None:
    """One team: every database holds the same adjudicators (the premise under which two
    databases resolve the same log alike)."""
    for name in REVIEWERS:
        trust_adjudicator(conn, name, ReviewLog(conn, name).key, "the team")


def _copy(template: Path, folder: Path, name: str) -> sqlite3.Connection:
    path = folder / f"{name}.db"
    shutil.copy(template, path)
    return connect(path)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(sequence=OPS)
def test_merge_order_and_repetition_do_not_matter(tiny_template: Path, sequence: list[Op]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        a, b = _copy(tiny_template, folder, "a"), _copy(tiny_template, folder, "b")
        for conn in (a, b):
            _team_adjudicators(conn)
        for op in sequence:
            if op[2] == "sync":  # one reviewer merges the other's log so far
                source, target = (a, b) if op[0] == 0 else (b, a)
                merge_text(target, log_text(source))
            else:
                apply(a if op[0] == 0 else b, op)
        rebuild_scores(a)
        rebuild_scores(b)
        log_a, log_b = log_text(a), log_text(b)
        ab, ba, twice = (_copy(tiny_template, folder, n) for n in ("ab", "ba", "twice"))
        for conn in (ab, ba, twice):
            _team_adjudicators(conn)
        merge_text(ab, log_a)
        merge_text(ab, log_b)
        merge_text(ba, log_b)
        merge_text(ba, log_a)
        for text in (log_a, log_b, log_a, log_b, log_b):
            merge_text(twice, text)
        merge_text(a, log_b)  # each reviewer merges the other's log
        merge_text(b, log_a)
        expected = state(ab)
        assert state(ba) == expected
        assert state(twice) == expected
        assert state(a) == expected
        assert state(b) == expected
        assert events(ab) == events(a) | events(b)  # nothing lost
        for conn in (a, b, ab, ba, twice):
            conn.close()


def test_log_events_stream_from_a_cursor(pair: Pair) -> None:
    stream = log_events(pair.ana)
    assert iter(stream) is stream  # a generator, not a list
    assert next(stream).target.startswith("s:")


def test_concurrent_accept_and_reject_are_a_conflict_in_any_merge_order(
    tiny_template: Path, tmp_path: Path
) -> None:
    """Two reviewers deciding a proposal differently: a conflict, not the later clock's."""
    a, b = _copy(tiny_template, tmp_path, "a"), _copy(tiny_template, tmp_path, "b")
    payload = {"subtask": "s2", "dimension": "rat", "text": "Weighs the price against e-bikes"}
    made = propose(a, "ana", 1, None, "cascade", "new_rubric", payload, None, "missing")
    merge_text(b, log_text(a))
    accept(a, "ana", made.proposal.uuid, "yes")  # earlier
    reject(b, "ben", made.proposal.uuid, "no, covered")  # later: still not the standing one
    log_a, log_b = log_text(a), log_text(b)
    ab, ba = _copy(tiny_template, tmp_path, "ab"), _copy(tiny_template, tmp_path, "ba")
    merge_text(ab, log_a)
    merge_text(ab, log_b)
    merge_text(ba, log_b)
    merge_text(ba, log_a)
    for conn in (ab, ba):
        (found,) = proposals(conn)
        assert found.status == "in conflict"
    assert state(ab) == state(ba)


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(sequence=OPS, cut=st.integers(0, 20))
def test_a_small_merge_updates_only_what_it_touches_and_equals_a_rebuild(
    tiny_template: Path, sequence: list[Op], cut: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Merging a log in two parts the incremental way (what a hub sync does every few seconds)
    gives the state a full rebuild gives."""
    import store.reviews.merge as merge_module

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        a, b = _copy(tiny_template, folder, "a"), _copy(tiny_template, folder, "b")
        for conn in (a, b):
            _team_adjudicators(conn)
        for op in sequence:
            if op[2] == "sync":
                source, target = (a, b) if op[0] == 0 else (b, a)
                merge_text(target, log_text(source))
            else:
                apply(a if op[0] == 0 else b, op)
        lines = (log_text(a) + log_text(b)).splitlines(keepends=True)
        first, rest = "".join(lines[:cut]), "".join(lines[cut:])
        small, full = _copy(tiny_template, folder, "small"), _copy(tiny_template, folder, "full")
        for text in (first, rest):
            monkeypatch.setattr(merge_module, "INCREMENTAL_LIMIT", 10_000)
            merge_text(small, text)
            monkeypatch.setattr(merge_module, "INCREMENTAL_LIMIT", 0)
            merge_text(full, text)
        assert state(small) == state(full)
        rebuild_scores(full)
        assert state(small) == state(full)
        for conn in (a, b, small, full):
            conn.close()


def test_log_export_to_dash_writes_standard_output_not_a_file(
    pair: Pair, capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["log", "export", "--db", str(pair.ana_path), "-o", "-"]) == 0
    out = capsys.readouterr().out
    assert out == log_text(pair.ana) and out.count("\n") > 0
    assert not (tmp_path / "-").exists()
    assert (
        main(["log", "export", "--db", str(pair.ana_path), "-o", "-", "--format", "parquet"]) == 2
    )
    assert "give -o PATH" in capsys.readouterr().err
