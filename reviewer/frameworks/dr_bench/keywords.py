r"""DR. Bench keyword counting: every occurrence of a keyword in a report's citation-free text.

The paper counts focus-anchor and focus-deviation keywords by plain string counting in the "pure
report text without annotations" (spec §2.2) and leaves case, word boundaries, inflections and
Unicode variants open. This matcher errs towards finding too much rather than too little,
because every hit becomes a verdict a reviewer sees in context and can strike (``vet`` inside
"veterans"), while a missed occurrence would be invisible:

- case-insensitive, substring matching (the paper's string counting), non-overlapping, left to
  right;
- a run of whitespace in the keyword matches any run of whitespace (line breaks, no-break
  spaces); any dash matches any dash (``0-RTT`` / ``0‑RTT``); any apostrophe any apostrophe
  (``Sam's`` / ``Sam’s``);
- each hit records whether it stands as a whole word and whether its case equals the keyword's,
  so the framework's options can count whole words only or exact case only without re-reading
  the text (see :func:`hit_key`).

Citation-free text (the paper's "pure report text without annotations", assessed so "to avoid
interference from annotation titles", §5.1): the report minus its references section, its
citation markers (``[3]``, ``[citation:5]``, …; :mod:`reviewer.citations`), its citation chips
(``([vet.cornell.edu](https://…))``, the form OpenAI's deep-research reports cite in, which the
authors' notebook deletes with ``re.sub(r'\(\[[^\]]+\]\([^)]+\)\)', '', text)`` before
counting), every other Markdown link or image whole — its title with its target — and any bare
URL. A link's title is what the annotation shows, not prose the report wrote: counting it would
let a report that cites ``vet.cornell.edu`` five times earn five "vet" hits. Nothing is deleted
from the report itself: excluded spans are skipped, and offsets are offsets into the report as
submitted, so the workstation highlights a hit where the reviewer reads it.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from functools import lru_cache

from reviewer.citations import body_end, find_markers

_DASHES = "-‐‑‒–—―−"
_APOSTROPHES = "'’‘ʼ`"
_URL = re.compile(r"https?://[^\s<>\]\)\"']+|www\.[^\s<>\]\)\"']+", re.IGNORECASE)
_TARGET = r"(?:[^()\s]|\([^()\s]*\))+(?:\s+\"[^\"\n]*\")?"
"""A Markdown link target: a URL (one level of balanced parentheses, as Wikipedia's have) and
an optional quoted title attribute."""
_LINK = re.compile(rf"!?\[[^\[\]\n]*\]\({_TARGET}\)")
"""A Markdown link or image, title and target: ``[title](url)``, ``![alt](url "t")``."""
_CHIP = re.compile(rf"\(\s*{_LINK.pattern}(?:\s*[,;]\s*{_LINK.pattern})*\s*\)")
"""A citation chip: links in parentheses, ``([site](url))`` or ``([a](u), [b](v))``."""
_SENTENCE_END = re.compile(r"[.!?。！？](?=\s)|\n")
CONTEXT_LIMIT = 240
"""Characters of context kept on each side of a hit when its sentence is longer."""

IN_WORD = "~"
"""Key marker: the hit is part of a longer word ("vet" in "veterans")."""
OTHER_CASE = "^"
"""Key marker: the hit's case differs from the keyword's ("Vet" for "vet")."""


@dataclass(frozen=True, slots=True)
class KeywordHit:
    """One occurrence of a keyword; ``start``/``end`` are offsets into the report markdown."""

    keyword: str
    start: int
    end: int
    text: str
    whole_word: bool
    exact_case: bool
    word: str
    context: str

    @property
    def key(self) -> str:
        return hit_key(self.start, self.whole_word, self.exact_case)

    def describe(self) -> str:
        """A one-line explanation for the verdict (what a reviewer decides on)."""
        where = "a whole word" if self.whole_word else f"inside the word {self.word!r}"
        case = "" if self.exact_case else f", written {self.text!r}"
        return f"{self.keyword!r} found at offset {self.start} as {where}{case}."


def hit_key(start: int, whole_word: bool, exact_case: bool) -> str:
    """The verdict key of a hit: its offset, then ``~`` when inside a word, ``^`` when the case
    differs. Part of the portable subject of the verdict, so the spelling must not change."""
    return f"{start}{'' if whole_word else IN_WORD}{'' if exact_case else OTHER_CASE}"


def key_flags(key: str | None) -> tuple[bool, bool]:
    """(whole_word, exact_case) of a verdict key written by :func:`hit_key`."""
    if not key:
        return True, True
    return IN_WORD not in key, OTHER_CASE not in key


@lru_cache(maxsize=4096)
def keyword_pattern(keyword: str) -> re.Pattern[str]:
    """The case-insensitive pattern of a keyword, with whitespace/dash/apostrophe variants."""
    text = keyword.strip()
    if not text:
        raise ValueError("an empty keyword cannot be counted")
    parts: list[str] = []
    for run in re.finditer(r"\s+|.", text, re.DOTALL):
        char = run.group(0)
        if char.isspace():
            parts.append(r"\s+")
        elif char in _DASHES:
            parts.append(f"[{re.escape(_DASHES)}]")
        elif char in _APOSTROPHES:
            parts.append(f"[{re.escape(_APOSTROPHES)}]")
        else:
            parts.append(re.escape(char))
    return re.compile("".join(parts), re.IGNORECASE)


def _canonical(text: str) -> str:
    out = re.sub(r"\s+", " ", text.strip())
    out = re.sub(f"[{re.escape(_DASHES)}]", "-", out)
    return re.sub(f"[{re.escape(_APOSTROPHES)}]", "'", out)


def _wordy(char: str) -> bool:
    return char.isalnum() or char == "_"


def excluded_spans(markdown: str) -> list[tuple[int, int]]:
    """Sorted, non-overlapping spans that are not citation-free text: citation markers, chips,
    links (title and target), URLs and the references section."""
    end = body_end(markdown)
    spans = [(m.start, m.end) for m in find_markers(markdown, 0, end)]
    for pattern in (_CHIP, _LINK, _URL):
        spans += [(m.start(), m.end()) for m in pattern.finditer(markdown, 0, end)]
    if end < len(markdown):
        spans.append((end, len(markdown)))
    spans.sort()
    merged: list[tuple[int, int]] = []
    for lo, hi in spans:
        if merged and lo <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(hi, merged[-1][1]))
        else:
            merged.append((lo, hi))
    return merged


def citation_free(markdown: str) -> str:
    """The report's citation-free ("pure") text: what keywords are counted in."""
    out: list[str] = []
    pos = 0
    for lo, hi in excluded_spans(markdown):
        out.append(markdown[pos:lo])
        pos = hi
    out.append(markdown[pos:])
    return "".join(out).rstrip()


def _overlaps(spans: list[tuple[int, int]], starts: list[int], lo: int, hi: int) -> bool:
    i = bisect.bisect_right(starts, lo) - 1
    return any(0 <= j < len(spans) and spans[j][0] < hi and lo < spans[j][1] for j in (i, i + 1))


def _word_around(text: str, lo: int, hi: int) -> str:
    while lo > 0 and _wordy(text[lo - 1]):
        lo -= 1
    while hi < len(text) and _wordy(text[hi]):
        hi += 1
    return text[lo:hi]


def sentence_around(text: str, lo: int, hi: int) -> str:
    """The sentence (or line) holding ``text[lo:hi]``, verbatim, trimmed to a window."""
    start = max(0, lo - CONTEXT_LIMIT)
    for found in _SENTENCE_END.finditer(text, start, lo):
        start = found.end()
    stop = min(len(text), hi + CONTEXT_LIMIT)
    after = _SENTENCE_END.search(text, hi, stop)
    if after is not None:
        stop = after.end()
    return text[start:stop].strip()


def _stands_alone(markdown: str, lo: int, hi: int, first_wordy: bool, last_wordy: bool) -> bool:
    """A hit is a whole word unless a word character of the keyword's edge runs on into the
    text beside it."""
    joined_left = first_wordy and lo > 0 and _wordy(markdown[lo - 1])
    joined_right = last_wordy and hi < len(markdown) and _wordy(markdown[hi])
    return not (joined_left or joined_right)


def find_hits(
    markdown: str, keyword: str, spans: list[tuple[int, int]] | None = None
) -> list[KeywordHit]:
    """Every hit of ``keyword`` in the citation-free text of ``markdown``, in text order.

    ``spans`` are the excluded spans when the caller already has them (one report, ten
    keywords).
    """
    pattern = keyword_pattern(keyword)
    skip = excluded_spans(markdown) if spans is None else spans
    starts = [lo for lo, _ in skip]
    wanted = _canonical(keyword)
    first_wordy = _wordy(keyword.strip()[0])
    last_wordy = _wordy(keyword.strip()[-1])
    hits: list[KeywordHit] = []
    for found in pattern.finditer(markdown):
        lo, hi = found.span()
        if _overlaps(skip, starts, lo, hi):
            continue
        whole = _stands_alone(markdown, lo, hi, first_wordy, last_wordy)
        text = found.group(0)
        hits.append(
            KeywordHit(
                keyword=keyword,
                start=lo,
                end=hi,
                text=text,
                whole_word=whole,
                exact_case=_canonical(text) == wanted,
                word=text if whole else _word_around(markdown, lo, hi),
                context=sentence_around(markdown, lo, hi),
            )
        )
    return hits
