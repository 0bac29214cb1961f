"""Subcommands about judge runs: ``runs`` lists them (or ranks them against the human labels),
``runs activate`` validates a candidate and makes it count, ``runs retire`` retires one,
``compare`` sets two or more side by side (:func:`store.runs.compare.compare_runs`)."""

from __future__ import annotations

import sqlite3
import sys
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from reviewer.judge.compare import DEFAULT_STD, STD_CHOICES
from reviewer.registry import frameworks
from reviewer.textsafety import printable
from store.runs.compare import RunComparison, check_runs, compare_runs
from store.runs.records import list_runs, mark_stale_runs, set_active
from store.scores.cache import ensure_scores
from tui.cli.options import db_option, format_option, open_db
from tui.cli.output import emit, wide_console
from tui.render.tables import fmt_delta, fmt_number

if TYPE_CHECKING:
    from collections.abc import Mapping

    from rich.console import Console

    from reviewer.agreement import ConfusionMatrix
    from reviewer.framework import Framework
    from store.runs.activation import ActivationPreview


@click.group(
    invoke_without_command=True,
    help="Judge runs (imported and Gavel's own) with their counts, tokens and cost. A "
    "run Gavel makes is a candidate: nothing it says counts until it is "
    "activated, after its agreement with the human labels and the scores it "
    "would change are shown (`gavel runs activate RUN`).",
)
@db_option
@click.option(
    "--against-gold",
    is_flag=True,
    help="rank the runs by agreement with the human decisions, best first",
)
@format_option("table", "json", "csv")
@click.pass_context
def runs(ctx: click.Context, db: Path | None, against_gold: bool, fmt: str) -> int:
    if ctx.invoked_subcommand is not None:
        return 0
    conn = open_db(db)
    ensure_scores(conn)
    mark_stale_runs(conn)  # a run whose process died shows as interrupted
    if against_gold:
        return _against_gold(conn, fmt)
    records = []
    for info in list_runs(conn):
        usage = info.usage
        records.append(
            {
                "run": info.id,
                "model": info.model,
                "prompt_version": info.prompt_version,
                "created": info.created_at[:19].replace("T", " "),
                "active": "yes" if info.active else "candidate",
                "status": usage.get("status", "imported"),
                "reports": info.reports,
                "judgments": " ".join(f"{k}:{n}" for k, n in sorted(info.judgments.items())),
                "errors": info.errors,
                "claims": info.claims,
                "tokens": (
                    f"{usage.get('prompt_tokens', 0):,}/{usage.get('completion_tokens', 0):,}"
                    if "prompt_tokens" in usage
                    else ""
                ),
                "cost_usd": usage.get("cost_usd"),
                "suites": ",".join(info.suites),
                "usage": usage if fmt == "json" else None,
            }
        )
    columns = [
        "run",
        "model",
        "prompt_version",
        "created",
        "active",
        "status",
        "reports",
        "judgments",
        "errors",
        "claims",
        "tokens",
        "cost_usd",
    ]
    if fmt == "json":
        columns += ["suites", "usage"]
    if not records:
        print("no judge runs", file=sys.stderr)
        return 1
    emit(
        records,
        columns,
        fmt,
        numeric=("reports", "errors", "claims", "cost_usd"),
        console=wide_console() if fmt == "table" else None,
    )
    return 0


def _against_gold(conn: sqlite3.Connection, fmt: str) -> int:
    from store.runs.activation import runs_against_gold

    rows: list[dict[str, Any]] = [
        {
            "run": s.run,
            "model": s.model,
            "active": "yes" if s.active else "candidate",
            "decided_subjects": s.gold.n,
            "agreed": s.gold.agreed,
            "accuracy": s.gold.accuracy,
            "kinds": " ".join(f"{k.kind}:{k.n}" for k in s.gold.kinds),
        }
        for s in runs_against_gold(conn)
    ]
    if fmt == "table":
        rows = [
            {
                **r,
                "accuracy": fmt_number(r["accuracy"])
                if r["decided_subjects"]
                else "n/a (no decided subject)",
            }
            for r in rows
        ]
    emit(
        rows,
        ["run", "model", "active", "decided_subjects", "agreed", "accuracy", "kinds"],
        fmt,
        numeric=("decided_subjects", "agreed"),
        title="judge runs against the human labels (subjects both judged; best first)",
        console=wide_console() if fmt == "table" else None,
    )
    return 0


