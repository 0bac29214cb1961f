"""DeepResearch Bench RACE: reference-relative, criterion-weighted report quality.

Implements ``specs/deepresearch_bench.md`` §2.6–2.8. Verdict kinds:

- ``race_target`` / ``race_reference``: the judge's 0–10 score of the target report and of the
  reference report on one criterion. Both are judgments *of the target report* (one RACE call
  scores the two articles side by side), keyed by the criterion.
- ``race_stored``: a benchmark's stored per-task result (``raw_results.jsonl``), keyed by a
  dimension name or ``overall_score``, on the 0–1 scale. Kept beside the recomputation so a
  reviewer sees any drift between the two instead of one hiding the other.

Per report (the reference code's definition, the default; it reproduces the anchors):

- per dimension d, over the criteria actually judged: TW_d = Σ w, S_d(R) = Σ w·s_R / TW_d
  (S_d = 0 when TW_d = 0);
- S_int(R) = Σ_d W_d · S_d(R), W_d = the task's ``dimension_weight`` (a dimension missing from
  it weighs 0, as in the code);
- ``overall`` = S_int(tgt) / (S_int(tgt) + S_int(ref)); ``<dimension>`` = S_d(tgt) /
  (S_d(tgt) + S_d(ref)), the per-dimension *relative* score (not a share of ``overall``);
- a report with target scores and no reference scores is scored in the tickr fork's
  ``no_reference`` mode: ``overall`` = clip(S_int(tgt)/10, 0, 1), ``<dimension>`` =
  clip(S_d(tgt)/10, 0, 1).

``overall_paper`` is paper Eq. 2 read literally: S_d = Σ_k w_{d,k}·s_{d,k} over *every* stored
criterion of d with its stored weight and no renormalisation, so a criterion the judge did not
score contributes 0 (it lowers the score instead of dropping out). It equals ``overall`` whenever
every criterion was judged and weights sum to 1 per dimension.

Stored results give ``stored_overall`` and ``stored_<dimension>``; ``drift_overall`` (and
``drift_<dimension>``) = recomputed − stored where both exist. System numbers are plain means
over the reports where a metric is defined (the benchmark's "mean over successfully scored
tasks"), with their n; ``max_abs_drift_overall`` is the largest |drift_overall| of the system.

Deliberate differences from the reference code (``utils/score_calculator.py``): the code's
reference average depends on whether the *last* item of a dimension had a reference score (a
bug, spec §2.7) — here each criterion's own pair counts; duplicate judge items cannot exist here
(one verdict per criterion); an unmatched judge item is not imported (see
``.format``) where the code would give it the dimension's mean weight.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from reviewer.framework import (
    Aggregate,
    FrameworkBase,
    Metric,
    OptionSpec,
    Proposals,
    Rating,
    Rejudge,
    ReportScores,
    Variant,
    VerdictKind,
)
from reviewer.frameworks.deepresearch_bench.proposals import RACE_PROPOSALS
from reviewer.grading import Grading
from reviewer.inputs import CriterionIn, ReportInput
from reviewer.scales import SCORE10, UNIT

NAME = "race"

DIMENSIONS: tuple[str, ...] = (
    "comprehensiveness",
    "insight",
    "instruction_following",
    "readability",
)
"""RACE's four fixed dimensions (spec §2.1), in the benchmark's column order."""

OVERALL_KEY = "overall_score"
"""The key of a stored result's overall score (``raw_results.jsonl``)."""

STORED_KEYS: tuple[str, ...] = (*DIMENSIONS, OVERALL_KEY)

KINDS = {
    "race_target": VerdictKind(
        "race_target",
        NAME,
        SCORE10,
        "criterion",
        "RACE target score",
        "The judge's 0–10 score of the target report on one criterion.",
    ),
    "race_reference": VerdictKind(
        "race_reference",
        NAME,
        SCORE10,
        "criterion",
        "RACE reference score",
        "The judge's 0–10 score of the reference report on one criterion, from the same "
        "comparative call that scored the target.",
    ),
    "race_stored": VerdictKind(
        "race_stored",
        NAME,
        UNIT,
        "key",
        "stored RACE result",
        "A benchmark's stored per-task RACE result (a dimension or overall_score, 0–1).",
    ),
}

