"""Review plans in the database: drawing one, listing them, their progress, the next subject to
review, and their export.

A plan is drawn over a *frame*: every judged subject of one benchmark run (of the chosen
frameworks) that no human has decided yet — what is already decided is known and needs no
estimate. The frame, the strata, and the draws with their probabilities are stored, so that an
estimate never has to redraw anything and the plan can be exported as it was made. The draws
are pure functions of the frame (in subject-id order) and the seed
(:mod:`reviewer.estimates.designs`).
"""

from __future__ import annotations

import json
import secrets
import sqlite3
from collections import defaultdict
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from reviewer.errors import InputError
from reviewer.estimates.active import (
    ACTIVE_FLOOR,
    DEFAULT_SHARES,
    PRIOR_FLAG_FACTOR,
    inclusion,
    learned_rates,
)
from reviewer.estimates.clusters import draw_reports
from reviewer.estimates.designs import (
    ALLOCATIONS,
    DEFAULT_FLOOR,
    Allocation,
    Design,
    Draws,
    draw_stratified,
    draw_uniform,
    draw_weighted,
)
from reviewer.estimates.weights import normalised_impacts, uncertainty, verdict_impacts
from reviewer.framework import Framework
from reviewer.inputs import ReportInput
from reviewer.registry import frameworks, get_kind
from store.sqlite.tx import now_iso, transaction

STRATA_KEYS = ("framework", "dimension", "system")
WeightBy = Literal["impact", "uncertainty"]
WEIGHT_BY: tuple[WeightBy, ...] = ("impact", "uncertainty")
PlanDesign = Literal["uniform", "stratified", "weighted", "active", "reports"]
PLAN_DESIGNS: tuple[PlanDesign, ...] = ("uniform", "stratified", "weighted", "active", "reports")
ACTIVE = "active"
"""An active plan is kept as a weighted design weighted by "active" (the schema's designs
predate it): Poisson batches on learnt error rates (:mod:`reviewer.estimates.active`)."""
REPORTS = "reports"
"""A report plan is kept as a design stratified by system with the allocation "reports": whole
reports drawn by system, every frame subject of each (:mod:`reviewer.estimates.clusters`)."""


@dataclass(frozen=True, slots=True)
class PlanSpec:
    budget: int
    design: PlanDesign = "uniform"
    by: tuple[str, ...] = ()
    allocation: Allocation = "proportional"
    weight_by: WeightBy = "impact"
    floor: float = DEFAULT_FLOOR
    seed: int | None = None
    suite: str | None = None
    frameworks: tuple[str, ...] = ()
    name: str | None = None


@dataclass(frozen=True, slots=True)
class Stratum:
    index: int
    label: str
    size: int
    draws: int
    spread: float | None


@dataclass(frozen=True, slots=True)
class PlanProgress:
    draws: int
    subjects: int
    decided: int
    """Subjects of the plan a human has decided (conflicts are not decided)."""
    decided_draws: int
    skipped: int
    """Undecided subjects that come before a decided one in the plan's order."""

    def describe(self, name: str) -> str:
        text = f"{self.decided}/{self.subjects} of plan {name}"
        if self.skipped:
            text += f" ({self.skipped} skipped)"
        return text


@dataclass(frozen=True, slots=True)
class Plan:
    id: int
    name: str
    suite: str
    suite_id: int
    design: Design
    strata_by: tuple[str, ...]
    allocation: str | None
    weight_by: str | None
    floor: float | None
    budget: int
    seed: int
    frameworks: tuple[str, ...]
    frame: int
    created_at: str
    created_by: str
    note: str
    progress: PlanProgress
    strata: tuple[Stratum, ...] = field(default=())

    @property
    def active(self) -> bool:
        return self.design == "weighted" and self.weight_by == ACTIVE

    @property
    def reports(self) -> bool:
        """Whole reports are the sampling unit (a report plan)."""
        return self.design == "stratified" and self.allocation == REPORTS

    @property
    def shown_design(self) -> PlanDesign:
        """The design as it was asked for: the schema keeps active and report plans as
        weighted and stratified ones, which is not what a reviewer chose."""
        if self.active:
            return "active"
        if self.reports:
            return "reports"
        return self.design

    @property
    def with_replacement(self) -> bool:
        return self.design == "weighted" and not self.active

    def summary(self) -> str:
        what: str = self.design
        if self.reports:
            what = "reports (whole reports, by system)"
        elif self.design == "stratified":
            what += f" by {','.join(self.strata_by)} ({self.allocation})"
        elif self.active:
            what = f"active (batches on learnt error rates), floor {self.floor:g}"
        elif self.design == "weighted":
            what += f" by {self.weight_by}, floor {self.floor:g}"
        return (
            f"plan {self.name}: {what}, {self.budget} draws of {self.frame:,} subjects "
            f"({self.suite}), seed {self.seed}"
        )


