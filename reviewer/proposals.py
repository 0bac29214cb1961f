"""Ground-truth expansions: payload shapes per benchmark, duplicate detection, gold-diff items.

Benchmarks' ground truth is knowingly incomplete (LiveDRBench expanded its GT by reviewing every
system's claims; DailyReport's rubrics and DeepResearch Bench's criteria can miss what a good
report does). A reviewer *proposes* an item in the benchmark's own shape; a maintainer accepts
or rejects it. Two kinds of proposal are kept apart because they change scores differently:

* a **new item** (``new_claim``, ``new_rubric``) adds to the ground truth and raises a recall
  denominator for every system of the task;
* an **alias or extra evidence** (``alias``, ``extra_evidence``) attaches to an existing item
  (``target``) and only widens what counts as a match; no denominator changes.

A third kind comes from the judge card, not from a reviewer's draft: **revise this rubric
item** (``revise_item``, :mod:`reviewer.judge_card`) names an existing criterion (``target``)
on which the judge and the humans disagree beyond chance, with the disagreeing examples and
the reviewers' rationales. It adds nothing to the ground truth and changes no score: accepted,
it marks the item as under revision in the gold diff (effect ``under_revision``), so that a
benchmark's maintainers see which rubric wording the humans and the judge read differently.

Duplicates are caught before they reach the ground truth: texts are compared after
normalisation (Unicode NFKC, case folding, punctuation removed, whitespace collapsed) and by a
fuzzy similarity, the larger of difflib's ratio and the token Jaccard index (the latter catches
reordered words). :data:`DUPLICATE_THRESHOLD` is where "similar" becomes "duplicate".
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from difflib import SequenceMatcher
from functools import lru_cache
from typing import Any

from reviewer.framework import Proposals, Shape

DUPLICATE_THRESHOLD = 0.85
"""Similarity at or above which a proposal is reported as a duplicate of an existing item."""

NUMBER_MISMATCH_CAP = DUPLICATE_THRESHOLD - 0.01
"""The highest similarity two texts stating different numbers can have."""

NEW_ITEM_KINDS: frozenset[str] = frozenset({"new_claim", "new_rubric"})
ATTACHED_KINDS: frozenset[str] = frozenset({"alias", "extra_evidence"})
PROPOSAL_KINDS: tuple[str, ...] = ("new_claim", "new_rubric", "alias", "extra_evidence")
"""What a reviewer drafts by hand."""
REVISE_ITEM = "revise_item"
"""A judge card's proposal: revise the wording of an existing rubric item."""
ALL_KINDS: tuple[str, ...] = (*PROPOSAL_KINDS, REVISE_ITEM)

EFFECT_NEW = "new_item"
EFFECT_ATTACHED = "alias_or_evidence"
EFFECT_REVISE = "under_revision"


class PayloadError(ValueError):
    """A payload that does not have the benchmark's shape; ``field`` names the bad key."""

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


def effect(kind: str) -> str:
    """Whether accepting a proposal of this kind raises a recall denominator, widens a match,
    or (a revision) only marks an existing item as under revision."""
    if kind == REVISE_ITEM:
        return EFFECT_REVISE
    return EFFECT_NEW if kind in NEW_ITEM_KINDS else EFFECT_ATTACHED


# -- normalisation and similarity ------------------------------------------------------------


def normalize_text(text: str) -> str:
    """NFKC, case-folded, punctuation removed (dashes become spaces), whitespace collapsed.

    "U.S. GDP — 2.1%" and "us gdp 2.1%" normalise alike; symbols such as % and $ stay, since
    they carry meaning in the claims benchmarks grade.
    """
    folded = unicodedata.normalize("NFKC", text).casefold()
    joined = "".join(_char_out(char) for char in folded)
    return " ".join(_between_digits(joined).split())


@lru_cache(maxsize=4096)
def _char_out(char: str) -> str:
    """What one case-folded character becomes: dashes, slashes and spaces a space, other
    punctuation nothing (but % and ‰, and '.' or ',' for now), anything else itself."""
    category = unicodedata.category(char)
    if category == "Pd" or char == "/":
        return " "
    if char in "%‰":
        return char
    if category.startswith("P"):
        # Keep a decimal point or separator inside a number ("2.1", "4,200").
        return char if char in ".," else ""
    if category.startswith("Z") or char.isspace() or category == "Cc":
        return " "
    return char


