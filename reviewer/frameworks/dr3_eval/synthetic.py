"""Seeded synthetic DR3-Eval runs with planted judge errors, for measuring review orders.

Each task has a handful of *facts*; each fact is a gold insight ("<topic words> rose to N%")
and a checklist item about the same fact ("Describe the <topic words> change"). A report
covers a fact fully, partly or not at all; the judge's insight and checklist verdicts follow
from that (a fact covered only in part may or may not pass the checklist's "specific content"
bar). Two benign disagreements make the review order's job realistic: a report that covers the
topic with a wrong figure (checklist true, insight 0), and checklist items about topics no
insight holds. With ``plant`` > 0 the judge also errs:

* ``same fact`` — a checklist verdict false on a fact whose insight it judged fully covered,
  or an insight judged 1 on a fact the report leaves out (while the checklist says false);
* ``silent`` — an insight value changed with nothing else to betray it.

The errors are listed with their right values beside the folder (:func:`planted_path`).
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any, TextIO

from reviewer.synthetic import line as _line
from reviewer.synthetic import planted_path, vocabulary

PLANTED_TYPES = ("same fact", "silent")


def write_dr3_synthetic(
    folder: Path,
    tasks: int = 10,
    systems: int = 5,
    facts: int = 8,
    seed: int = 1,
    plant: float = 0.0,
) -> dict[str, int]:
    """Write a DR3-Eval bundle (insights, checklist, depth); returns record counts."""
    rng = random.Random(seed)
    vocab = vocabulary(rng, 1500)
    folder.mkdir(parents=True, exist_ok=True)
    names = [f"agent{i}" for i in range(systems)]
    _write_suite(folder, tasks, systems, seed, names)
    counts = {"tasks": 0, "reports": 0, "judgments": 0, "planted": 0}
    plans = []
    with (folder / "tasks.jsonl").open("w", encoding="utf-8") as handle:
        for t in range(tasks):
            task, topics = _task(rng, vocab, t, facts)
            _line(handle, task)
            plans.append((task, topics))
            counts["tasks"] += 1
    listed = planted_path(folder)
    with (
        (folder / "reports.jsonl").open("w", encoding="utf-8") as reports,
        (folder / "judgments.jsonl").open("w", encoding="utf-8") as judgments,
        listed.open("w", encoding="utf-8") as planted,
    ):
        for task, topics in plans:
            for s, system in enumerate(names):
                report = f"{system}:{task['id']}"
                quality = 0.35 + 0.5 * s / max(1, systems - 1)
                lines, verdicts = _report(rng, report, topics, quality, plant, planted)
                _line(
                    reports,
                    {
                        "id": report,
                        "task": task["id"],
                        "system": system,
                        "markdown": "\n".join(lines) + "\n",
                    },
                )
                for verdict in verdicts:
                    _line(judgments, verdict)
                counts["reports"] += 1
                counts["judgments"] += len(verdicts)
    counts["planted"] = len(listed.read_text(encoding="utf-8").splitlines())
    if not plant:
        listed.unlink()
    return counts


def _write_suite(folder: Path, tasks: int, systems: int, seed: int, names: list[str]) -> None:
    """suite.json, the systems and the one judge run."""
    (folder / "suite.json").write_text(
        json.dumps(
            {
                "format": "gavel-bundle",
                "format_version": 1,
                "id": f"synthetic-dr3-{tasks}x{systems}-s{seed}",
                "name": "Synthetic DR3-Eval run",
                "frameworks": ["dr3"],
                "version": "synthetic",
                "source": "reviewer.frameworks.dr3_eval.synthetic",
                "description": "generated for measuring review orders",
            },
            indent=2,
        ),
        encoding="utf-8",
    )
    with (folder / "systems.jsonl").open("w", encoding="utf-8") as handle:
        for name in names:
            _line(handle, {"id": name, "name": name, "family": "synthetic"})
    with (folder / "runs.jsonl").open("w", encoding="utf-8") as handle:
        _line(
            handle,
            {
                "id": "judge",
                "model": "synthetic-judge",
                "prompt_version": "v1",
                "created_at": "2026-11-01T00:00:00Z",
            },
        )


def _task(
    rng: random.Random, vocab: list[str], t: int, facts: int
) -> tuple[dict[str, Any], list[list[str]]]:
    """A task: per fact a gold insight and a checklist item on it, two checklist items on
    topics no insight holds, and the depth criterion; with the facts' topic words."""
    topics = [rng.sample(vocab, 2) for _ in range(facts)]
    criteria: list[dict[str, Any]] = []
    for f, (a, b) in enumerate(topics):
        origin = "uf" if f % 2 else "sc"
        criteria.append(
            {
                "id": f"{origin}-{f + 1}",
                "framework": "dr3",
                "dimension": f"insight_{origin}",
                "scale": "dr3_coverage",
                "text": f"The {a} {b} rose to {rng.randint(11, 95)}% in 2025",
                "metadata": {"origin": origin.upper()},
            }
        )
        criteria.append(
            {
                "id": f"if-{f + 1}",
                "framework": "dr3",
                "dimension": "checklist",
                "scale": "binary",
                "text": f"Describe the {a} {b} change",
            }
        )
    for extra in range(2):
        a, b = rng.sample(vocab, 2)
        criteria.append(
            {
                "id": f"if-{facts + extra + 1}",
                "framework": "dr3",
                "dimension": "checklist",
                "scale": "binary",
                "text": f"Mention the {a} {b} plan",
            }
        )
    criteria.append(
        {
            "id": "dq",
            "framework": "dr3",
            "dimension": "depth",
            "scale": "dr3_depth10",
            "text": "Depth & Quality of Analysis",
        }
    )
    task = {
        "id": f"d{t:03d}",
        "prompt": f"Synthetic DR3 task {t}.",
        "domain": "synthetic",
        "category": "synthetic",
        "task_type": "research",
        "criteria": criteria,
    }
    return task, topics


