"""DailyReport's grading knowledge: where its rubric levels are written, and which of its
verdicts must agree with which.

Its rubric criteria carry their level texts in their explanation ("1: … 0.5: … 0: …", or
"0.5 if …; 0 if …"), for the ins and rat dimensions. A claim's factuality and its
claim ↔ reference consistency verdicts judge the same sentence: when every cited reference
supports it the claim is correct, when every one conflicts it is incorrect. A consistency
verdict on a page that could not be fetched can only be unknown (App. C: no content to judge).
Each subtask is scored through its ins criterion: one without is a zero, and says so at import.
"""

from __future__ import annotations

from reviewer.grading import Criterion, Entailment, Grading, SubtaskCriterion
from reviewer.levels import parse_levels

LEVEL_DIMENSIONS = ("ins", "rat")


def levels(criterion: Criterion) -> dict[str, str]:
    if criterion.dimension not in LEVEL_DIMENSIONS:
        return {}
    return parse_levels(criterion.explanation)


GRADING = Grading(
    levels=levels,
    level_kinds=frozenset(LEVEL_DIMENSIONS),
    entailments=(
        Entailment("claim", "consistency", {"support": "correct", "conflict": "incorrect"}),
    ),
    unreachable={"consistency": "unknown", "claim": "unknown"},
    evidence_kinds=frozenset({"claim", "consistency"}),
    method="Rubric level texts come from each criterion's explanation; a claim's verdict must "
    "agree with its consistency verdicts when they all agree.",
    subtask_criterion=SubtaskCriterion(
        "ins",
        "its ins_k is 0 and the report is flagged 'needs review' (option "
        "cascade.missing_ins=exclude leaves the subtask out instead)",
    ),
)
