"""The user's configuration file (TOML): reviewer name, review rules, key bindings.

Example ``~/.config/gavel/config.toml``::

    reviewer = "ana"
    require_rationale = true      # overrides need a rationale before they are stored
    blind = false                 # hide the judge's verdict until you decide

    [keys]                        # binding id = key(s); see `gavel keys`
    "verdict.correct" = "c"
    "judgment.next_undecided" = "]"

A pydantic model, strict: a misspelt setting is an error naming it, and ``blind = "no"`` is an
error rather than a string that Python would read as true.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, StrictBool, ValidationError, field_validator

from reviewer.errors import ConfigError
from reviewer.textsafety import hidden_characters
from tui.paths import config_path, default_reviewer


class Config(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, validate_assignment=True)

    reviewer: str = Field(min_length=1)
    require_rationale: StrictBool = False
    blind: StrictBool = False
    keys: dict[str, str] = Field(default_factory=dict)
    path: Path | None = Field(default=None, exclude=True)
    """The file the settings came from (None: defaults only)."""

    @field_validator("reviewer")
    @classmethod
    def _named(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must be a non-empty name")
        hidden = hidden_characters(value)
        if hidden:
            raise ValueError(f"has hidden or control characters ({', '.join(hidden)})")
        return value.strip()


def load_config(path: Path | None = None, reviewer: str | None = None) -> Config:
    """Read the config file if it exists; a malformed file is an error naming the problem."""
    file = path or config_path()
    data: dict[str, object] = {}
    if file.is_file():
        try:
            data = tomllib.loads(file.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise ConfigError(f"{file}: {exc}") from exc
    if "path" in data:
        raise ConfigError(f"{file}: unknown setting 'path'")
    named = reviewer or (data["reviewer"] if "reviewer" in data else default_reviewer())
    settings = {**data, "reviewer": named, "path": file if file.is_file() else None}
    try:
        return Config.model_validate(settings)
    except ValidationError as exc:
        raise ConfigError(f"{file}: {_describe(exc)}") from None


def _describe(exc: ValidationError) -> str:
    problems = []
    for error in exc.errors():
        where = ".".join(str(part) for part in error["loc"]) or "file"
        if error["type"] == "extra_forbidden":
            problems.append(f"unknown setting {where!r}")
        else:
            problems.append(f"{where}: {error['msg'].lower()} (got {error['input']!r})")
    return "; ".join(problems)
