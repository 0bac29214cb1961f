"""LiveDRBench's grading rules on screen, and the verdicts that break them.

The judge prompts of App. B (and the repository's Entities variant) fix how claims are matched
and graded; a reviewer re-grading a key needs them beside the verdict, with the task's own
evaluation note, which "may override the general rules". Three of them are checkable on the
stored values, so a verdict that breaks one is flagged:

* numbers are equivalent within 1% (a key graded below 2 whose numbers are that close, or
  graded 2 or 3 although they are further apart);
* names in the string categories match despite casing, spacing, punctuation or first and last
  name switched ("Quell, Tomas" is Tomas Quell);
* a prediction is the ground-truth item its values equal: a match to another item, while every
  key of the prediction equals one item's values, is a mis-match (and so is "not matched" to
  that equal item).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from reviewer.grading import ContextItem, Evidence, Flag, Grading, Section, Verdict

TOLERANCE = 0.01
"""Relative tolerance under which numbers are equivalent (judge dictionary prompt, App. B)."""

DICT_RULES = (
    "Matching (App. B): compare only the primary keys (the others if a primary key is "
    "missing); a semantic equivalent or subset matches, not only the exact string; acronyms "
    "and partial names equal their expansions; extra qualifiers in the prediction are fine if "
    "the ground truth is a subset of it; the task's evaluation note may override these rules.",
    "Grading each key (App. B): 3 close match · 2 main idea with minor omissions · 1 some "
    "overlap · 0 wrong; the reference code counts 2 and 3 as agreed. Numbers are equivalent "
    "within 1%; strings if similar in meaning or one contains the other; '0.8' = '0.80'; URLs "
    "must be identical or a shortened form of the same URL; lists need every ground-truth "
    "element, in any order.",
)
STRING_RULES = (
    "String membership (App. B): a prediction matches a ground-truth string despite casing, "
    "whitespace and common abbreviations; one prediction matches at most one string.",
)
ENTITY_RULE = (
    "Entities (repository prompt): allow minor variation in names, such as missing "
    "middle names or switched first and last names."
)


def _info(task_metadata: Mapping[str, Any]) -> Mapping[str, Any]:
    info = task_metadata.get("livedrbench", {})
    return info if isinstance(info, Mapping) else {}


def context(item: ContextItem) -> list[Section]:
    """The rules that grade the selected verdict, the task's evaluation note first."""
    if not item.kind.startswith("cf1_"):
        return []
    info = _info(item.task_metadata)
    eval_info = info.get("eval_info", {}) if isinstance(info.get("eval_info"), Mapping) else {}
    category = str(info.get("category", ""))
    out: list[Section] = []
    note = str(eval_info.get("evaluation_note", "") or "").strip()
    if note:
        out.append(("Evaluation note (this task; overrides the general rules)", note))
    keys = []
    for name in ("primary_keys", "main_claims", "ignore_keys"):
        values = eval_info.get(name) or []
        if values:
            keys.append(f"{name.replace('_', ' ')}: {', '.join(map(str, values))}")
    if keys:
        out.append(("Keys", "; ".join(keys)))
    strings = isinstance(item.criterion.metadata.get("claim") if item.criterion else None, str)
    rules = list(STRING_RULES if strings else DICT_RULES)
    if category == "entities":
        rules.append(ENTITY_RULE)
    out.append((f"Grading rules ({category or 'dicts'})", "\n".join(rules)))
    tolerance = _tolerance_note(item)
    if tolerance:
        out.append(("Numeric tolerance", tolerance))
    return out


def _tolerance_note(item: ContextItem) -> str:
    if item.kind != "cf1_key" or item.criterion is None or item.claim is None or not item.key:
        return ""
    gt, pred = _key_values(item.criterion.metadata, item.claim.metadata, item.key)
    a, b = _number(gt), _number(pred)
    if a is None or b is None:
        return ""
    gap = _gap(a, b)
    within = "within" if gap <= TOLERANCE else "outside"
    return f"ground truth {gt} · predicted {pred}: {gap:.1%} apart, {within} the 1% tolerance"


# -- the checks ------------------------------------------------------------------------------


def _key_values(
    gt_meta: Mapping[str, Any], pred_meta: Mapping[str, Any], key: str
) -> tuple[object, object]:
    name = key.split(":", 1)[1] if ":" in key else key
    gt, pred = gt_meta.get("claim"), pred_meta.get("claim")
    return (
        gt.get(name) if isinstance(gt, Mapping) else None,
        pred.get(name) if isinstance(pred, Mapping) else None,
    )


def _number(value: object) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        cleaned = value.strip().replace(",", "")
        if re.fullmatch(r"-?\d+(?:\.\d+)?", cleaned):
            return float(cleaned)
    return None


def _gap(a: float, b: float) -> float:
    if a == b:
        return 0.0
    return abs(a - b) / max(abs(a), abs(b))


