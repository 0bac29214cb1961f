"""The workstation's writer applies every typed command, and nothing else reaches it.

Each command goes through the real path a keypress takes: ``Backend.submit`` → the writer
thread's transaction → the review log or the store → the ``WriteResult`` the screens redraw
from. On the tiny bundle (tests/builders.py) with the two candidate runs of test_activation.
"""

from __future__ import annotations

import queue
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import get_args

import pytest

from store.backend.commands import (
    AcceptProposal,
    Activate,
    Adjudicate,
    Call,
    Confirm,
    Decide,
    DrawPlan,
    Flag,
    PreviewActivation,
    Propose,
    Rate,
    Redo,
    RejectProposal,
    Retire,
    Undo,
    WriteCommand,
    WriteResult,
)
from store.backend.workstation import Backend
from store.plans.design import Plan, PlanSpec
from store.runs.activation import ActivationPreview
from tests.conftest import PROJECT
from tests.test_activation import decided, judgment

__all__ = ["decided"]  # the fixture: ana's four labels and the runs "good" and "bad"


class Writer:
    """A backend whose writer runs in a thread, as in the app; ``apply`` waits for the
    final result of one command."""

    def __init__(self, path: Path) -> None:
        self.backend = Backend(path, "ana")
        self.results: queue.Queue[WriteResult] = queue.Queue()
        self.applied: list[type] = []
        self.thread = threading.Thread(target=self.backend.writer_loop, args=(self.results.put,))
        self.thread.start()

    def apply(self, command: WriteCommand) -> WriteResult:
        self.backend.submit(command)
        while True:
            result = self.results.get(timeout=30)
            if result.waiting is None:
                assert result.command is command
                self.applied.append(type(command))
                return result


@pytest.fixture
def writer(decided: sqlite3.Connection, tmp_path: Path) -> Iterator[Writer]:
    running = Writer(tmp_path / "gavel.db")
    yield running
    running.backend.stop()
    running.thread.join(timeout=30)
    assert not running.thread.is_alive()


def report_id(conn: sqlite3.Connection, ext: str) -> int:
    return int(conn.execute("SELECT id FROM report WHERE ext_id = ?", (ext,)).fetchone()[0])


def actions(conn: sqlite3.Connection, after: int) -> list[str]:
    return [a for (a,) in conn.execute("SELECT action FROM review_event WHERE seq > ?", (after,))]


def decide_and_rate(writer: Writer, conn: sqlite3.Connection) -> None:
    alpha = report_id(conn, "t1-alpha")
    s1, s3, s4 = (judgment(conn, "t1-alpha", c) for c in ("s2-rat", "s3-ins", "s4-ins"))
    before = conn.execute("SELECT max(seq) FROM review_event").fetchone()[0]

    decided = writer.apply(Decide(s3, "0.5", "half of it", "misread-rubric"))
    assert decided.error is None and decided.recorded is not None
    assert (decided.recorded.action, decided.recorded.value) == ("override", "0.5")
    assert decided.recorded.report_id == alpha
    # What the screen redraws comes with it: the judgment, its history, the scores, the rank.
    assert decided.judgments[s3].effective == "0.5" and s3 in decided.history
    assert decided.scores and decided.rank is not None
    assert alpha in writer.backend.take_dirty()
    assert writer.backend.is_own(decided.recorded.uuid)

    confirmed = writer.apply(Confirm(s1, only_if_undecided=True))
    assert confirmed.recorded is not None and confirmed.recorded.action == "confirm"
    # The enter key never replaces this reviewer's own decision.
    again = writer.apply(Confirm(s3, only_if_undecided=True))
    assert again.error is not None and again.recorded is None

    adjudicated = writer.apply(Adjudicate(s4, "0", "both read it"))
    assert adjudicated.recorded is not None
    assert (adjudicated.recorded.action, adjudicated.recorded.value) == ("adjudicate", "0")

    flagged = writer.apply(Flag(s4, note="ask the lead"))
    lowered = writer.apply(Flag(s4, on=False))
    assert flagged.recorded is not None and lowered.recorded is not None
    assert (flagged.recorded.value, lowered.recorded.value) == ("on", "off")

    rated = writer.apply(Rate(alpha, "3", "mostly there"))
    assert rated.recorded is not None and (rated.recorded.action, rated.recorded.value) == (
        "rate",
        "3",
    )

    undone = writer.apply(Undo(alpha))
    assert undone.recorded is not None
    assert (undone.recorded.action, undone.recorded.reverted) == ("undo", "rate")
    redone = writer.apply(Redo(alpha))
    assert redone.recorded is not None
    assert (redone.recorded.action, redone.recorded.reverted) == ("redo", "rate")
    assert actions(conn, before) == [
        "override",
        "confirm",
        "adjudicate",
        "flag",
        "flag",
        "rate",
        "undo",
        "redo",
    ]
    nothing = writer.apply(Redo(report_id(conn, "t1-beta")))  # no undo there to redo
    assert nothing.error is None and nothing.recorded is None


