"""`gavel bench`: how many known judge errors a reviewer reaches with 10% of the verdicts.

Three orders are compared on the same budget: suspicion (flags, then impact), impact alone and
random (the mean of many shuffles). Two measuring sticks: the sample data, whose MISTAKES.md
files list every judge error found in it, and synthetic runs with planted errors of each type
(mean over seeds), whose lists the generators write. Per-type figures show where the flags help
and where nothing on screen can (``silent`` errors).
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console
from rich.table import Table

from reviewer.planted import read_planted_path
from store.triage.review_order import BUDGET, OrderFigures, Recall, combine, measure

SAMPLE_SUITES = ("dailyreport", "dr3", "drbench", "livedrbench", "drb2")
RANDOM_SEEDS = 200


@dataclass(slots=True)
class RecallFigures:
    sample: OrderFigures
    sample_parts: dict[str, OrderFigures]
    synthetic: OrderFigures
    seeds: int


def sample_figures(root: Path, folder: Path) -> tuple[OrderFigures, dict[str, OrderFigures]]:
    """Recall on the bundled sample: each part's suite against its MISTAKES.md list."""
    from reviewer.formats.native import iter_records
    from store.db.connection import connect
    from store.imports.loader import import_records
    from store.scores.cache import rebuild_scores

    conn = connect(root / "sample-recall.db")
    parts: dict[str, OrderFigures] = {}
    for name in SAMPLE_SUITES:
        bundle = folder / name
        if not (bundle / "suite.json").exists():
            continue
        suite, records = iter_records(bundle)
        import_records(conn, suite, records, f"sample-{name}")
        rebuild_scores(conn)
        parts[name] = measure(
            conn, suite.id, read_planted_path(bundle / "MISTAKES.md"), RANDOM_SEEDS
        )
    conn.close()
    return combine(list(parts.values())), parts


def synthetic_figures(root: Path, seeds: int, tasks: int) -> OrderFigures:
    """Recall on synthetic runs with planted errors of every type, summed over ``seeds``."""
    from reviewer.formats.native import iter_records
    from reviewer.frameworks.dailyreport.synthetic import SyntheticSpec, write_synthetic
    from reviewer.frameworks.dr3_eval.synthetic import write_dr3_synthetic
    from reviewer.synthetic import planted_path
    from store.db.connection import connect
    from store.imports.loader import import_records
    from store.scores.cache import rebuild_scores

    parts = []
    for seed in range(1, seeds + 1):
        cascade = root / f"recall-cascade-{seed}"
        write_synthetic(
            cascade,
            SyntheticSpec(
                tasks=tasks,
                systems=6,
                seed=seed,
                words=400,
                plant=0.02,
                second_run=0.3,
                unreachable=0.08,
            ),
        )
        dr3 = root / f"recall-dr3-{seed}"
        write_dr3_synthetic(dr3, tasks=max(4, tasks - 2), seed=seed, plant=0.08)
        conn = connect(root / f"recall-{seed}.db")
        for bundle in (cascade, dr3):
            suite, records = iter_records(bundle)
            import_records(conn, suite, records, bundle.name)
            rebuild_scores(conn)
            parts.append(
                measure(conn, suite.id, read_planted_path(planted_path(bundle)), RANDOM_SEEDS)
            )
        conn.close()
    return combine(parts)


def recall_figures(
    root: Path | None, sample: Path, seeds: int = 3, tasks: int = 12
) -> RecallFigures:
    if root is None:
        with tempfile.TemporaryDirectory(prefix="gavel-recall-") as folder:
            return recall_figures(Path(folder), sample, seeds, tasks)
    root.mkdir(parents=True, exist_ok=True)
    for stale in root.glob("*recall*.db*"):
        stale.unlink()
    overall, parts = sample_figures(root, sample)
    return RecallFigures(overall, parts, synthetic_figures(root, seeds, tasks), seeds)


def _pct(recall: Recall) -> str:
    return f"{100 * recall.value:.0f}%"


def _counts(recall: Recall) -> str:
    return f"{recall.reached}/{recall.total}"


def print_recall(console: Console, figures: RecallFigures) -> None:
    table = Table(
        title=f"Known judge errors reached with {BUDGET:.0%} of the verdicts (review-order recall)",
        header_style="bold",
    )
    for column in (
        "measured on",
        "verdicts",
        "errors",
        "suspicion order",
        "impact order",
        f"random (mean of {RANDOM_SEEDS})",
    ):
        table.add_column(column, justify="left" if column == "measured on" else "right")

    def row(label: str, f: OrderFigures, style: str = "") -> None:
        table.add_row(
            label,
            f"{f.verdicts:,}",
            str(f.suspicion.total),
            f"{_pct(f.suspicion)} ({_counts(f.suspicion)})",
            f"{_pct(f.impact)} ({_counts(f.impact)})",
            _pct(f.random),
            style=style,
        )

    row("sample data (MISTAKES.md lists)", figures.sample, "bold")
    for name, part in figures.sample_parts.items():
        row(f"  {name}", part)
    row(f"synthetic runs, planted errors ({figures.seeds} seeds)", figures.synthetic, "bold")
    synthetic = figures.synthetic
    for name, (reached, total) in sorted(synthetic.suspicion.by_type.items()):
        imp = synthetic.impact.by_type.get(name, [0, 0])
        rnd = synthetic.random.by_type.get(name, [0, 1])
        table.add_row(
            f"  {name}",
            "",
            str(total),
            f"{100 * reached / total:.0f}% ({reached}/{total})" if total else "—",
            f"{100 * imp[0] / imp[1]:.0f}% ({imp[0]}/{imp[1]})" if imp[1] else "—",
            f"{100 * rnd[0] / rnd[1]:.0f}%" if rnd[1] else "—",
        )
    console.print(table)
    flags = Table(
        title="Suspicion flags: share that are known errors (precision)", header_style="bold"
    )
    for column in ("rule", "sample", "synthetic"):
        flags.add_column(column, justify="left" if column == "rule" else "right")
    sample, synth = figures.sample.precision, figures.synthetic.precision
    flags.add_row(
        "every flagged verdict",
        _ratio(sample.right, sample.flagged),
        _ratio(synth.right, synth.flagged),
        style="bold",
    )
    for rule in sorted(set(sample.by_rule) | set(synth.by_rule)):
        a = sample.by_rule.get(rule, [0, 0])
        b = synth.by_rule.get(rule, [0, 0])
        flags.add_row(f"  {rule}", _ratio(*a), _ratio(*b))
    console.print(flags)
    console.print(
        "[dim]A contradiction flags both sides of it, so at most half of those flags "
        "can be errors; 'silent' errors leave no trace a flag could see.[/dim]"
    )


def _ratio(right: int, total: int) -> str:
    return f"{100 * right / total:.0f}% ({right}/{total})" if total else "—"
