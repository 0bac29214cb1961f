"""Real released files import unchanged: DR3-Eval's released layout with its evaluator's
outputs, LiveDRBench's Hugging Face Parquet rows, DR. Bench's notebook logs. Each importer says
what it could not map (file, line or field); a bad file is an error naming file, line and field
and imports nothing."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from reviewer.errors import InputError
from reviewer.frameworks.dr3_eval.format import read as read_dr3
from reviewer.frameworks.dr_bench.format import read as read_drbench
from reviewer.frameworks.livedrbench.format import read as read_livedrbench
from tests.fake_judges import BenchJudge
from tests.loopback import serving
from tui.cli import main

FIXTURES = Path(__file__).parent / "fixtures"


def copy(name: str, tmp_path: Path) -> Path:
    target = tmp_path / name
    shutil.copytree(FIXTURES / name, target)
    return target


def table_counts(db: Path) -> dict[str, int]:
    conn = sqlite3.connect(db)
    out = {
        t: conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
        for t in ("suite", "task", "report", "judgment", "source")
    }
    conn.close()
    return out


def test_dr3_evaluator_outputs_import_unchanged() -> None:
    bundle = read_dr3(FIXTURES / "dr3_release")
    verdicts = {(j.kind, j.criterion or j.claim): j.value for j in bundle.judgments}
    # The newest eval_information_recall_<timestamp>.json (details.long_context… path) wins
    # over combined_result.json and the older file.
    assert verdicts[("dr3_insight", "sc-1")] == 1.0 and verdicts[("dr3_insight", "sc-2")] == 0.5
    assert verdicts[("dr3_insight", "uf-1")] == 1.0
    assert verdicts[("dr3_depth", "dq")] == 7.0  # overall_quality: 0.7 × 10
    assert [verdicts[("dr3_checklist", f"if-{n}")] for n in (1, 2, 3)] == [True, True, False]
    assert verdicts[("dr3_support", "c3")] == "unsupported"
    assert verdicts[("dr3_citation", "page-1")] == "cited"
    # Pages {title, url, page_body}: the class comes from useful_search / noise_search.
    classes = {s.title: s.metadata["class"] for s in bundle.sources}
    assert classes["Veldhaven shore power evaluation 2025"] == "supportive"
    assert classes["Top 10 things to do in Veldhaven"] == "noise"
    assert classes["Veldhaven shore power evaluation 2018"] == "unlabelled"
    # Checklist rows {requirement, category} without ids are numbered as the evaluator does.
    task = bundle.tasks[0]
    assert [c.id for c in task.criteria if c.dimension == "checklist"] == ["if-1", "if-2", "if-3"]
    notes = bundle.suite.description
    assert "query.jsonl: line 1: files: not mapped" in notes
    assert "gold_insights_from_long_context.json: extracted_at: not mapped" in notes
    assert "combined_result.json: metrics.tool_usage.: metric 'tool_usage' is not one" in notes


def test_dr3_a_bad_evaluator_file_names_file_and_field_and_imports_nothing(tmp_path: Path) -> None:
    root = copy("dr3_release", tmp_path)
    path = root / "results" / "atlas-dr" / "001" / "combined_result.json"
    data = json.loads(path.read_text())
    data["metrics"]["factual_accuracy"]["details"]["extraction"]["claims"] = "many"
    path.write_text(json.dumps(data))
    with pytest.raises(InputError) as caught:
        read_dr3(root)
    assert "combined_result.json" in str(caught.value)
    assert "metrics.factual_accuracy.details.extraction.claims" in str(caught.value)
    broken = root / "results" / "atlas-dr" / "001" / "eval_overall_quality_20260101_110000.json"
    broken.write_text('{"metric_name": "overall_quality",\n "details": {oops}')
    db = tmp_path / "g.db"
    assert main(["import", str(root), "--format", "dr3", "--db", str(db)]) == 2
    assert table_counts(db)["suite"] == 0


def test_dr3_gathered_form_accepts_released_checklist_rows_and_pages(tmp_path: Path) -> None:
    root = copy("dr3", tmp_path)
    lines = (root / "tasks.jsonl").read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    for item in first["checklist"]:
        item.pop("id")
    for page in first["sandbox"]:
        if page["class"] != "supportive":  # a released page: no class
            page.pop("class")
    lines[0] = json.dumps(first, ensure_ascii=False)
    (root / "tasks.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    results = [json.loads(line) for line in (root / "results.jsonl").read_text().splitlines()]
    for result in results:
        if str(result["task"]) == str(first.get("task", first.get("id"))) and result.get(
            "format_compliance"
        ):
            for n, row in enumerate(result["format_compliance"]["results"], 1):
                row["id"] = n
    (root / "results.jsonl").write_text(
        "\n".join(json.dumps(r, ensure_ascii=False) for r in results) + "\n", encoding="utf-8"
    )
    bundle = read_dr3(root)
    assert any(s.metadata.get("class") == "unlabelled" for s in bundle.sources)


def test_livedrbench_parquet_rows_import_and_gavel_judges_the_predictions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bundle = read_livedrbench(FIXTURES / "livedrbench_parquet")
    assert [t.id for t in bundle.tasks] == ["901", "902", "903"]
    assert bundle.tasks[1].criteria[0].metadata["claim"]["device"] == "µ-recorder"
    assert not bundle.judgments  # the reference evaluator writes no judge records
    db = tmp_path / "g.db"
    assert (
        main(
            [
                "import",
                str(FIXTURES / "livedrbench_parquet"),
                "--format",
                "livedrbench",
                "--db",
                str(db),
            ]
        )
        == 0
    )
    monkeypatch.setenv("GAVEL_API_KEY", "sk-not-secret")
    with serving(BenchJudge()) as srv:
        assert (
            main(
                [
                    "judge",
                    "--db",
                    str(db),
                    "--framework",
                    "claims_f1",
                    "--model",
                    "fake",
                    "--base-url",
                    srv.url + "/v1",
                    "--run-id",
                    "mine",
                ]
            )
            == 0
        )
    assert main(["runs", "activate", "mine", "--yes", "--db", str(db)]) == 0
    conn = sqlite3.connect(db)
    f1 = conn.execute(
        """SELECT s.value FROM score s JOIN system y ON s.scope = 'system:' || y.id
           WHERE y.ext_id = 'kite' AND s.framework = 'claims_f1' AND s.metric = 'f1'
           AND s.variant = 'judge'"""
    ).fetchone()
    conn.close()
    assert f1 is not None and 0 < f1[0] < 1  # scored at last: some claims match, some not


def test_livedrbench_a_bad_parquet_file_is_named(tmp_path: Path) -> None:
    root = copy("livedrbench_parquet", tmp_path)
    (root / "test-00000-of-00001.parquet").write_bytes(b"PAR1 not really")
    with pytest.raises(InputError) as caught:
        read_livedrbench(root)
    assert "test-00000-of-00001.parquet" in str(caught.value)
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(
        pa.table({"key": ["1"], "question": ["q"]}), root / "test-00000-of-00001.parquet"
    )
    with pytest.raises(InputError) as missing:
        read_livedrbench(root)
    assert "category" in str(missing.value)


def test_drbench_notebook_logs_import_unchanged() -> None:
    bundle = read_drbench(FIXTURES / "drbench_notebook")
    assert [r.id for r in bundle.reports] == ["07901-agent-x", "05902-agent-x"]
    report = bundle.reports[0]
    assert report.metadata["token_usage"] == {"total": 1020, "input": 120}
    assert report.metadata["notebook_eval"]["qsr_sum"] == 4
    assert [r.url for r in report.references or []] == [
        "https://www.rfc-editor.org/rfc/rfc9000",
        "https://datatracker.ietf.org/wg/quic/meetings/",
    ]
    relevances = [
        j.value
        for j in bundle.judgments
        if j.kind == "drb_relevance" and j.report == "07901-agent-x"
    ]
    assert relevances == [5, 4, 3, 4, 2, 1, 1, 1, 1, 1]
    assert "Eval_agent-x.jsonl:1: qsr_sum: a sum only" in bundle.suite.description


def test_drbench_a_bad_notebook_line_names_file_line_and_field(tmp_path: Path) -> None:
    root = copy("drbench_notebook", tmp_path)
    path = root / "Eval_agent-x.jsonl"
    lines = path.read_text().splitlines()
    row = json.loads(lines[1])
    row["keywords_fak_relevance"][2] = 7
    lines[1] = json.dumps(row)
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError) as caught:
        read_drbench(root)
    text = str(caught.value)
    assert "Eval_agent-x.jsonl" in text and "2" in text and "keywords_fak_relevance.2" in text
    db = tmp_path / "g.db"
    assert main(["import", str(root), "--format", "drbench", "--db", str(db)]) == 2
    assert table_counts(db)["suite"] == 0


@pytest.mark.parametrize(
    "bad", ['{"metrics": {"x": NaN}}', '{"metrics": 1e400}', "[" * 100_000 + "]" * 100_000]
)
def test_dr3_evaluator_files_refuse_nan_infinity_and_deep_nesting(tmp_path: Path, bad: str) -> None:
    root = copy("dr3_release", tmp_path)
    (root / "results" / "atlas-dr" / "001" / "combined_result.json").write_text(bad)
    with pytest.raises(InputError) as caught:
        read_dr3(root)
    assert "combined_result.json" in str(caught.value)
