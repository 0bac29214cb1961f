"""`gavel bench --serve N`: N browser sessions of ``gavel serve`` deciding at once on one
database — keypress → score on screen over real websockets, and the memory of each session.

The server runs as ``gavel serve`` does, in its own process, on a loopback port, with N
reviewers admitted and the database's reports dealt to them as ``gavel assign --to ...
--overlap 0.2`` would (team review: each queue serves its reviewer's reports first, and a
fifth of the reports is reviewed twice, blind). Each session is driven by
:class:`tui.serve.client.ScriptedSession`, which speaks the page's websocket protocol. Every
session opens its own first report, then confirms the next undecided verdict and undoes it in
turn, a fast reviewer's pause apart: ] goes to the verdict, and a moment later (the reviewer
reads it) enter confirms it; later z undoes it. The deciding key is timed (enter, z), from the
moment it is sent to the arrival of the screen update whose score bar shows that decision (or
its undo); ] is navigation, not part of the figure, but its work is part of the load. After
the run the database must hold every decision and undo that showed on a screen: nothing
acknowledged may be lost. Nothing here is asserted: figures are printed.
"""

from __future__ import annotations

import asyncio
import os
import random
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tui.serve.client import ScriptedSession

DECIDED = rb"(?<!undo )(override|confirm): "
UNDONE = rb"undo (override|confirm): "
PAUSE = 0.3
"""Seconds between one session's timed keypresses (a fast reviewer), jittered by a third."""
READ = 0.1
"""Seconds between ] and the enter that confirms the verdict it went to."""
KEYPRESSES = 30
"""Timed keypresses per session (decisions and undos in turn)."""


@dataclass(frozen=True, slots=True)
class Script:
    keypresses: int
    pause: float


@dataclass
class Drive:
    latencies: list[float] = field(default_factory=list)
    """Seconds from a keypress to the screen update showing it, every session together."""
    acknowledged: dict[str, int] = field(default_factory=dict)
    """Per reviewer, the decisions and undos that showed on their screen."""
    failures: list[str] = field(default_factory=list)
    per_session: dict[str, list[float]] = field(default_factory=dict)
    """Each reviewer's own latencies (the slow tail is usually one session's)."""
    cpu: dict[str, float] = field(default_factory=dict)
    """CPU seconds spent while the keys were timed: the sessions, the server, this client."""


