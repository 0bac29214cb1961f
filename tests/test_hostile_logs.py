"""Review logs written by someone hostile or careless, merged with ``gavel merge``.

Honest reviewers (ana, ben, and two different people who both log in as ``root``) decide
subjects with their own installation keys; a hostile log then tries what the reliability trial
did: undo or supersede another reviewer's event, speak for ana (a bad signature, no signature,
another key with her name), win by a far-future time stamp, overrule everyone with an
``adjudicate`` dated 9999, or slip in a time that is not a time. Hypothesis draws the honest
histories and the attacks. What must hold:

* a log with a forged or malformed event is refused whole, naming the line, and changes
  nothing;
* an accepted hostile log never changes an honest identity's standing decision, and where it
  disagrees with one the subject is a conflict (never the later clock's);
* time stamps never decide between two identities: moving every hostile stamp from the far
  past to 9999 changes no decision;
* merging the same logs in any order — even when every event has the same ``created_at`` —
  gives identical derived state and byte-identical gold and verdict exports.
"""

from __future__ import annotations

import io
import itertools
import json
import os
import shutil
import sqlite3
import tempfile
import uuid as uuidlib
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reviewer.errors import InputError
from reviewer.identity import Identity, label, new_secret
from reviewer.logfile import LogEvent, event_line, read_events
from store.db.connection import connect
from store.exports.files import write_export
from store.imports.loader import import_bundle
from store.reviewlog.events import _live, _standing, trust_adjudicator
from store.reviews.merge import merge_events
from store.reviews.proposals import propose
from store.scores.cache import rebuild_scores
from tests.builders import tiny_bundle
from tests.score_rows import all_scores

SUBJECTS: dict[str, tuple[str, ...]] = {
    "s:tiny/t1-alpha/claim/k=c1": ("correct", "incorrect", "unknown"),
    "s:tiny/t1-alpha/claim/k=c2": ("correct", "incorrect", "unknown"),
    "s:tiny/t1-alpha/ins/c=s1-ins": ("0", "0.5", "1"),
    "s:tiny/t1-beta/consistency/k=c2;r=2": ("support", "conflict", "unknown"),
}
TARGETS = tuple(SUBJECTS)

ANA = Identity("ana", new_secret())
BEN = Identity("ben", new_secret())
ROOT1 = Identity("root", new_secret())
ROOT2 = Identity("root", new_secret())  # another person, the same login name
MALLORY = Identity("mallory", new_secret())
ANA_ELSEWHERE = Identity("ana", new_secret())  # a key that is not ana's, with her name
ROOT_ELSEWHERE = Identity("root", new_secret())  # a third person logged in as root
HONEST = (ANA, BEN, ROOT1, ROOT2)

SAME_TIME = "2026-11-20T10:00:00.000000+00:00"
FAR_FUTURE = "9999-12-31T23:59:59.999999+00:00"
FAR_PAST = "1970-01-01T00:00:00.000001+00:00"


def event(
    who: Identity | None,
    target: str,
    action: str,
    value: str | None,
    created_at: str,
    *,
    name: str | None = None,
    supersedes: str | None = None,
    rationale: str = "",
) -> LogEvent:
    """A log event signed by ``who`` (None: unsigned, as written before signing)."""
    data: dict[str, Any] = {
        "uuid": str(uuidlib.uuid4()),
        "target": target,
        "reviewer": name or (who.name if who else "ana"),
        "action": action,
        "value": value,
        "rationale": rationale,
        "reason": None,
        "created_at": created_at,
        "supersedes": supersedes,
        "run": None,
        "key": who.public_key if who else None,
    }
    data["sig"] = who.sign(data) if who else None
    return LogEvent.model_validate(data)


def text(events: list[LogEvent]) -> str:
    return "".join(event_line(e) + "\n" for e in events)


def merge(conn: sqlite3.Connection, log: str) -> None:
    merge_events(conn, read_events(io.StringIO(log), "log.jsonl"), "log.jsonl")


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("hostile") / "tiny.db"
    conn = connect(path)
    import_bundle(conn, tiny_bundle(), "h")
    rebuild_scores(conn)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return path


@dataclass
class Copies:
    template: Path
    folder: Path
    made: list[sqlite3.Connection]

    def new(self) -> sqlite3.Connection:
        path = self.folder / f"{len(self.made)}.db"
        shutil.copy(self.template, path)
        conn = connect(path)
        self.made.append(conn)
        return conn


