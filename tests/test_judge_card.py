"""The judge card: its statistics against scikit-learn and scipy, the coverage of its
intervals by simulation, and the card, its command and its revision proposals on a database."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from reviewer.judge_card.build import Label, Settings, build_card
from reviewer.judge_card.stats import agreement, bias, bias_counts
from reviewer.judge_card.text import card_markdown, card_record
from store.reviewlog.events import ReviewLog
from store.reviews.proposals import accept, proposals
from store.runs.card import run_card
from store.scores.cache import update_scores
from tests.oracles import stats as scipy_stats
from tui.cli import main

YES_NO = ("no", "yes")


def _numbers(code: str) -> float | None:
    return {"no": 0.0, "yes": 1.0, "0": 0.0, "0.5": 0.5, "1": 1.0}.get(code)


def test_kappa_weighted_kappa_and_accuracy_match_the_oracles() -> None:
    sklearn = pytest.importorskip("sklearn.metrics")
    rng = np.random.default_rng(1)
    human = rng.choice(["0", "0.5", "1"], 120).tolist()
    judge = [h if rng.random() < 0.7 else str(rng.choice(["0", "0.5", "1"])) for h in human]
    found = agreement(judge, human, ["0", "0.5", "1"], "ordinal", _numbers, (0.0, 1.0))
    assert found.coefficient == "weighted kappa"
    assert found.value is not None and found.kappa is not None
    assert found.value.estimate == pytest.approx(
        sklearn.cohen_kappa_score(judge, human, weights="quadratic")
    )
    assert found.kappa.estimate == pytest.approx(sklearn.cohen_kappa_score(judge, human))
    assert found.accuracy.estimate == pytest.approx(sklearn.accuracy_score(human, judge))
    ci = scipy_stats.binomtest(found.accuracy.count, found.n).proportion_ci(method="wilson")
    assert (found.accuracy.lower, found.accuracy.upper) == pytest.approx((ci.low, ci.high))
    assert found.confusion is not None
    assert np.array_equal(
        found.confusion.array(),
        sklearn.confusion_matrix(judge, human, labels=["0", "0.5", "1"]),
    )


def test_lenient_and_strict_shares_are_the_conditional_error_rates() -> None:
    judge = ["yes"] * 8 + ["no"] * 2 + ["yes"] * 10
    human = ["no"] * 10 + ["yes"] * 10
    counts = bias_counts([_numbers(j) for j in judge], [_numbers(h) for h in human], (0, 1))
    assert counts == (8, 10, 0, 10)  # judge-yes among human-no; judge-no among human-yes
    found = bias(counts, 0.95)
    assert found.direction == "lenient"
    assert found.lenient.estimate == 0.8 and found.strict.estimate == 0.0


def _draw(rng: np.random.Generator, n: int) -> tuple[list[str], list[str]]:
    """Human yes with p 0.4; the judge copies it with p 0.7, else says yes with p 0.5."""
    human = rng.random(n) < 0.4
    copy = rng.random(n) < 0.7
    judge = np.where(copy, human, rng.random(n) < 0.5)
    return ["yes" if x else "no" for x in judge], ["yes" if x else "no" for x in human]


def _true_kappa() -> float:
    p_h = 0.4
    p_j = 0.7 * p_h + 0.3 * 0.5
    both_yes = 0.7 * p_h + 0.3 * p_h * 0.5
    both_no = 0.7 * (1 - p_h) + 0.3 * (1 - p_h) * 0.5
    observed = both_yes + both_no
    chance = p_h * p_j + (1 - p_h) * (1 - p_j)
    return (observed - chance) / (1 - chance)


def test_kappa_and_accuracy_intervals_cover_near_nominal() -> None:
    rng = np.random.default_rng(20261128)
    truth = _true_kappa()
    true_accuracy = 0.7 + 0.3 * 0.5
    draws, kappa_hits, accuracy_hits = 300, 0, 0
    for seed in range(draws):
        judge, human = _draw(rng, 150)
        found = agreement(
            judge, human, YES_NO, "nominal", _numbers, (0.0, 1.0), n_resamples=300, seed=seed
        )
        assert found.kappa is not None
        low, high = found.kappa.lower, found.kappa.upper
        assert low is not None and high is not None
        kappa_hits += low <= truth <= high
        acc = found.accuracy
        assert acc.lower is not None and acc.upper is not None
        accuracy_hits += acc.lower <= true_accuracy <= acc.upper
    assert 0.90 <= kappa_hits / draws <= 0.985
    assert 0.91 <= accuracy_hits / draws <= 0.985


def test_few_labels_give_no_coefficient_interval_and_are_never_flagged() -> None:
    labels = [
        Label("drb_grr", "yes", "no", "grr", "grr-1", "Is it clear?", "t", f"r{i}")
        for i in range(5)
    ]
    card = build_card("run", "m", False, labels, settings=Settings(threshold=0.4))
    (item,) = card.items
    assert item.stats.too_few and item.stats.value is not None
    assert item.stats.value.lower is None and not item.below_threshold
    assert "too few labels" in card_markdown(card)


def _labels() -> list[Label]:
    """A good item (the judge agrees) and a bad one (it says yes whatever the human says),
    40 labels each, the bad one pooled over two tasks."""
    rng = np.random.default_rng(5)
    out = []
    for i in range(40):
        human = "yes" if rng.random() < 0.5 else "no"
        out.append(Label("drb_grr", human, human, "grr", "grr-1", "Is it clear?", "t1", f"a{i}"))
        human = "yes" if rng.random() < 0.5 else "no"
        out.append(
            Label(
                "drb_grr",
                "yes" if rng.random() < 0.9 else "no",
                human,
                "grr",
                "grr-9",
                "Does it use visuals?",
                f"t{1 + i % 2}",
                f"b{i}",
                reviewer="ana",
                rationale="no table in the report",
            )
        )
    return out


def test_worst_items_come_first_and_fall_below_the_threshold() -> None:
    card = build_card("run", "m", False, _labels())
    assert [r.item for r in card.items] == ["grr-9", "grr-1"]
    bad, good = card.items
    assert bad.below_threshold and not good.below_threshold
    assert bad.stats.bias.direction == "lenient"
    assert bad.criteria == (("t1", "grr-9"), ("t2", "grr-9"))
    assert all(e.judge != e.human and e.rationale for e in bad.examples)
    record = card_record(card)
    assert record["below_threshold"] == ["grr-9"]
    json.dumps(record)  # plain data
    assert card.benchmarks[0].stats.n == 80


# -- on a database -------------------------------------------------------------------------------


def _decide_all(conn: sqlite3.Connection, run: str, flip: str) -> None:
    """Decide every verdict of ``run``: agree, except that every verdict on criterion
    ``flip`` is overturned."""
    log = ReviewLog(conn, "ana")
    rows = conn.execute(
        """SELECT j.id, j.value, c.ext_id, j.report_id FROM judgment j
           JOIN judge_run r ON r.id = j.run_id JOIN criterion c ON c.id = j.criterion_id
           WHERE r.ext_id = ? AND j.kind = 'drb_grr'""",
        (run,),
    ).fetchall()
    for jid, value, criterion, _ in rows:
        human = {"yes": "no", "no": "yes"}[value] if criterion == flip else value
        log.decide(jid, human, "no chart anywhere" if human != value else "right")
    update_scores(conn, sorted({r[3] for r in rows}))


def test_runs_card_on_the_sample_and_its_revision_proposals(
    sample_db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from store.db.connection import connect

    conn = connect(sample_db)
    empty = run_card(conn, "judge-sample-4o")
    assert empty.labels == 0 and empty.notes  # says why it has nothing to show
    _decide_all(conn, "judge-sample-4o", "grr-37")
    card = run_card(conn, "judge-sample-4o", Settings(min_labels=4))
    assert card.labels == 288 and card.kinds[0].kind == "drb_grr"
    args = ["runs", "card", "judge-sample-4o", "--db", str(sample_db), "--min-labels", "4"]
    assert main([*args, "--format", "json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["items"][0]["item"] == "grr-37" and record["below_threshold"] == ["grr-37"]
    out = sample_db.parent / "card.md"
    assert main([*args, "--format", "markdown", "-o", str(out)]) == 0
    assert "## Per rubric item (worst first)" in out.read_text(encoding="utf-8")
    assert main([*args, "--propose", "--reviewer", "ana"]) == 0
    assert main([*args, "--propose", "--reviewer", "ana"]) == 0  # idempotent
    err = capsys.readouterr().err
    assert "1 revise_item proposal(s) recorded" in err and "0 revise_item" in err
    (proposal,) = [p for p in proposals(conn) if p.kind == "revise_item"]
    assert proposal.target == "criterion:grr-37" and proposal.payload["examples"]
    assert proposal.payload["examples"][0]["rationale"] == "no chart anywhere"
    before = conn.execute("SELECT scope, metric, variant, value FROM score").fetchall()
    accept(conn, "maria", proposal.uuid, "reword it")
    after = conn.execute("SELECT scope, metric, variant, value FROM score").fetchall()
    assert sorted(before) == sorted(after)  # accepting a revision changes no score
    assert main(["proposals", "--db", str(sample_db), "--kind", "revise_item"]) == 0
    assert "revise_item" in capsys.readouterr().out
    assert main(["export", "gt-expansions", "--db", str(sample_db)]) == 0
    exported = capsys.readouterr().out
    assert '"under_revision": 1' in exported or '"under_revision":1' in exported


def test_activation_preview_shows_the_card(
    sample_db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from store.db.connection import connect

    _decide_all(connect(sample_db), "judge-sample-4o", "grr-37")
    args = ["runs", "activate", "judge-sample-4o", "--preview", "--db", str(sample_db)]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "judge card of judge-sample-4o" in out and "worst rubric items" in out
    assert main([*args, "--format", "json"]) == 0
    (record,) = json.loads(capsys.readouterr().out)
    assert record["card"]["labels"] == 288


def test_the_migration_keeps_proposals_and_admits_revisions() -> None:
    from store.db.schema import _REVISE_ITEM, MIGRATIONS, migrate

    before = MIGRATIONS.index(_REVISE_ITEM)
    conn = sqlite3.connect(":memory:")
    for version, step in enumerate(MIGRATIONS[:before]):
        if callable(step):
            step(conn)
        else:
            for statement in step:
                conn.execute(statement)
        conn.execute(f"PRAGMA user_version = {version + 1}")
    row = (
        "u1",
        1,
        1,
        None,
        "cascade",
        "new_rubric",
        None,
        "{}",
        "x",
        None,
        None,
        "ana",
        "r",
        None,
        "2026-11-28",
    )
    insert = (
        "INSERT INTO proposal (uuid, suite_id, task_id, report_id, framework, kind, "
        "target, payload, normalized, span_start, span_end, reviewer, rationale, duplicate_of, "
        "created_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"
    )
    conn.execute(insert, row)
    with pytest.raises(sqlite3.IntegrityError):
        conn.execute(insert, ("u2", *row[1:5], "revise_item", *row[6:]))
    assert migrate(conn) == len(MIGRATIONS) - before
    assert conn.execute("SELECT uuid, kind FROM proposal").fetchall() == [("u1", "new_rubric")]
    conn.execute(insert, ("u2", *row[1:5], "revise_item", *row[6:]))
    with pytest.raises(sqlite3.IntegrityError):
        conn.execute(insert, ("u3", *row[1:5], "bogus", *row[6:]))
    assert conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = 'proposal_task'"
    ).fetchone()


def test_the_card_bootstrap_equals_the_package_bootstrap() -> None:
    """All three coefficients from one set of resampled tables: the same intervals as
    ``bootstrap_table_ci`` gives each, resample for resample."""
    from reviewer.agreement import bootstrap_table_ci, cohen_kappa_from_table, gwet_ac1_from_table

    rng = np.random.default_rng(9)
    labels = ["0", "0.5", "1"]
    human = rng.choice(labels, 90).tolist()
    judge = [h if rng.random() < 0.6 else str(rng.choice(labels)) for h in human]
    found = agreement(
        judge, human, labels, "ordinal", _numbers, (0.0, 1.0), n_resamples=400, seed=4
    )
    for interval, statistic in (
        (found.kappa, cohen_kappa_from_table),
        (found.value, lambda t: cohen_kappa_from_table(t, "quadratic")),
        (found.ac1, gwet_ac1_from_table),
    ):
        reference = bootstrap_table_ci(statistic, judge, human, labels, 400, 0.95, 4)
        assert interval is not None
        assert (interval.lower, interval.upper) == pytest.approx((reference.lower, reference.upper))
        assert interval.estimate == pytest.approx(reference.estimate)