@runs.command(
    help="Activate a judge run: from now on it counts, subject by subject, above "
    "every run activated before it (a subject it judged with an error keeps "
    "another active run's valid verdict). Shows first its agreement with the "
    "human labels beside what counts now, its errors and every system's "
    "headline scores and rank before → after; asks for confirmation when it "
    "has errors or agrees with the humans less than what counts now."
)
@db_option
@click.argument("run", help="the judge run's id (see `gavel runs`)")
@click.option(
    "--yes",
    "-y",
    "confirmed",
    is_flag=True,
    help="activate without asking, whatever the preview says",
)
@click.option(
    "--preview",
    "only_preview",
    is_flag=True,
    help="show what activating would change, change nothing",
)
@format_option("table", "json")
def activate(db: Path | None, run: str, confirmed: bool, only_preview: bool, fmt: str) -> int:
    from store.runs.activation import activate as make_active
    from store.runs.activation import preview

    conn = open_db(db)
    ensure_scores(conn)
    seen = preview(conn, run)
    _print_preview(seen, fmt, conn)
    if only_preview:
        return 0
    if seen.needs_confirmation and not confirmed:
        print(
            "gavel: activating needs a confirmation: " + printable("; ".join(seen.reasons)),
            file=sys.stderr,
        )
        if not sys.stdin.isatty() or not click.confirm(
            "activate it anyway?", default=False, err=True
        ):
            print("nothing changed (run again with --yes to activate)", file=sys.stderr)
            return 1
    touched = make_active(conn, run, confirmed=True)
    print(
        f"run {run} is active; current verdicts and scores recomputed for {len(touched)} reports",
        file=sys.stderr,
    )
    return 0


@runs.command(
    "retire",
    help="Retire a judge run: it stops counting (subjects fall back to the other "
    "active runs); its verdicts stay, and it can be activated again. "
    "(`runs deactivate` is the same command under its old name.)",
)
@db_option
@click.argument("run", help="the judge run's id (see `gavel runs`)")
def retire(db: Path | None, run: str) -> int:
    conn = open_db(db)
    ensure_scores(conn)
    touched = set_active(conn, run, False)
    print(
        f"run {run} no longer counts; current verdicts and scores recomputed for "
        f"{len(touched)} reports",
        file=sys.stderr,
    )
    return 0


runs.add_command(
    click.Command(
        "deactivate",
        callback=retire.callback,
        params=retire.params,
        help="The old name of `gavel runs retire`.",
        hidden=True,
    )
)


def _print_preview(seen: ActivationPreview, fmt: str, conn: sqlite3.Connection) -> None:
    from reviewer.judge_card.text import card_record
    from store.runs.card import run_card

    card = run_card(conn, seen.run)
    if fmt == "json":
        record = asdict(seen) | {"needs_confirmation": seen.needs_confirmation}
        emit([record | {"card": card_record(card)}], [], "json")
        return
    from tui.render.activation import preview_renderables

    console = wide_console()
    for renderable in preview_renderables(seen, card):
        console.print(renderable)


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
    help="Verdict agreement and score differences between judge runs, and the mean "
    "± sd of system scores over them, on the reports every run judged."
)
@db_option
@click.argument(
    "run_ids", nargs=-1, required=True, metavar="RUN...", help="two or more judge run ids"
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
    metrics: tuple[str, ...],
    std: str,
    variant: str,
    fmt: str,
) -> int:
    check_runs(run_ids)
    conn = open_db(db)
    found = compare_runs(
        conn,
        run_ids,
        _metrics(metrics),
        "adjudicated" if variant == "adjudicated" else "judge",
        std,
    )
    if fmt == "json":
        emit([_comparison_record(found)], [], "json")
        return 0
    console = wide_console()
    _print_agreement(found, console)
    for kind, matrix in found.confusion:
        _print_confusion(kind, matrix, console)
    if found.differences:
        _print_differences(found, variant, console)
    _print_robustness(found, len(run_ids), std, console)
    return 0


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


def _register_card() -> None:
    """``runs card`` lives in its own module (tui.cli.runs_card)."""
    from tui.cli.runs_card import card

    runs.add_command(card)


_register_card()
