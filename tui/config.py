"""The user's configuration file (TOML): reviewer name, review rules, key bindings, review hub.

Example ``~/.config/gavel/config.toml``::

    reviewer = "ana"
    require_rationale = true      # overrides need a rationale (the default; false: not needed)
    blind = false                 # hide the judge's verdict until you decide

    hub = "postgresql://ana@hub.example/gavel"   # sync with a review hub (`gavel hub`)
    sync_every = 5                # seconds between background syncs

    [keys]                        # binding id = key(s); see `gavel keys`
    "verdict.correct" = "c"
    "judgment.next_undecided" = "]"

A pydantic model, strict: a misspelt setting is an error naming it, and ``blind = "no"`` is an
error rather than a string that Python would read as true.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    ValidationError,
    field_validator,
)

from reviewer.errors import ConfigError
from reviewer.textsafety import hidden_characters
from tui.paths import config_path, default_reviewer


class Config(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, validate_assignment=True)

    reviewer: str = Field(min_length=1)
    require_rationale: StrictBool = True
    """An override needs a rationale, in the workstation and in ``gavel decide`` alike
    (:func:`reviewer.actions.rationale_required`); a confirmation never does."""
    blind: StrictBool = False
    keys: dict[str, str] = Field(default_factory=dict)
    hub: str | None = None
    """A review hub's PostgreSQL URL: the workstation syncs with it in the background (a
    password is better kept in ``~/.pgpass`` or ``$PGPASSWORD`` than here)."""
    sync_every: float = Field(default=5.0, ge=1, le=3600)
    """Seconds between background syncs with the hub."""
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

    @field_validator("hub")
    @classmethod
    def _a_postgres_url(cls, value: str | None) -> str | None:
        if value is None:
            return None
        value = value.strip()
        if not value.startswith(("postgresql://", "postgres://")):
            raise ValueError("must be a postgresql:// URL")
        return value


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
        raise ConfigError(f"{_blamed(exc, file, reviewer, data)}: {_describe(exc)}") from None


def _blamed(exc: ValidationError, file: Path, reviewer: str | None, data: dict[str, object]) -> str:
    """Where the bad setting came from: a reviewer name given on the command line or taken
    from the environment is not the config file's fault."""
    if not all(error["loc"][:1] == ("reviewer",) for error in exc.errors()):
        return str(file)
    if reviewer:
        return "--reviewer"
    if "reviewer" not in data:
        return "the default reviewer name ($GAVEL_REVIEWER, else the login name)"
    return str(file)


def _describe(exc: ValidationError) -> str:
    problems = []
    for error in exc.errors():
        where = ".".join(str(part) for part in error["loc"]) or "file"
        if error["type"] == "extra_forbidden":
            problems.append(f"unknown setting {where!r}")
        elif where == "hub":  # a URL may carry a password: never echo it
            problems.append(f"{where}: {error['msg'].lower()}")
        else:
            problems.append(f"{where}: {error['msg'].lower()} (got {error['input']!r})")
    return "; ".join(problems)
