"""Typed messages between workers, widgets and screens."""

from __future__ import annotations

from textual.message import Message

from reviewer.impact import Impact
from store.backend.commands import WriteResult
from store.sqlite.changes import Change
from store.views.screens import History, Progress, QueueRow, Rank, ReportView, ScoreLine


class QueueLoaded(Message):
    def __init__(self, rows: list[QueueRow], progress: Progress, elapsed: float) -> None:
        super().__init__()
        self.rows = rows
        self.progress = progress
        self.elapsed = elapsed


class QueueRowsChanged(Message):
    """Some reports' rows changed (after decisions made on the report screen)."""

    def __init__(self, rows: list[QueueRow]) -> None:
        super().__init__()
        self.rows = rows


class SearchDone(Message):
    def __init__(self, query: str, report_ids: set[int]) -> None:
        super().__init__()
        self.query = query
        self.report_ids = report_ids


class ImpactsComputed(Message):
    def __init__(self, impacts: dict[int, Impact], remaining: int) -> None:
        super().__init__()
        self.impacts = impacts
        self.remaining = remaining


class ReportLoaded(Message):
    def __init__(
        self,
        view: ReportView,
        scores: list[ScoreLine],
        rank: Rank | None,
        history: dict[int, History],
        elapsed: float,
    ) -> None:
        super().__init__()
        self.view = view
        self.scores = scores
        self.rank = rank
        self.history = history
        self.elapsed = elapsed


class DecisionStored(Message):
    """The writer committed a command (or refused it); posted to the app, which hands the
    result to the report screen on the stack."""

    def __init__(self, result: WriteResult) -> None:
        super().__init__()
        self.result = result


class DatabaseChanged(Message):
    """Another process committed decisions (or imported, activated, merged): screens refresh
    what it touched."""

    def __init__(self, change: Change) -> None:
        super().__init__()
        self.change = change
