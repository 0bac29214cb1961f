"""DR. Bench rubric point scales, read from the rubric text itself.

Every DR. Bench rubric (query-specific or general) ends with its own point scale, and the judge
is told to answer only with a value that scale lists (spec §4.1). The released task file writes
those scales in several ways, all of which are read here:

- ``Yes=2, No=0`` and ``Yes=2, Partial=1, No=0`` (with or without a final full stop);
- ``Full (all listed)=4`` or ``Full detail=6`` for the top answer (read as Yes);
- qualifiers before or after the points, in ASCII or full-width brackets, one level nested:
  ``Partial (one body)=1``, ``Partial=1 (if only one side is covered)``,
  ``Partial（if …）=1``, ``No(omit (a) or (b) or accessions)=0``;
- a Partial *range* ``Partial (1–3 areas)=1–3`` (the points a Partial earns are then the
  judge's own number in the range, or under the framework's ``partial_range`` option its
  midpoint, low or high end);
- inverted scales where the wanted answer is No: ``No=3, Partial=1 (…), Yes=0``.

The verdict a judge or reviewer gives is the *answer* (Yes, Partial or No); the points it earns
come from the rubric's own scale, so an inverted rubric needs no special verdict.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

ANSWERS: tuple[str, ...] = ("yes", "partial", "no")

_PAREN = r"(?:[(（](?:[^()（）]|[(（][^()（）]*[)）])*[)）])"
_LABEL = r"(?:Yes|Full(?:[ \t]+detail)?|Partial|No)"
_POINTS = r"\d+(?:\.\d+)?(?:\s*[–—-]\s*\d+(?:\.\d+)?)?"
_ITEM = rf"{_LABEL}\s*{_PAREN}?\s*[=＝]\s*{_POINTS}\s*{_PAREN}?"
_SCALE = re.compile(rf"{_ITEM}(?:\s*[,;，；]\s*{_ITEM})*\s*[.。]?\s*")
_START = re.compile(rf"\b{_LABEL}\b")
_PARTS = re.compile(
    rf"(?P<label>{_LABEL})\s*{_PAREN}?\s*[=＝]\s*"
    r"(?P<low>\d+(?:\.\d+)?)(?:\s*[–—-]\s*(?P<high>\d+(?:\.\d+)?))?"
)


class PointScaleError(ValueError):
    """A rubric whose text does not end in a point scale this module can read."""


@dataclass(frozen=True, slots=True)
class PointScale:
    """The points each answer to one rubric earns, as its text states them.

    ``partial`` is None when the rubric has no Partial answer, else (low, high) — equal for a
    single value, different for a range such as ``Partial=1–3``.
    """

    yes: float
    no: float
    partial: tuple[float, float] | None
    written: str

    @property
    def full(self) -> float:
        """The rubric's full score (FullScore in N_Ratio): its largest point value."""
        top = max(self.yes, self.no)
        return max(top, self.partial[1]) if self.partial else top

    @property
    def ternary(self) -> bool:
        return self.partial is not None

    @property
    def ranged(self) -> bool:
        """The Partial answer earns a range of points (``Partial (1–3)=1–3``)."""
        return self.partial is not None and self.partial[0] < self.partial[1]

    def partial_points(self, reading: str, given: float | None = None) -> float | None:
        """Points of a Partial answer under the ``partial_range`` reading (None: no Partial).

        ``given`` is the judge's (or a reviewer's) own number for a Partial range: under the
        ``judge`` reading it stands, clamped into the range; without one, the midpoint.
        """
        if self.partial is None:
            return None
        low, high = self.partial
        if reading == "judge" and given is not None:
            return min(max(given, low), high)
        if reading == "low":
            return low
        if reading == "high":
            return high
        return (low + high) / 2

    def answer_for(self, points: float) -> str:
        """The answer a judge's bare point score stands for (the paper's ``[2]`` output)."""
        if points == self.yes:
            return "yes"
        if points == self.no:
            return "no"
        if self.partial is not None and self.partial[0] <= points <= self.partial[1]:
            return "partial"
        raise PointScaleError(f"{points:g} points is not a value of the scale {self.written!r}")

    def describe(self) -> str:
        parts = [f"Yes = {self.yes:g}"]
        if self.partial is not None:
            low, high = self.partial
            parts.append(f"Partial = {low:g}" if low == high else f"Partial = {low:g}–{high:g}")
        parts.append(f"No = {self.no:g}")
        return ", ".join(parts) + f" (full score {self.full:g})"


def split_point_scale(text: str) -> tuple[str, str]:
    """(question, written scale): the longest tail of ``text`` that is a whole point scale."""
    for match in _START.finditer(text):
        if _SCALE.fullmatch(text, match.start()):
            return text[: match.start()].rstrip(), text[match.start() :].strip()
    raise PointScaleError(
        "the rubric does not end in a point scale such as 'Yes=2, No=0' or 'Yes=2, Partial=1, No=0'"
    )


@lru_cache(maxsize=8192)
def parse_point_scale(text: str) -> PointScale:
    """The point scale a rubric's text ends with; raises PointScaleError when there is none.

    Cached: scoring re-reads the scale of every rubric of every report from the criterion text.
    """
    _, written = split_point_scale(text)
    seen = _answer_points(written)
    for needed in ("yes", "no"):
        if needed not in seen:
            raise PointScaleError(f"the point scale {written!r} has no {needed.capitalize()} value")
    yes, no = seen["yes"][0], seen["no"][0]
    if yes == no:
        raise PointScaleError(f"Yes and No are worth the same in {written!r}")
    partial = seen.get("partial")
    if partial is not None and not (min(yes, no) <= partial[0] and partial[1] <= max(yes, no)):
        raise PointScaleError(f"Partial lies outside the Yes–No range in {written!r}")
    return PointScale(yes, no, partial, written)


def _answer_points(written: str) -> dict[str, tuple[float, float]]:
    """Each answer's (low, high) points as the scale writes them (``Full`` is Yes); only
    Partial may be a range, and no answer twice."""
    seen: dict[str, tuple[float, float]] = {}
    for part in _PARTS.finditer(written):
        label = part.group("label").split()[0].lower()
        answer = "yes" if label == "full" else label
        if answer in seen:
            raise PointScaleError(f"the point scale {written!r} names {answer!r} twice")
        low = float(part.group("low"))
        high = float(part.group("high")) if part.group("high") else low
        if high < low:
            raise PointScaleError(f"the range {low:g}–{high:g} in {written!r} runs backwards")
        if answer != "partial" and high != low:
            raise PointScaleError(f"only Partial may be a range of points ({written!r})")
        seen[answer] = (low, high)
    return seen
