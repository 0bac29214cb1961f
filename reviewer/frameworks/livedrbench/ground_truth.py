"""LiveDRBench answers as Gavel stores them, and ground-truth expansion payloads.

A LiveDRBench answer (ground truth or prediction) is a list of *parts*; a part is one dictionary
(a single identification answer), a list of dictionaries (list answers) or a list of strings
(Entities). Gavel keeps the released structures whole in metadata, because the scoring needs
them as the benchmark defines them (``specs/livedrbench.md`` §2.3):

- ``task.metadata["livedrbench"]``: ``key``, ``category``, ``ground_truths`` (decrypted, as
  released), ``eval_info`` (``primary_keys``, ``main_claims``, ``ignore_keys``,
  ``evaluation_note``) and ``gt_ids`` (the criterion id of every ground-truth claim, in
  flattened order);
- ``report.metadata["livedrbench"]``: ``preds``, the system's prediction as submitted.

Criteria (one per ground-truth claim) and report claims (one per predicted claim) are the
per-claim views a reviewer works on; they follow the flattened order (part by part, item by
item), and their own metadata repeats ``{part, index, claim}`` for display and export.

The payload helpers turn a predicted claim into a ground-truth claim in the category's native
shape (a string for Entities, ``{title, link, connection}`` for PriorArt, a dict with the
task's keys for NovelDS and Flights, variant lists for SciFacts), so an accepted expansion can
be written back into a LiveDRBench ``ground_truths`` list as is.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

FRAMEWORK_NAME = "claims_f1"
META_KEY = "livedrbench"
"""The key under which task and report metadata hold the released structures."""

Mode = Literal["dicts", "scifacts", "strings"]
Shape = Literal["dict", "list", "strings", "empty"]
MODES: tuple[Mode, ...] = ("dicts", "scifacts", "strings")

CATEGORIES: dict[str, Mode] = {
    "scifacts-geo": "scifacts",
    "scifacts-materials": "scifacts",
    "novel-datasets-identification": "dicts",
    "novel-datasets-identi-extraction": "dicts",
    "novel-datasets-peer": "dicts",
    "prior-art": "strings",
    "entities": "strings",
    "flights": "dicts",
}
"""The eight released categories and the reference grader each uses (``src/evaluate.py``)."""

DOMAINS: dict[str, str] = {
    "scifacts": "science",
    "novel-datasets": "science",
    "prior-art": "innovation",
    "entities": "global culture and events",
    "flights": "global culture and events",
}
"""The paper's domain grouping (§2.1), by category prefix."""

EXPANSION_KINDS = ("new_claim", "new_rubric", "alias", "extra_evidence")


def scoring_mode(category: str, override: object = None) -> Mode:
    """The reference grader of a category: the code picks it by substring, as here.

    ``override`` (a task's ``livedrbench.mode``) lets a bundle with its own categories say
    which grader its claims follow; an unknown category is graded as dictionaries.
    """
    if isinstance(override, str) and override in MODES:
        return override
    if "scifacts-" in category:
        return "scifacts"
    if category in ("prior-art", "entities"):
        return "strings"
    return "dicts"


def domain_of(category: str) -> str:
    for prefix, domain in DOMAINS.items():
        if category.startswith(prefix):
            return domain
    return ""


def part_shape(part: object) -> Shape:
    """What one answer part is; raises ValueError for anything the benchmark does not use."""
    if isinstance(part, dict):
        return "dict"
    if isinstance(part, list):
        if not part:
            return "empty"
        if all(isinstance(item, dict) for item in part):
            return "list"
        if all(isinstance(item, str) for item in part):
            return "strings"
        raise ValueError("a list part must hold only dictionaries or only strings")
    raise ValueError(f"a part must be a dictionary or a list, not {type(part).__name__}")


@dataclass(frozen=True, slots=True)
class Item:
    """One claim of an answer: its part, its position in a list part (None for a dict part)."""

    part: int
    index: int | None
    value: dict[str, Any] | str


def flatten(parts: Sequence[object]) -> list[Item]:
    """Every claim of an answer, part by part and item by item (the order of claims/criteria)."""
    out: list[Item] = []
    for p, part in enumerate(parts):
        shape = part_shape(part)
        if shape == "dict":
            assert isinstance(part, dict)
            out.append(Item(p, None, part))
        elif shape != "empty":
            assert isinstance(part, list)
            out.extend(Item(p, i, value) for i, value in enumerate(part))
    return out


def item_id(prefix: str, item: Item) -> str:
    """``g1`` for a dict part, ``g2.3`` for the third item of the second part (1-based)."""
    if item.index is None:
        return f"{prefix}{item.part + 1}"
    return f"{prefix}{item.part + 1}.{item.index + 1}"


def default_ids(parts: Sequence[object], prefix: str) -> list[str]:
    return [item_id(prefix, item) for item in flatten(parts)]


