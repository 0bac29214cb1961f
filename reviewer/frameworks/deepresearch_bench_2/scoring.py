"""DeepResearch Bench II: the share of rubric items a report satisfies, per dimension.

Every rubric item of a task (``info_recall``, ``analysis``, ``presentation``) gets one verdict
``drb2_item`` from the judge: 1 (satisfied with evidence that cites no blocked reference),
0 (not mentioned) or -1 (mentioned, but the supporting sentences cite a reference the task
blocked). What the benchmark's aggregation script computes from those, per report:

- per dimension, the share of its scored items that are 1;
- ``total``, the share of 1s among the scored items of all three dimensions (so a dimension
  with more items weighs more: it is not the mean of the three shares);
- ``blocked_rate``, the share of -1s among them.

A system's figure is the mean, over the reports where the figure is defined, of the reports'
figures (the script's per-model column mean). Two places where the release leaves a choice are
options:

- ``repeated_items``: the script keys a dimension's verdicts by the rubric text, so a text that
  appears twice in one dimension (six analysis items of the release do) is one item there.
- ``unscored``: the script counts only items whose score is a number; an item the judge failed
  on, or that has no verdict, leaves the denominator. The other reading counts it as not
  satisfied over the rubric's full item count.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from reviewer.framework import (
    Aggregate,
    ColumnAggregation,
    Columns,
    FrameworkBase,
    Metric,
    OptionSpec,
    Proposals,
    Rating,
    Rejudge,
    ReportScores,
    Selection,
    Shape,
    Variant,
    VerdictKind,
    needs_json,
    no_text,
)
from reviewer.frameworks.deepresearch_bench_2.grading import GRADING
from reviewer.grading import Grading
from reviewer.inputs import CriterionIn, ReportInput
from reviewer.scales import Choice, Scale

NAME = "drb2"
KIND = "drb2_item"

DIMENSIONS = ("info_recall", "analysis", "presentation")
"""The rubric's dimensions, as the release names them (and in its order)."""

SATISFIED, ABSENT, BLOCKED = "1", "0", "-1"

ITEM_SCALE = Scale(
    "drb2_item",
    "1 satisfied / 0 not mentioned / -1 relies on a blocked reference",
    (
        Choice(SATISFIED, "satisfied", "1", 1.0, ("yes", "satisfied")),
        Choice(ABSENT, "not mentioned", "0", 0.0, ("no", "not mentioned", "absent")),
        Choice(BLOCKED, "blocked reference", "x", -1.0, ("blocked",)),
    ),
)

KINDS = {
    KIND: VerdictKind(
        KIND,
        NAME,
        ITEM_SCALE,
        "criterion",
        "DRB II rubric item",
        "Does the report satisfy the rubric item? 1: yes, with supporting sentences that cite "
        "no blocked reference (numbers must match exactly); 0: the report does not mention it; "
        "-1: it does, but the supporting sentences cite a blocked reference.",
        highlight="evidence",
    )
}

OPTIONS = (
    OptionSpec(
        "repeated_items",
        "once",
        ("once", "each"),
        "A rubric text repeated within one dimension: one item, as the aggregation script "
        "keys verdicts by the text (once; the first item's verdict counts), or every copy "
        "counts (each).",
    ),
    OptionSpec(
        "unscored",
        "exclude",
        ("exclude", "zero"),
        "An item without a score (the judge failed on it, or it was never judged): leaves "
        "the denominator, as the script counts only numeric scores (exclude), or counts as "
        "not satisfied over all of the dimension's rubric items (zero).",
    ),
)

METRICS = (
    Metric(
        "total",
        "Total",
        headline=True,
        description="share of all scored rubric items satisfied (score 1)",
        bounds=(0.0, 1.0),
        compare=True,
    ),
    Metric(
        "info_recall",
        "Recall",
        headline=True,
        description="share of the information-recall items satisfied",
        bounds=(0.0, 1.0),
    ),
    Metric(
        "analysis",
        "Analysis",
        headline=True,
        description="share of the analysis items satisfied",
        bounds=(0.0, 1.0),
    ),
    Metric(
        "presentation",
        "Present.",
        headline=True,
        description="share of the presentation items satisfied",
        bounds=(0.0, 1.0),
    ),
    Metric(
        "blocked_rate",
        "Blocked",
        headline=True,
        description="share of all scored rubric items that rely on a blocked reference (-1)",
        bounds=(0.0, 1.0),
        compare=True,
    ),
)
METRIC_NAMES = tuple(m.name for m in METRICS)

Tally = dict[str, list[int]]
"""Dimension -> [items scored 1, items scored -1, items counted]."""


