"""Handing review work to named reviewers, with an overlap reviewed independently.

An assignment is an event like a decision (``assign``, signed by whoever handed the work out)
about a subject or a whole report; its value says to whom, in which batch, and how many
reviewers the target went to (``k``). A target that went to two or more reviewers is on the
*overlap*: those reviewers decide it blind to each other, and their agreement there measures
how reproducible the human labels are. Work is taken back by an ``unassign`` event (a
:class:`Release`), which names the assignments it ends. This module is the pure part: dealing
targets to reviewers, and the events' value shapes.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from reviewer.textsafety import hidden_characters

T = TypeVar("T")

MAX_NAME = 200
"""The longest reviewer name an event may carry (as the review log's model says)."""


class AssignmentError(ValueError):
    """An assignment that cannot be made as asked (no reviewers, a bad share, a bad name)."""


def check_reviewer_name(name: str) -> str:
    """A reviewer name as people will read it: no control or hidden characters (they could
    make one name pass for another), no slash or colon (names appear in targets and
    ``name:value`` lists), not blank, not too long."""
    stripped = name.strip()
    if not stripped:
        raise AssignmentError("a reviewer name is required")
    hidden = hidden_characters(stripped)
    if hidden:
        raise AssignmentError(
            f"a reviewer name with hidden or control characters ({', '.join(hidden)})"
        )
    if any(c in stripped for c in "/:,") or len(stripped) > MAX_NAME:
        raise AssignmentError(
            f"reviewer name {stripped!r} may not contain '/', ':' or ',' "
            f"nor be longer than {MAX_NAME} characters"
        )
    return stripped


@dataclass(frozen=True, slots=True)
class Assignment:
    """What an ``assign`` event's value says."""

    to: str
    batch: str
    k: int
    """How many reviewers the target went to in this batch (2 or more: on the overlap)."""

    @property
    def overlap(self) -> bool:
        return self.k >= 2

    def encode(self) -> str:
        return json.dumps(
            {"to": self.to, "batch": self.batch, "k": self.k},
            ensure_ascii=False,
            sort_keys=True,
            separators=(",", ":"),
        )


def decode(value: str | None) -> Assignment:
    """An ``assign`` event's value; ``ValueError`` says what is wrong with a malformed one
    (a merged log is checked with this before anything of it is stored)."""
    try:
        data = json.loads(value or "")
    except json.JSONDecodeError:
        raise ValueError("an assignment's value is a JSON object {to, batch, k}") from None
    if not isinstance(data, dict) or set(data) != {"to", "batch", "k"}:
        raise ValueError("an assignment's value is a JSON object {to, batch, k}")
    to, batch, k = data["to"], data["batch"], data["k"]
    if not isinstance(to, str) or not isinstance(batch, str) or type(k) is not int or k < 1:
        raise ValueError("an assignment names a reviewer, a batch and k ≥ 1")
    try:
        name = check_reviewer_name(to)
    except AssignmentError as exc:
        raise ValueError(str(exc)) from None
    return Assignment(name, batch, k)


@dataclass(frozen=True, slots=True)
class Release:
    """What an ``unassign`` event's value says: the reviewer ``giver`` no longer holds the
    event's target through the ``assign`` events named in ``revokes``.

    A release names the assignments it saw rather than the reviewer alone, so that whoever
    holds what is the same whatever order events arrive in: an assignment a release never saw
    (made elsewhere at the same time, or later) still stands."""

    giver: str
    batch: str
    revokes: tuple[str, ...]

    def encode(self) -> str:
        return json.dumps(
            {"from": self.giver, "batch": self.batch, "revokes": sorted(set(self.revokes))},
            ensure_ascii=False,
            sort_keys=True,
            separators=(",", ":"),
        )


def decode_release(value: str | None) -> Release:
    """An ``unassign`` event's value; ``ValueError`` says what is wrong with a malformed one."""
    shape = "a release's value is a JSON object {from, batch, revokes}"
    try:
        data = json.loads(value or "")
    except json.JSONDecodeError:
        raise ValueError(shape) from None
    if not isinstance(data, dict) or set(data) != {"from", "batch", "revokes"}:
        raise ValueError(shape)
    giver, batch, revokes = data["from"], data["batch"], data["revokes"]
    if not isinstance(giver, str) or not isinstance(batch, str) or not _event_ids(revokes):
        raise ValueError("a release names a reviewer, a batch and the assignments it revokes")
    try:
        name = check_reviewer_name(giver)
    except AssignmentError as exc:
        raise ValueError(str(exc)) from None
    return Release(name, batch, tuple(revokes))


def _event_ids(revokes: object) -> bool:
    """Whether a release's ``revokes`` is a non-empty list of event ids."""
    return (
        isinstance(revokes, list)
        and bool(revokes)
        and all(isinstance(u, str) and 8 <= len(u) <= 64 for u in revokes)
    )


def deal(
    targets: Sequence[str],
    reviewers: Sequence[str],
    overlap: float,
    k: int = 2,
    seed: int = 0,
) -> dict[str, tuple[str, ...]]:
    """Who reviews each target: a random ``overlap`` share of the targets (rounded, at least
    one when the share is positive) goes to ``k`` different reviewers, the rest to one each.

    Targets are dealt in the order given, each to the reviewers with the least work so far,
    so every reviewer's share is spread along that order: dealt a plan in its order, reviewers
    who each work through their own share in order together cover the plan from its start,
    which is what its estimates assume. The overlap is drawn at random, not taken from the
    front, so it represents the whole; the same arguments always deal the same way."""
    names = _checked(reviewers, overlap, k)
    order = list(dict.fromkeys(targets))
    rng = random.Random(seed)
    shared = 0 if overlap == 0 or not order else max(1, round(overlap * len(order)))
    on_overlap = set(rng.sample(range(len(order)), shared))
    load = dict.fromkeys(names, 0)
    dealt: dict[str, tuple[str, ...]] = {}
    for position, target in enumerate(order):
        copies = k if position in on_overlap else 1
        chosen = sorted(names, key=lambda name: (load[name], rng.random()))[:copies]
        for name in chosen:
            load[name] += 1
        dealt[target] = tuple(sorted(chosen))
    return dealt


def _checked(reviewers: Sequence[str], overlap: float, k: int) -> list[str]:
    """The reviewers' names, once the deal asked for is one that can be made."""
    names = [check_reviewer_name(r) for r in reviewers]
    if not names:
        raise AssignmentError("name at least one reviewer")
    if len(set(names)) != len(names):
        raise AssignmentError("a reviewer is named twice")
    if not 0.0 <= overlap <= 1.0:
        raise AssignmentError(f"the overlap is a share between 0 and 1, not {overlap}")
    if overlap > 0 and not 2 <= k <= len(names):
        raise AssignmentError(
            f"an overlap needs k between 2 and the number of reviewers ({len(names)}), not {k}"
        )
    return names


def mine_first(items: Sequence[T], mine: Callable[[T], bool]) -> list[T]:
    """A reviewer's own assignments first, then the rest, each part in its own order (the
    queue's or the plan's): a stable partition, so nothing else about the order changes."""
    return [item for item in items if mine(item)] + [item for item in items if not mine(item)]
