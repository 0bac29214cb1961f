"""DailyReport cascade scoring against hand-computed cases (spec: specs/dailyreport_cascade.md).

Every expected number below is worked out in the comment beside it from the paper's equations,
not taken from the code.
"""

from __future__ import annotations

import sqlite3
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reviewer.errors import InputError
from reviewer.framework import Aggregate, resolve_options
from reviewer.frameworks.dailyreport.judge_pipeline import ReportOutcome
from reviewer.frameworks.dailyreport.scoring import FRAMEWORK, OPTIONS, user_pref
from reviewer.inputs import ClaimIn, CriterionIn, ReportInput, VerdictIn
from reviewer.models import (
    Bundle,
    Claim,
    Criterion,
    JudgeRun,
    Judgment,
    Report,
    Subtask,
    Suite,
    System,
    Task,
)
from store.imports.loader import import_bundle
from store.runs.records import create_run, load_jobs, set_active, write_outcome
from store.scores.cache import rebuild_scores
from store.scores.claim_facts import CLAIM_CITED_SQL
from tests.builders import cascade_input
from tests.score_rows import all_scores

DEFAULTS = resolve_options(FRAMEWORK, {})


def opts(**overrides: str) -> dict[str, str]:
    return resolve_options(FRAMEWORK, overrides)


def test_every_choice_is_a_named_option_with_the_spec_default() -> None:
    defaults = {o.name: o.default for o in OPTIONS}
    assert defaults == {
        "empty_claims": "zero",
        "several_criteria": "mean",
        "missing_dimension": "mean_present",
        "failed_verdict": "zero",
        "missing_ins": "zero",
        "empty_c1": "one",
        "v2_without_groups": "vacuous_true",
        "failed_consistency": "exclude",
        "aggregation": "micro",
    }
    with pytest.raises(ValueError):
        resolve_options(FRAMEWORK, {"empty_c1": "maybe"})
    with pytest.raises(ValueError):
        resolve_options(FRAMEWORK, {"no_such_option": "x"})


def test_cascade_attribution_equations_2_to_4() -> None:
    report = cascade_input(
        [
            ("P0", None, 1.0, 0.5, None),  # o = 1 × 0.5
            ("P1", None, 0.5, 1.0, 0.5),  # o = 0.5 × (1 + 0.5)/2 = 0.375
            ("P2", None, 0.0, 1.0, 1.0),  # o = 0
            ("P2a", "1", 1.0, None, 1.0),  # o = 1
        ]
    )
    s = FRAMEWORK.score_report(report, "judge", DEFAULTS)
    assert s["Ins"] == pytest.approx((1 + 0.5 + 0 + 1) / 4)  # 0.625
    # Fac = Σδ·ins·fac / Σδ·ins = (1·0.5 + 0.5·1 + 0·1) / (1 + 0.5 + 0)
    assert s["Fac"] == pytest.approx(1.0 / 1.5)
    # Rat = Σφ·ins·rat / Σφ·ins = (0.5·0.5 + 0·1 + 1·1) / (0.5 + 0 + 1)
    assert s["Rat"] == pytest.approx(1.25 / 1.5)
    # c0 = 0.5; c1 = mean({0.375} ∪ {mean(1)}) = 0.6875 < 0.7 → Deficient
    assert s["UserPref"] == 2
    assert s["_c0"] == pytest.approx(0.5)
    assert s["_c1"] == pytest.approx(0.6875)
    # Only the P2a subtask meets all of its rubrics.
    assert s["SubTaskPass"] == pytest.approx(0.25)


def test_fac_and_rat_are_undefined_without_followed_instructions() -> None:
    report = cascade_input([("P0", None, 0.0, 1.0, 1.0), ("P1", None, 1.0, None, None)])
    s = FRAMEWORK.score_report(report, "judge", DEFAULTS)
    assert s["Fac"] is None and s["Rat"] is None  # Σδ·ins = Σφ·ins = 0
    assert s["Ins"] == pytest.approx(0.5)


@pytest.mark.parametrize(
    ("subtasks", "level", "rule"),
    [
        # every o_k = 1 → Perfect
        ([("P0", None, 1.0, 1.0, 1.0), ("P1", None, 1.0, None, 1.0)], 4, "every o_k = 1"),
        # c0 = 0 → Unhelpful, however good the rest is
        ([("P0", None, 0.0, 1.0, None), ("P1", None, 1.0, 1.0, 1.0)], 1, "c0 = 0"),
        # c0 = 1, c1 = mean(0.25) < 0.3 → Unhelpful   (P1: ins 0.5 × fac 0.5)
        ([("P0", None, 1.0, 1.0, None), ("P1", None, 0.5, 0.5, None)], 1, "c1 < 0.3"),
        # c0 = 0.25 (ins .5 × fac .5), c1 = 0.4 (ins 1 × fac .4) → both < 0.5 → Unhelpful
        ([("P0", None, 0.5, 0.5, None), ("P1", None, 1.0, 0.4, None)], 1, "c0 < 0.5 ∧ c1 < 0.5"),
        # c0 = 1, S1 = {1, 1}, G = {mean(1, 0.5)} = {0.75}, c1 = 11/12 ≥ 0.7, v1, v2 → 3
        (
            [
                ("P0", None, 1.0, 1.0, None),
                ("P1", None, 1.0, 1.0, None),
                ("P1", None, 1.0, None, 1.0),
                ("P2a", "1", 1.0, None, None),
                ("P2a", "1", 0.5, None, None),
            ],
            3,
            "c0 ≥ 0.5 ∧ v1 ∧ v2 ∧ c1 ≥ 0.7",
        ),
        # v1 fails: one P1 has o = 0 although c1 = mean(0,1,1,1) = 0.75 → 2
        (
            [
                ("P0", None, 1.0, None, None),
                ("P1", None, 0.0, None, None),
                ("P1", None, 1.0, None, None),
                ("P1", None, 1.0, None, None),
                ("P1", None, 1.0, None, None),
            ],
            2,
            "not v1",
        ),
        # v2 fails: every P2a subtask has o = 0; c1 = mean(1, 1, 1, G=0) = 0.75 → 2
        (
            [
                ("P0", None, 1.0, None, None),
                ("P1", None, 1.0, None, None),
                ("P1", None, 1.0, None, None),
                ("P1", None, 1.0, None, None),
                ("P2a", "1", 0.0, None, None),
                ("P2a", "1", 0.0, None, None),
            ],
            2,
            "not v2",
        ),
        # S1 o_k = {0.5 (ins only), 1 × 0.6}: c1 = 0.55 < 0.7 → 2
        (
            [
                ("P0", None, 1.0, None, None),
                ("P1", None, 0.5, None, None),
                ("P1", None, 1.0, 0.6, None),
            ],
            2,
            "not c1 ≥ 0.7",
        ),
        # c0 = 0.4 (fac 0.4) but c1 = 0.9 ≥ 0.5 → not Unhelpful; c0 < 0.5 → 2
        ([("P0", None, 1.0, 0.4, None), ("P1", None, 1.0, 0.9, None)], 2, "not c0 ≥ 0.5"),
    ],
)
def test_algorithm_1_branches(
    subtasks: list[tuple[str, str | None, float, float | None, float | None]],
    level: int,
    rule: str,
) -> None:
    report = cascade_input(subtasks)
    s = FRAMEWORK.score_report(report, "judge", DEFAULTS)
    assert s["UserPref"] == level
    from reviewer.frameworks.dailyreport.scoring import subtask_scores

    subs, _ = subtask_scores(report, "judge", DEFAULTS)
    trace = user_pref([(x.importance, x.group, x.o) for x in subs], DEFAULTS)
    assert trace.level == level
    assert rule in trace.rule


