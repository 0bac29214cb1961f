"""DailyReport scored from counts every report at once (reviewer/frameworks/dailyreport/
counted.py) gives each report exactly what ``score_report`` gives from its rows: the same
metrics in the same order, every value bit for bit, under every option of the framework.

The counts are made here from the reports themselves, as SQL counts them
(store/scores/counts.py; tests/test_scores_counted.py holds the SQL side to the rows)."""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Sequence

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reviewer.framework import ScoreMatrix, Variant
from reviewer.frameworks.dailyreport import counted as counted_module
from reviewer.frameworks.dailyreport.counted import score_counted
from reviewer.frameworks.dailyreport.scoring import FRAMEWORK, OPTIONS
from reviewer.inputs import (
    ClaimIn,
    CountedReports,
    CriterionIn,
    ReportInput,
    SubtaskIn,
    TaskShapes,
    VerdictCounts,
    VerdictIn,
)
from reviewer.keys import TRACE_KEY

SPEC = FRAMEWORK.bulk
assert SPEC is not None
KINDS = (*SPEC.kinds, "claim")
DEFAULTS = {o.name: o.default for o in OPTIONS}
EVERY_OPTION = [
    dict(zip([o.name for o in OPTIONS], choice, strict=True))
    for choice in itertools.product(*(o.choices for o in OPTIONS))
]
options = st.fixed_dictionaries({o.name: st.sampled_from(o.choices) for o in OPTIONS})

TERNARY = ["0", "0.5", "1", None, "0.7"]  # None: a failed call; "0.7": no value of the scale
CLAIM = ["correct", "incorrect", "unknown", None, "Correct"]
PAIR = ["support", "conflict", "unknown", None]


@st.composite
def reports(draw: st.DrawFn) -> list[ReportInput]:
    """Reports of a few tasks as real runs have them: subtasks of every importance (groups
    named, unnamed or empty), zero to two criteria per dimension, verdicts missing, failed or
    off the scale, claims under a subtask, only under their fac criterion or under neither,
    human decisions that differ from the judge, reports with and without trace counts."""
    ids = itertools.count(1)
    out: list[ReportInput] = []
    for task in range(1, draw(st.integers(1, 3)) + 1):
        subtasks: list[SubtaskIn] = []
        criteria: list[CriterionIn] = []
        for _ in range(draw(st.integers(0, 6))):
            importance = draw(st.sampled_from(["P0", "P1", "P2", "P2a", "P3"]))
            group = draw(st.sampled_from(["1", "2", None, ""])) if importance == "P2a" else None
            subtask = SubtaskIn(next(ids), importance, group)
            subtasks.append(subtask)
            for dimension in ("ins", "fac", "rat"):
                most = 2 if dimension != "ins" else draw(st.sampled_from([0, 1, 1, 1, 2]))
                for _ in range(draw(st.integers(0, most)) if dimension != "ins" else most):
                    criteria.append(CriterionIn(next(ids), subtask.id, dimension, None))
        for system in range(draw(st.integers(1, 3))):
            out.append(_report(draw, ids, task, system, subtasks, criteria))
    return out


def _report(
    draw: st.DrawFn,
    ids: itertools.count[int],
    task: int,
    system: int,
    subtasks: list[SubtaskIn],
    criteria: list[CriterionIn],
) -> ReportInput:
    rid = next(ids)
    verdicts: list[VerdictIn] = []

    def verdict(kind: str, subtask: int | None, values: list[str | None], **on: int) -> None:
        if not draw(st.integers(0, 9)):
            return  # never judged
        judge = draw(st.sampled_from(values))
        effective = draw(st.sampled_from(values)) if draw(st.booleans()) else judge
        verdicts.append(
            VerdictIn(
                next(ids),
                rid,
                kind,
                subtask,
                on.get("criterion"),
                on.get("claim"),
                on.get("ref"),
                None,
                judge,
                effective,
            )
        )

    for c in criteria:
        if c.dimension != "fac":
            verdict(c.dimension, c.subtask_id, TERNARY, criterion=c.id)
    fac = [c for c in criteria if c.dimension == "fac"]
    claims: list[ClaimIn] = []
    for _ in range(draw(st.integers(0, 8))):
        where = draw(st.integers(0, 2)) if subtasks else 2
        subtask = draw(st.sampled_from(subtasks)).id if where == 0 else None
        criterion = draw(st.sampled_from(fac)) if where == 1 and fac else None
        claim = ClaimIn(
            next(ids),
            subtask,
            criterion.id if criterion else None,
            tuple(draw(st.lists(st.integers(1, 3), max_size=2))),
            draw(st.sampled_from([None, None, "https://e.org/x"])),
        )
        claims.append(claim)
        filed = subtask if criterion is None else criterion.subtask_id
        # Every claim has its one claim verdict (a report without is scored from rows).
        judge = draw(st.sampled_from(CLAIM))
        effective = draw(st.sampled_from(CLAIM)) if draw(st.booleans()) else judge
        verdicts.append(
            VerdictIn(next(ids), rid, "claim", filed, None, claim.id, None, None, judge, effective)
        )
        for ref in range(draw(st.integers(0, 2))):
            verdict("consistency", filed, PAIR, claim=claim.id, ref=ref + 1)
    metadata: dict[str, object] = {}
    if draw(st.booleans()):
        counts = st.one_of(st.none(), st.integers(0, 30), st.just(math.nan), st.just("3"))
        keys = ("search_calls", "web_search", "web_content_mining")
        metadata[TRACE_KEY] = {key: draw(counts) for key in keys}
    return ReportInput(
        rid,
        task,
        system,
        report_metadata=metadata,
        subtasks=subtasks,
        criteria=criteria,
        claims=claims,
        verdicts=verdicts,
    )


