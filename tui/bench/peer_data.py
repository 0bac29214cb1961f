"""The data of :mod:`tui.bench.peers`: a synthetic run's reports as each peer's tasks (the
report's markdown as plain text, the judge's verdicts beside it, the decision's choices), the
resident memory of a server's process tree, and a peer's measured result."""

from __future__ import annotations

import json
import os
import statistics
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType

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
    verdicts of its judge runs. (The verdicts are read first, grouped by report, and held in
    memory while the reports stream.)"""
    verdicts: dict[str, list[Verdict]] = {}
    with open(bundle / "judgments.jsonl", encoding="utf-8") as lines:
        for line in lines:
            if not line.strip():
                continue
            j = json.loads(line)
            verdicts.setdefault(str(j["report"]), []).append(
                Verdict(_subject(j), value_label(j.get("value")), str(j.get("explanation") or ""))
            )
    with open(bundle / "reports.jsonl", encoding="utf-8") as lines:
        for line in lines:
            if not line.strip():
                continue
            r = json.loads(line)
            rid = str(r["id"])
            yield ReportTask(
                rid,
                f"{r.get('task', '?')} by {r.get('system', '?')}",
                str(r.get("markdown") or ""),
                tuple(verdicts.pop(rid, [])),
            )


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
        "</View>\n"
    )


def label_studio_task(task: ReportTask) -> dict[str, object]:
    return {
        "data": {
            "report_id": task.id,
            "title": task.title,
            "report": task.markdown,
            "verdicts": [
                {"verdict": f"{v.subject} = {v.value}", "text": v.explanation}
                for v in task.verdicts
            ],
        }
    }


def potato_item(task: ReportTask) -> dict[str, object]:
    """A line of Potato's data file: shown through ``instance_display`` text fields, which
    escape markup (its plain ``text_key`` display lets HTML through)."""
    return {
        "id": task.id,
        "title": task.title,
        "text": task.markdown,
        "verdicts": "\n".join(f"{v.subject} = {v.value}: {v.explanation}" for v in task.verdicts),
    }


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
        "instance_display": {
            "fields": [
                {"key": "title", "type": "text", "label": "Report"},
                {"key": "text", "type": "text", "label": "Report text"},
                {"key": "verdicts", "type": "text", "label": "Judge verdicts"},
            ]
        },
        "annotation_schemes": [
            {
                "annotation_type": "radio",
                "name": "decision",
                "description": "The verdict should be",
                "labels": list(CHOICES),
            },
            {
                "annotation_type": "text",
                "name": "verdict",
                "description": "Which verdict (e.g. claim c1)",
            },
        ],
    }
    return json.dumps(config, indent=2) + "\n"


SCALES = {
    "claim": ("correct", "incorrect", "unknown"),
    "consistency": ("support", "conflict", "unknown"),
}
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
        fields = stat[stat.rfind(")") + 2 :].split()
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

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self._stop.set()
        self._thread.join()


# ---------------------------------------------------------------------------------------------
# A peer's result


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
