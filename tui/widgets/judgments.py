"""The judgments of one report, grouped by subtask and dimension, one line each.

A Line-API list: every row is exactly one line, so the widget never measures its items, and a
decision repaints one row. Group headers are skipped by the cursor. A row shows what the judge
said and what counts now, and whether a human decided:

    ✎ claim       correct → incorrect    c3 “Riders took 4.2 million…”
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass

from rich.style import Style
from textual.binding import Binding
from textual.cache import LRUCache
from textual.geometry import Region, Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from reviewer.registry import get_kind, kind_order
from store.views.screens import JudgmentView, ReportView, subject_label
from tui.numfmt import short_value
from tui.render.safe import SafeText as Text
from tui.widgets.report_text import visible

VALUE_WIDTH = 22


ACCEPTED = "⊙"
"""Accepted by a trust rule without review: neither the judge's alone (·) nor a human's."""


def status_glyph(
    judgment: JudgmentView, blind: bool = False, accepted: bool = False
) -> tuple[str, str]:
    """(glyph, style) for a judgment's review state (``accepted``: by a trust rule)."""
    if judgment.status == "conflict":
        return "⚠", "bold red"
    if judgment.flagged:
        return "⚑", "bold yellow"
    if judgment.decided:
        return ("✎", "bold magenta") if judgment.differs and not blind else ("✓", "green")
    if judgment.judge is None:
        return "!", "bold red"
    if accepted:
        return ACCEPTED, "cyan"
    if judgment.suspicious and not blind:
        return "◆", "bold yellow"
    return "·", "dim"


_KIND_PREFIX = re.compile(r"^(dr3|drb2|drb|cf1|race)_")


COMPACT = 58
"""Below this width a row puts the subject before the values: on an 80-column terminal the
list is about 35 columns wide, and the subject id is what tells rows apart."""


def judgment_prompt(
    view: ReportView,
    judgment: JudgmentView,
    blind: bool = False,
    width: int = 200,
    accepted: bool = False,
) -> Text:
    """glyph, kind, judge → effective value, subject (claims with the start of their text);
    narrow: glyph, kind, subject, values."""
    glyph, style = status_glyph(judgment, blind, accepted)
    kind = get_kind(judgment.kind)
    # The framework shows in the group header; its prefix would only crowd the column.
    label = _KIND_PREFIX.sub("", kind.name if kind else judgment.kind)[:11]
    line = Text(no_wrap=True, overflow="ellipsis", end="")
    line.append(f"{glyph} ", style)
    if width < COMPACT:
        line.append(f"{label[:7]:<7} ", "bold")
        line.append(subject_label(view, judgment), "cyan")
        line.append(" ")
        line.append_text(_values(judgment, blind))
        return line
    line.append(f"{label:<11} ", "bold")
    values = _values(judgment, blind)
    values.pad_right(max(0, VALUE_WIDTH - values.cell_len))
    line.append_text(values)
    line.append(" ")
    line.append(subject_label(view, judgment), "cyan")
    if judgment.claim_id is not None and judgment.ref_idx is None:
        claim = view.claims.get(judgment.claim_id)
        if claim is not None:
            line.append(f" “{visible(claim.fact)}”", "dim")
    return line


def _values(judgment: JudgmentView, blind: bool) -> Text:
    values = Text()
    if blind and not judgment.decided:
        values.append("(judge hidden)", "dim italic")
    else:
        judge = short_value(judgment.judge) if judgment.judge is not None else "error"
        if judgment.decided and judgment.effective != judgment.judge:
            values.append(judge, "strike dim")
            values.append(" → ")
            values.append(short_value(str(judgment.effective)), "bold magenta")
        else:
            values.append(judge, "bold" if judgment.decided else "")
    return values


