"""Review plans: the designs draw what they say with the probabilities they record, every prefix
of a plan is itself a sample, the same seed draws the same plan, and plans are stored, listed,
exported and followed as reviewers decide."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from reviewer.errors import InputError
from reviewer.estimates.designs import (
    allocate,
    draw_stratified,
    draw_uniform,
    draw_weighted,
    weighted_probabilities,
)

SUITE = "dailyreport-sample-2026-11"


# -- designs -------------------------------------------------------------------------------


def test_allocation_is_proportional_exact_and_keeps_two_per_stratum() -> None:
    sizes = np.array([500, 300, 150, 40, 10, 3])
    out = allocate(sizes, 100)
    assert out.sum() == 100
    assert np.all(out >= np.minimum(sizes, 2))
    assert np.all(out <= sizes)
    assert out[0] > out[1] > out[2]
    assert allocate(sizes, 10_000).tolist() == sizes.tolist()  # more than the frame: all
    neyman = allocate(np.array([100, 100]), 40, np.array([100 * 0.1, 100 * 0.4]))
    assert neyman.tolist() == [8, 32]


def test_a_uniform_plan_is_a_permutation_whose_prefixes_are_plans() -> None:
    small, large = draw_uniform(1000, 50, seed=4), draw_uniform(1000, 200, seed=4)
    assert large.index[:50].tolist() == small.index.tolist()
    assert len(set(large.index.tolist())) == 200
    assert np.allclose(large.pi, 0.2) and np.allclose(large.p, 1 / 1000)
    assert draw_uniform(1000, 50, seed=5).index.tolist() != small.index.tolist()


def test_every_prefix_of_a_stratified_plan_keeps_the_allocation() -> None:
    strata = np.repeat(np.arange(4), [400, 300, 200, 100])
    plan = draw_stratified(strata, 100, seed=9)
    assert np.bincount(plan.stratum, minlength=4).tolist() == plan.allocation.tolist()
    assert plan.allocation.tolist() == [40, 30, 20, 10]
    for k in range(1, 101):
        counts = np.bincount(plan.stratum[:k], minlength=4)
        assert np.all(np.abs(counts - k * plan.allocation / 100) <= 1.0 + 1e-9)
    assert np.all(strata[plan.index] == plan.stratum)
    assert np.allclose(plan.pi, plan.allocation[plan.stratum] / np.bincount(strata)[plan.stratum])
    assert len(set(plan.index.tolist())) == 100


def test_a_weighted_plan_gives_every_subject_a_chance() -> None:
    weights = np.array([0.0] * 90 + [10.0] * 10)
    p = weighted_probabilities(weights, floor=0.2)
    assert p.sum() == pytest.approx(1.0)
    assert p.min() == pytest.approx(0.2 / 100)
    assert p.max() == pytest.approx(0.8 / 10 + 0.2 / 100)
    plan = draw_weighted(weights, 500, seed=1, floor=0.2)
    assert plan.with_replacement and len(plan.index) == 500
    share_heavy = float(np.mean(plan.index >= 90))
    assert 0.75 < share_heavy < 0.87  # 0.8 + 10 × 0.002 expected
    assert np.allclose(plan.pi, 1 - (1 - plan.p) ** 500)
    with pytest.raises(ValueError):
        weighted_probabilities(weights, floor=0.0)


# -- stored plans ----------------------------------------------------------------------------


def _conn(path: Path):  # type: ignore[no-untyped-def]
    from store.db.connection import connect

    return connect(path)


def test_the_database_has_the_plan_tables_of_schema_version_3(sample_db: Path) -> None:
    from store.db.schema import SCHEMA_VERSION

    conn = _conn(sample_db)
    assert SCHEMA_VERSION >= 3  # 3: review plans (4: suspicion flags)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert {"plan", "plan_stratum", "plan_frame", "plan_draw"} <= tables


def test_the_same_seed_draws_the_same_plan(sample_db: Path, tmp_path: Path) -> None:
    from store.plans.design import PlanSpec, create_plan, export_rows

    other = tmp_path / "other.db"
    shutil.copy(sample_db, other)
    spec = PlanSpec(60, "stratified", ("dimension", "system"), seed=77, suite=SUITE)
    first = create_plan(_conn(sample_db), spec, "ana")
    second = create_plan(_conn(other), spec, "ben")
    rows_a = [(r["position"], r["target"], r["pi"]) for r in export_rows(_conn(sample_db), first)]
    rows_b = [(r["position"], r["target"], r["pi"]) for r in export_rows(_conn(other), second)]
    assert rows_a == rows_b and len(rows_a) == 60
    assert first.seed == 77 and first.strata_by == ("dimension", "system")
    assert sum(s.draws for s in first.strata) == 60
    labels = {s.label for s in first.strata}
    assert "claim/kestrel" in labels and "ins/atlas-dr" in labels


def test_the_frame_leaves_out_what_humans_decided_already(sample_db: Path) -> None:
    from store.plans.design import PlanSpec, create_plan
    from store.reviewlog.events import ReviewLog

    conn = _conn(sample_db)
    judgments = [
        j
        for (j,) in conn.execute(
            "SELECT j.id FROM judgment j JOIN report r ON r.id = j.report_id "
            "WHERE r.ext_id = 't02-kestrel' AND j.current = 1 ORDER BY j.id LIMIT 5"
        )
    ]
    log = ReviewLog(conn, "ana")
    for jid in judgments:
        log.confirm(jid)
    plan = create_plan(conn, PlanSpec(30, seed=1, suite=SUITE), "ana")
    marks = ",".join("?" * len(judgments))
    decided = {
        s
        for (s,) in conn.execute(
            f"SELECT subject_id FROM judgment WHERE id IN ({marks})", judgments
        )
    }
    framed = {
        s
        for (s,) in conn.execute("SELECT subject_id FROM plan_frame WHERE plan_id = ?", (plan.id,))
    }
    assert not decided & framed
    assert plan.frame == len(framed) == 796 - 5


def test_progress_follows_the_decisions_and_counts_skips(sample_db: Path) -> None:
    from store.plans.design import PlanSpec, create_plan, get_plan, next_item, plan_items
    from store.reviewlog.events import ReviewLog

    conn = _conn(sample_db)
    plan = create_plan(conn, PlanSpec(20, seed=3, suite=SUITE), "ana")
    assert plan.progress.decided == 0 and plan.progress.subjects == 20
    items = plan_items(conn, plan.id)
    log = ReviewLog(conn, "ana")
    for item in (items[0], items[1], items[4]):
        assert item.judgment_id is not None
        log.decide(
            item.judgment_id,
            conn.execute(
                "SELECT coalesce(value, 'correct') FROM judgment WHERE id = ?", (item.judgment_id,)
            ).fetchone()[0],
        )
    again = get_plan(conn, plan.name)
    assert again.progress.decided == 3
    assert again.progress.skipped == 2
    assert again.progress.describe(plan.name) == f"3/20 of plan {plan.name} (2 skipped)"
    following = next_item(conn, plan.id)
    assert following is not None and following.position == items[2].position


def test_a_weighted_plan_by_impact_draws_where_verdicts_move_scores(sample_db: Path) -> None:
    from store.plans.design import PlanSpec, create_plan

    conn = _conn(sample_db)
    plan = create_plan(
        conn, PlanSpec(80, "weighted", weight_by="impact", floor=0.2, seed=2, suite=SUITE), "ana"
    )
    rows = conn.execute(
        "SELECT p, weight, pi FROM plan_draw WHERE plan_id = ?", (plan.id,)
    ).fetchall()
    assert len(rows) == 80
    assert all(p >= 0.2 / plan.frame - 1e-15 for p, _, _ in rows)
    assert sum(1 for _, w, _ in rows if w > 0) > 40  # impact drew most of the draws
    uncertain = create_plan(
        conn, PlanSpec(20, "weighted", weight_by="uncertainty", seed=2, suite=SUITE), "ana"
    )
    assert uncertain.weight_by == "uncertainty"


def test_plans_export_as_a_document_and_as_rows(sample_db: Path) -> None:
    from store.plans.design import PlanSpec, create_plan, export_document, list_plans

    conn = _conn(sample_db)
    plan = create_plan(
        conn,
        PlanSpec(25, "stratified", ("system",), "neyman", seed=8, suite=SUITE, name="spot"),
        "ana",
    )
    assert "Neyman allocation is proportional" in plan.note  # no decisions to learn from
    document = json.loads(json.dumps(export_document(conn, plan)))
    assert document["plan"]["name"] == "spot" and document["plan"]["seed"] == 8
    assert [s["stratum"] for s in document["strata"]] == ["atlas-dr", "juniper", "kestrel"]
    assert len(document["draws"]) == 25
    assert all(d["target"].startswith(f"s:{SUITE}/") for d in document["draws"])
    assert [p.name for p in list_plans(conn)] == ["spot"]


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"budget": 0}, "at least one draw"),
        ({"budget": 5, "by": ("system",)}, "stratified design"),
        ({"budget": 5, "design": "stratified", "by": ("colour",)}, "unknown stratum key"),
        ({"budget": 5, "suite": "nope"}, "no benchmark run"),
        ({"budget": 5, "design": "weighted", "floor": 0.0}, "floor"),
        ({"budget": 5, "frameworks": ("race",)}, "not scored by race"),
    ],
)
def test_bad_plans_are_refused_and_say_why(
    sample_db: Path, spec: dict[str, object], message: str
) -> None:
    from store.plans.design import PlanSpec, create_plan

    spec = {"suite": SUITE, **spec}
    with pytest.raises(InputError, match=message):
        create_plan(_conn(sample_db), PlanSpec(**spec), "ana")  # type: ignore[arg-type]
