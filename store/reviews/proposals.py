"""Ground-truth expansion proposals: propose, accept, reject, list — the non-UI workflow.

A proposal is an immutable ``proposal`` row plus review events that target ``p:<uuid>``:
``propose`` (written with the row; its value carries the whole proposal as JSON, so a merged
log recreates the row in another database), then any number of ``accept`` / ``reject``
events. Each reviewer identity stands by its own newest; identities that disagree leave the
proposal ``in conflict`` (see :data:`store.scores.inputs.PROPOSAL_STATUS_SQL`), which counts as not
accepted; a proposal nobody has decided is ``proposed``.

Duplicates are looked for when proposing and again when accepting (something similar may have
been accepted in between). What a proposal is compared with:

* a new item: the task's criteria of the same framework (its ground truth), the extracted
  claims of the proposal's own report for frameworks whose claims are per-report extractions
  (cascade, fact: "was this claim already extracted?"), and the task's other new-item
  proposals of the framework (not rejected ones; only accepted ones when accepting);
* an alias or extra evidence: the other proposals of the same kind for the same target.

A ``revise_item`` proposal comes from the judge card (:func:`propose_revision`): it names an
existing criterion, is never compared for duplicates (one per item and run instead), and
accepted changes no score — the scores' inputs leave it out — only the gold diff, where the
item is marked under revision.

Accepting a new item that duplicates something needs ``force``. Accept and reject rescore
every report of the task in both variants: an expansion changes the ground truth the judge
variant is scored against too.
"""

from __future__ import annotations

import json
import sqlite3
import uuid as uuidlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from reviewer.proposals import (
    ATTACHED_KINDS,
    NEW_ITEM_KINDS,
    REVISE_ITEM,
    Candidate,
    DuplicateMatch,
    PayloadError,
    best_duplicate,
    canonical_json,
    check_payload,
    claim_text,
    effect,
    normalize_text,
    payload_target,
    payload_text,
)
from reviewer.registry import get_framework
from store.reviewlog.events import ReviewError, note_identity
from store.scores.cache import update_scores
from store.scores.inputs import PROPOSAL_STATUS_SQL
from store.sqlite.tx import now_iso, transaction


class ProposalError(ReviewError):
    """A proposal, acceptance or rejection that cannot be recorded as asked."""


@dataclass(frozen=True, slots=True)
class Proposal:
    uuid: str
    suite: str
    task: str
    task_id: int
    report: str | None
    report_id: int | None
    system: str | None
    framework: str
    kind: str
    target: str | None
    payload: Any
    span: tuple[int, int] | None
    reviewer: str
    rationale: str
    duplicate_of: str | None
    similarity: float | None
    created_at: str
    status: str
    """'proposed', 'accepted' or 'rejected'."""
    decided_by: str | None
    decided_at: str | None
    decision_rationale: str | None

    @property
    def effect(self) -> str:
        return effect(self.kind)


@dataclass(frozen=True, slots=True)
class Proposed:
    """The new proposal and the most similar existing item (a duplicate when its score is at
    or above ``reviewer.proposals.DUPLICATE_THRESHOLD``)."""

    proposal: Proposal
    nearest: DuplicateMatch | None


# -- proposing -------------------------------------------------------------------------------


