"""DeepResearch Bench II in review: the suspicion rules on hand-made verdicts, the blocked
reference beside a verdict, and the evidence marked in the report text."""

from __future__ import annotations

from typing import Any

from reviewer.frameworks.deepresearch_bench_2.grading import (
    GRADING,
    blocked_mentions,
    context,
    fragments,
    missing_fragments,
    normalized,
)
from reviewer.grading import ContextItem, Criterion, Evidence, Flag, Verdict

REPORT = (
    "# Tidal power in Kestrel Bay\n\n"
    "The **barrage** has a capacity of 40 MW. It opened in 2021 after a decade of planning [1].\n"
    "Costs reached $90m, according to the council [2].\n\n"
    "## References\n"
    "[1] Council minutes https://council.example/minutes\n"
    "[2] Kestrel Bay Tidal Review https://example.org/kestrel-review\n"
)
BLOCKED = {
    "title": "Kestrel Bay Tidal Review",
    "authors": ["A. Quill"],
    "urls": ["https://www.example.org/kestrel-review/"],
}


def verdict(
    subject: int, value: str, evidence: str = "", reason: str = "", criterion: str = "ir-001"
) -> Verdict:
    return Verdict(
        subject,
        subject,
        "drb2_item",
        value,
        explanation=reason,
        evidence=evidence,
        criterion=criterion,
    )


def flags_of(
    *verdicts: Verdict, text: str = REPORT, blocked: Any = BLOCKED, **crit: str
) -> list[Flag]:
    evidence = Evidence(
        "alpha:idx-1",
        text=text,
        task_metadata={"blocked": blocked},
        criteria={cid: Criterion(cid, "info_recall", t) for cid, t in crit.items()},
        references={1: "https://council.example/minutes", 2: "https://example.org/kestrel-review"},
        verdicts=list(verdicts),
    )
    return [f for rule in GRADING.rules for f in rule(evidence)]


def rules(found: list[Flag]) -> dict[int, set[str]]:
    out: dict[int, set[str]] = {}
    for f in found:
        out.setdefault(f.subject, set()).add(f.rule)
    return out


def test_evidence_is_looked_for_through_markdown_and_ellipses() -> None:
    assert fragments('"The barrage has a capacity of 40 MW." ... It opened in 2021') == [
        "The barrage has a capacity of 40 MW",
        "It opened in 2021",
    ]
    assert fragments("40 MW") == []  # too short to prove anything
    missing, total = missing_fragments(normalized(REPORT), "The barrage has a capacity of 40 MW.")
    assert (missing, total) == ([], 1)  # found although the report bolds a word
    missing, total = missing_fragments(normalized(REPORT), "It opened in 2019.\nCosts reached $90m")
    assert missing == ["It opened in 2019"] and total == 2


def test_a_score_quoting_nothing_the_report_holds_is_flagged() -> None:
    found = rules(
        flags_of(
            verdict(1, "1", "The barrage has a capacity of 40 MW."),  # fine
            verdict(2, "1", "The tidal lagoon produces 300 GWh a year."),  # invented
            verdict(3, "1"),  # nothing quoted
            verdict(4, "1", "It opened in 2021 after a decade. The lagoon is 9 km long."),
            verdict(5, "0", "Costs reached $90m, according to the council"),  # 0 yet quoted
            verdict(6, "0"),  # fine
        )
    )
    assert 1 not in found and 6 not in found
    assert found[2] == {"evidence"} and found[3] == {"evidence"} and found[5] == {"evidence"}
    weights = {
        f.subject: f.weight
        for f in flags_of(
            verdict(4, "1", "It opened in 2021 after a decade. The lagoon is 9 km long.")
        )
    }
    assert weights[4] < 0.7  # one of two sentences found: a weaker flag


def test_a_reason_describing_another_score_is_flagged() -> None:
    found = flags_of(
        verdict(
            1, "1", "The barrage has a capacity of 40 MW.", "The article does not mention capacity."
        ),
        verdict(2, "0", "", "The article does not mention the cost."),  # fine
        verdict(3, "0", "", "The evidence cites the blocked reference."),
        verdict(
            4, "-1", "Costs reached $90m, according to the council [2].", "Not mentioned anywhere."
        ),
    )
    by_subject = {f.subject: f for f in found if f.rule == "reason"}
    assert set(by_subject) == {1, 3, 4}
    assert "score 0" in by_subject[1].reason and "score -1" in by_subject[3].reason


