"""The report text, with claim spans and citation markers highlighted.

A Line-API widget: the text is wrapped once per width into (start, end) character ranges and
only the visible lines are rendered, each straight from the document with the spans that cross
it styled. A 40,000-word report scrolls and jumps to a claim without rebuilding anything.
The document is shown as text, character for character: nothing in it is parsed as markup, and
control, bidirectional and zero-width characters are drawn as visible stand-ins of the same
length (:func:`reviewer.textsafety.visible`), so they can neither drive the terminal nor
reorder or hide what the reviewer reads.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

from rich.cells import get_character_cell_size
from rich.style import Style
from textual.binding import Binding
from textual.cache import LRUCache
from textual.geometry import Region, Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

from reviewer.textsafety import visible
from tui.render.safe import SafeText as Text
from tui.widgets.markdown_table import Composed, layout_table, starts_table, table_end

__all__ = ["ReportText", "Span", "visible", "wrap"]


@dataclass(frozen=True, slots=True)
class Span:
    start: int
    end: int
    kind: str
    """'claim', 'cite', 'match', 'evidence' (the selected verdict's quoted sentences) or
    'marked' (what the benchmark marks, such as a blocked reference)."""
    key: int = 0
    """For claims: the claim id (the selected claim is drawn stronger)."""


_WORD = re.compile(r"\S+")


def wrap(text: str, width: int) -> list[tuple[int, int]]:
    """(start, end) offsets of display lines: word-wrapped, CJK-aware, newline-split."""
    return layout(text, width)[0]


def layout(text: str, width: int) -> tuple[list[tuple[int, int]], dict[int, Composed]]:
    """Display lines as (start, end) offsets, and the lines that Markdown tables compose
    (by display line index; their offsets are the table row they show, see
    :mod:`tui.widgets.markdown_table`)."""
    width = max(8, width)
    lines: list[tuple[int, int]] = []
    composed: dict[int, Composed] = {}
    physical: list[tuple[int, int]] = []
    position = 0
    for part in text.split("\n"):
        physical.append((position, position + len(part)))
        position += len(part) + 1
    index = 0
    while index < len(physical):
        start, end = physical[index]
        if text[start:end].lstrip().startswith("|") and starts_table(text, physical, index):
            stop = table_end(text, physical, index)
            for span, shown in layout_table(text, physical[index:stop], width):
                composed[len(lines)] = shown
                lines.append(span)
            index = stop
            continue
        line = text[start:end]
        if len(line) <= width and line.isascii():
            lines.append((start, end))
        elif line.isascii():
            _wrap_ascii(line, start, width, lines)
        else:
            _wrap_cells(text, start, end, width, lines)
        index += 1
    return lines, composed


def _wrap_ascii(line: str, offset: int, width: int, lines: list[tuple[int, int]]) -> None:
    """Word wrap one line of single-cell characters: one step per word, not per character."""
    line_start = 0
    for match in _WORD.finditer(line):
        word_start, word_end = match.span()
        if word_end - line_start > width and word_start > line_start:
            lines.append((offset + line_start, offset + word_start))
            line_start = word_start
        while word_end - line_start > width:  # a word longer than the line
            lines.append((offset + line_start, offset + line_start + width))
            line_start += width
    lines.append((offset + line_start, offset + len(line)))


def _wrap_cells(text: str, start: int, end: int, width: int, lines: list[tuple[int, int]]) -> None:
    """Wrap a line with wide (CJK) characters by terminal cells."""
    line_start = start
    cells = 0
    last_space = -1
    i = start
    while i < end:
        char = text[i]
        size = get_character_cell_size(char) if not char.isascii() else 1
        if cells + size > width and i > line_start:
            if last_space > line_start:
                lines.append((line_start, last_space + 1))
                line_start = last_space + 1
            else:
                lines.append((line_start, i))
                line_start = i
            cells = sum(
                get_character_cell_size(c) if not c.isascii() else 1 for c in text[line_start:i]
            )
            last_space = -1
        if char == " ":
            last_space = i
        cells += size
        i += 1
    lines.append((line_start, end))


class _Marks:
    """Spans sorted by start, found by position (bisect over starts, bounded by the longest
    span) and claims by id."""

    def __init__(self, spans: list[Span]) -> None:
        self.spans = sorted(spans, key=lambda s: (s.start, s.end))
        self._starts = [s.start for s in self.spans]
        self._longest = max((s.end - s.start for s in self.spans), default=0)
        self._claims: dict[int, list[Span]] = {}
        for span in self.spans:
            if span.kind == "claim":
                self._claims.setdefault(span.key, []).append(span)

    def crossing(self, start: int, end: int) -> list[Span]:
        lo = bisect.bisect_left(self._starts, start - self._longest)
        hi = bisect.bisect_right(self._starts, end)
        return [s for s in self.spans[lo:hi] if s.end > start and s.start < end]

    def claims(self, claim_id: int | None) -> list[Span]:
        return self._claims.get(claim_id, []) if claim_id is not None else []


class ReportText(ScrollView, can_focus=True):
    """Scrollable, wrapped report text with highlighted spans."""

    BINDINGS = [
        # Jump, never animate: a 40,000-word report is thousands of lines, and an animated
        # scroll there stopped short of the end on the first press.
        Binding("home", "edge(-1)", "Top", show=False, id="text.top"),
        Binding("end", "edge(1)", "Bottom", show=False, id="text.bottom"),
    ]

    COMPONENT_CLASSES = {
        "report-text--claim",
        "report-text--claim-selected",
        "report-text--cite",
        "report-text--match",
        "report-text--evidence",
        "report-text--marked",
        "report-text--heading",
        "report-text--table",
    }

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self._text = ""
        self._marks = _Marks([])
        """What the document shows whichever verdict is selected: claims, citations,
        benchmark marks, search matches."""
        self._evidence = _Marks([])
        """The selected verdict's evidence, kept apart: it changes on every selection, and
        only its lines (and the claims') repaint then."""
        self._lines: list[tuple[int, int]] = []
        self._composed: dict[int, Composed] = {}
        self._line_starts: list[int] = []
        self._wrapped_width = -1
        self._selected: int | None = None
        self._cache: LRUCache[int, Strip] = LRUCache(512)
        self._drawn_with: tuple[Style, int] = (Style(), 0)
        """The base style and width the cached lines were drawn with."""

    # -- content ---------------------------------------------------------------------------

    def set_document(self, text: str, spans: list[Span]) -> None:
        """Show a document from its top; the same document again (its report reloaded after
        another session's decision) keeps its wrapping and where the reviewer had scrolled,
        and takes the new marks."""
        shown = visible(text)
        if shown == self._text and self._lines:
            self.set_spans(spans)
            return
        self._text = shown
        self.set_spans(spans)
        self._wrapped_width = -1
        self._rewrap()
        self.scroll_to(0, 0, animate=False)

    def set_spans(self, spans: list[Span]) -> None:
        """Replace every mark (the evidence too): the whole text repaints."""
        self._marks = _Marks([s for s in spans if s.kind != "evidence"])
        self._evidence = _Marks([s for s in spans if s.kind == "evidence"])
        self._cache.clear()
        self.refresh()

    @property
    def spans(self) -> list[Span]:
        """Every mark shown, in document order (tests and the source view read them)."""
        return sorted(self._marks.spans + self._evidence.spans, key=lambda s: (s.start, s.end))

    def set_evidence(self, spans: list[Span]) -> None:
        """Mark where the selected verdict's evidence is (replacing the last verdict's marks)
        and bring the first place into view. Only the lines the old and new marks cross
        repaint: a keypress on a 40,000-word report redraws what changed, not the screen."""
        old, self._evidence = self._evidence, _Marks(spans)
        if old.spans == self._evidence.spans:
            return
        self._repaint(old.spans + self._evidence.spans)
        if spans and not self._visible(spans[0]):
            self.scroll_to_offset(spans[0].start)

    def select_claim(self, claim_id: int | None, *, scroll: bool = True) -> None:
        """Highlight one claim (and scroll to it); only the lines of the two claims repaint."""
        previous, self._selected = self._selected, claim_id
        if previous != claim_id:
            self._repaint(self._marks.claims(previous) + self._marks.claims(claim_id))
        target = next(iter(self._marks.claims(claim_id)), None)
        if scroll and target is not None and not self._visible(target):
            self.scroll_to_offset(target.start)

    def _repaint(self, spans: list[Span]) -> None:
        """Render again the display lines these spans cross, and repaint those on screen."""
        if not self._lines:
            return
        top, height, width = self.scroll_offset.y, self.size.height, self.size.width
        for span in spans:
            first = self.first_line_of(span.start)
            last = self.line_of(max(span.start, span.end - 1))
            for line in range(first, last + 1):
                self._cache.discard(line)
            start, stop = max(first, top), min(last + 1, top + height)
            if start < stop and width:
                self.refresh(Region(0, start - top, width, stop - start))

    def _visible(self, span: Span) -> bool:
        top = self.scroll_offset.y
        return top <= self.line_of(span.start) and self.line_of(span.end) < top + self.size.height

    def scroll_to_offset(self, offset: int) -> None:
        line = self.line_of(offset)
        self.scroll_to(y=max(0, line - self.size.height // 3), animate=False)

    def line_of(self, offset: int) -> int:
        return max(0, bisect.bisect_right(self._line_starts, offset) - 1)

    def first_line_of(self, offset: int) -> int:
        """The first display line showing ``offset`` (a wrapped table row spans several)."""
        line = self.line_of(offset)
        while (
            line > 0
            and self._line_starts[line - 1] == self._line_starts[line]
            and line - 1 in self._composed
        ):
            line -= 1
        return line

    def action_edge(self, direction: int) -> None:
        self.scroll_to(y=0 if direction < 0 else self.max_scroll_y, animate=False)

    @property
    def line_count(self) -> int:
        return len(self._lines)

    def visible_text(self) -> str:
        """The lines currently on screen (tests and screen readers)."""
        top = self.scroll_offset.y
        return "\n".join(
            self.display_line(i) for i in range(top, min(len(self._lines), top + self.size.height))
        )

    def display_line(self, index: int) -> str:
        """One display line as shown (a table row with its borders and padding)."""
        composed = self._composed.get(index)
        if composed is not None:
            return composed.plain(self._text)
        a, b = self._lines[index]
        return self._text[a:b]

    # -- layout ----------------------------------------------------------------------------

    def _rewrap(self) -> None:
        width = max(10, self.scrollable_content_region.width or self.size.width or 80)
        if width == self._wrapped_width:
            return
        self._wrapped_width = width
        self._lines, self._composed = layout(self._text, width)
        self._line_starts = [a for a, _ in self._lines]
        self._cache.clear()
        self.virtual_size = Size(width, len(self._lines))

    def on_resize(self) -> None:
        self._rewrap()

    # -- rendering -------------------------------------------------------------------------

    def render_lines(self, crop: Region) -> list[Strip]:
        """The base style once per repaint rather than once per line (it is worked out from
        the stylesheet); the cached lines hold it, so a new one (a theme) empties them."""
        style, width = self.rich_style, self.size.width
        if (style, width) != self._drawn_with:
            self._drawn_with = (style, width)
            self._cache.clear()
        return super().render_lines(crop)

    def render_line(self, y: int) -> Strip:
        """A display line, kept as drawn (cropped to the width, offsets set): lines scrolled
        back into view or repainted beside a changed one cost a lookup."""
        scroll_x, scroll_y = self.scroll_offset
        index = scroll_y + y
        style, width = self._drawn_with
        if index >= len(self._lines):
            return Strip.blank(width, style)
        if scroll_x:  # (the text wraps to the width: only a resize in progress gets here)
            line = self._render_index(index, style)
            return line.crop_extend(scroll_x, scroll_x + width, style).apply_offsets(
                scroll_x, index
            )
        cached = self._cache.get(index)
        if cached is None:
            line = self._render_index(index, style)
            cached = self._cache[index] = line.crop_extend(0, width, style).apply_offsets(0, index)
        return cached

    def _render_index(self, index: int, base: Style) -> Strip:
        composed = self._composed.get(index)
        if composed is not None:
            return self._render_composed(composed, base)
        start, end = self._lines[index]
        text = Text(self._text[start:end].rstrip("\n"), style=base, no_wrap=True, end="")
        line_start = self._line_starts[index]
        physical = self._text.rfind("\n", 0, line_start) + 1
        if self._text.startswith("#", physical):
            text.stylize(self.get_component_rich_style("report-text--heading"))
        for span in self._crossing(start, end):
            text.stylize(
                self.get_component_rich_style(self._style_name(span)),
                max(0, span.start - start),
                min(end, span.end) - start,
            )
        return Strip(text.render(self.app.console), text.cell_len)

    def _crossing(self, start: int, end: int) -> list[Span]:
        """The marks crossing [start, end), in the order they are drawn (by position; where
        later ones overlap earlier ones, they win)."""
        evidence = self._evidence.crossing(start, end)
        marks = self._marks.crossing(start, end)
        if not evidence:
            return marks
        return sorted(marks + evidence, key=lambda s: (s.start, s.end))

    def _style_name(self, span: Span) -> str:
        if span.kind == "claim":
            selected = span.key == self._selected
            return "report-text--claim-selected" if selected else "report-text--claim"
        return f"report-text--{span.kind}"

    def _render_composed(self, line: Composed, base: Style) -> Strip:
        """A table line: its layout pieces as they are, its text pieces styled like any other
        text (claims, citations and matches fall on the cells that hold them)."""
        text = Text(style=base, no_wrap=True, end="")
        border = self.get_component_rich_style("report-text--table")
        heading = self.get_component_rich_style("report-text--heading")
        placed: list[tuple[int, int, int]] = []
        for number, piece in enumerate(line.pieces):
            if isinstance(piece, str):
                text.append(piece, border)
                continue
            placed.append((len(text), piece[0], piece[1]))
            text.append(
                self._text[piece[0] : piece[1]],
                heading if line.header or number in line.strong else "",
            )
        for at, start, end in placed:
            for span in self._crossing(start, end):
                text.stylize(
                    self.get_component_rich_style(self._style_name(span)),
                    at + max(0, span.start - start),
                    at + min(end, span.end) - start,
                )
        return Strip(text.render(self.app.console), text.cell_len)
