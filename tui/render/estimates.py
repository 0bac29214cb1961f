"""Estimates as Rich renderables: what ``gavel estimate`` prints and the workstation's Estimates
screen shows, built once from :func:`store.plans.estimates.estimate`'s data.

Every number says how far to trust it: an interval that could not be computed is shown as
"no interval" with the reason, never as ``[x, x]``; a weak one is marked ``?`` and its reason
listed under the table.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from rich.console import RenderableType
from rich.table import Table
from rich.text import Text

from store.plans.estimates import EstimateReport, MetricEstimate, RankRow

VARIANT_LABEL = {"judge": "judge only", "adjudicated": "adjudicated", "corrected": "corrected"}


def fmt_value(value: float | None, digits: int) -> str:
    return f"{value:.{max(digits, 2)}f}" if value is not None else "n/a"


def fmt_interval(
    value: float | None, lower: float | None, upper: float | None, digits: int, status: str = "ok"
) -> str:
    """``0.902 [0.874, 0.931]``; ``0.902 (no interval)`` when none could be computed; a
    trailing ``?`` when it is weak."""
    if value is None:
        return "n/a"
    shown = fmt_value(value, digits)
    if lower is None or upper is None:
        return f"{shown} (no interval)"
    places = max(digits, 2)
    if lower == upper == value:
        return f"{shown} (exact)"
    mark = " ?" if status == "weak" else ""
    return f"{shown} [{lower:.{places}f}, {upper:.{places}f}]{mark}"


def fmt_signed(value: float | None, lower: float | None, upper: float | None, digits: int) -> str:
    """A bias with its interval; without one, no number (a bare +0.00 would claim the judge
    is unbiased when nothing was measured)."""
    if value is None:
        return ""
    places = max(digits, 2)
    if lower is None or upper is None:
        return "?"
    return f"{value:+.{places}f} [{lower:+.{places}f}, {upper:+.{places}f}]"


def plan_line(report: EstimateReport) -> Text:
    text = Text()
    plan = report.plan
    if plan is None:
        text.append(f"{report.suite}: no review plan", "bold yellow")
        text.append(" — draw one with `gavel plan new --budget N` (or n on this screen)")
        return text
    progress = plan.progress
    text.append(progress.describe(plan.name), "bold")
    text.append(f" · {plan.summary()}")
    text.append(
        f" · {int(report.confidence * 100)}% intervals, target ±{report.target_half_width:g}", "dim"
    )
    return text


def needed_text(row: MetricEstimate, report: EstimateReport) -> str:
    if row.status == "undefined":
        return ""
    if row.needed is None:
        return "?"  # no forecast from fewer than ten disagreements
    if row.needed == 0:
        return "reached"
    left = (
        0
        if report.plan is None
        else max(0, report.plan.progress.subjects - report.plan.progress.decided)
    )
    suffix = "" if row.needed <= left else " (beyond the plan)"
    return f"+{row.needed:,}{suffix}"


def _rank_text(row: MetricEstimate) -> Text:
    text = Text()
    judge, corrected = row.ranks.get("judge"), row.ranks.get("corrected")
    if judge is None:
        return text
    text.append(f"#{judge}{row.swaps.get('judge', '')}")
    if corrected is not None and row.corrected is not None:
        text.append(" → ")
        text.append(
            f"#{corrected}{row.swaps.get('corrected', '')}",
            "bold magenta" if corrected != judge else "",
        )
    return text


def metric_table(
    report: EstimateReport, framework: str, metric: str, anytime: bool = False
) -> Table:
    rows = report.rows_for(framework, metric)
    first = rows[0]
    table = Table(
        title=f"{first.label} ({framework}.{metric}): judge → corrected",
        header_style="bold",
        title_justify="left",
    )
    for name, justify in (
        ("system", "left"),
        ("judge", "right"),
        ("corrected [CI]", "right"),
        ("bias (judge − corr.)", "right"),
        ("human only", "right"),
        ("reviews (≠)", "right"),
        (f"more for ±{report.target_half_width:g}", "right"),
        ("rank", "left"),
        ("", "left"),
    ):
        table.add_column(name, justify=justify)  # type: ignore[arg-type]
    if anytime:
        table.add_column("anytime ±", justify="right")
    for row in rows:
        style = "bold" if row.system_id is None else ""
        cells: list[Any] = [
            Text(row.system, style),
            Text(fmt_value(row.judge, row.digits)),
            _interval_cell(row),
            Text(
                fmt_signed(row.bias, row.bias_lower, row.bias_upper, row.digits), _bias_style(row)
            ),
            Text(
                fmt_interval(row.human, row.human_lower, row.human_upper, row.digits, row.status)
                if row.human is not None
                else "",
                "dim",
            ),
            Text(
                f"{row.reviews:,} ({row.disagreements})"
                if row.status != "undefined" or row.reviews
                else ""
            ),
            Text(needed_text(row, report)),
            _rank_text(row),
            Text(
                row.status if row.status != "ok" else "",
                "yellow" if row.status == "weak" else "red",
            ),
        ]
        if anytime:
            places = max(row.digits, 2)
            cells.append(Text("" if row.anytime is None else f"±{row.anytime:.{places}f}"))
        table.add_row(*cells)
    return table


def _interval_cell(row: MetricEstimate) -> Text:
    if row.status == "undefined":
        return Text("—", "dim")
    text = Text(fmt_interval(row.corrected, row.lower, row.upper, row.digits, row.status))
    if row.status == "weak":
        text.stylize("yellow")
    return text


def _bias_style(row: MetricEstimate) -> str:
    """Bias whose interval excludes zero is shown strong: the judge is measurably off."""
    if row.bias_lower is None or row.bias_upper is None or row.status != "ok":
        return "dim"
    if row.bias_lower > 0 or row.bias_upper < 0:
        return "bold red" if row.bias_lower > 0 else "bold green"
    return ""


def notes_text(rows: Iterable[MetricEstimate]) -> Text | None:
    """Why rows are weak or undefined: a note shared by every row once, then each row's
    own."""
    listed = [row for row in rows if row.notes]
    if not listed:
        return None
    shared = set(listed[0].notes)
    for row in listed[1:]:
        shared &= set(row.notes)
    text = Text()
    for note in listed[0].notes:
        if note in shared and len(listed) > 1:
            text.append("  • every row: ", "dim")
            text.append(note + "\n", "dim")
    for row in listed:
        own = [note for note in row.notes if note not in shared or len(listed) == 1]
        if own:
            text.append(f"  • {row.system}: ", "dim")
            text.append("; ".join(own) + "\n", "dim")
    text.rstrip()
    return text


def rank_table(report: EstimateReport, framework: str, metric: str) -> Table | None:
    pairs = [r for r in report.ranks if r.framework == framework and r.metric == metric]
    if not pairs:
        return None
    digits = report.rows_for(framework, metric)[0].digits
    table = Table(
        title=f"adjacent ranks ({framework}.{metric}): paired bootstrap over "
        f"{report.tasks} tasks, {report.resamples:,} resamples; t interval on "
        f"{max(1, report.tasks - 1)} df; could swap: Holm-corrected over the adjacent pairs; "
        "reversed: share of resamples in reverse order (not a probability)",
        header_style="bold",
        title_justify="left",
    )
    for name in ("variant", "higher", "lower", "difference [CI]", "reversed", "could swap"):
        table.add_column(name, justify="right" if name in ("reversed",) else "left")
    for pair in pairs:
        table.add_row(
            Text(VARIANT_LABEL[pair.variant]),
            Text(pair.upper),
            Text(pair.lower),
            Text(_pair_interval(pair, digits)),
            Text("" if pair.reversed_share is None else f"{pair.reversed_share:.3f}"),
            _swap_cell(pair),
        )
    return table


def _pair_interval(pair: RankRow, digits: int) -> str:
    places = max(digits, 2)
    if pair.lower_bound is None or pair.upper_bound is None:
        return f"{pair.difference:+.{places}f} (no interval)"
    return (
        f"{pair.difference:+.{places}f} [{pair.lower_bound:+.{places}f}, "
        f"{pair.upper_bound:+.{places}f}]"
    )


def _swap_cell(pair: RankRow) -> Text:
    if pair.status == "undefined":
        return Text(pair.note, "dim")
    text = Text("yes ⇅" if pair.could_swap else "no", "bold yellow" if pair.could_swap else "")
    if pair.status == "weak":
        text.append(f" ({pair.note})", "dim")
    return text


def estimate_renderables(
    report: EstimateReport, *, anytime: bool = False, ranks: bool = True, timing: bool = True
) -> list[RenderableType]:
    out: list[RenderableType] = [plan_line(report)]
    for note in report.notes:
        out.append(Text(f"  {note}", "dim"))
    seen: list[tuple[str, str]] = []
    for row in report.rows:
        if (row.framework, row.metric) not in seen:
            seen.append((row.framework, row.metric))
    for framework, metric in seen:
        out.append(Text(""))
        out.append(metric_table(report, framework, metric, anytime))
        notes = notes_text(report.rows_for(framework, metric))
        if notes is not None:
            out.append(notes)
        if ranks:
            table = rank_table(report, framework, metric)
            if table is not None:
                out.append(table)
    took = f"computed in {report.elapsed:.2f} s · " if timing else ""
    out.append(
        Text(
            f"\n{took}bias = judge − corrected (positive: the judge scores higher "
            "than humans would) · ? = weak (see the notes) · docs/estimates.md",
            "dim",
        )
    )
    return out


CSV_COLUMNS = (
    "framework",
    "metric",
    "system",
    "judge",
    "adjudicated",
    "corrected",
    "lower",
    "upper",
    "bias",
    "bias_lower",
    "bias_upper",
    "human",
    "human_lower",
    "human_upper",
    "lam",
    "reviews",
    "disagreements",
    "half_width",
    "needed",
    "anytime",
    "status",
    "notes",
)


def csv_rows(report: EstimateReport) -> list[dict[str, Any]]:
    return [
        {**{c: getattr(r, c) for c in CSV_COLUMNS if c != "notes"}, "notes": "; ".join(r.notes)}
        for r in report.rows
    ]