def group_key(view: ReportView, judgment: JudgmentView) -> tuple[int, str]:
    """(sort position, header) of the group a judgment is listed under."""
    if judgment.subtask_id is not None:
        for sub in view.subtasks:
            if sub.id == judgment.subtask_id:
                importance = f"P2({sub.group})" if sub.importance == "P2a" else sub.importance
                return sub.ordinal, f"{sub.ext} · {importance} · {sub.text}"
    if judgment.criterion_id is not None:
        criterion = view.criteria.get(judgment.criterion_id)
        if criterion is not None:
            return 10_000, f"{criterion.framework} · {criterion.dimension}"
    return 20_000, judgment.kind


def ordered(view: ReportView) -> list[tuple[str, list[JudgmentView]]]:
    groups: dict[tuple[int, str], list[JudgmentView]] = defaultdict(list)
    for judgment in view.judgments:
        groups[group_key(view, judgment)].append(judgment)
    out: list[tuple[str, list[JudgmentView]]] = []
    for (_, header), items in sorted(groups.items()):
        items.sort(key=lambda j: (kind_order(j.kind), j.claim_id or 0, j.ref_idx or 0, j.id))
        out.append((header, items))
    return out


@dataclass(slots=True)
class _Row:
    header: str | None
    judgment_id: int | None


