"""Subcommands about the workstation itself: open it (``review``, also plain ``gavel``) and
list its key bindings (``keys``). The only place the command line imports the app."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from tui.cli.options import db_option, format_option, open_db, reviewer_option
from tui.cli.output import emit
from tui.cli.terminal import unguard_terminal


def open_workstation(db: Path | None, reviewer: str | None, *, served: bool = False) -> int:
    """Open the workstation; on first run build the database from the sample data. A
    ``served`` one (a browser session of ``gavel serve``) imports nothing ahead of need."""
    from store.db.connection import default_path
    from store.imports.from_path import build_demo
    from store.scores.cache import ensure_scores
    from tui.config import load_config
    from tui.launch import run_app
    from tui.paths import sample_data_dir

    path = db or default_path()
    conn = open_db(path)
    if conn.execute("SELECT count(*) FROM report").fetchone()[0] == 0:
        print(f"first run: building {path} from the bundled sample data …")
        build_demo(conn, sample_data_dir())
    ensure_scores(conn)
    conn.close()
    config = load_config(reviewer=reviewer)
    unguard_terminal()  # the workstation draws with control sequences of its own
    return run_app(path, config, prewarm=not served)


@click.command(
    help="Open the review workstation (the default): the queue of reports, each "
    "report beside its judgments, agreement and proposals screens. Keys worth "
    "knowing first: ? lists every key; S orders the queue by suspicion (verdicts the "
    "flags point to) and w shows only reports with suspicious (◆) verdicts, ! those "
    "flagged (⚑) for discussion; in a report ] goes to the next "
    "undecided verdict, v opens the whole cited source page, A adjudicates, q goes "
    "back. On first run the database is built from the bundled sample data."
)
@db_option
@reviewer_option
def review(db: Path | None, reviewer: str | None) -> int:
    return open_workstation(db, reviewer)


@click.command(
    help="List every key binding by id, with the key in force and its default; "
    "remap them in the config file's [keys] table. Exits 1 when the config's "
    "bindings collide or name unknown ids."
)
@format_option()
def keys(fmt: str) -> int:
    from tui.config import load_config
    from tui.keymap import KEYS, display_key, effective_keys, normalise_keymap, problems

    config = load_config()
    current = effective_keys(normalise_keymap(config.keys))
    rows = [
        {
            "id": k.id,
            "key": display_key(current[k.id]),
            "default": display_key(k.key),
            "screen": k.context,
            "does": k.description,
        }
        for k in KEYS
    ]
    emit(rows, ["id", "key", "default", "screen", "does"], fmt)
    found = problems(config.keys)
    for problem in found:
        print(f"gavel: key bindings: {problem}", file=sys.stderr)
    return 1 if found else 0
