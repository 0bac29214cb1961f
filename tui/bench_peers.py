"""`gavel bench --peers`: the same review workload in the open-source tools a team would
otherwise use, measured in the same run as Gavel's own figures.

Each peer (Label Studio, Potato) is installed into a throwaway virtual environment under the
work folder (``peers/<name>/venv``, reused while it imports), never into Gavel's own
dependencies, and started as a server of its own with its data inside the work folder. Every
report of the synthetic run becomes one task: the report's markdown as plain text and the
judge's verdicts beside it, so the reviewer sees what Gavel shows. For each peer: the load
(server start and import until the first task can be read back), the server's peak memory
(the process tree's resident memory, sampled every 50 ms from /proc), one decision stored and
acknowledged (the median of a few HTTP POSTs, each on another task), and whether any of the
peer's aggregates reflects the decision. A peer that cannot be installed or started is
reported with the reason, and the run goes on.

Also runnable on its own, on a kept ``gavel bench --workdir`` folder::

    python -m tui.bench_peers --bundle DIR/bundle --workdir DIR

The servers are driven in :mod:`tui.bench_peer_servers`.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType

from rich.console import Console
from rich.status import Status
from rich.table import Table

from tui.bench import Figure

# ---------------------------------------------------------------------------------------------
# The bundle as tasks


@dataclass(frozen=True, slots=True)
class Verdict:
    subject: str
    """What was judged: ``ins s1-ins``, ``claim c1``, ``consistency c1 → source 3``."""
    value: str
    explanation: str


@dataclass(frozen=True, slots=True)
class ReportTask:
    id: str
    title: str
    markdown: str
    verdicts: tuple[Verdict, ...]


def value_label(value: object) -> str:
    """A verdict value as a choice's label: ``1.0`` → ``1``, ``0.5`` → ``0.5``, text as is."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _subject(judgment: dict[str, object]) -> str:
    kind = str(judgment.get("kind", "?"))
    if "criterion" in judgment:
        return f"{kind} {judgment['criterion']}"
    subject = f"{kind} {judgment.get('claim', '?')}"
    if "ref" in judgment:
        subject += f" → source {judgment['ref']}"
    return subject


def report_tasks(bundle: Path) -> Iterator[ReportTask]:
    """One task a report of a native bundle, in the order of ``reports.jsonl``, with the
    verdicts of its judge runs. (The verdicts are read first, grouped by report: about 50 MB
    at 2,550 reports.)"""
    verdicts: dict[str, list[Verdict]] = {}
    with open(bundle / "judgments.jsonl", encoding="utf-8") as lines:
        for line in lines:
            if not line.strip():
                continue
            j = json.loads(line)
            verdicts.setdefault(str(j["report"]), []).append(Verdict(
                _subject(j), value_label(j.get("value")), str(j.get("explanation") or "")))
    with open(bundle / "reports.jsonl", encoding="utf-8") as lines:
        for line in lines:
            if not line.strip():
                continue
            r = json.loads(line)
            rid = str(r["id"])
            yield ReportTask(rid, f"{r.get('task', '?')} by {r.get('system', '?')}",
                             str(r.get("markdown") or ""), tuple(verdicts.pop(rid, [])))


CHOICES = ("correct", "incorrect", "unknown", "support", "conflict", "1", "0.5", "0")
"""The verdict values of the synthetic run's scales (claims, claim-source consistency, the
0 / 0.5 / 1 rubrics): the choices a decision picks from."""


def label_studio_config() -> str:
    """The labeling config: the report as plain text (``Text``, not ``HyperText``: markup in a
    report is shown, not rendered), the judge's verdicts as paragraphs (one a verdict: what
    was judged and the value, then the explanation), and the decision: which verdict, and the
    value it should have."""
    choices = "\n".join(f'    <Choice value="{c}"/>' for c in CHOICES)
    return (
        "<View>\n"
        '  <Header value="$title"/>\n'
        '  <Text name="report" value="$report"/>\n'
        '  <Header value="Judge verdicts"/>\n'
        '  <Paragraphs name="verdicts" value="$verdicts" nameKey="verdict" textKey="text"/>\n'
        '  <TextArea name="verdict" toName="report" maxSubmissions="1" '
        'placeholder="which verdict (e.g. claim c1)"/>\n'
        '  <Choices name="decision" toName="report" choice="single" showInline="true">\n'
        f"{choices}\n"
        "  </Choices>\n"
        "</View>\n")


