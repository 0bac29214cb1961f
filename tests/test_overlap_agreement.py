"""Agreement on the overlap: reviewers against each other on the subjects handed to two or
more of them, with intervals, per kind and per reviewer, and where each overlap subject stands
(agreed, open, adjudicated); the estimates keep the judge's value while a disagreement is open.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reviewer.agreement import cohen_kappa, krippendorff_alpha
from reviewer.overlap import kind_on_overlap, reviewers_on_overlap
from reviewer.registry import get_kind
from store.assignments.agreement import overlap_agreement
from store.assignments.hand_out import Target, hand_out
from store.db.connection import connect
from store.reviewlog.events import ReviewLog
from tests.tui_helpers import make_app, ready, wait_for
from tui.cli import main


def _claim_scale():  # type: ignore[no-untyped-def]
    kind = get_kind("claim")
    assert kind is not None
    return kind.scale


def test_kind_statistics_are_those_of_the_full_data_with_intervals_around_them() -> None:
    values = ["correct", "incorrect", "unknown"]
    units = [{"ana": values[i % 3], "ben": values[(i + (i % 4 == 0)) % 3]} for i in range(40)] + [
        {"ana": "correct"}
    ]  # one reviewer alone: no agreement information
    stats = kind_on_overlap("claim", units, _claim_scale(), n_resamples=300, seed=1)
    assert stats.n_items == 40 and stats.reviewers == ("ana", "ben")
    rows = [[u["ana"], u["ben"]] for u in units[:40]]
    assert stats.alpha.estimate == pytest.approx(
        krippendorff_alpha(rows, "nominal", values).value  # type: ignore[arg-type]
    )
    assert stats.alpha.lower is not None and stats.alpha.upper is not None
    assert stats.alpha.lower <= stats.alpha.estimate <= stats.alpha.upper
    (pair,) = stats.pairs
    kappa = cohen_kappa([r[0] for r in rows], [r[1] for r in rows], values).value
    assert pair.kappa is not None and pair.kappa.estimate == pytest.approx(kappa)
    assert pair.n == 40 and pair.agreement == pytest.approx(30 / 40)
    assert stats.ac1 is not None and stats.ac1.lower is not None


def test_each_reviewer_is_measured_against_co_reviewers_and_adjudications() -> None:
    units = [
        {"ana": "a", "ben": "a"},
        {"ana": "a", "ben": "b"},
        {"ana": "b", "ben": "b", "cy": "a"},
    ]
    rows = reviewers_on_overlap(units, [None, "b", None])
    by = {r.reviewer: r for r in rows}
    assert (by["ana"].decided, by["ana"].agreed) == (3, 1)
    assert (by["ben"].decided, by["ben"].agreed) == (3, 1)
    assert (by["ana"].adjudicated, by["ana"].matched_adjudication) == (1, 0)
    assert (by["ben"].adjudicated, by["ben"].matched_adjudication) == (1, 1)
    assert (by["cy"].decided, by["cy"].agreed) == (1, 0)


def _overlap_db(db: Path) -> tuple[list[int], dict[str, ReviewLog]]:
    """Four claims handed to ana and ben both; judgment ids in target order."""
    conn = connect(db)
    rows = conn.execute(
        "SELECT s.target, s.report_id, j.id FROM subject s JOIN judgment j "
        "ON j.subject_id = s.id AND j.current = 1 WHERE s.kind = 'claim' "
        "AND j.value = 'correct' ORDER BY s.id LIMIT 4"
    ).fetchall()
    hand_out(conn, ReviewLog(conn, "lead"), [Target(t, r) for t, r, _ in rows], ["ana", "ben"], 1.0)
    return [int(j) for _, _, j in rows], {
        name: ReviewLog(conn, name) for name in ("ana", "ben", "cy", "lead")
    }


def test_the_overlap_says_what_agreed_what_is_open_and_what_was_adjudicated(
    sample_db: Path,
) -> None:
    ids, logs = _overlap_db(sample_db)
    conn = logs["ana"].conn
    assert overlap_agreement(conn).pending == 4
    for jid in ids:
        logs["ana"].confirm(jid)
    logs["ben"].confirm(ids[0])
    logs["ben"].decide(ids[1], "incorrect", "the page says 11")  # open
    logs["ben"].decide(ids[2], "incorrect", "no")
    logs["lead"].decide(ids[2], "incorrect", "ben is right", adjudicate=True)
    logs["cy"].confirm(ids[0])  # not assigned: left out
    report = overlap_agreement(conn, n_resamples=100)
    assert (report.subjects, report.pending, report.agreed) == (4, 1, 1)
    assert (report.open, report.adjudicated) == (1, 1)
    assert len(report.open_targets) == 1
    (claims,) = report.kinds
    assert claims.reviewers == ("ana", "ben") and claims.n_items == 3
    by = {r.reviewer: r for r in report.reviewers}
    assert "cy" not in by
    assert (by["ben"].adjudicated, by["ben"].matched_adjudication) == (1, 1)
    assert (by["ana"].adjudicated, by["ana"].matched_adjudication) == (1, 0)
    # The open disagreement is not a human label: its verdict keeps the judge's value.
    status = conn.execute(
        "SELECT d.status FROM decision d JOIN judgment j ON j.subject_id = d.subject_id "
        "WHERE j.id = ?",
        (ids[1],),
    ).fetchone()[0]
    assert status == "conflict"


def test_gavel_agreement_overlap(sample_db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = str(sample_db)
    assert main(["agreement", "--db", db, "--overlap"]) == 1
    assert "nothing is on the overlap" in capsys.readouterr().err
    ids, logs = _overlap_db(sample_db)
    for jid in ids:
        logs["ana"].confirm(jid)
        logs["ben"].confirm(jid)
    logs["ben"].decide(ids[1], "incorrect", "the page says 11")
    assert main(["agreement", "--db", db, "--overlap", "--resamples", "50"]) == 0
    out = capsys.readouterr().out
    assert "Overlap: 4 subjects" in out and "1 open" in out and "still open" in out
    # Four shared items: the coefficients are shown, but no interval that would look firm.
    assert "too few items for an interval: 4" in " ".join(out.split())
    assert main(["agreement", "--db", db, "--overlap", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["open"] == 1 and data["kinds"][0]["n_items"] == 4
    assert main(["agreement", "--db", db, "--format", "json", "--resamples", "50"]) == 0
    assert json.loads(capsys.readouterr().out)["overlap"]["subjects"] == 4


async def test_the_agreement_screen_shows_the_overlap(sample_db: Path) -> None:
    from tui.screens.agreement import AgreementScreen
    from tui.widgets.text_view import TextView

    ids, logs = _overlap_db(sample_db)
    for jid in ids:
        logs["ana"].confirm(jid)
        logs["ben"].confirm(jid)
    app = make_app(sample_db)
    async with app.run_test(size=(170, 48)) as pilot:
        await ready(pilot)
        await pilot.press("g")
        await wait_for(pilot, lambda: isinstance(app.screen, AgreementScreen))
        view = app.screen.query_one(TextView)
        await wait_for(pilot, lambda: "Overlap: 4 subjects" in view.plain, limit=60)
        assert "Pairs on the overlap" in view.plain


def test_an_interval_needs_enough_shared_items() -> None:
    from reviewer.agreement import BootstrapCI
    from tui.render.overlap import MIN_ITEMS, ci_text

    ci = BootstrapCI(0.71, 0.55, 0.84, 0.95, 1000, 1000)
    assert ci_text(ci, MIN_ITEMS) == "0.710 [0.550, 0.840]"
    assert ci_text(ci, MIN_ITEMS - 1) == f"0.710 [too few items for an interval: {MIN_ITEMS - 1}]"
    assert ci_text(ci) == "0.710 [0.550, 0.840]"
