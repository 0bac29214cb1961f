"""The ``gavel serve`` web server: textual-serve's sessions behind a login.

textual-serve runs one process of the app per browser connection and relays its screen over a
websocket; it authenticates nobody. Here every request but the login form needs a session
cookie, given only for a reviewer's name with their token or password
(:mod:`tui.serve.accounts`); the page, its scripts, the websocket and downloads all refuse
without one, and an unauthenticated visit to ``/`` gets the login page and nothing else. A
session holds only while the credential it signed in with does: once the reviewer is reset or
removed, their sessions are refused and their open workstations closed. Each websocket starts
the workstation as the signed-in reviewer, with that reviewer's signing key
(``$GAVEL_IDENTITY``), never as whoever started the server.

A decision is committed before the workstation shows it, so a server killed mid-session loses
nothing acknowledged; two sessions of one reviewer are two workstations on one database, which
see each other's decisions as any two do.
"""

from __future__ import annotations

import asyncio
import secrets
import shlex
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from tui.serve.pages import login_page, workstation_page

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from aiohttp import web
    from textual_serve.app_service import AppService

    from tui.serve.accounts import Accounts

COOKIE = "gavel_session"
STOP_WAIT = 10.0
"""Seconds a stopped server waits for its sessions to end."""
REFUSAL_PAUSE = 0.5
"""Seconds a refused login waits before its answer: guessing tokens stays slow."""
REVOKED_CHECK = 1.0
"""Seconds between two looks, by an idle open workstation, at whether its reviewer's
credential still stands (every key pressed looks as well)."""


@dataclass(frozen=True, slots=True)
class Session:
    reviewer: str
    expires: float
    credential: str
    """The token or password it signed in with (:meth:`Accounts.credential`)."""