def test_group_means_enter_c1_once_per_group() -> None:
    # S1 = {1}; group 1 = {1, 0} → 0.5; group 2 = {1} → 1; c1 = mean(1, 0.5, 1) = 0.8333
    trace = user_pref(
        [
            ("P0", None, 1.0),
            ("P1", None, 1.0),
            ("P2a", "1", 1.0),
            ("P2a", "1", 0.0),
            ("P2a", "2", 1.0),
        ],
        DEFAULTS,
    )
    assert trace.c1 == pytest.approx(2.5 / 3)
    assert trace.level == 3


def test_v2_choice_without_p2a_subtasks() -> None:
    subtasks = [("P0", None, 1.0), ("P1", None, 0.8), ("P2", None, 0.0)]
    # c0 = 1, c1 = 0.8, v1 true; no P2(a) subtask at all:
    vacuous = user_pref(subtasks, DEFAULTS)
    assert (vacuous.level, vacuous.v2, vacuous.v2_vacuous) == (3, True, True)
    literal = user_pref(subtasks, opts(v2_without_groups="literal"))
    assert (literal.level, literal.v2) == (2, False)


def test_empty_c1_choice() -> None:
    subtasks = [("P0", None, 0.9), ("P2", None, 0.0)]
    assert user_pref(subtasks, DEFAULTS).level == 3  # c1 = 1 mirrors the c0 rule
    assert user_pref(subtasks, opts(empty_c1="zero")).level == 1  # c1 = 0 < 0.3


def test_missing_dimension_choice() -> None:
    report = cascade_input([("P0", None, 1.0, 0.5, None)])
    mean_present = FRAMEWORK.score_report(report, "judge", DEFAULTS)
    assert mean_present["_c0"] == pytest.approx(0.5)  # o = 1 × 0.5
    literal = FRAMEWORK.score_report(report, "judge", opts(missing_dimension="zero"))
    assert literal["_c0"] == pytest.approx(0.25)  # o = ½ × 1 × (0.5 + 0)


def test_missing_dimension_zero_is_eq5_literally_also_for_an_ins_only_subtask() -> None:
    # P0 with ins 1 and no fac or rat rubric; P1 with ins 1 and fac 1.
    report = cascade_input([("P0", None, 1.0, None, None), ("P1", None, 1.0, 1.0, None)])
    mean_present = FRAMEWORK.score_report(report, "judge", DEFAULTS)
    assert (mean_present["_c0"], mean_present["UserPref"]) == (1.0, 4.0)  # o_1 = ins = 1
    literal = FRAMEWORK.score_report(report, "judge", opts(missing_dimension="zero"))
    # o_1 = ½·1·(0 + 0) = 0 → c0 = 0 → Unhelpful (before: o_1 = ins = 1, c0 = 1)
    # o_2 = ½·1·(1 + 0) = 0.5 → c1 = 0.5
    assert (literal["_c0"], literal["_c1"], literal["UserPref"]) == (0.0, 0.5, 1.0)


def test_missing_dimension_zero_on_the_sample_run(sample_db: Path) -> None:
    # t01-atlas-dr as judged (MISTAKES.md): every ins = 1; fac s1 = s2 = s4 = s8 = 1, s3 = 0
    # (its one claim c7 judged incorrect); s6 has only a rat rubric (1); s5 and s7 only ins.
    # Literal Eq. 5: o = ½·(1 + 0) = 0.5 for s1, s2, s4, s6, s8; s3 = 0; s5 = s7 = 0.
    # c0 = mean(s1, s6) = 0.5; group 1 = mean(s3, s5, s7) = 0; c1 = mean(s2, s4, G) = 1/3.
    # (Before: s5 = s7 = ins = 1, group 2/3, c1 = 5/9 = 0.556.) Level 2 either way: c0 ≥ 0.5
    # and c1 ≥ 0.3 rule out 1; c1 < 0.7 rules out 3.
    from store.db.connection import connect
    from store.scores.cache import set_options

    conn = connect(sample_db)
    set_options(conn, "cascade", {"missing_dimension": "zero"})
    s = _report_scores(conn, "t01-atlas-dr")
    assert (s["_c0"], s["_c1"], s["UserPref"]) == (0.5, pytest.approx(1 / 3), 2.0)
    conn.close()


def test_empty_claims_choice_and_needs_review_flag() -> None:
    report = cascade_input([("P0", None, 1.0, 1.0, None), ("P1", None, 1.0, 1.0, 1.0)])
    # Remove the P1 subtask's claims: its fac rubric now has C_k = ∅.
    p1 = report.subtasks[1].id
    dropped = {c.id for c in report.claims if c.subtask_id == p1}
    report.claims = [c for c in report.claims if c.id not in dropped]
    report.verdicts = [v for v in report.verdicts if v.claim_id not in dropped]
    zero = FRAMEWORK.score_report(report, "judge", DEFAULTS)
    # fac_2 = 0: Fac = (1·1 + 1·0)/(1 + 1) = 0.5; o_2 = 1 × (0 + 1)/2 = 0.5
    assert zero["Fac"] == pytest.approx(0.5)
    assert zero["NeedsReview"] == 1.0
    assert zero["_c1"] == pytest.approx(0.5)
    exclude = FRAMEWORK.score_report(report, "judge", opts(empty_claims="exclude"))
    # δ_2 = 0: Fac = 1·1/1 = 1; o_2 = ins × rat = 1
    assert exclude["Fac"] == pytest.approx(1.0)
    assert exclude["_c1"] == pytest.approx(1.0)
    assert exclude["NeedsReview"] == 1.0