@dataclass(frozen=True, slots=True)
class PlanItem:
    """One subject of a plan, as the review screen needs it."""

    position: int
    subject_id: int
    report_id: int
    judgment_id: int | None
    kind: str
    decided: bool


@dataclass(slots=True)
class Units:
    """The subjects of a run, column by column, in subject-id order."""

    subject: list[int] = field(default_factory=list)
    report: list[int] = field(default_factory=list)
    system: list[str] = field(default_factory=list)
    kind: list[str] = field(default_factory=list)
    framework: list[str] = field(default_factory=list)
    dimension: list[str] = field(default_factory=list)
    judge: list[str | None] = field(default_factory=list)
    human: list[str | None] = field(default_factory=list)
    """The standing human value, None while undecided."""

    def label(self, i: int, by: Sequence[str]) -> str:
        parts = {
            "framework": self.framework[i],
            "dimension": self.dimension[i],
            "system": self.system[i],
        }
        return "/".join(parts[key] for key in by) if by else "all"


def suite_row(conn: sqlite3.Connection, suite: str | None) -> tuple[int, str, tuple[str, ...]]:
    """(id, ext id, frameworks) of the named suite, or of the first one imported."""
    rows = conn.execute("SELECT id, ext_id, frameworks FROM suite ORDER BY id").fetchall()
    if not rows:
        raise InputError("database", "no benchmark run imported: nothing to plan")
    for sid, ext, fws in rows:
        if suite is None or suite in (ext, str(sid)):
            return int(sid), str(ext), tuple(json.loads(fws))
    known = ", ".join(str(r[1]) for r in rows)
    raise InputError("--suite", f"no benchmark run {suite!r} (known: {known})")


_UNITS_SQL = """
    SELECT sj.id, sj.report_id, y.ext_id, sj.kind, coalesce(c.dimension, sj.kind), j.value,
           CASE WHEN d.status IS NULL OR d.status = 'conflict' THEN NULL ELSE d.value END,
           d.status IS NOT NULL AND d.status != 'conflict'
    FROM subject sj
    JOIN report r ON r.id = sj.report_id
    JOIN system y ON y.id = r.system_id
    JOIN judgment j ON j.subject_id = sj.id AND j.current = 1
    LEFT JOIN criterion c ON c.id = j.criterion_id
    LEFT JOIN decision d ON d.subject_id = sj.id
    WHERE y.suite_id = ? AND y.is_reference = 0
    ORDER BY sj.id
"""


def run_units(
    conn: sqlite3.Connection, suite_id: int, names: Sequence[str]
) -> tuple[Units, list[bool]]:
    """Every judged subject of the run's frameworks ``names``, and whether each is decided."""
    framework_of: dict[str, str | None] = {}
    wanted = set(names)
    units, done = Units(), []
    # Streamed into columns, each repeated text kept once: a list of rows transposed
    # afterwards would hold a string object per cell of every subject at once.
    shared: dict[str, str] = {}

    def once(text: str) -> str:
        return shared.setdefault(text, text)

    for row in conn.execute(_UNITS_SQL, (suite_id,)):
        kind = row[3]
        if kind not in framework_of:
            verdict_kind = get_kind(kind)
            framework_of[kind] = (
                verdict_kind.framework
                if verdict_kind is not None and verdict_kind.framework in wanted
                else None
            )
        framework = framework_of[kind]
        if framework is None:
            continue
        units.subject.append(row[0])
        units.report.append(row[1])
        units.system.append(once(row[2]))
        units.kind.append(once(kind))
        units.dimension.append(once(row[4]))
        units.judge.append(None if row[5] is None else once(row[5]))
        units.human.append(None if row[6] is None else once(row[6]))
        units.framework.append(framework)
        done.append(bool(row[7]))
    return units, done


def _disagrees(judge: str | None, human: str | None) -> bool:
    return human is not None and human != judge


def _spreads(
    units: Units, decided: list[bool], by: Sequence[str], labels: list[str]
) -> tuple[list[float], bool]:
    """Each stratum's expected spread of judge errors, sqrt(p(1 − p)) with p the
    Laplace-smoothed share of decided subjects (same stratum key) the humans overruled;
    whether any decision informed it."""
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for i, is_decided in enumerate(decided):
        if is_decided:
            cell = counts[units.label(i, by)]
            cell[0] += 1
            cell[1] += _disagrees(units.judge[i], units.human[i])
    out = []
    for label in labels:
        n, k = counts.get(label, [0, 0])
        p = uncertainty(k, n)
        out.append(float(np.sqrt(p * (1 - p))))
    return out, any(decided)


