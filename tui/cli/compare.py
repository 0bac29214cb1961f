"""``gavel compare``: judge runs side by side (verdict agreement, score differences) and the
noise band of repeated runs of the same reports (:mod:`store.runs.compare`)."""

from __future__ import annotations

import sqlite3
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from reviewer.judge.compare import DEFAULT_STD, STD_CHOICES
from reviewer.registry import frameworks
from store.runs.compare import Noise, RunComparison, check_runs, compare_runs, run_noise
from store.runs.records import suite_runs
from tui.cli.options import db_option, format_option, open_db
from tui.cli.output import emit, wide_console
from tui.render.noise import band_rows, group_rows, rank_rows
from tui.render.tables import fmt_delta, fmt_number

if TYPE_CHECKING:
    from collections.abc import Mapping

    from rich.console import Console

    from reviewer.agreement import ConfusionMatrix
    from reviewer.framework import Framework, Variant


def _metrics(names: tuple[str, ...]) -> list[tuple[str, str]]:
    """``FRAMEWORK.METRIC`` or a metric name only one framework has; by default every
    headline metric and those a framework marks for comparison."""
    registry = frameworks()
    if names:
        return [_metric_named(name, registry) for name in names]
    return [
        (name, m.name)
        for name, fw in registry.items()
        for m in fw.metrics
        if m.headline or m.compare
    ]


def _metric_named(name: str, registry: Mapping[str, Framework]) -> tuple[str, str]:
    """``FRAMEWORK.METRIC`` as written, or the one framework that has a metric of that name."""
    framework, dot, metric = name.partition(".")
    if dot:
        return framework, metric
    owners = [fw for fw, spec in registry.items() if any(m.name == name for m in spec.metrics)]
    if len(owners) != 1:
        where = f"it is in {', '.join(owners)}" if owners else "no framework has it"
        raise click.BadParameter(
            f"{name!r}: write FRAMEWORK.METRIC ({where})", param_hint="--metric"
        )
    return owners[0], name


@click.command(
    help="Verdict agreement and score differences between judge runs, and their noise band: "
    "per system and metric the mean, sd and range over the runs (each run scored from its "
    "own verdicts), per verdict kind and dimension the flip rate and Krippendorff's alpha, "
    "and how stable the systems' order is (Kendall tau between runs, adjacent swaps); a "
    "system's band is over its reports that every run of the same verdict kinds judged. "
    "Without RUN: every run of --suite (or of the database). "
    "Repeated runs of the same reports come in with `gavel import --as-run NAME`."
)
@db_option
@click.argument("run_ids", nargs=-1, metavar="[RUN]...", help="two or more judge run ids")
@click.option(
    "--suite",
    default=None,
    help="compare every run of this suite (when no RUN is given)",
)
@click.option(
    "--metric",
    "metrics",
    multiple=True,
    help="system metric to compare (repeatable; default: headline metrics, "
    "SubTaskPass and Refer_Claim_Consistency)",
)
@click.option(
    "--std",
    type=click.Choice(tuple(STD_CHOICES)),
    default=DEFAULT_STD,
    help="sample (n-1, default) or population (n) standard deviation",
)
@click.option(
    "--variant",
    type=click.Choice(("judge", "adjudicated")),
    default="judge",
    help="score each run from its own values (default) or with human decisions",
)
@format_option("table", "json")
def compare(
    db: Path | None,
    run_ids: tuple[str, ...],
    suite: str | None,
    metrics: tuple[str, ...],
    std: str,
    variant: str,
    fmt: str,
) -> int:
    if run_ids:
        check_runs(run_ids)
    conn = open_db(db)
    runs = list(run_ids) or _all_runs(conn, suite)
    check_runs(runs)
    chosen = _metrics(metrics)
    how: Variant = "adjudicated" if variant == "adjudicated" else "judge"
    found = compare_runs(conn, runs, chosen, how, std)
    noise = run_noise(conn, runs, chosen, how, std)
    if fmt == "json":
        emit([{**_comparison_record(found), "noise": _noise_record(noise)}], [], "json")
        return 0
    console = wide_console()
    _print_agreement(found, console)
    for kind, matrix in found.confusion:
        _print_confusion(kind, matrix, console)
    if found.differences:
        _print_differences(found, variant, console)
    _print_robustness(found, len(runs), std, console)
    _print_noise(noise, console)
    return 0


