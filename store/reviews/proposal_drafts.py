"""Turning what a reviewer has selected on the report screen into a proposal.

The workstation knows a report, the selected judgment and a piece of text the reviewer typed or
found in the report; this builds the benchmark-shaped payload, the target of an alias or extra
evidence, and the text's span in the report, so that ``store.reviews.proposals.propose`` receives
the same thing the command line would give it.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from typing import Any

from reviewer.citations import locate
from reviewer.framework import DraftError, Selection, needs_json, no_text
from reviewer.proposals import ATTACHED_KINDS, PROPOSAL_KINDS
from reviewer.registry import get_framework, get_kind
from store.reviews.proposals import ProposalError


@dataclass(frozen=True, slots=True)
class Draft:
    task_id: int
    report_id: int
    framework: str
    kind: str
    payload: Any
    target: str | None
    span: tuple[int, int] | None


def draft(
    conn: sqlite3.Connection, report_id: int, judgment_id: int | None, kind: str, text: str
) -> Draft:
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
    selected = (
        _selected(conn, judgment_id, report_ext, json.loads(task_meta))
        if judgment_id is not None
        else None
    )
    framework = selected[0] if selected else json.loads(frameworks_json)[0]
    selection = selected[1] if selected else None
    rules = get_framework(framework).proposals
    text = text.strip()
    span = locate(markdown, text) if text else None

    try:
        if kind in ATTACHED_KINDS:
            if selection is None:
                raise DraftError("select the judgment whose item the alias or evidence is for")
            target = (
                f"criterion:{selection.criterion}"
                if selection.criterion
                else f"claim:{report_ext}/{selection.claim}"
                if selection.claim
                else None
            )
            if target is None:
                raise DraftError("the selected judgment names no criterion or claim")
            if not text:
                raise DraftError("type the alias or quote the evidence")
            payload: Any = (
                rules.attached(kind, selection, target, text)
                if rules.attached
                else {"text": text}
                if kind == "alias"
                else {"quote": text}
            )
            return Draft(task_id, report_id, framework, kind, payload, target, span)
        if rules.draft is None:
            raise no_text() if not text else needs_json(kind, framework)
        payload = rules.draft(kind, selection, text)
    except DraftError as exc:
        raise ProposalError(str(exc)) from None
    return Draft(task_id, report_id, framework, kind, payload, None, span)


def _selected(
    conn: sqlite3.Connection, judgment_id: int, report_ext: str, task_metadata: dict[str, Any]
) -> tuple[str, Selection] | None:
    """The selected judgment's framework and what a proposal can take from it."""
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
    kind = get_kind(row[0])
    framework = kind.framework if kind else row[6]
    if framework is None:
        return None
    return framework, Selection(
        report_ext=report_ext,
        task_metadata=task_metadata,
        kind=row[0],
        criterion=row[1],
        dimension=row[2],
        claim=row[3],
        claim_metadata=json.loads(row[4]) if row[4] else None,
        subtask=row[5],
    )