def _uncertainty_weights(units: Units, decided: list[bool], frame: list[int]) -> list[float]:
    counts: dict[tuple[str, str | None], list[int]] = defaultdict(lambda: [0, 0])
    for i, is_decided in enumerate(decided):
        if is_decided:
            cell = counts[(units.kind[i], units.judge[i])]
            cell[0] += 1
            cell[1] += _disagrees(units.judge[i], units.human[i])
    out = []
    for i in frame:
        if units.judge[i] is None:
            out.append(1.0)
            continue
        n, k = counts.get((units.kind[i], units.judge[i]), [0, 0])
        out.append(uncertainty(k, n))
    return out


def _impact_weights(conn: sqlite3.Connection, units: Units, frame: list[int]) -> list[float]:
    """Each frame subject's largest change of its report's headline metrics over the values
    its verdict could take (rescoring its report), metrics normalised to their mean change."""
    from store.scores.cache import load_options
    from store.scores.inputs import load_inputs

    registry = frameworks()
    options = load_options(conn)
    wanted = {units.subject[i] for i in frame}
    names = {units.framework[i] for i in frame}
    reports = sorted({units.report[i] for i in frame})
    per_metric: dict[str, dict[int, list[float]]] = defaultdict(dict)
    for start in range(0, len(reports), 200):
        for report in load_inputs(conn, reports[start : start + 200]).values():
            for name in names:
                per_metric[name].update(
                    _report_impacts(registry[name], report, options[name], wanted)
                )
    weights: dict[int, float] = {}
    for by_subject in per_metric.values():
        subjects = list(by_subject)
        impacts = normalised_impacts([by_subject[s] for s in subjects])
        weights.update(zip(subjects, impacts, strict=True))
    return [weights.get(units.subject[i], 0.0) for i in frame]


def _report_impacts(
    fw: Framework, report: ReportInput, options: Mapping[str, str], wanted: set[int]
) -> dict[int, list[float]]:
    """Subject -> how far each headline metric of the report moves over the values its
    verdict could take, for the report's verdicts on ``wanted`` subjects."""
    heads = [m.name for m in fw.metrics if m.headline]
    out: dict[int, list[float]] = {}
    for index, changes in verdict_impacts(fw, report, options, heads).items():
        subject = report.verdicts[index].subject
        if subject in wanted:
            out[int(subject)] = changes
    return out


def create_plan(conn: sqlite3.Connection, spec: PlanSpec, reviewer: str) -> Plan:
    """Draw a plan and store it (frame, strata, draws) in one transaction."""
    _check_spec(spec)
    suite_id, suite, names = _planned_frameworks(conn, spec)
    name = spec.name or _next_name(conn)
    if conn.execute("SELECT 1 FROM plan WHERE name = ?", (name,)).fetchone():
        raise InputError("--name", f"a plan named {name!r} exists already")
    units, decided = run_units(conn, suite_id, names)
    frame = [i for i, is_decided in enumerate(decided) if not is_decided]
    if not frame:
        raise InputError(
            "frame", f"every judged subject of {suite} is decided already: nothing left to sample"
        )
    seed = spec.seed if spec.seed is not None else secrets.randbelow(2**31)
    drawn = _draw(conn, spec, units, decided, frame, seed)
    with transaction(conn):
        cursor = conn.execute(
            """INSERT INTO plan (name, suite_id, design, strata, allocation, weight_by, floor,
                                 budget, seed, frameworks, frame, created_at, created_by, note)
               VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)""",
            (
                name,
                suite_id,
                _stored_design(spec),
                json.dumps(list(drawn.by)),
                *_design_options(spec),
                spec.budget if spec.design == ACTIVE else len(drawn.draws.index),
                seed,
                json.dumps(list(names)),
                len(frame),
                now_iso(),
                reviewer,
                drawn.note,
            ),
        )
        _store_draws(conn, int(cursor.lastrowid or 0), spec, units, frame, drawn)
    return get_plan(conn, name)


def _stored_design(spec: PlanSpec) -> str:
    """The design as the schema knows it: an active plan is weighted, a report plan
    stratified (by system)."""
    if spec.design == ACTIVE:
        return "weighted"
    if spec.design == REPORTS:
        return "stratified"
    return spec.design


def _design_options(spec: PlanSpec) -> tuple[str | None, str | None, float | None]:
    """(allocation, weight_by, floor) as the plan keeps them: each only for its design."""
    if spec.design == REPORTS:
        return REPORTS, None, None
    if spec.design == "stratified":
        return spec.allocation, None, None
    if spec.design == "weighted":
        return None, spec.weight_by, spec.floor
    if spec.design == ACTIVE:
        return None, ACTIVE, ACTIVE_FLOOR
    return None, None, None


