"""``gavel decide --from`` takes a subject's portable target as well as a judgment id, so a plan
exported with ``gavel plan export`` can be reviewed from a script or another tool."""

from __future__ import annotations

import csv
import io
import json
import sqlite3
from pathlib import Path

from click.testing import CliRunner, Result

from tui.cli.group import gavel


def run(*args: str | Path) -> Result:
    return CliRunner().invoke(gavel, [str(a) for a in args], env={"GAVEL_REVIEWER": "ana"})


def in_force(db: Path, target: str) -> tuple[int, str]:
    """(id, judge value) of the verdict in force on a subject."""
    conn = sqlite3.connect(db)
    row = conn.execute(
        "SELECT j.id, j.value FROM judgment j JOIN subject s ON s.id = j.subject_id "
        "WHERE s.target = ? AND j.current = 1",
        (target,),
    ).fetchone()
    conn.close()
    return int(row[0]), str(row[1])


def decided(db: Path) -> dict[int, str]:
    conn = sqlite3.connect(db)
    out = {
        int(jid): str(value)
        for jid, value in conn.execute(
            "SELECT j.id, d.value FROM decision d JOIN judgment j ON j.subject_id = d.subject_id "
            "WHERE j.current = 1"
        )
    }
    conn.close()
    return out


def plan_lines(db: Path, fmt: str) -> str:
    made = run("plan", "new", "--db", db, "--budget", "4", "--name", "p1")
    assert made.exit_code == 0, made.output
    exported = run("plan", "export", "p1", "--db", db, "--format", fmt)
    assert exported.exit_code == 0, exported.output
    return exported.stdout


def test_a_plan_export_with_values_added_is_decided_by_target(
    sample_db: Path, tmp_path: Path
) -> None:
    draws = [json.loads(line) for line in plan_lines(sample_db, "jsonl").splitlines()]
    assert draws and all(d["target"].startswith("s:") and "id" not in d for d in draws)
    source = tmp_path / "reviewed.jsonl"
    source.write_text(
        "".join(
            json.dumps({**d, "value": d["judge"], "rationale": "checked by a script"}) + "\n"
            for d in draws
        )
    )
    done = run("decide", "--from", source, "--db", sample_db)
    assert done.exit_code == 0, done.output
    made = decided(sample_db)
    for draw in draws:
        jid, judge = in_force(sample_db, draw["target"])
        assert made[jid] == judge
    after = run("plan", "export", "p1", "--db", sample_db, "--format", "jsonl").stdout
    assert all(json.loads(line)["decided"] for line in after.splitlines())


def test_a_csv_plan_export_decides_by_target(sample_db: Path, tmp_path: Path) -> None:
    rows = list(csv.DictReader(io.StringIO(plan_lines(sample_db, "csv"))))
    out = io.StringIO()
    writer = csv.DictWriter(out, [*rows[0], "value", "rationale"], lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({**row, "value": row["judge"], "rationale": "seen"})
    source = tmp_path / "reviewed.csv"
    source.write_text(out.getvalue())
    done = run("decide", "--from", source, "--db", sample_db)
    assert done.exit_code == 0, done.output
    made = decided(sample_db)
    assert {in_force(sample_db, r["target"])[0] for r in rows} <= set(made)


def test_a_bad_target_writes_nothing_and_names_the_line(sample_db: Path, tmp_path: Path) -> None:
    draws = [json.loads(line) for line in plan_lines(sample_db, "jsonl").splitlines()]
    good = draws[0]["target"]
    jid, judge = in_force(sample_db, good)
    source = tmp_path / "bad.jsonl"
    source.write_text(
        json.dumps({"target": good, "value": judge, "rationale": "ok"})
        + "\n"
        + json.dumps({"target": "s:nowhere/r/claim/k=c1", "value": "correct", "rationale": "x"})
        + "\n"
        + json.dumps({"target": good, "id": jid + 1, "value": judge, "rationale": "x"})
        + "\n"
        + json.dumps({"target": "t04-juniper", "value": judge, "rationale": "x"})
        + "\n"
        + json.dumps({"value": judge, "rationale": "x", "stratum": "all"})
        + "\n"
        + json.dumps({"target": good, "value": judge, "rationale": "x", "colour": "red"})
        + "\n"
    )
    done = run("decide", "--from", source, "--db", sample_db)
    assert done.exit_code == 2
    err = done.stderr
    assert "5 bad lines" in err
    assert ":2: field 'target': no subject 's:nowhere/r/claim/k=c1'" in err
    assert f":3: field 'target': names judgment {jid}, but the line's id is {jid + 1}" in err
    assert ":4: field 'target': not a subject target" in err
    assert ":5: field 'id': missing (give id or target)" in err
    assert ":6: field 'colour': unknown field" in err
    assert decided(sample_db) == {}


def test_id_and_target_that_agree_are_one_decision(sample_db: Path, tmp_path: Path) -> None:
    target = json.loads(plan_lines(sample_db, "jsonl").splitlines()[0])["target"]
    jid, judge = in_force(sample_db, target)
    source = tmp_path / "both.jsonl"
    source.write_text(
        json.dumps({"id": jid, "target": target, "value": judge, "rationale": "x"}) + "\n"
    )
    done = run("decide", "--from", source, "--db", sample_db)
    assert done.exit_code == 0, done.output
    assert decided(sample_db) == {jid: judge}
