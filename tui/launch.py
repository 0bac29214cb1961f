"""Starting the workstation from the command line."""

from __future__ import annotations

import sys
from pathlib import Path

from tui.config import Config
from tui.keymap import problems


def run_app(db_path: Path, config: Config, *, prewarm: bool = True) -> int:
    from tui.app import GavelApp

    for problem in problems(config.keys):
        print(f"gavel: key bindings: {problem}", file=sys.stderr)
    app = GavelApp(db_path, config, prewarm=prewarm, settle_heap=True)
    app.run()
    return 0