OPTIONS = (
    OptionSpec(
        "zero_denominator",
        "zero",
        ("zero", "undefined"),
        "A ratio whose denominator is 0 (S_int(tgt) + S_int(ref) = 0, S_d(tgt) + S_d(ref) = 0, "
        "or a dimension with no judged criterion in no_reference mode): 0 as the reference code "
        "writes it (zero), or no value, so the report leaves that mean (undefined).",
    ),
    OptionSpec(
        "no_reference",
        "absolute",
        ("absolute", "undefined"),
        "A report with target scores but no reference scores: the tickr fork's no_reference "
        "scores, overall = clip(S_int/10, 0, 1) and each dimension clip(S_d/10, 0, 1) "
        "(absolute), or no recomputed score (undefined).",
    ),
    OptionSpec(
        "unpaired",
        "drop",
        ("drop", "own"),
        "In reference-relative mode, a criterion scored for only one of the two articles (the "
        "other verdict failed): it leaves both sides' renormalisation (drop), or each side is "
        "renormalised over the criteria it was scored on (own).",
    ),
    OptionSpec(
        "criterion_weights",
        "stored",
        ("stored", "uniform"),
        "Criterion weights w_{d,k}: the rubric's (stored; a criterion without a weight gets "
        "1/K_d), or 1/K_d for every criterion (uniform: the paper's 'No Criteria Weights').",
    ),
    OptionSpec(
        "dimension_weights",
        "stored",
        ("stored", "uniform"),
        "Dimension weights W_d: the task's dimension_weight (stored; uniform when the task has "
        "none), or 1/|D| (uniform: the paper's 'No Dim Weights').",
    ),
)

METRICS = (
    Metric(
        "overall",
        "RACE overall",
        headline=True,
        digits=4,
        description="S_int(tgt)/(S_int(tgt)+S_int(ref)), renormalised (reference code)",
        additive=False,
        bounds=(0.0, 1.0),
    ),
    *(
        Metric(
            d,
            d.replace("_", " ").capitalize(),
            digits=4,
            description="S_d(tgt)/(S_d(tgt)+S_d(ref))",
            additive=False,
            bounds=(0.0, 1.0),
        )
        for d in DIMENSIONS
    ),
    Metric(
        "overall_paper",
        "RACE overall (paper Eq. 2)",
        digits=4,
        description="Σ w·s over all stored criteria, no renormalisation (missing = 0)",
    ),
    Metric(
        "stored_overall",
        "stored overall",
        headline=True,
        digits=4,
        description="the benchmark's stored per-task overall_score",
        same_as="overall",
    ),
    *(
        Metric(f"stored_{d}", f"stored {d.replace('_', ' ')}", digits=4, same_as=d)
        for d in DIMENSIONS
    ),
    Metric(
        "drift_overall",
        "drift overall",
        digits=4,
        description="recomputed overall − stored overall",
    ),
    *(Metric(f"drift_{d}", f"drift {d.replace('_', ' ')}", digits=4) for d in DIMENSIONS),
    Metric(
        "max_abs_drift_overall",
        "max |drift overall|",
        digits=4,
        description="largest |drift_overall| over a system's reports (system level)",
    ),
)


def _criterion_weights(criteria: Sequence[CriterionIn], uniform: bool) -> dict[int, float]:
    """Weight of every criterion: stored, or 1/K_d (uniform, or when none is stored)."""
    count: dict[str, int] = {}
    for c in criteria:
        count[c.dimension] = count.get(c.dimension, 0) + 1
    return {
        c.id: (1.0 / count[c.dimension] if uniform or c.weight is None else float(c.weight))
        for c in criteria
    }


def _dimension_weights(
    metadata: Mapping[str, object], dims: Sequence[str], uniform: bool
) -> dict[str, float]:
    stored = metadata.get("dimension_weight")
    if not uniform and isinstance(stored, Mapping) and stored:
        return {d: float(stored.get(d, 0.0)) for d in dims}
    return {d: 1.0 / len(dims) for d in dims} if dims else {}


