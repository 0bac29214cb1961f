"""A judge card: how one judge run agrees with the human decisions (the gold labels) on the
subjects both cover, per benchmark, per kind and dimension, and per rubric item, worst first.

A **rubric item** is a criterion's text within its benchmark, kind and dimension: a rubric
shared by several tasks (DR. Bench's general rubrics, a checklist item asked of every report)
is one item whose labels pool over its tasks; a task-specific criterion is its own item. Claim
and other non-criterion verdicts have no rubric item: they appear in the kind rows only.

An item is **below the threshold** when the upper end of its coefficient's interval is below
``threshold`` (κ < 0.4 is "fair" or worse on Landis & Koch's reading): the data rule out even
moderate agreement. An item with too few labels has no interval and is never below it — the
card cannot tell a bad item from bad luck there, and says so.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from reviewer.comparison import Level, scale_labels, scale_level
from reviewer.judge_card.stats import (
    DEFAULT_CONFIDENCE,
    DEFAULT_MIN_LABELS,
    DEFAULT_RESAMPLES,
    Agreement,
    agreement,
    pooled,
)
from reviewer.registry import get_kind
from reviewer.scales import Scale

DEFAULT_THRESHOLD = 0.4
"""An item whose coefficient's upper bound is below this is proposed for revision."""
EXAMPLES_PER_ITEM = 5
"""Disagreeing examples a revision proposal carries."""


@dataclass(frozen=True, slots=True)
class Label:
    """One subject the run judged and a human decided."""

    kind: str
    judge: str
    human: str
    dimension: str = ""
    item: str | None = None
    """The criterion's id (None for a verdict about a claim or anything else)."""
    text: str = ""
    task: str = ""
    report: str = ""
    system: str = ""
    reviewer: str = ""
    rationale: str = ""
    explanation: str = ""


@dataclass(frozen=True, slots=True)
class Settings:
    confidence: float = DEFAULT_CONFIDENCE
    min_labels: int = DEFAULT_MIN_LABELS
    threshold: float = DEFAULT_THRESHOLD
    n_resamples: int = DEFAULT_RESAMPLES
    seed: int = 0


@dataclass(frozen=True, slots=True)
class Row:
    framework: str
    kind: str
    dimension: str
    item: str
    """Criterion id ('' on benchmark and kind rows)."""
    text: str
    tasks: tuple[str, ...]
    stats: Agreement
    below_threshold: bool
    examples: tuple[Label, ...] = ()
    """Labels the judge and the human decided differently (items only; a few)."""
    criteria: tuple[tuple[str, str], ...] = ()
    """(task, criterion id) of each criterion an item row pools."""


@dataclass(frozen=True, slots=True)
class Card:
    run: str
    model: str
    active: bool
    settings: Settings
    labels: int
    errored: int
    """Subjects a human decided that the run judged with an error (no value): not counted."""
    benchmarks: tuple[Row, ...]
    kinds: tuple[Row, ...]
    items: tuple[Row, ...]
    """Worst first: rows with an interval by their coefficient's upper bound, then rows
    with too few labels by their point estimate."""
    notes: tuple[str, ...] = field(default=())

    @property
    def flagged(self) -> tuple[Row, ...]:
        """The items whose agreement interval lies below the threshold."""
        return tuple(r for r in self.items if r.below_threshold)


@dataclass(frozen=True, slots=True)
class _Scale:
    level: Level
    labels: tuple[str, ...]
    numbers: Callable[[str], float | None]
    bounds: tuple[float, float] | None


def _scale_of(kind: str, seen: Iterable[str]) -> _Scale:
    spec = get_kind(kind)
    if spec is None:
        labels = tuple(sorted(set(seen)))
        return _Scale("nominal", labels, lambda _: None, None)
    scale = spec.scale
    level = scale_level(scale)
    labels = () if level == "interval" else scale_labels(scale)
    labels += tuple(sorted({v for v in seen if v not in labels})) if labels else ()
    return _Scale(level, labels, _numbers(scale), _bounds(scale))


def _numbers(scale: Scale) -> Callable[[str], float | None]:
    def number(code: str) -> float | None:
        try:
            return scale.numeric(code)
        except (ValueError, KeyError):
            return None

    return number


def _bounds(scale: Scale) -> tuple[float, float] | None:
    if scale.continuous:
        if scale.low is None or scale.high is None:
            return None
        return scale.low, scale.high
    numbers = [c.numeric for c in scale.choices if c.numeric is not None]
    return (min(numbers), max(numbers)) if numbers else None


def _framework(kind: str) -> str:
    spec = get_kind(kind)
    return spec.framework if spec is not None else "?"


def _stats(labels: Sequence[Label], kind: str, settings: Settings) -> Agreement:
    scale = _scale_of(kind, [v for lab in labels for v in (lab.judge, lab.human)])
    return agreement(
        [lab.judge for lab in labels],
        [lab.human for lab in labels],
        scale.labels,
        scale.level,
        scale.numbers,
        scale.bounds,
        confidence=settings.confidence,
        min_labels=settings.min_labels,
        n_resamples=settings.n_resamples,
        seed=settings.seed,
    )


