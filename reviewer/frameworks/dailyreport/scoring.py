"""DailyReport: cascade rubrics, cascade attribution and user-centric aggregation.

Implements ``specs/dailyreport_cascade.md`` (paper §4, Algorithm 1, Table 3, Fig. 4, Table 6).
Every [CHOICE] of the spec is an entry of ``OPTIONS`` with the spec's default; scores record
which reading they used where the choice changes the outcome (``_v2_vacuous``), and every place
a score had to assume something flags the report 'needs review' (``ReviewFlags``: a fac subtask
without claims, a claim or an ins/rat criterion without a usable verdict, a subtask without an
ins criterion), never a silent 0.

- Claims: a claim belongs to its subtask, else to the subtask of the criterion (fac rubric) it
  names; fac_k = verified correct / every extracted claim of the subtask (Eq. 6), judged or not.
- Exactness: ins_k, fac_k and rat_k are kept as exact fractions beside their floats; Algorithm 1
  runs in floats and, when c0 or c1 lands within 1e-9 of 0.3, 0.5 or 0.7, again in fractions, so
  a value equal to a threshold is always on its side (c1 = 7/10, not 0.6999999999999998).
- System numbers: pooled over subtasks and claims by default (spec §5, revised); UserPref and
  the search-count trace metrics (from ``metadata.trace``) are means over reports.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import TypeVar, cast

from reviewer.framework import (
    Aggregate,
    BulkSpec,
    ColumnAggregation,
    Columns,
    FrameworkBase,
    Metric,
    OptionSpec,
    Proposals,
    Rating,
    Rejudge,
    ReportScores,
    Variant,
    VerdictKind,
    columns_of,
)
from reviewer.frameworks.dailyreport.grading import GRADING
from reviewer.frameworks.dailyreport.proposals import PROPOSALS
from reviewer.grading import Grading
from reviewer.inputs import ClaimIn, ReportInput, SubtaskIn, variant_field
from reviewer.keys import TRACE_COUNTS, TRACE_KEY
from reviewer.scales import CLAIM, CONSISTENCY, RATING4, TERNARY

NAME = "cascade"

KINDS = {
    "ins": VerdictKind("ins", NAME, TERNARY, "criterion", "instruction following"),
    "rat": VerdictKind("rat", NAME, TERNARY, "criterion", "rationality"),
    "claim": VerdictKind("claim", NAME, CLAIM, "claim", "claim factuality"),
    "consistency": VerdictKind(
        "consistency", NAME, CONSISTENCY, "claim_ref", "claim ↔ reference consistency"
    ),
}

OPTIONS = (
    OptionSpec(
        "empty_claims",
        "zero",
        ("zero", "exclude"),
        "A subtask with a fac rubric but no claims: fac_k = 0 and the report is flagged "
        "'needs review' (zero), or the subtask leaves the Fac denominator, δ_k = 0 (exclude).",
    ),
    OptionSpec(
        "several_criteria",
        "mean",
        ("mean", "min"),
        "Several criteria in one dimension of one subtask: average them (mean) or take the "
        "weakest (min).",
    ),
    OptionSpec(
        "missing_dimension",
        "mean_present",
        ("mean_present", "zero"),
        "o_k for a subtask lacking a fac or rat rubric: ins_k × mean of the dimensions present, "
        "ins_k when it has neither (mean_present), or Eq. 5 literally, ½·ins_k·(fac_k + rat_k) "
        "with every missing dimension as 0, so an ins-only subtask scores 0 (zero).",
    ),
    OptionSpec(
        "failed_verdict",
        "zero",
        ("zero", "exclude"),
        "An ins or rat criterion without a usable verdict (the judge call failed, or it was "
        "never judged): it counts as 0 in its subtask (zero), or leaves it (exclude: a rat "
        "left with no verdict makes φ_k = 0, an ins left with none is treated as a subtask "
        "without an ins criterion). Either way the report is flagged 'needs review'.",
    ),
    OptionSpec(
        "missing_ins",
        "zero",
        ("zero", "exclude"),
        "A subtask without an ins criterion (the paper gives every subtask one; the importer "
        "warns): ins_k = 0, which also zeroes its fac and rat weight and o_k (zero), or the "
        "subtask leaves every per-report number (exclude). Either way the report is flagged "
        "'needs review'.",
    ),
    OptionSpec(
        "empty_c1",
        "one",
        ("one", "zero"),
        "c1 when there are no P1 subtasks and no P2(a) groups: 1, mirroring c0 (one), or 0.",
    ),
    OptionSpec(
        "v2_without_groups",
        "vacuous_true",
        ("vacuous_true", "literal"),
        "v2 = ∃k∈∪S2(a): o_k > 0 when a task has no P2(a) subtask: true (vacuous_true), or the "
        "literal reading, false, under which such a report can never score 3.",
    ),
    OptionSpec(
        "failed_consistency",
        "exclude",
        ("exclude", "not_support"),
        "Refer-Claim Consistency and a (claim, reference) pair whose consistency verdict has "
        "no value (the judge call failed): the pair is not judged and leaves the share, as "
        "Table 6 defines it over judged pairs (exclude), or counts as not support "
        "(not_support). 'unknown' (an invalid page) is a judgment and always counts.",
    ),
    OptionSpec(
        "aggregation",
        "micro",
        ("micro", "macro"),
        "System numbers: pooled over all of a system's subtasks (Ins, SubTask Pass; Fac and "
        "Rat over the subtasks where they are defined, Eq. 3–4 with every subtask of every "
        "report in the sums) and claims (the claim-based trace metrics) (micro: §4.2 'the "
        "average performance across all subtasks', SubTask Pass 'the proportion of subtasks'), "
        "or the mean of per-report values (macro). UserPref is a per-report level: always the "
        "mean over reports.",
    ),
)

METRICS = (
    Metric(
        "UserPref",
        "UserPref",
        headline=True,
        digits=2,
        description="Algorithm 1 level 1–4",
        additive=False,
        bounds=(1.0, 4.0),
    ),
    Metric("Ins", "InstFollow", headline=True, description="Eq. 2", bounds=(0.0, 1.0)),
    Metric(
        "Fac", "Factuality", headline=True, description="Eq. 3, cascade-weighted", bounds=(0.0, 1.0)
    ),
    Metric(
        "Rat",
        "Rationality",
        headline=True,
        description="Eq. 4, cascade-weighted",
        bounds=(0.0, 1.0),
    ),
    Metric(
        "SubTaskPass",
        "SubTask Pass",
        description="share of subtasks meeting every rubric",
        additive=False,
        bounds=(0.0, 1.0),
        compare=True,
    ),
    Metric(
        "Reference_Ratio",
        "Reference ratio",
        description="claims citing a reference",
        bounds=(0.0, 1.0),
    ),
    Metric(
        "Reference_Support",
        "Reference support",
        description="accuracy of cited claims",
        bounds=(0.0, 1.0),
    ),
    Metric(
        "No_Reference_Support",
        "No-reference support",
        description="accuracy of uncited claims",
        bounds=(0.0, 1.0),
    ),
    Metric(
        "Refer_Claim_Consistency",
        "Refer-claim consistency",
        description="share of claim×reference pairs judged support",
        compare=True,
        bounds=(0.0, 1.0),
    ),
    Metric(
        "Search_Calls",
        "Avg search calls",
        digits=1,
        description="search-tool calls per report (Fig. 4: web search + web content "
        "mining), from the report's trace counts; n/a: not in this run",
    ),
    Metric(
        "Web_Search",
        "Web search",
        digits=1,
        description="web-search calls per report (Table 6), from trace counts",
    ),
    Metric(
        "Web_Content_Mining",
        "Web content mining",
        digits=1,
        description="page-fetch calls per report (Table 6), from trace counts",
    ),
    Metric(
        "NeedsReview",
        "Needs review",
        digits=0,
        description="reports with a fac subtask without claims, a claim, ins or rat "
        "criterion without a usable verdict, or a subtask without an ins criterion",
    ),
    Metric("Fac_na", "Fac n/a", digits=0, description="reports where Fac is undefined"),
    Metric("Rat_na", "Rat n/a", digits=0, description="reports where Rat is undefined"),
    Metric(
        "Trace_na",
        "Trace counts not in this run",
        digits=0,
        description="reports whose metadata carries no trace counts (metadata.trace): "
        "the search metrics are not in this run for them",
    ),
)

SEARCH_METRICS = ("Search_Calls", "Web_Search", "Web_Content_Mining")

LEVELS = {1: "Unhelpful", 2: "Deficient", 3: "Acceptable", 4: "Perfect"}

Q = tuple[int, int]
"""An exact value p/q as (p, q)."""

N = TypeVar("N", float, Fraction)
"""Scores are computed in floats and, near an Algorithm 1 threshold, again in fractions."""


@dataclass(slots=True)
class SubtaskScore:
    """The per-subtask numbers a reviewer sees beside the verdicts."""

    subtask_id: int
    importance: str
    group: str | None
    ins: float
    fac: float | None
    rat: float | None
    o: float
    passed: bool
    fac_empty: bool
    exact: tuple[Q, Q | None, Q | None]
    """ins_k, fac_k and rat_k as exact fractions (numerator, denominator): the floats above
    are these divided out."""

    def exact_o(self, options: Mapping[str, str]) -> Fraction:
        """o_k in exact arithmetic (Eq. 5 as :func:`subtask_scores` reads it)."""
        ins, fac, rat = (None if q is None else Fraction(*q) for q in self.exact)
        assert ins is not None
        return _o(ins, fac, rat, options["missing_dimension"] == "zero", Fraction(0))


@dataclass(slots=True)
class ReviewFlags:
    """Why a report needs review: every place a score had to assume something."""

    empty_fac: int = 0
    """fac subtasks without a single extracted claim (option empty_claims)"""
    unjudged_claims: int = 0
    """extracted claims without a usable verdict (counted as not verified correct)"""
    failed_verdicts: int = 0
    """ins and rat criteria without a usable verdict (option failed_verdict)"""
    missing_ins: int = 0
    """subtasks without an ins criterion (option missing_ins)"""

    def __bool__(self) -> bool:
        return bool(
            self.empty_fac or self.unjudged_claims or self.failed_verdicts or self.missing_ins
        )

    def parts(self) -> dict[str, float]:
        """The non-zero counts as hidden score parts (``_review_<reason>``)."""
        return {
            f"_review_{name}": float(count)
            for name, count in (
                ("empty_fac", self.empty_fac),
                ("unjudged_claims", self.unjudged_claims),
                ("failed_verdicts", self.failed_verdicts),
                ("missing_ins", self.missing_ins),
            )
            if count
        }


@dataclass(slots=True)
class UserPrefTrace:
    """Algorithm 1's intermediate values, so the workstation can show why a level was given."""

    level: int
    c0: float
    c1: float
    v1: bool
    v2: bool
    v2_vacuous: bool
    rule: str


