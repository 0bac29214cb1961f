"""DR. Bench's grading context and the checks its verdicts can be held to.

A trusted-source verdict is decided by URL matching, which cannot know mirrors or moved pages:
the reviewer needs the task's trusted-source list on screen, and which entry a cited URL
*nearly* matches (same path under another host, a host sharing a distinctive name). Keyword
hits are counted by substring by default, so a hit inside a longer word ("vet" in "veteran")
is worth a look unless the longer word is an inflection of the keyword. Several verdicts are
checkable against the report text itself:

* a QSR item that names a figure ("within 30 days") answered yes although the report never
  writes that figure;
* a general rubric about tables, lists or headings answered against what the Markdown
  contains;
* a relevance grade that says a keyword is absent while it is counted, or present while it is
  not, and a drift keyword rated relevant although every hit negates it ("not a puppy").
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from urllib.parse import urlsplit

from reviewer.frameworks.dr_bench.keywords import IN_WORD
from reviewer.frameworks.dr_bench.urls import normalise_url
from reviewer.grading import ContextItem, Criterion, Evidence, Flag, Grading, Section

INFLECTIONS = ("s", "es", "'s", "’s", "ed", "ing", "er", "ers", "d")
"""Endings that keep a keyword's meaning: 'vets' counts as 'vet', 'veteran' does not."""

_GENERIC_HOST = frozenset(
    {
        "www",
        "com",
        "org",
        "net",
        "gov",
        "example",
        "edu",
        "co",
        "uk",
        "de",
        "fr",
        "io",
        "info",
        "ac",
    }
)
_NEGATED = re.compile(
    r"\b(?:not|no|never|unlike|rather than|instead of|without|do not|don't|"
    r"isn't|aren't|avoid|against)\b",
    re.IGNORECASE,
)


# -- trusted sources ------------------------------------------------------------------------


def trusted_sources(criteria: Sequence[Criterion]) -> list[Criterion]:
    return [c for c in criteria if c.dimension == "trusted_source"]


def _host_words(host: str) -> set[str]:
    return {w for w in re.split(r"[.\-]", host.lower()) if w and w not in _GENERIC_HOST}


def _segments(path: str) -> list[str]:
    return [s for s in path.strip("/").split("/") if s]


def near_match(url: str, trusted: Sequence[Criterion]) -> tuple[Criterion, str] | None:
    """The trusted source a URL nearly matches, and how: the same trailing path segments and
    a host sharing a distinctive name (an archive's copy of the council's minutes)."""
    cited = normalise_url(url)
    cited_path = _segments(urlsplit("//" + cited.normalised).path)
    best: tuple[int, Criterion, str] | None = None
    for source in trusted:
        norm = normalise_url(source.text)
        if norm.normalised == cited.normalised:
            return None
        path = _segments(urlsplit("//" + norm.normalised).path)
        shared = 0
        while (
            shared < min(len(path), len(cited_path))
            and path[-1 - shared] == cited_path[-1 - shared]
        ):
            shared += 1
        hosts = _host_words(cited.host) & _host_words(norm.host)
        score = shared + len(hosts)
        if shared and score >= 2 and (best is None or score > best[0]):
            why = f"same path …/{'/'.join(path[-shared:])}"
            if hosts:
                why += f"; host shares “{', '.join(sorted(hosts))}”"
            best = (score, source, why)
    return (best[1], best[2]) if best is not None else None


def trusted_flags(evidence: Evidence) -> Iterator[Flag]:
    trusted = trusted_sources(list(evidence.criteria.values()))
    if not trusted:
        return
    for verdict in evidence.verdicts:
        if verdict.kind != "drb_trusted" or verdict.value != "none":
            continue
        url = verdict.evidence or verdict.key or ""
        found = near_match(url, trusted) if url else None
        if found is not None:
            source, why = found
            yield Flag(
                verdict.subject,
                "near-match",
                0.7,
                f"judged no match, but it nearly matches {source.ext} ({source.text}): "
                f"{why} — a mirror or moved copy would count as full.",
            )


# -- keywords and relevance -----------------------------------------------------------------


def _word_at(text: str, start: int) -> str:
    lo, hi = start, start
    while lo > 0 and (text[lo - 1].isalnum() or text[lo - 1] in "-'’"):
        lo -= 1
    while hi < len(text) and (text[hi].isalnum() or text[hi] in "'’"):
        hi += 1
    return text[lo:hi]


def in_word_flags(evidence: Evidence) -> Iterator[Flag]:
    for verdict in evidence.verdicts:
        if (
            verdict.kind != "drb_keyword_hit"
            or verdict.value != "true"
            or not verdict.key
            or IN_WORD not in verdict.key
        ):
            continue
        criterion = evidence.criteria.get(verdict.criterion or "")
        digits = verdict.key.rstrip("~^")
        if criterion is None or not digits.isdigit():
            continue
        keyword = criterion.text.strip().lower()
        word = _word_at(evidence.text, int(digits)) if evidence.text else ""
        lowered = word.lower()
        if lowered.startswith(keyword) and lowered[len(keyword) :] in INFLECTIONS:
            continue
        yield Flag(
            verdict.subject,
            "in-word",
            0.6,
            f"“{criterion.text}” is counted inside “{word or '?'}”, which may not mean "
            "the keyword (substring matching counts it).",
        )


