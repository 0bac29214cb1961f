"""Does a judge's explanation describe the level it awarded? Two checks on rubric level texts.

A rubric verdict comes with an explanation, and rubric criteria describe each level ("1: a
rate for every bank … 0.5: rates for three or four banks, or a tiered rate reported as a flat
rate … 0: fewer than three rates"). A judge that awards 1 while writing "presented as a flat
rate" has described the 0.5 level in its own words: that is worth a reviewer's look.

**Quotes and paraphrases** (:func:`quoted_level`). Each level's text is reduced to content
words (lower case, stop words dropped, a light suffix stemmer, number words as digits) and
word pairs. A level's *distinctive* words and pairs are those no other level of the same
criterion uses. The explanation scores one point per distinctive word of a level it contains
and two per distinctive pair; the best-scoring level is what the explanation describes when it
scores at least 2 and more than the awarded level does.

**Counts** (:func:`counted_level`). Many levels count items ("all five", "two to four banks",
"at least three of the four", "one or none"). The items are the first enumerated list of the
criterion text (else of the task's prompt) with as many entries as the levels count up to; the
explanation's count is the items it names in its clauses that do not negate ("… are listed",
not "… is missing"), or a number it states ("each of the five banks"). The level whose range
holds that count is the level the explanation describes; a judge awarding more than that, or
less without another condition of the lower level to explain it, contradicts itself.

Both are heuristics: the precision measured on the sample is in the README (section on
suspicion flags) and is printed by ``gavel bench``.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

NUMBER_WORDS = {
    "none": 0,
    "zero": 0,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
}

STOP = frozenset(
    """
    a an the and or of to in on at by for from with as is are was were be been being it its
    this that these those there their they them he she his her we our you your i me my which
    who whom what when where how than then so such do does did done has have had can could
    should would may might must will shall if also into onto over under about per each any
    all every some only more most less least very just both either neither other others
    another same own report reports judge judged section sections gives give given giving
    state stated states statement includes include including whether one
    """.split()  # noqa: SIM905 - a word list reads better as text
)
"""Function words and rubric scaffolding: they say nothing about which level is meant."""

_NEGATIONS = (
    "no",
    "not",
    "never",
    "missing",
    "absent",
    "without",
    "lacks",
    "lack",
    "omits",
    "omitted",
    "none",
    "nothing",
    "neither",
    "nor",
    "fails",
    "vague",
    "vaguely",
    "guessed",
    "excluded",
    "excludes",
    "ignores",
    "ignored",
    "false",
    "wrong",
    "incorrect",
    "unsupported",
    "na",
    "cannot",
    "isn",
    "doesn",
    "don",
)

_WORD = re.compile(r"[a-z0-9]+(?:[.,][0-9]+)*")
_LEVEL_MARK = re.compile(r"(?:^|(?<=[.;]))\s*(1|0\.5|0)\s*(?::|\s+if\b|\s*=)", re.IGNORECASE)


@functools.lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """A light suffix stemmer: enough to meet 'tiered' with 'tier' and 'named' with 'name'."""
    if word.isdigit() or len(word) <= 3:
        return word
    word = _singular(word)
    for suffix in ("ing", "ed"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            break
    if word.endswith("e") and len(word) > 3:
        word = word[:-1]
    return word


def _singular(word: str) -> str:
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("ches", "shes", "sses", "xes", "zes")):
        return word[:-2]
    if word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


_NEGATIVE = frozenset(stem(w) for w in _NEGATIONS)


def words(text: str) -> list[str]:
    """Lower-cased words of ``text`` with number words as digits, in order (possessive 's and
    'n/a' folded so they do not read as words of their own)."""
    text = text.lower().replace("’", "'").replace("'s", "").replace("n/a", "na")
    found = _WORD.findall(text)
    return list(map(_AS_DIGITS.get, found, found))


_AS_DIGITS = {word: str(number) for word, number in NUMBER_WORDS.items()}
"""A number word's digits (a word looked up with itself as the default stays itself)."""


@functools.lru_cache(maxsize=1024)
def _text_words(text: str) -> tuple[str, ...]:
    """:func:`words` of a rubric's text, kept: its level texts are read by both checks, for
    every item total they may count."""
    return tuple(words(text))