HALVES = {c.code: round(2 * (c.numeric or 0.0)) for c in TERNARY.choices}
"""Ternary codes as whole halves: 0, 0.5, 1 → 0, 1, 2 (exact)."""


def _combine(halves: list[int], how: str) -> Q:
    """Several criteria of one dimension as one exact value: their mean, or the weakest."""
    return (min(halves), 2) if how == "min" else (sum(halves), 2 * len(halves))


def _o(ins: N, fac: N | None, rat: N | None, zero_missing: bool, zero: N) -> N:
    """Eq. 5, o_k = ½·ins_k·(fac_k + rat_k), with the missing_dimension reading."""
    if zero_missing:  # literal: a missing dimension is 0, an ins-only subtask scores 0
        return ins * ((zero if fac is None else fac) + (zero if rat is None else rat)) / 2
    if fac is None and rat is None:
        return ins
    if fac is None:
        assert rat is not None
        return ins * rat
    if rat is None:
        return ins * fac
    return ins * (fac + rat) / 2


@dataclass(frozen=True, slots=True)
class _TaskShape:
    """Which dimensions each subtask has, and which subtask each criterion belongs to (a claim
    that names only its fac rubric belongs to that rubric's subtask): shared by every report
    of a task."""

    ins: dict[int, int]
    """subtask -> how many ins criteria it has"""
    rat: dict[int, int]
    """subtask -> how many rat criteria it has (φ_k = 1 when any)"""
    has_fac: frozenset[int]
    linked: dict[int, int]


