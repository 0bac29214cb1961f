"""Suspicion flags: every rule, shared and per framework, finds the judge error it is for.

The sample's MISTAKES.md lists the planted judge errors; the flags below are the ones the
rules raise on the bundled sample (each checked by reading the report: see MISTAKES.md). A rule
that stops firing fails its line here. The shared rules are also checked on hand-built
evidence, so that their logic (both directions of a contradiction, the one value an unreachable
page allows, run disagreements on a continuous scale) is pinned independently of the sample.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from reviewer.grading import Claim, Entailment, Evidence, Page, Verdict
from reviewer.suspicion import contradictions, run_disagreements, unreachable
from store.db.connection import connect
from store.triage.suspicion import refresh_suspicion

SAMPLE_FLAGS = [
    # shared rules
    ("contradiction", "t01-atlas-dr", "claim", "k=c7"),  # incorrect, page supports
    ("contradiction", "t01-atlas-dr", "consistency", "k=c7;r=3"),
    ("contradiction", "t03-kestrel", "claim", "k=c3"),
    ("evidence", "t07-kestrel", "claim", "k=c14"),
    ("unreachable", "t02-kestrel", "consistency", "k=c10;r=4"),
    ("unreachable", "t07-kestrel", "claim", "k=c14"),
    ("level", "t01-juniper", "ins", "c=s1-ins"),  # the two issue 14 named
    ("level", "t01-juniper", "ins", "c=s3-ins"),
    # DR3-Eval: the same fact judged differently in checklist and insight verdicts
    ("same fact", "pipit:school-four-day-week", "dr3_checklist", "c=if-1"),
    ("same fact", "pipit:school-four-day-week", "dr3_insight", "c=uf-1"),
    ("figures", "pipit:school-four-day-week", "dr3_insight", "c=uf-1"),
    ("other document", "tern:port-shore-power", "dr3_citation", "c=page-1"),
    # LiveDRBench: numeric tolerance, name rules, a match to the wrong ground-truth entry
    ("tolerance", "peer-chorusalp-ibis-dr", "cf1_key", "c=g1.2;k=p1.2;x=g1.2:hours"),
    ("names", "halvard-prize-ibis-dr", "cf1_match", "c=g1.2;k=p1.2;x=g1.2"),
    ("mismatch", "peer-chorusalp-heron-dr", "cf1_match", "c=g1.1;k=p1.1;x=g1.1"),
    # DR. Bench: trusted-source near match, keyword inside a word, structure, figures, relevance
    (
        "near-match",
        "08902-quill-dr",
        "drb_trusted",
        "x=archive.kestrelbay-records.example/minutes/2027-03-14",
    ),
    ("in-word", "04901-lantern-search", "drb_keyword_hit", "c=fak-1;x=878~"),
    ("structure", "08902-lantern-search", "drb_grr", "c=grr-37"),
    ("figure", "04901-lantern-search", "drb_qsr", "c=qsr-02"),
    ("relevance", "04901-tern-agent", "drb_relevance", "c=fdk-1"),
]


def _flags(conn: sqlite3.Connection) -> dict[tuple[str, str, str, str], str]:
    return {
        (rule, report, kind, key): reason
        for rule, report, kind, key, reason in conn.execute(
            "SELECT s.rule, r.ext_id, sub.kind, sub.key, s.reason FROM suspicion s "
            "JOIN subject sub ON sub.id = s.subject_id JOIN report r ON r.id = sub.report_id"
        )
    }


@pytest.fixture(scope="module")
def sample_flags(sample_db_template: Path) -> dict[tuple[str, str, str, str], str]:
    conn = connect(sample_db_template)
    try:
        return _flags(conn)
    finally:
        conn.close()


@pytest.mark.parametrize("flag", SAMPLE_FLAGS, ids=lambda f: f"{f[0]}:{f[1]}:{f[3]}")
def test_each_rule_flags_its_judge_error_on_the_sample(
    sample_flags: dict[tuple[str, str, str, str], str], flag: tuple[str, str, str, str]
) -> None:
    assert flag in sample_flags, f"no {flag[0]} flag on {flag[1]} {flag[3]}"
    assert sample_flags[flag].strip()  # a plain reason, shown on screen


def test_flags_are_few_and_mostly_on_listed_errors(
    sample_flags: dict[tuple[str, str, str, str], str],
) -> None:
    # 2,000-odd verdicts in the sample; the flags point at a few dozen of them.
    assert 20 <= len(sample_flags) <= 80
    # t05's reports have none: its one listed error (t05-kestrel c2) is a claim and its
    # consistency verdict wrong together, which no rule can see without reading the page.
    assert not [f for f in sample_flags if f[1].startswith("t05-")]


def test_rebuild_recomputes_the_same_flags(sample_db: Path) -> None:
    conn = connect(sample_db)
    before = _flags(conn)
    conn.execute("DELETE FROM suspicion")
    assert refresh_suspicion(conn) == len(before)
    assert _flags(conn) == before


# -- the shared rules on hand-built evidence --------------------------------------------------

ENTAIL = (Entailment("claim", "consistency", {"support": "correct", "conflict": "incorrect"}),)


def _claim_evidence(claim_value: str, page_values: list[str]) -> Evidence:
    verdicts = [Verdict(1, 1, "claim", claim_value, claim="c1")]
    verdicts += [
        Verdict(10 + i, 10 + i, "consistency", v, claim="c1", ref=i + 1)
        for i, v in enumerate(page_values)
    ]
    return Evidence("r", claims={"c1": Claim("c1", "a fact", citations=(1, 2))}, verdicts=verdicts)


@pytest.mark.parametrize(
    ("claim", "pages", "flagged"),
    [
        ("correct", ["conflict", "conflict"], {1, 10, 11}),  # correct, every page conflicts
        ("incorrect", ["support", "support"], {1, 10, 11}),  # the reverse
        ("correct", ["support", "conflict"], set()),  # pages disagree: nothing implied
        ("correct", ["support", "support"], set()),
        ("incorrect", ["conflict"], set()),
    ],
)
def test_contradiction_between_a_claim_and_its_consistency_verdicts(
    claim: str, pages: list[str], flagged: set[int]
) -> None:
    found = list(contradictions(_claim_evidence(claim, pages), ENTAIL))
    assert {f.subject for f in found} == flagged
    assert all(f.rule == "contradiction" and "one side is wrong" in f.reason for f in found)


def test_a_verdict_on_an_unreachable_page_must_be_unknown() -> None:
    evidence = Evidence(
        "r",
        claims={"c1": Claim("c1", "a fact", citations=(1,))},
        references={1: "https://dead.example", 2: "https://alive.example"},
        pages={
            "https://dead.example": Page("https://dead.example", error="HTTP 404"),
            "https://alive.example": Page("https://alive.example", text="some text"),
        },
        verdicts=[
            Verdict(1, 1, "consistency", "support", claim="c1", ref=1),
            Verdict(2, 2, "consistency", "unknown", claim="c1", ref=1),
            Verdict(3, 3, "consistency", "support", claim="c1", ref=2),
        ],
    )
    found = list(unreachable(evidence, {"consistency": "unknown"}))
    assert [f.subject for f in found] == [1]
    assert "could not be fetched" in found[0].reason


def test_judge_runs_disagreeing_on_a_subject() -> None:
    current = [
        Verdict(1, 1, "claim", "correct", run="r2"),
        Verdict(2, 2, "claim", "incorrect", run="r2"),
    ]
    others = [
        Verdict(11, 1, "claim", "incorrect", run="r1", model="m1"),
        Verdict(12, 2, "claim", "incorrect", run="r1", model="m1", active=False),
    ]
    found = list(run_disagreements(Evidence("r", verdicts=current, others=others)))
    assert [f.subject for f in found] == [1]
    assert "run r1 (m1) says incorrect" in found[0].reason


def test_a_candidate_run_that_disagrees_flags_the_subjects_when_it_finishes(
    tiny_db: sqlite3.Connection,
) -> None:
    from tests.test_activation import add_run

    add_run(tiny_db, "bad")  # says 1 on every s*-ins; the imported run differs on some
    flagged = {(report, key) for rule, report, _, key in _flags(tiny_db) if rule == "runs"}
    assert flagged
    for report, key in flagged:
        values = {
            v
            for (v,) in tiny_db.execute(
                "SELECT j.value FROM judgment j JOIN report r ON r.id = j.report_id "
                "WHERE r.ext_id = ? AND j.subject = ?",
                (report, key),
            )
        }
        assert len(values) > 1


# -- flags in batches ------------------------------------------------------------------------


def test_flags_do_not_depend_on_which_reports_share_a_batch(
    sample_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each report alone: its evidence still holds its task's pages (quotes on another
    report's page of the same task are found), so the flags are the import's."""
    import store.triage.suspicion as suspicion

    conn = connect(sample_db)
    before = _flags(conn)
    monkeypatch.setattr(suspicion, "BATCH", 1)
    conn.execute("DELETE FROM suspicion")
    assert refresh_suspicion(conn) == len(before)
    assert _flags(conn) == before


