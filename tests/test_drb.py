"""DeepResearch Bench: the importer, RACE and FACT, against hand-computed cases and real data.

The anchor tests import the public benchmark files (``../shared/anchors``, or ``$GAVEL_ANCHORS``)
into a real SQLite store and read the system scores back; the figures they check are the ones
``anchors/README.md`` lists. Run with ``-s`` to see the exact values printed.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from reviewer.errors import InputError
from reviewer.formats import hash_path
from reviewer.formats.checks import check_bundle
from reviewer.framework import ReportScores, resolve_options
from reviewer.frameworks.deepresearch_bench.fact import FRAMEWORK as FACT
from reviewer.frameworks.deepresearch_bench.format import read_drb
from reviewer.frameworks.deepresearch_bench.race import FRAMEWORK as RACE
from reviewer.inputs import ClaimIn, CriterionIn, ReportInput, VerdictIn
from reviewer.scales import SCORE10, SUPPORT, UNIT
from tests.score_rows import all_scores


def race_opts(**overrides: str) -> dict[str, str]:
    return resolve_options(RACE, overrides)


def fact_opts(**overrides: str) -> dict[str, str]:
    return resolve_options(FACT, overrides)


# -- helpers: a store with one benchmark imported -----------------------------------------


def import_repo(root: Path, db: Path) -> sqlite3.Connection:
    from store.db.connection import connect
    from store.imports.loader import import_bundle
    from store.scores.cache import rebuild_scores

    conn = connect(db)
    bundle = read_drb(root)
    check_bundle(bundle)
    import_bundle(conn, bundle, hash_path(root))
    rebuild_scores(conn)
    return conn


@pytest.fixture
def store_of(tmp_path: Path) -> Iterator[Any]:
    opened: list[sqlite3.Connection] = []

    def make(root: Path) -> sqlite3.Connection:
        conn = import_repo(root, tmp_path / f"{root.name}.db")
        opened.append(conn)
        return conn

    yield make
    for conn in opened:
        conn.close()


def system_scores(
    conn: sqlite3.Connection, system: str, framework: str, variant: str = "judge"
) -> dict[str, tuple[float | None, int]]:
    rows = conn.execute(
        """SELECT s.metric, s.value, s.n FROM score s JOIN system y ON s.scope = 'system:' || y.id
           WHERE y.ext_id = ? AND s.framework = ? AND s.variant = ?""",
        (system, framework, variant),
    ).fetchall()
    return {metric: (value, n) for metric, value, n in rows}


def report_scores(
    conn: sqlite3.Connection, system: str, framework: str, metric: str, variant: str = "judge"
) -> dict[str, float | None]:
    rows = conn.execute(
        f"""SELECT t.ext_id, s.value FROM {all_scores(conn)} s
           JOIN report r ON s.scope = 'report:' || r.id
           JOIN system y ON y.id = r.system_id JOIN task t ON t.id = r.task_id
           WHERE y.ext_id = ? AND s.framework = ? AND s.metric = ? AND s.variant = ?""",
        (system, framework, metric, variant),
    ).fetchall()
    return dict(rows)


def summary_file(path: Path) -> dict[str, float]:
    out = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        name, _, value = line.partition(":")
        out[name.strip()] = float(value)
    return out


# -- anchors: every figure of anchors/README.md --------------------------------------------


@pytest.mark.anchors
def test_upstream_claude_race_means_from_stored_results(anchors: Path, store_of: Any) -> None:
    root = anchors / "deep_research_bench"
    conn = store_of(root)
    scores = system_scores(conn, "claude-3-7-sonnet-latest", "race")
    expected = {
        "stored_comprehensiveness": 0.4110,
        "stored_insight": 0.4051,
        "stored_instruction_following": 0.4621,
        "stored_readability": 0.4172,
        "stored_overall": 0.4218,
    }
    print("\nupstream claude-3-7-sonnet-latest RACE (stored raw_results, mean of 100):")
    for metric, figure in expected.items():
        value, n = scores[metric]
        print(f"  {metric} = {value!r} (n={n}) -> {value:.4f}")
        assert value is not None and round(value, 4) == figure
        assert n == 100
    summary = summary_file(root / "results/race/claude-3-7-sonnet-latest/race_result.txt")
    assert round(scores["stored_overall"][0] or 0, 4) == summary["Overall Score"]
    # No per-criterion verdicts upstream: nothing is recomputed, nothing is invented.
    assert scores["overall"] == (None, 0)
    assert scores["drift_overall"] == (None, 0)


@pytest.mark.anchors
def test_lukeguan_dls_race_overall(anchors: Path, store_of: Any) -> None:
    root = anchors / "deep_research_bench_lukeguan"
    conn = store_of(root)
    value, n = system_scores(conn, "dls", "race")["stored_overall"]
    print(f"\nlukeguan dls RACE stored_overall = {value!r} (n={n}) -> {value:.4f}")
    assert value is not None and round(value, 4) == 0.4673
    assert n == 8  # task 1 (only in the fork's own files) included, task 65 has no result
    summary = summary_file(root / "results/race/dls/race_result.txt")
    assert round(value, 4) == summary["Overall Score"]


@pytest.mark.anchors
def test_lukeguan_dls_fact_reference_code_definition(anchors: Path, store_of: Any) -> None:
    root = anchors / "deep_research_bench_lukeguan"
    conn = store_of(root)
    scores = system_scores(conn, "dls", "fact")
    total, n_total = scores["total_citations"]
    effective, n_effective = scores["effective_citations"]
    accuracy, n_pairs = scores["citation_accuracy"]
    print(
        f"\nlukeguan dls FACT (code): total_citations = {total!r} (N={n_total}), "
        f"effective_citations = {effective!r} (N={n_effective}), "
        f"citation_accuracy = {accuracy!r} (pairs={n_pairs})"
    )
    print(
        f"lukeguan dls FACT (paper): citation_accuracy_paper = "
        f"{scores['citation_accuracy_paper']}, effective_citations_paper = "
        f"{scores['effective_citations_paper']}"
    )
    assert total == pytest.approx(45.8) and n_total == 5
    assert effective == pytest.approx(31.0) and n_effective == 5
    assert accuracy is not None and round(accuracy, 5) == 0.67686
    assert n_pairs == 229
    summary = summary_file(root / "results/fact/dls/fact_result.txt")
    assert accuracy == pytest.approx(summary["valid_rate"], abs=1e-12)
    assert total == pytest.approx(summary["total_citations"], abs=1e-12)
    assert effective == pytest.approx(summary["total_valid_citations"], abs=1e-12)
    # The paper's definitions are computed too and differ (macro, every report counts).
    paper, n_reports = scores["citation_accuracy_paper"]
    assert paper is not None and paper < accuracy and n_reports == 9


@pytest.mark.anchors
def test_fact_headline_is_the_definition_the_published_figures_come_from(
    anchors: Path,
    store_of: Any,
) -> None:
    # The queue shows the headline metrics: they must be the ones a published fact_result.txt
    # holds (the anchors' is written by the reference code's utils/stat.py), and the docs
    # must say that this is why they, not the paper's App. E definitions, are the headline.
    import reviewer.frameworks.deepresearch_bench.fact as fact_module

    assert [m.name for m in FACT.metrics if m.headline] == [
        "citation_accuracy",
        "effective_citations",
    ]
    root = anchors / "deep_research_bench_lukeguan"
    scores = system_scores(store_of(root), "dls", "fact")
    published = summary_file(root / "results/fact/dls/fact_result.txt")
    assert scores["citation_accuracy"][0] == pytest.approx(published["valid_rate"], abs=1e-12)
    assert scores["effective_citations"][0] == pytest.approx(
        published["total_valid_citations"], abs=1e-12
    )
    assert scores["citation_accuracy_paper"][0] != pytest.approx(published["valid_rate"])
    doc = " ".join((fact_module.__doc__ or "").split())
    assert "The headline" in doc and "is the reference code's" in doc
    assert "fact_result.txt" in doc and "Table 1" in doc
    # The README is a front door: the benchmark notes live in docs/benchmarks.md.
    docs = Path(__file__).parent.parent / "docs" / "benchmarks.md"
    notes = " ".join(docs.read_text().split())
    assert "FACT's headline (C. Acc., E. Cit.) is the reference code's" in notes


@pytest.mark.anchors
def test_tickr_recomputed_scores_drift_from_stored_results(anchors: Path, store_of: Any) -> None:
    root = anchors / "deep_research_bench_tickr"
    conn = store_of(root)
    system = "gpt5-tickr-0917"
    drift = report_scores(conn, system, "race", "drift_overall")
    assert len(drift) == 10 and all(v is not None for v in drift.values())
    worst = max(abs(v or 0.0) for v in drift.values())
    dims = ("comprehensiveness", "insight", "instruction_following", "readability")
    worst_dim = max(
        abs(v or 0.0)
        for d in dims
        for v in report_scores(conn, system, "race", f"drift_{d}").values()
    )
    scores = system_scores(conn, system, "race")
    print(
        f"\ntickr {system}: per-task drift_overall = "
        f"{ {k: round(v or 0.0, 4) for k, v in sorted(drift.items(), key=lambda x: int(x[0]))} }"
    )
    print(f"  max |drift_overall| = {worst!r}; max |drift_<dimension>| = {worst_dim!r}")
    print(
        f"  recomputed overall mean = {scores['overall'][0]!r}, stored overall mean = "
        f"{scores['stored_overall'][0]!r}, mean drift = {scores['drift_overall'][0]!r}"
    )
    assert 0.01 < worst < 0.1
    assert 0.01 < worst_dim < 0.1
    assert scores["max_abs_drift_overall"][0] == pytest.approx(worst)
    assert scores["max_abs_drift_overall"][1] == 10
    summary = summary_file(root / f"results/race/{system}/race_result.txt")
    assert round(scores["stored_overall"][0] or 0.0, 4) == summary["Overall Score"]
    # The stored rows follow the same no_reference formula the recomputation uses
    # (overall = Σ W_d·dimension, all clipped to 0–1), so the drift is the judge runs', not ours.
    weights = {
        t: json.loads(m)["dimension_weight"]
        for t, m in conn.execute("SELECT ext_id, metadata FROM task")
    }
    for line in (root / f"results/race/{system}/raw_results.jsonl").read_text().splitlines():
        row = json.loads(line)
        w = weights[str(row["id"])]
        assert sum(w[d] * row[d] for d in dims) == pytest.approx(row["overall_score"], abs=1e-9)


@pytest.mark.anchors
def test_anchor_bundles_pass_every_check_and_reimport_is_idempotent(
    anchors: Path, tmp_path: Path
) -> None:
    from store.db.connection import connect
    from store.imports.loader import import_bundle

    for name in (
        "deep_research_bench",
        "deep_research_bench_lukeguan",
        "deep_research_bench_tickr",
    ):
        root = anchors / name
        bundle = read_drb(root)
        check_bundle(bundle)
        assert bundle.suite.id == f"drb-{name}"
        assert [s.id for s in bundle.systems if s.is_reference] == (
            [] if name == "deep_research_bench" else ["reference"]
        )
        conn = connect(tmp_path / f"{name}.db")
        first = import_bundle(conn, bundle, hash_path(root))
        again = import_bundle(conn, read_drb(root), hash_path(root))
        assert first.created and not again.created
        conn.close()


@pytest.mark.anchors
def test_anchor_import_details(anchors: Path) -> None:
    luke = read_drb(anchors / "deep_research_bench_lukeguan")
    assert luke.suite.frameworks == ["race", "fact"]
    reports = {r.id: r for r in luke.reports}
    # Task 1 exists only in the FACT/RACE results: its report comes from the FACT article.
    assert reports["dls:1"].metadata["origin"] == "results/fact/dls/validated.jsonl"
    assert reports["dls:1"].markdown.lstrip().startswith("# Recent demonstrations")
    assert reports["dls:58"].cleaned is not None and reports["dls:65"].cleaned is None
    task1 = next(t for t in luke.tasks if t.id == "1")
    assert task1.metadata["dimension_weight"]["insight"] == 0.35 and task1.criteria
    claims = reports["dls:64"].claims
    assert all(c.url for c in claims)
    assert any(c.citations is None and c.metadata["ref_idx"] == ["2502.04552"] for c in claims)
    failed = [s for s in luke.sources if s.error]
    assert all(s.error and s.error.startswith("scrape failed") for s in failed)
    verdicts = [j for j in luke.judgments if j.kind == "fact"]
    assert {j.value for j in verdicts} == {"supported", "unsupported", "unknown"}

    upstream = read_drb(anchors / "deep_research_bench")
    assert upstream.suite.frameworks == ["race"]
    task = next(t for t in upstream.tasks if t.id == "46")
    assert {c.metadata.get("aspect") for c in task.criteria if c.dimension == "readability"} >= {
        "内容结构与逻辑"
    }
    assert next(t for t in upstream.tasks if t.id == "1").language == "zh"

    tickr = read_drb(anchors / "deep_research_bench_tickr")
    kinds = {j.kind for j in tickr.judgments}
    assert kinds == {"race_target", "race_stored"}
    assert all(j.explanation for j in tickr.judgments if j.kind == "race_target")


# -- RACE by hand (spec §2.7) -----------------------------------------------------------------


def race_input(
    items: Sequence[tuple[str, float | None, float | None, float | None]],
    dimension_weight: dict[str, float] | None,
    stored: dict[str, float] | None = None,
) -> ReportInput:
    """items: (dimension, criterion weight, target score, reference score); None = no verdict."""
    criteria = [CriterionIn(i + 1, None, dim, w) for i, (dim, w, _, _) in enumerate(items)]
    verdicts: list[VerdictIn] = []
    for i, (_, _, target, reference) in enumerate(items):
        for kind, value in (("race_target", target), ("race_reference", reference)):
            if value is not None:
                code = SCORE10.normalize(value)
                verdicts.append(
                    VerdictIn(len(verdicts) + 1, 1, kind, None, i + 1, None, None, None, code, code)
                )
    for key, value in (stored or {}).items():
        code = UNIT.normalize(value)
        verdicts.append(
            VerdictIn(len(verdicts) + 1, 1, "race_stored", None, None, None, None, key, code, code)
        )
    metadata = {} if dimension_weight is None else {"dimension_weight": dimension_weight}
    return ReportInput(1, 1, 1, task_metadata=metadata, criteria=criteria, verdicts=verdicts)


W_EXAMPLE = {
    "comprehensiveness": 0.30,
    "insight": 0.35,
    "instruction_following": 0.20,
    "readability": 0.15,
}
EXAMPLE: list[tuple[str, float | None, float | None, float | None]] = [
    ("comprehensiveness", 0.5, 7, 8),
    ("comprehensiveness", 0.5, 5, 8),
    ("insight", 0.6, 6, 7),
    ("insight", 0.4, 4, 8),
    ("instruction_following", 1.0, 8, 8),
    ("readability", 0.7, 7, 7),
    ("readability", 0.3, 6, 8),
]


def test_race_spec_worked_example() -> None:
    # S_comp 6.0 vs 8.0, S_ins 5.2 vs 7.4, S_inst 8 vs 8, S_read 6.7 vs 7.3;
    # S_int = 6.225 vs 7.685 -> 6.225 / 13.91 = 0.44752.
    scores = RACE.score_report(race_input(EXAMPLE, W_EXAMPLE), "judge", race_opts())
    print(
        f"\nspec §2.7 example: overall = {scores['overall']!r}, dims = "
        f"{ {d: scores[d] for d in W_EXAMPLE} }"
    )
    assert scores["_T"] == pytest.approx(6.225)
    assert scores["_R"] == pytest.approx(7.685)
    assert round(scores["overall"] or 0, 5) == 0.44752
    assert round(scores["comprehensiveness"] or 0, 4) == 0.4286  # 6 / 14
    assert round(scores["insight"] or 0, 4) == 0.4127  # 5.2 / 12.6
    assert scores["instruction_following"] == 0.5  # 8 / 16
    assert round(scores["readability"] or 0, 4) == 0.4786  # 6.7 / 14
    assert scores["overall_paper"] == pytest.approx(scores["overall"])  # everything judged
    assert scores["_no_reference"] == 0.0


def test_race_renormalises_over_judged_criteria_but_paper_counts_missing_as_zero() -> None:
    # The second comprehensiveness criterion has no verdict (the judge skipped it).
    items = list(EXAMPLE)
    items[1] = ("comprehensiveness", 0.5, None, None)
    scores = RACE.score_report(race_input(items, W_EXAMPLE), "judge", race_opts())
    # Renormalised: S_comp = 0.5·7/0.5 = 7 vs 0.5·8/0.5 = 8 -> dimension 7/15.
    assert scores["comprehensiveness"] == pytest.approx(7 / 15)
    t = 0.3 * 7 + 0.35 * 5.2 + 0.2 * 8 + 0.15 * 6.7  # 6.525
    r = 0.3 * 8 + 0.35 * 7.4 + 0.2 * 8 + 0.15 * 7.3  # 7.685
    assert scores["overall"] == pytest.approx(t / (t + r))
    # Paper Eq. 2 without renormalisation: S_comp = 0.5·7 + 0 = 3.5 vs 0.5·8 + 0 = 4.
    tp = 0.3 * 3.5 + 0.35 * 5.2 + 0.2 * 8 + 0.15 * 6.7
    rp = 0.3 * 4.0 + 0.35 * 7.4 + 0.2 * 8 + 0.15 * 7.3
    assert scores["overall_paper"] == pytest.approx(tp / (tp + rp))
    assert scores["overall_paper"] != pytest.approx(scores["overall"])


def test_race_unpaired_criterion_option() -> None:
    items = list(EXAMPLE)
    items[1] = ("comprehensiveness", 0.5, 5, None)  # reference verdict failed
    dropped = RACE.score_report(race_input(items, W_EXAMPLE), "judge", race_opts())
    assert dropped["comprehensiveness"] == pytest.approx(7 / 15)  # 7 vs 8
    own = RACE.score_report(race_input(items, W_EXAMPLE), "judge", race_opts(unpaired="own"))
    assert own["comprehensiveness"] == pytest.approx(6 / 14)  # 6 vs 8


def test_race_no_reference_mode_and_drift() -> None:
    items = [(d, w, t, None) for d, w, t, _ in EXAMPLE]
    stored = {"overall_score": 0.6, "insight": 0.5}
    scores = RACE.score_report(race_input(items, W_EXAMPLE, stored), "judge", race_opts())
    # S_int(tgt) = 6.225 -> clip(0.6225); insight 5.2 -> 0.52.
    assert scores["overall"] == pytest.approx(0.6225)
    assert scores["insight"] == pytest.approx(0.52)
    assert scores["_no_reference"] == 1.0
    assert scores["stored_overall"] == 0.6
    assert scores["drift_overall"] == pytest.approx(0.0225)
    assert scores["drift_insight"] == pytest.approx(0.02)
    undefined = RACE.score_report(
        race_input(items, W_EXAMPLE, stored), "judge", race_opts(no_reference="undefined")
    )
    assert "overall" not in undefined and undefined["stored_overall"] == 0.6
    assert "drift_overall" not in undefined


def test_race_zero_denominator_and_weight_options() -> None:
    zeros: list[tuple[str, float | None, float | None, float | None]] = [
        ("comprehensiveness", 1.0, 0, 0),
        ("insight", 1.0, 4, 6),
    ]
    w = {"comprehensiveness": 0.5, "insight": 0.5}
    code = RACE.score_report(race_input(zeros, w), "judge", race_opts())
    assert code["comprehensiveness"] == 0.0
    undefined = RACE.score_report(
        race_input(zeros, w), "judge", race_opts(zero_denominator="undefined")
    )
    assert undefined["comprehensiveness"] is None
    assert undefined["insight"] == pytest.approx(0.4)
    # Uniform criterion weights (paper ablation): comp (7+5)/2 = 6 either way; insight 5 vs 7.5.
    uniform = RACE.score_report(
        race_input(EXAMPLE, W_EXAMPLE), "judge", race_opts(criterion_weights="uniform")
    )
    assert uniform["insight"] == pytest.approx(5 / 12.5)
    # No dimension weights stored: uniform fallback.
    fallback = RACE.score_report(race_input(EXAMPLE, None), "judge", race_opts())
    t = (6 + 5.2 + 8 + 6.7) / 4
    r = (8 + 7.4 + 8 + 7.3) / 4
    assert fallback["overall"] == pytest.approx(t / (t + r))


def test_race_aggregate_is_a_mean_over_defined_reports() -> None:
    reports: list[ReportScores] = [
        {"overall": 0.4, "stored_overall": 0.5, "drift_overall": -0.1},
        {"overall": 0.6, "stored_overall": None},
        {"stored_overall": 0.3},
        {},
    ]
    out = RACE.aggregate(reports, race_opts())
    assert out["overall"].value == pytest.approx(0.5) and out["overall"].n == 2
    assert out["stored_overall"].value == pytest.approx(0.4) and out["stored_overall"].n == 2
    assert out["max_abs_drift_overall"].value == pytest.approx(0.1)
    assert out["insight"].value is None and out["insight"].n == 0


def test_every_ambiguity_is_a_named_option() -> None:
    assert {o.name: o.default for o in RACE.options} == {
        "zero_denominator": "zero",
        "no_reference": "absolute",
        "unpaired": "drop",
        "criterion_weights": "stored",
        "dimension_weights": "stored",
    }
    assert {o.name: o.default for o in FACT.options} == {"paper_unknown": "count"}


# -- FACT by hand (spec §3.3) -----------------------------------------------------------------


def fact_input(report_id: int, verdicts: list[str | None], pairs: int | None = None) -> ReportInput:
    """A report with ``pairs`` statement–URL claims and one verdict per given value."""
    n = len(verdicts) if pairs is None else pairs
    claims = [
        ClaimIn(report_id * 100 + i, None, None, (), f"https://e.example/{i}") for i in range(n)
    ]
    rows = []
    for i, value in enumerate(verdicts):
        code = None if value is None else SUPPORT.normalize(value)
        rows.append(
            VerdictIn(
                report_id * 100 + i,
                report_id,
                "fact",
                None,
                None,
                report_id * 100 + i,
                None,
                None,
                code,
                code,
                "timeout" if value is None else None,
            )
        )
    return ReportInput(report_id, report_id, 1, claims=claims, verdicts=rows)


def test_fact_both_definitions_by_hand() -> None:
    a = fact_input(1, ["supported", "supported", "unsupported", "unknown"])
    b = fact_input(2, ["supported", None])  # one verdict failed (validate_error)
    c = fact_input(3, [])  # no citations extracted
    per_report = [FACT.score_report(r, "judge", fact_opts()) for r in (a, b, c)]
    assert per_report[0]["citation_accuracy"] == pytest.approx(2 / 3)
    assert per_report[0]["citation_accuracy_paper"] == pytest.approx(2 / 4)
    assert per_report[1]["citation_accuracy_paper"] == pytest.approx(1 / 2)
    assert "citation_accuracy" not in per_report[2]
    out = FACT.aggregate(per_report, fact_opts())
    # Code: N = 2 reports with citations; judged = 3 + 1 = 4; supported = 2 + 1 = 3.
    assert out["total_citations"].value == pytest.approx(4 / 2) and out["total_citations"].n == 2
    assert out["effective_citations"].value == pytest.approx(3 / 2)
    assert out["citation_accuracy"].value == pytest.approx(3 / 4)
    # Paper: |T| = 3 reports; Acc = (2/4 + 1/2 + 0) / 3; E.Cit = 3 / 3.
    assert out["citation_accuracy_paper"].value == pytest.approx((0.5 + 0.5 + 0) / 3)
    assert out["citation_accuracy_paper"].n == 3
    assert out["effective_citations_paper"].value == pytest.approx(1.0)
    # paper_unknown = exclude: a = 2/3, b = 1/1, c = 0.
    excl = [FACT.score_report(r, "judge", fact_opts(paper_unknown="exclude")) for r in (a, b, c)]
    assert FACT.aggregate(excl, fact_opts())["citation_accuracy_paper"].value == pytest.approx(
        (2 / 3 + 1 + 0) / 3
    )


def test_fact_without_verdicts_has_no_scores() -> None:
    extracted_only = fact_input(1, [], pairs=3)
    nothing = fact_input(2, [])
    out = FACT.aggregate(
        [FACT.score_report(r, "judge", fact_opts()) for r in (extracted_only, nothing)], fact_opts()
    )
    assert all(a.value is None and a.n == 0 for a in out.values())


# -- overrides flow into the adjudicated variant only -------------------------------------


@pytest.mark.anchors
def test_overriding_a_fact_verdict_changes_adjudicated_accuracy_only(
    anchors: Path, store_of: Any
) -> None:
    from store.reviewlog.events import ReviewLog
    from store.scores.cache import cached, compute_all, update_scores

    conn = store_of(anchors / "deep_research_bench_lukeguan")
    before = system_scores(conn, "dls", "fact", "adjudicated")["citation_accuracy"][0]
    judgment_id, report_id = conn.execute(
        """SELECT j.id, j.report_id FROM judgment j JOIN report r ON r.id = j.report_id
           JOIN system y ON y.id = r.system_id
           WHERE y.ext_id = 'dls' AND j.kind = 'fact' AND j.value = 'supported'
           ORDER BY j.id LIMIT 1"""
    ).fetchone()
    ReviewLog(conn, "r").decide(judgment_id, "unsupported", "why")
    update_scores(conn, [report_id])
    judge = system_scores(conn, "dls", "fact", "judge")
    adjudicated = system_scores(conn, "dls", "fact", "adjudicated")
    print(
        f"\noverride: citation_accuracy judge {judge['citation_accuracy'][0]!r} -> "
        f"adjudicated {adjudicated['citation_accuracy'][0]!r}"
    )
    assert before == pytest.approx(155 / 229)
    assert judge["citation_accuracy"][0] == pytest.approx(155 / 229)
    assert adjudicated["citation_accuracy"][0] == pytest.approx(154 / 229)
    assert adjudicated["effective_citations"][0] == pytest.approx(154 / 5)
    assert judge["effective_citations"][0] == pytest.approx(31.0)
    # The incremental update equals a full recompute.
    full = compute_all(conn)
    cache = cached(conn)
    for key, values in full.systems.items():
        for metric, (value, n) in values.items():
            got = cache.systems[key][metric]
            assert got[1] == n
            assert (got[0] is None and value is None) or got[0] == pytest.approx(value)


# -- the importer on hand-made repositories: quirks and errors ------------------------------


def write_jsonl(path: Path, rows: list[Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "".join(
            (r if isinstance(r, str) else json.dumps(r, ensure_ascii=False)) + "\n" for r in rows
        ),
        encoding="utf-8",
    )
    return path


CRITERIA = {
    "comprehensiveness": [
        {"criterion": "Coverage", "explanation": "e", "weight": 0.6},
        {"criterion": "Depth of data", "explanation": "e", "weight": 0.4, "comment": "stray key"},
    ],
    "insight": [{"criterion": "Causes", "explanation": "e", "weight": 1.0}],
    "instruction_following": [{"criterion": "Answers", "explanation": "e", "weight": 1.0}],
    "readability": [{"criterion": "Clarity", "explanation": "e", "weight": 1.0}],
}
DW = {"comprehensiveness": 0.3, "insight": 0.3, "instruction_following": 0.2, "readability": 0.2}


def mini_repo(root: Path) -> Path:
    write_jsonl(
        root / "data/prompt_data/query.jsonl",
        [
            {"id": 1, "topic": "Health", "language": "en", "prompt": "Task one?"},
            {"id": "2", "topic": "Health", "language": "en", "prompt": "Task two?"},
        ],
    )
    write_jsonl(
        root / "data/criteria_data/criteria.jsonl",
        [
            {"id": 1, "prompt": "Task one?", "dimension_weight": DW, "criterions": CRITERIA},
            {"id": "2", "prompt": "Task two?", "dimension_weight": DW, "criterions": CRITERIA},
        ],
    )
    write_jsonl(
        root / "data/test_data/raw_data/agent.jsonl",
        [
            {
                "id": 1,
                "prompt": "Task one?",
                "article": "Trips rose [1].\n\n## References\n[1] Report https://a.example/r\n",
            },
        ],
    )
    write_jsonl(
        root / "data/test_data/raw_data/reference.jsonl",
        [
            {"id": 1, "prompt": "Task one?", "article": "Reference one."},
            {"id": 2, "prompt": "Task two?", "article": "Reference two."},
        ],
    )
    write_jsonl(
        root / "data/test_data/cleaned_data/agent.jsonl",
        [
            {"id": 1, "prompt": "Task one?", "article": "Trips rose."},
        ],
    )
    write_jsonl(
        root / "results/race/agent/raw_results.jsonl",
        [
            {
                "id": 1,
                "prompt": "Task one?",
                "comprehensiveness": 0.4,
                "insight": 0.5,
                "instruction_following": 0.5,
                "readability": 0.5,
                "overall_score": 0.47,
            },
            # a task without any report file: gets a placeholder report
            {
                "id": "2",
                "prompt": "Task two?",
                "comprehensiveness": 0.5,
                "insight": 0.5,
                "instruction_following": 0.5,
                "readability": 0.5,
                "overall_score": 0.5,
            },
        ],
    )
    write_jsonl(
        root / "judgements/agent.jsonl",
        [
            {
                "id": 1,
                "prompt": "Task one?",
                "mode": "pairwise",
                "judge_details": {
                    "comprehensiveness": [
                        {
                            "criterion": "coverage",
                            "analysis": "ok",
                            "article_1_score": 6,
                            "article_2_score": 8,
                        },  # case-insensitive
                        {
                            "criterion": "Depth of data (numbers)",
                            "analysis": "ok",
                            "article_1_score": "5",
                            "article_2_score": 5,
                        },  # substring, "5"
                        {
                            "criterion": "Something else",
                            "analysis": "?",
                            "article_1_score": 9,
                            "article_2_score": 9,
                        },  # unmatched
                    ],
                    "insight": [
                        {
                            "criterion": "Causes",
                            "analysis": "a",
                            "article_1_score": 7,
                            "article_2_score": None,
                        }
                    ],  # no reference score
                    "instruction_following": [
                        {"criterion": "Answers", "article_1_score": 8, "article_2_score": 8}
                    ],
                    "readability": [
                        {"criterion": "Clarity", "article_1_score": 6, "article_2_score": 6}
                    ],
                },
            }
        ],
    )
    write_jsonl(
        root / "results/fact/agent/validated.jsonl",
        [
            {
                "id": "1",
                "prompt": "Task one?",
                "article": "Trips rose [1].",
                "citations": [
                    {"fact": "Trips rose", "ref_idx": "1", "url": "https://a.example/r"},
                    {"fact": "Stations", "ref_idx": "x9", "url": "https://b.example"},
                ],
                "citations_deduped": {
                    "https://a.example/r": {
                        "facts": ["Trips rose"],
                        "url_content": "Report\n\nbody",
                        "validate_res": [{"idx": 1, "result": "supported"}],
                        "validate_error": None,
                    },
                    "https://b.example": {
                        "facts": ["Stations"],
                        "url_content": "scrape failed: timeout",
                        "validate_res": None,
                        "validate_error": "judge failed",
                    },
                },
            },
            {"id": 2, "prompt": "Task two?", "article": "Two.", "citations": "extraction failed"},
        ],
    )
    return root


def test_mini_repository_quirks(tmp_path: Path) -> None:
    root = mini_repo(tmp_path / "mini_bench")
    bundle = read_drb(root)
    check_bundle(bundle)
    assert bundle.suite.id == "drb-mini_bench"
    assert bundle.suite.frameworks == ["race", "fact"]
    assert "match no criterion" in bundle.suite.description
    reports = {r.id: r for r in bundle.reports}
    assert reports["agent:1"].cleaned == "Trips rose."
    assert reports["agent:2"].metadata["fact_citations"] == "extraction failed"
    assert reports["agent:2"].markdown == "Two."  # from the FACT article
    task = next(t for t in bundle.tasks if t.id == "1")
    assert task.metadata["dimension_weight"] == DW
    assert task.criteria[1].metadata == {"comment": "stray key"}
    claims = reports["agent:1"].claims
    assert [(c.url, c.citations) for c in claims] == [
        ("https://a.example/r", [1]),
        ("https://b.example", None),
    ]
    sources = {s.url: s for s in bundle.sources}
    assert sources["https://b.example"].error == "scrape failed: timeout"
    assert sources["https://a.example/r"].title == "Report"
    facts = [j for j in bundle.judgments if j.kind == "fact"]
    assert [(j.value, j.error) for j in facts] == [("supported", None), (None, "judge failed")]
    targets = {j.criterion: j.value for j in bundle.judgments if j.kind == "race_target"}
    assert targets == {
        "comprehensiveness.1": 6.0,
        "comprehensiveness.2": 5.0,
        "insight.1": 7.0,
        "instruction_following.1": 8.0,
        "readability.1": 6.0,
    }
    refs = [j for j in bundle.judgments if j.kind == "race_reference"]
    assert {j.criterion: (j.value, j.error) for j in refs}["insight.1"] == (
        None,
        "the judge gave no score for this criterion",
    )
    run = next(r for r in bundle.runs if r.id == "agent:race_judgements")
    assert len(run.params["unmatched"]) == 1


def test_mini_repository_scores_through_the_store(tmp_path: Path, store_of: Any) -> None:
    conn = store_of(mini_repo(tmp_path / "mini_bench"))
    race = system_scores(conn, "agent", "race")
    # Task 1 pairs: comp (0.6·6 + 0.4·5)/1 = 5.6 vs (0.6·8 + 0.4·5) = 6.8; insight has no
    # reference score -> dropped (S = 0 both sides); inst 8 vs 8; read 6 vs 6.
    t = 0.3 * 5.6 + 0.2 * 8 + 0.2 * 6
    r = 0.3 * 6.8 + 0.2 * 8 + 0.2 * 6
    assert race["overall"][0] == pytest.approx(t / (t + r)) and race["overall"][1] == 1
    assert race["stored_overall"][0] == pytest.approx((0.47 + 0.5) / 2)
    assert race["stored_overall"][1] == 2
    assert race["drift_overall"][0] == pytest.approx(t / (t + r) - 0.47)
    fact = system_scores(conn, "agent", "fact")
    assert fact["citation_accuracy"] == (1.0, 1)
    assert fact["total_citations"] == (1.0, 1)
    # Paper: task 1 has 1 supported of 2 pairs, task 2 none: (0.5 + 0) / 2.
    assert fact["citation_accuracy_paper"] == (0.25, 2)
    assert not system_scores(conn, "reference", "race")  # the reference is never scored


def test_bad_json_line_names_file_and_line(tmp_path: Path) -> None:
    root = mini_repo(tmp_path / "bench")
    path = root / "results/race/agent/raw_results.jsonl"
    path.write_text(path.read_text() + '{"id": 3, "prompt": \n', encoding="utf-8")
    with pytest.raises(InputError) as err:
        read_drb(root)
    assert err.value.file == str(path) and err.value.line == 3
    assert "invalid JSON" in str(err.value)


def test_missing_field_names_file_line_and_field(tmp_path: Path) -> None:
    root = mini_repo(tmp_path / "bench")
    write_jsonl(
        root / "data/test_data/raw_data/agent.jsonl",
        [
            {"id": 1, "prompt": "Task one?", "article": "x"},
            {"id": 2, "prompt": "Task two?"},
        ],
    )
    with pytest.raises(InputError) as err:
        read_drb(root)
    assert err.value.line == 2 and err.value.field == "article"
    assert err.value.file.endswith("raw_data/agent.jsonl")

    root = mini_repo(tmp_path / "bench2")
    rows = [
        json.loads(x) for x in (root / "data/criteria_data/criteria.jsonl").read_text().splitlines()
    ]
    del rows[1]["criterions"]["insight"][0]["criterion"]
    write_jsonl(root / "data/criteria_data/criteria.jsonl", rows)
    with pytest.raises(InputError) as err:
        read_drb(root)
    assert err.value.line == 2 and err.value.field == "criterions.insight.0.criterion"


def test_bad_values_are_input_errors(tmp_path: Path) -> None:
    root = mini_repo(tmp_path / "bench")
    path = root / "results/fact/agent/validated.jsonl"
    rows = [json.loads(x) for x in path.read_text().splitlines()]
    rows[0]["citations_deduped"]["https://a.example/r"]["validate_res"][0]["result"] = "maybe"
    write_jsonl(path, rows)
    with pytest.raises(InputError) as err:
        read_drb(root)
    assert err.value.line == 1
    assert err.value.field == "citations_deduped.https://a.example/r.validate_res.0.result"

    root = mini_repo(tmp_path / "bench2")
    path = root / "judgements/agent.jsonl"
    row = json.loads(path.read_text())
    row["judge_details"]["readability"][0]["article_1_score"] = 11
    write_jsonl(path, [row])
    with pytest.raises(InputError) as err:
        read_drb(root)
    assert err.value.field == "judge_details.readability.0.article_1_score"

    with pytest.raises(InputError):
        read_drb(tmp_path / "nowhere")
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError) as err:
        read_drb(tmp_path / "empty")
    assert "not a DeepResearch Bench repository" in str(err.value)
