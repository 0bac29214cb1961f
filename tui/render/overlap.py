"""The overlap section of ``gavel agreement`` and the agreement screen: reviewers against each
other on the subjects handed to two or more of them, with intervals, per kind and per reviewer,
and where the overlap stands (open disagreements named)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tui.render.tables import data_table, fmt_number

if TYPE_CHECKING:
    from rich.console import RenderableType

    from reviewer.agreement import BootstrapCI
    from store.assignments.agreement import OverlapReport

OPEN_SHOWN = 10
"""Open disagreements listed by target (the count is always given)."""
MIN_ITEMS = 20
"""Shared items below which a coefficient gets no interval: a percentile bootstrap over a
handful of items is narrower than the truth (the judge card's rule for labels)."""


def overlap_renderables(report: OverlapReport) -> list[RenderableType]:
    from tui.render.safe import SafeText as Text

    if not report.subjects:
        return []
    status = Text(
        f"Overlap: {report.subjects:,} subjects handed to ≥ 2 reviewers · "
        f"{report.pending:,} not yet decided by all · {report.agreed:,} agreed · "
        f"{report.adjudicated:,} adjudicated · {report.open:,} open"
    )
    parts: list[RenderableType] = [status]
    if report.open:
        parts.append(
            Text(
                f"{report.open:,} disagreements are still open (gavel conflicts; adjudicate "
                "with A or gavel adjudicate): until then the estimates keep the judge's value "
                "for them.",
                style="yellow",
            )
        )
        parts.extend(Text(f"  open: {t}", style="dim") for t in report.open_targets[:OPEN_SHOWN])
    if report.kinds:
        parts.append(_kinds(report))
        parts.append(_pairs(report))
    if report.reviewers:
        parts.append(_reviewers(report))
    return parts


def _kinds(report: OverlapReport) -> RenderableType:
    return data_table(
        [
            {
                "kind": k.kind,
                "level": k.level,
                "reviewers": ", ".join(k.reviewers),
                "items": k.n_items,
                "alpha [95% CI]": ci_text(k.alpha, k.n_items),
                "ac1 [95% CI]": ci_text(k.ac1, k.n_items) if k.ac1 is not None else "",
            }
            for k in report.kinds
        ],
        ["kind", "level", "reviewers", "items", "alpha [95% CI]", "ac1 [95% CI]"],
        title="Reviewer vs reviewer on the overlap (Krippendorff's α, Gwet's AC1)",
        numeric=("items",),
    )


def _pairs(report: OverlapReport) -> RenderableType:
    return data_table(
        [
            {
                "kind": k.kind,
                "a": p.a,
                "b": p.b,
                "n": p.n,
                "agreement": fmt_number(p.agreement) if p.agreement is not None else "",
                "kappa [95% CI]": ci_text(p.kappa, p.n) if p.kappa is not None else "",
            }
            for k in report.kinds
            for p in k.pairs
        ],
        ["kind", "a", "b", "n", "agreement", "kappa [95% CI]"],
        title="Pairs on the overlap (Cohen's κ)",
        numeric=("n", "agreement"),
    )


def _reviewers(report: OverlapReport) -> RenderableType:
    rows: list[dict[str, Any]] = [
        {
            "reviewer": r.reviewer,
            "shared": r.decided,
            "agreed": r.agreed,
            "agreement": fmt_number(r.agreed / r.decided) if r.decided else "",
            "adjudicated": r.adjudicated,
            "as adjudicated": (
                fmt_number(r.matched_adjudication / r.adjudicated) if r.adjudicated else ""
            ),
        }
        for r in report.reviewers
    ]
    return data_table(
        rows,
        ["reviewer", "shared", "agreed", "agreement", "adjudicated", "as adjudicated"],
        title="Each reviewer on the overlap (agreement with co-reviewers; with adjudications)",
        numeric=("shared", "agreed", "agreement", "adjudicated", "as adjudicated"),
    )


def ci_text(ci: BootstrapCI, items: int | None = None) -> str:
    """``0.710 [0.550, 0.840]``; an estimate without an interval says so, and one on fewer than
    :data:`MIN_ITEMS` shared items says that it is too weak for one."""
    if ci.estimate is None:
        return "n/a"
    if items is not None and items < MIN_ITEMS:
        return f"{fmt_number(ci.estimate)} [too few items for an interval: {items}]"
    if ci.lower is None or ci.upper is None:
        return f"{fmt_number(ci.estimate)} [no interval]"
    return f"{fmt_number(ci.estimate)} [{fmt_number(ci.lower)}, {fmt_number(ci.upper)}]"
