"""``gavel plan list`` names a plan's design as the reviewer chose it: an active plan and a
report plan are kept in the schema as weighted and stratified designs, which would mislead."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner, Result

from tui.cli.group import gavel


def run(*args: str | Path) -> Result:
    return CliRunner().invoke(gavel, [str(a) for a in args], env={"GAVEL_REVIEWER": "ana"})


def test_plan_list_names_each_design_as_asked(sample_db: Path) -> None:
    asked = {"p-uniform": "uniform", "p-active": "active", "p-reports": "reports"}
    for name, design in asked.items():
        made = run(
            "plan",
            "new",
            "--db",
            sample_db,
            "--design",
            design,
            "--budget",
            "4",
            "--name",
            name,
            "--framework",
            "cascade",
        )
        assert made.exit_code == 0, made.output
    listed = run("plan", "list", "--db", sample_db, "--format", "json")
    assert listed.exit_code == 0, listed.output
    shown = {row["plan"]: row["design"] for row in json.loads(listed.stdout)}
    assert shown == asked
