"""What the detail pane says about one judgment, as a rich Text built piece by piece.

Every piece of report, source and judge text is appended as plain text (never parsed as
markup), so ``[bold]`` in a scraped page is shown as the characters it is.

The pane is where the decision is made, so it carries what the decision needs: why the verdict
is suspicious (if it is), the benchmark's grading context for it (a LiveDRBench task's
evaluation note and tolerances, a DR. Bench task's trusted sources …), and for claims the cited
page around the judge's evidence, saying which page that evidence is on.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

from reviewer.actions import REASON_CODES
from reviewer.citations import locate
from reviewer.grading import Claim, ContextItem, Criterion, Grading
from reviewer.registry import get_framework, get_kind, get_scale
from store.views.screens import JudgmentView, OtherVerdict, ReportView, SourceView, subject_label
from tui.numfmt import short_value
from tui.render.safe import SafeText as Text
from tui.widgets.report_text import visible

if TYPE_CHECKING:
    from reviewer.scales import Scale

PASSAGE = 420


def _section(text: Text, title: str) -> None:
    text.append("\n" + title + "\n", "bold underline")


def _plain(text: Text, value: str, style: str = "") -> None:
    text.append(visible(value), style)


def detail_text(
    view: ReportView,
    judgment: JudgmentView,
    *,
    blind: bool = False,
    history: list[tuple[str, str, str | None, str, str | None]] | None = None,
    runs: list[OtherVerdict] | None = None,
) -> Text:
    text = Text(end="")
    scale = get_scale(judgment.scale) if judgment.scale else None
    hidden = blind and not judgment.decided
    _verdict_lines(text, view, judgment, scale, hidden)
    # What the judge said comes first, under the verdict: it is what a decision weighs, and
    # on an 80×24 terminal the pane shows a few lines (d scrolls it).
    _judge_reasoning(text, judgment)
    if (judgment.live_suspicions or judgment.settled) and not hidden:
        _suspicions(text, judgment)
    _subtask(text, view, judgment)
    _rubric(text, view, judgment)
    _claim(text, view, judgment)
    for title, body in grading_context(view, judgment):
        _section(text, title)
        _plain(text, body + "\n")
    if runs and not hidden:
        _other_runs(text, judgment, runs)
    _sources(text, view, judgment)
    if history:
        _decisions(text, history)
    return text


def _verdict_lines(
    text: Text, view: ReportView, judgment: JudgmentView, scale: Scale | None, hidden: bool
) -> None:
    """What is judged, the judge's and the effective verdict (unless blind mode hides them),
    the judge's error, and the keys that decide on this scale."""
    kind = get_kind(judgment.kind)
    text.append(f"{kind.label if kind else judgment.kind}", "bold")
    text.append(f"  ·  {subject_label(view, judgment)}  ·  run {judgment.run}\n", "dim")
    if hidden:
        text.append("Judge: hidden until you decide (blind mode)\n", "italic")
    else:
        _judge_and_effective(text, judgment, scale)
    if judgment.error:
        text.append("Judge error: ", "bold red")
        _plain(text, judgment.error + "\n", "red")
    if scale is not None:
        keys = (
            "   ".join(f"{c.key}={c.label}" for c in scale.choices)
            if scale.choices
            else f"continuous {scale.low:g}–{scale.high:g}: press r to enter a value"
        )
        text.append(f"Keys: {keys}\n", "dim")


def _judge_and_effective(text: Text, judgment: JudgmentView, scale: Scale | None) -> None:
    text.append("Judge: ")
    judge = short_value(judgment.judge) if judgment.judge is not None else "no value"
    text.append(judge, "bold")
    if scale is not None and judgment.judge is not None and not scale.continuous:
        text.append(f" ({scale.label_of(judgment.judge)})", "dim")
    text.append("    Effective: ")
    text.append(short_value(judgment.effective), "bold magenta" if judgment.differs else "bold")
    status = judgment.status or "undecided"
    text.append(f"    [{status}", "dim")
    if judgment.reviewers > 1:
        text.append(f", {judgment.reviewers} reviewers", "dim")
    text.append("]\n", "dim")


