"""Ground-truth expansions: normalisation and fuzzy duplicates, payload shapes, the
propose/accept/reject workflow, expansions reaching the scorers, and the gold diff."""

from __future__ import annotations

import io
import json
import sqlite3
from pathlib import Path

import pytest

from reviewer.logfile import read_events
from reviewer.proposals import (
    DUPLICATE_THRESHOLD,
    EFFECT_ATTACHED,
    EFFECT_NEW,
    NUMBER_MISMATCH_CAP,
    Candidate,
    PayloadError,
    best_duplicate,
    check_payload,
    effect,
    gold_item,
    normalize_text,
    payload_text,
    similarity,
    token_jaccard,
)
from store.db.connection import connect
from store.exports.files import gt_expansion_records
from store.imports.from_path import build_demo
from store.reviews.merge import merge_events, write_log
from store.reviews.proposals import ProposalError, accept, get_proposal, proposals, propose, reject
from store.scores.inputs import load_inputs
from tests.score_rows import all_scores
from tui.cli import main
from tui.paths import sample_data_dir

# -- normalisation and similarity (pure) ---------------------------------------------------------


def test_normalisation() -> None:
    # NFKC folds full-width digits and the "ﬁ" ligature; casefold turns ß into ss.
    assert normalize_text("Proﬁt ２０２５") == "profit 2025"
    assert normalize_text("STRASSE") == normalize_text("Straße") == "strasse"
    # punctuation goes (dashes split words), a decimal point between digits stays, so does %
    assert normalize_text("U.S. GDP — grew 2.1%, (per the IMF).") == "us gdp grew 2.1% per the imf"
    assert normalize_text("  many\tspaces\n here ") == "many spaces here"
    assert normalize_text("well-known") == "well known"


def test_similarity_by_hand() -> None:
    assert similarity("same text", "same text") == 1.0
    # difflib ratio = 2 * matches / total length: "abcd" vs "abce" -> 2*3/8 = 0.75; the token
    # Jaccard of {"abcd"} and {"abce"} is 0, so the ratio wins
    assert similarity("abcd", "abce") == pytest.approx(0.75)
    # reordered words: Jaccard 1.0 beats the character ratio
    assert token_jaccard("gdp grew in 2025", "in 2025 gdp grew") == 1.0
    assert similarity("gdp grew in 2025", "in 2025 gdp grew") == 1.0
    # |{a, b, c} & {b, c, d}| / |{a, b, c, d}| = 2/4
    assert token_jaccard("a b c", "b c d") == 0.5
    # different numbers are different facts, however alike the sentences
    close = similarity("the network has 310 stations", "the network has 312 stations")
    assert close == NUMBER_MISMATCH_CAP < DUPLICATE_THRESHOLD


def test_best_duplicate_returns_the_best_candidate_and_its_score() -> None:
    candidates = [
        Candidate("criterion:a", "Gives the station count"),
        Candidate("criterion:b", "Gives the ridership figure for 2025."),
        Candidate("criterion:c", "Gives the ridership figure for 2025"),
    ]
    match = best_duplicate("gives the RIDERSHIP figure for 2025", candidates)
    assert match is not None
    # b and c both normalise to the proposal's text: the first one wins the tie
    assert (match.ref, match.score, match.is_duplicate) == ("criterion:b", 1.0, True)
    near = best_duplicate("Names the main driver of growth", candidates)
    assert near is not None and not near.is_duplicate and near.score < DUPLICATE_THRESHOLD
    assert best_duplicate("anything", []) is None


# -- payload shapes and gold items (pure) --------------------------------------------------------


