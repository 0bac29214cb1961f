"""Importers and exporters: each reads the files it is given into the same bundle models."""

from __future__ import annotations

import hashlib
from pathlib import Path


def hash_path(path: Path, suffixes: tuple[str, ...] = (".json", ".jsonl", ".txt")) -> str:
    """sha256 over a file, or over a folder's files (names and bytes, in sorted order).

    Identifies an import's content, so re-importing the same files is recognised as a no-op.
    """
    digest = hashlib.sha256()
    files = (
        [path]
        if path.is_file()
        else sorted(p for p in path.rglob("*") if p.is_file() and p.suffix in suffixes)
    )
    for file in files:
        digest.update(str(file.relative_to(path) if path.is_dir() else file.name).encode())
        digest.update(b"\0")
        with file.open("rb") as handle:
            for chunk in iter(lambda: handle.read(1 << 20), b""):
                digest.update(chunk)
        digest.update(b"\0")
    return digest.hexdigest()