def serve_figures(
    db: Path, sessions: int, root: Path, keypresses: int = KEYPRESSES, pause: float = PAUSE
) -> list[dict[str, Any]]:
    """The serve stage's figures, as the harness prints them (name, value, unit, baseline,
    target, met)."""
    from tui.serve.accounts import Accounts

    if not db.is_file():
        raise FileNotFoundError(db)
    work = Path(tempfile.mkdtemp(prefix="serve-", dir=root))
    copy = work / "serve.db"
    _copy(db, copy)
    accounts = Accounts(work / "accounts")
    tokens = {f"bench{i + 1}": accounts.add(f"bench{i + 1}") for i in range(sessions)}
    _deal(copy, list(tokens))
    port = _free_port()
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tui.cli",
            "serve",
            "--db",
            str(copy),
            "--accounts",
            str(accounts.folder),
            "--port",
            str(port),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd=Path(__file__).resolve().parents[2],
    )
    try:
        _wait_for_port(port, server)
        drive = Drive()
        memory: list[float] = []
        base = f"http://127.0.0.1:{port}"
        plan = Script(keypresses, pause)
        asyncio.run(_drive_all(base, tokens, plan, drive, server.pid, memory))
    finally:
        server.terminate()
        try:
            server.wait(30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
    stored = _stored(copy, list(tokens))
    lost = sum(max(0, drive.acknowledged.get(name, 0) - stored.get(name, 0)) for name in tokens)
    return _figures(sessions, pause, drive, memory, lost)


OVERLAP = 0.2
"""Share of the reports the bench deals to two reviewers."""


def _deal(db: Path, reviewers: list[str]) -> None:
    """Every report to the bench's reviewers, a share of them to two (as a lead would).

    The first reports (one each) are dealt alone, so that each session's first report is its
    own: two reviewers on one overlap report change what the other sees as they go (once
    both decided a subject), and a scripted enter would then meet a verdict just decided."""
    from store.assignments.hand_out import hand_out, report_targets
    from store.db.connection import connect
    from store.reviewlog.events import ReviewLog

    conn = connect(db)
    try:
        ids = [int(rid) for (rid,) in conn.execute("SELECT id FROM report ORDER BY id")]
        lead = ReviewLog(conn, "bench-lead")
        first, rest = ids[: len(reviewers)], ids[len(reviewers) :]
        hand_out(conn, lead, report_targets(conn, first), reviewers, 0.0)
        overlap = OVERLAP if len(reviewers) > 1 else 0.0
        hand_out(conn, lead, report_targets(conn, rest), reviewers, overlap, seed=1)
    finally:
        conn.close()


def _figures(
    sessions: int, pause: float, drive: Drive, memory: list[float], lost: int
) -> list[dict[str, Any]]:
    times = drive.latencies
    p95 = _p95(times) * 1000 if times else float("nan")
    p50 = statistics.median(times) * 1000 if times else float("nan")
    figures: list[dict[str, Any]] = [
        {
            "name": f"serve: keypress → score on screen, p95 ({sessions} sessions deciding "
            f"at once, a key every {pause:g} s each, {len(times):,} keypresses)",
            "value": p95,
            "unit": "ms",
            "baseline_name": "median",
            "baseline": p50,
            "target": "p95 < 150 ms",
            "met": bool(times) and p95 < 150 and not drive.failures,
        },
        {
            "name": "serve: memory per session (RSS of each workstation process, mean)",
            "value": statistics.mean(memory) if memory else float("nan"),
            "unit": "MB",
            "baseline_name": "largest session",
            "baseline": max(memory) if memory else None,
            "target": "measured, no target",
            "met": None,
        },
        {
            "name": "serve: acknowledged decisions and undos missing from the database",
            "value": float(lost),
            "unit": "events",
            "baseline_name": "acknowledged",
            "baseline": float(sum(drive.acknowledged.values())),
            "target": "0",
            "met": lost == 0 and not drive.failures,
        },
    ]
    figures += _diagnostics(drive)
    if drive.failures:
        figures.append(
            {
                "name": "serve: sessions that failed — " + "; ".join(drive.failures[:3]),
                "value": float(len(drive.failures)),
                "unit": "sessions",
                "baseline_name": "—",
                "baseline": None,
                "target": "0",
                "met": False,
            }
        )
    return figures


def _diagnostics(drive: Drive) -> list[dict[str, Any]]:
    """Where the time goes: the slowest session's tail beside the typical one's, and the CPU
    a keypress costs in every process (on two cores the sum is what queues)."""
    if not drive.latencies:
        return []
    tails = {name: _p95(times) * 1000 for name, times in drive.per_session.items() if times}
    slowest = max(tails, key=tails.__getitem__)
    keys = len(drive.latencies)
    cpu = {part: seconds * 1000 / keys for part, seconds in drive.cpu.items()}
    return [
        {
            "name": f"serve: slowest session's p95 ({slowest})",
            "value": tails[slowest],
            "unit": "ms",
            "baseline_name": "median session's p95",
            "baseline": statistics.median(tails.values()),
            "target": "measured, no target",
            "met": None,
        },
        {
            "name": "serve: CPU per keypress, every process ("
            + ", ".join(f"{part} {ms:.1f} ms" for part, ms in cpu.items())
            + ")",
            "value": sum(cpu.values()),
            "unit": "ms",
            "baseline_name": "wall time per keypress × cores",
            "baseline": None,
            "target": "measured, no target",
            "met": None,
        },
    ]


def _p95(times: list[float]) -> float:
    ordered = sorted(times)
    return ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]


async def _drive_all(
    base: str,
    tokens: dict[str, str],
    plan: Script,
    drive: Drive,
    server_pid: int,
    memory: list[float],
) -> None:
    ready, go, finished = (asyncio.Barrier(len(tokens) + 1) for _ in range(3))
    tasks = [
        asyncio.create_task(
            _session(base, name, token, position, plan, (ready, go, finished), drive)
        )
        for position, (name, token) in enumerate(tokens.items())
    ]
    try:
        await asyncio.wait_for(ready.wait(), 600)
    except TimeoutError:
        drive.failures.append("sessions not ready within 600 s")
    memory.extend(_session_rss(server_pid))
    await _settle(server_pid)
    await go.wait()
    sessions_before, server_before = _cpu_of_children(server_pid), _cpu_of(server_pid)
    client_before = time.process_time()
    await finished.wait()  # every session still open: its process still counts
    drive.cpu = {
        "sessions": _cpu_of_children(server_pid) - sessions_before,
        "server": _cpu_of(server_pid) - server_before,
        "client": time.process_time() - client_before,
    }
    await asyncio.gather(*tasks, return_exceptions=True)


QUIET = 0.1
"""CPU seconds per second, all sessions together, below which they have settled."""


async def _settle(server_pid: int, limit: float = 60.0) -> None:
    """Wait until the sessions are idle: each opened its report just now, and work it starts
    in the background (the queue's noise bands, an import the judge runs screen needs) would
    otherwise land on the first keypresses of all ten at once, which no team starting at
    different times sees."""
    deadline = time.monotonic() + limit
    before = _cpu_of_children(server_pid)
    while time.monotonic() < deadline:
        await asyncio.sleep(1.0)
        now = _cpu_of_children(server_pid)
        if now - before < QUIET:
            return
        before = now


