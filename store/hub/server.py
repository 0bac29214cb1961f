"""The review hub: one PostgreSQL database that every reviewer's Gavel pushes events to and
pulls events from (:mod:`store.hub.sync` does the syncing; this module is the hub's side).

Why PostgreSQL and why so little of it: the review log is already a set of signed,
self-describing events that merge idempotently in any order (:mod:`store.reviews.merge`), so the hub
needs to be nothing more than an append-only, totally ordered list of those events that many
machines can reach. Everything that decides what an event *means* (signatures, who may undo
what, conflicts) stays in the client, where the local database is the source of truth; the hub
cannot overrule a reviewer because it never interprets anything.

The schema lives in its own PostgreSQL schema, ``gavel_hub``, so a hub can share a database
with other things:

* ``meta``  — the hub's id (made at ``gavel hub init``; clients key their cursors by it, so a
  hub dropped and made again is never mistaken for the old one) and its schema version;
* ``suite`` — the benchmark runs the hub serves, by suite id with the content hash each was
  imported from: one hub serves several runs, and two different runs that happen to share a
  suite id are refused rather than having their decisions mixed;
* ``event`` — the review events, in hub order (``id``).

Append-only is enforced by the server, not by client manners: triggers refuse UPDATE, DELETE
and TRUNCATE on all three tables (``gavel hub init --grant ROLE`` also gives a reviewers' role
only SELECT, and INSERT on the columns an event carries). Ids belong to the server: a trigger
numbers every inserted event ``max(id) + 1``, whatever id the insert named, after a
statement trigger has taken a transaction-scoped advisory lock held to commit. So ids are
dense and handed out in commit order: a reader that has seen id N has seen everything below
N, "everything after my cursor" is a complete pull, and an id that jumps means the hub was
tampered with by its owner, which clients report and do not pass (:mod:`store.hub.sync`).
Because every pusher sends its events in its own log order, hub order is causal (an undo
always comes after the event it reverses).

``psycopg`` is imported only here, and only when a hub is used.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from reviewer.identity import SIGNED_FIELDS

if TYPE_CHECKING:
    import psycopg

HUB_SCHEMA = "gavel_hub"
HUB_SCHEMA_VERSION = 2
"""2: the server alone numbers events (a trigger, under the push lock), densely."""
PUSH_LOCK = 0x6761_7665_6C68_7562 & 0x7FFF_FFFF_FFFF_FFFF
"""The advisory lock that serializes pushes ("gavelhub" as a positive bigint)."""

EVENT_FIELDS = (*SIGNED_FIELDS, "sig")
"""The columns of an event: what its signature covers, and the signature."""

_ACTIONS = (
    "confirm",
    "override",
    "adjudicate",
    "flag",
    "rate",
    "propose",
    "accept",
    "reject",
    "undo",
    "redo",
    "claim",
    "assign",
    "unassign",
)
_KNOWN_ACTIONS = ", ".join(f"'{action}'" for action in _ACTIONS)


def schema_sql(schema: str = HUB_SCHEMA) -> list[str]:
    """The statements that create (or complete) a hub in the PostgreSQL schema ``schema``."""
    return [
        f"CREATE SCHEMA IF NOT EXISTS {schema}",
        f"""CREATE TABLE IF NOT EXISTS {schema}.meta (
            key text PRIMARY KEY,
            value text NOT NULL
        )""",
        f"""CREATE TABLE IF NOT EXISTS {schema}.suite (
            ext_id text PRIMARY KEY,
            name text NOT NULL,
            frameworks text NOT NULL,
            version text NOT NULL,
            content_hash text NOT NULL,
            registered_at timestamptz NOT NULL DEFAULT clock_timestamp()
        )""",
        f"""CREATE TABLE IF NOT EXISTS {schema}.event (
            id bigint PRIMARY KEY,
            uuid text NOT NULL UNIQUE CHECK (length(uuid) BETWEEN 8 AND 64),
            suite text,
            target text NOT NULL,
            reviewer text NOT NULL CHECK (reviewer <> ''),
            action text NOT NULL,
            value text,
            rationale text NOT NULL,
            reason text,
            created_at text NOT NULL CHECK (created_at ~ '^[0-9]{{4}}-[0-9]{{2}}-[0-9]{{2}}T'),
            supersedes text,
            run text,
            key text,
            sig text,
            pushed_at timestamptz NOT NULL DEFAULT clock_timestamp()
        )""",
        # A hub made before an action existed learns it when `gavel hub init` runs again.
        f"""ALTER TABLE {schema}.event DROP CONSTRAINT IF EXISTS event_action_check,
            ADD CONSTRAINT event_action_check
            CHECK (action IN ({", ".join(f"'{a}'" for a in _ACTIONS)}))""",
        f"CREATE INDEX IF NOT EXISTS event_suite ON {schema}.event (suite, id)",
        # The checks of what an event may say, made again so an upgraded hub takes new kinds.
        f"ALTER TABLE {schema}.event DROP CONSTRAINT IF EXISTS event_target_check",
        f"ALTER TABLE {schema}.event ADD CONSTRAINT event_target_check "
        "CHECK (target ~ '^[srpi]:.')",
        f"ALTER TABLE {schema}.event DROP CONSTRAINT IF EXISTS event_action_check",
        f"ALTER TABLE {schema}.event ADD CONSTRAINT event_action_check "
        f"CHECK (action IN ({_KNOWN_ACTIONS}))",
        # A version 1 hub numbered events with an identity column, which a role allowed to
        # INSERT could override (OVERRIDING SYSTEM VALUE) and whose values a rolled-back or
        # duplicate push skipped: from here on the triggers below number every event.
        f"ALTER TABLE {schema}.event ALTER COLUMN id DROP IDENTITY IF EXISTS",
        # Ids up to here may have gaps (version 1 numbering); clients accept those.
        f"""INSERT INTO {schema}.meta VALUES ('dense_after',
            (SELECT coalesce(max(id), 0)::text FROM {schema}.event))
            ON CONFLICT (key) DO NOTHING""",
        f"""CREATE OR REPLACE FUNCTION {schema}.serialize_pushes() RETURNS trigger
            LANGUAGE plpgsql AS $$
            BEGIN
                PERFORM pg_advisory_xact_lock({PUSH_LOCK});
                RETURN NULL;
            END $$""",
        f"""CREATE OR REPLACE FUNCTION {schema}.number_event() RETURNS trigger
            LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog AS $$
            BEGIN
                NEW.id := coalesce((SELECT max(id) FROM {schema}.event), 0) + 1;
                NEW.pushed_at := clock_timestamp();
                RETURN NEW;
            END $$""",
        # Every insert, whoever makes it and whatever id it names, waits for the push lock
        # before any row is numbered and holds it to its commit: ids are dense, in commit order.
        f"""CREATE OR REPLACE TRIGGER event_serialize BEFORE INSERT ON {schema}.event
            FOR EACH STATEMENT EXECUTE FUNCTION {schema}.serialize_pushes()""",
        f"""CREATE OR REPLACE TRIGGER event_number BEFORE INSERT ON {schema}.event
            FOR EACH ROW EXECUTE FUNCTION {schema}.number_event()""",
        f"""CREATE OR REPLACE FUNCTION {schema}.append_only() RETURNS trigger
            LANGUAGE plpgsql AS $$
            BEGIN
                RAISE EXCEPTION 'the Gavel hub is append-only: % on %.% refused',
                    TG_OP, TG_TABLE_SCHEMA, TG_TABLE_NAME;
            END $$""",
        # Statement-level: even an UPDATE or DELETE that would touch no row is refused.
        *(
            f"""CREATE OR REPLACE TRIGGER {table}_append_only
              BEFORE UPDATE OR DELETE OR TRUNCATE ON {schema}.{table}
              FOR EACH STATEMENT EXECUTE FUNCTION {schema}.append_only()"""
            for table in ("meta", "suite", "event")
        ),
        f"""INSERT INTO {schema}.meta VALUES ('hub_id', gen_random_uuid()::text)
            ON CONFLICT (key) DO NOTHING""",
        f"""INSERT INTO {schema}.meta VALUES ('schema_version', '{HUB_SCHEMA_VERSION}')
            ON CONFLICT (key) DO NOTHING""",
    ]


class HubError(Exception):
    """The hub could not be used; nothing local changed because of it."""


class HubOffline(HubError):
    """The hub cannot be reached (server down, network away, timeout): try again later."""


class HubRefused(HubError):
    """The hub answered but will not sync with this database as it is (no hub schema there,
    a newer schema, or a suite id that names a different benchmark run)."""


@dataclass(frozen=True, slots=True)
class SuiteIdentity:
    """What makes two databases' suite the same benchmark run: its id and the content hash
    of the files it was imported from (inputs are immutable once reviewed)."""

    ext_id: str
    name: str
    frameworks: str
    version: str
    content_hash: str


@dataclass(frozen=True, slots=True)
class HubRow:
    """One event as the hub holds it: its hub id and its fields (``EVENT_FIELDS``)."""

    id: int
    event: dict[str, Any]


@dataclass(slots=True)
class PushOutcome:
    added: int = 0
    already_there: int = 0
    diverged: list[str] = field(default_factory=list)
    """uuids the hub already holds with different content (an edited log somewhere): the
    hub's copy stands, the local one is reported and never sent again."""


