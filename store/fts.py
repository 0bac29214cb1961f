"""Full-text search over reports, claims and cited sources (SQLite FTS5).

User text becomes a query of quoted terms, so FTS syntax characters in it (quotes, colons,
NEAR, *) are searched for literally instead of being interpreted.
"""

from __future__ import annotations

import re
import sqlite3

_TOKEN = re.compile(r"\w+", re.UNICODE)


def to_match(text: str) -> str | None:
    """Every word of the user's text, quoted, all required; prefix match on the last one."""
    words = _TOKEN.findall(text)
    if not words:
        return None
    quoted = [f'"{w}"' for w in words]
    quoted[-1] += "*"
    return " AND ".join(quoted)


def search_reports(conn: sqlite3.Connection, text: str) -> set[int]:
    """Reports whose text, claims, or cited sources match every word of ``text``."""
    match = to_match(text)
    if match is None:
        return set()
    found = {rid for (rid,) in conn.execute(
        "SELECT rowid FROM report_fts WHERE report_fts MATCH ?", (match,)
    )}
    found.update(rid for (rid,) in conn.execute(
        "SELECT DISTINCT c.report_id FROM claim_fts JOIN claim c ON c.id = claim_fts.rowid "
        "WHERE claim_fts MATCH ?",
        (match,),
    ))
    found.update(rid for (rid,) in conn.execute(
        """SELECT DISTINCT rf.report_id FROM source_fts
           JOIN source s ON s.id = source_fts.rowid
           JOIN reference rf ON rf.url = s.url
           WHERE source_fts MATCH ?""",
        (match,),
    ))
    return found
