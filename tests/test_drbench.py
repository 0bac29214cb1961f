"""DR. Bench: point scales, keyword and URL matchers, the §2.11 test vector, the importer on the
real RigorousBench task file, the sample run, and a reviewer's override moving the scores.

Expected values are computed by hand from ``specs/dr_bench.md`` (arithmetic in the comments).
Run with ``-s`` to see the reproduced figures printed.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from reviewer.errors import InputError
from reviewer.formats.checks import check_bundle
from reviewer.framework import ReportScores, resolve_options
from reviewer.frameworks.dr_bench.format import read
from reviewer.frameworks.dr_bench.general_rubrics import GENERAL_RUBRICS, GRR_TOTAL, grr_id
from reviewer.frameworks.dr_bench.keywords import citation_free, find_hits, hit_key, key_flags
from reviewer.frameworks.dr_bench.points import (
    PointScaleError,
    parse_point_scale,
    split_point_scale,
)
from reviewer.frameworks.dr_bench.scoring import FRAMEWORK, KINDS, trust_boost
from reviewer.frameworks.dr_bench.urls import match_annotations, normalise_url
from reviewer.inputs import CriterionIn, ReportInput, VerdictIn
from reviewer.models import Bundle, Criterion, JudgeRun, Judgment, Report, Suite, System, Task
from reviewer.registry import get_framework, get_scale
from tests.score_rows import all_scores

PROJECT = Path(__file__).resolve().parent.parent
SAMPLE = PROJECT / "sample_data" / "drbench"
WORKSTATION_KEYS = {"0", "1", "2", "3", "h", "c", "x", "u", "s", "f"}


def opts(**overrides: str) -> dict[str, str]:
    return resolve_options(FRAMEWORK, overrides)


TASK_TOTAL = {"qsr_denominator": "task_total"}
"""For hand-made tasks whose QSRs do not total the released tasks' 30 points."""


# -- the framework is registered, with usable scales and keys ------------------------------


def test_framework_is_registered_with_kinds_and_documented_options() -> None:
    assert get_framework("drbench") is FRAMEWORK
    assert set(KINDS) == {
        "drb_qsr",
        "drb_grr",
        "drb_relevance",
        "drb_partial_points",
        "drb_keyword_hit",
        "drb_trusted",
    }
    for spec in FRAMEWORK.options:
        assert spec.default in spec.choices and spec.description
    defaults = {spec.name: spec.default for spec in FRAMEWORK.options}
    assert defaults["eps_plus"] == "2" and defaults["eps_minus"] == "1"
    assert defaults["host_rate"] == "alg1_excl_full"
    assert defaults["keyword_match"] == "substring"
    assert defaults["partial_range"] == "judge"
    assert defaults["tsl_match"] == "under" and defaults["qsr_denominator"] == "thirty"


def test_the_authors_notebook_values_are_cited_as_theirs() -> None:
    # ε₊ = 2 and ε₋ = 1 are in the authors' own scoring notebook (EVIGBYEN/RigorousBench,
    # MultidimensionalEvaluation.ipynb): min(count / 2, 1) for anchors, min(count, 1) for drift.
    specs = {spec.name: spec for spec in FRAMEWORK.options}
    docs = (PROJECT / "docs" / "frameworks" / "drbench.md").read_text(encoding="utf-8")
    for name in ("eps_plus", "eps_minus", "tsl_match", "qsr_denominator"):
        assert "authors'" in specs[name].description, name
        assert f"`{name}`" in docs
    for name in ("eps_plus", "eps_minus"):
        assert "third-party" not in specs[name].description
    assert "min(keywords_fak_count[i] / 2, 1)" in docs and "min(keywords_fdk_count[i], 1)" in docs
    assert "unverified" not in docs


@pytest.mark.parametrize(
    ("kind", "keys"),
    [
        ("drb_qsr", {"yes": "1", "partial": "h", "no": "0"}),
        ("drb_grr", {"yes": "1", "no": "0"}),
        ("drb_keyword_hit", {"true": "1", "false": "0"}),
        ("drb_trusted", {"full": "1", "host": "h", "none": "0"}),
    ],
)
def test_verdict_scales_use_existing_workstation_keys(kind: str, keys: dict[str, str]) -> None:
    scale = KINDS[kind].scale
    assert {c.code: c.key for c in scale.choices} == keys
    assert set(keys.values()) <= WORKSTATION_KEYS
    assert get_scale(scale.name) is scale


def test_relevance_is_a_continuous_one_to_five_scale() -> None:
    scale = KINDS["drb_relevance"].scale
    assert scale.continuous and (scale.low, scale.high) == (1.0, 5.0)
    assert scale.normalize(4) == "4"
    with pytest.raises(ValueError):
        scale.normalize(0)
    with pytest.raises(ValueError):
        scale.normalize(6)


# -- rubric point scales ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "yes", "partial", "no", "full"),
    [
        ("Does it? Yes=2, No=0", 2, None, 0, 2),
        ("Does it? Yes=2, No=0.", 2, None, 0, 2),
        ("Does it? Yes=2, Partial=1, No=0", 2, (1, 1), 0, 2),
        ("Does it? Yes=3, Partial=1 (if only one country is mentioned), No=0.", 3, (1, 1), 0, 3),
        ("Does it? Yes=3, Partial（if case studies are incomplete）=1, No=0", 3, (1, 1), 0, 3),
        ("Does it? Yes=2, Partial (one body)=1, No=0", 2, (1, 1), 0, 2),
        (
            "Does it (1 point each)? Full (all listed)=4, Partial (1–3 areas)=1–3, No=0.",
            4,
            (1, 3),
            0,
            4,
        ),
        (
            "Does it? Full detail=6, Partial (mentions at least two aspects, e.g., a + b)=3, No=0",
            6,
            (3, 3),
            0,
            6,
        ),
        ("Does it? Yes=4, No(omit (a) or (b) or accessions)=0", 4, None, 0, 4),
        # An inverted rubric: the wanted answer is No, and No carries the points.
        ("Does it list results? No=3, Partial=1 (if only a brief mention), Yes=0", 0, (1, 1), 3, 3),
    ],
)
def test_point_scale_is_read_from_the_rubric_text(
    text: str, yes: float, partial: tuple[float, float] | None, no: float, full: float
) -> None:
    scale = parse_point_scale(text)
    assert (scale.yes, scale.partial, scale.no, scale.full) == (yes, partial, no, full)


def test_a_yes_inside_the_question_is_not_the_scale() -> None:
    question, written = split_point_scale("Does it say Yes to X or No to Y? Yes=2, No=0")
    assert question == "Does it say Yes to X or No to Y?"
    assert written == "Yes=2, No=0"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("Does the report explain X?", "does not end in a point scale"),
        ("Does it? Yes=2", "no No value"),
        ("Does it? Partial=1, No=0", "no Yes value"),
        ("Does it? Yes=2, Yes=1, No=0", "twice"),
        ("Does it? Yes=2, Partial=3, No=0", "outside"),
        ("Does it? Yes=1–2, No=0", "only Partial"),
        ("Does it? Yes=0, No=0", "the same"),
    ],
)
def test_unreadable_point_scales_are_errors(text: str, message: str) -> None:
    with pytest.raises(PointScaleError, match=message):
        parse_point_scale(text)


def test_point_output_maps_to_an_answer() -> None:
    ranged = parse_point_scale("Q? Full=4, Partial (1–3)=1–3, No=0.")
    assert [ranged.answer_for(p) for p in (4, 2, 0)] == ["yes", "partial", "no"]
    with pytest.raises(PointScaleError):
        parse_point_scale("Q? Yes=2, No=0").answer_for(1)
    # midpoint (1+3)/2 = 2; low 1; high 3
    assert [ranged.partial_points(r) for r in ("midpoint", "low", "high")] == [2, 1, 3]