def _counted_items(
    criteria: Sequence[CriterionIn], values: Mapping[int, str | None], options: Mapping[str, str]
) -> list[tuple[str, str | None]]:
    """(dimension, value) of each rubric item that counts, in the rubric's order: a repeated
    text once when the script's reading is chosen, and an item without a score only when it
    counts as not satisfied."""
    once = options["repeated_items"] == "once"
    keep_unscored = options["unscored"] == "zero"
    seen: set[tuple[str, str]] = set()
    out: list[tuple[str, str | None]] = []
    for criterion in criteria:
        if criterion.dimension not in DIMENSIONS:
            continue
        if once:
            key = (criterion.dimension, criterion.text)
            if key in seen:
                continue
            seen.add(key)
        value = values.get(criterion.id)
        if value is None and not keep_unscored:
            continue
        out.append((criterion.dimension, value))
    return out


def tally(
    criteria: Sequence[CriterionIn], values: Mapping[int, str | None], options: Mapping[str, str]
) -> Tally:
    """Each dimension's counts of 1s, -1s and counted items."""
    counts: Tally = {dimension: [0, 0, 0] for dimension in DIMENSIONS}
    for dimension, value in _counted_items(criteria, values, options):
        row = counts[dimension]
        row[0] += value == SATISFIED
        row[1] += value == BLOCKED
        row[2] += 1
    return counts


def _share(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def scores_of(counts: Tally) -> ReportScores:
    """The report's figures from its counts, as the aggregation script computes them (a
    dimension's metric is named as the dimension)."""
    scores: ReportScores = {d: _share(counts[d][0], counts[d][2]) for d in DIMENSIONS}
    ones = sum(counts[d][0] for d in DIMENSIONS)
    blocked = sum(counts[d][1] for d in DIMENSIONS)
    items = sum(counts[d][2] for d in DIMENSIONS)
    scores["total"] = _share(ones, items)
    scores["blocked_rate"] = _share(blocked, items)
    return scores


def _mean_of(values: Sequence[float]) -> Aggregate:
    present = [v for v in values if not math.isnan(v)]
    return Aggregate(sum(present) / len(present) if present else None, len(present))


def aggregate_columns(
    columns: Columns, reports: int, options: Mapping[str, str]
) -> dict[str, Aggregate]:
    """A system's figures: each metric's mean over the reports that have it."""
    return {name: _mean_of(columns.get(name, ())) for name in METRIC_NAMES}


def draft_rubric(kind: str, selection: Selection | None, text: str) -> Any:
    """A new rubric item in the dimension of the item selected (information recall when
    none is): the release's rubric items are one sentence each."""
    if not text:
        raise no_text()
    if kind != "new_rubric":
        raise needs_json(kind, NAME)
    chosen = selection.dimension if selection is not None else None
    return {"dimension": chosen if chosen in DIMENSIONS else DIMENSIONS[0], "text": text}


class Drb2Framework(FrameworkBase):
    name: str = NAME
    label: str = "DeepResearch Bench II"
    kinds: Mapping[str, VerdictKind] = KINDS
    rating: Rating | None = None
    proposals: Proposals = Proposals(
        shapes={
            "new_rubric": Shape(
                required=("dimension", "text"),
                text_keys=("text",),
                choices={"dimension": DIMENSIONS},
            )
        },
        draft=draft_rubric,
    )
    rejudge: Rejudge | None = Rejudge(
        frozenset({KIND}),
        steps={KIND: "rubric"},
        pipeline="reviewer.frameworks.deepresearch_bench_2.judge_pipeline:SPEC",
    )
    grading: Grading | None = GRADING
    columns: ColumnAggregation | None = ColumnAggregation(METRIC_NAMES, aggregate_columns)
    metrics: Sequence[Metric] = METRICS
    options: Sequence[OptionSpec] = OPTIONS

    def score_report(
        self, report: ReportInput, variant: Variant, options: Mapping[str, str]
    ) -> ReportScores:
        values = {
            v.criterion_id: v.value(variant)
            for v in report.verdicts
            if v.kind == KIND and v.criterion_id is not None
        }
        if not values:
            return {}
        return scores_of(tally(report.criteria, values, options))

    def aggregate(
        self, reports: Sequence[ReportScores], options: Mapping[str, str]
    ) -> dict[str, Aggregate]:
        out: dict[str, Aggregate] = {}
        for name in METRIC_NAMES:
            values = [v for r in reports if (v := r.get(name)) is not None]
            out[name] = Aggregate(sum(values) / len(values) if values else None, len(values))
        return out


FRAMEWORK = Drb2Framework()
