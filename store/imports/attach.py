"""Attaching a judge run to reports already in a suite: a repeated run of the same reports.

A suite's inputs are immutable once imported, so a second judge output of the same reports
(DeepResearch Bench's ``raw_results.jsonl`` of another RACE run, another per-criterion
judgements file, a bundle whose runs judge the suite's reports again) cannot come in as the
suite a second time. It comes in as a run of the suite instead: every verdict must name a
report, criterion and claim the suite already holds (matched by id, a criterion also by its
text), the reports must be the ones stored (same text, unless the input only carries a
placeholder for them), and the run is stored inactive, as an imported candidate: it changes no
score until someone activates it, and meanwhile it is one more run for ``gavel compare`` and
the noise screen. Anything that does not match is an error naming the file, line and field,
and nothing is written.

The input's runs become the one run named on the command line when they judge the same kinds
(one system's results each: they must then judge different reports, since a run judges a
subject once), else one run per part, ``NAME:part`` (:func:`run_groups`).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from reviewer.errors import InputError
from reviewer.formats.checks import ResolvedJudgment, check_bundle
from reviewer.formats.jsonl import Where
from reviewer.models import Bundle, JudgeRun, Report, Task
from store.reviewlog.events import refresh_subjects
from store.reviewlog.subjects import ensure_subjects
from store.scores.claim_facts import claim_cited, verdict_cited
from store.sqlite.tx import now_iso, transaction
from store.triage.suspicion import refresh_suspicion

RUN_SOURCE_KEY = "attached_from"
"""The run's params key naming the file it was attached from (with its content hash)."""


@dataclass(frozen=True, slots=True)
class Attached:
    suite: str
    runs: tuple[str, ...]
    created: bool
    """False when the same content was attached under that name already: nothing done."""
    reports: int
    judgments: int


@dataclass(frozen=True, slots=True)
class _TaskRows:
    id: int
    criteria: dict[str, tuple[int, int | None]]
    """Criterion ext id -> (row id, subtask row id)."""
    by_text: dict[str, str]
    """Normalised criterion text -> ext id (texts that occur once)."""
    texts: dict[str, str]
    """Criterion ext id -> normalised text."""


def _norm(text: str) -> str:
    return " ".join(text.split()).casefold()


def _where(bundle: Bundle, rtype: str, index: int, default: str) -> Where:
    file, line = bundle.locations.get((rtype, index), (default, 0))
    return file, line or None


def attach_run(
    conn: sqlite3.Connection, bundle: Bundle, content_hash: str, name: str, label: str = ""
) -> Attached:
    """Store every verdict of ``bundle`` as new inactive runs of the suite that holds its
    reports, in one transaction (see the module doc): one run ``name``, or one per part of
    the input (``name:part``) when its runs judge different verdict kinds."""
    name = name.strip()
    if not name:
        raise InputError("command line", "a run needs a name", field="--as-run")
    resolved = check_bundle(bundle)
    groups = run_groups(bundle, name)
    with transaction(conn):
        suite_row = _suite(conn, bundle, label)
        done = _existing(conn, suite_row, bundle.suite.id, list(groups), content_hash)
        if done is not None:
            return done
        tasks = _tasks(conn, bundle, suite_row)
        reports = _reports(conn, bundle, suite_row, tasks)
        criteria = _criteria(bundle, tasks)
        run_of = {}
        for run_name, members in groups.items():
            row = _insert_run(conn, bundle, members, suite_row, run_name, content_hash, label)
            run_of.update(dict.fromkeys(members, row))
        first = int(conn.execute("SELECT coalesce(max(id), 0) + 1 FROM judgment").fetchone()[0])
        rows = _judgment_rows(bundle, resolved.judgments, run_of, reports, criteria)
        conn.executemany(
            "INSERT INTO judgment (run_id, report_id, kind, criterion_id, claim_id, ref_idx, "
            "key, subject, value, explanation, evidence, raw, error, source_sha256, current, "
            "subtask_id, claim_cited) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,0,?,?)",
            rows,
        )
        refresh_subjects(conn, ensure_subjects(conn, first))
        judged = sorted({row[1] for row in rows})
        if judged:
            # A candidate changes no score, but where it disagrees with the counting run the
            # subject is worth a look.
            refresh_suspicion(conn, judged)
    return Attached(bundle.suite.id, tuple(groups), True, len(judged), len(rows))