def _between_digits(joined: str) -> str:
    """The text with each '.' or ',' kept only between two digits."""
    return "".join(
        c
        for i, c in enumerate(joined)
        if c not in ".,"
        or (0 < i < len(joined) - 1 and joined[i - 1].isdigit() and joined[i + 1].isdigit())
    )


def token_jaccard(a: str, b: str) -> float:
    """|A ∩ B| / |A ∪ B| over the two normalised texts' word sets (1.0 for two empty texts)."""
    ta, tb = set(a.split()), set(b.split())
    if not ta and not tb:
        return 1.0
    return len(ta & tb) / len(ta | tb)


def numbers_in(text: str) -> frozenset[str]:
    return frozenset(_NUMBER.findall(text))


_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")


def similarity(a: str, b: str) -> float:
    """Similarity of two *normalised* texts in [0, 1]: 1.0 when equal, else the larger of
    difflib's ratio (character edits) and the token Jaccard index (reordered words).

    Texts that state different numbers ("310 stations" / "312 stations") are different facts
    however alike they read: their score is capped just below :data:`DUPLICATE_THRESHOLD`, so
    they still show as the nearest item but never count as duplicates.
    """
    if a == b:
        return 1.0
    score = max(SequenceMatcher(None, a, b, autojunk=False).ratio(), token_jaccard(a, b))
    if numbers_in(a) != numbers_in(b):
        score = min(score, NUMBER_MISMATCH_CAP)
    return score


@dataclass(frozen=True, slots=True)
class Candidate:
    """An existing item a proposal might duplicate: where it is (``ref``) and its text."""

    ref: str
    text: str


@dataclass(frozen=True, slots=True)
class DuplicateMatch:
    ref: str
    text: str
    score: float

    @property
    def is_duplicate(self) -> bool:
        return self.score >= DUPLICATE_THRESHOLD


def best_duplicate(text: str, candidates: Iterable[Candidate]) -> DuplicateMatch | None:
    """The most similar candidate (the first one on ties), or None when there are none.

    The caller decides with :attr:`DuplicateMatch.is_duplicate`; returning the best match
    either way lets a reviewer see near misses too.
    """
    norm = normalize_text(text)
    best: DuplicateMatch | None = None
    for candidate in candidates:
        other = normalize_text(candidate.text)
        if best is not None:
            # Cheap upper bounds first: most candidates cannot beat the current best.
            bound = max(
                SequenceMatcher(None, norm, other, autojunk=False).real_quick_ratio(),
                token_jaccard(norm, other),
            )
            if bound <= best.score:
                continue
        score = similarity(norm, other)
        if best is None or score > best.score:
            best = DuplicateMatch(candidate.ref, candidate.text, score)
            if score == 1.0:
                break
    return best


# -- payload shapes ----------------------------------------------------------------------------

ATTACHED_SHAPES: dict[str, Shape] = {
    "alias": Shape(("text",), ("note",), ("text",)),
    "extra_evidence": Shape(
        (),
        ("url", "quote", "text", "title", "note"),
        ("quote", "text", "url"),
        ("url", "quote", "text"),
    ),
}
"""Aliases and extra evidence of a shaped benchmark (free-form ones keep their own)."""


def _rules(framework: str) -> Proposals:
    from reviewer.registry import get_framework

    try:
        return get_framework(framework).proposals
    except KeyError as exc:
        raise PayloadError(str(exc.args[0]), "framework") from None


def _is_blank(value: Any) -> bool:
    return value is None or (isinstance(value, str) and not value.strip()) or value in ({}, [])


def check_payload(framework: str, kind: str, payload: Any, target: str | None) -> None:
    """Refuse a payload that the benchmark could not use; ``PayloadError`` names the key."""
    _check_kind(framework, kind, payload, target)
    shape = _shape(framework, kind)
    if shape is None:
        if _is_blank(payload) or not isinstance(payload, dict | list | str):
            raise PayloadError(
                "the payload must be a non-empty JSON object, list or string", "payload"
            )
        return
    if not isinstance(payload, dict):
        raise PayloadError(
            f"a {framework} {kind} payload is a JSON object with keys "
            f"{', '.join(shape.required + shape.optional)}",
            "payload",
        )
    _check_keys(framework, kind, shape, payload)
    _check_values(shape, payload)


def _check_kind(framework: str, kind: str, payload: Any, target: str | None) -> None:
    """A known kind, with a target exactly when it attaches to an existing item."""
    if kind not in PROPOSAL_KINDS:
        raise PayloadError(
            f"unknown proposal kind {kind!r} (known: {', '.join(PROPOSAL_KINDS)})", "kind"
        )
    if kind in ATTACHED_KINDS and not (target or payload_target(framework, payload)):
        raise PayloadError(f"a {kind} proposal must name the existing item it belongs to", "target")
    if kind in NEW_ITEM_KINDS and target:
        raise PayloadError(f"a {kind} proposal is a new item and has no target", "target")