_SHAPES: dict[int, tuple[object, _TaskShape]] = {}


def _shape(report: ReportInput) -> _TaskShape:
    # Reports of one task share the same criteria list object (store.scores.inputs), so the shape is
    # computed once per task, not once per report and variant.
    cached = _SHAPES.get(report.task_id)
    if cached is not None and cached[0] is report.criteria:
        return cached[1]
    ins: dict[int, int] = defaultdict(int)
    rat: dict[int, int] = defaultdict(int)
    fac: set[int] = set()
    linked: dict[int, int] = {}
    for c in report.criteria:
        if c.subtask_id is None:
            continue
        linked[c.id] = c.subtask_id
        if c.dimension == "ins":
            ins[c.subtask_id] += 1
        elif c.dimension == "rat":
            rat[c.subtask_id] += 1
        elif c.dimension == "fac":
            fac.add(c.subtask_id)
    shape = _TaskShape(dict(ins), dict(rat), frozenset(fac), linked)
    if len(_SHAPES) > 100_000:
        _SHAPES.clear()
    _SHAPES[report.task_id] = (report.criteria, shape)
    return shape


@dataclass(slots=True)
class _Claims:
    """One pass over a report's extracted claims: Eq. 6's counts per subtask and the counts
    behind the claim-based trace metrics (Fig. 4 / Table 6)."""

    total: dict[int | None, int]
    correct: dict[int | None, int]
    unjudged: int
    claims: int
    claims_ref: int
    correct_ref: int
    correct_noref: int


