"""Nothing Gavel prints to a terminal carries a control sequence, a bidirectional override or a
zero-width character from the data.

Every command of ``gavel --help`` runs on a pseudo-terminal against a database whose texts are
hostile (:mod:`tests.hostile_db`: OSC 0, OSC 52, OSC 8, ESC[2J, an 8-bit CSI, bidi overrides and
isolates, zero-width characters in rationales, report text, claims, criteria, source titles,
run descriptions, a legacy reviewer name), in each output format it has; what reaches the
terminal may hold Rich's colour sequences (SGR) and nothing else of the kind. Written to a
file, the same export keeps the exact bytes.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.conftest import PROJECT
from tests.hostile_db import HOSTILE, build, unsafe_in
from tests.pty_run import run_on_terminal
from tui.cli.group import COMMANDS

PAYLOAD = json.dumps({"subtask": "s2", "dimension": "ins", "text": "new rubric " + HOSTILE})

# Each command with the arguments that make it show the hostile texts; "{db}", "{other}",
# "{conflict}", "{flagged}", "{p0}".."{p2}" are filled in per run.
INVOCATIONS: dict[str, list[list[str]]] = {
    "demo": [["demo", "--quiet"]],
    "import": [["import", "{bundle}"]],
    "schema": [["schema"]],
    "scores": [
        ["scores"],
        ["scores", "--per", "report", "--format", "csv"],
        ["scores", "--format", "json"],
    ],
    "verdicts": [["verdicts"], ["verdicts", "--format", "json"], ["verdicts", "--format", "csv"]],
    "decide": [
        ["decide", "{flagged}", "incorrect", "--rationale", HOSTILE],
        ["decide", "{flagged}", "unknown", "--rationale", HOSTILE, "--format", "json"],
    ],
    "confirm": [["confirm", "{flagged}", "--rationale", HOSTILE]],
    "rate": [["rate", "tiny/t1-alpha", "3", "--rationale", HOSTILE]],
    "undo": [["undo", "--reviewer", "ana"]],
    "redo": [["redo", "--reviewer", "ana"]],
    "reasons": [["reasons"]],
    "keys": [["keys"]],
    "options": [["options"]],
    "rebuild": [["rebuild"]],
    "agreement": [["agreement", "--disagreements", "-1"], ["agreement", "--format", "json"]],
    "log": [["log", "export"]],
    "merge": [["merge", "{other}"]],
    "conflicts": [
        ["conflicts"],
        ["conflicts", "--format", "csv"],
        ["conflicts", "--format", "json"],
    ],
    "adjudicate": [["adjudicate", "{conflict}", "incorrect", "--rationale", HOSTILE]],
    "identity": [["identity", "show"], ["identity", "trust", HOSTILE + "#00000000"]],
    "export": [
        ["export", kind, *fmt]
        for kind in ("gold", "verdicts", "scores", "gt-expansions")
        for fmt in ([], ["--format", "csv"])
    ],
    "propose": [
        [
            "propose",
            "tiny/t1",
            "--kind",
            "new_rubric",
            "--framework",
            "cascade",
            "--payload",
            PAYLOAD,
            "--rationale",
            HOSTILE,
        ]
    ],
    "proposals": [
        ["proposals"],
        ["proposals", "--format", "json"],
        ["proposals", "--format", "csv"],
    ],
    "accept": [["accept", "{p0}", "--force", "--rationale", HOSTILE]],
    "reject": [["reject", "{p1}", "--rationale", HOSTILE]],
    "judge": [
        [
            "judge",
            "--model",
            "m",
            "--base-url",
            "http://127.0.0.1:9/v1",
            "--sources",
            "stored",
            "--dry-run",
        ]
    ],
    "fetch": [["fetch", "--fetch-timeout", "2"], ["fetch", "--format", "csv"]],
    "runs": [
        ["runs"],
        ["runs", "--against-gold"],
        ["runs", "activate", "bad", "--yes"],
        ["runs", "deactivate", "good"],
    ],
    "compare": [["compare", "r1", "good", "bad"]],
    "plan": [
        ["plan", "new", "--budget", "3", "--seed", "1", "--reviewer", HOSTILE[:40]],
        ["plan", "list"],
        ["plan", "show", "p-hostile"],
        ["plan", "export", "p-hostile", "--format", "csv"],
    ],
    "estimate": [["estimate", "--no-ranks"], ["estimate", "--no-ranks", "--format", "json"]],
    "trust": [
        ["trust", "calibrate", "--plan", "p-hostile"],
        ["trust", "calibrate", "--plan", "p-hostile", "--format", "json"],
        ["trust", "apply", "--plan", "p-hostile", "--alpha", "0.5", "--delta", "0.5"],
        ["trust", "show"],
        ["trust", "clear"],
    ],
    "assign": [["assign", "--to", "ana,ben", "--overlap", "0.5"], ["assign"]],
    "migrate-judge": [
        [
            "migrate-judge",
            "--from",
            "good",
            "--model",
            HOSTILE[:40],
            "--base-url",
            "http://127.0.0.1:9/v1",
            "--dry-run",
        ]
    ],
}
NOT_SWEPT = {
    "review": "the workstation: tests/test_tui_text_safety.py checks every screen",
    "bench": "prints measured timings of a synthetic run it generates, no stored text",
    "hub": "needs a PostgreSQL server; hub text is printed through tui.cli.hub.shown",
    "sync": "needs a PostgreSQL server; hub text is printed through tui.cli.hub.shown",
    "serve": "a web server; its subcommands print only names checked when admitted "
    "(tests/test_serve.py)",
}


def test_every_command_is_swept() -> None:
    assert set(COMMANDS) == set(INVOCATIONS) | set(NOT_SWEPT)


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, object]]:
    folder = tmp_path_factory.mktemp("hostile")
    return folder / "hostile.db", build(folder / "hostile.db")


def _bundle(folder: Path) -> Path:
    """A native bundle with hostile text wherever the format allows free text."""
    from reviewer.formats.native import write_bundle
    from tests.builders import tiny_bundle

    bundle = tiny_bundle("hostile-import")
    task = bundle.tasks[0].model_copy(update={"prompt": "Q " + HOSTILE})
    bundle = bundle.model_copy(
        update={
            "tasks": [task],
            "suite": bundle.suite.model_copy(update={"name": HOSTILE, "description": HOSTILE}),
        }
    )
    write_bundle(bundle, folder)
    return folder


CASES = [(command, n, args) for command, runs in INVOCATIONS.items() for n, args in enumerate(runs)]


@pytest.mark.parametrize(("command", "n", "args"), CASES, ids=[f"{c}-{n}" for c, n, _ in CASES])
def test_nothing_unsafe_reaches_the_terminal(
    command: str, n: int, args: list[str], hostile: tuple[Path, dict[str, object]], tmp_path: Path
) -> None:
    template, ids = hostile
    db = tmp_path / "hostile.db"
    shutil.copy(template, db)
    other = tmp_path / "other.db"
    shutil.copy(template, other)
    proposals = ids["proposals"]
    assert isinstance(proposals, list)
    values = {
        "db": str(db),
        "other": str(other),
        "bundle": str(_bundle(tmp_path / "bundle")),
        "conflict": str(ids["conflict"]),
        "flagged": str(ids["flagged"]),
        **{f"p{i}": str(u) for i, u in enumerate(proposals)},
    }
    filled = [values.get(a[1:-1], a) if a.startswith("{") and a.endswith("}") else a for a in args]
    status, output = run_on_terminal(
        [*filled, "--db", str(db)], cwd=PROJECT, env={"GAVEL_REVIEWER": "ben"}
    )
    assert "Traceback" not in output, output[-3000:]
    assert unsafe_in(output) == [], f"gavel {' '.join(args)[:80]} (exit {status})"


def test_hostile_text_is_shown_visibly_not_dropped(
    hostile: tuple[Path, dict[str, object]], tmp_path: Path
) -> None:
    template, _ = hostile
    db = tmp_path / "hostile.db"
    shutil.copy(template, db)
    _, table = run_on_terminal(["conflicts", "--db", str(db)], cwd=PROJECT)
    assert "␛]0;OWNED␇" in table and "⟨U+202E⟩evil" in table
    _, as_json = run_on_terminal(["conflicts", "--format", "json", "--db", str(db)], cwd=PROJECT)
    assert "\\u001b]0;OWNED\\u0007" in as_json and "\\u202eevil" in as_json
    assert json.loads(as_json.replace("\r\n", "\n"))[0]["sides"][0]["rationale"] == HOSTILE


def test_files_keep_the_exact_bytes(
    hostile: tuple[Path, dict[str, object]], tmp_path: Path
) -> None:
    template, _ = hostile
    db = tmp_path / "hostile.db"
    shutil.copy(template, db)
    for fmt in ("jsonl", "csv"):
        out = tmp_path / f"verdicts.{fmt}"
        status, _ = run_on_terminal(
            ["export", "verdicts", "--format", fmt, "-o", str(out), "--db", str(db)], cwd=PROJECT
        )
        assert status == 0
        text = out.read_bytes().decode("utf-8")
        if fmt == "csv":
            assert HOSTILE in text  # the raw bytes, in a quoted field
        else:
            assert HOSTILE in [
                json.loads(line)["decisions"][0]["rationale"]
                for line in text.splitlines()
                if json.loads(line)["decisions"]
            ]
