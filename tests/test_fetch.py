"""The citation fetcher against a real web server on loopback: HTML to text, redirects, errors,
size and time limits, content types, per-host concurrency, and one fetch per URL per run."""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Iterator

import pytest

from reviewer.judge.fetch import FetchConfig, Page, PageFetcher, html_to_text
from tests.loopback import Loopback, Request, Response, serving

PAGE = b"""<!doctype html>
<html><head><title>Lumen Flex Saver &ndash; rates</title>
<style>body { color: red }</style><script>var secret = "not text";</script></head>
<body><nav>Home | Savings</nav>
<h1>Flex&nbsp;Saver</h1>
<p>Variable rate:   <b>3.10%</b> AER,
   effective 1 November 2026.</p>
<table><tr><th>Tier</th><th>Rate</th></tr><tr><td>All balances</td><td>3.10%</td></tr></table>
<p>Forum quote: [bold]FREE[/bold] &lt;script&gt;</p>
<noscript>Enable JavaScript</noscript>
</body></html>"""

PAGE_TEXT = (
    "Home | Savings\n\nFlex Saver\n\nVariable rate: 3.10% AER, effective 1 November 2026."
    "\n\nTier Rate\nAll balances 3.10%\n\nForum quote: [bold]FREE[/bold] <script>"
)


def routes(request: Request) -> Response:
    path = request.path
    html = {"Content-Type": "text/html; charset=utf-8"}
    if path == "/page.html":
        return Response(200, PAGE, html)
    if path == "/r1":
        return Response(302, b"", {"Location": "/r2"})
    if path == "/r2":
        return Response(301, b"", {"Location": "/page.html"})
    if path == "/loop":
        return Response(302, b"", {"Location": "/loop"})
    if path == "/huge":
        return Response(200, b"x" * 20_000, {"Content-Type": "text/plain"})
    if path == "/huge-stream":
        return Response(200, b"<p>" + b"y" * 20_000, {"Content-Type": "text/html"}, stream=True)
    if path == "/notes.txt":
        return Response(
            200,
            "Ridership: 4.2 million trips — up 12%\r\n".encode(),
            {"Content-Type": "text/plain; charset=utf-8"},
        )
    if path == "/paper.pdf":
        return Response(200, b"%PDF-1.7\n...", {"Content-Type": "application/pdf"})
    if path == "/untyped":
        return Response(200, b"%PDF-1.4 binary", {})
    if path == "/image.png":
        return Response(200, b"\x89PNG....", {"Content-Type": "image/png"})
    if path == "/latin1":
        return Response(
            200,
            "<p>Caf\u00e9 cr\u00e8me</p>".encode("latin-1"),
            {"Content-Type": "text/html; charset=iso-8859-1"},
        )
    if path == "/meta-charset":
        body = b'<html><head><meta charset="windows-1252"></head><body>\x93quoted\x94</body>'
        return Response(200, body, {"Content-Type": "text/html"})
    if path == "/scripts-only":
        return Response(200, b"<html><body><script>render()</script></body></html>", html)
    if path.startswith("/slow"):
        return Response(200, b"<p>late</p>", html, delay=3.0)
    if path.startswith("/busy/"):
        return Response(200, b"<p>busy</p>", html, delay=0.2)
    return Response(404, b"<h1>Not Found</h1>", html)


@pytest.fixture
def site() -> Iterator[Loopback]:
    with serving(routes) as srv:
        yield srv


LIMITS = FetchConfig(
    timeout=0.5,
    max_bytes=10_000,
    max_redirects=5,
    per_host=2,
    concurrency=8,
    trust_env=False,
    allow_private=True,
)
"""The test server is on loopback: these tests opt in to private addresses."""


async def fetch_one(url: str, config: FetchConfig = LIMITS) -> Page:
    async with PageFetcher(config) as fetcher:
        return await fetcher.get(url)


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def test_html_to_text_keeps_readable_text_only() -> None:
    title, text = html_to_text(PAGE.decode())
    assert title == "Lumen Flex Saver – rates"
    assert text == PAGE_TEXT