# -- what the evidence of a report holds -------------------------------------------------------


def test_claims_are_read_where_a_rule_may_read_them(sample_db: Path) -> None:
    from reviewer.frameworks.dailyreport.grading import GRADING
    from reviewer.frameworks.dr3_eval.grading import GRADING as DR3
    from reviewer.suspicion import level_flags, reads_claims, unlocated_evidence
    from store.triage.suspicion import evidence

    assert reads_claims([DR3]) and not reads_claims([GRADING])  # DR3-Eval's own rules may
    conn = connect(sample_db)
    ids = [r for (r,) in conn.execute("SELECT id FROM report ORDER BY id")]
    full = {rid: ev for rid, _, _, ev in evidence(conn, ids)}
    lean = {rid: ev for rid, _, _, ev in evidence(conn, ids, with_claims=lambda names: False)}
    conn.close()
    dead = {rid for rid, ev in full.items() if any(p.unreachable for p in ev.pages.values())}
    assert dead and len(dead) < len(full)
    for rid, ev in full.items():
        # Claims are left out only where no page cited for the task is unreachable ...
        assert lean[rid].claims == (ev.claims if rid in dead else {})
        # ... which changes nothing the shared rules say.
        for said in (
            lambda e: list(unreachable(e, GRADING.unreachable)),
            lambda e: list(unlocated_evidence(e, GRADING.evidence_kinds, GRADING.unreachable)),
            lambda e: list(contradictions(e, GRADING.entailments)),
            lambda e: list(level_flags(e, GRADING)),
        ):
            assert said(lean[rid]) == said(ev)