def _below(stats: Agreement, threshold: float) -> bool:
    value = stats.value
    return (
        not stats.too_few
        and value is not None
        and value.upper is not None
        and value.upper < threshold
    )


def build_card(
    run: str,
    model: str,
    active: bool,
    labels: Sequence[Label],
    errored: int = 0,
    settings: Settings | None = None,
) -> Card:
    """The card of ``run`` from its labels (one per subject both judged and decided)."""
    settings = settings or Settings()
    kinds = _kind_rows(labels, settings)
    by_framework: dict[str, list[Row]] = defaultdict(list)
    for row in kinds:
        by_framework[row.framework].append(row)
    benchmarks = tuple(
        Row(
            framework,
            "",
            "",
            "",
            "",
            (),
            pooled(
                [r.stats for r in rows],
                confidence=settings.confidence,
                min_labels=settings.min_labels,
            ),
            False,
        )
        for framework, rows in sorted(by_framework.items())
    )
    items = tuple(sorted(_item_rows(labels, settings), key=_worst_first))
    return Card(
        run, model, active, settings, len(labels), errored, benchmarks, kinds, items, _notes(labels)
    )


def _kind_rows(labels: Sequence[Label], settings: Settings) -> tuple[Row, ...]:
    groups: dict[tuple[str, str, str], list[Label]] = defaultdict(list)
    for lab in labels:
        groups[(_framework(lab.kind), lab.kind, lab.dimension)].append(lab)
    return tuple(
        Row(
            framework,
            kind,
            dimension,
            "",
            "",
            tuple(sorted({lab.task for lab in group})),
            stats := _stats(group, kind, settings),
            _below(stats, settings.threshold),
        )
        for (framework, kind, dimension), group in sorted(groups.items())
    )


def _item_rows(labels: Sequence[Label], settings: Settings) -> Iterable[Row]:
    """One row per rubric item (criterion text within benchmark, kind and dimension)."""
    groups: dict[tuple[str, str, str, str], list[Label]] = defaultdict(list)
    for lab in labels:
        if lab.item is not None:
            key = (_framework(lab.kind), lab.kind, lab.dimension, " ".join(lab.text.split()))
            groups[key].append(lab)
    return [_item_row(*key, group, settings) for key, group in groups.items()]


def _item_row(
    framework: str, kind: str, dimension: str, text: str, group: list[Label], settings: Settings
) -> Row:
    """An item's row: its criteria (one per task that shares the text), its statistics and
    the first few labels the judge and the human decided differently."""
    stats = _stats(group, kind, settings)
    criteria = tuple(sorted({(lab.task, lab.item or "") for lab in group}))
    ids = sorted({c for _, c in criteria})
    return Row(
        framework,
        kind,
        dimension,
        ids[0] if len(ids) == 1 else f"{ids[0]} (+{len(ids) - 1})",
        text,
        tuple(sorted({lab.task for lab in group})),
        stats,
        _below(stats, settings.threshold),
        tuple(lab for lab in group if lab.judge != lab.human)[:EXAMPLES_PER_ITEM],
        criteria,
    )


def _worst_first(row: Row) -> tuple[int, float, float, str, str, str]:
    stats = row.stats
    value = stats.value
    if not stats.too_few and value is not None and value.upper is not None:
        return (0, value.upper, value.estimate or 0.0, row.framework, row.kind, row.item)
    point = value.estimate if value is not None and value.estimate is not None else None
    if point is None:
        point = stats.accuracy.estimate if stats.accuracy.estimate is not None else 1.0
    return (1, point, -stats.n, row.framework, row.kind, row.item)


def _notes(labels: Sequence[Label]) -> tuple[str, ...]:
    if not labels:
        return (
            "no subject this run judged has a human decision yet: decide some "
            "(a review plan draws a fair sample) before reading anything into this card",
        )
    return ()


def revision_payload(card: Card, row: Row) -> dict[str, object]:
    """What a "revise this rubric item" proposal carries: the item, the agreement that put
    it below the threshold, and the disagreeing examples with the reviewers' rationales."""
    value = row.stats.value
    return {
        "run": card.run,
        "model": card.model,
        "kind": row.kind,
        "dimension": row.dimension,
        "item": row.item,
        "text": row.text,
        "criteria": [{"task": t, "criterion": c} for t, c in row.criteria],
        "n": row.stats.n,
        "accuracy": row.stats.accuracy.estimate,
        "coefficient": row.stats.coefficient,
        "estimate": value.estimate if value else None,
        "interval": [value.lower, value.upper] if value else None,
        "confidence": card.settings.confidence,
        "threshold": card.settings.threshold,
        "bias": row.stats.bias.direction,
        "examples": [
            {
                "task": e.task,
                "report": e.report,
                "system": e.system,
                "judge": e.judge,
                "human": e.human,
                "reviewer": e.reviewer,
                "rationale": e.rationale,
                "judge_explanation": e.explanation,
            }
            for e in row.examples
        ],
    }
