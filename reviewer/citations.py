"""Citation markers and reference lists in deep-research reports.

Reports cite in several dialects (DailyReport App. C, "Match Claims with References"):
``[1][2]``, ``[(15)](https://…)``, ``[citation:53]``, ``[15†L10]`` (only 15 counts), ``[1, 3]`` and
ranges ``[2-4]``. A final ``## References`` section lists ``[n] Title_Site URL`` (also numbered
``1.`` lists and Markdown links). Everything here works on plain strings: the text is data and
is never interpreted as markup.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# One marker. Alternatives, in order: [(15)](url) | [citation:53] | [15†L10] / [15] / [1, 2] / [2-4]
# ([3](url), Perplexity's form, matches as [3]; the link that follows is left alone.)
_MARKER = re.compile(
    r"\[\((?P<paren>\d{1,4})\)\]\((?P<link>[^)\s]*)\)"
    r"|\[citation:\s*(?P<cite>\d{1,4})\]"
    r"|\[(?P<list>\d{1,4}(?:\s*(?:†|&dagger;)[^\]]*)?(?:\s*[,;–-]\s*\d{1,4}(?:†[^\]]*)?)*)\]"
)
_NUM = re.compile(r"\d{1,4}")
_RANGE = re.compile(r"^\s*(\d{1,4})\s*[–-]\s*(\d{1,4})\s*$")
_HEADING = re.compile(
    r"^[ \t]{0,3}#{1,6}[ \t]*"
    r"(references|reference list|sources|bibliography|works cited|参考文献|参考资料|引用)"
    r"[ \t]*:?[ \t]*$",
    re.IGNORECASE | re.MULTILINE,
)
_REF_LINE = re.compile(
    r"^\s*(?:[-*]\s*)?(?:\[(?P<b>\d{1,4})\]|(?P<d>\d{1,4})[.)])\s*(?P<rest>.*\S)\s*$"
)
_URL = re.compile(r"https?://(?:\[[0-9A-Za-z:.%]+\][^\s<>\]\)\"']*|[^\s<>\]\)\"']+)")
"""A bare URL: up to whitespace, a closing bracket or quote — except the brackets of an IPv6
host (``http://[::1]:18091/x``), which belong to it."""
_NEXT_HEADING = re.compile(r"^\s{0,3}#{1,6}\s")
_MD_LINK = re.compile(r"\[(?P<title>[^\]]*)\]\((?P<url>https?://[^)\s]+)\)")


@dataclass(frozen=True, slots=True)
class Marker:
    """A citation marker found in text: where it is and which reference indices it cites."""

    start: int
    end: int
    indices: tuple[int, ...]
    url: str | None = None


@dataclass(frozen=True, slots=True)
class ParsedReference:
    index: int
    title: str
    url: str | None


def find_markers(text: str, start: int = 0, end: int | None = None) -> list[Marker]:
    """Every citation marker in ``text[start:end]``, with absolute offsets."""
    stop = len(text) if end is None else end
    markers: list[Marker] = []
    for match in _MARKER.finditer(text, start, stop):
        if match.group("paren"):
            index = int(match.group("paren"))
            markers.append(Marker(match.start(), match.end(), (index,), match.group("link")))
        elif match.group("cite"):
            markers.append(Marker(match.start(), match.end(), (int(match.group("cite")),)))
        else:
            indices = _list_indices(match.group("list"))
            if indices:
                markers.append(Marker(match.start(), match.end(), indices))
    return markers


def _list_indices(body: str) -> tuple[int, ...]:
    out: list[int] = []
    for part in re.split(r"[,;]", body):
        part = part.split("†", 1)[0].split("&dagger;", 1)[0]
        rng = _RANGE.match(part)
        if rng:
            lo, hi = int(rng.group(1)), int(rng.group(2))
            if lo <= hi and hi - lo <= 50:
                out.extend(range(lo, hi + 1))
                continue
        nums = _NUM.findall(part)
        if nums:
            out.append(int(nums[0]))
    return tuple(dict.fromkeys(out))


def cited_indices(text: str) -> tuple[int, ...]:
    """Reference indices cited anywhere in ``text``, in first-seen order, without repeats."""
    seen: dict[int, None] = {}
    for marker in find_markers(text):
        for index in marker.indices:
            seen.setdefault(index, None)
    return tuple(seen)


def _last_heading(markdown: str) -> re.Match[str] | None:
    """The last references heading: found from the end, one line with a '#' at a time (a
    heading is one line and has one), rather than by scanning the whole report."""
    end = len(markdown)
    while (at := markdown.rfind("#", 0, end)) >= 0:
        start = markdown.rfind("\n", 0, at) + 1
        found = _HEADING.match(markdown, start)
        if found is not None:
            return found
        end = start
    return None


def body_end(markdown: str) -> int:
    """Offset where the references section starts (the whole text when there is none)."""
    heading = _last_heading(markdown)
    return heading.start() if heading is not None else len(markdown)


def parse_references(markdown: str) -> list[ParsedReference]:
    """The numbered entries of the last references section (``[n] Title URL`` or ``n. …``)."""
    heading = _last_heading(markdown)
    if heading is None:
        return []
    refs: dict[int, ParsedReference] = {}
    for line in markdown[heading.end() :].splitlines():
        if _NEXT_HEADING.match(line):
            break
        m = _REF_LINE.match(line)
        if m:
            index = int(m.group("b") or m.group("d"))
            refs.setdefault(index, _reference(index, m.group("rest")))
    return [refs[i] for i in sorted(refs)]


def _reference(index: int, rest: str) -> ParsedReference:
    """An entry's title and URL: a Markdown link's, else the first bare URL and what precedes
    it."""
    link = _MD_LINK.search(rest)
    if link:
        url: str | None = link.group("url")
        title = (link.group("title") or rest[: link.start()]).strip()
    else:
        found = _URL.search(rest)
        url = found.group(0).rstrip(".,;") if found else None
        title = (rest[: found.start()] if found else rest).strip()
    return ParsedReference(index, title.strip(" -–—:|").strip(), url)


def citations_near(markdown: str, start: int, end: int) -> tuple[int, ...]:
    """Indices cited inside a claim span or by the markers right after it.

    A claim's verbatim ``fact`` often stops before its markers ("… 80 billion yuan [63]."), so
    markers that follow the span with only spaces or punctuation between are the claim's too.
    """
    indices: dict[int, None] = {}
    for marker in find_markers(markdown, start, end):
        for index in marker.indices:
            indices.setdefault(index, None)
    pos = end
    limit = min(len(markdown), end + 400)
    while pos < limit:
        while pos < limit and markdown[pos] in " \t*_.,;:)”\"'":
            pos += 1
        match = _MARKER.match(markdown, pos)
        if match is None:
            break
        for marker in find_markers(markdown, match.start(), match.end()):
            for index in marker.indices:
                indices.setdefault(index, None)
        pos = match.end()
    return tuple(indices)


def locate(haystack: str, needle: str, hint: int = 0) -> tuple[int, int] | None:
    """Character span of ``needle`` in ``haystack``: exact first, then whitespace-insensitive."""
    if not needle:
        return None
    at = haystack.find(needle, hint)
    if at < 0 and hint:
        at = haystack.find(needle)
    if at >= 0:
        return at, at + len(needle)
    words = needle.split()
    if not words:
        return None
    pattern = r"\s+".join(re.escape(w) for w in words)
    found = re.search(pattern, haystack)
    if found:
        return found.start(), found.end()
    return None
