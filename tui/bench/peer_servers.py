"""The peers of :mod:`tui.bench.peers`: installing each into a venv of its own, starting its
server (in a process group of its own, always stopped again), loading the synthetic run and
timing one decision over its HTTP API.

Written against Label Studio 1.23 (Django; its REST API with a legacy token, enabled by
``LABEL_STUDIO_ENABLE_LEGACY_API_TOKEN``) and Potato 2.12 (Flask; a passwordless login, the
page's ``/updateinstance`` save and the admin dashboard's ``/admin/api/overview``).
"""

from __future__ import annotations

import http.cookiejar
import json
import os
import shutil
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

from tui.bench.peer_data import (
    POTATO_ADMIN_KEY,
    PeerResult,
    ReportTask,
    TreeSampler,
    decision_for,
    label_studio_config,
    label_studio_task,
    potato_config,
    potato_item,
    report_tasks,
)

DECISIONS = 7
"""Decisions timed on each peer, each on another task."""
START_TIMEOUT = 600.0
Say = Callable[[str], None]


class PeerError(Exception):
    """A peer could not be installed, started or driven; the message says why."""


@dataclass(frozen=True, slots=True)
class Peer:
    key: str
    name: str
    package: str
    distribution: str
    """The name ``importlib.metadata`` knows the installed package by."""


def tail(text: str, lines: int = 6) -> str:
    """The last non-empty lines of a command's output, joined into one line."""
    kept = [line.strip() for line in text.splitlines() if line.strip()][-lines:]
    return " | ".join(kept) or "(no output)"


# ---------------------------------------------------------------------------------------------
# Installing


