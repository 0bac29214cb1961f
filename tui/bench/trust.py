"""`gavel bench`: trust or escalate measured — the agreement the rule guarantees, the share of
verdicts it accepts, and how often the guarantee holds.

Two measuring sticks:

* **simulation** — a synthetic run in memory (the same shape as :mod:`tui.bench.estimates`':
  kinds, pass/fail verdicts, suspicion flags where errors cluster, plus a second judge run on
  part of it that disagrees more often where the judge errs). Reviewers first work down the
  suspicion order (those decisions teach the score), then decide a uniform plan (the
  calibration labels); the rule (:func:`reviewer.trust.rule.calibrate`) is applied to what is
  left. Over many draws of the plan: the share of draws in which the accepted verdicts'
  realised agreement stays at or above ``1 − α``, and the mean share accepted.
* **planted run** — a synthetic DailyReport run with planted judge errors (their list
  written by the generator, :mod:`reviewer.planted`) imported into a database; a uniform plan
  decided with the right values, the rule calibrated and applied through the store
  (:func:`store.trust.rules.calibrate_plan`), and the accepted verdicts checked against the
  planted list.

Printed, not asserted (tests/test_trust_simulation.py asserts).
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt
from rich.console import Console
from rich.table import Table

from reviewer.trust.rule import calibrate
from reviewer.trust.score import Features, scores

Floats = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]
Bools = npt.NDArray[np.bool_]

ALPHA = DELTA = 0.1
KIND_RATE = (0.02, 0.05, 0.10)
PASS_FACTOR, FAIL_FACTOR = 1.6, 0.4
FLAG_SHARE, FLAG_FACTOR = 0.15, 8.0
SECOND_RUN = 0.3
"""Share of subjects a second judge run also judged."""
SECOND_ERRS_WITH = 0.4
"""Chance the second run repeats the first one's error (else it gives the right value)."""
SECOND_NOISE = 0.03
"""Chance the second run errs where the first was right."""
SUSPICION_SHARE = 0.03
"""The top of the suspicion order reviewed before the plan (teaches the score)."""
PLAN_SHARE = 0.10
PLANT = 0.15
"""Chance per eligible verdict and error type that the synthetic run's judge errs."""


@dataclass(frozen=True, slots=True)
class TrustWorld:
    features: Features
    wrong: Bools
    order: Ints
    """Suspicion order: flags first, then a fixed shuffle."""


def trust_world(subjects: int = 20_000, seed: int = 11) -> TrustWorld:
    rng = np.random.default_rng(seed)
    kind = rng.integers(0, len(KIND_RATE), subjects)
    passed = rng.random(subjects) < 0.75
    flag = rng.random(subjects) < FLAG_SHARE
    rate = np.array(KIND_RATE)[kind] * np.where(passed, PASS_FACTOR, FAIL_FACTOR)
    wrong = rng.random(subjects) < np.minimum(0.9, rate * np.where(flag, FLAG_FACTOR, 1.0))
    second = rng.random(subjects) < SECOND_RUN
    same = np.where(
        wrong, rng.random(subjects) < SECOND_ERRS_WITH, rng.random(subjects) >= SECOND_NOISE
    )
    names = ("ins", "claim", "consistency")
    features = Features(
        [names[k] for k in kind.tolist()],
        ["pass" if p else "fail" for p in passed.tolist()],
        flag,
        second.astype(np.int64),
        (second & same).astype(np.int64),
        np.full(subjects, np.nan),
    )
    tie = rng.random(subjects)
    order = np.lexsort((tie, ~flag)).astype(np.int64)
    return TrustWorld(features, wrong, order)


@dataclass(frozen=True, slots=True)
class TrustFigures:
    draws: int
    labels: int
    held: float
    """Share of draws whose accepted verdicts agree at least 1 − α (or none accepted)."""
    accepted: float
    """Mean share of the undecided verdicts accepted."""
    realised: float
    """Mean realised agreement of the accepted verdicts (draws that accepted any)."""
    weak: float
    """Share of draws that accepted nothing."""


def simulate(
    w: TrustWorld,
    draws: int = 400,
    alpha: float = ALPHA,
    delta: float = DELTA,
    plan_share: float = PLAN_SHARE,
) -> TrustFigures:
    """Calibrate on ``draws`` uniform plans of the frame left by the suspicion review and
    check each rule against the truth."""
    n = len(w.wrong)
    learn = w.order[: round(SUSPICION_SHARE * n)]
    score = scores(w.features, learn, w.wrong[learn])
    frame = np.setdiff1d(np.arange(n), learn)
    size = round(plan_share * len(frame))
    held, shares, realised, weak = [], [], [], 0
    for seed in range(draws):
        rng = np.random.default_rng([seed, 17])
        picked = rng.permutation(len(frame))
        plan, rest = frame[picked[:size]], frame[picked[size:]]
        rule = calibrate(score[plan], w.wrong[plan], alpha, delta, bounds=False)
        if rule.threshold is None:
            weak += 1
            held.append(True)
            shares.append(0.0)
            continue
        taken = rest[score[rest] >= rule.threshold]
        agreement = 1.0 - float(w.wrong[taken].mean()) if len(taken) else 1.0
        held.append(agreement >= 1.0 - alpha)
        shares.append(len(taken) / len(rest))
        realised.append(agreement)
    return TrustFigures(
        draws,
        size,
        float(np.mean(held)),
        float(np.mean(shares)),
        float(np.mean(realised)) if realised else float("nan"),
        weak / draws,
    )


