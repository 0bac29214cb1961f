"""Subcommands for agreement and ground truth: agreement, log export, merge, conflicts,
adjudicate, export, and the expansion workflow (propose, proposals, accept, reject).

They call the same store functions as the workstation's screens, so everything a reviewer does
in the TUI can be done, scripted and checked from the command line.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path
from typing import Any, TextIO

from rich.console import Console
from rich.table import Table
from rich.text import Text

from reviewer.adjudication import SIDES_MARKER
from reviewer.agreement import (
    AlphaResult,
    BootstrapCI,
    ChanceCorrected,
    ConfusionMatrix,
    Estimate,
)
from reviewer.errors import InputError
from reviewer.proposals import DUPLICATE_THRESHOLD, PROPOSAL_KINDS
from reviewer.registry import get_kind
from store.agreement import AgreementReport, agreement
from store.conflicts import adjudicate, conflicts
from store.exports import EXPORTS, write_export
from store.merge import merge_path, write_log
from store.proposals import (
    Proposal,
    ProposalError,
    accept,
    get_proposal,
    proposals,
    propose,
    reject,
)
from store.queries import report_id_by_ext
from store.reviewlog import ReviewError
from store.scores import ensure_scores
from tui.cmd_data import open_db
from tui.cmd_review import _headline, _record
from tui.config import load_config
from tui.render import emit, fmt_number


def register(sub: Any, parents: Any) -> None:
    db = parents.db

    p = sub.add_parser("agreement", parents=[db],
                       help="judge vs human, reviewer vs reviewer, UserPref vs overall ratings")
    p.add_argument("--framework", default=None, help="only this framework (cascade, race, …)")
    p.add_argument("--resamples", type=int, default=1000,
                   help="bootstrap resamples for the 95%% intervals (default 1000)")
    p.add_argument("--disagreements", type=int, default=10, metavar="N",
                   help="disagreeing items listed per group (default 10; -1 lists all)")
    parents.fmt(p, "table", "json")
    p.set_defaults(handler=agreement_cmd)

    p = sub.add_parser("log", parents=[db], help="the review log (export as JSONL)")
    log_sub = p.add_subparsers(dest="log_command", metavar="SUBCOMMAND", required=True)
    e = log_sub.add_parser("export", parents=[db],
                           help="write every review event as JSONL (re-merges with gavel merge)")
    e.add_argument("-o", "--output", type=Path, default=None, help="file (default: stdout)")
    e.set_defaults(handler=log_export)

    p = sub.add_parser("merge", parents=[db],
                       help="merge another reviewer's log (a .jsonl export or a gavel database)")
    p.add_argument("source", type=Path, help="OTHER.db or LOG.jsonl")
    p.add_argument("--skip-unknown", action="store_true",
                   help="leave out events whose judgment/report/task is not in this database "
                   "(listed) instead of refusing the merge")
    parents.fmt(p, "table", "json")
    p.set_defaults(handler=merge_cmd)

    p = sub.add_parser("conflicts", parents=[db],
                       help="judgments reviewers decided differently, with both sides")
    parents.fmt(p)
    p.set_defaults(handler=conflicts_cmd)

    p = sub.add_parser("adjudicate", parents=[db],
                       help="resolve a conflict; the event records every side it resolves")
    p.add_argument("id", type=int, help="judgment id (see `gavel conflicts`)")
    p.add_argument("value", help="the adjudicated value on the judgment's scale")
    p.add_argument("--rationale", required=True, help="why")
    p.add_argument("--reason", default=None, help="judge-error reason code (see `gavel reasons`)")
    parents.reviewer(p)
    parents.fmt(p, "table", "json")
    p.set_defaults(handler=adjudicate_cmd)

    p = sub.add_parser("export", parents=[db],
                       help="export verdicts, scores or ground-truth expansions (JSONL or CSV)")
    p.add_argument("kind", choices=tuple(EXPORTS),
                   help="verdicts: every judgment with judge, human and effective value; "
                   "scores: every score in both variants; gt-expansions: the gold diff")
    p.add_argument("-o", "--output", type=Path, default=None, help="file (default: stdout)")
    p.add_argument("--format", dest="fmt", choices=("jsonl", "csv"), default="jsonl",
                   help="jsonl (default) or csv")
    p.set_defaults(handler=export_cmd)

    p = sub.add_parser("propose", parents=[db],
                       help="propose a ground-truth expansion (new claim or rubric item, alias, "
                       "extra evidence)")
    p.add_argument("task", help="task id (TASK or SUITE/TASK)")
    p.add_argument("--kind", required=True, choices=PROPOSAL_KINDS)
    p.add_argument("--payload", required=True,
                   help="the item as JSON in the benchmark's shape, or @FILE")
    p.add_argument("--framework", default=None,
                   help="the benchmark it belongs to (default: the suite's first framework)")
    p.add_argument("--report", default=None, help="the report it was found in")
    p.add_argument("--target", default=None,
                   help="alias/extra evidence: the existing item (criterion id, REPORT/CLAIM, "
                   "or p:UUID)")
    p.add_argument("--span", default=None, metavar="START:END",
                   help="character span of the evidence in the report")
    p.add_argument("--rationale", required=True, help="why it belongs in the ground truth")
    parents.reviewer(p)
    parents.fmt(p, "table", "json")
    p.set_defaults(handler=propose_cmd)

    p = sub.add_parser("proposals", parents=[db], help="list ground-truth proposals")
    p.add_argument("--task", default=None, help="only this task")
    p.add_argument("--status", choices=("proposed", "accepted", "rejected"), default=None)
    parents.fmt(p)
    p.set_defaults(handler=proposals_cmd)

    for name, text in (("accept", "accept a proposal into the ground truth (rescores the task)"),
                       ("reject", "reject a proposal")):
        p = sub.add_parser(name, parents=[db], help=text)
        p.add_argument("proposal", help="proposal uuid (or a unique prefix)")
        p.add_argument("--rationale", default="", help="why")
        if name == "accept":
            p.add_argument("--force", action="store_true",
                           help="accept a new item even though it duplicates an existing one")
        parents.reviewer(p)
        parents.fmt(p, "table", "json")
        p.set_defaults(handler=accept_cmd if name == "accept" else reject_cmd)


# -- helpers -----------------------------------------------------------------------------------


@contextmanager
def _output(path: Path | None) -> Iterator[TextIO]:
    """stdout, or a file written beside its final name and renamed into place when complete
    (an interrupted export never leaves half a file under the real name)."""
    if path is None:
        yield sys.stdout
        return
    folder = path.resolve().parent
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            yield handle
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _reviewer(args: argparse.Namespace) -> str:
    return load_config(reviewer=args.reviewer).reviewer


def _ci(ci: BootstrapCI | None) -> str:
    if ci is None or ci.estimate is None:
        return "n/a" if ci is not None else ""
    if ci.lower is None or ci.upper is None:
        return f"{ci.estimate:.3f}"
    return f"{ci.estimate:.3f} [{ci.lower:.2f}, {ci.upper:.2f}]"


def _value(stat: Estimate | ChanceCorrected | AlphaResult | None) -> str:
    if stat is None:
        return ""
    return fmt_number(stat.value)


def _matrix(console: Console, matrix: ConfusionMatrix, title: str, rows: str,
            columns: str, label: Callable[[str], str]) -> None:
    """A confusion matrix as a coloured table: agreement on the diagonal in green,
    disagreements in red, the darker the more items."""
    names = [label(str(code)) for code in matrix.labels]
    table = Table(title=title, header_style="bold")
    table.add_column(f"{rows} ↓ / {columns} →")
    for name in names:
        table.add_column(Text(name), justify="right")
    table.add_column("total", justify="right", style="bold")
    peak = max((c for row in matrix.counts for c in row), default=0) or 1
    for i, (name, counts) in enumerate(zip(names, matrix.counts, strict=True)):
        cells = []
        for j, count in enumerate(counts):
            if count == 0:
                cells.append(Text("0", style="dim"))
                continue
            strong = count / peak >= 0.5
            hue = "green" if i == j else "red"
            cells.append(Text(str(count), style=f"bold white on {hue}" if strong else hue))
        table.add_row(Text(name), *cells, Text(str(sum(counts))))
    totals = [Text(str(sum(row[j] for row in matrix.counts))) for j in range(len(names))]
    table.add_row(Text("total", style="bold"), *totals, Text(str(matrix.n)))
    console.print(table)


def _subject(subject: str) -> str:
    """``k=c3;r=2`` -> ``c3 ↔ [2]``, ``c=s1-ins`` -> ``s1-ins``: the names reviewers see."""
    parts = dict(p.split("=", 1) for p in subject.split(";") if "=" in p)
    name = parts.get("k") or parts.get("c") or parts.get("x") or subject
    return f"{name} ↔ [{parts['r']}]" if "r" in parts else name


def _own_words(rationale: str) -> str:
    """An adjudication's rationale without the sides note it carries (shown elsewhere)."""
    own, marker, _ = rationale.partition(SIDES_MARKER)
    return own.strip() + (" [resolves a conflict]" if marker else "")


