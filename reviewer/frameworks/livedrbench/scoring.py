"""LiveDRBench (``claims_f1``): predicted claims matched to ground-truth claims, P / R / F1.

Implements ``specs/livedrbench.md`` §3. The data (see ``.ground_truth``): the task's
ground truth and ``eval_info`` in task metadata, the prediction as submitted in report metadata,
one criterion per ground-truth claim and one report claim per predicted claim, in flattened order.

Verdict kinds (both have the predicted claim as subject, the ground-truth claim as ``criterion``
and its id in ``key``):

- ``cf1_match`` (``1`` matched / ``0`` not): is the predicted claim that ground-truth claim?
  Every candidate pair of a list part is imported, so a reviewer re-matches by flipping pairs.
  A dictionary part (a single identification answer) has no match verdict: it is always paired
  with the prediction's part, as the reference code zips them.
- ``cf1_key`` (0–3, key ``<gt id>:<key name>``): the judge's grade of one key of a pair;
  SciFacts' True/False grades are stored as 3/0. Binarised at ≥ 2.

Reference code (``precision``, ``recall``, ``f1``; ``src/evals/*.py``), by the category's grader:

- dictionaries (NovelDS, Flights): a key-level micro count. Agreed keys are summed over matched
  pairs; a pair whose main-claim key is graded ≤ 1 counts nothing, and a wrong identification
  (a dict part with such a key) zeroes the whole task. P = agreed / Σ|keys(pred) \\ ignore|,
  R = agreed / Σ|keys(gt) \\ ignore|.
- strings (Entities; PriorArt by reference titles): P = matched / #predictions,
  R = matched / #ground-truth strings.
- SciFacts: per field (``paper_title``, and ``material`` for Materials) R_f = share of ground
  truth entries some prediction matches, P_f = share of predictions matching some entry (no
  one-to-one); Materials multiplies the fields' P, R and F1.

Paper Eq. 1 (``*_paper``): Prec = Σ w·s(A_i)·Prec(A_i) / |𝒜|, Rec = Σ w·s(A_i)·Rec(A_i) / |𝒜*|
over one-to-one matched pairs, where s is the main-claim agreement, Prec(A_i) the share of the
prediction's sub-claims (non-main keys) that agree and Rec(A_i) the share of the ground-truth
claim's sub-claims reproduced (both 1 for an atomic claim); w is the criterion weight (1 when
unset). The strict variant (``*_strict``) takes the minimum over predicted claims (precision)
and over ground-truth claims (recall), an unmatched one contributing 0. F1 is the harmonic
mean per task, 0 when P + R = 0. SciFacts pairs for Eq. 1 are those whose main field agrees.

System numbers: ``<metric>`` is the mean over tasks (the code's ``overall``, the paper's
"Weighted Average", the headline); ``<metric>[<category>]`` the mean over a category's tasks;
``<metric>_macro`` the mean of the category means (the paper's "Average").

Ground-truth expansions (``ReportInput.expansions``, framework ``claims_f1``): ``new_claim``
(payload ``{part, claim, id?}``) adds a ground-truth claim to a list part, raising the recall
denominators; ``alias`` and ``extra_evidence`` (``{target, key, value}``) add an accepted value
to an existing claim's key and change no denominator. Expansions are ground truth, so both
variants score against them (as the paper re-ran its judge after expanding); nothing judged
them, so a prediction is credited by exact agreement (normalised text) with them. Deliberate
differences from the code are listed in ``docs/frameworks/livedrbench.md``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeGuard

from reviewer.framework import (
    Aggregate,
    FrameworkBase,
    Metric,
    OptionSpec,
    Proposals,
    Rating,
    Rejudge,
    ReportScores,
    Variant,
    VerdictKind,
)
from reviewer.frameworks.livedrbench.grading import GRADING
from reviewer.frameworks.livedrbench.ground_truth import (
    FRAMEWORK_NAME,
    META_KEY,
    Item,
    default_ids,
    flatten,
    norm,
    part_shape,
    scoring_mode,
    title_of,
    variants,
)
from reviewer.frameworks.livedrbench.proposals import PROPOSALS
from reviewer.grading import Grading
from reviewer.inputs import ReportInput
from reviewer.scales import Choice, Scale

NAME = FRAMEWORK_NAME

MATCH = Scale(
    "cf1_match",
    "matched / not matched",
    (
        Choice("1", "matched", "1", 1.0, ("true", "yes", "match")),
        Choice("0", "not matched", "0", 0.0, ("false", "no", "none")),
    ),
)
GRADE = Scale(
    "cf1_grade",
    "0–3 agreement (≥ 2 counts)",
    (
        Choice("0", "0 wrong", "0", 0.0, ("false", "incorrect")),
        Choice("1", "1 some overlap", "1", 1.0),
        Choice("2", "2 main idea", "2", 2.0),
        Choice("3", "3 close match", "3", 3.0, ("true", "correct")),
    ),
)

KINDS = {
    "cf1_match": VerdictKind(
        "cf1_match",
        NAME,
        MATCH,
        "claim",
        "claim match",
        "Is the predicted claim the ground-truth claim named by the criterion (key = its id)? "
        "Matching is one-to-one; see the one_to_one option.",
    ),
    "cf1_key": VerdictKind(
        "cf1_key",
        NAME,
        GRADE,
        "claim",
        "key grade",
        "Agreement of one key (key = '<gt id>:<key name>') of a predicted claim with its "
        "ground-truth claim: 3 close match, 2 main idea, 1 some overlap, 0 wrong (≥ 2 counts).",
    ),
}

OPTIONS = (
    OptionSpec(
        "one_to_one",
        "greedy",
        ("greedy", "reject"),
        "Pairs marked matched that share a predicted or ground-truth claim (after a re-match): "
        "keep the best pair first, by agreed keys, then grade sum, then prediction and ground "
        "truth order (greedy), or count every conflicting pair as unmatched until a reviewer "
        "resolves it (reject). match_conflicts counts the pairs left out either way.",
    ),
    OptionSpec(
        "ungraded_keys",
        "exact",
        ("exact", "zero"),
        "A key of a matched pair that no verdict grades (a reviewer matched a pair the judge "
        "did not): agreed when the predicted value equals an accepted value after normalising "
        "case and whitespace (exact), or never (zero).",
    ),
    OptionSpec(
        "paper_key_credit",
        "binary",
        ("binary", "fraction"),
        "Eq. 1's agreement s and sub-claim scores: 1 for a grade ≥ 2, else 0, as the code "
        "binarises (binary), or grade/3, reading §4.4's s ∈ [0, 1] (fraction). The code "
        "metrics always binarise.",
    ),
    OptionSpec(
        "paper_identification_gate",
        "all",
        ("all", "own"),
        "Eq. 1 for a task with an identification answer (a dictionary part): a wrong "
        "identification zeroes every claim of the task, as the code does (all), or only the "
        "identification claim itself, top-level claims being independent (own).",
    ),
    OptionSpec(
        "paper_recall",
        "gt",
        ("gt", "pred"),
        "Rec(A_i), which the paper does not spell out: the share of the matched ground-truth "
        "claim's sub-claims reproduced (gt), or the same number as Prec(A_i) (pred).",
    ),
    OptionSpec(
        "expansion_credit",
        "exact",
        ("exact", "none"),
        "An accepted new ground-truth claim that no judge has seen: a prediction equal to it "
        "after normalisation is matched to it with its equal keys agreed (exact), or the claim "
        "only raises the recall denominators until a judge run matches it (none).",
    ),
)

BASE_METRICS = (
    "precision",
    "recall",
    "f1",
    "precision_paper",
    "recall_paper",
    "f1_paper",
    "precision_strict",
    "recall_strict",
    "f1_strict",
)

METRICS = (
    Metric(
        "f1",
        "F1",
        headline=True,
        bounds=(0.0, 1.0),
        description="reference code; system: mean over tasks (the paper's Weighted Average)",
    ),
    Metric("precision", "Precision", description="reference code"),
    Metric("recall", "Recall", description="reference code"),
    Metric(
        "f1_paper",
        "F1 (Eq. 1)",
        headline=True,
        bounds=(0.0, 1.0),
        description="paper Eq. 1, standard: per-claim averages over one-to-one pairs",
    ),
    Metric("precision_paper", "Precision (Eq. 1)", description="paper Eq. 1, standard"),
    Metric("recall_paper", "Recall (Eq. 1)", description="paper Eq. 1, standard"),
    Metric("f1_strict", "F1 (strict)", description="paper, strict: minimum over claims"),
    Metric("precision_strict", "Precision (strict)", description="paper, strict"),
    Metric("recall_strict", "Recall (strict)", description="paper, strict"),
    *(
        Metric(
            f"{m}_macro",
            f"{m.replace('_', ' ')} (category mean)",
            description="mean of the category means (the paper's Average)",
        )
        for m in BASE_METRICS
    ),
    Metric(
        "match_conflicts",
        "match conflicts",
        digits=0,
        description="matched pairs left out by the one-to-one rule (fix by re-matching)",
    ),
)

CATEGORY_PREFIX = "_cat:"
"""A report's category travels to aggregation as a hidden part ``_cat:<category>`` = 1."""


