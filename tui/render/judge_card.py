"""A judge card as Rich renderables: the same tables for ``gavel runs card``, the activation
preview and the workstation's card view."""

from __future__ import annotations

from typing import Any

from rich.console import RenderableType

from reviewer.judge_card.build import Card, Row
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


def card_head(card: Card) -> Text:
    s = card.settings
    head = Text()
    head.append(f"judge card of {card.run}", "bold")
    head.append(
        f" ({card.model}, {'active' if card.active else 'candidate'}): {card.labels} "
        f"subjects with a human decision, {card.errored} of them errored (left out)\n"
    )
    head.append(
        f"{s.confidence:.0%} intervals: Wilson for shares, percentile bootstrap for κ/AC1; "
        f"rows under {s.min_labels} labels get none ({TOO_FEW}); items whose upper bound "
        f"is below {s.threshold} are marked to revise. judge above/below: the judge's value "
        "above the human's among labels the human did not put at the top (lenient), below "
        "among those not at the bottom (strict)."
    )
    for note in card.notes:
        head.append(f"\n{note}", "bold yellow")
    return head


def summary_renderables(card: Card, items: int = 5) -> list[RenderableType]:
    """The short card for the activation preview: per benchmark and kind, and the worst
    ``items`` rubric items."""
    out: list[RenderableType] = [card_head(card)]
    if card.benchmarks:
        out.append(_table(card.benchmarks, "benchmark", _benchmark, "per benchmark"))
    if card.kinds:
        out.append(_table(card.kinds, "kind / dimension", _kind, "per kind and dimension"))
    if card.items:
        shown = card.items[:items]
        out.append(
            _table(
                shown,
                "rubric item",
                _item,
                f"worst rubric items ({len(shown)} of {len(card.items)}; "
                f"{len(card.flagged)} below the threshold)",
            )
        )
    return out


def card_renderables(card: Card) -> list[RenderableType]:
    """The whole card: the summary with every item, each kind's confusion matrix, and the
    disagreeing examples of the items below the threshold."""
    out = summary_renderables(card, items=len(card.items))
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


def _table(rows: tuple[Row, ...], what: str, name: Any, title: str) -> RenderableType:
    return data_table(
        [{what: name(r), **_cells(r)} for r in rows],
        [what, *COLUMNS],
        title=title,
        numeric=("labels",),
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
