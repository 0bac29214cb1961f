"""DailyReport ground-truth expansions: new rubric items and new claims of a subtask."""

from __future__ import annotations

from typing import Any

from reviewer.framework import DraftError, Proposals, Selection, Shape, no_text

DIMENSIONS = ("ins", "fac", "rat")


def draft(kind: str, selection: Selection | None, text: str) -> Any:
    """A new item of the subtask whose judgment is selected (a rubric keeps its dimension)."""
    if not text:
        raise no_text()
    subtask = selection.subtask if selection else None
    if subtask is None:
        raise DraftError("select a judgment of the subtask the new item belongs to")
    if kind == "new_claim":
        return {"subtask": subtask, "fact": text, "extract": text}
    dimension = selection.dimension if selection and selection.dimension else "ins"
    return {"subtask": subtask, "dimension": dimension, "text": text}


def gold(kind: str, payload: dict[str, Any]) -> Any:
    """A claim's ``extract`` (the context-completed statement) defaults to its fact."""
    if kind != "new_claim":
        return None
    return {
        "subtask": payload["subtask"],
        "fact": payload["fact"],
        "extract": payload.get("extract") or payload["fact"],
    }


PROPOSALS = Proposals(
    shapes={
        "new_rubric": Shape(
            ("subtask", "dimension", "text"),
            ("explanation",),
            ("text",),
            choices={"dimension": DIMENSIONS},
        ),
        "new_claim": Shape(("subtask", "fact"), ("extract",), ("extract", "fact")),
    },
    report_claims=True,
    draft=draft,
    gold=gold,
)
