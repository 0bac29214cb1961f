"""Fetching the pages a report cites, as plain text, once per run.

The consistency judge compares a claim with the page it cites, so it needs the page's text and
a hash naming the version it saw. Pages are fetched with httpx under hard limits (a total time
budget, a size cap read as a stream, a redirect cap, a few requests per host at a time) and
turned into text with the standard library's ``html.parser``: readable text is all the judge
needs, and a full readability engine would be a dependency for little gain. A page that cannot
be used (HTTP error, timeout, too large, PDF or another type we cannot read, an address it must
not reach) is still a result: its ``error`` is recorded, and the pipeline gives claims citing it
the verdict ``unknown`` without asking the model, as the DailyReport paper defines for invalid
references.

The URLs come from reports, which anyone may have written, and whatever the fetcher reads is
stored and sent to a model: a report citing ``http://169.254.169.254/latest/meta-data/`` or
``http://localhost:8080/admin`` must not turn the reviewer's machine into a proxy into their
network. So, unless :attr:`FetchConfig.allow_private` says otherwise (local test servers), every
hop — the URL and each redirect — is resolved here, every address it resolves to must be a
global one (not loopback, private, link-local, unique-local, shared, reserved, multicast, or a
private IPv4 address inside an IPv6 one), and the request then goes to the address that was
checked, with the name kept for the ``Host`` header and TLS: a resolver that answers differently
the second time (DNS rebinding) has no second time to answer. Redirects are followed here, one
checked hop at a time, never by httpx. Through an HTTP proxy (``trust_env`` and the proxy
variables) the same check is made on the name as resolved here; the proxy connects on its own.

Page text is data: it is never rendered as markup and is fenced as data in prompts.
"""

from __future__ import annotations

import asyncio
import hashlib
import ipaddress
import re
import socket
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from html.parser import HTMLParser
from typing import Protocol
from urllib.parse import urljoin, urlsplit

import httpx


@dataclass(frozen=True, slots=True)
class Page:
    """One fetch of one URL (also what a stored source looks like to the pipeline)."""

    url: str
    text: str
    sha256: str
    error: str | None = None
    title: str = ""
    final_url: str | None = None
    status: int | None = None
    content_type: str | None = None
    fetched_at: str = ""

    @property
    def usable(self) -> bool:
        """True when there is text a judge can compare a claim with."""
        return self.error is None and bool(self.text.strip())


class PageSource(Protocol):
    """Where the pipeline gets cited pages: the live web, or the pages a bundle stored."""

    async def get(self, url: str) -> Page: ...


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def failed(
    url: str,
    error: str,
    *,
    final_url: str | None = None,
    status: int | None = None,
    content_type: str | None = None,
) -> Page:
    return Page(
        url=url,
        text="",
        sha256=sha256_text(""),
        error=error,
        final_url=final_url,
        status=status,
        content_type=content_type,
        fetched_at=now_iso(),
    )


class MappingPages:
    """Pages already at hand (a bundle's stored sources): no network at all."""

    def __init__(self, pages: Mapping[str, Page]) -> None:
        self._pages = dict(pages)

    async def get(self, url: str) -> Page:
        page = self._pages.get(url)
        if page is None:
            return failed(url, "not among the stored sources")
        return page


# -- HTML to text -----------------------------------------------------------------------------

_SKIP = frozenset(
    {
        "script",
        "style",
        "noscript",
        "template",
        "svg",
        "canvas",
        "iframe",
        "object",
        "embed",
        "math",
    }
)
_BLOCK = frozenset(
    {
        "address",
        "article",
        "aside",
        "blockquote",
        "caption",
        "details",
        "div",
        "dl",
        "fieldset",
        "figcaption",
        "figure",
        "footer",
        "form",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "header",
        "hr",
        "main",
        "nav",
        "ol",
        "p",
        "pre",
        "section",
        "summary",
        "table",
        "ul",
        "title",
        "body",
        "html",
        "head",
    }
)
"""Elements that stand apart: a blank line before and after."""
_LINE = frozenset({"br", "dd", "dt", "li", "option", "tr"})
"""Elements that start a new line (list items and table rows follow each other directly)."""
_CELL = frozenset({"td", "th"})
_VOID = frozenset({"br", "hr", "img", "input", "meta", "link", "area", "base", "col", "wbr"})