def test_the_48_general_rubrics_are_the_papers() -> None:
    # Weight vector of spec §1.4 (Appendix B), 48 items, 73 points.
    weights = [
        2,
        2,
        1,
        2,
        2,
        2,
        1,
        1,
        2,
        2,
        1,
        2,
        2,
        1,
        1,
        2,
        1,
        2,
        2,
        1,
        2,
        1,
        2,
        1,
        2,
        2,
        1,
        1,
        2,
        2,
        2,
        2,
        1,
        2,
        2,
        2,
        1,
        2,
        2,
        1,
        1,
        1,
        1,
        1,
        1,
        1,
        1,
        1,
    ]
    assert [n for n, _, _ in GENERAL_RUBRICS] == list(range(1, 49))
    assert [parse_point_scale(t).full for _, _, t in GENERAL_RUBRICS] == weights
    assert sum(weights) == GRR_TOTAL == 73
    assert all(parse_point_scale(t).partial is None for _, _, t in GENERAL_RUBRICS)
    assert GENERAL_RUBRICS[41][2] == (
        "Does the report use proper Markdown heading levels (e.g., #, ##, ###)? Yes=1, No=0"
    )


# -- keyword matching ------------------------------------------------------------------------


def test_keyword_hits_record_word_boundaries_and_case() -> None:
    text = "Ask the vet. Veterans and vets differ; a Vet is not a privet."
    hits = find_hits(text, "vet")
    assert [(h.start, h.whole_word, h.exact_case, h.word) for h in hits] == [
        (8, True, True, "vet"),
        (13, False, False, "Veterans"),
        (26, False, True, "vets"),
        (41, True, False, "Vet"),
        (57, False, True, "privet"),
    ]
    assert [h.key for h in hits] == ["8", "13~^", "26~", "41^", "57~"]
    assert key_flags("13~^") == (False, False) and key_flags("8") == (True, True)
    assert hit_key(8, True, True) == "8"
    assert hits[0].context == "Ask the vet."
    assert "inside the word 'Veterans'" in hits[1].describe()


def test_keyword_variants_of_space_dash_and_apostrophe_match() -> None:
    text = "TLS\n1.3 and TLS 1.3; 0\u2011RTT; Sam\u2019s Club; sea-level rise"
    assert len(find_hits(text, "TLS 1.3")) == 2
    assert [h.exact_case for h in find_hits(text, "0-RTT")] == [True]
    assert len(find_hits(text, "Sam's Club")) == 1
    assert find_hits(text, "sea level rise") == []  # a space is not a dash


def test_keywords_are_counted_in_the_citation_free_text_only() -> None:
    text = (
        "The vet checked her [1]. See https://vet.example/page and [Vet guide](https://x.example"
        "/vet).\n\n## References\n[1] Vet notes_Clinic https://clinic.example/vet\n"
    )
    hits = find_hits(text, "vet")
    # "vet" in the body only: not in the link's title ("Vet guide", an annotation title the
    # paper keeps out of the "pure report text"), URLs, markers or the references.
    assert [text[h.start : h.end] for h in hits] == ["vet"]
    assert "https" not in citation_free(text) and "[1]" not in citation_free(text)
    assert "Vet guide" not in citation_free(text)
    assert find_hits("aaaa", "aa")[1].start == 2  # non-overlapping, left to right


def test_citation_chips_and_link_titles_are_not_counted_and_offsets_stay_the_reports() -> None:
    text = (
        "Book a vet in week one ([vet.cornell.edu](https://www.vet.cornell.edu/cats?x=1)). "
        "Ask about deworming ([Vet guide](https://a.example/vet), [b](https://b.example)); "
        "the [vet school](https://en.wikipedia.org/wiki/Vet_(school)) agrees ![vet](p.png). "
        "A vet again."
    )
    hits = find_hits(text, "vet")
    # Two prose hits; none in the chips (one link, then two), a link's title or an image's alt
    # text. Offsets are the report's as submitted, so the workstation highlights them there.
    assert [h.start for h in hits] == [7, text.rindex("vet")]
    assert all(text[h.start : h.end] == "vet" for h in hits)
    assert [h.key for h in hits] == ["7", str(text.rindex("vet"))]
    assert citation_free(text) == (
        "Book a vet in week one . Ask about deworming ; the  agrees . A vet again."
    )


def test_keyword_options_count_whole_words_or_exact_case_only() -> None:
    report = keyword_report({"vet": ["8", "13~^", "26~", "41^"]}, relevance={"vet": 5})
    counted = {
        "substring": FRAMEWORK.score_report(report, "judge", opts())["anchor_hits"],
        "word": FRAMEWORK.score_report(report, "judge", opts(keyword_match="word"))["anchor_hits"],
        "sensitive": FRAMEWORK.score_report(report, "judge", opts(keyword_case="sensitive"))[
            "anchor_hits"
        ],
    }
    assert counted == {"substring": 4, "word": 2, "sensitive": 2}


# -- URLs ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "normalised", "host"),
    [
        ("https://www.WHO.int/", "who.int", "who.int"),
        ("http://who.int", "who.int", "who.int"),
        (
            "https://www.rfc-editor.org/rfc/rfc9000?utm_source=openai#section-2",
            "rfc-editor.org/rfc/rfc9000",
            "rfc-editor.org",
        ),
        (
            "https://avmajournals.avma.org/view/Journals/x/",
            "avmajournals.avma.org/view/Journals/x",
            "avmajournals.avma.org",
        ),
        ("<https://unfccc.int/kyoto%5fprotocol/>", "unfccc.int/kyoto_protocol", "unfccc.int"),
        ("https://example.org:443/a%2fb", "example.org/a%2Fb", "example.org"),
        ("https://example.org:8080/a", "example.org:8080/a", "example.org:8080"),
        ("www.gavi.org/covax-facility", "gavi.org/covax-facility", "gavi.org"),
    ],
)
def test_url_normalisation_keeps_raw_normalised_and_host(
    raw: str, normalised: str, host: str
) -> None:
    url = normalise_url(raw)
    assert (url.raw, url.normalised, url.host) == (raw, normalised, host)


def test_annotations_match_tsls_fully_by_host_or_not_at_all() -> None:
    tsls = [
        "https://www.who.int",
        "https://www.gavi.org/covax-facility",
        "https://www.worldbank.org/en/topic/health",
    ]
    annotations = [
        "https://www.gavi.org/covax-facility?utm_source=openai",  # full (parameters dropped)
        "http://gavi.org/covax-facility/",  # same page again: deduplicated
        "https://www.who.int/news/item/1",  # host of the who.int TSL
        "https://who.int",  # full: the site-root TSL
        "https://data.worldbank.org/indicator",  # other subdomain: none
    ]
    matches = match_annotations(tsls, annotations)
    assert [(m.url.normalised, m.match, m.tsl) for m in matches] == [
        ("gavi.org/covax-facility", "full", 1),
        ("who.int/news/item/1", "host", 0),
        ("who.int", "full", 0),
        ("data.worldbank.org/indicator", "none", None),
    ]
    assert matches[0].spellings == tuple(annotations[:2])


def trusted_report(matches: Sequence[tuple[str, str]], tsls: Sequence[str]) -> ReportInput:
    """QSR and GRR answered, no keywords, and drb_trusted verdicts (key, value)."""
    b = Builder()
    cid = b.criterion("qsr", "A? Yes=2, No=0")
    b.verdict("drb_qsr", cid, "yes")
    cid = b.criterion("grr", "B? Yes=1, No=0")
    b.verdict("drb_grr", cid, "yes")
    for url in tsls:
        b.criterion("trusted_source", url)
    for key, value in matches:
        b.verdict("drb_trusted", None, value, key=key)
    return b.report