def _label_for(kind_name: str) -> Callable[[str], str]:
    kind = get_kind(kind_name)
    if kind is None:
        return str
    return lambda code: code if kind.scale.label_of(code) == code else \
        f"{code} ({kind.scale.label_of(code)})"


# -- agreement ---------------------------------------------------------------------------------


def agreement_cmd(args: argparse.Namespace) -> int:
    conn = open_db(args)
    ensure_scores(conn)
    report = agreement(conn, args.framework, n_resamples=args.resamples)
    if args.fmt == "json":
        print(json.dumps(asdict(report), ensure_ascii=False, indent=2))
        return 0
    if not (report.judge_human or report.reviewers or report.ratings):
        print("no human decisions or ratings yet: decide with `gavel decide`, rate reports with "
              "`gavel rate`, or merge a reviewer's log with `gavel merge`", file=sys.stderr)
        return 1
    print_agreement(report, args.disagreements, Console())
    return 0


def print_agreement(report: AgreementReport, limit: int, console: Console) -> None:
    if report.judge_human:
        rows = []
        for g in report.judge_human:
            row: dict[str, Any] = {
                "framework": g.framework, "dimension": g.dimension or "—", "kind": g.kind,
                "run": f"{g.run} ({g.model})", "n": g.n,
                "disagree": len(g.disagreements),
            }
            if g.categorical is not None:
                c = g.categorical
                row.update(accuracy=_ci(c.accuracy), kappa=_ci(c.kappa),
                           weighted=_ci(c.weighted_kappa), ac1=_value(c.ac1))
            elif g.continuous is not None:
                m = g.continuous
                row.update(accuracy=_value(m.exact), kappa=f"MAE {_value(m.mae)}",
                           weighted=f"r {_value(m.pearson)}", ac1=f"ρ {_value(m.spearman)}")
            if g.judge_failed:
                row["disagree"] = f"{len(g.disagreements)} (+{g.judge_failed} judge failed)"
            rows.append(row)
        emit(rows, ["framework", "dimension", "kind", "run", "n", "accuracy", "kappa",
                    "weighted", "ac1", "disagree"], "table",
             title=f"Judge vs human (effective human decision; 95% bootstrap CI, "
                   f"{report.n_resamples} resamples; weighted = quadratic κ, ordinal scales)",
             numeric=("n",), console=console)
        for g in report.judge_human:
            where = f"{g.framework} · {g.kind}" + (f" · {g.dimension}" if g.dimension
                                                   and g.dimension != g.kind else "")
            if g.categorical is not None:
                _matrix(console, g.categorical.confusion, f"{where} · {g.run}: judge × human",
                        "judge", "human", _label_for(g.kind))
            shown = g.disagreements if limit < 0 else g.disagreements[:limit]
            if shown:
                emit([{"id": d.judgment_id, "report": d.report, "subject": _subject(d.subject),
                       "judge": d.judge, "human": d.human, "status": d.status,
                       "by": d.decided_by, "reason": d.reason or "",
                       "rationale": _own_words(d.rationale)} for d in shown],
                     ["id", "report", "subject", "judge", "human", "status", "by", "reason",
                      "rationale"], "table",
                     title=f"{where} · {g.run}: disagreements ({len(shown)} of "
                           f"{len(g.disagreements)})",
                     numeric=("id",), console=console)
    if report.reviewers:
        emit([{"framework": r.framework, "kind": r.kind, "level": r.stats.level,
               "reviewers": ", ".join(r.stats.reviewers), "items": r.stats.n_items,
               "differ": r.differing, "alpha": _value(r.stats.alpha), "ac1": _value(r.stats.ac1)}
              for r in report.reviewers],
             ["framework", "kind", "level", "reviewers", "items", "differ", "alpha", "ac1"],
             "table", title="Reviewer vs reviewer (items decided by ≥ 2 reviewers; "
                            "Krippendorff's α at the scale's level, Gwet's AC1)",
             numeric=("items", "differ", "alpha", "ac1"), console=console)
        pairs = [{"kind": r.kind, "a": p.a, "b": p.b, "n": p.n, "agreement": _value(p.accuracy),
                  "kappa": _value(p.kappa) if p.kappa else "",
                  "weighted": _value(p.weighted_kappa) if p.weighted_kappa else "",
                  "pearson": _value(p.pearson) if p.pearson else ""}
                 for r in report.reviewers for p in r.stats.pairs]
        emit(pairs, ["kind", "a", "b", "n", "agreement", "kappa", "weighted", "pearson"],
             "table", title="Reviewer pairs (Cohen's κ; weighted = quadratic)",
             numeric=("n", "agreement", "kappa", "weighted", "pearson"), console=console)
    if report.ratings:
        emit([{"metric": f"{r.framework}.{r.metric}", "variant": r.variant, "pairs": r.n,
               "reports": r.reports, "raters": ", ".join(r.raters),
               "accuracy": _ci(r.comparison.accuracy),
               "weighted kappa": _ci(r.comparison.weighted_kappa),
               "kappa": _ci(r.comparison.kappa)}
              for r in report.ratings],
             ["metric", "variant", "pairs", "reports", "raters", "accuracy", "weighted kappa",
              "kappa"], "table",
             title="Computed report level vs reviewers' overall 1–4 ratings "
                   "(DailyReport §5.5: quadratic-weighted κ, paper 0.859)",
             numeric=("pairs", "reports"), console=console)
        for r in report.ratings:
            _matrix(console, r.comparison.confusion,
                    f"{r.framework}.{r.metric} ({r.variant}) × overall rating",
                    r.metric, "rating", lambda code: code)