@dataclass(frozen=True, slots=True)
class HubStats:
    hub_id: str
    events: int
    last_id: int
    suites: list[tuple[str, int]]
    """(suite id, events) per suite the hub serves."""
    reviewers: int
    gap: tuple[int, int] | None = None
    """The first place the hub's ids jump (the id before, the id after) above the ids a
    version 1 hub may have left with gaps: every client stops pulling there."""


class Hub(Protocol):
    """What syncing needs of a hub (a PostgreSQL one, or a fake in the interface's tests)."""

    @property
    def name(self) -> str:
        """How the hub is shown (a URL without its password)."""

    def hub_id(self) -> str: ...

    def register_suites(self, suites: Sequence[SuiteIdentity]) -> list[str]:
        """Register the suites; returns a message per suite the hub knows as different."""

    def push(self, rows: Sequence[tuple[str | None, dict[str, Any]]]) -> PushOutcome:
        """Append (suite, event) rows in the given order, skipping uuids already there."""

    def pull(self, after: int, limit: int) -> list[HubRow]:
        """Events with a hub id above ``after``, in hub order, at most ``limit``."""

    def dense_after(self) -> int:
        """The id above which the hub numbers events without gaps (0 for a hub made dense;
        the last id a version 1 hub had when it was upgraded)."""

    def close(self) -> None: ...