def test_citations_under_a_trusted_source_are_full_matches_counted_once_each() -> None:
    # The authors' notebook counts a full match for every (TSL, citation) pair where the TSL
    # is in the citation ('if refe_item in anno_item'): a site-root TSL matches every page of
    # its site. S = 3 TSLs, T = 6 distinct citations, as the URL matcher judged them.
    tsls = [
        "https://www.who.int",
        "https://www.gavi.org/covax-facility",
        "https://www.worldbank.org/en/topic/health",
    ]
    report = trusted_report(
        [
            ("gavi.org/covax-facility", "full"),  # the TSL itself
            ("who.int/news/item/1", "host"),  # under the site root who.int
            ("who.int/emergencies", "host"),  # under it too: counted again
            ("worldbank.org/en/topic/health/overview", "host"),  # under a TSL with a path
            ("worldbank.org/en/topic/healthcare", "host"),  # not under it: another segment
            ("data.worldbank.org/indicator", "none"),
        ],
        tsls,
    )
    under = FRAMEWORK.score_report(report, "judge", opts())
    # under: match_full = 4 (> S = 3), host-only 1. TBoost = 1 + 0.2·(0.7·4/3 + 0.3·1/7)
    # = 1 + 0.2·(0.9333333 + 0.0428571) = 1.1952381
    assert (under["match_full"], under["match_host"]) == (4, 1)
    assert under["rate_full"] == pytest.approx(4 / 3)
    assert under["tboost"] == pytest.approx(1 + 0.2 * (0.7 * 4 / 3 + 0.3 * 1 / 7))
    exact = FRAMEWORK.score_report(report, "judge", opts(tsl_match="exact"))
    # exact: only the Gavi page; four host-only. TBoost = 1 + 0.2·(0.7·1/3 + 0.3·4/7) = 1.0809524
    assert (exact["match_full"], exact["match_host"]) == (1, 4)
    assert exact["tboost"] == pytest.approx(1 + 0.2 * (0.7 / 3 + 0.3 * 4 / 7))
    # A reviewer's 'none' stays none, under or not.
    struck = trusted_report([("who.int/news/item/1", "none")], tsls)
    assert FRAMEWORK.score_report(struck, "judge", opts())["match_full"] == 0


def test_the_url_matcher_says_when_a_host_match_lies_under_a_trusted_source() -> None:
    record = entry(tsl=["https://www.who.int", "https://shelter.example/after"])
    row = report_row(citations=["https://www.who.int/news/item/1", "https://shelter.example/a"])
    del row["judge"]
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        write_jsonl(Path(folder) / "RigorousBench.jsonl", [record])
        write_jsonl(Path(folder) / "reports.jsonl", [row])
        bundle = read(Path(folder))
    trusted = {j.key: j for j in bundle.judgments if j.kind == "drb_trusted"}
    assert trusted["who.int/news/item/1"].value == "host"
    assert "lies under tsl-1" in trusted["who.int/news/item/1"].explanation
    assert "lies under" not in trusted["shelter.example/a"].explanation


@pytest.mark.parametrize(("total", "thirty"), [(31, 31 / 30), (22, 22 / 30), (30, 1.0)])
def test_quality_divides_query_rubric_points_by_thirty_or_the_tasks_total(
    total: int, thirty: float
) -> None:
    # The authors' notebook: quality = 0.5 * (qsr_sum / 30) + 0.5 * (grr_sum / 73); six released
    # tasks' QSRs total 22–31 points, not 30. Every rubric answered Yes.
    b = Builder()
    for i in range(total):
        cid = b.criterion("qsr", f"Point {i}? Yes=1, No=0")
        b.verdict("drb_qsr", cid, "yes")
    cid = b.criterion("grr", "Tidy? Yes=1, No=0")
    b.verdict("drb_grr", cid, "yes")
    assert FRAMEWORK.score_report(b.report, "judge", opts())["qsr_ratio"] == pytest.approx(thirty)
    assert FRAMEWORK.score_report(b.report, "judge", opts(**TASK_TOTAL))["qsr_ratio"] == 1.0
    # Quality = 0.5·total/30 + 0.5·1
    assert FRAMEWORK.score_report(b.report, "judge", opts())["quality"] == pytest.approx(
        0.5 * thirty + 0.5
    )


def test_host_rate_option_counts_full_matches_again_or_not() -> None:
    # S = 5, T = 12, match_full = 2, host-only = 3 (spec §2.11)
    alg1 = trust_boost(5, 12, 2, 3, opts())[0]
    sec43 = trust_boost(5, 12, 2, 3, opts(host_rate="sec43_incl_full"))[0]
    assert alg1 == pytest.approx(1 + 0.2 * (0.7 * 2 / 5 + 0.3 * 3 / 13))  # 1.0698462
    assert sec43 == pytest.approx(1 + 0.2 * (0.7 * 2 / 5 + 0.3 * 5 / 13))  # 1.0790769
    assert trust_boost(0, 0, 0, 0, opts())[0] == 1.0  # no TSLs, no annotations: no boost


# -- the §2.11 test vector ---------------------------------------------------------------------


class Builder:
    """A ReportInput from criteria and verdicts named by their text, for hand-made cases."""

    def __init__(self, report_id: int = 1, task_id: int = 1) -> None:
        self.report = ReportInput(report_id=report_id, task_id=task_id, system_id=1)
        self.next = iter(range(1, 100_000))

    def criterion(self, dimension: str, text: str, weight: float | None = None) -> int:
        cid = next(self.next)
        self.report.criteria.append(CriterionIn(cid, None, dimension, weight, text))
        return cid

    def verdict(
        self,
        kind: str,
        criterion: int | None,
        value: str | None,
        key: str | None = None,
        effective: str | None = None,
    ) -> None:
        self.report.verdicts.append(
            VerdictIn(
                next(self.next),
                self.report.report_id,
                kind,
                None,
                criterion,
                None,
                None,
                key,
                value,
                value if effective is None else effective,
                None,
            )
        )


def vector_input(report_id: int = 1) -> ReportInput:
    """Spec §2.11: QSR 20/30, GRR 50/73, FAK/FDK freq and relevance, S = 5, T = 12."""
    b = Builder(report_id)
    for i in range(15):  # 15 rubrics × 2 points = 30; 10 answered Yes = 20 points
        cid = b.criterion("qsr", f"Does the report cover point {i}? Yes=2, No=0", 2)
        b.verdict("drb_qsr", cid, "yes" if i < 10 else "no")
    for number, _, text in GENERAL_RUBRICS:
        # No on items 1–14: 2+2+1+2+2+2+1+1 + 2+2+1+2+2+1 = 23 points; 73 − 23 = 50
        cid = b.criterion("grr", text)
        b.verdict("drb_grr", cid, "no" if number <= 14 else "yes")
    for dimension, freqs, reles in (
        ("anchor_keyword", [3, 0, 1, 5, 2], [5, 1, 3, 4, 4]),
        ("drift_keyword", [1, 0, 0, 2, 0], [2, 1, 1, 3, 1]),
    ):
        for k, (freq, rele) in enumerate(zip(freqs, reles, strict=True)):
            cid = b.criterion(dimension, f"{dimension}-{k}")
            b.verdict("drb_relevance", cid, str(rele))
            for hit in range(freq):
                b.verdict("drb_keyword_hit", cid, "true", key=str(100 * hit))
    for t in range(5):
        b.criterion("trusted_source", f"https://source{t}.example/page")
    for n, value in enumerate(["full"] * 2 + ["host"] * 3 + ["none"] * 7):
        b.verdict("drb_trusted", None, value, key=f"cited{n}.example/x")
    return b.report


def test_spec_test_vector_with_eps_2_and_1() -> None:
    scores = FRAMEWORK.score_report(vector_input(), "judge", opts())
    print(
        f"\n§2.11: Quality {scores['quality']:.7f}, FAK {scores['fak_drift']:.6f}, "
        f"FDK {scores['fdk_drift']:.6f}, drift {scores['drift']:.6f}, "
        f"TBoost {scores['tboost']:.7f}, InteScore {scores['integrated']:.6f}"
    )
    # Quality = 0.5·20/30 + 0.5·50/73 = 0.3333333 + 0.3424658 = 0.6757991
    assert scores["quality"] == pytest.approx(0.5 * 20 / 30 + 0.5 * 50 / 73)
    assert scores["quality"] == pytest.approx(0.6757991, abs=5e-8)
    # FAK terms (ε₊ = 2): 1·5/5 + 0 + ½·3/5 + 1·4/5 + 1·4/5 = 1 + 0.3 + 0.8 + 0.8 = 2.9;
    # FAK_Drift = 1 − 2.9/5 = 0.42. FDK (ε₋ = 1): 1·2/5 + 1·3/5 = 1.0; 1.0/5 = 0.20.
    assert scores["fak_drift"] == pytest.approx(0.42)
    assert scores["fdk_drift"] == pytest.approx(0.20)
    # SemanticDrift = 0.7·0.42 + 0.3·0.20 = 0.294 + 0.06 = 0.354
    assert scores["drift"] == pytest.approx(0.354)
    # TBoost = 1 + 0.2·(0.7·2/5 + 0.3·(5−2)/(12+1)) = 1.0698462
    assert scores["tboost"] == pytest.approx(1.0698462, abs=5e-8)
    # InteScore = 0.6757991 × (1 − 0.354) × 1.0698462 × 100 = 46.705868
    assert scores["integrated"] == pytest.approx(46.705868, abs=5e-6)
    assert round(scores["integrated"] or 0.0, 3) == 46.706
    assert scores["match_full"] == 2 and scores["match_host"] == 3
    assert scores["anchor_hits"] == 11 and scores["drift_hits"] == 3


