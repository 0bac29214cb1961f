"""Which verdicts deserve a look first: the rules every framework shares, and running them all.

A judge verdict is *suspicious* when the judge's own output or the benchmark's rules say it
cannot be right as it stands. The shared rules read what a framework declares in its
:class:`reviewer.grading.Grading`:

* **contradiction** — a verdict on a whole against the verdicts on its parts
  (:class:`~reviewer.grading.Entailment`): a claim judged correct whose every consistency
  verdict says conflict, or incorrect while every cited page supports it;
* **unreachable** — a verdict on a page that could not be fetched that is not the one value
  such a verdict can have (``unknown``); a claim whose every cited page is unreachable and whose
  quoted evidence is in no stored page;
* **evidence** — quoted evidence that is on none of the stored pages cited for the report's
  task (by it or another report on the task);
* **level** — a rubric value whose explanation describes another level
  (:mod:`reviewer.levels`);
* **runs** — another judge run (active or candidate) that gave the same subject another value.

A framework adds its own rules (DR3-Eval's checklist against insight verdicts, LiveDRBench's
numeric tolerance …). :func:`flags` runs the shared and the framework rules over one report's
:class:`~reviewer.grading.Evidence`; the store keeps the result and the workstation orders by
it.
"""

from __future__ import annotations

import functools
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence

from reviewer.citations import locate
from reviewer.grading import (
    Claim,
    Criterion,
    Entailment,
    Evidence,
    Flag,
    Grading,
    Page,
    Verdict,
)
from reviewer.levels import Rubric, enumerated_items, stem, words
from reviewer.registry import get_kind

STRONG = 1.0
"""Two verdicts that cannot both be right, or a rule of the benchmark broken."""
LIKELY = 0.7
"""The judge's own words point to another value."""
WEAK = 0.4
"""Worth a look, often fine."""

RULES = {
    "contradiction": "verdicts on the same claim contradict each other",
    "unreachable": "a verdict about a page that could not be fetched",
    "evidence": "quoted evidence found in no stored page",
    "level": "the explanation describes another level of the rubric",
    "runs": "judge runs disagree on this subject",
}
"""The shared rules, by name (the framework rules describe themselves in their reasons)."""


def flags(evidence: Evidence, gradings: Sequence[Grading], prompt: str = "") -> list[Flag]:
    """Every flag of one report under the frameworks' gradings (a suite may have several),
    the shared rules first, one per (subject, rule)."""
    found: list[Flag] = []
    for grading in gradings:
        found += contradictions(evidence, grading.entailments)
        found += unreachable(evidence, grading.unreachable)
        found += unlocated_evidence(evidence, grading.evidence_kinds, grading.unreachable)
        found += level_flags(evidence, grading, prompt)
        for rule in grading.rules:
            found += rule(evidence)
    found += run_disagreements(evidence)
    return merge(found)


def reads_claims(gradings: Sequence[Grading]) -> bool:
    """Whether the rules read every report's claims: a framework's own rules may; the shared
    ones read them only where a page cited for the report's task could not be fetched (only
    :func:`unreachable` reads claims, and it returns at once when no such page is cited), so
    a store may leave them out of a report's evidence elsewhere."""
    return any(grading.rules for grading in gradings)


def merge(found: Iterable[Flag]) -> list[Flag]:
    """One flag per (subject, rule): the strongest weight, the reasons joined."""
    by_key: dict[tuple[int, str], list[Flag]] = defaultdict(list)
    for flag in found:
        by_key[(flag.subject, flag.rule)].append(flag)
    out = []
    for (subject, rule), group in by_key.items():
        reasons = list(dict.fromkeys(f.reason for f in group))
        out.append(Flag(subject, rule, max(f.weight for f in group), " ".join(reasons)))
    return sorted(out, key=lambda f: (f.subject, f.rule))


def suspicion(weights: Sequence[float]) -> float:
    """A subject's suspicion from its flags' weights: the strongest, plus a little for each
    other rule that points there (two independent reasons beat one)."""
    if not weights:
        return 0.0
    ordered = sorted(weights, reverse=True)
    return ordered[0] + 0.25 * sum(ordered[1:])


