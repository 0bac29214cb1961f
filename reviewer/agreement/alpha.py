"""Krippendorff's alpha for any number of coders, with missing data.

Follows Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability": build the
coincidence matrix ``o_ck`` from pairable values (units with at least two values, each unit's
ordered value pairs weighted by ``1 / (m_u - 1)``), take its marginals ``n_c`` and total
``n``, and compute ``alpha = 1 - D_o / D_e`` with

    D_o = sum_ck o_ck delta2_ck / n,      D_e = sum_ck n_c n_k delta2_ck / (n (n - 1)).

Input orientation is units x coders (one row per rated item), the transpose of the tables in
Krippendorff's paper, because that is how items are stored here.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

import numpy as np
import numpy.typing as npt

from reviewer.agreement._core import FloatArray, category_index, is_missing

AlphaLevel: TypeAlias = Literal["nominal", "ordinal", "interval", "ratio"]


@dataclass(frozen=True, slots=True)
class AlphaResult:
    """Krippendorff's alpha with the quantities it is made of.

    ``n`` is the number of pairable values (Krippendorff's n..), ``n_units`` the number of
    units that had at least two values. Disagreements are ``None`` when there is nothing to
    compare; ``value`` is additionally ``None`` when the pairable values show no variation at
    all (a single distinct value), where ``D_e = 0`` and alpha is 0/0. Krippendorff treats
    such data as carrying no reliability information, so no number is reported for it.
    """

    value: float | None
    n: int
    n_units: int
    observed_disagreement: float | None
    expected_disagreement: float | None


def _distance(level: AlphaLevel, values: Sequence[Any], marginals: FloatArray) -> FloatArray:
    """Squared difference function delta^2 between category positions, per Krippendorff."""
    k = len(values)
    if level == "nominal":
        return 1.0 - np.eye(k)
    if level == "ordinal":
        # delta2_ck = (sum_{g=c..k} n_g - (n_c + n_k) / 2)^2 over the ordered categories, so the
        # distance between two ranks grows with how many values lie between them.
        cum = np.concatenate(([0.0], np.cumsum(marginals)))
        lo = np.minimum.outer(np.arange(k), np.arange(k))
        hi = np.maximum.outer(np.arange(k), np.arange(k))
        between = cum[hi + 1] - cum[lo]
        return np.asarray((between - (marginals[:, None] + marginals[None, :]) / 2.0) ** 2)
    try:
        numbers = np.asarray([float(v) for v in values], dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{level} alpha needs numeric values ({exc})") from exc
    diff = numbers[:, None] - numbers[None, :]
    if level == "interval":
        return np.asarray(diff**2)
    if level == "ratio":
        total = numbers[:, None] + numbers[None, :]
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(total == 0.0, 0.0, diff / total)
        return np.asarray(ratio**2)
    raise ValueError(f"unknown level of measurement {level!r}")


def _domain(
    units: list[list[Any]], level: AlphaLevel, categories: Sequence[Hashable] | None
) -> list[Any]:
    """The categories given, else the values that occur (first seen, or sorted unless
    nominal)."""
    if categories is not None:
        return list(categories)
    seen: dict[Hashable, None] = {}
    for unit in units:
        for value in unit:
            seen.setdefault(value, None)
    domain = list(seen)
    if level != "nominal":
        domain = sorted(domain)  # type: ignore[type-var]
    return domain


def _value_counts(units: list[list[Any]], domain: list[Any]) -> npt.NDArray[np.float64]:
    """(units × categories) how often each value occurs in each unit."""
    index = category_index(domain)
    counts = np.zeros((len(units), len(domain)), dtype=np.float64)
    for u, unit in enumerate(units):
        for value in unit:
            try:
                counts[u, index[value]] += 1.0
            except (KeyError, TypeError):
                raise ValueError(f"value {value!r} is not in categories") from None
    return counts


def krippendorff_alpha(
    data: Sequence[Sequence[Any]] | npt.NDArray[Any],
    level: AlphaLevel = "nominal",
    categories: Sequence[Hashable] | None = None,
) -> AlphaResult:
    """Krippendorff's alpha of reliability data given as units x coders.

    Missing values are ``None`` or float NaN. Units with fewer than two values are dropped
    (they contain no pairable values); rows may differ in length. ``categories`` fixes the
    value domain and, for ordinal data, its order; values outside it raise ``ValueError``.
    Without it the domain is the values that occur, ordered by ``sorted`` for ordinal,
    interval and ratio data (so give ``categories`` when labels are strings whose alphabetical
    order is not the scale order). Categories that never occur do not change alpha.

    ``value`` is ``None`` when no unit has two values or when all pairable values are equal.
    """
    units = [present for row in data if len(present := [v for v in row if not is_missing(v)]) >= 2]
    domain = _domain(units, level, categories)
    counts = _value_counts(units, domain)
    if not units:
        return AlphaResult(None, 0, 0, None, None)
    m = counts.sum(axis=1)
    weighted = counts / (m - 1.0)[:, None]
    coincidence = weighted.T @ counts - np.diag(weighted.sum(axis=0))
    marginals = coincidence.sum(axis=1)
    n = float(marginals.sum())
    delta2 = _distance(level, domain, marginals)
    observed = float((coincidence * delta2).sum()) / n
    expected = float((np.outer(marginals, marginals) * delta2).sum()) / (n * (n - 1.0))
    n_values = round(n)
    if np.count_nonzero(marginals > 0) < 2:
        return AlphaResult(None, n_values, len(units), observed, expected)
    return AlphaResult(1.0 - observed / expected, n_values, len(units), observed, expected)