@pytest.mark.parametrize(
    ("eps_plus", "fak", "drift"),
    [
        ("1", 0.36, 0.312),  # FAK terms 1 + 0 + 0.6 + 0.8 + 0.8 = 3.2; 1 − 3.2/5 = 0.36
        ("3", 0.493333, 0.405333),  # 1 + 0 + 0.2 + 0.8 + ⅔·0.8 = 2.5333; 1 − 0.50667
    ],
)
def test_spec_test_vector_other_eps(eps_plus: str, fak: float, drift: float) -> None:
    scores = FRAMEWORK.score_report(vector_input(), "judge", opts(eps_plus=eps_plus))
    assert scores["fak_drift"] == pytest.approx(fak, abs=5e-7)
    assert scores["drift"] == pytest.approx(drift, abs=5e-7)


def test_spec_test_vector_section_4_3_variant_and_contribution_per_token() -> None:
    report = vector_input()
    report.report_metadata = {"token_usage": {"total": 10_000, "input": 2_000}}
    scores = FRAMEWORK.score_report(report, "judge", opts(host_rate="sec43_incl_full"))
    # TBoost = 1 + 0.2·(0.28 + 0.3·5/13) = 1.0790769; InteScore = 47.108852
    assert scores["tboost"] == pytest.approx(1.0790769, abs=5e-8)
    assert scores["integrated"] == pytest.approx(47.108852, abs=5e-6)
    default = FRAMEWORK.score_report(report, "judge", opts())
    # C/Token = 46.705868 / 8000 output tokens = 0.0058382
    assert default["contri_per_token"] == pytest.approx(0.0058382, abs=5e-8)


def test_system_score_is_the_mean_of_per_task_products() -> None:
    first = FRAMEWORK.score_report(vector_input(1), "judge", opts())
    weak = vector_input(2)
    weak.verdicts = [
        v._replace(judge="no", effective="no") if v.kind == "drb_qsr" else v for v in weak.verdicts
    ]
    second = FRAMEWORK.score_report(weak, "judge", opts())
    # second: Quality = 0.5·0/30 + 0.5·50/73 = 0.3424658; InteScore = 0.3424658·0.646·
    # 1.0698462·100 = 23.668575
    assert second["integrated"] == pytest.approx(0.5 * 50 / 73 * 0.646 * 1.0698462 * 100, rel=1e-7)
    out = FRAMEWORK.aggregate([first, second], opts())
    mean_of_products = (first["integrated"] + second["integrated"]) / 2  # type: ignore[operator]
    assert out["integrated"].value == pytest.approx(mean_of_products) and out["integrated"].n == 2
    assert out["quality"].value == pytest.approx((0.6757991 + 0.3424658) / 2, abs=1e-7)


# -- options on hand-made reports ---------------------------------------------------------------


def rubric_report(texts: Sequence[str], answers: Sequence[str | None]) -> ReportInput:
    b = Builder()
    for i, (text, answer) in enumerate(zip(texts, answers, strict=True)):
        cid = b.criterion("qsr", text)
        if answer != "-":
            b.verdict("drb_qsr", cid, answer)
        del i
    cid = b.criterion("grr", "Is it tidy? Yes=1, No=0")
    b.verdict("drb_grr", cid, "yes")
    return b.report


def test_partial_points_follow_the_rubric_and_the_options() -> None:
    texts = [
        "A? Full=4, Partial (1–3)=1–3, No=0.",
        "B? Yes=2, No=0",
        "C? No=3, Partial=1 (if brief), Yes=0",
    ]
    report = rubric_report(texts, ["partial", "partial", "no"])

    def qsr(**o: str) -> float | None:
        return FRAMEWORK.score_report(report, "judge", opts(**TASK_TOTAL, **o))["qsr_ratio"]

    # full = 4 + 2 + 3 = 9; inverted rubric answered No earns its 3 points
    assert qsr() == pytest.approx((2 + 0 + 3) / 9)  # midpoint 2, binary 0
    assert qsr(partial_range="low") == pytest.approx((1 + 0 + 3) / 9)
    assert qsr(partial_range="high") == pytest.approx((3 + 0 + 3) / 9)
    assert qsr(partial_on_binary="half") == pytest.approx((2 + 1 + 3) / 9)


def ranged_report(
    judge_points: str | None,
    effective_points: str | None = None,
    answer: str = "partial",
    effective_answer: str | None = None,
) -> ReportInput:
    """One ranged rubric (Full=4, Partial 1–3, No=0) and one 2-point rubric answered Yes."""
    b = Builder()
    ranged = b.criterion("qsr", "Q? Full (all 4)=4, Partial (1–3)=1–3, No=0.")
    b.verdict("drb_qsr", ranged, answer, effective=effective_answer)
    if judge_points is not None:
        b.verdict("drb_partial_points", ranged, judge_points, effective=effective_points)
    other = b.criterion("qsr", "R? Yes=2, No=0")
    b.verdict("drb_qsr", other, "yes")
    cid = b.criterion("grr", "Is it tidy? Yes=1, No=0")
    b.verdict("drb_grr", cid, "yes")
    return b.report


def test_the_judges_own_number_inside_a_partial_range_stands() -> None:
    # The judge answered [3] on 'Partial (1–3)=1–3': the paper's judge must "assign a score
    # based only on the score values defined in the rule", and 3 is one. Full = 4 + 2 = 6.
    report = ranged_report("3")

    def qsr(variant: str = "judge", **o: str) -> float | None:
        return FRAMEWORK.score_report(
            report,
            variant,  # type: ignore[arg-type]
            opts(**TASK_TOTAL, **o),
        )["qsr_ratio"]

    assert qsr() == pytest.approx((3 + 2) / 6)  # default: judge
    assert qsr(partial_range="midpoint") == pytest.approx((2 + 2) / 6)  # (1 + 3) / 2
    assert qsr(partial_range="low") == pytest.approx((1 + 2) / 6)
    # No number (a reviewer pressed h, or the judge wrote the word "partial"): the midpoint.
    assert FRAMEWORK.score_report(ranged_report(None), "judge", opts(**TASK_TOTAL))[
        "qsr_ratio"
    ] == pytest.approx((2 + 2) / 6)
    # A reviewer retypes the points (1), or a number outside the range (clamped to 3).
    assert FRAMEWORK.score_report(ranged_report("3", "1"), "adjudicated", opts(**TASK_TOTAL))[
        "qsr_ratio"
    ] == pytest.approx((1 + 2) / 6)
    assert FRAMEWORK.score_report(ranged_report("3", "7"), "adjudicated", opts(**TASK_TOTAL))[
        "qsr_ratio"
    ] == pytest.approx((3 + 2) / 6)
    # The answer overridden to Yes: the points verdict no longer applies.
    assert FRAMEWORK.score_report(
        ranged_report("3", effective_answer="yes"), "adjudicated", opts(**TASK_TOTAL)
    )["qsr_ratio"] == pytest.approx((4 + 2) / 6)


