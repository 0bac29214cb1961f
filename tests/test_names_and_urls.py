"""Two smaller failures of the reliability trial: a reference URL with an IPv6 host was cut by
the reference parser and a bad URL aborted a whole fetch; and a report id that two suites share
silently meant the oldest suite's report (``gavel rate t01-atlas-dr``).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from reviewer.citations import parse_references
from reviewer.judge.fetch import FetchConfig, PageFetcher
from reviewer.models import Bundle, Claim, Criterion, Report, Subtask, Suite, System, Task
from store.db.connection import connect
from store.imports.loader import import_bundle
from store.scores.cache import rebuild_scores
from tests.builders import tiny_bundle
from tests.loopback import Loopback, Request, Response, serving
from tui.cli.group import gavel

BAD_URLS = (
    "http://[::1",
    "http://[zz::1]/x",
    "http://example.org:99999/",
    "http://exa mple/",
    "http://%zz/",
    "https://\u0000/",
    "http:///nohost",
    "http://[::1]:notaport/",
)


def run(*args: str | Path) -> Result:
    return CliRunner().invoke(gavel, [str(a) for a in args])


def test_an_ipv6_reference_url_is_parsed_whole() -> None:
    refs = parse_references(
        "Text [1][2].\n\n## References\n"
        "[1] Local mirror http://[::1]:18091/x\n"
        "[2] [Docs](http://[2001:db8::1]/p?q=1)\n"
    )
    assert [(r.title, r.url) for r in refs] == [
        ("Local mirror", "http://[::1]:18091/x"),
        ("Docs", "http://[2001:db8::1]/p?q=1"),
    ]


def ok(request: Request) -> Response:
    return Response(200, b"<p>fine</p>", {"Content-Type": "text/html"})


@pytest.fixture
def site() -> Iterator[Loopback]:
    with serving(ok) as srv:
        yield srv


async def test_bad_urls_are_failed_pages_and_the_others_are_fetched(site: Loopback) -> None:
    config = FetchConfig(timeout=2, trust_env=False, allow_private=True)
    async with PageFetcher(config) as fetcher:
        pages = await asyncio.gather(*(fetcher.get(u) for u in (*BAD_URLS, site.url + "/a")))
    assert [p.error for p in pages[:-1]] != [None] * len(BAD_URLS)
    assert all(p.error for p in pages[:-1]), [p.error for p in pages]
    assert pages[-1].error is None and pages[-1].text == "fine"


def test_gavel_fetch_keeps_going_past_a_bad_url(tmp_path: Path, site: Loopback) -> None:
    refs = "\n".join(
        f"[{n}] Source {n} {url}"
        for n, url in enumerate(("http://[::1", f"{site.url}/good", "http://[::1]:9/x"), start=1)
    )
    markdown = f"The fare is 42 kr [1][2][3].\n\n## References\n{refs}\n"
    task = Task(
        id="t",
        prompt="?",
        subtasks=[Subtask(id="s1", text="fare", importance="P0")],
        criteria=[
            Criterion(
                id="s1-ins",
                subtask="s1",
                framework="cascade",
                dimension="ins",
                text="gives the fare",
            )
        ],
    )
    bundle = Bundle(
        suite=Suite(id="urls", name="urls", frameworks=["cascade"]),
        tasks=[task],
        systems=[System(id="a")],
        reports=[
            Report(
                id="r",
                task="t",
                system="a",
                markdown=markdown,
                claims=[Claim(id="c1", subtask="s1", fact="The fare is 42 kr")],
            )
        ],
    )
    db = tmp_path / "urls.db"
    conn = connect(db)
    import_bundle(conn, bundle, "h")
    rebuild_scores(conn)
    conn.close()
    result = run("fetch", "--db", db, "--format", "json", "--allow-private-hosts")
    assert result.exit_code == 0, result.output
    pages = {p["url"]: p for p in json.loads(result.stdout)}
    assert set(pages) == {"http://[::1", f"{site.url}/good", "http://[::1]:9/x"}
    assert pages[f"{site.url}/good"]["error"] == ""
    assert pages["http://[::1"]["error"] == "invalid URL"
    assert pages["http://[::1]:9/x"]["error"]  # nothing listens there: an error row


# -- report ids several suites share ------------------------------------------------------------


@pytest.fixture
def two_suites(tmp_path: Path) -> Path:
    db = tmp_path / "two.db"
    conn = connect(db)
    import_bundle(conn, tiny_bundle("older"), "h1")
    import_bundle(conn, tiny_bundle("newer"), "h2")
    rebuild_scores(conn)
    conn.close()
    return db


def ratings(db: Path) -> list[tuple[str, str]]:
    conn = connect(db)
    try:
        return conn.execute(
            "SELECT target, value FROM review_event WHERE action = 'rate'"
        ).fetchall()
    finally:
        conn.close()


def test_an_ambiguous_bare_report_id_is_refused_with_the_candidates(two_suites: Path) -> None:
    for args in (
        ("rate", "t1-alpha", "2"),
        ("verdicts", "--report", "t1-alpha"),
        (
            "judge",
            "--model",
            "m",
            "--base-url",
            "http://127.0.0.1:9/v1",
            "--sources",
            "stored",
            "--report",
            "t1-alpha",
            "--dry-run",
        ),
        (
            "propose",
            "older/t1",
            "--kind",
            "new_rubric",
            "--framework",
            "cascade",
            "--payload",
            '{"subtask": "s2", "dimension": "ins", "text": "x"}',
            "--report",
            "t1-alpha",
            "--rationale",
            "r",
        ),
    ):
        result = run(*args, "--db", two_suites)
        assert result.exit_code == 2, (args, result.output)
        assert "'t1-alpha' is in 2 suites" in result.stderr
        assert "newer/t1-alpha or older/t1-alpha" in result.stderr
        assert "Traceback" not in result.output
    assert ratings(two_suites) == []


def test_suite_slash_report_names_one_report_everywhere(two_suites: Path) -> None:
    assert run("rate", "newer/t1-alpha", "2", "--db", two_suites).exit_code == 0
    assert ratings(two_suites) == [("r:newer/t1-alpha", "2")]
    listed = run("verdicts", "--report", "older/t1-alpha", "--format", "json", "--db", two_suites)
    assert listed.exit_code == 0
    rows = json.loads(listed.stdout)
    assert rows and {r["report"] for r in rows} == {"t1-alpha"}
    conn = connect(two_suites)
    older = {
        i
        for (i,) in conn.execute(
            "SELECT j.id FROM judgment j JOIN report r ON r.id = j.report_id JOIN system y "
            "ON y.id = r.system_id JOIN suite s ON s.id = y.suite_id WHERE s.ext_id = 'older'"
        )
    }
    conn.close()
    assert {r["id"] for r in rows} <= older
    plan = run(
        "judge",
        "--model",
        "m",
        "--base-url",
        "http://127.0.0.1:9/v1",
        "--sources",
        "stored",
        "--report",
        "older/t1-alpha",
        "--dry-run",
        "--db",
        two_suites,
    )
    assert plan.exit_code == 0 and "dry run: 1 reports" in plan.stdout
    unknown = run("rate", "older/nope", "2", "--db", two_suites)
    assert unknown.exit_code == 2 and "no report 'older/nope'" in unknown.stderr
