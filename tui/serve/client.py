"""A scripted browser for ``gavel serve``: signs in, opens the websocket textual-serve's page
opens, types keys and waits for text on the screen. The load bench drives sessions with it, and
the tests use it where a real browser adds nothing.

The screen arrives as the terminal output the page would draw; ``wait_for`` looks for a
pattern in what arrived since it was last asked (a mark moves past what was seen), so each
keypress is matched to the first screen update that shows its effect, and answers when that
update arrived (not when the waiting task next ran: with many sessions in one client, the
difference would be the client's own queueing).
"""

from __future__ import annotations

import asyncio
import bisect
import json
import re
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import aiohttp

# Terminal control sequences between the characters of a line (colours, cursor moves).
_CONTROL = re.compile(
    rb"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[()][A-Z0-9]"
)


class SignInRefused(Exception):
    """The server did not accept the name and token."""


class ScriptedSession:
    def __init__(self, base: str, width: int = 160, height: int = 48) -> None:
        self.base = base.rstrip("/")
        self.width = width
        self.height = height
        self.screen = bytearray()
        self.mark = 0
        self._ends: list[int] = []
        """Where each update ended in ``screen``, and when it arrived (``_times``)."""
        self._times: list[float] = []
        self._http: aiohttp.ClientSession | None = None
        self._socket: aiohttp.ClientWebSocketResponse | None = None
        self._reader: asyncio.Task[None] | None = None
        self._arrived = asyncio.Event()
        self.closed = False

    async def sign_in(self, name: str, token: str) -> None:
        import aiohttp

        self._http = aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True))
        async with self._http.post(
            f"{self.base}/login", data={"name": name, "token": token}, allow_redirects=False
        ) as response:
            if response.status != 303:
                raise SignInRefused(f"sign-in answered {response.status}")

    async def open(self) -> None:
        assert self._http is not None, "sign in first"
        url = self.base.replace("http", "ws", 1) + f"/ws?width={self.width}&height={self.height}"
        self._socket = await self._http.ws_connect(url)
        self._reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        import aiohttp

        assert self._socket is not None
        async for message in self._socket:
            if message.type == aiohttp.WSMsgType.BINARY:
                self.received(message.data, time.perf_counter())
            elif message.type in (aiohttp.WSMsgType.CLOSED, aiohttp.WSMsgType.ERROR):
                break
        self.closed = True
        self._arrived.set()

    def received(self, update: bytes, at: float) -> None:
        """A screen update that arrived at ``at`` (its text, without control sequences)."""
        self.screen += _CONTROL.sub(b"", update)
        self._ends.append(len(self.screen))
        self._times.append(at)
        self._arrived.set()

    async def press(self, *keys: str) -> float:
        """Type keys (terminal key sequences: ``\\r`` is enter); returns when they were sent."""
        assert self._socket is not None
        sent = time.perf_counter()
        for key in keys:
            await self._socket.send_str(json.dumps(["stdin", key]))
        return sent

    async def wait_for(self, pattern: bytes, timeout: float = 30.0) -> float:
        """Wait until ``pattern`` (a regular expression) shows in what arrived after the
        mark, move the mark past it, and return the time the update holding it arrived."""
        expression = re.compile(pattern)
        deadline = time.perf_counter() + timeout
        while True:
            found = expression.search(self.screen, self.mark)
            if found is not None:
                self.mark = found.end()
                return self._times[bisect.bisect_left(self._ends, found.end())]
            if self.closed:
                raise ConnectionError("the session ended")
            remaining = deadline - time.perf_counter()
            if remaining <= 0:
                seen = re.sub(rb"\s+", b" ", bytes(self.screen[self.mark :]))[-3000:]
                raise TimeoutError(
                    f"{pattern!r} did not show within {timeout} s; after the mark: "
                    f"{seen.decode('utf-8', 'replace')!r}"
                )
            self._arrived.clear()
            try:
                await asyncio.wait_for(self._arrived.wait(), remaining)
            except TimeoutError:
                continue

    def skip(self) -> None:
        """Forget what arrived so far: the next ``wait_for`` looks only at what follows."""
        self.mark = len(self.screen)

    async def close(self) -> None:
        if self._socket is not None:
            await self._socket.close()
        if self._reader is not None:
            await asyncio.gather(self._reader, return_exceptions=True)
        if self._http is not None:
            await self._http.close()
