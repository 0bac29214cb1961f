"""A database whose every shown text is hostile: terminal control sequences (OSC 0 window title,
OSC 52 clipboard write, OSC 8 hidden link, ESC[2J clear screen, an 8-bit CSI, BEL, BS, CR),
bidirectional overrides and isolates, and zero-width characters — in report text, claims,
criteria, judge explanations and evidence, source titles and text, run descriptions, system
names, rationales, flag notes, proposals and a legacy reviewer name.

Inputs are written past the importer (which now refuses such ids), as an older database or
another tool could have left them: what is tested is that nothing *shown* passes them on raw.
"""

from __future__ import annotations

import re
import uuid
from pathlib import Path

HOSTILE = (
    "\x1b]0;OWNED\x07 \x1b]52;c;b3duZWQ=\x07 \x1b]8;;http://evil.example/\x07click"
    "\x1b]8;;\x07 \x1b[2J\x1b[H \u202eevil\u202c \u2066iso\u2069 zero\u200bwidth\ufeff "
    "\x9b31m \x07\x08\rcover"
)
"""Every kind of character a terminal would act on or that hides or reorders text."""

FORBIDDEN = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1a\x1c-\x1f\x7f-\x9f"  # controls (ESC handled apart)
    "\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]"  # zero-width, bidi, isolates, BOM
)
SGR = re.compile(r"\x1b\[[0-9;:]*m")
"""Select Graphic Rendition (colours, bold): what Rich draws tables with, harmless."""
PROGRESS = re.compile(r"\x1b\[\?25[lh]|\r?\x1b\[2K|\x1b\[[0-9]*A")
"""What Rich's progress display sends (hide or show the cursor, erase the line, move up):
Gavel's own drawing on stderr, never data."""


def unsafe_in(output: str) -> list[str]:
    """Characters in terminal output that are not allowed through: any ESC except a complete
    SGR sequence, any other control (a CR only before LF, as a pty writes newlines), any
    bidirectional or zero-width character."""
    text = PROGRESS.sub("", SGR.sub("", output)).replace("\r\n", "\n")
    found = [
        f"ESC at {m.start()}: {text[m.start() : m.start() + 12]!r}"
        for m in re.finditer("\x1b", text)
    ]
    found += [
        f"U+{ord(m.group()):04X} at {m.start()}: {text[max(0, m.start() - 8) : m.start() + 8]!r}"
        for m in FORBIDDEN.finditer(text)
    ]
    found += [f"CR at {m.start()}" for m in re.finditer("\r", text)]
    return found[:10]


def build(path: Path) -> dict[str, object]:
    """The hostile database at ``path``; returns the ids the commands need."""
    from store.db.connection import connect
    from store.imports.loader import import_bundle
    from store.reviewlog.events import ReviewLog, rebuild_state
    from store.reviews.proposals import propose
    from store.scores.cache import rebuild_scores
    from tests.builders import tiny_bundle
    from tests.test_activation import add_run

    conn = connect(path)
    import_bundle(conn, tiny_bundle(), "hostile")
    h = HOSTILE
    for sql in (
        "UPDATE report SET markdown = markdown || char(10) || :h",
        "UPDATE claim SET fact = fact || :h, extract = :h",
        "UPDATE criterion SET text = text || :h, explanation = :h",
        "UPDATE task SET prompt = prompt || :h",
        "UPDATE system SET name = 'sys ' || :h",
        "UPDATE suite SET name = :h, description = :h",
        "UPDATE reference SET title = title || :h",
        # Cited pages on loopback: a fetch refuses them at once, without the network.
        "UPDATE reference SET url = 'http://127.0.0.1:9/' || idx || '/' || :h",
        "UPDATE judgment SET explanation = :h, evidence = :h",
    ):
        conn.execute(sql, {"h": h})
    suite = conn.execute("SELECT id FROM suite").fetchone()[0]
    conn.execute(
        "INSERT INTO source (suite_id, url, title, fetched_at, text, sha256) "
        "VALUES (?, 'https://transit.example/map', ?, '2026-11-01', ?, 'x')",
        (suite, h, "310 stations " + h),
    )
    add_run(conn, "good")
    add_run(conn, "bad")
    conn.execute(
        "UPDATE judge_run SET description = ?, model = 'model ' || ? WHERE ext_id = 'good'", (h, h)
    )
    rebuild_scores(conn)

    def claim(report: str, key: str) -> int:
        return int(
            conn.execute(
                "SELECT j.id FROM judgment j JOIN report r ON r.id = j.report_id "
                "WHERE r.ext_id = ? AND j.kind = 'claim' AND j.subject = ? AND j.current = 1",
                (report, f"k={key}"),
            ).fetchone()[0]
        )

    conflict, flagged = claim("t1-alpha", "c1"), claim("t1-alpha", "c2")
    ReviewLog(conn, "ana").decide(conflict, "incorrect", h, "other")
    ReviewLog(conn, "ben").decide(conflict, "unknown", h)
    ReviewLog(conn, "ana").flag(flagged, True, h)
    ReviewLog(conn, "ana").rate(
        int(conn.execute("SELECT id FROM report WHERE ext_id = 't1-beta'").fetchone()[0]), 2, h
    )
    proposals = [
        propose(
            conn,
            "ana",
            1,
            None,
            "cascade",
            "new_rubric",
            {"subtask": "s2", "dimension": "ins", "text": f"rubric {n} {h}"},
            None,
            h,
        ).proposal.uuid
        for n in range(3)
    ]
    # A reviewer name from before names were checked (written by an older release).
    target = conn.execute(
        "SELECT target FROM subject WHERE id = (SELECT subject_id FROM judgment WHERE id = ?)",
        (conflict,),
    ).fetchone()[0]
    conn.execute(
        "INSERT INTO review_event (uuid, target, reviewer, action, value, rationale, created_at) "
        "VALUES (?, ?, ?, 'override', 'correct', ?, '2026-11-20T10:00:00.000000+00:00')",
        (str(uuid.uuid4()), target, "old" + h, h),
    )
    rebuild_state(conn)
    rebuild_scores(conn)
    from store.plans.design import PlanSpec, create_plan

    create_plan(conn, PlanSpec(budget=3, seed=1, name="p-hostile"), h)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return {"conflict": conflict, "flagged": flagged, "proposals": proposals}
