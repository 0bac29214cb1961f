"""What a benchmark is to Gavel: the :class:`Framework` protocol and the plain data it declares.

A *benchmark* (one folder under ``reviewer/frameworks/``) brings one or more *frameworks* (a
scoring definition with its verdict kinds, metrics and options: DeepResearch Bench brings RACE
and FACT) and the *formats* its released files come in. Everything the store and the
workstation need to know about a benchmark is declared here as data — kinds with their scales,
headline metrics, whether reports get an overall rating, which ground-truth expansions it takes,
which verdicts its judge can re-ask — so that neither ever branches on a benchmark's name.
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

from reviewer.grading import Grading
from reviewer.inputs import CountedReports, ReportInput
from reviewer.scales import Scale

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from reviewer.models import Bundle

Subject = Literal["criterion", "claim", "claim_ref", "key"]
Variant = Literal["judge", "adjudicated"]
VARIANTS: tuple[Variant, ...] = ("judge", "adjudicated")

ReportScores = dict[str, float | None]
"""Metric name -> value for one report. Names starting with '_' are parts kept for aggregation."""

Columns = Mapping[str, Sequence[float]]
"""One system's per-report scores by metric, in report-id order, NaN where a report has no
value (absent or None alike). A framework that aggregates from columns
(:class:`ColumnAggregation`) lets the store keep each system as a few typed arrays and
re-aggregate after a decision without building a dict per report."""


def columns_of(reports: Sequence[ReportScores], names: Iterable[str]) -> dict[str, list[float]]:
    """The ``names`` columns of ``reports`` (in their order), NaN for a missing value."""
    nan = math.nan
    return {name: [nan if (v := r.get(name)) is None else v for r in reports] for name in names}


Highlight = Literal["none", "key_offset", "evidence"]
"""How a verdict marks the report text: not at all, at the character offset its key names
(a DR. Bench keyword hit; the highlighted length is its criterion's text), or, while it is
selected, where the report holds the sentences its evidence quotes."""


@dataclass(frozen=True, slots=True)
class VerdictKind:
    name: str
    framework: str
    scale: Scale
    subject: Subject
    label: str
    description: str = ""
    highlight: Highlight = "none"


@dataclass(frozen=True, slots=True)
class Metric:
    """A metric a framework reports; ``headline`` metrics are the queue's columns."""

    name: str
    label: str
    headline: bool = False
    digits: int = 3
    description: str = ""
    compare: bool = False
    """Shown by default when judge runs are compared (``gavel compare``), besides the
    headline metrics: the figures a re-judge moves most directly."""
    additive: bool = True
    """Whether errors in different verdicts move the metric by the sum of what each moves it
    alone, to first order (a mean or a ratio of verdict values). False for a level or a
    threshold (DailyReport's UserPref): several errors in one report can cross a threshold
    together, which a correction built from single-verdict influences does not see, so its
    estimates are marked first-order (docs/estimates.md)."""
    bounds: tuple[float, float] | None = None
    """The values the metric can take, where the definition fixes them (a share: 0–1, a
    level: 1–4): an estimate or interval reaching past them is clipped to them."""
    same_as: str | None = None
    """The metric this one is another record of (a benchmark's stored figure of the quantity
    the framework recomputes from verdicts): over repeated runs, a run that has only this
    one counts its value in the other's noise band."""


@dataclass(frozen=True, slots=True)
class Aggregate:
    value: float | None
    n: int


@dataclass(frozen=True, slots=True)
class OptionSpec:
    """A named, switchable reading of an ambiguity in a paper ([CHOICE] in the specs)."""

    name: str
    default: str
    choices: tuple[str, ...]
    description: str


@dataclass(frozen=True, slots=True)
class Rating:
    """An overall human rating of a whole report on ``scale``, compared with ``metric``
    (DailyReport's 1–4 user-preference level against its UserPref)."""

    scale: Scale
    metric: str


@dataclass(frozen=True, slots=True)
class Shape:
    """The keys a proposal payload must and may have, in gold-file order."""

    required: tuple[str, ...]
    optional: tuple[str, ...] = ()
    text_keys: tuple[str, ...] = ()
    """Keys whose text is compared for duplicates, first non-empty wins."""
    required_any: tuple[str, ...] = ()
    """At least one of these must be non-empty (extra evidence: a url, a quote or a text)."""
    choices: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Keys whose value must be one of a fixed list (a rubric's dimension)."""
    numbers: tuple[str, ...] = ()
    """Keys holding a non-negative number (a criterion weight); every other key is text."""


@dataclass(frozen=True, slots=True)
class Selection:
    """What a reviewer has selected on the report screen when proposing an expansion."""

    report_ext: str
    task_metadata: Mapping[str, Any]
    kind: str | None = None
    criterion: str | None = None
    dimension: str | None = None
    claim: str | None = None
    claim_metadata: Mapping[str, Any] | None = None
    subtask: str | None = None


class DraftError(ValueError):
    """A selection that cannot become the proposal asked for; says what is missing."""


def no_text() -> DraftError:
    return DraftError("type the claim or rubric text (or find it in the report first)")


def needs_json(kind: str, framework: str) -> DraftError:
    return DraftError(
        f"a {kind} for {framework} has a benchmark-specific shape: use "
        "`gavel propose` with the payload as JSON"
    )


Drafter = Callable[[str, Selection | None, str], Any]
"""(proposal kind, selection, text) -> payload in the benchmark's shape, or DraftError."""


@dataclass(frozen=True, slots=True)
class Proposals:
    """Which ground-truth expansions a framework takes, in which shapes.

    ``shapes`` maps a new-item kind (``new_claim``, ``new_rubric``) to its payload shape; a
    ``free_form`` framework keeps items exactly as given (LiveDRBench's claim dictionaries).
    ``report_claims``: a new claim is compared with the claims already extracted from reports
    (not only the task's proposals). ``draft`` builds a payload from a selection on screen;
    ``attached`` builds an alias or extra evidence when the benchmark has its own shape.
    """

    shapes: Mapping[str, Shape] = field(default_factory=dict)
    free_form: bool = False
    report_claims: bool = False
    draft: Drafter | None = None
    attached: Callable[[str, Selection, str, str], Any] | None = None
    """(kind, selection, target, text) -> payload of an alias or extra evidence, when the
    benchmark has its own shape for them (not ``{text}`` / ``{quote}``)."""
    gold: Callable[[str, dict[str, Any]], Any] | None = None
    """(kind, payload) -> the item in the benchmark's ground-truth shape, or None where the
    shape's keys in order are that shape."""


@dataclass(frozen=True, slots=True)
class Rejudge:
    """Which verdict kinds the framework's judge pipeline can ask again about."""

    kinds: frozenset[str]
    steps: Mapping[str, str] = field(default_factory=dict)
    """kind -> the pipeline step that produces it, where the names differ."""
    pipeline: str = ""
    """``"module:ATTR"`` of the framework's :class:`reviewer.judge.pipeline.PipelineSpec`,
    imported only when judging (listing frameworks imports no judge code)."""


@dataclass(frozen=True, slots=True)
class ScoreMatrix:
    """Many reports' scores at once, one row a report: what a :class:`BulkSpec` gives.

    ``values`` holds every metric of ``names`` (NaN where a report has no value, absent or
    None alike); ``layouts`` are the distinct metric lists the reports have, each the column
    indices in the order the report's own dict would list them (``()``: no scores), and
    ``layout`` says which one each report has. A store writes a report's row straight from
    its slice of the matrix, and a system's columns are slices of it.
    """

    names: tuple[str, ...]
    values: npt.NDArray[np.float64]
    layouts: tuple[tuple[int, ...], ...]
    layout: npt.NDArray[np.intp]

    def row(self, i: int) -> ReportScores:
        """Report ``i``'s scores as the dict ``score_report`` gives (None for NaN)."""
        values = self.values[i].tolist()
        return {
            self.names[c]: None if (v := values[c]) != v else v
            for c in self.layouts[int(self.layout[i])]
        }


@dataclass(frozen=True, slots=True)
class BulkSpec:
    """How a framework scores every report of a run at once from verdict counts that SQL
    computes, instead of from every verdict row: what a full recompute of a large run uses
    (``store.scores.counted``).

    ``kinds`` are counted per (report, kind, subtask, value), each value one of ``codes`` or
    another; ``claim_kind``, the verdict kind about each extracted claim, is counted the same
    way and, besides, by whether its claim cites a reference (see
    :class:`reviewer.inputs.CountedReports`). The ``scorer`` must give every report exactly
    what ``score_report`` gives on the same report (the property tests hold the two equal),
    and its matrices the same ``names`` whatever the reports. A report whose rows the counts
    cannot describe (several extractions of its claims, a claim without its one verdict) is
    scored from its rows.
    """

    kinds: tuple[str, ...]
    codes: tuple[str, ...]
    claim_kind: str | None
    scorer: str
    """``"module:function"`` of the ``(CountedReports, options) -> ScoreMatrix`` that scores,
    imported when a full recompute scores (its numpy with it), not with the framework."""

    def score(self, table: CountedReports, options: Mapping[str, str]) -> ScoreMatrix:
        module, _, name = self.scorer.partition(":")
        scorer: Callable[[CountedReports, Mapping[str, str]], ScoreMatrix]
        scorer = getattr(importlib.import_module(module), name)
        return scorer(table, options)


@dataclass(frozen=True, slots=True)
class ColumnAggregation:
    """How a framework's system aggregate is a function of per-metric columns: ``aggregate``
    over :func:`columns_of` the non-empty reports must equal the framework's ``aggregate``
    (the store relies on it to keep each system as columns and re-aggregate from them)."""

    metrics: tuple[str, ...]
    """The metrics ``aggregate`` reads (the columns worth keeping)."""
    aggregate: Callable[[Columns, int, Mapping[str, str]], dict[str, Aggregate]]
    """(columns, how many reports, options) -> the system's aggregates."""


class Framework(Protocol):
    """A scoring definition. Optional capabilities are members like any other, declared
    absent (None) where a framework lacks them: :class:`FrameworkBase` declares them so."""

    name: str
    label: str
    kinds: Mapping[str, VerdictKind]
    metrics: Sequence[Metric]
    options: Sequence[OptionSpec]
    rating: Rating | None
    proposals: Proposals
    rejudge: Rejudge | None
    grading: Grading | None
    """What the reviewer sees beside a verdict and what makes one suspicious."""
    bulk: BulkSpec | None
    """Scoring from SQL's counts, for a full recompute; None: every report from its rows."""
    columns: ColumnAggregation | None
    """Aggregation from per-metric columns; None: from report scores (``aggregate``)."""

    def score_report(
        self, report: ReportInput, variant: Variant, options: Mapping[str, str]
    ) -> ReportScores: ...

    def aggregate(
        self, reports: Sequence[ReportScores], options: Mapping[str, str]
    ) -> dict[str, Aggregate]: ...


class FrameworkBase:
    """The optional capabilities of a :class:`Framework`, declared absent: a framework
    inherits this and declares what it has by overriding the member (the way harlequin's
    adapter base declares ``implements_copy``), so the store asks the interface and never
    looks for an attribute."""

    grading: Grading | None = None
    bulk: BulkSpec | None = None
    columns: ColumnAggregation | None = None


CAPABILITIES = ("grading", "bulk", "columns")
"""The optional members of :class:`Framework` that :class:`FrameworkBase` declares absent."""


Reader = Callable[..., "Bundle"]
"""``reader(path, suite_id, **options)``: the options a format declares (``FormatSpec.options``)."""


@dataclass(frozen=True, slots=True)
class FormatSpec:
    """A file format a benchmark's releases come in: ``gavel import PATH --format NAME``.

    ``reader`` is ``"module:function"``, imported when the format is used, so listing formats
    (``gavel import --help``) costs no parser imports.
    """

    name: str
    description: str
    reader: str
    aliases: tuple[str, ...] = ()
    options: tuple[str, ...] = ()
    """Keyword options the reader takes besides the path and suite id (``system_map``):
    declared, so an import refuses one the format does not take."""


@dataclass(frozen=True, slots=True)
class Benchmark:
    """One benchmark: its frameworks and formats (a package's ``BENCHMARK``)."""

    name: str
    label: str
    frameworks: tuple[Framework, ...]
    formats: tuple[FormatSpec, ...] = ()

    def __post_init__(self) -> None:
        # A framework written before its protocol grew a member fails here, when its
        # benchmark is declared, naming what it lacks, rather than half-way through a score.
        for framework in self.frameworks:
            missing = [name for name in CAPABILITIES if not hasattr(framework, name)]
            if missing:
                raise TypeError(
                    f"framework {framework.name!r} of benchmark {self.name!r} does not declare "
                    f"{', '.join(missing)}: inherit reviewer.framework.FrameworkBase, which "
                    "declares every optional capability absent"
                )


def resolve_options(framework: Framework, overrides: Mapping[str, str]) -> dict[str, str]:
    """Defaults overlaid with overrides; an unknown option or value is an error, never ignored."""
    specs = {spec.name: spec for spec in framework.options}
    resolved = {spec.name: spec.default for spec in framework.options}
    for name, value in overrides.items():
        spec = specs.get(name)
        if spec is None:
            raise ValueError(f"{framework.name} has no option {name!r} (has: {', '.join(specs)})")
        if value not in spec.choices:
            raise ValueError(f"option {framework.name}.{name} must be one of {spec.choices}")
        resolved[name] = value
    return resolved