def _extractions(
    claims: Sequence[ClaimIn], values: Mapping[int | None, str | None]
) -> set[str | None] | None:
    """The extractions whose claims count: every claim when all came with the report (None);
    else those with a factuality verdict in force on one of their claims, or the imported
    ones when none has."""
    if all(claim.origin is None for claim in claims):
        return None
    return {c.origin for c in claims if c.id in values} or {None}


def _count_claims(
    report: ReportInput, shape: _TaskShape, values: dict[int | None, str | None]
) -> _Claims:
    """Every extracted claim counts, judged or not (Eq. 6: "the proportion of verified correct
    claims among all extracted claims"): a claim without a verdict, or whose verdict failed,
    is not verified correct. A claim belongs to its subtask, else to its criterion's.

    "Extracted claims" are those of the extraction the factuality verdicts judged: claims a
    Gavel judge run extracted (which judges consistency and rationality, never factuality) do
    not join the denominator unless a factuality verdict in force is on one of them.
    """
    counted = _extractions(report.claims, values)
    linked = shape.linked
    total: dict[int | None, int] = defaultdict(int)
    correct: dict[int | None, int] = defaultdict(int)
    unjudged = n = claims_ref = correct_ref = correct_noref = 0
    for claim in report.claims:
        if counted is not None and claim.origin not in counted:
            continue
        sub = claim.subtask_id
        if sub is None and claim.criterion_id is not None:
            sub = linked.get(claim.criterion_id)
        value = values.get(claim.id)
        ok = value == "correct"
        total[sub] += 1
        n += 1
        if ok:
            correct[sub] += 1
        elif value is None:
            unjudged += 1
        if claim.citations or claim.url is not None:
            claims_ref += 1
            correct_ref += ok
        else:
            correct_noref += ok
    return _Claims(total, correct, unjudged, n, claims_ref, correct_ref, correct_noref)


@dataclass(slots=True)
class _Verdicts:
    ins: dict[int | None, list[int]]
    rat: dict[int | None, list[int]]
    claims: _Claims
    pairs: int
    pairs_support: int


def _read(report: ReportInput, variant: Variant, options: Mapping[str, str]) -> _Verdicts:
    """One pass over the verdicts, one over the claims."""
    field = variant_field(variant)
    failed_pairs_count = options["failed_consistency"] == "not_support"
    ins_vals: dict[int | None, list[int]] = defaultdict(list)
    rat_vals: dict[int | None, list[int]] = defaultdict(list)
    claim_values: dict[int | None, str | None] = {}
    pairs = pairs_support = 0
    for verdict in report.verdicts:
        kind = verdict[2]
        if kind == "claim":
            claim_values[verdict[5]] = verdict[field]  # type: ignore[assignment]
        elif kind == "ins":
            number = HALVES.get(verdict[field])  # type: ignore[arg-type]
            if number is not None:
                ins_vals[verdict[3]].append(number)
        elif kind == "rat":
            number = HALVES.get(verdict[field])  # type: ignore[arg-type]
            if number is not None:
                rat_vals[verdict[3]].append(number)
        elif kind == "consistency":
            value = verdict[field]
            if value is not None or failed_pairs_count:
                pairs += 1
                pairs_support += value == "support"
    claims = _count_claims(report, _shape(report), claim_values)
    return _Verdicts(ins_vals, rat_vals, claims, pairs, pairs_support)


def subtask_scores(
    report: ReportInput, variant: Variant, options: Mapping[str, str]
) -> tuple[list[SubtaskScore], ReviewFlags]:
    """ins_k, fac_k, rat_k and o_k for every subtask scored, and why the report needs review
    (falsy when it does not)."""
    return _subtasks(report, _read(report, variant, options), options)


def _criteria_value(
    halves: list[int] | None, expected: int, how: str, exclude_failed: bool, flags: ReviewFlags
) -> Q | None:
    """One dimension of one subtask from the usable verdicts of its ``expected`` criteria;
    the missing ones count as 0 or are left out (option failed_verdict). None: no value."""
    values = halves or []
    failed = expected - len(values)
    if failed > 0:
        flags.failed_verdicts += failed
        if not exclude_failed:
            values = values + [0] * failed
    return _combine(values, how) if values else None