def propose(
    conn: sqlite3.Connection,
    reviewer: str,
    task_id: int,
    report_id: int | None,
    framework: str | None,
    kind: str,
    payload: Any,
    span: tuple[int, int] | None,
    rationale: str,
    target: str | None = None,
) -> Proposed:
    """Record a proposal (row and ``propose`` event, one transaction) after checking it.
    Without a framework it belongs to the first that scores the task's suite."""
    reviewer = _reviewer(reviewer)
    task = _task(conn, task_id)
    framework = _proposal_framework(task, framework)
    try:
        check_payload(framework, kind, payload, target)
    except PayloadError as exc:
        raise ProposalError(f"{exc} ({exc.field})" if exc.field else str(exc)) from None
    report_ext = _report_of_task(conn, report_id, task_id, task["ext"])
    if span is not None and (span[0] < 0 or span[1] < span[0]):
        raise ProposalError(f"span {span[0]}:{span[1]} is not a range of characters")
    target = target or payload_target(framework, payload)
    canonical_target = _resolve_target(conn, task_id, target) if target else None
    nearest = find_duplicate(conn, task_id, report_id, framework, kind, payload, canonical_target)
    duplicate = nearest if nearest is not None and nearest.is_duplicate else None
    proposal_uuid = str(uuidlib.uuid4())
    spec = {
        "task": f"{task['suite']}/{task['ext']}",
        "report": f"{task['suite']}/{report_ext}" if report_ext else None,
        "framework": framework,
        "kind": kind,
        "target": canonical_target,
        "payload": payload,
        "span": list(span) if span is not None else None,
        **_duplicate_fields(duplicate),
    }
    created_at = now_iso()
    with transaction(conn):
        insert_proposal(
            conn,
            proposal_uuid,
            spec,
            task["suite_id"],
            task_id,
            report_id,
            reviewer,
            rationale,
            created_at,
        )
        _event(
            conn, proposal_uuid, reviewer, "propose", canonical_json(spec), rationale, created_at
        )
    return Proposed(get_proposal(conn, proposal_uuid), nearest)


def _duplicate_fields(duplicate: DuplicateMatch | None) -> dict[str, Any]:
    """The proposal a new one duplicates, and how similar they are (none: both None)."""
    if duplicate is None:
        return {"duplicate_of": None, "similarity": None}
    return {"duplicate_of": duplicate.ref, "similarity": round(duplicate.score, 6)}


def _proposal_framework(task: dict[str, Any], framework: str | None) -> str:
    """The framework named, which must score the task's suite; else the first that does."""
    frameworks = json.loads(task["frameworks"])
    chosen = framework or frameworks[0]
    if chosen not in frameworks:
        raise ProposalError(
            f"task {task['ext']} belongs to a suite scored by "
            f"{', '.join(frameworks)}, not {chosen!r}"
        )
    return str(chosen)


def _report_of_task(
    conn: sqlite3.Connection, report_id: int | None, task_id: int, task_ext: str
) -> str | None:
    """The external id of the report a proposal comes from, which must answer its task."""
    if report_id is None:
        return None
    row = conn.execute("SELECT ext_id, task_id FROM report WHERE id = ?", (report_id,)).fetchone()
    if row is None or row[1] != task_id:
        raise ProposalError(f"report {report_id} is not a report of task {task_ext}")
    return str(row[0])


def insert_proposal(
    conn: sqlite3.Connection,
    proposal_uuid: str,
    spec: dict[str, Any],
    suite_id: int,
    task_id: int,
    report_id: int | None,
    reviewer: str,
    rationale: str,
    created_at: str,
) -> None:
    """Write the immutable row of a proposal (also used when a merge brings one in)."""
    span = spec.get("span")
    payload = spec["payload"]
    conn.execute(
        """INSERT INTO proposal (uuid, suite_id, task_id, report_id, framework, kind, target,
               payload, normalized, span_start, span_end, reviewer, rationale, duplicate_of,
               created_at)
           VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)""",
        (
            proposal_uuid,
            suite_id,
            task_id,
            report_id,
            spec["framework"],
            spec["kind"],
            spec.get("target"),
            canonical_json(payload),
            normalize_text(payload_text(spec["framework"], spec["kind"], payload)),
            span[0] if span else None,
            span[1] if span else None,
            reviewer,
            rationale,
            spec.get("duplicate_of"),
            created_at,
        ),
    )


