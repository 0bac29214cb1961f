"""The config file: strict types and unknown keys are errors that name the setting."""

from __future__ import annotations

from pathlib import Path

import pytest

from reviewer.errors import ConfigError
from tui.config import load_config


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_full_file_is_read(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        'reviewer = "ana"\nrequire_rationale = true\nblind = false\n'
        '[keys]\n"verdict.correct" = "w"\n',
    )
    config = load_config(path)
    assert (config.reviewer, config.require_rationale, config.blind) == ("ana", True, False)
    assert config.keys == {"verdict.correct": "w"} and config.path == path


def test_no_file_gives_defaults_and_the_reviewer_option_wins(tmp_path: Path) -> None:
    config = load_config(tmp_path / "absent.toml", reviewer="  ben ")
    assert (config.reviewer, config.require_rationale, config.blind, config.keys, config.path) == (
        "ben",
        True,  # an override needs a rationale unless the file says otherwise
        False,
        {},
        None,
    )


@pytest.mark.parametrize(
    "text, named",
    [
        ('require_rationale = "no"\n', "require_rationale"),  # a string is not a boolean
        ("blind = 1\n", "blind"),
        ('reviewr = "ana"\n', "reviewr"),  # a typo is named
        ('[keys]\n"verdict.correct" = 5\n', "keys.verdict.correct"),
        ('keys = "c"\n', "keys"),
        ('reviewer = ""\n', "reviewer"),
        ('path = "/etc"\n', "path"),
    ],
)
def test_bad_settings_are_errors_naming_the_key(tmp_path: Path, text: str, named: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as err:
        load_config(path, reviewer=None if "reviewer" in text else "ana")
    assert named in str(err.value) and str(path) in str(err.value)


def test_malformed_toml_names_the_file(tmp_path: Path) -> None:
    path = write(tmp_path, "reviewer = \n")
    with pytest.raises(ConfigError, match=r"config\.toml"):
        load_config(path)


def test_the_hub_settings_are_checked_and_a_password_is_never_echoed(tmp_path: Path) -> None:
    path = write(
        tmp_path, 'reviewer = "ana"\nhub = "postgresql://ana@hub.example/gavel"\nsync_every = 2.5\n'
    )
    config = load_config(path)
    assert (config.hub, config.sync_every) == ("postgresql://ana@hub.example/gavel", 2.5)
    assert load_config(tmp_path / "absent.toml", reviewer="ana").hub is None
    for text, named in (
        ('sync_every = "5"\n', "sync_every"),
        ("sync_every = 0\n", "sync_every"),
        ('hub = "mysql://ana:hunter2@db/x"\n', "hub"),
    ):
        with pytest.raises(ConfigError) as err:
            load_config(write(tmp_path, text), reviewer="ana")
        assert named in str(err.value) and "hunter2" not in str(err.value)
