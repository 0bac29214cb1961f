"""The list of known judge errors a review order is measured against.

The sample's MISTAKES.md files end with a fenced ``planted`` block, and a synthetic run with
planted errors writes ``planted.jsonl``: one JSON object per wrong verdict, in the bundle's own
terms (``report``, ``kind``, and ``criterion`` / ``claim`` / ``ref`` / ``key`` as in
``judgments.jsonl``), with the ``right`` value. ``found`` marks errors found on review rather
than planted; ``type`` names the kind of planted error (synthetic runs).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

_BLOCK = re.compile(r"^```planted[ \t]*\n(.*?)^```", re.MULTILINE | re.DOTALL)


@dataclass(frozen=True, slots=True)
class Planted:
    report: str
    kind: str
    criterion: str | None = None
    claim: str | None = None
    ref: int | None = None
    key: str | None = None
    right: str = ""
    found: bool = False
    type: str = ""


def parse(line: str) -> Planted:
    record = json.loads(line)
    ref = record.get("ref")
    return Planted(
        str(record["report"]),
        str(record["kind"]),
        record.get("criterion"),
        record.get("claim"),
        int(ref) if ref is not None else None,
        record.get("key"),
        str(record.get("right", "")),
        bool(record.get("found", False)),
        str(record.get("type", "")),
    )


def read_planted(text: str) -> list[Planted]:
    """Every entry of every ``planted`` block in a Markdown text."""
    out = []
    for block in _BLOCK.finditer(text):
        out += [parse(line) for line in block.group(1).splitlines() if line.strip()]
    return out


def read_planted_path(path: Path) -> list[Planted]:
    """A MISTAKES.md (its ``planted`` blocks) or a ``planted.jsonl``."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".jsonl":
        return [parse(line) for line in text.splitlines() if line.strip()]
    return read_planted(text)