def _event(
    conn: sqlite3.Connection,
    proposal_uuid: str,
    reviewer: str,
    action: str,
    value: str | None,
    rationale: str,
    created_at: str,
) -> str:
    """A signed proposal event (see :mod:`reviewer.identity`)."""
    from store.reviewlog.identity import load_identity

    identity = load_identity(reviewer)
    event = {
        "uuid": str(uuidlib.uuid4()),
        "target": f"p:{proposal_uuid}",
        "reviewer": reviewer,
        "action": action,
        "value": value,
        "rationale": rationale,
        "reason": None,
        "created_at": created_at,
        "supersedes": None,
        "run": None,
        "key": identity.public_key,
    }
    conn.execute(
        """INSERT INTO review_event (uuid, target, judgment_id, report_id, reviewer, action,
               value, rationale, reason, created_at, supersedes, run, key, sig)
           VALUES (?, ?, NULL, NULL, ?, ?, ?, ?, NULL, ?, NULL, NULL, ?, ?)""",
        (
            event["uuid"],
            event["target"],
            reviewer,
            action,
            value,
            rationale,
            created_at,
            event["key"],
            identity.sign(event),
        ),
    )
    note_identity(conn, reviewer, identity.public_key)
    return str(event["uuid"])


def _reviewer(name: str) -> str:
    if not name.strip():
        raise ProposalError("a reviewer name is required")
    return name.strip()


def _task(conn: sqlite3.Connection, task_id: int) -> dict[str, Any]:
    row = conn.execute(
        """SELECT t.ext_id, s.ext_id, s.id, s.frameworks FROM task t
           JOIN suite s ON s.id = t.suite_id WHERE t.id = ?""",
        (task_id,),
    ).fetchone()
    if row is None:
        raise ProposalError(f"no task with id {task_id}")
    return {"ext": row[0], "suite": row[1], "suite_id": row[2], "frameworks": row[3]}


def _resolve_target(conn: sqlite3.Connection, task_id: int, target: str) -> str:
    """The canonical name of the existing item an alias or extra evidence attaches to.

    Accepted spellings: a criterion id of the task (``s3-ins`` or ``criterion:s3-ins``), a
    claim as ``<report>/<claim>`` (or ``claim:…``), a proposal of the task (``p:<uuid>`` or
    ``proposal:<uuid>``).
    """
    prefix, sep, rest = target.partition(":")
    if prefix not in ("criterion", "claim", "proposal", "p"):
        prefix, sep, rest = "", "", target
    name = rest if sep else target
    if not sep or prefix == "criterion":
        row = conn.execute(
            "SELECT 1 FROM criterion WHERE task_id = ? AND ext_id = ?", (task_id, name)
        ).fetchone()
        if row is not None:
            return f"criterion:{name}"
    if not sep or prefix == "claim":
        report, slash, claim = name.partition("/")
        if slash:
            row = conn.execute(
                """SELECT 1 FROM claim k JOIN report r ON r.id = k.report_id
                   WHERE r.task_id = ? AND r.ext_id = ? AND k.ext_id = ?""",
                (task_id, report, claim),
            ).fetchone()
            if row is not None:
                return f"claim:{report}/{claim}"
    if sep and prefix in ("p", "proposal"):
        row = conn.execute(
            "SELECT 1 FROM proposal WHERE task_id = ? AND uuid = ?", (task_id, name)
        ).fetchone()
        if row is not None:
            return f"proposal:{name}"
    raise ProposalError(
        f"target {target!r} is not a criterion, claim (<report>/<claim>) or "
        "proposal (p:<uuid>) of this task"
    )


# -- duplicates --------------------------------------------------------------------------------


def find_duplicate(
    conn: sqlite3.Connection,
    task_id: int,
    report_id: int | None,
    framework: str,
    kind: str,
    payload: Any,
    target: str | None,
    *,
    exclude: str | None = None,
    accepted_only: bool = False,
) -> DuplicateMatch | None:
    """The existing item most similar to a payload (see the module docstring for which)."""
    text = payload_text(framework, kind, payload)
    return best_duplicate(
        text, _candidates(conn, task_id, report_id, framework, kind, target, exclude, accepted_only)
    )


