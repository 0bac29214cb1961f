"""DeepResearch Bench FACT: citation accuracy and effective citations.

Implements ``specs/deepresearch_bench.md`` §3.2–3.3. Each FACT statement (one deduplicated
statement–URL pair) is a claim with its ``url``; the ``fact`` verdict says whether the fetched
page supports it: ``supported``, ``unsupported`` or ``unknown`` (no valid content). A verdict
whose judge call failed (``validate_error``) has no value and counts as not judged.

Both definitions are computed, named. **The headline** (the queue's columns, ``C. Acc.`` and
``E. Cit.``) **is the reference code's**, because that is what published figures come from:
each repository's ``fact_result.txt`` — the anchors' included, which Gavel reproduces exactly
(``tests/test_drb.py``) — is written by ``utils/stat.py``, and the paper does not say which
definition produced its Table 1 (``specs/deepresearch_bench.md`` §3.3, [UNCERTAIN]). The spec
asked for the paper's definitions by default; they are shown beside the headline as
``C. Acc. (paper)`` and ``E. Cit. (paper)`` instead, since numbers meant to be compared with
a leaderboard must be computed the way the leaderboard was.

Reference code (``utils/stat.py``; reproduces ``fact_result.txt``), pooled over a system:

- N = reports with a non-empty statement list (reports without statements are *skipped*);
- ``total_citations`` = Σ pairs judged supported or unsupported / N (``unknown`` and failed
  verdicts excluded);
- ``effective_citations`` = Σ supported / N;
- ``citation_accuracy`` = Σ supported / Σ (supported + unsupported), a micro (pooled) ratio,
  0 when nothing was judged, as the code writes it.

Paper (App. E, Eqs. 4–5), over |T| = every report of the system:

- ``citation_accuracy_paper`` = mean over reports of N_s / N_u (N_u = the report's unique
  pairs), 0 for a report with no pairs: a macro average;
- ``effective_citations_paper`` = Σ supported / |T|.

Which reports are in |T|: the store cannot tell a report whose extraction found no citation
from one the FACT pipeline never saw, so every report of a system that has FACT verdicts at all
counts (a system without any FACT verdict has no FACT scores). A report with statements but no
verdict at all (only extraction or dedup was run) is left out of both definitions.

A report re-judged by a Gavel run that extracted its own statements has two extractions; the
newest activated one with verdicts in force counts (``reviewer.inputs.extraction_in_force``),
so no statement is counted twice.

Per report the public numbers are that report's own values (``total_citations`` and
``effective_citations`` are its counts); the hidden parts (``_supported``, ``_judged``,
``_pairs``, ``_cited``, ``_validated``, ``_verdicts``) are what system aggregation pools.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

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
from reviewer.frameworks.deepresearch_bench.proposals import FACT_PROPOSALS
from reviewer.grading import Grading
from reviewer.inputs import ReportInput, extraction_in_force
from reviewer.scales import SUPPORT

NAME = "fact"

KINDS = {
    "fact": VerdictKind(
        "fact",
        NAME,
        SUPPORT,
        "claim",
        "FACT statement support",
        "Does the cited page support the statement? supported / unsupported / unknown "
        "(the page has no valid content).",
    ),
}

OPTIONS = (
    OptionSpec(
        "paper_unknown",
        "count",
        ("count", "exclude"),
        "Paper accuracy N_s/N_u: the paper's judgment is binary, so an 'unknown' or failed pair "
        "stays in N_u as not supported (count), or such pairs leave N_u as in the code's "
        "accuracy (exclude).",
    ),
)

METRICS = (
    Metric(
        "citation_accuracy",
        "C. Acc. (code)",
        headline=True,
        digits=4,
        description="pooled supported / (supported + unsupported), reference code: the "
        "headline, as published figures (fact_result.txt) are computed",
    ),
    Metric(
        "effective_citations",
        "E. Cit. (code)",
        headline=True,
        digits=2,
        description="supported statements per report with citations, reference code: the "
        "headline, as published figures (fact_result.txt) are computed",
    ),
    Metric(
        "total_citations",
        "judged citations (code)",
        digits=2,
        description="supported + unsupported statements per report with citations",
    ),
    Metric(
        "citation_accuracy_paper",
        "C. Acc. (paper)",
        digits=4,
        description="macro mean of supported / unique pairs, 0 without pairs (Eq. 4)",
    ),
    Metric(
        "effective_citations_paper",
        "E. Cit. (paper)",
        digits=2,
        description="supported statements / all reports (Eq. 5)",
    ),
)


class FactFramework(FrameworkBase):
    name: str = NAME
    label: str = "DeepResearch Bench FACT"
    kinds: Mapping[str, VerdictKind] = KINDS
    rating: Rating | None = None
    proposals: Proposals = FACT_PROPOSALS
    rejudge: Rejudge | None = Rejudge(
        frozenset({"fact"}),
        steps={"fact": "validate"},
        pipeline="reviewer.frameworks.deepresearch_bench.judge_fact:SPEC",
    )
    grading: Grading | None = Grading(
        unreachable={"fact": "unknown"}, evidence_kinds=frozenset({"fact"})
    )
    metrics: Sequence[Metric] = METRICS
    options: Sequence[OptionSpec] = OPTIONS

    def score_report(
        self, report: ReportInput, variant: Variant, options: Mapping[str, str]
    ) -> ReportScores:
        keep = extraction_in_force(
            report.claims, {v.claim_id for v in report.verdicts if v.kind == "fact"}
        )
        pairs = _cited_pairs(report, keep)
        verdicts, supported, judged, not_judged = _fact_counts(report, variant, keep)
        scores: ReportScores = {
            "_pairs": float(pairs),
            "_verdicts": float(verdicts),
            "_supported": float(supported),
            "_judged": float(judged),
            "_cited": 1.0 if pairs else 0.0,
            "_validated": 1.0 if verdicts else 0.0,
        }
        if pairs and verdicts:
            scores["citation_accuracy"] = supported / judged if judged else None
            scores["total_citations"] = float(judged)
            scores["effective_citations"] = float(supported)
            scores["citation_accuracy_paper"] = _paper_accuracy(
                supported, pairs, not_judged, options
            )
            scores["effective_citations_paper"] = float(supported)
        return scores

    def aggregate(
        self, reports: Sequence[ReportScores], options: Mapping[str, str]
    ) -> dict[str, Aggregate]:
        reports = [r for r in reports if r]
        if not any(r.get("_verdicts") for r in reports):
            return {m.name: Aggregate(None, 0) for m in METRICS}
        return {**_code_means(reports), **_paper_means(reports)}


def _cited_pairs(report: ReportInput, keep: set[int] | None) -> int:
    """The (statement, URL) pairs of the extraction in force."""
    return sum(1 for c in report.claims if c.url is not None and (keep is None or c.id in keep))


def _total(reports: Sequence[ReportScores], key: str) -> float:
    return sum(r.get(key) or 0.0 for r in reports)


def _fact_counts(
    report: ReportInput, variant: Variant, keep: set[int] | None
) -> tuple[int, int, int, int]:
    """(verdicts, supported, judged, not judged) over the fact verdicts of the extraction in
    force; unknown and failed verdicts are not judged."""
    verdicts = supported = judged = not_judged = 0
    for v in report.verdicts:
        if v.kind != "fact" or (keep is not None and v.claim_id not in keep):
            continue
        verdicts += 1
        value = v.value(variant)
        if value is None or value == "unknown":
            not_judged += 1
        else:
            judged += 1
            supported += value == "supported"
    return verdicts, supported, judged, not_judged


def _code_means(reports: Sequence[ReportScores]) -> dict[str, Aggregate]:
    """The reference code's figures: over reports that cite and were validated, accuracy as
    pooled supported / judged."""
    code = [r for r in reports if r.get("_cited") and r.get("_validated")]
    n = len(code)
    supported = _total(code, "_supported")
    judged = _total(code, "_judged")
    return {
        "citation_accuracy": Aggregate(
            (supported / judged if judged else 0.0) if n else None, int(judged)
        ),
        "effective_citations": Aggregate(supported / n if n else None, n),
        "total_citations": Aggregate(judged / n if n else None, n),
    }


def _paper_means(reports: Sequence[ReportScores]) -> dict[str, Aggregate]:
    """The paper's figures (Eq. 4, 5): means over every report but those that cite and were
    never validated."""
    paper = [r for r in reports if not (r.get("_cited") and not r.get("_validated"))]
    t = len(paper)
    accuracies = [r.get("citation_accuracy_paper") or 0.0 for r in paper]
    paper_supported = _total(paper, "_supported")
    return {
        "citation_accuracy_paper": Aggregate(sum(accuracies) / t if t else None, t),
        "effective_citations_paper": Aggregate(paper_supported / t if t else None, t),
    }


def _paper_accuracy(
    supported: int, pairs: int, not_judged: int, options: Mapping[str, str]
) -> float:
    """Acc_t = N_s / N_u (0 when N_u = 0), with or without unknown/failed pairs in N_u."""
    denominator = pairs if options["paper_unknown"] == "count" else pairs - not_judged
    return supported / denominator if denominator > 0 else 0.0


FRAMEWORK = FactFramework()
