"""Which benchmarks Gavel knows: an explicit list, plus any installed ``gavel.benchmarks`` entry
point, loaded on first use.

Nothing is registered at import time: the first lookup imports each listed package and reads
its ``BENCHMARK``. A listed package that does not import is an error, never a silently missing
benchmark. Adding a benchmark is one folder under ``reviewer/frameworks/`` and one line in
:data:`BENCHMARKS` (or an entry point in another distribution's metadata).
"""

from __future__ import annotations

import importlib
import os
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

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
    "reviewer.frameworks.deepresearch_bench_2",
)
HOMES: dict[str, str] = {
    "cascade": "reviewer.frameworks.dailyreport",
    "race": "reviewer.frameworks.deepresearch_bench",
    "fact": "reviewer.frameworks.deepresearch_bench",
    "dr3": "reviewer.frameworks.dr3_eval",
    "claims_f1": "reviewer.frameworks.livedrbench",
    "drbench": "reviewer.frameworks.dr_bench",
    "drb2": "reviewer.frameworks.deepresearch_bench_2",
}
"""Framework name -> the listed benchmark that declares it: a hint that lets a lookup by name
(:func:`find_framework`) import that one benchmark instead of all of them, which is most of the
start-up of ``gavel decide``. Optional (a name not here loads everything) and checked against
the full registry by tests/test_cli_startup.py. A hinted lookup does not look for a second
declaration of the name elsewhere; the full load, which every listing does, refuses one."""

ENTRY_POINT_GROUP = "gavel.benchmarks"
"""Entry points in this group name a module (or object) whose ``BENCHMARK`` is a Benchmark."""

NATIVE = FormatSpec(
    "native",
    "Gavel bundle folder or .jsonl file (docs/format.md)",
    "reviewer.formats.native:read_bundle_path",
)


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
_ONE: dict[str, Benchmark] = {}
"""Benchmarks imported alone by a hinted lookup, by module (before or without a full load)."""


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
    for name, value in entry_points(ENTRY_POINT_GROUP):
        try:
            loaded = _load_object(value)
        except (ImportError, AttributeError) as exc:
            raise RegistryError(f"entry point {name} = {value} does not import: {exc}") from exc
        out.append((f"entry point {name}", _benchmark_of(value, loaded)))
    return out


_SECTION = re.compile(r"^\[\s*(.+?)\s*\]$")


def entry_points(group: str) -> list[tuple[str, str]]:
    """``(name, "module:attr")`` of every installed entry point in ``group``: what
    ``importlib.metadata.entry_points(group=…)`` finds for distributions on ``sys.path``
    (the first distribution of a name wins), read straight from their ``entry_points.txt``.

    ``importlib.metadata`` itself would put its own imports (email parsing, zip files) on
    every command-line call, for a lookup that is a directory listing and, at most, a few
    small reads.
    """
    seen: set[str] = set()
    found: list[tuple[str, str]] = []
    for entry in sys.path:
        try:
            names = sorted(os.listdir(entry or "."))
        except OSError:
            continue
        for folder in names:
            stem, dot, suffix = folder.rpartition(".")
            if not dot or suffix not in ("dist-info", "egg-info"):
                continue
            distribution = re.sub(r"[-_.]+", "_", stem.split("-")[0]).lower()
            if distribution in seen:
                continue
            seen.add(distribution)
            try:
                with open(
                    os.path.join(entry or ".", folder, "entry_points.txt"), encoding="utf-8"
                ) as handle:
                    text = handle.read()
            except OSError:
                continue
            found.extend(_group_lines(text, group))
    return found


def _group_lines(text: str, group: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    section = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        header = _SECTION.match(line)
        if header:
            section = header.group(1)
        elif section == group and "=" in line:
            name, _, value = line.partition("=")
            out.append((name.strip(), value.strip()))
    return out


def _load_object(value: str) -> object:
    """What an entry point's ``module:attr.attr [extras]`` names."""
    module_name, _, attrs = value.split("[")[0].strip().partition(":")
    obj: object = importlib.import_module(module_name.strip())
    for attr in filter(None, attrs.strip().split(".")):
        obj = getattr(obj, attr)
    return obj


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
            _add_framework(fresh, framework, source)
        _add_formats(fresh, aliases, benchmark, source)
    fresh.formats.update(aliases)
    fresh.loaded = True
    _REGISTRY.__dict__.update(fresh.__dict__)
    return _REGISTRY


def _add_framework(fresh: _Registry, framework: Framework, source: str) -> None:
    """A framework with its verdict kinds and their scales; any name declared twice is an
    error (a scale only when the two differ)."""
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


def _add_formats(
    fresh: _Registry, aliases: dict[str, FormatSpec], benchmark: Benchmark, source: str
) -> None:
    """A benchmark's formats by name; aliases are kept apart until every name is known."""
    for spec in benchmark.formats:
        for name in (spec.name, *spec.aliases):
            if name in fresh.formats or name in aliases:
                raise RegistryError(f"format {name} is declared twice ({source})")
            (fresh.formats if name == spec.name else aliases)[name] = spec


def reset() -> None:
    """Forget what was loaded (tests that install a benchmark through an entry point)."""
    _REGISTRY.__dict__.update(_Registry().__dict__)
    _ONE.clear()


def _hinted(framework: str) -> Framework | None:
    """The framework from its home benchmark alone, when :data:`HOMES` names one."""
    module_name = HOMES.get(framework)
    if _REGISTRY.loaded or module_name is None or module_name not in BENCHMARKS:
        return None
    benchmark = _ONE.get(module_name)
    if benchmark is None:
        try:
            module = importlib.import_module(module_name)
        except ImportError as exc:
            raise RegistryError(f"benchmark {module_name} does not import: {exc}") from exc
        benchmark = _ONE[module_name] = _benchmark_of(module_name, module)
    return next((fw for fw in benchmark.frameworks if fw.name == framework), None)


def find_framework(name: str) -> Framework | None:
    """The framework called ``name``, or None; imports only its benchmark when it can."""
    return _hinted(name) or _load().frameworks.get(name)


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


def get_kind(name: str, frameworks: Iterable[str] = ()) -> VerdictKind | None:
    """The verdict kind called ``name``; when one of ``frameworks`` (those of the judgment's
    suite) declares it, only that framework's benchmark is imported (see :data:`HOMES`)."""
    for framework in frameworks:
        fw = _hinted(framework)
        if fw is not None and name in fw.kinds:
            return fw.kinds[name]
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

    def read(path: Path, suite_id: str | None = None, **options: Any) -> Bundle:
        try:
            return reader(path, suite_id, **options)
        except ValidationError as exc:
            first = exc.errors(include_url=False)[0]
            loc = ".".join(str(part) for part in first["loc"])
            raise InputError(path, f"{exc.title}: {first['msg']}", field=loc or None) from None
        except RecursionError:
            raise InputError(path, "nested too deep to read") from None

    return read
