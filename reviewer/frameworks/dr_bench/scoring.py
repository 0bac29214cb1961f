"""DR. Bench: Quality, SemanticDrift, TrustworthyBoost and the integrated score.

Implements ``specs/dr_bench.md`` §2.1–2.5 and §2.8 (paper §4, Algorithm 1). What is judged, as
criteria of the task and verdicts of the report:

- ``qsr`` / ``grr`` criteria: the query-specific rubric points and the 48 general rubrics, each
  with the point scale its own text ends with (:mod:`reviewer.frameworks.dr_bench.points`); verdicts
  ``drb_qsr`` (Yes / Partial / No) and ``drb_grr`` (Yes / No) give the *answer*, the rubric's
  scale gives the points (so an inverted ``No=3, Yes=0`` rubric needs nothing special); on a
  rubric whose Partial is a range (``Partial (1–3)=1–3``) a ``drb_partial_points`` verdict
  keeps the judge's own number, which stands under the default ``partial_range = judge``;
- ``anchor_keyword`` / ``drift_keyword`` criteria (FAKs / FDKs, the keyword as text): a
  ``drb_relevance`` verdict (1–5) each, and one ``drb_keyword_hit`` verdict per occurrence in
  the citation-free text (key = offset, :mod:`reviewer.frameworks.dr_bench.keywords`), true unless a
  reviewer struck it; the frequency is the number of hits counted;
- ``trusted_source`` criteria (TSLs, the URL as text) and one ``drb_trusted`` verdict per
  distinct annotation of the report (key = its normalised URL): ``full``, ``host`` or ``none``
  (:mod:`reviewer.frameworks.dr_bench.urls`), which a reviewer can override (a mirror, a DOI).

Per report, with the paper's hyperparameters α = β = 0.5, λ = 0.7, μ = 0.3, η = 0.2, θ = 0.7,
κ = 0.3 (``PARAMS``):

- Quality = α·Σ QSR points / 30 + β·Σ GRR points / Σ GRR full (the ``qsr_denominator``
  option: 30 as the authors' notebook divides, or the task's own Σ QSR full);
- FAK_Drift = 1 − mean_k min(freq_k/ε₊, 1)·rele_k/5; FDK_Drift = mean_l min(freq_l/ε₋, 1)·rele_l/5;
  SemanticDrift = λ·FAK_Drift + μ·FDK_Drift (a task without anchors or drift keywords has 0 for
  that part);
- TBoost = 1 + η·(θ·match_full/S + κ·rate_host), S = distinct TSLs (rate 0 when S = 0),
  T = distinct annotations, rate_host per the ``host_rate`` option; match_full per the
  ``tsl_match`` option: every citation at or under a TSL counted once, as the authors' notebook
  counts (``under``), or the TSLs cited exactly (``exact``);
- integrated = 100·Quality·(1 − SemanticDrift)·TBoost; contri_per_token = integrated / output
  tokens when the report's metadata has ``token_usage: {total, input}``.

System values are means over reports of the per-report values (the paper's mean of per-entry
products, spec §2.8; never the product of the means).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from reviewer.framework import (
    Aggregate,
    FrameworkBase,
    Metric,
    OptionSpec,
    Proposals,
    Rating,
    Rejudge,
    ReportScores,
    Variant,
    VerdictKind,
)
from reviewer.frameworks.dr_bench.grading import GRADING
from reviewer.frameworks.dr_bench.keywords import key_flags
from reviewer.frameworks.dr_bench.points import PointScale, PointScaleError, parse_point_scale
from reviewer.frameworks.dr_bench.urls import distinct, under_a_tsl
from reviewer.grading import Grading
from reviewer.inputs import CriterionIn, ReportInput, VerdictIn, variant_field
from reviewer.scales import BINARY, Choice, Scale

NAME = "drbench"

QSR, GRR = "qsr", "grr"
ANCHOR, DRIFT = "anchor_keyword", "drift_keyword"
TRUSTED = "trusted_source"
DIMENSIONS: tuple[str, ...] = (QSR, GRR, ANCHOR, DRIFT, TRUSTED)
"""Criterion dimensions of a DR. Bench task."""

PARAMS: dict[str, float] = {
    "alpha": 0.5,
    "beta": 0.5,
    "lambda": 0.7,
    "mu": 0.3,
    "eta": 0.2,
    "theta": 0.7,
    "kappa": 0.3,
}
"""The paper's hyperparameters (spec §2.9): stated, so not options."""

