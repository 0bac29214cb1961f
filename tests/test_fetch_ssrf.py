"""The citation fetcher never reaches loopback, private, link-local or other non-global
addresses unless told to: not directly, not by a name that resolves there, not through a
redirect, and not by a resolver that answers differently the second time.

Names are resolved by a resolver the test hands in, so ``intranet.example`` can point at
10.1.2.3 without any DNS; the one real server is on loopback, which is also what proves that
a refused fetch never connected (its request count stays zero).
"""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from reviewer.judge.fetch import Address, FetchConfig, Page, PageFetcher, non_global
from store.db.connection import connect
from store.imports.loader import import_bundle
from store.scores.cache import rebuild_scores
from tests.loopback import Loopback, Request, Response, serving
from tui.cli import main

STRICT = FetchConfig(timeout=2.0, max_redirects=5, trust_env=False)

NAMES: dict[str, list[str]] = {
    "intranet.example": ["10.1.2.3"],
    "router.example": ["192.168.1.1"],
    "metadata.example": ["169.254.169.254"],
    "home.example": ["127.0.0.1"],
    "ula.example": ["fd00::7"],
    "linklocal6.example": ["fe80::1"],
    "loop6.example": ["::1"],
    "mapped.example": ["::ffff:10.0.0.8"],
    "nat64.example": ["64:ff9b::7f00:1"],
    "sixtofour.example": ["2002:c0a8:101::1"],
    "cgnat.example": ["100.64.0.7"],
    "zero.example": ["0.0.0.0"],
    "multicast.example": ["224.0.0.251"],
    "mixed.example": ["93.184.216.34", "10.0.0.1"],
}


class FakeResolver:
    def __init__(self, names: dict[str, list[str]]) -> None:
        self.names = names
        self.asked: list[str] = []

    async def __call__(self, host: str, port: int) -> Sequence[str]:
        self.asked.append(host)
        if host not in self.names:
            raise OSError(f"unknown host {host}")
        return self.names[host]


def page(body: bytes = b"<p>secret: 42</p>") -> Response:
    return Response(200, body, {"Content-Type": "text/html"})


def routes(request: Request) -> Response:
    redirects = {
        "/to-metadata": "http://169.254.169.254/latest/meta-data/iam/",
        "/to-intranet": "http://intranet.example/secret",
        "/to-ula": "http://[fd00::7]/",
        "/to-localhost-name": "http://loop6.example/",
        "/to-file": "file:///etc/passwd",
    }
    if request.path in redirects:
        return Response(302, b"", {"Location": redirects[request.path]})
    if request.path == "/host":
        return page(f"<p>host {request.headers.get('host')}</p>".encode())
    return page()


@pytest.fixture
def site() -> Iterator[Loopback]:
    with serving(routes) as srv:
        yield srv


async def fetch(
    url: str,
    *,
    resolver: FakeResolver | None = None,
    config: FetchConfig = STRICT,
    allow_loopback_server: bool = False,
) -> Page:
    """One fetch; ``allow_loopback_server`` treats 127.0.0.1 (where the test server is) as a
    public address, so the first hop reaches it and a later hop can be refused."""

    def policy(address: Address) -> str | None:
        if allow_loopback_server and address == ipaddress.ip_address("127.0.0.1"):
            return None
        return non_global(address)

    async with PageFetcher(
        config, resolver=resolver or FakeResolver(NAMES), is_allowed=policy
    ) as fetcher:
        return await fetcher.get(url)


@pytest.mark.parametrize("name", sorted(NAMES))
async def test_a_name_resolving_to_a_non_global_address_is_refused(name: str) -> None:
    resolver = FakeResolver(NAMES)
    result = await fetch(f"http://{name}/latest/meta-data/", resolver=resolver)
    assert result.error is not None and result.error.startswith("refused:"), result.error
    assert "--allow-private-hosts" in result.error and result.text == ""
    assert resolver.asked == [name]