# -- the task's structure, shared by every report and variant ------------------------------


@dataclass(slots=True)
class _Gt:
    index: int
    id: str
    part: int
    value: dict[str, Any] | str
    weight: float = 1.0
    new: bool = False
    accepted: dict[str, frozenset[str]] = field(default_factory=dict)


@dataclass(slots=True)
class _Pred:
    index: int
    claim_id: int | None
    part: int
    value: dict[str, Any] | str


@dataclass(slots=True)
class _Task:
    mode: str
    category: str
    shapes: list[str]
    primary: tuple[str, ...]
    main: frozenset[str]
    ignore: frozenset[str]
    gts: list[_Gt]
    by_id: dict[str, int]
    by_criterion: dict[int, int]
    fields: tuple[str, ...]


class _Unscorable(ValueError):
    """Metadata that does not line up with the report's claims or the task's criteria."""


_TASKS: dict[int, tuple[object, object, _Task]] = {}


def _strings(value: object) -> tuple[str, ...]:
    if isinstance(value, list):
        return tuple(str(v) for v in value)
    return ()


def _accepted(value: dict[str, Any] | str, mode: str) -> dict[str, frozenset[str]]:
    """Normalised accepted values per key ('' for a string claim's own text)."""
    if mode == "strings":
        return {"": frozenset({norm(title_of(value))}) - {""}}
    if not isinstance(value, dict):
        return {}
    if mode == "scifacts":
        return {k: frozenset(norm(v) for v in variants(val)) - {""} for k, val in value.items()}
    return {k: frozenset({norm(val)}) - {""} for k, val in value.items()}