ANSWER = Scale(
    "drb_answer",
    "Yes / Partial / No",
    (
        Choice("yes", "Yes", "1", 1.0, ("full", "true")),
        Choice("partial", "Partial", "h", 0.5, ("half",)),
        Choice("no", "No", "0", 0.0, ("false",)),
    ),
)
YES_NO = Scale(
    "drb_yes_no",
    "Yes / No",
    (
        Choice("yes", "Yes", "1", 1.0, ("true",)),
        Choice("no", "No", "0", 0.0, ("false",)),
    ),
)
RELEVANCE = Scale("drb_relevance", "relevance 1–5", low=1.0, high=5.0)
POINTS = Scale("drb_points", "points 0–100", low=0.0, high=100.0)
MATCH = Scale(
    "drb_match",
    "full / host / none",
    (
        Choice("full", "full URL match", "1", 1.0, ("exact",)),
        Choice("host", "host match only", "h", 0.5, ("hostname",)),
        Choice("none", "no match", "0", 0.0, ("no",)),
    ),
)

KINDS = {
    "drb_qsr": VerdictKind(
        "drb_qsr",
        NAME,
        ANSWER,
        "criterion",
        "query-specific rubric",
        "Does the report meet this query-specific rubric point? Yes / Partial / No; the points "
        "each answer earns are the rubric's own scale.",
    ),
    "drb_grr": VerdictKind(
        "drb_grr",
        NAME,
        YES_NO,
        "criterion",
        "general rubric",
        "Does the report meet this general-report rubric? Yes / No (Yes earns its weight).",
    ),
    "drb_partial_points": VerdictKind(
        "drb_partial_points",
        NAME,
        POINTS,
        "criterion",
        "partial points",
        "The points a Partial answer earns on a rubric whose Partial is a range (e.g. "
        "'Partial (1–3)=1–3'): the judge's own number, which a reviewer can retype. Used while "
        "the rubric's answer is Partial, under partial_range = judge.",
    ),
    "drb_relevance": VerdictKind(
        "drb_relevance",
        NAME,
        RELEVANCE,
        "criterion",
        "keyword relevance",
        "How relevant the keyword is to the report, 1 (not relevant) to 5 (central theme).",
    ),
    "drb_keyword_hit": VerdictKind(
        "drb_keyword_hit",
        NAME,
        BINARY,
        "criterion",
        "keyword occurrence",
        "One occurrence of the keyword in the citation-free text (key = its offset): true "
        "counts it; strike a false hit (e.g. 'vet' inside 'veteran') with false.",
        highlight="key_offset",
    ),
    "drb_trusted": VerdictKind(
        "drb_trusted",
        NAME,
        MATCH,
        "key",
        "trusted-source match",
        "How one cited URL (key = normalised URL) matches the task's trusted sources: full "
        "URL, host only, or none.",
    ),
}

EPSILONS: tuple[str, ...] = ("1", "2", "3", "4", "5")

QSR_TOTAL = 30.0
"""The QSR points of every query: "a total score of 30" (paper §3.2.2); the authors' notebook
divides by it (``0.5 * (qsr_sum / 30)``)."""

