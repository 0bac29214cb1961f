"""What a scripted command costs to start (issue 20): ``gavel decide``, ``confirm`` and
``scores --format json`` import neither pydantic nor Rich nor the benchmarks they do not touch,
and the shortcuts that make that possible (the registry's :data:`~reviewer.registry.HOMES`
hints, its own entry-point scan) agree with what they stand in for.

Timings are not asserted here: ``gavel bench`` prints them beside a bare ``python -c pass``.
"""

from __future__ import annotations

import importlib.metadata
import os
import sys
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from reviewer import registry
from tests.test_cli import _loaded_after

TOY = Path(__file__).resolve().parent / "fixtures" / "toy_benchmark"
SCORING = (
    "reviewer.frameworks.dr_bench.scoring",
    "reviewer.frameworks.livedrbench.scoring",
    "reviewer.frameworks.dr3_eval.scoring",
    "reviewer.frameworks.deepresearch_bench.race",
)


def _no_models_rich_or_other_benchmarks(modules: set[str]) -> None:
    # (multiprocessing: only an import or a suspicion refresh forks; 17 ms to load it.)
    assert not any(
        m.split(".")[0] in ("pydantic", "rich", "textual", "numpy", "multiprocessing")
        for m in modules
    )
    assert "reviewer.models" not in modules and "reviewer.review" not in modules
    assert [m for m in SCORING if m in modules] == []


@pytest.mark.parametrize(
    "command",
    [
        "['decide', '1', '0', '--rationale', 'r', '--format', 'json']",
        "['confirm', '2', '--format', 'json']",
    ],
)
def test_a_decision_imports_only_its_own_benchmark(sample_db: Path, command: str) -> None:
    modules = _loaded_after(
        "import os\nos.environ['GAVEL_CONFIG'] = os.devnull + '.none'\n"
        "from tui.cli import main\n"
        f"assert main([*{command}, '--db', {str(sample_db)!r}, '--reviewer', 'ana']) == 0\n"
    )
    assert "reviewer.frameworks.dailyreport.scoring" in modules  # judgment 1's benchmark
    _no_models_rich_or_other_benchmarks(modules)


def test_a_batch_of_decisions_imports_only_their_benchmarks(
    sample_db: Path, tmp_path: Path
) -> None:
    batch = tmp_path / "d.jsonl"
    batch.write_text('{"id": 1, "value": 0, "rationale": "r"}\n', encoding="utf-8")
    modules = _loaded_after(
        "import os\nos.environ['GAVEL_CONFIG'] = os.devnull + '.none'\n"
        "from tui.cli import main\n"
        f"assert main(['decide', '--from', {str(batch)!r}, '--db', {str(sample_db)!r},"
        " '--reviewer', 'ana', '--format', 'json']) == 0\n"
    )
    _no_models_rich_or_other_benchmarks(modules)


def test_scores_as_json_imports_neither_models_nor_rich(sample_db: Path) -> None:
    modules = _loaded_after(
        "from tui.cli import main\n"
        f"assert main(['scores', '--db', {str(sample_db)!r}, '--format', 'json']) == 0\n"
    )
    assert not any(m.split(".")[0] in ("pydantic", "rich", "textual", "numpy") for m in modules)


def test_every_home_hint_names_the_benchmark_that_declares_the_framework() -> None:
    registry.reset()
    try:
        declared = {
            fw.name: module
            for module in registry.BENCHMARKS
            for fw in registry._benchmark_of(
                module, __import__(module, fromlist=["BENCHMARK"])
            ).frameworks
        }
        assert declared == registry.HOMES
        for name in registry.HOMES:
            registry.reset()
            found = registry.find_framework(name)
            assert found is not None and found.name == name
            assert not registry._REGISTRY.loaded  # found without loading every benchmark
        registry.reset()
        assert registry.find_framework("nope") is None
        assert registry._REGISTRY.loaded  # an unknown name looks everywhere
    finally:
        registry.reset()


def test_a_kind_is_found_through_its_framework_or_else_everywhere() -> None:
    registry.reset()
    try:
        kind = registry.get_kind("ins", ["cascade"])
        assert kind is not None and kind.name == "ins" and not registry._REGISTRY.loaded
        assert registry.get_kind("drb_qsr", ["cascade"]) is not None  # not cascade's: all
        assert registry._REGISTRY.loaded
        assert registry.get_kind("nope", ["cascade"]) is None
    finally:
        registry.reset()


