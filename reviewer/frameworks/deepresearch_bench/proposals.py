"""DeepResearch Bench ground-truth expansions: new RACE criteria (FACT's are free-form)."""

from __future__ import annotations

from typing import Any

from reviewer.framework import Proposals, Selection, Shape, needs_json, no_text

DIMENSIONS = ("comprehensiveness", "insight", "instruction_following", "readability")


def draft(kind: str, selection: Selection | None, text: str) -> Any:
    if not text:
        raise no_text()
    if kind != "new_rubric":
        raise needs_json(kind, "race")
    dimension = selection.dimension if selection and selection.dimension else "comprehensiveness"
    return {"dimension": dimension, "criterion": text}


RACE_PROPOSALS = Proposals(
    shapes={
        "new_rubric": Shape(
            ("dimension", "criterion"),
            ("explanation", "weight"),
            ("criterion",),
            choices={"dimension": DIMENSIONS},
            numbers=("weight",),
        )
    },
    draft=draft,
)
FACT_PROPOSALS = Proposals(free_form=True, report_claims=True)