def _suspicions(text: Text, judgment: JudgmentView) -> None:
    """The flags that stand (as the reviewers' decisions leave them), then those a decision
    on another subject settled, with what they had said."""
    live = judgment.live_suspicions
    _section(text, "◆ Why look twice" if live else "◆ Settled by a decision")
    for flag in live:
        text.append(f"{flag.rule}: ", "bold yellow")
        _plain(text, flag.reason + "\n")
    for flag in judgment.settled:
        text.append(f"{flag.rule}: ", "bold green")
        text.append("settled by a reviewer's decision on the other side; it had said: ", "green")
        _plain(text, flag.reason + "\n", "dim strike")


def _subtask(text: Text, view: ReportView, judgment: JudgmentView) -> None:
    subtask = next((s for s in view.subtasks if s.id == judgment.subtask_id), None)
    if subtask is None:
        return
    _section(text, "Subtask")
    importance = f"P2({subtask.group})" if subtask.importance == "P2a" else subtask.importance
    text.append(f"{subtask.ext} · {importance}", "bold")
    if subtask.constraint_types:
        text.append(f" · {', '.join(subtask.constraint_types)}", "dim")
    text.append("\n")
    _plain(text, subtask.text + "\n")


def _rubric(text: Text, view: ReportView, judgment: JudgmentView) -> None:
    criterion = view.criteria.get(judgment.criterion_id) if judgment.criterion_id else None
    if criterion is None:
        return
    _section(
        text,
        f"Rubric ({criterion.framework} · {criterion.dimension}"
        + (f" · weight {criterion.weight:g}" if criterion.weight is not None else "")
        + ")",
    )
    _plain(text, criterion.text + "\n", "bold")
    if criterion.explanation:
        _plain(text, criterion.explanation + "\n", "dim")


def _claim(text: Text, view: ReportView, judgment: JudgmentView) -> None:
    claim = view.claims.get(judgment.claim_id) if judgment.claim_id else None
    if claim is None:
        return
    _section(text, "Claim")
    text.append("fact:    ", "dim")
    _plain(text, claim.fact + "\n")
    if claim.extract and claim.extract != claim.fact:
        text.append("extract: ", "dim")
        _plain(text, claim.extract + "\n")
    if claim.span is None:
        text.append("not located in the report text\n", "yellow")
    if claim.citations:
        text.append("cites:   ", "dim")
        text.append(" ".join(f"[{i}]" for i in claim.citations) + "\n")


def _other_runs(text: Text, judgment: JudgmentView, runs: list[OtherVerdict]) -> None:
    _section(text, "Every judge run on this subject")
    for other in runs:
        this = other.run == judgment.run
        text.append(f"{'▶ ' if this else '  '}{other.run}", "bold" if this else "")
        text.append(f" ({other.model or 'model?'})", "dim")
        shown = short_value(other.value) if other.value is not None else "error"
        text.append(f": {shown}", "bold")
        _run_state(text, other, this)
        text.append("\n")
        if other.explanation and not this:
            _plain(text, f"    {other.explanation[:300]}\n", "dim")


def _run_state(text: Text, other: OtherVerdict, this: bool) -> None:
    """Whether a run's verdict counts: current, a candidate, or an error another run covers."""
    if other.current and not this:
        text.append("  [current]", "dim")
    if not other.active:
        text.append("  [candidate: does not count until activated]", "dim")
    elif other.value is None and not other.current:
        text.append("  [errored: another active run's valid verdict counts]", "yellow")


def _judge_reasoning(text: Text, judgment: JudgmentView) -> None:
    if judgment.explanation:
        _section(text, "Judge's explanation")
        _plain(text, judgment.explanation + "\n")
    if judgment.evidence:
        _section(text, "Judge's evidence")
        _plain(text, judgment.evidence + "\n", "italic")


