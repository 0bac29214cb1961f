"""The bench's workstation figures come from a child process driving the real app: when the
app changes under it (a setting that refuses the bench's keys, a start-up that never ends),
the bench must fail here, not only when someone runs ``gavel bench``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from reviewer.formats.native import iter_records
from reviewer.frameworks.dailyreport.synthetic import SyntheticSpec, write_synthetic
from store.db.connection import connect
from store.imports.loader import import_records

ROOT = Path(__file__).resolve().parents[1]


def test_the_ui_child_measures_start_up_switches_and_keypresses(tmp_path: Path) -> None:
    bundle = tmp_path / "bundle"
    write_synthetic(
        bundle, SyntheticSpec(tasks=6, systems=3, long_report_words=4_000, long_report_claims=40)
    )
    conn = connect(tmp_path / "bench.db")
    suite, records = iter_records(bundle)
    import_records(conn, suite, records, "bench")
    conn.close()
    out = subprocess.run(
        [
            sys.executable,
            str(ROOT / "tui" / "bench" / "ui_child.py"),
            "gavel",
            str(tmp_path / "bench.db"),
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=300,
    )
    assert out.returncode == 0, out.stderr[-2_000:]
    figures = json.loads(out.stdout.strip().splitlines()[-1])
    assert len(figures["keypress_all"]) == 12 and len(figures["switch_all"]) == 10
    assert all(0 < t < 60 for t in [*figures["keypress_all"], *figures["switch_all"]])
