"""Seeded synthetic benchmark runs, written straight to a bundle folder.

Used by the benchmark (a DailyReport-size run: 150 tasks × 17 systems, ~24 rubrics and ~40
claims a report) and by tests that need volume. Records are written as plain JSON, not built as
models, so that generating 250k judgments takes seconds; the import path validates them like any
other bundle. The text is pseudo-words: it exercises search and layout, it is not prose.

The judge is shaped like a real one where review tools look: rubric criteria write their level
texts ("1: … 0.5: … 0: …") and each verdict's explanation describes what it saw in those terms;
incorrect claims mostly conflict with their cited page, yet some are cited to a page that
supports them (an outdated source: both verdicts right); a few cited pages could not be
fetched. With ``plant`` > 0 the judge also makes errors of known types, listed with the right
value in a ``planted.jsonl`` beside the bundle folder (:func:`planted_path`;
:mod:`reviewer.planted`), which is what review orders are measured
against (:mod:`store.triage.review_order`):

* ``contradiction`` — a claim verdict flipped while its consistency verdicts stay, or the
  reverse;
* ``level`` — a rubric value changed while the explanation still describes the right level;
* ``unreachable`` — ``support`` on a page that could not be fetched;
* ``runs`` — a second, newer judge run (the one that counts) wrong where the first was right;
  it is also right where the first was wrong, which flags verdicts that are fine;
* ``silent`` — an error nothing on screen betrays (value and explanation changed together).
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from reviewer.frameworks.dailyreport.synthetic_spec import SyntheticSpec as SyntheticSpec
from reviewer.synthetic import line as _line
from reviewer.synthetic import planted_path
from reviewer.synthetic import sentence as _sentence
from reviewer.synthetic import vocabulary as _vocabulary

PLANTED_TYPES = ("contradiction", "level", "unreachable", "runs", "silent")


TRUTH_RUN = "truth"
"""The true verdicts' run in a bundle with a planted judge bias (synthetic_plain)."""


BENCH_KINDS = ("claim", "ins")
"""The verdicts ``gavel bench`` decides on a synthetic run, as a reviewer mostly does."""

N_REFS = 12


@dataclass(slots=True)
class _Run:
    """What the generator decides across reports: planted errors and the second run."""

    rng: random.Random
    spec: SyntheticSpec
    dead: set[str]
    planted: TextIO | None
    second: list[dict[str, Any]]

    def plant(self, scale: float = 1.0) -> bool:
        """Whether the judge errs here: ``scale`` evens out how often each error type gets a
        chance (there are far fewer verdicts on dead pages than rubric verdicts)."""
        return (
            self.spec.plant > 0
            and self.planted is not None
            and self.rng.random() < min(1.0, self.spec.plant * scale)
        )

    def record(self, error: str, verdict: dict[str, Any], right: object) -> None:
        assert self.planted is not None
        entry: dict[str, Any] = {
            k: verdict[k] for k in ("report", "kind", "criterion", "claim", "ref") if k in verdict
        }
        _line(self.planted, {**entry, "right": str(right), "type": error})


def _source_url(task: int, ref: int, sources: int) -> str:
    return f"https://src{(task * N_REFS + ref) % sources}.example/page"


