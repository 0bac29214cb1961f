"""The command line's own words: errors say what happened, tables never cut an identifier."""

from __future__ import annotations

from pathlib import Path

import pytest

from tui.cli import main


def test_a_bad_option_value_changes_nothing_and_says_so(
    sample_db: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = main(["options", "--db", str(sample_db), "cascade.v2_without_groups=bogus"])
    err = capsys.readouterr().err
    assert code == 2
    assert "must be one of" in err and "nothing was changed" in err
    assert "imported" not in err


def test_scores_for_a_framework_without_data_says_which_filter_matched_nothing(
    sample_db: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["scores", "--db", str(sample_db), "--framework", "fact"]) == 1
    err = capsys.readouterr().err
    assert "no scores match --framework fact" in err and "import a run first" not in err


def test_rating_names_the_report_by_its_id(
    sample_db: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["rate", "--db", str(sample_db), "t01-kestrel", "3"]) == 0
    out = capsys.readouterr().out
    assert "on report t01-kestrel = 3" in out


def test_piped_tables_keep_whole_identifiers(
    sample_db: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)
    assert main(["options", "--db", str(sample_db)]) == 0
    out = capsys.readouterr().out  # captured: not a terminal
    for name in ("v2_without_groups", "missing_dimension", "partial_on_binary"):
        assert name in out
    assert "…" not in out
