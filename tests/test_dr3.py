"""DR3-Eval: the paper's worked example, every metric's edges and options, the importer, the
sample run, and an adjudication moving the scores.

Expected values are computed by hand from ``specs/dr3_eval.md`` and the paper (arithmetic in
the comments). Run with ``-s`` to see the Appendix F figures printed.
"""

from __future__ import annotations

import json
import re
import shutil
import sqlite3
from collections.abc import Iterator
from itertools import count
from pathlib import Path
from typing import Any

import pytest

from reviewer.errors import InputError
from reviewer.formats.checks import check_bundle
from reviewer.framework import ReportScores, resolve_options
from reviewer.frameworks.dr3_eval.format import (
    extract_citations,
    match_required,
    normalize_title,
    read,
    resolve_citation,
)
from reviewer.frameworks.dr3_eval.scoring import FRAMEWORK as DR3
from reviewer.inputs import ClaimIn, CriterionIn, ReportInput, VerdictIn
from reviewer.registry import frameworks, scales
from tests.score_rows import all_scores

PROJECT = Path(__file__).resolve().parent.parent
FIXTURE = PROJECT / "tests" / "fixtures" / "dr3"
SAMPLE = PROJECT / "sample_data" / "dr3"
WORKSTATION_KEYS = set("0123hcxusf")


def opts(**overrides: str) -> dict[str, str]:
    return resolve_options(DR3, overrides)


# -- a small builder: one report, criteria by dimension, verdicts by kind ----------------------


class Build:
    """A ReportInput assembled item by item; ``human`` gives an adjudicated value."""

    def __init__(self, report_id: int = 1, metadata: dict[str, Any] | None = None) -> None:
        self.ids = count(1)
        self.report = ReportInput(report_id, 1, 1, report_metadata=metadata or {})

    def criterion(
        self,
        dimension: str,
        text: str = "x",
        kind: str | None = None,
        judge: str | None = None,
        human: str | None = None,
    ) -> int:
        cid = next(self.ids)
        self.report.criteria.append(CriterionIn(cid, None, dimension, None, text))
        if kind is not None:
            self.verdict(kind, judge, human, criterion=cid)
        return cid

    def verdict(
        self,
        kind: str,
        judge: str | None,
        human: str | None = None,
        *,
        criterion: int | None = None,
        claim: int | None = None,
        ref: int | None = None,
    ) -> None:
        effective = judge if human is None else human
        self.report.verdicts.append(
            VerdictIn(
                next(self.ids),
                self.report.report_id,
                kind,
                None,
                criterion,
                claim,
                ref,
                None,
                judge,
                effective,
                "judge failed" if judge is None else None,
            )
        )

    def claim(self, refs: dict[int, str | None], cited: tuple[int, ...] | None = None) -> int:
        """A claim citing ``refs`` (reference index -> judge value; None = failed verdict)."""
        kid = next(self.ids)
        self.report.claims.append(ClaimIn(kid, None, None, tuple(refs) if cited is None else cited))
        for ref, value in refs.items():
            self.verdict("dr3_support", value, claim=kid, ref=ref)
        return kid

    def score(self, variant: str = "judge", **overrides: str) -> ReportScores:
        return DR3.score_report(self.report, variant, opts(**overrides))  # type: ignore[arg-type]


def insights(b: Build, dimension: str, labels: list[str]) -> None:
    for label in labels:
        b.criterion(dimension, kind="dr3_insight", judge=label)


# -- Appendix F: Claude Sonnet 4 on the China high-speed-rail task ------------------------------

UF_INSIGHTS = [
    "China's high-speed rail network is dense, especially in the east.",
    "The map shows the extensive network as of November 2023.",
    "The network includes lines with speeds of 300 km/h or more.",
    "Rail lines are color-coded by speed, from < 200 to >= 300 km/h.",
    "Map of Japan's Shinkansen lines as of March 2025.",
    "Shows operational, planned, and under-construction routes.",
    "A future Linear Chuo Shinkansen (maglev) line is projected.",
    "The network connects major cities like Tokyo, Osaka, and Hakata.",
    "Developed from non-existent to world-class in just over 10 years.",
    "Current trains travel at world-leading speeds of 300-350 km/h.",
    "The new CR450 EMU prototype is the world's fastest.",
    "CR450 prototype reaches 450 km/h in tests.",
]
# Table 9: Covered {1, 3, 5, 8, 9, 12}, Half {2, 6, 7, 10, 11}, Not {4}.
UF_LABELS = ["1", "0.5", "1", "0", "1", "0.5", "0.5", "1", "1", "0.5", "0.5", "1"]
# Table 10: Not {1, 3}, Half {2, 6}, Covered {4, 5}.
SC_LABELS = ["0", "0.5", "0", "1", "1", "0.5"]
# Table 11: web pages 1–2 cited, 3–5 missed; the three user files cited.
PAGES = [
    ("Japan's Shinkansen: How Does It Stack Up Worldwide?", "cited"),
    (
        "The global rail transportation market was valued at US$ 724,180 million in 2022 and, "
        "by 2029, is pro",
        "cited",
    ),
    ("Expected Benefits of Next-generation High-speed Rail Introduction.", "missed"),
    ("China's railway network: rapid development to support domestic mobility", "missed"),
    (
        "A remarkable piece of engineering and efficiency, the Shanghai-Kunming line spans from "
        "the east coas",
        "missed",
    ),
]
FILES = [
    ("China.jpg", "cited"),
    ("Shinkansen.jpg", "cited"),
    ("China's high-speed rail.mp4", "cited"),
]


