"""``gavel serve``: the workstation in a browser, every session signed in and run as its
reviewer with that reviewer's signing key. A real browser (Debian's chromium and
chromium-driver, driven by selenium) signs in, opens a report and decides; the scripted client
checks the rest over the same websocket the page uses. Tests that need the browser skip, saying
why, where it is not installed (.ci/run installs it)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import shlex
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from reviewer.identity import verify
from store.reviewlog.identity import load_identity
from tests.pg import free_port
from tui.cli import main
from tui.serve.accounts import Accounts, accounts_dir
from tui.serve.client import ScriptedSession, SignInRefused
from tui.serve.server import GavelServer

DECIDED = rb"(?<!undo )(override|confirm): "
UNDONE = rb"undo (override|confirm): "


class Served:
    def __init__(self, db: Path, process: subprocess.Popen[bytes], port: int) -> None:
        self.db = db
        self.process = process
        self.base = f"http://127.0.0.1:{port}"
        self.accounts = Accounts(accounts_dir(db))
        self.tokens: dict[str, str] = {}

    def events(self, reviewer: str) -> list[dict[str, object]]:
        conn = sqlite3.connect(self.db)
        conn.row_factory = sqlite3.Row
        try:
            return [
                dict(row)
                for row in conn.execute(
                    "SELECT * FROM review_event WHERE reviewer = ? ORDER BY seq", (reviewer,)
                )
            ]
        finally:
            conn.close()


def start_server(db: Path, tokens: dict[str, str]) -> Served:
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "tui.cli", "serve", "--db", str(db), "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 30
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            break
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                err = process.stderr.read().decode() if process.stderr else ""
                raise AssertionError(err) from None
            time.sleep(0.1)
    served = Served(db, process, port)
    served.tokens = tokens
    return served


def stop(served: Served) -> None:
    if served.process.poll() is None:
        served.process.send_signal(signal.SIGINT)
        try:
            served.process.wait(15)
        except subprocess.TimeoutExpired:
            served.process.kill()
            served.process.wait()


def admit(db: Path) -> dict[str, str]:
    accounts = Accounts(accounts_dir(db))
    tokens = {name: accounts.add(name) for name in ("maria", "o'neil")}
    accounts.add("gone", days=0)  # expired the moment it was made
    return tokens


@pytest.fixture
def served(sample_db: Path) -> Iterator[Served]:
    server = start_server(sample_db, admit(sample_db))
    yield server
    stop(server)


def get(url: str, data: bytes | None = None, headers: dict[str, str] | None = None):  # type: ignore[no-untyped-def]
    """(status, body, headers) without following redirects."""

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args: object, **kwargs: object) -> None:
            return None

    opener = urllib.request.build_opener(NoRedirect)
    request = urllib.request.Request(url, data=data, headers=headers or {})
    try:
        with opener.open(request, timeout=10) as response:
            return response.status, response.read().decode(), response.headers
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode(), error.headers


# -- accounts ------------------------------------------------------------------------------


def test_accounts_keep_only_a_hash_give_each_reviewer_a_key_and_expire(tmp_path: Path) -> None:
    accounts = Accounts(tmp_path / "acc")
    token = accounts.add("maria")
    other = accounts.add("ben")
    stored = (tmp_path / "acc" / "accounts.json").read_text()
    assert token not in stored and other not in stored
    assert oct((tmp_path / "acc" / "accounts.json").stat().st_mode & 0o777) == "0o600"
    assert accounts.verify("maria", token) and not accounts.verify("maria", other)
    assert not accounts.verify("nobody", token)
    assert accounts.key_path("maria") != accounts.key_path("ben")
    assert (
        load_identity("maria", accounts.key_path("maria")).public_key
        != load_identity("ben", accounts.key_path("ben")).public_key
    )
    again = accounts.add("maria")  # a new token replaces the old one
    assert accounts.verify("maria", again) and not accounts.verify("maria", token)
    expired = accounts.add("late", days=0)
    assert not accounts.verify("late", expired)
    assert accounts.remove("maria") and not accounts.verify("maria", again)


def test_add_reviewer_refuses_a_name_with_control_characters(
    sample_db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["serve", "add-reviewer", "ma\x1b[2Jria", "--db", str(sample_db)]) == 2
    assert "control characters" in capsys.readouterr().err
    assert main(["serve", "add-reviewer", "maria", "--db", str(sample_db)]) == 0
    token = capsys.readouterr().out.strip()
    assert Accounts(accounts_dir(sample_db)).verify("maria", token)
    assert main(["serve", "reviewers", "--db", str(sample_db)]) == 0
    assert capsys.readouterr().out.startswith("maria\texpires ")


def test_serve_refuses_to_start_with_nobody_to_admit(
    sample_db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["serve", "--db", str(sample_db)]) == 2
    assert "add-reviewer" in capsys.readouterr().err


def test_each_session_runs_as_its_reviewer_with_their_key(tmp_path: Path) -> None:
    accounts = Accounts(tmp_path / "acc")
    name = "o'neil; rm -rf ~ $(id) `id`"
    accounts.add(name)
    server = GavelServer(tmp_path / "g.db", accounts)
    words = shlex.split(server.command(name))
    assert words[0] == f"GAVEL_IDENTITY={accounts.key_path(name)}"
    assert words[1:7] == ["exec", sys.executable, "-m", "tui.cli", "serve", "session"]
    assert words[words.index("--reviewer") + 1] == name


def test_a_sessions_errors_go_to_its_log_and_the_server_names_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tui.serve.server import _report_ended

    accounts = Accounts(tmp_path / "acc")
    accounts.add("maria")
    server = GavelServer(tmp_path / "missing" / "g.db", accounts)
    log = server.session_log(1)
    assert log.parent == tmp_path / "acc" / "logs"
    done = subprocess.run(
        ["sh", "-c", server.command("maria", log)], stdin=subprocess.DEVNULL, check=False
    )
    assert done.returncode != 0 and "cannot be opened" in log.read_text()
    _report_ended("maria", log, ended_by_session=True)
    said = capsys.readouterr().err
    assert "'maria' ended by itself" in said and str(log) in said and log.exists()
    clean = server.session_log(2)
    clean.touch()
    _report_ended("maria", clean, ended_by_session=False)  # the browser left: nothing to say
    assert capsys.readouterr().err == "" and not clean.exists()


# -- over HTTP -----------------------------------------------------------------------------


def test_an_unauthenticated_request_gets_nothing_but_the_login_page(served: Served) -> None:
    status, body, _ = get(served.base + "/")
    assert status == 200 and 'name="token"' in body
    assert "textual.js" not in body and "/ws" not in body
    for path in ("/static/js/textual.js", "/ws", "/download/x", "/static/../server.py"):
        status, body, _ = get(served.base + path)
        assert status in (403, 404) and "textual" not in body


def test_a_wrong_or_expired_token_is_refused_with_no_detail(served: Served) -> None:
    answers = []
    for name, token in (
        ("maria", "wrong"),
        ("nobody", served.tokens["maria"]),
        ("gone", "anything"),
        ("maria", ""),
    ):
        form = f"name={name}&token={token}".encode()
        status, body, headers = get(served.base + "/login", form)
        assert status == 403 and "Set-Cookie" not in headers
        answers.append(body)
    assert len(set(answers)) == 1 and "Not accepted." in answers[0]
    status, _, headers = get(
        served.base + "/login",
        f"name=maria&token={served.tokens['maria']}".encode(),
        {"Origin": "http://evil.example"},
    )
    assert status == 403 and "Set-Cookie" not in headers


def test_two_sessions_of_one_reviewer_both_work_and_see_each_other(served: Served) -> None:
    async def scenario() -> None:
        first, second = ScriptedSession(served.base), ScriptedSession(served.base)
        for session in (first, second):
            await session.sign_in("maria", served.tokens["maria"])
            await session.open()
            await session.wait_for(rb"judgments decided", 60)
        await first.press("\r")
        await first.wait_for(rb"reviewer maria", 30)
        await first.wait_for(rb"Effective: ", 30)  # the verdict list is up
        first.skip()
        await first.press("\r")  # confirms (an override would open the rationale editor)
        await first.wait_for(DECIDED, 30)
        # The second session undoes the decision the first one made: it sees it as maria's.
        await second.press("\r")
        await second.wait_for(rb"Effective: ", 30)  # the verdict list is up
        second.skip()
        await second.press("z")
        await second.wait_for(UNDONE, 30)
        for session in (first, second):
            await session.close()
        with pytest.raises(SignInRefused):
            await ScriptedSession(served.base).sign_in("maria", "wrong")

    asyncio.run(scenario())
    actions = [e["action"] for e in served.events("maria")]
    assert actions[-2:] in (["override", "undo"], ["confirm", "undo"])
    key = load_identity("maria", served.accounts.key_path("maria")).public_key
    assert {e["key"] for e in served.events("maria")} == {key}


def test_a_server_killed_mid_session_loses_no_acknowledged_decision(sample_db: Path) -> None:
    server = start_server(sample_db, admit(sample_db))

    async def scenario() -> None:
        session = ScriptedSession(server.base)
        await session.sign_in("o'neil", server.tokens["o'neil"])
        await session.open()
        await session.wait_for(rb"judgments decided", 60)
        await session.press("\r")
        await session.wait_for(rb"Effective: ", 30)  # the verdict list is up
        session.skip()
        await session.press("\r")  # confirms (an override would open the rationale editor)
        await session.wait_for(DECIDED, 30)  # on screen: acknowledged
        sessions.extend(_children(server.process.pid))
        server.process.kill()  # no goodbye: the server and its sessions' parent die
        server.process.wait()
        await session.close()

    sessions: list[int] = []

    try:
        asyncio.run(scenario())
    finally:
        stop(server)
    decided = [e for e in server.events("o'neil") if e["action"] in ("override", "confirm")]
    assert len(decided) == 1 and verify(decided[0])
    # The orphaned session ends too, rather than run on with nobody to see it.
    assert sessions
    deadline = time.monotonic() + 20
    while any(Path(f"/proc/{pid}").exists() for pid in sessions):
        assert time.monotonic() < deadline, "a session outlived its server"
        time.sleep(0.2)


def test_a_stopped_server_waits_for_its_sessions_to_end(sample_db: Path) -> None:
    server = start_server(sample_db, admit(sample_db))

    async def scenario() -> None:
        session = ScriptedSession(server.base)
        await session.sign_in("maria", server.tokens["maria"])
        await session.open()
        await session.wait_for(rb"judgments decided", 60)
        sessions.extend(_children(server.process.pid))
        stop(server)  # ctrl+c
        await session.close()

    sessions: list[int] = []
    try:
        asyncio.run(scenario())
    finally:
        stop(server)
    assert sessions and server.process.returncode is not None
    # Ended before the server did (an orphan would live on until it noticed its parent gone).
    assert not [pid for pid in sessions if Path(f"/proc/{pid}").exists()]


def test_a_stopped_server_waits_for_its_sessions_a_bounded_while(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from tui.serve import server as module

    class Session:
        def __init__(self, delay: float) -> None:
            self.delay, self.ended = delay, False

        async def stop(self) -> None:
            await asyncio.sleep(self.delay)
            self.ended = True

    monkeypatch.setattr(module, "STOP_WAIT", 0.5)
    server = GavelServer(tmp_path / "g.db", Accounts(tmp_path / "acc"))
    quick, stuck = Session(0.1), Session(60)
    server.services = {quick, stuck}  # type: ignore[arg-type]
    started = time.monotonic()
    asyncio.run(server._stop_all(None))  # type: ignore[arg-type]
    assert time.monotonic() - started < 5
    assert quick.ended and not stuck.ended
    assert "1 session(s) did not end" in capsys.readouterr().err


def _children(pid: int) -> list[int]:
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        found += [int(c) for c in (task / "children").read_text().split()]
    return found


# -- in a real browser ---------------------------------------------------------------------


def _browser():  # type: ignore[no-untyped-def]
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    if not chromium or not driver:
        pytest.skip("chromium and chromedriver are not installed (.ci/run installs them)")
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        pytest.skip("selenium is not installed (pip install -e '.[test]')")
    options = webdriver.ChromeOptions()
    for argument in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--window-size=1400,900",
    ):
        options.add_argument(argument)
    options.binary_location = chromium
    return webdriver.Chrome(options=options, service=Service(driver))


def _body_class(browser: Any) -> str:
    """The page's body class, or "" while the sign-in navigates: the body found may be
    replaced before its attribute is read."""
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.common.by import By

    try:
        return browser.find_element(By.TAG_NAME, "body").get_attribute("class") or ""
    except StaleElementReferenceException:
        return ""


def test_in_a_browser_a_reviewer_signs_in_and_decides(
    served: Served, capsys: pytest.CaptureFixture[str]
) -> None:
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    browser = _browser()
    try:
        browser.get(served.base + "/")
        assert browser.find_elements(By.ID, "token") and not browser.find_elements(
            By.ID, "terminal"
        )
        browser.find_element(By.ID, "name").send_keys("maria")
        browser.find_element(By.ID, "token").send_keys("not the token")
        browser.find_element(By.ID, "sign-in").click()
        refused_by = time.monotonic() + 20  # the refusal comes after a pause
        while "Not accepted." not in browser.page_source:
            assert time.monotonic() < refused_by, "a wrong token was not refused"
            time.sleep(0.1)
        browser.find_element(By.ID, "name").send_keys("maria")
        browser.find_element(By.ID, "token").send_keys(served.tokens["maria"])
        browser.find_element(By.ID, "sign-in").click()
        deadline = time.monotonic() + 60
        while "-first-byte" not in _body_class(browser):
            assert time.monotonic() < deadline, "the workstation never drew"
            time.sleep(0.2)
        browser.find_element(By.ID, "terminal").click()
        # enter opens the first report once the queue is there, then confirms its first
        # verdict: pressed until the decision is stored.
        while not [e for e in served.events("maria") if e["action"] == "confirm"]:
            assert time.monotonic() < deadline + 60, "no decision reached the database"
            # (focus the terminal each time: a click before it was ready may have missed, and
            # the page redraws its terminal element as the session starts)
            with contextlib.suppress(StaleElementReferenceException):
                browser.find_element(By.ID, "terminal").click()
            ActionChains(browser).send_keys(Keys.ENTER).perform()
            time.sleep(1.0)
        browser.save_screenshot(str(served.db.with_name("browser.png")))
        browser.delete_all_cookies()
        browser.get(served.base + "/")
        assert browser.find_elements(By.ID, "token")  # signed out: the login page only
    finally:
        browser.quit()
    errors = {p.name: p.read_text() for p in (served.accounts.folder / "logs").glob("*.log")}
    assert not {name: text for name, text in errors.items() if text}, errors
    # (On a busy machine an enter pressed while the first confirm was being stored confirms
    # the next verdict too: every one must be maria's, signed with her key.)
    confirmed = [e for e in served.events("maria") if e["action"] == "confirm"]
    key = load_identity("maria", served.accounts.key_path("maria")).public_key
    assert confirmed and all(e["key"] == key and verify(e) for e in confirmed)
    capsys.readouterr()
    assert main(["log", "export", "--db", str(served.db)]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line]
    exported = {e["uuid"] for e in lines if e["reviewer"] == "maria"}
    assert {e["uuid"] for e in confirmed} <= exported


def test_the_serve_bench_stage_drives_sessions_and_loses_nothing(
    sample_db: Path, tmp_path: Path
) -> None:
    from tui.bench.serve import serve_figures

    figures = {f["name"].split(" (")[0]: f for f in serve_figures(sample_db, 2, tmp_path, 4)}
    assert not [name for name in figures if "failed" in name], figures
    latency = figures["serve: keypress → score on screen, p95"]
    assert latency["value"] > 0 and latency["baseline"] <= latency["value"]
    lost = figures["serve: acknowledged decisions and undos missing from the database"]
    assert lost["value"] == 0 and lost["baseline"] == 8 and lost["met"]
    memory = figures["serve: memory per session"]
    assert memory["value"] > 20
    slowest = next(f for name, f in figures.items() if name.startswith("serve: slowest"))
    assert re.search(r"\(bench[12]\)", slowest["name"])
    assert slowest["value"] >= slowest["baseline"] > 0
    cpu = next(f for name, f in figures.items() if name.startswith("serve: CPU per keypress"))
    parts = dict(re.findall(r"(sessions|server|client) ([0-9.]+) ms", cpu["name"]))
    assert set(parts) == {"sessions", "server", "client"}
    assert float(parts["sessions"]) > 0
    assert cpu["value"] == pytest.approx(sum(map(float, parts.values())), abs=0.2)


async def test_a_scripted_session_times_a_match_by_the_update_that_brought_it() -> None:
    """Not by when the waiting task woke: with ten sessions in one client, that would add
    the client's own queueing to every figure."""
    from tui.serve.client import ScriptedSession

    session = ScriptedSession("http://127.0.0.1:9")
    for at, chunk in ((1.0, b"queue "), (2.0, b"report \x1b[1mt01 "), (3.0, b"confirm: 0.5 ")):
        session.received(chunk, at)
    assert b"\x1b" not in session.screen
    assert await session.wait_for(rb"report \S+", 1) == 2.0
    assert await session.wait_for(rb"confirm: ", 1) == 3.0
    with pytest.raises(TimeoutError):
        await session.wait_for(rb"report", 0.01)  # the mark moved past what was seen


