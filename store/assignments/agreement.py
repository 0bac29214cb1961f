"""Reviewer-vs-reviewer agreement on the overlap (the subjects handed to two or more
reviewers), per verdict kind and per reviewer, with where each overlap subject stands.

Only the assigned reviewers' own standing decisions count (an adjudication is not a reading of
one's own; someone who decided an overlap subject without being handed it is left out, so the
figures measure the independent reviews the overlap asked for).
"""

from __future__ import annotations

import sqlite3
from collections import Counter, defaultdict
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

from reviewer.overlap import (
    KindOnOverlap,
    ReviewerOnOverlap,
    kind_on_overlap,
    reviewers_on_overlap,
)
from reviewer.registry import get_kind
from store.assignments.progress import overlap_reviewers
from store.reviewlog.conflicts import standing_decisions

Fact = tuple[str, str, str | None, str | None]
"""A subject's (kind, target, decision status, decided value)."""


@dataclass(frozen=True, slots=True)
class OverlapReport:
    subjects: int
    """Subjects on the overlap."""
    pending: int
    """Of those, subjects not every assigned reviewer decided yet."""
    agreed: int
    open: int
    """Decided differently and not adjudicated: the estimates keep the judge's value."""
    adjudicated: int
    kinds: tuple[KindOnOverlap, ...]
    reviewers: tuple[ReviewerOnOverlap, ...]
    open_targets: tuple[str, ...]


def overlap_agreement(
    conn: sqlite3.Connection,
    n_resamples: int = 1000,
    seed: int = 0,
    hidden: AbstractSet[int] = frozenset(),
) -> OverlapReport:
    """Where the overlap stands and how far its reviewers agree; ``hidden`` subjects (the
    viewing reviewer's blind ones, :mod:`store.assignments.blind`) count as decided by
    nobody: pending, in no estimate, never named as open."""
    overlap = overlap_reviewers(conn)
    if not overlap:
        return OverlapReport(0, 0, 0, 0, 0, (), (), ())
    units, facts = _as_seen(_units(conn, overlap), _facts(conn, list(overlap)), hidden)
    ordered = sorted(units)
    settled = [_adjudicated(facts[sid]) for sid in ordered]
    complete = _complete(overlap, units)
    statuses = Counter(facts[sid][2] for sid in overlap)
    agreed = Counter(facts[sid][2] for sid in complete)
    open_ids = [sid for sid in overlap if facts[sid][2] == "conflict"]
    return OverlapReport(
        subjects=len(overlap),
        pending=len(overlap) - len(complete),
        agreed=agreed["unanimous"] + agreed["single"],
        open=statuses["conflict"],
        adjudicated=statuses["adjudicated"],
        kinds=_kinds(units, facts, n_resamples, seed),
        reviewers=reviewers_on_overlap([units[sid] for sid in ordered], settled),
        open_targets=tuple(sorted(facts[sid][1] for sid in open_ids)),
    )


def _as_seen(
    units: dict[int, dict[str, str]], facts: dict[int, Fact], hidden: AbstractSet[int]
) -> tuple[dict[int, dict[str, str]], dict[int, Fact]]:
    """The decisions and statuses with those on ``hidden`` subjects taken out."""
    if not hidden:
        return units, facts
    return (
        {sid: unit for sid, unit in units.items() if sid not in hidden},
        {sid: (f[0], f[1], None, None) if sid in hidden else f for sid, f in facts.items()},
    )


def _complete(overlap: dict[int, tuple[str, ...]], units: dict[int, dict[str, str]]) -> list[int]:
    """Overlap subjects every assigned reviewer decided."""
    return [sid for sid in overlap if len(units.get(sid, {})) >= len(overlap[sid])]


def _adjudicated(fact: Fact) -> str | None:
    return fact[3] if fact[2] == "adjudicated" else None


def _units(
    conn: sqlite3.Connection, overlap: dict[int, tuple[str, ...]]
) -> dict[int, dict[str, str]]:
    """Per overlap subject, each assigned reviewer who decided it -> their standing value."""
    units: dict[int, dict[str, str]] = {}
    for sid, sides in standing_decisions(conn, list(overlap)):
        assigned = set(overlap[sid])
        units[sid] = {
            s.reviewer: s.value
            for s in sides
            if _name(s.reviewer) in assigned and s.value is not None
        }
    return units


def _kinds(
    units: dict[int, dict[str, str]], facts: dict[int, Fact], n_resamples: int, seed: int
) -> tuple[KindOnOverlap, ...]:
    """Agreement per verdict kind, on the subjects two or more reviewers decided."""
    by_kind: dict[str, list[dict[str, str]]] = defaultdict(list)
    for sid in sorted(units):
        by_kind[facts[sid][0]].append(units[sid])
    found = []
    for name, kind_units in sorted(by_kind.items()):
        kind = get_kind(name)
        if kind is not None and any(len(u) >= 2 for u in kind_units):
            found.append(kind_on_overlap(name, kind_units, kind.scale, n_resamples, seed))
    return tuple(found)


def _name(shown: str) -> str:
    """The reviewer name an assignment names, from a name as shown (``ana#1f2e3d4c`` where
    two identities share it, ``ana (unsigned)`` for events from before signing)."""
    return shown.partition("#")[0].removesuffix(" (unsigned)")


def _facts(conn: sqlite3.Connection, subject_ids: list[int]) -> dict[int, Fact]:
    """Per subject: (kind, target, decision status, decided value)."""
    found: dict[int, Fact] = {}
    for start in range(0, len(subject_ids), 500):
        chunk = subject_ids[start : start + 500]
        for sid, kind, target, status, value in conn.execute(
            f"""SELECT s.id, s.kind, s.target, d.status, d.value FROM subject s
                LEFT JOIN decision d ON d.subject_id = s.id
                WHERE s.id IN ({",".join("?" * len(chunk))})""",
            chunk,
        ):
            found[int(sid)] = (str(kind), str(target), status, value)
    return found