def run_groups(bundle: Bundle, name: str) -> dict[str, list[str]]:
    """The runs to store -> the input's runs each is made of. Input runs that judge the same
    verdict kinds (one system's results each, as DeepResearch Bench's per-system files) are
    one judge pass and become one run; runs of other kinds (a FACT run beside a RACE one, a
    rule beside a judge) stay apart as ``name:part``, ``part`` being what their ids share
    after the last colon (else the first one's id). Runs merged into one must judge
    different reports: a run judges a subject once."""
    kinds: dict[str, set[str]] = {run.id: set() for run in bundle.runs}
    for judgment in bundle.judgments:
        kinds.setdefault(judgment.run, set()).add(judgment.kind)
    by_kinds: dict[frozenset[str], list[str]] = {}
    for run, judged in kinds.items():
        if judged:
            by_kinds.setdefault(frozenset(judged), []).append(run)
    if len(by_kinds) <= 1:
        groups = {name: next(iter(by_kinds.values()), [])}
    else:
        groups = {f"{name}:{_part(members)}": members for members in by_kinds.values()}
    _disjoint_runs(bundle, {run: out for out, members in groups.items() for run in members})
    return groups


def _part(members: list[str]) -> str:
    tails = {run.rsplit(":", 1)[-1] for run in members}
    return tails.pop() if len(tails) == 1 else members[0]


def _suite(conn: sqlite3.Connection, bundle: Bundle, label: str) -> int:
    row = conn.execute("SELECT id FROM suite WHERE ext_id = ?", (bundle.suite.id,)).fetchone()
    if row is None:
        known = ", ".join(s for (s,) in conn.execute("SELECT ext_id FROM suite ORDER BY id"))
        raise InputError(
            label or "command line",
            f"no suite {bundle.suite.id!r} to attach a run to: a run attaches to reports "
            f"already imported (name their suite with --suite-id; suites: {known or 'none'})",
            field="suite",
        )
    return int(row[0])


def _existing(
    conn: sqlite3.Connection, suite_row: int, suite: str, names: list[str], content_hash: str
) -> Attached | None:
    """None when every name is free in the suite; the no-op result when the same content was
    attached under them before; else the error of a duplicate run name."""
    same = 0
    for name in names:
        row = conn.execute(
            "SELECT params FROM judge_run WHERE suite_id = ? AND ext_id = ?", (suite_row, name)
        ).fetchone()
        if row is None:
            continue
        source = json.loads(row[0]).get(RUN_SOURCE_KEY) or {}
        if source.get("content") != content_hash:
            raise InputError(
                "command line",
                f"suite {suite!r} already has a run {name!r} (with other verdicts): give this "
                "one another name",
                field="--as-run",
            )
        same += 1
    if same == 0:
        return None
    if same == len(names):
        return Attached(suite, tuple(names), False, 0, 0)
    raise InputError(
        "command line",
        f"suite {suite!r} already has part of this input's runs ({', '.join(names)}): give "
        "it another name",
        field="--as-run",
    )


def _tasks(conn: sqlite3.Connection, bundle: Bundle, suite_row: int) -> dict[str, _TaskRows]:
    """Each input task's rows in the suite: by id, else by its exact prompt."""
    stored: dict[str, tuple[int, str]] = {
        ext: (int(tid), prompt)
        for tid, ext, prompt in conn.execute(
            "SELECT id, ext_id, prompt FROM task WHERE suite_id = ?", (suite_row,)
        )
    }
    by_prompt = {prompt.strip(): ext for ext, (_, prompt) in stored.items()}
    out: dict[str, _TaskRows] = {}
    for i, task in enumerate(bundle.tasks):
        ext = _stored_task(task, stored, by_prompt, _where(bundle, "task", i, "tasks.jsonl"))
        out[task.id] = _task_rows(conn, stored[ext][0])
    return out


def _stored_task(
    task: Task, stored: Mapping[str, tuple[int, str]], by_prompt: Mapping[str, str], where: Where
) -> str:
    if task.id in stored and (not task.prompt or stored[task.id][1].strip() == task.prompt.strip()):
        return task.id
    if task.prompt.strip() in by_prompt:
        return by_prompt[task.prompt.strip()]
    raise InputError(
        where[0],
        f"task {task.id!r} is not in the suite (no task with its id and prompt): a run "
        "attaches only to the reports already there",
        line=where[1],
        field="id",
    )