def _sources(text: Text, view: ReportView, judgment: JudgmentView) -> None:
    urls = source_urls(view, judgment)
    home = evidence_home(view, judgment, urls)
    for url in urls:
        _source_block(text, view, judgment, url, home)
    if judgment.evidence and urls and home is None and _fetched(view, urls):
        text.append("\nthe judge's evidence is in none of these stored pages\n", "bold yellow")


def _decisions(text: Text, history: list[tuple[str, str, str | None, str, str | None]]) -> None:
    _section(text, "Decisions")
    for reviewer, action, value, rationale, reason in history:
        text.append(f"{reviewer}: {action}", "bold")
        if value is not None:
            text.append(f" = {short_value(value)}")
        if reason:
            text.append(f" · {REASON_CODES.get(reason, reason)}", "dim")
        text.append("\n")
        if rationale:
            _plain(text, f"  “{rationale}”\n", "italic")


def grading_context(view: ReportView, judgment: JudgmentView) -> list[tuple[str, str]]:
    """The framework's grading context for a verdict (see :class:`reviewer.grading.Grading`)."""
    grading = _grading(judgment)
    if grading is None or grading.context is None:
        return []
    return grading.context(_context_item(view, judgment))


def _grading(judgment: JudgmentView) -> Grading | None:
    """The grading rules of the verdict's framework, if it has any."""
    kind = get_kind(judgment.kind)
    if kind is None:
        return None
    try:
        return get_framework(kind.framework).grading
    except KeyError:
        return None


def _context_item(view: ReportView, judgment: JudgmentView) -> ContextItem:
    criterion = view.criteria.get(judgment.criterion_id) if judgment.criterion_id else None
    claim = view.claims.get(judgment.claim_id) if judgment.claim_id else None
    return ContextItem(
        judgment.kind,
        judgment.judge,
        judgment.key,
        _criterion(criterion) if criterion is not None else None,
        Claim(claim.ext, claim.fact, claim.extract, claim.citations, claim.url, claim.metadata)
        if claim is not None
        else None,
        view.task_metadata,
        [_criterion(c) for c in view.criteria.values()],
        judgment.evidence or None,
    )


def _criterion(criterion: object) -> Criterion:
    from store.views.screens import CriterionView

    assert isinstance(criterion, CriterionView)
    return Criterion(
        criterion.ext,
        criterion.dimension,
        criterion.text,
        criterion.explanation,
        criterion.metadata,
    )


def source_urls(view: ReportView, judgment: JudgmentView) -> list[str]:
    """The stored pages a verdict is about: its reference, or every page its claim cites."""
    claim = view.claims.get(judgment.claim_id) if judgment.claim_id else None
    if claim is None:
        return []
    if judgment.ref_idx is not None:
        indices: tuple[int, ...] = (judgment.ref_idx,)
    else:
        indices = claim.citations
    urls = [view.references[i][1] for i in indices if i in view.references]
    if claim.url:
        urls.append(claim.url)
    return [u for u in dict.fromkeys(urls) if u]


def evidence_home(view: ReportView, judgment: JudgmentView, urls: list[str]) -> str | None:
    """The page (of ``urls``, else of the report's other stored pages) the judge's quoted
    evidence is on: the integrity line names it instead of warning under every other page."""
    if not judgment.evidence:
        return None
    others = [u for u in view.sources if u not in urls]
    for url in [*urls, *others]:
        source = view.sources.get(url)
        if source is not None and source.text and locate(source.text, judgment.evidence):
            return url
    return None


def _fetched(view: ReportView, urls: list[str]) -> bool:
    return any((s := view.sources.get(u)) is not None and bool(s.text) for u in urls)


def _ref_of(view: ReportView, judgment: JudgmentView, url: str) -> int | None:
    if judgment.ref_idx is not None and view.references.get(judgment.ref_idx, ("", ""))[1] == url:
        return judgment.ref_idx
    return next((i for i, (_, u) in view.references.items() if u == url), None)