def label_studio_task(task: ReportTask) -> dict[str, object]:
    return {"data": {
        "report_id": task.id, "title": task.title, "report": task.markdown,
        "verdicts": [{"verdict": f"{v.subject} = {v.value}", "text": v.explanation}
                     for v in task.verdicts],
    }}


def potato_item(task: ReportTask) -> dict[str, object]:
    """A line of Potato's data file: shown through ``instance_display`` text fields, which
    escape markup (its plain ``text_key`` display lets HTML through)."""
    return {"id": task.id, "title": task.title, "text": task.markdown,
            "verdicts": "\n".join(f"{v.subject} = {v.value}: {v.explanation}"
                                  for v in task.verdicts)}


POTATO_ADMIN_KEY = "gavel-bench-admin"


def potato_config(data_file: str) -> str:
    """Potato's project config (JSON, which is YAML): passwordless login, an admin key for
    its dashboard API, the report and its verdicts as text fields, the decision as a radio
    choice of the verdict values and a text box naming the verdict."""
    config = {
        "annotation_task_name": "Gavel peer bench",
        "data_files": [data_file],
        "item_properties": {"id_key": "id", "text_key": "text"},
        "task_dir": ".",
        "output_annotation_dir": "annotation_output",
        "export_annotation_format": "jsonl",
        "require_password": False,
        "admin_api_key": POTATO_ADMIN_KEY,
        "user_config": {"allow_all_users": True},
        "instance_display": {"fields": [
            {"key": "title", "type": "text", "label": "Report"},
            {"key": "text", "type": "text", "label": "Report text"},
            {"key": "verdicts", "type": "text", "label": "Judge verdicts"},
        ]},
        "annotation_schemes": [
            {"annotation_type": "radio", "name": "decision",
             "description": "The verdict should be", "labels": list(CHOICES)},
            {"annotation_type": "text", "name": "verdict",
             "description": "Which verdict (e.g. claim c1)"},
        ],
    }
    return json.dumps(config, indent=2) + "\n"


SCALES = {"claim": ("correct", "incorrect", "unknown"),
          "consistency": ("support", "conflict", "unknown")}
"""Each verdict kind's values (any other kind is a 0 / 0.5 / 1 rubric)."""


def decision_for(task: ReportTask) -> tuple[str, str]:
    """A decision on one of the task's verdicts: (the verdict, a value of its scale other
    than the judge's), so that a stored decision is a change."""
    for v in task.verdicts:
        scale = SCALES.get(v.subject.split(" ", 1)[0], ("1", "0.5", "0"))
        if v.value in scale:
            return v.subject, next(c for c in scale if c != v.value)
    return "report", CHOICES[0]


# ---------------------------------------------------------------------------------------------
# Memory of a process tree


def _parent_pids() -> dict[int, int]:
    """pid → parent pid of every process (from /proc/<pid>/stat)."""
    parents: dict[int, int] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", encoding="ascii", errors="replace") as f:
                stat = f.read()
        except OSError:
            continue
        # The command name is in parentheses and may hold spaces: split after its last ')'.
        fields = stat[stat.rfind(")") + 2:].split()
        if len(fields) > 1:
            parents[int(entry.name)] = int(fields[1])
    return parents


def process_tree(root: int) -> list[int]:
    """``root`` and every process descended from it."""
    children: dict[int, list[int]] = {}
    for pid, parent in _parent_pids().items():
        children.setdefault(parent, []).append(pid)
    tree, todo = [], [root]
    while todo:
        pid = todo.pop()
        tree.append(pid)
        todo.extend(children.get(pid, ()))
    return tree


