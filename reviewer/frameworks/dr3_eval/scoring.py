"""DR3-Eval: information recall, citation coverage, factual accuracy, checklist, depth.

Implements ``specs/dr3_eval.md`` §2 (paper Eqs. 1–6, Appendix F; the evaluator code where the
paper is silent). Every metric is on the paper's 0–100 scale.

What is judged, and how it is stored (criteria carry the task's gold artefacts):

- ``dr3_insight`` on a gold-insight criterion (dimension ``insight_uf`` = I_UF from the user
  files, ``insight_sc`` = I_SC from the sandbox): 1 / 0.5 / 0. The 0.5 label is kept although
  the paper's recall counts only full coverage (Eqs. 1–2, "strict").
- ``dr3_citation`` on a required-document criterion (``required_file`` = a user file,
  ``required_page`` = a supportive sandbox page, together D_req): cited / missed. Decided by a
  title-matching rule, not an LLM; the rule's match type and the citation it matched are kept
  (explanation, evidence) so a reviewer can unlink a false match.
- ``dr3_support`` on a (claim, reference) pair: supported / unsupported, one per citation of a
  claim. A claim is supported iff every one of its citations supports it (the code's rule,
  Table 12); a claim without citations is unsupported.
- ``dr3_checklist`` on a checklist criterion (``checklist``): true / false.
- ``dr3_depth`` on the depth criterion (``depth``): the judge's 1–10, continuous so a reviewer
  may type a half point (a deliberate deviation the ``dq_value`` option makes visible).

A report whose claims a Gavel run extracted again has two extractions; FA counts the newest
activated one with verdicts in force (``reviewer.inputs.extraction_in_force``).

Report metadata ``dr3_ref_origin`` / ``dr3_ref_class`` (reference index -> ``sandbox`` or
``user_file``; -> ``supportive``, ``distractor``, ``noise``, ``user_file`` or ``unresolved``)
drive the FA split into sandbox and user-file claims and the distractor share.

System numbers are means over the reports where a metric is defined (the code excludes failed,
negative scores); ``Avg`` follows the ``average*`` options.
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
from reviewer.frameworks.dr3_eval.grading import GRADING
from reviewer.grading import Grading
from reviewer.inputs import ReportInput, extraction_in_force
from reviewer.scales import BINARY, Choice, Scale

NAME = "dr3"

DIM_UF = "insight_uf"
DIM_SC = "insight_sc"
DIM_FILE = "required_file"
DIM_PAGE = "required_page"
DIM_CHECK = "checklist"
DIM_DEPTH = "depth"
DIMENSIONS = (DIM_UF, DIM_SC, DIM_FILE, DIM_PAGE, DIM_CHECK, DIM_DEPTH)

ORIGIN_META = "dr3_ref_origin"
CLASS_META = "dr3_ref_class"
SANDBOX_CLASSES = ("supportive", "distractor", "noise")
"""The three classes of sandbox documents (spec §1.3)."""

CODE_USER_DOC_EXTENSIONS = (
    ".md",
    ".txt",
    ".pdf",
    ".docx",
    ".doc",
    ".pptx",
    ".ppt",
    ".xlsx",
    ".xls",
)
"""User files the evaluator code counts as required documents (spec §2.2); the paper counts all."""

COVERAGE = Scale(
    "dr3_coverage",
    "1 fully / 0.5 partially / 0 not covered",
    (
        Choice("1", "fully covered", "1", 1.0, ("yes", "full", "covered", "support")),
        Choice("0.5", "partially covered", "h", 0.5, ("half", "partial", "partial_support")),
        Choice("0", "not covered", "0", 0.0, ("no", "not covered", "not_support")),
    ),
)
CITED = Scale(
    "dr3_cited",
    "cited / missed",
    (
        Choice("cited", "cited", "1", 1.0, ("true", "yes", "1")),
        Choice("missed", "missed", "0", 0.0, ("false", "no", "0", "not cited", "not_found")),
    ),
)
SUPPORTED = Scale(
    "dr3_support",
    "supported / unsupported",
    (
        Choice("supported", "supported", "s", 1.0, ("true", "yes", "support")),
        Choice(
            "unsupported",
            "unsupported",
            "x",
            0.0,
            ("false", "no", "not supported", "source not found"),
        ),
    ),
)
DEPTH = Scale("dr3_depth10", "continuous 1–10", low=1.0, high=10.0)

KINDS = {
    "dr3_insight": VerdictKind(
        "dr3_insight",
        NAME,
        COVERAGE,
        "criterion",
        "DR3 insight coverage",
        "Is the gold insight covered by the report? 1 fully, 0.5 partially, 0 not. Only full "
        "coverage counts toward IR (strict); 0.5 is kept.",
    ),
    "dr3_citation": VerdictKind(
        "dr3_citation",
        NAME,
        CITED,
        "criterion",
        "DR3 required document cited",
        "Does the report cite this required document (user file or supportive page)? Decided by "
        "title matching; evidence holds the matched citation, explanation the match rule.",
    ),
    "dr3_support": VerdictKind(
        "dr3_support",
        NAME,
        SUPPORTED,
        "claim_ref",
        "DR3 claim ↔ source support",
        "Does the cited source support the claim (lenient rubric J.0.2)? A claim is supported "
        "only if all its citations are.",
    ),
    "dr3_checklist": VerdictKind(
        "dr3_checklist",
        NAME,
        BINARY,
        "criterion",
        "DR3 checklist item",
        "Does the report clearly address this requirement with specific content?",
    ),
    "dr3_depth": VerdictKind(
        "dr3_depth",
        NAME,
        DEPTH,
        "criterion",
        "DR3 depth & quality",
        "Depth & Quality of Analysis, 1–10 (rubric J.0.4); DQ = score × 10.",
    ),
}

OPTIONS = (
    OptionSpec(
        "ir_partial",
        "strict",
        ("strict", "half"),
        "IR_UF / IR_SC: only full coverage counts, 0.5 counts 0 (strict: Eqs. 1–2 and the code), "
        "or a partial insight counts 0.5 (half: not used by the paper).",
    ),
    OptionSpec(
        "ir_failed",
        "zero",
        ("zero", "exclude"),
        "A gold insight the judge returned no usable label for: counts as not covered, as the "
        "code's 'NOT FOUND' does (zero), or leaves the denominator (exclude).",
    ),
    OptionSpec(
        "ir_empty",
        "exclude",
        ("exclude", "hundred"),
        "A task with no gold insights of one origin (IR ran on the other): the component has no "
        "value and leaves the means (exclude), or is 100 as the code's unavailable component "
        "(hundred).",
    ),
    OptionSpec(
        "cc_user_files",
        "all",
        ("all", "documents"),
        "Which user files D_req holds: every user file, as the paper's worked example counts "
        "images and video (all), or only the code's document extensions .md .txt .pdf .docx "
        ".doc .pptx .ppt .xlsx .xls (documents).",
    ),
    OptionSpec(
        "fa_unit",
        "claim",
        ("claim", "pair"),
        "FA's unit: claims, supported iff all their citations support them (claim: the code "
        "and Table 12), or (claim, source) pairs (pair: Eq. 4 read literally).",
    ),
    OptionSpec(
        "fa_failed_pair",
        "unsupported",
        ("unsupported", "exclude"),
        "A (claim, citation) pair without a verdict (judge failure): not supported, as the "
        "code's 'Not verified' (unsupported), or left out of the claim's AND and of the pair "
        "count (exclude; a claim whose pairs are all left out leaves FA).",
    ),
    OptionSpec(
        "if_failed",
        "exclude",
        ("exclude", "unsatisfied"),
        "A checklist item the judge failed on: leaves the denominator, IF = satisfied / valid "
        "(exclude: the code), or counts as not satisfied (unsatisfied).",
    ),
    OptionSpec(
        "dq_value",
        "as_given",
        ("as_given", "truncate"),
        "DQ from the 1–10 score: score × 10 as given, so a reviewer's 7.5 gives 75 (as_given), "
        "or clip(int(score), 1, 10) × 10 as the code parses it (truncate).",
    ),
    OptionSpec(
        "average",
        "six",
        ("six", "five"),
        "Avg: the unweighted mean of IR_UF, IR_SC, CC, FA, IF, DQ (six: Table 2), or the code's "
        "per-case total over IR (combined), FA, DQ, IF, CC (five).",
    ),
    OptionSpec(
        "average_missing",
        "available",
        ("available", "zero"),
        "A metric without a value in the average: the mean of the metrics that have one "
        "(available), or the metric counts 0 over the fixed number of columns as the code's "
        "total_score does (zero).",
    ),
    OptionSpec(
        "average_scope",
        "columns",
        ("columns", "reports"),
        "A system's Avg: the average of its metric means, as Table 2's Avg column (columns), or "
        "the mean of its reports' averages, as the code's summary (reports).",
    ),
)

SIX = ("IR_UF", "IR_SC", "CC", "FA", "IF", "DQ")
FIVE = ("IR", "FA", "DQ", "IF", "CC")

METRICS = (
    Metric(
        "Avg",
        "Avg",
        headline=True,
        digits=2,
        description="mean of the six columns (or the five-metric total, option 'average')",
    ),
    Metric(
        "IR_UF",
        "IR_UF",
        headline=True,
        digits=2,
        description="share of user-file gold insights fully covered (Eq. 1)",
    ),
    Metric(
        "IR_SC",
        "IR_SC",
        headline=True,
        digits=2,
        description="share of sandbox gold insights fully covered (Eq. 2)",
    ),
    Metric(
        "CC",
        "CC",
        headline=True,
        digits=2,
        description="share of required documents cited, |D_req ∩ D_cited| / |D_req| (Eq. 3)",
    ),
    Metric(
        "FA",
        "FA",
        headline=True,
        digits=2,
        description="share of claims (or pairs) supported by their sources (Eq. 4)",
    ),
    Metric(
        "IF",
        "IF",
        headline=True,
        digits=2,
        description="share of checklist items satisfied (Eq. 5)",
    ),
    Metric("DQ", "DQ", headline=True, digits=2, description="depth score × 10 (Eq. 6)"),
    Metric(
        "IR",
        "IR (combined)",
        digits=2,
        description="(IR_UF + IR_SC) / 2, or the one available (code, Table 8)",
    ),
    Metric(
        "CC_supportive",
        "CC supportive pages",
        digits=2,
        description="CC over the supportive sandbox pages only (code's useful_search)",
    ),
    Metric(
        "CC_userfiles",
        "CC user files",
        digits=2,
        description="CC over the user files only (code's user_document)",
    ),
    Metric(
        "FA_sandbox",
        "FA sandbox",
        digits=2,
        description="FA over claims whose first citation is a sandbox document",
    ),
    Metric(
        "FA_userfiles",
        "FA user files",
        digits=2,
        description="FA over claims whose first citation is a user file",
    ),
    Metric(
        "distractor_claims",
        "claims citing a distractor (ours)",
        digits=2,
        description="share of claims citing at least one distractor page: FA does not "
        "see it, reviewers should (ours, not in the paper)",
    ),
)


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _percent(num: float, den: float) -> float | None:
    return 100.0 * num / den if den else None


def recall(codes: Sequence[str | None], ran: bool, options: Mapping[str, str]) -> float | None:
    """IR over one gold set: one code per gold insight (None = no usable verdict)."""
    if not codes:
        return 100.0 if ran and options["ir_empty"] == "hundred" else None
    if not ran:
        return None
    counted = [c for c in codes if c is not None] if options["ir_failed"] == "exclude" else codes
    return _percent(_credit(counted, options["ir_partial"] == "half"), float(len(counted)))


def _credit(codes: Sequence[str | None], half: bool) -> float:
    """Fully covered insights count 1; partly covered ones 0.5 in the 'half' reading, else 0."""
    credit = {"1": 1.0, "0.5": 0.5 if half else 0.0}
    got = 0.0
    for code in codes:
        if code is not None:
            got += credit.get(code, 0.0)
    return got


def depth_score(code: str | None, options: Mapping[str, str]) -> float | None:
    if code is None:
        return None
    value = float(code)
    if options["dq_value"] == "truncate":
        value = float(min(10, max(1, int(value))))
    return value * 10.0


def average(scores: Mapping[str, float | None], options: Mapping[str, str]) -> float | None:
    """Avg of one report (or of a system's column means) under the ``average*`` options."""
    columns = SIX if options["average"] == "six" else FIVE
    values = [v for c in columns if (v := scores.get(c)) is not None]
    if not values:
        return None
    if options["average_missing"] == "zero":
        return sum(values) / len(columns)
    return sum(values) / len(values)


def _ref_map(metadata: Mapping[str, object], key: str) -> dict[int, str]:
    raw = metadata.get(key)
    if not isinstance(raw, Mapping):
        return {}
    out: dict[int, str] = {}
    for k, v in raw.items():
        try:
            out[int(k)] = str(v)
        except (TypeError, ValueError):
            continue
    return out


_Unit = tuple[str | None, list[bool]]
"""One FA unit: the origin it counts under, and its pairs' support (all must hold)."""


def _judged(refs: list[int], verdicts: Mapping[int, str | None], exclude_failed: bool) -> list[int]:
    """The references whose pair counts: a pair without a verdict is left out when failures
    are excluded."""
    return [r for r in refs if not (exclude_failed and verdicts.get(r) is None)]


def _pair_units(
    refs: list[int],
    verdicts: Mapping[int, str | None],
    origin: Mapping[int, str],
    exclude_failed: bool,
) -> list[_Unit]:
    """Eq. 4 read literally: each (claim, source) pair is a unit of its source's origin."""
    return [
        (origin.get(r), [verdicts.get(r) == "supported"])
        for r in _judged(refs, verdicts, exclude_failed)
    ]


def _claim_unit(
    refs: list[int],
    verdicts: Mapping[int, str | None],
    origin: Mapping[int, str],
    exclude_failed: bool,
) -> list[_Unit]:
    """The code's unit: the claim, under its first citation's origin; none when every pair
    failed and failures are excluded."""
    kept = [verdicts.get(r) == "supported" for r in _judged(refs, verdicts, exclude_failed)]
    if refs and not kept:
        return []
    return [(origin.get(refs[0]) if refs else None, kept)]


def _tally(tally: dict[str | None, list[int]], units: list[_Unit]) -> None:
    """Count each unit, supported or not, overall and under its origin (sandbox-first and
    user-file-first units; a unit of no known origin counts overall only)."""
    for unit_origin, results in units:
        ok = bool(results) and all(results)
        for bucket in ("all", unit_origin):
            if bucket in tally:
                tally[bucket][0] += ok
                tally[bucket][1] += 1


def _verdicts_by_kind(
    report: ReportInput, variant: Variant
) -> tuple[dict[str, dict[int, str | None]], dict[int, dict[int, str | None]]]:
    """Criterion verdicts by kind and criterion, and support verdicts by claim and reference."""
    by_kind: dict[str, dict[int, str | None]] = {
        "dr3_insight": {},
        "dr3_citation": {},
        "dr3_checklist": {},
        "dr3_depth": {},
    }
    pairs: dict[int, dict[int, str | None]] = {}
    for v in report.verdicts:
        if v.kind == "dr3_support":
            if v.claim_id is not None and v.ref_idx is not None:
                pairs.setdefault(v.claim_id, {})[v.ref_idx] = v.value(variant)
        elif v.kind in by_kind and v.criterion_id is not None:
            by_kind[v.kind][v.criterion_id] = v.value(variant)
    return by_kind, pairs


def _depth(
    report: ReportInput, verdicts: Mapping[int, str | None], options: Mapping[str, str]
) -> float | None:
    """DQ: the mean depth score of the report's depth criteria that have one."""
    depth = [
        depth_score(verdicts[c.id], options)
        for c in report.criteria
        if c.dimension == DIM_DEPTH and c.id in verdicts
    ]
    return _mean([d for d in depth if d is not None])


class Dr3Framework(FrameworkBase):
    name: str = NAME
    label: str = "DR3-Eval"
    kinds: Mapping[str, VerdictKind] = KINDS
    rating: Rating | None = None
    proposals: Proposals = Proposals(free_form=True)
    rejudge: Rejudge | None = Rejudge(
        frozenset({"dr3_insight", "dr3_citation", "dr3_support", "dr3_checklist", "dr3_depth"}),
        steps={
            "dr3_insight": "insight",
            "dr3_citation": "citation",
            "dr3_support": "support",
            "dr3_checklist": "checklist",
            "dr3_depth": "depth",
        },
        pipeline="reviewer.frameworks.dr3_eval.judge_pipeline:SPEC",
    )
    grading: Grading | None = GRADING
    metrics: Sequence[Metric] = METRICS
    options: Sequence[OptionSpec] = OPTIONS

    def score_report(
        self, report: ReportInput, variant: Variant, options: Mapping[str, str]
    ) -> ReportScores:
        by_kind, pairs = _verdicts_by_kind(report, variant)
        if not any(by_kind.values()) and not pairs:
            return {}
        scores: ReportScores = {}
        self._recall(report, by_kind["dr3_insight"], options, scores)
        self._coverage(report, by_kind["dr3_citation"], options, scores)
        self._accuracy(report, pairs, bool(pairs), options, scores)
        self._checklist(report, by_kind["dr3_checklist"], options, scores)
        scores["DQ"] = _depth(report, by_kind["dr3_depth"], options)
        scores["Avg"] = average(scores, options)
        return scores

    @staticmethod
    def _recall(
        report: ReportInput,
        verdicts: Mapping[int, str | None],
        options: Mapping[str, str],
        scores: ReportScores,
    ) -> None:
        ran = bool(verdicts)
        for dimension, metric in ((DIM_UF, "IR_UF"), (DIM_SC, "IR_SC")):
            gold = [c.id for c in report.criteria if c.dimension == dimension]
            scores[metric] = recall([verdicts.get(cid) for cid in gold], ran, options)
        parts = [v for m in ("IR_UF", "IR_SC") if (v := scores[m]) is not None]
        scores["IR"] = _mean(parts)

    @staticmethod
    def _coverage(
        report: ReportInput,
        verdicts: Mapping[int, str | None],
        options: Mapping[str, str],
        scores: ReportScores,
    ) -> None:
        if not verdicts:
            scores["CC"] = scores["CC_supportive"] = scores["CC_userfiles"] = None
            return
        documents_only = options["cc_user_files"] == "documents"
        cited = {DIM_FILE: 0, DIM_PAGE: 0}
        total = {DIM_FILE: 0, DIM_PAGE: 0}
        for c in report.criteria:
            if c.dimension not in cited:
                continue
            if (
                documents_only
                and c.dimension == DIM_FILE
                and not c.text.strip().lower().endswith(CODE_USER_DOC_EXTENSIONS)
            ):
                continue
            total[c.dimension] += 1
            cited[c.dimension] += verdicts.get(c.id) == "cited"
        scores["CC"] = _percent(sum(cited.values()), sum(total.values()))
        scores["CC_supportive"] = _percent(cited[DIM_PAGE], total[DIM_PAGE])
        scores["CC_userfiles"] = _percent(cited[DIM_FILE], total[DIM_FILE])

    @staticmethod
    def _accuracy(
        report: ReportInput,
        pairs: Mapping[int, Mapping[int, str | None]],
        ran: bool,
        options: Mapping[str, str],
        scores: ReportScores,
    ) -> None:
        names = ("FA", "FA_sandbox", "FA_userfiles", "distractor_claims")
        if not ran or not report.claims:
            for name in names:
                scores[name] = None
            return
        origin = _ref_map(report.report_metadata, ORIGIN_META)
        klass = _ref_map(report.report_metadata, CLASS_META)
        exclude_failed = options["fa_failed_pair"] == "exclude"
        units_of = _pair_units if options["fa_unit"] == "pair" else _claim_unit
        keep = extraction_in_force(report.claims, set(pairs))
        claims = [c for c in report.claims if keep is None or c.id in keep]
        tally: dict[str | None, list[int]] = {"all": [0, 0], "sandbox": [0, 0], "user_file": [0, 0]}
        distractor = 0
        for claim in claims:
            verdicts = pairs.get(claim.id, {})
            refs = list(dict.fromkeys([*claim.citations, *verdicts]))
            distractor += any(klass.get(r) == "distractor" for r in refs)
            _tally(tally, units_of(refs, verdicts, origin, exclude_failed))
        scores["FA"] = _percent(*tally["all"])
        scores["FA_sandbox"] = _percent(*tally["sandbox"])
        scores["FA_userfiles"] = _percent(*tally["user_file"])
        scores["distractor_claims"] = _percent(distractor, len(claims))

    @staticmethod
    def _checklist(
        report: ReportInput,
        verdicts: Mapping[int, str | None],
        options: Mapping[str, str],
        scores: ReportScores,
    ) -> None:
        if not verdicts:
            scores["IF"] = None
            return
        satisfied = valid = 0
        for c in report.criteria:
            if c.dimension != DIM_CHECK:
                continue
            code = verdicts.get(c.id)
            if code is None and options["if_failed"] == "exclude":
                continue
            valid += 1
            satisfied += code == "true"
        scores["IF"] = _percent(satisfied, valid)

    def aggregate(
        self, reports: Sequence[ReportScores], options: Mapping[str, str]
    ) -> dict[str, Aggregate]:
        out: dict[str, Aggregate] = {}
        for metric in METRICS:
            values = [v for r in reports if (v := r.get(metric.name)) is not None]
            out[metric.name] = Aggregate(_mean(values), len(values))
        averaged = sum(1 for r in reports if r.get("Avg") is not None)
        if options["average_scope"] == "columns":
            columns = {name: agg.value for name, agg in out.items()}
            out["Avg"] = Aggregate(average(columns, options), averaged)
        return out


FRAMEWORK = Dr3Framework()
