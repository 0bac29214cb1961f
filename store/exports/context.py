"""What the exports carry beside a verdict: the suspicion flags on its subject, and what the
judge saw when it gave the verdict (the rubric's levels, its explanation and evidence, the
cited passage, the claim's sentence in the report), so a row can be read or used to train
another judge without joining back to the database."""

from __future__ import annotations

import json
import re
import sqlite3
from collections import defaultdict
from typing import Any

from reviewer.citations import locate

Record = dict[str, Any]

PASSAGE = 420
"""Characters of page around the judge's evidence: what the detail pane shows of it."""


def suspicions(conn: sqlite3.Connection) -> dict[int, list[Record]]:
    """Subject id -> its suspicion flags (rule, weight, reason), strongest first: the ◆
    reasons the workstation shows. Flags are few (a handful per report), so all are read."""
    out: dict[int, list[Record]] = defaultdict(list)
    for sid, rule, weight, reason in conn.execute(
        "SELECT subject_id, rule, weight, reason FROM suspicion "
        "ORDER BY subject_id, weight DESC, rule"
    ):
        out[sid].append({"rule": rule, "weight": weight, "reason": reason})
    return out


SUSPICION_FIELDS = (("rule", "string"), ("weight", "float64"), ("reason", "string"))
"""A flag's fields and their Arrow types, for the Parquet schemas."""


def suspicion_type() -> Any:
    import pyarrow as pa

    return pa.list_(pa.struct([(name, getattr(pa, kind)()) for name, kind in SUSPICION_FIELDS]))


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n\s*\n|\n(?=\s*[-*#|>]|\s*\d+[.)]\s)")
"""Where a sentence of a report ends: after . ! ? and a space, at a blank line, or before a
list item, heading, table row or quote (markdown puts one a line without a full stop)."""


SENTENCE_REACH = 1000
"""How far before and after a claim a sentence end is looked for: a longer "sentence" (a table,
a run-on list) is cut there, and a long report is not scanned from its start for every claim."""


def sentence_around(text: str, start: int | None, end: int | None) -> str:
    """The sentence(s) of ``text`` holding the span ``start``–``end``: a claim as the reader
    met it, with what precedes and follows it in the same sentence ('' when not located)."""
    if start is None or end is None or not text or start >= len(text):
        return ""
    end = min(max(end, start), len(text))
    lo = max(0, start - SENTENCE_REACH)
    for found in _SENTENCE_END.finditer(text, lo, start):
        lo = found.end()
    after = _SENTENCE_END.search(text, end, end + SENTENCE_REACH)
    hi = after.start() if after else min(len(text), end + SENTENCE_REACH)
    return text[lo:hi].strip()


def cited_passage(pages: list[tuple[str, str]], evidence: str) -> tuple[str | None, str]:
    """(url, passage): the first of the verdict's pages (url, text) holding the judge's
    evidence, and the page around it; (None, '') when no page holds it (nothing quoted, the
    page not stored, or the quote not on it)."""
    if not evidence:
        return None, ""
    for url, page in pages:
        found = locate(page, evidence) if page else None
        if found is not None:
            start, stop = found
            lo = max(0, start - PASSAGE // 2)
            hi = min(len(page), max(stop, lo + PASSAGE))
            return url, page[lo:hi]
    return None, ""


def claim_dimensions(conn: sqlite3.Connection) -> dict[int, tuple[str, str]]:
    """Subtask id -> (dimension, levels) of the rubric its claims count in: the subtask's
    rubric that no verdict judges directly, because it is scored from the claims
    (DailyReport's fac). A claim names no criterion of its own, so this is where its
    dimension comes from."""
    judged = {cid for (cid,) in conn.execute("SELECT DISTINCT criterion_id FROM judgment")}
    out: dict[int, tuple[str, str]] = {}
    for cid, subtask, dimension, levels in conn.execute(
        "SELECT id, subtask_id, dimension, explanation FROM criterion "
        "WHERE subtask_id IS NOT NULL ORDER BY subtask_id, ordinal"
    ):
        if cid not in judged:
            out.setdefault(subtask, (dimension, levels))
    return out


class JudgeSaw:
    """What the judge saw for one verdict, read as the gold rows stream past: a report's
    references and the pages its claims cite are read once each (rows come a report at a
    time)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.report: tuple[int, dict[int, str]] | None = None
        self.pages: dict[tuple[int, str], str] = {}

    def of(self, row: Record) -> Record:
        """The context columns of a verdict row (``_JUDGES_SQL``'s fields)."""
        evidence = row["evidence"] or ""
        url, passage = cited_passage(self._pages(row), evidence)
        return {
            "rubric_levels": row["levels"] or "",
            "claim_sentence": self._sentence(row),
            "judge_explanation": row["explanation"] or "",
            "judge_evidence": evidence,
            "cited_url": url,
            "cited_passage": passage,
        }

    def _references(self, report_id: int) -> dict[int, str]:
        """The report's reference index -> URL (the last report's, kept)."""
        if self.report is None or self.report[0] != report_id:
            refs = dict(
                self.conn.execute(
                    "SELECT idx, url FROM reference WHERE report_id = ? AND url IS NOT NULL",
                    (report_id,),
                ).fetchall()
            )
            self.report = (report_id, refs)
        return self.report[1]

    def _sentence(self, row: Record) -> str:
        """The claim's sentence, from the part of the report around it (SQLite cuts it out,
        so a long report is not copied whole for every claim)."""
        start, end = row["span_start"], row["span_end"]
        if start is None or end is None:
            return ""
        lo = max(0, start - SENTENCE_REACH)
        (window,) = self.conn.execute(
            "SELECT substr(markdown, ?, ?) FROM report WHERE id = ?",
            (lo + 1, max(end, start) - lo + SENTENCE_REACH, row["report_id"]),
        ).fetchone()
        return sentence_around(window or "", start - lo, end - lo)

    def _pages(self, row: Record) -> list[tuple[str, str]]:
        """The stored pages a claim's verdict is about: its reference, else every page the
        claim cites (and its own url); none for a verdict on a rubric."""
        if row["citations"] is None or not row["evidence"]:
            return []
        refs = self._references(row["report_id"])
        if row["ref_idx"] is not None:
            urls = [refs.get(row["ref_idx"])]
        else:
            urls = [refs.get(i) for i in _indices(row["citations"])]
        urls.append(row["claim_url"])
        return [(u, self._page(row["suite_id"], u)) for u in dict.fromkeys(urls) if u]

    def _page(self, suite_id: int, url: str) -> str:
        key = (suite_id, url)
        if key not in self.pages:
            found = (
                self.conn.execute(
                    "SELECT text FROM source WHERE suite_id = ? AND url = ? AND error IS NULL",
                    key,
                ).fetchone()
                or self.conn.execute(
                    "SELECT text FROM page_fetch WHERE suite_id = ? AND url = ? AND error IS NULL "
                    "ORDER BY fetched_at DESC, id DESC LIMIT 1",
                    key,
                ).fetchone()
            )
            self.pages[key] = found[0] if found else ""
        return self.pages[key]


def _indices(citations: str) -> list[int]:
    try:
        value = json.loads(citations)
    except ValueError:
        return []
    return [i for i in value if isinstance(i, int)] if isinstance(value, list) else []
