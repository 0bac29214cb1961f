"""The simple synthetic DailyReport generator that issue 15's estimate tests were calibrated on.

:mod:`reviewer.frameworks.dailyreport.synthetic` later grew a judge shaped like a real one
(rubric level texts, explanations, conflicting pages, unreachable pages, planted errors of
known types). Runs with a planted judge *bias* (``judge_bias`` / ``judge_noise``), which the
estimate tests check interval coverage on, keep this generator, byte for byte as it was, so
that their populations stay the ones those checks were tuned against.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from reviewer.frameworks.dailyreport.synthetic_spec import SyntheticSpec

TRUTH_RUN = "truth"

_SYLLABLES = [c + v for c in "bcdfghklmnprstvz" for v in "aeiou"]


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


def write_plain(folder: Path, spec: SyntheticSpec) -> dict[str, int]:
    """Write a complete cascade bundle; returns record counts."""
    rng = random.Random(spec.seed)
    vocab = _vocabulary(rng)
    folder.mkdir(parents=True, exist_ok=True)
    suite = {
        "format": "gavel-bundle",
        "format_version": 1,
        "id": f"synthetic-{spec.tasks}x{spec.systems}-s{spec.seed}",
        "name": f"Synthetic run {spec.tasks} tasks × {spec.systems} systems",
        "frameworks": ["cascade"],
        "version": "synthetic",
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
        _line(
            handle,
            {
                "id": "run-1",
                "model": "synthetic-judge",
                "prompt_version": "v1",
                "created_at": "2026-11-01T00:00:00Z",
            },
        )
        if spec.planted:
            _line(
                handle,
                {
                    "id": TRUTH_RUN,
                    "model": "human-truth",
                    "prompt_version": "v1",
                    "created_at": "2026-10-01T00:00:00Z",
                    "description": "the true verdicts the judge's were planted on",
                },
            )
    # The judge's mistakes come from a generator of their own, so a run without them is the
    # same run, byte for byte, as before they existed.
    judge_rng = random.Random(spec.seed * 7919 + 1)

    task_plans = list(_task_plans(rng, spec))
    with (folder / "tasks.jsonl").open("w", encoding="utf-8") as handle:
        for task in task_plans:
            _line(handle, task)
            counts["tasks"] += 1

    with (
        (folder / "reports.jsonl").open("w", encoding="utf-8") as reports,
        (folder / "judgments.jsonl").open("w", encoding="utf-8") as judgments,
    ):
        first = True
        for task in task_plans:
            fac_subtasks = [c["subtask"] for c in task["criteria"] if c["dimension"] == "fac"]
            for system in systems:
                quality = 0.55 + 0.4 * (systems.index(system) / max(1, len(systems) - 1))
                long = first and spec.long_report_words > 0
                words = spec.long_report_words if long else spec.words
                n_claims = spec.long_report_claims if long else spec.claims
                first = False
                report, verdicts = _report(
                    rng, vocab, task, system, fac_subtasks, words, n_claims, quality
                )
                _line(reports, report)
                counts["reports"] += 1
                counts["claims"] += len(report["claims"])
                if spec.planted:
                    bias = (
                        spec.judge_bias[systems.index(system) % len(spec.judge_bias)]
                        if spec.judge_bias
                        else 0.0
                    )
                    verdicts = _planted(judge_rng, verdicts, bias, spec.judge_noise)
                for verdict in verdicts:
                    _line(judgments, verdict)
                counts["judgments"] += len(verdicts)
    with (folder / "sources.jsonl").open("w", encoding="utf-8") as handle:
        for i in range(min(2000, spec.tasks * 10)):
            text = " ".join(_sentence(rng, vocab, 14) + "." for _ in range(8))
            _line(
                handle,
                {"url": f"https://src{i}.example/page", "title": f"Source {i}", "text": text},
            )
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
            criteria.append(
                {
                    "id": f"{sid}-ins",
                    "subtask": sid,
                    "framework": "cascade",
                    "dimension": "ins",
                    "text": f"Does the report cover {sid}?",
                }
            )
            if s % 2 == 0:
                criteria.append(
                    {
                        "id": f"{sid}-fac",
                        "subtask": sid,
                        "framework": "cascade",
                        "dimension": "fac",
                        "text": f"Are the facts for {sid} right?",
                    }
                )
            else:
                criteria.append(
                    {
                        "id": f"{sid}-rat",
                        "subtask": sid,
                        "framework": "cascade",
                        "dimension": "rat",
                        "text": f"Is {sid} reasoned well?",
                    }
                )
        yield {
            "id": f"t{t:03d}",
            "prompt": f"Synthetic task {t}: research and report.",
            "domain": f"domain{t % 10}",
            "category": f"cat{t % 35}",
            "task_type": "retrieval" if t % 3 else "analysis",
            "subtasks": subtasks,
            "criteria": criteria,
        }


def _report(
    rng: random.Random,
    vocab: list[str],
    task: dict[str, Any],
    system: str,
    fac_subtasks: list[str],
    words: int,
    n_claims: int,
    quality: float,
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
            claims.append(
                {
                    "id": f"c{len(claims) + 1}",
                    "subtask": fac_subtasks[len(claims) % len(fac_subtasks)],
                    "fact": fact,
                    "citations": [ref],
                }
            )
            paragraphs.append(f"{fact} [{ref}].")
        else:
            paragraphs.append(sentence + ".")
        if sentence_no % 6 == 0:
            paragraphs.append("")
        if sentence_no % 60 == 0:
            paragraphs.append(f"## Section {sentence_no // 60}\n")
    paragraphs.append("\n## References")
    paragraphs.extend(
        f"[{i}] Source {i}_Site https://src{i}.example/page" for i in range(1, n_refs + 1)
    )
    markdown = "\n".join(paragraphs) + "\n"
    verdicts: list[dict[str, Any]] = []
    base = {"run": "run-1", "report": report_id}
    for criterion in task["criteria"]:
        if criterion["dimension"] in ("ins", "rat"):
            roll = rng.random()
            value = 1 if roll < quality else (0.5 if roll < quality + 0.25 else 0)
            verdicts.append(
                {
                    **base,
                    "kind": criterion["dimension"],
                    "criterion": criterion["id"],
                    "value": value,
                    "explanation": "synthetic",
                }
            )
    for claim in claims:
        roll = rng.random()
        verdict = (
            "correct" if roll < quality else ("incorrect" if roll < quality + 0.2 else "unknown")
        )
        verdicts.append(
            {
                **base,
                "kind": "claim",
                "claim": claim["id"],
                "value": verdict,
                "explanation": "synthetic",
            }
        )
        verdicts.append(
            {
                **base,
                "kind": "consistency",
                "claim": claim["id"],
                "ref": claim["citations"][0],
                "value": "support" if verdict == "correct" else "unknown",
                "explanation": "synthetic",
            }
        )
    return {
        "id": report_id,
        "task": task["id"],
        "system": system,
        "markdown": markdown,
        "claims": claims,
    }, verdicts


_UPGRADE: dict[str, dict[Any, Any]] = {
    "ins": {0: 0.5, 0.5: 1},
    "rat": {0: 0.5, 0.5: 1},
    "claim": {"incorrect": "correct", "unknown": "correct"},
}
_VALUES: dict[str, list[Any]] = {
    "ins": [0, 0.5, 1],
    "rat": [0, 0.5, 1],
    "claim": ["correct", "incorrect", "unknown"],
}


def _planted(
    rng: random.Random, verdicts: list[dict[str, Any]], bias: float, noise: float
) -> list[dict[str, Any]]:
    """The judge's verdicts (biased upwards with probability ``bias``, randomised with
    probability ``noise``) followed by the true ones as run ``truth``; the judge's consistency
    verdict follows its own claim verdict, as in :func:`_report`."""
    judged: list[dict[str, Any]] = []
    truth: list[dict[str, Any]] = []
    claim_value: dict[str, str] = {}
    for verdict in verdicts:
        kind = verdict["kind"]
        truth.append({**verdict, "run": TRUTH_RUN})
        value = verdict["value"]
        if kind == "consistency":
            value = "support" if claim_value.get(verdict["claim"]) == "correct" else "unknown"
        else:
            upgraded = _UPGRADE[kind].get(value)
            if upgraded is not None and rng.random() < bias:
                value = upgraded
            if noise and rng.random() < noise:
                value = rng.choice(_VALUES[kind])
            if kind == "claim":
                claim_value[verdict["claim"]] = value
        judged.append({**verdict, "value": value})
    return judged + truth
