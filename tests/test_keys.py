"""The signing key: refused when other users may read or write it (as ssh does), a clear line
when it cannot be made or read, made by the first write that signs and never by reading or
opening the workstation; a bad --reviewer blames the option, not the config file."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from reviewer.errors import ConfigError
from store.db.connection import connect
from store.reviewlog.events import ReviewLog
from store.reviewlog.identity import existing_identity, load_identity
from tests.tui_helpers import ready
from tui.app import GavelApp
from tui.cli import main
from tui.config import Config


@pytest.fixture
def key_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "keys" / "identity.key"
    monkeypatch.setenv("GAVEL_IDENTITY", str(path))
    return path


def claim(db: Path) -> str:
    conn = sqlite3.connect(db)
    try:
        return str(
            conn.execute("SELECT id FROM judgment WHERE kind = 'claim' LIMIT 1").fetchone()[0]
        )
    finally:
        conn.close()


@pytest.mark.parametrize("mode", [0o644, 0o666, 0o640, 0o604])
def test_a_key_other_users_may_read_or_write_is_refused_as_ssh_does(
    key_file: Path, mode: int, sample_db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    load_identity("ana")  # made private
    assert key_file.stat().st_mode & 0o777 == 0o600
    key_file.chmod(mode)
    with pytest.raises(ConfigError, match=rf"mode {mode:04o}.*chmod 600"):
        load_identity("ana")
    assert (
        main(["--db", str(sample_db), "decide", claim(sample_db), "incorrect", "--rationale", "x"])
        == 2
    )
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "could sign as you" in err[0] and str(key_file) in err[0]
    key_file.chmod(0o600)
    assert load_identity("ana").name == "ana"


def test_a_key_path_that_cannot_be_made_or_read_is_one_line(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    sample_db: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("GAVEL_IDENTITY", str(blocker / "identity.key"))
    with pytest.raises(ConfigError, match=r"cannot create the signing key.*GAVEL_IDENTITY"):
        load_identity("ana")
    assert (
        main(["--db", str(sample_db), "decide", claim(sample_db), "incorrect", "--rationale", "x"])
        == 2
    )
    assert "cannot create the signing key" in capsys.readouterr().err
    folder = tmp_path / "a-folder"
    folder.mkdir()
    monkeypatch.setenv("GAVEL_IDENTITY", str(folder))
    with pytest.raises(ConfigError, match="not a regular file"):
        load_identity("ana")


def test_the_key_is_made_by_the_first_signed_write_not_by_reading(
    key_file: Path, sample_db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    conn = connect(sample_db)
    log = ReviewLog(conn, "ana")
    assert log.key is None and log.undo() is None and not key_file.exists()
    for argv in (["scores"], ["conflicts"], ["identity", "show"]):
        assert main(["--db", str(sample_db), *argv]) == 0
    assert "no signing key yet" in capsys.readouterr().out
    assert not key_file.exists() and existing_identity("ana") is None
    log.decide(int(claim(sample_db)), "incorrect", "the first decision")
    assert key_file.exists() and key_file.stat().st_mode & 0o777 == 0o600
    assert log.key == load_identity("ana").public_key
    conn.close()


async def test_opening_the_workstation_makes_no_key(key_file: Path, sample_db: Path) -> None:
    app = GavelApp(sample_db, Config(reviewer="ana"))
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        await pilot.pause(0.3)  # the writer thread is up
        assert app.failures == []
    assert not key_file.exists()


def test_a_bad_reviewer_name_blames_the_option_not_the_config_file(
    sample_db: Path,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    config = tmp_path / "config.toml"
    config.write_text('reviewer = "ana"\n', encoding="utf-8")
    for present in (False, True):
        monkeypatch.setenv("GAVEL_CONFIG", str(config if present else tmp_path / "none.toml"))
        argv = ["--db", str(sample_db), "decide", claim(sample_db), "incorrect", "--rationale", "x"]
        assert main([*argv, "--reviewer", "bad\x1bname"]) == 2
        err = capsys.readouterr().err
        assert err.startswith("gavel: --reviewer: reviewer:"), err
        assert "config.toml" not in err and "none.toml" not in err
    monkeypatch.setenv("GAVEL_CONFIG", str(tmp_path / "none.toml"))
    monkeypatch.setenv("GAVEL_REVIEWER", "bad\u200bname")
    assert (
        main(["--db", str(sample_db), "decide", claim(sample_db), "incorrect", "--rationale", "x"])
        == 2
    )
    assert "the default reviewer name ($GAVEL_REVIEWER" in capsys.readouterr().err
    assert os.environ["GAVEL_REVIEWER"]