@pytest.mark.parametrize(
    "host",
    [
        "127.0.0.1",
        "[::1]",
        "169.254.169.254",
        "10.0.0.1",
        "[fd12:3456::1]",
        "[::ffff:127.0.0.1]",
        "0.0.0.0",
    ],
)
async def test_an_address_literal_is_refused_without_a_lookup_or_a_connection(
    host: str, site: Loopback
) -> None:
    port = site.url.rsplit(":", 1)[1]
    resolver = FakeResolver({})
    result = await fetch(f"http://{host}:{port}/page", resolver=resolver)
    assert result.error is not None and result.error.startswith("refused:")
    assert resolver.asked == [] and site.count() == 0


async def test_other_spellings_of_loopback_are_refused_after_resolution(site: Loopback) -> None:
    """localhost, 2130706433 and 0x7f.1 are names to the URL parser: the system resolver turns
    them into 127.0.0.1, which is what is checked."""
    from reviewer.judge.fetch import system_resolver

    port = site.url.rsplit(":", 1)[1]
    for host in ("localhost", "2130706433", "0x7f.1", "127.1"):
        async with PageFetcher(STRICT, resolver=system_resolver) as fetcher:
            result = await fetcher.get(f"http://{host}:{port}/page")
        assert result.error is not None and result.error.startswith("refused:"), (host, result)
    assert site.count() == 0


@pytest.mark.parametrize(
    ("path", "shown"),
    [
        ("/to-metadata", "169.254.169.254"),
        ("/to-intranet", "10.1.2.3"),
        ("/to-ula", "fd00::7"),
        ("/to-localhost-name", "::1"),
        ("/to-file", "not http(s)"),
    ],
)
async def test_every_redirect_hop_is_checked(site: Loopback, path: str, shown: str) -> None:
    resolver = FakeResolver({"public.example": ["127.0.0.1"], **NAMES})
    port = site.url.rsplit(":", 1)[1]
    result = await fetch(
        f"http://public.example:{port}{path}", resolver=resolver, allow_loopback_server=True
    )
    assert result.error is not None and result.error.startswith("refused:"), result.error
    assert shown in result.error
    assert site.count(path) == 1  # the first hop was made, the second never


async def test_the_checked_address_is_the_one_connected_to(site: Loopback) -> None:
    """A rebinding resolver answers a safe address first and a private one after: the fetch
    asks once, connects to the first answer, and the server still sees the name."""
    answers = iter([["127.0.0.1"], ["10.0.0.1"], ["10.0.0.1"]])

    class Rebinding(FakeResolver):
        async def __call__(self, host: str, port: int) -> Sequence[str]:
            self.asked.append(host)
            return next(answers)

    resolver = Rebinding({})
    port = site.url.rsplit(":", 1)[1]
    result = await fetch(
        f"http://rebind.example:{port}/host", resolver=resolver, allow_loopback_server=True
    )
    assert result.error is None and result.text == f"host rebind.example:{port}"
    assert resolver.asked == ["rebind.example"]
    assert result.final_url == f"http://rebind.example:{port}/host"


async def test_the_opt_in_fetches_local_servers(site: Loopback) -> None:
    allowed = FetchConfig(timeout=2.0, trust_env=False, allow_private=True)
    result = await fetch(site.url + "/page", config=allowed)
    assert result.error is None and result.text == "secret: 42"


def test_gavel_fetch_refuses_a_report_citing_loopback_unless_told(
    tmp_path: Path, site: Loopback, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.test_judge_pipeline import ferry_bundle

    db = tmp_path / "ferry.db"
    conn = connect(db)
    import_bundle(conn, ferry_bundle(site.url), "ferry-hash")
    rebuild_scores(conn)
    conn.close()
    assert main(["fetch", "--db", str(db), "--format", "json"]) == 0
    pages = json.loads(capsys.readouterr().out)
    assert pages and all(
        p["error"].startswith("refused: 127.0.0.1 is a loopback address") for p in pages
    )
    assert site.count() == 0
    assert main(["fetch", "--db", str(db), "--format", "json", "--allow-private-hosts"]) == 0
    pages = json.loads(capsys.readouterr().out)
    assert any(p["error"] == "" for p in pages) and site.count() > 0
