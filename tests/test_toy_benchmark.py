"""A sixth benchmark needs only its own folder and one registration line.

``tests/fixtures/toy_benchmark`` holds a toy benchmark package (``toybench``: a Benchmark, a
Framework, a format reader) and the one line that registers it, an entry point in its
distribution metadata. Nothing else in the tree knows about it, yet it imports, scores,
takes decisions and is reviewed in the workstation like the five real ones.
"""

from __future__ import annotations

import sqlite3
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from reviewer import registry

TOY = Path(__file__).resolve().parent / "fixtures" / "toy_benchmark"


@pytest.fixture
def toy() -> Iterator[None]:
    sys.path.insert(0, str(TOY))
    registry.reset()
    try:
        yield
    finally:
        sys.path.remove(str(TOY))
        for name in [m for m in sys.modules if m == "toybench" or m.startswith("toybench.")]:
            del sys.modules[name]
        registry.reset()


def system_score(conn: sqlite3.Connection, system: str, variant: str) -> float | None:
    row = conn.execute(
        "SELECT s.value FROM score s JOIN system y ON s.scope = 'system:' || y.id "
        "WHERE y.ext_id = ? AND s.framework = 'toy' AND s.metric = 'PassRate' "
        "AND s.variant = ?",
        (system, variant),
    ).fetchone()
    return None if row is None else float(row[0])


def imported(tmp_path: Path) -> sqlite3.Connection:
    from reviewer.formats import hash_path
    from store.db.connection import connect
    from store.imports.loader import import_bundle
    from store.scores.cache import rebuild_scores

    conn = connect(tmp_path / "toy.db")
    run = TOY / "toy_run.json"
    import_bundle(conn, registry.format_reader("toy")(run, None), hash_path(run), str(run))
    rebuild_scores(conn)
    return conn


def test_the_registry_finds_it_by_its_entry_point(toy: None) -> None:
    assert "toybench" in registry.benchmarks()
    assert registry.get_framework("toy").label == "Toy Bench"
    assert registry.formats()["toy"].reader == "toybench.format:read"
    assert registry.get_kind("toy_check") is not None
    # the five real ones are still there, in their order, before it
    assert list(registry.frameworks())[-1] == "toy"


def test_it_imports_scores_and_takes_decisions(toy: None, tmp_path: Path) -> None:
    from store.reviewlog.events import ReviewLog
    from store.scores.cache import update_scores

    conn = imported(tmp_path)
    # By hand: alpha passes 2/2 checks on q1 and 0/1 on q2 → (1 + 0) / 2; beta (0.5 + 1) / 2.
    assert system_score(conn, "alpha", "judge") == 0.5
    assert system_score(conn, "beta", "judge") == 0.75
    (jid,) = conn.execute(
        "SELECT j.id FROM judgment j JOIN report r ON r.id = j.report_id "
        "WHERE r.ext_id = 'q2-alpha'"
    ).fetchone()
    recorded = ReviewLog(conn, "ana").decide(jid, True, "the answer is one line")
    assert recorded.action == "override"
    update_scores(conn, [recorded.report_id or 0])
    assert system_score(conn, "alpha", "adjudicated") == 1.0
    assert system_score(conn, "alpha", "judge") == 0.5


async def test_the_workstation_reviews_it(toy: None, tmp_path: Path) -> None:
    from tests.tui_helpers import make_app, open_report, ready, screen_text, stored

    imported(tmp_path).close()
    app = make_app(tmp_path / "toy.db")
    async with app.run_test(size=(150, 40)) as pilot:
        await ready(pilot)
        assert "Pass rate" in screen_text(app) or "PassRate" in screen_text(app)
        await open_report(pilot, "q2-alpha")
        assert "toy check" in screen_text(app)
        await stored(pilot, ("1",))
        assert app.last_result is not None and app.last_result.error is None
        assert "Pass rate" in screen_text(app)


def test_a_listed_benchmark_that_does_not_import_is_an_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(registry, "BENCHMARKS", (*registry.BENCHMARKS, "reviewer.frameworks.nope"))
    registry.reset()
    try:
        with pytest.raises(registry.RegistryError, match=r"reviewer\.frameworks\.nope"):
            registry.frameworks()
    finally:
        monkeypatch.undo()
        registry.reset()


def test_its_optional_capabilities_are_declared_absent(toy: None, tmp_path: Path) -> None:
    # The store asks the interface: no bulk counting (every report scored from its rows), no
    # columns (aggregated from report scores), no grading.
    fw = registry.get_framework("toy")
    assert (fw.bulk, fw.columns, fw.grading) == (None, None, None)
    conn = imported(tmp_path)
    assert conn.execute("SELECT count(*) FROM score_columns").fetchone()[0] == 0
    assert system_score(conn, "beta", "adjudicated") == 0.75


def test_a_framework_that_does_not_declare_its_capabilities_is_refused() -> None:
    from reviewer.framework import Benchmark

    class Undeclared:
        """A framework written before the protocol declared its optional capabilities."""

        name = "undeclared"

    with pytest.raises(TypeError, match="does not declare grading, bulk, columns"):
        Benchmark("old", "Old", (Undeclared(),))  # type: ignore[arg-type]