# -- log, merge, conflicts ---------------------------------------------------------------------


def log_export(args: argparse.Namespace) -> int:
    conn = open_db(args)
    with _output(args.output) as out:
        n = write_log(conn, out)
    if args.output is not None:
        print(f"wrote {n:,} events to {args.output}", file=sys.stderr)
    return 0


def merge_cmd(args: argparse.Namespace) -> int:
    conn = open_db(args)
    ensure_scores(conn)
    result = merge_path(conn, args.source, skip_unknown=args.skip_unknown)
    if args.fmt == "json":
        print(json.dumps(asdict(result), ensure_ascii=False, indent=2))
        return 0
    print(f"merged {result.source}: {result.read:,} events read, {result.added:,} added, "
          f"{result.already_present:,} already present"
          + (f", {len(result.skipped):,} left out" if result.skipped else ""))
    if result.reviewers:
        print(f"reviewers added: {', '.join(result.reviewers)}")
    if result.proposals_added:
        print(f"proposals added: {result.proposals_added:,}")
    for line, target, why in result.skipped[:20]:
        print(f"  left out line {line}: {target} ({why})")
    if len(result.skipped) > 20:
        print(f"  … and {len(result.skipped) - 20:,} more")
    print(f"conflicts now: {result.conflicts:,}"
          + ("  (list them with `gavel conflicts`, resolve with `gavel adjudicate`)"
             if result.conflicts else ""))
    return 0