def _check_keys(framework: str, kind: str, shape: Shape, payload: dict[str, Any]) -> None:
    """Only the shape's keys, its required ones filled, and one of ``required_any``."""
    unknown = sorted(set(payload) - set(shape.required) - set(shape.optional))
    if unknown:
        raise PayloadError(
            f"unknown key(s) {', '.join(unknown)} for a {framework} {kind} "
            f"(allowed: {', '.join(shape.required + shape.optional)})",
            f"payload.{unknown[0]}",
        )
    for key in shape.required:
        if _is_blank(payload.get(key)):
            raise PayloadError(f"{key!r} is required and must not be empty", f"payload.{key}")
    if shape.required_any and all(_is_blank(payload.get(k)) for k in shape.required_any):
        raise PayloadError(f"give at least one of {', '.join(shape.required_any)}", "payload")


def _check_values(shape: Shape, payload: dict[str, Any]) -> None:
    """Numbers where the shape says so, strings elsewhere, and a choice among the allowed."""
    for key, value in payload.items():
        if value is None:
            continue
        if key in shape.numbers:
            if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
                raise PayloadError(f"{key} must be a non-negative number", f"payload.{key}")
        elif not isinstance(value, str):
            raise PayloadError(f"{key!r} must be a string", f"payload.{key}")
    for key, allowed in shape.choices.items():
        if payload.get(key) not in allowed:
            raise PayloadError(f"{key} must be one of {', '.join(allowed)}", f"payload.{key}")


def payload_target(framework: str, payload: Any) -> str | None:
    """The item a free-form payload names itself (LiveDRBench aliases carry ``target``)."""
    if _rules(framework).free_form and isinstance(payload, dict):
        value = payload.get("target")
        if isinstance(value, str) and value.strip():
            return value
    return None


def _shape(framework: str, kind: str) -> Shape | None:
    rules = _rules(framework)
    if rules.free_form:
        return None
    if kind in ATTACHED_KINDS:
        return ATTACHED_SHAPES[kind]
    return rules.shapes.get(kind)


def payload_text(framework: str, kind: str, payload: Any) -> str:
    """The text a payload is compared by for duplicates.

    Shaped payloads use their text keys. Free-form ones use the claim they carry (LiveDRBench's
    ``{part, claim}`` and ``{target, key, value}``) or else the whole payload, as every string
    and number inside it in order: a claim ``{"name": "X", "year": 2021}`` compares as
    "X 2021", the same text :func:`claim_text` gives a stored ground-truth claim.
    """
    shape = _shape(framework, kind)
    if shape is not None and isinstance(payload, dict):
        for key in shape.text_keys:
            value = payload.get(key)
            if isinstance(value, str) and value.strip():
                return value
        return ""
    if isinstance(payload, dict):
        for key in FREE_TEXT_KEYS:
            if key in payload and not _is_blank(payload[key]):
                return claim_text(payload[key])
    return claim_text(payload)


FREE_TEXT_KEYS = ("claim", "value", "insight", "statement", "text")
"""Keys of a free-form payload that hold the item itself (the rest is addressing)."""


def claim_text(value: Any) -> str:
    """A ground-truth claim of any shape as comparable text (its strings and numbers)."""
    return " ".join(_strings(value))


def _strings(value: Any) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)
    elif isinstance(value, int | float) and not isinstance(value, bool):
        yield str(value)


def gold_item(framework: str, kind: str, payload: Any) -> Any:
    """The payload in the benchmark's own ground-truth shape, every key present, in order
    (a benchmark may say otherwise: a DailyReport claim's extract defaults to its fact);
    free-form items exactly as given."""
    shape = _shape(framework, kind)
    if shape is None or not isinstance(payload, dict):
        return payload
    gold = _rules(framework).gold
    if gold is not None:
        special = gold(kind, payload)
        if special is not None:
            return special
    keys = (*shape.required, *shape.optional)
    if kind in NEW_ITEM_KINDS:
        return {key: payload.get(key, None if key in shape.numbers else "") for key in keys}
    return {key: payload[key] for key in keys if key in payload}


def canonical_json(value: Any) -> str:
    """The one byte-exact JSON text of a value (sorted keys, no spaces, UTF-8 kept)."""
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
