"""Layering rules of DESIGN.md §2: reviewer/ and store/ never import textual or tui, and nothing
happens at import time."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

PROJECT = Path(__file__).resolve().parent.parent
FORBIDDEN = ("textual", "tui")


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def test_core_packages_never_import_the_ui() -> None:
    offenders = []
    for package in ("reviewer", "store"):
        for path in (PROJECT / package).rglob("*.py"):
            for name in imported_modules(path):
                if name.split(".")[0] in FORBIDDEN:
                    offenders.append(f"{path.relative_to(PROJECT)} imports {name}")
    assert offenders == []


def test_store_does_not_import_from_tui_at_runtime() -> None:
    # Import every core module in a fresh interpreter and check what got loaded.
    modules = sorted(
        ".".join(p.relative_to(PROJECT).with_suffix("").parts).removesuffix(".__init__")
        for package in ("reviewer", "store")
        for p in (PROJECT / package).rglob("*.py")
    )
    code = (
        "import importlib, sys\n"
        f"for m in {modules!r}: importlib.import_module(m)\n"
        "import reviewer.registry as r; r.frameworks()\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'tui'))\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=PROJECT, capture_output=True,
                         text=True, check=True)
    assert out.stdout.strip() == ""


def test_reviewer_does_not_import_store() -> None:
    offenders = [
        str(path.relative_to(PROJECT))
        for path in (PROJECT / "reviewer").rglob("*.py")
        if any(name.split(".")[0] == "store" for name in imported_modules(path))
    ]
    assert offenders == []


def test_textual_is_pinned_exactly() -> None:
    text = (PROJECT / "pyproject.toml").read_text(encoding="utf-8")
    assert '"textual==' in text


def _run_tool(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *args], cwd=PROJECT, capture_output=True,
                          text=True, check=False)


def test_the_tree_is_ruff_clean() -> None:
    result = _run_tool("ruff", "check", ".")
    assert result.returncode == 0, result.stdout + result.stderr


def test_every_package_is_mypy_strict_clean() -> None:
    """The style rule names reviewer/ and store/; tui/ is held to the same bar."""
    result = _run_tool("mypy", "reviewer", "store", "tui")
    assert result.returncode == 0, result.stdout + result.stderr