@pytest.mark.parametrize("group", ["console_scripts", registry.ENTRY_POINT_GROUP])
def test_the_entry_point_scan_finds_what_importlib_metadata_finds(group: str) -> None:
    sys.path.insert(0, str(TOY))
    try:
        expected = sorted((p.name, p.value) for p in importlib.metadata.entry_points(group=group))
        assert sorted(registry.entry_points(group)) == expected
        if group == registry.ENTRY_POINT_GROUP:
            assert ("toy", "toybench") in expected
    finally:
        sys.path.remove(str(TOY))


def test_scores_piped_as_a_table_imports_no_rich(sample_db: Path) -> None:
    # COLUMNS unset: pytest sets it to 80, where Rich would fold (and draw) the wider tables.
    modules = _loaded_after(
        "import os\nos.environ.pop('COLUMNS', None)\n"
        "from tui.cli import main\n"
        f"assert main(['scores', '--db', {str(sample_db)!r}]) == 0\n"
    )
    assert not any(m.split(".")[0] in ("pydantic", "rich", "textual", "numpy") for m in modules)


def _rich(
    rows: list[dict[str, object]],
    columns: list[str],
    title: str | None,
    numeric: tuple[str, ...],
    width: int,
) -> str:
    import io

    from rich.console import Console

    from tui.render.tables import data_table

    buffer = io.StringIO()
    Console(file=buffer, width=width).print(data_table(rows, columns, title=title, numeric=numeric))
    return buffer.getvalue()


_CELLS = st.one_of(
    st.none(),
    st.floats(allow_nan=True, allow_infinity=False),
    st.integers(-(10**6), 10**6),
    st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x2200), max_size=12),
    st.sampled_from(["\x1b]0;x\x07", "a\u202eb", "tab\there", "—", "→", "·"]),
)


@example(rows=[], title="000 ", right=False, width=13)  # a title with trailing space
@example(rows=[], title=" 000", right=False, width=13)
@settings(max_examples=int(os.environ.get("PLAIN_TABLE_EXAMPLES", "150")), deadline=None)
@given(
    rows=st.lists(st.fixed_dictionaries({"a": _CELLS, "b": _CELLS, "n": _CELLS}), max_size=6),
    title=st.one_of(st.none(), st.text(max_size=30)),
    right=st.booleans(),
    width=st.integers(8, 80),
)
def test_the_plain_table_is_what_rich_draws_or_nothing(
    rows: list[dict[str, object]], title: str | None, right: bool, width: int
) -> None:
    from tui.cli.output import plain_table

    numeric = ("n",) if right else ()
    plain = plain_table(rows, ["a", "b", "n"], title=title, numeric=numeric, width=width)
    if plain is not None:
        assert plain == _rich(rows, ["a", "b", "n"], title, numeric, width)


def test_the_plain_table_draws_the_common_case() -> None:
    from tui.cli.output import plain_table

    rows: list[dict[str, object]] = [{"system": "atlas", "metric": "Ins", "judge": 0.98}]
    plain = plain_table(rows, ["system", "metric", "judge"], title="scores", numeric=("judge",))
    assert plain is not None and plain == _rich(
        rows, ["system", "metric", "judge"], "scores", ("judge",), 200
    )


def test_scores_import_only_the_benchmarks_they_are_from(tmp_path: Path) -> None:
    from store.db.connection import connect
    from store.imports.loader import import_bundle
    from store.scores.cache import rebuild_scores
    from tests.builders import tiny_bundle

    db = tmp_path / "tiny.db"
    conn = connect(db)
    import_bundle(conn, tiny_bundle(), "h")  # DailyReport's cascade only
    rebuild_scores(conn)
    conn.close()
    modules = _loaded_after(
        "import os\nos.environ.pop('COLUMNS', None)\n"
        "from tui.cli import main\n"
        f"assert main(['scores', '--db', {str(db)!r}]) == 0\n"
    )
    assert "reviewer.frameworks.dailyreport.scoring" in modules
    assert [m for m in SCORING if m in modules] == []