def _check_spec(spec: PlanSpec) -> None:
    """Refuse a plan the designs cannot draw, naming the option at fault."""
    if spec.design not in PLAN_DESIGNS:
        raise InputError("--design", f"must be one of {', '.join(PLAN_DESIGNS)}")
    if spec.budget < 1:
        raise InputError("--budget", "a plan needs at least one draw")
    _check_strata(spec)
    if spec.allocation not in ALLOCATIONS:
        raise InputError("--allocation", f"must be one of {', '.join(ALLOCATIONS)}")
    _check_weighting(spec)


def _check_strata(spec: PlanSpec) -> None:
    unknown = [key for key in spec.by if key not in STRATA_KEYS]
    if unknown:
        raise InputError(
            "--by", f"unknown stratum key {unknown[0]!r} (use {', '.join(STRATA_KEYS)})"
        )
    if spec.design != "stratified" and spec.by:
        raise InputError("--by", "strata belong to the stratified design (--design stratified)")


def _check_weighting(spec: PlanSpec) -> None:
    if spec.weight_by not in WEIGHT_BY:
        raise InputError("--weight", f"must be one of {', '.join(WEIGHT_BY)}")
    if spec.design == "weighted" and not 0.0 < spec.floor <= 1.0:
        raise InputError(
            "--floor",
            "the uniform floor must be in (0, 1]: every subject needs a chance to be drawn",
        )


def _planned_frameworks(
    conn: sqlite3.Connection, spec: PlanSpec
) -> tuple[int, str, tuple[str, ...]]:
    """(suite id, suite, frameworks): the run's, or those named, which it must be scored by."""
    suite_id, suite, suite_frameworks = suite_row(conn, spec.suite)
    names = spec.frameworks or tuple(f for f in suite_frameworks if f in frameworks())
    missing = [f for f in names if f not in suite_frameworks]
    if missing:
        raise InputError(
            "--framework",
            f"{suite} is not scored by {missing[0]} (it has {', '.join(suite_frameworks)})",
        )
    return suite_id, suite, names


@dataclass(frozen=True, slots=True)
class _Drawn:
    """A design's draw over the frame: the strata (by the keys ``by``; one stratum unless
    stratified), each stratum's spread (stratified), each frame subject's weight (weighted),
    the draws and a note for the plan."""

    by: tuple[str, ...]
    labels: list[str]
    strata: npt.NDArray[np.int64]
    spreads: list[float] | None
    weights: list[float]
    draws: Draws
    note: str


def _draw(
    conn: sqlite3.Connection,
    spec: PlanSpec,
    units: Units,
    decided: list[bool],
    frame: list[int],
    seed: int,
) -> _Drawn:
    """The plan's draws by its design."""
    by = spec.by if spec.design == "stratified" else ("system",) if spec.design == REPORTS else ()
    labels = sorted({units.label(i, by) for i in frame})
    stratum_of = {label: h for h, label in enumerate(labels)}
    strata = np.array([stratum_of[units.label(i, by)] for i in frame], dtype=np.int64)
    if spec.design == "uniform":
        draws = draw_uniform(len(frame), spec.budget, seed)
        return _Drawn(by, labels, strata, None, [0.0] * len(frame), draws, "")
    if spec.design == ACTIVE:
        draws = _active_batch(conn, units, frame, set(), spec.budget, 0, seed)
        return _Drawn(by, labels, strata, None, [0.0] * len(frame), draws, "")
    if spec.design == "stratified":
        return _draw_strata(spec, units, decided, frame, seed, by, labels, strata)
    if spec.design == REPORTS:
        return _draw_reports(spec, units, frame, seed, by, labels, strata)
    weights = _weights(conn, spec, units, decided, frame)
    draws = draw_weighted(np.array(weights, dtype=np.float64), spec.budget, seed, spec.floor)
    return _Drawn(by, labels, strata, None, weights, draws, "")


def _draw_strata(
    spec: PlanSpec,
    units: Units,
    decided: list[bool],
    frame: list[int],
    seed: int,
    by: tuple[str, ...],
    labels: list[str],
    strata: npt.NDArray[np.int64],
) -> _Drawn:
    """A stratified plan's draws: allocation by size, or Neyman's on the spreads seen."""
    spreads, informed = _spreads(units, decided, by, labels)
    draws = draw_stratified(
        strata,
        spec.budget,
        seed,
        spec.allocation,
        np.array(spreads) if spec.allocation == "neyman" else None,
    )
    note = ""
    if spec.allocation == "neyman" and not informed:
        note = (
            "no decisions yet to estimate each stratum's spread: Neyman allocation "
            "is proportional until there are"
        )
    return _Drawn(by, labels, strata, spreads, [0.0] * len(frame), draws, note)