def test_several_criteria_in_one_dimension() -> None:
    report = cascade_input([("P0", None, 1.0, None, None)])
    from reviewer.inputs import CriterionIn, VerdictIn

    sid = report.subtasks[0].id
    report.criteria.append(CriterionIn(900, sid, "ins", None))
    report.verdicts.append(VerdictIn(901, 1, "ins", sid, 900, None, None, None, "0", "0"))
    assert FRAMEWORK.score_report(report, "judge", DEFAULTS)["Ins"] == pytest.approx(0.5)
    assert FRAMEWORK.score_report(report, "judge", opts(several_criteria="min"))["Ins"] == 0.0


def test_trace_metrics() -> None:
    from reviewer.inputs import ClaimIn, VerdictIn

    report = cascade_input([("P0", None, 1.0, 0.5, None)])  # 1 correct, 1 incorrect, cited
    sid = report.subtasks[0].id
    report.claims.append(ClaimIn(700, sid, None, ()))  # an uncited, correct claim
    report.verdicts.append(
        VerdictIn(701, 1, "claim", sid, None, 700, None, None, "correct", "correct")
    )
    for vid, value in ((702, "support"), (703, "conflict"), (704, "unknown"), (705, "support")):
        report.verdicts.append(
            VerdictIn(vid, 1, "consistency", sid, None, 700, 1, None, value, value)
        )
    s = FRAMEWORK.score_report(report, "judge", DEFAULTS)
    assert s["Reference_Ratio"] == pytest.approx(2 / 3)
    assert s["Reference_Support"] == pytest.approx(1 / 2)
    assert s["No_Reference_Support"] == pytest.approx(1.0)
    assert s["Refer_Claim_Consistency"] == pytest.approx(2 / 4)


def test_a_consistency_verdict_without_value_is_a_named_choice() -> None:
    report = cascade_input([("P0", None, 1.0, 1.0, None)])
    sid = report.subtasks[0].id
    kid = report.claims[0].id
    for vid, value in ((702, "support"), (703, "conflict"), (704, "unknown"), (705, None)):
        report.verdicts.append(
            VerdictIn(
                vid,
                1,
                "consistency",
                sid,
                None,
                kid,
                vid - 701,
                None,
                value,
                value,
                None if value else "timeout",
            )
        )
    # Table 6 over judged pairs: support / (support + conflict + unknown) = 1/3; the failed
    # pair counted as not support (before, always): 1/4.
    s = FRAMEWORK.score_report(report, "judge", DEFAULTS)
    assert s["Refer_Claim_Consistency"] == pytest.approx(1 / 3)
    s = FRAMEWORK.score_report(report, "judge", opts(failed_consistency="not_support"))
    assert s["Refer_Claim_Consistency"] == pytest.approx(1 / 4)


def test_system_aggregation_macro_and_micro() -> None:
    a = cascade_input([("P0", None, 1.0, 1.0, None), ("P1", None, 1.0, 0.5, None)])
    b = cascade_input(
        [
            ("P0", None, 0.5, 1.0, None),
            ("P1", None, 0.0, 0.0, None),
            ("P2", None, 1.0, None, None),
            ("P2", None, 1.0, None, None),
        ]
    )
    sa = FRAMEWORK.score_report(a, "judge", DEFAULTS)
    sb = FRAMEWORK.score_report(b, "judge", DEFAULTS)
    # a: Ins 1, Fac = (1 + 0.5)/2 = 0.75;  b: Ins = 2.5/4, Fac = (0.5·1 + 0)/(0.5 + 0) = 1
    macro = FRAMEWORK.aggregate([sa, sb], opts(aggregation="macro"))
    assert macro["Ins"].value == pytest.approx((1 + 0.625) / 2)
    assert macro["Fac"].value == pytest.approx((0.75 + 1.0) / 2)
    assert macro["Ins"].n == 2
    micro = FRAMEWORK.aggregate([sa, sb], DEFAULTS)  # the default (spec §5, revised)
    # pooled: Σins / Σn = (2 + 2.5) / 6; Fac = (1 + 0.5 + 0.5) / (1 + 1 + 0.5)
    assert micro["Ins"].value == pytest.approx(4.5 / 6)
    assert micro["Ins"].n == 6  # subtasks
    assert micro["Fac"].value == pytest.approx(2.0 / 2.5)
    assert micro["Fac"].n == 4  # subtasks with a fac value
    # UserPref is a level per report: a mean over reports either way.
    assert micro["UserPref"].value == macro["UserPref"].value
    assert micro["UserPref"].n == 2


def _pooled_by_hand(conn: sqlite3.Connection) -> dict[str, dict[str, Fraction]]:
    """The sample run's system numbers pooled over subtasks and claims, from the imported
    rows (verdicts, claims, criteria) with exact fractions: Eq. 2–4 and SubTask Pass with every
    subtask of a system's reports in one sum, the trace metrics over all its claims."""
    half = {"0": Fraction(0), "0.5": Fraction(1, 2), "1": Fraction(1)}
    out: dict[str, dict[str, Fraction]] = {}
    for system, system_id in conn.execute(
        "SELECT y.ext_id, y.id FROM system y JOIN suite s ON s.id = y.suite_id "
        "WHERE s.ext_id = 'dailyreport-sample-2026-11'"
    ).fetchall():
        t: dict[str, Fraction] = {
            k: Fraction(0)
            for k in (
                "n",
                "ins",
                "fn",
                "fd",
                "rn",
                "rd",
                "pass",
                "claims",
                "cited",
                "ok_cited",
                "ok_uncited",
                "pairs",
                "support",
            )
        }
        for rid, task in conn.execute(
            "SELECT id, task_id FROM report WHERE system_id = ?", (system_id,)
        ).fetchall():
            dims = {
                (sub, dim): cid
                for cid, sub, dim in conn.execute(
                    "SELECT id, subtask_id, dimension FROM criterion WHERE task_id = ?", (task,)
                )
            }
            value = {
                cid: v
                for cid, v in conn.execute(
                    "SELECT criterion_id, value FROM judgment WHERE report_id = ? AND current = 1 "
                    "AND criterion_id IS NOT NULL",
                    (rid,),
                )
            }
            claims = conn.execute(
                "SELECT c.subtask_id, c.citations != '[]', j.value FROM claim c JOIN judgment j "
                "ON j.claim_id = c.id AND j.kind = 'claim' WHERE c.report_id = ?",
                (rid,),
            ).fetchall()
            for (sub,) in conn.execute("SELECT id FROM subtask WHERE task_id = ?", (task,)):
                ins = half[value[dims[(sub, "ins")]]]
                fac = rat = None
                if (sub, "fac") in dims:
                    mine = [v for s, _, v in claims if s == sub]
                    fac = Fraction(mine.count("correct"), len(mine)) if mine else Fraction(0)
                    t["fn"] += ins * fac
                    t["fd"] += ins
                if (sub, "rat") in dims:
                    rat = half[value[dims[(sub, "rat")]]]
                    t["rn"] += ins * rat
                    t["rd"] += ins
                t["n"] += 1
                t["ins"] += ins
                t["pass"] += ins == 1 and fac in (None, 1) and rat in (None, 1)
            for _, cited, v in claims:
                t["claims"] += 1
                t["cited"] += cited
                t["ok_cited" if cited else "ok_uncited"] += v == "correct"
            for (v,) in conn.execute(
                "SELECT value FROM judgment WHERE report_id = ? AND kind = 'consistency'", (rid,)
            ):
                t["pairs"] += 1
                t["support"] += v == "support"
        out[system] = {
            "Ins": t["ins"] / t["n"],
            "Fac": t["fn"] / t["fd"],
            "Rat": t["rn"] / t["rd"],
            "SubTaskPass": t["pass"] / t["n"],
            "Reference_Ratio": t["cited"] / t["claims"],
            "Reference_Support": t["ok_cited"] / t["cited"],
            "Refer_Claim_Consistency": t["support"] / t["pairs"],
        }
        if t["claims"] > t["cited"]:
            out[system]["No_Reference_Support"] = t["ok_uncited"] / (t["claims"] - t["cited"])
    return out