def _task(report: ReportInput) -> _Task:
    """The task's structure, built once per task and shared by its reports."""
    cached = _TASKS.get(report.task_id)
    if cached is not None and cached[0] is report.task_metadata and cached[1] is report.criteria:
        return cached[2]
    task = _build_task(report)
    if len(_TASKS) > 50_000:
        _TASKS.clear()
    _TASKS[report.task_id] = (report.task_metadata, report.criteria, task)
    return task


def _build_task(report: ReportInput) -> _Task:
    info = report.task_metadata.get(META_KEY)
    if not isinstance(info, Mapping):
        raise _Unscorable("the task has no livedrbench metadata")
    parts = info.get("ground_truths")
    if not isinstance(parts, list):
        raise _Unscorable("livedrbench.ground_truths is not a list")
    category = str(info.get("category", ""))
    mode = scoring_mode(category, info.get("mode"))
    eval_info = _eval_info(info)
    try:
        shapes = [part_shape(p) for p in parts]
        items = flatten(parts)
    except ValueError as exc:
        raise _Unscorable(str(exc)) from exc
    aligned = len(report.criteria) == len(items)
    gts = _ground_truths(report, info.get("gt_ids"), parts, items, mode)
    return _Task(
        mode=mode,
        category=category,
        shapes=list(shapes),
        primary=_strings(eval_info.get("primary_keys")),
        main=frozenset(_strings(eval_info.get("main_claims"))),
        ignore=frozenset(_strings(eval_info.get("ignore_keys"))),
        gts=gts,
        by_id={g.id: g.index for g in gts},
        by_criterion={c.id: i for i, c in enumerate(report.criteria)} if aligned else {},
        fields=_scifacts_fields(gts) if mode == "scifacts" else (),
    )


def _eval_info(info: Mapping[str, Any]) -> Mapping[str, Any]:
    eval_info = info.get("eval_info")
    return eval_info if isinstance(eval_info, Mapping) else {}


def _ground_truths(
    report: ReportInput, ids: object, parts: list[Any], items: list[Item], mode: str
) -> list[_Gt]:
    """The ground-truth claims in flattened order, with their stored ids (else the default
    ones) and, when the criteria line up with them, their weights."""
    gt_ids = (
        list(ids) if isinstance(ids, list) and len(ids) == len(items) else default_ids(parts, "g")
    )
    aligned = len(report.criteria) == len(items)
    return [
        _Gt(
            i,
            str(gt_ids[i]),
            item.part,
            item.value,
            weight=_weight(report.criteria[i].weight) if aligned else 1.0,
            accepted=_accepted(item.value, mode),
        )
        for i, item in enumerate(items)
    ]


def _scifacts_fields(gts: list[_Gt]) -> tuple[str, ...]:
    """The fields SciFacts compares: the paper title, and the material when the truth has one
    (Materials); the first is the main field."""
    has_material = any(isinstance(g.value, dict) and "material" in g.value for g in gts)
    return ("material", "paper_title") if has_material else ("paper_title",)


def _weight(value: float | None) -> float:
    return 1.0 if value is None else float(value)