def test_payload_shapes_are_checked_per_framework() -> None:
    check_payload("cascade", "new_rubric", {"subtask": "s1", "dimension": "rat", "text": "x"}, None)
    with pytest.raises(PayloadError) as info:
        check_payload(
            "cascade", "new_rubric", {"subtask": "s1", "dimension": "zzz", "text": "x"}, None
        )
    assert info.value.field == "payload.dimension"
    with pytest.raises(PayloadError) as info:
        check_payload("cascade", "new_claim", {"subtask": "s1", "facts": "x"}, None)
    assert info.value.field == "payload.facts"
    with pytest.raises(PayloadError) as info:
        check_payload(
            "race", "new_rubric", {"dimension": "insight", "criterion": "x", "weight": -1}, None
        )
    assert info.value.field == "payload.weight"
    with pytest.raises(PayloadError) as info:
        check_payload("cascade", "alias", {"text": "x"}, None)  # an alias needs a target
    assert info.value.field == "target"
    with pytest.raises(PayloadError):
        check_payload("cascade", "new_claim", {"subtask": "s1", "fact": "x"}, "s1-ins")
    with pytest.raises(PayloadError):
        check_payload("cascade", "extra_evidence", {"note": "only a note"}, "s1-ins")
    # LiveDRBench: payloads as given; an alias may name its claim inside the payload
    check_payload("claims_f1", "new_claim", {"part": 0, "claim": "Gull Rock Light"}, None)
    check_payload("claims_f1", "alias", {"target": "g1.2", "key": None, "value": "Quell, T."}, None)
    with pytest.raises(PayloadError):
        check_payload("claims_f1", "new_claim", "", None)


def test_gold_items_in_each_benchmarks_shape() -> None:
    assert gold_item(
        "cascade", "new_rubric", {"text": "t", "dimension": "ins", "subtask": "s1"}
    ) == {"subtask": "s1", "dimension": "ins", "text": "t", "explanation": ""}
    assert gold_item("cascade", "new_claim", {"subtask": "s2", "fact": "F"}) == {
        "subtask": "s2",
        "fact": "F",
        "extract": "F",
    }
    item = gold_item("race", "new_rubric", {"criterion": "C", "dimension": "insight"})
    assert item == {"dimension": "insight", "criterion": "C", "explanation": "", "weight": None}
    assert list(item) == ["dimension", "criterion", "explanation", "weight"]
    claim = {"part": 0, "claim": {"name": "Glacier Wrens", "hours": 30}}
    assert gold_item("claims_f1", "new_claim", claim) == claim  # exactly as given
    assert gold_item("claims_f1", "new_claim", "Gull Rock Light") == "Gull Rock Light"
    assert gold_item("cascade", "alias", {"text": "4.2m trips"}) == {"text": "4.2m trips"}
    assert (effect("new_claim"), effect("new_rubric")) == (EFFECT_NEW, EFFECT_NEW)
    assert (effect("alias"), effect("extra_evidence")) == (EFFECT_ATTACHED, EFFECT_ATTACHED)
    assert payload_text("claims_f1", "new_claim", claim) == "Glacier Wrens 30"


# -- the workflow on the sample data -------------------------------------------------------------


@pytest.fixture
def db(sample_db: Path) -> sqlite3.Connection:
    return connect(sample_db)


def task(conn: sqlite3.Connection, ext: str) -> int:
    return int(conn.execute("SELECT id FROM task WHERE ext_id = ?", (ext,)).fetchone()[0])


def report(conn: sqlite3.Connection, ext: str) -> int:
    return int(conn.execute("SELECT id FROM report WHERE ext_id = ?", (ext,)).fetchone()[0])