def test_a_judge_number_in_a_partial_range_is_imported_and_scored(
    tmp_path: Path, conn: sqlite3.Connection
) -> None:
    from store.imports.loader import import_bundle
    from store.scores.cache import rebuild_scores

    ranged = "Does the report name the four areas? Full (all 4)=4, Partial (1–3)=1–3, No=0."
    write_jsonl(
        tmp_path / "RigorousBench.jsonl", [entry(qsr=[ranged, "Does it give costs? Yes=2, No=0"])]
    )
    write_jsonl(
        tmp_path / "reports.jsonl",
        [report_row(judge={"model": "m", "qsr": [3, 2], "grr": ["yes"] * 48})],
    )
    bundle = read(tmp_path)
    check_bundle(bundle)
    points = [j for j in bundle.judgments if j.kind == "drb_partial_points"]
    assert [(j.criterion, j.value, j.raw) for j in points] == [("qsr-01", 3, "[3]")]
    assert {j.criterion: j.value for j in bundle.judgments if j.kind == "drb_qsr"} == {
        "qsr-01": "partial",
        "qsr-02": "yes",
    }
    import_bundle(conn, bundle, "h")
    rebuild_scores(conn)
    value = conn.execute(
        f"SELECT value FROM {all_scores(conn)} "
        "WHERE framework = 'drbench' AND variant = "
        "'judge' AND metric = 'qsr_ratio' AND scope LIKE 'report:%'"
    ).fetchone()
    # Default options: 5 points of the notebook's 30 (not the midpoint's 4 of 30).
    assert value[0] == pytest.approx((3 + 2) / 30)


def test_missing_rubric_counts_zero_or_leaves_the_denominator() -> None:
    report = rubric_report(
        ["A? Yes=2, No=0", "B? Yes=3, No=0", "C? Yes=1, No=0"], ["yes", None, "-"]
    )

    def qsr(**o: str) -> float | None:
        return FRAMEWORK.score_report(report, "judge", opts(**o))["qsr_ratio"]

    assert qsr(**TASK_TOTAL) == pytest.approx(2 / 6)
    assert qsr(**TASK_TOTAL, missing_rubric="exclude") == pytest.approx(2 / 2)
    # Divided by 30 (default): the two rubrics left out take their 3 + 1 points out of 30.
    assert qsr() == pytest.approx(2 / 30)
    assert qsr(missing_rubric="exclude") == pytest.approx(2 / 26)


def keyword_report(hits: dict[str, list[str]], relevance: dict[str, int]) -> ReportInput:
    b = Builder()
    cid = b.criterion("qsr", "A? Yes=2, No=0")
    b.verdict("drb_qsr", cid, "yes")
    cid = b.criterion("grr", "B? Yes=1, No=0")
    b.verdict("drb_grr", cid, "yes")
    for word, keys in hits.items():
        cid = b.criterion("anchor_keyword", word)
        if word in relevance:
            b.verdict("drb_relevance", cid, str(relevance[word]))
        for key in keys:
            b.verdict("drb_keyword_hit", cid, "true", key=key)
    return b.report


def test_missing_relevance_leaves_drift_undefined_or_reads_lowest() -> None:
    report = keyword_report({"vet": ["1", "9"], "chip": []}, relevance={})
    undefined = FRAMEWORK.score_report(report, "judge", opts())
    assert undefined["drift"] is None and undefined["integrated"] is None
    lowest = FRAMEWORK.score_report(report, "judge", opts(missing_relevance="lowest"))
    # vet: min(2/2, 1)·1/5 = 0.2; chip never occurs: 0. FAK = 1 − 0.2/2 = 0.9; drift 0.63
    assert lowest["fak_drift"] == pytest.approx(0.9)
    assert lowest["drift"] == pytest.approx(0.7 * 0.9)


def test_failed_report_is_excluded_or_zero_in_the_system_mean() -> None:
    good = FRAMEWORK.score_report(vector_input(1), "judge", opts())
    failed = FRAMEWORK.score_report(keyword_report({"vet": ["1"]}, {}), "judge", opts())
    assert failed["integrated"] is None
    excluded = FRAMEWORK.aggregate([good, failed], opts())["integrated"]
    zero = FRAMEWORK.aggregate([good, failed], opts(failed_report="zero"))["integrated"]
    assert excluded.value == pytest.approx(46.705868, abs=5e-6) and excluded.n == 1
    assert zero.value == pytest.approx(46.705868 / 2, abs=5e-6) and zero.n == 2


def test_a_struck_hit_moves_the_adjudicated_variant_only() -> None:
    b = Builder()
    cid = b.criterion("qsr", "A? Yes=2, No=0")
    b.verdict("drb_qsr", cid, "yes")
    cid = b.criterion("grr", "B? Yes=1, No=0")
    b.verdict("drb_grr", cid, "yes")
    vet = b.criterion("anchor_keyword", "vet")
    b.verdict("drb_relevance", vet, "4")
    b.verdict("drb_keyword_hit", vet, "true", key="10")
    b.verdict("drb_keyword_hit", vet, "true", key="40~", effective="false")
    judge = FRAMEWORK.score_report(b.report, "judge", opts())
    human = FRAMEWORK.score_report(b.report, "adjudicated", opts())
    # judge: min(2/2, 1)·4/5 = 0.8 → FAK 0.2, drift 0.14; struck: ½·0.8 = 0.4 → FAK 0.6, 0.42
    assert judge["drift"] == pytest.approx(0.7 * 0.2)
    assert human["drift"] == pytest.approx(0.7 * 0.6)


# -- the importer on hand-made files ------------------------------------------------------------


def write_jsonl(path: Path, rows: Sequence[Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "".join(
            (r if isinstance(r, str) else json.dumps(r, ensure_ascii=False)) + "\n" for r in rows
        ),
        encoding="utf-8",
    )
    return path


def entry(uid: str = "04999", **changes: Any) -> dict[str, Any]:
    record: dict[str, Any] = {
        "uid": uid,
        "query": "How should a family prepare for adopting an older dog?",
        "qsr": [
            "Does the report recommend a vet visit in week one? Yes=2, No=0",
            "Does the report give a cost breakdown? Yes=3, Partial=1, No=0",
        ],
        "tsl": ["https://www.town.example/dog-licence", "https://shelter.example/after"],
        "fak": ["vet", "microchip", "decompression", "dental", "licence"],
        "fdk": ["puppy", "breeding", "agility", "kitten", "show ring"],
    }
    record.update(changes)
    return record


def test_unparseable_point_scale_names_file_line_and_field(tmp_path: Path) -> None:
    bad = entry("04998", qsr=["Does the report give costs?", "Does it? Yes=2, No=0"])
    path = write_jsonl(tmp_path / "RigorousBench.jsonl", [entry(), bad])
    with pytest.raises(InputError) as info:
        read(path)
    error = info.value
    assert (Path(error.file).name, error.line, error.field) == ("RigorousBench.jsonl", 2, "qsr.0")
    assert "point scale" in error.message


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"fak": ["vet", ""]}, "fak.1"),
        ({"tsl": ["not a url at all"]}, "tsl.0"),
        ({"qsr": "Yes=2, No=0"}, "qsr"),
        ({"query": ""}, "query"),
    ],
)
def test_bad_task_fields_are_named(tmp_path: Path, changes: dict[str, Any], field: str) -> None:
    path = write_jsonl(tmp_path / "tasks.jsonl", [entry(**changes)])
    with pytest.raises(InputError) as info:
        read(path)
    assert (info.value.line, info.value.field) == (1, field)


def report_row(**changes: Any) -> dict[str, Any]:
    row: dict[str, Any] = {
        "uid": "04999",
        "system": "agent-x",
        "report": (
            "# Plan\n\nBook a vet in week one [1]. Our veteran volunteers help.\n\n"
            "## References\n[1] Licence_Town https://town.example/dog-licence\n"
        ),
        "citations": [
            {"url": "https://town.example/dog-licence?ref=x", "title": "Licence"},
            "https://shelter.example/other",
        ],
        "token_usage": {"total": 900, "input": 100},
        "judge": {
            "model": "judge-m",
            "qsr": [2, 1],
            "grr": ["yes"] * 48,
            "fak": [5, 1, 1, 1, 1],
            "fdk": [1, 1, 1, 1, None],
        },
    }
    row.update(changes)
    return row


