"""The noise band of repeated judge runs as rows: what ``gavel compare`` prints and the noise
screen shows, built once so that the two never disagree."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tui.render.tables import fmt_number

if TYPE_CHECKING:
    from store.runs.compare import Noise

Rows = tuple[list[str], list[dict[str, Any]]]


def fmt_share(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1%}"


def band_rows(noise: Noise) -> Rows:
    """Per system and metric: mean ± sd, range, runs (and how many runs gave the metric's
    other record, e.g. a stored overall)."""
    columns = ["system", "metric", "mean ± sd", "low", "high", "runs"]
    rows = [
        {
            "system": b.system,
            "metric": b.metric + (f" ({len(b.via)} stored)" if b.via else ""),
            "mean ± sd": f"{fmt_number(b.band.mean, 4)} ± {fmt_number(b.band.sd, 4)}",
            "low": fmt_number(b.band.low, 4),
            "high": fmt_number(b.band.high, 4),
            "runs": b.band.n,
        }
        for b in noise.bands
    ]
    return columns, rows


def group_rows(noise: Noise) -> Rows:
    """Per kind and dimension: subjects judged by two or more runs, flip rate, share that
    changed, Krippendorff's α."""
    columns = ["kind / dimension", "subjects", "flip rate", "changed", "alpha"]
    rows = [
        {
            "kind / dimension": g.flips.group,
            "subjects": g.flips.subjects,
            "flip rate": fmt_share(g.flips.flip_rate),
            "changed": fmt_share(g.flips.changed),
            "alpha": fmt_number(g.alpha),
        }
        for g in noise.groups
    ]
    return columns, rows


def rank_rows(noise: Noise) -> Rows:
    """Per metric: τ between runs, and each adjacent pair's swap share."""
    columns = ["metric", "systems", "tau mean", "tau min", "adjacent pair", "swaps"]
    rows: list[dict[str, Any]] = []
    for r in noise.ranks:
        first = True
        for hi, lo, share in r.swaps or (("", "", None),):
            rows.append(
                {
                    "metric": r.metric if first else "",
                    "systems": r.systems if first else "",
                    "tau mean": fmt_number(r.tau_mean) if first else "",
                    "tau min": fmt_number(r.tau_min) if first else "",
                    "adjacent pair": f"{hi} > {lo}" if hi else "",
                    "swaps": fmt_share(share) if hi else "",
                }
            )
            first = False
    return columns, rows