def rss_mb(pid: int) -> float:
    """A process's resident memory now (VmRSS), in MB; 0 when it is gone."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii", errors="replace") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def tree_rss_mb(root: int) -> float:
    """The resident memory of ``root`` and its descendants, summed, in MB (shared pages are
    counted in each process, as ``ps`` does)."""
    return sum(rss_mb(pid) for pid in process_tree(root))


class TreeSampler:
    """Samples a process tree's resident memory every ``interval`` seconds on a thread of
    its own and keeps the peak (a sampled peak: a spike between samples is missed)."""

    def __init__(self, pid: int, interval: float = 0.05) -> None:
        self.pid = pid
        self.interval = interval
        self.peak_mb = 0.0
        self.samples = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True, name="rss-sampler")

    def _run(self) -> None:
        while True:
            self.sample()
            if self._stop.wait(self.interval):
                return

    def sample(self) -> float:
        now = tree_rss_mb(self.pid)
        self.peak_mb = max(self.peak_mb, now)
        self.samples += 1
        return now

    def __enter__(self) -> TreeSampler:
        self._thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self._stop.set()
        self._thread.join()


# ---------------------------------------------------------------------------------------------
# Results and the table


@dataclass(slots=True)
class PeerResult:
    name: str
    version: str | None = None
    install_s: float | None = None
    """Seconds to install into its venv; None when it was already installed (cached)."""
    start_s: float | None = None
    """Server start alone, until its API answers (Label Studio)."""
    load_s: float | None = None
    """Server start and import until the first task is read back."""
    warm_load_s: float | None = None
    """The load with the server's database already set up (Label Studio: a restart on its
    migrated database); None where the start has no such part."""
    peak_mb: float | None = None
    decision_s: list[float] = field(default_factory=list)
    """Each decision POST's round trip (stored and acknowledged), each on another task."""
    read_back: bool | None = None
    aggregate: tuple[bool, str] | None = None
    """(whether an aggregate changed with the decisions, which one and how)."""
    error: str | None = None
    """Why the peer was not (fully) measured: ``could not install: …``, ``could not start:
    …``."""
    notes: list[str] = field(default_factory=list)

    @property
    def label(self) -> str:
        return f"{self.name} {self.version}" if self.version else self.name

    @property
    def decision_median(self) -> float | None:
        return statistics.median(self.decision_s) if self.decision_s else None


@dataclass(frozen=True, slots=True)
class GavelSide:
    """Gavel's figures from the same run (:func:`tui.bench.run_bench`'s, or measured here)."""
    import_s: float
    """``gavel import`` wall time, a process of its own (read, check, store, FTS, scores)."""
    import_peak_mb: float
    decide_s: float
    """``gavel decide`` wall time, median of fresh processes: start-up, the stored decision
    (fsync) and the recomputed scores."""
    first_screen_s: float | None = None
    keypress_s: float | None = None
    reports: int = 0

    @property
    def load_s(self) -> float:
        return self.import_s + (self.first_screen_s or 0.0)

    @classmethod
    def from_figures(cls, figures: Sequence[Figure], reports: int) -> GavelSide | None:
        """From ``run_bench``'s figures; None without the import and decide figures."""
        def find(prefix: str) -> Figure | None:
            return next((f for f in figures if f.name.startswith(prefix)), None)

        imp = find("`gavel import` wall time")
        mem = find("`gavel import` peak memory")
        decide = find("gavel decide")
        if imp is None or mem is None or decide is None:
            return None
        screen = find("start-up to first interactive screen")
        key = find("keypress → stored decision")
        return cls(imp.value, mem.value, decide.median,
                   screen.median if screen else None, key.median if key else None, reports)


def ratio(gavel: float | None, peer: float | None) -> float | None:
    """Gavel's figure over the peer's (below 1: Gavel takes less); None when either is
    missing or the peer's is zero."""
    if gavel is None or peer is None or peer <= 0:
        return None
    return gavel / peer


