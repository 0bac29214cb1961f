"""Where Gavel finds its sample data, its configuration and the benchmark anchors."""

from __future__ import annotations

import getpass
import os
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent


def sample_data_dir() -> Path:
    """``$GAVEL_SAMPLE_DATA`` or the repository's ``sample_data/``."""
    return Path(os.environ.get("GAVEL_SAMPLE_DATA") or PROJECT_ROOT / "sample_data")


def config_path() -> Path:
    """``$GAVEL_CONFIG`` or ``$XDG_CONFIG_HOME/gavel/config.toml`` (``~/.config/…``)."""
    explicit = os.environ.get("GAVEL_CONFIG")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "gavel" / "config.toml"


def default_reviewer() -> str:
    """``$GAVEL_REVIEWER``, else the login name: every event needs a reviewer identity."""
    name = os.environ.get("GAVEL_REVIEWER")
    if name:
        return name
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "reviewer"


def anchors_dir() -> Path:
    return Path(os.environ.get("GAVEL_ANCHORS") or PROJECT_ROOT.parent / "shared" / "anchors")
