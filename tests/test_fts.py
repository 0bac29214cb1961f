"""Full-text search: user text is searched literally, term by term, punctuation included."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from store.sqlite.fts import search_reports, to_match


def _report(conn: sqlite3.Connection, ext: str) -> int:
    return int(conn.execute("SELECT id FROM report WHERE ext_id = ?", (ext,)).fetchone()[0])


def test_fts_syntax_in_user_text_is_literal() -> None:
    assert to_match('rate: "NEAR" OR x*') == '"rate" AND "NEAR" AND "OR" AND "x"'
    assert to_match("  ,;  ") is None


def test_a_term_with_punctuation_is_a_phrase() -> None:
    assert to_match("3.10%") == '"3 10"'
    assert to_match('Lumen "flex saver"') == '"Lumen" AND "flex saver"'
    assert to_match("Lum") == '"Lum"*'  # a half-typed last word is a prefix


def test_search_finds_exact_figures_not_their_digits_anywhere(sample_db: Path) -> None:
    conn = sqlite3.connect(sample_db)
    everything = {rid for (rid,) in conn.execute("SELECT id FROM report")}
    with_figure = {
        rid for (rid, text) in conn.execute("SELECT id, markdown FROM report") if "3.10%" in text
    }
    found = search_reports(conn, "3.10%")
    assert with_figure <= found
    assert len(found) < len(everything) / 4  # not every report with a 3 and a 10
    assert _report(conn, "t01-atlas-dr") in search_reports(conn, "Fennick")
    assert search_reports(conn, "Fennick zzzqqq") == set()


def test_an_import_leaves_the_indexes_merging_as_usual(sample_db: Path) -> None:
    # The bulk fill turns segment merging off for its own insert; a later single insert
    # (the next import, a merge) must find FTS5's default again, and the index must be whole.
    conn = sqlite3.connect(sample_db)
    for fts in ("report_fts", "claim_fts", "source_fts"):
        setting = conn.execute(f"SELECT v FROM {fts}_config WHERE k = 'automerge'").fetchone()
        assert setting is None or setting[0] == 4, (fts, setting)
        assert conn.execute(f"INSERT INTO {fts}({fts}) VALUES ('integrity-check')") is not None
    words = {rid: text for rid, text in conn.execute("SELECT id, markdown FROM report")}
    assert {rid for rid, text in words.items() if "Fennick" in text} <= search_reports(
        conn, "Fennick"
    )


def test_a_bulk_fill_puts_back_an_index_s_own_merge_setting(sample_db: Path) -> None:
    from store.db.connection import connect
    from store.imports.loader import import_bundle
    from tests.builders import tiny_bundle

    conn = connect(sample_db)
    conn.execute("INSERT INTO claim_fts(claim_fts, rank) VALUES ('automerge', 8)")
    conn.commit()
    import_bundle(conn, tiny_bundle("another"), "h")
    assert conn.execute("SELECT v FROM claim_fts_config WHERE k = 'automerge'").fetchone()[0] == 8


def test_a_new_database_s_search_indexes_are_those_sqlite_utils_writes(tmp_path: Path) -> None:
    # Written by hand (sqlite-utils is not imported to create a database), in exactly the form
    # sqlite-utils' enable_fts writes, which is what it and Datasette detect.
    import sqlite_utils

    from store.db.connection import connect
    from store.sqlite.fts import SEARCHED

    def index_sql(conn: sqlite3.Connection) -> dict[str, str]:
        return dict(
            conn.execute(
                "SELECT name, sql FROM sqlite_master WHERE name LIKE '%\\_fts' ESCAPE '\\'"
            )
        )

    reference = sqlite_utils.Database(memory=True)
    for table, columns in SEARCHED.items():
        reference.execute(f"CREATE TABLE {table} (id INTEGER PRIMARY KEY, {', '.join(columns)})")
        reference.table(table).enable_fts(columns, tokenize="unicode61")
    conn = connect(tmp_path / "new.db")
    assert index_sql(conn) == index_sql(reference.conn) != {}
    mine = sqlite_utils.Database(conn, recursive_triggers=False, execute_plugins=False)
    assert {t: mine.table(t).detect_fts() for t in SEARCHED} == {t: f"{t}_fts" for t in SEARCHED}


def test_an_upgraded_database_searches_as_a_new_one(tmp_path: Path) -> None:
    # The previous form of the indexes (content='report', content_rowid='id') finds the same
    # reports for the same text.
    import shutil

    from store.db.connection import connect
    from store.imports.loader import import_bundle
    from tests.builders import tiny_bundle

    old = tmp_path / "old.db"
    shutil.copy(Path(__file__).parent / "fixtures" / "v1" / "ana.db", old)
    upgraded = connect(old)
    assert (
        "content='report'"
        in upgraded.execute("SELECT sql FROM sqlite_master WHERE name = 'report_fts'").fetchone()[0]
    )
    new = connect(tmp_path / "new.db")
    import_bundle(new, tiny_bundle(), "h")

    def found(conn: sqlite3.Connection, text: str) -> set[str]:
        ids = search_reports(conn, text)
        return {ext for rid, ext in conn.execute("SELECT id, ext_id FROM report") if rid in ids}

    for text in ("bike", "million trips", "zzzqqq"):
        assert found(upgraded, text) == found(new, text), text
    assert found(new, "bike")
