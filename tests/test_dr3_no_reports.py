"""A DR3-Eval import that finds no report is an error naming where it looked (and where the
reports are, when they lie elsewhere under results/), never an empty suite with exit 0."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from reviewer.errors import InputError
from reviewer.frameworks.dr3_eval.format import read as read_dr3
from tui.cli import main

FIXTURES = Path(__file__).parent / "fixtures"


def release(tmp_path: Path) -> Path:
    root = tmp_path / "dr3_release"
    shutil.copytree(FIXTURES / "dr3_release", root)
    return root


def test_reports_one_level_too_deep_are_an_error_naming_both_places(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = release(tmp_path)
    nested = root / "results" / "results_32k"
    nested.mkdir()
    (root / "results" / "atlas-dr").rename(nested / "gpt4.1")
    with pytest.raises(InputError) as caught:
        read_dr3(root)
    message = str(caught.value)
    assert "looked for results/<system>/<case>/final_report.md" in message
    assert "results/results_32k/gpt4.1/001/final_report.md" in message
    db = tmp_path / "g.db"
    assert main(["import", str(root), "--format", "dr3", "--db", str(db)]) == 2
    assert "results/results_32k/gpt4.1/001/final_report.md" in capsys.readouterr().err
    if db.exists():
        conn = sqlite3.connect(db)
        assert (
            conn.execute("SELECT count(*) FROM sqlite_master WHERE name = 'report'").fetchone()[0]
            == 0
            or conn.execute("SELECT count(*) FROM report").fetchone()[0] == 0
        )
        conn.close()


def test_no_results_folder_and_no_report_anywhere_say_so(tmp_path: Path) -> None:
    root = release(tmp_path)
    shutil.rmtree(root / "results")
    with pytest.raises(InputError, match="there is no results/ folder"):
        read_dr3(root)
    (root / "results" / "atlas-dr" / "001").mkdir(parents=True)
    with pytest.raises(InputError, match="there is none anywhere under results/"):
        read_dr3(root)


def test_the_released_layout_still_imports(tmp_path: Path) -> None:
    assert len(read_dr3(release(tmp_path)).reports) == 1