# -- contradiction ----------------------------------------------------------------------------


def contradictions(evidence: Evidence, entailments: Sequence[Entailment]) -> Iterator[Flag]:
    for entailment in entailments:
        wholes, parts = _wholes_and_parts(evidence.verdicts, entailment)
        for claim, claim_parts in parts.items():
            said = claim_parts[0].value
            implied = entailment.implied.get(said or "")
            if implied is None or claim not in wholes or any(p.value != said for p in claim_parts):
                continue
            for whole in wholes[claim]:
                if whole.value != implied:
                    yield from _contradiction(entailment, claim, whole, claim_parts, implied)


def _wholes_and_parts(
    verdicts: Iterable[Verdict], entailment: Entailment
) -> tuple[dict[str, list[Verdict]], dict[str, list[Verdict]]]:
    """Per claim, the verdicts on it as a whole and those on its parts (one per reference)."""
    wholes: dict[str, list[Verdict]] = defaultdict(list)
    parts: dict[str, list[Verdict]] = defaultdict(list)
    for verdict in verdicts:
        if verdict.value is None or verdict.claim is None:
            continue
        if verdict.kind == entailment.part and verdict.ref is not None:
            parts[verdict.claim].append(verdict)
        elif verdict.kind == entailment.whole and verdict.ref is None:
            wholes[verdict.claim].append(verdict)
    return wholes, parts


def _contradiction(
    entailment: Entailment, claim: str, whole: Verdict, parts: Sequence[Verdict], implied: str
) -> Iterator[Flag]:
    """Both sides of a whole that says other than what its agreeing parts imply."""
    said = parts[0].value
    every = "the" if len(parts) == 1 else f"every ({len(parts)})"
    yield Flag(
        whole.subject,
        "contradiction",
        STRONG,
        f"judged {whole.value}, but {every} {entailment.part} verdict on "
        f"claim {claim} says {said} — one side is wrong.",
    )
    for part in parts:
        yield Flag(
            part.subject,
            "contradiction",
            STRONG,
            f"says {said}, as every {entailment.part} verdict on claim "
            f"{claim} does, but the claim itself is judged {whole.value} "
            f"(it would be {implied}) — one side is wrong.",
        )


# -- unreachable pages and evidence ----------------------------------------------------------


def unreachable(evidence: Evidence, required: Mapping[str, str]) -> Iterator[Flag]:
    if not required or not _any_unreachable(evidence):
        return
    for verdict in evidence.verdicts:
        want = required.get(verdict.kind)
        if want is None or verdict.value is None or verdict.value == want:
            continue
        if verdict.ref is not None:
            found = _unreachable_reference(evidence, verdict, want)
        else:
            found = _unreachable_claim(evidence, verdict, want)
        if found is not None:
            yield found


def _unreachable_reference(evidence: Evidence, verdict: Verdict, want: str) -> Flag | None:
    """A verdict on one reference's page, which could not be fetched."""
    page = evidence.page_of(verdict.ref)
    if page is None or not page.unreachable:
        return None
    return Flag(
        verdict.subject,
        "unreachable",
        STRONG,
        f"reference [{verdict.ref}] could not be fetched ({page.error}), so "
        f"the judge cannot have read it: {want} is the only possible "
        f"verdict, not {verdict.value}.",
    )


def _unreachable_claim(evidence: Evidence, verdict: Verdict, want: str) -> Flag | None:
    """A verdict on a claim whose page (a statement with its URL), or every page it cites,
    could not be fetched."""
    claim = evidence.claims.get(verdict.claim or "")
    if claim is None:
        return None
    own = evidence.pages.get(claim.url) if claim.url and not claim.citations else None
    if own is None:
        return _unreachable_citations(evidence, verdict, claim, want)
    if not own.unreachable:  # a (statement, URL) pair: the verdict is about that page
        return None
    return Flag(
        verdict.subject,
        "unreachable",
        STRONG,
        f"its page could not be fetched ({own.error}): {want} is the only "
        f"possible verdict, not {verdict.value}.",
    )


