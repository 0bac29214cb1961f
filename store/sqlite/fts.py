"""Full-text search over reports, claims and cited sources (SQLite FTS5).

User text becomes a query of quoted terms, so FTS syntax characters in it (quotes, colons,
NEAR, *) are searched for literally instead of being interpreted.

Each searched table has an external-content index ``<table>_fts`` (its rows are the table's,
by rowid, which is the table's ``id``): the import fills it in one pass, and nothing keeps it
up to date behind the writer's back (no triggers), because the inputs never change.
"""

from __future__ import annotations

import re
import sqlite3

SEARCHED: dict[str, tuple[str, ...]] = {
    "report": ("markdown",),
    "claim": ("fact", "extract"),
    "source": ("title", "text"),
}
"""Table -> the columns its search index holds."""


def search_index_sql(table: str) -> str:
    """The ``CREATE VIRTUAL TABLE`` of ``table``'s search index, as sqlite-utils writes it.

    Written here rather than by sqlite-utils' ``enable_fts`` because importing sqlite-utils
    is not cheap (it brings pandas where pandas is installed) and every new database would pay
    for it; tests/test_fts.py holds this text equal to what ``enable_fts`` writes. That form
    (``content="report"``) is the one sqlite-utils and Datasette look for, so
    ``sqlite-utils search`` and Datasette's search box find the indexes without being told.
    A database made before holds ``fts5(markdown, content='report', content_rowid='id',
    tokenize='unicode61')`` and so on: the same columns, rows and tokenizer, searched the same
    way, found by Datasette through the metadata (:mod:`store.db.datasette`).
    """
    columns = ", ".join(f'"{column}"' for column in SEARCHED[table])
    return (
        f'CREATE VIRTUAL TABLE "{table}_fts" USING FTS5 (\n'
        f"    {columns},\n"
        "    tokenize='unicode61',\n"
        f'    content="{table}"\n'
        ")"
    )


_TOKEN = re.compile(r"\w+", re.UNICODE)
_TERM = re.compile(r'"([^"]*)"|(\S+)')


def to_match(text: str) -> str | None:
    """The user's text as an FTS5 query: every term required, each term a phrase.

    A term with punctuation ("3.10%", "e-bike") is the phrase of its words, so it matches
    those words in sequence rather than anywhere; double quotes group a multi-word phrase.
    A final bare single word is a prefix, so a half-typed word still finds its reports.
    """
    phrases: list[str] = []
    prefix = False
    for quoted, bare in _TERM.findall(text):
        words = _TOKEN.findall(quoted or bare)
        if not words:
            continue
        phrases.append('"' + " ".join(words) + '"')
        prefix = bool(bare) and len(words) == 1 and bare == words[0]
    if not phrases:
        return None
    if prefix:
        phrases[-1] += "*"
    return " AND ".join(phrases)


def search_reports(conn: sqlite3.Connection, text: str) -> set[int]:
    """Reports whose text, claims, or cited sources match every term of ``text``."""
    match = to_match(text)
    if match is None:
        return set()
    found = {
        rid
        for (rid,) in conn.execute(
            "SELECT rowid FROM report_fts WHERE report_fts MATCH ?", (match,)
        )
    }
    found.update(
        rid
        for (rid,) in conn.execute(
            "SELECT DISTINCT c.report_id FROM claim_fts JOIN claim c ON c.id = claim_fts.rowid "
            "WHERE claim_fts MATCH ?",
            (match,),
        )
    )
    found.update(
        rid
        for (rid,) in conn.execute(
            """SELECT DISTINCT rf.report_id FROM source_fts
           JOIN source s ON s.id = source_fts.rowid
           JOIN reference rf ON rf.url = s.url
           WHERE source_fts MATCH ?""",
            (match,),
        )
    )
    return found