def _preds(report: ReportInput) -> list[_Pred]:
    info = report.report_metadata.get(META_KEY)
    parts = info.get("preds") if isinstance(info, Mapping) else None
    if parts is None:
        raise _Unscorable("the report has no livedrbench.preds")
    if not isinstance(parts, list):
        raise _Unscorable("livedrbench.preds is not a list")
    try:
        items: list[Item] = flatten(parts)
    except ValueError as exc:
        raise _Unscorable(str(exc)) from exc
    if len(items) != len(report.claims):
        raise _Unscorable(f"{len(items)} predicted claims but {len(report.claims)} report claims")
    return [_Pred(i, report.claims[i].id, item.part, item.value) for i, item in enumerate(items)]


# -- verdicts and expansions of one report in one variant ------------------------------------


@dataclass(slots=True)
class _State:
    task: _Task
    preds: list[_Pred]
    gts: list[_Gt]
    options: Mapping[str, str]
    matches: dict[tuple[int | None, int], str | None] = field(default_factory=dict)
    grades: dict[tuple[int | None, int], dict[str, str | None]] = field(default_factory=dict)
    extra: dict[tuple[int, str], set[str]] = field(default_factory=dict)
    applied: int = 0
    ignored: int = 0

    def pred_value(self, pred: _Pred, key: str) -> object:
        if key == "":
            return title_of(pred.value)
        return pred.value.get(key) if isinstance(pred.value, dict) else None

    def pred_norms(self, pred: _Pred, key: str) -> set[str]:
        value = self.pred_value(pred, key)
        if self.task.mode == "scifacts":
            return {norm(v) for v in variants(value)} - {""}
        return {norm(value)} - {""}

    def grade(self, pred: _Pred, gt: _Gt, key: str) -> float:
        """The pair's 0–3 grade of one key, after aliases and the ungraded-key rule."""
        values = self.pred_norms(pred, key)
        if self.task.mode == "scifacts" and not values:
            return 0.0  # the code's MATCH: an empty prediction never matches
        extra = self.extra.get((gt.index, key))
        if extra and values & extra:
            return 3.0
        if gt.new:
            return self.exact_credit("expansion_credit", values, gt, key)
        graded = self.grades.get((pred.claim_id, gt.index))
        number = GRADE.numeric(graded.get(key) if graded is not None else None)
        if number is None:
            return self.exact_credit("ungraded_keys", values, gt, key)
        return number

    def exact_credit(self, option: str, values: set[str], gt: _Gt, key: str) -> float:
        """A key no verdict grades: 3 when ``option`` credits exact agreement and the
        prediction equals an accepted value, else 0."""
        exact = self.options[option] == "exact"
        return 3.0 if exact and values & gt.accepted.get(key, frozenset()) else 0.0

    def keys_of(self, pred: _Pred, gt: _Gt) -> list[str]:
        """The keys a pair is graded on: the ground truth's, plus any the judge graded."""
        keys = list(gt.value) if isinstance(gt.value, dict) else []
        graded = self.grades.get((pred.claim_id, gt.index))
        if graded:
            keys.extend(k for k in graded if k not in keys)
        return keys


def _state(
    report: ReportInput,
    task: _Task,
    preds: list[_Pred],
    variant: Variant,
    options: Mapping[str, str],
) -> _State:
    state = _State(task, preds, list(task.gts), options)
    for v in report.verdicts:
        if v.kind == "cf1_match":
            gt = _resolve(task, v.criterion_id, v.key)
            if gt is not None:
                state.matches[(v.claim_id, gt)] = v.value(variant)
        elif v.kind == "cf1_key":
            gt = _resolve(task, v.criterion_id, v.key)
            if gt is not None and v.key is not None:
                gid = task.gts[gt].id
                name = (
                    v.key[len(gid) + 1 :]
                    if v.key.startswith(gid + ":")
                    else (v.key.split(":", 1)[-1])
                )
                state.grades.setdefault((v.claim_id, gt), {})[name] = v.value(variant)
    _expand(state, report.expansions)
    return state


def _resolve(task: _Task, criterion_id: int | None, key: str | None) -> int | None:
    if criterion_id is not None and criterion_id in task.by_criterion:
        return task.by_criterion[criterion_id]
    if key is None:
        return None
    found = task.by_id.get(key)
    if found is None and ":" in key:
        found = task.by_id.get(key.split(":", 1)[0])
    return found


def _expand(state: _State, expansions: Iterable[Mapping[str, Any]]) -> None:
    """Apply accepted expansions: new claims first, so an alias may target one of them.

    Targets are ground-truth ids (``g2.3``, or the store's ``criterion:g2.3``) or an accepted
    new claim (its ``id``, or ``proposal:<uuid>`` of the proposal that added it). A payload
    that is a bare claim (a string, or a dict without ``claim``) is a new claim of the task's
    only list part.
    """
    mine = [e for e in expansions if e.get("framework") == NAME]
    aliases: dict[str, int] = {}
    for exp in mine:
        if exp.get("kind") == "new_claim":
            _add_claim(state, exp, aliases)
    for exp in mine:
        if exp.get("kind") != "new_claim":
            _add_alias(state, exp, aliases)


