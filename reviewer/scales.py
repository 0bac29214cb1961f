"""Verdict scales: the allowed values of every kind of verdict, their labels, keys and numbers.

A verdict is stored as a short canonical *code* (``"0.5"``, ``"correct"``, ``"support"``,
``"7.25"``) rather than a float, because most scales are categorical and because
string codes survive JSONL round-trips and merges byte for byte. Scoring modules ask the
scale for the number a code stands for; the workstation asks it for the key that sets it.
"""

from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass, field


class ScaleError(ValueError):
    """A raw value that does not belong to a scale."""


@dataclass(frozen=True, slots=True)
class Choice:
    """One categorical value of a scale."""

    code: str
    label: str
    key: str
    numeric: float | None
    aliases: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Scale:
    """A set of allowed verdict values.

    Categorical scales list their ``choices``; continuous scales (RACE's 0-10) give ``low`` and
    ``high`` and accept any finite number in between, stored with ``repr``-exact precision.
    """

    name: str
    label: str
    choices: tuple[Choice, ...] = ()
    low: float | None = None
    high: float | None = None
    _lookup: dict[str, Choice] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        for choice in self.choices:
            for alias in (choice.code, choice.label, *choice.aliases):
                self._lookup[alias.strip().lower()] = choice

    @property
    def continuous(self) -> bool:
        return not self.choices

    def normalize(self, raw: object) -> str:
        """Map a raw value (number, string, bool) to its canonical code, or raise ScaleError."""
        if self.continuous:
            return self._normalize_number(raw)
        if isinstance(raw, bool):
            key = "true" if raw else "false"
        elif isinstance(raw, int | float):
            key = _number_code(float(raw))
        elif isinstance(raw, str):
            key = raw.strip().lower()
            with contextlib.suppress(ValueError):
                key = _number_code(float(key))
        else:
            raise ScaleError(f"{raw!r} is not a value of scale {self.name}")
        choice = self._lookup.get(key)
        if choice is None:
            allowed = ", ".join(c.code for c in self.choices)
            raise ScaleError(f"{raw!r} is not one of {allowed} (scale {self.name})")
        return choice.code

    def _normalize_number(self, raw: object) -> str:
        if isinstance(raw, bool) or not isinstance(raw, int | float | str):
            raise ScaleError(f"{raw!r} is not a number (scale {self.name})")
        try:
            number = float(raw)
        except ValueError as exc:
            raise ScaleError(f"{raw!r} is not a number (scale {self.name})") from exc
        if not math.isfinite(number):
            raise ScaleError(f"{raw!r} is not a finite number (scale {self.name})")
        if self.low is not None and number < self.low:
            raise ScaleError(f"{number} is below {self.low} (scale {self.name})")
        if self.high is not None and number > self.high:
            raise ScaleError(f"{number} is above {self.high} (scale {self.name})")
        return _number_code(number)

    def numeric(self, code: str | None) -> float | None:
        """The number a stored code stands for (None for no value or a non-numeric class)."""
        if code is None:
            return None
        if self.continuous:
            return float(code)
        choice = self._lookup.get(code)
        return None if choice is None else choice.numeric

    def choice(self, code: str) -> Choice | None:
        return self._lookup.get(code)

    def label_of(self, code: str | None) -> str:
        if code is None:
            return "—"
        if self.continuous:
            return code
        choice = self._lookup.get(code)
        return code if choice is None else choice.label

    def by_key(self, key: str) -> Choice | None:
        for choice in self.choices:
            if choice.key == key:
                return choice
        return None


def _number_code(number: float) -> str:
    """Shortest exact text of a number: 1.0 -> "1", 0.5 -> "0.5", 7.25 -> "7.25"."""
    if number == int(number) and abs(number) < 1e15:
        return str(int(number))
    return repr(number)


TERNARY = Scale(
    "ternary",
    "0 / 0.5 / 1",
    (
        Choice("0", "not satisfied", "0", 0.0, ("no", "fail")),
        Choice("0.5", "partially", "h", 0.5, ("partial", "half")),
        Choice("1", "satisfied", "1", 1.0, ("yes", "full")),
    ),
)
CLAIM = Scale(
    "claim",
    "correct / incorrect / unknown",
    (
        Choice("correct", "Correct", "c", 1.0, ("true",)),
        Choice("incorrect", "Incorrect", "x", 0.0, ("false",)),
        Choice("unknown", "Unknown", "u", 0.0, ("none",)),
    ),
)
CONSISTENCY = Scale(
    "consistency",
    "support / conflict / unknown",
    (
        Choice("support", "support", "s", 1.0, ("supported", "supports")),
        Choice("conflict", "conflict", "f", 0.0, ("conflicts", "contradict")),
        Choice("unknown", "unknown", "u", 0.0, ()),
    ),
)
SUPPORT = Scale(
    "support",
    "supported / unsupported / unknown",
    (
        Choice("supported", "supported", "s", 1.0, ("support",)),
        Choice("unsupported", "unsupported", "x", 0.0, ("not supported", "not support")),
        Choice("unknown", "unknown", "u", None, ()),
    ),
)
SCORE10 = Scale("score10", "continuous 0–10", low=0.0, high=10.0)
UNIT = Scale("unit", "continuous 0–1", low=0.0, high=1.0)
RATING4 = Scale(
    "rating4",
    "1 Unhelpful … 4 Perfect",
    (
        Choice("1", "Unhelpful", "1", 1.0),
        Choice("2", "Deficient", "2", 2.0),
        Choice("3", "Acceptable", "3", 3.0),
        Choice("4", "Perfect", "4", 4.0),
    ),
)
BINARY = Scale(
    "binary",
    "true / false",
    (
        Choice("true", "true", "1", 1.0, ("yes", "1")),
        Choice("false", "false", "0", 0.0, ("no", "0")),
    ),
)

SCALES: dict[str, Scale] = {
    s.name: s for s in (TERNARY, CLAIM, CONSISTENCY, SUPPORT, SCORE10, UNIT, RATING4, BINARY)
}
