"""Shared fixtures: real SQLite files in tmp_path, small bundles built in code, the anchors."""

from __future__ import annotations

import os
import sqlite3
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.builders import tiny_bundle

PROJECT = Path(__file__).resolve().parent.parent

# Tests sign review events with a key of their own, never the user's ~/.config/gavel one.
os.environ.setdefault("GAVEL_IDENTITY", str(Path(tempfile.mkdtemp(prefix="gavel-id-")) / "key"))


def anchors_root() -> Path:
    return Path(os.environ.get("GAVEL_ANCHORS") or PROJECT.parent / "shared" / "anchors")


@pytest.fixture
def anchors() -> Path:
    root = anchors_root()
    if not root.is_dir():
        pytest.skip(f"benchmark anchors not found at {root} (set GAVEL_ANCHORS)")
    return root


@pytest.fixture
def conn(tmp_path: Path) -> Iterator[sqlite3.Connection]:
    from store.db.connection import connect

    connection = connect(tmp_path / "gavel.db")
    yield connection
    connection.close()


@pytest.fixture
def tiny_db(conn: sqlite3.Connection) -> sqlite3.Connection:
    """The tiny two-system bundle imported, scores built."""
    from store.imports.loader import import_bundle
    from store.scores.cache import rebuild_scores

    import_bundle(conn, tiny_bundle(), "tiny-hash")
    rebuild_scores(conn)
    return conn


@pytest.fixture(scope="session")
def sample_db_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled sample data imported once per session; tests copy the file."""
    from store.db.connection import connect
    from store.imports.from_path import build_demo
    from tui.paths import sample_data_dir

    path = tmp_path_factory.mktemp("sample") / "sample.db"
    connection = connect(path)
    build_demo(connection, sample_data_dir())
    connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    connection.close()
    return path


@pytest.fixture(scope="session")
def synthetic(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small synthetic DailyReport bundle folder (4 tasks × 3 systems), written once."""
    from reviewer.frameworks.dailyreport.synthetic import SyntheticSpec, write_synthetic

    folder = tmp_path_factory.mktemp("synthetic") / "bundle"
    write_synthetic(
        folder, SyntheticSpec(tasks=4, systems=3, long_report_words=300, long_report_claims=12)
    )
    return folder


@pytest.fixture
def sample_db(sample_db_template: Path, tmp_path: Path) -> Path:
    import shutil

    target = tmp_path / "sample.db"
    shutil.copy(sample_db_template, target)
    return target


# -- a PostgreSQL server for the review hub tests (see tests/pg.py) --------------------------------


@pytest.fixture(scope="session")
def pg_server() -> Iterator[object]:
    """One throwaway server per test process; skipped, saying why, when none can start."""
    pytest.importorskip("psycopg", reason="psycopg (the hub's client) is not installed")
    from tests.pg import start_server

    server = start_server()
    if isinstance(server, str):
        pytest.skip(f"no PostgreSQL server for the hub tests: {server}")
    yield server
    server.destroy()


@pytest.fixture
def hub_url(pg_server: object) -> str:
    """A fresh database on the session's server with the hub schema created."""
    import uuid

    from store.hub.server import PgHub
    from tests.pg import PgServer

    assert isinstance(pg_server, PgServer)
    url = pg_server.create_database(f"hub_{uuid.uuid4().hex[:12]}")
    hub = PgHub(url)
    hub.init()
    hub.close()
    return url