def test_duplicates_of_the_ground_truth_and_of_other_proposals(db: sqlite3.Connection) -> None:
    t01 = task(db, "t01")
    text = db.execute(
        "SELECT text FROM criterion WHERE task_id = ? AND ext_id = 's2-ins'", (t01,)
    ).fetchone()[0]
    copy = propose(
        db,
        "ana",
        t01,
        None,
        "cascade",
        "new_rubric",
        {"subtask": "s2", "dimension": "ins", "text": text.upper() + " !!"},
        None,
        "copied",
    )
    assert copy.nearest is not None
    assert (copy.nearest.ref, copy.nearest.score) == ("criterion:s2-ins", 1.0)
    assert copy.proposal.duplicate_of == "criterion:s2-ins" and copy.proposal.similarity == 1.0
    fresh = propose(
        db,
        "ana",
        t01,
        None,
        "cascade",
        "new_rubric",
        {
            "subtask": "s3",
            "dimension": "ins",
            "text": "States whether each rate is fixed or variable",
        },
        None,
        "missing",
    )
    assert fresh.proposal.duplicate_of is None
    assert fresh.nearest is not None and not fresh.nearest.is_duplicate
    again = propose(
        db,
        "ben",
        t01,
        None,
        "cascade",
        "new_rubric",
        {
            "subtask": "s3",
            "dimension": "ins",
            "text": "States whether each rate is variable or fixed.",
        },
        None,
        "same idea",
    )
    assert again.proposal.duplicate_of == f"proposal:{fresh.proposal.uuid}"
    # A new claim is compared with its own report's extracted claims (cascade).
    fact = db.execute(
        "SELECT fact FROM claim WHERE report_id = ? AND ext_id = 'c7'",
        (report(db, "t01-atlas-dr"),),
    ).fetchone()[0]
    claim = propose(
        db,
        "ana",
        t01,
        report(db, "t01-atlas-dr"),
        "cascade",
        "new_claim",
        {"subtask": "s3", "fact": fact},
        (10, 20),
        "missed?",
    )
    assert claim.proposal.duplicate_of == "claim:t01-atlas-dr/c7"
    assert claim.proposal.span == (10, 20) and claim.proposal.report == "t01-atlas-dr"


def test_accept_reject_and_rescoring(db: sqlite3.Connection) -> None:
    t01 = task(db, "t01")
    made = propose(
        db,
        "ana",
        t01,
        None,
        "cascade",
        "new_rubric",
        {"subtask": "s3", "dimension": "ins", "text": "Says if rates are fixed"},
        None,
        "missing",
    ).proposal
    assert made.status == "proposed" and made.effect == EFFECT_NEW
    assert all(r.expansions == [] for r in load_inputs(db).values())
    accepted = accept(db, "maya", made.uuid[:8], "yes")  # a unique prefix works
    assert (accepted.status, accepted.decided_by, accepted.decision_rationale) == (
        "accepted",
        "maya",
        "yes",
    )
    inputs = load_inputs(db)
    with_expansion = {rid for rid, r in inputs.items() if r.expansions}
    assert with_expansion == {rid for rid, r in inputs.items() if r.task_id == t01}
    (expansion,) = inputs[next(iter(with_expansion))].expansions
    assert expansion == {
        "kind": "new_rubric",
        "framework": "cascade",
        "payload": {"subtask": "s3", "dimension": "ins", "text": "Says if rates are fixed"},
        "target": None,
        "proposal": made.uuid,
    }
    # Another reviewer disagreeing is a conflict, whatever the clocks say; in conflict the
    # proposal is not part of the ground truth.
    disputed = reject(db, "lead", made.uuid, "covered by s1-ins")
    assert disputed.status == "in conflict"
    assert all(r.expansions == [] for r in load_inputs(db).values())
    assert [p.uuid for p in proposals(db, t01, "in conflict")] == [made.uuid]
    rejected = reject(db, "maya", made.uuid, "agreed: covered")  # each stands by her newest
    assert rejected.status == "rejected"
    assert all(r.expansions == [] for r in load_inputs(db).values())
    assert [p.uuid for p in proposals(db, t01, "rejected")] == [made.uuid]
    assert proposals(db, status="accepted") == []
    with pytest.raises(ProposalError, match="no proposal"):
        get_proposal(db, "ffffffff")


def test_accepting_a_duplicate_needs_force(db: sqlite3.Connection) -> None:
    t01 = task(db, "t01")
    first = propose(
        db,
        "ana",
        t01,
        None,
        "cascade",
        "new_rubric",
        {"subtask": "s3", "dimension": "ins", "text": "Says if rates are fixed"},
        None,
        "a",
    ).proposal
    second = propose(
        db,
        "ben",
        t01,
        None,
        "cascade",
        "new_rubric",
        {"subtask": "s3", "dimension": "ins", "text": "says if RATES are fixed."},
        None,
        "b",
    ).proposal
    accept(db, "maya", first.uuid)
    with pytest.raises(ProposalError, match="duplicates proposal:"):
        accept(db, "maya", second.uuid)
    assert accept(db, "maya", second.uuid, force=True).status == "accepted"