def conflicts_cmd(args: argparse.Namespace) -> int:
    conn = open_db(args)
    found = conflicts(conn)
    if args.fmt == "json":
        print(json.dumps([asdict(c) for c in found], ensure_ascii=False, indent=2))
        return 0
    rows = [
        {"id": c.judgment_id, "report": c.report, "kind": c.kind,
         "subject": _subject(c.subject) if args.fmt == "table" else c.subject,
         "judge": c.judge_value, "reviewer": s.reviewer, "value": s.value, "reason": s.reason,
         "rationale": s.rationale, "at": s.created_at, "event": s.event}
        for c in found for s in c.sides
    ]
    columns = ["id", "report", "kind", "subject", "judge", "reviewer", "value", "reason",
               "rationale"]
    if args.fmt == "table" and not rows:
        print("no conflicts")
        return 0
    emit(rows, columns if args.fmt == "table" else [*columns, "at", "event"], args.fmt,
         title=f"{len(found)} conflicts — resolve with: gavel adjudicate ID VALUE --rationale …",
         numeric=("id",))
    return 0


def adjudicate_cmd(args: argparse.Namespace) -> int:
    conn = open_db(args)
    ensure_scores(conn)
    report_id = conn.execute("SELECT report_id FROM judgment WHERE id = ?",
                             (args.id,)).fetchone()
    if report_id is None:
        raise ReviewError(f"no judgment with id {args.id}")
    before = _headline(conn, int(report_id[0]))
    recorded = adjudicate(conn, _reviewer(args), args.id, args.value, args.rationale,
                          args.reason)
    return _record(conn, args, recorded, before)