def _report(
    rng: random.Random,
    report: str,
    topics: list[list[str]],
    quality: float,
    plant: float,
    planted: TextIO,
) -> tuple[list[str], list[dict[str, Any]]]:
    """One report's lines and the judge's verdicts on it, planted errors listed."""
    lines = [f"# Report {report}", ""]
    verdicts: list[dict[str, Any]] = []
    base = {"run": "judge", "report": report}
    for f, (a, b) in enumerate(topics):
        origin = "uf" if f % 2 else "sc"
        line, insight, check = _coverage(rng, quality, a, b)
        if line:
            lines.append(line)
        ins_v = {**base, "kind": "dr3_insight", "criterion": f"{origin}-{f + 1}"}
        chk_v = {**base, "kind": "dr3_checklist", "criterion": f"if-{f + 1}"}
        ins_value, chk_value = _plant(rng, plant, insight, check, ins_v, chk_v, planted)
        verdicts.append({**ins_v, "value": ins_value, "explanation": "synthetic insight verdict"})
        verdicts.append({**chk_v, "value": chk_value})
    for extra in range(2):
        verdicts.append(
            {
                **base,
                "kind": "dr3_checklist",
                "criterion": f"if-{len(topics) + extra + 1}",
                "value": rng.random() < quality,
            }
        )
    verdicts.append(
        {
            **base,
            "kind": "dr3_depth",
            "criterion": "dq",
            "value": float(rng.randint(3, 8)),
            "explanation": "synthetic depth verdict",
        }
    )
    return lines, verdicts


def _coverage(rng: random.Random, quality: float, a: str, b: str) -> tuple[str, float, bool]:
    """How a report covers one fact: (its line, if any; the insight value; the checklist
    verdict). Full coverage passes the checklist, partial coverage may, and a report that
    names the topic with a wrong figure passes it with the insight at 0."""
    roll = rng.random()
    if roll < quality:
        return f"The {a} {b} rose to the figure the study gives.", 1.0, True
    if roll < quality + 0.25:
        return f"The {a} {b} has changed.", 0.5, rng.random() < 0.5
    if rng.random() < 0.15:  # the topic with a wrong figure
        return f"The {a} {b} fell sharply.", 0.0, True
    return "", 0.0, False


def _plant(
    rng: random.Random,
    plant: float,
    insight: float,
    check: bool,
    ins_v: dict[str, Any],
    chk_v: dict[str, Any],
    planted: TextIO,
) -> tuple[float, bool]:
    """The judge's (insight, checklist) values on one fact, with a planted error at rate
    ``plant``: a 'same fact' contradiction, else a 'silent' change of the insight."""
    if plant and rng.random() < plant:
        if insight == 1.0 and check:
            _line(planted, {**chk_v, "right": "true", "type": "same fact"})
            return insight, False
        if insight == 0.0 and not check:
            _line(planted, {**ins_v, "right": "0", "type": "same fact"})
            return 1.0, check
    elif plant and rng.random() < plant and insight != 0.5:
        _line(planted, {**ins_v, "right": _code(insight), "type": "silent"})
        return 0.5, check
    return insight, check


def _code(value: float) -> str:
    return "0.5" if value == 0.5 else str(int(value))