def tolerance_flags(evidence: Evidence) -> Iterator[Flag]:
    for verdict in evidence.verdicts:
        if verdict.kind != "cf1_key" or verdict.value is None or not verdict.key:
            continue
        criterion = evidence.criteria.get(verdict.criterion or "")
        claim = evidence.claims.get(verdict.claim or "")
        if criterion is None or claim is None:
            continue
        gt, pred = _key_values(criterion.metadata, claim.metadata, verdict.key)
        a, b = _number(gt), _number(pred)
        if a is None or b is None:
            continue
        gap = _gap(a, b)
        grade = int(float(verdict.value))
        if gap <= TOLERANCE and grade < 2:
            yield Flag(
                verdict.subject,
                "tolerance",
                1.0,
                f"{pred} is {gap:.1%} from the ground truth {gt}: the grading rule counts "
                f"numbers within 1% as equivalent, so a grade of 2–3, not {grade}.",
            )
        elif gap > TOLERANCE and grade >= 2:
            yield Flag(
                verdict.subject,
                "tolerance",
                1.0,
                f"{pred} is {gap:.1%} from the ground truth {gt}, outside the 1% "
                f"tolerance, yet graded {grade}.",
            )


def normal_name(text: str) -> str:
    """A name as the string rules compare it: casing, spacing and punctuation dropped, and
    'Last, First' read as 'First Last'."""
    text = " ".join(text.split())
    if text.count(",") == 1:
        last, first = (p.strip() for p in text.split(","))
        if first and last and len(first.split()) <= 3 and len(last.split()) <= 3:
            text = f"{first} {last}"
    return re.sub(r"[^\w ]+", "", text).casefold().strip()


def name_flags(evidence: Evidence) -> Iterator[Flag]:
    for verdict in evidence.verdicts:
        if verdict.kind != "cf1_match" or verdict.value != "0":
            continue
        criterion = evidence.criteria.get(verdict.criterion or "")
        claim = evidence.claims.get(verdict.claim or "")
        if criterion is None or claim is None:
            continue
        gt, pred = criterion.metadata.get("claim"), claim.metadata.get("claim")
        if (
            isinstance(gt, str)
            and isinstance(pred, str)
            and gt != pred
            and normal_name(gt) == normal_name(pred)
        ):
            yield Flag(
                verdict.subject,
                "names",
                1.0,
                f"“{pred}” is “{gt}” up to casing, punctuation or name order, which the "
                "string rules accept (Entities: switched first and last names), yet it "
                "is judged not matched.",
            )


def _equal(a: object, b: object) -> bool:
    x, y = _number(a), _number(b)
    if x is not None and y is not None:
        return _gap(x, y) <= TOLERANCE
    return (
        isinstance(a, str) and isinstance(b, str) and a.strip().casefold() == b.strip().casefold()
    )


def _same_item(gt: Mapping[str, Any], pred: Mapping[str, Any]) -> bool:
    shared = [k for k in gt if k in pred]
    return bool(shared) and len(shared) == len(gt) and all(_equal(gt[k], pred[k]) for k in shared)


def mismatch_flags(evidence: Evidence) -> Iterator[Flag]:
    by_claim: dict[str, list[Verdict]] = {}
    for verdict in evidence.verdicts:
        if verdict.kind == "cf1_match" and verdict.claim and verdict.value is not None:
            by_claim.setdefault(verdict.claim, []).append(verdict)
    for claim_ext, verdicts in by_claim.items():
        twin = _twin(evidence, claim_ext, verdicts)
        if twin is None:
            continue
        if twin.value != "1":
            yield Flag(
                twin.subject,
                "mismatch",
                1.0,
                f"every value of {claim_ext} equals ground truth {twin.criterion}'s, yet "
                "they are judged not matched.",
            )
        for verdict in verdicts:
            if verdict is not twin and verdict.value == "1":
                yield Flag(
                    verdict.subject,
                    "mismatch",
                    1.0,
                    f"{claim_ext} is matched to {verdict.criterion}, but its values "
                    f"equal {twin.criterion}'s exactly (check the evaluation note).",
                )


def _twin(evidence: Evidence, claim_ext: str, verdicts: list[Verdict]) -> Verdict | None:
    """The one match verdict whose ground-truth item the claim's values equal (None: no
    such verdict, or more than one)."""
    claim = evidence.claims.get(claim_ext)
    pred = claim.metadata.get("claim") if claim is not None else None
    if not isinstance(pred, Mapping):
        return None
    equal = []
    for verdict in verdicts:
        criterion = evidence.criteria.get(verdict.criterion or "")
        gt = criterion.metadata.get("claim") if criterion is not None else None
        if isinstance(gt, Mapping) and _same_item(gt, pred):
            equal.append(verdict)
    return equal[0] if len(equal) == 1 else None


GRADING = Grading(
    rules=(tolerance_flags, name_flags, mismatch_flags),
    context=context,
    method="LiveDRBench: numbers graded against the 1% tolerance, names compared as the "
    "string rules compare them, and matches against the ground-truth item a prediction "
    "equals.",
)
