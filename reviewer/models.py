"""Pydantic models of a benchmark run: the records of the native bundle format.

These are the immutable inputs of DESIGN.md §3. Every model forbids unknown fields, so a typo in
a bundle is an error that names the field instead of a silently dropped value. Importers of
other formats (DeepResearch Bench, …) produce the same models, so the store has one way in.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    field_validator,
    model_validator,
    with_config,
)
from typing_extensions import TypedDict

from reviewer.keys import RUN_CLAIM_KEY as RUN_CLAIM_KEY
from reviewer.keys import TRACE_COUNTS as TRACE_COUNTS
from reviewer.keys import TRACE_KEY as TRACE_KEY
from reviewer.textsafety import hidden_characters

FORMAT_NAME: Literal["gavel-bundle"] = "gavel-bundle"
FORMAT_VERSION = 1

Importance = Literal["P0", "P1", "P2", "P2a"]


def id_problem(text: str) -> str | None:
    """Why ``text`` cannot be an external id (None when it can): what :data:`ExtId` refuses,
    for readers that build ids from other formats' fields and report errors with a line."""
    if not text or text[0].isspace():
        return "empty or starting with a space"
    if "/" in text:
        return "contains '/'"
    if len(text) > 200:
        return f"{len(text):,} characters (at most 200)"
    hidden = hidden_characters(text)
    if hidden:
        return f"hidden or control characters ({', '.join(hidden)})"
    return None


def _no_hidden_characters(value: str) -> str:
    if value.isascii() and value.isprintable():
        return value  # printable ASCII hides nothing (the common case, a hundred thousand ids)
    hidden = hidden_characters(value)
    if hidden:
        raise ValueError(f"an id with hidden or control characters ({', '.join(hidden)})")
    return value


ExtId = Annotated[
    str,
    Field(min_length=1, max_length=200, pattern=r"^[^\s/][^/]*$"),
    AfterValidator(_no_hidden_characters),
]
"""External ids are strings without '/', which joins them into portable keys, and without
characters that hide or reorder text: people type them on command lines and read them in
tables, where two ids must never look alike by an invisible difference."""

CONSTRAINT_TYPES = (
    "Content",
    "Scope",
    "Completeness",
    "Quantity",
    "Format",
    "Setting",
    "Attribute",
    "Action & Rule",
    "Function",
)


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, str_strip_whitespace=False)


class Suite(_Record):
    """The manifest (``suite.json``): one benchmark run collection."""

    format: Literal["gavel-bundle"] = FORMAT_NAME
    format_version: int = FORMAT_VERSION
    id: ExtId
    name: str
    frameworks: list[str] = Field(min_length=1)
    version: str = ""
    source: str = ""
    description: str = ""

    @field_validator("format_version")
    @classmethod
    def _known_version(cls, value: int) -> int:
        if value > FORMAT_VERSION:
            raise ValueError(f"format_version {value} is newer than this Gavel ({FORMAT_VERSION})")
        return value


class Subtask(_Record):
    """A cascade subtask with its user-perceived importance (P2a subtasks name their group)."""

    id: ExtId
    text: str = Field(min_length=1)
    importance: Importance
    group: str | None = None
    constraint_types: list[str] = Field(default_factory=list)

    @field_validator("importance", mode="before")
    @classmethod
    def _importance_spelling(cls, value: object) -> object:
        # The paper writes P2(a); accept that spelling and store the compact form.
        if isinstance(value, str) and value.replace(" ", "").upper() in {"P2(A)", "P2A"}:
            return "P2a"
        return value

    @model_validator(mode="after")
    def _group_matches_importance(self) -> Subtask:
        if self.importance == "P2a" and not self.group:
            raise ValueError("a P2a subtask needs a 'group'")
        if self.importance != "P2a" and self.group is not None:
            raise ValueError(f"only P2a subtasks have a 'group' (this one is {self.importance})")
        unknown = [c for c in self.constraint_types if c not in CONSTRAINT_TYPES]
        if unknown:
            raise ValueError(f"unknown constraint type(s) {unknown}; allowed: {CONSTRAINT_TYPES}")
        return self