class GavelServer:
    def __init__(
        self,
        db: Path,
        accounts: Accounts,
        *,
        host: str = "127.0.0.1",
        port: int = 8000,
        public_url: str | None = None,
        session_hours: float = 12.0,
        font_size: int = 16,
    ) -> None:
        self.db = db.resolve()
        self.accounts = accounts
        self.host = host
        self.port = port
        self.public_url = public_url.rstrip("/") if public_url else None
        self.session_seconds = session_hours * 3600
        self.font_size = font_size
        self.sessions: dict[str, Session] = {}
        self.services: set[AppService] = set()
        self.started = 0
        """Workstation sessions started (the bench and the tests read it)."""

    # -- the application ---------------------------------------------------------------------

    def application(self) -> web.Application:
        from aiohttp import web

        async def guard(
            request: web.Request,
            handler: Callable[[web.Request], Awaitable[web.StreamResponse]],
        ) -> web.StreamResponse:
            return await self._guard(request, handler)

        app = web.Application(middlewares=[web.middleware(guard)])
        app.add_routes(
            [
                web.get("/login", self.login_form),
                web.post("/login", self.login),
                web.post("/logout", self.logout),
                web.get("/", self.index),
                web.get("/ws", self.websocket),
                web.get("/static/{path:.+}", self.static),
            ]
        )
        app.on_shutdown.append(self._stop_all)
        return app

    def run(self) -> None:
        from aiohttp import web

        web.run_app(self.application(), host=self.host, port=self.port, print=None)

    async def _guard(
        self, request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
    ) -> web.StreamResponse:
        """Everything but the login form needs a live session; ``/`` without one is the
        login page, anything else a bare 403."""
        from aiohttp import web

        if request.path == "/login":
            return await handler(request)
        session = self._session(request)
        if session is None:
            if request.path == "/":
                return _html(login_page(self._url("/login")))
            raise web.HTTPForbidden(text="sign in first")
        request["reviewer"] = session.reviewer
        return await handler(request)

    def _session(self, request: web.Request) -> Session | None:
        sid = request.cookies.get(COOKIE, "")
        session = self.sessions.get(sid)
        if session is None:
            return None
        if session.expires < time.time() or not self._stands(session):
            self.sessions.pop(sid, None)
            return None
        request["session"] = session
        return session

    def _stands(self, session: Session) -> bool:
        """Whether the token or password the session signed in with is still its
        reviewer's (not reset, not removed)."""
        return self.accounts.credential(session.reviewer) == session.credential

    # -- signing in ----------------------------------------------------------------------------

    async def login_form(self, request: web.Request) -> web.StreamResponse:
        return _html(login_page(self._url("/login")))

    async def login(self, request: web.Request) -> web.StreamResponse:
        from aiohttp import web

        if not self._same_origin(request):
            raise web.HTTPForbidden(text="cross-site sign-in refused")
        form = await request.post()
        name, token = str(form.get("name", "")).strip(), str(form.get("token", ""))
        loop = asyncio.get_running_loop()
        credential = (
            await loop.run_in_executor(None, self.accounts.admit, name, token)
            if name and token
            else None
        )
        if credential is None:
            await asyncio.sleep(REFUSAL_PAUSE)
            return _html(login_page(self._url("/login"), refused=True), status=403)
        sid = secrets.token_urlsafe(32)
        self.sessions[sid] = Session(name, time.time() + self.session_seconds, credential)
        response = web.HTTPSeeOther(self._url("/"))
        response.set_cookie(
            COOKIE,
            sid,
            httponly=True,
            samesite="Strict",
            secure=self._secure(request),
            max_age=int(self.session_seconds),
            path="/",
        )
        raise response

    async def logout(self, request: web.Request) -> web.StreamResponse:
        from aiohttp import web

        self.sessions.pop(request.cookies.get(COOKIE, ""), None)
        response = web.HTTPSeeOther(self._url("/"))
        response.del_cookie(COOKIE, path="/")
        raise response

    # -- the workstation -----------------------------------------------------------------------

    async def index(self, request: web.Request) -> web.StreamResponse:
        font_size = _int(request.query.get("fontsize", ""), self.font_size)
        return _html(
            workstation_page(
                request["reviewer"],
                self._url("/static/"),
                self._websocket_url(request),
                self._url("/"),
                font_size,
            )
        )

    async def static(self, request: web.Request) -> web.StreamResponse:
        from aiohttp import web
        from textual_serve import server as textual_server

        root = (Path(textual_server.__file__).parent / "static").resolve()
        wanted = (root / request.match_info["path"]).resolve()
        if not wanted.is_relative_to(root) or not wanted.is_file():
            raise web.HTTPNotFound()
        return web.FileResponse(wanted)

    async def websocket(self, request: web.Request) -> web.StreamResponse:
        from aiohttp import web

        if not self._same_origin(request):
            raise web.HTTPForbidden(text="cross-site websocket refused")
        from textual_serve.app_service import AppService
        from textual_serve.download_manager import DownloadManager

        socket = web.WebSocketResponse(heartbeat=15)
        await socket.prepare(request)
        width = _int(request.query.get("width", ""), 80)
        height = _int(request.query.get("height", ""), 24)

        ended_by_session = False

        async def close() -> None:
            nonlocal ended_by_session
            ended_by_session = True
            await socket.close()

        self.started += 1
        log = self.session_log(self.started)
        service = AppService(
            self.command(request["reviewer"], log),
            write_bytes=socket.send_bytes,
            write_str=socket.send_str,
            close=close,
            download_manager=DownloadManager(),
        )
        self.services.add(service)
        by_itself = False
        session: Session = request["session"]
        watch = asyncio.ensure_future(self._close_when_revoked(socket, session))
        try:
            await service.start(width, height)
            await _relay(socket, service, lambda: self._stands(session))
            by_itself = ended_by_session  # before stop(), which asks the session to end
        finally:
            watch.cancel()
            await service.stop()
            self.services.discard(service)
            _report_ended(request["reviewer"], log, by_itself)
        return socket

    async def _close_when_revoked(self, socket: web.WebSocketResponse, session: Session) -> None:
        """Close an open workstation, idle or not, once its reviewer's credential is reset
        or removed: what it decided is committed; nothing more is."""
        while not socket.closed:
            await asyncio.sleep(REVOKED_CHECK)
            if not self._stands(session):
                await socket.close(message=b"signed out: the credential was reset or removed")
                return

    def session_log(self, number: int) -> Path:
        """Where a session's standard error goes: textual-serve keeps it in memory and
        prints it only when the session ends, on the server's standard output, so a session
        that failed left no trace where its server's operator looks."""
        folder = self.accounts.folder / "logs"
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        return folder / f"session-{time.strftime('%Y%m%dT%H%M%S')}-{number}.log"

    def command(self, reviewer: str, log: Path | None = None) -> str:
        """The shell command of one session: the workstation as ``reviewer``, signing with
        their own key (names are checked when admitted, and quoted here all the same), its
        standard error appended to ``log``."""
        key = self.accounts.key_path(reviewer)
        errors = f" 2>>{shlex.quote(str(log))}" if log is not None else ""
        return (
            f"GAVEL_IDENTITY={shlex.quote(str(key))} exec {shlex.quote(sys.executable)} "
            f"-m tui.cli serve session --db {shlex.quote(str(self.db))} "
            f"--reviewer {shlex.quote(reviewer)}{errors}"
        )

    async def _stop_all(self, app: web.Application) -> None:
        """A stopped server asks every session to end and waits for them together, a bounded
        while: a session that does not end by then ends on its own once its server has gone
        (:func:`exit_with_parent`); every decision it showed is committed already."""
        stopping = [asyncio.ensure_future(service.stop()) for service in list(self.services)]
        if not stopping:
            return
        _, late = await asyncio.wait(stopping, timeout=STOP_WAIT)
        if late:
            print(
                f"gavel serve: {len(late)} session(s) did not end within {STOP_WAIT:g} s; "
                "they end when the server has gone",
                file=sys.stderr,
                flush=True,
            )

    # -- addresses -----------------------------------------------------------------------------

    def _url(self, path: str) -> str:
        return f"{self.public_url}{path}" if self.public_url else path

    def _websocket_url(self, request: web.Request) -> str:
        base = self.public_url or f"{'https' if self._secure(request) else 'http'}://{request.host}"
        scheme, _, rest = base.partition(":")
        return ("wss:" if scheme == "https" else "ws:") + rest + "/ws"

    def _secure(self, request: web.Request) -> bool:
        if self.public_url:
            return self.public_url.startswith("https:")
        return request.secure

    def _same_origin(self, request: web.Request) -> bool:
        """A browser names the page a request comes from (``Origin``): only this server's own
        pages (or its public address behind a proxy) may sign in or open a session."""
        origin = request.headers.get("Origin")
        if origin is None:
            return True  # not a browser's cross-site request (browsers always send it there)
        allowed = {f"http://{request.host}", f"https://{request.host}"}
        if self.public_url:
            parts = urlsplit(self.public_url)
            allowed.add(f"{parts.scheme}://{parts.netloc}")
        return origin in allowed