def _unreachable_citations(
    evidence: Evidence, verdict: Verdict, claim: Claim, want: str
) -> Flag | None:
    """Every page the claim cites could not be fetched, and the verdict quotes nothing that
    another stored page holds."""
    cited = evidence.cited_pages(claim)
    if not cited or not all(p is not None and p.unreachable for _, p in cited):
        return None
    if verdict.evidence and _found_anywhere(evidence, verdict.evidence):
        return None  # judged from another page of the task: that can be right
    return Flag(verdict.subject, "unreachable", STRONG, _unfetched(cited, verdict, want))


def _unfetched(cited: Sequence[tuple[int | None, Page | None]], verdict: Verdict, want: str) -> str:
    refs = ", ".join(f"[{i}]" for i, _ in cited if i is not None) or "its page"
    why = (
        "its quoted evidence is in no stored page" if verdict.evidence else "it quotes no evidence"
    )
    return (
        f"every page the claim cites ({refs}) could not be fetched and {why}: "
        f"nothing supports {verdict.value}; {want} is what the pages allow."
    )


def _any_unreachable(evidence: Evidence) -> bool:
    urls = set(evidence.references.values())
    urls.update(c.url for c in evidence.claims.values() if c.url)
    return any(page.unreachable for url in urls if (page := evidence.pages.get(url)))


def _found_anywhere(evidence: Evidence, quote: str) -> bool:
    return any(
        locate(page.text, quote) is not None for page in evidence.pages.values() if page.text
    )


def unlocated_evidence(
    evidence: Evidence, kinds: frozenset[str], required: Mapping[str, str]
) -> Iterator[Flag]:
    """Quoted evidence that is on none of the stored pages cited for the task: the judge read it
    somewhere else, or made it up."""
    if not kinds or not any(p.text for p in evidence.pages.values()):
        return
    for verdict in evidence.verdicts:
        if verdict.kind not in kinds or not verdict.evidence.strip() or verdict.value is None:
            continue
        if verdict.value == required.get(verdict.kind):
            continue
        where = _where_evidence_is_missing(evidence, verdict)
        if where is not None:
            yield Flag(
                verdict.subject,
                "evidence",
                LIKELY,
                f"the quoted evidence “{_short(verdict.evidence)}” is not in {where}.",
            )


def _where_evidence_is_missing(evidence: Evidence, verdict: Verdict) -> str | None:
    """Where a verdict's quote should be and is not (None: it is there, or no page says)."""
    if verdict.ref is None:
        if _found_anywhere(evidence, verdict.evidence):
            return None
        return "any stored page cited for this task"
    page = evidence.page_of(verdict.ref)
    if page is None or not page.text or locate(page.text, verdict.evidence) is not None:
        return None
    where = f"reference [{verdict.ref}]'s stored page"
    if _found_anywhere(evidence, verdict.evidence):
        where += " (it is on another page cited for this task)"
    return where


def _short(text: str, limit: int = 70) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


# -- rubric levels ------------------------------------------------------------------------------


def level_flags(evidence: Evidence, grading: Grading, prompt: str = "") -> Iterator[Flag]:
    if grading.levels is None or not grading.level_kinds:
        return
    orders: dict[str, tuple[str, ...] | None] = {}
    for verdict, criterion in _level_verdicts(evidence, grading.level_kinds):
        levels = grading.levels(criterion)
        if not levels:
            continue
        if verdict.kind not in orders:
            orders[verdict.kind] = _scale_order(verdict.kind)
        rubric = _rubric(tuple(levels.items()), criterion.text, orders[verdict.kind], prompt)
        yield from _level_flags_of(verdict, rubric)


def _level_verdicts(
    evidence: Evidence, kinds: frozenset[str]
) -> Iterator[tuple[Verdict, Criterion]]:
    """The verdicts on a rubric's level that explain themselves, with their criterion."""
    for verdict in evidence.verdicts:
        if verdict.kind not in kinds or verdict.value is None:
            continue
        criterion = evidence.criteria.get(verdict.criterion or "")
        if criterion is not None and verdict.explanation.strip():
            yield verdict, criterion


