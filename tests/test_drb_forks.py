"""DeepResearch Bench forks: results named differently from their report files are matched by a
stated rule or ``--system-map``, or refused naming both names (never scored on placeholder
reports while the real ones get nothing); and a fork's RACE results without the repository tree
(one system's ``raw_results.jsonl``, or its per-criterion verdicts in either layout) import."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from reviewer.errors import InputError
from reviewer.formats.checks import check_bundle
from reviewer.frameworks.deepresearch_bench.format import read_drb
from tui.cli import main

SYSTEM = "gpt5-tickr-0917"
FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture
def tickr(anchors: Path, tmp_path: Path) -> Path:
    """The tickr fork, copied so that its results can be renamed."""
    root = tmp_path / "tickr"
    shutil.copytree(anchors / "deep_research_bench_tickr", root)
    return root


def rename_results(root: Path, name: str) -> Path:
    race = root / "results" / "race"
    (race / SYSTEM).rename(race / name)
    return race / name


def summary(path: Path) -> dict[str, float]:
    return {
        key.strip(): float(value)
        for key, _, value in (line.partition(":") for line in path.read_text().splitlines())
    }


def stored_means(db: Path, system: str) -> dict[str, float | None]:
    conn = sqlite3.connect(db)
    rows = conn.execute(
        "SELECT s.metric, s.value FROM score s JOIN system y ON s.scope = 'system:' || y.id "
        "WHERE y.ext_id = ? AND s.framework = 'race' AND s.variant = 'judge' "
        "AND s.metric LIKE 'stored_%'",
        (system,),
    ).fetchall()
    conn.close()
    return dict(rows)


def test_a_result_name_holding_every_part_of_a_report_file_name_is_its_system(
    tickr: Path,
) -> None:
    folder = rename_results(tickr, "gpt5-5.0-0917-tickr")
    bundle = read_drb(tickr)
    check_bundle(bundle)
    assert {s.id for s in bundle.systems} == {SYSTEM, "reference"}
    assert not [r.id for r in bundle.reports if "placeholder" in r.metadata]
    stored = [j for j in bundle.judgments if j.kind == "race_stored"]
    assert len(stored) == 50 and {j.report.split(":")[0] for j in stored} == {SYSTEM}
    assert f"RACE results 'gpt5-5.0-0917-tickr' taken as system {SYSTEM}" in (
        bundle.suite.description or ""
    )
    assert (folder / "raw_results.jsonl").is_file()


def test_a_result_name_matching_no_report_file_is_refused_naming_both(
    tickr: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rename_results(tickr, "claude-opus-3.1-0929-tickr")
    with pytest.raises(InputError) as caught:
        read_drb(tickr)
    message = str(caught.value)
    assert "'claude-opus-3.1-0929-tickr' has no report file of that name" in message
    assert f"{SYSTEM}.jsonl have no RACE results" in message
    assert "--system-map claude-opus-3.1-0929-tickr=SYSTEM" in message
    db = tmp_path / "refused.db"
    assert main(["import", str(tickr), "--format", "drb", "--db", str(db)]) == 2
    assert "claude-opus-3.1-0929-tickr" in capsys.readouterr().err


def test_the_system_map_says_whose_results_they_are(
    tickr: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = rename_results(tickr, "claude-opus-3.1-0929-tickr")
    db = tmp_path / "mapped.db"
    args = ["import", str(tickr), "--format", "drb", "--db", str(db)]
    assert main([*args, "--system-map", f"claude-opus-3.1-0929-tickr={SYSTEM}"]) == 0
    expected = summary(folder / "race_result.txt")
    assert round(stored_means(db, SYSTEM)["stored_overall"] or 0.0, 4) == expected["Overall Score"]
    conn = sqlite3.connect(db)
    systems = {s for (s,) in conn.execute("SELECT ext_id FROM system")}
    placeholders = conn.execute(
        "SELECT count(*) FROM report WHERE json_extract(metadata, '$.placeholder') IS NOT NULL"
    ).fetchone()[0]
    conn.close()
    assert systems == {SYSTEM, "reference"} and placeholders == 0
    # Mapping a name to itself keeps it a system of its own, with placeholder reports.
    own = tmp_path / "own.db"
    mapped = "claude-opus-3.1-0929-tickr=claude-opus-3.1-0929-tickr"
    assert main([*args[:-1], str(own), "--system-map", mapped]) == 0
    assert stored_means(own, "claude-opus-3.1-0929-tickr")["stored_overall"] is not None
    capsys.readouterr()
    # A map naming no results folder or judgements file is refused.
    typo = [*args[:-1], str(tmp_path / "typo.db"), "--system-map", "nobody=x"]
    assert main([*typo, "--system-map", f"claude-opus-3.1-0929-tickr={SYSTEM}"]) == 2
    assert "no results folder or judgements file is named 'nobody'" in capsys.readouterr().err
    # A format that takes no system map refuses one.
    native = ["import", str(tickr), "--db", str(tmp_path / "n.db"), "--system-map", "a=b"]
    assert main(native) == 2
    assert "takes no system map" in capsys.readouterr().err


def test_a_result_name_matching_several_report_files_is_refused(tickr: Path) -> None:
    raw = tickr / "data" / "test_data" / "raw_data"
    shutil.copy(raw / f"{SYSTEM}.jsonl", raw / "tickr-0917-v2.jsonl")
    rename_results(tickr, "gpt5-tickr-0917-v2")
    shutil.rmtree(tickr / "judgements")
    with pytest.raises(InputError, match=r"could be of gpt5-tickr-0917 or tickr-0917-v2"):
        read_drb(tickr)


def test_one_systems_raw_results_alone_import_with_their_stored_means(
    tickr: Path, tmp_path: Path
) -> None:
    alone = tmp_path / "claude-opus-3.1-0929-tickr"
    alone.mkdir()
    source = tickr / "results" / "race" / SYSTEM
    shutil.copy(source / "raw_results.jsonl", alone / "raw_results.jsonl")
    expected = summary(source / "race_result.txt")
    for given in (alone / "raw_results.jsonl", alone):
        bundle = read_drb(given)
        check_bundle(bundle)
        assert [s.id for s in bundle.systems] == ["claude-opus-3.1-0929-tickr"]
        assert len(bundle.tasks) == 10 and len(bundle.reports) == 10
    db = tmp_path / "alone.db"
    assert (
        main(["import", str(alone / "raw_results.jsonl"), "--format", "drb", "--db", str(db)]) == 0
    )
    means = stored_means(db, "claude-opus-3.1-0929-tickr")
    assert round(means["stored_overall"] or 0.0, 4) == expected["Overall Score"]
    assert round(means["stored_insight"] or 0.0, 4) == expected["Insight"]


def test_per_criterion_verdicts_alone_import_with_a_rubric_from_the_judge(
    tickr: Path, tmp_path: Path
) -> None:
    path = tickr / "judgements" / f"{SYSTEM}.jsonl"
    bundle = read_drb(path)
    check_bundle(bundle)
    first = json.loads(path.read_text().splitlines()[0])
    task = next(t for t in bundle.tasks if t.prompt == first["prompt"])
    texts = {(c.dimension, c.text) for c in task.criteria}
    named = {
        (d, i["criterion"].strip()) for d, items in first["judge_details"].items() for i in items
    }
    assert texts == named and all(c.weight is None for c in task.criteria)
    targets = [j for j in bundle.judgments if j.kind == "race_target"]
    assert targets and all(j.value is not None or j.error for j in targets)
    db = tmp_path / "judged.db"
    assert main(["import", str(path), "--format", "drb", "--db", str(db)]) == 0
    conn = sqlite3.connect(db)
    overall = conn.execute(
        "SELECT s.value FROM score s JOIN system y ON s.scope = 'system:' || y.id "
        "WHERE y.ext_id = ? AND s.framework = 'race' AND s.variant = 'judge' "
        "AND s.metric = 'overall'",
        (SYSTEM,),
    ).fetchone()[0]
    conn.close()
    assert overall is not None and 0.0 < overall <= 1.0


def test_two_article_verdicts_alone_give_target_and_reference_scores(tmp_path: Path) -> None:
    path = tmp_path / "agent-x.jsonl"
    item = {"criterion": "Covers the causes", "analysis": "a", "article_1_score": 7}
    lines = [
        {
            "id": 1,
            "prompt": "Why did the bridge close?",
            "judge_details": {
                "comprehensiveness": [{**item, "article_2_score": 5}],
                "insight": [{**item, "criterion": "Explains why", "article_2_score": 6}],
            },
        }
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    bundle = read_drb(path)
    check_bundle(bundle)
    assert [s.id for s in bundle.systems] == ["agent-x"]
    kinds = sorted((j.kind, j.value) for j in bundle.judgments)
    assert kinds == [
        ("race_reference", 5),
        ("race_reference", 6),
        ("race_target", 7),
        ("race_target", 7),
    ]


def test_a_folder_with_neither_data_nor_results_names_what_would_do(tmp_path: Path) -> None:
    with pytest.raises(InputError) as caught:
        read_drb(tmp_path)
    message = str(caught.value)
    assert "data/prompt_data" in message and "raw_results.jsonl" in message
    assert "judgements" in message
    stray = tmp_path / "notes.jsonl"
    stray.write_text('{"id": 1, "text": "x"}\n')
    with pytest.raises(InputError, match=r"neither a raw_results\.jsonl"):
        read_drb(stray)


def test_the_mini_repository_reads_as_before() -> None:
    bundle = read_drb(FIXTURES / "drb_mini")
    assert not [r.id for r in bundle.reports if "placeholder" in r.metadata]