OPTIONS = (
    OptionSpec(
        "eps_plus",
        "2",
        EPSILONS,
        "ε₊, the anchor-keyword frequency at which a keyword counts fully. The paper gives no "
        "value; 2 is the authors' (their notebook's min(keywords_fak_count[i] / 2, 1)).",
    ),
    OptionSpec(
        "eps_minus",
        "1",
        EPSILONS,
        "ε₋, the drift-keyword frequency at which a keyword counts fully. The paper gives no "
        "value; 1 is the authors' (their notebook's min(keywords_fdk_count[i], 1)).",
    ),
    OptionSpec(
        "tsl_match",
        "under",
        ("under", "exact"),
        "Which citations are full TSL matches: every distinct cited URL at or under a TSL (the "
        "TSL's site root, or its path followed by '/'), each counted once, so a site-root TSL "
        "such as https://www.who.int matches every WHO page cited and match_full may exceed "
        "|TSLs|, as the authors' notebook counts (under: its 'if refe_item in anno_item: "
        "full_count += 1'); or only a URL equal to a TSL, counting the TSLs cited (exact: the "
        "paper's 'the number that have been exactly matched in TSLs'). Other citations on a "
        "TSL's host are host matches either way.",
    ),
    OptionSpec(
        "qsr_denominator",
        "thirty",
        ("thirty", "task_total"),
        "N_Ratio's denominator for the query-specific rubrics: 30, the total the paper gives "
        "every query and the authors' notebook divides by (thirty: 'qsr_sum / 30'), or the "
        "task's own Σ full scores (task_total: N_Ratio[x] = x / Σ FullScore). They differ on "
        "the 6 released tasks whose QSRs total 22, 28, 29, 29, 31 or 31 points.",
    ),
    OptionSpec(
        "host_rate",
        "alg1_excl_full",
        ("alg1_excl_full", "sec43_incl_full"),
        "Rate_host_hit: Algorithm 1's (match_host − match_full)/(T+1), host-only matches "
        "(alg1_excl_full), or §4.3's match_host/(T+1), full matches counted again as host "
        "matches (sec43_incl_full).",
    ),
    OptionSpec(
        "keyword_match",
        "substring",
        ("substring", "word"),
        "Which keyword hits count: every occurrence, also inside a longer word, as plain string "
        "counting does (substring), or whole words only (word: 'vet' in 'veterans' and 'vets' "
        "no longer counts). Struck hits never count.",
    ),
    OptionSpec(
        "keyword_case",
        "insensitive",
        ("insensitive", "sensitive"),
        "Keyword case: any case counts (insensitive), or only hits written in the keyword's "
        "own case (sensitive).",
    ),
    OptionSpec(
        "partial_range",
        "judge",
        ("judge", "midpoint", "low", "high"),
        "Points of a Partial answer when the rubric gives a range (e.g. 'Partial (1–3)=1–3'): "
        "the judge's own number (its drb_partial_points verdict, clamped into the range; the "
        "midpoint when there is none), as the paper's judge must 'assign a score based only on "
        "the score values defined in the rule' and the authors' notebook adds that number "
        "(judge); or the middle of the range, its low or its high end whatever the judge said.",
    ),
    OptionSpec(
        "partial_on_binary",
        "zero",
        ("zero", "half"),
        "A Partial answer on a rubric without a Partial value (the judge may only use listed "
        "values, but a reviewer can press h): the lower of Yes and No, 0 (zero), or halfway "
        "between them (half).",
    ),
    OptionSpec(
        "missing_rubric",
        "zero",
        ("zero", "exclude"),
        "A rubric without a value (the judge failed, or never judged it) in a report whose "
        "rubrics were judged: 0 points with its full score kept in N_Ratio's denominator "
        "(zero), or left out of numerator and denominator (exclude).",
    ),
    OptionSpec(
        "missing_relevance",
        "undefined",
        ("undefined", "lowest"),
        "A keyword that occurs but has no relevance value: drift (and the integrated score) is "
        "undefined until someone supplies one (undefined), or the keyword gets relevance 1 "
        "(lowest). A keyword that never occurs contributes 0 either way.",
    ),
    OptionSpec(
        "failed_report",
        "exclude",
        ("exclude", "zero"),
        "System means of the integrated score and C/Token: a report whose score is undefined "
        "leaves the mean (exclude), or counts as 0 (zero). The paper does not say (spec §2.8).",
    ),
)