def appendix_f() -> Build:
    b = Build()
    for text, label in zip(UF_INSIGHTS, UF_LABELS, strict=True):
        b.criterion("insight_uf", text, "dr3_insight", label)
    insights(b, "insight_sc", SC_LABELS)
    for title, status in PAGES:
        b.criterion("required_page", title, "dr3_citation", status)
    for name, status in FILES:
        b.criterion("required_file", name, "dr3_citation", status)
    for _ in range(15):  # Table 13: all 15 items ✓
        b.criterion("checklist", kind="dr3_checklist", judge="true")
    b.criterion("depth", kind="dr3_depth", judge="7")  # F.5: "Score: 0.70"
    return b


def test_appendix_f_worked_example() -> None:
    s = appendix_f().score()
    print(
        "\nAppendix F reproduced: "
        + ", ".join(f"{m} {s[m]:.1f}" for m in ("IR_UF", "IR_SC", "CC", "IF", "DQ"))
    )
    assert s["IR_UF"] == pytest.approx(50.0)  # 6 fully covered / 12 = 50.0
    assert s["IR_SC"] == pytest.approx(100 * 2 / 6)  # 2 / 6 = 33.3
    assert round(s["IR_SC"] or 0, 1) == 33.3
    assert s["CC"] == pytest.approx(62.5)  # (2 pages + 3 files) / 8 = 62.5
    assert s["CC_supportive"] == pytest.approx(40.0)  # 2 / 5
    assert s["CC_userfiles"] == pytest.approx(100.0)  # 3 / 3
    assert s["IF"] == pytest.approx(100.0)  # 15 / 15
    assert s["DQ"] == pytest.approx(70.0)  # 7 × 10
    # FA: Table 12 shows 72 claims but only two ✗, so FA cannot be recomputed; without
    # support verdicts it has no value and the six-column mean averages the other five:
    # (50 + 33.33 + 62.5 + 100 + 70) / 5 = 63.17.
    assert s["FA"] is None
    assert s["IR"] == pytest.approx((50.0 + 100 * 2 / 6) / 2)  # (50 + 33.33) / 2 = 41.67
    assert s["Avg"] == pytest.approx((50 + 100 / 3 + 62.5 + 100 + 70) / 5)


def test_appendix_f_under_the_named_options() -> None:
    b = appendix_f()
    # Half credit (not used by the paper): UF (6 + 5 × 0.5) / 12 = 70.83; SC (2 + 2 × 0.5) / 6 = 50.
    half = b.score(ir_partial="half")
    assert half["IR_UF"] == pytest.approx(8.5 / 12 * 100)
    assert round(half["IR_UF"] or 0, 1) == 70.8
    assert half["IR_SC"] == pytest.approx(50.0)
    # The code's user-document whitelist drops .jpg and .mp4: D_req = 5 pages, 2 cited = 40.
    assert b.score(cc_user_files="documents")["CC"] == pytest.approx(40.0)
    # Missing FA counted as 0 over six columns: (50 + 33.33 + 62.5 + 0 + 100 + 70) / 6.
    assert b.score(average_missing="zero")["Avg"] == pytest.approx(
        (50 + 100 / 3 + 62.5 + 100 + 70) / 6
    )
    # Five-metric total: IR combined 41.67, FA missing, DQ 70, IF 100, CC 62.5 -> / 4.
    assert b.score(average="five")["Avg"] == pytest.approx(
        ((50 + 100 / 3) / 2 + 70 + 100 + 62.5) / 4
    )


def test_every_ambiguity_is_a_named_option() -> None:
    assert {o.name: o.default for o in DR3.options} == {
        "ir_partial": "strict",
        "ir_failed": "zero",
        "ir_empty": "exclude",
        "cc_user_files": "all",
        "fa_unit": "claim",
        "fa_failed_pair": "unsupported",
        "if_failed": "exclude",
        "dq_value": "as_given",
        "average": "six",
        "average_missing": "available",
        "average_scope": "columns",
    }
    for option in DR3.options:
        assert option.default in option.choices and option.description


def test_kinds_scales_and_keys_fit_the_workstation() -> None:
    assert "dr3" in frameworks()
    assert set(DR3.kinds) == {
        "dr3_insight",
        "dr3_citation",
        "dr3_support",
        "dr3_checklist",
        "dr3_depth",
    }
    subjects = {k.name: k.subject for k in DR3.kinds.values()}
    assert subjects["dr3_support"] == "claim_ref" and subjects["dr3_insight"] == "criterion"
    for kind in DR3.kinds.values():
        assert scales()[kind.scale.name] is kind.scale
        keys = [c.key for c in kind.scale.choices]
        assert set(keys) <= WORKSTATION_KEYS and len(keys) == len(set(keys))
    coverage = DR3.kinds["dr3_insight"].scale
    assert [(c.code, c.key) for c in coverage.choices] == [("1", "1"), ("0.5", "h"), ("0", "0")]
    assert coverage.normalize(1.0) == "1" and coverage.normalize("partial_support") == "0.5"
    assert DR3.kinds["dr3_checklist"].scale.normalize(True) == "true"
    assert DR3.kinds["dr3_citation"].scale.by_key("0").code == "missed"  # type: ignore[union-attr]
    assert DR3.kinds["dr3_support"].scale.by_key("x").code == "unsupported"  # type: ignore[union-attr]
    depth = DR3.kinds["dr3_depth"].scale
    assert depth.continuous and (depth.low, depth.high) == (1.0, 10.0)
    assert depth.normalize("7.5") == "7.5"
    with pytest.raises(ValueError):
        depth.normalize(11)


def test_workstation_verdict_keys_reach_the_dr3_scales() -> None:
    from tui.keymap import verdict_codes

    frameworks()  # the framework modules register their scales when loaded
    codes = verdict_codes()
    assert codes["verdict.partial"]["dr3_coverage"] == "0.5"
    assert codes["verdict.yes"]["dr3_cited"] == "cited"
    assert codes["verdict.no"]["dr3_cited"] == "missed"
    assert codes["verdict.incorrect"]["dr3_support"] == "unsupported"
    assert codes["verdict.support"]["dr3_support"] == "supported"


