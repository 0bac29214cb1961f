"""The two level checks of reviewer.levels on hand-written rubrics and explanations.

The sample's flags (tests/test_suspicion.py) pin the checks end to end; these pin their parts:
which clauses count, the exclusive "only" condition, quoted phrases, and the count an
explanation states or names. Each expected value was read off the checks as they stood before
an explanation came to be read once for both (the figures they give must not move).
"""

from __future__ import annotations

import pytest

from reviewer.levels import (
    CountMatch,
    LevelMatch,
    affirmative_clauses,
    counted_level,
    explained_count,
    quoted_level,
)

BANKS = {
    "1": "a rate for every bank, with Brightvault's tier shown",
    "0.5": "rates for three or four banks, or a tiered rate reported as a flat rate",
    "0": "fewer than three rates",
}
ITEMS = ("Lumen Bank", "Brightvault", "Nordpine Direct", "Cobalt Savings", "Fennick")
ORDER = ("0", "0.5", "1")
FLAT = "Rates are given for Lumen and Brightvault only; the tiered rate is reported as a flat rate."
ALL_FIVE = "All five banks are covered with a rate each, and Brightvault's tier is shown."


def test_clauses_split_at_contrasts_and_sentence_ends_and_drop_negations() -> None:
    text = (
        "A is there, but B is missing; C is listed. However D; E, or F although G "
        "whereas H while I though J."
    )
    assert affirmative_clauses(text) == [
        "A is there",
        " C is listed",
        "However D",
        " E",
        "F",
        "G",
        "H",
        "I",
        "J.",
    ]


def test_an_explanation_in_another_levels_words_is_named_with_what_it_shares() -> None:
    expected = LevelMatch(
        "0.5", 8.0, 1.0, ("flat", "report", "flat rat", "rat report", "report flat")
    )
    assert quoted_level(FLAT, BANKS, "1") == expected
    assert quoted_level(FLAT, BANKS, "0.5") is None
    # The count already read the first condition of each level: the awarded 1 keeps no word.
    assert quoted_level(FLAT, BANKS, "1", skip_counts=True) == LevelMatch(
        "0.5", 8.0, 0.0, expected.matched
    )


def test_a_quote_of_the_top_level_is_not_seen_once_its_count_is_skipped() -> None:
    match = LevelMatch("1", 6.0, 0.0, ("brightvault", "shown", "brightvault tier", "tier shown"))
    assert quoted_level(ALL_FIVE, BANKS, "0.5") == match
    assert quoted_level(ALL_FIVE, BANKS, "1") is None
    assert quoted_level(ALL_FIVE, BANKS, "0.5", skip_counts=True) is None


def test_an_exclusive_condition_is_met_only_by_a_clause_that_says_only() -> None:
    levels = {
        "1": "the 'about' phrase is used and amounts are exact",
        "0.5": "only percentage changes are given",
        "0": "no figures",
    }
    only = LevelMatch("0.5", 4.0, 0.0, ("chang", "percentag", "percentag chang"))
    assert quoted_level("Only percentage changes are given.", levels, "1") == only
    # Without "only" the 0.5 condition is not met; the quoted 'about' points at 1.
    about = LevelMatch("1", 3.0, 0.0, ("amount", "'about'"))
    said = "Percentage changes are given, amounts are about right."
    assert quoted_level(said, levels, "1") is None
    assert quoted_level(said, levels, "0.5") == about
    assert quoted_level("It says 'about' the amounts.", levels, "0") == about


def test_negated_clauses_say_nothing_about_the_level() -> None:
    said = "Only percentage changes are given, not the amounts."
    assert all(quoted_level(said, BANKS, code) is None for code in BANKS)
    assert counted_level(said, BANKS, "1", [ITEMS], ORDER) is None


@pytest.mark.parametrize(
    ("explanation", "awarded", "level", "count"),
    [
        (FLAT, "1", "0", 2),  # two banks named: fewer than three
        (FLAT, "0", "0", 2),
        (ALL_FIVE, "1", "1", 5),
        # Less than the count allows, but 0.5 has another condition the judge may have used.
        (ALL_FIVE, "0.5", "0.5", 5),
        (ALL_FIVE, "0", "1", 5),
        ("Rates for three banks; Nordpine Direct and Fennick are missing.", "0.5", "0", 1),
    ],
)
def test_the_count_an_explanation_gives_implies_a_level(
    explanation: str, awarded: str, level: str, count: int
) -> None:
    assert counted_level(explanation, BANKS, awarded, [ITEMS], ORDER) == CountMatch(
        level, count, 5, ITEMS
    )


def test_a_stated_number_or_every_wins_over_the_items_named() -> None:
    assert explained_count("Eight concrete tips are listed; none is wrong.", (), 10) == 8
    assert explained_count("Each bank is listed.", ("a", "b", "c"), 3) == 3
    named = "Lumen and Cobalt are covered but Fennick is missing."
    assert explained_count(named, ITEMS, 5) == 2