def test_minus_one_needs_the_blocked_reference_in_the_report() -> None:
    cited = verdict(1, "-1", "Costs reached $90m, according to the council [2].")
    assert "blocked" not in rules(flags_of(cited)).get(1, set())
    assert blocked_mentions(REPORT, BLOCKED) == [BLOCKED["urls"][0], BLOCKED["title"]]
    clean = REPORT.split("[2] Kestrel")[0]
    found = [f for f in flags_of(cited, text=clean) if f.rule == "blocked"]
    assert len(found) == 1 and found[0].weight == 1.0 and "names no URL or title" in found[0].reason
    found = [f for f in flags_of(cited, blocked=None) if f.rule == "blocked"]
    assert "blocks no reference" in found[0].reason


def test_a_one_whose_evidence_cites_the_blocked_reference_is_flagged() -> None:
    found = flags_of(
        verdict(1, "1", "Costs reached $90m, according to the council [2]."),
        verdict(2, "1", "It opened in 2021 after a decade of planning [1]."),
    )
    blocked = [f for f in found if f.rule == "blocked"]
    assert [f.subject for f in blocked] == [1] and "[2]" in blocked[0].reason


def test_a_satisfied_item_without_its_figures_is_weakly_flagged() -> None:
    found = flags_of(
        verdict(1, "1", "The barrage has a capacity of 40 MW.", criterion="a"),
        verdict(2, "1", "The barrage has a capacity of 40 MW.", criterion="b"),
        a="States a capacity of 40 MW.",
        b="States a capacity of 45 MW opened in 2021.",
    )
    figure = [f for f in found if f.rule == "figure"]
    assert [f.subject for f in figure] == [2] and "45, 2021" in figure[0].reason
    assert figure[0].weight < 0.5


def test_the_blocked_reference_is_shown_beside_a_verdict() -> None:
    item = ContextItem("drb2_item", "1", task_metadata={"blocked": BLOCKED})
    [(title, body)] = context(item)
    assert title == "Blocked reference"
    assert "Kestrel Bay Tidal Review" in body and "A. Quill" in body and "example.org" in body
    assert "blocks no reference" in context(ContextItem("drb2_item", "1"))[0][1]
    assert context(ContextItem("ins", "1")) == []


def test_the_samples_listed_mistakes_are_verdicts_and_the_rules_reach_most(tmp_path: Any) -> None:
    from pathlib import Path

    from reviewer.formats.native import iter_records
    from reviewer.planted import read_planted_path
    from store.db.connection import connect
    from store.imports.loader import import_records
    from store.scores.cache import rebuild_scores
    from store.triage.review_order import measure

    sample = Path(__file__).resolve().parent.parent / "sample_data" / "drb2"
    conn = connect(tmp_path / "sample.db")
    suite, records = iter_records(sample)
    import_records(conn, suite, records, "sample-drb2")
    rebuild_scores(conn)
    planted = read_planted_path(sample / "MISTAKES.md")
    figures = measure(conn, suite.id, planted, 20)
    conn.close()
    assert figures.suspicion.total == len(planted) == 6  # every listed mistake is a verdict
    # Five of the six are flagged (the sixth, a 0 that quotes nothing, only reading finds);
    # one more flag is the weak figure rule on a right verdict.
    assert figures.precision.right == 5 and figures.precision.flagged == 6
    assert figures.suspicion.reached == 4  # a 10% budget: 4 of 42 verdicts, all mistakes


def test_where_the_report_names_the_blocked_reference_is_marked() -> None:
    from reviewer.frameworks.deepresearch_bench_2.grading import blocked_marks

    marks = blocked_marks(REPORT, {"blocked": BLOCKED})
    named = [REPORT[a:b] for a, b in marks]
    # The title and the URL (the blocked one is written with www. and a trailing slash).
    assert named == ["Kestrel Bay Tidal Review", "https://example.org/kestrel-review"]
    assert blocked_marks(REPORT, {"blocked": None}) == []
    assert blocked_marks("nothing here", {"blocked": BLOCKED}) == []
    assert GRADING.marks is blocked_marks
