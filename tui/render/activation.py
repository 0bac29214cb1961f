"""What activating a judge run would change, as Rich renderables: the same tables for
``gavel runs activate`` and the workstation's runs screen."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import RenderableType

from store.runs.activation import ActivationPreview, GoldAgreement
from tui.render.agreement import confusion_table, label_for
from tui.render.safe import SafeText as Text
from tui.render.tables import data_table, fmt_delta, fmt_number

if TYPE_CHECKING:
    from reviewer.judge_card.build import Card


def gold_line(gold: GoldAgreement) -> str:
    if not gold.n:
        return "no decided subject to compare"
    return f"{gold.agreed}/{gold.n} agree ({fmt_number(gold.accuracy)})"


def _rank(before: int | None, after: int | None) -> str:
    if before == after:
        return "" if before is None else f"#{before}"
    return f"#{before} → #{after}"


def preview_renderables(
    seen: ActivationPreview, card: Card | None = None, compact: bool = False
) -> list[RenderableType]:
    """The preview; with ``card``, the run's judge card (per benchmark and kind, and its
    worst rubric items) after the scores it would change; ``compact`` lays the card out for
    a narrow screen."""
    state = "already active" if seen.active else "a candidate"
    head = Text()
    head.append(f"run {seen.run}", "bold")
    head.append(
        f" ({state}): {seen.judgments:,} verdicts on {seen.reports} reports, "
        f"{seen.errors} errored\n"
    )
    head.append(
        f"against the human labels: {gold_line(seen.gold)}; what counts now on the "
        f"same subjects: {gold_line(seen.current)}"
    )
    out: list[RenderableType] = [head]
    for reason in seen.reasons:
        out.append(Text(f"needs a confirmation: {reason}", style="bold yellow"))
    if seen.gold.kinds:
        out += _per_kind(seen.gold)
    out.append(_changes(seen))
    if card is not None:
        from tui.render.judge_card import summary_renderables

        out += summary_renderables(card, compact=compact)
    return out


def _per_kind(gold: GoldAgreement) -> list[RenderableType]:
    """The run against the human labels kind by kind, with each kind's confusion matrix."""
    out: list[RenderableType] = [
        data_table(
            [
                {
                    "kind": k.kind,
                    "n": k.n,
                    "accuracy": fmt_number(k.accuracy.value),
                    "kappa": fmt_number(k.kappa.value) if k.kappa else "",
                    "errors": k.failed_a,
                }
                for k in gold.kinds
            ],
            ["kind", "n", "accuracy", "kappa", "errors"],
            title="the run against the human labels, per kind",
            numeric=("n", "errors"),
        )
    ]
    for k in gold.kinds:
        if k.confusion is not None and k.n:
            out.append(
                confusion_table(
                    k.confusion, f"{k.kind}: run × human", "run", "human", label_for(k.kind)
                )
            )
    return out


def _changes(seen: ActivationPreview) -> RenderableType:
    """The headline scores and ranks activating the run would move."""
    moved = [c for c in seen.changes if c.before != c.after or c.rank_before != c.rank_after]
    return data_table(
        [
            {
                "system": c.system,
                "metric": c.metric,
                "variant": c.variant,
                "before": fmt_number(c.before),
                "after": fmt_number(c.after),
                "delta": fmt_delta(
                    None if c.before is None or c.after is None else c.after - c.before
                ),
                "rank": _rank(c.rank_before, c.rank_after),
            }
            for c in moved
        ],
        ["system", "metric", "variant", "before", "after", "delta", "rank"],
        title=f"headline scores that would change ({len(moved)} of {len(seen.changes)})",
        numeric=("before", "after", "delta"),
    )