def test_sample_system_numbers_are_pooled_over_subtasks_by_default(sample_db: Path) -> None:
    from store.db.connection import connect

    conn = connect(sample_db)
    by_hand = _pooled_by_hand(conn)
    # As fractions (68 subtasks per system; 48 with a fac rubric and 14 with a rat rubric).
    # atlas-dr: one ins 0 (t03 s8, MISTAKES.md #2) → Ins 67/68; 62 of 68 subtasks pass.
    # Macro (before): atlas-dr Ins 0.986, Fac 0.935, SubTask Pass 0.911, Reference Support
    # 0.955, Refer-Claim Consistency 0.967; juniper 0.578, 0.505, Rat 0.262, 0.149, 0.730,
    # 0.720, Reference Ratio 0.624, No-Reference Support 0.081; kestrel 0.802, 0.851,
    # Rat 0.738, 0.438, 0.832, 0.816.
    # Claims: atlas-dr 111 (all cited, 106 correct), 122 consistency pairs of which 118
    # support; juniper 75 claims (47 cited: 35 correct; 28 uncited: 3 correct), 35 of 48 pairs;
    # kestrel 96 (all cited, 80 correct), 80 of 98 pairs.
    assert by_hand["atlas-dr"] == {
        "Ins": Fraction(67, 68),
        "Fac": Fraction(271, 288),
        "Rat": Fraction(1),
        "SubTaskPass": Fraction(62, 68),
        "Reference_Ratio": Fraction(1),
        "Reference_Support": Fraction(106, 111),
        "Refer_Claim_Consistency": Fraction(118, 122),
    }
    assert by_hand["juniper"] == {
        "Ins": Fraction(39, 68),
        "Fac": Fraction(167, 330),
        "Rat": Fraction(9, 32),
        "SubTaskPass": Fraction(10, 68),
        "Reference_Ratio": Fraction(47, 75),
        "Reference_Support": Fraction(35, 47),
        "No_Reference_Support": Fraction(3, 28),
        "Refer_Claim_Consistency": Fraction(35, 48),
    }
    assert by_hand["kestrel"] == {
        "Ins": Fraction(109, 136),
        "Fac": Fraction(174, 205),
        "Rat": Fraction(31, 44),
        "SubTaskPass": Fraction(30, 68),
        "Reference_Ratio": Fraction(1),
        "Reference_Support": Fraction(80, 96),
        "Refer_Claim_Consistency": Fraction(80, 98),
    }
    stored = {
        (system, metric): (value, n)
        for system, metric, value, n in conn.execute(
            """SELECT y.ext_id, s.metric, s.value, s.n FROM score s JOIN system y
           ON s.scope = 'system:' || y.id WHERE s.framework = 'cascade' AND s.variant = 'judge'
        """
        )
    }
    assert sorted(by_hand) == ["atlas-dr", "juniper", "kestrel"]
    for system, metrics in by_hand.items():
        for metric, value in metrics.items():
            assert stored[(system, metric)][0] == pytest.approx(float(value), abs=1e-12), (
                system,
                metric,
            )
        assert stored[(system, "Ins")][1] == 68 and stored[(system, "Fac")][1] == 48
        assert stored[(system, "Rat")][1] == 14
    # UserPref stays the mean of the eight report levels (unchanged: 27/8, 9/8, 20/8).
    assert [stored[(s, "UserPref")] for s in ("atlas-dr", "juniper", "kestrel")] == [
        (27 / 8, 8),
        (9 / 8, 8),
        (20 / 8, 8),
    ]
    conn.close()


def test_a_report_can_have_higher_userpref_with_lower_subtask_pass() -> None:
    # The paper's point (Table 3): satisfying important subtasks beats satisfying many.
    important = cascade_input(
        [
            ("P0", None, 1.0, 1.0, None),
            ("P1", None, 1.0, 1.0, None),
            ("P2", None, 0.0, None, None),
            ("P2", None, 0.0, None, None),
        ]
    )
    many = cascade_input(
        [
            ("P0", None, 0.0, None, None),
            ("P1", None, 1.0, 1.0, None),
            ("P2", None, 1.0, None, None),
            ("P2", None, 1.0, None, None),
        ]
    )
    si = FRAMEWORK.score_report(important, "judge", DEFAULTS)
    sm = FRAMEWORK.score_report(many, "judge", DEFAULTS)
    assert si["UserPref"] > sm["UserPref"]
    assert si["SubTaskPass"] < sm["SubTaskPass"]


# -- claims, subtasks and their fac rubric (issue 19) -----------------------------------------


