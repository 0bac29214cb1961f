"""The user's configuration file (TOML): reviewer name, review rules, key bindings.

Example ``~/.config/gavel/config.toml``::

    reviewer = "ana"
    require_rationale = true      # overrides need a rationale before they are stored
    blind = false                 # hide the judge's verdict until you decide

    [keys]                        # binding id = key(s); see `gavel keys`
    "verdict.correct" = "c"
    "judgment.next_undecided" = "]"
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from reviewer.errors import ConfigError
from tui.paths import config_path, default_reviewer


@dataclass(slots=True)
class Config:
    reviewer: str
    require_rationale: bool = False
    blind: bool = False
    keys: dict[str, str] = field(default_factory=dict)
    path: Path | None = None


def load_config(path: Path | None = None, reviewer: str | None = None) -> Config:
    """Read the config file if it exists; a malformed file is an error naming the problem."""
    file = path or config_path()
    data: dict[str, object] = {}
    if file.is_file():
        try:
            data = tomllib.loads(file.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise ConfigError(f"{file}: {exc}") from exc
    known = {"reviewer", "require_rationale", "blind", "keys"}
    unknown = sorted(set(data) - known)
    if unknown:
        raise ConfigError(f"{file}: unknown setting(s) {', '.join(unknown)}")
    keys = data.get("keys", {})
    if not isinstance(keys, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in keys.items()
    ):
        raise ConfigError(f"{file}: [keys] maps binding ids to key names (strings)")
    name = reviewer or data.get("reviewer") or default_reviewer()
    if not isinstance(name, str) or not name.strip():
        raise ConfigError(f"{file}: reviewer must be a non-empty string")
    return Config(
        reviewer=name.strip(),
        require_rationale=bool(data.get("require_rationale", False)),
        blind=bool(data.get("blind", False)),
        keys=dict(keys),
        path=file if file.is_file() else None,
    )
