"""An in-memory hub with the PostgreSQL hub's contract (append-only, unique uuids, ids in push
order, suites registered by content hash) and a switch that takes it offline: the interface's
tests use it where a real server would only add start-up time."""

from __future__ import annotations

import threading
import uuid as uuidlib
from collections.abc import Sequence
from typing import Any

from store.hub.server import EVENT_FIELDS, HubOffline, HubRow, PushOutcome, SuiteIdentity


class MemoryHub:
    def __init__(self, name: str = "memory://hub") -> None:
        self._name = name
        self.id = str(uuidlib.uuid4())
        self.events: list[tuple[str | None, dict[str, Any]]] = []
        self.by_uuid: dict[str, dict[str, Any]] = {}
        self.suites: dict[str, SuiteIdentity] = {}
        self.online = True
        self.lock = threading.Lock()
        self.calls = 0

    @property
    def name(self) -> str:
        return self._name

    def _check(self) -> None:
        self.calls += 1
        if not self.online:
            raise HubOffline(f"hub {self._name} unreachable: connection refused")

    def hub_id(self) -> str:
        self._check()
        return self.id

    def register_suites(self, suites: Sequence[SuiteIdentity]) -> list[str]:
        self._check()
        problems = []
        with self.lock:
            for suite in suites:
                there = self.suites.setdefault(suite.ext_id, suite)
                if there.content_hash != suite.content_hash:
                    problems.append(f"suite {suite.ext_id!r} differs on the hub")
        return problems

    def push(self, rows: Sequence[tuple[str | None, dict[str, Any]]]) -> PushOutcome:
        self._check()
        outcome = PushOutcome()
        with self.lock:
            for suite, event in rows:
                row = {name: event.get(name) for name in EVENT_FIELDS}
                there = self.by_uuid.get(row["uuid"])
                if there is not None:
                    outcome.already_there += 1
                    if there != row:
                        outcome.diverged.append(row["uuid"])
                    continue
                self.by_uuid[row["uuid"]] = row
                self.events.append((suite, row))
                outcome.added += 1
        return outcome

    def pull(self, after: int, limit: int) -> list[HubRow]:
        self._check()
        with self.lock:
            return [
                HubRow(i + 1, dict(event))
                for i, (_, event) in enumerate(self.events[after : after + limit], start=after)
            ]

    def dense_after(self) -> int:
        return 0

    def close(self) -> None:
        pass