def write_synthetic(folder: Path, spec: SyntheticSpec = SyntheticSpec()) -> dict[str, int]:
    """Write a complete cascade bundle; returns record counts (and the planted errors, see
    :func:`planted_path`, when the spec plants some).

    A planted judge *bias* (``judge_bias`` / ``judge_noise``: the estimate tests) is written by
    the simple generator those tests were calibrated on
    (:mod:`reviewer.frameworks.dailyreport.synthetic_plain`)."""
    if spec.planted:
        if spec.plant > 0 or spec.second_run > 0:
            raise ValueError(
                "a planted judge bias and planted judge errors of known types "
                "are separate generators: give one or the other"
            )
        from reviewer.frameworks.dailyreport.synthetic_plain import write_plain

        return write_plain(folder, spec)
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
    counts = {"tasks": 0, "reports": 0, "claims": 0, "judgments": 0, "sources": 0, "planted": 0}
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
        if spec.second_run > 0:
            _line(
                handle,
                {
                    "id": "run-2",
                    "model": "synthetic-judge-2",
                    "prompt_version": "v2",
                    "created_at": "2026-11-08T00:00:00Z",
                },
            )

    n_sources = min(2000, spec.tasks * 10)
    dead_rng = random.Random(spec.seed + 1)
    dead = {
        f"https://src{i}.example/page"
        for i in range(n_sources)
        if dead_rng.random() < spec.unreachable
    }
    task_plans = list(_task_plans(rng, vocab, spec))
    with (folder / "tasks.jsonl").open("w", encoding="utf-8") as handle:
        for task in task_plans:
            _line(handle, task)
            counts["tasks"] += 1

    listed = planted_path(folder)
    with (
        (folder / "reports.jsonl").open("w", encoding="utf-8") as reports,
        (folder / "judgments.jsonl").open("w", encoding="utf-8") as judgments,
        listed.open("w", encoding="utf-8") as planted,
    ):
        run = _Run(rng, spec, dead, planted if spec.plant > 0 else None, [])
        first = True
        for t, task in enumerate(task_plans):
            fac_subtasks = [c["subtask"] for c in task["criteria"] if c["dimension"] == "fac"]
            for system in systems:
                quality = 0.55 + 0.4 * (systems.index(system) / max(1, len(systems) - 1))
                long = first and spec.long_report_words > 0
                words = spec.long_report_words if long else spec.words
                n_claims = spec.long_report_claims if long else spec.claims
                first = False
                report, verdicts = _report(
                    run, vocab, t, task, system, fac_subtasks, words, n_claims, quality, n_sources
                )
                _line(reports, report)
                counts["reports"] += 1
                counts["claims"] += len(report["claims"])
                for verdict in verdicts:
                    _line(judgments, verdict)
                counts["judgments"] += len(verdicts)
        for verdict in run.second:
            _line(judgments, verdict)
        counts["judgments"] += len(run.second)
    if spec.plant <= 0:
        listed.unlink()
    else:
        counts["planted"] = len(listed.read_text(encoding="utf-8").splitlines())
    with (folder / "sources.jsonl").open("w", encoding="utf-8") as handle:
        for i in range(n_sources):
            url = f"https://src{i}.example/page"
            if url in dead:
                _line(
                    handle,
                    {"url": url, "title": f"Source {i}", "text": "", "error": "HTTP 404 Not Found"},
                )
            else:
                text = " ".join(_sentence(rng, vocab, 14) + "." for _ in range(8))
                _line(handle, {"url": url, "title": f"Source {i}", "text": text})
            counts["sources"] += 1
    return counts


# -- rubrics with level texts --------------------------------------------------------------------

_INS_LEVELS = (
    "1: all four {items}, each with its {qualifier}. 0.5: two or three {items}, or "
    "figures without their {qualifier}. 0: one {item} or none."
)
_RAT_LEVELS = (
    "1: the recommendation follows from the {what} the report gives. 0.5: sensible, "
    "but one {what} is misread. 0: the recommendation contradicts the report's own "
    "{what}."
)


