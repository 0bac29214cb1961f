"""Subcommands about judge runs: ``runs`` lists them and switches which ones count,
``compare`` sets two or more side by side (:func:`store.run_compare.compare_runs`)."""

from __future__ import annotations

import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

import click

from reviewer.judge.compare import DEFAULT_STD, STD_CHOICES
from reviewer.registry import frameworks
from store.run_compare import check_runs, compare_runs
from store.runs import list_runs, set_active
from store.scores import ensure_scores
from tui.cli.options import db_option, format_option, open_db
from tui.cli.output import emit, wide_console
from tui.render.tables import fmt_delta, fmt_number

EXTRA_METRICS = {"cascade": ("SubTaskPass", "Refer_Claim_Consistency")}
"""Besides the headline metrics, what ``compare`` shows by default: the metrics a DailyReport
judge run moves most directly."""


@click.command(help="List judge runs (imported and Gavel's own) with their counts, tokens and "
               "cost; --activate/--deactivate choose which ones count (the newest active run "
               "of a report and kind is in force).")
@db_option
@click.option("--activate", metavar="RUN", default=None, help="make this run count")
@click.option("--deactivate", metavar="RUN", default=None, help="stop this run counting")
@format_option("table", "json", "csv")
def runs(db: Path | None, activate: str | None, deactivate: str | None, fmt: str) -> int:
    if activate and deactivate:
        raise click.UsageError("--activate and --deactivate cannot be used together")
    conn = open_db(db)
    ensure_scores(conn)
    if activate or deactivate:
        name = activate or deactivate or ""
        touched = set_active(conn, name, bool(activate))
        state = "active" if activate else "inactive"
        print(f"run {name} is now {state}; current verdicts and scores recomputed for "
              f"{len(touched)} reports", file=sys.stderr)
    records = []
    for info in list_runs(conn):
        usage = info.usage
        records.append({
            "run": info.id, "model": info.model, "prompt_version": info.prompt_version,
            "created": info.created_at[:19].replace("T", " "),
            "active": "yes" if info.active else "no",
            "status": usage.get("status", "imported"), "reports": info.reports,
            "judgments": " ".join(f"{k}:{n}" for k, n in sorted(info.judgments.items())),
            "errors": info.errors, "claims": info.claims,
            "tokens": (f"{usage.get('prompt_tokens', 0):,}/{usage.get('completion_tokens', 0):,}"
                       if "prompt_tokens" in usage else ""),
            "cost_usd": usage.get("cost_usd"), "suites": ",".join(info.suites),
            "usage": usage if fmt == "json" else None,
        })
    columns = ["run", "model", "prompt_version", "created", "active", "status", "reports",
               "judgments", "errors", "claims", "tokens", "cost_usd"]
    if fmt == "json":
        columns += ["suites", "usage"]
    if not records:
        print("no judge runs", file=sys.stderr)
        return 1
    emit(records, columns, fmt, numeric=("reports", "errors", "claims", "cost_usd"),
         console=wide_console() if fmt == "table" else None)
    return 0


def _metrics(names: tuple[str, ...]) -> list[tuple[str, str]]:
    """``FRAMEWORK.METRIC`` (a bare name is DailyReport's), else every headline metric."""
    if names:
        out = []
        for name in names:
            framework, dot, metric = name.partition(".")
            out.append((framework, metric) if dot else ("cascade", name))
        return out
    return [(name, metric) for name, fw in frameworks().items()
            for metric in [m.name for m in fw.metrics if m.headline]
            + list(EXTRA_METRICS.get(name, ()))]


@click.command(help="Verdict agreement and score differences between judge runs, and the mean "
               "± sd of system scores over them, on the reports every run judged.")
@db_option
@click.argument("run_ids", nargs=-1, required=True, metavar="RUN...",
                help="two or more judge run ids")
@click.option("--metric", "metrics", multiple=True,
              help="system metric to compare (repeatable; default: headline metrics, "
                   "SubTaskPass and Refer_Claim_Consistency)")
@click.option("--std", type=click.Choice(tuple(STD_CHOICES)), default=DEFAULT_STD,
              help="sample (n-1, default) or population (n) standard deviation")
@click.option("--variant", type=click.Choice(("judge", "adjudicated")), default="judge",
              help="score each run from its own values (default) or with human decisions")
@format_option("table", "json")
def compare(db: Path | None, run_ids: tuple[str, ...], metrics: tuple[str, ...], std: str,
            variant: str, fmt: str) -> int:
    check_runs(run_ids)
    conn = open_db(db)
    found = compare_runs(conn, run_ids, _metrics(metrics),
                         "adjudicated" if variant == "adjudicated" else "judge", std)
    if fmt == "json":
        emit([{"runs": found.runs, "reports": found.reports, "variant": found.variant,
               "std": found.std, "agreement": [asdict(a) for a in found.agreement],
               "confusion": [{"kind": k, "labels": list(m.labels), "counts": m.counts}
                             for k, m in found.confusion],
               "score_differences": [asdict(d) for d in found.differences],
               "robustness": [asdict(s) for s in found.robustness]}], [], "json")
        return 0
    console = wide_console()
    emit([{**asdict(a), **{k: fmt_number(getattr(a, k))
                           for k in ("accuracy", "kappa", "weighted_kappa")}}
          for a in found.agreement],
         ["a", "b", "kind", "n", "accuracy", "kappa", "weighted_kappa", "only_a", "only_b",
          "errors_a", "errors_b"], "table",
         title="verdict agreement between runs (items both judged; errors left out)",
         numeric=("n", "accuracy", "kappa", "weighted_kappa", "only_a", "only_b"),
         console=console)
    for kind, matrix in found.confusion:
        labels = [str(label) for label in matrix.labels]
        rows: list[dict[str, Any]] = [
            {"a \\ b": labels[i], **{labels[j]: matrix.counts[i][j] for j in range(len(labels))}}
            for i in range(len(labels))]
        emit(rows, ["a \\ b", *labels], "table", title=f"{kind}: a in rows, b in columns",
             numeric=labels, console=console)
    if found.differences:
        emit([{"system": d.system, "metric": d.metric, "a": fmt_number(d.a),
               "b": fmt_number(d.b), "delta": fmt_delta(d.delta)} for d in found.differences],
             ["system", "metric", "a", "b", "delta"], "table",
             title=f"system scores, {variant} variant, {found.reports} reports both judged",
             numeric=("a", "b", "delta"), console=console)
    emit([{"system": s.system, "metric": s.metric,
           "mean ± sd": f"{fmt_number(s.mean)} ± {fmt_number(s.sd)}", "runs": s.runs}
          for s in found.robustness], ["system", "metric", "mean ± sd", "runs"], "table",
         title=f"robustness over {len(run_ids)} runs ({std} standard deviation, "
         f"{found.reports} reports every run judged)", numeric=("runs",), console=console)
    return 0
