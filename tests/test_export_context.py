"""The command line and the exports carry what the workstation shows beside a verdict: the
suspicion flags (◆ reasons) and what the judge saw; and export files get one mode."""

from __future__ import annotations

import csv
import io
import json
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from tui.cli.group import gavel


def run(*args: str | Path) -> Result:
    return CliRunner().invoke(gavel, [str(a) for a in args], env={"GAVEL_REVIEWER": "ana"})


def flags_of(db: Path) -> dict[int, list[str]]:
    """Judgment id -> its subject's stored flag reasons, strongest first."""
    conn = sqlite3.connect(db)
    out: dict[int, list[str]] = {}
    for jid, reason in conn.execute(
        "SELECT j.id, x.reason FROM judgment j JOIN suspicion x ON x.subject_id = j.subject_id "
        "WHERE j.current = 1 ORDER BY j.id, x.weight DESC, x.rule"
    ):
        out.setdefault(jid, []).append(reason)
    conn.close()
    return out


# -- item 10: `gavel verdicts` and the exports carry the flags ------------------------------------


def test_verdicts_json_carries_every_flag_reason_and_suspicious_keeps_only_them(
    sample_db: Path,
) -> None:
    flags = flags_of(sample_db)
    assert flags, "the sample data has suspicion flags"
    every = json.loads(run("verdicts", "--db", sample_db, "--format", "json").stdout)
    by_id = {r["id"]: [f["reason"] for f in r["suspicion"]] for r in every}
    assert {i: r for i, r in by_id.items() if r} == flags
    assert all(f["rule"] and f["weight"] > 0 for r in every for f in r["suspicion"])
    only = json.loads(run("verdicts", "--db", sample_db, "--suspicious", "--format", "json").stdout)
    assert [r["id"] for r in only] == sorted(flags)


def test_verdicts_table_and_csv_show_the_reasons(sample_db: Path) -> None:
    flags = flags_of(sample_db)
    jid, reasons = next(iter(flags.items()))
    wide = CliRunner().invoke(
        gavel,
        ["verdicts", "--db", str(sample_db), "--suspicious"],
        env={"COLUMNS": "1000"},
    )
    assert wide.exit_code == 0, wide.output
    assert "suspicion" in wide.stdout and f"◆ {reasons[0]}" in wide.stdout
    rows = list(
        csv.DictReader(
            io.StringIO(
                run("verdicts", "--db", sample_db, "--suspicious", "--format", "csv").stdout
            )
        )
    )
    assert {int(r["id"]): r["suspicion"] for r in rows}[jid] == " | ".join(reasons)


def test_suspicious_with_undecided_drops_what_a_reviewer_decided(sample_db: Path) -> None:
    jid = next(iter(flags_of(sample_db)))
    confirmed = run("confirm", jid, "--db", sample_db)
    assert confirmed.exit_code == 0, confirmed.output
    left = json.loads(
        run("verdicts", "--db", sample_db, "--suspicious", "--undecided", "--format", "json").stdout
    )
    assert jid not in [r["id"] for r in left] and left


def test_the_verdicts_export_carries_the_flags_and_loads_in_pandas(
    sample_db: Path, tmp_path: Path
) -> None:
    import pandas as pd

    flags = flags_of(sample_db)
    target = tmp_path / "verdicts.parquet"
    done = run("export", "verdicts", "--db", sample_db, "--format", "parquet", "-o", target)
    assert done.exit_code == 0, done.output
    frame = pd.read_parquet(target)
    flagged = {
        int(row.judgment): [f["reason"] for f in row.suspicion]
        for row in frame.itertuples()
        if row.current and len(row.suspicion)
    }
    assert flagged == flags
    jsonl = tmp_path / "verdicts.jsonl"
    assert run("export", "verdicts", "--db", sample_db, "-o", jsonl).exit_code == 0
    first = next(
        r for r in map(json.loads, jsonl.read_text().splitlines()) if r["judgment"] == min(flags)
    )
    assert [f["reason"] for f in first["suspicion"]] == flags[min(flags)]


# -- item 12: the gold export holds what the judge saw --------------------------------------------


def judgment(db: Path, sql: str) -> int:
    conn = sqlite3.connect(db)
    (jid,) = conn.execute(sql).fetchone()
    conn.close()
    return int(jid)


@pytest.fixture
def decided(sample_db: Path) -> Path:
    """A claim overruled, a claim↔reference pair judged unknown, a rubric verdict confirmed."""
    claim = judgment(
        sample_db,
        "SELECT j.id FROM judgment j JOIN claim k ON k.id = j.claim_id "
        "WHERE j.kind = 'claim' AND j.evidence != '' AND k.span_start IS NOT NULL "
        "AND j.current = 1 ORDER BY j.id LIMIT 1",
    )
    pair = judgment(
        sample_db,
        "SELECT id FROM judgment WHERE kind = 'consistency' AND value = 'support' "
        "AND current = 1 ORDER BY id LIMIT 1",
    )
    rubric = judgment(
        sample_db,
        "SELECT j.id FROM judgment j JOIN criterion c ON c.id = j.criterion_id "
        "WHERE j.kind = 'ins' AND c.explanation != '' AND j.current = 1 ORDER BY j.id LIMIT 1",
    )
    conn = sqlite3.connect(sample_db)
    value = conn.execute("SELECT value FROM judgment WHERE id = ?", (claim,)).fetchone()[0]
    conn.close()
    other = "incorrect" if value == "correct" else "correct"
    for jid, verdict in ((claim, other), (pair, "unknown")):
        done = run("decide", jid, verdict, "--db", sample_db, "--rationale", "checked")
        assert done.exit_code == 0, done.output
    assert run("confirm", rubric, "--db", sample_db).exit_code == 0
    return sample_db


