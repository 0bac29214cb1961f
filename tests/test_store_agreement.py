"""The agreement read model against hand-computed values.

Judge vs human uses the tiny two-report bundle with decisions made by hand (single, unanimous,
adjudicated, a conflict and an undone decision that must not count). UserPref vs ratings uses
eight one-task reports whose UserPref levels follow from Algorithm 1 by hand, rated so that the
4x4 table is known in advance.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from reviewer.models import Bundle, Criterion, JudgeRun, Judgment, Report, Subtask, Suite, System
from reviewer.models import Task as TaskModel
from store.db.connection import connect
from store.imports.loader import import_bundle
from store.reviewlog.events import ReviewLog
from store.scores.cache import rebuild_scores, update_scores
from store.views.agreement import agreement
from tests.score_rows import all_scores
from tui.cli import main


def jid(conn: sqlite3.Connection, report: str, subject: str) -> int:
    row = conn.execute(
        "SELECT j.id FROM judgment j JOIN report r ON r.id = j.report_id "
        "WHERE r.ext_id = ? AND j.subject = ?",
        (report, subject),
    ).fetchone()
    assert row is not None
    return int(row[0])


@pytest.fixture
def decided(tiny_db: sqlite3.Connection) -> sqlite3.Connection:
    conn = tiny_db
    ana, ben, cleo = (ReviewLog(conn, n) for n in ("ana", "ben", "cleo"))
    # ins, single decisions by ana: (judge, human) = (1,1) (1,0.5) (0.5,0.5) (0,1) (1,1)
    ana.decide(jid(conn, "t1-alpha", "c=s1-ins"), "1", "given")
    ana.decide(jid(conn, "t1-alpha", "c=s2-ins"), "0.5", "driver only hinted", "misread-rubric")
    ana.decide(jid(conn, "t1-beta", "c=s2-ins"), "0.5", "partial")
    ana.decide(jid(conn, "t1-beta", "c=s4-ins"), "1", "share is in the table")
    ana.decide(jid(conn, "t1-beta", "c=s3-ins"), "1", "310 stations")
    # a conflict (not a human label yet): ana 0.5, ben 0 on alpha s4-ins
    ana.decide(jid(conn, "t1-alpha", "c=s4-ins"), "0.5", "half")
    ben.decide(jid(conn, "t1-alpha", "c=s4-ins"), "0", "missing")
    # unanimous: alpha c1 incorrect (judge: correct)
    ana.decide(jid(conn, "t1-alpha", "k=c1"), "incorrect", "4.1 million")
    ben.decide(jid(conn, "t1-alpha", "k=c1"), "incorrect", "the report says 4.2")
    # adjudicated: beta c3 (judge: unknown): ana correct, ben incorrect, cleo -> incorrect
    ana.decide(jid(conn, "t1-beta", "k=c3"), "correct", "plausible")
    ben.decide(jid(conn, "t1-beta", "k=c3"), "incorrect", "no source says so")
    cleo.decide(jid(conn, "t1-beta", "k=c3"), "incorrect", "unsupported", adjudicate=True)
    # undone: must not count anywhere
    ana.decide(jid(conn, "t1-beta", "k=c2"), "incorrect", "oops")
    assert ana.undo() is not None
    rebuild_scores(conn)
    return conn


def test_judge_vs_human_confusion_and_kappa_by_hand(decided: sqlite3.Connection) -> None:
    report = agreement(decided, n_resamples=200)
    groups = {g.kind: g for g in report.judge_human}
    assert set(groups) == {"ins", "claim"}  # rat/consistency: nothing decided
    ins = groups["ins"]
    assert (ins.framework, ins.dimension, ins.run, ins.model, ins.level) == (
        "cascade",
        "ins",
        "r1",
        "m",
        "ordinal",
    )
    assert ins.n == 5  # the conflict is left out
    c = ins.categorical
    assert c is not None
    assert c.labels == ("0", "0.5", "1")
    # rows judge, columns human: judge 0 -> human 1; 0.5 -> 0.5; 1 -> 0.5 once, 1 twice
    assert c.confusion.counts == ((0, 0, 1), (0, 1, 0), (0, 1, 2))
    assert c.accuracy.estimate == pytest.approx(3 / 5)
    # p_o = 0.6; judge marginals (.2, .2, .6), human (0, .4, .6): p_e = .08 + .36 = .44
    # kappa = (0.6 - 0.44) / (1 - 0.44) = 0.16 / 0.56 = 2/7
    assert c.kappa.estimate == pytest.approx(2 / 7)
    # quadratic: observed sum w*O = 1*4 (0->1) + 1*1 (1->0.5) = 5; expected sum r_i c_j w_ij =
    # 1*(2*1 + 3*4) + 1*(3*1) + 3*(2*1) = 23 -> kappa_w = 1 - n*5/23 = 1 - 25/23 = -2/23
    assert c.weighted_kappa is not None
    assert c.weighted_kappa.estimate == pytest.approx(-2 / 23)
    # AC1: pi = ((1+0)/10, (1+2)/10, (3+3)/10); p_e = (.09 + .21 + .24)/2 = .27
    assert c.ac1.value == pytest.approx((0.6 - 0.27) / (1 - 0.27))
    assert c.accuracy.lower is not None and c.accuracy.lower <= 0.6 <= (c.accuracy.upper or 0)
    assert [(d.report, d.subject, d.judge, d.human) for d in ins.disagreements] == [
        ("t1-alpha", "c=s2-ins", "1", "0.5"),
        ("t1-beta", "c=s4-ins", "0", "1"),
    ]
    first = ins.disagreements[0]
    assert (first.status, first.decided_by, first.reason, first.rationale) == (
        "single",
        "ana",
        "misread-rubric",
        "driver only hinted",
    )
    assert first.target == "s:tiny/t1-alpha/ins/c=s2-ins"

    claim = groups["claim"]
    assert claim.n == 2 and claim.level == "nominal"
    cc = claim.categorical
    assert cc is not None and cc.weighted_kappa is None  # nominal: no weighted kappa
    # (correct -> incorrect) unanimous, (unknown -> incorrect) adjudicated
    assert cc.confusion.counts == ((0, 1, 0), (0, 0, 0), (0, 1, 0))
    assert cc.accuracy.estimate == 0.0
    # p_o = 0; p_e = .5*0 + 0*1 + .5*0 = 0 -> kappa = 0
    assert cc.kappa.estimate == 0.0
    assert sorted((d.status, d.decided_by) for d in claim.disagreements) == [
        ("adjudicated", "cleo"),
        ("unanimous", "ana;ben"),
    ]
    assert report.human_decisions == 7


def test_reviewer_vs_reviewer_by_hand(decided: sqlite3.Connection) -> None:
    groups = {g.kind: g for g in agreement(decided, n_resamples=50).reviewers}
    assert set(groups) == {"ins", "claim"}
    claim = groups["claim"]
    # units: alpha c1 {ana: incorrect, ben: incorrect}, beta c3 {ana: correct, ben: incorrect}
    # (cleo's adjudication is not a reviewer's own reading)
    assert claim.stats.reviewers == ("ana", "ben")
    assert (claim.stats.n_items, claim.differing) == (2, 1)
    # Krippendorff: coincidences o(inc,inc)=2, o(cor,inc)=o(inc,cor)=1; n_inc=3, n_cor=1, n=4
    # D_o = 2/4; D_e = 2*1*3/(4*3) = 1/2 -> alpha = 0
    assert claim.stats.alpha.value == pytest.approx(0.0)
    (pair,) = claim.stats.pairs
    assert (pair.a, pair.b, pair.n) == ("ana", "ben", 2)
    assert pair.accuracy.value == 0.5
    # ana (inc, cor), ben (inc, inc): p_o = .5, p_e = .5*1 = .5 -> kappa = 0
    assert pair.kappa is not None and pair.kappa.value == pytest.approx(0.0)
    ins = groups["ins"]
    assert (ins.stats.n_items, ins.differing, ins.stats.level) == (1, 1, "ordinal")


def test_framework_filter(decided: sqlite3.Connection) -> None:
    assert agreement(decided, "race", n_resamples=10).judge_human == ()
    assert len(agreement(decided, "cascade", n_resamples=10).judge_human) == 2


# -- UserPref vs overall ratings -----------------------------------------------------------------

# (ins of the P0 subtask, ins of the P1 subtask) -> UserPref by Algorithm 1 (no fac/rat rubrics,
# so o_k = ins_k; no P2(a) group, so v2 is vacuously true and c1 is the P1 mean):
#   (1, 1)   every o_k = 1                              -> 4
#   (.5, 1)  c0 = .5, c1 = 1, v1 true                   -> 3
#   (1, .5)  c0 = 1, c1 = .5 < .7                       -> 2
#   (0, x)   c0 = 0                                     -> 1
LEVELS = {
    "s1": (1, 1),
    "s2": (1, 1),
    "s3": (0.5, 1),
    "s4": (0.5, 1),
    "s5": (1, 0.5),
    "s6": (1, 0.5),
    "s7": (0, 1),
    "s8": (0, 0),
}
EXPECTED = {"s1": 4, "s2": 4, "s3": 3, "s4": 3, "s5": 2, "s6": 2, "s7": 1, "s8": 1}
RATINGS = {"s1": 4, "s2": 3, "s3": 3, "s4": 2, "s5": 2, "s6": 1, "s7": 1, "s8": 1}


def rated_bundle() -> Bundle:
    task = TaskModel(
        id="t1",
        prompt="Compare two phones for a teenager.",
        subtasks=[
            Subtask(id="p0", text="Name a phone", importance="P0"),
            Subtask(id="p1", text="Give its price", importance="P1"),
        ],
        criteria=[
            Criterion(
                id="p0-ins",
                subtask="p0",
                framework="cascade",
                dimension="ins",
                text="Names a phone",
            ),
            Criterion(
                id="p1-ins",
                subtask="p1",
                framework="cascade",
                dimension="ins",
                text="Gives the price",
            ),
        ],
    )
    judgments = [
        Judgment(run="r1", report=f"t1-{system}", kind="ins", criterion=criterion, value=value)
        for system, values in LEVELS.items()
        for criterion, value in zip(("p0-ins", "p1-ins"), values, strict=True)
    ]
    return Bundle(
        suite=Suite(id="rated", name="Rated", frameworks=["cascade"]),
        tasks=[task],
        systems=[System(id=s) for s in LEVELS],
        reports=[
            Report(id=f"t1-{s}", task="t1", system=s, markdown="# A phone\n\nThe X1.\n")
            for s in LEVELS
        ],
        runs=[JudgeRun(id="r1", model="m", created_at="2026-11-01T00:00:00Z")],
        judgments=judgments,
    )


@pytest.fixture
def rated(tmp_path: Path) -> sqlite3.Connection:
    conn = connect(tmp_path / "rated.db")
    import_bundle(conn, rated_bundle(), "h")
    rebuild_scores(conn)
    ana = ReviewLog(conn, "ana")
    for system, value in RATINGS.items():
        ana.rate(_report(conn, system), value, "overall")
    return conn


def _report(conn: sqlite3.Connection, system: str) -> int:
    return int(
        conn.execute("SELECT id FROM report WHERE ext_id = ?", (f"t1-{system}",)).fetchone()[0]
    )


def test_the_designed_userpref_levels_hold(rated: sqlite3.Connection) -> None:
    levels = dict(
        rated.execute(
            f"SELECT r.ext_id, s.value FROM {all_scores(rated)} s "
            "JOIN report r ON s.scope = 'report:' || r.id "
            "WHERE s.metric = 'UserPref' AND s.variant = 'judge'"
        )
    )
    assert levels == {f"t1-{k}": float(v) for k, v in EXPECTED.items()}


def test_userpref_vs_ratings_weighted_kappa_by_hand(rated: sqlite3.Connection) -> None:
    ratings = {r.variant: r for r in agreement(rated, n_resamples=300).ratings}
    assert set(ratings) == {"adjudicated", "judge"}
    judge = ratings["judge"]
    assert (judge.framework, judge.metric, judge.n, judge.reports, judge.raters) == (
        "cascade",
        "UserPref",
        8,
        8,
        ("ana",),
    )
    c = judge.comparison
    # rows UserPref 1..4, columns rating 1..4
    assert c.confusion.counts == ((2, 0, 0, 0), (1, 1, 0, 0), (0, 1, 1, 0), (0, 0, 1, 1))
    # observed: three pairs one step apart -> sum w*O = 3. rows r = (2,2,2,2), columns
    # c = (3,2,2,1); sum_j c_j (i-j)^2 = 19, 9, 15, 37 for i = 0..3 -> expected 2*80 = 160.
    # kappa_w = 1 - n * 3 / 160 = 1 - 24/160 = 0.85
    assert c.weighted_kappa is not None
    assert c.weighted_kappa.estimate == pytest.approx(0.85)
    # unweighted: p_o = 5/8; p_e = (2*3 + 2*2 + 2*2 + 2*1)/64 = 1/4 -> (5/8 - 1/4)/(3/4) = 0.5
    assert c.kappa.estimate == pytest.approx(0.5)
    assert c.accuracy.estimate == pytest.approx(5 / 8)
    lower, upper = c.weighted_kappa.lower, c.weighted_kappa.upper
    assert lower is not None and upper is not None and lower <= 0.85 <= upper
    assert ratings["adjudicated"].comparison.weighted_kappa is not None
    assert ratings["adjudicated"].comparison.weighted_kappa.estimate == pytest.approx(0.85)


def test_adjudicated_userpref_follows_decisions_and_each_rating_is_a_pair(
    rated: sqlite3.Connection,
) -> None:
    # A reviewer sets s6's P1 ins to 1: its adjudicated level becomes 4 (rating 1).
    recorded = ReviewLog(rated, "ana").decide(jid(rated, "t1-s6", "c=p1-ins"), "1", "price given")
    update_scores(rated, [recorded.report_id or 0])
    ratings = {r.variant: r for r in agreement(rated, n_resamples=100).ratings}
    adjudicated = ratings["adjudicated"].comparison
    assert adjudicated.confusion.counts == ((2, 0, 0, 0), (0, 1, 0, 0), (0, 1, 1, 0), (1, 0, 1, 1))
    # observed: 1 + 1 + 9 (4 vs 1) = 11; rows (2,1,2,3), columns (3,2,2,1):
    # expected = 2*19 + 1*9 + 2*15 + 3*37 = 188 -> kappa_w = 1 - 8*11/188 = 100/188
    assert adjudicated.weighted_kappa is not None
    assert adjudicated.weighted_kappa.estimate == pytest.approx(100 / 188)
    assert ratings["judge"].comparison.weighted_kappa is not None
    assert ratings["judge"].comparison.weighted_kappa.estimate == pytest.approx(0.85)
    # A second reviewer's rating of the same report is a second pair.
    ReviewLog(rated, "ben").rate(_report(rated, "s1"), 4)
    judge = {r.variant: r for r in agreement(rated, n_resamples=10).ratings}["judge"]
    assert (judge.n, judge.reports, judge.raters) == (9, 8, ("ana", "ben"))


def test_agreement_command(
    rated: sqlite3.Connection, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "rated.db"
    ReviewLog(rated, "ana").decide(jid(rated, "t1-s6", "c=p1-ins"), "1", "price given")
    assert main(["agreement", "--db", str(path), "--resamples", "50"]) == 0
    out = capsys.readouterr().out
    assert "Judge vs human" in out and "UserPref" in out and "0.850" in out
    assert main(["agreement", "--db", str(path), "--format", "json", "--resamples", "50"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert {r["variant"] for r in data["ratings"]} == {"adjudicated", "judge"}
    assert data["judge_human"][0]["kind"] == "ins"