def content(text: str) -> list[str]:
    """Stemmed content words of ``text``, in order (stop words dropped)."""
    return [stem(w) for w in words(text) if w not in STOP]


def pairs(tokens: Sequence[str]) -> set[tuple[str, str]]:
    return set(itertools.pairwise(tokens))


_CLAUSE = re.compile(
    r"(?=[;,.\s])(?:;|,?\s+(?:but|although|though|whereas|while)\s+|,?\s+however\b|,\s+or\s+|\.\s+)",
    re.IGNORECASE,
)
"""Where a clause ends: ';', 'but', 'although', ', or', a sentence end … Every separator starts
with one of the characters the lookahead names, which lets the scan skip the others."""


@functools.lru_cache(maxsize=16384)
def negates(clause: str) -> bool:
    return bool(_NEGATIVE & {stem(w) for w in words(clause)})


def affirmative_clauses(text: str) -> list[str]:
    """The clauses of a text that do not negate (split at ';', 'but', 'although', ', or',
    sentence ends …; a clause with 'no', 'not', 'missing', 'without', 'wrong' … negates):
    what the text says is there, not what it says is missing."""
    return [c for c in _CLAUSE.split(text) if c and c.strip() and not negates(c)]


@dataclass(frozen=True, slots=True)
class _Reading:
    """An explanation as both checks read it, read once: the count and the quote test each
    look at it, and the words of its clauses are the whole of the work."""

    clauses: tuple[tuple[str, ...], ...]
    """The words of each affirmative clause."""
    counts: tuple[tuple[int | None, frozenset[str]], ...]
    """Per clause: the count it states (-1: every item; None: none) and its words' stems."""
    said: frozenset[str]
    """Content stems (no numbers) of every clause."""
    said_pairs: frozenset[tuple[str, str]]
    only: frozenset[str]
    """Content stems of the clauses that say "only" (what an exclusive condition may meet)."""
    only_pairs: frozenset[tuple[str, str]]


def _stated(raw: Sequence[str]) -> int | None:
    """The count a clause states: "all five", "each of the 4" (the number), "every bank" (-1,
    every item), or a number it starts with ("Eight concrete tips")."""
    for i, w in enumerate(raw):
        if w in ("all", "every", "each"):
            found = _count_after(raw, i)
            if found is not None:
                return found
            break
    if raw and raw[0].isdigit() and 1 < int(raw[0]) <= 12:
        return int(raw[0])
    return None


def _count_after(raw: Sequence[str], i: int) -> int | None:
    """After 'all', 'every' or 'each' at ``i``: the number that follows, else -1 (every item)
    for 'every' and 'each', else None."""
    ahead = [x for x in raw[i + 1 : i + 4] if x not in ("of", "the")]
    if ahead and ahead[0].isdigit():
        return int(ahead[0])
    return -1 if raw[i] in ("every", "each") else None


def _affirmative_read(text: str) -> list[tuple[tuple[str, ...], list[str]]]:
    """The words and their stems of each clause of ``text`` that does not negate (the clauses
    :func:`affirmative_clauses` keeps), each word read and stemmed once."""
    out = []
    for clause in _CLAUSE.split(text):
        if not clause or not clause.strip():
            continue
        raw = tuple(words(clause))
        stems = list(map(stem, raw))
        if _NEGATIVE.isdisjoint(stems):
            out.append((raw, stems))
    return out


def _content_of(raw: Sequence[str], stems: Sequence[str]) -> list[str]:
    """A clause's content stems without numbers (stop words dropped)."""
    return [t for w, t in zip(raw, stems, strict=True) if w not in STOP and not t.isdigit()]


@functools.lru_cache(maxsize=256)
def _read(text: str) -> _Reading:
    """The explanation's affirmative clauses, each split into words and stemmed once."""
    clauses = []
    counts = []
    said: set[str] = set()
    said_pairs: set[tuple[str, str]] = set()
    only: set[str] = set()
    only_pairs: set[tuple[str, str]] = set()
    for raw, stems in _affirmative_read(text):
        clauses.append(raw)
        counts.append((_stated(raw), frozenset(stems)))
        toks = _content_of(raw, stems)
        said.update(toks)
        said_pairs.update(itertools.pairwise(toks))
        if "only" in raw:
            only.update(toks)
            only_pairs.update(itertools.pairwise(toks))
    return _Reading(
        tuple(clauses),
        tuple(counts),
        frozenset(said),
        frozenset(said_pairs),
        frozenset(only),
        frozenset(only_pairs),
    )


