"""Review orders measured: with 10% of the verdicts, the suspicion order reaches most known
judge errors, well ahead of impact order and of random order — on the sample's MISTAKES.md
lists and on synthetic runs with planted errors of each type (the figures `gavel bench` prints).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from reviewer.planted import read_planted_path
from tui.bench.recall import recall_figures, sample_figures
from tui.paths import sample_data_dir


def test_every_listed_sample_error_resolves_to_a_verdict(tmp_path: Path) -> None:
    overall, parts = sample_figures(tmp_path, sample_data_dir())
    listed = sum(len(read_planted_path(sample_data_dir() / name / "MISTAKES.md")) for name in parts)
    assert overall.suspicion.total == listed >= 40
    assert set(parts) == {"dailyreport", "dr3", "drbench", "livedrbench", "drb2"}


@pytest.fixture(scope="module")
def figures(tmp_path_factory: pytest.TempPathFactory) -> object:
    return recall_figures(tmp_path_factory.mktemp("recall"), sample_data_dir(), seeds=1, tasks=8)


def test_suspicion_order_is_clearly_best_on_the_sample(figures: object) -> None:
    sample = figures.sample  # type: ignore[attr-defined]
    assert sample.suspicion.value >= 0.6
    assert sample.suspicion.value >= 3 * max(sample.impact.value, sample.random.value)
    assert 0.05 <= sample.random.value <= 0.15  # a 10% budget, shuffled


def test_suspicion_order_is_clearly_best_on_planted_errors(figures: object) -> None:
    synthetic = figures.synthetic  # type: ignore[attr-defined]
    assert synthetic.suspicion.total >= 30
    assert synthetic.suspicion.value >= 0.5
    assert synthetic.suspicion.value >= 3 * max(synthetic.impact.value, synthetic.random.value)
    # Every detectable type is planted, and the flags reach them; a 'silent' error (value and
    # explanation changed together) is out of any flag's reach.
    by_type = synthetic.suspicion.by_type
    # The level rule reads the explanation's words, so it misses paraphrases: a lower bar.
    for kind, least in (
        ("contradiction", 0.8),
        ("unreachable", 0.8),
        ("same fact", 0.8),
        ("level", 0.4),
    ):
        reached, total = by_type[kind]
        assert total > 0 and reached / total >= least, kind
    assert "silent" in by_type