def _secs(value: float | None) -> str:
    if value is None:
        return "—"
    return f"{value * 1000:.1f} ms" if value < 1 else f"{value:.1f} s"


def _mb(value: float | None) -> str:
    return "—" if value is None else f"{value:,.0f} MB"


def _ratio(value: float | None) -> str:
    return "—" if value is None else f"{value:.3g}×"


def peer_rows(gavel: GavelSide, peers: Sequence[PeerResult]) -> list[list[str]]:
    """The comparison's cells: a header row, then one row a figure; per peer two columns,
    its value and Gavel's ratio to it."""
    header = ["", "Gavel"]
    for p in peers:
        header += [p.label, f"Gavel ÷ {p.name}"]
    load_name = (f"load ({gavel.reports:,} reports)" if gavel.reports else "load")
    gavel_load = _secs(gavel.load_s) + ("" if gavel.first_screen_s is not None
                                        else " (import only)")
    rows: list[list[str]] = [
        header,
        ["install (not counted in load)", "—"],
        [load_name, gavel_load],
        ["load, the peer's database already set up", _secs(gavel.load_s)],
        ["peak memory while loading", _mb(gavel.import_peak_mb)],
        ["one decision stored and acknowledged", _secs(gavel.decide_s)],
        ["aggregate reflects the decision", "yes (its system's scores, recomputed)"],
    ]
    for p in peers:
        if p.install_s is None and p.error is None:
            install = "cached"
        else:
            install = _secs(p.install_s)
        if p.error is not None and p.version is None:
            install = p.error
        aggregate = "—"
        if p.aggregate is not None:
            aggregate = ("yes" if p.aggregate[0] else "no") + f" ({p.aggregate[1]})"
        load = _secs(p.load_s)
        if p.error is not None and p.version is not None:
            load = p.error
        cells = [
            (install, ""),
            (load, _ratio(ratio(gavel.load_s, p.load_s))),
            (_secs(p.warm_load_s), _ratio(ratio(gavel.load_s, p.warm_load_s))),
            (_mb(p.peak_mb), _ratio(ratio(gavel.import_peak_mb, p.peak_mb))),
            (_secs(p.decision_median), _ratio(ratio(gavel.decide_s, p.decision_median))),
            (aggregate, ""),
        ]
        for row, (value, r) in zip(rows[1:], cells, strict=True):
            row += [value, r]
    if gavel.keypress_s is not None:
        rows.append(["the workstation: keypress → stored → score on screen",
                     _secs(gavel.keypress_s)] + ["—", ""] * len(peers))
    return rows


def print_peers(console: Console, gavel: GavelSide, peers: Sequence[PeerResult]) -> None:
    rows = peer_rows(gavel, peers)
    table = Table(title="The same review workload in Gavel and its peers (same run)",
                  header_style="bold")
    for i, name in enumerate(rows[0]):
        table.add_column(name, justify="left" if i == 0 else "right",
                         overflow="fold", max_width=None if i == 0 else 40)
    for row in rows[1:]:
        table.add_row(*row)
    console.print(table)
    notes = [
        f"Gavel: load is `gavel import` in a process of its own (with search index and "
        f"scores, {_secs(gavel.import_s)})"
        + (f" plus the workstation's start to its first screen ({_secs(gavel.first_screen_s)})"
           if gavel.first_screen_s is not None else "") + "; memory its peak RSS "
        "(VmHWM); a decision is one whole `gavel decide` process (start-up, decision stored "
        "with fsync, scores recomputed), median of fresh processes",
        "peers: load is the server's start (fresh data folder) plus the import until the first "
        "task is read back; memory is the server's process tree (summed RSS, sampled every "
        "50 ms, so a peak between samples is missed); a decision is an HTTP POST to the "
        "running server until its answer, median of several, each on another task; "
        "install is not counted",
    ]
    for p in peers:
        notes += [f"{p.label}: {n}" for n in p.notes]
    for note in notes:
        console.print(f"[dim]{note}[/dim]")


