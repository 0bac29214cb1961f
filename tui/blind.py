"""Blind review on the overlap: a report as a reviewer sees it while other reviewers' values
on their overlap subjects must stay hidden (:func:`store.assignments.progress.blind_subjects`).

Those verdicts show as undecided, with the judge's value and no history, until the reviewer
decides them; then the report is reloaded and everything shows, a disagreement included.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TypeVar

from store.views.screens import ReportView

H = TypeVar("H")


def blinded(
    view: ReportView, history: dict[int, H], subjects: set[int]
) -> tuple[ReportView, dict[int, H]]:
    if not subjects:
        return view, history
    hidden = {j.id for j in view.judgments if j.subject_id in subjects}
    view.judgments = [
        replace(j, status=None, effective=j.judge, reviewers=0) if j.id in hidden else j
        for j in view.judgments
    ]
    return view, {jid: h for jid, h in history.items() if jid not in hidden}