# -- exports -----------------------------------------------------------------------------------


def export_cmd(args: argparse.Namespace) -> int:
    conn = open_db(args)
    ensure_scores(conn)
    with _output(args.output) as out:
        n = write_export(conn, args.kind, out, args.fmt)
    if args.output is not None:
        print(f"wrote {n:,} {args.kind} records to {args.output}", file=sys.stderr)
    return 0


# -- proposals ---------------------------------------------------------------------------------


def _task_id(conn: sqlite3.Connection, name: str) -> int:
    suite, slash, task = name.rpartition("/")
    if slash:
        rows = conn.execute(
            "SELECT t.id FROM task t JOIN suite s ON s.id = t.suite_id "
            "WHERE s.ext_id = ? AND t.ext_id = ?", (suite, task)).fetchall()
    else:
        rows = conn.execute("SELECT id FROM task WHERE ext_id = ? ORDER BY id",
                            (name,)).fetchall()
        if not rows and name.isdigit():
            rows = conn.execute("SELECT id FROM task WHERE id = ?", (int(name),)).fetchall()
    if not rows:
        raise ProposalError(f"no task {name!r}")
    if len(rows) > 1:
        raise ProposalError(f"task {name!r} exists in several suites: name it SUITE/TASK")
    return int(rows[0][0])


def _payload(text: str) -> Any:
    source = "--payload"
    if text.startswith("@"):
        source = text[1:]
        try:
            text = Path(source).read_text(encoding="utf-8")
        except OSError as exc:
            raise InputError(source, f"cannot read the payload ({exc.strerror})") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(source, f"the payload is not JSON ({exc.msg})", line=exc.lineno,
                         field="payload") from None


def _span(text: str | None) -> tuple[int, int] | None:
    if text is None:
        return None
    start, colon, end = text.partition(":")
    if not colon or not start.isdigit() or not end.isdigit():
        raise InputError("--span", f"expected START:END character offsets, got {text!r}")
    return int(start), int(end)