# ---------------------------------------------------------------------------------------------
# Running


def run_peers(console: Console, bundle: Path, workdir: Path, gavel: GavelSide,
              only: Sequence[str] = (), base_python: str | None = None) -> list[PeerResult]:
    """Install, load and measure each peer in ``workdir/peers``, print the table beside
    ``gavel``'s figures, and return the results. Never raises for a peer that fails (its
    result carries the reason); Ctrl-C still stops the servers and propagates."""
    from tui.bench_peer_servers import PEERS, measure_peer

    folder = workdir / "peers"
    folder.mkdir(parents=True, exist_ok=True)
    results = []
    for peer in PEERS:
        if only and peer.key not in only:
            continue
        with console.status(f"{peer.name}…") as status:
            say = functools.partial(_say, status, peer.name)
            results.append(measure_peer(peer, bundle, folder / peer.key, say,
                                        base_python=base_python or sys.executable))
    print_peers(console, gavel, results)
    return results


def _say(status: Status, name: str, text: str) -> None:
    status.update(f"{name}: {text}")


def measure_gavel(bundle: Path, workdir: Path, ui: bool) -> GavelSide:
    """Gavel's side when run on its own: ``gavel import`` in a process of its own (wall time,
    peak RSS) and ``gavel decide`` (median of fresh processes), with the bench's functions."""
    from tui.bench import _IMPORT_SCRIPT, _cli_figures, _measured_child, _ui_figures, _unlink_db

    root = workdir / "gavel"
    root.mkdir(parents=True, exist_ok=True)
    db = root / "peers-gavel.db"
    _unlink_db(db)
    elapsed, rss = _measured_child(_IMPORT_SCRIPT.format(bundle=str(bundle), db=str(db)), root)
    figures = [Figure("`gavel import` wall time", elapsed, "s", "", None, "", None),
               Figure("`gavel import` peak memory", rss, "MB", "", None, "", None)]
    figures += _cli_figures(db, root, calls=["gavel decide ID VALUE"])
    if ui:
        figures += _ui_figures(db)
    import sqlite3

    with sqlite3.connect(db) as conn:
        reports = int(conn.execute("SELECT count(*) FROM report").fetchone()[0])
    side = GavelSide.from_figures(figures, reports)
    assert side is not None
    return side


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tui.bench_peers",
        description="Gavel beside Label Studio and Potato on the same synthetic run.")
    parser.add_argument("--bundle", type=Path, required=True,
                        help="a synthetic run's bundle folder (gavel bench --workdir DIR "
                             "leaves one in DIR/bundle)")
    parser.add_argument("--workdir", type=Path, default=None,
                        help="where the peers' venvs (kept, reused) and data go (default: a "
                             "temporary folder, removed afterwards)")
    parser.add_argument("--only", action="append", default=[],
                        help="label-studio or potato (repeatable; default both)")
    parser.add_argument("--skip-ui", action="store_true",
                        help="Gavel's load without the workstation's start-up")
    args = parser.parse_args(argv)
    console = Console(width=None if sys.stdout.isatty() else 200)
    if args.workdir is None:
        with tempfile.TemporaryDirectory(prefix="gavel-peers-") as folder:
            return _main(console, args.bundle, Path(folder), args.only, not args.skip_ui)
    return _main(console, args.bundle, args.workdir, args.only, not args.skip_ui)


def _main(console: Console, bundle: Path, workdir: Path, only: Sequence[str],
          ui: bool) -> int:
    started = time.perf_counter()
    with console.status("Gavel: `gavel import` and `gavel decide`…"):
        gavel = measure_gavel(bundle.resolve(), workdir.resolve(), ui)
    run_peers(console, bundle.resolve(), workdir.resolve(), gavel, only)
    console.print(f"[dim]peer comparison took {time.perf_counter() - started:.0f} s; work "
                  f"folder {workdir}[/dim]")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