def _ratio(num: float, den: float, zero: bool) -> float | None:
    if den == 0:
        return 0.0 if zero else None
    return num / den


def _clip10(value: float) -> float:
    return max(0.0, min(1.0, value / 10.0))


def race_scores(
    criteria: Sequence[CriterionIn],
    target: Mapping[int, float],
    reference: Mapping[int, float],
    metadata: Mapping[str, object],
    options: Mapping[str, str],
) -> ReportScores:
    """Recomputed RACE scores of one report from per-criterion scores (criterion id -> 0–10).

    Empty when there is nothing to recompute (no target score, or no_reference = undefined
    and no reference score).
    """
    if not target:
        return {}
    relative = bool(reference)
    if not relative and options["no_reference"] == "undefined":
        return {}
    zero = options["zero_denominator"] == "zero"
    dims = _race_dimensions(criteria, target, reference, metadata)
    race_criteria = [c for c in criteria if c.dimension in dims]
    weights = _criterion_weights(race_criteria, options["criterion_weights"] == "uniform")
    dim_w = _dimension_weights(metadata, dims, options["dimension_weights"] == "uniform")
    pair = relative and options["unpaired"] != "own"
    sums, n_judged = _dimension_sums(race_criteria, dims, weights, target, reference, pair)
    scores: ReportScores = {}
    total_t, total_r, paper_t, paper_r = _dimension_scores(sums, dim_w, relative, zero, scores)
    if relative:
        scores["overall"] = _ratio(total_t, total_t + total_r, zero)
        scores["overall_paper"] = _ratio(paper_t, paper_t + paper_r, zero)
    else:
        scores["overall"] = _clip10(total_t)
        scores["overall_paper"] = _clip10(paper_t)
    scores["_T"] = total_t
    scores["_R"] = total_r if relative else None
    scores["_no_reference"] = 0.0 if relative else 1.0
    scores["_judged"] = float(n_judged)
    return scores


def _race_dimensions(
    criteria: Sequence[CriterionIn],
    target: Mapping[int, float],
    reference: Mapping[int, float],
    metadata: Mapping[str, object],
) -> list[str]:
    """The task's stored dimensions in their stored order (else the four of the paper), then
    any other dimension a judged criterion has."""
    stored_dw = metadata.get("dimension_weight")
    dims: list[str] = list(stored_dw) if isinstance(stored_dw, Mapping) and stored_dw else []
    judged = {c.dimension for c in criteria if c.id in target or c.id in reference}
    if not dims:
        dims = list(DIMENSIONS)
    dims += sorted(judged - set(dims))
    return dims


def _dimension_sums(
    race_criteria: Sequence[CriterionIn],
    dims: Sequence[str],
    weights: Mapping[int, float],
    target: Mapping[int, float],
    reference: Mapping[int, float],
    pair: bool,
) -> tuple[dict[str, list[float]], int]:
    """Per dimension [Σw·t, TW_t, Σw·r, TW_r, paper Σw·t, paper Σw·r], and how many target
    scores count. The paper's sums take every criterion (missing = 0); the others, under
    ``pair``, only criteria scored for both reports."""
    sums: dict[str, list[float]] = {d: [0.0, 0.0, 0.0, 0.0, 0.0, 0.0] for d in dims}
    n_judged = 0
    for c in race_criteria:
        w = weights[c.id]
        acc = sums[c.dimension]
        t = target.get(c.id)
        r = reference.get(c.id)
        acc[4] += w * (t or 0.0)
        acc[5] += w * (r or 0.0)
        if pair and (t is None or r is None):
            continue
        if t is not None:
            acc[0] += w * t
            acc[1] += w
            n_judged += 1
        if r is not None:  # never without a reference: then ``reference`` is empty
            acc[2] += w * r
            acc[3] += w
    return sums, n_judged