def copies(template: Path) -> Iterator[Copies]:
    with tempfile.TemporaryDirectory() as tmp:
        found = Copies(template, Path(tmp), [])
        try:
            yield found
        finally:
            for conn in found.made:
                conn.close()


def derived(conn: sqlite3.Connection) -> tuple[object, ...]:
    """Everything the log decides, by portable target (not local ids or log position)."""
    return (
        conn.execute(
            "SELECT s.target, d.value, d.status, d.reviewers FROM decision d "
            "JOIN subject s ON s.id = d.subject_id ORDER BY s.target"
        ).fetchall(),
        conn.execute(
            "SELECT s.target, f.note FROM flag f JOIN subject s ON s.id = f.subject_id "
            "ORDER BY s.target"
        ).fetchall(),
        conn.execute(
            "SELECT e.uuid, l.live FROM event_live l JOIN review_event e "
            "ON e.uuid = l.uuid ORDER BY e.uuid"
        ).fetchall(),
        conn.execute(
            f"SELECT scope, framework, variant, metric, value, n FROM {all_scores(conn)} "
            "ORDER BY scope, framework, variant, metric"
        ).fetchall(),
    )


def exported(conn: sqlite3.Connection, kind: str) -> str:
    out = io.StringIO()
    write_export(conn, kind, out, "jsonl")
    return out.getvalue()


def standing(conn: sqlite3.Connection, target: str) -> dict[str, str | None]:
    """Each identity's standing decision on a subject (adjudications apart)."""
    rows = [r for r in _live(conn, target, ("confirm", "override")) if r[3] != "adjudicate"]
    return {who: row[4] for who, row in _standing(rows).items()}


# -- drawing honest histories and attacks --------------------------------------------------------

Decision = tuple[int, int, int, int]  # (identity, target, value, minute)

HISTORIES = st.lists(
    st.tuples(
        st.integers(0, len(HONEST) - 1),
        st.integers(0, len(TARGETS) - 1),
        st.integers(0, 2),
        st.integers(0, 59),
    ),
    min_size=1,
    max_size=8,
)


def honest_events(history: list[Decision], *, same_time: bool = False) -> list[LogEvent]:
    out = []
    for who, target, value, minute in history:
        stamp = SAME_TIME if same_time else f"2026-11-20T10:{minute:02d}:00.000000+00:00"
        code = SUBJECTS[TARGETS[target]][value]
        out.append(event(HONEST[who], TARGETS[target], "override", code, stamp))
    return out


REFUSED = (
    "forged undo",
    "forged supersede",
    "bad signature",
    "signature without key",
    "key without signature",
    "edited after signing",
    "not a time",
    "no time zone",
    "impossible date",
)
ACCEPTED = (
    "unsigned with her name",
    "another key with her name",
    "mallory far future",
    "a third root",
)


def refused_attack(kind: str, victim: LogEvent, value: str, stamp: str) -> LogEvent:
    """One forged or malformed event aimed at ``victim`` (an honest event)."""
    target = victim.target
    if kind == "forged undo":
        return event(MALLORY, target, "undo", None, stamp, supersedes=victim.uuid)
    if kind == "forged supersede":
        return event(MALLORY, target, "override", value, stamp, supersedes=victim.uuid)
    if kind == "bad signature":
        forged = event(MALLORY, target, "override", value, stamp, name="ana")
        return forged.model_copy(update={"key": ANA.public_key})
    if kind == "signature without key":
        return event(ANA, target, "override", value, stamp).model_copy(update={"key": None})
    if kind == "key without signature":
        return event(ANA, target, "override", value, stamp).model_copy(update={"sig": None})
    if kind == "edited after signing":
        return victim.model_copy(update={"uuid": str(uuidlib.uuid4()), "value": value})
    bad = {
        "not a time": "not a time",
        "no time zone": "2026-11-20T10:00:00",
        "impossible date": "2026-13-45T10:00:00+00:00",
    }[kind]
    return event(ANA, target, "override", value, bad)


def raw_line(e: LogEvent) -> str:
    """The event as a JSON line, without model validation (a malformed time stays)."""
    return json.dumps(e.model_dump(), ensure_ascii=False)


def accepted_attack(kind: str, target: str, value: str, stamp: str) -> LogEvent:
    if kind == "unsigned with her name":
        return event(None, target, "override", value, stamp, name="ana")
    if kind == "another key with her name":
        return event(ANA_ELSEWHERE, target, "override", value, stamp)
    if kind == "mallory far future":
        return event(MALLORY, target, "override", value, stamp)
    return event(ROOT_ELSEWHERE, target, "override", value, stamp)


