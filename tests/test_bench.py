"""`gavel bench` without timing anything: its arguments, its header, how repeats are summed up
into min and median, and that the bare import baseline copies every row a chunk at a time."""

from __future__ import annotations

import os
import sqlite3
import statistics
from pathlib import Path

import pytest
from click.testing import CliRunner
from rich.console import Console

from reviewer.formats.native import iter_records
from reviewer.frameworks.dailyreport.synthetic import SyntheticSpec, write_synthetic
from store.db.connection import connect
from store.imports.loader import import_records
from tui.bench import run as bench
from tui.bench.run import BenchOptions, Figure, best_of, figure_rows, machine_header, min_median
from tui.cli.group import gavel


def test_min_median() -> None:
    assert min_median([3.0, 1.0, 2.0]) == (1.0, 2.0)
    assert min_median([4.0, 1.0]) == (1.0, 2.5)
    assert min_median([0.5]) == (0.5, 0.5)
    with pytest.raises(ValueError):
        min_median([])


def test_best_is_the_shortest_time_or_the_highest_rate() -> None:
    assert best_of([0.3, 0.1, 0.2], "s") == 0.1
    assert best_of([100.0, 300.0, 200.0], "rows/s") == 300.0
    with pytest.raises(ValueError):
        best_of([], "s")


def test_figure_of_repeats() -> None:
    f = Figure.of(
        "full recompute",
        [1.2, 0.9, 0.95],
        "s",
        "bare fetch",
        [0.5, 0.45, 0.6],
        "< 1 s",
        lambda f: f.median < 1.0,
    )
    assert f.value == 0.9
    assert f.median == 0.95
    assert f.baseline == 0.45
    assert f.baseline_median == 0.5
    assert f.ratio == pytest.approx(0.9 / 0.45)
    assert f.met is True
    slower = Figure.of("x", [0.8, 1.1, 1.3], "s", "b", [0.5], "< 1 s", lambda f: f.median < 1.0)
    assert slower.value == 0.8 and slower.met is False  # judged on the median, not the best
    rate = Figure.of(
        "import",
        [100.0, 300.0, 200.0],
        "rows/s",
        "bare",
        [500.0, 400.0],
        "≥ 50%",
        lambda f: (f.ratio or 0) >= 0.5,
    )
    assert rate.value == 300.0 and rate.baseline == 500.0 and rate.median == 200.0
    assert rate.ratio == pytest.approx(0.6) and rate.met is True
    no_base = Figure.of("switch", [0.02, 0.03, 0.01], "s", "—", (), "< 100 ms", None)
    assert no_base.baseline is None and no_base.ratio is None and no_base.met is None


def test_a_single_value_figure_still_works() -> None:
    f = Figure("memory", 120.0, "MB", "bare", 40.0, "< 300 MB", True)
    assert f.median == 120.0 and f.baseline_median == 40.0 and f.ratio == 3.0


def test_figure_rows_print_min_median_and_ratio_of_minima() -> None:
    rows = figure_rows(
        [
            Figure.of(
                "full recompute of every score",
                [0.9, 1.1, 1.0],
                "s",
                "bare fetch of the rows it reads",
                [0.3, 0.5, 0.4],
                "< 1 s",
                lambda f: f.median < 1.0,
            ),
            Figure("memory", 120.0, "MB", "—", None, "< 300 MB", True),
        ]
    )
    name, n, measured, base, ratio, target, met = rows[0]
    assert name == "full recompute of every score"
    assert n == "3/3"
    assert measured == "900.0 ms / 1.00 s"
    assert base.startswith("300.0 ms / 400.0 ms") and "bare fetch" in base
    assert ratio == "3.00×"
    assert (target, met) == ("< 1 s", "NO")
    assert rows[1] == ("memory", "1", "120 MB", "—", "—", "< 300 MB", "yes")


def test_machine_header_names_cores_versions_and_load() -> None:
    header = dict(machine_header())
    assert str(os.cpu_count()) in header["cores"]
    assert str(len(os.sched_getaffinity(0))) in header["cores"].split("),")[1]
    assert sqlite3.sqlite_version in header["sqlite"]
    assert header["python"].split()[-1].startswith("3.")
    assert header["load average at start"].count(",") >= 2


def test_header_is_printed() -> None:
    console = Console(record=True, width=200)
    bench._print_header(console, BenchOptions(scale=10))
    text = console.export_text()
    assert "1500 tasks × 17 systems = 25,500 reports" in text
    for key in (
        "cores:",
        "os.cpu_count",
        "affinity",
        "python:",
        "sqlite:",
        "load average at start:",
    ):
        assert key in text


def test_scale_multiplies_tasks_and_sets_repeats() -> None:
    assert BenchOptions().task_count == 150
    assert BenchOptions(scale=10).task_count == 1500
    assert BenchOptions(tasks=20, scale=3).task_count == 60
    assert BenchOptions(quick=True).task_count == 15
    assert BenchOptions(quick=True, scale=10).task_count == 150
    assert BenchOptions().repeats == 3
    assert BenchOptions(scale=10).repeats == 2


