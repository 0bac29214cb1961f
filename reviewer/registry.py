"""Which benchmarks Gavel knows: an explicit list, plus any installed ``gavel.benchmarks`` entry
point, loaded on first use.

Nothing is registered at import time: the first lookup imports each listed package and reads
its ``BENCHMARK``. A listed package that does not import is an error, never a silently missing
benchmark. Adding a benchmark is one folder under ``reviewer/frameworks/`` and one line in
:data:`BENCHMARKS` (or an entry point in another distribution's metadata).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from typing import TYPE_CHECKING

from reviewer.framework import Benchmark, FormatSpec, Framework, Reader, VerdictKind
from reviewer.scales import SCALES, Scale, ScaleError

if TYPE_CHECKING:
    from pathlib import Path

    from reviewer.models import Bundle

BENCHMARKS: tuple[str, ...] = (
    "reviewer.frameworks.dailyreport",
    "reviewer.frameworks.deepresearch_bench",
    "reviewer.frameworks.dr3_eval",
    "reviewer.frameworks.livedrbench",
    "reviewer.frameworks.dr_bench",
)
ENTRY_POINT_GROUP = "gavel.benchmarks"
"""Entry points in this group name a module (or object) whose ``BENCHMARK`` is a Benchmark."""

NATIVE = FormatSpec("native", "Gavel bundle folder or .jsonl file (docs/format.md)",
                    "reviewer.formats.native:read_bundle_path")


class RegistryError(RuntimeError):
    """A benchmark that cannot be loaded, or two that declare the same name."""


@dataclass
class _Registry:
    benchmarks: dict[str, Benchmark] = field(default_factory=dict)
    frameworks: dict[str, Framework] = field(default_factory=dict)
    kinds: dict[str, VerdictKind] = field(default_factory=dict)
    scales: dict[str, Scale] = field(default_factory=dict)
    formats: dict[str, FormatSpec] = field(default_factory=dict)
    loaded: bool = False


_REGISTRY = _Registry()


def _benchmark_of(source: str, obj: object) -> Benchmark:
    benchmark = getattr(obj, "BENCHMARK", obj)
    if not isinstance(benchmark, Benchmark):
        raise RegistryError(f"{source} has no BENCHMARK (a reviewer.framework.Benchmark)")
    return benchmark


def _sources() -> list[tuple[str, Benchmark]]:
    out: list[tuple[str, Benchmark]] = []
    for module_name in BENCHMARKS:
        try:
            module = importlib.import_module(module_name)
        except ImportError as exc:
            raise RegistryError(f"benchmark {module_name} does not import: {exc}") from exc
        out.append((module_name, _benchmark_of(module_name, module)))
    for point in entry_points(group=ENTRY_POINT_GROUP):
        try:
            loaded = point.load()
        except ImportError as exc:
            raise RegistryError(f"entry point {point.name} = {point.value} does not import: "
                                f"{exc}") from exc
        out.append((f"entry point {point.name}", _benchmark_of(point.value, loaded)))
    return out


def _load() -> _Registry:
    if _REGISTRY.loaded:
        return _REGISTRY
    fresh = _Registry(scales=dict(SCALES), formats={NATIVE.name: NATIVE})
    aliases: dict[str, FormatSpec] = {}
    for source, benchmark in _sources():
        if benchmark.name in fresh.benchmarks:
            raise RegistryError(f"benchmark {benchmark.name} is declared twice ({source})")
        fresh.benchmarks[benchmark.name] = benchmark
        for framework in benchmark.frameworks:
            if framework.name in fresh.frameworks:
                raise RegistryError(f"framework {framework.name} is declared twice ({source})")
            fresh.frameworks[framework.name] = framework
            for kind in framework.kinds.values():
                if kind.name in fresh.kinds:
                    raise RegistryError(f"verdict kind {kind.name} is declared twice ({source})")
                fresh.kinds[kind.name] = kind
                known = fresh.scales.get(kind.scale.name)
                if known is not None and known != kind.scale:
                    raise RegistryError(f"scale {kind.scale.name} is declared twice ({source})")
                fresh.scales[kind.scale.name] = kind.scale
        for spec in benchmark.formats:
            for name in (spec.name, *spec.aliases):
                if name in fresh.formats or name in aliases:
                    raise RegistryError(f"format {name} is declared twice ({source})")
                (fresh.formats if name == spec.name else aliases)[name] = spec
    fresh.formats.update(aliases)
    fresh.loaded = True
    _REGISTRY.__dict__.update(fresh.__dict__)
    return _REGISTRY


def reset() -> None:
    """Forget what was loaded (tests that install a benchmark through an entry point)."""
    _REGISTRY.__dict__.update(_Registry().__dict__)


def benchmarks() -> dict[str, Benchmark]:
    return dict(_load().benchmarks)


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


def kind_order(name: str) -> int:
    """A kind's place in display order: frameworks in registry order, kinds as declared."""
    for position, kind in enumerate(_load().kinds):
        if kind == name:
            return position
    return len(_load().kinds)


def scales() -> dict[str, Scale]:
    """Every scale: the shared ones and those of every benchmark's verdict kinds."""
    return dict(_load().scales)


def get_scale(name: str) -> Scale:
    try:
        return _load().scales[name]
    except KeyError as exc:
        raise ScaleError(f"unknown scale {name!r}") from exc


def formats() -> dict[str, FormatSpec]:
    """Format name (and alias) -> spec, native first."""
    return dict(_load().formats)


def format_descriptions() -> dict[str, str]:
    """Format name -> description, one entry per format (aliases named in the text)."""
    out: dict[str, str] = {}
    for name, spec in _load().formats.items():
        if name == spec.name:
            also = f" (also: {', '.join(spec.aliases)})" if spec.aliases else ""
            out[name] = spec.description + also
    return out


def format_reader(name: str) -> Reader:
    spec = _load().formats.get(name)
    if spec is None:
        known = ", ".join(format_descriptions())
        raise KeyError(f"unknown format {name!r} (known: {known})")
    module_name, _, attr = spec.reader.partition(":")
    reader: Reader = getattr(importlib.import_module(module_name), attr)
    return _located(reader)


def _located(reader: Reader) -> Reader:
    """The reader, with a record it builds that fails its model's checks reported as bad
    input in the path read rather than a traceback (readers name the line where they can; a
    check they did not repeat still names the file and the field)."""
    from pydantic import ValidationError

    from reviewer.errors import InputError

    def read(path: Path, suite_id: str | None = None) -> Bundle:
        try:
            return reader(path, suite_id)
        except ValidationError as exc:
            first = exc.errors(include_url=False)[0]
            loc = ".".join(str(part) for part in first["loc"])
            raise InputError(path, f"{exc.title}: {first['msg']}", field=loc or None) from None
        except RecursionError:
            raise InputError(path, "nested too deep to read") from None

    return read
