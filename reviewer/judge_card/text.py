"""A judge card as plain data (JSON) and as Markdown, for a file beside a leaderboard release.

Every figure carries its interval and the number of labels behind it; a row with too few
labels says so in place of an interval. Text from reports, rubrics and rationales is escaped
for Markdown tables (pipes, newlines) and never interpreted.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from reviewer.judge_card.build import Card, Row
from reviewer.judge_card.stats import Agreement, Interval

TOO_FEW = "too few labels"


def card_record(card: Card) -> dict[str, Any]:
    """The whole card as JSON-ready data."""
    return {
        "run": card.run,
        "model": card.model,
        "active": card.active,
        "settings": asdict(card.settings),
        "labels": card.labels,
        "errored": card.errored,
        "notes": list(card.notes),
        "benchmarks": [_row(r) for r in card.benchmarks],
        "kinds": [_row(r) for r in card.kinds],
        "items": [_row(r) for r in card.items],
        "below_threshold": [r.item for r in card.flagged],
    }


def _row(row: Row) -> dict[str, Any]:
    stats = row.stats
    out: dict[str, Any] = {
        "framework": row.framework,
        "kind": row.kind,
        "dimension": row.dimension,
        "item": row.item,
        "text": row.text,
        "tasks": list(row.tasks),
        "n": stats.n,
        "too_few_labels": stats.too_few,
        "level": stats.level,
        "accuracy": asdict(stats.accuracy),
        "coefficient": stats.coefficient,
        "value": asdict(stats.value) if stats.value else None,
        "kappa": asdict(stats.kappa) if stats.kappa else None,
        "ac1": asdict(stats.ac1) if stats.ac1 else None,
        "confusion": (
            {
                "rows": "judge",
                "columns": "human",
                "labels": [str(x) for x in stats.confusion.labels],
                "counts": [list(r) for r in stats.confusion.counts],
            }
            if stats.confusion
            else None
        ),
        "bias": {
            "lenient": asdict(stats.bias.lenient),
            "strict": asdict(stats.bias.strict),
            "direction": stats.bias.direction,
        },
        "caveats": list(stats.caveats),
        "below_threshold": row.below_threshold,
    }
    if row.examples:
        out["examples"] = [asdict(e) for e in row.examples]
    return out


def number(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def interval_text(found: Interval | None, too_few: bool = False) -> str:
    """``0.512 [0.401, 0.610]``; the point alone, marked, where no interval was formed."""
    if found is None or found.estimate is None:
        return "—"
    if found.lower is None or found.upper is None:
        return f"{number(found.estimate)} ({TOO_FEW})" if too_few else number(found.estimate)
    return f"{number(found.estimate)} [{number(found.lower)}, {number(found.upper)}]"


def share_text(found: Interval) -> str:
    if not found.n:
        return "—"
    return f"{found.count}/{found.n} {interval_text(found)}"


def coefficient_text(stats: Agreement) -> str:
    if stats.coefficient is None or stats.value is None:
        return "—"
    return f"{stats.coefficient} {interval_text(stats.value, stats.too_few)}"


def bias_text(stats: Agreement) -> str:
    return stats.bias.direction


def _cell(text: str) -> str:
    return " ".join(text.replace("\\", "\\\\").replace("|", "\\|").split())


def _md_row(row: Row, label: str) -> str:
    stats = row.stats
    cells = [
        label,
        str(stats.n) + (f" ({TOO_FEW})" if stats.too_few else ""),
        interval_text(stats.accuracy),
        coefficient_text(stats),
        share_text(stats.bias.lenient),
        share_text(stats.bias.strict),
        bias_text(stats),
    ]
    return "| " + " | ".join(_cell(c) for c in cells) + " |"


_HEAD = (
    "| {what} | labels | accuracy | coefficient | judge above human | judge below human | "
    "bias |\n|---|---:|---|---|---|---|---|"
)


def card_markdown(card: Card) -> str:
    """The card as a Markdown document."""
    s = card.settings
    state = "active" if card.active else "candidate"
    lines = [
        f"# Judge card: {_cell(card.run)}",
        "",
        f"Model `{_cell(card.model)}` ({state}). {card.labels} subjects judged by this run "
        f"carry a human decision; {card.errored} of those the run judged with an error "
        "(left out).",
        "",
        f"Intervals at {s.confidence:.0%}: Wilson for shares, percentile bootstrap "
        f"({s.n_resamples} resamples over labels, seed {s.seed}) for κ and AC1. Rows with "
        f"fewer than {s.min_labels} labels have no coefficient interval ({TOO_FEW}). "
        f"Items whose coefficient's upper bound is below {s.threshold} are proposed for "
        "revision.",
        "",
    ]
    lines += [f"> {_cell(n)}" for n in card.notes]
    lines += ["## Per benchmark", "", _HEAD.format(what="benchmark")]
    lines += [_md_row(r, r.framework) for r in card.benchmarks]
    lines += ["", "## Per kind and dimension", "", _HEAD.format(what="kind / dimension")]
    lines += [_md_row(r, _kind_label(r)) for r in card.kinds]
    lines += ["", "## Per rubric item (worst first)", "", _HEAD.format(what="item")]
    lines += [_md_row(r, _item_label(r)) for r in card.items]
    lines += _md_flagged(card)
    lines += _md_confusions(card)
    return "\n".join(lines) + "\n"


def _kind_label(row: Row) -> str:
    return f"{row.kind} / {row.dimension}" if row.dimension else row.kind


def _item_label(row: Row) -> str:
    text = row.text if len(row.text) <= 60 else row.text[:59] + "…"
    mark = " **below threshold**" if row.below_threshold else ""
    return f"{row.kind} {row.item}: {text}{mark}"


def _md_flagged(card: Card) -> list[str]:
    if not card.flagged:
        return []
    out = ["", "## Items to revise", ""]
    for row in card.flagged:
        out += [f"### {_cell(row.kind)} {_cell(row.item)}", "", _cell(row.text), ""]
        for e in row.examples:
            out.append(
                f"- {_cell(e.report)}: judge {_cell(e.judge)}, human {_cell(e.human)} "
                f"({_cell(e.reviewer)}: {_cell(e.rationale) or 'no rationale'})"
            )
        out.append("")
    return out


def _md_confusions(card: Card) -> list[str]:
    out: list[str] = []
    for row in card.kinds:
        confusion = row.stats.confusion
        if confusion is None or not row.stats.n:
            continue
        labels = [_cell(str(x)) for x in confusion.labels]
        out += ["", f"### {_cell(_kind_label(row))}: judge (rows) × human (columns)", ""]
        out.append("| judge \\\\ human | " + " | ".join(labels) + " |")
        out.append("|---|" + "---:|" * len(labels))
        for label, counts in zip(labels, confusion.counts, strict=True):
            out.append(f"| {label} | " + " | ".join(str(c) for c in counts) + " |")
    return ["", "## Confusion matrices", *out] if out else []