def _add_claim(state: _State, exp: Mapping[str, Any], aliases: dict[str, int]) -> None:
    """A new ground-truth claim, and the names an alias may target it by."""
    task = state.task
    payload = exp.get("payload")
    placed = _claim_place(task, payload)
    if placed is None:
        state.ignored += 1
        return
    part, claim = placed
    index = len(state.gts)
    named = payload.get("id") if isinstance(payload, Mapping) else None
    gid = str(named or f"x{index + 1}")
    state.gts.append(_Gt(index, gid, part, claim, new=True, accepted=_accepted(claim, task.mode)))
    aliases[gid] = index
    if exp.get("proposal"):
        aliases[f"proposal:{exp['proposal']}"] = index
        aliases[f"p:{exp['proposal']}"] = index
    state.applied += 1


def _claim_place(task: _Task, payload: object) -> tuple[int, dict[str, Any] | str] | None:
    """(list part, claim) of a new-claim payload: ``{part, claim}``, or a bare claim of the
    task's only list part; None when it names no list part or holds no claim."""
    if isinstance(payload, Mapping) and "claim" in payload:
        part, claim = payload.get("part", 0), payload.get("claim")
    else:
        list_parts = [p for p, shape in enumerate(task.shapes) if shape != "dict"]
        part, claim = (list_parts[0] if len(list_parts) == 1 else None), payload
    if not _is_list_part(task, part) or not isinstance(claim, dict | str) or not claim:
        return None
    return part, claim


def _is_list_part(task: _Task, part: object) -> TypeGuard[int]:
    return isinstance(part, int) and 0 <= part < len(task.shapes) and task.shapes[part] != "dict"


def _add_alias(state: _State, exp: Mapping[str, Any], aliases: dict[str, int]) -> None:
    """Another accepted value for one key of a ground-truth claim (alias, extra evidence)."""
    task = state.task
    payload = exp.get("payload")
    if exp.get("kind") not in ("alias", "extra_evidence") or not isinstance(payload, Mapping):
        state.ignored += 1
        return
    named = str(payload.get("target") or exp.get("target") or "")
    name = named.removeprefix("criterion:")
    target = task.by_id.get(name, aliases.get(named, aliases.get(name)))
    key = payload.get("key")
    if target is None or (task.mode != "strings" and key is None):
        state.ignored += 1
        return
    field_name = "" if task.mode == "strings" else str(key)
    value = payload.get("value", payload.get("text"))
    values = {norm(v) for v in variants(value)} - {""}
    state.extra.setdefault((target, field_name), set()).update(values)
    state.applied += 1


# -- matching --------------------------------------------------------------------------------


@dataclass(slots=True)
class _Pairs:
    pairs: list[tuple[_Pred, _Gt]]
    conflicts: int


def _agreed(state: _State, pred: _Pred, gt: _Gt) -> tuple[int, float]:
    grades = [state.grade(pred, gt, k) for k in _scored(state, pred, gt)]
    return sum(1 for g in grades if g >= 2), sum(grades)


def _scored(state: _State, pred: _Pred, gt: _Gt) -> list[str]:
    if state.task.mode == "strings":
        return [""]
    if state.task.mode == "scifacts":
        return list(state.task.fields)
    return [k for k in state.keys_of(pred, gt) if k not in state.task.ignore]


def _one_to_one(state: _State, candidates: list[tuple[_Pred, _Gt]]) -> _Pairs:
    if state.options["one_to_one"] == "reject":
        per_pred: dict[int, int] = defaultdict(int)
        per_gt: dict[int, int] = defaultdict(int)
        for pred, gt in candidates:
            per_pred[pred.index] += 1
            per_gt[gt.index] += 1
        kept = [(p, g) for p, g in candidates if per_pred[p.index] == 1 and per_gt[g.index] == 1]
        return _Pairs(kept, len(candidates) - len(kept))
    ranked = sorted(
        candidates, key=lambda pg: (*(-x for x in _agreed(state, *pg)), pg[0].index, pg[1].index)
    )
    used_p: set[int] = set()
    used_g: set[int] = set()
    chosen: list[tuple[_Pred, _Gt]] = []
    for pred, gt in ranked:
        if pred.index in used_p or gt.index in used_g:
            continue
        used_p.add(pred.index)
        used_g.add(gt.index)
        chosen.append((pred, gt))
    chosen.sort(key=lambda pg: pg[0].index)
    return _Pairs(chosen, len(candidates) - len(chosen))


def _match_keys(state: _State, gt: _Gt) -> list[str]:
    if state.task.mode == "strings":
        return [""]
    if state.task.mode == "scifacts":
        return [state.task.fields[0]]
    keys = list(gt.value) if isinstance(gt.value, dict) else []
    primary = [k for k in state.task.primary if k in keys]
    return primary or [k for k in keys if k not in state.task.ignore]


