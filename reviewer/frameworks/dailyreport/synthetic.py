"""Seeded synthetic benchmark runs, written straight to a bundle folder.

Used by the benchmark (a DailyReport-size run: 150 tasks × 17 systems, ~24 rubrics and ~40
claims a report) and by tests that need volume. Records are written as plain JSON, not built as
models, so that generating 250k judgments takes seconds; the import path validates them like any
other bundle. The text is pseudo-words: it exercises search and layout, it is not prose.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

_SYLLABLES = [c + v for c in "bcdfghklmnprstvz" for v in "aeiou"]


@dataclass(frozen=True, slots=True)
class SyntheticSpec:
    tasks: int = 150
    systems: int = 17
    subtasks: int = 12
    claims: int = 40
    words: int = 1200
    seed: int = 7
    long_report_words: int = 0
    """When > 0, the first report is this long (with claims spread through it)."""
    long_report_claims: int = 300


def _vocabulary(rng: random.Random, size: int = 3000) -> list[str]:
    words: set[str] = set()
    while len(words) < size:
        words.add("".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(1, 4))))
    return sorted(words)


def _sentence(rng: random.Random, vocab: list[str], n: int) -> str:
    words = [rng.choice(vocab) for _ in range(n)]
    words[0] = words[0].capitalize()
    return " ".join(words)


def _line(handle: TextIO, record: dict[str, Any]) -> None:
    handle.write(json.dumps(record, ensure_ascii=False, separators=(",", ":")))
    handle.write("\n")


BENCH_KINDS = ("claim", "ins")
"""The verdicts ``gavel bench`` decides on a synthetic run, as a reviewer mostly does."""


def write_synthetic(folder: Path, spec: SyntheticSpec = SyntheticSpec()) -> dict[str, int]:
    """Write a complete cascade bundle; returns record counts."""
    rng = random.Random(spec.seed)
    vocab = _vocabulary(rng)
    folder.mkdir(parents=True, exist_ok=True)
    suite = {
        "format": "gavel-bundle", "format_version": 1,
        "id": f"synthetic-{spec.tasks}x{spec.systems}-s{spec.seed}",
        "name": f"Synthetic run {spec.tasks} tasks × {spec.systems} systems",
        "frameworks": ["cascade"], "version": "synthetic",
        "source": "reviewer.frameworks.dailyreport.synthetic",
        "description": "generated for benchmarks and tests",
    }
    (folder / "suite.json").write_text(json.dumps(suite, indent=2), encoding="utf-8")
    counts = {"tasks": 0, "reports": 0, "claims": 0, "judgments": 0, "sources": 0}
    systems = [f"sys{i:02d}" for i in range(spec.systems)]
    with (folder / "systems.jsonl").open("w", encoding="utf-8") as handle:
        for i, name in enumerate(systems):
            _line(handle, {"id": name, "name": f"System {i:02d}", "family": "synthetic"})
    with (folder / "runs.jsonl").open("w", encoding="utf-8") as handle:
        _line(handle, {"id": "run-1", "model": "synthetic-judge", "prompt_version": "v1",
                       "created_at": "2026-11-01T00:00:00Z"})

    task_plans = list(_task_plans(rng, spec))
    with (folder / "tasks.jsonl").open("w", encoding="utf-8") as handle:
        for task in task_plans:
            _line(handle, task)
            counts["tasks"] += 1

    with (folder / "reports.jsonl").open("w", encoding="utf-8") as reports, \
            (folder / "judgments.jsonl").open("w", encoding="utf-8") as judgments:
        first = True
        for task in task_plans:
            fac_subtasks = [c["subtask"] for c in task["criteria"] if c["dimension"] == "fac"]
            for system in systems:
                quality = 0.55 + 0.4 * (systems.index(system) / max(1, len(systems) - 1))
                long = first and spec.long_report_words > 0
                words = spec.long_report_words if long else spec.words
                n_claims = spec.long_report_claims if long else spec.claims
                first = False
                report, verdicts = _report(rng, vocab, task, system, fac_subtasks, words,
                                           n_claims, quality)
                _line(reports, report)
                counts["reports"] += 1
                counts["claims"] += len(report["claims"])
                for verdict in verdicts:
                    _line(judgments, verdict)
                counts["judgments"] += len(verdicts)
    with (folder / "sources.jsonl").open("w", encoding="utf-8") as handle:
        for i in range(min(2000, spec.tasks * 10)):
            text = " ".join(_sentence(rng, vocab, 14) + "." for _ in range(8))
            _line(handle, {"url": f"https://src{i}.example/page", "title": f"Source {i}",
                           "text": text})
            counts["sources"] += 1
    return counts


def _task_plans(rng: random.Random, spec: SyntheticSpec) -> Iterator[dict[str, Any]]:
    for t in range(spec.tasks):
        subtasks: list[dict[str, Any]] = []
        criteria: list[dict[str, Any]] = []
        for s in range(spec.subtasks):
            if s == 0:
                importance: dict[str, Any] = {"importance": "P0"}
            elif s < 4:
                importance = {"importance": "P1"}
            elif s < 8:
                importance = {"importance": "P2a", "group": str(1 + (s - 4) // 2)}
            else:
                importance = {"importance": "P2"}
            sid = f"s{s + 1}"
            subtasks.append({"id": sid, "text": f"Subtask {s + 1} of task {t}", **importance})
            criteria.append({"id": f"{sid}-ins", "subtask": sid, "framework": "cascade",
                             "dimension": "ins", "text": f"Does the report cover {sid}?"})
            if s % 2 == 0:
                criteria.append({"id": f"{sid}-fac", "subtask": sid, "framework": "cascade",
                                 "dimension": "fac", "text": f"Are the facts for {sid} right?"})
            else:
                criteria.append({"id": f"{sid}-rat", "subtask": sid, "framework": "cascade",
                                 "dimension": "rat", "text": f"Is {sid} reasoned well?"})
        yield {
            "id": f"t{t:03d}", "prompt": f"Synthetic task {t}: research and report.",
            "domain": f"domain{t % 10}", "category": f"cat{t % 35}",
            "task_type": "retrieval" if t % 3 else "analysis",
            "subtasks": subtasks, "criteria": criteria,
        }


def _report(
    rng: random.Random, vocab: list[str], task: dict[str, Any], system: str,
    fac_subtasks: list[str], words: int, n_claims: int, quality: float,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    report_id = f"{task['id']}-{system}"
    n_refs = 12
    paragraphs: list[str] = [f"# Report on {task['id']} by {system}", ""]
    claims: list[dict[str, Any]] = []
    written = 0
    claim_every = max(1, (words // 14) // max(1, n_claims))
    sentence_no = 0
    while written < words or len(claims) < n_claims:
        sentence = _sentence(rng, vocab, 14)
        sentence_no += 1
        written += 14
        if len(claims) < n_claims and sentence_no % claim_every == 0:
            ref = rng.randint(1, n_refs)
            fact = f"{sentence} claim {len(claims) + 1}"
            claims.append({"id": f"c{len(claims) + 1}",
                           "subtask": fac_subtasks[len(claims) % len(fac_subtasks)],
                           "fact": fact, "citations": [ref]})
            paragraphs.append(f"{fact} [{ref}].")
        else:
            paragraphs.append(sentence + ".")
        if sentence_no % 6 == 0:
            paragraphs.append("")
        if sentence_no % 60 == 0:
            paragraphs.append(f"## Section {sentence_no // 60}\n")
    paragraphs.append("\n## References")
    paragraphs.extend(f"[{i}] Source {i}_Site https://src{i}.example/page" for i in
                      range(1, n_refs + 1))
    markdown = "\n".join(paragraphs) + "\n"
    verdicts: list[dict[str, Any]] = []
    base = {"run": "run-1", "report": report_id}
    for criterion in task["criteria"]:
        if criterion["dimension"] in ("ins", "rat"):
            roll = rng.random()
            value = 1 if roll < quality else (0.5 if roll < quality + 0.25 else 0)
            verdicts.append({**base, "kind": criterion["dimension"], "criterion": criterion["id"],
                             "value": value, "explanation": "synthetic"})
    for claim in claims:
        roll = rng.random()
        verdict = "correct" if roll < quality else ("incorrect" if roll < quality + 0.2
                                                    else "unknown")
        verdicts.append({**base, "kind": "claim", "claim": claim["id"], "value": verdict,
                         "explanation": "synthetic"})
        verdicts.append({**base, "kind": "consistency", "claim": claim["id"],
                         "ref": claim["citations"][0],
                         "value": "support" if verdict == "correct" else "unknown",
                         "explanation": "synthetic"})
    return {"id": report_id, "task": task["id"], "system": system, "markdown": markdown,
            "claims": claims}, verdicts
