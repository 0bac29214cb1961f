"""Layering rules of DESIGN.md §2 and the import-time rule: the import-linter contracts in
pyproject.toml hold (the domain never imports the store or an interface, the store never an
interface, each benchmark stands alone, no import circles, the app never imports the command
line), and importing any module of the tree does nothing (no registry filled, no file, database,
socket or process opened)."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

PROJECT = Path(__file__).resolve().parent.parent
PACKAGES = ("reviewer", "store", "tui")


def modules() -> list[str]:
    """Every module of the tree but ``__main__`` ones (running is what they are for)."""
    return sorted(
        ".".join(p.relative_to(PROJECT).with_suffix("").parts).removesuffix(".__init__")
        for package in PACKAGES
        for p in (PROJECT / package).rglob("*.py")
        if p.name != "__main__.py"
    )


def test_the_import_contracts_are_kept() -> None:
    lint = Path(sys.executable).with_name("lint-imports")
    result = subprocess.run(
        [str(lint), "--no-cache"], cwd=PROJECT, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert "0 broken" in result.stdout or " broken" not in result.stdout


IMPORT_ALL = """
import importlib, sys
touched = []
prefixes = tuple({sys.prefix, sys.base_prefix, sys.exec_prefix})

def hook(event, args):
    if event == "open":
        path = str(args[0])
        # Libraries scan installed distributions' metadata for plugins (pydantic does, at its
        # first model): that is theirs, not ours.
        metadata = ".dist-info/" in path or ".egg-info/" in path
        if not (path.startswith(prefixes) or path.endswith((".py", ".pyc")) or metadata):
            touched.append(f"open {path}")
    elif event in ("sqlite3.connect", "socket.connect", "subprocess.Popen", "os.system",
                   "os.exec", "os.posix_spawn"):
        touched.append(f"{event} {args[:1]}")

sys.addaudithook(hook)
for name in sys.argv[1:]:
    importlib.import_module(name)
import reviewer.registry as registry
print("registry loaded:", registry._REGISTRY.loaded)
for line in touched:
    print(line)
"""


def test_importing_any_module_does_nothing() -> None:
    out = subprocess.run(
        [sys.executable, "-c", IMPORT_ALL, *modules()],
        cwd=PROJECT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    assert out == ["registry loaded: False"]


def test_the_import_test_would_see_a_module_that_opens_a_file(tmp_path: Path) -> None:
    module = tmp_path / "noisy_module.py"
    module.write_text(f"open({str(tmp_path / 'x.txt')!r}, 'w').close()\n", encoding="utf-8")
    out = subprocess.run(
        [sys.executable, "-c", IMPORT_ALL, "noisy_module"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "open " in out and "x.txt" in out


def _contract(name: str) -> dict[str, Any]:
    config = tomllib.loads((PROJECT / "pyproject.toml").read_text(encoding="utf-8"))
    contracts: list[dict[str, Any]] = config["tool"]["importlinter"]["contracts"]
    return next(c for c in contracts if c["name"] == name)


def test_every_listed_benchmark_has_its_independence_line() -> None:
    """A benchmark added to the registry but not to the contract could import another one
    unseen: the contract would still say "kept"."""
    from reviewer.registry import BENCHMARKS

    independent = set(_contract("each benchmark stands alone")["modules"])
    assert set(BENCHMARKS) <= independent, sorted(set(BENCHMARKS) - independent)


def test_every_shared_domain_module_is_kept_out_of_the_benchmarks() -> None:
    """Every module of reviewer/ but the benchmarks' folder is named in the contract that keeps
    the shared domain from reaching into a benchmark (a new module would otherwise escape it)."""
    listed = set(_contract("the shared domain does not reach into a benchmark")["source_modules"])
    children = {
        f"reviewer.{p.stem}" if p.is_file() else f"reviewer.{p.name}"
        for p in (PROJECT / "reviewer").iterdir()
        if (p.suffix == ".py" and p.stem != "__init__") or (p / "__init__.py").is_file()
    }
    assert children - {"reviewer.frameworks"} == listed


def test_textual_is_pinned_exactly() -> None:
    text = (PROJECT / "pyproject.toml").read_text(encoding="utf-8")
    assert '"textual==' in text
