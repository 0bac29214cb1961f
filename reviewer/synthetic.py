"""Pieces every synthetic-run generator shares: seeded pseudo-words, JSON lines, and where a
generator lists the errors it planted (beside the bundle folder, which holds bundle files
only)."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any, TextIO

_SYLLABLES = [c + v for c in "bcdfghklmnprstvz" for v in "aeiou"]


def vocabulary(rng: random.Random, size: int = 3000) -> list[str]:
    words: set[str] = set()
    while len(words) < size:
        words.add("".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(1, 4))))
    return sorted(words)


def sentence(rng: random.Random, vocab: list[str], n: int) -> str:
    words = [rng.choice(vocab) for _ in range(n)]
    words[0] = words[0].capitalize()
    return " ".join(words)


def line(handle: TextIO, record: dict[str, Any]) -> None:
    handle.write(json.dumps(record, ensure_ascii=False, separators=(",", ":")))
    handle.write("\n")


def planted_path(folder: Path) -> Path:
    """Where the list of a bundle's planted errors is written (:mod:`reviewer.planted`)."""
    return folder.with_name(folder.name + "-planted.jsonl")
