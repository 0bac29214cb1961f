"""A confidence score per judge verdict, from what Gavel knows about it.

Each verdict falls in a cell: its kind and value, whether a suspicion flag points at it,
whether other judge runs of the same subject agree with it (all, not all, or no other run),
and the judge's own stated confidence where the benchmark gives one (high, middling, low or
none). A cell's prior error rate starts from :data:`BASE_RATE` and is multiplied by what each
signal is believed to say; the decisions *outside* the calibration set then teach each cell's
rate (:func:`reviewer.estimates.active.learned_rates`, shrunk towards the prior). The score is
one minus that rate: the rule (:mod:`reviewer.trust.rule`) only needs the order it gives, and
its guarantee holds whatever the score is worth, provided no calibration label went into it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from reviewer.estimates.active import learned_rates

Floats = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]
Bools = npt.NDArray[np.bool_]

BASE_RATE = 0.05
FLAG_FACTOR = 10.0
"""A suspicion flag: errors cluster there."""
SPLIT_FACTOR = 10.0
"""Another judge run of the subject says something else."""
UNANIMOUS_FACTOR = 0.5
"""Every other judge run of the subject says the same."""
CONFIDENCE_FACTORS = (1.0, 0.7, 1.5, 3.0)
"""Stated confidence none, high (≥ 0.9), middling, low (< 0.5)."""
RUNS_NONE, RUNS_UNANIMOUS, RUNS_SPLIT = 0, 1, 2


@dataclass(frozen=True, slots=True)
class Features:
    """What is known of each verdict, column by column."""

    kind: Sequence[str]
    value: Sequence[str | None]
    flagged: Bools
    others: Ints
    """How many other judge runs judged the subject (with a value)."""
    agreeing: Ints
    """How many of them gave the active verdict's value."""
    confidence: Floats
    """The judge's stated confidence in [0, 1]; NaN where none was stated."""

    def __len__(self) -> int:
        return len(self.kind)


def runs_state(others: Ints, agreeing: Ints) -> Ints:
    return np.where(
        others == 0, RUNS_NONE, np.where(agreeing == others, RUNS_UNANIMOUS, RUNS_SPLIT)
    ).astype(np.int64)


def confidence_band(confidence: Floats) -> Ints:
    band = np.where(confidence >= 0.9, 1, np.where(confidence < 0.5, 3, 2))
    return np.where(np.isnan(confidence), 0, band).astype(np.int64)


def cells(features: Features) -> tuple[Ints, Floats]:
    """Each verdict's cell id and its prior error rate."""
    runs = runs_state(features.others, features.agreeing)
    band = confidence_band(features.confidence)
    ids: dict[tuple[str, str | None, bool, int, int], int] = {}
    cell = np.empty(len(features), dtype=np.int64)
    flags = features.flagged.tolist()
    for i, key in enumerate(
        zip(features.kind, features.value, flags, runs.tolist(), band.tolist(), strict=True)
    ):
        cell[i] = ids.setdefault(key, len(ids))
    prior = (
        BASE_RATE
        * np.where(features.flagged, FLAG_FACTOR, 1.0)
        * np.select(
            [runs == RUNS_SPLIT, runs == RUNS_UNANIMOUS], [SPLIT_FACTOR, UNANIMOUS_FACTOR], 1.0
        )
        * np.array(CONFIDENCE_FACTORS)[band]
    )
    return cell, np.minimum(prior, 0.9)


def scores(features: Features, learn: Ints, wrong: Bools) -> Floats:
    """Each verdict's confidence score; ``learn`` indexes the decided verdicts the rates are
    learnt from (never the calibration labels), ``wrong[k]`` whether the k-th was overruled."""
    cell, prior = cells(features)
    rate = learned_rates(cell, prior, learn, wrong)
    return np.round(1.0 - rate, 9)
