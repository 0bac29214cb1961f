"""The noise bands the queue shows beside each system's score, kept between sessions.

Every workstation reads these when its queue opens, so this module stays light: computing the
bands (:func:`store.runs.compare.system_bands`) scores every run of a suite and brings the
judge pipeline's imports with it, and is needed only where a suite has two or more runs and
nothing stored for their current state.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass

from reviewer.judge.compare import Band
from store.scores.cache import load_options
from store.sqlite.tx import transaction


@dataclass(frozen=True, slots=True)
class NoiseBand:
    """One system's metric over the runs: mean, sd and range (each run scored from its own
    verdicts alone, over the reports every run judged)."""

    system: str
    framework: str
    metric: str
    band: Band
    via: tuple[str, ...] = ()
    """Runs whose value is the framework's other record of the metric (``Metric.same_as``:
    DeepResearch Bench's stored overall for a run of stored results)."""


def repeated_suites(conn: sqlite3.Connection) -> list[str]:
    """Suites with two or more judge runs: the only ones with a band."""
    return [
        str(suite)
        for (suite,) in conn.execute(
            "SELECT s.ext_id FROM suite s JOIN judge_run jr ON jr.suite_id = s.id "
            "GROUP BY s.id HAVING count(DISTINCT jr.ext_id) > 1 ORDER BY s.id"
        )
    ]


BANDS_KEY = "noise_bands"
"""The ``meta`` row holding the queue's bands with the state of the runs they were computed
from: scoring every run of a large suite takes a while, and the runs change rarely."""


def bands_fingerprint(conn: sqlite3.Connection) -> str:
    """What the queue's bands depend on: each run's verdicts (their count and last id, per
    suite) and the scoring options (human decisions do not move a judge-variant band)."""
    runs = conn.execute(
        "SELECT s.ext_id, jr.ext_id, count(j.id), max(j.id) FROM judge_run jr "
        "JOIN suite s ON s.id = jr.suite_id LEFT JOIN judgment j ON j.run_id = jr.id "
        "GROUP BY jr.id ORDER BY jr.id"
    ).fetchall()
    return json.dumps([runs, load_options(conn)], sort_keys=True, default=str)


def stored_bands(
    conn: sqlite3.Connection, fingerprint: str
) -> dict[str, dict[str, NoiseBand]] | None:
    """The bands stored for ``fingerprint``; None when none are, or for another state."""
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (BANDS_KEY,)).fetchone()
    if row is None:
        return None
    data = json.loads(row[0])
    if data.get("fingerprint") != fingerprint:
        return None
    return {
        suite: {
            system: NoiseBand(
                b["system"], b["framework"], b["metric"], Band(*b["band"]), tuple(b["via"])
            )
            for system, b in per_system.items()
        }
        for suite, per_system in data["bands"].items()
    }


def store_bands(
    conn: sqlite3.Connection, fingerprint: str, bands: dict[str, dict[str, NoiseBand]]
) -> None:
    data = {
        "fingerprint": fingerprint,
        "bands": {
            suite: {
                system: {
                    "system": b.system,
                    "framework": b.framework,
                    "metric": b.metric,
                    "band": [b.band.mean, b.band.sd, b.band.low, b.band.high, b.band.n],
                    "via": list(b.via),
                }
                for system, b in per_system.items()
            }
            for suite, per_system in bands.items()
        },
    }
    with transaction(conn):
        conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (BANDS_KEY, json.dumps(data)))