def _task_rows(conn: sqlite3.Connection, task_row: int) -> _TaskRows:
    criteria: dict[str, tuple[int, int | None]] = {}
    texts: dict[str, str] = {}
    for cid, ext, subtask, text in conn.execute(
        "SELECT id, ext_id, subtask_id, text FROM criterion WHERE task_id = ?", (task_row,)
    ):
        criteria[ext] = (int(cid), subtask)
        texts[ext] = _norm(text)
    counts: dict[str, int] = {}
    for text in texts.values():
        counts[text] = counts.get(text, 0) + 1
    by_text = {text: ext for ext, text in texts.items() if counts[text] == 1}
    return _TaskRows(task_row, criteria, by_text, texts)


def _reports(
    conn: sqlite3.Connection, bundle: Bundle, suite_row: int, tasks: Mapping[str, _TaskRows]
) -> dict[str, tuple[int, dict[str, tuple[int, int | None, int]]]]:
    """Input report id -> (its row in the suite, its claims: ext id -> (row, subtask,
    cited)). The same task and system, and the same text unless the input has none."""
    out: dict[str, tuple[int, dict[str, tuple[int, int | None, int]]]] = {}
    for i, report in enumerate(bundle.reports):
        where = _where(bundle, "report", i, "reports.jsonl")
        task = tasks.get(report.task)
        row = None
        if task is not None:
            row = conn.execute(
                "SELECT r.id, r.markdown FROM report r JOIN system s ON s.id = r.system_id "
                "WHERE r.task_id = ? AND s.ext_id = ? AND s.suite_id = ?",
                (task.id, report.system, suite_row),
            ).fetchone()
        if row is None:
            raise InputError(
                where[0],
                f"report {report.id!r} (task {report.task!r}, system {report.system!r}) is not "
                "in the suite: a run attaches only to the reports already there",
                line=where[1],
                field="system",
            )
        _same_text(report, str(row[1]), where)
        out[report.id] = (int(row[0]), _claims(conn, int(row[0])))
    return out


def _same_text(report: Report, stored: str, where: Where) -> None:
    """Runs compare only on the same reports: an input that carries a report's text must
    carry the stored one (a placeholder or an empty text says nothing)."""
    if not report.markdown or report.metadata.get("placeholder"):
        return
    if report.markdown != stored:
        raise InputError(
            where[0],
            f"report {report.id!r} differs from the one in the suite: repeated runs must "
            "judge the same reports (import changed reports as a suite of their own)",
            line=where[1],
            field="markdown",
        )


def _claims(conn: sqlite3.Connection, report_row: int) -> dict[str, tuple[int, int | None, int]]:
    return {
        ext: (int(cid), sid, claim_cited(cites, url))
        for ext, cid, sid, cites, url in conn.execute(
            "SELECT c.ext_id, c.id, coalesce(c.subtask_id, k.subtask_id), c.citations, c.url "
            "FROM claim c LEFT JOIN criterion k ON k.id = c.criterion_id WHERE c.report_id = ?",
            (report_row,),
        )
    }


def _disjoint_runs(bundle: Bundle, out_of: dict[str, str]) -> None:
    """Input runs that become one stored run must not judge the same report."""
    owner: dict[tuple[str, str], str] = {}
    for i, judgment in enumerate(bundle.judgments):
        key = (out_of.get(judgment.run, judgment.run), judgment.report)
        first = owner.setdefault(key, judgment.run)
        if first != judgment.run:
            where = _where(bundle, "judgment", i, "judgments.jsonl")
            raise InputError(
                where[0],
                f"runs {first!r} and {judgment.run!r} judge the same kinds on report "
                f"{judgment.report!r}: attach one run at a time (each from its own file)",
                line=where[1],
                field="run",
            )


def _criteria(
    bundle: Bundle, tasks: Mapping[str, _TaskRows]
) -> dict[tuple[str, str], tuple[int, int | None] | None]:
    """(input task, input criterion id) -> the suite's criterion: the same id with the same
    text, else the one criterion with that text, else the same id when the input gives no
    text; None when nothing matches (an error if a verdict names it)."""
    out: dict[tuple[str, str], tuple[int, int | None] | None] = {}
    for task in bundle.tasks:
        rows = tasks[task.id]
        for criterion in task.criteria:
            text = _norm(criterion.text)
            ext: str | None = None
            if criterion.id in rows.texts and (not text or rows.texts[criterion.id] == text):
                ext = criterion.id
            elif text in rows.by_text:
                ext = rows.by_text[text]
            out[(task.id, criterion.id)] = rows.criteria[ext] if ext is not None else None
    return out