def _task_plans(
    rng: random.Random, vocab: list[str], spec: SyntheticSpec
) -> Iterator[dict[str, Any]]:
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
            names = rng.sample(vocab, 4)
            item, qualifier, what = rng.choice(vocab), rng.choice(vocab), rng.choice(vocab)
            subtasks.append({"id": sid, "text": f"Subtask {s + 1} of task {t}", **importance})
            criteria.append(
                {
                    "id": f"{sid}-ins",
                    "subtask": sid,
                    "framework": "cascade",
                    "dimension": "ins",
                    "text": f"Does the report cover {sid} for each of {names[0]}, {names[1]}, "
                    f"{names[2]} and {names[3]}?",
                    "explanation": _INS_LEVELS.format(
                        items=item + "s", item=item, qualifier=qualifier
                    ),
                    "metadata": {
                        "synthetic": {"items": names, "item": item, "qualifier": qualifier}
                    },
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
                        "explanation": _RAT_LEVELS.format(what=what),
                        "metadata": {"synthetic": {"what": what}},
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


def _ins_explanation(rng: random.Random, criterion: dict[str, Any], value: float) -> str:
    meta = criterion["metadata"]["synthetic"]
    names, item, qualifier = meta["items"], meta["item"], meta["qualifier"]
    if value == 1:
        return rng.choice(
            (
                f"The report covers all four {item}s, each with its {qualifier}.",
                f"Every {item} is there: {', '.join(names)}, with the {qualifier} for each.",
            )
        )
    if value == 0.5:
        some = rng.sample(names, rng.choice((2, 3)))
        return rng.choice(
            (
                f"Only {' and '.join(some)} are covered; the other {item}s are missing.",
                f"{', '.join(some)} are given, but the rest are not mentioned.",
            )
        )
    return rng.choice(
        (
            f"Only {rng.choice(names)} is mentioned; the other {item}s are absent.",
            f"No {item} is covered at all.",
        )
    )


def _rat_explanation(rng: random.Random, criterion: dict[str, Any], value: float) -> str:
    what = criterion["metadata"]["synthetic"]["what"]
    if value == 1:
        return rng.choice(
            (
                f"The recommendation follows from the {what} the report gives.",
                f"Well argued: the choice follows from the report's {what}.",
            )
        )
    if value == 0.5:
        return rng.choice(
            (
                f"Sensible, but one {what} is misread.",
                f"A sensible choice, though one {what} is misread along the way.",
            )
        )
    return rng.choice(
        (
            f"The recommendation contradicts the report's own {what}.",
            f"The choice contradicts the {what} given earlier in the report.",
        )
    )


def _explain(rng: random.Random, criterion: dict[str, Any], value: float) -> str:
    if criterion["dimension"] == "ins":
        return _ins_explanation(rng, criterion, value)
    return _rat_explanation(rng, criterion, value)


def _hedge(rng: random.Random, criterion: dict[str, Any]) -> str:
    meta = criterion["metadata"]["synthetic"]
    if criterion["dimension"] == "ins":
        return rng.choice(
            (
                f"Two or three {meta['item']}s are spelled out in more detail.",
                "Some figures are rounded.",
            )
        )
    return f"One {meta['what']} is misread along the way, which does not change the conclusion."


def _other(rng: random.Random, value: float) -> float:
    return rng.choice([v for v in (0.0, 0.5, 1.0) if v != value])


# -- one report --------------------------------------------------------------------------------


def _report(
    run: _Run,
    vocab: list[str],
    t: int,
    task: dict[str, Any],
    system: str,
    fac_subtasks: list[str],
    words: int,
    n_claims: int,
    quality: float,
    n_sources: int,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """One report and its verdicts. The parts draw from the run's generator in a fixed order
    (text, then level verdicts, then claim verdicts), so a seed always writes the same run."""
    report_id = f"{task['id']}-{system}"
    markdown, claims, urls = _markdown(
        run.rng, vocab, t, task, system, fac_subtasks, words, n_claims, n_sources
    )
    base = {"run": "run-1", "report": report_id}
    verdicts = _level_verdicts(run, task, base, quality)
    verdicts.extend(_claim_verdicts(run, claims, urls, base, quality))
    return {
        "id": report_id,
        "task": task["id"],
        "system": system,
        "markdown": markdown,
        "claims": claims,
    }, verdicts


def _markdown(
    rng: random.Random,
    vocab: list[str],
    t: int,
    task: dict[str, Any],
    system: str,
    fac_subtasks: list[str],
    words: int,
    n_claims: int,
    n_sources: int,
) -> tuple[str, list[dict[str, Any]], dict[int, str]]:
    """(the report's text, its claims, its reference urls): sentences with a claim every few,
    each citing one reference, then the reference list."""
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
            ref = rng.randint(1, N_REFS)
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
    urls = {i: _source_url(t, i, n_sources) for i in range(1, N_REFS + 1)}
    paragraphs.extend(f"[{i}] Source {i}_Site {urls[i]}" for i in range(1, N_REFS + 1))
    return "\n".join(paragraphs) + "\n", claims, urls


def _level_verdicts(
    run: _Run, task: dict[str, Any], base: dict[str, str], quality: float
) -> list[dict[str, Any]]:
    """The ins and rat verdicts, some wrong as planted; a report may be judged twice."""
    rng = run.rng
    verdicts: list[dict[str, Any]] = []
    rejudged = run.spec.second_run > 0 and rng.random() < run.spec.second_run
    for criterion in task["criteria"]:
        if criterion["dimension"] not in ("ins", "rat"):
            continue
        roll = rng.random()
        right = 1.0 if roll < quality else (0.5 if roll < quality + 0.25 else 0.0)
        value, explanation = right, _explain(rng, criterion, right)
        verdict = {**base, "kind": criterion["dimension"], "criterion": criterion["id"]}
        if not rejudged and run.plant():
            value = _other(rng, right)
            run.record("level", verdict, _code(right))
        elif not rejudged and run.plant(0.5):
            value = _other(rng, right)
            explanation = _explain(rng, criterion, value)
            run.record("silent", verdict, _code(right))
        if right != 0 and rng.random() < 0.04:
            # A hedge in passing: words of a lower level in a right verdict's explanation (the
            # level check flags it, and the verdict is fine).
            explanation += " " + _hedge(rng, criterion)
        if rejudged:
            value, explanation = _second_run(run, criterion, verdict, right, value, explanation)
        verdicts.append({**verdict, "value": value, "explanation": explanation})
    return verdicts


def _second_run(
    run: _Run,
    criterion: dict[str, Any],
    verdict: dict[str, Any],
    right: float,
    value: float,
    explanation: str,
) -> tuple[float, str]:
    """The newer run's verdict on a rejudged criterion (it is the one that counts); returns
    the first run's (value, explanation), which a corrected slip changes."""
    rng = run.rng
    second = {**verdict, "run": "run-2"}
    if run.plant(2.0):
        # The newer run (it counts) errs where the first was right.
        wrong = _other(rng, right)
        run.record("runs", second, _code(right))
        run.second.append(
            {**second, "value": wrong, "explanation": _explain(rng, criterion, wrong)}
        )
    elif value == right and rng.random() < 0.03:
        # The first run's slip, corrected by the newer one: flagged, and fine.
        value = _other(rng, right)
        explanation = _explain(rng, criterion, value)
        run.second.append(
            {**second, "value": right, "explanation": _explain(rng, criterion, right)}
        )
    else:
        run.second.append(
            {**second, "value": right, "explanation": _explain(rng, criterion, right)}
        )
    return value, explanation


def _claim_verdicts(
    run: _Run,
    claims: list[dict[str, Any]],
    urls: dict[int, str],
    base: dict[str, str],
    quality: float,
) -> list[dict[str, Any]]:
    """Each claim's verdict and its cited page's, some wrong as planted (a dead page judged
    supporting, a contradiction between the two, or both silently wrong)."""
    rng = run.rng
    verdicts: list[dict[str, Any]] = []
    for claim in claims:
        ref = claim["citations"][0]
        dead = urls[ref] in run.dead
        roll = rng.random()
        truth = (
            "correct" if roll < quality else ("incorrect" if roll < quality + 0.2 else "unknown")
        )
        if dead:
            truth, page = "unknown", "unknown"
        elif truth == "correct":
            page = "support"
        elif truth == "incorrect":
            # Mostly the cited page says otherwise; sometimes it is an outdated page that
            # supports the claim: both verdicts right, and they disagree.
            page = "conflict" if rng.random() < 0.97 else "support"
        else:
            page = "unknown"
        claim_value, page_value = truth, page
        claim_v = {**base, "kind": "claim", "claim": claim["id"]}
        page_v = {**base, "kind": "consistency", "claim": claim["id"], "ref": ref}
        if dead and run.plant(3.0):
            page_value = "support"
            run.record("unreachable", page_v, page)
        elif truth in ("correct", "incorrect") and page != "unknown" and run.plant():
            if rng.random() < 0.5:
                claim_value = "incorrect" if truth == "correct" else "correct"
                run.record("contradiction", claim_v, truth)
            else:
                page_value = "conflict" if page == "support" else "support"
                run.record("contradiction", page_v, page)
        elif truth == "correct" and page == "support" and run.plant(0.25):
            claim_value, page_value = "incorrect", "conflict"
            run.record("silent", claim_v, truth)
            run.record("silent", page_v, page)
        verdicts.append({**claim_v, "value": claim_value, "explanation": "synthetic"})
        verdicts.append({**page_v, "value": page_value, "explanation": "synthetic"})
    return verdicts


def _code(value: object) -> str:
    if isinstance(value, float):
        return "0.5" if value == 0.5 else str(int(value))
    return str(value)