def test_report_screen_keys_include_framework_scales_in_a_fresh_process() -> None:
    # The workstation's verdict keys must reach scales that frameworks register themselves.
    import subprocess
    import sys

    code = (
        "import tui.keymap as k; "
        "print(any('dr3_coverage' in v for v in k.verdict_codes().values()))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=PROJECT, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "True"


# -- each metric's edges -------------------------------------------------------------------


def test_ir_edges() -> None:
    b = Build()
    insights(b, "insight_uf", ["1", "0.5"])
    b.criterion("insight_uf", kind="dr3_insight", judge=None)  # judge failed (NOT FOUND)
    b.criterion("insight_uf")  # no verdict at all
    # zero: 1 of 4 = 25; exclude: 1 of 2 = 50; half + exclude: (1 + 0.5) / 2 = 75.
    assert b.score()["IR_UF"] == pytest.approx(25.0)
    assert b.score(ir_failed="exclude")["IR_UF"] == pytest.approx(50.0)
    assert b.score(ir_failed="exclude", ir_partial="half")["IR_UF"] == pytest.approx(75.0)
    # No sandbox insights although IR ran: no value, or the code's 100.
    assert b.score()["IR_SC"] is None
    assert b.score(ir_empty="hundred")["IR_SC"] == pytest.approx(100.0)
    assert b.score()["IR"] == pytest.approx(25.0)  # only UF available
    # Every insight failed and failures excluded: nothing to divide by.
    c = Build()
    c.criterion("insight_sc", kind="dr3_insight", judge=None)
    assert c.score(ir_failed="exclude")["IR_SC"] is None
    assert c.score()["IR_SC"] == pytest.approx(0.0)
    # IR never ran (no insight verdicts): no value even under ir_empty = hundred.
    d = Build()
    d.criterion("insight_uf")
    d.criterion("checklist", kind="dr3_checklist", judge="true")
    assert d.score(ir_empty="hundred")["IR_UF"] is None and d.score()["IR_SC"] is None


def test_cc_edges() -> None:
    b = Build()
    b.criterion("required_page", "Page A", "dr3_citation", "cited")
    b.criterion("required_page", "Page B")  # no verdict: not cited
    b.criterion("required_file", "notes.pdf", "dr3_citation", "missed")
    b.criterion("required_file", "clip.mp4", "dr3_citation", "cited")
    s = b.score()
    assert s["CC"] == pytest.approx(50.0)  # 2 / 4
    assert s["CC_supportive"] == pytest.approx(50.0)  # 1 / 2
    assert s["CC_userfiles"] == pytest.approx(50.0)  # 1 / 2
    docs = b.score(cc_user_files="documents")  # clip.mp4 leaves D_req
    assert docs["CC"] == pytest.approx(100 / 3)  # 1 / 3
    assert docs["CC_userfiles"] == pytest.approx(0.0)  # 0 / 1
    only_video = Build()
    only_video.criterion("required_file", "clip.mp4", "dr3_citation", "cited")
    assert only_video.score(cc_user_files="documents")["CC"] is None  # empty D_req
    assert only_video.score()["CC_supportive"] is None
    none = Build()
    none.criterion("required_page", "Page A")
    none.criterion("depth", kind="dr3_depth", judge="5")
    assert none.score()["CC"] is None  # CC never computed


def fa_report() -> Build:
    meta = {
        "dr3_ref_origin": {"1": "sandbox", "2": "sandbox", "3": "user_file", "4": "sandbox"},
        "dr3_ref_class": {
            "1": "supportive",
            "2": "distractor",
            "3": "user_file",
            "4": "unresolved",
        },
    }
    b = Build(metadata=meta)
    b.claim({1: "supported"})  # A: supported
    b.claim({2: "supported", 3: "unsupported"})  # B: one citation fails -> unsupported
    b.claim({3: "supported", 1: "supported"})  # C: user-file first, all support
    b.claim({}, cited=())  # D: no citations -> unsupported
    b.claim({4: None})  # E: its only pair failed
    return b


def test_fa_claim_and_pair_units() -> None:
    b = fa_report()
    s = b.score()
    # Claims: A ✓, B ✗, C ✓, D ✗, E ✗ (failed = unsupported) -> 2 / 5 = 40.
    assert s["FA"] == pytest.approx(40.0)
    # By first citation: sandbox A ✓, B ✗, E ✗ -> 1/3; user file C ✓ -> 1/1; D has none.
    assert s["FA_sandbox"] == pytest.approx(100 / 3)
    assert s["FA_userfiles"] == pytest.approx(100.0)
    assert s["distractor_claims"] == pytest.approx(20.0)  # B cites a distractor: 1 / 5
    # Excluding failed pairs: E leaves FA -> 2 / 4 = 50.
    assert b.score(fa_failed_pair="exclude")["FA"] == pytest.approx(50.0)
    # Pairs (Eq. 4): A1 ✓, B2 ✓, B3 ✗, C3 ✓, C1 ✓, E4 ✗ -> 4 / 6; D has no pair.
    pairs = b.score(fa_unit="pair")
    assert pairs["FA"] == pytest.approx(100 * 4 / 6)
    # Pairs by their own source: sandbox A1 ✓ B2 ✓ C1 ✓ E4 ✗ -> 3/4; user file B3 ✗ C3 ✓ -> 1/2.
    assert pairs["FA_sandbox"] == pytest.approx(75.0)
    assert pairs["FA_userfiles"] == pytest.approx(50.0)
    assert b.score(fa_unit="pair", fa_failed_pair="exclude")["FA"] == pytest.approx(80.0)


def test_fa_edges() -> None:
    nothing = Build()
    nothing.criterion("depth", kind="dr3_depth", judge="6")
    assert nothing.score()["FA"] is None  # no claims: the code's -1
    extracted_only = Build()
    extracted_only.report.claims.append(ClaimIn(99, None, None, (1,)))
    extracted_only.criterion("depth", kind="dr3_depth", judge="6")
    assert extracted_only.score()["FA"] is None  # FA never ran
    b = fa_report()
    b.report.report_metadata = {}  # no source map: no split
    s = b.score()
    assert s["FA"] == pytest.approx(40.0) and s["FA_sandbox"] is None
    assert s["distractor_claims"] == pytest.approx(0.0)


def test_if_and_dq_edges() -> None:
    b = Build()
    for value in ("true", "true", "false", None):
        b.criterion("checklist", kind="dr3_checklist", judge=value)
    assert b.score()["IF"] == pytest.approx(100 * 2 / 3)  # 2 / 3 valid
    assert b.score(if_failed="unsatisfied")["IF"] == pytest.approx(50.0)  # 2 / 4
    failed = Build()
    failed.criterion("checklist", kind="dr3_checklist", judge=None)
    assert failed.score()["IF"] is None  # the code's -1
    d = Build()
    d.criterion("depth", kind="dr3_depth", judge="7", human="7.5")
    assert d.score()["DQ"] == pytest.approx(70.0)
    assert d.score("adjudicated")["DQ"] == pytest.approx(75.0)  # 7.5 × 10
    assert d.score("adjudicated", dq_value="truncate")["DQ"] == pytest.approx(70.0)
    e = Build()
    e.criterion("depth", kind="dr3_depth", judge=None)
    e.criterion("checklist", kind="dr3_checklist", judge="true")
    assert e.score()["DQ"] is None


def test_average_variants_and_system_scope() -> None:
    full = Build(1)
    insights(full, "insight_uf", ["1", "0"])  # 50
    insights(full, "insight_sc", ["1"])  # 100
    full.criterion("required_page", "P", "dr3_citation", "cited")  # 100
    full.claim({1: "unsupported"})  # 0
    full.criterion("checklist", kind="dr3_checklist", judge="true")  # 100
    full.criterion("depth", kind="dr3_depth", judge="4")  # 40
    s = full.score()
    assert s["Avg"] == pytest.approx((50 + 100 + 100 + 0 + 100 + 40) / 6)  # 65
    # Five: IR = (50 + 100) / 2 = 75; (75 + 0 + 40 + 100 + 100) / 5 = 63.
    assert full.score(average="five")["Avg"] == pytest.approx(63.0)
    part = Build(2)
    insights(part, "insight_uf", ["1"])  # IR_UF 100, nothing else
    p = part.score()
    assert p["Avg"] == pytest.approx(100.0)
    assert part.score(average_missing="zero")["Avg"] == pytest.approx(100 / 6)
    reports = [s, p]
    # Columns (Table 2): means IR_UF (50+100)/2 = 75, IR_SC 100, CC 100, FA 0, IF 100, DQ 40
    # -> 415 / 6 = 69.17. Reports (code summary): (65 + 100) / 2 = 82.5.
    cols = DR3.aggregate(reports, opts())
    assert cols["Avg"].value == pytest.approx(415 / 6) and cols["Avg"].n == 2
    assert cols["IR_UF"].value == pytest.approx(75.0) and cols["IR_UF"].n == 2
    assert cols["FA"].n == 1
    assert DR3.aggregate(reports, opts(average_scope="reports"))["Avg"].value == pytest.approx(82.5)
    assert DR3.aggregate([], opts())["Avg"].value is None


def test_a_report_without_dr3_verdicts_has_no_scores() -> None:
    b = Build()
    b.criterion("insight_uf")
    b.verdict("ins", "1", criterion=1)  # another framework's kind
    assert b.score() == {}


# -- the citation-coverage rule and citation resolution ----------------------------------------


def test_citation_extraction_patterns() -> None:
    report = (
        'A [long_context: "Ferry Report 2025", chunk 3]. B [source: \u201cHarbour Log\u201d]. '
        "C [notes.pdf, 第2页]. D [Image: map.png]. E [1] [12] [Ab] [注意事项] [see (1)] "
        "[Video: ride.mp4]. F [long_context: \"Why Ships Don't Plug In\"] [long_context: 'Tides']."
    )
    # long_context titles (chunk stripped, quotes paired so "Don't" stays whole), page-cited
    # files, source:, Image:, then every other bracket of 4+ characters that is not digits,
    # not parenthesised and not a note.
    assert extract_citations(report) == [
        "Ferry Report 2025",
        "Why Ships Don't Plug In",
        "Tides",
        "notes.pdf",
        "Harbour Log",
        "map.png",
        "notes.pdf, 第2页",
        "Video: ride.mp4",
    ]


@pytest.mark.parametrize(
    ("title", "report", "expected"),
    [
        (
            "Ferry Report 2025",
            '[long_context: "Ferry Report 2025"]',
            ("exact", "Ferry Report 2025"),
        ),
        ("Ferry Report 2025", '[long_context: "Ferry Report"]', ("contains", "Ferry Report")),
        (
            "Rail Plan - Annex",
            '[long_context: "Rail Plan overview"]',
            ("contains_main", "Rail Plan overview"),
        ),
        (
            "The LRT-X programme review",
            "[About LRT-X trials]",
            ("core_identifier", "About LRT-X trials"),
        ),
        (
            "Electric ferries charging piers",
            "[Charging piers for electric ferries]",
            ("fuzzy", "Charging piers for electric ferries"),
        ),
        (
            "Harbour Noise Survey",
            "We read the harbour noise survey closely.",
            ("text_contains", "Harbour Noise Survey"),
        ),
        (
            "The NOXCAP pilot results",
            "Results of NOXCAP were mixed.",
            ("core_id_in_text", "NOXCAP"),
        ),
        ("Harbour Noise Survey", "[Completely different title]", ("not_found", "")),
        ("Harbour Noise Survey", "No final answer [Harbour Noise Survey]", ("no_final_answer", "")),
    ],
)
def test_citation_coverage_match_types(title: str, report: str, expected: tuple[str, str]) -> None:
    match = match_required(title, report)
    assert (match.match_type, match.matched_citation) == expected
    assert match.cited == (expected[0] not in ("not_found", "no_final_answer"))


def test_rule_details() -> None:
    assert normalize_title("\uff26erry\u3000\u201cReport\u201d  2025") == 'ferry "report" 2025'
    # Brand names match as whole words only ('ted' is not in 'united')...
    assert match_required("ted talk on ferries", "[United harbours]").match_type == "not_found"
    assert match_required("bbc documentary", "[Clip from bbc news]").match_type == "fuzzy"
    # ...but an upper-case core identifier is a substring test, as in the evaluator.
    assert (
        match_required("TED talk on ferries", "[United harbours]").match_type == "core_identifier"
    )
    # The first matching citation wins, so a distractor cited first is the match: the false
    # match a reviewer has to catch.
    m = match_required(
        "Pilot Study - Final Evaluation",
        '[long_context: "Pilot Study - Original Plan"] [long_context: '
        '"Pilot Study - Final Evaluation"]',
    )
    assert (m.match_type, m.matched_citation) == ("contains_main", "Pilot Study - Original Plan")


def test_citation_resolution() -> None:
    from reviewer.frameworks.dr3_eval.format import _Src

    pages = [
        _Src("u1", "Ferry Report 2025", "sandbox", "supportive", None),
        _Src("u2", "Ferry Report 2019", "sandbox", "distractor", None),
        _Src("u3", "Seafood guide", "sandbox", "noise", None),
    ]
    files = [_Src("f1", "map.png", "user_file", "user_file", None)]
    assert resolve_citation('[long_context: "Ferry Report 2019", chunk 1]', pages, files) == (
        pages[1],
        "exact_title",
    )
    assert resolve_citation('["Ferry Report"]', pages, files) == (pages[0], "fuzzy_title")
    assert resolve_citation("[RAG-3]", pages, files) == (pages[2], "rag_index")
    assert resolve_citation("[RAG-4]", pages, files) == (None, "not_found")
    assert resolve_citation("[Image: map.png]", pages, files) == (files[0], "user_file")
    assert resolve_citation("[Video: ride.mp4]", pages, files) == (None, "not_found")
    assert resolve_citation("[Doc: Seafood guide, Page 2]", pages, files) == (
        pages[2],
        "exact_title",
    )


# -- the importer ------------------------------------------------------------------------------


def copy_fixture(tmp_path: Path) -> Path:
    target = tmp_path / "run"
    shutil.copytree(FIXTURE, target)
    return target


def rewrite(path: Path, edit: Any, line: int = 0) -> None:
    rows = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]
    edit(rows[line])
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def test_fixture_reads_into_a_checked_bundle() -> None:
    bundle = read(FIXTURE)
    check_bundle(bundle)
    assert bundle.suite.id == "dr3-fixture" and bundle.suite.frameworks == ["dr3"]
    task = bundle.tasks[0]
    dims = [c.dimension for c in task.criteria]
    assert dims.count("insight_uf") == 2 and dims.count("insight_sc") == 2
    assert dims.count("required_page") == 2 and dims.count("required_file") == 2
    assert dims.count("checklist") == 3 and dims.count("depth") == 1
    classes = {s.url: s.metadata["class"] for s in bundle.sources}
    assert classes["https://lakeport-transit.example/ferry-2019"] == "distractor"
    assert classes["https://eat-lakeport.example/seafood"] == "noise"
    assert classes["dr3-file:t1/route_map.png"] == "user_file"
    by = {(j.report, j.kind, j.criterion or f"{j.claim}/{j.ref}"): j for j in bundle.judgments}
    beta_cc = by[("beta:t1", "dr3_citation", "page-1")]
    # beta cites the ambiguous prefix '"Lakeport Ferry Ridership Report"': the rule calls it a
    # fuzzy match of the 2025 report, and the matched citation is kept for the reviewer.
    assert beta_cc.value == "cited" and beta_cc.evidence == '"Lakeport Ferry Ridership Report"'
    assert json.loads(beta_cc.raw)["match_type"] == "fuzzy"
    assert by[("beta:t1", "dr3_insight", "sc-1")].value == 1.0  # 0.8 snapped to 1
    assert by[("beta:t1", "dr3_insight", "sc-2")].error  # no result: NOT FOUND
    assert by[("beta:t1", "dr3_depth", "dq")].value == 4.0  # parsed from the XML
    rag = by[("beta:t1", "dr3_support", "c2/3")]
    assert rag.value == "unsupported" and "Source not found" in rag.explanation
    alpha_refs = {r.index: r.url for r in bundle.reports[0].references or []}
    assert alpha_refs[4] == "https://lakeport-transit.example/ferry-2019"
    assert bundle.reports[0].metadata["dr3_ref_class"]["4"] == "distractor"


