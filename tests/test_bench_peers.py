"""`gavel bench --peers` without installing a peer: the bundle as each peer's tasks, the process
tree's memory sampler on real processes, the servers' shut-down, the table (with a peer that
could not be installed) and the ratios."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner
from rich.console import Console

from reviewer.frameworks.dailyreport.synthetic import SyntheticSpec, write_synthetic
from tui.bench import peer_servers as bench_peer_servers
from tui.bench.peer_data import (
    CHOICES,
    PeerResult,
    TreeSampler,
    decision_for,
    label_studio_config,
    label_studio_task,
    potato_config,
    potato_item,
    process_tree,
    report_tasks,
    tree_rss_mb,
)
from tui.bench.peer_servers import (
    PEERS,
    Server,
    label_studio_chunks,
    measure_peer,
)
from tui.bench.peers import GavelSide, after_bench, peer_rows, print_peers, ratio
from tui.bench.run import BenchOptions, Figure
from tui.cli.group import gavel

MARKUP = "# Title <b>bold</b> & <script>alert(1)</script>\n\n| a | b |\n|---|---|\n\n&amp; [x](y)"


def _bundle(folder: Path) -> Path:
    folder.mkdir()
    reports = [
        {"id": "r1", "task": "t1", "system": "s1", "markdown": MARKUP},
        {"id": "r2", "task": "t1", "system": "s2", "markdown": "Plain second report."},
        {"id": "r3", "task": "t2", "system": "s1", "markdown": "No verdicts here."},
    ]
    judgments = [
        {
            "run": "run-1",
            "report": "r1",
            "kind": "ins",
            "criterion": "s1-ins",
            "value": 1.0,
            "explanation": "Covers <i>all</i> of it.",
        },
        {
            "run": "run-1",
            "report": "r2",
            "kind": "claim",
            "claim": "c1",
            "value": "correct",
            "explanation": "synthetic",
        },
        {
            "run": "run-1",
            "report": "r1",
            "kind": "consistency",
            "claim": "c2",
            "ref": 3,
            "value": "conflict",
            "explanation": "The page says otherwise.",
        },
        {
            "run": "run-1",
            "report": "r1",
            "kind": "rat",
            "criterion": "s2-rat",
            "value": 0.5,
            "explanation": "Half argued.",
        },
    ]
    for name, rows in (("reports.jsonl", reports), ("judgments.jsonl", judgments)):
        (folder / name).write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return folder


def test_one_task_a_report_with_its_verdicts_and_its_text_intact(tmp_path: Path) -> None:
    tasks = list(report_tasks(_bundle(tmp_path / "b")))
    assert [t.id for t in tasks] == ["r1", "r2", "r3"]
    r1, r2, r3 = tasks
    assert r1.markdown == MARKUP and r1.title == "t1 by s1"
    assert [(v.subject, v.value, v.explanation) for v in r1.verdicts] == [
        ("ins s1-ins", "1", "Covers <i>all</i> of it."),
        ("consistency c2 → source 3", "conflict", "The page says otherwise."),
        ("rat s2-rat", "0.5", "Half argued."),
    ]
    assert [(v.subject, v.value) for v in r2.verdicts] == [("claim c1", "correct")]
    assert r3.verdicts == ()

    ls = label_studio_task(r1)
    data = ls["data"]
    assert isinstance(data, dict)
    assert data["report"] == MARKUP and data["report_id"] == "r1"
    assert data["verdicts"] == [
        {"verdict": "ins s1-ins = 1", "text": "Covers <i>all</i> of it."},
        {"verdict": "consistency c2 → source 3 = conflict", "text": "The page says otherwise."},
        {"verdict": "rat s2-rat = 0.5", "text": "Half argued."},
    ]
    item = potato_item(r1)
    assert item["id"] == "r1" and item["text"] == MARKUP
    assert item["verdicts"] == (
        "ins s1-ins = 1: Covers <i>all</i> of it.\n"
        "consistency c2 → source 3 = conflict: The page says otherwise.\n"
        "rat s2-rat = 0.5: Half argued."
    )


def test_the_peers_show_the_text_as_text_and_offer_the_verdict_values() -> None:
    view = ET.fromstring(label_studio_config())
    tags = {el.tag: el.attrib for el in view.iter()}
    # Text shows markup as typed; HyperText would render it.
    assert tags["Text"] == {"name": "report", "value": "$report"}
    assert "HyperText" not in tags
    assert tags["Paragraphs"]["value"] == "$verdicts"
    assert tags["Paragraphs"]["nameKey"] == "verdict" and tags["Paragraphs"]["textKey"] == "text"
    choices = view.find("Choices")
    assert choices is not None and choices.attrib["toName"] == "report"
    assert [c.attrib["value"] for c in choices.iter("Choice")] == list(CHOICES)

    config = json.loads(potato_config("data.jsonl"))  # JSON is YAML
    assert config["data_files"] == ["data.jsonl"]
    # instance_display text fields are escaped; the bare text_key display lets HTML through.
    fields = config["instance_display"]["fields"]
    assert {f["key"]: f["type"] for f in fields} == {
        "title": "text",
        "text": "text",
        "verdicts": "text",
    }
    radio = config["annotation_schemes"][0]
    assert radio["annotation_type"] == "radio" and radio["labels"] == list(CHOICES)


def test_a_decision_changes_a_verdict_within_its_scale(tmp_path: Path) -> None:
    r1, r2, r3 = report_tasks(_bundle(tmp_path / "b"))
    assert decision_for(r1) == ("ins s1-ins", "0.5")
    assert decision_for(r2) == ("claim c1", "incorrect")
    assert decision_for(r3) == ("report", CHOICES[0])


def test_a_synthetic_run_converts_whole_and_label_studio_files_are_chunked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bundle = tmp_path / "bundle"
    write_synthetic(bundle, SyntheticSpec(tasks=2, systems=3))
    reports = [
        json.loads(line)
        for line in (bundle / "reports.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    judgments = [
        json.loads(line)
        for line in (bundle / "judgments.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    tasks = list(report_tasks(bundle))
    assert [t.id for t in tasks] == [r["id"] for r in reports]
    assert [t.markdown for t in tasks] == [r["markdown"] for r in reports]
    assert sum(len(t.verdicts) for t in tasks) == len(judgments)
    for t in tasks:
        assert len(t.verdicts) == sum(j["report"] == t.id for j in judgments)

    monkeypatch.setattr(bench_peer_servers, "LS_CHUNK_BYTES", 20_000)
    out = tmp_path / "ls"
    out.mkdir()
    files, count = label_studio_chunks(iter(tasks), out)
    assert count == len(reports) and len(files) > 1
    loaded = [t for f in files for t in json.loads(f.read_text(encoding="utf-8"))]
    assert [t["data"]["report_id"] for t in loaded] == [r["id"] for r in reports]
    assert [t["data"]["report"] for t in loaded] == [r["markdown"] for r in reports]


ALLOCATE = (
    "import sys, time; x = b'x' * (int(sys.argv[1]) * 2**20); "
    "print('ready', flush=True); time.sleep(30)"
)


def test_the_sampler_sums_a_process_tree(tmp_path: Path) -> None:
    # A parent that allocates 40 MB and starts a child that allocates 150 MB.
    parent_script = (
        "import subprocess, sys, time\n"
        f"child = subprocess.Popen([sys.executable, '-c', {ALLOCATE!r}, '150'])\n"
        "x = b'y' * (40 * 2**20)\n"
        "time.sleep(30)\n"
    )
    with (
        Server(
            [sys.executable, "-c", parent_script], tmp_path, dict(os.environ), tmp_path / "log"
        ) as server,
        TreeSampler(server.pid, 0.02) as sampler,
    ):
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and sampler.peak_mb < 190:
            time.sleep(0.05)
        tree = process_tree(server.pid)
        now = tree_rss_mb(server.pid)
    assert len(tree) == 2 and tree[0] == server.pid
    assert 190 <= sampler.peak_mb < 400, sampler.peak_mb
    assert 190 <= now < 400
    assert sampler.samples >= 2
    # Leaving the block stopped the whole group, the grandchild too (a signal takes a moment).
    assert _gone(tree)


def _gone(pids: list[int]) -> bool:
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        if all(not Path(f"/proc/{pid}").exists() or _zombie(pid) for pid in pids):
            return True
        time.sleep(0.05)
    return False


def _zombie(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat[stat.rfind(")") + 2] == "Z"


def test_a_server_is_stopped_when_the_block_raises(tmp_path: Path) -> None:
    with (
        pytest.raises(RuntimeError),
        Server(
            [sys.executable, "-c", ALLOCATE, "1"], tmp_path, dict(os.environ), tmp_path / "log"
        ) as server,
    ):
        pid = server.pid
        raise RuntimeError("boom")
    assert server.proc is not None and server.proc.poll() is not None
    assert _gone([pid])


GAVEL = GavelSide(
    import_s=10.0,
    import_peak_mb=200.0,
    decide_s=0.1,
    first_screen_s=2.0,
    keypress_s=0.02,
    reports=2_550,
)


def test_ratio_is_gavel_over_the_peer() -> None:
    assert ratio(1.0, 4.0) == 0.25
    assert ratio(12.0, 3.0) == 4.0
    assert ratio(None, 3.0) is None and ratio(1.0, None) is None and ratio(1.0, 0.0) is None
    assert GAVEL.load_s == 12.0  # import plus the first screen
    assert GavelSide(1.0, 2.0, 3.0).load_s == 1.0


def test_gavel_side_from_the_bench_figures() -> None:
    figures = [
        Figure("`gavel import` wall time (with FTS and scores)", 9.0, "s", "b", 1.0, "", None),
        Figure("`gavel import` peak memory (its processes)", 180.0, "MB", "b", 50.0, "", None),
        Figure.of(
            "gavel decide ID VALUE (wall, median of 7)",
            [0.1, 0.3, 0.2],
            "s",
            "python -c pass",
            [0.02],
            "",
            None,
        ),
        Figure.of(
            "start-up to first interactive screen", [1.0, 3.0, 2.0], "s", "bare", [1.0], "", None
        ),
    ]
    side = GavelSide.from_figures(figures, 2_550)
    assert side == GavelSide(9.0, 180.0, 0.2, 2.0, None, 2_550)
    assert GavelSide.from_figures(figures[1:], 2_550) is None


def _failing_python(tmp_path: Path) -> str:
    fake = tmp_path / "python"
    fake.write_text(
        "#!/bin/sh\necho 'pip: no network: Could not find label-studio' >&2\nexit 3\n",
        encoding="utf-8",
    )
    fake.chmod(0o755)
    return str(fake)


def test_a_peer_that_cannot_be_installed_is_reported_and_the_run_goes_on(tmp_path: Path) -> None:
    results = [
        measure_peer(
            peer,
            tmp_path / "bundle",
            tmp_path / peer.key,
            lambda _: None,
            base_python=_failing_python(tmp_path),
        )
        for peer in PEERS
    ]
    for result in results:
        assert result.version is None
        assert result.error is not None and result.error.startswith("could not install: venv")
        assert "no network" in result.error and "exited 3" in result.error
    missing = measure_peer(
        PEERS[1],
        tmp_path / "bundle",
        tmp_path / "other",
        lambda _: None,
        base_python=str(tmp_path / "no-such-python"),
    )
    assert missing.error is not None and "could not install" in missing.error

    measured = PeerResult(
        "Label Studio",
        "1.23.2",
        install_s=None,
        start_s=20.0,
        load_s=24.0,
        peak_mb=500.0,
        decision_s=[0.2, 0.05, 0.1],
        aggregate=(True, "counts only: total 0 → 3"),
    )
    rows = peer_rows(GAVEL, [measured, results[1]])
    assert rows[0] == [
        "",
        "Gavel",
        "Label Studio 1.23.2",
        "Gavel ÷ Label Studio",
        "Potato",
        "Gavel ÷ Potato",
    ]
    by_name = {row[0]: row[1:] for row in rows[1:]}
    assert by_name["install (not counted in load)"][1] == "cached"
    assert by_name["install (not counted in load)"][3] == results[1].error
    assert by_name["load (2,550 reports)"] == ["12.0 s", "24.0 s", "0.5×", "—", "—"]
    assert by_name["load, the peer's database already set up"] == ["12.0 s", "—", "—", "—", "—"]
    assert by_name["peak memory while loading"] == ["200 MB", "500 MB", "0.4×", "—", "—"]
    assert by_name["one decision stored and acknowledged"] == [
        "100.0 ms",
        "100.0 ms",
        "1×",
        "—",
        "—",
    ]
    assert by_name["aggregate reflects the decision"][1:3] == ["yes (counts only: total 0 → 3)", ""]
    console = Console(record=True, width=300)
    print_peers(console, GAVEL, [measured, results[1]])
    text = console.export_text()
    assert "could not install: venv exited 3" in text and "no network" in text
    assert by_name["the workstation: keypress → stored → score on screen"] == [
        "20.0 ms",
        "—",
        "",
        "—",
        "",
    ]
    assert "keypress" not in str(peer_rows(GavelSide(1.0, 2.0, 3.0), [measured]))


def test_a_peer_that_fails_after_installing_says_so_in_its_load_cell() -> None:
    failed = PeerResult(
        "Potato",
        "2.12.1",
        install_s=21.0,
        error="could not measure: the server exited (1): port in use",
    )
    rows = peer_rows(GavelSide(1.0, 2.0, 3.0), [failed])
    assert rows[1][1:] == ["—", "21.0 s", ""]
    assert rows[2] == ["load", "1.0 s (import only)", failed.error, "—"]
    assert rows[3] == ["load, the peer's database already set up", "1.0 s", "—", "—"]


def test_after_bench_needs_the_import_and_decide_figures(tmp_path: Path) -> None:
    console = Console(record=True, width=200)
    after_bench(console, tmp_path, tmp_path, [], 2_550)
    assert "peers: skipped" in console.export_text()
    assert list(tmp_path.iterdir()) == []  # nothing installed, nothing started


def test_bench_has_the_peers_option() -> None:
    assert BenchOptions().peers is None
    out = CliRunner().invoke(gavel, ["bench", "--help"])
    assert out.exit_code == 0 and "--peers" in out.output


def test_the_standalone_script_names_its_arguments() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "tui.bench.peers", "--help"],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parent.parent,
    )
    assert "--bundle" in done.stdout and "--workdir" in done.stdout