def test_livedrbench_expansions_reach_the_scorer_and_keep_new_apart_from_alias(
    db: sqlite3.Connection,
) -> None:
    lights, prize = task(db, "lights-saltmere"), task(db, "halvard-prize")
    ibis = report(db, "lights-saltmere-ibis-dr")
    # A valid claim the ground truth lacks (ibis found it): a new item.
    new = propose(
        db,
        "ana",
        lights,
        ibis,
        "claims_f1",
        "new_claim",
        {"part": 0, "claim": "Saltmere Harbour Light"},
        None,
        "a listed light",
    )
    assert new.proposal.duplicate_of is None
    # The same light with punctuation is a duplicate of the ground truth's g1.1.
    dup = propose(
        db,
        "ana",
        lights,
        None,
        "claims_f1",
        "new_claim",
        {"part": 0, "claim": "Gannet Head Light."},
        None,
        "dup",
    )
    assert dup.proposal.duplicate_of == "criterion:g1.1"
    # Another spelling of an existing answer: an alias, its target named in the payload.
    alias = propose(
        db,
        "ben",
        prize,
        None,
        "claims_f1",
        "alias",
        {"target": "g1.2", "key": None, "value": "Quell, Tomas"},
        None,
        "name order",
    )
    assert alias.proposal.target == "criterion:g1.2" and alias.proposal.effect == EFFECT_ATTACHED
    accept(db, "maya", new.proposal.uuid)
    accept(db, "maya", alias.proposal.uuid)
    reject(db, "maya", dup.proposal.uuid)
    applied = dict(
        db.execute(
            f"SELECT r.ext_id, s.value FROM {all_scores(db)} s "
            "JOIN report r ON s.scope = 'report:' || r.id "
            "WHERE s.framework = 'claims_f1' AND s.metric = '_expansions' "
            "AND s.variant = 'adjudicated'"
        )
    )
    assert {k: v for k, v in applied.items() if v} == {
        f"{t}-{s}": 1.0
        for t in ("lights-saltmere", "halvard-prize")
        for s in ("heron-dr", "ibis-dr", "kite-search")
    }
    # The gold diff keeps the two apart and carries provenance.
    records = [r for r in gt_expansion_records(db)]
    header = records[0]
    assert (
        header["suite"],
        header["items"],
        header["new_items"],
        header["alias_or_evidence"],
        header["source_systems"],
    ) == ("livedrbench-sample-2026-11", 2, 1, 1, ["ibis-dr"])
    items = {r["kind"]: r for r in records[1:]}
    assert items["new_claim"]["item"] == {"part": 0, "claim": "Saltmere Harbour Light"}
    assert (items["new_claim"]["effect"], items["new_claim"]["provenance"]["system"]) == (
        EFFECT_NEW,
        "ibis-dr",
    )
    assert (items["alias"]["effect"], items["alias"]["target"]) == (
        EFFECT_ATTACHED,
        "criterion:g1.2",
    )


