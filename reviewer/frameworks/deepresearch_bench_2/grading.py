"""DeepResearch Bench II's rubric verdicts that cannot be right as they stand.

The judge returns, for each rubric item, a score with a reason and the report sentences it
relied on. Those three must fit together and fit the report: a satisfied item's evidence is
quoted from the report (the prompt asks for the sentences, so evidence found nowhere in the
report was invented or paraphrased past checking), a reason that says the report does not
mention the item cannot go with a 1, and a -1 says the supporting sentences cite the task's
blocked reference, so a report that names none of the blocked reference's URLs or title gives
a -1 nothing to stand on, while a 1 whose quoted sentences carry the marker of the blocked
reference's entry in the reference list is the -1 the prompt asks for. A rubric figure missing
from a satisfied item's evidence is weaker: the prompt requires exact values, but the figure
may sit in a neighbouring sentence.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator, Mapping
from typing import Any

from reviewer.citations import find_markers
from reviewer.grading import ContextItem, Evidence, Flag, Grading, Section, Verdict

KIND = "drb2_item"
STRONG, LIKELY, WEAK = 1.0, 0.7, 0.4

_SPLIT = re.compile(r"\n+|\.\.\.+|…+|(?<=[.!?。！？；;])\s*")
_DROP = str.maketrans("", "", "*_`#>|[]")
"""Markdown markup the judge's quotes leave out."""
_FIGURE = re.compile(r"\d+(?:[.,]\d+)*")
MIN_FRAGMENT = 8
"""Shorter pieces of evidence (a stray number, a heading word) prove nothing either way."""

ABSENT_CUES = (
    "does not mention",
    "doesn't mention",
    "not mentioned",
    "no mention",
    "does not discuss",
    "does not address",
    "does not provide",
    "does not state",
    "is not mentioned",
    "not found in",
    "未提及",
    "未提到",
    "没有提到",
    "没有提及",
    "并未提及",
)
"""Phrases with which the judge's reason says the report lacks the item (score 0's meaning)."""

BLOCKED_CUES = ("cites the blocked", "cite the blocked", "blocked reference is cited", "被屏蔽")
"""Phrases with which the reason says the evidence relies on the blocked reference (-1)."""


def normalized(text: str) -> str:
    """Text compared for evidence: Markdown markup dropped, spaces collapsed, lower case (the
    judge quotes the rendered sentence, the report holds its Markdown)."""
    return " ".join(text.translate(_DROP).split()).lower()


@functools.lru_cache(maxsize=8)
def normalized_report(text: str) -> str:
    """:func:`normalized` of a report, kept while the rules of its report run (each rule
    searches the whole text)."""
    return normalized(text)


def fragments(evidence: str) -> list[str]:
    """The quoted pieces of a verdict's evidence worth looking for: sentences, lines and the
    pieces between ellipses, quotes and the closing stop stripped (a quote may end where the
    report's sentence goes on), long enough to mean something."""
    out = []
    for piece in _SPLIT.split(evidence):
        cleaned = piece.strip().strip("\"'“”‘’「」").strip().rstrip(".!?。！？;；").strip()
        if len(cleaned) >= MIN_FRAGMENT:
            out.append(cleaned)
    return out


def missing_fragments(searched: str, evidence: str) -> tuple[list[str], int]:
    """The evidence pieces found nowhere in the report (``searched``: the report as
    :func:`normalized` gives it, once for all its verdicts), and how many pieces there were."""
    pieces = fragments(evidence)
    return [p for p in pieces if normalized(p) not in searched], len(pieces)


def blocked_of(metadata: Mapping[str, Any]) -> dict[str, Any] | None:
    blocked = metadata.get("blocked")
    return blocked if isinstance(blocked, dict) else None


def bare_url(url: str) -> str:
    """A URL as compared with a blocked one: no scheme, no 'www.', no trailing '/', lower."""
    return re.sub(r"^[a-z]+://(www\.)?", "", url.strip().lower()).rstrip("/")


def blocked_mentions(report: str, blocked: Mapping[str, Any] | None) -> list[str]:
    """Which of the blocked reference's URLs (without scheme) and title the report names."""
    if not blocked:
        return []
    text = normalized_report(report)
    found = []
    for url in blocked.get("urls") or []:
        bare = bare_url(str(url))
        if bare and bare in text.replace("://www.", "://"):
            found.append(str(url))
    title = normalized(str(blocked.get("title") or ""))
    if len(title) >= MIN_FRAGMENT and title in text:
        found.append(str(blocked.get("title")))
    return found


def _said(reason: str, cues: tuple[str, ...]) -> str | None:
    low = reason.lower()
    return next((cue for cue in cues if cue in low), None)


def _judged(evidence: Evidence) -> Iterator[Verdict]:
    return (v for v in evidence.verdicts if v.kind == KIND and v.value is not None)


def evidence_flags(evidence: Evidence) -> Iterator[Flag]:
    """A 1 or -1 whose quoted sentences are not in the report (or that quotes none); a 0 that
    quotes sentences the report does hold."""
    for verdict in _judged(evidence):
        if verdict.value == "0":
            if verdict.evidence.strip() and fragments(verdict.evidence):
                missing, total = missing_fragments(
                    normalized_report(evidence.text), verdict.evidence
                )
                if len(missing) < total:
                    yield Flag(
                        verdict.subject,
                        "evidence",
                        LIKELY,
                        "scored 0 (not mentioned) but quotes sentences the report holds",
                    )
            continue
        if not verdict.evidence.strip():
            yield Flag(verdict.subject, "evidence", LIKELY, "scored without quoting the report")
            continue
        missing, total = missing_fragments(normalized_report(evidence.text), verdict.evidence)
        if total and len(missing) == total:
            yield Flag(
                verdict.subject,
                "evidence",
                LIKELY,
                f"none of the quoted evidence is in the report: {missing[0][:60]!r}",
            )
        elif missing:
            yield Flag(
                verdict.subject,
                "evidence",
                WEAK,
                f"{len(missing)} of {total} quoted sentences are not in the report",
            )