@dataclass(frozen=True, slots=True)
class PlantedFigures:
    verdicts: int
    planted: int
    labels: int
    threshold: float | None
    accepted: int
    undecided: int
    realised: float
    """Agreement of the accepted verdicts with the planted truth."""


def planted_run(root: Path, tasks: int = 10, seed: int = 3) -> PlantedFigures:
    """A synthetic DailyReport run with planted errors, a uniform plan decided with the right
    values, the rule calibrated through the store; the accepted verdicts checked."""
    from reviewer.formats.native import iter_records
    from reviewer.frameworks.dailyreport.synthetic import write_synthetic
    from reviewer.frameworks.dailyreport.synthetic_spec import SyntheticSpec
    from reviewer.planted import read_planted_path
    from reviewer.synthetic import planted_path
    from store.db.connection import connect
    from store.imports.loader import import_records
    from store.plans.design import PlanSpec, create_plan, plan_items
    from store.reviewlog.events import ReviewLog
    from store.scores.cache import rebuild_scores
    from store.triage.review_order import resolve
    from store.trust.rules import calibrate_plan

    bundle = root / f"trust-cascade-{seed}"
    spec = SyntheticSpec(
        tasks=tasks, systems=6, seed=seed, words=400, plant=PLANT, second_run=0.3, unreachable=0.08
    )
    write_synthetic(bundle, spec)
    conn = connect(root / f"trust-{seed}.db")
    suite, records = iter_records(bundle)
    import_records(conn, suite, records, bundle.name)
    rebuild_scores(conn)
    planted = read_planted_path(planted_path(bundle))
    right = {sid: p.right for p, sid in resolve(conn, suite.id, planted).items() if sid}
    (verdicts,) = conn.execute("SELECT count(*) FROM judgment WHERE current = 1").fetchone()
    plan = create_plan(conn, PlanSpec(round(PLAN_SHARE * verdicts), seed=seed), "bench")
    log = ReviewLog(conn, "bench")
    for item in plan_items(conn, plan.id):
        if item.judgment_id is None:
            continue
        if item.subject_id in right:
            log.decide(item.judgment_id, right[item.subject_id])
        else:
            log.confirm(item.judgment_id)
    result = calibrate_plan(conn, ALPHA, DELTA, plan.name)
    wrong = sum(1 for sid, _ in result.chosen if sid in right)
    conn.close()
    return PlantedFigures(
        int(verdicts),
        len(right),
        result.calibration.labels,
        result.calibration.threshold,
        result.accepted,
        result.verdicts,
        1.0 - wrong / result.accepted if result.accepted else float("nan"),
    )


@dataclass(frozen=True, slots=True)
class TrustBench:
    simulation: TrustFigures
    planted: PlantedFigures


def trust_figures(root: Path | None, quick: bool = False) -> TrustBench:
    simulation = simulate(trust_world(), draws=100 if quick else 400)
    if root is None:
        with tempfile.TemporaryDirectory(prefix="gavel-trust-") as folder:
            return TrustBench(simulation, planted_run(Path(folder), tasks=6 if quick else 10))
    root.mkdir(parents=True, exist_ok=True)
    for stale in root.glob("trust-*.db*"):
        stale.unlink()
    return TrustBench(simulation, planted_run(root, tasks=6 if quick else 10))


def print_trust(console: Console, figures: TrustBench) -> None:
    """Both measuring sticks, with the issue's targets: guaranteed agreement ≥ 90% (δ = 0.1)
    at ≥ 60% of verdicts accepted, the guarantee holding in ≥ 90% of draws."""
    s, p = figures.simulation, figures.planted
    table = Table(
        title=f"trust or escalate at α = {ALPHA:g}, δ = {DELTA:g}: verdicts accepted without "
        "review, guaranteed agreement ≥ 90%",
        title_justify="left",
        header_style="bold",
    )
    for name in ("run", "gold labels", "accepted", "realised agreement", "guarantee held"):
        table.add_column(name, justify="left" if name == "run" else "right")
    table.add_row(
        f"simulation ({s.draws} plans)",
        f"{s.labels:,}",
        f"{s.accepted:.1%}",
        f"{s.realised:.1%}",
        f"{s.held:.1%} of draws",
    )
    table.add_row(
        f"planted run ({p.verdicts:,} verdicts, {p.planted} errors)",
        f"{p.labels:,}",
        f"{p.accepted / p.undecided:.1%}" if p.undecided else "—",
        f"{p.realised:.1%}" if p.accepted else "—",
        "—",
    )
    console.print(table)
    console.print(
        f"[dim]targets: ≥ 60% accepted (simulation {s.accepted:.1%}), the guarantee held in "
        f"≥ 90% of draws ({s.held:.1%}); {s.weak:.0%} of draws accepted nothing[/dim]"
    )
