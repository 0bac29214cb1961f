"""Queue filters and ordering, as plain data: the screen only draws what this selects."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from reviewer.impact import Impact
from store.views.screens import QueueRow

STATUSES = ("all", "new", "in progress", "done")


@dataclass(frozen=True, slots=True)
class QueueFilter:
    suite: str | None = None
    """One benchmark run at a time by default: their columns differ (key b switches)."""
    system: str | None = None
    domain: str | None = None
    status: str = "all"
    undecided: bool = False
    differs: bool = False
    conflicts: bool = False
    flagged: bool = False
    suspicious: bool = False
    """Only reports with undecided verdicts that suspicion flags point to."""
    hide_accepted: bool = False
    """Hide reports whose undecided verdicts a trust rule accepted, all of them
    (:mod:`store.trust.rules`): nothing left there needs review."""
    settled: frozenset[int] = frozenset()
    """Those reports (the screen keeps it current)."""
    search: str = ""
    matches: frozenset[int] | None = None
    sort: str = "default"
    """'default' (suite, task, system), 'impact', 'suspicion', or a column key."""
    descending: bool = False
    toggles: tuple[str, ...] = field(
        default=("undecided", "differs", "conflicts", "flagged", "suspicious", "hide_accepted")
    )

    def toggled(self, name: str) -> QueueFilter:
        if name not in self.toggles:
            raise ValueError(f"no toggle {name}")
        flipped: dict[str, Any] = {name: not getattr(self, name)}
        return replace(self, **flipped)

    def next_status(self) -> QueueFilter:
        return replace(self, status=STATUSES[(STATUSES.index(self.status) + 1) % len(STATUSES)])

    def cleared(self) -> QueueFilter:
        return QueueFilter(suite=self.suite, sort=self.sort, descending=self.descending)

    def keep(self, row: QueueRow) -> bool:
        return (
            self._in_scope(row)
            and not self._toggled_out(row)
            and (self.matches is None or row.report_id in self.matches)
        )

    def _in_scope(self, row: QueueRow) -> bool:
        """The row is of the chosen run, system, domain and review status."""
        return (
            (self.suite is None or row.suite == self.suite)
            and (self.system is None or row.system == self.system)
            and (self.domain is None or row.domain == self.domain)
            and (self.status == "all" or row.status == self.status)
        )

    def _toggled_out(self, row: QueueRow) -> bool:
        """A toggle that is on hides the row: it lacks what the toggle asks for."""
        return any(getattr(self, name) and _HIDES[name](self, row) for name in self.toggles)

    def active(self) -> list[tuple[str, str]]:
        """(what, binding id of the key that sets it) of every filter that is on."""
        out = [
            (f"{name}={value}", f"queue.{name}")
            for name, value in (("system", self.system), ("domain", self.domain))
            if value
        ]
        if self.status != "all":
            out.append((f"status={self.status}", "queue.status"))
        out += [
            (_toggle_label(name), f"queue.{name}") for name in self.toggles if getattr(self, name)
        ]
        if self.search:
            out.append((f"search “{self.search}”", "queue.search"))
        return out

    def describe(self, labels: Mapping[str, str] | None = None) -> str:
        """One line for the status bar; ``labels`` names sort columns as the table heads them."""
        parts = []
        if self.suite:
            parts.append(f"suite={self.suite}")
        if self.system:
            parts.append(f"system={self.system}")
        if self.domain:
            parts.append(f"domain={self.domain}")
        if self.status != "all":
            parts.append(f"status={self.status}")
        parts += [_toggle_label(name) for name in self.toggles if getattr(self, name)]
        if self.search:
            parts.append(f"search “{self.search}”")
        order = {
            "default": "task",
            "impact": "impact (the most one verdict flip can move the first headline "
            "score / the others together)",
            "suspicion": "suspicion (undecided verdicts the flags point to, strongest first)",
        }.get(self.sort, self.sort)
        order = (labels or {}).get(order, order)
        parts.append(f"order: {order}{' ↓' if self.descending else ''}")
        return "  ·  ".join(parts)


_HIDES: dict[str, Callable[[QueueFilter, QueueRow], bool]] = {
    "undecided": lambda f, row: row.decided >= row.total,
    "differs": lambda f, row: not row.differs,
    "conflicts": lambda f, row: not row.conflicts,
    "flagged": lambda f, row: not row.flags,
    "suspicious": lambda f, row: not row.suspects,
    "hide_accepted": lambda f, row: row.report_id in f.settled,
}
"""Each toggle: whether it hides a row (when on)."""


def _toggle_label(name: str) -> str:
    return {"differs": "judge≠human", "hide_accepted": "accepted hidden"}.get(name, name)


def select(rows: list[QueueRow], flt: QueueFilter, impacts: dict[int, Impact]) -> list[QueueRow]:
    kept = [r for r in rows if flt.keep(r)]
    if flt.sort == "impact":
        return sorted(
            kept, key=lambda r: impacts.get(r.report_id, Impact(-1, -1, None)).key(), reverse=True
        )
    if flt.sort == "suspicion":
        # Most suspicious first; impact breaks ties (and orders the reports with no flags).
        return sorted(
            kept,
            key=lambda r: (r.suspicion, impacts.get(r.report_id, Impact(-1, -1, None)).key()),
            reverse=True,
        )
    if flt.sort != "default":
        return sorted(kept, key=lambda r: sort_value(r, flt.sort, impacts), reverse=flt.descending)
    return kept


def sort_value(row: QueueRow, column: str, impacts: dict[int, Impact]) -> tuple[int, object]:
    """Comparable value of a column; missing values sort last."""
    if column in ("task", "system", "domain", "report"):
        return (0, getattr(row, column))
    if column == "progress":
        return (0, row.decided / row.total if row.total else 0.0)
    if column == "differs":
        return (0, row.differs)
    if column == "suspects":
        return (0, (row.suspicion, row.suspects))
    if column == "impact":
        return (0, impacts.get(row.report_id, Impact(-1, -1, None)).key())
    value = row.adjudicated.get(column)
    return (1, 0.0) if value is None else (0, value)


MOVING_SORTS = frozenset({"suspicion", "impact"})
"""Orders that change as reports are reviewed: a decided verdict takes its suspicion and
impact away, so a report reviewed sinks. ``n`` on the report screen walks what is left in
them (:func:`step_target`); another such order joins by its name here."""


def step_target(
    order: list[int],
    previous: list[int],
    current: int,
    visited: list[int],
    step: int,
    moving: bool,
) -> int | None:
    """The report ``n`` (``step`` 1) or ``p`` (-1) opens from ``current``.

    ``order`` is the queue's order now (its rows brought up to date), ``previous`` the order
    the report was opened from, ``visited`` the reports opened since, in turn. In an order
    that moves (``moving``), ``n`` opens the first report of the order as it stands that has
    not been opened yet — what is left, strongest first — and ``p`` goes back the way ``n``
    came. In a fixed order both step along it; a report that has left it (a filter no longer
    matches) is stepped from where it was.
    """
    if moving:
        return _along_visits(order, current, visited, step)
    if current in order:
        at = order.index(current) + step
        return order[at] if 0 <= at < len(order) else None
    now = set(order)
    at = previous.index(current) if current in previous else -1
    around = previous[at + 1 :] if step > 0 else reversed(previous[:at])
    return next((rid for rid in around if rid in now), None)


def _along_visits(order: list[int], current: int, visited: list[int], step: int) -> int | None:
    """n and p in an order that moves: the history first, then what is left."""
    at = visited.index(current) if current in visited else len(visited) - 1
    if 0 <= at + step < len(visited):
        return visited[at + step]
    if step < 0:
        return None
    seen = set(visited) | {current}
    return next((rid for rid in order if rid not in seen), None)