class _TextExtractor(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.title: list[str] = []
        self._skip = 0
        self._in_title = False
        self._pre = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _SKIP:
            if tag not in _VOID:
                self._skip += 1
            return
        if tag == "title":
            self._in_title = True
        elif tag == "pre":
            self._pre += 1
        if tag in _BLOCK or tag in _LINE:
            self.parts.append("\n")
        elif tag in _CELL:
            self.parts.append(" \t ")

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _BLOCK or tag in _LINE:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in _SKIP:
            self._skip = max(0, self._skip - 1)
            return
        if tag == "title":
            self._in_title = False
        elif tag == "pre":
            self._pre = max(0, self._pre - 1)
        if tag in _BLOCK:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if self._skip:
            return
        if self._in_title:
            self.title.append(data)
            return
        if self._pre:
            self.parts.append(data.replace("\n", "\x00"))
        else:
            self.parts.append(re.sub(r"\s+", " ", data))


def html_to_text(html: str) -> tuple[str, str]:
    """(title, readable text) of an HTML document: scripts, styles and markup dropped, entities
    decoded, one line per block element, runs of blank lines collapsed to one."""
    parser = _TextExtractor()
    parser.feed(html)
    parser.close()
    lines: list[str] = []
    for line in "".join(parser.parts).split("\n"):
        cleaned = " ".join(line.replace("\t", " ").split()) if "\x00" not in line else line
        lines.append(cleaned.replace("\x00", "\n"))
    text = re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()
    title = " ".join("".join(parser.title).split())
    return title, text


# -- the fetcher --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class FetchConfig:
    timeout: float = 30.0
    """Seconds for the whole fetch of one URL, redirects and body included."""
    max_bytes: int = 5_000_000
    max_redirects: int = 5
    per_host: int = 2
    concurrency: int = 8
    user_agent: str = "gavel-citation-fetcher/0.1 (deep-research report review)"
    trust_env: bool = True
    allow_private: bool = False
    """Fetch loopback, private, link-local and other non-global addresses too (local test
    servers; ``--allow-private-hosts``). Off by default: see the module's docstring."""


# -- which addresses may be fetched ------------------------------------------------------------

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Resolver = Callable[[str, int], Awaitable[Sequence[str]]]
"""(host, port) -> the addresses it resolves to, as text."""

_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")


async def system_resolver(host: str, port: int) -> list[str]:
    """The operating system's resolver (``getaddrinfo``), every address it gives."""
    infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


def _embedded_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 one carries (mapped, compatible, 6to4, NAT64, Teredo)."""
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address.teredo is not None:
        return address.teredo[1]
    if address in _NAT64 or 1 < int(address) < 2**32:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None


def non_global(address: Address) -> str | None:
    """Why an address must not be fetched (None: it is a global unicast address)."""
    if isinstance(address, ipaddress.IPv6Address):
        inner = _embedded_ipv4(address)
        if inner is not None:
            why = non_global(inner)
            return f"{why} (inside {address})" if why else None
    for test, what in (
        (address.is_loopback, "loopback"),
        (address.is_link_local, "link-local"),
        (address.is_multicast, "multicast"),
        (address.is_unspecified, "unspecified"),
        (address.is_private, "private"),
        (address.is_reserved, "reserved"),
    ):
        if test:
            return f"a {what} address"
    if not address.is_global:
        return "not a global address"
    return None


class Refused(Exception):
    """A hop the fetcher will not make (its message is the page's error)."""


_HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
_XML_TYPES = frozenset(
    {"application/xml", "text/xml", "application/rss+xml", "application/atom+xml"}
)
_TEXT_TYPES = frozenset(
    {
        "application/json",
        "application/ld+json",
        "application/javascript",
        "application/x-yaml",
        "application/yaml",
    }
)
_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?([A-Za-z0-9_.:-]+)""", re.I)


def _kind(media: str, head: bytes) -> str:
    """html | xml | text | pdf | other, from the media type (sniffing when there is none)."""
    if not media:
        return _sniffed(head)
    if media in _HTML_TYPES:
        return "html"
    if media == "application/pdf":
        return "pdf"
    if media in _XML_TYPES or media.endswith("+xml"):
        return "xml"
    if media.startswith("text/") or media in _TEXT_TYPES or media.endswith("+json"):
        return "text"
    return "other"


def _http_host(url: str) -> tuple[str, str | None]:
    """The URL's host in lower case, and why the URL cannot be fetched (None: it can)."""
    try:
        parts = urlsplit(url)
        host = (parts.hostname or "").lower()
        parts.port  # noqa: B018 -- raises on a port that is not a number
    except ValueError:
        return "", "invalid URL"
    if parts.scheme not in ("http", "https") or not host:
        return host, "not an http(s) URL"
    return host, None


def _sniffed(head: bytes) -> str:
    """pdf | html | text, from the first bytes of a body sent without a media type."""
    stripped = head.lstrip()[:16].lower()
    if stripped.startswith(b"%pdf"):
        return "pdf"
    if stripped.startswith(b"<"):
        return "html"
    return "text"


def _decode(body: bytes, charset: str | None, kind: str) -> str:
    candidates: list[str] = []
    if charset:
        candidates.append(charset)
    if kind in ("html", "xml"):
        found = _META_CHARSET.search(body[:4096])
        if found:
            candidates.append(found.group(1).decode("ascii", "replace"))
    candidates.append("utf-8")
    for name in candidates:
        try:
            return body.decode(name)
        except (LookupError, UnicodeDecodeError):
            continue
    return body.decode("utf-8", errors="replace")


class PageFetcher:
    """Fetches cited URLs for one run: each URL at most once, however many claims cite it.

    ``on_fetch`` sees every finished fetch (the store records it in ``page_fetch``).
    """

    def __init__(
        self,
        config: FetchConfig | None = None,
        on_fetch: Callable[[Page], None] | None = None,
        *,
        resolver: Resolver | None = None,
        is_allowed: Callable[[Address], str | None] | None = None,
    ) -> None:
        self.config = config or FetchConfig()
        self._on_fetch = on_fetch
        self._resolve = resolver or system_resolver
        self._why_not = is_allowed or non_global
        """Why an address is refused (None: allowed); tests hand in their own."""
        self._memo: dict[str, asyncio.Task[Page]] = {}
        self._hosts: dict[str, asyncio.Semaphore] = {}
        self._all = asyncio.Semaphore(max(1, self.config.concurrency))
        self._http: httpx.AsyncClient | None = None
        self.requests = 0

    async def __aenter__(self) -> PageFetcher:
        self._http = httpx.AsyncClient(
            follow_redirects=False,  # followed in _get, each hop checked
            timeout=httpx.Timeout(self.config.timeout),
            headers={
                "User-Agent": self.config.user_agent,
                "Accept": "text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.5",
            },
            trust_env=self.config.trust_env,
        )
        return self

    async def __aexit__(self, *exc: object) -> None:
        for task in self._memo.values():
            if not task.done():
                task.cancel()
        if self._http is not None:
            await self._http.aclose()
            self._http = None

    async def get(self, url: str) -> Page:
        task = self._memo.get(url)
        if task is None:
            task = self._memo[url] = asyncio.ensure_future(self._fetch_and_report(url))
        return await asyncio.shield(task)

    async def _fetch_and_report(self, url: str) -> Page:
        page = await self.fetch(url)
        if self._on_fetch is not None:
            self._on_fetch(page)
        return page

    async def fetch(self, url: str) -> Page:
        """One fetch of ``url`` under the limits (no memo; :meth:`get` is what callers use)."""
        if self._http is None:
            raise RuntimeError("use PageFetcher as an async context manager")
        host, problem = _http_host(url)
        if problem is not None:
            return failed(url, problem)
        per_host = self._hosts.get(host)
        if per_host is None:
            per_host = self._hosts[host] = asyncio.Semaphore(max(1, self.config.per_host))
        async with self._all, per_host:
            self.requests += 1
            try:
                async with asyncio.timeout(self.config.timeout):
                    return await self._get(url)
            except (TimeoutError, httpx.TimeoutException):
                return failed(url, f"timed out after {self.config.timeout:g} s")
            except Refused as exc:
                return failed(url, str(exc))
            except (httpx.InvalidURL, ValueError, UnicodeError):
                return failed(url, "invalid URL")
            except httpx.HTTPError as exc:
                return failed(url, f"fetch failed ({type(exc).__name__})")

    async def _pinned(self, url: str) -> tuple[httpx.URL, dict[str, str], dict[str, str]]:
        """The request for one hop: to the checked address, the name kept for ``Host`` and
        TLS (the address is never looked up again, so a rebinding resolver cannot switch it).
        """
        target = httpx.URL(url)
        if target.scheme not in ("http", "https") or not target.host:
            raise Refused("refused: redirected to a URL that is not http(s)")
        host = target.host
        port = target.port or (443 if target.scheme == "https" else 80)
        literal, addresses = await self._addresses(host, port)
        checked = [ipaddress.ip_address(a.split("%", 1)[0]) for a in addresses]
        if not self.config.allow_private:
            self._refuse_private(host, literal is not None, checked)
        headers = {"Host": target.netloc.decode("ascii")}
        extensions = {"sni_hostname": host} if target.scheme == "https" else {}
        return target.copy_with(host=str(checked[0])), headers, extensions

    async def _addresses(self, host: str, port: int) -> tuple[Address | None, list[str]]:
        """The host's addresses: itself when it is an IP literal, else what the resolver says
        (none is a refusal)."""
        try:
            literal: Address | None = ipaddress.ip_address(host)
        except ValueError:
            literal = None
        if literal is not None:
            return literal, [str(literal)]
        try:
            addresses = list(await self._resolve(host, port))
        except (OSError, UnicodeError):
            raise Refused(f"could not resolve {host}") from None
        if not addresses:
            raise Refused(f"could not resolve {host}")
        return None, addresses

    def _refuse_private(self, host: str, literal: bool, checked: list[Address]) -> None:
        """Refuses the hop when any address is one the fetcher must not reach."""
        for address in checked:
            why = self._why_not(address)
            if why:
                shown = host if literal else f"{host} ({address})"
                raise Refused(
                    f"refused: {shown} is {why}; --allow-private-hosts fetches such addresses"
                )

    async def _get(self, url: str) -> Page:
        assert self._http is not None
        current = url
        for _ in range(self.config.max_redirects + 1):
            pinned, headers, extensions = await self._pinned(current)
            async with self._http.stream(
                "GET", pinned, headers=headers, extensions=extensions
            ) as response:
                location = response.headers.get("location")
                if response.is_redirect and location:
                    current = urljoin(current, location)
                    continue
                return await self._read(url, current, response)
        return failed(
            url, f"too many redirects (more than {self.config.max_redirects})", final_url=current
        )

    async def _read(self, url: str, final_url: str, response: httpx.Response) -> Page:
        status = response.status_code
        raw_type = response.headers.get("content-type", "")
        media = raw_type.split(";", 1)[0].strip().lower()

        def fail(error: str) -> Page:
            return failed(
                url, error, final_url=final_url, status=status, content_type=raw_type or None
            )

        refusal = self._refusal(response, media)
        if refusal is not None:
            return fail(refusal)
        data = await self._body(response)
        if data is None:
            return fail(f"too large: more than {self.config.max_bytes:,} bytes")
        kind = _kind(media, b"") if media else _kind("", data[:64])
        if kind == "pdf":
            return fail("unsupported content type: PDF (no text extraction)")
        decoded = _decode(data, response.charset_encoding, kind)
        if kind in ("html", "xml"):
            title, text = html_to_text(decoded)
        else:
            title, text = "", decoded.replace("\r\n", "\n").strip()
        return Page(
            url=url,
            text=text,
            sha256=sha256_text(text),
            error=None,
            title=title,
            final_url=final_url,
            status=status,
            content_type=raw_type or None,
            fetched_at=now_iso(),
        )

    def _refusal(self, response: httpx.Response, media: str) -> str | None:
        """Why the response is not read at all: an HTTP error, a declared size over the limit,
        or a content type without text (None: read it)."""
        status = response.status_code
        if status >= 400:
            reason = response.reason_phrase
            return f"HTTP {status}{' ' + reason if reason else ''}"
        limit = self.config.max_bytes
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > limit:
            return f"too large: {int(declared):,} bytes (limit {limit:,})"
        kind = _kind(media, b"")
        if kind == "pdf":
            return "unsupported content type: PDF (no text extraction)"
        if kind == "other":
            return f"unsupported content type: {media}"
        return None

    async def _body(self, response: httpx.Response) -> bytes | None:
        """The body, or None as soon as it grows past the size limit."""
        limit = self.config.max_bytes
        body = bytearray()
        async for chunk in response.aiter_bytes():
            body += chunk
            if len(body) > limit:
                return None
        return bytes(body)
