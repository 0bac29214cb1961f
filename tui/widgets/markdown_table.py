"""Markdown tables laid out as tables in the report text, offsets intact.

A report's comparison table written as ``| Bank | Rate | … |`` lines wraps into an unreadable
run of pipes in a narrow pane. Here a table block (a row, a ``|---|`` separator, more rows) is
laid out as boxed columns: each column as wide as its widest cell, narrowed to fit the pane,
cells word-wrapped inside their column, aligned as the separator says. A table whose columns
cannot fit without cutting words in two (six columns in a 36-column pane) is shown as records
instead: each row's cells under its column headings.

The text itself is never rewritten: each display line is a list of *pieces*, either a range of
the original text (a cell's words) or literal layout (borders, padding). Claim spans, citation
markers and search matches are character offsets into the original text, so they land on the
right cell of the right line, and scrolling to an offset finds its row.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field

from rich.cells import cell_len

ROW = re.compile(r"^\s*\|.*\|\s*$")
SEPARATOR = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(?:\|\s*:?-{3,}:?\s*)*\|?\s*$")
_CELL_SPLIT = re.compile(r"(?<!\\)\|")
_WORD = re.compile(r"\S+")
MIN_COLUMN = 4

Piece = tuple[int, int] | str
"""A range of the original text, or literal layout text."""


@dataclass(slots=True)
class Composed:
    """One display line of a table."""

    pieces: list[Piece] = field(default_factory=list)
    header: bool = False
    """Every text piece is a heading (the table's first row)."""
    strong: frozenset[int] = frozenset()
    """Indices of pieces shown as headings (a record's column names)."""

    def plain(self, text: str) -> str:
        return "".join(p if isinstance(p, str) else text[p[0] : p[1]] for p in self.pieces)


def starts_table(text: str, lines: list[tuple[int, int]], index: int) -> bool:
    """Whether physical line ``index`` heads a table (a row followed by a separator)."""
    if index + 1 >= len(lines):
        return False
    a, b = lines[index]
    c, d = lines[index + 1]
    return bool(ROW.match(text[a:b])) and bool(SEPARATOR.match(text[c:d]))


def table_end(text: str, lines: list[tuple[int, int]], index: int) -> int:
    """One past the last physical line of the table headed at ``index``."""
    end = index + 2
    while end < len(lines) and ROW.match(text[lines[end][0] : lines[end][1]]):
        end += 1
    return end


def _cells(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """The cells of one row as stripped ranges (the outer pipes dropped)."""
    line = text[start:end]
    bounds = [m.start() for m in _CELL_SPLIT.finditer(line)]
    cells = []
    for left, right in itertools.pairwise(bounds):
        a, b = start + left + 1, start + right
        while a < b and text[a].isspace():
            a += 1
        while b > a and text[b - 1].isspace():
            b -= 1
        cells.append((a, b))
    return cells


def _alignments(text: str, start: int, end: int, n: int) -> list[str]:
    out = []
    for part in [p.strip() for p in text[start:end].strip().strip("|").split("|")][:n]:
        if part.startswith(":") and part.endswith(":"):
            out.append("center")
        elif part.endswith(":"):
            out.append("right")
        else:
            out.append("left")
    return out + ["left"] * (n - len(out))


def _widths(natural: list[int], longest: list[int], width: int) -> list[int]:
    """Column widths that fit ``width`` (borders included): the widest columns give way, first
    down to their longest word (so words stay whole), then further if they must."""
    n = len(natural)
    budget = max(n * MIN_COLUMN, width - (3 * n + 1))
    widths = [max(1, w) for w in natural]
    for floor in ([max(MIN_COLUMN, w) for w in longest], [MIN_COLUMN] * n):
        while sum(widths) > budget:
            shrinkable = [i for i in range(n) if widths[i] > floor[i]]
            if not shrinkable:
                break
            widest = max(shrinkable, key=lambda i: widths[i])
            widths[widest] -= 1
    return widths


def _wrap_cell(text: str, start: int, end: int, width: int) -> list[tuple[int, int]]:
    """Word-wrap one cell's range to ``width`` cells; a word longer than that is cut."""
    words = [(m.start(), m.end()) for m in _WORD.finditer(text, start, end)]
    if not words:
        return [(start, start)]
    out: list[tuple[int, int]] = []
    line_start, line_end = words[0]
    for a, b in words[1:]:
        if cell_len(text[line_start:b]) <= width:
            line_end = b
            continue
        out.extend(_cut(text, line_start, line_end, width))
        line_start, line_end = a, b
    out.extend(_cut(text, line_start, line_end, width))
    return out


def _cut(text: str, start: int, end: int, width: int) -> list[tuple[int, int]]:
    """A range as lines of at most ``width`` cells (one line unless a word is too long)."""
    out = []
    while cell_len(text[start:end]) > width:
        cut, cells = start, 0
        while cut < end and cells + cell_len(text[cut]) <= width:
            cells += cell_len(text[cut])
            cut += 1
        cut = max(cut, start + 1)
        out.append((start, cut))
        start = cut
    out.append((start, end))
    return out


def _rule(widths: list[int], left: str, middle: str, right: str) -> str:
    return left + middle.join("─" * (w + 2) for w in widths) + right


def layout_table(
    text: str, rows: list[tuple[int, int]], width: int
) -> list[tuple[tuple[int, int], Composed]]:
    """Display lines of one table: (the original range they stand for, their pieces).

    ``rows`` are the table's physical lines, the separator second.
    """
    header, separator, *body = rows
    parsed = [_cells(text, *header), *(_cells(text, *row) for row in body)]
    n = max(len(cells) for cells in parsed)
    natural, longest = _column_sizes(text, parsed, n)
    if sum(max(MIN_COLUMN, w) for w in longest) > width - (3 * n + 1):
        return _records(text, rows, parsed, width)
    widths = _widths(natural, longest, width)
    align = _alignments(text, *separator, n)
    table_start, table_end_offset = rows[0][0], rows[-1][1]
    out: list[tuple[tuple[int, int], Composed]] = [
        ((table_start, table_start), Composed([_rule(widths, "┌", "┬", "┐")]))
    ]
    for number, (row, cells) in enumerate(zip([header, *body], parsed, strict=True)):
        out.extend((row, line) for line in _row_lines(text, cells, widths, align, number == 0))
        if number == 0:
            out.append((separator, Composed([_rule(widths, "├", "┼", "┤")])))
    out.append(((table_end_offset, table_end_offset), Composed([_rule(widths, "└", "┴", "┘")])))
    return out


def _column_sizes(
    text: str, parsed: list[list[tuple[int, int]]], n: int
) -> tuple[list[int], list[int]]:
    """Each column's widest cell and longest word, in terminal cells."""
    natural = [0] * n
    longest = [0] * n
    for cells in parsed:
        for i, (a, b) in enumerate(cells):
            natural[i] = max(natural[i], cell_len(text[a:b]))
            longest[i] = max([longest[i], *(cell_len(w) for w in text[a:b].split())])
    return natural, longest


def _row_lines(
    text: str, cells: list[tuple[int, int]], widths: list[int], align: list[str], header: bool
) -> list[Composed]:
    """One row's display lines: its cells word-wrapped in their columns, as tall as the
    tallest cell (a row with fewer cells than the table leaves the rest empty)."""
    n = len(widths)
    wrapped = [
        _wrap_cell(text, *cells[i], widths[i]) if i < len(cells) else [(0, 0)] for i in range(n)
    ]
    lines = []
    for k in range(max(len(w) for w in wrapped)):
        line = Composed(["│"], header=header)
        for i in range(n):
            part = wrapped[i][k] if k < len(wrapped[i]) and i < len(cells) else None
            _append_cell(line, text, part, widths[i], align[i])
        lines.append(line)
    return lines


def _append_cell(
    line: Composed, text: str, part: tuple[int, int] | None, width: int, align: str
) -> None:
    """One cell's line, padded to its column's width as the separator aligns it."""
    used = cell_len(text[part[0] : part[1]]) if part is not None else 0
    pad = width - used
    left = pad // 2 if align == "center" else (pad if align == "right" else 0)
    line.pieces.append(" " + " " * left)
    if part is not None and part[1] > part[0]:
        line.pieces.append(part)
    line.pieces.append(" " * (pad - left) + " │")


def _records(
    text: str, rows: list[tuple[int, int]], parsed: list[list[tuple[int, int]]], width: int
) -> list[tuple[tuple[int, int], Composed]]:
    """A table too wide for the pane, one record per row: each cell under its heading
    ("Heading: value" when the heading leaves room, else the value on the lines below)."""
    headings = parsed[0]
    out: list[tuple[tuple[int, int], Composed]] = []
    rule = "─" * max(1, width - 1)
    for row, cells in zip(rows[2:], parsed[1:], strict=True):
        out.append(((row[0], row[0]), Composed([rule])))
        for i, cell in enumerate(cells):
            name = headings[i] if i < len(headings) else (row[0], row[0])
            room = width - cell_len(text[name[0] : name[1]]) - 2
            if room >= 12:
                first = _wrap_cell(text, cell[0], cell[1], room)[0]
                out.append((row, Composed([name, ": ", first], strong=frozenset({0}))))
                rest = (first[1], cell[1])
            else:
                out.append((row, Composed([name], strong=frozenset({0}))))
                rest = cell
            while rest[0] < rest[1] and text[rest[0]].isspace():
                rest = (rest[0] + 1, rest[1])
            if rest[1] > rest[0]:
                for part in _wrap_cell(text, rest[0], rest[1], width - 2):
                    out.append((row, Composed(["  ", part])))
    out.append(((rows[-1][1], rows[-1][1]), Composed([rule])))
    return out
