"""Review logs as files: one review event per JSONL line, naming its subject portably.

A database id means nothing in another database, so every event names what it is about by a
*target* built from the bundle's own ids:

* ``s:<suite>/<report>/<kind>/<subject>`` — a subject: what a verdict is about in any judge run
  (decisions, flags, their undo/redo);
* ``r:<suite>/<report>`` — a whole report (overall ratings);
* ``p:<uuid>`` — a ground-truth proposal (propose, accept, reject);
* ``i:<reviewer name>`` — a name itself: a ``claim`` by which a reviewer's key takes over the
  name's unsigned events (written before signing; :mod:`store.reviewlog.events`).

Logs written before decisions belonged to subjects name one run's judgment
(``j:<suite>/<report>/<run>/<kind>/<subject>``); they are read as the subject, with the run kept
in the event's ``run``. Two databases that imported the same bundles resolve a target to the
same thing, which is what makes a log written by one reviewer mergeable into another's.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Literal

from pydantic import ValidationError

from reviewer.actions import DECISION_ACTIONS
from reviewer.assignment import decode as decode_assignment
from reviewer.assignment import decode_release
from reviewer.errors import InputError
from reviewer.review import ReviewEvent

LogAction = Literal[
    "confirm",
    "override",
    "adjudicate",
    "flag",
    "rate",
    "propose",
    "accept",
    "reject",
    "undo",
    "redo",
    "claim",
    "assign",
    "unassign",
]


class LogEvent(ReviewEvent):
    """A :class:`ReviewEvent` whose action may also be a proposal's accept or reject, or an
    assignment of work or its release.

    The schema's ``review_event`` table allows them; ``reviewer.actions.Action`` does not list
    them yet. Once it does, this subclass is the model itself and can be replaced by it.
    """

    action: LogAction  # type: ignore[assignment, unused-ignore]


TargetType = Literal["subject", "report", "proposal", "identity"]

TARGET_TYPES: dict[str, TargetType] = {
    "s": "subject",
    "r": "report",
    "p": "proposal",
    "i": "identity",
}

ACTION_TARGETS: dict[str, frozenset[TargetType]] = {
    **{action: frozenset({"subject"}) for action in (*DECISION_ACTIONS, "flag")},
    "rate": frozenset({"report"}),
    "propose": frozenset({"proposal"}),
    "accept": frozenset({"proposal"}),
    "reject": frozenset({"proposal"}),
    "undo": frozenset({"subject", "report"}),
    "redo": frozenset({"subject", "report"}),
    "claim": frozenset({"identity"}),
    "assign": frozenset({"subject", "report"}),
    "unassign": frozenset({"subject", "report"}),
}
"""Which kind of subject each action can be about (a flag on a proposal is meaningless)."""

ASSIGNING: frozenset[str] = frozenset({"assign"})
"""Actions whose value is an assignment (:mod:`reviewer.assignment`), checked on merge."""


@dataclass(frozen=True, slots=True)
class Target:
    """A parsed portable target; ``parts`` are the ids in the order the prefix defines."""

    type: TargetType
    parts: tuple[str, ...]

    @property
    def suite(self) -> str | None:
        return None if self.type == "proposal" else self.parts[0]


def parse_target(text: str) -> Target:
    """Split a target into its ids; ``ValueError`` says what is wrong with a malformed one."""
    prefix, sep, rest = text.partition(":")
    kind = TARGET_TYPES.get(prefix)
    if not sep or kind is None:
        raise ValueError(f"target {text!r} does not start with s:, r:, p: or i:")
    if kind == "subject":
        # The subject is last and may itself contain '/', so split only three times.
        parts = tuple(rest.split("/", 3))
        expected = 4
    elif kind == "report":
        parts = tuple(rest.split("/"))
        expected = 2
    else:
        parts = (rest,)
        expected = 1
    if len(parts) != expected or not all(parts):
        raise ValueError(f"target {text!r} is not of the form {_FORMS[kind]}")
    return Target(kind, parts)


_FORMS: dict[TargetType, str] = {
    "subject": "s:<suite>/<report>/<kind>/<subject>",
    "report": "r:<suite>/<report>",
    "proposal": "p:<uuid>",
    "identity": "i:<reviewer name>",
}


def check_event(event: ReviewEvent) -> Target:
    """The event's parsed target, after checking the action fits it; ``ValueError`` if not."""
    target = parse_target(event.target)
    allowed = ACTION_TARGETS.get(event.action, frozenset())
    if target.type not in allowed:
        raise ValueError(f"a {event.action!r} event cannot target a {target.type}")
    if event.action in ("undo", "redo") and not event.supersedes:
        raise ValueError(
            f"a {event.action!r} event must name the event it reverses in 'supersedes'"
        )
    if str(event.action) == "claim":  # a LogEvent's action
        _check_claim(event, target)
    if event.action in ASSIGNING:
        decode_assignment(event.value)
    elif str(event.action) == "unassign":  # a LogEvent's action
        if event.supersedes is not None:
            raise ValueError("an 'unassign' event names what it revokes in its value")
        decode_release(event.value)
    return target