def _exact_match(state: _State, pred: _Pred, gt: _Gt) -> bool:
    for key in _match_keys(state, gt):
        values = state.pred_norms(pred, key)
        if not values & (
            gt.accepted.get(key, frozenset()) | state.extra.get((gt.index, key), set())
        ):
            return False
    return True


def _list_pairs(state: _State) -> _Pairs:
    """One-to-one pairs of the list parts: verdict matches, then exact agreement with
    expansions (new claims, and claims an alias widened)."""
    result = _one_to_one(state, _judged_matches(state))
    open_gts = _open_gts(state)
    if open_gts:
        _pair_exact(state, result, open_gts)
    return result


def _judged_matches(state: _State) -> list[tuple[_Pred, _Gt]]:
    """The pairs of a list part that a match verdict says are matched."""
    preds = {p.claim_id: p for p in state.preds}
    candidates = []
    for (claim_id, gt_index), value in state.matches.items():
        pred = preds.get(claim_id)
        if pred is None or value != "1":
            continue
        gt = state.gts[gt_index]
        if gt.part == pred.part and state.task.shapes[gt.part] != "dict":
            candidates.append((pred, gt))
    return candidates


def _open_gts(state: _State) -> list[_Gt]:
    """Ground-truth claims of list parts no judge saw whole: new ones (when exact agreement
    credits them) and those an alias widened."""
    widened = {g for g, _ in state.extra}
    credit_new = state.options["expansion_credit"] == "exact"
    return [
        g
        for g in state.gts
        if ((g.new and credit_new) or g.index in widened) and state.task.shapes[g.part] != "dict"
    ]


def _pair_exact(state: _State, result: _Pairs, open_gts: list[_Gt]) -> None:
    """Pair each prediction left unmatched with the first open claim it agrees with exactly."""
    used_p = {p.index for p, _ in result.pairs}
    used_g = {g.index for _, g in result.pairs}
    for pred in state.preds:
        if pred.index in used_p:
            continue
        gt = next(
            (
                g
                for g in open_gts
                if g.index not in used_g and g.part == pred.part and _exact_match(state, pred, g)
            ),
            None,
        )
        if gt is not None:
            result.pairs.append((pred, gt))
            used_p.add(pred.index)
            used_g.add(gt.index)
    result.pairs.sort(key=lambda pg: pg[0].index)


def _dict_pairs(state: _State) -> list[tuple[_Pred, _Gt]]:
    """A dictionary part pairs the prediction's part with the ground truth's, unjudged."""
    out = []
    for gt in state.gts:
        if state.task.shapes[gt.part] != "dict":
            continue
        pred = next(
            (p for p in state.preds if p.part == gt.part and isinstance(p.value, dict)), None
        )
        if pred is not None:
            out.append((pred, gt))
    return out


# -- the two definitions ---------------------------------------------------------------------


def _f1(p: float, r: float) -> float:
    return 2 * p * r / (p + r) if p + r > 0 else 0.0


def _ratio(num: float, den: float) -> float:
    return num / den if den > 0 else 0.0


@dataclass(slots=True)
class _Result:
    precision: float
    recall: float
    f1: float
    agreed: float = 0.0
    pred_keys: float = 0.0
    gt_keys: float = 0.0


def _code_dicts(
    state: _State, pairs: list[tuple[_Pred, _Gt]], fixed: list[tuple[_Pred, _Gt]]
) -> tuple[_Result, bool]:
    task = state.task
    id_ok = all(
        state.grade(p, g, k) >= 2 for p, g in fixed for k in state.keys_of(p, g) if k in task.main
    )
    agreed = sum(_agreed_keys(state, p, g) for p, g in [*fixed, *pairs]) if id_ok else 0
    pred_keys = _key_count((p.value for p in state.preds), task.ignore)
    gt_keys = _key_count((g.value for g in state.gts), task.ignore)
    p = _ratio(agreed, pred_keys)
    r = _ratio(agreed, gt_keys)
    return _Result(p, r, _f1(p, r), agreed, pred_keys, gt_keys), id_ok


def _agreed_keys(state: _State, pred: _Pred, gt: _Gt) -> int:
    """A pair's agreed keys (ignored keys aside); none when a main-claim key disagrees."""
    keys = state.keys_of(pred, gt)
    grades = {k: state.grade(pred, gt, k) for k in keys}
    if any(grades[k] <= 1 for k in keys if k in state.task.main):
        return 0
    return sum(1 for k in keys if k not in state.task.ignore and grades[k] >= 2)