def _source_block(
    text: Text, view: ReportView, judgment: JudgmentView, url: str, home: str | None
) -> None:
    ref = _ref_of(view, judgment, url)
    source = view.sources.get(url)
    title = (
        source.title
        if source and source.title
        else (view.references[ref][0] if ref is not None else "")
    )
    _section(text, f"Source [{ref}]" if ref is not None else "Source")
    _plain(text, title + "\n", "bold")
    _plain(text, url + "\n", "blue")
    if source is None:
        text.append("not fetched: no stored page for this URL\n", "yellow")
        return
    for key, value in source.metadata.items():
        text.append(f"{key}: ", "dim")
        _plain(text, f"{value}\n", "bold")
    _integrity(text, view, judgment, source, home)
    if source.error or not source.text:
        return
    _cited_passage(text, source, judgment.evidence if home == url else "")


def _cited_passage(text: Text, source: SourceView, evidence: str) -> None:
    """The page around the judge's evidence (marked), or its start when the evidence is on
    another page; an ellipsis where the window cuts the page."""
    passage, lo = _passage(source, evidence)
    body = Text(visible(passage), end="")
    if lo is not None:
        body.stylize("black on yellow", lo[0], lo[1])
    text.append("…" if not passage.startswith(source.text[:20]) else "")
    text.append_text(body)
    text.append("…\n" if not source.text.endswith(passage[-20:]) else "\n")
    text.append("v: the whole page, scrollable\n", "dim")


def _integrity(
    text: Text, view: ReportView, judgment: JudgmentView, source: SourceView, home: str | None
) -> None:
    if source.error:
        text.append("fetch error: ", "bold red")
        _plain(text, source.error, "red")
        text.append(
            " — the judge cannot have seen this page; unknown is the defined verdict\n", "dim"
        )
        return
    _page_version(text, judgment, source)
    if judgment.evidence:
        _evidence_page(text, view, judgment, source, home)


def _page_version(text: Text, judgment: JudgmentView, source: SourceView) -> None:
    """Whether the stored page is intact and is the version the judge saw."""
    actual = hashlib.sha256(source.text.encode("utf-8")).hexdigest()
    if actual != source.sha256:
        text.append(
            f"integrity: stored hash {source.sha256[:12]}… does not match the stored "
            f"text ({actual[:12]}…)\n",
            "bold red",
        )
    elif judgment.source_sha256 and judgment.source_sha256 != source.sha256:
        text.append(
            f"integrity: the judge saw a different version ({judgment.source_sha256[:12]}"
            f"…) than the stored page ({source.sha256[:12]}…)\n",
            "bold yellow",
        )
    elif judgment.source_sha256:
        text.append(f"integrity: page {source.sha256[:12]}… is the one the judge saw\n", "green")
    else:
        text.append(
            f"page sha256 {source.sha256[:12]}… (fetched {source.fetched_at or '?'}; "
            "the judgment does not record which version it saw)\n",
            "dim",
        )


def _evidence_page(
    text: Text, view: ReportView, judgment: JudgmentView, source: SourceView, home: str | None
) -> None:
    """Which page the judge's evidence is from: this one, or which other."""
    if home == source.url:
        text.append("the judge's evidence is from this page (marked below)\n", "green")
    elif home is not None:
        ref = _ref_of(view, judgment, home)
        where = f"[{ref}]" if ref is not None else home
        other = view.sources.get(home)
        text.append(
            f"the judge's evidence is from {where}"
            + (f" {other.title}" if other is not None and other.title else "")
            + ", not this page\n",
            "dim",
        )


def _passage(source: SourceView, evidence: str) -> tuple[str, tuple[int, int] | None]:
    """A window of the page around the evidence (or its start), and the evidence's offsets."""
    found = locate(source.text, evidence) if evidence else None
    if found is None:
        return source.text[:PASSAGE], None
    start, end = found
    lo = max(0, start - PASSAGE // 2)
    hi = min(len(source.text), max(end, lo + PASSAGE))
    return source.text[lo:hi], (start - lo, end - lo)