def propose_cmd(args: argparse.Namespace) -> int:
    conn = open_db(args)
    ensure_scores(conn)
    task_id = _task_id(conn, args.task)
    framework = args.framework
    if framework is None:
        (frameworks,) = conn.execute(
            "SELECT s.frameworks FROM task t JOIN suite s ON s.id = t.suite_id WHERE t.id = ?",
            (task_id,)).fetchone()
        framework = json.loads(frameworks)[0]
    report_id = None
    if args.report is not None:
        report_id = report_id_by_ext(conn, args.report)
        if report_id is None:
            raise ProposalError(f"no report {args.report!r}")
    result = propose(conn, _reviewer(args), task_id, report_id, framework, args.kind,
                     _payload(args.payload), _span(args.span), args.rationale, args.target)
    near = result.nearest
    if args.fmt == "json":
        print(json.dumps({"proposal": asdict(result.proposal),
                          "nearest": asdict(near) if near else None,
                          "duplicate": bool(near and near.is_duplicate)},
                         ensure_ascii=False, indent=2))
        return 0
    p = result.proposal
    print(f"proposed {p.kind} for task {p.suite}/{p.task} ({p.framework}): {p.uuid}  "
          f"(event committed; status {p.status})")
    if near is not None:
        verdict = "DUPLICATE" if near.is_duplicate else "nearest existing item"
        print(f"{verdict}: {near.ref} (similarity {near.score:.2f}, threshold "
              f"{DUPLICATE_THRESHOLD:.2f}): {near.text!r}")
    return 0


def _proposal_rows(found: Sequence[Proposal]) -> list[dict[str, Any]]:
    return [
        {"uuid": p.uuid, "task": p.task, "framework": p.framework, "kind": p.kind,
         "effect": p.effect, "status": p.status, "by": p.reviewer,
         "decided_by": p.decided_by or "", "report": p.report or "",
         "item": json.dumps(p.payload, ensure_ascii=False), "target": p.target or "",
         "duplicate_of": p.duplicate_of or "", "rationale": p.rationale}
        for p in found
    ]


def proposals_cmd(args: argparse.Namespace) -> int:
    conn = open_db(args)
    task_id = _task_id(conn, args.task) if args.task else None
    found = proposals(conn, task_id, args.status)
    if args.fmt == "json":
        print(json.dumps([asdict(p) for p in found], ensure_ascii=False, indent=2))
        return 0
    if args.fmt == "table" and not found:
        print("no proposals")
        return 0
    columns = ["uuid", "task", "framework", "kind", "effect", "status", "by", "decided_by",
               "report", "item", "target", "duplicate_of", "rationale"]
    rows = _proposal_rows(found)
    if args.fmt == "table":
        columns = ["uuid", "task", "kind", "status", "by", "item", "duplicate_of"]
        for row in rows:
            row["uuid"] = row["uuid"][:8]
            row["task"] = f"{row['task']}/{row['report']}" if row["report"] else row["task"]
            row["status"] += f" ({row['decided_by']})" if row["decided_by"] else ""
            row["item"] = row["item"] if len(row["item"]) <= 70 else row["item"][:69] + "…"
    emit(rows, columns, args.fmt, title="ground-truth proposals (uuid prefixes work as ids)")
    return 0


def _decided(args: argparse.Namespace, proposal: Proposal, before: str) -> int:
    if args.fmt == "json":
        print(json.dumps(asdict(proposal), ensure_ascii=False, indent=2))
        return 0
    print(f"{args.command}ed proposal {proposal.uuid} ({proposal.kind}, task "
          f"{proposal.suite}/{proposal.task}): {before} → {proposal.status}; the task's "
          "reports were rescored (both variants)")
    return 0


def accept_cmd(args: argparse.Namespace) -> int:
    conn = open_db(args)
    ensure_scores(conn)
    before = get_proposal(conn, args.proposal).status
    proposal = accept(conn, _reviewer(args), args.proposal, args.rationale, force=args.force)
    return _decided(args, proposal, before)


def reject_cmd(args: argparse.Namespace) -> int:
    conn = open_db(args)
    ensure_scores(conn)
    before = get_proposal(conn, args.proposal).status
    proposal = reject(conn, _reviewer(args), args.proposal, args.rationale)
    return _decided(args, proposal, before)
