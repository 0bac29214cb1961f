"""The ``gavel`` command line: one click group (:mod:`tui.cli.group`) whose subcommands live in
the modules beside it, grouped by what they work on, and are imported only when run.

The command line renders data the services in ``store/`` return (and Rich tables from
:mod:`tui.render`); only ``gavel review`` (and plain ``gavel``) imports the workstation.
"""

from __future__ import annotations

from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``gavel`` with ``argv`` (default: the process's arguments); the exit code."""
    from tui.cli.group import gavel

    code: int = gavel.main(argv, prog_name="gavel", standalone_mode=False)
    return code