def _candidates(
    conn: sqlite3.Connection,
    task_id: int,
    report_id: int | None,
    framework: str,
    kind: str,
    target: str | None,
    exclude: str | None,
    accepted_only: bool,
) -> Iterator[Candidate]:
    """What a proposal could duplicate: for a new item, the task's ground-truth items (and,
    for a new claim where claims are checked for truth, its report's claims); then the
    other proposals of its kind, or of any new-item kind."""
    kinds: Sequence[str] = [kind]
    if kind in NEW_ITEM_KINDS:
        yield from _ground_truth(conn, task_id, framework)
        # Where claims are extracted per report (predictions checked for truth), a proposed
        # claim is compared with its report's claims; elsewhere (LiveDRBench) report claims
        # are predictions scored *against* the ground truth and are not compared.
        if (
            kind == "new_claim"
            and report_id is not None
            and get_framework(framework).proposals.report_claims
        ):
            yield from _report_claims(conn, report_id)
        kinds = sorted(NEW_ITEM_KINDS)
    wanted = ("accepted",) if accepted_only else ("proposed", "accepted")
    for other in _proposal_rows(conn, task_id=task_id):
        if other.uuid == exclude or other.status not in wanted or other.kind not in kinds:
            continue
        if other.framework != framework or (kind in ATTACHED_KINDS and other.target != target):
            continue
        yield Candidate(
            f"proposal:{other.uuid}", payload_text(other.framework, other.kind, other.payload)
        )


def _ground_truth(conn: sqlite3.Connection, task_id: int, framework: str) -> Iterator[Candidate]:
    """The task's criteria of the framework; a ground-truth claim stored as a criterion keeps
    the claim itself in metadata."""
    for ext, text, metadata in conn.execute(
        "SELECT ext_id, text, metadata FROM criterion WHERE task_id = ? AND framework = ? "
        "ORDER BY ordinal",
        (task_id, framework),
    ):
        claim = json.loads(metadata).get("claim") if metadata != "{}" else None
        yield Candidate(f"criterion:{ext}", claim_text(claim) if claim else text)


def _report_claims(conn: sqlite3.Connection, report_id: int) -> Iterator[Candidate]:
    """The report's claims, as stated and (where it differs) as completed."""
    for report, ext, fact, extract in conn.execute(
        """SELECT r.ext_id, k.ext_id, k.fact, k.extract FROM claim k
           JOIN report r ON r.id = k.report_id WHERE k.report_id = ?
           ORDER BY k.ordinal""",
        (report_id,),
    ):
        yield Candidate(f"claim:{report}/{ext}", fact)
        if extract and extract != fact:
            yield Candidate(f"claim:{report}/{ext}", extract)


# -- deciding ----------------------------------------------------------------------------------


def accept(
    conn: sqlite3.Connection,
    reviewer: str,
    proposal_uuid: str,
    rationale: str = "",
    *,
    force: bool = False,
) -> Proposal:
    """Accept a proposal into the ground truth and rescore its task.

    A new item that now duplicates the ground truth or an accepted proposal is refused unless
    ``force`` (propose it as an alias of that item instead).
    """
    proposal = get_proposal(conn, proposal_uuid)
    if proposal.kind in NEW_ITEM_KINDS and not force:
        match = find_duplicate(
            conn,
            proposal.task_id,
            proposal.report_id,
            proposal.framework,
            proposal.kind,
            proposal.payload,
            proposal.target,
            exclude=proposal.uuid,
            accepted_only=True,
        )
        if match is not None and match.is_duplicate:
            raise ProposalError(
                f"proposal {proposal.uuid} duplicates {match.ref} (similarity "
                f"{match.score:.2f}): {match.text!r}; propose it as an alias of that item, "
                "or accept with force"
            )
    return _decide(conn, reviewer, proposal, "accept", rationale)


def reject(
    conn: sqlite3.Connection, reviewer: str, proposal_uuid: str, rationale: str = ""
) -> Proposal:
    return _decide(conn, reviewer, get_proposal(conn, proposal_uuid), "reject", rationale)