class Criterion(_Record):
    """A rubric item: cascade ins/fac/rat, a RACE criterion, a checklist item, a rubric point."""

    id: ExtId
    subtask: str | None = None
    framework: str
    dimension: str
    text: str = Field(min_length=1)
    explanation: str = ""
    weight: float | None = None
    scale: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)


class Task(_Record):
    id: ExtId
    prompt: str = Field(min_length=1)
    language: str = "en"
    domain: str = ""
    category: str = ""
    task_type: str = ""
    metadata: dict[str, Any] = Field(default_factory=dict)
    subtasks: list[Subtask] = Field(default_factory=list)
    criteria: list[Criterion] = Field(default_factory=list)

    @model_validator(mode="after")
    def _references_resolve(self) -> Task:
        ids = [s.id for s in self.subtasks]
        if len(set(ids)) != len(ids):
            raise ValueError("subtask ids repeat within the task")
        crit_ids = [c.id for c in self.criteria]
        if len(set(crit_ids)) != len(crit_ids):
            raise ValueError("criterion ids repeat within the task")
        known = set(ids)
        for criterion in self.criteria:
            if criterion.subtask is not None and criterion.subtask not in known:
                raise ValueError(
                    f"criterion {criterion.id} names subtask {criterion.subtask!r}, "
                    "which the task does not have"
                )
        return self


class System(_Record):
    """An agent under test (or, with ``is_reference``, the reference a relative score uses)."""

    id: ExtId
    name: str = ""
    family: str = ""
    version: str = ""
    collected_at: str = ""
    is_reference: bool = False


class Reference(_Record):
    """One entry of a report's reference list."""

    index: int = Field(ge=0)
    title: str = ""
    url: str | None = None


MAX_CITATION = 1_000_000
"""The largest reference index a claim may cite: far past any report's reference list, and
well inside what every store and export holds."""


class Claim(_Record):
    """A factual claim extracted from a report.

    ``fact`` is verbatim report text; ``extract`` the context-completed statement a judge checks.
    ``span`` locates ``fact`` in the report (computed at import when absent; None after import
    means "not located"). ``citations`` are reference indices (parsed from the text when absent).
    ``url`` is set when a claim cites a page directly rather than by index (FACT statements).
    """

    id: ExtId
    subtask: str | None = None
    criterion: str | None = None
    fact: str = Field(min_length=1)
    extract: str = ""
    span: tuple[int, int] | None = None
    citations: list[int] | None = None
    url: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)

    @field_validator("span")
    @classmethod
    def _ordered(cls, value: tuple[int, int] | None) -> tuple[int, int] | None:
        if value is not None and not 0 <= value[0] <= value[1]:
            raise ValueError("span must be [start, end] with 0 <= start <= end")
        return value

    @field_validator("citations")
    @classmethod
    def _reference_indices(cls, value: list[int] | None) -> list[int] | None:
        for index in value or ():
            if not 0 <= index <= MAX_CITATION:
                raise ValueError(
                    f"a citation is a reference index from 0 to {MAX_CITATION:,} (got {index})"
                )
        return value


class Report(_Record):
    """A system's report on a task, as submitted, with its claims."""

    id: ExtId
    task: str
    system: str
    markdown: str
    cleaned: str | None = None
    references: list[Reference] | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    claims: list[Claim] = Field(default_factory=list)

    @model_validator(mode="after")
    def _unique_claims(self) -> Report:
        ids = [c.id for c in self.claims]
        if len(set(ids)) != len(ids):
            raise ValueError("claim ids repeat within the report")
        return self


class Source(_Record):
    """A fetched page that a report cites. ``error`` records a failed fetch as a fact."""

    url: str = Field(min_length=1)
    title: str = ""
    fetched_at: str = ""
    text: str = ""
    sha256: str | None = None
    error: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    """Benchmark-specific facts about the page (e.g. DR3-Eval's supportive/distractor/noise)."""