def test_fixture_imports_into_a_store_with_hand_computed_scores(conn: sqlite3.Connection) -> None:
    from store.imports.from_path import import_path
    from store.scores.cache import cached

    result = import_path(conn, FIXTURE, "dr3")
    assert result.created and result.counts["reports"] == 2
    located = conn.execute("SELECT count(*) FROM claim WHERE span_start IS NOT NULL").fetchone()
    assert located[0] == 8  # every claim found in its report
    table = cached(conn)
    ids = dict(conn.execute("SELECT ext_id, id FROM report"))
    alpha = table.reports[(ids["alpha:t1"], "dr3", "judge")]
    beta = table.reports[(ids["beta:t1"], "dr3", "judge")]
    # alpha: IR_UF 1 of 2 = 50; IR_SC 2 of 2 = 100; CC 3 of 4 = 75; FA 4 of 4 = 100;
    # IF 3 of 3 = 100; DQ 6 × 10 = 60; Avg (50 + 100 + 75 + 100 + 100 + 60) / 6 = 80.83;
    # one of four claims cites the 2019 distractor = 25.
    expected_alpha = {
        "IR_UF": 50.0,
        "IR_SC": 100.0,
        "CC": 75.0,
        "FA": 100.0,
        "IF": 100.0,
        "DQ": 60.0,
        "Avg": 485 / 6,
        "distractor_claims": 25.0,
    }
    # beta: IR_UF 1 (strict: the 0.5 counts 0) of 2 = 50; IR_SC 1 (0.8 -> 1) of 2, the
    # missing one counting 0 = 50; CC by the rule: 2025 report (fuzzy) and the minutes cited
    # of 4 = 50; FA: c1 ✓, c2 ✗ (RAG-9 not found), c3 ✗ (no citation), c4 ✗ (failed) = 25;
    # IF 1 of 2 valid (item 3 errored) = 50; DQ 4 × 10 = 40; Avg 265 / 6 = 44.17.
    expected_beta = {
        "IR_UF": 50.0,
        "IR_SC": 50.0,
        "CC": 50.0,
        "FA": 25.0,
        "IF": 50.0,
        "DQ": 40.0,
        "Avg": 265 / 6,
        "FA_sandbox": 50.0,
        "FA_userfiles": 0.0,
    }
    for got, want in ((alpha, expected_alpha), (beta, expected_beta)):
        for metric, value in want.items():
            assert got[metric] == pytest.approx(value), metric
    assert not import_path(conn, FIXTURE, "dr3").created  # re-import is a no-op