async def test_fetches_html_as_text_with_its_hash(site: Loopback) -> None:
    page = await fetch_one(site.url + "/page.html")
    assert page.error is None and page.usable
    assert (page.status, page.content_type) == (200, "text/html; charset=utf-8")
    assert page.title == "Lumen Flex Saver – rates"
    assert page.text == PAGE_TEXT
    assert page.sha256 == sha(PAGE_TEXT)


async def test_follows_a_redirect_chain(site: Loopback) -> None:
    page = await fetch_one(site.url + "/r1")
    assert page.error is None
    assert page.url == site.url + "/r1" and page.final_url == site.url + "/page.html"
    assert site.count("/r1") == site.count("/r2") == site.count("/page.html") == 1


async def test_redirect_limit(site: Loopback) -> None:
    loop = await fetch_one(site.url + "/loop")
    assert loop.error == "too many redirects (more than 5)"
    short = FetchConfig(timeout=0.5, max_redirects=1, trust_env=False, allow_private=True)
    assert (await fetch_one(site.url + "/r1", short)).error == "too many redirects (more than 1)"


async def test_http_error_is_recorded_with_empty_text(site: Loopback) -> None:
    page = await fetch_one(site.url + "/gone")
    assert page.error == "HTTP 404 Not Found" and page.status == 404
    assert page.text == "" and page.sha256 == sha("") and not page.usable


async def test_size_limit_declared_and_streamed(site: Loopback) -> None:
    declared = await fetch_one(site.url + "/huge")
    assert declared.error == "too large: 20,000 bytes (limit 10,000)"
    streamed = await fetch_one(site.url + "/huge-stream")
    assert streamed.error == "too large: more than 10,000 bytes"


async def test_content_types(site: Loopback) -> None:
    text = await fetch_one(site.url + "/notes.txt")
    assert text.text == "Ridership: 4.2 million trips — up 12%" and text.error is None
    pdf = await fetch_one(site.url + "/paper.pdf")
    assert pdf.error == "unsupported content type: PDF (no text extraction)"
    sniffed = await fetch_one(site.url + "/untyped")
    assert sniffed.error == "unsupported content type: PDF (no text extraction)"
    image = await fetch_one(site.url + "/image.png")
    assert image.error == "unsupported content type: image/png"


async def test_charsets(site: Loopback) -> None:
    assert (await fetch_one(site.url + "/latin1")).text == "Café crème"
    assert (await fetch_one(site.url + "/meta-charset")).text == "“quoted”"


async def test_a_page_without_text_is_not_usable(site: Loopback) -> None:
    page = await fetch_one(site.url + "/scripts-only")
    assert page.error is None and page.text == "" and not page.usable


async def test_slow_page_times_out(site: Loopback) -> None:
    page = await fetch_one(site.url + "/slow")
    assert page.error == "timed out after 0.5 s"


async def test_not_http_is_refused_without_a_request(site: Loopback) -> None:
    page = await fetch_one("ftp://example.org/file")
    assert page.error == "not an http(s) URL" and site.count() == 0


async def test_per_host_concurrency(site: Loopback) -> None:
    async with PageFetcher(LIMITS) as fetcher:
        pages = await asyncio.gather(*(fetcher.get(f"{site.url}/busy/{n}") for n in range(6)))
    assert all(p.error is None for p in pages)
    assert site.count() == 6 and site.max_in_flight == 2


async def test_each_url_is_fetched_once_per_run(site: Loopback) -> None:
    seen: list[Page] = []
    url = site.url + "/page.html"
    async with PageFetcher(LIMITS, on_fetch=seen.append) as fetcher:
        pages = await asyncio.gather(*(fetcher.get(url) for _ in range(3)))
        again = await fetcher.get(url)
    assert site.count("/page.html") == 1 and len(seen) == 1
    assert {p.sha256 for p in [*pages, again]} == {sha(PAGE_TEXT)}
    async with PageFetcher(LIMITS) as next_run:
        await next_run.get(url)
    assert site.count("/page.html") == 2
