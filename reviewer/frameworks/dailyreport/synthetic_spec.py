"""The shape of a synthetic DailyReport-size run: how many tasks, systems, subtasks and claims,
and which judge errors to plant (read by both writers, :mod:`.synthetic` and
:mod:`.synthetic_plain`)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class SyntheticSpec:
    tasks: int = 150
    systems: int = 17
    subtasks: int = 12
    claims: int = 40
    words: int = 1200
    seed: int = 7
    long_report_words: int = 0
    """When > 0, the first report is this long (with claims spread through it)."""
    long_report_claims: int = 300
    plant: float = 0.0
    """Probability, per eligible verdict and error type, that the judge errs there."""
    second_run: float = 0.0
    """Share of reports a second, newer judge run re-judges (its verdicts count)."""
    unreachable: float = 0.025
    """Share of source pages that could not be fetched."""
    judge_bias: tuple[float, ...] = ()
    """A planted judge bias: system i's judge upgrades a verdict that is not the best (an
    incorrect or unknown claim to correct; a rubric one step up) with probability
    ``judge_bias[i % len(judge_bias)]``. With a bias or noise the true verdicts are written as
    a second run, ``truth`` (older than the judge's, so the judge's counts): retire it after
    import and read it as the human labels."""
    judge_noise: float = 0.0
    """The judge's unbiased mistakes: any verdict is replaced by a random value of its scale
    with this probability."""

    @property
    def planted(self) -> bool:
        return bool(self.judge_bias) or self.judge_noise > 0