@pytest.mark.parametrize(
    ("file", "line", "edit", "field", "words"),
    [
        ("tasks.jsonl", 0, lambda r: r.pop("query"), "query", "Field required"),
        ("tasks.jsonl", 0, lambda r: r.update(typo=1), "typo", "unknown field"),
        (
            "tasks.jsonl",
            0,
            lambda r: r["sandbox"][2].update({"class": "useful"}),
            "sandbox.2.class",
            "supportive",
        ),
        (
            "tasks.jsonl",
            0,
            lambda r: r["sandbox"][1].update(url=r["sandbox"][0]["url"]),
            "sandbox.1.url",
            "repeats",
        ),
        ("tasks.jsonl", 0, lambda r: r["checklist"][1].update(id=1), "checklist.1.id", "repeats"),
        ("results.jsonl", 1, lambda r: r.update(task="t9"), "task", "unknown task"),
        ("results.jsonl", 1, lambda r: r.update(system="alpha"), "system", "second result"),
        (
            "results.jsonl",
            0,
            lambda r: r["information_recall"]["long_context"][0].update(id=7),
            "information_recall.long_context.0.id",
            "2 long_context gold insights",
        ),
        (
            "results.jsonl",
            0,
            lambda r: r["information_recall"]["source_documents"][1].update(score="high"),
            "information_recall.source_documents.1.score",
            "number",
        ),
        (
            "results.jsonl",
            0,
            lambda r: r["citation_coverage"]["match_details"].update(
                {"Some other page": {"match_type": "exact"}}
            ),
            "citation_coverage.match_details.Some other page",
            "not a required document",
        ),
        (
            "results.jsonl",
            0,
            lambda r: r["factual_accuracy"]["claims"][1]["citation_results"][0].update(
                citation="[RAG-1]"
            ),
            "factual_accuracy.claims.1.citation_results.0.citation",
            "not one of the claim's citations",
        ),
        (
            "results.jsonl",
            0,
            lambda r: r["factual_accuracy"]["claims"][0]["citation_results"][0].update(
                source="https://nowhere.example"
            ),
            "factual_accuracy.claims.0.citation_results.0.source",
            "neither a sandbox",
        ),
        (
            "results.jsonl",
            1,
            lambda r: r["format_compliance"]["results"][0].update(id=9),
            "format_compliance.results.0.id",
            "not in the task's checklist",
        ),
    ],
)
def test_importer_errors_name_file_line_and_field(
    tmp_path: Path, file: str, line: int, edit: Any, field: str, words: str
) -> None:
    root = copy_fixture(tmp_path)
    rewrite(root / file, edit, line)
    with pytest.raises(InputError) as err:
        read(root)
    assert err.value.file == str(root / file)
    assert err.value.line == line + 1
    assert err.value.field == field
    assert words in err.value.message


