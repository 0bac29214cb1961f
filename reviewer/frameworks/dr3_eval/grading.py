"""DR3-Eval's verdicts that must agree across its metrics, and its title-matching pitfalls.

DR3-Eval judges the same report several ways: gold insights (IR), checklist items (IF) and
claim support (FA). They overlap — "Describe attendance changes" (a checklist item) and "Mon-Thu
attendance rose from about 91% to 94%" (an insight) are about the same fact — so a checklist
item judged unaddressed while the insight on the same fact is judged fully covered, or a claim
judged supported by the very page an insight verdict says it contradicts, cannot both be right.
Two items are *about the same fact* when most of the checklist item's distinctive words (those
not shared by a third of the task's texts, which name its topic) appear in the insight.

Citation coverage is decided by the evaluator's title rule, which also counts a citation of a
*different* document whose title shares the required title's prefix; the format records when
that happens and the class of the document the citation really names.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator

from reviewer.grading import Criterion, Evidence, Flag, Grading, Verdict
from reviewer.levels import content

GENERIC = frozenset(
    {
        "describ",
        "mention",
        "summaris",
        "summariz",
        "explain",
        "cit",
        "provid",
        "compar",
        "giv",
        "discuss",
        "includ",
        "evidenc",
        "attach",
        "wider",
        "report",
        "us",
    }
)
"""Checklist verbs and scaffolding: they say what to do, not what the item is about."""

RELATED = 0.6
"""Share of a checklist item's distinctive words an insight must contain to be about the
same fact (and at least two of them)."""

_OTHER_DOC = re.compile(
    r"the matched citation names another document: (?P<title>.+?) "
    r"\((?P<cls>[\w ]+)\)"
)
_FIGURE = re.compile(r"\d+(?:[.,]\d+)?")


def _distinctive(texts: dict[str, str]) -> dict[str, set[str]]:
    tokens = {
        cid: {t for t in content(text) if not t.isdigit()} - GENERIC for cid, text in texts.items()
    }
    df = Counter(t for toks in tokens.values() for t in toks)
    limit = max(2, len(tokens) // 3)
    return {cid: {t for t in toks if df[t] <= limit} for cid, toks in tokens.items()}


def related_pairs(criteria: dict[str, Criterion]) -> list[tuple[str, str, list[str]]]:
    """(checklist id, insight id, shared words) of items about the same fact."""
    texts = {
        cid: c.text
        for cid, c in criteria.items()
        if c.dimension in ("checklist", "insight_uf", "insight_sc")
    }
    words = _distinctive(texts)
    out = []
    for cid, criterion in criteria.items():
        if criterion.dimension != "checklist" or not words.get(cid):
            continue
        for iid, insight in criteria.items():
            if not insight.dimension.startswith("insight"):
                continue
            shared = words[cid] & words.get(iid, set())
            if len(shared) >= 2 and len(shared) / len(words[cid]) >= RELATED:
                out.append((cid, iid, sorted(shared)))
    return out


def checklist_insight_flags(evidence: Evidence) -> Iterator[Flag]:
    verdicts = {v.criterion: v for v in evidence.verdicts if v.criterion and v.value is not None}
    for cid, iid, shared in related_pairs(evidence.criteria):
        check, insight = verdicts.get(cid), verdicts.get(iid)
        if (
            check is None
            or insight is None
            or check.kind != "dr3_checklist"
            or insight.kind != "dr3_insight"
        ):
            continue
        about = ", ".join(shared)
        if check.value == "false" and insight.value == "1":
            weight = 0.8
        elif check.value == "true" and insight.value == "0":
            weight = 0.4
        else:
            continue
        yield Flag(
            check.subject,
            "same fact",
            weight,
            f"checklist {cid} is judged {check.value}, but insight {iid} on the same "
            f"fact ({about}) is judged {insight.value}: “{evidence.criteria[iid].text}”.",
        )
        yield Flag(
            insight.subject,
            "same fact",
            weight,
            f"judged {insight.value}, but checklist {cid} on the same fact ({about}) is "
            f"judged {check.value}: “{evidence.criteria[cid].text}”.",
        )


def claim_insight_flags(evidence: Evidence) -> Iterator[Flag]:
    """A claim judged supported by the page an insight comes from, while the insight verdict
    on the same sentence says the report contradicts that page."""
    supports: dict[str, list[Verdict]] = {}
    for verdict in evidence.verdicts:
        if verdict.kind == "dr3_support" and verdict.claim:
            supports.setdefault(verdict.claim, []).append(verdict)
    for insight, quote in _contradicting_insights(evidence):
        criterion = evidence.criteria.get(insight.criterion or "")
        source = str(criterion.metadata.get("source", "")) if criterion else ""
        for ext, claim in evidence.claims.items():
            if quote.lower() not in " ".join(claim.fact.split()).lower():
                continue
            for support in _supported_by(evidence, supports.get(ext, []), source):
                yield from _same_sentence(support, insight, ext, source, quote)


def _supported_by(evidence: Evidence, supports: list[Verdict], source: str) -> Iterator[Verdict]:
    """The verdicts among ``supports`` that judge their claim supported by the page titled
    ``source``."""
    if not source:
        return
    for support in supports:
        page = evidence.page_of(support.ref)
        if support.value == "supported" and page is not None and page.title == source:
            yield support


def _contradicting_insights(evidence: Evidence) -> Iterator[tuple[Verdict, str]]:
    """Insight verdicts saying the report contradicts its page, with the sentence they quote
    (long enough to find in a claim)."""
    for insight in evidence.verdicts:
        if insight.kind != "dr3_insight" or insight.value != "0":
            continue
        quote = " ".join(insight.evidence.split())
        if len(quote) >= 12 and quote.upper() != "NOT FOUND":
            yield insight, quote


def _same_sentence(
    support: Verdict, insight: Verdict, claim: str, source: str, quote: str
) -> Iterator[Flag]:
    yield Flag(
        support.subject,
        "same fact",
        1.0,
        f"judged supported by “{source}”, but insight {insight.criterion} "
        f"(from that page) says the report's “{quote}” contradicts it.",
    )
    yield Flag(
        insight.subject,
        "same fact",
        1.0,
        f"says the report contradicts “{source}”, but claim {claim} with the "
        "same sentence is judged supported by that page.",
    )


def insight_figure_flags(evidence: Evidence) -> Iterator[Flag]:
    """An insight judged fully covered although the passage the judge quotes for it holds
    none of its figures (rounding allowed: 91.2 is about 91). Without a quote there is no
    telling what the judge read (IR's rubric accepts a paraphrase), so nothing is said."""
    for verdict in evidence.verdicts:
        if verdict.kind != "dr3_insight" or verdict.value != "1" or not verdict.evidence.strip():
            continue
        criterion = evidence.criteria.get(verdict.criterion or "")
        if criterion is None:
            continue
        figures = [_value(f) for f in _FIGURE.findall(criterion.text)]
        quoted = [_value(f) for f in _FIGURE.findall(verdict.evidence)]
        if not figures or any(_close(a, b) for a in figures for b in quoted):
            continue
        shown = ", ".join(_FIGURE.findall(criterion.text))
        yield Flag(
            verdict.subject,
            "figures",
            0.7,
            f"judged fully covered, but the passage the judge quotes holds none of the "
            f"insight's figures ({shown}).",
        )


def _value(text: str) -> float:
    return float(text.replace(",", ""))


def _close(a: float, b: float) -> bool:
    return round(a) == round(b) or abs(a - b) <= 0.02 * max(abs(a), abs(b))


def citation_flags(evidence: Evidence) -> Iterator[Flag]:
    for verdict in evidence.verdicts:
        if verdict.kind != "dr3_citation" or verdict.value != "cited":
            continue
        found = _OTHER_DOC.search(verdict.explanation)
        if found is not None:
            cls = found.group("cls").strip()
            weight = 0.8 if cls in ("distractor", "noise") else 0.3
            yield Flag(
                verdict.subject,
                "other document",
                weight,
                f"the title rule counted a citation that names another document, "
                f"{found.group('title')} ({cls}): is the required one cited anywhere?",
            )
        elif "names no document of the task" in verdict.explanation:
            yield Flag(
                verdict.subject,
                "other document",
                0.3,
                "the title rule counted a citation that names no document of the task.",
            )


GRADING = Grading(
    rules=(checklist_insight_flags, claim_insight_flags, insight_figure_flags, citation_flags),
    method="DR3-Eval: checklist items against the insight verdicts on the same fact, claim "
    "support against insight verdicts from the same page, insights judged covered "
    "without their figures, and citations counted through another document's title.",
)