def _one_verdict(expected: int, values: list[int] | None) -> Q | None:
    """The common case, one criterion and its one usable verdict, else None."""
    if expected == 1 and values is not None and len(values) == 1:
        return (values[0], 2)
    return None


def _ins_value(
    expected: int, values: list[int] | None, how: str, exclude_failed: bool, flags: ReviewFlags
) -> Q | None:
    """ins_k, or None for a subtask without an ins criterion or usable verdict (flagged)."""
    if (one := _one_verdict(expected, values)) is not None:
        return one
    if expected or values:
        return _criteria_value(values, expected, how, exclude_failed, flags)
    flags.missing_ins += 1
    return None


def _rat_value(
    expected: int, values: list[int] | None, how: str, exclude_failed: bool, flags: ReviewFlags
) -> Q | None:
    """rat_k, or None for a subtask without a rat rubric (φ_k = 0) or usable verdict."""
    if not expected:
        return None
    if (one := _one_verdict(expected, values)) is not None:
        return one
    return _criteria_value(values, expected, how, exclude_failed, flags)


def _fac_value(
    sid: int, shape: _TaskShape, claims: _Claims, exclude_empty: bool, flags: ReviewFlags
) -> tuple[Q | None, bool]:
    """(fac_k, whether its fac rubric found no claim): Eq. 6, or for a subtask without
    claims 0 or nothing (option empty_claims, flagged either way)."""
    if sid not in shape.has_fac:
        return None, False
    total = claims.total.get(sid, 0)
    if total:
        return (claims.correct.get(sid, 0), total), False
    flags.empty_fac += 1
    return (None if exclude_empty else (0, 1)), True


def _subtask_score(
    subtask: SubtaskIn,
    ins_q: Q,
    fac_q: Q | None,
    rat_q: Q | None,
    fac_empty: bool,
    zero_missing: bool,
) -> SubtaskScore:
    ins = ins_q[0] / ins_q[1]
    fac = None if fac_q is None else fac_q[0] / fac_q[1]
    rat = None if rat_q is None else rat_q[0] / rat_q[1]
    o = _o(ins, fac, rat, zero_missing, 0.0)
    passed = ins == 1.0 and (fac is None or fac == 1.0) and (rat is None or rat == 1.0)
    return SubtaskScore(
        subtask.id,
        subtask.importance,
        subtask.group,
        ins,
        fac,
        rat,
        o,
        passed,
        fac_empty,
        (ins_q, fac_q, rat_q),
    )


def _subtasks(
    report: ReportInput, read: _Verdicts, options: Mapping[str, str]
) -> tuple[list[SubtaskScore], ReviewFlags]:
    how = options["several_criteria"]
    shape = _shape(report)
    exclude_empty = options["empty_claims"] == "exclude"
    exclude_failed = options["failed_verdict"] == "exclude"
    exclude_no_ins = options["missing_ins"] == "exclude"
    zero_missing = options["missing_dimension"] == "zero"
    out: list[SubtaskScore] = []
    flags = ReviewFlags(unjudged_claims=read.claims.unjudged)
    for subtask in report.subtasks:
        sid = subtask.id
        ins_q = _ins_value(shape.ins.get(sid, 0), read.ins.get(sid), how, exclude_failed, flags)
        if ins_q is None:
            if exclude_no_ins:
                continue
            ins_q = (0, 1)
        fac_q, fac_empty = _fac_value(sid, shape, read.claims, exclude_empty, flags)
        rat_q = _rat_value(shape.rat.get(sid, 0), read.rat.get(sid), how, exclude_failed, flags)
        out.append(_subtask_score(subtask, ins_q, fac_q, rat_q, fac_empty, zero_missing))
    return out, flags


def _mean(values: Sequence[N]) -> N:
    return sum(values[1:], values[0]) / len(values)


THRESHOLDS = (0.3, 0.5, 0.7)
EXACT_THRESHOLDS = (Fraction(3, 10), Fraction(1, 2), Fraction(7, 10))
NEAR = 1e-9
"""A float c0 or c1 closer than this to a threshold is decided again in exact arithmetic.
Float means of a few dozen o_k are off by well under 1e-12, so every c that truly equals a
threshold (or lies within 1e-9 of one) is decided exactly and every other one is already
on the right side in floats."""