METRICS = (
    Metric(
        "integrated",
        "InteScore",
        headline=True,
        digits=3,
        description="100 · Quality · (1 − SemanticDrift) · TBoost (mean of per-task products)",
    ),
    Metric("quality", "Quality", headline=True, digits=4, description="α·QSR ratio + β·GRR ratio"),
    Metric(
        "drift",
        "SemanticDrift",
        headline=True,
        digits=4,
        description="λ·FAK_Drift + μ·FDK_Drift (lower is better)",
    ),
    Metric(
        "tboost", "TBoost", headline=True, digits=4, description="1 + η·(θ·Rate_full + κ·Rate_host)"
    ),
    Metric("focus", "1 − SemanticDrift", digits=4, description="as the paper's tables show it"),
    Metric("qsr_ratio", "QSR ratio", digits=4, description="Σ QSR points / Σ QSR full scores"),
    Metric("grr_ratio", "GRR ratio", digits=4, description="Σ GRR points / Σ GRR full scores"),
    Metric(
        "fak_drift",
        "FAK drift",
        digits=4,
        description="1 − mean of min(freq/ε₊, 1)·rele/5 over anchor keywords",
    ),
    Metric(
        "fdk_drift",
        "FDK drift",
        digits=4,
        description="mean of min(freq/ε₋, 1)·rele/5 over drift keywords",
    ),
    Metric(
        "rate_full",
        "Rate full",
        digits=4,
        description="match_full / |TSLs| (above 1 when more citations fall under the TSLs "
        "than there are TSLs, tsl_match = under)",
    ),
    Metric("rate_host", "Rate host", digits=4, description="host matches / (annotations + 1)"),
    Metric(
        "anchor_hits",
        "anchor keyword hits",
        digits=2,
        description="counted occurrences of anchor keywords",
    ),
    Metric(
        "drift_hits",
        "drift keyword hits",
        digits=2,
        description="counted occurrences of drift keywords",
    ),
    Metric(
        "match_full",
        "full URL matches",
        digits=2,
        description="citations at or under a TSL (tsl_match = under), or TSLs cited exactly",
    ),
    Metric(
        "match_host",
        "host-only matches",
        digits=2,
        description="annotations on a TSL's host, not an exact TSL",
    ),
    Metric(
        "contri_per_token",
        "C/Token",
        digits=4,
        description="integrated / output tokens (mean of per-task ratios)",
    ),
)

_MEAN_ZERO = ("integrated", "contri_per_token")


@dataclass(frozen=True, slots=True)
class TaskShape:
    """What scoring needs of a task's criteria, shared by all its reports."""

    scales: dict[int, PointScale]
    qsr: tuple[int, ...]
    grr: tuple[int, ...]
    anchors: tuple[int, ...]
    drifts: tuple[int, ...]
    distinct_tsls: int
    tsl_urls: frozenset[str]
    """The TSLs' normalised forms (host + path), for the ``tsl_match = under`` test."""
    qsr_full: float


_SHAPES: dict[int, tuple[object, TaskShape]] = {}


def _scale_of(criterion: CriterionIn) -> PointScale:
    try:
        return parse_point_scale(criterion.text)
    except PointScaleError:
        # Only a native bundle can hold such a rubric (the DR. Bench importer refuses it):
        # it is worth its weight for Yes and nothing for No.
        weight = criterion.weight if criterion.weight is not None else 1.0
        return PointScale(float(weight), 0.0, None, "")


def task_shape(report: ReportInput) -> TaskShape:
    """The task's rubric scales and keyword/TSL lists (computed once per task)."""
    cached = _SHAPES.get(report.task_id)
    if cached is not None and cached[0] is report.criteria:
        return cached[1]
    shape = _shape_of(report.criteria)
    if len(_SHAPES) > 100_000:
        _SHAPES.clear()
    _SHAPES[report.task_id] = (report.criteria, shape)
    return shape


def _shape_of(criteria: Sequence[CriterionIn]) -> TaskShape:
    scales: dict[int, PointScale] = {}
    groups: dict[str, list[int]] = {d: [] for d in DIMENSIONS}
    tsls: list[str] = []
    for c in criteria:
        if c.dimension not in groups:
            continue
        groups[c.dimension].append(c.id)
        if c.dimension in (QSR, GRR):
            scales[c.id] = _scale_of(c)
        elif c.dimension == TRUSTED:
            tsls.append(c.text)
    tsl_urls = distinct(tsls)
    return TaskShape(
        scales,
        tuple(groups[QSR]),
        tuple(groups[GRR]),
        tuple(groups[ANCHOR]),
        tuple(groups[DRIFT]),
        len(tsl_urls),
        frozenset(u.normalised for u in tsl_urls),
        sum(scales[c].full for c in groups[QSR]),
    )


def answer_points(
    scale: PointScale, answer: str, options: Mapping[str, str], given: float | None = None
) -> float:
    """Points one answer earns on one rubric (``given``: the number for a Partial range)."""
    if answer == "yes":
        return scale.yes
    if answer == "no":
        return scale.no
    partial = scale.partial_points(options["partial_range"], given)
    if partial is not None:
        return partial
    if options["partial_on_binary"] == "half":
        return (scale.yes + scale.no) / 2
    return min(scale.yes, scale.no)


