"""Every screen of the workstation shows hostile text visibly: on the database of
:mod:`tests.hostile_db`, nothing drawn on the queue, the report (text, judgments, detail pane
with explanation, evidence, source and history), the rationale editor, notifications, the
proposals, agreement and runs screens, or the dialogs holds a control character, a
bidirectional override or a zero-width character — and the hostile text is there, made visible.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.hostile_db import build, unsafe_in
from tests.tui_helpers import make_app, open_report, ready, screen_text, wait_for
from tui.app import GavelApp

SIZE = (200, 60)


@pytest.fixture(scope="module")
def hostile_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("hostile-tui")
    build(folder / "hostile.db")
    return folder / "hostile.db"


@pytest.fixture
def hostile(hostile_template: Path, tmp_path: Path) -> Path:
    target = tmp_path / "hostile.db"
    shutil.copy(hostile_template, target)
    return target


def drawn(app: GavelApp) -> str:
    """The top screen as drawn, toasts included."""
    return screen_text(app)


class Seen:
    """Collects what each step drew and what was unsafe in it."""

    def __init__(self, app: GavelApp) -> None:
        self.app = app
        self.unsafe: dict[str, list[str]] = {}
        self.shown: list[str] = []
        self.at: dict[str, str] = {}

    async def look(self, pilot: Any, where: str) -> None:
        await pilot.pause(0.2)
        text = drawn(self.app)
        self.shown.append(text)
        self.at[where] = text
        found = unsafe_in(text)
        if found:
            self.unsafe[where] = found


async def test_every_screen_shows_hostile_text_visibly(hostile: Path) -> None:
    app = make_app(hostile, reviewer="ana")
    seen = Seen(app)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await ready(pilot)
        await seen.look(pilot, "queue")
        await open_report(pilot, "t1-alpha")
        await seen.look(pilot, "report")
        for step in range(12):  # every judgment's detail pane
            await pilot.press("j")
            await seen.look(pilot, f"report, judgment {step + 1}")
        await pilot.press("t")
        await seen.look(pilot, "report, other text")
        await pilot.press("r")
        await seen.look(pilot, "rationale editor")
        await pilot.press("escape")
        await pilot.press("a")  # propose from the selected claim
        await seen.look(pilot, "proposal dialog")
        await pilot.press("escape")
        await pilot.press("z")  # undo: a notification names it
        await seen.look(pilot, "after undo")
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is app.queue_screen)
        for key, where in (
            ("P", "proposals"),
            ("R", "runs"),
            ("g", "agreement"),
            ("question_mark", "help"),
        ):
            await pilot.press(key)
            await seen.look(pilot, where)
            await pilot.press("escape")
            await pilot.pause(0.1)
        await pilot.press("z")  # undo from the queue asks first
        await seen.look(pilot, "undo dialog")
        await pilot.press("n")
        app.notify("a note from the data: [b]" + "\x1b]0;t\x07\u202eevil", title="\x1b[2J")
        await seen.look(pilot, "a notification")
        assert "a note from the data: [b]␛]0;t␇\ufffdevil" in seen.shown[-1]  # not markup
    assert seen.unsafe == {}, "\n".join(
        f"{where}: {found[0]}" for where, found in seen.unsafe.items()
    )
    assert "Propose a ground-truth expansion" in seen.at["proposal dialog"]
    assert "Ground-truth proposals" in seen.at["proposals"]
    everything = "\n".join(seen.shown)
    assert "␛]0;OWNED␇" in everything and "\ufffdevil" in everything
