"""Bulk passes over a whole run: the cyclic garbage collector paused while they allocate.

A full recompute or an import builds hundreds of thousands of short-lived, acyclic objects
(rows, verdict tuples, score dicts). Each allocation burst triggers the cyclic collector, which
rescans the survivors again and again: measured at a quarter to a third of a DailyReport-size
full recompute, for no garbage it could free (plain reference counting frees all of it).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def gc_paused() -> Iterator[None]:
    """Disable the cyclic collector for the block (process-wide), restoring its state after."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