def counted(reports: Sequence[ReportInput], variant: Variant) -> CountedReports:
    """The reports' verdicts counted as store/scores/counts.py counts them in SQL."""
    reports = sorted(reports, key=lambda r: r.report_id)
    task_ids = sorted({r.task_id for r in reports})
    first = {r.task_id: r for r in reversed(reports)}
    subtask_task: list[int] = []
    importance: list[str] = []
    group: list[str | None] = []
    index: dict[int, int] = {}
    criteria: Counter[tuple[int, str]] = Counter()
    for t, tid in enumerate(task_ids):
        for s in first[tid].subtasks:
            index[s.id] = len(subtask_task)
            subtask_task.append(t)
            importance.append(s.importance)
            group.append(s.group)
        mine = {s.id for s in first[tid].subtasks}
        criteria.update(
            (index[c.subtask_id], c.dimension) for c in first[tid].criteria if c.subtask_id in mine
        )
    rows: list[tuple[int, int, int, int, int, int]] = []
    for r, report in enumerate(reports):
        mine = {s.id for s in report.subtasks}
        cites = {c.id: bool(c.citations) or c.url is not None for c in report.claims}
        for v in report.verdicts:
            if v.kind not in KINDS:
                continue
            value = v.value(variant)
            code = SPEC.codes.index(value) if value in SPEC.codes else len(SPEC.codes)
            rows.append(
                (
                    r,
                    KINDS.index(v.kind),
                    index[v.subtask_id] if v.subtask_id in mine else -1,
                    int(cites.get(v.claim_id or 0, False)),
                    len(SPEC.codes) + 1 if value is None else code,
                    1,
                )
            )
    columns = np.array(rows, dtype=np.int64).reshape(-1, 6).T
    ints = np.array
    return CountedReports(
        KINDS,
        SPEC.codes,
        ints([r.report_id for r in reports], dtype=np.int64),
        ints([task_ids.index(r.task_id) for r in reports], dtype=np.int64),
        [r.report_metadata for r in reports],
        ints([len(r.claims) for r in reports], dtype=np.int64),
        TaskShapes(
            ints(subtask_task, dtype=np.int64),
            importance,
            group,
            ints([s for s, _ in criteria], dtype=np.int64),
            [d for _, d in criteria],
            ints(list(criteria.values()), dtype=np.int64),
        ),
        VerdictCounts(*(np.ascontiguousarray(column, dtype=np.int32) for column in columns)),
    )


def mismatches(
    reports: Sequence[ReportInput], variant: Variant, chosen: dict[str, str]
) -> list[tuple[int, object, object]]:
    """(report, from rows, from counts) wherever the two differ: in a metric, its value's
    bits, or the order of the metrics (the stored row's bytes)."""
    ordered = sorted(reports, key=lambda r: r.report_id)
    matrix = score_counted(counted(ordered, variant), chosen)
    out: list[tuple[int, object, object]] = []
    for i, report in enumerate(ordered):
        expected = FRAMEWORK.score_report(report, variant, chosen)
        got = matrix.row(i)
        if repr(list(got.items())) != repr(list(expected.items())):
            out.append((report.report_id, expected, got))
        assert absent_are_nan(matrix, i)
    return out


def absent_are_nan(matrix: ScoreMatrix, i: int) -> bool:
    """A metric a report does not have is NaN in its row (its system's columns read it)."""
    has = set(matrix.layouts[int(matrix.layout[i])])
    return all(math.isnan(v) for c, v in enumerate(matrix.values[i].tolist()) if c not in has)


@settings(max_examples=300, deadline=None)
@given(reports(), options, st.sampled_from(["judge", "adjudicated"]))
def test_every_report_scores_as_from_its_rows(
    drawn: list[ReportInput], chosen: dict[str, str], variant: Variant
) -> None:
    assert mismatches(drawn, variant, chosen) == []


@settings(max_examples=6, deadline=None)
@given(reports())
def test_every_option_combination_scores_as_from_rows(drawn: list[ReportInput]) -> None:
    for chosen in EVERY_OPTION:
        for variant in ("judge", "adjudicated"):
            assert mismatches(drawn, variant, chosen) == [], chosen


