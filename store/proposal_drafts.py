"""Turning what a reviewer has selected on the report screen into a proposal.

The workstation knows a report, the selected judgment and a piece of text the reviewer typed or
found in the report; this builds the benchmark-shaped payload, the target of an alias or extra
evidence, and the text's span in the report, so that ``store.proposals.propose`` receives the
same thing the command line would give it.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from typing import Any

from reviewer.citations import locate
from reviewer.proposals import ATTACHED_KINDS, PROPOSAL_KINDS
from store.proposals import ProposalError


@dataclass(frozen=True, slots=True)
class Draft:
    task_id: int
    report_id: int
    framework: str
    kind: str
    payload: Any
    target: str | None
    span: tuple[int, int] | None


def draft(conn: sqlite3.Connection, report_id: int, judgment_id: int | None, kind: str,
          text: str) -> Draft:
    """The proposal a reviewer means, or a ProposalError saying what is missing."""
    if kind not in PROPOSAL_KINDS:
        raise ProposalError(f"unknown proposal kind {kind!r}")
    head = conn.execute(
        """SELECT r.task_id, r.ext_id, r.markdown, s.frameworks, t.metadata
           FROM report r JOIN task t ON t.id = r.task_id JOIN system y ON y.id = r.system_id
           JOIN suite s ON s.id = y.suite_id WHERE r.id = ?""",
        (report_id,),
    ).fetchone()
    if head is None:
        raise ProposalError(f"no report {report_id}")
    task_id, report_ext, markdown, frameworks_json, task_meta = head
    frameworks: list[str] = json.loads(frameworks_json)
    selected = _selected(conn, judgment_id) if judgment_id is not None else None
    framework = selected["framework"] if selected else frameworks[0]
    text = text.strip()
    span = locate(markdown, text) if text else None

    if kind in ATTACHED_KINDS:
        if selected is None:
            raise ProposalError("select the judgment whose item the alias or evidence is for")
        target = (f"criterion:{selected['criterion']}" if selected["criterion"] else
                  f"claim:{report_ext}/{selected['claim']}" if selected["claim"] else None)
        if target is None:
            raise ProposalError("the selected judgment names no criterion or claim")
        if not text:
            raise ProposalError("type the alias or quote the evidence")
        if framework == "claims_f1":
            from reviewer.claims_f1_gt import alias_payload

            payload: Any = alias_payload(selected["criterion"] or target, None, text)
        else:
            payload = {"text": text} if kind == "alias" else {"quote": text}
        return Draft(task_id, report_id, framework, kind, payload, target, span)

    if framework == "claims_f1" and kind == "new_claim":
        if selected is None or selected["claim_meta"] is None:
            raise ProposalError("select a predicted claim to propose it as ground truth")
        from reviewer.claims_f1_gt import proposal_from_claim

        try:
            payload = proposal_from_claim(json.loads(task_meta), selected["claim_meta"],
                                          f"{report_ext}/{selected['claim']}")
        except ValueError as exc:
            raise ProposalError(str(exc)) from None
        return Draft(task_id, report_id, framework, kind, payload, None, span)

    if not text:
        raise ProposalError("type the claim or rubric text (or find it in the report first)")
    if framework == "cascade":
        subtask = selected["subtask"] if selected else None
        if subtask is None:
            raise ProposalError("select a judgment of the subtask the new item belongs to")
        if kind == "new_claim":
            payload = {"subtask": subtask, "fact": text, "extract": text}
        else:
            dimension = selected["dimension"] if selected and selected["dimension"] else "ins"
            payload = {"subtask": subtask, "dimension": dimension, "text": text}
        return Draft(task_id, report_id, framework, kind, payload, None, span)
    if framework == "race" and kind == "new_rubric":
        dimension = selected["dimension"] if selected and selected["dimension"] else \
            "comprehensiveness"
        return Draft(task_id, report_id, framework, kind,
                     {"dimension": dimension, "criterion": text}, None, span)
    raise ProposalError(f"a {kind} for {framework} has a benchmark-specific shape: use "
                        "`gavel propose` with the payload as JSON")


def _selected(conn: sqlite3.Connection, judgment_id: int) -> dict[str, Any] | None:
    row = conn.execute(
        """SELECT j.kind, c.ext_id, c.dimension, k.ext_id, k.metadata, st.ext_id,
                  coalesce(c.framework, kc.framework)
           FROM judgment j
           LEFT JOIN criterion c ON c.id = j.criterion_id
           LEFT JOIN claim k ON k.id = j.claim_id
           LEFT JOIN criterion kc ON kc.id = k.criterion_id
           LEFT JOIN subtask st ON st.id = j.subtask_id
           WHERE j.id = ?""",
        (judgment_id,),
    ).fetchone()
    if row is None:
        return None
    from reviewer.scoring.registry import get_kind

    kind = get_kind(row[0])
    return {
        "criterion": row[1], "dimension": row[2], "claim": row[3],
        "claim_meta": json.loads(row[4]) if row[4] else None, "subtask": row[5],
        "framework": kind.framework if kind else (row[6] or "cascade"),
    }
