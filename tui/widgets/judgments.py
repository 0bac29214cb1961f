"""The judgments of one report, grouped by subtask and dimension, one line each.

Group headers are disabled options, so the cursor moves only between judgments. A line shows
what the judge said and what counts now, and whether a human decided:

    ✎ claim   c3 “Riders took 4.2 million…”        correct → incorrect
"""

from __future__ import annotations

from collections import defaultdict

from rich.text import Text
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from reviewer.scoring.registry import get_kind
from store.views import JudgmentView, ReportView, subject_label
from tui.widgets.report_text import visible

KIND_ORDER = {"ins": 0, "rat": 1, "claim": 2, "consistency": 3}


def status_glyph(judgment: JudgmentView, blind: bool = False) -> tuple[str, str]:
    """(glyph, style) for a judgment's review state."""
    if judgment.status == "conflict":
        return "⚠", "bold red"
    if judgment.flagged:
        return "⚑", "bold yellow"
    if judgment.decided:
        return ("✎", "bold magenta") if judgment.differs and not blind else ("✓", "green")
    if judgment.judge is None:
        return "!", "bold red"
    return "·", "dim"


VALUE_WIDTH = 22


def judgment_prompt(view: ReportView, judgment: JudgmentView, blind: bool = False,
                    width: int = 200) -> Text:
    """glyph, kind, judge → effective value, subject (claims with a snippet of their text)."""
    glyph, style = status_glyph(judgment, blind)
    kind = get_kind(judgment.kind)
    label = (kind.name if kind else judgment.kind)[:11]
    line = Text(no_wrap=True, overflow="ellipsis", end="")
    line.append(f"{glyph} ", style)
    line.append(f"{label:<11} ", "bold")
    values = Text()
    if blind and not judgment.decided:
        values.append("(judge hidden)", "dim italic")
    else:
        judge = judgment.judge if judgment.judge is not None else "error"
        if judgment.decided and judgment.effective != judgment.judge:
            values.append(judge, "strike dim")
            values.append(" → ")
            values.append(str(judgment.effective), "bold magenta")
        else:
            values.append(judge, "bold" if judgment.decided else "")
    values.pad_right(max(0, VALUE_WIDTH - values.cell_len))
    line.append_text(values)
    line.append(" ")
    line.append(subject_label(view, judgment), "cyan")
    if judgment.claim_id is not None and judgment.ref_idx is None:
        claim = view.claims.get(judgment.claim_id)
        if claim is not None:
            fact = visible(claim.fact)
            line.append(f" “{fact}”", "dim")
    line.truncate(max(20, width), overflow="ellipsis")
    return line


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
        items.sort(key=lambda j: (KIND_ORDER.get(j.kind, 9), j.claim_id or 0, j.ref_idx or 0,
                                  j.id))
        out.append((header, items))
    return out


class JudgmentList(OptionList):
    """Judgments of the open report; option ids are ``j<judgment id>``."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.view: ReportView | None = None
        self.blind = False
        self.order: list[int] = []

    def show(self, view: ReportView, blind: bool = False) -> None:
        self.view = view
        self.blind = blind
        options: list[Option] = []
        self.order = []
        for header, items in ordered(view):
            heading = Text(header, style="bold reverse")
            heading.truncate(self._line_width(), overflow="ellipsis")
            options.append(Option(heading, disabled=True))
            for judgment in items:
                prompt = judgment_prompt(view, judgment, blind, self._line_width())
                options.append(Option(prompt, id=f"j{judgment.id}"))
                self.order.append(judgment.id)
        self.set_options(options)
        if self.order:
            self.highlighted = self.get_option_index(f"j{self.order[0]}")

    def refresh_judgment(self, judgment: JudgmentView) -> None:
        if self.view is None:
            return
        for i, existing in enumerate(self.view.judgments):
            if existing.id == judgment.id:
                self.view.judgments[i] = judgment
        self.replace_option_prompt(f"j{judgment.id}", judgment_prompt(
            self.view, judgment, self.blind, self._line_width()))

    def _line_width(self) -> int:
        # Options wrap at the widget's width; one judgment, one line: cut to fit instead.
        return max(20, self.scrollable_content_region.width - 1 or 80)

    @property
    def selected_id(self) -> int | None:
        option = self.highlighted_option
        if option is None or option.id is None:
            return None
        return int(option.id[1:])

    def select_id(self, judgment_id: int) -> None:
        self.highlighted = self.get_option_index(f"j{judgment_id}")