def test_importer_errors_on_files(tmp_path: Path, conn: sqlite3.Connection) -> None:
    from store.imports.from_path import import_path

    root = copy_fixture(tmp_path)
    results = root / "results.jsonl"
    results.write_text(results.read_text() + '{"task": "t1", \n', encoding="utf-8")
    with pytest.raises(InputError) as err:
        import_path(conn, root, "dr3")
    assert (err.value.file, err.value.line) == (str(results), 3)
    assert "invalid JSON" in err.value.message
    assert conn.execute("SELECT count(*) FROM suite").fetchone() == (0,)  # nothing imported
    (root / "tasks.jsonl").unlink()
    with pytest.raises(InputError, match=r"tasks\.jsonl"):
        read(root)
    with pytest.raises(InputError, match="no such folder"):
        read(tmp_path / "nowhere")
    (root / "run.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(InputError) as err:
        read(root)
    assert err.value.file == str(root / "run.json")


def test_a_check_error_imports_nothing(tmp_path: Path, conn: sqlite3.Connection) -> None:
    from store.imports.loader import import_bundle

    bundle = read(FIXTURE)
    bundle.judgments[-1] = bundle.judgments[-1].model_copy(update={"value": 12})  # DQ > 10
    with pytest.raises(InputError) as err:
        import_bundle(conn, bundle, "hash")
    assert err.value.field == "value" and err.value.line == 2  # results.jsonl, beta's line
    assert conn.execute("SELECT count(*) FROM report").fetchone() == (0,)


def test_format_registry_offers_dr3() -> None:
    from reviewer.registry import format_reader, formats

    assert "dr3_eval" in formats() and formats()["dr3"] is formats()["dr3_eval"]
    assert format_reader("dr3")(FIXTURE, "other-id").suite.id == "other-id"


# -- the sample run --------------------------------------------------------------------------


@pytest.fixture
def sample_conn(tmp_path: Path) -> Iterator[sqlite3.Connection]:
    from store.db.connection import connect
    from store.imports.from_path import import_path

    connection = connect(tmp_path / "dr3.db")
    import_path(connection, SAMPLE)
    yield connection
    connection.close()


def test_sample_bundle_shape() -> None:
    from reviewer.formats.native import read_bundle

    bundle = read_bundle(SAMPLE)
    check_bundle(bundle)
    assert bundle.suite.frameworks == ["dr3"]
    assert len(bundle.tasks) == 2 and len(bundle.systems) == 4 and len(bundle.reports) == 7
    for report in bundle.reports:
        assert len(re.sub(r"\[[^\]]*\]", "", report.markdown).split()) >= 300, report.id
    classes = [s.metadata.get("class") for s in bundle.sources]
    assert {"supportive", "distractor", "noise", "user_file"} == set(classes)
    assert any("distractor" in r.metadata.get("dr3_ref_class", {}).values() for r in bundle.reports)
    # wren-dr cites several sources in one claim, so claim FA and pair FA differ on it.
    wren = next(r for r in bundle.reports if r.id == "wren-dr:port-shore-power")
    assert sum(len(c.citations) > 1 for c in wren.claims) == 5


def test_demo_includes_the_dr3_sample(sample_db: Path) -> None:
    from store.db.connection import connect

    conn = connect(sample_db)
    try:
        row = conn.execute("SELECT id FROM suite WHERE ext_id = 'dr3-sample-2026-11'").fetchone()
        assert row is not None
        n = conn.execute(f"""SELECT count(*) FROM {all_scores(conn)} WHERE framework = 'dr3'
                            AND scope LIKE 'system:%' AND metric = 'Avg'""").fetchone()[0]
        assert n == 8  # 4 systems × 2 variants
    finally:
        conn.close()


def judgment(
    conn: sqlite3.Connection, report: str, kind: str, subject: str
) -> tuple[int, int, str | None]:
    row = conn.execute(
        """SELECT j.id, j.report_id, j.value FROM judgment j JOIN report r ON r.id = j.report_id
           WHERE r.ext_id = ? AND j.kind = ? AND j.subject = ?""",
        (report, kind, subject),
    ).fetchone()
    assert row is not None, (report, kind, subject)
    return int(row[0]), int(row[1]), row[2]


def scores_of(conn: sqlite3.Connection, scope: str, variant: str) -> dict[str, float | None]:
    return dict(
        conn.execute(
            f"SELECT metric, value FROM {all_scores(conn)} "
            "WHERE scope = ? AND framework = 'dr3' AND variant = ?",
            (scope, variant),
        )
    )


def test_sample_multi_citation_claims_tell_claim_fa_from_pair_fa(
    sample_conn: sqlite3.Connection,
) -> None:
    from store.scores.cache import set_options

    conn = sample_conn
    rid = conn.execute(
        "SELECT id FROM report WHERE ext_id = 'wren-dr:port-shore-power'"
    ).fetchone()[0]
    # wren-dr: 7 claims, 12 (claim, citation) pairs. c3 cites the 2025 update (supported) and
    # the minister's remarks (unsupported: "nearly every ship" against 39%); c7 cites the 2025
    # update (supported) and the 2018 study (unsupported: nothing on noise). Every other pair
    # is supported.
    claim = scores_of(conn, f"report:{rid}", "judge")
    # fa_unit = claim (default): 5 of 7 claims have every citation supporting them.
    assert claim["FA"] == pytest.approx(100 * 5 / 7)  # 71.43
    # FA_sandbox: claims whose first citation is a sandbox page: c2 c3 c4 c5 c7 → 3 of 5;
    # FA_userfiles: c1 c6 → 2 of 2. Distractor claims: c3, c7 → 2 of 7.
    assert claim["FA_sandbox"] == pytest.approx(60.0)
    assert claim["FA_userfiles"] == pytest.approx(100.0)
    assert claim["distractor_claims"] == pytest.approx(100 * 2 / 7)
    # Avg = (IR_UF 100 + IR_SC 80 + CC 100 + FA 500/7 + IF 100 + DQ 70) / 6 = 86.90
    assert claim["IR_SC"] == pytest.approx(80.0)  # sc-3 only partial
    assert claim["Avg"] == pytest.approx((450 + 500 / 7) / 6)
    set_options(conn, "dr3", {"fa_unit": "pair"})
    pair = scores_of(conn, f"report:{rid}", "judge")
    # fa_unit = pair (Eq. 4 read literally): 10 of 12 pairs; sandbox pairs 6 of 8, user-file
    # pairs 4 of 4; Avg = (450 + 250/3) / 6 = 88.89.
    assert pair["FA"] == pytest.approx(100 * 10 / 12)  # 83.33
    assert pair["FA_sandbox"] == pytest.approx(75.0)
    assert pair["FA_userfiles"] == pytest.approx(100.0)
    assert pair["Avg"] == pytest.approx((450 + 250 / 3) / 6)
    # Every other sample report cites one source per claim: the two units agree there.
    for ext, fa in conn.execute(
        f"""SELECT r.ext_id, s.value FROM {all_scores(conn)} s
                JOIN report r ON s.scope = 'report:' || r.id
               WHERE s.framework = 'dr3' AND s.metric = 'FA' AND s.variant = 'judge'
               AND r.ext_id != 'wren-dr:port-shore-power'"""
    ):
        assert fa == pytest.approx(100.0), ext


def test_docs_state_which_fa_unit_reproduces_the_published_tables() -> None:
    from reviewer.frameworks.dr3_eval.scoring import OPTIONS

    assert next(o for o in OPTIONS if o.name == "fa_unit").default == "claim"
    docs = (PROJECT / "docs" / "frameworks" / "dr3.md").read_text(encoding="utf-8")
    assert "reproduces the published tables" in docs
    assert "accuracy_score = (supported_count / total_claims * 100)" in docs
    assert "Table 12" in docs and "wren-dr" in docs


def test_adjudicating_a_false_citation_match_moves_only_the_adjudicated_score(
    sample_conn: sqlite3.Connection,
) -> None:
    from store.reviewlog.events import ReviewLog
    from store.scores.cache import cached, compute_all, update_scores

    conn = sample_conn
    # Mistake 1 of MISTAKES.md: tern cites the 2018 study (a distractor) by its exact title,
    # and the rule counts it as the required 2025 update ("contains").
    jid, rid, value = judgment(conn, "tern:port-shore-power", "dr3_citation", "c=page-1")
    assert value == "cited"
    system = conn.execute("SELECT system_id FROM report WHERE id = ?", (rid,)).fetchone()[0]
    before = scores_of(conn, f"report:{rid}", "adjudicated")
    # CC as judged: 3 pages + berth plan of 5 = 80. Avg: IR_UF (1 + 1) / 4 = 50, IR_SC 0,
    # CC 80, FA 8 / 8 = 100, IF 6 / 8 = 75, DQ 60 -> 365 / 6 = 60.83.
    assert before["CC"] == pytest.approx(80.0)
    assert before["Avg"] == pytest.approx(365 / 6)
    ReviewLog(conn, "ana").decide(
        jid,
        "missed",
        "The citation names the 2018 study, a distractor, not the 2025 update.",
        "evidence-not-in-source",
    )
    update_scores(conn, [rid])
    after = scores_of(conn, f"report:{rid}", "adjudicated")
    judge = scores_of(conn, f"report:{rid}", "judge")
    assert after["CC"] == pytest.approx(60.0)  # 2 pages + plan of 5
    assert after["CC_supportive"] == pytest.approx(100 * 2 / 3)
    assert after["Avg"] == pytest.approx(345 / 6)  # 365 - 20 = 345
    assert judge["CC"] == pytest.approx(80.0) and judge["Avg"] == pytest.approx(365 / 6)
    # The system mean moves too: tern's other report has CC 100 -> (60 + 100) / 2 = 80.
    assert scores_of(conn, f"system:{system}", "adjudicated")["CC"] == pytest.approx(80.0)
    assert scores_of(conn, f"system:{system}", "judge")["CC"] == pytest.approx(90.0)
    assert cached(conn) == compute_all(conn)  # incremental = full recompute


def test_adjudicating_support_insight_checklist_and_depth(sample_conn: sqlite3.Connection) -> None:
    from store.reviewlog.events import ReviewLog
    from store.scores.cache import cached, compute_all, update_scores

    conn = sample_conn
    log = ReviewLog(conn, "ana")
    # Mistake 2: orion's "41%" claim against a source saying 31%. FA 13/13 -> 12/13.
    jid, rid, value = judgment(conn, "orion-dr:port-shore-power", "dr3_support", "k=c6;r=6")
    assert value == "supported"
    log.decide(jid, "unsupported", "The study says 31%, not 41%.")
    # The judge's DQ of 8 lowered by the reviewer to 7.5 (typed: the depth scale is continuous).
    jid_dq, _, _ = judgment(conn, "orion-dr:port-shore-power", "dr3_depth", "c=dq")
    log.decide(jid_dq, "7.5", "Good but uncritical about the tariff.")
    update_scores(conn, [rid])
    after = scores_of(conn, f"report:{rid}", "adjudicated")
    assert after["FA"] == pytest.approx(100 * 12 / 13)
    assert after["DQ"] == pytest.approx(75.0)
    assert scores_of(conn, f"report:{rid}", "judge")["FA"] == pytest.approx(100.0)
    # Mistake 4: pipit's "attendance has changed" is partial coverage. IR_UF 1/4 -> 0/4.
    jid, rid2, value = judgment(conn, "pipit:school-four-day-week", "dr3_insight", "c=uf-1")
    assert value == "1"
    log.decide(jid, "0.5", "No direction and no figures.")
    # Mistake 5: tern's one-sentence 'Wider evidence' section. IF 8/8 -> 7/8.
    jid, rid3, value = judgment(conn, "tern:school-four-day-week", "dr3_checklist", "c=if-6")
    assert value == "true"
    log.decide(jid, "false", "A single vague sentence.")
    update_scores(conn, [rid2, rid3])
    assert scores_of(conn, f"report:{rid2}", "adjudicated")["IR_UF"] == pytest.approx(0.0)
    assert scores_of(conn, f"report:{rid2}", "judge")["IR_UF"] == pytest.approx(25.0)
    assert scores_of(conn, f"report:{rid3}", "adjudicated")["IF"] == pytest.approx(87.5)
    assert cached(conn) == compute_all(conn)