def test_folder_with_reports_runs_the_matchers_and_reads_judge_scores(tmp_path: Path) -> None:
    write_jsonl(tmp_path / "RigorousBench.jsonl", [entry()])
    write_jsonl(tmp_path / "reports.jsonl", [report_row()])
    bundle = read(tmp_path, "mini")
    check_bundle(bundle)
    assert [r.id for r in bundle.reports] == ["04999-agent-x"]
    assert bundle.reports[0].metadata["token_usage"] == {"total": 900, "input": 100}
    hits = [j for j in bundle.judgments if j.kind == "drb_keyword_hit"]
    assert [(j.criterion, j.key, j.value) for j in hits] == [
        ("fak-1", "15", True),
        ("fak-1", "40~", True),
    ]
    assert hits[1].evidence == "Our veteran volunteers help."
    trusted = {j.key: j for j in bundle.judgments if j.kind == "drb_trusted"}
    assert trusted["town.example/dog-licence"].value == "full"
    assert trusted["town.example/dog-licence"].evidence == "https://town.example/dog-licence?ref=x"
    assert "host: town.example" in trusted["town.example/dog-licence"].explanation
    assert trusted["shelter.example/other"].value == "host"
    qsr = {j.criterion: j.value for j in bundle.judgments if j.kind == "drb_qsr"}
    assert qsr == {"qsr-01": "yes", "qsr-02": "partial"}  # 2 points = Yes; 1 point = Partial
    failed = [j for j in bundle.judgments if j.value is None]
    assert [(j.kind, j.criterion) for j in failed] == [("drb_relevance", "fdk-5")]
    assert failed[0].error
    assert {r.id for r in bundle.runs} == {"keyword-matcher-v2", "url-matcher-v1", "judge-judge-m"}


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"uid": "00000"}, "uid"),
        ({"judge": {"model": "m", "qsr": [2]}}, "judge.qsr"),
        ({"judge": {"model": "m", "qsr": [1, 1]}}, "judge.qsr.0"),
        ({"judge": {"model": "m", "fak": [5, 1, 1, 1, 7]}}, "judge.fak.4"),
        ({"judge": {"model": "m", "grr": ["partial"] * 48}}, "judge.grr.0"),
        ({"citations": [{"title": "no url"}]}, "citations.0"),
        ({"token_usage": {"total": 5}}, "token_usage"),
        ({"system": "a/b"}, "system"),
        ({"system": "agent-x"}, "system"),  # a second report of one system on one task
    ],
)
def test_bad_report_lines_are_named(tmp_path: Path, changes: dict[str, Any], field: str) -> None:
    write_jsonl(tmp_path / "RigorousBench.jsonl", [entry()])
    write_jsonl(
        tmp_path / "reports.jsonl", [report_row(), report_row(**{"system": "agent-y", **changes})]
    )
    with pytest.raises(InputError) as info:
        read(tmp_path)
    assert (Path(info.value.file).name, info.value.line, info.value.field) == (
        "reports.jsonl",
        2,
        field,
    )


def test_a_bad_reports_file_imports_nothing(tmp_path: Path, conn: sqlite3.Connection) -> None:
    from store.imports.from_path import import_path

    write_jsonl(tmp_path / "RigorousBench.jsonl", [entry()])
    write_jsonl(
        tmp_path / "reports.jsonl", [report_row(), report_row(system="agent-y", uid="nope")]
    )
    with pytest.raises(InputError):
        import_path(conn, tmp_path, "drbench")
    assert conn.execute("SELECT count(*) FROM task").fetchone()[0] == 0


# -- the real RigorousBench task file (anchors) ---------------------------------------------------


@pytest.mark.anchors
def test_real_rigorousbench_task_file_imports(anchors: Path, conn: sqlite3.Connection) -> None:
    from store.imports.from_path import import_path

    path = anchors / "rigorousbench" / "RigorousBench.jsonl"
    raw = [
        json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()
    ]
    bundle = read(path)
    check_bundle(bundle)
    assert len(bundle.tasks) == len(raw) == 214
    by_uid = {t.id: t for t in bundle.tasks}
    assert set(by_uid) == {r["uid"] for r in raw}

    def count(task: Task, dimension: str) -> int:
        return sum(c.dimension == dimension for c in task.criteria)

    for record in raw:
        task = by_uid[record["uid"]]
        assert task.prompt == record["query"]
        assert count(task, "qsr") == len(record["qsr"])
        assert count(task, "trusted_source") == len(record["tsl"])
        assert count(task, "anchor_keyword") == 5 == count(task, "drift_keyword")
        assert count(task, "grr") == 48
    assert sum(len(r["qsr"]) for r in raw) == 2852
    assert sum(len(r["tsl"]) for r in raw) == 1269
    # Table 4 of the paper: entries per domain code (the uid's first two digits)
    domains: dict[str, int] = {}
    for task in bundle.tasks:
        domains[task.metadata["domain_code"]] = domains.get(task.metadata["domain_code"], 0) + 1
    assert domains == {
        "00": 3,
        "01": 23,
        "02": 18,
        "03": 15,
        "04": 15,
        "05": 24,
        "06": 35,
        "07": 17,
        "08": 12,
        "09": 33,
        "10": 19,
    }
    # Spec §1.6: the paper's four example entries, their QSR weights and TSLs.
    weights = {
        "07001": [2, 2, 2, 2, 2, 2, 2, 2, 1, 1, 2, 2, 2, 2, 2, 1, 1],
        "04216": [1] * 30,
        "08004": [1, 2, 1, 1, 1, 2, 1, 1, 1, 1, 2, 1, 1, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2],
        "10236": [2, 2, 2, 2, 2, 3, 2, 2, 2, 2, 2, 2, 3, 2],
    }
    for uid, expected in weights.items():
        qsrs = [c for c in by_uid[uid].criteria if c.dimension == "qsr"]
        assert [c.weight for c in qsrs] == expected and sum(expected) == 30
        assert by_uid[uid].metadata["qsr_full"] == 30
    assert [c.text for c in by_uid["04216"].criteria if c.dimension == "anchor_keyword"] == [
        "vet",
        "deworming",
        "vaccine",
        "microchip",
        "quarantine",
    ]
    who = next(c for c in by_uid["10236"].criteria if c.id == "tsl-1")
    assert (who.text, who.metadata["normalised"], who.metadata["host"]) == (
        "https://www.who.int",
        "who.int",
        "who.int",
    )
    # An inverted rubric (No earns the points) and a Partial range, as the file writes them.
    inverted = [
        c for c in by_uid["03411"].criteria if c.dimension == "qsr" and c.text.endswith("Yes=0")
    ]
    assert len(inverted) == 1 and inverted[0].metadata["points"]["no"] == 3
    ranged = [c for c in by_uid["07630"].criteria if c.dimension == "qsr" and "=1–3" in c.text]
    assert ranged and all(c.metadata["points"]["partial"] == [1, 3] for c in ranged)
    # The facts behind the qsr_denominator and tsl_match defaults (docs/frameworks/drbench.md):
    # six tasks' QSRs do not total 30; 206 TSLs in 90 tasks are site roots.
    assert {t.id: t.metadata["qsr_full"] for t in bundle.tasks if t.metadata["qsr_full"] != 30} == {
        "09208": 31,
        "06356": 29,
        "10502": 22,
        "02701": 31,
        "05705": 29,
        "10707": 28,
    }
    roots = [
        (t.id, c.metadata["normalised"])
        for t in bundle.tasks
        for c in t.criteria
        if c.dimension == "trusted_source" and "/" not in c.metadata["normalised"]
    ]
    assert len(roots) == 206 and len({task for task, _ in roots}) == 90

    result = import_path(conn, path, "drbench")
    n_criteria = sum(len(r["qsr"]) + len(r["tsl"]) + 10 + 48 for r in raw)
    assert result.counts["tasks"] == 214 and result.counts["criteria"] == n_criteria
    assert result.counts["reports"] == 0 and result.counts["judgments"] == 0
    print(f"\nRigorousBench: {result.counts['tasks']} tasks, {n_criteria} criteria imported")


