"""Importers under damaged input: a bounded, seeded fuzz over all five formats, and the failures
the reliability trial found, each pinned by hand.

The fuzz (see :mod:`tests.importer_fuzz`) mutates a small valid input of each format — NaN,
±Infinity, 1e400, lone surrogates, 100,000-deep nesting, wrong types, dropped keys, duplicated
lines, truncation, garbled bytes, terminal escapes in ids — and imports it into a database that
already holds another suite. Every case must end in success or an :class:`InputError` naming a
file of the input, never a traceback; a refused import must leave the database as it was; and
the damage no benchmark file can mean must always be refused.
"""

from __future__ import annotations

import json
import random
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from reviewer.errors import InputError
from reviewer.formats.native import write_bundle
from store.db.connection import connect
from store.imports.from_path import import_path
from store.imports.loader import import_bundle
from store.scores.cache import rebuild_scores
from tests.builders import tiny_bundle
from tests.conftest import PROJECT
from tests.importer_fuzz import DEPTH, copy_seed, mutate, run_case, snapshot
from tests.test_drb import mini_repo
from tests.test_drbench import entry, report_row, write_jsonl

CASES_PER_FORMAT = 80
SEED = 20261125


def _native(folder: Path) -> Path:
    write_bundle(tiny_bundle("fuzzed"), folder)
    return folder


def _drb(folder: Path) -> Path:
    return mini_repo(folder)


def _fixture(name: str) -> Callable[[Path], Path]:
    def make(folder: Path) -> Path:
        shutil.copytree(PROJECT / "tests" / "fixtures" / name, folder)
        return folder

    return make


def _drbench(folder: Path) -> Path:
    folder.mkdir(parents=True)
    write_jsonl(folder / "RigorousBench.jsonl", [entry(), entry("05000")])
    write_jsonl(folder / "reports.jsonl", [report_row()])
    return folder


