"""Citation markers and reference lists (DailyReport App. C citation forms)."""

from __future__ import annotations

from reviewer.citations import (
    body_end,
    citations_near,
    cited_indices,
    find_markers,
    locate,
    parse_references,
)


def test_every_citation_form_of_the_paper() -> None:
    text = (
        "divided society into 7 classes[15] or [15][16]; linked [(15)](https://www.example.com)"
        "; Lefit stores break even [citation:53]; browsing [15†L10] and [4, 6] [7-9]"
    )
    assert [m.indices for m in find_markers(text)] == [
        (15,),
        (15,),
        (16,),
        (15,),
        (53,),
        (15,),
        (4, 6),
        (7, 8, 9),
    ]
    assert find_markers(text)[3].url == "https://www.example.com"
    assert cited_indices(text) == (15, 16, 53, 4, 6, 7, 8, 9)


def test_plain_brackets_that_are_not_citations() -> None:
    assert find_markers("see [the appendix] and [x] and [] and [12a]") == []


def test_references_section_in_the_papers_format() -> None:
    md = (
        "# Report\n\nText [1].\n\n## References\n"
        "[1] Farewell to the cash-burning era_Financial News http://example.com/article1\n"
        "[2] China's fitness industry report 2025_Reuters https://example.com/article2\n"
        "3. [A linked title](https://z.example/q)\n"
        "- [4] Listed entry https://w.example/4.\n\n## Appendix\n[5] not a reference\n"
    )
    refs = parse_references(md)
    assert [(r.index, r.title, r.url) for r in refs] == [
        (1, "Farewell to the cash-burning era_Financial News", "http://example.com/article1"),
        (2, "China's fitness industry report 2025_Reuters", "https://example.com/article2"),
        (3, "A linked title", "https://z.example/q"),
        (4, "Listed entry", "https://w.example/4"),
    ]
    assert md[body_end(md) :].startswith("## References")
    assert parse_references("# No references here\n[1] a line") == []


def test_citations_right_after_a_claim_belong_to_it() -> None:
    md = "The three platforms invested 80 billion yuan [63][64]. Next sentence [2]."
    span = locate(md, "The three platforms invested 80 billion yuan")
    assert span == (0, 44)
    assert citations_near(md, *span) == (63, 64)
    assert citations_near(md, 0, 10) == ()


def test_locate_tolerates_whitespace_differences() -> None:
    md = "A claim that\nwraps   over lines [1]."
    expected_end = len("A claim that\nwraps   over lines")
    assert locate(md, "A claim that wraps over lines") == (0, expected_end)
    assert locate(md, "absent text") is None
    assert locate(md, "") is None


def test_the_last_references_heading_counts_wherever_hashes_are() -> None:
    text = (
        "# Report\n\nC# and F# are languages; see #3.\n"
        "## References\n[1] Early list https://a.example\n\n"
        "Text in between # with a hash ## References inline\n"
        "  ### Sources :  \n1. Final list https://b.example\n"
        "#### Appendix #\n[2] Not a reference https://c.example\n"
        "## References #\n"  # (a trailing '#' is not a heading of the section)
    )
    refs = parse_references(text)
    assert [(r.index, r.url) for r in refs] == [(1, "https://b.example")]
    assert body_end(text) == text.index("  ### Sources")
    assert parse_references("no heading # here\n[1] x https://d.example") == []
    assert body_end("# Title only") == len("# Title only")