class JudgeRun(_Record):
    id: ExtId
    model: str = ""
    prompt_version: str = ""
    params: dict[str, Any] = Field(default_factory=dict)
    created_at: str = ""
    description: str = ""


class Judgment(_Record):
    """One automated verdict.

    The subject is named by whichever of ``criterion``, ``claim`` (+ ``ref`` for a claim ×
    reference pair) and ``key`` (a free subject such as a RACE dimension) the kind needs.
    ``value`` is None when the judge failed on the item (``error`` says why).
    """

    run: str
    report: str
    kind: str
    criterion: str | None = None
    claim: str | None = None
    ref: int | None = None
    key: str | None = None
    value: str | float | int | bool | None = None
    explanation: str = ""
    evidence: str = ""
    raw: str = ""
    error: str | None = None
    source_sha256: str | None = None

    def subject(self) -> str:
        return subject_of(self)


@with_config(ConfigDict(extra="forbid"))
class JudgmentRecord(TypedDict):
    """A :class:`Judgment` as a large import reads it: the same fields validated the same way
    (with the same defaults), into a plain dict. A run holds a quarter of a million verdicts,
    each read once and turned into a row: a model each was an object and its bookkeeping
    built to be thrown away. tests/test_native_format.py holds the two equal."""

    run: str
    report: str
    kind: str
    criterion: Annotated[str | None, Field(default=None)]
    claim: Annotated[str | None, Field(default=None)]
    ref: Annotated[int | None, Field(default=None)]
    key: Annotated[str | None, Field(default=None)]
    value: Annotated[str | float | int | bool | None, Field(default=None)]
    explanation: Annotated[str, Field(default="")]
    evidence: Annotated[str, Field(default="")]
    raw: Annotated[str, Field(default="")]
    error: Annotated[str | None, Field(default=None)]
    source_sha256: Annotated[str | None, Field(default=None)]


def subject_of(judgment: Judgment) -> str:
    """A stable text naming a judgment's subject within (run, report, kind).

    Part of the portable key review events use, so its spelling must never change.
    """
    return subject_key(judgment.criterion, judgment.claim, judgment.ref, judgment.key)


def subject_key(criterion: str | None, claim: str | None, ref: int | None, key: str | None) -> str:
    """:func:`subject_of` from the four fields that name a subject."""
    if ref is None and key is None:
        # The common shapes first: a criterion verdict, a claim verdict.
        if claim is None:
            return "-" if criterion is None else "c=" + criterion
        if criterion is None:
            return "k=" + claim
    parts = []
    if criterion is not None:
        parts.append("c=" + criterion)
    if claim is not None:
        parts.append("k=" + claim)
    if ref is not None:
        parts.append(f"r={ref}")
    if key is not None:
        parts.append("x=" + key)
    return ";".join(parts)


RECORD_FILES: dict[str, type[_Record]] = {
    "tasks.jsonl": Task,
    "systems.jsonl": System,
    "reports.jsonl": Report,
    "sources.jsonl": Source,
    "runs.jsonl": JudgeRun,
    "judgments.jsonl": Judgment,
}
"""The bundle's record files, in import order (later files refer to earlier ones)."""

RECORD_TYPES: dict[str, type[_Record]] = {
    "suite": Suite,
    "task": Task,
    "system": System,
    "report": Report,
    "source": Source,
    "run": JudgeRun,
    "judgment": Judgment,
}
"""Record type tags of the single-file form (one JSONL file, each line tagged ``"type"``)."""


class Bundle(BaseModel):
    """A whole parsed bundle, in memory (what importers hand to the store)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    suite: Suite
    tasks: list[Task] = []
    systems: list[System] = []
    reports: list[Report] = []
    sources: list[Source] = []
    runs: list[JudgeRun] = []
    judgments: list[Judgment] = []
    locations: dict[tuple[str, int], tuple[str, int | None]] = {}
    """(record type, index) -> (file, line), so late cross-record errors can still name a line."""