def installed_version(python: Path, distribution: str) -> str | None:
    """The distribution's version in the venv of ``python``; None if it is not there."""
    if not python.exists():
        return None
    done = subprocess.run(
        [
            str(python),
            "-c",
            f"import importlib.metadata as m, sys; print(m.version({distribution!r}))",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    return done.stdout.strip() or None if done.returncode == 0 else None


def ensure_installed(
    package: str, distribution: str, venv: Path, base_python: str, say: Say
) -> tuple[str, float | None]:
    """(the installed version, the seconds the install took; None when the venv already
    had it). Raises :class:`PeerError` with the end of pip's output when it fails."""
    python = venv / "bin" / "python"
    version = installed_version(python, distribution)
    if version is not None:
        return version, None
    shutil.rmtree(venv, ignore_errors=True)
    log = venv.parent / "install.log"
    venv.parent.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    for step, argv in (
        ("venv", [base_python, "-m", "venv", str(venv)]),
        ("pip", [str(python), "-m", "pip", "install", "--disable-pip-version-check", package]),
    ):
        say(f"installing ({step})…")
        try:
            done = subprocess.run(argv, capture_output=True, text=True, check=False)
        except OSError as error:
            raise PeerError(f"{step}: {error}") from error
        with open(log, "a", encoding="utf-8") as out:
            out.write(f"$ {' '.join(argv)}\n{done.stdout}{done.stderr}\n")
        if done.returncode != 0:
            raise PeerError(f"{step} exited {done.returncode}: {tail(done.stderr or done.stdout)}")
    took = time.perf_counter() - started
    version = installed_version(python, distribution)
    if version is None:
        raise PeerError(f"pip installed {package}, but {distribution} is not importable")
    return version, took


# ---------------------------------------------------------------------------------------------
# Servers and HTTP


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    """A server in a process group of its own, its output in ``log``; leaving the ``with``
    block (also by an error or Ctrl-C) stops the whole group: SIGTERM, then SIGKILL."""

    def __init__(self, argv: list[str], cwd: Path, env: dict[str, str], log: Path) -> None:
        self.argv, self.cwd, self.env, self.log = argv, cwd, env, log
        self.proc: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> Server:
        with open(self.log, "wb") as out:
            self.proc = subprocess.Popen(
                self.argv,
                cwd=self.cwd,
                env=self.env,
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
        return self

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def check(self) -> None:
        """Raise :class:`PeerError` (with the end of its log) if the server has exited."""
        assert self.proc is not None
        if self.proc.poll() is not None:
            text = self.log.read_text(encoding="utf-8", errors="replace")
            raise PeerError(f"the server exited ({self.proc.returncode}): {tail(text)}")

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        if self.proc is None:
            return
        for sig, wait in ((signal.SIGTERM, 15.0), (signal.SIGKILL, 5.0)):
            try:
                os.killpg(self.proc.pid, sig)
            except ProcessLookupError:
                break
            try:
                self.proc.wait(wait)
                # The leader is gone; its group may not be: the next signal reaches the rest.
            except subprocess.TimeoutExpired:
                continue
        self.proc.wait()


class Http:
    """JSON over HTTP with cookies, for one server."""

    def __init__(self, base: str, headers: dict[str, str] | None = None) -> None:
        self.base = base
        self.headers = headers or {}
        self.opener = urllib.request.build_opener(
            urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar())
        )

    def request(
        self,
        method: str,
        path: str,
        body: object = None,
        form: bool = False,
        raw: bytes | None = None,
        timeout: float = 600.0,
    ) -> tuple[int, bytes]:
        headers = dict(self.headers)
        data = raw
        if body is not None and form:
            data = urllib.parse.urlencode(body).encode()  # type: ignore[arg-type]
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        elif body is not None:
            data = json.dumps(body).encode()
        if raw is not None or (body is not None and not form):
            headers["Content-Type"] = "application/json"
        req = urllib.request.Request(self.base + path, data=data, headers=headers, method=method)
        try:
            with self.opener.open(req, timeout=timeout) as response:
                return int(response.status), bytes(response.read())
        except urllib.error.HTTPError as error:
            raise PeerError(
                f"{method} {path}: HTTP {error.code}: {error.read()[:300]!r}"
            ) from error

    def json(self, method: str, path: str, body: object = None) -> Any:
        return json.loads(self.request(method, path, body)[1])


def wait_for(
    server: Server, probe: Callable[[], bool], what: str, timeout: float = START_TIMEOUT
) -> None:
    """Call ``probe`` every 50 ms until it is true (connection errors count as not yet)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        server.check()
        try:
            if probe():
                return
        except (OSError, PeerError):
            pass
        time.sleep(0.05)
    raise PeerError(f"{what}: no answer in {timeout:.0f} s")


# ---------------------------------------------------------------------------------------------
# Label Studio

LS_USER = "bench@example.com"
LS_TOKEN = "gavelbench0123456789abcdef0123456789abcd"
LS_CHUNK_BYTES = 64 * 1024 * 1024
"""Import requests stay under Label Studio's 250 MB request limit (DATA_UPLOAD_MAX_MEMORY_SIZE):
one request at 2,550 reports, more at 10×."""


def label_studio_chunks(tasks: Iterator[ReportTask], folder: Path) -> tuple[list[Path], int]:
    """The tasks as Label Studio import files of at most ``LS_CHUNK_BYTES`` each."""
    files: list[Path] = []
    count = 0
    batch: list[str] = []
    size = 0

    def flush() -> None:
        nonlocal batch, size
        if batch:
            path = folder / f"tasks-{len(files):03d}.json"
            path.write_text("[" + ",\n".join(batch) + "]", encoding="utf-8")
            files.append(path)
        batch, size = [], 0

    for task in tasks:
        line = json.dumps(label_studio_task(task), ensure_ascii=False)
        if size + len(line) > LS_CHUNK_BYTES:
            flush()
        batch.append(line)
        size += len(line)
        count += 1
    flush()
    return files, count


def _keeping(tasks: Iterator[ReportTask], kept: list[ReportTask], n: int) -> Iterator[ReportTask]:
    """The tasks, keeping the first ``n`` in ``kept`` on the way."""
    for task in tasks:
        if len(kept) < n:
            kept.append(task)
        yield task


def _measure_label_studio(
    bundle: Path, venv: Path, folder: Path, result: PeerResult, say: Say
) -> None:
    say("writing its tasks…")
    shutil.rmtree(folder / "tasks", ignore_errors=True)
    (folder / "tasks").mkdir(parents=True)
    kept: list[ReportTask] = []
    files, count = label_studio_chunks(
        _keeping(report_tasks(bundle), kept, DECISIONS), folder / "tasks"
    )
    first = kept[0]
    decisions = {t.id: decision_for(t) for t in kept}
    data = folder / "data"
    shutil.rmtree(data, ignore_errors=True)
    data.mkdir()
    port = free_port()
    env = {
        **os.environ,
        "LABEL_STUDIO_BASE_DATA_DIR": str(data),
        "LABEL_STUDIO_USERNAME": LS_USER,
        "LABEL_STUDIO_PASSWORD": "gavel-bench-pass",
        "LABEL_STUDIO_USER_TOKEN": LS_TOKEN,
        "LABEL_STUDIO_ENABLE_LEGACY_API_TOKEN": "true",
        "LABEL_STUDIO_DISABLE_SIGNUP_WITHOUT_LINK": "true",
        "COLLECT_ANALYTICS": "false",
    }
    argv = [
        str(venv / "bin" / "label-studio"),
        "start",
        "--no-browser",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--data-dir",
        str(data),
    ]
    api = Http(f"http://127.0.0.1:{port}", {"Authorization": f"Token {LS_TOKEN}"})

    @contextmanager
    def serving(log: str) -> Iterator[tuple[float, TreeSampler]]:
        """The server started until its API answers: (seconds that took, its sampler)."""
        started = time.perf_counter()
        with Server(argv, folder, env, folder / log) as server, TreeSampler(server.pid) as sampler:
            wait_for(
                server, lambda: api.request("GET", "/api/projects")[0] == 200, "Label Studio's API"
            )
            yield time.perf_counter() - started, sampler

    say("starting its server on a fresh database (migrations)…")
    with serving("server-first.log") as (result.start_s, sampler):
        pass
    first_peak = sampler.peak_mb
    say("starting it again on its migrated database…")
    restarted = time.perf_counter()
    with serving("server.log") as (warm_start, sampler):
        say(f"importing {count:,} tasks…")
        project = api.json(
            "POST",
            "/api/projects",
            {"title": "Gavel peer bench", "label_config": label_studio_config()},
        )
        pid = project["id"]
        for path in files:
            api.request("POST", f"/api/projects/{pid}/import", raw=path.read_bytes())
        listing = api.json("GET", f"/api/tasks?project={pid}&page=1&page_size=1")
        listed = listing["tasks"] if isinstance(listing, dict) else listing
        task = api.json("GET", f"/api/tasks/{listed[0]['id']}")
        result.warm_load_s = time.perf_counter() - restarted
        result.load_s = result.start_s + result.warm_load_s - warm_start
        result.peak_mb = max(first_peak, sampler.peak_mb)
        if task["data"].get("report") != first.markdown:
            raise PeerError("the first task read back is not the first report")
        stats = api.json("GET", f"/api/projects/{pid}")
        if stats.get("task_number") != count:
            result.notes.append(
                f"tasks in the project: {stats.get('task_number')}, expected {count}"
            )
        result.notes.append(
            f"server start alone {result.start_s:.1f} s on a fresh database (migrations "
            f"included), {warm_start:.1f} s on its migrated database; the import and the first "
            f"task {result.warm_load_s - warm_start:.1f} s ({len(files)} import request(s)); "
            "load = the fresh start + the import, measured on a restart"
        )
        say("decisions…")
        listing = api.json("GET", f"/api/tasks?project={pid}&page=1&page_size={DECISIONS}")
        listed = listing["tasks"] if isinstance(listing, dict) else listing
        before = api.json("GET", f"/api/projects/{pid}")
        stored = []
        for item in listed:
            verdict, value = decisions.get(item["data"]["report_id"], ("report", "correct"))
            body = {
                "result": [
                    {
                        "from_name": "decision",
                        "to_name": "report",
                        "type": "choices",
                        "value": {"choices": [value]},
                    },
                    {
                        "from_name": "verdict",
                        "to_name": "report",
                        "type": "textarea",
                        "value": {"text": [verdict]},
                    },
                ]
            }
            posted = time.perf_counter()
            answer = api.json("POST", f"/api/tasks/{item['id']}/annotations/", body)
            result.decision_s.append(time.perf_counter() - posted)
            stored.append((answer, value))
        answer, value = stored[0]
        back = api.json("GET", f"/api/annotations/{answer['id']}")
        result.read_back = any(
            r.get("value", {}).get("choices") == [value] for r in back.get("result", [])
        )
        after = api.json("GET", f"/api/projects/{pid}")
        result.aggregate = _aggregate(
            before, after, ("num_tasks_with_annotations", "total_annotations_number")
        )
        result.notes.append(
            f"decision read back: {'yes' if result.read_back else 'NO'}; "
            "the aggregates are counts of annotated tasks, none is computed "
            "from the chosen value"
        )


def _aggregate(
    before: dict[str, Any], after: dict[str, Any], keys: tuple[str, ...]
) -> tuple[bool, str]:
    changed = [
        f"{k} {before.get(k)} → {after.get(k)}" for k in keys if before.get(k) != after.get(k)
    ]
    if changed:
        return True, "counts only: " + ", ".join(changed)
    return False, "unchanged: " + ", ".join(f"{k} {after.get(k)}" for k in keys)


# ---------------------------------------------------------------------------------------------
# Potato


def _measure_potato(bundle: Path, venv: Path, folder: Path, result: PeerResult, say: Say) -> None:
    say("writing its data file…")
    project = folder / "project"
    shutil.rmtree(project, ignore_errors=True)
    project.mkdir(parents=True)
    tasks: list[tuple[str, tuple[str, str]]] = []
    with open(project / "data.jsonl", "w", encoding="utf-8") as out:
        for task in report_tasks(bundle):
            out.write(json.dumps(potato_item(task), ensure_ascii=False) + "\n")
            if len(tasks) < DECISIONS + 1:
                tasks.append((task.id, decision_for(task)))
    (project / "config.yaml").write_text(potato_config("data.jsonl"), encoding="utf-8")
    port = free_port()
    argv = [
        str(venv / "bin" / "potato"),
        "start",
        "config.yaml",
        "-p",
        str(port),
        "--host",
        "127.0.0.1",
    ]
    web = Http(f"http://127.0.0.1:{port}")
    admin = Http(f"http://127.0.0.1:{port}", {"X-API-Key": POTATO_ADMIN_KEY})
    first = tasks[0][0]
    say("starting its server with the data file…")
    started = time.perf_counter()
    with (
        Server(argv, project, dict(os.environ), folder / "server.log") as server,
        TreeSampler(server.pid) as sampler,
    ):

        def first_page() -> bool:
            status, body = web.request("POST", "/auth", {"email": "bench", "pass": ""}, form=True)
            return status == 200 and f'value="{first}"' in body.decode("utf-8", "replace")

        wait_for(server, first_page, "Potato's first item page")
        result.load_s = time.perf_counter() - started
        result.peak_mb = sampler.peak_mb
        say("decisions…")
        before = admin.json("GET", "/admin/api/overview")["overview"]
        for item, (verdict, value) in tasks[1:]:
            body = {
                "instance_id": item,
                "annotations": {f"decision:{value}": "true", "verdict:text_box": verdict},
            }
            posted = time.perf_counter()
            answer = web.json("POST", "/updateinstance", body)
            took = time.perf_counter() - posted
            if not isinstance(answer, dict) or answer.get("status") != "success":
                raise PeerError(f"/updateinstance answered {str(answer)[:300]}")
            result.decision_s.append(took)
        state = admin.request("GET", "/admin/user_state/bench")[1].decode("utf-8", "replace")
        result.read_back = tasks[1][0] in state and tasks[1][1][1] in state
        after = admin.json("GET", "/admin/api/overview")["overview"]
        result.aggregate = _aggregate(
            before, after, ("items_with_annotations", "total_annotations")
        )
        result.peak_mb = max(result.peak_mb, sampler.peak_mb)
        result.notes.append(
            f"decision read back (admin user state): "
            f"{'yes' if result.read_back else 'NO'}; load is the server's "
            "start with the data file until the first item page answers a "
            "logged-in reviewer; the dashboard's aggregates are counts"
        )


PEERS = (
    Peer("label-studio", "Label Studio", "label-studio", "label-studio"),
    Peer("potato", "Potato", "potato-annotation", "potato-annotation"),
)
_MEASURE = {"label-studio": _measure_label_studio, "potato": _measure_potato}


def measure_peer(peer: Peer, bundle: Path, folder: Path, say: Say, base_python: str) -> PeerResult:
    """Install (or reuse) the peer, measure it, and return the result; a failure is in the
    result's ``error``, never raised (Ctrl-C is)."""
    result = PeerResult(peer.name)
    folder.mkdir(parents=True, exist_ok=True)
    try:
        result.version, result.install_s = ensure_installed(
            peer.package, peer.distribution, folder / "venv", base_python, say
        )
    except PeerError as error:
        result.error = f"could not install: {error}"
        return result
    try:
        _MEASURE[peer.key](bundle, folder / "venv", folder, result, say)
    except PeerError as error:
        result.error = f"could not measure: {error}"
    except Exception as error:  # a peer's surprise never stops the bench (Ctrl-C does)
        result.error = f"could not measure: {type(error).__name__}: {error}"
    return result