def _insert_run(
    conn: sqlite3.Connection,
    bundle: Bundle,
    members: list[str],
    suite_row: int,
    name: str,
    content_hash: str,
    label: str,
) -> int:
    """The run's row, inactive: an attached run is a candidate like one Gavel judged."""
    runs = [run for run in bundle.runs if run.id in members]
    model, version, created, description = _run_columns(runs)
    cursor = conn.execute(
        "INSERT INTO judge_run (suite_id, ext_id, model, prompt_version, params, created_at, "
        "description, active, usage) VALUES (?,?,?,?,?,?,?,0,'{}')",
        (
            suite_row,
            name,
            model,
            version,
            json.dumps(_run_params(runs, content_hash, label), ensure_ascii=False, sort_keys=True),
            created,
            f"attached from {label}" + (f": {description}" if description else ""),
        ),
    )
    return int(cursor.lastrowid or 0)


def _run_columns(runs: list[JudgeRun]) -> tuple[str, str, str, str]:
    """Model, prompt version, creation time and description of the input runs made one."""
    return (
        ", ".join(sorted({run.model for run in runs if run.model})),
        ", ".join(sorted({run.prompt_version for run in runs if run.prompt_version})),
        min((run.created_at for run in runs if run.created_at), default="") or now_iso(),
        "; ".join(run.description for run in runs if run.description),
    )


def _run_params(runs: list[JudgeRun], content_hash: str, label: str) -> dict[str, Any]:
    """The input runs' params, and where the run was attached from (its content identifies a
    repeated attach)."""
    params: dict[str, Any] = {}
    for run in runs:
        params.update(run.params)
    params[RUN_SOURCE_KEY] = {
        "path": label,
        "content": content_hash,
        "runs": [run.id for run in runs],
    }
    return params


def _judgment_rows(
    bundle: Bundle,
    resolved: list[ResolvedJudgment],
    run_of: Mapping[str, int],
    reports: Mapping[str, tuple[int, dict[str, tuple[int, int | None, int]]]],
    criteria: Mapping[tuple[str, str], tuple[int, int | None] | None],
) -> list[tuple[Any, ...]]:
    """Each verdict as the judgment table holds it, pointed at the suite's rows."""
    task_of = {report.id: report.task for report in bundle.reports}
    rows: list[tuple[Any, ...]] = []
    for i, (judgment, checked) in enumerate(zip(bundle.judgments, resolved, strict=True)):
        where = _where(bundle, "judgment", i, "judgments.jsonl")
        report_row, claims = reports[judgment.report]
        crit = _criterion_row(criteria, task_of[judgment.report], judgment.criterion, where)
        claim = _claim_row(claims, judgment.claim, where)
        subtask = crit[1] if crit else (claim[1] if claim else None)
        rows.append(
            (
                run_of[judgment.run],
                report_row,
                judgment.kind,
                crit[0] if crit else None,
                claim[0] if claim else None,
                judgment.ref,
                judgment.key,
                checked.subject,
                checked.value,
                judgment.explanation,
                judgment.evidence,
                judgment.raw,
                judgment.error,
                judgment.source_sha256,
                subtask,
                None if claim is None else verdict_cited(claim[2], subtask, claim[1]),
            )
        )
    return rows


def _criterion_row(
    criteria: Mapping[tuple[str, str], tuple[int, int | None] | None],
    task: str,
    criterion: str | None,
    where: Where,
) -> tuple[int, int | None] | None:
    """The suite's criterion a verdict names (None when it names none)."""
    if criterion is None:
        return None
    row = criteria.get((task, criterion))
    if row is None:
        raise _missing(where, "criterion", criterion)
    return row


def _claim_row(
    claims: Mapping[str, tuple[int, int | None, int]], claim: str | None, where: Where
) -> tuple[int, int | None, int] | None:
    """The suite's claim a verdict names (None when it names none)."""
    if claim is None:
        return None
    row = claims.get(claim)
    if row is None:
        raise _missing(where, "claim", claim)
    return row


def _missing(where: Where, what: str, ext: str) -> InputError:
    return InputError(
        where[0],
        f"{what} {ext!r} is not in the suite: an attached run judges only what the suite "
        f"holds (it adds no {what}s)",
        line=where[1],
        field=what,
    )