def propose_and_decide(writer: Writer, conn: sqlite3.Connection) -> None:
    alpha = report_id(conn, "t1-alpha")
    s2 = judgment(conn, "t1-alpha", "s2-ins")  # the new item belongs to its subtask
    proposed = [
        writer.apply(Propose(alpha, s2, "new_rubric", text, "missing"))
        for text in ("Names the operator", "Gives the year of the count")
    ]
    assert all(p.error is None and p.note and p.note.startswith("proposed") for p in proposed)
    assert proposed[0].scores  # the report's scores, for the score bar
    uuids = [u for (u,) in conn.execute("SELECT uuid FROM proposal ORDER BY id")]
    assert len(uuids) == 2

    accepted = writer.apply(AcceptProposal(uuids[0], "yes"))
    assert accepted.error is None and accepted.note is not None
    assert accepted.note.startswith("accepted proposal")
    # Accepting rescores the task: every report of it is dirty.
    assert writer.backend.take_dirty() == {alpha, report_id(conn, "t1-beta")}
    rejected = writer.apply(RejectProposal(uuids[1], "covered"))
    assert rejected.note is not None and rejected.note.startswith("rejected proposal")


def runs(writer: Writer, conn: sqlite3.Connection) -> None:
    seen = writer.apply(PreviewActivation("good"))
    assert isinstance(seen.data, ActivationPreview) and not seen.data.needs_confirmation
    assert conn.execute("SELECT active FROM judge_run WHERE ext_id = 'good'").fetchone() == (0,)

    refused = writer.apply(Activate("bad"))
    assert isinstance(refused.data, ActivationPreview) and refused.data.needs_confirmation
    assert conn.execute("SELECT active FROM judge_run WHERE ext_id = 'bad'").fetchone() == (0,)
    activated = writer.apply(Activate("bad", confirmed=True))
    assert activated.note is not None and activated.note.startswith("run bad activated")
    assert conn.execute("SELECT active FROM judge_run WHERE ext_id = 'bad'").fetchone()[0] > 0

    retired = writer.apply(Retire("bad"))
    assert retired.note is not None and retired.note.startswith("run bad retired")
    assert conn.execute("SELECT active FROM judge_run WHERE ext_id = 'bad'").fetchone() == (0,)
    unknown = writer.apply(Retire("no-such-run"))
    assert unknown.error is not None


def plans_and_calls(writer: Writer, conn: sqlite3.Connection) -> None:
    drawn = writer.apply(DrawPlan(PlanSpec(4, seed=1, name="p-test")))
    assert isinstance(drawn.data, Plan) and drawn.data.name == "p-test" and drawn.note
    assert conn.execute("SELECT name FROM plan").fetchall() == [("p-test",)]
    refused = writer.apply(DrawPlan(PlanSpec(4, seed=1, name="p-test")))
    assert refused.error is not None and refused.error.startswith("no plan drawn")

    assert writer.backend.call(lambda c: c.execute("SELECT 41 + 1").fetchone()[0]) == 42
    writer.applied.append(Call)  # ``call`` waits on its own result, not on a WriteResult
    with pytest.raises(ZeroDivisionError):
        writer.backend.call(lambda c: 1 // 0)
    assert writer.results.get(timeout=30).command.label == "call"


def test_every_command_type_is_applied_by_the_writer(
    writer: Writer, decided: sqlite3.Connection
) -> None:
    runs(writer, decided)
    decide_and_rate(writer, decided)
    propose_and_decide(writer, decided)
    plans_and_calls(writer, decided)
    assert set(writer.applied) == set(get_args(WriteCommand))


def test_an_unknown_command_is_refused_before_the_writer(writer: Writer) -> None:
    for wrong in (object(), "decide", None):
        with pytest.raises(TypeError, match="not a write command"):
            writer.backend.submit(wrong)  # type: ignore[arg-type]
    assert writer.results.empty()


def test_an_unknown_command_is_a_type_error() -> None:
    """The type checker refuses what is not a command, and the writer's ``match`` has no
    branch that would silently apply or drop one."""
    from mypy import api

    snippet = (
        "from pathlib import Path\n"
        "from store.backend.workstation import Backend\n"
        "Backend(Path('x'), 'ana').submit(object())\n"
    )
    out, _, status = api.run(
        [
            "--config-file",
            str(PROJECT / "pyproject.toml"),
            "--cache-dir",
            str(PROJECT / ".mypy_cache"),
            "-c",
            snippet,
        ]
    )
    assert status == 1
    assert 'Argument 1 to "submit" of "Backend" has incompatible type "object"' in out


def test_a_decision_queued_behind_a_write_lock_keeps_its_keypress_time(
    writer: Writer, decided: sqlite3.Connection, tmp_path: Path
) -> None:
    """The event's time stamp is when the reviewer pressed the key, not when the writer got
    the lock: a reviewer's own history orders by it."""
    import time
    from datetime import datetime

    s3 = judgment(decided, "t1-alpha", "s3-ins")
    holder = sqlite3.connect(tmp_path / "gavel.db", isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another process holds the write lock
    pressed = Decide(s3, "1", "queued")
    writer.backend.submit(pressed)
    time.sleep(1.0)
    released = datetime.now().astimezone()
    holder.execute("COMMIT")
    holder.close()
    while True:
        result = writer.results.get(timeout=30)
        if result.waiting is None and result.command is pressed:
            break
    assert result.recorded is not None
    stamp = decided.execute(
        "SELECT created_at FROM review_event WHERE uuid = ?", (result.recorded.uuid,)
    ).fetchone()[0]
    assert stamp == pressed.at
    assert datetime.fromisoformat(stamp) < released  # not the time it was stored