def user_pref(
    subtasks: Sequence[tuple[str, str | None, N]],
    options: Mapping[str, str],
    exact: bool | None = None,
) -> UserPrefTrace:
    """Algorithm 1 (User-Centric Aggregation) over (importance, group, o_k) triples.

    With float o_k the thresholds are compared in floats; with ``Fraction`` o_k (what
    :class:`CascadeFramework` passes when a float c0 or c1 lands next to a threshold) every
    comparison is exact, so c1 = 7/10 is ≥ 0.7 however it was summed.
    """
    if exact is None:
        exact = any(isinstance(o, Fraction) for _, _, o in subtasks)
    one, zero = cast(N, Fraction(1) if exact else 1.0), cast(N, Fraction(0) if exact else 0.0)
    s0, s1, groups = _by_importance(subtasks)
    c0 = _mean(s0) if s0 else one
    pooled = s1 + [_mean(values) for values in groups.values()]
    c1 = _mean(pooled) if pooled else (one if options["empty_c1"] == "one" else zero)
    v1 = all(o > 0 for o in s1)
    v2, v2_vacuous = _v2(groups, options)
    every_one = bool(subtasks) and all(o == 1 for _, _, o in subtasks)
    level, rule = preference_level(
        c0, c1, v1, v2, every_one, EXACT_THRESHOLDS if exact else THRESHOLDS
    )
    return UserPrefTrace(level, float(c0), float(c1), v1, v2, v2_vacuous, rule)


def _by_importance(
    subtasks: Sequence[tuple[str, str | None, N]],
) -> tuple[list[N], list[N], dict[str, list[N]]]:
    """S0 and S1's o_k in order, and each P2(a) group's, groups in order of appearance."""
    s0: list[N] = []
    s1: list[N] = []
    groups: dict[str, list[N]] = defaultdict(list)
    for imp, group, o in subtasks:
        if imp == "P0":
            s0.append(o)
        elif imp == "P1":
            s1.append(o)
        elif imp == "P2a":
            groups[group or ""].append(o)
    return s0, s1, groups


def _v2(groups: Mapping[str, Sequence[N]], options: Mapping[str, str]) -> tuple[bool, bool]:
    """(v2 = ∃k∈∪S2(a): o_k > 0, whether it holds vacuously: no P2(a) subtask at all)."""
    s2_all = [o for values in groups.values() for o in values]
    if not s2_all:
        return options["v2_without_groups"] == "vacuous_true", True
    return any(o > 0 for o in s2_all), False


def preference_level(
    c0: N,
    c1: N,
    v1: bool,
    v2: bool,
    every_one: bool,
    thresholds: tuple[float, float, float] | tuple[Fraction, Fraction, Fraction],
) -> tuple[int, str]:
    """Algorithm 1's level from its intermediate values, and the rule that gave it."""
    low, half, high = thresholds
    if every_one:
        return 4, "every o_k = 1"
    if c0 == 0:
        return 1, "c0 = 0"
    if c1 < low:
        return 1, "c1 < 0.3"
    if c0 < half and c1 < half:
        return 1, "c0 < 0.5 ∧ c1 < 0.5"
    checks = (("c0 ≥ 0.5", c0 >= half), ("v1", v1), ("v2", v2), ("c1 ≥ 0.7", c1 >= high))
    failed = [name for name, ok in checks if not ok]
    if not failed:
        return 3, "c0 ≥ 0.5 ∧ v1 ∧ v2 ∧ c1 ≥ 0.7"
    return 2, "not " + " ∧ ".join(failed)


def _near_threshold(trace: UserPrefTrace) -> bool:
    return any(abs(c - t) < NEAR for c in (trace.c0, trace.c1) for t in THRESHOLDS)


def _user_pref(subs: Sequence[SubtaskScore], options: Mapping[str, str]) -> UserPrefTrace:
    """Algorithm 1 on a report's subtasks: in floats, then, when c0 or c1 lands within 1e-9 of
    0.3, 0.5 or 0.7, once more on exact fractions, so that a threshold is never missed by a
    rounding error (7/10 summed in floats can be 0.6999999999999998)."""
    trace = user_pref([(s.importance, s.group, s.o) for s in subs], options, False)
    if _near_threshold(trace):
        trace = user_pref(
            [(s.importance, s.group, s.exact_o(options)) for s in subs], options, True
        )
    return trace


def _count(value: object) -> float | None:
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or value < 0
        or not math.isfinite(value)
    ):
        return None  # (NaN and inf are no count: NaN is "no value" in a column)
    return float(value)