def _decide(
    conn: sqlite3.Connection, reviewer: str, proposal: Proposal, action: str, rationale: str
) -> Proposal:
    reviewer = _reviewer(reviewer)
    with transaction(conn):
        _event(conn, proposal.uuid, reviewer, action, None, rationale, now_iso())
        rescore_task(conn, proposal.task_id)
    return get_proposal(conn, proposal.uuid)


def rescore_task(conn: sqlite3.Connection, task_id: int) -> None:
    report_ids = [
        rid for (rid,) in conn.execute("SELECT id FROM report WHERE task_id = ?", (task_id,))
    ]
    update_scores(conn, report_ids, variants=("judge", "adjudicated"))


# -- reading -----------------------------------------------------------------------------------


_SELECT = f"""
    SELECT p.uuid, s.ext_id, t.ext_id, p.task_id, r.ext_id, p.report_id, y.ext_id, p.framework,
           p.kind, p.target, p.payload, p.span_start, p.span_end, p.reviewer, p.rationale,
           p.duplicate_of, p.created_at, st.action, st.reviewer, st.created_at, st.rationale,
           pe.value
    FROM proposal p
    JOIN suite s ON s.id = p.suite_id
    JOIN task t ON t.id = p.task_id
    LEFT JOIN report r ON r.id = p.report_id
    LEFT JOIN system y ON y.id = r.system_id
    LEFT JOIN ({PROPOSAL_STATUS_SQL}) st ON st.proposal = p.uuid AND st.rn = 1
    LEFT JOIN (SELECT substr(e.target, 3) AS proposal, e.value AS value FROM review_event e
               WHERE e.target >= 'p:' AND e.target < 'p;' AND e.action = 'propose'
              ) pe ON pe.proposal = p.uuid
"""

_STATUS = {None: "proposed", "accept": "accepted", "reject": "rejected", "conflict": "in conflict"}


def _proposal_rows(
    conn: sqlite3.Connection, *, task_id: int | None = None, uuid: str | None = None
) -> Iterator[Proposal]:
    where: list[str] = ["1"]
    params: list[object] = []
    if task_id is not None:
        where.append("p.task_id = ?")
        params.append(task_id)
    if uuid is not None:
        where.append("p.uuid = ?")
        params.append(uuid)
    sql = _SELECT + " WHERE " + " AND ".join(where) + " ORDER BY p.task_id, p.created_at, p.uuid"
    for row in conn.execute(sql, params):
        spec = json.loads(row[21]) if row[21] else {}
        yield Proposal(
            uuid=row[0],
            suite=row[1],
            task=row[2],
            task_id=row[3],
            report=row[4],
            report_id=row[5],
            system=row[6],
            framework=row[7],
            kind=row[8],
            target=row[9],
            payload=json.loads(row[10]),
            span=(row[11], row[12]) if row[11] is not None else None,
            reviewer=row[13],
            rationale=row[14],
            duplicate_of=row[15],
            similarity=spec.get("similarity"),
            created_at=row[16],
            status=_STATUS[row[17]],
            decided_by=row[18],
            decided_at=row[19],
            decision_rationale=row[20],
        )


def proposals(
    conn: sqlite3.Connection,
    task_id: int | None = None,
    status: str | None = None,
    kind: str | None = None,
) -> list[Proposal]:
    """Proposals (of one task, with one status, of one kind) in task, time order."""
    if status is not None and status not in _STATUS.values():
        raise ProposalError(f"status must be one of {', '.join(_STATUS.values())}")
    return [
        p
        for p in _proposal_rows(conn, task_id=task_id)
        if (status is None or p.status == status) and (kind is None or p.kind == kind)
    ]


