"""Repeated judge runs of the same reports in one suite (issue 34, item 1): attaching a judge
output to the reports already imported (``gavel import --as-run``), and the noise band over
the runs (``gavel compare``): mean, sd and range per system and metric, flip rate and α per
kind and dimension, rank stability.

The real tickr fork of DeepResearch Bench holds two judge runs of the same reports (its
per-criterion judgements and its stored RACE results, which differ by up to about 0.06
overall); a small excerpt of both lives in tests/fixtures/drb_tickr_repeats for CI. Ten runs
are generated from the real judgements with the noise model of :func:`noisy_judgements`.
"""

from __future__ import annotations

import json
import random
import sqlite3
from pathlib import Path

import pytest
from scipy.stats import kendalltau

from reviewer.errors import InputError
from reviewer.frameworks.deepresearch_bench.format import read_drb
from reviewer.judge.compare import band, kendall_tau_b, rank_stability, subject_flips
from reviewer.models import Bundle
from store.imports.attach import attach_run
from store.imports.from_path import attach_path, import_path
from store.runs.compare import run_noise
from store.runs.records import list_runs, suite_runs
from tui.cli import main

EXCERPT = Path(__file__).parent / "fixtures" / "drb_tickr_repeats"
SYSTEM = "gpt5-tickr-0917"
SUITE = "tickr"
FMT = "deepresearch_bench"


def noisy_judgements(source: Path, target: Path, seed: int, p_move: float = 0.3) -> Path:
    """Another judge run of the same reports, simulated from a real per-criterion judgements
    file: each criterion's ``target_score`` independently stays (probability 1 − p_move) or
    moves by half a point or a point up or down (p_move split evenly over the four moves),
    clipped to 0–10; everything else is kept. The judge's scores sit on a half-point grid,
    so a move is the smallest disagreement two runs of it can have."""
    rng = random.Random(seed)
    moves = (-1.0, -0.5, 0.5, 1.0)
    target.mkdir(parents=True, exist_ok=True)
    out = target / source.name
    with out.open("w", encoding="utf-8") as handle:
        for line in source.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            for items in record["judge_details"].values():
                for item in items:
                    if rng.random() < p_move:
                        moved = float(item["target_score"]) + rng.choice(moves)
                        item["target_score"] = min(10.0, max(0.0, moved))
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
    return out


# -- statistics, by hand and against scipy ------------------------------------------------------


def test_band_is_mean_sd_and_range() -> None:
    b = band([0.40, 0.42, None, 0.44])
    assert b.n == 3
    assert b.mean == pytest.approx(0.42)
    assert b.sd == pytest.approx(0.02)  # sample sd of 0.40, 0.42, 0.44
    assert (b.low, b.high) == (0.40, 0.44)
    assert band([None]).mean is None
    one = band([0.5])
    assert one.sd is None and one.low == one.high == 0.5


def test_flip_rate_by_hand() -> None:
    # Subject 1: three runs, values a a b: 2 of 3 pairs differ. Subject 2: all agree.
    # Subject 3: one run only, not counted.
    flips = subject_flips("k", [["a", "a", "b"], ["x", "x", "x"], ["y"]])
    assert flips.subjects == 2
    assert flips.flip_rate == pytest.approx((2 / 3 + 0) / 2)
    assert flips.changed == pytest.approx(0.5)
    assert flips.max_runs == 3
    assert subject_flips("k", [["a"]]).flip_rate is None


@pytest.mark.parametrize(
    ("x", "y"),
    [
        ([1, 2, 3, 4, 5], [1, 3, 2, 5, 4]),
        ([1, 2, 2, 4, 5], [2, 2, 3, 1, 5]),
        ([0.3, 0.1, 0.2], [0.1, 0.2, 0.3]),
        ([1, 1, 2, 2], [1, 2, 1, 2]),
    ],
)
def test_kendall_tau_b_matches_scipy(x: list[float], y: list[float]) -> None:
    expected = kendalltau(x, y).statistic
    assert kendall_tau_b(x, y) == pytest.approx(expected)


def test_kendall_tau_b_random_against_scipy() -> None:
    rng = random.Random(7)
    for _ in range(50):
        n = rng.randint(2, 9)
        x = [rng.choice((0.1, 0.2, 0.3, 0.4)) for _ in range(n)]
        y = [rng.random() for _ in range(n)]
        expected = kendalltau(x, y).statistic
        got = kendall_tau_b(x, y)
        if expected != expected:  # nan: a constant sequence
            assert got is None
        else:
            assert got == pytest.approx(expected)