def relevance_flags(evidence: Evidence) -> Iterator[Flag]:
    hits: dict[str, list[str]] = {}
    for verdict in evidence.verdicts:
        if verdict.kind == "drb_keyword_hit" and verdict.value == "true" and verdict.criterion:
            hits.setdefault(verdict.criterion, []).append(verdict.evidence)
    for verdict in evidence.verdicts:
        if verdict.kind != "drb_relevance" or verdict.value is None or not verdict.criterion:
            continue
        criterion = evidence.criteria.get(verdict.criterion)
        if criterion is None:
            continue
        why = _relevance_misread(verdict.value, criterion, hits.get(verdict.criterion, []))
        if why is not None:
            yield Flag(verdict.subject, "relevance", 0.7, why)


def _relevance_misread(value: str, criterion: Criterion, found: list[str]) -> str | None:
    """Why a keyword's relevance grade does not fit how the report counts it: absent though
    counted, present though never counted, or high though every mention of a drift keyword
    negates it."""
    grade = float(value)
    if grade <= 1 and found:
        return (
            f"rated {value} (absent), but “{criterion.text}” is counted "
            f"{len(found)} time(s) in the report."
        )
    if grade >= 2 and not found:
        return f"rated {value}, but “{criterion.text}” is never counted in the report."
    if (
        criterion.dimension == "drift_keyword"
        and grade >= 3
        and found
        and all(_NEGATED.search(sentence) for sentence in found)
    ):
        return (
            f"rated {value}, but every mention of “{criterion.text}” is "
            f"contrastive or negated (“{' '.join(found[0].split())[:80]}”); the "
            "paper penalises drift by relevance, so a low grade fits."
        )
    return None


# -- checks against the report text ----------------------------------------------------------

_FIGURE = re.compile(r"\d+(?:[.,]\d+)?")


def figure_flags(evidence: Evidence) -> Iterator[Flag]:
    if not evidence.text:
        return
    present = set(_FIGURE.findall(evidence.text))
    for verdict in evidence.verdicts:
        if verdict.kind != "drb_qsr" or verdict.value not in ("yes", "partial"):
            continue
        criterion = evidence.criteria.get(verdict.criterion or "")
        if criterion is None:
            continue
        question = criterion.text.split("?")[0]
        figures = [f for f in _FIGURE.findall(question) if f not in present]
        if figures and len(figures) == len(_FIGURE.findall(question)):
            yield Flag(
                verdict.subject,
                "figure",
                0.7,
                f"the item asks about {', '.join(figures)} and the report never writes "
                f"{'that figure' if len(figures) == 1 else 'those figures'}, yet the "
                f"answer is {verdict.value}.",
            )


_TABLE = re.compile(r"^\s*\|.*\|\s*$\n^\s*\|?\s*:?-{3,}", re.MULTILINE)
_LIST = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+\S", re.MULTILINE)
_HEADING = re.compile(r"^#{1,6}\s+\S", re.MULTILINE)
_VISUAL = re.compile(r"!\[[^\]]*\]\(")


def _has_heading(text: str) -> bool:
    return bool(_HEADING.search(text))


def _has_visual(text: str) -> bool:
    return bool(_TABLE.search(text) or _VISUAL.search(text))


def _has_list(text: str) -> bool:
    return bool(_LIST.search(text))


STRUCTURE: dict[int, tuple[str, Callable[[str], bool]]] = {
    8: ("headings", _has_heading),
    37: ("a table, chart or image", _has_visual),
    42: ("Markdown headings", _has_heading),
    43: ("a list", _has_list),
}
"""General rubric number -> (what it asks for, whether the Markdown has it). No. 44 ("correctly
use Markdown elements like code blocks, quotes, or tables") is left out: judges read it as
"uses Markdown correctly", which a report without those elements can."""


def structure_flags(evidence: Evidence) -> Iterator[Flag]:
    if not evidence.text:
        return
    for verdict in evidence.verdicts:
        if verdict.kind != "drb_grr" or verdict.value not in ("yes", "no"):
            continue
        criterion = evidence.criteria.get(verdict.criterion or "")
        number = criterion.metadata.get("number") if criterion is not None else None
        if not isinstance(number, int) or number not in STRUCTURE:
            continue
        what, has = STRUCTURE[number]
        present = has(evidence.text)
        if verdict.value == "yes" and not present:
            yield Flag(
                verdict.subject,
                "structure",
                1.0,
                f"answered yes, but the report's Markdown has no {what}.",
            )
        elif verdict.value == "no" and present:
            yield Flag(
                verdict.subject,
                "structure",
                1.0,
                f"answered no, but the report's Markdown has {what}.",
            )


# -- on screen -------------------------------------------------------------------------------


def context(item: ContextItem) -> list[Section]:
    if item.kind != "drb_trusted":
        return []
    trusted = trusted_sources(item.criteria)
    if not trusted:
        return [("Trusted sources", "this task lists none")]
    lines = [f"{c.ext}  {c.text}" for c in trusted]
    out: list[Section] = [("Trusted sources of this task", "\n".join(lines))]
    url = item.url or item.key or ""
    if url and item.value in ("none", "host"):
        found = near_match(url, trusted)
        if found is not None:
            source, why = found
            out.append(("Nearly matches", f"{source.ext} {source.text} — {why}"))
    return out


GRADING = Grading(
    rules=(trusted_flags, in_word_flags, relevance_flags, figure_flags, structure_flags),
    reads_text=True,
    context=context,
    method="DR. Bench: trusted-source near matches, keyword hits inside longer words, "
    "relevance against the counted hits, QSR figures and structural rubrics against the "
    "report's Markdown.",
)