def _key_count(values: Iterable[dict[str, Any] | str], ignore: frozenset[str]) -> int:
    """Keys of the dictionary claims, ignored keys aside."""
    return sum(len([k for k in v if k not in ignore]) for v in values if isinstance(v, dict))


def _code_strings(state: _State, pairs: list[tuple[_Pred, _Gt]]) -> _Result:
    p = _ratio(len(pairs), len(state.preds))
    r = _ratio(len(pairs), len(state.gts))
    return _Result(p, r, _f1(p, r), len(pairs), len(state.preds), len(state.gts))


def _code_scifacts(state: _State) -> _Result:
    preds = [p for p in state.preds if isinstance(p.value, dict)]
    gts = state.gts
    precision = recall = f1 = 1.0
    if not preds or not gts:
        return _Result(0.0, 0.0, 0.0, 0.0, len(preds), len(gts))
    for name in state.task.fields:
        p_f, r_f = _field_rates(state, preds, gts, name)
        precision *= p_f
        recall *= r_f
        f1 *= _f1(p_f, r_f)
    return _Result(precision, recall, f1, 0.0, len(preds), len(gts))


def _field_rates(
    state: _State, preds: list[_Pred], gts: list[_Gt], name: str
) -> tuple[float, float]:
    """One SciFacts field: the share of predictions matching some entry, and of entries some
    prediction matches (no one-to-one)."""
    hit = [[state.grade(p, g, name) >= 2 for g in gts] for p in preds]
    p_f = sum(1 for row in hit if any(row)) / len(preds)
    r_f = sum(1 for j in range(len(gts)) if any(row[j] for row in hit)) / len(gts)
    return p_f, r_f


def _scifacts_pairs(state: _State) -> list[tuple[_Pred, _Gt]]:
    """Eq. 1 pairs for SciFacts: one-to-one over pairs whose main field agrees."""
    main = state.task.fields[0]
    candidates = [
        (p, g)
        for p in state.preds
        for g in state.gts
        if isinstance(p.value, dict) and state.grade(p, g, main) >= 2
    ]
    return _one_to_one(state, candidates).pairs


def _paper(state: _State, pairs: list[tuple[_Pred, _Gt]], id_ok: bool) -> tuple[_Result, _Result]:
    """Eq. 1, standard and strict, over one-to-one pairs."""
    prec_of: dict[int, float] = {}
    rec_of: dict[int, float] = {}
    for pred, gt in pairs:
        s, prec_i, rec_i = _pair_credit(state, pred, gt, id_ok)
        prec_of[pred.index] = gt.weight * s * prec_i
        rec_of[gt.index] = gt.weight * s * rec_i
    n_pred, n_gt = len(state.preds), len(state.gts)
    p = _ratio(sum(prec_of.values()), n_pred)
    r = _ratio(sum(rec_of.values()), n_gt)
    standard = _Result(p, r, _f1(p, r))
    ps = min((prec_of.get(x.index, 0.0) for x in state.preds), default=0.0)
    rs = min((rec_of.get(g.index, 0.0) for g in state.gts), default=0.0)
    return standard, _Result(ps, rs, _f1(ps, rs))


def _pair_credit(state: _State, pred: _Pred, gt: _Gt, id_ok: bool) -> tuple[float, float, float]:
    """(s, Prec(A_i), Rec(A_i)) of one matched pair: the main-claim agreement, the share of
    the prediction's sub-claims that agree, the share of the truth's reproduced."""
    task = state.task
    if task.mode == "strings":
        return 1.0, 1.0, 1.0  # atomic: the match is the agreement
    mains, sub_g, sub_p = _claim_keys(state, pred, gt)
    s = min((_agreement(state, pred, gt, k) for k in mains), default=1.0)
    if task.mode == "dicts" and state.options["paper_identification_gate"] == "all" and not id_ok:
        s = 0.0
    got = sum(_agreement(state, pred, gt, k) for k in sub_g)
    prec_i = min(1.0, got / len(sub_p)) if sub_p else 1.0
    rec_i = got / len(sub_g) if sub_g else 1.0
    if state.options["paper_recall"] == "pred":
        rec_i = prec_i
    return s, prec_i, rec_i


def _claim_keys(state: _State, pred: _Pred, gt: _Gt) -> tuple[list[str], list[str], list[str]]:
    """(main keys, the truth's sub-claim keys, the prediction's sub-claim keys) of a pair."""
    task = state.task
    if task.mode == "scifacts":
        return [task.fields[0]], list(task.fields[1:]), list(task.fields[1:])
    keys = [k for k in state.keys_of(pred, gt) if k not in task.ignore]
    mains = [k for k in keys if k in task.main]
    sub_g = [k for k in keys if k not in task.main]
    return mains, sub_g, _own_sub_claims(pred, task)