def _draw_reports(
    spec: PlanSpec,
    units: Units,
    frame: list[int],
    seed: int,
    by: tuple[str, ...],
    labels: list[str],
    strata: npt.NDArray[np.int64],
) -> _Drawn:
    """A report plan's draws: ``budget`` reports (of those holding a frame subject), each
    system its proportional share, every frame subject of each drawn report in turn; each
    draw's probabilities are its report's (``1/N_h`` a draw, ``n_h/N_h`` in the plan)."""
    report_of = np.array([units.report[i] for i in frame], dtype=np.int64)
    reports, first = np.unique(report_of, return_index=True)
    report_stratum = strata[first]
    order, _ = draw_reports(report_stratum, spec.budget, seed)
    sizes = np.bincount(report_stratum, minlength=len(labels))
    allocation = np.bincount(report_stratum[order], minlength=len(labels))
    members = {int(r): np.flatnonzero(report_of == r) for r in reports[order].tolist()}
    index = np.concatenate([members[int(r)] for r in reports[order].tolist()]).astype(np.int64)
    owner = strata[index]
    size_of = sizes[owner].astype(np.float64)
    draws = Draws(
        index, owner, 1.0 / size_of, allocation[owner] / size_of, allocation.astype(np.int64), False
    )
    note = f"{len(order)} whole reports of {len(reports)}, by system"
    return _Drawn(by, labels, strata, None, [0.0] * len(frame), draws, note)


def _weights(
    conn: sqlite3.Connection, spec: PlanSpec, units: Units, decided: list[bool], frame: list[int]
) -> list[float]:
    """Each frame subject's weight in a weighted draw: its impact on the headline metrics, or
    how uncertain its judge value is."""
    if spec.weight_by == "impact":
        return _impact_weights(conn, units, frame)
    return _uncertainty_weights(units, decided, frame)


def _store_draws(
    conn: sqlite3.Connection,
    plan_id: int,
    spec: PlanSpec,
    units: Units,
    frame: list[int],
    drawn: _Drawn,
) -> None:
    """The plan's strata, frame and draws, in the caller's transaction."""
    draws, strata = drawn.draws, drawn.strata
    sizes = np.bincount(strata, minlength=len(drawn.labels))
    conn.executemany(
        "INSERT INTO plan_stratum VALUES (?,?,?,?,?,?)",
        [
            (
                plan_id,
                h,
                label,
                int(sizes[h]),
                _stratum_draws(spec, draws, h),
                drawn.spreads[h] if drawn.spreads is not None else None,
            )
            for h, label in enumerate(drawn.labels)
        ],
    )
    conn.executemany(
        "INSERT INTO plan_frame VALUES (?,?,?)",
        ((plan_id, units.subject[i], int(strata[k])) for k, i in enumerate(frame)),
    )
    conn.executemany(
        "INSERT INTO plan_draw VALUES (?,?,?,?,?,?,?)",
        [
            (
                plan_id,
                position,
                units.subject[frame[int(k)]],
                int(strata[int(k)]),
                float(draws.p[position]),
                float(draws.pi[position]),
                float(drawn.weights[int(k)]),
            )
            for position, k in enumerate(draws.index.tolist())
        ],
    )


def _stratum_draws(spec: PlanSpec, draws: Draws, stratum: int) -> int:
    """Draws allotted to a stratum: a stratified design's allocation; else every draw, in
    the one stratum there is."""
    if spec.design == "stratified":
        return int(draws.allocation[stratum])
    if spec.design == REPORTS:
        return int((draws.stratum == stratum).sum())
    return len(draws.index) if stratum == 0 else 0


def _flagged(conn: sqlite3.Connection) -> set[int]:
    """Subjects carrying a suspicion flag."""
    return {int(sid) for (sid,) in conn.execute("SELECT DISTINCT subject_id FROM suspicion")}


def _active_cells(
    conn: sqlite3.Connection, units: Units, frame: Sequence[int], plan_subjects: set[int]
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]:
    """Each frame subject's (kind, judge value, flag) cell and its prior error rate: the
    overruled share of decisions outside the plan with the same kind and value
    (Laplace-smoothed), times :data:`PRIOR_FLAG_FACTOR` where flagged."""
    flagged = _flagged(conn)
    counts: dict[tuple[str, str | None], list[int]] = defaultdict(lambda: [0, 0])
    for i, human in enumerate(units.human):
        if human is not None and units.subject[i] not in plan_subjects:
            cell = counts[(units.kind[i], units.judge[i])]
            cell[0] += 1
            cell[1] += _disagrees(units.judge[i], human)
    ids: dict[tuple[str, str | None, bool], int] = {}
    cell_of = np.empty(len(frame), dtype=np.int64)
    prior = np.empty(len(frame))
    for k, i in enumerate(frame):
        flag = units.subject[i] in flagged
        key = (units.kind[i], units.judge[i], flag)
        cell_of[k] = ids.setdefault(key, len(ids))
        n, wrong = counts.get((units.kind[i], units.judge[i]), [0, 0])
        prior[k] = min(0.9, uncertainty(wrong, n) * (PRIOR_FLAG_FACTOR if flag else 1.0))
    return cell_of, prior