def _report_ended(reviewer: str, log: Path, ended_by_session: bool) -> None:
    """A session that wrote errors, or ended on its own rather than because its browser
    left, is named on the server's standard error with its log; a clean log is removed."""
    try:
        written = log.stat().st_size > 0
    except FileNotFoundError:
        written = False
    if not written:
        log.unlink(missing_ok=True)
    if written or ended_by_session:
        how = "ended by itself" if ended_by_session else "closed"
        where = f"; its errors: {log}" if written else ""
        print(
            f"gavel serve: {time.strftime('%H:%M:%S')} the session of {reviewer!r} {how}{where}",
            file=sys.stderr,
            flush=True,
        )


def exit_with_parent(every: float = 1.0) -> None:
    """End this session's process when the server that started it is gone (killed, not
    stopped: a stopped server ends its sessions itself). Every decision shown is already
    committed, so ending then loses nothing acknowledged; an orphaned workstation would
    otherwise run on, holding memory and a database connection, with nobody to see it."""
    import os
    import threading

    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(every)
        os._exit(0)

    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()


async def _relay(
    socket: web.WebSocketResponse, service: AppService, stands: Callable[[], bool]
) -> None:
    """The browser's keys, resizes and focus changes to the session (textual-serve's own
    protocol: a JSON list, its kind first), while the session's credential ``stands``."""
    from aiohttp import web

    async for message in socket:
        if not stands():
            await socket.close(message=b"signed out: the credential was reset or removed")
            return
        if message.type == web.WSMsgType.TEXT:
            envelope: Any = message.json()
            if isinstance(envelope, list) and envelope:
                await _forward(socket, service, envelope[0], envelope[1:2])


async def _forward(
    socket: web.WebSocketResponse, service: AppService, kind: object, rest: list[Any]
) -> None:
    data = rest[0] if rest else None
    if kind == "stdin" and isinstance(data, str):
        if not await service.send_bytes(data.encode("utf-8")):
            await socket.close()  # the session's process is gone: say so, not swallow keys
    elif kind == "resize" and isinstance(data, dict):
        await service.set_terminal_size(_int(data.get("width"), 80), _int(data.get("height"), 24))
    elif kind == "ping":
        await socket.send_json(["pong", data])
    elif kind == "blur":
        await service.blur()
    elif kind == "focus":
        await service.focus()


def _int(value: object, default: int) -> int:
    try:
        return max(1, min(1000, int(str(value))))
    except ValueError:
        return default


def _html(text: str, status: int = 200) -> web.Response:
    from aiohttp import web

    return web.Response(
        text=text,
        status=status,
        content_type="text/html",
        headers={
            "Cache-Control": "no-store",
            "X-Frame-Options": "DENY",
            "Referrer-Policy": "same-origin",
        },
    )