def test_alias_duplicates_are_only_other_aliases_of_the_same_item(db: sqlite3.Connection) -> None:
    t01 = task(db, "t01")
    a = propose(
        db,
        "ana",
        t01,
        None,
        "cascade",
        "alias",
        {"text": "rates for all five banks"},
        None,
        "x",
        target="s1-ins",
    )
    assert a.proposal.target == "criterion:s1-ins" and a.proposal.duplicate_of is None
    b = propose(
        db,
        "ben",
        t01,
        None,
        "cascade",
        "alias",
        {"text": "Rates for all 5 banks"},
        None,
        "x",
        target="criterion:s1-ins",
    )
    assert b.proposal.duplicate_of is None  # 5 vs five: numbers differ
    c = propose(
        db,
        "ben",
        t01,
        None,
        "cascade",
        "alias",
        {"text": "Rates, for all five banks"},
        None,
        "x",
        target="s1-ins",
    )
    assert c.proposal.duplicate_of == f"proposal:{a.proposal.uuid}"
    d = propose(
        db,
        "ben",
        t01,
        None,
        "cascade",
        "alias",
        {"text": "rates for all five banks"},
        None,
        "x",
        target="s2-ins",
    )  # another item: not a duplicate
    assert d.proposal.duplicate_of is None
    with pytest.raises(ProposalError, match="is not a criterion"):
        propose(
            db, "ben", t01, None, "cascade", "alias", {"text": "x"}, None, "x", target="s99-ins"
        )
    with pytest.raises(ProposalError, match="not 'race'"):
        propose(
            db,
            "ben",
            t01,
            None,
            "race",
            "new_rubric",
            {"dimension": "insight", "criterion": "x"},
            None,
            "x",
        )


def test_proposals_travel_in_the_review_log(db: sqlite3.Connection, tmp_path: Path) -> None:
    t01 = task(db, "t01")
    made = propose(
        db,
        "ana",
        t01,
        report(db, "t01-kestrel"),
        "cascade",
        "new_rubric",
        {"subtask": "s3", "dimension": "ins", "text": "Says if rates are fixed"},
        (5, 9),
        "missing",
    ).proposal
    accept(db, "maya", made.uuid, "yes")
    log = io.StringIO()
    write_log(db, log)
    other = connect(tmp_path / "other.db")
    build_demo(other, sample_data_dir())
    result = merge_events(other, read_events(io.StringIO(log.getvalue()), "log"), "log")
    assert result.proposals_added == 1
    (copy,) = proposals(other)
    assert (copy.uuid, copy.status, copy.decided_by, copy.payload, copy.span, copy.report) == (
        made.uuid,
        "accepted",
        "maya",
        made.payload,
        (5, 9),
        "t01-kestrel",
    )
    assert list(gt_expansion_records(other)) == list(gt_expansion_records(db))
    other.close()


def test_the_command_line_workflow(
    sample_db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = ["--db", str(sample_db), "--reviewer", "ana"]
    payload = json.dumps({"subtask": "s3", "dimension": "ins", "text": "Says if rates are fixed"})
    assert (
        main(
            [
                "propose",
                "t01",
                "--kind",
                "new_rubric",
                "--payload",
                payload,
                "--rationale",
                "missing",
                "--format",
                "json",
                *base,
            ]
        )
        == 0
    )
    uuid = json.loads(capsys.readouterr().out)["proposal"]["uuid"]
    path = tmp_path / "p.json"
    path.write_text(
        json.dumps({"subtask": "s3", "dimension": "ins", "text": "says if RATES are fixed"}),
        encoding="utf-8",
    )
    assert (
        main(
            [
                "propose",
                "dailyreport-sample-2026-11/t01",
                "--kind",
                "new_rubric",
                "--payload",
                f"@{path}",
                "--rationale",
                "dup",
                *base,
            ]
        )
        == 0
    )
    assert "DUPLICATE: proposal:" in capsys.readouterr().out
    assert main(["accept", uuid[:8], "--rationale", "ok", *base]) == 0
    assert "proposed → accepted" in capsys.readouterr().out
    assert main(["proposals", "--status", "accepted", "--format", "json", *base[:2]]) == 0
    assert [p["uuid"] for p in json.loads(capsys.readouterr().out)] == [uuid]
    out = tmp_path / "gold.jsonl"
    assert main(["export", "gt-expansions", "-o", str(out), *base[:2]]) == 0
    lines = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [line["type"] for line in lines] == ["gold_diff", "item"]
    assert (
        main(
            [
                "propose",
                "t01",
                "--kind",
                "new_rubric",
                "--payload",
                "{oops",
                "--rationale",
                "x",
                *base,
            ]
        )
        == 2
    )
    assert "payload" in capsys.readouterr().err
