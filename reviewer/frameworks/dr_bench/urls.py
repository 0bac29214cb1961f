"""DR. Bench trusted-source matching: URL normalisation and full / host matches against TSLs.

The paper matches a report's annotations (its cited URLs) against the task's expert list of
trustworthy source links (TSLs) at two levels: an exact ("full") URL match and a hostname match,
after reducing annotations to "pure annotations, excluding parameters, anchors, and duplicates"
(spec §2.3, §3). Everything else about normalisation is unspecified; the rules chosen here are
listed in ``RULES`` (the URL matcher's run records them in its params, so a reviewer can see
under which rules a match was made):

- query string and fragment dropped [PAPER];
- scheme ignored: ``http`` and ``https`` are the same page;
- host lowercased, user info, a default port (80, 443) and a trailing dot dropped, and a leading
  ``www.`` dropped (``who.int`` and ``www.who.int`` are one host; other subdomains stay
  distinct: ``avmajournals.avma.org`` is not ``avma.org``, as "hostname" says);
- path case kept (paths are case-sensitive), a trailing ``/`` dropped (the paper's rendered TSLs
  carry trailing slashes that the released data lacks), percent-escapes of unreserved
  characters decoded and the others upper-cased (RFC 3986 §6.2.2);
- TSLs are normalised by the same rules, and duplicates among them count once.

Pure functions of strings: nothing is fetched (the paper checks no page content either).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal
from urllib.parse import urlsplit

Match = Literal["full", "host", "none"]

RULES: dict[str, str] = {
    "query_and_fragment": "dropped",
    "scheme": "ignored",
    "host": "lowercased; user info, default port, trailing dot and a leading 'www.' dropped",
    "path": "case kept; trailing '/' dropped; unreserved percent-escapes decoded",
    "duplicates": "counted once (annotations and TSLs)",
}
"""The normalisation rules, as recorded in the URL matcher run's params."""

_ESCAPE = re.compile(r"%([0-9A-Fa-f]{2})")
_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
_HOST = re.compile(r"[\w-]+(?:\.[\w-]+)*")


@dataclass(frozen=True, slots=True)
class NormalisedUrl:
    """A URL as written, its normalised form (host + path) and its host."""

    raw: str
    normalised: str
    host: str


@dataclass(frozen=True, slots=True)
class UrlMatch:
    """One deduplicated annotation and how it matches the task's TSLs.

    ``tsl`` is the position (0-based, in the task's TSL list) of the TSL it equals (full) or of
    the first TSL on its host (host); None for no match. ``spellings`` are every raw form in the
    report that normalised to this annotation.
    """

    url: NormalisedUrl
    match: Match
    tsl: int | None
    spellings: tuple[str, ...]


def _unescape(part: str) -> str:
    def fix(found: re.Match[str]) -> str:
        char = chr(int(found.group(1), 16))
        return char if char in _UNRESERVED else "%" + found.group(1).upper()

    return _ESCAPE.sub(fix, part)


def normalise_url(raw: str) -> NormalisedUrl:
    """The normalised form and host of one URL (``host`` is empty when there is none)."""
    text = raw.strip().strip("<>").strip()
    if not _SCHEME.match(text):
        text = "http://" + text.lstrip("/")
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError:
        return NormalisedUrl(raw, raw.strip(), "")
    host = (parts.hostname or "").rstrip(".").lower()
    if not _HOST.fullmatch(host):
        return NormalisedUrl(raw, raw.strip(), "")
    if host.startswith("www."):
        host = host[4:]
    if port is not None and port not in (80, 443):
        host = f"{host}:{port}"
    path = _unescape(parts.path)
    while path.endswith("/"):
        path = path[:-1]
    return NormalisedUrl(raw, host + path, host)


def distinct(urls: Sequence[str]) -> list[NormalisedUrl]:
    """The URLs normalised, without repeats, in first-seen order."""
    seen: dict[str, NormalisedUrl] = {}
    for raw in urls:
        url = normalise_url(raw)
        seen.setdefault(url.normalised, url)
    return list(seen.values())


def _tsl_index(tsl_urls: Sequence[NormalisedUrl]) -> tuple[dict[str, int], dict[str, int]]:
    """The first TSL of each normalised URL and of each host."""
    by_url: dict[str, int] = {}
    by_host: dict[str, int] = {}
    for i, known in enumerate(tsl_urls):
        by_url.setdefault(known.normalised, i)
        if known.host:
            by_host.setdefault(known.host, i)
    return by_url, by_host


def _spellings(
    annotations: Sequence[str],
) -> tuple[dict[str, NormalisedUrl], dict[str, list[str]]]:
    """The distinct annotations by normalised URL (first seen first), each with the raw
    spellings that normalise to it."""
    spellings: dict[str, list[str]] = {}
    firsts: dict[str, NormalisedUrl] = {}
    for raw in annotations:
        url = normalise_url(raw)
        if url.normalised not in firsts:
            firsts[url.normalised] = url
            spellings[url.normalised] = []
        if raw not in spellings[url.normalised]:
            spellings[url.normalised].append(raw)
    return firsts, spellings


def match_annotations(tsls: Sequence[str], annotations: Sequence[str]) -> list[UrlMatch]:
    """Each distinct annotation of a report with its match against the TSLs.

    full: its normalised URL equals a TSL's; host: otherwise its host is a TSL's host; none:
    neither. Under deduplication each TSL is matched fully by at most one annotation, so the
    number of full matches is the paper's match_full (distinct TSLs covered).
    """
    by_url, by_host = _tsl_index([normalise_url(u) for u in tsls])
    firsts, spellings = _spellings(annotations)
    out: list[UrlMatch] = []
    for key, url in firsts.items():
        if key in by_url:
            match: Match = "full"
            tsl: int | None = by_url[key]
        elif url.host and url.host in by_host:
            match, tsl = "host", by_host[url.host]
        else:
            match, tsl = "none", None
        out.append(UrlMatch(url, match, tsl, tuple(spellings[key])))
    return out


def under_a_tsl(url: str, tsl_urls: frozenset[str] | set[str]) -> bool:
    """A normalised URL equals a normalised TSL or lies under it: the TSL's host and path, then
    '/'. A site-root TSL (``who.int``) has every page of its host under it.

    The authors' notebook tests ``refe_item in anno_item`` on its normalised strings, so every
    citation that starts with a TSL is a full match; this is that test at path-segment
    boundaries (``unfccc.int/gla`` is not a prefix of ``unfccc.int/glasgow`` here).
    """
    if url in tsl_urls:
        return True
    cut = url.find("/")
    while cut != -1:
        if url[:cut] in tsl_urls:
            return True
        cut = url.find("/", cut + 1)
    return False
