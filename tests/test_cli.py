"""The command line as click sees it: every command documented, cheap to start, and each one
run through click's CliRunner the way a shell would run it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import click
import pytest
from click.testing import CliRunner, Result

from tui.cli.group import COMMANDS, gavel

PROJECT = Path(__file__).resolve().parent.parent
HEAVY = ("textual", "numpy", "scipy", "pydantic", "httpx", "sqlite_utils")
"""What starting the command line must not cost: the app, statistics, models, HTTP."""


def run(*args: str | Path) -> Result:
    return CliRunner().invoke(gavel, [str(a) for a in args])


def commands(
    group: click.Group, path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], click.Command]]:
    ctx = click.Context(group)
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        assert command is not None, name
        yield (*path, name), command
        if isinstance(command, click.Group):
            yield from commands(command, (*path, name))


# -- help -----------------------------------------------------------------------------------------


def test_every_command_and_option_has_help() -> None:
    missing = []
    for path, command in [((), gavel), *commands(gavel)]:
        where = " ".join(("gavel", *path))
        if not (command.help or "").strip():
            missing.append(f"{where}: no help text")
        for param in command.params:
            if isinstance(param, click.Option | click.Argument) and not (param.help or "").strip():
                missing.append(f"{where}: {param.human_readable_name} has no help")
    assert missing == []
    assert all(line.strip() for _, line in COMMANDS.values())


def test_every_help_page_shows_every_option_and_argument() -> None:
    for path, command in commands(gavel):
        result = run(*path, "--help")
        assert result.exit_code == 0, (path, result.output)
        assert result.output.startswith(f"Usage: gavel {' '.join(path)} "), path
        ctx = click.Context(command, info_name=path[-1])
        for param in command.params:
            name = (
                param.opts[-1]
                if isinstance(param, click.Option)
                else param.make_metavar(ctx).strip("[].").split(".")[0]
            )
            assert name in result.output, (path, name)


def test_the_command_list_comes_without_importing_any_command() -> None:
    result = run("--help")
    assert result.exit_code == 0
    for name, (_, line) in COMMANDS.items():
        assert name in result.output
        assert line.split()[0] in result.output
    assert "examples:" in result.output


# -- start-up cost --------------------------------------------------------------------------------


def _loaded_after(code: str) -> set[str]:
    """Modules a fresh interpreter holds after running ``code``."""
    script = code + "\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))\n"
    out = subprocess.run(
        [sys.executable, "-c", script], cwd=PROJECT, capture_output=True, text=True, check=True
    )
    return set(json.loads(out.stdout.strip().splitlines()[-1]))


def _heavy(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if m.split(".")[0] in HEAVY)


def test_importing_the_entry_point_and_asking_for_help_loads_no_app_numpy_or_scoring() -> None:
    after_import = _loaded_after("import tui.cli")
    after_help = _loaded_after(
        "from click.testing import CliRunner\n"
        "from tui.cli.group import gavel\n"
        "result = CliRunner().invoke(gavel, ['--help'])\n"
        "assert result.exit_code == 0, result.output\n"
    )
    for modules in (after_import, after_help):
        assert _heavy(modules) == []
        assert sorted(m for m in modules if m.split(".")[0] in ("reviewer", "store")) == []
        assert not any(m.startswith(("tui.app", "tui.screens", "tui.widgets")) for m in modules)


def test_a_decision_from_the_command_line_loads_neither_the_app_nor_numpy(sample_db: Path) -> None:
    modules = _loaded_after(
        "from tui.cli import main\n"
        f"assert main(['decide', '1', '0', '--db', {str(sample_db)!r}, '--rationale', 'r',"
        " '--reviewer', 'ana']) == 0\n"
        f"assert main(['scores', '--db', {str(sample_db)!r}, '--format', 'json']) == 0\n"
    )
    assert not any(m.split(".")[0] in ("textual", "numpy", "scipy", "httpx") for m in modules)
    assert "tui.app" not in modules


def test_python_dash_m_runs_the_command_line() -> None:
    """The workstation's re-judge starts ``python -m tui.cli``."""
    out = subprocess.run(
        [sys.executable, "-m", "tui.cli", "reasons"],
        cwd=PROJECT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert out.returncode == 0 and "misread-rubric" in out.stdout


def test_shell_completion_answers_instead_of_opening_the_workstation() -> None:
    env = {
        **os.environ,
        "_GAVEL_COMPLETE": "bash_complete",
        "COMP_WORDS": "gavel sc",
        "COMP_CWORD": "1",
    }
    out = subprocess.run(
        [sys.executable, "-c", "from tui.cli import main; main()"],
        cwd=PROJECT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert out.returncode == 0 and out.stdout.split() == ["plain,schema", "plain,scores"]


# -- the database option --------------------------------------------------------------------------


def test_db_is_accepted_before_or_after_the_subcommand(sample_db: Path, tmp_path: Path) -> None:
    before = run("--db", sample_db, "scores", "--format", "json")
    after = run("scores", "--format", "json", "--db", sample_db)
    assert before.exit_code == after.exit_code == 0
    assert json.loads(before.stdout) == json.loads(after.stdout) != []
    # Given in both places, the subcommand's own wins.
    assert run("--db", tmp_path / "empty.db", "scores", "--db", sample_db).exit_code == 0
    assert run("decide", "1", "0", "--rationale", "r", "--db", sample_db).exit_code == 0
    logs = [
        run(*args)
        for args in (
            ("--db", sample_db, "log", "export"),
            ("log", "--db", sample_db, "export"),
            ("log", "export", "--db", sample_db),
        )
    ]
    assert [r.exit_code for r in logs] == [0, 0, 0]
    assert logs[0].stdout.count("\n") == 1 and logs[0].stdout == logs[1].stdout == logs[2].stdout


def test_reviewer_is_accepted_before_or_after_the_subcommand(sample_db: Path) -> None:
    assert (
        run(
            "--reviewer", "ana", "decide", "1", "0", "--db", sample_db, "--rationale", "r"
        ).exit_code
        == 0
    )
    undone = run("undo", "--db", sample_db, "--reviewer", "ana", "--format", "json")
    assert undone.exit_code == 0 and json.loads(undone.stdout)["action"] == "undo"
    assert run("undo", "--db", sample_db, "--reviewer", "ben").stdout == "nothing to undo\n"


# -- each command ---------------------------------------------------------------------------------


def test_listing_commands(sample_db: Path) -> None:
    document = json.loads(run("schema").stdout)
    assert "Judgment" in document["$defs"]
    assert "misread-rubric" in run("reasons").stdout
    keys = run("keys", "--format", "json")
    assert keys.exit_code == 0 and any(
        k["id"] == "verdict.correct" for k in json.loads(keys.stdout)
    )
    options = json.loads(run("options", "--db", sample_db, "--format", "json").stdout)
    assert any(o["option"] == "v2_without_groups" for o in options)
    verdicts = run("verdicts", "--db", sample_db, "--kind", "ins", "--format", "csv")
    assert verdicts.stdout.startswith("id,report,kind,subject,judge_value,value,decided,scale")
    scores = run("scores", "--db", sample_db, "--per", "report", "--framework", "cascade")
    assert scores.exit_code == 0 and "judge → adjudicated" in scores.stdout
    assert "rebuilt" in run("rebuild", "--db", sample_db).stdout


def test_decisions_print_what_they_did_to_the_scores(sample_db: Path) -> None:
    base = ("--db", sample_db, "--reviewer", "ana")
    decided = run("decide", "1", "0", "--rationale", "wrong", "--reason", "other", *base)
    assert decided.exit_code == 0
    assert "recorded override on judgment 1 = 0" in decided.stdout
    assert "report scores (adjudicated)" in decided.stdout
    confirmed = json.loads(run("confirm", "2", *base, "--format", "json").stdout)
    assert confirmed["action"] == "confirm" and confirmed["scores"]
    rated = run("rate", "t01-kestrel", "4", *base)
    assert "on report t01-kestrel = 4" in rated.stdout
    assert run("undo", *base).exit_code == 0
    assert run("redo", *base).exit_code == 0
    assert run("redo", *base).exit_code == 1
    unknown = run("decide", "999999", "0", "--rationale", "r", *base)
    assert unknown.exit_code == 2 and "no judgment with id 999999" in unknown.stderr


def test_import_and_demo(tmp_path: Path) -> None:
    db = tmp_path / "fresh.db"
    assert run("demo", "--db", db, "--quiet").stdout == ""
    shown = run("demo", "--db", db)
    assert "already present" in shown.stdout and f"gavel review --db {db}" in shown.stdout
    sample = PROJECT / "sample_data" / "dailyreport"
    again = run("import", sample, "--db", db)
    assert again.exit_code == 0 and "nothing to do" in again.stdout
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"type": "suite", "id": 3}\n', encoding="utf-8")
    failed = run("import", broken, "--db", db)
    assert failed.exit_code == 2
    assert "bad input" in failed.stderr and "nothing was imported." in failed.stderr
    unknown = run("import", sample, "--db", db, "--format", "nonsense")
    assert unknown.exit_code == 2 and "'nonsense' is not one of 'native'" in unknown.stderr


def test_agreement_needs_a_decision(sample_db: Path) -> None:
    empty = run("agreement", "--db", sample_db, "--resamples", "20")
    assert empty.exit_code == 1 and "no human decisions" in empty.stderr
    assert run("decide", "1", "0", "--rationale", "r", "--db", sample_db).exit_code == 0
    shown = run("agreement", "--db", sample_db, "--resamples", "20")
    assert shown.exit_code == 0 and "Judge vs human" in shown.stdout
    data = json.loads(
        run("agreement", "--db", sample_db, "--resamples", "20", "--format", "json").stdout
    )
    assert data["human_decisions"] == 1


def test_logs_merge_conflicts_and_exports(sample_db: Path, tmp_path: Path) -> None:
    other = tmp_path / "other.db"
    other.write_bytes(sample_db.read_bytes())
    assert (
        run(
            "decide", "1", "0", "--rationale", "ana says 0", "--reviewer", "ana", "--db", sample_db
        ).exit_code
        == 0
    )
    assert (
        run(
            "decide", "1", "1", "--rationale", "ben says 1", "--reviewer", "ben", "--db", other
        ).exit_code
        == 0
    )
    log = tmp_path / "ben.jsonl"
    exported = run("log", "export", "--db", other, "-o", log)
    assert exported.exit_code == 0 and "wrote 1 events" in exported.stderr
    merged = run("merge", log, "--db", sample_db)
    assert "1 added" in merged.stdout and "conflicts now: 1" in merged.stdout
    found = json.loads(run("conflicts", "--db", sample_db, "--format", "json").stdout)
    assert [c["judgment_id"] for c in found] == [1]
    settled = run("adjudicate", "1", "0", "--rationale", "ana is right", "--db", sample_db)
    assert settled.exit_code == 0 and "recorded adjudicate" in settled.stdout
    assert run("conflicts", "--db", sample_db).stdout == "no conflicts\n"
    target = tmp_path / "scores.csv"
    assert (
        run("export", "scores", "--format", "csv", "-o", target, "--db", sample_db).exit_code == 0
    )
    assert target.read_text(encoding="utf-8").startswith("scope,")


def test_judge_runs_and_a_dry_run(sample_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    listed = run("runs", "--db", sample_db, "--format", "json")
    assert listed.exit_code == 0 and json.loads(listed.stdout)
    unknown = run("runs", "activate", "nope", "--db", sample_db)
    assert unknown.exit_code == 2 and "no judge run 'nope'" in unknown.stderr
    monkeypatch.delenv("GAVEL_MODEL", raising=False)
    unnamed = run("judge", "--db", sample_db, "--dry-run")
    assert unnamed.exit_code == 2 and "name the model" in unnamed.stderr
    plan = run(
        "judge",
        "--db",
        sample_db,
        "--model",
        "m",
        "--base-url",
        "http://127.0.0.1:9/v1",
        "--sources",
        "stored",
        "--report",
        "t01-kestrel",
        "--dry-run",
    )
    assert plan.exit_code == 0 and "nothing was sent." in plan.stdout
    monkeypatch.setenv("GAVEL_MODEL", "from-env")
    plan = run(
        "judge",
        "--db",
        sample_db,
        "--base-url",
        "http://127.0.0.1:9/v1",
        "--sources",
        "stored",
        "--report",
        "t01-kestrel",
        "--dry-run",
    )
    assert "model from-env" in plan.stdout
    nothing = run("fetch", "--db", sample_db, "--report", "t01-kestrel", "--limit", "0")
    assert nothing.exit_code == 2 and "--limit must be at least 1" in nothing.stderr


def test_review_opens_the_workstation_and_builds_the_sample_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tui.launch

    opened: list[tuple[Path, str, bool]] = []
    monkeypatch.setattr(
        tui.launch,
        "run_app",
        lambda path, config, prewarm: opened.append((path, config.reviewer, prewarm)) or 0,
    )
    db = tmp_path / "first.db"
    first = run("--db", db, "--reviewer", "ana")
    assert first.exit_code == 0 and "first run: building" in first.stdout
    assert run("review", "--db", db, "--reviewer", "ben").stdout == ""
    assert opened == [(db, "ana", True), (db, "ben", True)]  # a terminal prepares R


def test_usage_errors_exit_2(sample_db: Path) -> None:
    assert run("nonsense").exit_code == 2
    assert run("scores", "--per", "nobody", "--db", sample_db).exit_code == 2
    assert run("decide", "1", "0", "--db", sample_db).exit_code == 2  # --rationale missing
    assert run("compare", "A", "--db", sample_db).exit_code == 2


def test_verdicts_table_shows_four_digits_and_csv_keeps_every_one(sample_db: Path) -> None:
    """A stored RACE-like value reads 0.3929 in the table; machines get the stored digits."""
    import sqlite3

    conn = sqlite3.connect(sample_db)
    jid = conn.execute("SELECT id FROM judgment WHERE kind = 'dr3_insight' LIMIT 1").fetchone()[0]
    conn.execute("UPDATE judgment SET value = '0.39290240811153354' WHERE id = ?", (jid,))
    conn.commit()
    conn.close()
    table = run("verdicts", "--db", sample_db, "--kind", "dr3_insight")
    assert table.exit_code == 0, table.output
    assert "0.3929 " in table.stdout and "0.39290240811153354" not in table.stdout
    csv_out = run("verdicts", "--db", sample_db, "--kind", "dr3_insight", "--format", "csv")
    assert "0.39290240811153354" in csv_out.stdout