async def _session(
    base: str,
    name: str,
    token: str,
    position: int,
    plan: Script,
    barriers: tuple[asyncio.Barrier, asyncio.Barrier, asyncio.Barrier],
    drive: Drive,
) -> None:
    ready, go, finished = barriers
    session = ScriptedSession(base, width=160, height=48)
    rng = random.Random(position)
    try:
        await session.sign_in(name, token)
        await session.open()
        await session.wait_for(rb"judgments decided", 300)
        # The queue serves the reviewer's own reports first: the first row is theirs.
        await _until_shown(session, "\r", rb"report \S+ \(1/")
        await asyncio.sleep(1.0)
    except Exception as exc:  # a session that never got going is a figure, not a crash
        drive.failures.append(f"{name}: {exc}")
        await ready.wait()
        await go.wait()
        await finished.wait()
        await session.close()
        return
    await ready.wait()
    await go.wait()
    try:
        for n in range(plan.keypresses):
            wait = plan.pause * rng.uniform(0.67, 1.33)
            # The next undecided verdict, confirmed (an override would ask for a rationale);
            # then its undo.
            if n % 2 == 0:
                await asyncio.sleep(max(0.0, wait - READ))
                await session.press("]")
                await asyncio.sleep(min(READ, wait))
            else:
                await asyncio.sleep(wait)
            session.skip()
            sent = await session.press("\r" if n % 2 == 0 else "z")
            shown = await session.wait_for(DECIDED if n % 2 == 0 else UNDONE, 30)
            drive.latencies.append(shown - sent)
            drive.per_session.setdefault(name, []).append(shown - sent)
            drive.acknowledged[name] = drive.acknowledged.get(name, 0) + 1
    except Exception as exc:
        drive.failures.append(f"{name}: {exc}")
    finally:
        await finished.wait()
        await session.close()


async def _until_shown(session: ScriptedSession, key: str, pattern: bytes) -> None:
    """Press ``key`` until ``pattern`` shows: a queue still filling may miss a key. Each
    press waits long for its effect: every session opens the first report on its way to its
    own, and an extra enter there confirms a verdict on the report the first session
    decides on, which then (rightly) says "already decided" to that session's enter."""
    for _ in range(10):
        await session.press(key)
        try:
            await session.wait_for(pattern, 30)
            return
        except TimeoutError:
            continue
    raise TimeoutError(f"{pattern!r} never showed")


def _session_rss(server_pid: int) -> list[float]:
    """Resident memory of each process the server started (one per session), in MB."""
    sizes = []
    for pid in _children(server_pid):
        try:
            with open(f"/proc/{pid}/status", encoding="ascii") as status:
                for line in status:
                    if line.startswith("VmRSS:"):
                        sizes.append(int(line.split()[1]) / 1024)
        except OSError:
            continue
    return sizes


def _cpu_of(pid: int) -> float:
    """User and system CPU seconds of one process (0 once it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _cpu_of_children(pid: int) -> float:
    return sum(_cpu_of(child) for child in _children(pid))


def _children(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            found += [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            continue
    return found


def _stored(db: Path, reviewers: list[str]) -> dict[str, int]:
    conn = sqlite3.connect(db)
    try:
        return {
            str(name): int(count)
            for name, count in conn.execute(
                f"""SELECT reviewer, count(*) FROM review_event
                    WHERE reviewer IN ({",".join("?" * len(reviewers))})
                      AND action IN ('confirm', 'override', 'undo')
                    GROUP BY reviewer""",
                reviewers,
            )
        }
    finally:
        conn.close()


def _copy(source: Path, target: Path) -> None:
    src = sqlite3.connect(source)
    dst = sqlite3.connect(target)
    try:
        src.backup(dst)
    finally:
        src.close()
        dst.close()


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _wait_for_port(port: int, server: subprocess.Popen[bytes]) -> None:
    """(The server fills the impacts first: a large run takes a while.)"""
    deadline = time.monotonic() + 1800
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"gavel serve exited with {server.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError("gavel serve did not start listening")


if __name__ == "__main__":  # python -m tui.bench.serve DB N: this stage alone
    with tempfile.TemporaryDirectory(prefix="gavel-serve-bench-") as scratch:
        pause = float(sys.argv[3]) if len(sys.argv) > 3 else PAUSE
        keys = int(sys.argv[4]) if len(sys.argv) > 4 else KEYPRESSES
        db, sessions = Path(sys.argv[1]), int(sys.argv[2])
        for figure in serve_figures(db, sessions, Path(scratch), keys, pause):
            print(figure)