def rubric_ratio(
    ids: Sequence[int],
    scales: Mapping[int, PointScale],
    answers: Mapping[int, str | None],
    options: Mapping[str, str],
    points: Mapping[int, float] | None = None,
    total: float | None = None,
) -> float | None:
    """Σ points / Σ full scores over a rubric set (None when nothing is left to divide by).

    ``points`` are the given numbers of Partial answers on ranged rubrics, by criterion;
    ``total`` replaces the set's Σ full scores (the QSRs' 30), less the full scores of rubrics
    that ``missing_rubric = exclude`` leaves out.
    """
    exclude = options["missing_rubric"] == "exclude"
    given = points or {}
    got = full = left_out = 0.0
    for cid in ids:
        scale = scales[cid]
        answer = answers.get(cid)
        if answer is None:
            if exclude:
                left_out += scale.full
                continue
        else:
            got += answer_points(scale, answer, options, given.get(cid))
        full += scale.full
    if total is not None:
        full = total - left_out
    return got / full if full > 0 else None


def keyword_term(freq: float, relevance: float, eps: float) -> float:
    """min(freq/ε, 1) · N_Ratio(rele), N_Ratio(rele) = rele/5."""
    return min(freq / eps, 1.0) * (relevance / 5.0)


def keyword_drifts(
    anchors: Sequence[tuple[float, float | None]],
    drifts: Sequence[tuple[float, float | None]],
    options: Mapping[str, str],
) -> tuple[float, float] | None:
    """(FAK_Drift, FDK_Drift) from (freq, relevance) pairs; None when a needed rele is missing."""
    lowest = options["missing_relevance"] == "lowest"

    def mean_term(pairs: Sequence[tuple[float, float | None]], eps: float) -> float | None:
        if not pairs:
            return 0.0
        total = 0.0
        for freq, rele in pairs:
            if freq <= 0:
                continue
            if rele is None:
                if not lowest:
                    return None
                rele = 1.0
            total += keyword_term(freq, rele, eps)
        return total / len(pairs)

    fak = mean_term(anchors, float(options["eps_plus"]))
    fdk = mean_term(drifts, float(options["eps_minus"]))
    if fak is None or fdk is None:
        return None
    return (1.0 - fak if anchors else 0.0), fdk


def semantic_drift(fak: float, fdk: float) -> float:
    return PARAMS["lambda"] * fak + PARAMS["mu"] * fdk


def trust_boost(
    n_tsls: int, n_annotations: int, full: int, host_only: int, options: Mapping[str, str]
) -> tuple[float, float, float]:
    """(TBoost, Rate_full, Rate_host) from the match counts of one report.

    Under ``tsl_match = exact`` match_full is the number of TSLs cited, at most S (a reviewer
    may mark more citations full, e.g. two mirrors of one TSL); under ``under`` it counts
    citations, as the authors' notebook does, and may exceed S.
    """
    match_full = min(full, n_tsls) if options["tsl_match"] == "exact" else full
    rate_full = match_full / n_tsls if n_tsls else 0.0
    host = host_only if options["host_rate"] == "alg1_excl_full" else host_only + full
    rate_host = host / (n_annotations + 1)
    boost = 1.0 + PARAMS["eta"] * (PARAMS["theta"] * rate_full + PARAMS["kappa"] * rate_host)
    return boost, rate_full, rate_host


def integrated_score(quality: float, drift: float, boost: float) -> float:
    return 100.0 * quality * (1.0 - drift) * boost


def _output_tokens(metadata: Mapping[str, object]) -> float | None:
    usage = metadata.get("token_usage")
    if not isinstance(usage, Mapping):
        return None
    total, given = usage.get("total"), usage.get("input")
    if not isinstance(total, int | float) or not isinstance(given, int | float):
        return None
    out = float(total) - float(given)
    return out if out > 0 else None


@dataclass(slots=True)
class _Tally:
    """What one report's DR. Bench verdicts say, gathered by kind in one pass."""

    words_only: bool
    case_only: bool
    answers: dict[int, str | None] = field(default_factory=dict)
    relevance: dict[int, float] = field(default_factory=dict)
    points: dict[int, float] = field(default_factory=dict)
    freq: dict[int, int] = field(default_factory=dict)
    trusted: list[tuple[str | None, str | None]] = field(default_factory=list)
    qsr_seen: bool = False
    grr_seen: bool = False


