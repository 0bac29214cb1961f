"""The framework registry: which scoring modules exist and which verdict kinds each judges.

A framework is a module with a ``FRAMEWORK`` object satisfying :class:`Framework`. Adding one
means adding a module and a line to ``_MODULES``; no other framework changes.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol

from reviewer.scales import Scale
from reviewer.scoring.inputs import ReportInput

Subject = Literal["criterion", "claim", "claim_ref", "key"]
Variant = Literal["judge", "adjudicated"]
VARIANTS: tuple[Variant, ...] = ("judge", "adjudicated")

ReportScores = dict[str, float | None]
"""Metric name -> value for one report. Names starting with '_' are parts kept for aggregation."""


@dataclass(frozen=True, slots=True)
class VerdictKind:
    name: str
    framework: str
    scale: Scale
    subject: Subject
    label: str
    description: str = ""


@dataclass(frozen=True, slots=True)
class Metric:
    """A metric a framework reports; ``headline`` metrics are the queue's columns."""

    name: str
    label: str
    headline: bool = False
    digits: int = 3
    description: str = ""


@dataclass(frozen=True, slots=True)
class Aggregate:
    value: float | None
    n: int


@dataclass(frozen=True, slots=True)
class OptionSpec:
    """A named, switchable reading of an ambiguity in a paper ([CHOICE] in the specs)."""

    name: str
    default: str
    choices: tuple[str, ...]
    description: str


class Framework(Protocol):
    name: str
    label: str
    kinds: Mapping[str, VerdictKind]
    metrics: Sequence[Metric]
    options: Sequence[OptionSpec]

    def score_report(
        self, report: ReportInput, variant: Variant, options: Mapping[str, str]
    ) -> ReportScores: ...

    def aggregate(
        self, reports: Sequence[ReportScores], options: Mapping[str, str]
    ) -> dict[str, Aggregate]: ...


_MODULES: tuple[str, ...] = (
    "reviewer.scoring.cascade",
    "reviewer.scoring.race",
    "reviewer.scoring.fact",
    "reviewer.scoring.dr3",
    "reviewer.scoring.claims_f1",
    "reviewer.scoring.drbench",
)


@dataclass
class _Registry:
    frameworks: dict[str, Framework] = field(default_factory=dict)
    kinds: dict[str, VerdictKind] = field(default_factory=dict)
    loaded: bool = False


_REGISTRY = _Registry()


def _load() -> _Registry:
    if not _REGISTRY.loaded:
        for module_name in _MODULES:
            try:
                module = importlib.import_module(module_name)
            except ModuleNotFoundError as exc:
                if exc.name == module_name:
                    continue  # a framework still being written; the others stand alone
                raise
            framework: Framework = module.FRAMEWORK
            _REGISTRY.frameworks[framework.name] = framework
            for kind in framework.kinds.values():
                if kind.name in _REGISTRY.kinds:
                    raise ValueError(f"verdict kind {kind.name} is declared twice")
                _REGISTRY.kinds[kind.name] = kind
        _REGISTRY.loaded = True
    return _REGISTRY


def frameworks() -> dict[str, Framework]:
    return dict(_load().frameworks)


def get_framework(name: str) -> Framework:
    registry = _load()
    try:
        return registry.frameworks[name]
    except KeyError as exc:
        known = ", ".join(sorted(registry.frameworks))
        raise KeyError(f"unknown framework {name!r} (known: {known})") from exc


def verdict_kinds() -> dict[str, VerdictKind]:
    return dict(_load().kinds)


def get_kind(name: str) -> VerdictKind | None:
    return _load().kinds.get(name)


def resolve_options(framework: Framework, overrides: Mapping[str, str]) -> dict[str, str]:
    """Defaults overlaid with overrides; an unknown option or value is an error, never ignored."""
    specs = {spec.name: spec for spec in framework.options}
    resolved = {spec.name: spec.default for spec in framework.options}
    for name, value in overrides.items():
        spec = specs.get(name)
        if spec is None:
            raise ValueError(f"{framework.name} has no option {name!r} (has: {', '.join(specs)})")
        if value not in spec.choices:
            raise ValueError(f"option {framework.name}.{name} must be one of {spec.choices}")
        resolved[name] = value
    return resolved