def search_counts(metadata: Mapping[str, object]) -> tuple[float | None, ...] | None:
    """(search calls, web search, web content mining) from a report's ``metadata.trace``,
    None when the report carries no trace counts. Search calls are the bundle's own total
    when given, else web search + web content mining when both are (Fig. 4 counts both kinds
    of call as search-tool calls, Table 6)."""
    trace = metadata.get(TRACE_KEY)
    if not isinstance(trace, Mapping):
        return None
    calls, web, mining = (_count(trace.get(key)) for key in TRACE_COUNTS)
    if calls is None and web is not None and mining is not None:
        calls = web + mining
    if calls is None and web is None and mining is None:
        return None
    return calls, web, mining


def _ratio(num: float, den: float) -> float | None:
    return num / den if den else None


def _scores(report: ReportInput, read: _Verdicts, options: Mapping[str, str]) -> ReportScores:
    subs, flags = _subtasks(report, read, options)
    n = len(subs)
    # The search metrics only where the report carries trace counts (a report without
    # any says so with Trace_na = 1 rather than three n/a rows: most runs have none).
    counts = search_counts(report.report_metadata)
    trace_scores: ReportScores = (
        {**dict(zip(SEARCH_METRICS, counts, strict=True)), "Trace_na": 0.0}
        if counts
        else {"Trace_na": 1.0}
    )
    if not n:  # every subtask left out (option missing_ins): nothing else to score
        return {"NeedsReview": 1.0, **flags.parts(), **trace_scores}
    ins_sum = fac_num = fac_den = rat_num = rat_den = 0.0
    fac_k = rat_k = passed = 0
    for sub in subs:
        ins = sub.ins
        ins_sum += ins
        if sub.fac is not None:
            fac_num += ins * sub.fac
            fac_den += ins
            fac_k += 1
        if sub.rat is not None:
            rat_num += ins * sub.rat
            rat_den += ins
            rat_k += 1
        passed += sub.passed
    trace = _user_pref(subs, options)
    claims = read.claims
    parts = {
        "claims": claims.claims,
        "claims_ref": claims.claims_ref,
        "correct_ref": claims.correct_ref,
        "correct_noref": claims.correct_noref,
        "pairs": read.pairs,
        "pairs_support": read.pairs_support,
    }
    scores: ReportScores = {
        "UserPref": float(trace.level),
        "Ins": ins_sum / n,
        "Fac": _ratio(fac_num, fac_den),
        "Rat": _ratio(rat_num, rat_den),
        "SubTaskPass": passed / n,
        "Reference_Ratio": _ratio(parts["claims_ref"], parts["claims"]),
        "Reference_Support": _ratio(parts["correct_ref"], parts["claims_ref"]),
        "No_Reference_Support": _ratio(
            parts["correct_noref"], parts["claims"] - parts["claims_ref"]
        ),
        "Refer_Claim_Consistency": _ratio(parts["pairs_support"], parts["pairs"]),
        "NeedsReview": 1.0 if flags else 0.0,
        "_n": float(n),
        "_ins_sum": ins_sum,
        "_fac_num": fac_num,
        "_fac_den": fac_den,
        "_rat_num": rat_num,
        "_rat_den": rat_den,
        "_fac_k": float(fac_k),
        "_rat_k": float(rat_k),
        "_pass": float(passed),
        "_v2_vacuous": 1.0 if trace.v2_vacuous else 0.0,
        "_c0": trace.c0,
        "_c1": trace.c1,
    }
    for key, value in parts.items():
        scores["_" + key] = float(value)
    scores.update(flags.parts())
    scores.update(trace_scores)
    return scores


def _mean_of(column: Sequence[float]) -> Aggregate:
    # A column without NaN (the common case) is used as it is: sum in C says so.
    values = column if (s := sum(column, 0.0)) == s else [v for v in column if v == v]
    return Aggregate(_mean(values) if values else None, len(values))


def _total(column: Sequence[float]) -> float:
    """The sum of a column, a missing value counting 0.0: adding 0.0 never moves a float sum
    that starts at 0.0, so skipping them gives the same float as adding them."""
    s = sum(column, 0.0)
    return s if s == s else sum((v for v in column if v == v), 0.0)


_MICRO_PARTS = (
    "_n",
    "_claims",
    "_claims_ref",
    "_ins_sum",
    "_fac_num",
    "_fac_den",
    "_fac_k",
    "_rat_num",
    "_rat_den",
    "_rat_k",
    "_pass",
    "_correct_ref",
    "_correct_noref",
    "_pairs_support",
    "_pairs",
)