def safe_url(url: str) -> str:
    """A connection string as shown to people and written to logs: never its password."""
    try:
        from psycopg.conninfo import conninfo_to_dict
    except ImportError:  # pragma: no cover - a dependency
        return url.split("@")[-1]
    try:
        parts = conninfo_to_dict(url)
    except Exception:
        return "<unparsable hub URL>"
    user = parts.get("user")
    host = parts.get("host") or "localhost"
    port = f":{parts['port']}" if parts.get("port") else ""
    who = f"{user}@" if user else ""
    return f"postgresql://{who}{host}{port}/{parts.get('dbname') or ''}"


class PgHub:
    """A hub on a PostgreSQL server, reached with psycopg 3.

    One connection, opened on first use and dropped after any error (the next call opens a
    fresh one): a background syncer can call it every few seconds through server restarts.
    Every call is bounded in time (connect timeout, statement timeout, TCP user timeout), so
    a vanished network turns into :class:`HubOffline` within seconds, never a hang.
    """

    def __init__(
        self,
        url: str,
        *,
        connect_timeout: int = 5,
        statement_timeout: int = 60,
        application_name: str = "gavel",
        schema: str = HUB_SCHEMA,
    ) -> None:
        if not re.fullmatch(r"[a-z_][a-z0-9_]{0,62}", schema):
            raise ValueError(f"not a plain PostgreSQL schema name: {schema!r}")
        self.url = url
        self.schema = schema
        """The PostgreSQL schema holding the hub (``gavel_hub``; the bench uses a scratch
        one it drops afterwards)."""
        self.connect_timeout = connect_timeout
        self.statement_timeout = statement_timeout
        self.application_name = application_name
        self._conn: psycopg.Connection[Any] | None = None
        self._hub_id: str | None = None
        self._dense_after = 0

    @property
    def name(self) -> str:
        return safe_url(self.url)

    # -- connection --------------------------------------------------------------------------

    def _connect(self) -> psycopg.Connection[Any]:
        import psycopg

        if self._conn is not None and not self._conn.closed:
            return self._conn
        self._hub_id = None
        try:
            self._conn = psycopg.connect(
                self.url,
                connect_timeout=self.connect_timeout,
                autocommit=True,
                application_name=self.application_name,
                keepalives=1,
                keepalives_idle=5,
                keepalives_interval=2,
                keepalives_count=3,
                tcp_user_timeout=max(1, self.statement_timeout) * 1000,
                options=f"-c statement_timeout={self.statement_timeout * 1000}",
            )
        except psycopg.OperationalError as exc:
            raise HubOffline(f"hub {self.name} unreachable: {_first_line(exc)}") from None
        except psycopg.Error as exc:
            raise HubError(f"hub {self.name}: {_first_line(exc)}") from None
        return self._conn

    @contextmanager
    def _errors(self) -> Iterator[None]:
        """Translate psycopg's errors into the hub's, and drop a connection that failed."""
        import psycopg
        from psycopg import errors

        try:
            yield
        except HubError:
            raise
        except (errors.UndefinedTable, errors.InvalidSchemaName):
            self.close()
            raise HubRefused(
                f"{self.name} is not a Gavel hub (no {self.schema} tables): create "
                "it with `gavel hub init URL`"
            ) from None
        except psycopg.OperationalError as exc:
            self.close()
            raise HubOffline(f"hub {self.name} unreachable: {_first_line(exc)}") from None
        except psycopg.Error as exc:
            self.close()
            raise HubError(f"hub {self.name}: {_first_line(exc)}") from None

    def close(self) -> None:
        conn, self._conn = self._conn, None
        self._hub_id = None
        if conn is not None:
            # Closing a broken connection may fail: it is gone either way.
            with suppress(Exception):
                conn.close()

    # -- schema ------------------------------------------------------------------------------

    def init(self, grant: str | None = None) -> str:
        """Create the hub schema (idempotent); returns the hub id."""
        with self._errors():
            conn = self._connect()
            with conn.transaction():
                # An upgrade reads the last id while no push can add one.
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (PUSH_LOCK,))
                for statement in schema_sql(self.schema):
                    conn.execute(statement)
                self._upgrade_version(conn)
                if grant:
                    self._grant(conn, grant)
        return self.hub_id()

    def _upgrade_version(self, conn: psycopg.Connection[Any]) -> None:
        """Record the schema version a completed init made (meta is append-only, so its
        owner lifts the trigger for this one row, inside the init's transaction)."""
        meta = f"{self.schema}.meta"
        conn.execute(f"ALTER TABLE {meta} DISABLE TRIGGER meta_append_only")
        conn.execute(
            f"UPDATE {meta} SET value = %s WHERE key = 'schema_version' AND value::int < %s",
            (str(HUB_SCHEMA_VERSION), HUB_SCHEMA_VERSION),
        )
        conn.execute(f"ALTER TABLE {meta} ENABLE TRIGGER meta_append_only")

    def _grant(self, conn: psycopg.Connection[Any], grant: str) -> None:
        """Reviewers read everything and append events and suites, naming every column but
        the id and the push time, which the server alone sets."""
        from psycopg import sql

        role = sql.Identifier(grant)
        schema = sql.Identifier(self.schema)
        for statement in (
            "GRANT USAGE ON SCHEMA {schema} TO {role}",
            # Revoking a table privilege revokes its column privileges too: start clean.
            "REVOKE ALL ON ALL TABLES IN SCHEMA {schema} FROM {role}",
            "GRANT SELECT ON ALL TABLES IN SCHEMA {schema} TO {role}",
            "GRANT INSERT ({suite_columns}) ON {schema}.suite TO {role}",
            "GRANT INSERT ({event_columns}) ON {schema}.event TO {role}",
        ):
            conn.execute(
                sql.SQL(statement).format(
                    schema=schema,
                    role=role,
                    suite_columns=sql.SQL(", ").join(
                        map(
                            sql.Identifier,
                            ("ext_id", "name", "frameworks", "version", "content_hash"),
                        )
                    ),
                    event_columns=sql.SQL(", ").join(map(sql.Identifier, ("suite", *EVENT_FIELDS))),
                )
            )

    def hub_id(self) -> str:
        if self._hub_id is not None and self._conn is not None and not self._conn.closed:
            return self._hub_id
        with self._errors():
            rows = dict(
                self._connect().execute(f"SELECT key, value FROM {self.schema}.meta").fetchall()
            )
        version = int(rows.get("schema_version", "0"))
        if version > HUB_SCHEMA_VERSION:
            raise HubRefused(
                f"hub {self.name} has schema version {version}, newer than this "
                f"Gavel's ({HUB_SCHEMA_VERSION}): upgrade Gavel"
            )
        if "hub_id" not in rows:
            raise HubRefused(f"{self.name} is not a Gavel hub: run `gavel hub init URL`")
        if version < HUB_SCHEMA_VERSION:
            raise HubRefused(
                f"hub {self.name} has schema version {version}, which lets a reviewer's "
                "role choose event ids: its owner runs `gavel hub init URL` (with the same "
                "--grant) once to upgrade it"
            )
        self._dense_after = int(rows.get("dense_after", "0"))
        self._hub_id = str(rows["hub_id"])
        return self._hub_id

    def dense_after(self) -> int:
        self.hub_id()
        return self._dense_after

    # -- suites ------------------------------------------------------------------------------

    def register_suites(self, suites: Sequence[SuiteIdentity]) -> list[str]:
        if not suites:
            return []
        with self._errors():
            conn = self._connect()
            with conn.transaction(), conn.cursor() as cur:
                cur.executemany(
                    f"""INSERT INTO {self.schema}.suite
                        (ext_id, name, frameworks, version, content_hash)
                        VALUES (%s, %s, %s, %s, %s) ON CONFLICT (ext_id) DO NOTHING""",
                    [(s.ext_id, s.name, s.frameworks, s.version, s.content_hash) for s in suites],
                )
                known = {
                    row[0]: row
                    for row in cur.execute(
                        f"""SELECT ext_id, name, frameworks, version, content_hash
                        FROM {self.schema}.suite WHERE ext_id = ANY(%s)""",
                        ([s.ext_id for s in suites],),
                    )
                }
        problems = []
        for suite in suites:
            there = known.get(suite.ext_id)
            if there is not None and there[4] != suite.content_hash:
                problems.append(
                    f"suite {suite.ext_id!r} on the hub was imported from different content "
                    f"(hub: {there[1]!r} {there[3]!r}, hash {there[4][:12]}; here: "
                    f"{suite.name!r} {suite.version!r}, hash {suite.content_hash[:12]}): one "
                    "suite id must name one benchmark run — import the changed run under a "
                    "new suite id"
                )
        return problems

    # -- events ------------------------------------------------------------------------------

    def push(self, rows: Sequence[tuple[str | None, dict[str, Any]]]) -> PushOutcome:
        outcome = PushOutcome()
        if not rows:
            return outcome
        columns = ", ".join(EVENT_FIELDS)
        with self._errors():
            conn = self._connect()
            with conn.transaction(), conn.cursor() as cur:
                # Ids in commit order: see the module docstring.
                cur.execute("SELECT pg_advisory_xact_lock(%s)", (PUSH_LOCK,))
                cur.execute(f"""CREATE TEMP TABLE incoming (ord integer, suite text,
                                {", ".join(f"{name} text" for name in EVENT_FIELDS)})
                                ON COMMIT DROP""")
                with cur.copy(f"COPY incoming (ord, suite, {columns}) FROM STDIN") as copy:
                    for ordinal, (suite, event) in enumerate(rows):
                        copy.write_row(
                            (ordinal, suite, *(event.get(name) for name in EVENT_FIELDS))
                        )
                cur.execute(
                    f"""INSERT INTO {self.schema}.event (suite, {columns})
                        SELECT suite, {columns} FROM incoming ORDER BY ord
                        ON CONFLICT (uuid) DO NOTHING"""
                )
                outcome.added = max(0, cur.rowcount)
                outcome.already_there = len(rows) - outcome.added
                if outcome.already_there:
                    same = " AND ".join(
                        f"e.{name} IS NOT DISTINCT FROM i.{name}" for name in EVENT_FIELDS[1:]
                    )
                    cur.execute(f"""SELECT i.uuid FROM incoming i
                                    JOIN {self.schema}.event e ON e.uuid = i.uuid
                                    WHERE NOT ({same}) ORDER BY i.ord""")
                    outcome.diverged = [str(row[0]) for row in cur.fetchall()]
        return outcome

    def pull(self, after: int, limit: int) -> list[HubRow]:
        columns = ", ".join(EVENT_FIELDS)
        with self._errors():
            rows = (
                self._connect()
                .execute(
                    f"""SELECT id, {columns} FROM {self.schema}.event
                    WHERE id > %s ORDER BY id LIMIT %s""",
                    (after, limit),
                )
                .fetchall()
            )
        return [HubRow(int(row[0]), dict(zip(EVENT_FIELDS, row[1:], strict=True))) for row in rows]

    def stats(self) -> HubStats:
        hub = self.hub_id()
        with self._errors():
            conn = self._connect()
            events, last, reviewers = conn.execute(
                f"""SELECT count(*), coalesce(max(id), 0), count(DISTINCT (reviewer, key))
                    FROM {self.schema}.event"""
            ).fetchone() or (0, 0, 0)
            suites = conn.execute(
                f"""SELECT s.ext_id, count(e.id) FROM {self.schema}.suite s
                    LEFT JOIN {self.schema}.event e ON e.suite = s.ext_id
                    GROUP BY s.ext_id ORDER BY s.ext_id"""
            ).fetchall()
            gap = conn.execute(
                f"""SELECT before, id FROM (
                        SELECT id, lag(id, 1, %(dense)s) OVER (ORDER BY id) AS before
                        FROM {self.schema}.event WHERE id > %(dense)s) ids
                    WHERE id <> before + 1 ORDER BY id LIMIT 1""",
                {"dense": self._dense_after},
            ).fetchone()
        return HubStats(
            hub,
            int(events),
            int(last),
            [(str(s), int(n)) for s, n in suites],
            int(reviewers),
            None if gap is None else (int(gap[0]), int(gap[1])),
        )


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def proposal_suite(value: str | None) -> str | None:
    """The suite of a ``propose`` event, from the proposal it carries (``task`` is
    ``suite/task``); None when the value is not a proposal."""
    try:
        spec = json.loads(value or "")
    except json.JSONDecodeError:
        return None
    task = spec.get("task") if isinstance(spec, dict) else None
    return str(task).partition("/")[0] or None if isinstance(task, str) else None