def gold_rows(db: Path, tmp_path: Path) -> Iterator[dict[str, object]]:
    target = tmp_path / "gold.jsonl"
    done = run("export", "gold", "--db", db, "-o", target)
    assert done.exit_code == 0, done.output
    yield from map(json.loads, target.read_text().splitlines())


def test_gold_rows_carry_what_the_judge_saw(decided: Path, tmp_path: Path) -> None:
    conn = sqlite3.connect(decided)
    rows = {r["kind"]: r for r in gold_rows(decided, tmp_path)}
    claim = rows["claim"]
    evidence, explanation, markdown, start, end = conn.execute(
        "SELECT j.evidence, j.explanation, r.markdown, k.span_start, k.span_end "
        "FROM judgment j JOIN claim k ON k.id = j.claim_id JOIN report r ON r.id = j.report_id "
        "JOIN subject s ON s.id = j.subject_id WHERE s.target = ? AND j.current = 1",
        (claim["target"],),
    ).fetchone()
    assert claim["judge_evidence"] == evidence and claim["judge_explanation"] == explanation
    assert " ".join(evidence.split()) in " ".join(str(claim["cited_passage"]).split())
    assert str(claim["cited_url"]).startswith("http")
    sentence = str(claim["claim_sentence"])
    assert markdown[start:end].strip() in sentence and len(sentence) < len(markdown)
    assert claim["dimension"] == "fac" and rows["consistency"]["dimension"] == "fac"
    rubric = rows["ins"]
    (levels,) = conn.execute(
        "SELECT c.explanation FROM criterion c JOIN judgment j ON j.criterion_id = c.id "
        "JOIN subject s ON s.id = j.subject_id WHERE s.target = ?",
        (rubric["target"],),
    ).fetchone()
    assert rubric["rubric_levels"] == levels and rubric["judge_explanation"]
    assert rubric["claim_sentence"] == "" and rubric["cited_passage"] == ""
    conn.close()


def test_unknown_keeps_its_label_and_has_no_number(decided: Path, tmp_path: Path) -> None:
    import pandas as pd

    pair = next(r for r in gold_rows(decided, tmp_path) if r["kind"] == "consistency")
    assert (pair["human_value"], pair["human_value_number"]) == ("unknown", None)
    assert pair["judge_value_number"] == 1.0
    target = tmp_path / "gold.parquet"
    assert (
        run("export", "gold", "--db", decided, "--format", "parquet", "-o", target).exit_code == 0
    )
    frame = pd.read_parquet(target)
    row = frame[frame["kind"] == "consistency"].iloc[0]
    assert row["human_value"] == "unknown" and pd.isna(row["human_value_number"])
    assert frame["human_value_number"].dtype == "float64"
    assert set(frame["dimension"]) == {"fac", "ins"}
    assert all(isinstance(text, str) for text in frame["cited_passage"])


@pytest.mark.parametrize("umask", [0o022, 0o027])
def test_every_export_file_gets_the_mode_the_umask_gives(
    decided: Path, tmp_path: Path, umask: int
) -> None:
    before = os.umask(umask)
    try:
        made = []
        for kind in ("gold", "verdicts", "scores", "gt-expansions"):
            for fmt in ("jsonl", "csv", "parquet"):
                target = tmp_path / f"{kind}.{fmt}"
                done = run("export", kind, "--db", decided, "--format", fmt, "-o", target)
                assert done.exit_code == 0, done.output
                made.append(target)
        folder = tmp_path / "dataset"
        assert run("export", "--db", decided, "--to-hub-dataset", folder).exit_code == 0
        made += [p for p in folder.rglob("*") if p.is_file()]
        log = tmp_path / "log.jsonl"
        assert run("log", "export", "--db", decided, "-o", log).exit_code == 0
        made.append(log)
    finally:
        os.umask(before)
    modes = {p.name: p.stat().st_mode & 0o777 for p in made}
    assert set(modes.values()) == {0o666 & ~umask}, modes


def test_a_claims_sentence_is_the_one_holding_it() -> None:
    from store.exports.context import SENTENCE_REACH, sentence_around

    text = "First one. The rate is 3.10% since May. Last one!\n\n- a list item"
    start = text.index("3.10%")
    assert sentence_around(text, start, start + 5) == "The rate is 3.10% since May."
    assert sentence_around(text, text.index("a list"), len(text)) == "- a list item"
    assert sentence_around(text, None, None) == ""
    long = "x " * SENTENCE_REACH * 2 + "claim here. Next."
    at = long.index("claim")
    found = sentence_around(long, at, at + 5)
    assert found.endswith("claim here.") and len(found) <= SENTENCE_REACH + 20