def _tally_hit(tally: _Tally, v: VerdictIn, value: str | None) -> None:
    """A keyword occurrence counts when it stands and the matching options accept its flags."""
    if value != "true" or v.criterion_id is None:
        return
    whole, exact = key_flags(v.key)
    if (tally.words_only and not whole) or (tally.case_only and not exact):
        return
    tally.freq[v.criterion_id] = tally.freq.get(v.criterion_id, 0) + 1


def _tally_relevance(tally: _Tally, v: VerdictIn, value: str | None) -> None:
    if value is not None and v.criterion_id is not None:
        tally.relevance[v.criterion_id] = float(value)


def _tally_points(tally: _Tally, v: VerdictIn, value: str | None) -> None:
    if value is not None and v.criterion_id is not None:
        tally.points[v.criterion_id] = float(value)


def _tally_trusted(tally: _Tally, v: VerdictIn, value: str | None) -> None:
    tally.trusted.append((v.key, value))


_TALLY: dict[str, Callable[[_Tally, VerdictIn, str | None], None]] = {
    "drb_keyword_hit": _tally_hit,
    "drb_relevance": _tally_relevance,
    "drb_partial_points": _tally_points,
    "drb_trusted": _tally_trusted,
}
"""Where the value of each verdict kind other than a rubric answer goes; a ``drb_`` kind not
listed still marks the report as DR. Bench's."""

_ANSWERS = frozenset({"drb_qsr", "drb_grr"})
"""Rubric answers, most of a report's verdicts: read inline, by criterion (the later wins)."""


def _tally(report: ReportInput, field_index: int, options: Mapping[str, str]) -> _Tally | None:
    """The report's verdicts by kind, or None when it has no DR. Bench verdict at all."""
    tally = _Tally(options["keyword_match"] == "word", options["keyword_case"] == "sensitive")
    answers = tally.answers
    answered = dict.fromkeys(_ANSWERS, False)
    ours = 0
    for v in report.verdicts:
        kind = v.kind
        if not kind.startswith("drb_"):
            continue
        ours += 1
        value: str | None = v[field_index]  # type: ignore[assignment]
        if kind in _ANSWERS:
            if v.criterion_id is not None:
                answers[v.criterion_id] = value
                answered[kind] = True
        elif (step := _TALLY.get(kind)) is not None:
            step(tally, v, value)
    tally.qsr_seen = answered["drb_qsr"]
    tally.grr_seen = answered["drb_grr"]
    return tally if ours else None


def _trusted_matches(
    trusted: Sequence[tuple[str | None, str | None]], tsl_urls: frozenset[str], under: bool
) -> tuple[int, int]:
    """(full, host-only) annotation counts; under ``tsl_match = under`` a host match at or under
    a TSL counts as full."""
    full = host = 0
    for url, value in trusted:
        if value == "full" or (
            under and value == "host" and url is not None and under_a_tsl(url, tsl_urls)
        ):
            full += 1
        elif value == "host":
            host += 1
    return full, host


def _quality(
    tally: _Tally, shape: TaskShape, options: Mapping[str, str], scores: ReportScores
) -> float | None:
    """QSR and GRR ratios and Quality; a rubric set nobody judged has no ratio."""
    qsr_total = QSR_TOTAL if options["qsr_denominator"] == "thirty" else None
    qsr = (
        rubric_ratio(shape.qsr, shape.scales, tally.answers, options, tally.points, qsr_total)
        if tally.qsr_seen
        else None
    )
    grr = rubric_ratio(shape.grr, shape.scales, tally.answers, options) if tally.grr_seen else None
    scores["qsr_ratio"] = qsr
    scores["grr_ratio"] = grr
    quality: float | None = None
    if qsr is not None and grr is not None:
        quality = PARAMS["alpha"] * qsr + PARAMS["beta"] * grr
    scores["quality"] = quality
    return quality