def _own_sub_claims(pred: _Pred, task: _Task) -> list[str]:
    """The prediction's own sub-claim keys: neither main nor ignored."""
    if not isinstance(pred.value, dict):
        return []
    not_sub = task.ignore | task.main
    return [k for k in pred.value if k not in not_sub]


def _agreement(state: _State, pred: _Pred, gt: _Gt, key: str) -> float:
    """Eq. 1's agreement of one key: binarised at 2 as the code does, or grade / 3."""
    grade = state.grade(pred, gt, key)
    if state.options["paper_key_credit"] == "fraction":
        return grade / 3.0
    return 1.0 if grade >= 2 else 0.0


class ClaimsF1Framework(FrameworkBase):
    name: str = NAME
    label: str = "LiveDRBench claims P/R/F1"
    kinds: Mapping[str, VerdictKind] = KINDS
    rating: Rating | None = None
    proposals: Proposals = PROPOSALS
    rejudge: Rejudge | None = Rejudge(
        frozenset({"cf1_match", "cf1_key"}),
        steps={"cf1_match": "grade", "cf1_key": "grade"},
        pipeline="reviewer.frameworks.livedrbench.judge_pipeline:SPEC",
    )
    grading: Grading | None = GRADING
    metrics: Sequence[Metric] = METRICS
    options: Sequence[OptionSpec] = OPTIONS

    def score_report(
        self, report: ReportInput, variant: Variant, options: Mapping[str, str]
    ) -> ReportScores:
        try:
            task = _task(report)
            preds = _preds(report)
        except _Unscorable:
            return {}
        judged = any(v.kind in KINDS for v in report.verdicts)
        if not judged and preds:
            return {}  # not judged yet: no score rather than a misleading zero
        state = _state(report, task, preds, variant, options)
        conflicts = 0
        id_ok = True
        if task.mode == "dicts":
            listed = _list_pairs(state)
            conflicts = listed.conflicts
            fixed = _dict_pairs(state)
            code, id_ok = _code_dicts(state, listed.pairs, fixed)
            pairs = fixed + listed.pairs
        elif task.mode == "strings":
            listed = _list_pairs(state)
            conflicts = listed.conflicts
            pairs = listed.pairs
            code = _code_strings(state, pairs)
        else:
            code = _code_scifacts(state)
            pairs = _scifacts_pairs(state)
        paper, strict = _paper(state, pairs, id_ok)
        scores: ReportScores = {
            "precision": code.precision,
            "recall": code.recall,
            "f1": code.f1,
            "precision_paper": paper.precision,
            "recall_paper": paper.recall,
            "f1_paper": paper.f1,
            "precision_strict": strict.precision,
            "recall_strict": strict.recall,
            "f1_strict": strict.f1,
            "match_conflicts": float(conflicts),
            "_matched": float(len(pairs)),
            "_agreed_keys": code.agreed,
            "_pred_keys": code.pred_keys,
            "_gt_keys": code.gt_keys,
            "_pred_claims": float(len(state.preds)),
            "_gt_claims": float(len(state.gts)),
            "_expansions": float(state.applied),
            "_expansions_ignored": float(state.ignored),
            CATEGORY_PREFIX + task.category: 1.0,
        }
        return scores

    def aggregate(
        self, reports: Sequence[ReportScores], options: Mapping[str, str]
    ) -> dict[str, Aggregate]:
        scored = [r for r in reports if r.get("f1") is not None]
        by_category = _by_category(scored)
        out: dict[str, Aggregate] = {}
        for metric in BASE_METRICS:
            out[metric] = _metric_mean(scored, metric)
            means = []
            for category in sorted(by_category):
                agg = _metric_mean(by_category[category], metric)
                out[f"{metric}[{category}]"] = agg
                if agg.value is not None:
                    means.append(agg.value)
            out[f"{metric}_macro"] = Aggregate(
                sum(means) / len(means) if means else None, len(means)
            )
        out["match_conflicts"] = Aggregate(
            float(sum(r.get("match_conflicts") or 0.0 for r in scored)), len(scored)
        )
        return out


def _by_category(scored: list[ReportScores]) -> dict[str, list[ReportScores]]:
    """Reports by the category their hidden ``_cat:<category>`` part names."""
    by_category: dict[str, list[ReportScores]] = defaultdict(list)
    for r in scored:
        category = next((k[len(CATEGORY_PREFIX) :] for k in r if k.startswith(CATEGORY_PREFIX)), "")
        by_category[category].append(r)
    return by_category


def _metric_mean(reports: list[ReportScores], metric: str) -> Aggregate:
    return _mean(v for r in reports if (v := r.get(metric)) is not None)


def _mean(values: Iterable[float]) -> Aggregate:
    items = list(values)
    return Aggregate(sum(items) / len(items) if items else None, len(items))


FRAMEWORK = ClaimsF1Framework()