def _active_batch(
    conn: sqlite3.Connection,
    units: Units,
    frame: Sequence[int],
    drawn: set[int],
    budget: int,
    batch: int,
    seed: int,
) -> Draws:
    """Batch ``batch`` of an active plan: Poisson sampling of the frame subjects not drawn
    yet (``drawn``: subject ids), probabilities from the error rates learnt on the plan's
    decisions so far; in a random order (so any prefix of the batch is a random part of
    it)."""
    cell, prior = _active_cells(conn, units, frame, drawn)
    position = {units.subject[i]: k for k, i in enumerate(frame)}
    decided = np.array(
        [position[s] for s in drawn if units.human[_unit_of(units, s)] is not None],
        dtype=np.int64,
    )
    overruled = np.array(
        [_disagrees(units.judge[frame[k]], units.human[frame[k]]) for k in decided.tolist()],
        dtype=bool,
    )
    rates = learned_rates(cell, prior, decided, overruled)
    remaining = np.array([k for k, i in enumerate(frame) if units.subject[i] not in drawn])
    rng = np.random.default_rng([seed, batch])
    size = round(DEFAULT_SHARES[batch] * budget)
    pi = inclusion(rates[remaining], size) if len(remaining) else np.zeros(0)
    taken = rng.random(len(remaining)) < pi
    order = rng.permutation(int(taken.sum()))
    index = remaining[taken][order].astype(np.int64)
    chosen = pi[taken][order]
    return Draws(
        index,
        np.zeros(len(index), dtype=np.int64),
        chosen,
        chosen,
        np.array([len(index)], dtype=np.int64),
        False,
    )


def _unit_of(units: Units, subject: int) -> int:
    """The position of ``subject`` in ``units`` (subject-id order)."""
    from bisect import bisect_left

    return bisect_left(units.subject, subject)


def extend_active(conn: sqlite3.Connection, plan: Plan) -> int:
    """Draw an active plan's next batch once every subject drawn so far is decided (the
    batch's probabilities learn from those decisions); returns the draws added (0 when the
    plan is not active, still has undecided subjects, or has drawn every batch)."""
    if not plan.active:
        return 0
    rows = conn.execute(
        """SELECT pd.subject_id, pd.weight, d.status IS NOT NULL AND d.status != 'conflict'
           FROM plan_draw pd LEFT JOIN decision d ON d.subject_id = pd.subject_id
           WHERE pd.plan_id = ?""",
        (plan.id,),
    ).fetchall()
    batches = _batches_if_decided(rows)
    if batches is None:
        return 0
    units, _ = run_units(conn, plan.suite_id, plan.frameworks)
    in_frame = {
        int(s)
        for (s,) in conn.execute("SELECT subject_id FROM plan_frame WHERE plan_id = ?", (plan.id,))
    }
    frame = [i for i, s in enumerate(units.subject) if s in in_frame]
    draws = _active_batch(
        conn, units, frame, {int(s) for s, _, _ in rows}, plan.budget, batches, plan.seed
    )
    start = len(rows)
    with transaction(conn):
        conn.executemany(
            "INSERT INTO plan_draw VALUES (?,?,?,?,?,?,?)",
            [
                (plan.id, start + n, units.subject[frame[int(k)]], 0, float(p), float(p), batches)
                for n, (k, p) in enumerate(zip(draws.index.tolist(), draws.p.tolist(), strict=True))
            ],
        )
    return len(draws.index)


def active_rates(
    conn: sqlite3.Connection, plan: Plan, subjects: Sequence[int]
) -> npt.NDArray[np.float64]:
    """Each of ``subjects``' (drawn by the active ``plan``) predicted error rate, learnt from
    every decision on the plan's draws and shrunk towards its cell's prior, as the next
    batch would have drawn it: the estimate's variance rests on these
    (:func:`reviewer.estimates.active.smoothed_variance`)."""
    units, _ = run_units(conn, plan.suite_id, plan.frameworks)
    in_frame = _plan_subjects(conn, "plan_frame", plan.id)
    drawn = _plan_subjects(conn, "plan_draw", plan.id)
    frame = [i for i, s in enumerate(units.subject) if s in in_frame]
    cell, prior = _active_cells(conn, units, frame, drawn)
    position = {units.subject[i]: k for k, i in enumerate(frame)}
    decided, overruled = _decided_draws(units, frame, position, drawn)
    rates = learned_rates(cell, prior, decided, overruled)
    return np.array([rates[position[s]] if s in position else 0.0 for s in subjects])