SEEDS: dict[str, Callable[[Path], Path]] = {
    "native": _native,
    "deepresearch_bench": _drb,
    "dr3_eval": _fixture("dr3"),
    "livedrbench": _fixture("livedrbench"),
    "dr_bench": _drbench,
}


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("seeds")
    return {fmt: make(root / fmt) for fmt, make in SEEDS.items()}


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A database that already holds a suite: a refused import must leave it as it was."""
    path = tmp_path_factory.mktemp("template") / "held.db"
    conn = connect(path)
    import_bundle(conn, tiny_bundle("already-here"), "h")
    rebuild_scores(conn)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return path


def fresh(template: Path, folder: Path) -> Path:
    db = folder / "case.db"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    shutil.copy(template, db)
    return db


def test_every_seed_imports_cleanly(
    inputs: dict[str, Path], template: Path, tmp_path: Path
) -> None:
    for fmt, seed in inputs.items():
        conn = connect(fresh(template, tmp_path))
        assert import_path(conn, seed, fmt).created, fmt
        conn.close()


@pytest.mark.parametrize("fmt", sorted(SEEDS))
def test_damaged_input_is_refused_cleanly_or_imported(
    fmt: str, inputs: dict[str, Path], template: Path, tmp_path: Path
) -> None:
    rng = random.Random(f"{SEED}-{fmt}")
    failures: list[str] = []
    outcomes = {"imported": 0, "refused": 0}
    for _ in range(CASES_PER_FORMAT):
        folder = copy_seed(inputs[fmt], tmp_path / "input")
        case = mutate(rng, folder, fmt)
        outcome = run_case(
            case,
            folder,
            fresh(template, tmp_path),
            lambda conn, path: import_path(conn, path, fmt),
            connect,
        )
        if outcome.failure:
            failures.append(f"{case}: {outcome.result}: {outcome.failure}")
        else:
            outcomes[outcome.result] += 1
    assert failures == []
    assert outcomes["refused"] > CASES_PER_FORMAT // 3  # the fuzz does reach the checks


# -- the trial's failures, by hand -----------------------------------------------------------------


def refused(fmt: str, folder: Path, db: Path) -> InputError:
    conn = connect(db)
    try:
        before = snapshot(conn)
        with pytest.raises(InputError) as error:
            import_path(conn, folder, fmt)
        assert snapshot(conn) == before
    finally:
        conn.close()
    assert error.value.file.startswith(str(folder))
    return error.value


def first_line_file(folder: Path) -> Path:
    """The first JSONL file of an input (where nesting is planted)."""
    return sorted(folder.rglob("*.jsonl"))[0]


@pytest.mark.parametrize("fmt", sorted(SEEDS))
def test_100000_deep_nesting_is_a_clear_error_in_every_format(
    fmt: str, inputs: dict[str, Path], template: Path, tmp_path: Path
) -> None:
    folder = copy_seed(inputs[fmt], tmp_path / "input")
    file = first_line_file(folder)
    lines = file.read_text(encoding="utf-8").splitlines()
    record = json.loads(lines[0])
    key = next(iter(record))
    lines[0] = json.dumps({**record, key: None}).replace("null", "[" * DEPTH + "]" * DEPTH, 1)
    file.write_text("\n".join(lines) + "\n", encoding="utf-8")
    error = refused(fmt, folder, fresh(template, tmp_path))
    assert error.file == str(file) and error.line == 1
    assert "nested too deep" in error.message


def edit_line(file: Path, number: int, change: Callable[[dict[str, object]], str]) -> None:
    lines = file.read_text(encoding="utf-8").splitlines()
    lines[number - 1] = change(json.loads(lines[number - 1]))
    file.write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.mark.parametrize("weight", ["NaN", "Infinity", "1e400", '"NaN"', '"inf"'])
def test_a_drb_criterion_weight_that_is_not_a_number_is_refused(
    weight: str, inputs: dict[str, Path], template: Path, tmp_path: Path
) -> None:
    """A NaN weight was stored as NULL and moved a RACE overall from 0.932 to 1.000."""
    folder = copy_seed(inputs["deepresearch_bench"], tmp_path / "input")
    file = folder / "data/criteria_data/criteria.jsonl"

    def nan_weight(record: dict[str, object]) -> str:
        criterions = record["criterions"]
        assert isinstance(criterions, dict)
        criterions["insight"][0]["weight"] = "WEIGHT"
        return json.dumps(record).replace('"WEIGHT"', weight)

    edit_line(file, 1, nan_weight)
    error = refused("deepresearch_bench", folder, fresh(template, tmp_path))
    assert (error.file, error.line) == (str(file), 1)
    if weight.startswith('"'):
        assert error.field == "criterions.insight.0.weight"


@pytest.mark.parametrize(
    "relative",
    [
        "data/test_data/raw_data/agent.jsonl",
        "results/race/agent/raw_results.jsonl",
        "judgements/agent.jsonl",
        "results/fact/agent/validated.jsonl",
    ],
)
def test_a_duplicate_drb_report_or_stored_score_is_refused(
    relative: str, inputs: dict[str, Path], template: Path, tmp_path: Path
) -> None:
    """A duplicate silently replaced the first report or stored score."""
    folder = copy_seed(inputs["deepresearch_bench"], tmp_path / "input")
    file = folder / relative
    lines = file.read_text(encoding="utf-8").splitlines()
    file.write_text("\n".join([lines[0], *lines]) + "\n", encoding="utf-8")
    error = refused("deepresearch_bench", folder, fresh(template, tmp_path))
    assert (error.file, error.line) == (str(file), 2)
    assert "the first is line 1" in error.message


def test_a_lone_surrogate_in_livedrbench_is_refused_naming_the_field(
    inputs: dict[str, Path], template: Path, tmp_path: Path
) -> None:
    folder = copy_seed(inputs["livedrbench"], tmp_path / "input")
    file = folder / "evaluations" / "alpha.jsonl"
    edit_line(file, 1, lambda r: json.dumps({**r, "judge": "gpt \ud800"}))
    error = refused("livedrbench", folder, fresh(template, tmp_path))
    assert (error.file, error.line, error.field) == (str(file), 1, "judge")


def test_a_duplicate_native_report_id_is_refused(
    inputs: dict[str, Path], template: Path, tmp_path: Path
) -> None:
    folder = copy_seed(inputs["native"], tmp_path / "input")
    file = folder / "reports.jsonl"
    lines = file.read_text(encoding="utf-8").splitlines()
    file.write_text("\n".join([*lines, lines[0]]) + "\n", encoding="utf-8")
    error = refused("native", folder, fresh(template, tmp_path))
    assert (error.file, error.line) == (str(file), len(lines) + 1)
