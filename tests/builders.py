"""Small bundles built in code, so a test states exactly the data it scores."""

from __future__ import annotations

from typing import Any

from reviewer.inputs import ClaimIn, CriterionIn, ReportInput, SubtaskIn, VerdictIn
from reviewer.models import (
    Bundle,
    Claim,
    Criterion,
    JudgeRun,
    Judgment,
    Report,
    Subtask,
    Suite,
    System,
    Task,
)

TINY_MARKDOWN = (
    "# Bike share in 2025\n\n"
    "Riders took 4.2 million trips in 2025 [1]. The network has 310 stations [2].\n"
    "E-bikes made up 40% of the fleet [2][3]. Growth came from the new e-bikes.\n\n"
    "## References\n"
    "[1] Annual report_City Transit https://transit.example/2025\n"
    "[2] Network map_City Transit https://transit.example/map\n"
    "[3] E-bike rollout_Daily Wheel https://wheel.example/ebikes\n"
)


def tiny_bundle(suite_id: str = "tiny") -> Bundle:
    """Two systems answering one four-subtask task; every verdict kind appears."""
    task = Task(
        id="t1",
        prompt="How did bike-share ridership change in 2025, and why?",
        domain="Transport",
        task_type="retrieval",
        subtasks=[
            Subtask(id="s1", text="Ridership figure", importance="P0"),
            Subtask(id="s2", text="Driver of change", importance="P1"),
            Subtask(id="s3", text="Station count", importance="P2a", group="1"),
            Subtask(id="s4", text="E-bike share", importance="P2a", group="1"),
        ],
        criteria=[
            Criterion(id="s1-ins", subtask="s1", framework="cascade", dimension="ins", text="a"),
            Criterion(id="s1-fac", subtask="s1", framework="cascade", dimension="fac", text="b"),
            Criterion(id="s2-ins", subtask="s2", framework="cascade", dimension="ins", text="c"),
            Criterion(id="s2-rat", subtask="s2", framework="cascade", dimension="rat", text="d"),
            Criterion(id="s3-ins", subtask="s3", framework="cascade", dimension="ins", text="e"),
            Criterion(id="s3-fac", subtask="s3", framework="cascade", dimension="fac", text="f"),
            Criterion(id="s4-ins", subtask="s4", framework="cascade", dimension="ins", text="g"),
        ],
    )
    claims = [
        Claim(id="c1", subtask="s1", fact="Riders took 4.2 million trips in 2025"),
        Claim(id="c2", subtask="s3", fact="The network has 310 stations"),
        Claim(id="c3", subtask="s3", fact="Growth came from the new e-bikes"),
    ]
    reports = [
        Report(id=f"t1-{system}", task="t1", system=system, markdown=TINY_MARKDOWN, claims=claims)
        for system in ("alpha", "beta")
    ]
    judgments: list[Judgment] = []
    values: dict[str, dict[str, Any]] = {
        "alpha": {
            "s1-ins": 1,
            "s2-ins": 1,
            "s2-rat": 1,
            "s3-ins": 1,
            "s4-ins": 1,
            "c1": "correct",
            "c2": "correct",
            "c3": "correct",
        },
        "beta": {
            "s1-ins": 1,
            "s2-ins": 0.5,
            "s2-rat": 0,
            "s3-ins": 1,
            "s4-ins": 0,
            "c1": "incorrect",
            "c2": "correct",
            "c3": "unknown",
        },
    }
    for system, vals in values.items():
        report = f"t1-{system}"
        for key, value in vals.items():
            if key.startswith("c"):
                judgments.append(
                    Judgment(
                        run="r1",
                        report=report,
                        kind="claim",
                        claim=key,
                        value=value,
                        explanation=f"judge on {key}",
                    )
                )
            else:
                kind = key.split("-")[1]
                judgments.append(
                    Judgment(
                        run="r1",
                        report=report,
                        kind=kind,
                        criterion=key,
                        value=value,
                        explanation=f"judge on {key}",
                    )
                )
        judgments.append(
            Judgment(
                run="r1",
                report=report,
                kind="consistency",
                claim="c2",
                ref=2,
                value="support",
                evidence="310 stations",
            )
        )
    return Bundle(
        suite=Suite(id=suite_id, name="Tiny", frameworks=["cascade"]),
        tasks=[task],
        systems=[System(id="alpha"), System(id="beta")],
        reports=reports,
        runs=[JudgeRun(id="r1", model="m", created_at="2026-11-01T00:00:00Z")],
        judgments=judgments,
    )


def cascade_input(
    subtasks: list[tuple[str, str | None, float, float | tuple[int, int] | None, float | None]],
) -> ReportInput:
    """A ReportInput from (importance, group, ins, fac, rat) per subtask.

    fac is realised as claims: a fac of 0.75 becomes 3 correct of 4 claims (denominators up to
    20 are found exactly), a pair (3, 30) 3 correct of 30; None means the subtask has no such
    rubric.
    """
    report = ReportInput(report_id=1, task_id=1, system_id=1)
    next_id = iter(range(1, 10_000))
    for importance, group, ins, fac, rat in subtasks:
        sid = next(next_id)
        report.subtasks.append(SubtaskIn(sid, importance, group))
        cid = next(next_id)
        report.criteria.append(CriterionIn(cid, sid, "ins", None))
        report.verdicts.append(_verdict(next(next_id), "ins", sid, cid, None, _code(ins)))
        if rat is not None:
            cid = next(next_id)
            report.criteria.append(CriterionIn(cid, sid, "rat", None))
            report.verdicts.append(_verdict(next(next_id), "rat", sid, cid, None, _code(rat)))
        if fac is not None:
            report.criteria.append(CriterionIn(next(next_id), sid, "fac", None))
            correct, total = fac if isinstance(fac, tuple) else _fraction(fac)
            for i in range(total):
                kid = next(next_id)
                report.claims.append(ClaimIn(kid, sid, None, (1,)))
                value = "correct" if i < correct else "incorrect"
                report.verdicts.append(_verdict(next(next_id), "claim", sid, None, kid, value))
    return report


def _verdict(
    vid: int, kind: str, subtask: int, criterion: int | None, claim: int | None, value: str
) -> VerdictIn:
    return VerdictIn(vid, 1, kind, subtask, criterion, claim, None, None, value, value, None)


def _code(value: float) -> str:
    return {0.0: "0", 0.5: "0.5", 1.0: "1"}[value]


def _fraction(value: float) -> tuple[int, int]:
    if value == 0:
        return 0, 1
    for total in range(1, 21):
        correct = round(value * total)
        if abs(correct / total - value) < 1e-12:
            return correct, total
    raise ValueError(f"{value} is not a fraction with a small denominator")
