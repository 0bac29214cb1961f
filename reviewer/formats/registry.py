"""Input formats by name: ``gavel import PATH --format NAME``.

Each non-native format is a module exposing ``read(path: Path, suite_id: str | None) -> Bundle``;
a module still missing from the tree is simply not offered.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path

from reviewer.models import Bundle

Reader = Callable[[Path, "str | None"], Bundle]

FORMAT_MODULES: dict[str, tuple[str, str]] = {
    "drb": ("reviewer.formats.drb", "DeepResearch Bench repository layout (RACE, FACT)"),
    "dr3": ("reviewer.formats.dr3", "DR3-Eval run"),
    "livedrbench": ("reviewer.formats.livedrbench", "LiveDRBench claims and predictions"),
    "drbench": ("reviewer.formats.drbench", "DR. Bench (RigorousBench) tasks and reports"),
}


def available() -> dict[str, str]:
    """Format name -> description, native first, only those whose module exists."""
    out = {"native": "Gavel bundle folder or .jsonl file (docs/format.md)"}
    for name, (module_name, description) in FORMAT_MODULES.items():
        try:
            importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name == module_name:
                continue
            raise
        out[name] = description
    return out


def reader(name: str) -> Reader:
    module_name, _ = FORMAT_MODULES[name]
    module = importlib.import_module(module_name)
    read: Reader = module.read
    return read