class JudgmentList(ScrollView, can_focus=True):
    """Judgments of the open report; ``Highlighted`` is posted when the cursor moves."""

    BINDINGS = [
        Binding("down", "cursor(1)", "Down", show=False, id="list.down"),
        Binding("up", "cursor(-1)", "Up", show=False, id="list.up"),
        Binding("pagedown", "page(1)", "Page down", show=False, id="list.page_down"),
        Binding("pageup", "page(-1)", "Page up", show=False, id="list.page_up"),
        Binding("home", "edge(-1)", "First", show=False, id="list.first"),
        Binding("end", "edge(1)", "Last", show=False, id="list.last"),
    ]

    COMPONENT_CLASSES = {"judgment-list--header", "judgment-list--cursor"}

    cursor: reactive[int] = reactive(-1, init=False, repaint=False)
    """(Repaint is the watcher's: the two rows it changed, not the list.)"""

    class Highlighted(Message):
        def __init__(self, judgment_id: int | None) -> None:
            super().__init__()
            self.judgment_id = judgment_id

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.view: ReportView | None = None
        self.blind = False
        self.accepted: frozenset[int] = frozenset()
        """Judgments a trust rule accepted (drawn ⊙ until a human decides them)."""
        self.order: list[int] = []
        self._rows: list[_Row] = []
        self._row_of: dict[int, int] = {}
        self._by_id: dict[int, JudgmentView] = {}
        self._cache: LRUCache[int, tuple[bool, bool, int, Strip]] = LRUCache(1024)
        """Rendered rows by row (as drawn, offsets set): whether it was the cursor's, drawn
        focused, at what width."""

    # -- content ---------------------------------------------------------------------------

    def show(
        self, view: ReportView, blind: bool = False, accepted: frozenset[int] = frozenset()
    ) -> None:
        self.view = view
        self.blind = blind
        self.accepted = accepted
        self._rows = []
        self.order = []
        self._row_of = {}
        self._by_id = {j.id: j for j in view.judgments}
        for header, items in ordered(view):
            self._rows.append(_Row(header, None))
            for judgment in items:
                self._row_of[judgment.id] = len(self._rows)
                self._rows.append(_Row(None, judgment.id))
                self.order.append(judgment.id)
        self._cache.clear()
        self.virtual_size = Size(self.size.width, len(self._rows))
        self.scroll_to(0, 0, animate=False)
        first = self._row_of[self.order[0]] if self.order else -1
        if self.cursor == first:
            self.post_message(self.Highlighted(self.selected_id))
        self.cursor = first
        self.refresh()

    def refresh_judgment(self, judgment: JudgmentView) -> None:
        if self.view is None or judgment.id not in self._by_id:
            return
        self._by_id[judgment.id] = judgment
        for i, existing in enumerate(self.view.judgments):
            if existing.id == judgment.id:
                self.view.judgments[i] = judgment
        row = self._row_of[judgment.id]
        self._invalidate(row)

    def _invalidate(self, row: int) -> None:
        self._cache.discard(row)
        self.refresh_line(row)

    def refresh_line(self, row: int) -> None:
        y = row - self.scroll_offset.y
        if 0 <= y < self.size.height:
            self.refresh(Region(0, y, self.size.width, 1))

    # -- cursor ----------------------------------------------------------------------------

    @property
    def selected_id(self) -> int | None:
        if 0 <= self.cursor < len(self._rows):
            return self._rows[self.cursor].judgment_id
        return None

    @property
    def highlighted(self) -> int | None:
        return self.cursor if self.cursor >= 0 else None

    def select_id(self, judgment_id: int) -> None:
        row = self._row_of.get(judgment_id)
        if row is not None:
            self.cursor = row

    def watch_cursor(self, old: int, new: int) -> None:
        self._invalidate(old)
        self._invalidate(new)
        self._scroll_to_row(new)
        self.post_message(self.Highlighted(self.selected_id))

    def _scroll_to_row(self, row: int) -> None:
        top = self.scroll_offset.y
        height = max(1, self.size.height)
        if row < top + 1:
            self.scroll_to(y=max(0, row - 1), animate=False)
        elif row >= top + height - 1:
            self.scroll_to(y=row - height + 2, animate=False)

    def _step(self, start: int, step: int) -> int:
        row = start + step
        while 0 <= row < len(self._rows):
            if self._rows[row].judgment_id is not None:
                return row
            row += step
        return start

    def action_cursor(self, step: int) -> None:
        self.cursor = self._step(self.cursor, 1 if step > 0 else -1)

    def action_cursor_down(self) -> None:
        self.action_cursor(1)

    def action_cursor_up(self) -> None:
        self.action_cursor(-1)

    def action_page(self, direction: int) -> None:
        target = self.cursor + direction * max(1, self.size.height - 2)
        target = max(0, min(len(self._rows) - 1, target))
        if self._rows and self._rows[target].judgment_id is None:
            target = (
                self._step(target, direction)
                if self._step(target, direction) != target
                else self._step(target, -direction)
            )
        self.cursor = target

    def action_edge(self, direction: int) -> None:
        if self.order:
            self.cursor = self._row_of[self.order[0 if direction < 0 else -1]]

    # -- rendering -------------------------------------------------------------------------

    def on_resize(self) -> None:
        self._cache.clear()
        self.virtual_size = Size(self.size.width, len(self._rows))

    def render_line(self, y: int) -> Strip:
        scroll_y = self.scroll_offset.y
        row = scroll_y + y
        width = self.size.width
        if row >= len(self._rows) or self.view is None:
            return Strip.blank(width, self.rich_style)
        selected = row == self.cursor
        # The cursor's colour follows focus: a row drawn before the list took focus is stale.
        focused = selected and self.has_focus
        cached = self._cache.get(row)
        if cached is not None and cached[:3] == (selected, focused, width):
            return cached[3]
        strip = self._render_row(row, selected, width).apply_offsets(0, row)
        self._cache[row] = (selected, focused, width, strip)
        return strip

    def _render_row(self, row: int, selected: bool, width: int) -> Strip:
        assert self.view is not None
        entry = self._rows[row]
        base = self.rich_style
        if entry.judgment_id is None:
            text = Text(visible(entry.header or ""), no_wrap=True, end="")
            style = self.get_component_rich_style("judgment-list--header")
        else:
            jid = entry.judgment_id
            text = judgment_prompt(
                self.view, self._by_id[jid], self.blind, width, jid in self.accepted
            )
            style = self.get_component_rich_style("judgment-list--cursor") if selected else Style()
        text.style = base
        text.truncate(width, overflow="ellipsis", pad=True)
        if entry.judgment_id is None or selected:
            text.stylize(style)
        return Strip(text.render(self.app.console), width).crop_extend(0, width, base)