def test_rank_stability_by_hand() -> None:
    # Means: A 0.6, B 0.5, C 0.3. Run 2 swaps A and B; run 3 agrees with the mean order.
    scores = {
        "r1": {"A": 0.6, "B": 0.5, "C": 0.3},
        "r2": {"A": 0.5, "B": 0.6, "C": 0.3},
        "r3": {"A": 0.7, "B": 0.4, "C": 0.3},
    }
    r = rank_stability("m", scores)
    assert r.systems == 3 and r.pairs == 3
    taus = [
        kendalltau([0.6, 0.5, 0.3], [0.5, 0.6, 0.3]).statistic,
        kendalltau([0.6, 0.5, 0.3], [0.7, 0.4, 0.3]).statistic,
        kendalltau([0.5, 0.6, 0.3], [0.7, 0.4, 0.3]).statistic,
    ]
    assert r.tau_mean == pytest.approx(sum(taus) / 3)
    assert r.tau_min == pytest.approx(min(taus))
    assert r.swaps == (("A", "B", pytest.approx(1 / 3)), ("B", "C", 0.0))


# -- attaching runs: the excerpt of the real anchor (CI) ----------------------------------------


@pytest.fixture
def excerpt_db(conn: sqlite3.Connection) -> sqlite3.Connection:
    """The excerpt's judgements imported as suite ``tickr``; its stored results attached."""
    import_path(conn, EXCERPT / f"{SYSTEM}.jsonl", FMT, SUITE)
    attached = attach_path(conn, EXCERPT / SYSTEM / "raw_results.jsonl", "stored", FMT, SUITE)
    assert attached.created and attached.reports == 2 and attached.judgments == 10
    return conn


def test_stored_results_attach_as_a_run_of_the_same_reports(excerpt_db: sqlite3.Connection) -> None:
    runs = {info.id: info for info in list_runs(excerpt_db)}
    assert set(runs) == {f"{SYSTEM}:race_judgements", "stored"}
    assert runs["stored"].suites == [SUITE] and not runs["stored"].active
    assert runs["stored"].reports == 2 and runs["stored"].judgments == {"race_stored": 10}
    # No new report: the run is on the suite's reports.
    assert excerpt_db.execute("SELECT count(*) FROM report").fetchone()[0] == 2
    noise = run_noise(excerpt_db, suite_runs(excerpt_db, SUITE), [("race", "overall")])
    assert noise.reports == 2
    (overall,) = [b for b in noise.bands if b.metric == "overall"]
    assert overall.via == ("stored",) and overall.band.n == 2
    stored = [json.loads(line) for line in (EXCERPT / SYSTEM / "raw_results.jsonl").open()]
    stored_mean = sum(r["overall_score"] for r in stored) / len(stored)
    assert stored_mean in (overall.band.low, overall.band.high)
    assert overall.band.high - overall.band.low > 0.001  # the two judge runs differ


def test_attaching_again_is_a_no_op(excerpt_db: sqlite3.Connection) -> None:
    again = attach_path(excerpt_db, EXCERPT / SYSTEM / "raw_results.jsonl", "stored", FMT, SUITE)
    assert not again.created
    assert len(list_runs(excerpt_db)) == 2


def test_duplicate_run_name_is_refused(excerpt_db: sqlite3.Connection, tmp_path: Path) -> None:
    other = noisy_judgements(EXCERPT / f"{SYSTEM}.jsonl", tmp_path / "r2", seed=1)
    with pytest.raises(InputError) as err:
        attach_path(excerpt_db, other, "stored", FMT, SUITE)
    assert err.value.field == "--as-run" and "already has a run 'stored'" in err.value.message
    assert len(list_runs(excerpt_db)) == 2