def test_cli_passes_scale_and_tasks(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[BenchOptions] = []

    def run_bench(options: BenchOptions) -> int:
        seen.append(options)
        return 0

    monkeypatch.setattr(bench, "run_bench", run_bench)
    runner = CliRunner()
    assert runner.invoke(gavel, ["bench", "--scale", "10"]).exit_code == 0
    assert runner.invoke(gavel, ["bench", "--tasks", "40", "--skip-ui"]).exit_code == 0
    assert seen[0].scale == 10 and seen[0].task_count == 1500
    assert seen[1].scale == 1 and seen[1].task_count == 40 and seen[1].skip_ui
    refused = runner.invoke(gavel, ["bench", "--scale", "0"])
    assert refused.exit_code == 2 and "--scale" in refused.output
    assert len(seen) == 2
    assert "--scale" in runner.invoke(gavel, ["bench", "--help"]).output
    served = ["bench", "--serve", "10", "--serve-pause", "1.5"]
    assert runner.invoke(gavel, served).exit_code == 0
    assert seen[2].serve == 10 and seen[2].serve_pause == 1.5
    assert seen[1].serve == 0 and seen[1].serve_pause == 0.3
    assert runner.invoke(gavel, ["bench", "--serve-pause", "0"]).exit_code == 2
    from tui.bench.peers import after_bench

    assert runner.invoke(gavel, ["bench", "--peers", "--serve", "2"]).exit_code == 0
    assert seen[-1].peers is after_bench and seen[-1].serve == 2
    assert seen[2].peers is None


def test_stage_peaks_keep_the_largest() -> None:
    stages = bench.StagePeaks()
    stages.mark("a")
    stages.mark("b")
    assert set(stages.peaks) == {"a", "b"}
    assert stages.peak >= max(stages.peaks.values()) > 0


def test_bundle_is_checks_the_size(tmp_path: Path) -> None:
    spec = SyntheticSpec(tasks=2, systems=2, subtasks=2, claims=3, words=40)
    write_synthetic(tmp_path / "bundle", spec)
    assert bench._bundle_is(tmp_path / "bundle", spec)
    assert not bench._bundle_is(tmp_path / "bundle", SyntheticSpec(tasks=20, systems=2))
    assert not bench._bundle_is(tmp_path / "nothing", spec)


def test_bare_import_copies_every_row_in_chunks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = SyntheticSpec(tasks=3, systems=2, subtasks=2, claims=3, words=40)
    write_synthetic(tmp_path / "bundle", spec)
    conn = connect(tmp_path / "a.db")
    suite, records = iter_records(tmp_path / "bundle")
    import_records(conn, suite, records, "test")
    monkeypatch.setattr(bench, "BARE_CHUNK", 7)  # several chunks for the larger tables
    took = bench._bare_executemany(conn, tmp_path / "bare.db")
    assert took > 0
    copy = sqlite3.connect(tmp_path / "bare.db")
    for table in bench.TABLES:
        count = conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
        assert copy.execute(f"SELECT count(*) FROM {table}").fetchone()[0] == count
    assert conn.execute("SELECT count(*) FROM judgment").fetchone()[0] > 7
    copy.close()
    conn.close()


def test_incremental_samples_are_lists(tmp_path: Path) -> None:
    spec = SyntheticSpec(tasks=3, systems=4, subtasks=2, claims=6, words=40)
    write_synthetic(tmp_path / "bundle", spec)
    conn = connect(tmp_path / "a.db")
    suite, records = iter_records(tmp_path / "bundle")
    import_records(conn, suite, records, "test")
    from store.scores.cache import rebuild_scores

    rebuild_scores(conn)
    inc = bench._incremental(conn, n=6)
    assert len(inc.cold) == 3  # the first decision in each of 3 systems
    assert len(inc.decide) == len(inc.read) == len(inc.cold) + len(inc.recompute)
    assert len(inc.commit) == 6
    assert statistics.median(inc.decide) > 0
    conn.close()


def test_a_figure_and_its_baseline_take_turns() -> None:
    calls: list[str] = []
    times = bench._interleaved([lambda: calls.append("a"), lambda: calls.append("b")], 3)
    assert calls == ["a", "b"] * 3
    assert [len(t) for t in times] == [3, 3]
    assert all(t >= 0 for column in times for t in column)


def test_the_recompute_figure_takes_three_turns_at_least(monkeypatch: pytest.MonkeyPatch) -> None:
    # Two repeats (the 10× run's) would make the median their mean: one cold repeat would
    # decide it. The recompute and its bare fetch take turns, three times at least.
    calls: list[str] = []
    monkeypatch.setattr(bench, "rebuild_scores", lambda conn: calls.append("recompute"))
    monkeypatch.setattr(bench, "_bare_fetch", lambda conn: calls.append("fetch"))
    conn = sqlite3.connect(":memory:")
    figure = bench._recompute_figure(conn, 2, design_size=False)
    assert calls == ["recompute", "fetch"] * 3
    assert len(figure.samples) == len(figure.baseline_samples) == 3
    assert figure.target == "< 5 s and ≤ 1.2× the bare fetch"
    calls.clear()
    assert len(bench._recompute_figure(conn, 5, design_size=True).samples) == 5
    assert calls == ["recompute", "fetch"] * 5