Sub = tuple[str, str | None, bool, int, int]
"""(importance, group, has an ins criterion, claims verified correct, claims) of a subtask
whose ins verdict (if any) is met: o_k = correct / claims where it has claims, else ins_k."""


def _fac_report(subs: list[Sub]) -> ReportInput:
    ids = itertools.count(1)
    rid = 1000
    subtasks: list[SubtaskIn] = []
    criteria: list[CriterionIn] = []
    claims: list[ClaimIn] = []
    verdicts: list[VerdictIn] = []
    for importance, group, ins, correct, total in subs:
        s = SubtaskIn(next(ids), importance, group)
        subtasks.append(s)
        if ins:
            c = CriterionIn(next(ids), s.id, "ins", None)
            criteria.append(c)
            verdicts.append(
                VerdictIn(next(ids), rid, "ins", s.id, c.id, None, None, None, "1", "1")
            )
        if total:
            criteria.append(CriterionIn(next(ids), s.id, "fac", None))
        for k in range(total):
            claim = ClaimIn(next(ids), s.id, None, ())
            claims.append(claim)
            value = "correct" if k < correct else "incorrect"
            verdicts.append(
                VerdictIn(next(ids), rid, "claim", s.id, None, claim.id, None, None, value, value)
            )
    return ReportInput(
        rid, 1, 1, subtasks=subtasks, criteria=criteria, claims=claims, verdicts=verdicts
    )


def _both(report: ReportInput, chosen: dict[str, str]) -> tuple[dict[str, float | None], ...]:
    matrix = score_counted(counted([report], "judge"), chosen)
    return matrix.row(0), FRAMEWORK.score_report(report, "judge", chosen)


def test_a_c1_on_its_threshold_is_decided_exactly() -> None:
    # c1 = (0.7 + 0.7 + 0.7) / 3 is 0.6999999999999998 in floats, 7/10 exactly: Perfect is
    # out of reach (o_k < 1), Acceptable needs c1 ≥ 0.7, which holds.
    report = _fac_report([("P0", None, True, 0, 0), *[("P1", None, True, 7, 10)] * 3])
    assert (0.7 + 0.7 + 0.7) / 3 < 0.7
    counted_scores, row_scores = _both(report, DEFAULTS)
    assert counted_scores["UserPref"] == 3.0 and counted_scores["_c1"] == 0.7
    assert counted_scores == row_scores


def test_groups_enter_c1_in_the_order_they_first_appear_among_the_subtasks_scored() -> None:
    # Group 1's first subtask has no ins criterion and leaves (missing_ins = exclude), so
    # group 2 appears first: c1 = ((0.1 + 0.1) + 2/9) / 3, which differs in its last bit from
    # ((0.1 + 2/9) + 0.1) / 3, the order of the task's subtasks.
    report = _fac_report(
        [
            ("P2a", "1", False, 1, 1),
            ("P2a", "2", True, 1, 10),
            ("P2a", "1", True, 2, 9),
            ("P1", None, True, 1, 10),
        ]
    )
    assert ((0.1 + 0.1) + 2 / 9) / 3 != ((0.1 + 2 / 9) + 0.1) / 3
    chosen = {**DEFAULTS, "missing_ins": "exclude"}
    counted_scores, row_scores = _both(report, chosen)
    assert counted_scores["_c1"] == ((0.1 + 0.1) + 2 / 9) / 3
    assert repr(counted_scores) == repr(row_scores)


@pytest.mark.parametrize("variant", ["judge", "adjudicated"])
def test_reports_without_subtasks_or_verdicts_have_no_scores(variant: Variant) -> None:
    bare = ReportInput(1, 1, 1)
    matrix = score_counted(counted([bare], variant), DEFAULTS)
    assert matrix.row(0) == {} == FRAMEWORK.score_report(bare, variant, DEFAULTS)
    none = score_counted(counted([], variant), DEFAULTS)
    assert none.values.shape == (0, len(none.names))


@settings(max_examples=150, deadline=None)
@given(reports(), options)
def test_reports_scored_in_slices_of_like_width_score_the_same(
    drawn: list[ReportInput], chosen: dict[str, str]
) -> None:
    # Few cells a slice: tasks of different subtask counts fall in different slices, and a
    # slice holds a report or two.
    table = counted(drawn, "adjudicated")
    whole = score_counted(table, chosen)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(counted_module, "_CELLS", 4)
        sliced = score_counted(table, chosen)
        assert mismatches(drawn, "adjudicated", chosen) == []
        slices = counted_module._slices(np.array([9, 1, 9, 2, 3, 2, 1]))
    # Widths 1, 2, 3-4 and 9-16 apart; 4 cells: two of width 2, one of width 9 a slice.
    assert [s.tolist() for s in slices] == [[1, 6], [3, 5], [4], [0], [2]]
    for i in range(len(table.report_ids)):
        assert repr(sliced.row(i)) == repr(whole.row(i))
    assert sliced.values.tobytes() == whole.values.tobytes()