@pytest.mark.anchors
def test_reports_on_real_tasks_find_vet_inside_veteran(anchors: Path, tmp_path: Path) -> None:
    lines = (anchors / "rigorousbench" / "RigorousBench.jsonl").read_text(encoding="utf-8")
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "RigorousBench.jsonl").write_text(lines, encoding="utf-8")
    text = "Take the cat to the vet [1]. Our veteran volunteers can help with deworming."
    write_jsonl(
        folder / "reports.jsonl",
        [
            {
                "uid": "04216",
                "system": "agent-x",
                "report": text,
                "citations": ["https://www.cdc.gov/healthy-pets/about/index.html"],
            }
        ],
    )
    bundle = read(folder)
    hits = [(j.criterion, j.key) for j in bundle.judgments if j.kind == "drb_keyword_hit"]
    # "vet" at 20 (whole word) and inside "veteran" at 33; "deworming" (fak-2) at 66
    assert hits == [("fak-1", "20"), ("fak-1", "33~"), ("fak-2", "66")]


@pytest.mark.anchors
def test_citation_chips_on_a_real_task_do_not_count_as_anchor_hits(
    anchors: Path, tmp_path: Path, conn: sqlite3.Connection
) -> None:
    # The reproduction: one RigorousBench task, its first anchor keyword once in prose,
    # then five citation chips whose titles hold the keyword. The paper counts keywords in the
    # "pure report text without annotations": 1 hit, not 6.
    from store.imports.loader import import_bundle
    from store.scores.cache import rebuild_scores

    lines = (anchors / "rigorousbench" / "RigorousBench.jsonl").read_text(encoding="utf-8")
    record = json.loads(lines.splitlines()[0])
    keyword = record["fak"][0]
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "RigorousBench.jsonl").write_text(lines, encoding="utf-8")
    chips = " ".join(f"([{keyword} overview](https://source{i}.example/page))" for i in range(5))
    text = f"This report discusses {keyword} once in its own words. {chips}"
    write_jsonl(
        folder / "reports.jsonl", [{"uid": record["uid"], "system": "agent-x", "report": text}]
    )
    bundle = read(folder)
    hits = [j for j in bundle.judgments if j.kind == "drb_keyword_hit" and j.criterion == "fak-1"]
    assert len(hits) == 1
    assert text[int((hits[0].key or "0").rstrip("~^")) :].lower().startswith(keyword.lower())
    import_bundle(conn, bundle, "h")
    rebuild_scores(conn)
    rows = dict(
        conn.execute(
            f"SELECT metric, value FROM {all_scores(conn)} "
            "WHERE framework = 'drbench' "
            "AND variant = 'judge' AND scope LIKE 'report:%'"
        ).fetchall()
    )
    assert rows["anchor_hits"] == 1


# -- the sample run and a reviewer's override in a real store ---------------------------------


def test_sample_run_is_valid_and_its_matcher_verdicts_are_the_matchers() -> None:
    from reviewer.formats.native import read_bundle

    bundle = read_bundle(SAMPLE)
    check_bundle(bundle)
    assert bundle.suite.frameworks == ["drbench"]
    assert len(bundle.tasks) == 2 and len(bundle.systems) == 3 and len(bundle.reports) == 6
    tasks = {t.id: t for t in bundle.tasks}
    for report in bundle.reports:
        assert len(report.markdown.split()) >= 400
        task = tasks[report.task]
        stored = sorted(
            (j.criterion or "", j.key or "")
            for j in bundle.judgments
            if j.report == report.id and j.kind == "drb_keyword_hit"
        )
        fresh = sorted(
            (c.id, h.key)
            for c in task.criteria
            if c.dimension in ("anchor_keyword", "drift_keyword")
            for h in find_hits(report.markdown, c.text)
        )
        assert stored == fresh, report.id
    assert any(j.key == "878~" and j.report == "04901-lantern-search" for j in bundle.judgments)


def sample_store(tmp_path: Path) -> sqlite3.Connection:
    from store.db.connection import connect
    from store.imports.from_path import import_path

    conn = connect(tmp_path / "drbench.db")
    import_path(conn, SAMPLE)
    return conn


@pytest.fixture
def sample(tmp_path: Path) -> Iterator[sqlite3.Connection]:
    conn = sample_store(tmp_path)
    yield conn
    conn.close()


def report_score(conn: sqlite3.Connection, report: str, metric: str, variant: str) -> float:
    row = conn.execute(
        f"""SELECT s.value FROM {all_scores(conn)} s JOIN report r ON s.scope = 'report:' || r.id
           WHERE r.ext_id = ? AND s.framework = 'drbench' AND s.metric = ? AND s.variant = ?""",
        (report, metric, variant),
    ).fetchone()
    assert row is not None and row[0] is not None
    return float(row[0])


def judgment_id(conn: sqlite3.Connection, report: str, kind: str, subject: str) -> int:
    row = conn.execute(
        """SELECT j.id FROM judgment j JOIN report r ON r.id = j.report_id
           WHERE r.ext_id = ? AND j.kind = ? AND j.subject = ?""",
        (report, kind, subject),
    ).fetchone()
    assert row is not None
    return int(row[0])


def test_striking_a_false_hit_moves_adjudicated_drift_not_the_judges(
    sample: sqlite3.Connection,
) -> None:
    from store.reviewlog.events import ReviewLog
    from store.scores.cache import cached, compute_all, update_scores

    report = "04901-lantern-search"
    # Judge: FAK terms (ε₊ = 2) vet min(2/2,1)·3/5 = 0.6, microchip ½·2/5 = 0.2,
    # decompression ½·3/5 = 0.3, dental ½·3/5 = 0.3, licence 0 → Σ 1.4, FAK = 1 − 1.4/5 = 0.72;
    # no drift keyword occurs → FDK 0; drift = 0.7·0.72 = 0.504.
    assert report_score(sample, report, "drift", "judge") == pytest.approx(0.504)
    jid = judgment_id(sample, report, "drb_keyword_hit", "c=fak-1;x=878~")
    recorded = ReviewLog(sample, "ana").decide(jid, False, "'vet' inside 'veteran'", "other")
    update_scores(sample, [recorded.report_id or 0])
    # Struck: vet ½·3/5 = 0.3 → Σ 1.1, FAK = 1 − 0.22 = 0.78; drift = 0.7·0.78 = 0.546
    judge = report_score(sample, report, "drift", "judge")
    human = report_score(sample, report, "drift", "adjudicated")
    print(f"\nstrike 'vet'@878~: drift judge {judge:.4f} -> adjudicated {human:.4f}")
    assert judge == pytest.approx(0.504) and human == pytest.approx(0.546)
    assert report_score(sample, report, "anchor_hits", "adjudicated") == 4
    full = compute_all(sample)
    cache = cached(sample)
    for key, values in full.systems.items():
        for metric, (value, n) in values.items():
            got = cache.systems[key][metric]
            assert got[1] == n
            assert (got[0] is None and value is None) or got[0] == pytest.approx(value)


