"""What a claim-bearing verdict carries of its claim, so counting needs no join.

A full recompute counts each report's claim verdicts by value, and separately those whose
claim cites a reference. Looking every verdict's claim up made counting slower than reading
every row; the verdict therefore carries the fact, written with it (by the importer and the
judge runner) and never changed, since neither a claim nor a verdict is ever edited:

* ``1`` — its claim cites a reference (a non-empty citation list or a url), ``0`` — it does
  not (``ClaimIn``'s test);
* ``-1`` — counts cannot describe the verdict: its claim is another report's, its citation
  list is written otherwise than ``[]`` or ``[<number>…``, or it is filed under another
  subtask than its claim's; its report is scored from rows;
* NULL — the verdict has no claim.
"""

from __future__ import annotations

UNDESCRIBED = -1

_DIGITS = frozenset("0123456789")


def claim_cited(citations: str, url: str | None) -> int:
    """A claim's flag from its stored citation list (JSON text) and url."""
    if citations == "[]":
        return 0 if url is None else 1
    if len(citations) < 2 or citations[0] != "[" or citations[1] not in _DIGITS:
        return UNDESCRIBED
    return 1


def verdict_cited(claim: int, subtask: int | None, claim_subtask: int | None) -> int:
    """A verdict's flag: its claim's, unless it is filed under another subtask."""
    return claim if subtask == claim_subtask else UNDESCRIBED


CLAIM_CITED_SQL = """(SELECT CASE
        WHEN c.report_id != judgment.report_id
          OR (c.citations != '[]' AND c.citations NOT GLOB '[[][0-9]*')
          OR judgment.subtask_id IS NOT coalesce(c.subtask_id, (
                SELECT k.subtask_id FROM criterion k WHERE k.id = c.criterion_id))
        THEN -1
        WHEN c.citations != '[]' OR c.url IS NOT NULL THEN 1 ELSE 0 END
    FROM claim c WHERE c.id = judgment.claim_id)"""
"""The flag of a stored ``judgment`` row, computed from its claim (the migration that added
the column, and the tests that hold the writers to it)."""