def norm(value: object) -> str:
    """Comparison form: case-folded with whitespace collapsed; other JSON as sorted JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return " ".join(value.split()).casefold()
    if isinstance(value, bool | int | float):
        return json.dumps(value)
    return json.dumps(value, sort_keys=True, ensure_ascii=False).casefold()


def variants(value: object) -> list[object]:
    """SciFacts fields are lists of acceptable variants; any other value is its own variant."""
    return list(value) if isinstance(value, list) else [value]


def title_of(value: object) -> str:
    """What the string graders compare: the string, or a PriorArt reference's ``title``."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        title = value.get("title", "")
        return title if isinstance(title, str) else json.dumps(title, ensure_ascii=False)
    return ""


def render(value: object) -> str:
    """One line a reviewer reads: ``key = value · key = value`` (variants joined by ``|``)."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        pieces = []
        for key, val in value.items():
            if isinstance(val, list) and all(isinstance(v, str) for v in val):
                shown = " | ".join(val)
            elif isinstance(val, str):
                shown = val
            else:
                shown = json.dumps(val, ensure_ascii=False)
            pieces.append(f"{key} = {shown}")
        return " · ".join(pieces) or "(empty)"
    return json.dumps(value, ensure_ascii=False)


# -- ground-truth expansion payloads ---------------------------------------------------------


def new_claim_payload(
    predicted: dict[str, Any] | str,
    *,
    part: int,
    mode: Mode,
    gt_keys: Sequence[str] = (),
    source_claim: str | None = None,
    claim_id: str | None = None,
) -> dict[str, Any]:
    """A predicted claim as a new ground-truth claim of list part ``part``.

    ``gt_keys`` are the keys the task's ground-truth items of that part have (the native shape
    keeps exactly those, missing ones as ``""``, in their order); without them the prediction's
    own keys are kept. ``source_claim`` records which predicted claim it came from.
    """
    payload: dict[str, Any] = {"part": part, "claim": _native_claim(predicted, mode, gt_keys)}
    if claim_id:
        payload["id"] = claim_id
    if source_claim:
        payload["source_claim"] = source_claim
    return payload


def _native_claim(
    predicted: dict[str, Any] | str, mode: Mode, gt_keys: Sequence[str]
) -> dict[str, Any] | str:
    """The prediction in the ground truth's shape: a string stays one (or PriorArt's
    title, link and connection); SciFacts values become lists of their variants."""
    if mode == "strings":
        return _native_string(predicted, gt_keys)
    if not isinstance(predicted, dict):
        raise ValueError("this category's claims are dictionaries; the prediction is a string")
    keys = list(gt_keys) or list(predicted)
    if mode == "scifacts":
        return {k: _nonempty_variants(predicted.get(k, "")) for k in keys}
    return {k: predicted.get(k, "") for k in keys}


def _native_string(predicted: dict[str, Any] | str, gt_keys: Sequence[str]) -> dict[str, Any] | str:
    if isinstance(predicted, str):
        return predicted
    keys = list(gt_keys) or ["title", "link", "connection"]
    return {k: predicted.get(k, "") for k in keys}


def _nonempty_variants(value: object) -> list[object]:
    return [v for v in variants(value) if v != ""]


def alias_payload(target: str, key: str | None, value: object) -> dict[str, Any]:
    """Another accepted value for key ``key`` of ground-truth claim ``target`` (``key`` None for
    a string claim, or PriorArt's title). The same shape serves ``extra_evidence``."""
    return {"target": target, "key": key, "value": value}


def expansion(kind: str, payload: Mapping[str, Any]) -> dict[str, Any]:
    """The ``ReportInput.expansions`` entry an accepted proposal becomes."""
    if kind not in EXPANSION_KINDS:
        raise ValueError(f"unknown expansion kind {kind!r} (known: {', '.join(EXPANSION_KINDS)})")
    return {"kind": kind, "framework": FRAMEWORK_NAME, "payload": dict(payload)}


def proposal_from_claim(
    task_metadata: Mapping[str, Any],
    claim_metadata: Mapping[str, Any],
    source_claim: str | None = None,
) -> dict[str, Any]:
    """The ``new_claim`` payload for a stored predicted claim (its metadata ``{part, claim}``).

    Refuses a claim of a dictionary part: that part holds the task's single answer, so a
    second valid answer is an alias of its keys, not a new claim.
    """
    info = task_metadata.get(META_KEY)
    if not isinstance(info, Mapping):
        raise ValueError("the task has no LiveDRBench metadata")
    gts = info.get("ground_truths")
    part = claim_metadata.get("part")
    if not isinstance(gts, list) or not isinstance(part, int) or not 0 <= part < len(gts):
        raise ValueError("the claim names no answer part of the task's ground truth")
    shape = part_shape(gts[part])
    if shape == "dict":
        raise ValueError("a dictionary part holds one answer: propose an alias instead")
    keys = _keys_of(gts[part])
    mode = scoring_mode(str(info.get("category", "")), info.get("mode"))
    predicted = claim_metadata.get("claim")
    if not isinstance(predicted, dict | str):
        raise ValueError("the claim's metadata has no predicted claim")
    return new_claim_payload(
        predicted, part=part, mode=mode, gt_keys=keys, source_claim=source_claim
    )


def _keys_of(items: list[Any]) -> list[str]:
    """The keys a list part's dictionaries have, in order of first appearance."""
    keys: list[str] = []
    for item in items:
        if isinstance(item, dict):
            keys.extend(k for k in item if k not in keys)
    return keys