def task_id_by_name(conn: sqlite3.Connection, name: str) -> int:
    """A task by ``TASK`` (unique across suites), ``SUITE/TASK`` or row id."""
    suite, slash, task = name.rpartition("/")
    select = (
        "SELECT t.id, s.ext_id || '/' || t.ext_id FROM task t JOIN suite s ON s.id = t.suite_id "
    )
    if slash:
        rows = conn.execute(
            select + "WHERE s.ext_id = ? AND t.ext_id = ?", (suite, task)
        ).fetchall()
    else:
        rows = conn.execute(select + "WHERE t.ext_id = ? ORDER BY s.ext_id", (name,)).fetchall()
        if not rows and name.isdigit():
            rows = conn.execute(select + "WHERE t.id = ?", (int(name),)).fetchall()
    if not rows:
        raise ProposalError(f"no task {name!r}")
    if len(rows) > 1:
        raise ProposalError(
            f"task {name!r} exists in several suites: name it SUITE/TASK "
            f"({' or '.join(str(r[1]) for r in rows)})"
        )
    return int(rows[0][0])


def get_proposal(conn: sqlite3.Connection, proposal_uuid: str) -> Proposal:
    """A proposal by uuid, or by a unique prefix of at least 6 characters (as listed)."""
    key = proposal_uuid.removeprefix("p:").removeprefix("proposal:")
    found = next(_proposal_rows(conn, uuid=key), None)
    if found is not None:
        return found
    if len(key) >= 6:
        matches = [
            u
            for (u,) in conn.execute(
                "SELECT uuid FROM proposal WHERE uuid LIKE ? || '%' ESCAPE '\\' ORDER BY uuid",
                (key.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_"),),
            )
        ]
        if len(matches) == 1:
            return next(_proposal_rows(conn, uuid=matches[0]))
        if len(matches) > 1:
            raise ProposalError(f"proposal prefix {key!r} is ambiguous ({len(matches)} match)")
    raise ProposalError(f"no proposal {proposal_uuid!r}")


# -- revisions of rubric items (the judge card) -----------------------------------------------


def propose_revision(
    conn: sqlite3.Connection,
    reviewer: str,
    suite_ids: Sequence[int],
    task: str,
    criterion: str,
    framework: str,
    payload: dict[str, Any],
    rationale: str,
) -> Proposal | None:
    """Record a ``revise_item`` proposal on criterion ``criterion`` of ``task`` (in one of
    ``suite_ids``), unless one for the same item and run exists already (None then): running
    the card again proposes nothing twice."""
    reviewer = _reviewer(reviewer)
    marks = ",".join("?" * len(suite_ids))
    row = conn.execute(
        f"""SELECT t.id, s.ext_id, t.ext_id, s.id FROM task t JOIN suite s ON s.id = t.suite_id
            WHERE t.ext_id = ? AND s.id IN ({marks}) ORDER BY s.id LIMIT 1""",
        [task, *suite_ids],
    ).fetchone()
    if row is None:
        raise ProposalError(f"no task {task!r} in the run's suites")
    task_id, suite, task_ext, suite_id = row
    target = _resolve_target(conn, task_id, f"criterion:{criterion}")
    existing = conn.execute(
        """SELECT uuid FROM proposal WHERE kind = ? AND task_id = ? AND target = ?
           AND json_extract(payload, '$.run') = ?""",
        (REVISE_ITEM, task_id, target, payload.get("run")),
    ).fetchone()
    if existing is not None:
        return None
    spec = {
        "task": f"{suite}/{task_ext}",
        "report": None,
        "framework": framework,
        "kind": REVISE_ITEM,
        "target": target,
        "payload": payload,
        "span": None,
        **_duplicate_fields(None),
    }
    proposal_uuid = str(uuidlib.uuid4())
    created_at = now_iso()
    with transaction(conn):
        insert_proposal(
            conn, proposal_uuid, spec, suite_id, task_id, None, reviewer, rationale, created_at
        )
        _event(
            conn, proposal_uuid, reviewer, "propose", canonical_json(spec), rationale, created_at
        )
    return get_proposal(conn, proposal_uuid)