def _plan_subjects(conn: sqlite3.Connection, table: str, plan_id: int) -> set[int]:
    """The subjects of a plan's frame (``plan_frame``) or draws (``plan_draw``)."""
    assert table in ("plan_frame", "plan_draw")
    return {
        int(s)
        for (s,) in conn.execute(f"SELECT subject_id FROM {table} WHERE plan_id = ?", (plan_id,))
    }


def _decided_draws(
    units: Units, frame: Sequence[int], position: Mapping[int, int], drawn: set[int]
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.bool_]]:
    """The frame positions of the drawn subjects a human decided, and whether each was
    overruled: what the rates learn from."""
    decided = [
        k for s in drawn if (k := position.get(s)) is not None and units.human[frame[k]] is not None
    ]
    overruled = [_disagrees(units.judge[frame[k]], units.human[frame[k]]) for k in decided]
    return np.array(decided, dtype=np.int64), np.array(overruled, dtype=bool)


def _batches_if_decided(rows: Sequence[tuple[Any, Any, Any]]) -> int | None:
    """How many batches are drawn, if every drawn subject is decided and a batch is left."""
    batches = 1 + max((int(w) for _, w, _ in rows), default=0)
    if batches >= len(DEFAULT_SHARES) or not all(done for _, _, done in rows):
        return None
    return batches


def _next_name(conn: sqlite3.Connection) -> str:
    taken = {name for (name,) in conn.execute("SELECT name FROM plan")}
    number = int(conn.execute("SELECT coalesce(max(id), 0) FROM plan").fetchone()[0]) + 1
    while f"p{number}" in taken:
        number += 1
    return f"p{number}"


_PLAN_SQL = """SELECT p.id, p.name, s.ext_id, p.suite_id, p.design, p.strata, p.allocation,
                      p.weight_by, p.floor, p.budget, p.seed, p.frameworks, p.frame,
                      p.created_at, p.created_by, p.note
               FROM plan p JOIN suite s ON s.id = p.suite_id"""


def _plan(conn: sqlite3.Connection, row: tuple[Any, ...], with_strata: bool) -> Plan:
    plan_id = int(row[0])
    strata: tuple[Stratum, ...] = ()
    if with_strata:
        strata = tuple(
            Stratum(int(h), str(label), int(size), int(n), spread)
            for h, label, size, n, spread in conn.execute(
                "SELECT stratum, label, size, draws, spread FROM plan_stratum "
                "WHERE plan_id = ? ORDER BY stratum",
                (plan_id,),
            )
        )
    return Plan(
        plan_id,
        str(row[1]),
        str(row[2]),
        int(row[3]),
        row[4],
        tuple(json.loads(row[5])),
        row[6],
        row[7],
        row[8],
        int(row[9]),
        int(row[10]),
        tuple(json.loads(row[11])),
        int(row[12]),
        str(row[13]),
        str(row[14]),
        str(row[15]),
        plan_progress(conn, plan_id),
        strata,
    )


def list_plans(conn: sqlite3.Connection) -> list[Plan]:
    return [_plan(conn, row, False) for row in conn.execute(_PLAN_SQL + " ORDER BY p.id")]


def get_plan(
    conn: sqlite3.Connection, name: str | None = None, suite_id: int | None = None
) -> Plan:
    """The named plan; without a name, the newest (of ``suite_id`` when given)."""
    if name is not None:
        row = conn.execute(
            _PLAN_SQL + " WHERE p.name = ? OR CAST(p.id AS TEXT) = ?", (name, name)
        ).fetchone()
        if row is None:
            known = ", ".join(p for (p,) in conn.execute("SELECT name FROM plan")) or "none"
            raise InputError(
                "--plan", f"no plan {name!r} (plans: {known}; make one with `gavel plan new`)"
            )
        return _plan(conn, row, True)
    where = "" if suite_id is None else f" WHERE p.suite_id = {int(suite_id)}"
    row = conn.execute(_PLAN_SQL + where + " ORDER BY p.id DESC LIMIT 1").fetchone()
    if row is None:
        raise InputError("--plan", "no review plan yet: make one with `gavel plan new --budget N`")
    return _plan(conn, row, True)


def has_plans(conn: sqlite3.Connection) -> bool:
    return conn.execute("SELECT 1 FROM plan LIMIT 1").fetchone() is not None


_FIRST_DRAWS = """
    SELECT subject_id, min(position) AS first, count(*) AS n FROM plan_draw
    WHERE plan_id = ? GROUP BY subject_id
"""