def _drift(
    tally: _Tally, shape: TaskShape, options: Mapping[str, str], scores: ReportScores
) -> float | None:
    """Keyword hit totals, the FAK/FDK parts and SemanticDrift (None: a relevance is missing)."""
    freq, relevance = tally.freq, tally.relevance
    anchor_pairs = [(float(freq.get(c, 0)), relevance.get(c)) for c in shape.anchors]
    drift_pairs = [(float(freq.get(c, 0)), relevance.get(c)) for c in shape.drifts]
    scores["anchor_hits"] = sum(f for f, _ in anchor_pairs)
    scores["drift_hits"] = sum(f for f, _ in drift_pairs)
    parts = keyword_drifts(anchor_pairs, drift_pairs, options)
    drift: float | None = None
    if parts is not None:
        drift = semantic_drift(*parts)
        scores["fak_drift"], scores["fdk_drift"] = parts
    scores["drift"] = drift
    scores["focus"] = None if drift is None else 1.0 - drift
    return drift


def _trust(
    tally: _Tally, shape: TaskShape, options: Mapping[str, str], scores: ReportScores
) -> float:
    """TrustworthyBoost and the match counts and rates it comes from."""
    under = options["tsl_match"] == "under"
    full, host = _trusted_matches(tally.trusted, shape.tsl_urls, under)
    boost, rate_full, rate_host = trust_boost(
        shape.distinct_tsls, len(tally.trusted), full, host, options
    )
    scores["tboost"] = boost
    scores["rate_full"] = rate_full
    scores["rate_host"] = rate_host
    scores["match_full"] = float(min(full, shape.distinct_tsls) if not under else full)
    scores["match_host"] = float(host)
    return boost


def _metric_values(scored: Sequence[ReportScores], name: str, zero: bool) -> list[float]:
    """The per-report values a system mean is taken over: under ``failed_report = zero`` a
    report without an integrated score counts as 0 (for contri_per_token, only when its token
    count is known); otherwise the reports with a value."""
    if zero and name in _MEAN_ZERO:
        return [
            r.get(name) or 0.0
            for r in scored
            if name != "contri_per_token" or r.get("_tokens") is not None
        ]
    return [v for r in scored if (v := r.get(name)) is not None]


class DrBenchFramework(FrameworkBase):
    name: str = NAME
    label: str = "DR. Bench"
    kinds: Mapping[str, VerdictKind] = KINDS
    rating: Rating | None = None
    proposals: Proposals = Proposals(free_form=True)
    rejudge: Rejudge | None = Rejudge(
        frozenset({"drb_qsr", "drb_grr", "drb_partial_points", "drb_relevance"}),
        steps={
            "drb_qsr": "qsr",
            "drb_grr": "grr",
            "drb_partial_points": "qsr",
            "drb_relevance": "relevance",
        },
        pipeline="reviewer.frameworks.dr_bench.judge_pipeline:SPEC",
    )
    grading: Grading | None = GRADING
    metrics: Sequence[Metric] = METRICS
    options: Sequence[OptionSpec] = OPTIONS

    def score_report(
        self, report: ReportInput, variant: Variant, options: Mapping[str, str]
    ) -> ReportScores:
        tally = _tally(report, variant_field(variant), options)
        if tally is None:
            return {}
        shape = task_shape(report)
        scores: ReportScores = {}
        quality = _quality(tally, shape, options, scores)
        drift = _drift(tally, shape, options, scores)
        boost = _trust(tally, shape, options, scores)
        integrated = None
        if quality is not None and drift is not None:
            integrated = integrated_score(quality, drift, boost)
        scores["integrated"] = integrated
        tokens = _output_tokens(report.report_metadata)
        scores["contri_per_token"] = (
            integrated / tokens if integrated is not None and tokens is not None else None
        )
        scores["_annotations"] = float(len(tally.trusted))
        scores["_tsls"] = float(shape.distinct_tsls)
        scores["_tokens"] = tokens
        return scores

    def aggregate(
        self, reports: Sequence[ReportScores], options: Mapping[str, str]
    ) -> dict[str, Aggregate]:
        scored = [r for r in reports if r]
        zero = options["failed_report"] == "zero"
        out: dict[str, Aggregate] = {}
        for metric in METRICS:
            values = _metric_values(scored, metric.name, zero)
            out[metric.name] = Aggregate(sum(values) / len(values) if values else None, len(values))
        return out


FRAMEWORK = DrBenchFramework()
