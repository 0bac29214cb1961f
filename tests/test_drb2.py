"""DeepResearch Bench II: the aggregation script's figures by hand, the options, the release's
tasks file as published, the importer's errors, and a hand-made run round-tripped through the
store to the script's per-model figures.

Expected values are computed by hand from the definitions in ``aggregate_scores.py`` (the
share of a dimension's scored items that are 1; total and blocked rate over all scored items;
a model's figure the mean over its tasks), with the arithmetic in the comments.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import time
from itertools import count
from pathlib import Path
from typing import Any

import pytest

from reviewer.errors import InputError
from reviewer.formats.checks import check_bundle
from reviewer.framework import ReportScores, resolve_options
from reviewer.frameworks.deepresearch_bench_2.format import read
from reviewer.frameworks.deepresearch_bench_2.scoring import FRAMEWORK as DRB2
from reviewer.frameworks.deepresearch_bench_2.scoring import ITEM_SCALE, KIND
from reviewer.inputs import CriterionIn, ReportInput, VerdictIn
from tests.conftest import anchors_root

PROJECT = Path(__file__).resolve().parent.parent
EXCERPT = PROJECT / "tests" / "fixtures" / "drb2_release"
MIRROR = Path("/work/.mirror/imlrz+DeepResearch-Bench-II/repo")
RELEASE_COMMIT = "9d365ed"


def opts(**overrides: str) -> dict[str, str]:
    return resolve_options(DRB2, overrides)


class Build:
    """A ReportInput item by item: ``judge`` the judge's value, ``human`` an adjudicated one
    (None: no verdict at all when ``judged`` is False)."""

    def __init__(self) -> None:
        self.ids = count(1)
        self.report = ReportInput(1, 1, 1)

    def item(
        self,
        dimension: str,
        judge: str | None,
        human: str | None = None,
        text: str | None = None,
        judged: bool = True,
    ) -> int:
        cid = next(self.ids)
        self.report.criteria.append(CriterionIn(cid, None, dimension, None, text or f"i{cid}"))
        if judged:
            effective = judge if human is None else human
            error = "failed" if judge is None else None
            self.report.verdicts.append(
                VerdictIn(cid, 1, KIND, None, cid, None, None, None, judge, effective, error)
            )
        return cid

    def scores(self, variant: str = "judge", **overrides: str) -> ReportScores:
        return DRB2.score_report(self.report, variant, opts(**overrides))  # type: ignore[arg-type]


def test_one_report_by_hand() -> None:
    b = Build()
    for value in ("1", "1", "0", "-1"):
        b.item("info_recall", value)
    b.item("analysis", "1")
    b.item("analysis", "0")
    b.item("presentation", "1", human="0")
    # recall 2 of 4; analysis 1 of 2; presentation 1 of 1; total 4 of 7 (not the mean of the
    # three shares, 0.667); blocked 1 of 7.
    assert b.scores() == pytest.approx(
        {
            "info_recall": 0.5,
            "analysis": 0.5,
            "presentation": 1.0,
            "total": 4 / 7,
            "blocked_rate": 1 / 7,
        }
    )
    # adjudicated: the presentation item overruled to 0: presentation 0 of 1, total 3 of 7.
    adjudicated = b.scores("adjudicated")
    assert adjudicated["presentation"] == 0.0
    assert adjudicated["total"] == pytest.approx(3 / 7)
    assert adjudicated["blocked_rate"] == pytest.approx(1 / 7)


def test_a_dimension_without_items_has_no_share_and_leaves_the_total() -> None:
    b = Build()
    b.item("info_recall", "1")
    b.item("info_recall", "-1")
    scores = b.scores()
    assert scores["analysis"] is None and scores["presentation"] is None
    assert scores["total"] == 0.5 and scores["blocked_rate"] == 0.5


def test_a_report_without_drb2_verdicts_has_no_scores() -> None:
    b = Build()
    b.item("info_recall", None, judged=False)
    assert b.scores() == {}


def test_repeated_rubric_text_counts_once_as_the_script_keys_by_text() -> None:
    b = Build()
    b.item("analysis", "1", text="same")
    b.item("analysis", "0", text="same")
    b.item("analysis", "0", text="other")
    b.item("info_recall", "1", text="same")  # the same text in another dimension is its own
    # once: analysis {same: 1, other: 0} = 1 of 2; each: 1 of 3. Total once 2 of 3, each 2 of 4.
    assert b.scores()["analysis"] == 0.5
    assert b.scores()["total"] == pytest.approx(2 / 3)
    assert b.scores(repeated_items="each")["analysis"] == pytest.approx(1 / 3)
    assert b.scores(repeated_items="each")["total"] == 0.5


def test_items_without_a_score_leave_the_denominator_or_count_as_not_satisfied() -> None:
    b = Build()
    b.item("info_recall", "1")
    b.item("info_recall", None)  # the judge failed on it
    b.item("info_recall", None, judged=False)  # never judged
    # exclude (the script skips scores that are not numbers): 1 of 1; zero: 1 of 3.
    assert b.scores()["info_recall"] == 1.0
    assert b.scores(unscored="zero")["info_recall"] == pytest.approx(1 / 3)
    assert b.scores(unscored="zero")["blocked_rate"] == 0.0


def test_a_report_whose_every_verdict_failed_has_no_figures() -> None:
    b = Build()
    b.item("info_recall", None)
    assert set(b.scores().values()) == {None}


def test_system_figure_is_the_mean_over_reports_that_have_it() -> None:
    reports: list[ReportScores] = [
        {"total": 0.5, "info_recall": 0.5, "analysis": None, "blocked_rate": 0.0},
        {"total": 0.25, "info_recall": 1.0, "analysis": 0.2, "blocked_rate": 0.5},
        {},
    ]
    out = DRB2.aggregate(reports, opts())
    assert out["total"].value == pytest.approx(0.375) and out["total"].n == 2
    assert out["analysis"].value == pytest.approx(0.2) and out["analysis"].n == 1
    assert out["presentation"].value is None and out["presentation"].n == 0
    assert out["blocked_rate"].value == pytest.approx(0.25)


def test_column_aggregation_equals_the_report_aggregation() -> None:
    from reviewer.framework import columns_of

    reports: list[ReportScores] = [
        {"total": 0.5, "info_recall": 0.5, "analysis": None, "blocked_rate": 0.0},
        {"total": 0.25, "info_recall": 1.0, "analysis": 0.2, "presentation": 1.0},
    ]
    assert DRB2.columns is not None
    columns = columns_of(reports, DRB2.columns.metrics)
    assert DRB2.columns.aggregate(columns, 2, opts()) == DRB2.aggregate(reports, opts())


def test_scale_keys_and_values() -> None:
    assert [c.code for c in ITEM_SCALE.choices] == ["1", "0", "-1"]
    assert ITEM_SCALE.normalize(-1) == "-1" and ITEM_SCALE.normalize(1.0) == "1"
    assert ITEM_SCALE.normalize("blocked") == "-1"
    assert {c.key for c in ITEM_SCALE.choices} == {"1", "0", "x"}
    from tui.keymap import verdict_codes

    codes = verdict_codes()  # the workstation's keys reach every value of the scale
    assert codes["verdict.yes"]["drb2_item"] == "1"
    assert codes["verdict.no"]["drb2_item"] == "0"
    assert codes["verdict.incorrect"]["drb2_item"] == "-1"
    from reviewer.registry import get_framework, get_kind

    assert get_framework("drb2") is DRB2
    kind = get_kind(KIND, ["drb2"])
    assert kind is not None and kind.framework == "drb2" and kind.subject == "criterion"


def test_every_ambiguity_is_a_named_option() -> None:
    names = {o.name: o for o in DRB2.options}
    assert set(names) == {"repeated_items", "unscored"}
    assert names["repeated_items"].default == "once" and names["unscored"].default == "exclude"


# -- the release's tasks file -------------------------------------------------------------------


def _release_tasks() -> Path | None:
    shared = anchors_root() / "deepresearch_bench_2" / "tasks_and_rubrics.jsonl"
    if shared.is_file():
        return shared
    return None


def test_the_released_tasks_file_imports_unchanged(tmp_path: Path) -> None:
    import subprocess

    path = _release_tasks()
    if path is None:
        if not (MIRROR / "HEAD").exists():
            pytest.skip(
                "the DeepResearch Bench II release is neither in the anchors "
                f"({anchors_root()}/deepresearch_bench_2) nor mirrored at {MIRROR}"
            )
        path = tmp_path / "tasks_and_rubrics.jsonl"
        blob = subprocess.run(
            ["git", "-C", str(MIRROR), "show", f"{RELEASE_COMMIT}:tasks_and_rubrics.jsonl"],
            check=True,
            capture_output=True,
        ).stdout
        path.write_bytes(blob)
    bundle = read(path)
    check_bundle(bundle)
    assert len(bundle.tasks) == 132
    dims: dict[str, int] = {}
    for task in bundle.tasks:
        for c in task.criteria:
            dims[c.dimension] = dims.get(c.dimension, 0) + 1
    assert dims == {"info_recall": 6983, "analysis": 1686, "presentation": 746}
    assert sum(dims.values()) == 9415
    languages = {t.language for t in bundle.tasks}
    assert languages == {"zh", "en"} and len({t.domain for t in bundle.tasks}) == 22
    blocked = [t for t in bundle.tasks if t.metadata["blocked"] is not None]
    assert len(blocked) == 131  # idx 124 blocks nothing
    assert all(t.metadata["blocked"]["urls"] for t in blocked)

    from store.db.connection import connect
    from store.imports.from_path import import_path

    conn = connect(tmp_path / "gavel.db")
    started = time.perf_counter()
    result = import_path(conn, path, "drb2")
    elapsed = time.perf_counter() - started
    print(f"\nreleased tasks file imported in {elapsed:.2f} s")  # figures: run with -s
    assert result.counts["tasks"] == 132
    assert conn.execute("SELECT count(*) FROM criterion").fetchone() == (9415,)
    conn.close()


def test_the_excerpt_reads_as_released() -> None:
    bundle = read(EXCERPT)
    check_bundle(bundle)
    by_id = {t.id: t for t in bundle.tasks}
    assert set(by_id) == {"idx-115", "idx-116", "idx-124"}
    t115 = by_id["idx-115"]
    assert t115.language == "zh" and t115.domain == "Religion"
    assert [c.id for c in t115.criteria][:2] == ["ir-001", "ir-002"]
    counts = {d: sum(c.dimension == d for c in t115.criteria) for d in ("info_recall",)}
    assert counts == {"info_recall": 32}
    assert t115.metadata["blocked"]["urls"] and t115.metadata["drb2_id"]
    assert t115.metadata["judge_task"] and t115.metadata["judge_task"] != t115.prompt
    assert by_id["idx-124"].metadata["blocked"] is None
    analysis = [c.text for c in by_id["idx-116"].criteria if c.dimension == "analysis"]
    assert len(analysis) - len(set(analysis)) == 6  # the release's repeated analysis items
    assert bundle.reports == [] and bundle.judgments == []


# -- a hand-made run in the repository's layout --------------------------------------------------

TASKS = [
    {
        "id": "taskA",
        "idx": 1,
        "language": "en",
        "theme": "Energy",
        "description": "tidal power",
        "prompt": "Write a report on tidal power in Kestrel Bay.",
        "content": {
            "task": "Tidal power in Kestrel Bay",
            "rubric": {
                "info_recall": [
                    "States capacity of 40 MW.",
                    "Names the 2021 start.",
                    "Gives cost.",
                ],
                "analysis": ["Weighs cost against output."],
                "presentation": ["Uses a table."],
            },
            "blocked": {
                "title": "Kestrel Bay Tidal Review",
                "authors": ["A. Quill"],
                "urls": ["https://example.org/kestrel-review"],
            },
        },
    },
    {
        "id": "taskB",
        "idx": 2,
        "language": "zh",
        "theme": "Health",
        "description": "clinics",
        "prompt": "写一份关于乡村诊所的报告。",
        "content": {
            "task": "乡村诊所",
            "rubric": {
                "info_recall": ["指出诊所数量为120家。", "指出2020年开始。"],
                "analysis": ["分析人手不足。", "分析人手不足。"],
                "presentation": [],
            },
            "blocked": None,
        },
    },
]


def _item(score: object, reason: str = "r", evidence: str = "") -> dict[str, Any]:
    return {"score": score, "reason": reason, "evidence": evidence}


def _result(scores: dict[str, dict[str, Any]]) -> dict[str, Any]:
    return {"task": "t", "scores": scores, "usage_summary": {"total_tokens": 10}}


JUDGED = [
    # alpha, task 1: recall 2 of 3 (one -1), analysis 1 of 1, presentation 0 of 1;
    # total 3 of 5 = 0.6, blocked 1 of 5 = 0.2.
    {
        "model": "alpha",
        "idx": 1,
        "result": _result(
            {
                "info_recall": {
                    "States capacity of 40 MW.": _item(1, evidence="Capacity is 40 MW."),
                    "Names the 2021 start.": _item(1, evidence="It started in 2021."),
                    "Gives cost.": _item(-1, evidence="Cost was $90m [1]."),
                },
                "analysis": {"Weighs cost against output.": _item(1, evidence="Worth it.")},
                "presentation": {"Uses a table.": _item(0)},
            }
        ),
    },
    # alpha, task 2: recall 1 of 2; analysis (the repeated text, one key) 0 of 1; no
    # presentation items; total 1 of 3, blocked 0.
    {
        "model": "alpha",
        "idx": 2,
        "result": _result(
            {
                "info_recall": {"指出诊所数量为120家。": _item(1), "指出2020年开始。": _item(0)},
                "analysis": {"分析人手不足。": _item(0)},
                "presentation": {},
            }
        ),
    },
    # beta, task 1: every batch failed: no figures for this task.
    {"model": "beta", "idx": 1, "result": {"error": "batch 1 failed after 5 retries"}},
    # beta, task 2 (as a JSON string, which the script also reads): recall 2 of 2, one score
    # that is not a number (skipped: analysis has no scored item); total 2 of 2.
    {
        "model": "beta",
        "idx": 2,
        "result": json.dumps(
            _result(
                {
                    "info_recall": {
                        "指出诊所数量为120家。": _item(1),
                        "指出2020年开始。": _item(1),
                    },
                    "analysis": {"分析人手不足。": _item("n/a")},
                }
            ),
            ensure_ascii=False,
        ),
    },
]


def write_run(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    lines = "".join(json.dumps(t, ensure_ascii=False) + "\n" for t in TASKS)
    (root / "tasks_and_rubrics.jsonl").write_text(lines, encoding="utf-8")
    for model in ("alpha", "beta"):
        folder = root / "report" / model
        folder.mkdir(parents=True)
        (folder / "idx-1.md").write_text(
            "# Tidal power\n\nCapacity is 40 MW. It started in 2021. Cost was $90m [1].\n\n"
            "Worth it.\n\n[1] Kestrel Bay Tidal Review https://example.org/kestrel-review\n",
            encoding="utf-8",
        )
    (root / "report" / "alpha" / "idx-2.txt").write_text("诊所120家。", encoding="utf-8")
    results = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in JUDGED)
    (root / "result.jsonl").write_text(results, encoding="utf-8")
    return root


def test_a_hand_made_run_round_trips_to_the_scripts_figures(
    tmp_path: Path, conn: sqlite3.Connection
) -> None:
    from store.imports.from_path import import_path
    from store.scores.cache import cached

    root = write_run(tmp_path / "run")
    result = import_path(conn, root, "drb2")
    assert result.counts["reports"] == 4  # beta's task 2 has no output file: a placeholder
    table = cached(conn)
    ids = dict(conn.execute("SELECT ext_id, id FROM report"))
    systems = dict(conn.execute("SELECT ext_id, id FROM system"))

    def report(name: str) -> dict[str, float | None]:
        return dict(table.reports.get((ids[name], "drb2", "judge"), {}))

    assert report("alpha:idx-1") == pytest.approx(
        {
            "info_recall": 2 / 3,
            "analysis": 1.0,
            "presentation": 0.0,
            "total": 0.6,
            "blocked_rate": 0.2,
        }
    )
    alpha2 = report("alpha:idx-2")
    assert alpha2["info_recall"] == 0.5 and alpha2["analysis"] == 0.0
    assert alpha2["presentation"] is None
    assert alpha2["total"] == pytest.approx(1 / 3) and alpha2["blocked_rate"] == 0.0
    failed = conn.execute(
        "SELECT count(*), count(value) FROM judgment j JOIN report r ON r.id = j.report_id "
        "WHERE r.ext_id = 'beta:idx-1'"
    ).fetchone()
    assert failed == (5, 0)  # every rubric item a verdict without a value
    assert all(v is None for v in report("beta:idx-1").values())
    beta2 = report("beta:idx-2")
    assert beta2["info_recall"] == 1.0 and beta2["analysis"] is None and beta2["total"] == 1.0
    placeholder = conn.execute(
        "SELECT metadata FROM report WHERE ext_id = 'beta:idx-2'"
    ).fetchone()[0]
    assert json.loads(placeholder) == {"placeholder": True}

    # The per-model means of aggregate_scores.py: alpha total (0.6 + 1/3) / 2; recall
    # (2/3 + 1/2) / 2; beta total 1.0 over its one task with a figure.
    def system(name: str, metric: str) -> Any:
        return table.systems[(systems[name], "drb2", "judge")][metric]

    assert system("alpha", "total")[0] == pytest.approx((0.6 + 1 / 3) / 2)
    assert system("alpha", "info_recall")[0] == pytest.approx((2 / 3 + 0.5) / 2)
    assert system("alpha", "blocked_rate")[0] == pytest.approx(0.1)
    assert tuple(system("beta", "total")) == (1.0, 1)
    assert system("beta", "analysis")[0] is None


def test_an_adjudication_moves_only_the_adjudicated_figures(
    tmp_path: Path, conn: sqlite3.Connection
) -> None:
    from store.imports.from_path import import_path
    from store.reviewlog.events import ReviewLog
    from store.scores.cache import cached, update_scores

    import_path(conn, write_run(tmp_path / "run"), "drb2")
    jid = conn.execute(
        """SELECT j.id FROM judgment j JOIN report r ON r.id = j.report_id
        JOIN criterion c ON c.id = j.criterion_id
        WHERE r.ext_id = 'alpha:idx-1' AND c.ext_id = 'ir-003'"""
    ).fetchone()[0]
    recorded = ReviewLog(conn, "ana").decide(jid, "1", "the cost comes from another page")
    update_scores(conn, [recorded.report_id or 0])
    rid = recorded.report_id
    table = cached(conn)
    judge = table.reports[(rid, "drb2", "judge")]
    adjudicated = table.reports[(rid, "drb2", "adjudicated")]
    assert judge["total"] == pytest.approx(0.6) and judge["blocked_rate"] == pytest.approx(0.2)
    # ir-003 -1 -> 1: recall 3 of 3, total 4 of 5, blocked 0.
    assert adjudicated["info_recall"] == 1.0
    assert adjudicated["total"] == pytest.approx(0.8) and adjudicated["blocked_rate"] == 0.0


def test_judge_items_keep_reason_evidence_and_failures(tmp_path: Path) -> None:
    bundle = read(write_run(tmp_path / "run"))
    check_bundle(bundle)
    by_subject = {(j.report, j.criterion): j for j in bundle.judgments}
    gives = by_subject[("alpha:idx-1", "ir-003")]
    assert gives.value == -1 and gives.evidence == "Cost was $90m [1]."
    failed = by_subject[("beta:idx-1", "pr-001")]
    assert failed.value is None and failed.error == "batch 1 failed after 5 retries"
    not_a_number = by_subject[("beta:idx-2", "an-001")]
    assert not_a_number.value is None and "not a number" in (not_a_number.error or "")
    assert ("alpha:idx-2", "an-002") not in by_subject  # the repeated text: its first item only
    assert [r.id for r in bundle.runs] == ["drb2-result"]


def _rewrite_line(path: Path, line: int, edit: Any) -> None:
    rows = path.read_text(encoding="utf-8").splitlines()
    record = json.loads(rows[line])
    edit(record)
    rows[line] = json.dumps(record, ensure_ascii=False)
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")


@pytest.mark.parametrize(
    ("file", "line", "edit", "field", "words"),
    [
        ("tasks_and_rubrics.jsonl", 1, lambda r: r.update(idx="two"), "idx", "task index"),
        ("tasks_and_rubrics.jsonl", 0, lambda r: r.update(prompt=""), "prompt", "non-empty"),
        (
            "tasks_and_rubrics.jsonl",
            0,
            lambda r: r["content"]["rubric"].update(analysis=[3]),
            "content.rubric.analysis[0]",
            "text",
        ),
        (
            "tasks_and_rubrics.jsonl",
            0,
            lambda r: r["content"]["blocked"].update(urls="x"),
            "content.blocked.urls",
            "list",
        ),
        (
            "tasks_and_rubrics.jsonl",
            1,
            lambda r: r["content"]["rubric"].update(depth=["x"]),
            "content.rubric",
            "unknown dimension",
        ),
        (
            "result.jsonl",
            0,
            lambda r: r["result"]["scores"]["info_recall"]["Gives cost."].update(score=2),
            "result.scores.info_recall.score",
            "not 1, 0 or -1",
        ),
        ("result.jsonl", 2, lambda r: r.update(result=[1]), "result", "expected an object"),
        ("result.jsonl", 1, lambda r: r.update(model=""), "model", "non-empty"),
    ],
)
def test_importer_errors_name_file_line_and_field(
    tmp_path: Path, file: str, line: int, edit: Any, field: str, words: str
) -> None:
    root = write_run(tmp_path / "run")
    _rewrite_line(root / file, line, edit)
    with pytest.raises(InputError) as err:
        read(root)
    assert (err.value.file, err.value.line) == (str(root / file), line + 1)
    assert err.value.field == field
    assert words in err.value.message


def test_importer_refuses_what_it_cannot_read(tmp_path: Path, conn: sqlite3.Connection) -> None:
    from store.imports.from_path import import_path

    root = write_run(tmp_path / "run")
    pdf = root / "report" / "beta" / "idx-2.pdf"
    pdf.write_bytes(b"%PDF-1.7")
    with pytest.raises(InputError, match="PDF model outputs are not read") as err:
        import_path(conn, root, "drb2")
    assert err.value.file == str(pdf)
    assert conn.execute("SELECT count(*) FROM suite").fetchone() == (0,)  # nothing imported
    pdf.unlink()
    (root / "report" / "beta" / "idx-1.txt").write_text("again", encoding="utf-8")
    with pytest.raises(InputError, match="a second output for idx 1"):
        read(root)
    (root / "report" / "beta" / "idx-1.txt").unlink()
    (root / "report" / "beta" / "idx-1.md").write_bytes(b"\xff\xfe bad")
    with pytest.raises(InputError, match="not UTF-8"):
        read(root)
    shutil.rmtree(root / "report")
    (root / "tasks_and_rubrics.jsonl").unlink()
    with pytest.raises(InputError, match=r"no tasks_and_rubrics\.jsonl"):
        read(root)
    with pytest.raises(InputError, match="no such file or folder"):
        read(tmp_path / "nowhere")


def test_notes_say_what_was_left_out(tmp_path: Path) -> None:
    root = write_run(tmp_path / "run")
    with (root / "result.jsonl").open("a", encoding="utf-8") as handle:
        extra = {"info_recall": {"Not a rubric item.": _item(1)}}
        handle.write(json.dumps({"model": "alpha", "idx": 1, "result": _result(extra)}) + "\n")
        handle.write(json.dumps({"model": "alpha", "idx": 9, "result": _result({})}) + "\n")
    (root / "report" / "alpha" / "notes.md").write_text("x", encoding="utf-8")
    bundle = read(root)
    notes = bundle.suite.description
    assert "matches no rubric item" in notes and "the script would count it" in notes
    assert "no task idx 9" in notes
    assert "1 repeated (model, idx) line(s), the last kept" in notes
    assert "notes.md: not named idx-<n>.<ext>" in notes


def test_format_registry_offers_drb2(tmp_path: Path) -> None:
    from reviewer.registry import format_reader, formats

    assert "drb2" in formats()
    assert format_reader("drb2")(EXCERPT, "other-id").suite.id == "other-id"
    assert format_reader("drb2")(EXCERPT / "tasks_and_rubrics.jsonl", None).tasks


# -- the bundled sample --------------------------------------------------------------------------

SAMPLE = PROJECT / "sample_data" / "drb2"
SAMPLE_LAYOUT = PROJECT / "tests" / "fixtures" / "drb2"


def test_the_sample_is_its_repository_layout_converted() -> None:
    from reviewer.formats.native import read_bundle

    sample = read_bundle(SAMPLE)
    converted = read(SAMPLE_LAYOUT, sample.suite.id)
    assert sample.tasks == converted.tasks
    assert sample.reports == converted.reports
    assert sample.judgments == converted.judgments
    assert [s.id for s in sample.systems] == [s.id for s in converted.systems]
    assert len(sample.tasks) == 3 and len(sample.reports) == 6
    assert {t.language for t in sample.tasks} == {"en", "zh"}