def _one_subtask_bundle(
    claims: list[dict[str, object]], verdicts: dict[str, str], suite: str = "linked"
) -> Bundle:
    """One task with one P0 subtask (ins + fac rubric); one report with the given claims,
    ins judged 1 and each claim of ``verdicts`` judged as given."""
    task = Task(
        id="t1",
        prompt="p",
        subtasks=[Subtask(id="s1", text="x", importance="P0")],
        criteria=[
            Criterion(id="s1-ins", subtask="s1", framework="cascade", dimension="ins", text="a"),
            Criterion(id="s1-fac", subtask="s1", framework="cascade", dimension="fac", text="b"),
        ],
    )
    markdown = "Riders took 4.2 million trips [1]. The network has 310 stations [1].\n"
    report = Report(
        id="r1",
        task="t1",
        system="a",
        markdown=markdown,
        claims=[Claim.model_validate(c) for c in claims],
    )
    judgments = [Judgment(run="j", report="r1", kind="ins", criterion="s1-ins", value=1)]
    judgments += [
        Judgment(run="j", report="r1", kind="claim", claim=k, value=v) for k, v in verdicts.items()
    ]
    return Bundle(
        suite=Suite(id=suite, name=suite, frameworks=["cascade"]),
        tasks=[task],
        systems=[System(id="a")],
        reports=[report],
        runs=[JudgeRun(id="j", model="m", created_at="2026-11-01T00:00:00Z")],
        judgments=judgments,
    )


def _report_scores(
    conn: sqlite3.Connection, report: str = "r1", variant: str = "judge"
) -> dict[str, float | None]:
    return {
        metric: value
        for metric, value in conn.execute(
            f"""SELECT s.metric, s.value FROM {all_scores(conn)} s
            JOIN report r ON s.scope = 'report:' || r.id
           WHERE r.ext_id = ? AND s.framework = 'cascade' AND s.variant = ?""",
            (report, variant),
        )
    }


LINKED = [
    {"id": "c1", "criterion": "s1-fac", "fact": "Riders took 4.2 million trips"},
    {"id": "c2", "criterion": "s1-fac", "fact": "The network has 310 stations"},
]


def test_claims_linked_through_their_fac_rubric_count_for_its_subtask(
    conn: sqlite3.Connection,
) -> None:
    # Both claims name only their fac criterion (App. C: each claim answers one accuracy
    # question). fac_1 = 1 correct / 2 claims = 0.5; Fac = 1·1·0.5 / 1·1 = 0.5;
    # o_1 = ins·fac = 0.5 → c0 = 0.5, c1 = 1 (no P1, no group), v1, v2 vacuous → UserPref 3.
    # Before: the claims belonged to no subtask, fac_1 = 0 (empty), NeedsReview 1, UserPref 1.
    import_bundle(conn, _one_subtask_bundle(LINKED, {"c1": "correct", "c2": "incorrect"}), "h")
    rebuild_scores(conn)
    s = _report_scores(conn)
    assert (s["Fac"], s["NeedsReview"], s["UserPref"]) == (0.5, 0.0, 3.0)
    # The placement is stored: the claims and their verdicts name subtask s1.
    assert {sub for (sub,) in conn.execute("SELECT DISTINCT subtask_id FROM claim")} == {1}
    assert {
        sub
        for (sub,) in conn.execute("SELECT DISTINCT subtask_id FROM judgment WHERE kind = 'claim'")
    } == {1}


def test_a_claim_whose_subtask_and_criterion_disagree_is_refused(
    conn: sqlite3.Connection,
) -> None:
    bundle = _one_subtask_bundle(LINKED, {})
    bundle.tasks[0].subtasks.append(Subtask(id="s2", text="y", importance="P1"))
    bundle.reports[0].claims[1] = Claim(
        id="c2", subtask="s2", criterion="s1-fac", fact="The network has 310 stations"
    )
    with pytest.raises(InputError) as caught:
        import_bundle(conn, bundle, "h")
    assert caught.value.field == "claims.1.criterion"
    assert "belongs to subtask 's1'" in str(caught.value)
    assert conn.execute("SELECT count(*) FROM claim").fetchone()[0] == 0


def test_a_judge_run_places_claims_named_by_criterion_in_its_subtask(
    conn: sqlite3.Connection,
) -> None:
    import_bundle(conn, _one_subtask_bundle(LINKED, {"c1": "correct", "c2": "incorrect"}), "h")
    rebuild_scores(conn)
    # A database imported before claims were placed through their criterion has no subtask
    # on such claims: the judge's view of the report still places them.
    conn.execute("UPDATE claim SET subtask_id = NULL")
    job = load_jobs(conn, [1])[0].job
    assert [c.subtask for c in job.report.claims] == ["s1", "s1"]
    rows = create_run(conn, [1], JudgeRun(id="g", model="m", created_at="2026-11-02T00:00:00Z"))
    claim = Claim(
        id="jc1",
        criterion="s1-fac",
        fact="Riders took 4.2 million trips",
        citations=[1],
        metadata={"gavel_judge_run": "g"},
    )
    judgment = Judgment(
        run="g", report="r1", kind="consistency", claim="jc1", ref=1, value="support"
    )
    write_outcome(conn, rows[1], 1, ReportOutcome("r1", [judgment], [claim]))
    assert conn.execute("SELECT subtask_id FROM claim WHERE ext_id = 'jc1'").fetchone() == (1,)
    assert conn.execute(
        "SELECT subtask_id FROM judgment WHERE kind = 'consistency'"
    ).fetchone() == (1,)
    # A candidate's claims are not the report's working claims until the run is activated.
    assert len(load_jobs(conn, [1])[0].job.report.claims) == 2
    set_active(conn, "g", True)
    assert [c.subtask for c in load_jobs(conn, [1])[0].job.report.claims] == ["s1"]  # jc1


def _claim(
    report: ReportInput,
    subtask: int | None,
    value: str | None,
    *,
    cid: int,
    criterion: int | None = None,
    origin: str | None = None,
    cited: bool = True,
    judged: bool = True,
) -> None:
    """Add an extracted claim to a built report, with a claim verdict unless ``judged`` is
    False (``value`` None with ``judged``: a verdict whose judge call failed)."""
    claim = ClaimIn(cid, subtask, criterion, (1,) if cited else ())
    if origin is not None:
        claim.origin = origin
    report.claims.append(claim)
    if judged:
        report.verdicts.append(
            VerdictIn(
                cid + 1,
                1,
                "claim",
                subtask,
                None,
                cid,
                None,
                None,
                value,
                value,
                None if value else "judge error",
            )
        )