def _scale_order(kind_name: str) -> tuple[str, ...] | None:
    """A verdict kind's codes from the lowest level up (None for a kind not registered)."""
    kind = get_kind(kind_name)
    if kind is None:
        return None
    return tuple(c.code for c in sorted(kind.scale.choices, key=lambda c: c.numeric or 0.0))


@functools.lru_cache(maxsize=4096)
def _rubric(
    levels: tuple[tuple[str, str], ...],
    criterion_text: str,
    order: tuple[str, ...] | None,
    prompt: str,
) -> Rubric:
    """A criterion's levels as both checks read them (see :class:`reviewer.levels.Rubric`):
    the criterion text is the level its top code names when the rubric writes none, and its
    enumerations come before the prompt's. Kept: a criterion is judged once per report."""
    if order is None:
        order = tuple(code for code, _ in levels)
    counting = dict(levels)
    counting.setdefault(order[-1] if order else "1", criterion_text)
    lists = enumerated_items(criterion_text) + (enumerated_items(prompt) if prompt else ())
    return Rubric(dict(levels), counting, lists, order)


def _level_flags_of(verdict: Verdict, rubric: Rubric) -> Iterator[Flag]:
    """The count and the quote test on one verdict."""
    value = verdict.value or ""
    counted, quoted = rubric.checks(verdict.explanation, value)
    if counted is not None and counted.level != value:
        what = "items" if not counted.items else ", ".join(counted.items)
        yield Flag(
            verdict.subject,
            "level",
            LIKELY,
            f"the explanation counts {counted.count} of {counted.total} ({what}); "
            f"the rubric gives {counted.level} for that "
            f"(“{_short(rubric.counting[counted.level], 60)}”), the judge {value}.",
        )
    if quoted is not None:
        yield Flag(
            verdict.subject,
            "level",
            LIKELY,
            f"the explanation uses the words of level {quoted.level} "
            f"(“{_short(rubric.levels[quoted.level], 60)}”: "
            f"{', '.join(_as_written(quoted.matched, verdict.explanation))}), not of {value}.",
        )


def _as_written(matched: Sequence[str], text: str) -> list[str]:
    """The words of ``text`` that matched stems (and stem pairs, "flat rat") stand for, as
    the judge wrote them (the first of each): a reason says "free, vaccine", never the stems
    "fre, vaccin"."""
    wanted = {root for item in matched for root in item.split()}
    written: dict[str, str] = {}
    for word in words(text):
        root = stem(word)
        if root in wanted and root not in written:
            written[root] = word
    return [" ".join(written.get(root, root) for root in item.split()) for item in matched]


# -- judge runs ---------------------------------------------------------------------------------


def run_disagreements(evidence: Evidence) -> Iterator[Flag]:
    if not evidence.others:
        return
    others: dict[int, list[Verdict]] = defaultdict(list)
    for other in evidence.others:
        if other.value is not None:
            others[other.subject].append(other)
    for verdict in evidence.verdicts:
        if verdict.value is None:
            continue
        differing = [
            o
            for o in others.get(verdict.subject, ())
            if o.run != verdict.run and not _same(verdict.kind, o.value, verdict.value)
        ]
        if differing:
            yield Flag(
                verdict.subject,
                "runs",
                LIKELY,
                f"judge runs disagree: {_said(differing)}; the counting run {verdict.run} "
                f"says {verdict.value}.",
            )


def _said(others: Sequence[Verdict]) -> str:
    """What (the first three of) the other runs say."""
    return "; ".join(
        f"run {o.run}{' (' + o.model + ')' if o.model else ''}"
        f"{'' if o.active else ' [candidate]'} says {o.value}"
        for o in others[:3]
    )


def _same(kind: str, a: str | None, b: str | None) -> bool:
    """Equal verdicts; on a continuous scale, within a sixth of its range."""
    if a == b:
        return True
    spec = get_kind(kind)
    if spec is None or not spec.scale.continuous or a is None or b is None:
        return False
    try:
        low, high = spec.scale.low or 0.0, spec.scale.high or 1.0
        return abs(float(a) - float(b)) <= (high - low) / 6
    except ValueError:
        return False