# -- the session itself --------------------------------------------------------------------


async def test_an_enter_typed_ahead_opens_one_report_and_the_session_lives_on(
    sample_db: Path,
) -> None:
    """A busy machine behind a browser delivers keys in bursts: two enters can both reach the
    queue's table before the first one's report is up. The second must not push another
    report screen (two screens with one id raised an exception that ended the session,
    'Session ended' in the browser)."""
    from textual.widgets import DataTable

    from tests.tui_helpers import make_app, ready
    from tui.screens.report import ReportScreen

    app = make_app(sample_db)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        table = app.queue_screen.query_one(DataTable)
        row = table.coordinate_to_cell_key(table.cursor_coordinate).row_key
        for _ in range(2):  # both selections queued before either is handled
            table.post_message(DataTable.RowSelected(table, table.cursor_row, row))
        await pilot.pause()
        await pilot.pause()
        assert app.is_running and app.return_code is None
        assert sum(isinstance(s, ReportScreen) for s in app.screen_stack) == 1


async def test_a_click_on_a_widget_just_taken_off_the_screen_does_not_end_the_session(
    sample_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a busy machine the screen's map can still place a widget a refresh has removed;
    Textual's text selection then failed on the widget's missing parent and the exception
    ended the session. The click is dropped; the next one works."""
    from textual import events
    from textual.geometry import Offset
    from textual.widgets import Static

    from tests.tui_helpers import make_app, ready

    app = make_app(sample_db)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        gone = Static("replaced")
        await app.screen.mount(gone)
        await gone.remove()
        assert gone.parent is None
        screen = app.screen
        monkeypatch.setattr(  # the map as it stands before the next layout
            screen, "get_widget_and_offset_at", lambda x, y: (gone, Offset(1, 0))
        )
        click = {"x": 5, "y": 5, "delta_x": 0, "delta_y": 0, "button": 1}
        click.update(shift=False, meta=False, ctrl=False)
        app.post_message(events.MouseDown(None, **click))  # type: ignore[arg-type]
        await pilot.pause()
        await pilot.pause()
        assert app.is_running and app.return_code is None
        monkeypatch.undo()
        await pilot.click(offset=(5, 5))
        assert app.is_running and app.return_code is None