def test_mismatched_reports_are_refused_with_nothing_written(
    excerpt_db: sqlite3.Connection, tmp_path: Path
) -> None:
    before = excerpt_db.execute("SELECT count(*) FROM judgment").fetchone()[0]
    lines = (EXCERPT / f"{SYSTEM}.jsonl").read_text(encoding="utf-8").splitlines()
    # A task the suite does not have (its id and prompt changed): named by file and line.
    record = json.loads(lines[1])
    record["id"], record["prompt"] = 99, "A prompt the suite never saw."
    bad = tmp_path / "bad" / f"{SYSTEM}.jsonl"
    bad.parent.mkdir()
    bad.write_text(lines[0] + "\n" + json.dumps(record) + "\n", encoding="utf-8")
    with pytest.raises(InputError) as err:
        attach_path(excerpt_db, bad, "again", FMT, SUITE)
    assert "not in the suite" in err.value.message
    assert excerpt_db.execute("SELECT count(*) FROM judgment").fetchone()[0] == before
    # Another system's results: its reports are not in the suite.
    with pytest.raises(InputError) as err:
        attach_path(
            excerpt_db,
            EXCERPT / f"{SYSTEM}.jsonl",
            "again",
            FMT,
            SUITE,
            system_map={SYSTEM: "someone-else"},
        )
    assert err.value.field == "system" and "'someone-else'" in err.value.message
    assert err.value.line is not None
    # No such suite.
    with pytest.raises(InputError) as err:
        attach_path(excerpt_db, EXCERPT / f"{SYSTEM}.jsonl", "again", FMT, "nope")
    assert err.value.field == "suite"
    assert excerpt_db.execute("SELECT count(*) FROM judgment").fetchone()[0] == before
    assert len(list_runs(excerpt_db)) == 2


def test_an_inputs_runs_of_other_kinds_stay_apart(conn: sqlite3.Connection) -> None:
    """Both files of the excerpt as one input: a per-criterion run and a stored-results run
    judge different kinds, so they attach as two runs, NAME:part each."""
    import_path(conn, EXCERPT / f"{SYSTEM}.jsonl", FMT, SUITE)
    judged, stored = _both()
    judged.runs += stored.runs
    judged.judgments += stored.judgments
    attached = attach_run(conn, judged, "both", "both")
    assert attached.runs == ("both:race_judgements", "both:race_stored")
    kinds = dict(
        conn.execute(
            "SELECT jr.ext_id, group_concat(DISTINCT j.kind) FROM judgment j "
            "JOIN judge_run jr ON jr.id = j.run_id GROUP BY jr.ext_id"
        ).fetchall()
    )
    assert kinds["both:race_judgements"] == "race_target"
    assert kinds["both:race_stored"] == "race_stored"


def test_two_runs_of_one_kind_on_one_report_are_refused(conn: sqlite3.Connection) -> None:
    import_path(conn, EXCERPT / f"{SYSTEM}.jsonl", FMT, SUITE)
    judged, _ = _both()
    again = [j.model_copy(update={"run": "other"}) for j in judged.judgments]
    judged.runs.append(judged.runs[0].model_copy(update={"id": "other"}))
    judged.judgments += again
    with pytest.raises(InputError) as err:
        attach_run(conn, judged, "both", "both")
    assert err.value.field == "run" and "attach one run at a time" in err.value.message
    assert "'other'" in err.value.message  # (a bundle built here has no lines to name)
    assert len(list_runs(conn)) == 1


def _both() -> tuple[Bundle, Bundle]:
    return (
        read_drb(EXCERPT / f"{SYSTEM}.jsonl", SUITE),
        read_drb(EXCERPT / SYSTEM / "raw_results.jsonl", SUITE),
    )


def test_changed_report_text_is_refused(tmp_path: Path, conn: sqlite3.Connection) -> None:
    from store.imports.loader import import_bundle
    from tests.builders import tiny_bundle

    bundle = tiny_bundle()
    import_bundle(conn, bundle, "tiny-hash")
    changed = bundle.model_copy(deep=True)
    first = changed.reports[0]
    changed.reports[0] = first.model_copy(update={"markdown": first.markdown + "\nMore."})
    with pytest.raises(InputError) as err:
        attach_run(conn, changed, "again", "again")
    assert err.value.field == "markdown" and "same reports" in err.value.message
    # The same reports judged again attach: every verdict on the suite's own subjects.
    same = bundle.model_copy(deep=True)
    attached = attach_run(conn, same, "again", "again")
    assert attached.created and attached.judgments == len(bundle.judgments)
    shared = conn.execute(
        "SELECT count(DISTINCT subject_id) FROM judgment WHERE run_id = "
        "(SELECT id FROM judge_run WHERE ext_id = 'again')"
    ).fetchone()[0]
    assert conn.execute("SELECT count(*) FROM subject").fetchone()[0] == shared