def _micro(column: Callable[[str], Sequence[float]]) -> dict[str, Aggregate]:
    def total(key: str) -> float:
        return _total(column(key))

    n = total("_n")
    claims = total("_claims")
    claims_ref = total("_claims_ref")
    return {
        "Ins": Aggregate(_ratio(total("_ins_sum"), n), int(n)),
        "Fac": Aggregate(_ratio(total("_fac_num"), total("_fac_den")), int(total("_fac_k"))),
        "Rat": Aggregate(_ratio(total("_rat_num"), total("_rat_den")), int(total("_rat_k"))),
        "SubTaskPass": Aggregate(_ratio(total("_pass"), n), int(n)),
        "Reference_Ratio": Aggregate(_ratio(claims_ref, claims), int(claims)),
        "Reference_Support": Aggregate(_ratio(total("_correct_ref"), claims_ref), int(claims_ref)),
        "No_Reference_Support": Aggregate(
            _ratio(total("_correct_noref"), claims - claims_ref), int(claims - claims_ref)
        ),
        "Refer_Claim_Consistency": Aggregate(
            _ratio(total("_pairs_support"), total("_pairs")), int(total("_pairs"))
        ),
    }


_AGGREGATED = tuple(
    sorted({m.name for m in METRICS} | {"UserPref", *SEARCH_METRICS, *_MICRO_PARTS})
)
"""Every metric the system aggregate reads."""


def aggregate_columns(
    columns: Columns, count: int, options: Mapping[str, str]
) -> dict[str, Aggregate]:
    """The system's scores from its reports' columns (NaN: the report has no value)."""

    def column(name: str) -> Sequence[float]:
        return columns.get(name) or [math.nan] * count

    out = _micro(column) if options["aggregation"] == "micro" else _macro(column)
    counts = _report_counts(column, count)
    out["NeedsReview"] = counts.pop("NeedsReview")
    # Per-report levels and counts: means over the reports that have them.
    for name in ("UserPref", *SEARCH_METRICS):
        out[name] = _mean_of(column(name))
    out.update(counts)
    return out


def _macro(column: Callable[[str], Sequence[float]]) -> dict[str, Aggregate]:
    """The mean of per-report values, metric by metric."""
    return {
        metric.name: _mean_of(column(metric.name))
        for metric in METRICS
        if metric.name not in ("NeedsReview", "Fac_na", "Rat_na", "Trace_na")
    }


def _report_counts(column: Callable[[str], Sequence[float]], count: int) -> dict[str, Aggregate]:
    """How many reports need review, have no Fac or Rat, or carry no trace counts."""
    # (v == v: not NaN; a report that needs review says so with a non-zero flag.)
    needs = sum(1 for v in column("NeedsReview") if v == v and v)
    out = {"NeedsReview": Aggregate(float(needs), count)}
    for name in ("Fac", "Rat"):
        undefined = sum(1 for v in column(name) if v != v)
        out[f"{name}_na"] = Aggregate(float(undefined), count)
    missing = sum(1 for v in column("Trace_na") if v != 0.0)  # NaN too
    out["Trace_na"] = Aggregate(float(missing), count)
    return out


class CascadeFramework(FrameworkBase):
    name: str = NAME
    label: str = "DailyReport cascade"
    rating: Rating | None = Rating(RATING4, "UserPref")
    proposals: Proposals = PROPOSALS
    rejudge: Rejudge | None = Rejudge(
        frozenset({"ins", "rat", "consistency"}),
        pipeline="reviewer.frameworks.dailyreport.judge_pipeline:SPEC",
    )
    grading: Grading | None = GRADING
    kinds: Mapping[str, VerdictKind] = KINDS
    metrics: Sequence[Metric] = METRICS
    options: Sequence[OptionSpec] = OPTIONS
    bulk: BulkSpec | None = BulkSpec(
        ("ins", "rat", "consistency"),
        (*HALVES, "correct", "support"),
        "claim",
        "reviewer.frameworks.dailyreport.counted:score_counted",
    )
    columns: ColumnAggregation | None = ColumnAggregation(_AGGREGATED, aggregate_columns)

    def score_report(
        self, report: ReportInput, variant: Variant, options: Mapping[str, str]
    ) -> ReportScores:
        if not report.subtasks:
            return {}
        return _scores(report, _read(report, variant, options), options)

    def aggregate(
        self, reports: Sequence[ReportScores], options: Mapping[str, str]
    ) -> dict[str, Aggregate]:
        reports = [r for r in reports if r]
        return aggregate_columns(columns_of(reports, _AGGREGATED), len(reports), options)


def subtask_importance_label(subtask: SubtaskIn) -> str:
    return f"P2({subtask.group})" if subtask.importance == "P2a" else subtask.importance


FRAMEWORK = CascadeFramework()
