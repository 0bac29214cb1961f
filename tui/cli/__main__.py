"""``python -m tui.cli``: the same as the ``gavel`` script (the workstation's re-judge runs it
this way, with the interpreter it runs under)."""

from tui.cli import main

raise SystemExit(main())