def test_eq6_denominator_is_every_extracted_claim_judged_or_not() -> None:
    # One P0 subtask, ins 1, fac rubric; claims: one judged correct, one extracted but never
    # judged. fac = 1 verified correct / 2 extracted = 0.5 (Eq. 6); o = 0.5 → c0 = 0.5,
    # c1 = 1 → UserPref 3, flagged for review. Before: fac 1.0, UserPref 4, no flag.
    report = cascade_input([("P0", None, 1.0, 1.0, None)])
    sid = report.subtasks[0].id
    _claim(report, sid, None, cid=500, judged=False)
    s = FRAMEWORK.score_report(report, "judge", DEFAULTS)
    assert (s["Fac"], s["UserPref"], s["NeedsReview"]) == (0.5, 3.0, 1.0)
    # The claim-based trace metrics count it too: 2 claims, both cited, 1 correct.
    assert (s["Reference_Ratio"], s["Reference_Support"]) == (1.0, 0.5)


def test_a_failed_claim_verdict_counts_like_an_unjudged_claim() -> None:
    # Same subtask, the second claim's verdict errored (no value): not verified correct,
    # in the denominator (as before) and now flagged like an unjudged claim.
    report = cascade_input([("P0", None, 1.0, 1.0, None)])
    _claim(report, report.subtasks[0].id, None, cid=500)
    s = FRAMEWORK.score_report(report, "judge", DEFAULTS)
    assert (s["Fac"], s["UserPref"], s["NeedsReview"]) == (0.5, 3.0, 1.0)


def test_claims_of_a_judge_run_without_factuality_verdicts_stay_out_of_eq6() -> None:
    # A Gavel judge run re-extracts claims (origin "g") for consistency and rationality but
    # never judges their factuality: fac stays the imported claims' 1/1, no flag.
    report = cascade_input([("P0", None, 1.0, 1.0, None)])
    _claim(report, report.subtasks[0].id, None, cid=500, origin="g", judged=False)
    s = FRAMEWORK.score_report(report, "judge", DEFAULTS)
    assert (s["Fac"], s["UserPref"], s["NeedsReview"]) == (1.0, 4.0, 0.0)
    # Were factuality verdicts in force on that run's claims only, its claims would count
    # and the imported ones would not: here the run judged its claim incorrect.
    report.verdicts = [v for v in report.verdicts if v.kind != "claim"]
    report.verdicts.append(
        VerdictIn(999, 1, "claim", None, None, 500, None, None, "incorrect", "incorrect")
    )
    s = FRAMEWORK.score_report(report, "judge", DEFAULTS)
    assert (s["Fac"], s["NeedsReview"]) == (0.0, 0.0)


def test_scoring_places_claims_through_their_criterion(conn: sqlite3.Connection) -> None:
    # A database imported before the placement was stored (claim and verdict rows without a
    # subtask) scores the same: the scorer places a claim through its criterion.
    import_bundle(conn, _one_subtask_bundle(LINKED, {"c1": "correct", "c2": "incorrect"}), "h")
    conn.execute("UPDATE claim SET subtask_id = NULL")
    conn.execute("UPDATE judgment SET subtask_id = NULL WHERE kind = 'claim'")
    # (and the citation facts as the migration that added them computes them)
    conn.execute(f"UPDATE judgment SET claim_cited = {CLAIM_CITED_SQL} WHERE claim_id IS NOT NULL")
    rebuild_scores(conn)
    s = _report_scores(conn)
    assert (s["Fac"], s["NeedsReview"], s["UserPref"]) == (0.5, 0.0, 3.0)


def test_the_store_reads_claim_origins_under_the_judge_runs_key() -> None:
    from reviewer.models import RUN_CLAIM_KEY
    from store.scores.inputs import RUN_CLAIM_KEY as STORE_KEY

    assert STORE_KEY == RUN_CLAIM_KEY


# -- Algorithm 1's thresholds are compared exactly (issue 19) ---------------------------------

P0_FULL = ("P0", None, 1.0, 1.0, None)  # o = 1 → c0 = 1 where only c1 matters


@pytest.mark.parametrize(
    ("subtasks", "c0", "c1", "level"),
    [
        # c1 = mean(3/3, 4/10, 7/10) = 7/10 (floats: 0.6999999999999998); c0 = 1, v1, v2
        # vacuous → c1 ≥ 0.7 holds → 3 (was 2).
        (
            [
                P0_FULL,
                ("P1", None, 1.0, (3, 3), None),
                ("P1", None, 1.0, (4, 10), None),
                ("P1", None, 1.0, (7, 10), None),
            ],
            Fraction(1),
            Fraction(7, 10),
            3,
        ),
        # c0 = mean(2/3, 3/6, 1/3) = 1/2 (floats: 0.49999999999999994); c1 = 1 → 3 (was 2).
        (
            [
                ("P0", None, 1.0, (2, 3), None),
                ("P0", None, 1.0, (3, 6), None),
                ("P0", None, 1.0, (1, 3), None),
                ("P1", None, 1.0, 1.0, None),
            ],
            Fraction(1, 2),
            Fraction(1),
            3,
        ),
        # Same c0 = 1/2 with c1 = 0.4: not (c0 < 0.5 ∧ c1 < 0.5) → 2 (was 1).
        (
            [
                ("P0", None, 1.0, (2, 3), None),
                ("P0", None, 1.0, (3, 6), None),
                ("P0", None, 1.0, (1, 3), None),
                ("P1", None, 1.0, (4, 10), None),
            ],
            Fraction(1, 2),
            Fraction(2, 5),
            2,
        ),
        # c1 = mean(1/3, 4/9, 2/10, 2/9) = 3/10 (floats: 0.29999999999999993): c1 < 0.3 is
        # false → 2 (was 1).
        (
            [
                P0_FULL,
                ("P1", None, 1.0, (1, 3), None),
                ("P1", None, 1.0, (4, 9), None),
                ("P1", None, 1.0, (2, 10), None),
                ("P1", None, 1.0, (2, 9), None),
            ],
            Fraction(1),
            Fraction(3, 10),
            2,
        ),
    ],
)
def test_thresholds_hold_when_c0_or_c1_equals_them_exactly(
    subtasks: list[tuple[str, str | None, float, float | tuple[int, int] | None, float | None]],
    c0: Fraction,
    c1: Fraction,
    level: int,
) -> None:
    s = FRAMEWORK.score_report(cascade_input(subtasks), "judge", DEFAULTS)
    assert (s["_c0"], s["_c1"], s["UserPref"]) == (float(c0), float(c1), level)