def parse_levels(explanation: str, codes: Sequence[str] = ("1", "0.5", "0")) -> dict[str, str]:
    """Level texts written as ``1: … 0.5: … 0: …`` or ``1 if …; 0.5 if …; 0 if …``.

    Only codes in ``codes`` count as level markers; a text that names none gives ``{}``.
    """
    return dict(_parse_levels(explanation, tuple(codes)))


@functools.lru_cache(maxsize=4096)
def _parse_levels(explanation: str, codes: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    marks = [m for m in _LEVEL_MARK.finditer(explanation) if m.group(1) in codes]
    out: dict[str, str] = {}
    for i, mark in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else len(explanation)
        text = explanation[mark.end() : end].strip(" .;")
        if text and mark.group(1) not in out:
            out[mark.group(1)] = text
    return tuple(out.items())


@dataclass(frozen=True, slots=True)
class LevelMatch:
    level: str
    score: float
    own: float
    matched: tuple[str, ...]
    """The distinctive words (and word pairs, joined by a space) the explanation shares."""


def quoted_level(
    explanation: str, levels: Mapping[str, str], awarded: str, skip_counts: bool = False
) -> LevelMatch | None:
    """The level other than ``awarded`` whose distinctive words the explanation's affirmative
    clauses use, if they use them clearly more than the awarded level's (see the module
    docstring).

    Negating clauses — "no specific points are flagged" in an explanation, "amounts without a
    peak/off-peak distinction" in a level — describe what is missing, and numbers are
    thresholds more often than descriptions: both are left out. A level condition that starts
    with "only" ("only percentage changes are given") is exclusive: it is met only by an
    explanation clause that says "only" too. The awarded level must have a text of its own;
    ``skip_counts`` leaves out each level's first condition when a count already settled it.
    """
    if awarded not in levels or len(levels) < 2 or not explanation.strip():
        return None
    return _quoted_in(
        _prepared_levels(tuple(levels.items()), skip_counts), _read(explanation), awarded
    )


def _quoted_in(
    prepared: dict[str, _LevelWords], reading: _Reading, awarded: str
) -> LevelMatch | None:
    """:func:`quoted_level` on a prepared rubric and a read explanation (``awarded`` is one
    of the rubric's levels, and another exists)."""
    best, best_score, own = "", -1.0, 0.0
    for code, level in prepared.items():
        words, pairs_, quotes = _found(level, reading)
        # A word scores one, a word pair or a quoted phrase two.
        score = len(words) + 2.0 * len(pairs_) + 2.0 * len(quotes)
        if code == awarded:
            own = score
        elif score > best_score:  # (the first of equals, as max() picks)
            best, best_score = code, score
    if best_score >= 2 and best_score > own:
        words, pairs_, quotes = _found(prepared[best], reading)
        matched = (
            tuple(sorted(words))
            + tuple(sorted(" ".join(p) for p in pairs_))
            + tuple(f"'{' '.join(q)}'" for q in sorted(quotes))
        )
        return LevelMatch(best, best_score, own, matched)
    return None


Found = tuple[AbstractSet[str], AbstractSet[tuple[str, str]], AbstractSet[tuple[str, ...]]]
"""A level's distinctive words, word pairs and quoted phrases an explanation uses."""


def _found(level: _LevelWords, reading: _Reading) -> Found:
    """What of one level an explanation uses: its open conditions' words in any clause, its
    exclusive ("only …") conditions' words in a clause that says "only" too."""
    words = level.words & reading.said
    if level.only_words:
        words = words | (level.only_words & reading.only)
    pairs_ = level.pairs & reading.said_pairs
    if level.only_pairs:
        pairs_ = pairs_ | (level.only_pairs & reading.only_pairs)
    if not level.quotes:
        return words, pairs_, frozenset()
    return words, pairs_, {q for q in level.quotes if _contains(reading.clauses, q)}


@functools.lru_cache(maxsize=256)
def _level_tables(
    items: tuple[tuple[str, str], ...],
) -> dict[str, tuple[frozenset[str], frozenset[tuple[str, str]]]]:
    """Per level code: the words no other level's text uses, and the word pairs other levels'
    texts use (a rubric's levels are the same for every report judged on it: computed once)."""
    flat: dict[str, set[str]] = {}
    grams: dict[str, set[tuple[str, str]]] = {}
    for code, text in items:
        flat[code], grams[code] = _words_and_pairs(_conditions(text, False))
    out = {}
    for code in flat:
        other_words = set().union(*(w for c, w in flat.items() if c != code))
        other_pairs = set().union(*(g for c, g in grams.items() if c != code))
        out[code] = (frozenset(flat[code] - other_words), frozenset(other_pairs))
    return out


def _words_and_pairs(
    conditions: Sequence[tuple[tuple[str, ...], bool]],
) -> tuple[set[str], set[tuple[str, str]]]:
    """Every word and word pair of a level's conditions."""
    words_of: set[str] = set()
    pairs_of: set[tuple[str, str]] = set()
    for toks, _ in conditions:
        words_of.update(toks)
        pairs_of |= pairs(toks)
    return words_of, pairs_of


@dataclass(frozen=True, slots=True)
class _LevelWords:
    """One level's distinctive words and word pairs (no other level's), those of its open
    conditions and those of its exclusive ones apart, and the phrases it quotes."""

    words: frozenset[str]
    pairs: frozenset[tuple[str, str]]
    only_words: frozenset[str]
    only_pairs: frozenset[tuple[str, str]]
    quotes: tuple[tuple[str, ...], ...]


@functools.lru_cache(maxsize=256)
def _prepared_levels(
    items: tuple[tuple[str, str], ...], skip_counts: bool
) -> dict[str, _LevelWords]:
    """Per level code, what :func:`quoted_level` looks for. It depends on the rubric alone,
    not on the explanation: read once per rubric, not once per verdict judged on it (kept
    for a while; a :class:`Rubric` keeps its own for as long as it is kept)."""
    tables = _level_tables(items)
    out: dict[str, _LevelWords] = {}
    for code, text in items:
        distinctive, other_pairs = tables[code]
        found: dict[bool, tuple[set[str], set[tuple[str, str]]]] = {
            False: (set(), set()),
            True: (set(), set()),
        }
        for level_toks, exclusive in _conditions(text, skip_counts):
            words_of, pairs_of = found[exclusive]
            words_of.update(set(level_toks) & distinctive)
            pairs_of.update(
                p
                for p in pairs(level_toks) - other_pairs
                if p[0] in distinctive or p[1] in distinctive
            )
        out[code] = _LevelWords(
            frozenset(found[False][0]),
            frozenset(found[False][1]),
            frozenset(found[True][0]),
            frozenset(found[True][1]),
            _quoted(text),
        )
    return out


_QUOTE = re.compile(r"'([^']{2,40})'|\u2018([^\u2019]{2,40})\u2019|\u201c([^\u201d]{2,40})\u201d")


@functools.lru_cache(maxsize=256)
def _quoted(text: str) -> tuple[tuple[str, ...], ...]:
    """Phrases a level text quotes ('about', 'under 400'): an explanation that uses one is
    quoting that level, stop words or not."""
    return tuple(_text_words(next(g for g in m.groups() if g)) for m in _QUOTE.finditer(text))


def _contains(sequences: Sequence[Sequence[str]], phrase: Sequence[str]) -> bool:
    n = len(phrase)
    return n > 0 and any(
        tuple(seq[i : i + n]) == tuple(phrase) for seq in sequences for i in range(len(seq) - n + 1)
    )


@functools.lru_cache(maxsize=256)
def _conditions(text: str, skip_first: bool) -> tuple[tuple[tuple[str, ...], bool], ...]:
    """A level text's conditions (alternatives split at ', or' and ';'), each as the content
    words of its affirmative parts without numbers, and whether it is exclusive ('only …')."""
    read = _alternatives(text)
    return tuple(found for found in read[1 if skip_first else 0 :] if found is not None)


@functools.lru_cache(maxsize=256)
def _alternatives(text: str) -> tuple[tuple[tuple[str, ...], bool] | None, ...]:
    """Each alternative of a level text as :func:`_conditions` reads it (None: no content
    word), the first included."""
    out: list[tuple[tuple[str, ...], bool] | None] = []
    for alternative in _ALTERNATIVE.split(text):
        if not alternative.strip():
            continue
        toks = [t for raw, stems in _affirmative_read(alternative) for t in _content_of(raw, stems)]
        out.append((tuple(toks), _text_words(alternative)[:1] == ("only",)) if toks else None)
    return tuple(out)


_ALTERNATIVE = re.compile(r",\s*or\s+|;")


# -- counts --------------------------------------------------------------------------------

_LIST_IN_PARENS = re.compile(r"\(([^()]*,[^()]*)\)")
_SPLIT_ITEMS = re.compile(r",\s*(?:and\s+|or\s+)?|\s+and\s+|\s+or\s+")
_LEAD = re.compile(r".*\b(?:for|of|on|about|from|like|namely|as)\s+", re.IGNORECASE)


@functools.lru_cache(maxsize=4096)
def enumerated_items(text: str) -> tuple[tuple[str, ...], ...]:
    """:func:`enumerated_lists`, kept: a criterion's text is read once per report judged on
    it."""
    return tuple(tuple(items) for items in enumerated_lists(text))


def enumerated_lists(text: str) -> list[list[str]]:
    """Enumerations in ``text``: parenthesised comma lists first, then 'a, b, c and d'."""
    found: list[list[str]] = []
    for match in _LIST_IN_PARENS.finditer(text):
        items = [i.strip(" .") for i in _SPLIT_ITEMS.split(match.group(1)) if i.strip(" .")]
        if len(items) >= 2:
            found.append(items)
    for sentence in _SENTENCE.split(_LIST_IN_PARENS.sub("", text)):
        listed = _listed(sentence)
        if listed is not None:
            found.append(listed)
    return found


_SENTENCE = re.compile(r"[?!:;\n—]|\.\s")
_QUALIFIER = re.compile(r"(?:with|in|on|at|from|including|as|to|for)\b")
_TAIL = re.compile(r"\s+(?:with|in|on|at|from|including|as|to)\s+")


def _listed(sentence: str) -> list[str] | None:
    """The items of 'a, b, c and d' in a sentence (three or more, of four words at most)."""
    if sentence.count(",") < 1 or (" and " not in sentence and " or " not in sentence):
        return None
    parts = [p.strip(" .") for p in _SPLIT_ITEMS.split(sentence) if p.strip(" .")]
    if len(parts) < 3:
        return None
    parts = _without_qualifiers(parts)
    if len(parts) < 3:
        return None
    return parts if all(len(p.split()) <= 4 for p in parts) else None


def _without_qualifiers(parts: list[str]) -> list[str]:
    """The items without what leads into the first ('… for A') and what qualifies the list
    after the last (', with the currency', 'D in euros')."""
    parts = [_LEAD.sub("", parts[0]), *parts[1:]]
    while parts and _QUALIFIER.match(parts[-1]):
        parts.pop()  # ", with the currency": a qualifier, not an item
    if parts:
        parts[-1] = _TAIL.split(parts[-1])[0]
    return parts


@functools.lru_cache(maxsize=256)
def _item_keys(items: tuple[str, ...]) -> tuple[frozenset[str], ...]:
    """Per item, the stemmed words no other item has (what naming it looks like)."""
    tokens = [set(content(item)) for item in items]
    items_with = Counter(word for own in tokens for word in own)
    return tuple(frozenset({w for w in own if items_with[w] == 1} or own) for own in tokens)


def level_ranges(levels: Mapping[str, str], total: int) -> dict[str, tuple[int, int]]:
    """Level code -> (low, high) count of items the level text asks for, where it counts."""
    return dict(_level_ranges(tuple(levels.items()), total))


@functools.lru_cache(maxsize=256)
def _level_ranges(
    levels: tuple[tuple[str, str], ...], total: int
) -> tuple[tuple[str, tuple[int, int]], ...]:
    out: dict[str, tuple[int, int]] = {}
    for code, text in levels:
        first = _ALTERNATIVE.split(text, maxsplit=1)[0]
        found = _range(_text_words(first), total)
        if found is not None:
            out[code] = found
    return tuple(out.items())


def _range(ws: Sequence[str], total: int) -> tuple[int, int] | None:
    """The count range the first words that say one ask for: 'all'/'every'/'each' (N), 'at
    least N', 'fewer/less than N', 'more than N', a number ('N', 'N or 0', 'N to M', 'N or
    none'), 'only some'."""
    for i in range(len(ws)):
        for reader in _RANGE_READERS:
            found = reader(ws, i, total)
            if found is not None:
                return found
    return None


def _num(ws: Sequence[str], i: int, total: int) -> int | None:
    """The number at ``i`` when it is one no larger than ``total``."""
    if 0 <= i < len(ws) and ws[i].isdigit():
        value = int(ws[i])
        return value if value <= total else None
    return None


Range = tuple[int, int] | None


def _every(ws: Sequence[str], i: int, total: int) -> Range:
    if ws[i] in ("all", "every", "each") and (_num(ws, i + 1, total) in (None, total)):
        return total, total
    return None


def _at_least(ws: Sequence[str], i: int, total: int) -> Range:
    low = _num(ws, i + 1, total) if ws[i] == "least" else None
    return (low, total) if low is not None else None


def _fewer_than(ws: Sequence[str], i: int, total: int) -> Range:
    if ws[i] not in ("fewer", "less") or i + 2 >= len(ws) or ws[i + 1] != "than":
        return None
    high = _num(ws, i + 2, total)
    return (0, high - 1) if high is not None else None


def _more_than(ws: Sequence[str], i: int, total: int) -> Range:
    if ws[i] != "more" or i + 2 >= len(ws) or ws[i + 1] != "than":
        return None
    low = _num(ws, i + 2, total)
    return (low + 1, total) if low is not None else None


def _a_number(ws: Sequence[str], i: int, total: int) -> Range:
    """'N' (exactly), 'N or 0' / 'N or none' (at most), 'N to M' / 'N or M' (between)."""
    a = _num(ws, i, total)
    if a is None:
        return None
    joined = i + 2 < len(ws) and ws[i + 1] in ("or", "to")
    if joined and ws[i + 2] == "0":
        return 0, a
    b = _num(ws, i + 2, total) if joined else None
    if b is not None:
        return min(a, b), max(a, b)
    if "or" in ws[i + 1 : i + 4] and "0" in ws[i + 1 : i + 5]:
        return 0, a
    return a, a


def _only_some(ws: Sequence[str], i: int, total: int) -> Range:
    return (1, total - 1) if ws[i] == "some" and i > 0 and ws[i - 1] == "only" else None


_RANGE_READERS: tuple[Callable[[Sequence[str], int, int], Range], ...] = (
    _every,
    _at_least,
    _fewer_than,
    _more_than,
    _a_number,
    _only_some,
)
"""The ways a level text says a count, tried in this order at each word."""


def explained_count(explanation: str, items: Sequence[str], total: int) -> int | None:
    """How many items the explanation says are there (see the module docstring): in its first
    affirmative clause that says, a number it states ("all five", "each bank", "Eight
    concrete tips") wins over the ``items`` it names."""
    return _count(_read(explanation), _item_keys(tuple(items)) if items else (), total)


def _count(reading: _Reading, keys: Sequence[frozenset[str]], total: int) -> int | None:
    for stated, present in reading.counts:
        if stated is not None:
            return total if stated < 0 else min(stated, total)
        named = sum(1 for key in keys if key & present)
        if named:
            return named
    return None


@dataclass(frozen=True, slots=True)
class CountMatch:
    level: str
    count: int
    total: int
    items: tuple[str, ...]


@functools.lru_cache(maxsize=256)
def _totals(levels: tuple[str, ...]) -> tuple[int, ...]:
    """The N of 'all N' / 'N of the N' in level texts."""
    out = []
    for text in levels:
        ws = _text_words(text)
        for i, w in enumerate(ws):
            if w in ("all", "every") and i + 1 < len(ws) and ws[i + 1].isdigit():
                out.append(int(ws[i + 1]))
    return tuple(out)


def counted_level(
    explanation: str,
    levels: Mapping[str, str],
    awarded: str,
    lists: Sequence[Sequence[str]],
    order: Sequence[str],
) -> CountMatch | None:
    """The level an explanation's count of items implies (the awarded level itself when they
    agree), or None when the explanation states no count the levels can read.

    ``order`` lists the scale's codes from the lowest level up; ``lists`` are candidate item
    enumerations (criterion text first, then the task prompt). A count the explanation
    states needs no list: the total is then the N of an 'all N' in the levels.
    """
    if awarded not in levels or not explanation.strip():
        return None
    readable = _counts_readable(tuple(levels.items()), tuple(tuple(items) for items in lists))
    return _counted_in(readable, _read(explanation), levels, awarded, order)


def _counted_in(
    readable: Readable,
    reading: _Reading,
    levels: Mapping[str, str],
    awarded: str,
    order: Sequence[str],
) -> CountMatch | None:
    """:func:`counted_level` on a rubric's readable counts and a read explanation."""
    for total, items, keys, ranges in readable:
        count = _count(reading, keys, total)
        if count is None:
            continue
        implied = [code for code, (low, high) in ranges if low <= count <= high]
        if not implied:
            return None
        if awarded in implied:
            return CountMatch(awarded, count, total, items)
        level = implied[0]
        rank = {code: i for i, code in enumerate(order)}
        if rank.get(awarded, -1) < rank.get(level, -1) and _ALTERNATIVES.search(
            levels.get(awarded, "")
        ):
            # Awarded less than the count allows: fine when the awarded level has another
            # condition the judge may have applied ("…, or a fee without its waiver condition").
            return CountMatch(awarded, count, total, items)
        return CountMatch(level, count, total, items)
    return None


class Rubric:
    """One criterion's levels as both checks read them, prepared once for every verdict
    judged on it (a criterion is judged once per report: 17 times a task in DailyReport).

    ``levels`` are the level texts the quote test compares; ``counting`` the ones the count
    test reads (the same, and the criterion text as its top level's when the rubric writes
    none); ``lists`` the candidate item enumerations and ``order`` the scale's codes from
    the lowest up, as for :func:`counted_level`."""

    __slots__ = ("_prepared", "_readable", "counting", "levels", "order")

    def __init__(
        self,
        levels: Mapping[str, str],
        counting: Mapping[str, str],
        lists: Sequence[Sequence[str]],
        order: Sequence[str],
    ) -> None:
        self.levels = dict(levels)
        self.counting = dict(counting)
        self.order = tuple(order)
        self._readable = _counts_readable(
            tuple(self.counting.items()), tuple(tuple(items) for items in lists)
        )
        items = tuple(self.levels.items())
        self._prepared = [_prepared_levels(items, False), None]

    def checks(self, explanation: str, awarded: str) -> tuple[CountMatch | None, LevelMatch | None]:
        """:func:`counted_level` with ``counting`` and :func:`quoted_level` with ``levels``
        (skipping the counts when the first found one), the explanation read once."""
        if not explanation.strip():
            return None, None
        reading = _read(explanation)
        counted = None
        if awarded in self.counting:
            counted = _counted_in(self._readable, reading, self.counting, awarded, self.order)
        quoted = None
        if awarded in self.levels and len(self.levels) >= 2:
            quoted = _quoted_in(self._prepared_for(counted is not None), reading, awarded)
        return counted, quoted

    def _prepared_for(self, skip_counts: bool) -> dict[str, _LevelWords]:
        prepared = self._prepared[skip_counts]
        if prepared is None:  # (most verdicts state no count: read when one does)
            prepared = self._prepared[1] = _prepared_levels(tuple(self.levels.items()), True)
        return prepared


_ALTERNATIVES = re.compile(r",\s*or\s+|;")

Readable = tuple[
    tuple[
        int, tuple[str, ...], tuple[frozenset[str], ...], tuple[tuple[str, tuple[int, int]], ...]
    ],
    ...,
]


@functools.lru_cache(maxsize=256)
def _counts_readable(
    levels: tuple[tuple[str, str], ...], lists: tuple[tuple[str, ...], ...]
) -> Readable:
    """The item totals the levels count up to, in the order they are tried (the lists', then
    an 'all N' of the levels), each with its items, what naming each item looks like and the
    levels' count ranges: a rubric's, read once, not once per verdict judged on it."""
    candidates = [(len(items), items) for items in lists]
    candidates += [(n, ()) for n in _totals(tuple(text for _, text in levels))]
    out = []
    for total, items in candidates:
        ranges = _level_ranges(levels, total)
        if len(ranges) < 2 or max(high for _, (_, high) in ranges) != total:
            continue
        out.append((total, items, _item_keys(items) if items else (), ranges))
    return tuple(out)
