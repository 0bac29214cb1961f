"""LiveDRBench ground-truth expansions: a predicted claim becomes a new ground-truth claim, a
typed value an alias of a key; items are kept in the benchmark's own free-form shapes."""

from __future__ import annotations

from typing import Any

from reviewer.framework import DraftError, Proposals, Selection, needs_json, no_text
from reviewer.frameworks.livedrbench.ground_truth import alias_payload, proposal_from_claim


def draft(kind: str, selection: Selection | None, text: str) -> Any:
    if kind != "new_claim":
        raise no_text() if not text else needs_json(kind, "claims_f1")
    if selection is None or selection.claim_metadata is None:
        raise DraftError("select a predicted claim to propose it as ground truth")
    try:
        return proposal_from_claim(
            selection.task_metadata,
            selection.claim_metadata,
            f"{selection.report_ext}/{selection.claim}",
        )
    except ValueError as exc:
        raise DraftError(str(exc)) from None


def attached(kind: str, selection: Selection, target: str, text: str) -> Any:
    return alias_payload(selection.criterion or target, None, text)


PROPOSALS = Proposals(free_form=True, draft=draft, attached=attached)