def test_user_pref_on_fractions_is_exact_on_both_sides_of_a_threshold() -> None:
    below = Fraction(7, 10) - Fraction(1, 10**15)  # closer than any float step to 0.7
    for c1, level in ((Fraction(7, 10), 3), (below, 2)):
        trace = user_pref([("P0", None, Fraction(1)), ("P1", None, c1)], DEFAULTS)
        assert trace.level == level


def _oracle(subtasks: list[tuple[str, Fraction]]) -> int:
    """Algorithm 1 in exact arithmetic for reports without P2(a) subtasks (v2 vacuously true,
    the spec's default), written out again from the paper for the property below."""
    s0 = [o for imp, o in subtasks if imp == "P0"]
    s1 = [o for imp, o in subtasks if imp == "P1"]
    c0 = sum(s0, Fraction(0)) / len(s0) if s0 else Fraction(1)
    c1 = sum(s1, Fraction(0)) / len(s1) if s1 else Fraction(1)
    if all(o == 1 for _, o in subtasks):
        return 4
    if c0 == 0 or c1 < Fraction(3, 10) or (c0 < Fraction(1, 2) and c1 < Fraction(1, 2)):
        return 1
    return 3 if c0 >= Fraction(1, 2) and all(o > 0 for o in s1) and c1 >= Fraction(7, 10) else 2


@st.composite
def _on_a_threshold(
    draw: st.DrawFn,
) -> tuple[
    list[tuple[str, str | None, float, tuple[int, int] | None, float | None]],
    list[tuple[str, Fraction]],
    str,
    Fraction,
]:
    """A report whose c0 or c1 is exactly 0.3, 0.5 or 0.7: the pooled subtasks (P0 for c0,
    P1 for c1) have ins 1 and a fac of c_k / t_k claims with Σ c_k / t_k = m · target; the
    other subtasks are arbitrary."""
    target = draw(st.sampled_from([Fraction(3, 10), Fraction(1, 2), Fraction(7, 10)]))
    pooled = draw(st.sampled_from(["P0", "P1"]))
    m = draw(st.integers(1, 5))
    t = draw(st.sampled_from([10, 20, 30, 40, 60]))
    counts = draw(st.lists(st.integers(0, t), min_size=m, max_size=m))
    goal = int(target * m * t)
    i = 0
    while sum(counts) != goal:  # move towards the goal within [0, t]
        step = 1 if sum(counts) < goal else -1
        if 0 <= counts[i % m] + step <= t:
            counts[i % m] += step
        i += 1
    # Split a common denominator t across subtasks in different forms: c/t, or 2c/2t.
    scale = draw(st.lists(st.sampled_from([1, 2, 3]), min_size=m, max_size=m))
    spec: list[tuple[str, str | None, float, tuple[int, int] | None, float | None]] = [
        (pooled, None, 1.0, (c * k, t * k), None) for c, k in zip(counts, scale, strict=True)
    ]
    exact = [(pooled, Fraction(c, t)) for c in counts]
    other = "P1" if pooled == "P0" else "P0"
    halves = st.sampled_from([0.0, 0.5, 1.0])
    for importance in draw(st.lists(st.sampled_from([other, "P2"]), max_size=4)):
        ins, rat = draw(halves), draw(st.none() | halves)
        fac = draw(st.none() | st.tuples(st.integers(0, 5), st.just(5)))
        spec.append((importance, None, ins, fac, rat))
        f = None if fac is None else Fraction(*fac)
        r = None if rat is None else Fraction(rat)
        present = [x for x in (f, r) if x is not None]
        o = Fraction(ins) * (sum(present, Fraction(0)) / len(present) if present else 1)
        exact.append((importance, o))
    return spec, exact, pooled, target


@settings(max_examples=300, deadline=None)
@given(_on_a_threshold())
def test_values_landing_exactly_on_a_threshold_get_the_exact_level(
    case: tuple[
        list[tuple[str, str | None, float, tuple[int, int] | None, float | None]],
        list[tuple[str, Fraction]],
        str,
        Fraction,
    ],
) -> None:
    spec, exact, pooled, target = case
    s = FRAMEWORK.score_report(cascade_input(list(spec)), "judge", DEFAULTS)
    assert s["UserPref"] == _oracle(exact)
    assert s["_c0" if pooled == "P0" else "_c1"] == float(target)


# -- no silent zeros (issue 19) ----------------------------------------------------------------


def _fail(report: ReportInput, kind: str, position: int = 0) -> None:
    """Make the ``position``-th verdict of ``kind`` a failed judge call (no value)."""
    hits = [i for i, v in enumerate(report.verdicts) if v.kind == kind]
    i = hits[position]
    report.verdicts[i] = report.verdicts[i]._replace(
        judge=None, effective=None, error="judge error"
    )


def test_a_failed_rat_verdict_is_a_named_choice_and_flags_the_report() -> None:
    # P0: ins 1, fac 1 (1 claim), rat rubric whose verdict failed; P1: ins 1, fac 1.
    report = cascade_input([("P0", None, 1.0, 1.0, 1.0), ("P1", None, 1.0, 1.0, None)])
    _fail(report, "rat")
    zero = FRAMEWORK.score_report(report, "judge", DEFAULTS)
    # zero: rat_1 = 0 → Rat = 1·0 / 1 = 0; o_1 = 1·(1 + 0)/2 = 0.5 → c0 = 0.5, c1 = 1 → 3
    assert (zero["Rat"], zero["_c0"], zero["UserPref"]) == (0.0, 0.5, 3.0)
    assert zero["NeedsReview"] == 1.0 and zero["_review_failed_verdicts"] == 1.0
    exclude = FRAMEWORK.score_report(report, "judge", opts(failed_verdict="exclude"))
    # exclude: φ_1 = 0 → Rat undefined; o_1 = ins·fac = 1; every o_k = 1 → 4, still flagged
    assert (exclude["Rat"], exclude["_c0"], exclude["UserPref"]) == (None, 1.0, 4.0)
    assert exclude["NeedsReview"] == 1.0


def test_a_failed_ins_verdict_among_several_is_a_named_choice() -> None:
    # One P0 subtask with two ins criteria: one judged 1, the other failed; fac 1.
    report = cascade_input([("P0", None, 1.0, 1.0, None)])
    sid = report.subtasks[0].id
    report.criteria.append(CriterionIn(900, sid, "ins", None))
    report.verdicts.append(
        VerdictIn(901, 1, "ins", sid, 900, None, None, None, None, None, "judge error")
    )
    zero = FRAMEWORK.score_report(report, "judge", DEFAULTS)
    assert (zero["Ins"], zero["UserPref"], zero["NeedsReview"]) == (0.5, 3.0, 1.0)  # (1 + 0)/2
    exclude = FRAMEWORK.score_report(report, "judge", opts(failed_verdict="exclude"))
    assert (exclude["Ins"], exclude["UserPref"], exclude["NeedsReview"]) == (1.0, 4.0, 1.0)