def plan_progress(conn: sqlite3.Connection, plan_id: int) -> PlanProgress:
    rows = conn.execute(
        f"""SELECT f.first, f.n, d.status IS NOT NULL AND d.status != 'conflict'
            FROM ({_FIRST_DRAWS}) f LEFT JOIN decision d ON d.subject_id = f.subject_id
            ORDER BY f.first""",
        (plan_id,),
    ).fetchall()
    decided = [bool(r[2]) for r in rows]
    last = max((i for i, done in enumerate(decided) if done), default=-1)
    return PlanProgress(
        draws=sum(int(r[1]) for r in rows),
        subjects=len(rows),
        decided=sum(decided),
        decided_draws=sum(int(r[1]) for r in rows if r[2]),
        skipped=sum(1 for i in range(last) if not decided[i]),
    )


def plan_items(conn: sqlite3.Connection, plan_id: int) -> list[PlanItem]:
    """The plan's subjects in review order (each once, at its first draw)."""
    return [
        PlanItem(
            int(first), int(sid), int(rid), None if jid is None else int(jid), str(kind), bool(done)
        )
        for first, sid, rid, jid, kind, done in conn.execute(
            f"""SELECT f.first, f.subject_id, sj.report_id, j.id, sj.kind,
                           d.status IS NOT NULL AND d.status != 'conflict'
                    FROM ({_FIRST_DRAWS}) f
                    JOIN subject sj ON sj.id = f.subject_id
                    LEFT JOIN judgment j INDEXED BY judgment_subject
                         ON j.subject_id = f.subject_id AND j.current = 1
                    LEFT JOIN decision d ON d.subject_id = f.subject_id
                    ORDER BY f.first""",
            (plan_id,),
        )
    ]


def next_item(conn: sqlite3.Connection, plan_id: int) -> PlanItem | None:
    """The first subject of the plan no human has decided yet (an active plan draws its
    next batch when every subject drawn so far is decided)."""
    found = next((item for item in plan_items(conn, plan_id) if not item.decided), None)
    if found is None:
        plan = get_plan(conn, str(plan_id))
        if extend_active(conn, plan):
            return next_item(conn, plan_id)
    return found


EXPORT_COLUMNS = ("position", "target", "stratum", "p", "pi", "weight", "judge", "human", "decided")


def export_rows(
    conn: sqlite3.Connection, plan: Plan, hidden: Collection[int] = ()
) -> Iterator[dict[str, Any]]:
    """The plan's draws in order: the subject's portable target, stratum label, single-draw
    and inclusion probabilities, the design weight input, and where review stands; draws of
    the ``hidden`` subjects left out (verdicts a trust rule accepted)."""
    labels = {s.index: s.label for s in plan.strata}
    for subject, position, target, stratum, p, pi, weight, judge, human, status in conn.execute(
        """SELECT pd.subject_id, pd.position, sj.target, pd.stratum, pd.p, pd.pi, pd.weight,
                      j.value, d.value, d.status
               FROM plan_draw pd JOIN subject sj ON sj.id = pd.subject_id
               LEFT JOIN judgment j INDEXED BY judgment_subject
                    ON j.subject_id = pd.subject_id AND j.current = 1
               LEFT JOIN decision d ON d.subject_id = pd.subject_id
               WHERE pd.plan_id = ? ORDER BY pd.position""",
        (plan.id,),
    ):
        if subject in hidden:
            continue
        is_decided = status is not None and status != "conflict"
        yield {
            "position": position,
            "target": target,
            "stratum": labels.get(stratum, ""),
            "p": p,
            "pi": pi,
            "weight": weight,
            "judge": judge,
            "human": human if is_decided else None,
            "decided": is_decided,
        }


def export_document(conn: sqlite3.Connection, plan: Plan) -> dict[str, Any]:
    """The whole plan as one JSON document: how it was drawn, its strata and its draws."""
    return {
        "format": "gavel-plan",
        "format_version": 1,
        "plan": {
            "name": plan.name,
            "suite": plan.suite,
            "design": plan.design,
            "strata_by": list(plan.strata_by),
            "allocation": plan.allocation,
            "weight_by": plan.weight_by,
            "floor": plan.floor,
            "budget": plan.budget,
            "seed": plan.seed,
            "frameworks": list(plan.frameworks),
            "frame": plan.frame,
            "with_replacement": plan.with_replacement,
            "created_at": plan.created_at,
            "created_by": plan.created_by,
            "note": plan.note,
        },
        "strata": [
            {"stratum": s.label, "size": s.size, "draws": s.draws, "spread": s.spread}
            for s in plan.strata
        ],
        "draws": list(export_rows(conn, plan)),
    }
