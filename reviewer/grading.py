"""What a benchmark tells the reviewer about grading, and the plain data its rules read.

Judge errors are found faster where the judge contradicts itself or the benchmark's own rules:
a claim judged correct whose every cited page conflicts with it, a rubric value whose
explanation describes another level, a number graded wrong although it is within the
benchmark's tolerance. Which verdicts can contradict which, where a rubric's level texts live,
and what a benchmark's grading rules are is knowledge of that benchmark, so each framework
declares it here as a :class:`Grading`; the store and the workstation only run what is
declared (``reviewer.suspicion``) and show the sections a framework returns.

Everything here is plain data built by the store from its rows, so rules stay pure functions
that tests can call with a handful of objects.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple


class Verdict(NamedTuple):
    """One judge verdict as a rule sees it (a judgment row). A NamedTuple: an import builds a
    quarter of a million of them."""

    id: int
    subject: int
    kind: str
    value: str | None
    explanation: str = ""
    evidence: str = ""
    run: str = ""
    criterion: str | None = None
    claim: str | None = None
    ref: int | None = None
    key: str | None = None
    model: str = ""
    current: bool = True
    active: bool = True
    """False for a candidate run's verdict (it does not count until activated)."""


@dataclass(frozen=True, slots=True)
class Criterion:
    ext: str
    dimension: str
    text: str
    explanation: str = ""
    metadata: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Claim:
    ext: str
    fact: str
    extract: str = ""
    citations: tuple[int, ...] = ()
    url: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Page:
    """A stored source page; ``error`` set when it could not be fetched."""

    url: str
    title: str = ""
    text: str = ""
    error: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)

    @property
    def unreachable(self) -> bool:
        return self.error is not None and not self.text.strip()


@dataclass(slots=True)
class Evidence:
    """Everything about one report that a suspicion rule may read."""

    report: str
    text: str = ""
    task_metadata: Mapping[str, Any] = field(default_factory=dict)
    criteria: dict[str, Criterion] = field(default_factory=dict)
    claims: dict[str, Claim] = field(default_factory=dict)
    references: dict[int, str] = field(default_factory=dict)
    """Reference index -> URL."""
    pages: dict[str, Page] = field(default_factory=dict)
    """URL -> stored page, of the pages cited for the report's task (by any report on it: a
    reference or a claim's URL): the sources a judge checking this task's claims could have
    been shown. "In none of the stored pages" means these."""
    verdicts: list[Verdict] = field(default_factory=list)
    """The verdicts that count (current)."""
    others: list[Verdict] = field(default_factory=list)
    """Other runs' verdicts on the same subjects (candidates included)."""

    def page_of(self, ref: int | None) -> Page | None:
        url = self.references.get(ref) if ref is not None else None
        return self.pages.get(url) if url else None

    def cited_pages(self, claim: Claim) -> list[tuple[int | None, Page | None]]:
        out: list[tuple[int | None, Page | None]] = [(i, self.page_of(i)) for i in claim.citations]
        if claim.url and claim.url not in self.references.values():
            out.append((None, self.pages.get(claim.url)))
        return out


@dataclass(frozen=True, slots=True)
class Flag:
    """Why one subject deserves a look: ``weight`` in (0, 1] says how likely the judge is
    wrong there (the queue's suspicion order sums them per report)."""

    subject: int
    rule: str
    weight: float
    reason: str


Rule = Callable[[Evidence], Iterable[Flag]]


@dataclass(frozen=True, slots=True)
class Entailment:
    """Verdicts on the parts of an item that settle the verdict on the whole.

    When every ``part`` verdict on a claim says the same thing, ``implied`` names the ``whole``
    verdict it requires (every cited page supports the claim: the claim is correct). A whole
    that says otherwise, or parts that say otherwise than the whole, contradict each other:
    one of them is wrong.
    """

    whole: str
    part: str
    implied: Mapping[str, str]


@dataclass(frozen=True, slots=True)
class ContextItem:
    """What the grading context of one selected verdict is computed from."""

    kind: str
    value: str | None
    key: str | None = None
    criterion: Criterion | None = None
    claim: Claim | None = None
    task_metadata: Mapping[str, Any] = field(default_factory=dict)
    criteria: Sequence[Criterion] = ()
    """Every criterion of the task (a benchmark may keep lists there, e.g. trusted sources)."""
    url: str | None = None


@dataclass(frozen=True, slots=True)
class SubtaskCriterion:
    """A criterion every subtask is expected to have: a subtask without one of ``dimension``
    (for the framework) is imported with a warning that says what its score becomes
    (``consequence``)."""

    dimension: str
    consequence: str


Section = tuple[str, str]
"""(title, body) of one grading-context section in the detail pane, plain text."""


@dataclass(frozen=True, slots=True)
class Grading:
    """A framework's grading knowledge (see the module docstring).

    ``levels`` reads a criterion's level texts (scale code -> description) for the verdict
    kinds in ``level_kinds``; ``unreachable`` names, per verdict kind, the only value that can
    be right when the page judged is unreachable; ``rules`` are the framework's own checks and
    ``context`` the sections shown beside a selected verdict.
    """

    levels: Callable[[Criterion], Mapping[str, str]] | None = None
    level_kinds: frozenset[str] = frozenset()
    entailments: tuple[Entailment, ...] = ()
    unreachable: Mapping[str, str] = field(default_factory=dict)
    evidence_kinds: frozenset[str] = frozenset()
    """Kinds whose quoted evidence must come from a stored page of the report."""
    rules: tuple[Rule, ...] = ()
    reads_text: bool = False
    """The rules read the report's text (loaded only for frameworks that say so)."""
    context: Callable[[ContextItem], list[Section]] | None = None
    method: str = ""
    """One paragraph for the help and README: what the framework's own rules look at."""
    subtask_criterion: SubtaskCriterion | None = None
    """What a task's subtasks each need to be scored as the benchmark means (checked at
    import)."""
    marks: Callable[[str, Mapping[str, Any]], list[tuple[int, int]]] | None = None
    """(report text, task metadata) -> the (start, end) places the report screen marks in the
    text whatever is selected: what the benchmark wants a reviewer to see at a glance (a
    reference the task blocks, where the report names it)."""