def unchecked(kind: str, target: str, value: str) -> LogEvent:
    """An event whose ``created_at`` was never validated (built around the model)."""
    e = event(ANA, target, "override", value, SAME_TIME)
    bad = {
        "not a time": "not a time",
        "no time zone": "2026-11-20T10:00:00",
        "impossible date": "2026-13-45T10:00:00+00:00",
    }[kind]
    return LogEvent.model_construct(**{**e.model_dump(), "created_at": bad})


# -- properties ------------------------------------------------------------------------------------

SETTINGS = settings(
    max_examples=int(os.environ.get("GAVEL_HOSTILE_EXAMPLES", "30")),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@SETTINGS
@given(
    history=HISTORIES,
    kind=st.sampled_from(REFUSED),
    pick=st.integers(0, 100),
    value=st.integers(0, 2),
    future=st.booleans(),
)
def test_a_forged_or_malformed_event_is_refused_and_changes_nothing(
    template: Path, history: list[Decision], kind: str, pick: int, value: int, future: bool
) -> None:
    for made in copies(template):
        conn = made.new()
        honest = honest_events(history)
        merge(conn, text(honest))
        before = derived(conn), conn.execute("SELECT count(*) FROM review_event").fetchone()
        victim = honest[pick % len(honest)]
        code = SUBJECTS[victim.target][value]
        stamp = FAR_FUTURE if future else SAME_TIME
        if kind in ("not a time", "no time zone", "impossible date"):
            line = raw_line(unchecked(kind, victim.target, code))
        else:
            line = event_line(refused_attack(kind, victim, code, stamp))
        with pytest.raises(InputError) as error:
            merge(conn, text(honest[:1]) + line + "\n")
        assert error.value.line == 2
        assert (
            derived(conn),
            conn.execute("SELECT count(*) FROM review_event").fetchone(),
        ) == before


@SETTINGS
@given(
    history=HISTORIES,
    attacks=st.lists(
        st.tuples(st.sampled_from(ACCEPTED), st.integers(0, len(TARGETS) - 1), st.integers(0, 2)),
        min_size=1,
        max_size=4,
    ),
)
def test_an_accepted_hostile_log_never_changes_an_honest_decision_and_time_decides_nothing(
    template: Path, history: list[Decision], attacks: list[tuple[str, int, int]]
) -> None:
    for made in copies(template):
        honest = text(honest_events(history))
        clean = made.new()
        merge(clean, honest)
        results = []
        for base in ("1970-01-01T00:00:01", "9999-12-31T23:59:58"):
            conn = made.new()
            merge(conn, honest)
            # The same relative order among the hostile events (one identity's own order is
            # its clock's), at either end of time.
            hostile = [
                accepted_attack(kind, TARGETS[t], SUBJECTS[TARGETS[t]][v], f"{base}.{i:06d}+00:00")
                for i, (kind, t, v) in enumerate(attacks)
            ]
            merge(conn, text(hostile))
            for target in TARGETS:
                mine, theirs = standing(clean, target), standing(conn, target)
                # Every honest identity still stands where it stood.
                assert {w: v for w, v in theirs.items() if w in mine} == mine
                values = set(theirs.values())
                status = conn.execute(
                    "SELECT d.status FROM decision d JOIN subject s "
                    "ON s.id = d.subject_id WHERE s.target = ?",
                    (target,),
                ).fetchone()
                if len(values) > 1:
                    assert status == ("conflict",), (target, theirs)
                elif values:
                    assert status is not None and status[0] in ("single", "unanimous")
            results.append(
                conn.execute(
                    "SELECT s.target, d.value, d.status, d.reviewers FROM decision d "
                    "JOIN subject s ON s.id = d.subject_id ORDER BY s.target"
                ).fetchall()
            )
        assert results[0] == results[1]  # the hostile clock decided nothing


@SETTINGS
@given(history=HISTORIES, value=st.integers(0, 2), theirs=st.integers(0, 2))
def test_an_adjudication_dated_9999_does_not_overrule_another_adjudicator(
    template: Path, history: list[Decision], value: int, theirs: int
) -> None:
    target = TARGETS[0]
    codes = SUBJECTS[target]
    for made in copies(template):
        conn = made.new()
        for adjudicator in (BEN, MALLORY):  # both held as adjudicators: only the clock differs
            trust_adjudicator(conn, adjudicator.name, adjudicator.public_key, "test")
        merge(
            conn,
            text(
                [*honest_events(history), event(BEN, target, "adjudicate", codes[value], SAME_TIME)]
            ),
        )
        merge(conn, text([event(MALLORY, target, "adjudicate", codes[theirs], FAR_FUTURE)]))
        row = conn.execute(
            "SELECT d.value, d.status FROM decision d JOIN subject s "
            "ON s.id = d.subject_id WHERE s.target = ?",
            (target,),
        ).fetchone()
        if value == theirs:
            assert row == (codes[value], "adjudicated")
        else:
            assert row == (None, "conflict")


@SETTINGS
@given(
    history=HISTORIES,
    other=HISTORIES,
    same_time=st.booleans(),
    attacks=st.lists(
        st.tuples(st.sampled_from(ACCEPTED), st.integers(0, len(TARGETS) - 1), st.integers(0, 2)),
        max_size=3,
    ),
)
def test_merge_order_never_changes_state_or_exports_even_at_equal_times(
    template: Path,
    history: list[Decision],
    other: list[Decision],
    same_time: bool,
    attacks: list[tuple[str, int, int]],
) -> None:
    stamp = SAME_TIME if same_time else FAR_FUTURE
    logs = [
        text(honest_events(history, same_time=same_time)),
        text(honest_events(other, same_time=same_time)),
        text(
            [
                accepted_attack(kind, TARGETS[t], SUBJECTS[TARGETS[t]][v], stamp)
                for kind, t, v in attacks
            ]
        ),
    ]
    for made in copies(template):
        seen: set[str] = set()
        gold: set[str] = set()
        verdicts: set[str] = set()
        for order in itertools.permutations(range(3)):
            conn = made.new()
            for index in order:
                merge(conn, logs[index])
            seen.add(repr(derived(conn)))
            gold.add(exported(conn, "gold"))
            verdicts.add(exported(conn, "verdicts"))
        assert len(seen) == 1 and len(gold) == 1 and len(verdicts) == 1


def test_two_people_logged_in_as_root_deciding_differently_are_a_conflict(template: Path) -> None:
    target = TARGETS[0]
    for made in copies(template):
        conn = made.new()
        merge(conn, text([event(ROOT1, target, "override", "incorrect", SAME_TIME)]))
        merge(conn, text([event(ROOT2, target, "override", "unknown", FAR_FUTURE)]))
        row = conn.execute(
            "SELECT d.value, d.status, d.reviewers FROM decision d "
            "JOIN subject s ON s.id = d.subject_id WHERE s.target = ?",
            (target,),
        ).fetchone()
        assert row == (None, "conflict", 2)
        shown = {label(ROOT1.name, ROOT1.public_key), label(ROOT2.name, ROOT2.public_key)}
        assert set(standing(conn, target)) == shown


def test_a_proposal_decided_differently_by_two_identities_is_a_conflict_whatever_the_dates(
    template: Path,
) -> None:
    """Accept by ana, reject by mallory dated 9999: no clock decides between them."""
    from store.reviews.proposals import proposals

    for made in copies(template):
        conn = made.new()
        made_proposal = propose(
            conn,
            "ana",
            1,
            None,
            "cascade",
            "new_rubric",
            {"subtask": "s2", "dimension": "ins", "text": "Says the fare"},
            None,
            "missing",
        ).proposal
        target = f"p:{made_proposal.uuid}"
        merge(conn, text([event(ANA, target, "accept", None, SAME_TIME)]))
        assert proposals(conn)[0].status == "accepted"
        merge(conn, text([event(MALLORY, target, "reject", None, FAR_FUTURE)]))
        assert proposals(conn)[0].status == "in conflict"
        # ... and a far-past reject by yet another identity does not settle it either.
        merge(conn, text([event(ROOT1, target, "reject", None, FAR_PAST)]))
        assert proposals(conn)[0].status == "in conflict"
        # ana changing her own mind ends the disagreement.
        merge(conn, text([event(ANA, target, "reject", None, "2026-11-20T11:00:00.000000+00:00")]))
        assert proposals(conn)[0].status == "rejected"


def test_a_merge_names_the_identities_that_adjudicated(template: Path) -> None:
    target = TARGETS[0]
    for made in copies(template):
        conn = made.new()
        result = merge_events(
            conn,
            read_events(
                io.StringIO(text([event(MALLORY, target, "adjudicate", "incorrect", FAR_FUTURE)])),
                "m.jsonl",
            ),
            "m.jsonl",
        )
        assert result.adjudicators == [label(MALLORY.name, MALLORY.public_key)]
        assert replace(result, adjudicators=[]).adjudicators == []
