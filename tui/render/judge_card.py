"""A judge card as Rich renderables: the same tables for ``gavel runs card``, the activation
preview and the workstation's card view."""

from __future__ import annotations

from typing import Any

from rich.console import RenderableType

from reviewer.judge_card.build import Card, Row
from reviewer.judge_card.stats import Interval
from reviewer.judge_card.text import (
    TOO_FEW,
    coefficient_text,
    interval_text,
    share_text,
)
from tui.render.agreement import confusion_table, label_for
from tui.render.safe import SafeText as Text
from tui.render.tables import data_table

COLUMNS = ["labels", "accuracy", "coefficient", "judge above", "judge below", "bias"]
COMPACT = ["n", "accuracy", "coefficient", "bias (above / below)"]
"""The columns on a narrow screen: two-digit bounds, the shares as percentages."""

_SHORT = {"kappa": "κ", "weighted kappa": "κw", "AC1": "AC1"}


def _cells(row: Row) -> dict[str, Any]:
    stats = row.stats
    return {
        "labels": f"{stats.n}" + (f" ({TOO_FEW})" if stats.too_few else ""),
        "accuracy": interval_text(stats.accuracy),
        "coefficient": coefficient_text(stats),
        "judge above": share_text(stats.bias.lenient),
        "judge below": share_text(stats.bias.strict),
        "bias": stats.bias.direction,
    }


def _short(found: Interval | None) -> str:
    if found is None or found.estimate is None:
        return "—"
    if found.lower is None or found.upper is None:
        return f"{found.estimate:.2f}"
    return f"{found.estimate:.2f} [{found.lower:.2f}, {found.upper:.2f}]"


def _percent(found: Interval) -> str:
    return "—" if found.estimate is None else f"{found.estimate:.0%}"


def _compact_cells(row: Row) -> dict[str, Any]:
    stats = row.stats
    coefficient = (
        "—" if stats.coefficient is None else f"{_SHORT[stats.coefficient]} {_short(stats.value)}"
    )
    return {
        "n": f"{stats.n}" + ("*" if stats.too_few else ""),
        "accuracy": _short(stats.accuracy),
        "coefficient": coefficient,
        "bias (above / below)": f"{stats.bias.direction} "
        f"{_percent(stats.bias.lenient)} / {_percent(stats.bias.strict)}",
    }


def card_head(card: Card, compact: bool = False) -> Text:
    s = card.settings
    head = Text()
    head.append(f"judge card of {card.run}", "bold")
    head.append(
        f" ({card.model}, {'active' if card.active else 'candidate'}): {card.labels} "
        f"subjects with a human decision, {card.errored} of them errored (left out)\n"
    )
    few = "n*: too few labels" if compact else TOO_FEW
    head.append(
        f"{s.confidence:.0%} intervals: Wilson for shares, percentile bootstrap for κ/AC1; "
        f"rows under {s.min_labels} labels get none ({few}); items whose upper bound "
        f"is below {s.threshold} are marked to revise. judge above/below: the judge's value "
        "above the human's among labels the human did not put at the top (lenient), below "
        "among those not at the bottom (strict)."
    )
    for note in card.notes:
        head.append(f"\n{note}", "bold yellow")
    return head


def summary_renderables(card: Card, items: int = 5, compact: bool = False) -> list[RenderableType]:
    """The short card for the activation preview: per benchmark and kind, and the worst
    ``items`` rubric items (``compact``: the columns of a narrow screen)."""
    out: list[RenderableType] = [card_head(card, compact)]
    if card.benchmarks:
        out.append(_table(card.benchmarks, "benchmark", _benchmark, "per benchmark", compact))
    if card.kinds:
        out.append(_table(card.kinds, "kind / dimension", _kind, "per kind and dimension", compact))
    if card.items:
        shown = card.items[:items]
        out.append(
            _table(
                shown,
                "rubric item",
                _item,
                f"worst rubric items ({len(shown)} of {len(card.items)}; "
                f"{len(card.flagged)} below the threshold)",
                compact,
            )
        )
    return out


def card_renderables(card: Card, compact: bool = False) -> list[RenderableType]:
    """The whole card: the summary with every item, each kind's confusion matrix, and the
    disagreeing examples of the items below the threshold."""
    out = summary_renderables(card, items=len(card.items), compact=compact)
    for row in card.kinds:
        confusion = row.stats.confusion
        if confusion is not None and row.stats.n:
            out.append(
                confusion_table(
                    confusion, f"{_kind(row)}: judge × human", "judge", "human", label_for(row.kind)
                )
            )
    for row in card.flagged:
        out.append(_examples(row))
    return out


def _table(
    rows: tuple[Row, ...], what: str, name: Any, title: str, compact: bool = False
) -> RenderableType:
    cells = _compact_cells if compact else _cells
    return data_table(
        [{what: name(r), **cells(r)} for r in rows],
        [what, *(COMPACT if compact else COLUMNS)],
        title=title,
        numeric=("labels", "n"),
    )


def _benchmark(row: Row) -> str:
    return row.framework


def _kind(row: Row) -> str:
    return f"{row.kind} / {row.dimension}" if row.dimension else row.kind


def _item(row: Row) -> str:
    text = row.text if len(row.text) <= 50 else row.text[:49] + "…"
    mark = "  ▼ revise" if row.below_threshold else ""
    return f"{row.kind} {row.item}: {text}{mark}"


def _examples(row: Row) -> RenderableType:
    return data_table(
        [
            {
                "report": e.report,
                "judge": e.judge,
                "human": e.human,
                "reviewer": e.reviewer,
                "rationale": e.rationale,
            }
            for e in row.examples
        ],
        ["report", "judge", "human", "reviewer", "rationale"],
        title=f"{row.kind} {row.item} (below the threshold): disagreeing examples",
    )