def _attach_cli(db: str, run: str, path: Path) -> int:
    """``gavel import --as-run RUN PATH`` into the excerpt's suite; the exit code."""
    return main(
        ["import", "--db", db, "--format", FMT, "--suite-id", SUITE, "--as-run", run, str(path)]
    )


def test_cli_import_as_run_and_compare(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = str(tmp_path / "g.db")
    assert (
        main(
            [
                "import",
                "--db",
                db,
                "--format",
                FMT,
                "--suite-id",
                SUITE,
                str(EXCERPT / f"{SYSTEM}.jsonl"),
            ]
        )
        == 0
    )
    for k in range(2, 4):
        path = noisy_judgements(EXCERPT / f"{SYSTEM}.jsonl", tmp_path / f"run{k}", seed=k)
        assert _attach_cli(db, f"run{k}", path) == 0
    assert "attached run run3 to suite tickr" in capsys.readouterr().out
    assert _attach_cli(db, "run3", EXCERPT / f"{SYSTEM}.jsonl") == 2
    assert "already has a run 'run3'" in capsys.readouterr().err
    assert (
        main(
            [
                "compare",
                "--db",
                db,
                "--suite",
                SUITE,
                "--metric",
                "race.overall",
                "--format",
                "json",
            ]
        )
        == 0
    )
    (doc,) = json.loads(capsys.readouterr().out)
    noise = doc["noise"]
    assert len(noise["runs"]) == 3 and noise["reports"] == 2
    (overall,) = noise["bands"]
    assert overall["n"] == 3 and overall["low"] <= overall["mean"] <= overall["high"]
    groups = {g["group"]: g for g in noise["agreement"]}
    assert 0 < groups["race_target"]["flip_rate"] < 1
    assert "race_target/insight" in groups
    assert main(["compare", "--db", db, "--suite", SUITE]) == 0
    out = capsys.readouterr().out
    assert "noise band over 3 runs" in out and "flip rate" in out


# -- the real anchor: both judge runs in one suite, and ten runs --------------------------------


def test_tickr_anchor_two_judge_runs_in_one_suite(anchors: Path, conn: sqlite3.Connection) -> None:
    root = anchors / "deep_research_bench_tickr"
    if not root.is_dir():
        pytest.skip("the tickr anchor is absent")
    import_path(conn, root / "judgements" / f"{SYSTEM}.jsonl", FMT, SUITE)
    raw = root / "results" / "race" / SYSTEM / "raw_results.jsonl"
    attached = attach_path(conn, raw, "stored", FMT, SUITE)
    assert attached.reports == 10
    noise = run_noise(conn, suite_runs(conn, SUITE), [("race", "overall")])
    (overall,) = noise.bands
    assert overall.band.n == 2 and overall.via == ("stored",)
    # The README's figure: the two files come from different judge runs.
    assert overall.band.high - overall.band.low > 0.001
    per_task = _per_task_overall_gap(conn)
    assert 0.03 < max(per_task) < 0.07


def _per_task_overall_gap(conn: sqlite3.Connection) -> list[float]:
    from store.runs.records import run_scores

    judged = run_scores(conn, f"{SYSTEM}:race_judgements", own_only=True)
    stored = run_scores(conn, "stored", own_only=True)
    gaps = []
    for (rid, fw), scores in judged.reports.items():
        other = stored.reports[(rid, fw)]
        a, b = scores.get("overall"), other.get("stored_overall")
        if a is not None and b is not None:
            gaps.append(abs(a - b))
    return gaps


def test_ten_runs_of_the_tickr_reports(
    anchors: Path, conn: sqlite3.Connection, tmp_path: Path
) -> None:
    """The issue's done-when figure: ten judge runs of the same DeepResearch Bench reports in
    one suite (the real judgements and nine generated from them), with their band."""
    root = anchors / "deep_research_bench_tickr"
    if not root.is_dir():
        pytest.skip("the tickr anchor is absent")
    source = root / "judgements" / f"{SYSTEM}.jsonl"
    import_path(conn, root, FMT)
    suite = "drb-deep_research_bench_tickr"
    runs = [f"{SYSTEM}:race_judgements"]
    for k in range(2, 11):
        attach_path(
            conn, noisy_judgements(source, tmp_path / f"run{k}", seed=k), f"run{k}", FMT, suite
        )
        runs.append(f"run{k}")
    noise = run_noise(conn, runs, [("race", "overall")])
    (overall,) = noise.bands
    assert overall.band.n == 10 and noise.reports == 10
    assert overall.band.sd is not None and 0 < overall.band.sd < 0.05
    groups = {g.flips.group: g for g in noise.groups}
    target = groups["race_target"]
    assert target.flips.subjects == 251 and target.flips.max_runs == 10
    # Each pair of runs moves a criterion unless both kept it, or both moved it alike.
    assert 0.3 < (target.flips.flip_rate or 0) < 0.6
    print(
        f"\nten runs: {SYSTEM} overall {overall.band.mean:.4f} ± {overall.band.sd:.4f} "
        f"(range {overall.band.low:.4f}–{overall.band.high:.4f}); "
        f"race_target flip rate {target.flips.flip_rate:.1%}, "
        f"changed in some run {target.flips.changed:.1%}, alpha {target.alpha:.3f}"
    )


FIXTURES = Path(__file__).parent / "fixtures"


@pytest.mark.parametrize(
    ("fmt", "path", "runs"),
    [
        ("deepresearch_bench", FIXTURES / "drb_mini", ("again:fact", "again:race_judgements")),
        ("drb2", FIXTURES / "drb2", ("again",)),
        ("dr3_eval", FIXTURES / "dr3", ("again:judge", "again:cc-rule")),
        ("dr3_eval", FIXTURES / "dr3_release", ("again:judge", "again:cc-rule")),
        ("livedrbench", FIXTURES / "livedrbench", ("again",)),
        (
            "dr_bench",
            FIXTURES / "drbench_notebook",
            ("again:keyword-matcher-v2", "again:url-matcher-v1", "again:notebook-agent-x"),
        ),
        ("native", Path(__file__).parent.parent / "sample_data" / "dailyreport", ("again",)),
    ],
)
def test_every_benchmarks_judge_output_attaches_as_a_repeat(
    conn: sqlite3.Connection, fmt: str, path: Path, runs: tuple[str, ...]
) -> None:
    """The same judge output attached again: every verdict on the suite's own subjects, a
    band of two runs with no spread, and no subject flipped."""
    from store.runs.compare import default_metrics

    result = import_path(conn, path, fmt)
    judgments = conn.execute("SELECT count(*) FROM judgment").fetchone()[0]
    subjects = conn.execute("SELECT count(*) FROM subject").fetchone()[0]
    attached = attach_path(conn, path, "again", fmt)
    assert attached.runs == runs and attached.judgments == judgments
    assert conn.execute("SELECT count(*) FROM subject").fetchone()[0] == subjects
    noise = run_noise(conn, suite_runs(conn, result.suite), default_metrics())
    repeated = [b for b in noise.bands if b.band.n == 2]
    assert repeated and all(b.band.sd == pytest.approx(0.0) for b in repeated)
    assert noise.groups and all(g.flips.flip_rate == 0 for g in noise.groups)
    assert not any(b.band.n > 2 for b in noise.bands)


def test_a_second_import_of_the_suite_points_to_as_run(conn: sqlite3.Connection) -> None:
    import_path(conn, EXCERPT / f"{SYSTEM}.jsonl", FMT, SUITE)
    with pytest.raises(InputError) as err:
        import_path(conn, EXCERPT / SYSTEM / "raw_results.jsonl", FMT, SUITE)
    assert "--as-run NAME" in err.value.message


def test_stored_bands_last_while_the_runs_do(
    excerpt_db: sqlite3.Connection, tmp_path: Path
) -> None:
    from store.runs.bands import bands_fingerprint, store_bands, stored_bands
    from store.runs.compare import system_bands

    before = bands_fingerprint(excerpt_db)
    bands = system_bands(excerpt_db)
    assert bands[SUITE][SYSTEM].band.n == 2
    assert stored_bands(excerpt_db, before) is None
    store_bands(excerpt_db, before, bands)
    assert stored_bands(excerpt_db, before) == bands
    # Another run: the stored bands are for another state.
    path = noisy_judgements(EXCERPT / f"{SYSTEM}.jsonl", tmp_path / "r3", seed=3)
    attach_path(excerpt_db, path, "run3", FMT, SUITE)
    after = bands_fingerprint(excerpt_db)
    assert after != before and stored_bands(excerpt_db, after) is None
    assert system_bands(excerpt_db)[SUITE][SYSTEM].band.n == 3