def reason_flags(evidence: Evidence) -> Iterator[Flag]:
    """A reason that describes another score than the one given."""
    for verdict in _judged(evidence):
        for cues, score in ((ABSENT_CUES, "0"), (BLOCKED_CUES, "-1")):
            cue = _said(verdict.explanation, cues)
            if cue and verdict.value != score:
                yield Flag(
                    verdict.subject,
                    "reason",
                    LIKELY,
                    f"scored {verdict.value} but the reason says {cue!r} (score {score})",
                )
                break


def blocked_flags(evidence: Evidence) -> Iterator[Flag]:
    """A -1 in a report that names none of the blocked reference's URLs or its title."""
    blocked = blocked_of(evidence.task_metadata)
    if any(v.value == "-1" for v in _judged(evidence)) and not blocked_mentions(
        evidence.text, blocked
    ):
        why = (
            "the task blocks no reference"
            if not blocked
            else "the report names no URL or title of the blocked reference"
        )
        for verdict in _judged(evidence):
            if verdict.value == "-1":
                yield Flag(verdict.subject, "blocked", STRONG, f"scored -1 but {why}")


def blocked_cited(quoted: str, references: Mapping[int, str], urls: set[str]) -> list[int]:
    """The reference indices the quoted text's citation markers name that are blocked."""
    return [
        index
        for marker in find_markers(quoted)
        for index in marker.indices
        if bare_url(references.get(index) or "") in urls
    ]


def blocked_citation_flags(evidence: Evidence) -> Iterator[Flag]:
    """A 1 (or 0) whose quoted evidence carries a citation marker of a reference the task
    blocks: the prompt's -1."""
    blocked = blocked_of(evidence.task_metadata)
    urls = {bare_url(str(u)) for u in (blocked or {}).get("urls") or []}
    if not urls:
        return
    for verdict in _judged(evidence):
        if verdict.value == "-1" or not verdict.evidence:
            continue
        cited = blocked_cited(verdict.evidence, evidence.references, urls)
        if cited:
            yield Flag(
                verdict.subject,
                "blocked",
                STRONG,
                f"scored {verdict.value} but its evidence cites the blocked reference "
                f"[{cited[0]}] (score -1)",
            )


def missing_figures(rubric: str, quoted: str) -> list[str]:
    """The rubric's figures (a lone 0 aside) that the quoted evidence does not hold."""
    plain = quoted.replace(",", "")
    wanted = [f for f in _FIGURE.findall(rubric) if f != "0"]
    return [f for f in wanted if f.replace(",", "") not in plain]


def figure_flags(evidence: Evidence) -> Iterator[Flag]:
    """A satisfied item whose rubric figures are not in its evidence (exact values required)."""
    for verdict in _judged(evidence):
        criterion = evidence.criteria.get(verdict.criterion or "")
        if verdict.value != "1" or criterion is None or not verdict.evidence:
            continue
        absent = missing_figures(criterion.text, verdict.evidence)
        if absent:
            yield Flag(
                verdict.subject,
                "figure",
                WEAK,
                f"the rubric's figure(s) {', '.join(absent[:3])} are not in the evidence",
            )


def blocked_marks(text: str, metadata: Mapping[str, Any]) -> list[tuple[int, int]]:
    """Where the report names its task's blocked reference: each URL (any scheme, with or
    without 'www.') and the title, case aside."""
    blocked = blocked_of(metadata)
    if not blocked:
        return []
    patterns = [
        r"(?:[a-z]+://)?(?:www\.)?" + re.escape(bare)
        for url in blocked.get("urls") or []
        if (bare := bare_url(str(url)))
    ]
    title = str(blocked.get("title") or "").strip()
    if len(title) >= MIN_FRAGMENT:
        patterns.append(re.escape(title))
    if not patterns:
        return []
    found = re.finditer("|".join(patterns), text, re.IGNORECASE)
    return [(m.start(), m.end()) for m in found]


def context(item: ContextItem) -> list[Section]:
    """The task's blocked reference beside a rubric verdict (what a -1 is about)."""
    if item.kind != KIND:
        return []
    blocked = blocked_of(item.task_metadata)
    if not blocked:
        return [("Blocked reference", "none: this task blocks no reference")]
    lines = [str(blocked.get("title") or "(untitled)")]
    authors = blocked.get("authors") or []
    if authors:
        lines.append("by " + ", ".join(str(a) for a in authors))
    lines += [str(url) for url in blocked.get("urls") or []]
    return [("Blocked reference", "\n".join(lines))]


GRADING = Grading(
    rules=(evidence_flags, reason_flags, blocked_flags, blocked_citation_flags, figure_flags),
    reads_text=True,
    context=context,
    marks=blocked_marks,
    method="DeepResearch Bench II: quoted evidence found nowhere in the report (or quoted "
    "under a 0), a reason that describes another score, a -1 in a report naming none of the "
    "blocked reference's URLs or title, a 1 whose evidence cites it, and a satisfied item "
    "whose rubric figures are not in its evidence.",
)
