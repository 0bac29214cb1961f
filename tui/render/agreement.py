"""The agreement report as Rich renderables: what ``gavel agreement`` prints and the
workstation's agreement screen shows, built once from the data of
:func:`store.views.agreement.agreement`.

Confusion matrices are coloured (agreement on the diagonal green, disagreement red, the darker
the more items) so that where a judge goes wrong shows at a glance.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rich.console import RenderableType
from rich.table import Table

from reviewer.adjudication import SIDES_MARKER
from reviewer.agreement import (
    AlphaResult,
    BootstrapCI,
    ChanceCorrected,
    ConfusionMatrix,
    Estimate,
)
from reviewer.comparison import PREVALENCE_CHANCE, CategoricalComparison
from reviewer.registry import get_kind
from store.views.agreement import AgreementReport, JudgeHumanGroup
from tui.render.safe import SafeText as Text
from tui.render.tables import data_table, fmt_number, subject_name

DISAGREEMENTS_SHOWN = 10
"""Disagreeing items listed per group unless asked for more (a negative limit lists all)."""


def agreement_renderables(
    report: AgreementReport, limit: int = DISAGREEMENTS_SHOWN
) -> list[RenderableType]:
    """Every table of the report, in reading order; ``limit`` disagreements per group (all
    when negative). An empty report gives an empty list."""
    out: list[RenderableType] = []
    out += _judge_human(report, limit)
    out += _reviewers(report)
    out += _ratings(report)
    return out


def _judge_human(report: AgreementReport, limit: int) -> list[RenderableType]:
    if not report.judge_human:
        return []
    out: list[RenderableType] = [
        data_table(
            [_judge_human_row(g) for g in report.judge_human],
            [
                "framework",
                "dimension",
                "kind",
                "run",
                "n",
                "accuracy",
                "kappa",
                "weighted",
                "ac1",
                "disagree",
            ],
            title=f"Judge vs human (effective human decision; 95% bootstrap CI, "
            f"{report.n_resamples} resamples; weighted = quadratic κ, ordinal scales)",
            numeric=("n",),
        )
    ]
    caveats = caveat_text(
        [
            (f"{_where(g)} · {g.run}", g.categorical.caveats)
            for g in report.judge_human
            if g.categorical is not None
        ]
    )
    if caveats is not None:
        out.append(caveats)
    for g in report.judge_human:
        out += _judge_human_details(g, limit)
    return out


def _judge_human_row(g: JudgeHumanGroup) -> dict[str, Any]:
    """One group's statistics: κ and AC1 on a categorical scale, error and correlation on a
    continuous one."""
    row: dict[str, Any] = {
        "framework": g.framework,
        "dimension": g.dimension or "—",
        "kind": g.kind,
        "run": f"{g.run} ({g.model})",
        "n": g.n,
        "disagree": len(g.disagreements),
    }
    if g.categorical is not None:
        c = g.categorical
        row.update(
            accuracy=_ci(c.accuracy),
            kappa=_kappa(c),
            weighted=_ci(c.weighted_kappa),
            ac1=_value(c.ac1),
        )
    elif g.continuous is not None:
        m = g.continuous
        row.update(
            accuracy=_value(m.exact),
            kappa=f"MAE {_value(m.mae)}",
            weighted=f"r {_value(m.pearson)}",
            ac1=f"ρ {_value(m.spearman)}",
        )
    if g.judge_failed:
        row["disagree"] = f"{len(g.disagreements)} (+{g.judge_failed} judge failed)"
    return row


def _where(g: JudgeHumanGroup) -> str:
    return f"{g.framework} · {g.kind}" + (
        f" · {g.dimension}" if g.dimension and g.dimension != g.kind else ""
    )


def _judge_human_details(g: JudgeHumanGroup, limit: int) -> list[RenderableType]:
    """A group's confusion matrix (categorical scales) and its first ``limit``
    disagreements."""
    out: list[RenderableType] = []
    where = _where(g)
    if g.categorical is not None:
        out.append(
            confusion_table(
                g.categorical.confusion,
                f"{where} · {g.run}: judge × human",
                "judge",
                "human",
                label_for(g.kind),
            )
        )
    shown = g.disagreements if limit < 0 else g.disagreements[:limit]
    if shown:
        out.append(
            data_table(
                [
                    {
                        "id": d.judgment_id,
                        "report": d.report,
                        "subject": subject_name(d.subject),
                        "judge": d.judge,
                        "human": d.human,
                        "status": d.status,
                        "by": d.decided_by,
                        "reason": d.reason or "",
                        "rationale": _own_words(d.rationale),
                    }
                    for d in shown
                ],
                [
                    "id",
                    "report",
                    "subject",
                    "judge",
                    "human",
                    "status",
                    "by",
                    "reason",
                    "rationale",
                ],
                title=f"{where} · {g.run}: disagreements ({len(shown)} of {len(g.disagreements)})",
                numeric=("id",),
            )
        )
    return out


def _reviewers(report: AgreementReport) -> list[RenderableType]:
    if not report.reviewers:
        return []
    groups = data_table(
        [
            {
                "framework": r.framework,
                "kind": r.kind,
                "level": r.stats.level,
                "reviewers": ", ".join(r.stats.reviewers),
                "items": r.stats.n_items,
                "differ": r.differing,
                "alpha": _value(r.stats.alpha),
                "ac1": _value(r.stats.ac1),
            }
            for r in report.reviewers
        ],
        ["framework", "kind", "level", "reviewers", "items", "differ", "alpha", "ac1"],
        title="Reviewer vs reviewer (items decided by ≥ 2 reviewers; "
        "Krippendorff's α at the scale's level, Gwet's AC1)",
        numeric=("items", "differ", "alpha", "ac1"),
    )
    pairs = data_table(
        [
            {
                "kind": r.kind,
                "a": p.a,
                "b": p.b,
                "n": p.n,
                "agreement": _value(p.accuracy),
                "kappa": _pair_kappa(p.kappa) if p.kappa else "",
                "weighted": _value(p.weighted_kappa) if p.weighted_kappa else "",
                "pearson": _value(p.pearson) if p.pearson else "",
            }
            for r in report.reviewers
            for p in r.stats.pairs
        ],
        ["kind", "a", "b", "n", "agreement", "kappa", "weighted", "pearson"],
        title="Reviewer pairs (Cohen's κ; weighted = quadratic)",
        numeric=("n", "agreement", "kappa", "weighted", "pearson"),
    )
    return [groups, pairs]


def _ratings(report: AgreementReport) -> list[RenderableType]:
    if not report.ratings:
        return []
    out: list[RenderableType] = [
        data_table(
            [
                {
                    "metric": f"{r.framework}.{r.metric}",
                    "variant": r.variant,
                    "pairs": r.n,
                    "reports": r.reports,
                    "raters": ", ".join(r.raters),
                    "accuracy": _ci(r.comparison.accuracy),
                    "weighted kappa": _ci(r.comparison.weighted_kappa),
                    "kappa": _ci(r.comparison.kappa),
                }
                for r in report.ratings
            ],
            [
                "metric",
                "variant",
                "pairs",
                "reports",
                "raters",
                "accuracy",
                "weighted kappa",
                "kappa",
            ],
            title="Computed report level vs reviewers' overall 1–4 ratings "
            "(DailyReport §5.5: quadratic-weighted κ, paper 0.859)",
            numeric=("pairs", "reports"),
        )
    ]
    caveats = caveat_text(
        [(f"{r.framework}.{r.metric} ({r.variant})", r.comparison.caveats) for r in report.ratings]
    )
    if caveats is not None:
        out.append(caveats)
    for r in report.ratings:
        out.append(
            confusion_table(
                r.comparison.confusion,
                f"{r.framework}.{r.metric} ({r.variant}) × overall rating",
                r.metric,
                "rating",
                str,
            )
        )
    return out


def confusion_table(
    matrix: ConfusionMatrix, title: str, rows: str, columns: str, label: Callable[[str], str]
) -> Table:
    names = [label(str(code)) for code in matrix.labels]
    table = Table(title=title, header_style="bold")
    table.add_column(f"{rows} ↓ / {columns} →")
    for name in names:
        table.add_column(Text(name), justify="right")
    table.add_column("total", justify="right", style="bold")
    peak = max((c for row in matrix.counts for c in row), default=0) or 1
    for i, (name, counts) in enumerate(zip(names, matrix.counts, strict=True)):
        cells = [_count_cell(count, peak, i == j) for j, count in enumerate(counts)]
        table.add_row(Text(name), *cells, Text(str(sum(counts))))
    totals = [Text(str(sum(row[j] for row in matrix.counts))) for j in range(len(names))]
    table.add_row(Text("total", style="bold"), *totals, Text(str(matrix.n)))
    return table


def _count_cell(count: int, peak: int, agreed: bool) -> Text:
    """Agreement green, disagreement red; at half the largest count or more, filled."""
    if count == 0:
        return Text("0", style="dim")
    hue = "green" if agreed else "red"
    return Text(str(count), style=f"bold white on {hue}" if count / peak >= 0.5 else hue)


def _ci(ci: BootstrapCI | None) -> str:
    """A value with its interval; an interval every resample agrees on is no interval (a
    single class, a handful of pairs) and is said to be none, not shown as ``[x, x]``."""
    if ci is None or ci.estimate is None:
        return "n/a" if ci is not None else ""
    if ci.lower is None or ci.upper is None:
        return f"{ci.estimate:.3f} (no interval)"
    if ci.upper - ci.lower <= 1e-12:
        return f"{ci.estimate:.3f} (no spread)"
    return f"{ci.estimate:.3f} [{ci.lower:.2f}, {ci.upper:.2f}]"


def _kappa(comparison: CategoricalComparison) -> str:
    """κ, or why it is not worth reading: a rater used one class (κ is 0 by construction),
    or κ is deflated by prevalence; either way with AC1 beside it and the reason listed
    under the table."""
    ac1 = comparison.ac1.value
    beside = "" if ac1 is None else f" (AC1 {ac1:.3f})"
    if any("used one class" in c for c in comparison.caveats):
        return "n/a: one class ⚠" + beside
    text = _ci(comparison.kappa)
    if any("prevalence" in c for c in comparison.caveats):
        text += " ⚠ prevalence" + beside
    return text


def _pair_kappa(kappa: ChanceCorrected) -> str:
    """A reviewer pair's κ, or why it misleads: undefined when both used one and the same
    class; deflated by prevalence when chance agreement is high though they mostly agree."""
    if kappa.n and kappa.value is None:
        return "n/a: one class"
    text = _value(kappa)
    chance, observed = kappa.chance_agreement, kappa.observed_agreement
    if (
        chance is not None
        and observed is not None
        and kappa.value is not None
        and chance >= PREVALENCE_CHANCE
        and observed >= 0.8
        and kappa.value < 0.5
    ):
        text += f" ⚠ prevalence (pₑ {chance:.2f}, {observed:.0%} agree)"
    return text


def caveat_text(groups: list[tuple[str, tuple[str, ...]]]) -> Text | None:
    """The caveats of every group, one line each, under the table they qualify."""
    text = Text()
    for where, caveats in groups:
        for caveat in caveats:
            text.append(f"  ⚠ {where}: ", "yellow")
            text.append(caveat + "\n", "dim")
    if not text.plain:
        return None
    text.rstrip()
    return text


def _value(stat: Estimate | ChanceCorrected | AlphaResult | None) -> str:
    if stat is None:
        return ""
    return fmt_number(stat.value)


def _own_words(rationale: str) -> str:
    """An adjudication's rationale without the sides note it carries (shown elsewhere)."""
    own, marker, _ = rationale.partition(SIDES_MARKER)
    return own.strip() + (" [resolves a conflict]" if marker else "")


def label_for(kind_name: str) -> Callable[[str], str]:
    """Codes with their scale's label where it says more (``1 (supported)``)."""
    kind = get_kind(kind_name)
    if kind is None:
        return str
    return lambda code: (
        code if kind.scale.label_of(code) == code else f"{code} ({kind.scale.label_of(code)})"
    )