def _dimension_scores(
    sums: Mapping[str, list[float]],
    dim_w: Mapping[str, float],
    relative: bool,
    zero: bool,
    scores: ReportScores,
) -> tuple[float, float, float, float]:
    """Each dimension's score (relative T/(T+R), or the target's own clipped to 0–1) into
    ``scores``; returns the weighted totals (target, reference, paper target, paper
    reference)."""
    total_t = total_r = paper_t = paper_r = 0.0
    for d, (st_num, tw_t, sr_num, tw_r, p_t, p_r) in sums.items():
        s_t = st_num / tw_t if tw_t > 0 else 0.0
        s_r = sr_num / tw_r if tw_r > 0 else 0.0
        total_t += dim_w[d] * s_t
        total_r += dim_w[d] * s_r
        paper_t += dim_w[d] * p_t
        paper_r += dim_w[d] * p_r
        if relative:
            scores[d] = _ratio(s_t, s_t + s_r, zero)
        else:
            scores[d] = _clip10(s_t) if tw_t > 0 or zero else None
        scores[f"_S_{d}_tgt"] = s_t
        if relative:
            scores[f"_S_{d}_ref"] = s_r
    return total_t, total_r, paper_t, paper_r


def _number(code: str | None) -> float | None:
    return None if code is None else float(code)


def _add_stored(scores: ReportScores, stored: Mapping[str, float]) -> None:
    """The benchmark's stored scores beside the recomputed ones, and the drift between them."""
    for key, value in stored.items():
        name = "stored_overall" if key == OVERALL_KEY else f"stored_{key}"
        scores[name] = value
        mine = scores.get("overall" if key == OVERALL_KEY else key)
        if mine is not None:
            scores["drift_overall" if key == OVERALL_KEY else f"drift_{key}"] = mine - value


class RaceFramework(FrameworkBase):
    name: str = NAME
    label: str = "DeepResearch Bench RACE"
    kinds: Mapping[str, VerdictKind] = KINDS
    rating: Rating | None = None
    proposals: Proposals = RACE_PROPOSALS
    rejudge: Rejudge | None = Rejudge(
        frozenset({"race_target", "race_reference"}),
        steps={"race_target": "race", "race_reference": "race"},
        pipeline="reviewer.frameworks.deepresearch_bench.judge_race:SPEC",
    )
    grading: Grading | None = None
    metrics: Sequence[Metric] = METRICS
    options: Sequence[OptionSpec] = OPTIONS

    def score_report(
        self, report: ReportInput, variant: Variant, options: Mapping[str, str]
    ) -> ReportScores:
        target: dict[int, float] = {}
        reference: dict[int, float] = {}
        stored: dict[str, float] = {}
        slots: dict[str, dict[int, float]] = {"race_target": target, "race_reference": reference}
        for v in report.verdicts:
            slot = slots.get(v.kind)
            if slot is not None:
                value = _number(v.value(variant))
                if value is not None and v.criterion_id is not None:
                    slot[v.criterion_id] = value
            elif v.kind == "race_stored":
                value = _number(v.value(variant))
                if value is not None and v.key is not None:
                    stored[v.key] = value
        if not target and not stored:
            return {}
        scores = race_scores(report.criteria, target, reference, report.task_metadata, options)
        _add_stored(scores, stored)
        return scores

    def aggregate(
        self, reports: Sequence[ReportScores], options: Mapping[str, str]
    ) -> dict[str, Aggregate]:
        out: dict[str, Aggregate] = {}
        for name in _reported_names(reports):
            if name == "max_abs_drift_overall":
                continue
            values = _present(reports, name)
            if values or name in _METRIC_NAMES:
                out[name] = Aggregate(sum(values) / len(values) if values else None, len(values))
        drifts = [abs(v) for v in _present(reports, "drift_overall")]
        out["max_abs_drift_overall"] = Aggregate(max(drifts) if drifts else None, len(drifts))
        return out


_METRIC_NAMES = frozenset(m.name for m in METRICS)


def _present(reports: Sequence[ReportScores], name: str) -> list[float]:
    return [v for r in reports if (v := r.get(name)) is not None]


def _reported_names(reports: Sequence[ReportScores]) -> list[str]:
    """The metrics, then any other public score a report has (a stored dimension of its own)."""
    names: dict[str, None] = {m.name: None for m in METRICS}
    for r in reports:
        for key in r:
            if not key.startswith("_"):
                names.setdefault(key, None)
    return list(names)


FRAMEWORK = RaceFramework()