def _check_claim(event: ReviewEvent, target: Target) -> None:
    """A claim is a signed act of the name's own reviewer, and reverses nothing itself."""
    if event.key is None:
        raise ValueError("a 'claim' event must be signed (it binds a name to a key)")
    if target.parts[0] != event.reviewer:
        raise ValueError(
            f"a 'claim' by {event.reviewer!r} names {target.parts[0]!r}: a reviewer claims "
            "only their own name"
        )
    if event.supersedes is not None or event.value is not None:
        raise ValueError("a 'claim' event has no value and supersedes nothing")


def normalized(data: dict[str, object]) -> dict[str, object]:
    """An event of a log from before subjects (a ``j:`` target naming one run's judgment) as
    the subject event it is, with that run kept in ``run``; other events unchanged."""
    target = data.get("target")
    if isinstance(target, str) and target.startswith("j:") and not data.get("key"):
        parts = target[2:].split("/", 4)
        if len(parts) == 5 and all(parts):
            suite, report, run, kind, subject = parts
            return {
                **data,
                "target": f"s:{suite}/{report}/{kind}/{subject}",
                "run": data.get("run") or run,
            }
    return data


def event_line(event: ReviewEvent) -> str:
    """One JSONL line (no newline): fields in model order, UTF-8 text kept as is."""
    return json.dumps(event.model_dump(), ensure_ascii=False, separators=(",", ":"))


def read_events(lines: Iterable[str], file: str) -> Iterator[tuple[int, LogEvent]]:
    """Parse a JSONL review log lazily: (1-based line number, event); blank lines are skipped.

    A malformed line raises :class:`InputError` naming the file, the line and the field.
    """
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        data = _json_line(line, file, number)
        if not isinstance(data, dict):
            raise InputError(file, "expected one JSON object per line", line=number)
        try:
            event = LogEvent.model_validate(normalized(data))
        except ValidationError as exc:
            first = exc.errors()[0]
            field = ".".join(str(p) for p in first["loc"]) or None
            raise InputError(file, first["msg"], line=number, field=field) from None
        try:
            check_event(event)
        except ValueError as exc:
            field = "supersedes" if "supersedes" in str(exc) else "target"
            raise InputError(file, str(exc), line=number, field=field) from None
        yield number, event


def _json_line(line: str, file: str, number: int) -> object:
    try:
        return json.loads(line)
    except json.JSONDecodeError as exc:
        raise InputError(file, f"not JSON ({exc.msg})", line=number) from None
    except RecursionError:  # the parser recurses once per level of nesting
        raise InputError(
            file, "arrays or objects nested too deep to read (an event is flat)", line=number
        ) from None
