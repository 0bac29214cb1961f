"""The workstation's background hub sync: a thread worker that syncs the database with the
configured hub every ``sync_every`` seconds (and at once after each stored decision), and the
hub state the status line shows.

Decisions never wait for the hub: they are committed locally by the writer like any other, and
this worker pushes them later on its own connection. Whatever the network does — a server
restart, a laptop offline for a day, a hub that refuses this database — becomes a state on the
status line ("synced", "N pending", "offline"), never an exception in the interface, and every
failed attempt is simply tried again on the next tick: the events wait in the local database.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from rich.text import Text
from textual.message import Message
from textual.notifications import SeverityLevel

if TYPE_CHECKING:
    from store.hub.server import Hub
    from store.hub.sync import SyncResult

HubMode = Literal["starting", "synced", "pending", "offline", "refused", "error"]


@dataclass(frozen=True, slots=True)
class HubState:
    """What the status line says about the hub."""

    mode: HubMode
    hub: str
    """The hub as shown (no password)."""
    pending: int = 0
    """Local events not yet on the hub."""
    synced_at: str | None = None
    detail: str = ""
    """Why it is offline or refused; empty otherwise."""
    quarantined: int = 0

    def line(self) -> Text:
        text = Text(" ⇅ hub ", style="bold")
        last = _clock(self.synced_at)
        if self.mode == "starting":
            text.append("connecting…", "dim")
        elif self.mode == "synced":
            text.append("synced", "green")
            text.append(f" {last}" if last else "", "dim")
        elif self.mode == "pending":
            text.append(f"{self.pending:,} pending", "yellow")
        else:
            text.append(self.mode, "bold red" if self.mode != "offline" else "bold yellow")
            if self.pending:
                text.append(f" · {self.pending:,} pending", "yellow")
            if last:
                text.append(f" · last synced {last}", "dim")
        if self.quarantined:
            text.append(f" · {self.quarantined:,} quarantined", "red")
        text.append(f" · {self.hub}", "dim")
        if self.detail and self.mode in ("refused", "error"):
            # Offline says why in its notification; these need the reason to be fixed.
            text.append(f" · {_visible(self.detail)}", "dim")
        return text


def _clock(stamp: str | None) -> str:
    """A UTC time stamp as the local wall-clock time."""
    if not stamp:
        return ""
    try:
        return datetime.fromisoformat(stamp).astimezone().strftime("%H:%M:%S")
    except ValueError:
        return ""


def _visible(text: str) -> str:
    return (
        "".join(ch if ch.isprintable() else "\ufffd" for ch in text.splitlines()[0]) if text else ""
    )


class HubSynced(Message):
    """A sync attempt ended (posted from the worker thread to the app)."""

    def __init__(self, state: HubState, result: SyncResult | None) -> None:
        super().__init__()
        self.state = state
        self.result = result


class HubSyncer:
    """The worker's loop and the handles the app uses to wake or stop it."""

    def __init__(self, db_path: Path, make_hub: Callable[[], Hub], every: float) -> None:
        self.db_path = db_path
        self.make_hub = make_hub
        self.every = every
        self._stop = threading.Event()
        self._wake = threading.Event()

    def poke(self) -> None:
        """Sync now (a decision was stored) rather than at the next tick."""
        self._wake.set()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()

    def run(self, post: Callable[[HubSynced], object]) -> None:
        """The thread worker's body: sync, report, wait, until stopped."""
        from store.db.connection import connect

        conn = connect(self.db_path)
        hub = self.make_hub()
        try:
            while not self._stop.is_set():
                self._wake.clear()
                post(self.sync_once(conn, hub))
                self._wake.wait(self.every)
        finally:
            hub.close()
            conn.close()

    def sync_once(self, conn: sqlite3.Connection, hub: Hub) -> HubSynced:
        from store.hub.server import HubError, HubOffline, HubRefused
        from store.hub.sync import local_state, sync

        try:
            result = sync(conn, hub)
        except HubError as exc:
            mode: HubMode = (
                "offline"
                if isinstance(exc, HubOffline)
                else "refused"
                if isinstance(exc, HubRefused)
                else "error"
            )
            return HubSynced(self._local(conn, hub, mode, str(exc)), None)
        except sqlite3.Error as exc:  # the local database busy for long: next tick
            return HubSynced(self._local(conn, hub, "error", f"local database: {exc}"), None)
        except Exception as exc:  # a bug must not end the syncing for the session
            return HubSynced(self._local(conn, hub, "error", f"{type(exc).__name__}: {exc}"), None)
        if result.gap is not None:
            from store.hub.sync import gap_message

            return HubSynced(self._local(conn, hub, "error", gap_message(result.gap)), result)
        state = HubState(
            "synced" if result.pending == 0 else "pending",
            result.hub,
            result.pending,
            local_state(conn, result.hub_id).synced_at,
            quarantined=result.quarantined,
        )
        return HubSynced(state, result)

    @staticmethod
    def _local(conn: sqlite3.Connection, hub: Hub, mode: HubMode, detail: str) -> HubState:
        from store.hub.sync import local_state

        try:
            here = local_state(conn)
        except sqlite3.Error:
            return HubState(mode, hub.name, detail=detail)
        return HubState(mode, hub.name, here.pending, here.synced_at, detail, here.quarantined)


def pg_hub_factory(url: str) -> Callable[[], Hub]:
    """The configured hub, with short timeouts: quitting waits for a sync under way, so a
    network that vanished mid-call must fail it soon rather than hold the quit up (a working
    network answers well within them)."""

    def make() -> Hub:
        from store.hub.server import PgHub

        return PgHub(
            url, connect_timeout=3, statement_timeout=10, application_name="gavel workstation"
        )

    return make


def starting_state(url: str | None) -> HubState:
    from store.hub.server import safe_url

    return HubState("starting", safe_url(url) if url else "hub")


def what_changed(previous: HubState | None, message: HubSynced) -> list[tuple[str, SeverityLevel]]:
    """(message, severity) notifications a sync deserves: new conflicts, newly quarantined
    events, and the hub going away or coming back — not every tick."""
    notes: list[tuple[str, SeverityLevel]] = []
    state, result = message.state, message.result
    if result is not None and result.new_conflicts:
        n = len(result.new_conflicts)
        notes.append(
            (
                f"{n} new conflict{'s' if n != 1 else ''} from the hub: reviewers decided "
                "differently (queue filter: conflicts)",
                "warning",
            )
        )
    if result is not None and result.rejected:
        notes.append(
            (
                f"{len(result.rejected)} hub event(s) refused and quarantined: "
                f"{_visible(result.rejected[0][2])}",
                "error",
            )
        )
    was = previous.mode if previous is not None else "starting"
    if state.mode in ("offline", "refused", "error") and state.mode != was:
        notes.append(
            (
                f"hub {state.mode}: {_visible(state.detail)} — decisions are kept here "
                "and sync when it is back",
                "warning" if state.mode == "offline" else "error",
            )
        )
    elif was in ("offline", "refused", "error") and state.mode in ("synced", "pending"):
        notes.append(("hub back: synced", "information"))
    return notes
