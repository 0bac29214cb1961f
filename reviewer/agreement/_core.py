"""Result types and input checks shared by the agreement statistics.

Convention used everywhere in this package: a statistic that is mathematically undefined for
the data it was given (no data, zero variance, chance agreement of one, ...) has
``value is None``. No function returns NaN or infinity, so a caller can show "undefined" and
move on instead of propagating NaN through sums. Malformed input (length mismatch, a label that
is not in the declared category list, NaN where a number is required) is a caller bug and
raises ``ValueError`` instead.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeAlias

import numpy as np
import numpy.typing as npt

FloatArray: TypeAlias = npt.NDArray[np.float64]
IndexArray: TypeAlias = npt.NDArray[np.intp]
Labels: TypeAlias = Sequence[Hashable] | npt.NDArray[Any]
Numbers: TypeAlias = Sequence[float] | npt.NDArray[Any]


class HasValue(Protocol):
    """Anything that carries a possibly undefined scalar, e.g. every result type below."""

    @property
    def value(self) -> float | None: ...


@dataclass(frozen=True, slots=True)
class Estimate:
    """A scalar statistic and the number of observations it rests on.

    ``n`` counts what the statistic averages over (pairs for accuracy and correlations, tasks
    for FAP/FAS, systems for OPC), so a reader can tell a 0.9 over 4 points from one over 400.
    """

    value: float | None
    n: int


@dataclass(frozen=True, slots=True)
class ChanceCorrected:
    """A chance-corrected agreement coefficient (Cohen's kappa, Gwet's AC1).

    ``observed_agreement`` and ``chance_agreement`` are the two proportions the coefficient is
    built from, ``(observed - chance) / (1 - chance)``; for weighted kappa they are the
    weighted proportions (one minus the normalised weighted disagreement). Both are ``None``
    only when there is no data.
    """

    value: float | None
    n: int
    observed_agreement: float | None
    chance_agreement: float | None


@dataclass(frozen=True, slots=True)
class ConfusionMatrix:
    """Counts of (first rater's label, second rater's label) over a fixed label order.

    Rows follow the first sequence given, columns the second. Labels absent from the data keep
    their row and column of zeros so that tables from different subsets line up.
    """

    labels: tuple[Hashable, ...]
    counts: tuple[tuple[int, ...], ...]

    def array(self) -> npt.NDArray[np.int64]:
        """The counts as a fresh ``len(labels) x len(labels)`` integer array."""
        return np.array(self.counts, dtype=np.int64).reshape(len(self.labels), len(self.labels))

    @property
    def n(self) -> int:
        return sum(sum(row) for row in self.counts)


def clean(value: float) -> float | None:
    """Map a computed float to the package convention: NaN and infinities become ``None``."""
    return value if math.isfinite(value) else None


def finite_array(values: Numbers, name: str) -> FloatArray:
    """A 1-D float64 copy of ``values``; refuses NaN, infinities and ``None`` (which is NaN)."""
    try:
        arr = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name}: expected a 1-D sequence of numbers ({exc})") from exc
    if arr.ndim != 1:
        raise ValueError(f"{name}: expected a 1-D sequence of numbers, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name}: contains NaN, infinity or None; drop missing pairs first")
    return arr


def paired_arrays(a: Numbers, b: Numbers) -> tuple[FloatArray, FloatArray]:
    """Two finite 1-D arrays of equal length (the pairs are positions)."""
    x = finite_array(a, "a")
    y = finite_array(b, "b")
    if x.shape != y.shape:
        raise ValueError(f"length mismatch: {x.shape[0]} vs {y.shape[0]}")
    return x, y


def category_index(categories: Sequence[Hashable]) -> dict[Hashable, int]:
    """Position of each category; duplicates (by Python equality, so ``1 == 1.0``) are refused."""
    index: dict[Hashable, int] = {}
    for position, category in enumerate(categories):
        if category in index:
            raise ValueError(f"duplicate category {category!r}")
        index[category] = position
    return index


def _is_number(value: object) -> bool:
    return isinstance(value, int | float | np.integer | np.floating)


def _encode_small_ints(values: npt.NDArray[Any], cats: list[Any], name: str) -> IndexArray | None:
    """Table lookup for integer labels on a compact integer scale (the common 1-4, 0-10 case);
    ``None`` when the categories span too wide a range for a lookup table."""
    low = min(int(c) for c in cats)
    high = max(int(c) for c in cats)
    if high - low > 1 << 16:
        return None
    lut = np.full(high - low + 1, -1, dtype=np.intp)
    lut[np.asarray([int(c) for c in cats], dtype=np.int64) - low] = np.arange(len(cats))
    if values.size:
        v_low, v_high = int(values.min()), int(values.max())
        if v_low < low or v_high > high:
            bad = values[(values < low) | (values > high)][:5].tolist()
            raise ValueError(f"{name}: values not in categories: {bad}")
    codes = lut[values.astype(np.int64) - low]
    if np.any(codes < 0):
        bad = values[codes < 0][:5].tolist()
        raise ValueError(f"{name}: values not in categories: {bad}")
    return np.asarray(codes, dtype=np.intp)


def encode(values: Labels, categories: Sequence[Hashable], name: str = "labels") -> IndexArray:
    """Positions of ``values`` in ``categories``; a value outside the list raises ``ValueError``.

    Numpy arrays of numbers or strings take a vectorised path (``searchsorted`` on the sorted
    categories), which is what keeps bootstrapping 60,000 pairs cheap. Python sequences are
    mapped with a dict, using Python equality, so mixed-type lists are never coerced to
    strings the way ``np.asarray([1, "a"])`` would.
    """
    index = category_index(categories)
    if isinstance(values, np.ndarray):
        if values.ndim != 1:
            raise ValueError(f"{name}: expected a 1-D array, got shape {values.shape}")
        codes = _encode_array(values, list(categories), name)
        if codes is not None:
            return codes
        return _encode_sequence(values.tolist(), index, name)
    return _encode_sequence(values, index, name)


def _encode_array(values: npt.NDArray[Any], cats: list[Hashable], name: str) -> IndexArray | None:
    """The vectorised paths: small integers through a lookup table, numbers or strings by
    ``searchsorted``; None when neither applies (mixed types go the dict way)."""
    kind = values.dtype.kind
    if kind in "biu" and cats and all(isinstance(c, int | np.integer) for c in cats):
        lut_codes = _encode_small_ints(values, cats, name)
        if lut_codes is not None:
            return lut_codes
    if cats and _sortable(kind, cats):
        return _encode_sorted(values, cats, name)
    return None


def _sortable(kind: str, cats: list[Hashable]) -> bool:
    """Numbers against numeric categories, or strings against string ones."""
    numeric = kind in "biuf" and all(_is_number(c) for c in cats)
    text = kind == "U" and all(isinstance(c, str) for c in cats)
    return numeric or text


def _encode_sorted(values: npt.NDArray[Any], cats: list[Hashable], name: str) -> IndexArray:
    """Positions by binary search in the sorted categories."""
    cat_arr = np.asarray(cats)
    order = np.argsort(cat_arr, kind="stable")
    ordered = cat_arr[order]
    pos = np.searchsorted(ordered, values)
    pos = np.minimum(pos, len(cats) - 1)
    found = ordered[pos] == values
    if not np.all(found):
        bad = values[~found][:5].tolist()
        raise ValueError(f"{name}: values not in categories: {bad}")
    return np.asarray(order[pos], dtype=np.intp)


def _encode_sequence(seq: Sequence[Any], index: Mapping[Any, int], name: str) -> IndexArray:
    """Positions by Python equality, one dict lookup per value."""
    out = np.empty(len(seq), dtype=np.intp)
    for i, value in enumerate(seq):
        try:
            out[i] = index[value]
        except (KeyError, TypeError):
            raise ValueError(f"{name}: value {value!r} is not in categories") from None
    return out


def is_missing(value: object) -> bool:
    """``None`` and float NaN both mean "this coder did not rate this unit"."""
    if value is None:
        return True
    return isinstance(value, float | np.floating) and math.isnan(value)