def test_a_reviewer_adjudicates_a_sample_report_end_to_end(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tui.cli import main

    db = tmp_path / "review.db"
    assert main(["demo", "--db", str(db), "--quiet"]) == 0
    conn = sample_store_path(db)
    report = "04901-lantern-search"
    hit = judgment_id(conn, report, "drb_keyword_hit", "c=fak-1;x=878~")
    rubric = judgment_id(conn, report, "drb_qsr", "c=qsr-02")
    conn.close()
    capsys.readouterr()
    assert (
        main(
            [
                "decide",
                str(hit),
                "false",
                "--db",
                str(db),
                "--rationale",
                "inside 'veteran'",
                "--format",
                "json",
            ]
        )
        == 0
    )
    first = json.loads(capsys.readouterr().out)
    assert (
        main(
            [
                "decide",
                str(rubric),
                "no",
                "--db",
                str(db),
                "--rationale",
                "no 30-day deadline in the report",
                "--reason",
                "misread-rubric",
                "--format",
                "json",
            ]
        )
        == 0
    )
    second = json.loads(capsys.readouterr().out)
    moved = {
        c["metric"]: (c["before"], c["after"])
        for c in second["scores"]
        if c["framework"] == "drbench"
    }
    assert first["value"] == "false" and second["value"] == "no"
    # Quality: QSR 22 → 19 of 30 points; GRR 54/73 (13 Nos worth 19 points):
    # 0.5·19/30 + 0.5·54/73 = 0.316667 + 0.369863 = 0.686530
    assert moved["quality"][1] == pytest.approx(0.5 * 19 / 30 + 0.5 * 54 / 73)
    # TBoost: S = 4, T = 3, one full and one host-only match:
    # 1 + 0.2·(0.7·1/4 + 0.3·1/4) = 1.05; InteScore = 100·0.686530·(1 − 0.546)·1.05 = 32.727
    assert moved["integrated"][1] == pytest.approx(
        100 * (0.5 * 19 / 30 + 0.5 * 54 / 73) * (1 - 0.546) * 1.05
    )
    # Judge: 100·(0.5·22/30 + 0.5·54/73)·(1 − 0.504)·1.05 = 38.359
    assert (
        main(
            [
                "scores",
                "--db",
                str(db),
                "--framework",
                "drbench",
                "--per",
                "report",
                "--format",
                "json",
            ]
        )
        == 0
    )
    rows = json.loads(capsys.readouterr().out)
    mine = {r["metric"]: r for r in rows if r["report"] == report}
    with capsys.disabled():
        print(f"\n{report} after both decisions (before, after): {moved}")
    assert mine["integrated"]["judge"] == pytest.approx(
        100 * (0.5 * 22 / 30 + 0.5 * 54 / 73) * (1 - 0.504) * 1.05
    )
    assert mine["integrated"]["delta"] < 0


def sample_store_path(db: Path) -> sqlite3.Connection:
    from store.db.connection import connect

    return connect(db)


def test_sample_scores_by_hand(sample: sqlite3.Connection) -> None:
    # 08902-quill-dr, TBoost: S = 4 TSLs, T = 5 annotations, 3 full, 0 host-only:
    # 1 + 0.2·0.7·3/4 = 1.105; overriding the archive mirror to full: 1 + 0.2·0.7·4/4 = 1.14
    from store.reviewlog.events import ReviewLog
    from store.scores.cache import update_scores

    report = "08902-quill-dr"
    assert report_score(sample, report, "tboost", "judge") == pytest.approx(1.105)
    jid = judgment_id(
        sample, report, "drb_trusted", "x=archive.kestrelbay-records.example/minutes/2027-03-14"
    )
    recorded = ReviewLog(sample, "ana").decide(jid, "full", "mirror of tsl-2")
    update_scores(sample, [recorded.report_id or 0])
    assert report_score(sample, report, "tboost", "adjudicated") == pytest.approx(1.14)
    assert report_score(sample, report, "tboost", "judge") == pytest.approx(1.105)


def test_a_sample_citation_under_a_trusted_source_counts_full(tmp_path: Path) -> None:
    from reviewer.formats.native import read_bundle
    from store.db.connection import connect
    from store.imports.loader import import_bundle
    from store.scores.cache import set_options

    # 04901-quill-dr cites vetcollege.example/senior-dog-care/dental, a page under tsl-4
    # (https://vetcollege.example/senior-dog-care/). S = 4, T = 5, three exact matches.
    # tsl_match = under (default): 4 full, 0 host-only → TBoost = 1 + 0.2·0.7·4/4 = 1.14;
    # tsl_match = exact: 3 full, 1 host-only → 1 + 0.2·(0.7·3/4 + 0.3·1/6) = 1.115.
    report = "04901-quill-dr"
    for tsl_match, tboost in (("under", 1.14), ("exact", 1.115)):
        conn = connect(tmp_path / f"{tsl_match}.db")
        import_bundle(conn, read_bundle(SAMPLE), "h")
        set_options(conn, "drbench", {"tsl_match": tsl_match})
        assert report_score(conn, report, "tboost", "judge") == pytest.approx(tboost)
        assert report_score(conn, report, "match_full", "judge") == (
            4 if tsl_match == "under" else 3
        )
        conn.close()


# -- a whole bundle for the test vector, through the store -----------------------------------------


def vector_bundle() -> Bundle:
    criteria = [
        Criterion(
            id=f"qsr-{i:02d}",
            framework="drbench",
            dimension="qsr",
            text=f"Does the report cover point {i}? Yes=2, No=0",
            weight=2,
        )
        for i in range(1, 16)
    ]
    criteria += [
        Criterion(id=grr_id(n), framework="drbench", dimension="grr", text=t)
        for n, _, t in GENERAL_RUBRICS
    ]
    for prefix, dimension in (("fak", "anchor_keyword"), ("fdk", "drift_keyword")):
        criteria += [
            Criterion(
                id=f"{prefix}-{k}",
                framework="drbench",
                dimension=dimension,
                text=f"{prefix} word {k}",
            )
            for k in range(1, 6)
        ]
    criteria += [
        Criterion(
            id=f"tsl-{t}",
            framework="drbench",
            dimension="trusted_source",
            text=f"https://source{t}.example/page",
        )
        for t in range(1, 6)
    ]
    task = Task(id="vector", prompt="The §2.11 test vector", criteria=criteria)
    judgments: list[Judgment] = []

    def add(kind: str, value: object, criterion: str | None = None, key: str | None = None) -> None:
        judgments.append(
            Judgment(run="j", report="r1", kind=kind, criterion=criterion, key=key, value=value)
        )

    for i in range(1, 16):
        add("drb_qsr", "yes" if i <= 10 else "no", f"qsr-{i:02d}")
    for n, _, _ in GENERAL_RUBRICS:
        add("drb_grr", "no" if n <= 14 else "yes", grr_id(n))
    for prefix, freqs, reles in (
        ("fak", [3, 0, 1, 5, 2], [5, 1, 3, 4, 4]),
        ("fdk", [1, 0, 0, 2, 0], [2, 1, 1, 3, 1]),
    ):
        for k, (freq, rele) in enumerate(zip(freqs, reles, strict=True), 1):
            add("drb_relevance", rele, f"{prefix}-{k}")
            for hit in range(freq):
                add("drb_keyword_hit", True, f"{prefix}-{k}", key=str(hit * 50))
    for n, value in enumerate(["full"] * 2 + ["host"] * 3 + ["none"] * 7):
        add("drb_trusted", value, key=f"cited{n}.example/x")
    return Bundle(
        suite=Suite(id="vector", name="vector", frameworks=["drbench"]),
        tasks=[task],
        systems=[System(id="s")],
        reports=[Report(id="r1", task="vector", system="s", markdown="text")],
        runs=[JudgeRun(id="j")],
        judgments=judgments,
    )


def test_test_vector_through_the_store(conn: sqlite3.Connection) -> None:
    from store.imports.loader import import_bundle
    from store.scores.cache import rebuild_scores

    import_bundle(conn, vector_bundle(), "vector")
    rebuild_scores(conn)
    rows = dict(
        conn.execute(
            f"""SELECT metric, value FROM {all_scores(conn)}
            WHERE framework = 'drbench' AND variant = 'judge'
           AND scope LIKE 'system:%'"""
        ).fetchall()
    )
    print(
        f"\nstore: Quality {rows['quality']:.4f}, drift {rows['drift']:.3f}, "
        f"TBoost {rows['tboost']:.4f}, InteScore {rows['integrated']:.3f}"
    )
    assert round(rows["quality"], 4) == 0.6758
    assert round(rows["drift"], 3) == 0.354
    assert round(rows["tboost"], 4) == 1.0698
    assert round(rows["integrated"], 3) == 46.706


def test_reports_without_drbench_verdicts_are_not_scored() -> None:
    assert FRAMEWORK.score_report(ReportInput(1, 1, 1), "judge", opts()) == {}
    assert FRAMEWORK.aggregate([{}], opts())["integrated"].value is None


def test_options_resolve_by_name() -> None:
    with pytest.raises(ValueError):
        opts(eps_plus="7")
    with pytest.raises(ValueError):
        opts(no_such_option="x")
    assert re.fullmatch(r"\d", opts()["eps_plus"])
    parts: ReportScores = FRAMEWORK.score_report(vector_input(), "judge", opts())
    assert all(m.name in parts for m in FRAMEWORK.metrics)