def _all_runs(conn: sqlite3.Connection, suite: str | None) -> list[str]:
    """Every run of ``suite`` (or of the database), oldest first."""
    return suite_runs(conn, suite)


def _noise_record(noise: Noise) -> dict[str, Any]:
    return {
        "runs": noise.runs,
        "reports": noise.reports,
        "std": noise.std,
        "bands": [
            {
                "system": b.system,
                "framework": b.framework,
                "metric": b.metric,
                **asdict(b.band),
                "via": list(b.via),
            }
            for b in noise.bands
        ],
        "agreement": [
            {**asdict(g.flips), "alpha": g.alpha, "level": g.level} for g in noise.groups
        ],
        "ranks": [asdict(r) for r in noise.ranks],
    }


def _print_noise(noise: Noise, console: Console) -> None:
    title = f"noise band over {len(noise.runs)} runs ({noise.std} sd, over {noise.reports} reports)"
    columns, rows = band_rows(noise)
    emit(rows, columns, "table", title=title, numeric=columns[2:], console=console)
    columns, rows = group_rows(noise)
    emit(
        rows,
        columns,
        "table",
        title="run-to-run agreement per kind and dimension (flip: two runs differ on a subject)",
        numeric=columns[1:],
        console=console,
    )
    columns, rows = rank_rows(noise)
    if rows:
        emit(
            rows,
            columns,
            "table",
            title="rank stability: Kendall tau between runs; how often adjacent systems swap",
            numeric=("tau mean", "tau min", "swaps"),
            console=console,
        )


def _comparison_record(found: RunComparison) -> dict[str, Any]:
    return {
        "runs": found.runs,
        "reports": found.reports,
        "variant": found.variant,
        "std": found.std,
        "agreement": [asdict(a) for a in found.agreement],
        "confusion": [
            {"kind": k, "labels": list(m.labels), "counts": m.counts} for k, m in found.confusion
        ],
        "score_differences": [asdict(d) for d in found.differences],
        "robustness": [asdict(s) for s in found.robustness],
    }


def _print_agreement(found: RunComparison, console: Console) -> None:
    emit(
        [
            {
                **asdict(a),
                **{k: fmt_number(getattr(a, k)) for k in ("accuracy", "kappa", "weighted_kappa")},
            }
            for a in found.agreement
        ],
        [
            "a",
            "b",
            "kind",
            "n",
            "accuracy",
            "kappa",
            "weighted_kappa",
            "only_a",
            "only_b",
            "errors_a",
            "errors_b",
        ],
        "table",
        title="verdict agreement between runs (items both judged; errors left out)",
        numeric=("n", "accuracy", "kappa", "weighted_kappa", "only_a", "only_b"),
        console=console,
    )


def _print_confusion(kind: str, matrix: ConfusionMatrix, console: Console) -> None:
    labels = [str(label) for label in matrix.labels]
    rows: list[dict[str, Any]] = [
        {"a \\ b": labels[i], **{labels[j]: matrix.counts[i][j] for j in range(len(labels))}}
        for i in range(len(labels))
    ]
    emit(
        rows,
        ["a \\ b", *labels],
        "table",
        title=f"{kind}: a in rows, b in columns",
        numeric=labels,
        console=console,
    )


def _print_differences(found: RunComparison, variant: str, console: Console) -> None:
    emit(
        [
            {
                "system": d.system,
                "metric": d.metric,
                "a": fmt_number(d.a),
                "b": fmt_number(d.b),
                "delta": fmt_delta(d.delta),
            }
            for d in found.differences
        ],
        ["system", "metric", "a", "b", "delta"],
        "table",
        title=f"system scores, {variant} variant, {found.reports} reports both judged",
        numeric=("a", "b", "delta"),
        console=console,
    )


def _print_robustness(found: RunComparison, runs: int, std: str, console: Console) -> None:
    emit(
        [
            {
                "system": s.system,
                "metric": s.metric,
                "mean ± sd": f"{fmt_number(s.mean)} ± {fmt_number(s.sd)}",
                "runs": s.runs,
            }
            for s in found.robustness
        ],
        ["system", "metric", "mean ± sd", "runs"],
        "table",
        title=f"robustness over {runs} runs ({std} standard deviation, "
        f"{found.reports} reports every run judged)",
        numeric=("runs",),
        console=console,
    )