def test_a_subtask_without_an_ins_criterion_is_a_named_choice_and_flags_the_report() -> None:
    # P0: ins 1, fac 1; P1: fac 1 but no ins criterion at all.
    report = cascade_input([("P0", None, 1.0, 1.0, None), ("P1", None, 1.0, 1.0, None)])
    p1 = report.subtasks[1].id
    report.criteria = [
        c for c in report.criteria if not (c.subtask_id == p1 and c.dimension == "ins")
    ]
    report.verdicts = [v for v in report.verdicts if not (v.subtask_id == p1 and v.kind == "ins")]
    zero = FRAMEWORK.score_report(report, "judge", DEFAULTS)
    # zero: ins_2 = 0 → Ins = 1/2, o_2 = 0 → c1 = 0 < 0.3 → 1 (as before, but now flagged)
    assert (zero["Ins"], zero["_c1"], zero["UserPref"]) == (0.5, 0.0, 1.0)
    assert zero["NeedsReview"] == 1.0 and zero["_review_missing_ins"] == 1.0
    exclude = FRAMEWORK.score_report(report, "judge", opts(missing_ins="exclude"))
    # exclude: only P0 is scored: Ins 1, c0 = 1, c1 = 1 (empty) → every o_k = 1 → 4
    assert (exclude["Ins"], exclude["_n"], exclude["UserPref"]) == (1.0, 1.0, 4.0)
    assert exclude["NeedsReview"] == 1.0


def test_the_importer_warns_about_a_subtask_without_an_ins_rubric(
    conn: sqlite3.Connection,
) -> None:
    bundle = _one_subtask_bundle(LINKED, {"c1": "correct", "c2": "correct"})
    bundle.tasks[0].subtasks.append(Subtask(id="s2", text="y", importance="P1"))
    result = import_bundle(conn, bundle, "h", "bundle.jsonl")
    warnings = list(getattr(result, "warnings", ()))
    assert len(warnings) == 1
    assert "subtask 's2' of task 't1' has no ins criterion" in warnings[0]
    assert "subtasks.1" in warnings[0]


def test_gavel_import_prints_the_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from reviewer.formats.native import write_bundle
    from tui.cli import main

    bundle = _one_subtask_bundle(LINKED, {"c1": "correct", "c2": "correct"})
    bundle.tasks[0].subtasks.append(Subtask(id="s2", text="y", importance="P1"))
    write_bundle(bundle, tmp_path / "bundle")
    assert main(["import", "--db", str(tmp_path / "w.db"), str(tmp_path / "bundle")]) == 0
    err = capsys.readouterr().err
    assert "warning: " in err and "tasks.jsonl:1: field 'subtasks.1'" in err


# -- trace metrics from the report's trace counts (issue 19) -----------------------------------


def test_search_metrics_come_from_trace_counts_or_are_not_in_this_run() -> None:
    counted = cascade_input([("P0", None, 1.0, 1.0, None)])
    counted.report_metadata = {"trace": {"web_search": 15, "web_content_mining": 12}}
    total = cascade_input([("P0", None, 1.0, 1.0, None)])
    total.report_metadata = {"trace": {"search_calls": 20, "web_search": 9}}
    bare = cascade_input([("P0", None, 1.0, 1.0, None)])
    bare.report_metadata = {"searches": 14}  # not a documented trace count
    a, b, c = (FRAMEWORK.score_report(r, "judge", DEFAULTS) for r in (counted, total, bare))
    # Search calls = web search + web content mining (Fig. 4 / Table 6), unless given.
    assert (a["Search_Calls"], a["Web_Search"], a["Web_Content_Mining"], a["Trace_na"]) == (
        27.0,
        15.0,
        12.0,
        0.0,
    )
    assert (b["Search_Calls"], b["Web_Search"], b["Web_Content_Mining"]) == (20.0, 9.0, None)
    assert (c.get("Search_Calls"), c.get("Web_Search"), c["Trace_na"]) == (None, None, 1.0)
    system = FRAMEWORK.aggregate([a, b, c], DEFAULTS)
    # Means over the reports that carry each count; the flag counts the one without any.
    assert system["Search_Calls"] == Aggregate((27 + 20) / 2, 2)
    assert system["Web_Search"] == Aggregate((15 + 9) / 2, 2)
    assert system["Web_Content_Mining"] == Aggregate(12.0, 1)
    assert system["Trace_na"] == Aggregate(1.0, 3)
    nothing = FRAMEWORK.aggregate([c], opts(aggregation="macro"))
    assert nothing["Search_Calls"] == Aggregate(None, 0)  # not in this run
    assert nothing["Trace_na"] == Aggregate(1.0, 1)


@pytest.mark.parametrize(
    ("trace", "field"),
    [
        ({"web_serach": 3}, "metadata.trace.web_serach"),
        ({"web_search": -1}, "metadata.trace.web_search"),
        ({"web_search": 2.5}, "metadata.trace.web_search"),
        ([3, 4], "metadata.trace"),
    ],
)
def test_bad_trace_counts_are_refused_with_the_field(
    conn: sqlite3.Connection, trace: object, field: str
) -> None:
    bundle = _one_subtask_bundle(LINKED, {})
    bundle.reports[0] = bundle.reports[0].model_copy(update={"metadata": {"trace": trace}})
    with pytest.raises(InputError) as caught:
        import_bundle(conn, bundle, "h")
    assert caught.value.field == field


def test_the_sample_run_carries_no_trace_counts(sample_db: Path) -> None:
    # Its reports keep free-form counts ("searches", "search_calls", "tool_calls", ...), not
    # metadata.trace: the search metrics are not in this run, and say so.
    from store.db.connection import connect

    conn = connect(sample_db)
    rows = conn.execute(
        """SELECT y.ext_id, s.metric, s.value, s.n FROM score s JOIN system y
           ON s.scope = 'system:' || y.id WHERE s.framework = 'cascade' AND s.variant = 'judge'
           AND s.metric IN ('Search_Calls', 'Trace_na')"""
    ).fetchall()
    assert sorted(rows) == [
        (system, metric, value, n)
        for system in ("atlas-dr", "juniper", "kestrel")
        for metric, value, n in (("Search_Calls", None, 0), ("Trace_na", 8.0, 8))
    ]
    conn.close()
