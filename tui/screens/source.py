"""The whole stored source page of a verdict, scrollable, with what the decision turns on marked.

The detail pane shows a window of the page around the judge's evidence; deciding whether a
page supports a claim often needs the rest of it (a figure two paragraphs down, a caveat at the
end). This screen shows every character of the stored page, as stored, with the judge's quoted
evidence marked and, separately, the passage that best matches the claim (what the claim cites
the page for), and jumps to either.
"""

from __future__ import annotations

import re

from textual.app import ComposeResult
from textual.widgets import Header, Static

from reviewer.citations import locate
from reviewer.levels import content
from store.views.screens import JudgmentView, ReportView, SourceView
from tui.detail import evidence_home
from tui.detail import source_urls as _source_urls
from tui.keymap import bindings
from tui.render.safe import SafeText as Text
from tui.screens.base import GavelScreen
from tui.widgets.footer import GavelFooter
from tui.widgets.report_text import ReportText, Span, visible

_SENTENCE = re.compile(r"[^.!?\n]+(?:[.!?]+|\n|$)")


def source_urls(view: ReportView, judgment: JudgmentView) -> list[str]:
    """Every stored page the verdict is about (its reference, or every page its claim cites)."""
    return _source_urls(view, judgment)


def cited_passage(page: str, claim: str) -> tuple[int, int] | None:
    """The sentence of ``page`` that shares the most content words with the claim (at least
    three, or half the claim's), or the claim itself where the page repeats it verbatim."""
    if not claim.strip() or not page:
        return None
    exact = locate(page, claim)
    if exact is not None:
        return exact
    wanted = set(content(claim))
    best = _best_sentence(page, wanted) if wanted else None
    if best is None or best[0] < min(3, max(1, len(wanted) // 2)):
        return None
    start, end = best[1], best[2]
    while start < end and page[start].isspace():
        start += 1
    return start, end


def _best_sentence(page: str, wanted: set[str]) -> tuple[int, int, int] | None:
    """The first sentence sharing the most of ``wanted``'s words: (how many, start, end)."""
    best: tuple[int, int, int] | None = None
    for match in _SENTENCE.finditer(page):
        shared = len(wanted & set(content(match.group())))
        if shared and (best is None or shared > best[0]):
            best = (shared, match.start(), match.end())
    return best


class SourceScreen(GavelScreen):
    KEY_CONTEXT = "source"
    BINDINGS = bindings(KEY_CONTEXT)

    def __init__(self, view: ReportView, judgment: JudgmentView, urls: list[str]) -> None:
        super().__init__(id="source")
        self.view = view
        self.judgment = judgment
        self.urls = urls
        home = evidence_home(view, judgment, urls)
        self.position = urls.index(home) if home in urls else 0
        self.evidence: tuple[int, int] | None = None
        self.passage: tuple[int, int] | None = None

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("", id="source-head")
        yield ReportText(id="source-text")
        yield GavelFooter()

    def on_mount(self) -> None:
        self.show()

    @property
    def url(self) -> str:
        return self.urls[self.position]

    def show(self) -> None:
        view, judgment, url = self.view, self.judgment, self.url
        source = view.sources.get(url)
        claim = view.claims.get(judgment.claim_id) if judgment.claim_id else None
        text = source.text if source is not None else ""
        self.evidence = locate(text, judgment.evidence) if judgment.evidence and text else None
        self.passage = cited_passage(text, claim.fact if claim else "") if text else None
        self.sub_title = f"{view.report} · {judgment.kind}"
        self.query_one("#source-head", Static).update(self._head(source))
        self._show_page(text)

    def _head(self, source: SourceView | None) -> Text:
        """Which page of how many, and what of it can be read and is marked."""
        url = self.url
        ref = next((i for i, (_, u) in self.view.references.items() if u == url), None)
        head = Text()
        head.append(f"[{ref}] " if ref is not None else "", "bold")
        head.append(visible(source.title if source and source.title else url), "bold")
        head.append(f"   {self.position + 1}/{len(self.urls)}\n", "dim")
        head.append(visible(url) + "\n", "blue")
        if source is None:
            head.append("not fetched: no stored page for this URL", "yellow")
        elif source.error:
            head.append(
                f"could not be fetched ({visible(source.error)}): nothing to read", "bold red"
            )
        else:
            self._legend(head, source)
        return head

    def _legend(self, head: Text, source: SourceView) -> None:
        text = source.text
        head.append(f"{len(text):,} characters, fetched {source.fetched_at or '?'}.  ", "dim")
        head.append(" evidence ", "black on yellow")
        head.append(" the judge's quote" + ("" if self.evidence else " (not on this page)"))
        head.append("   ")
        head.append(" passage ", "reverse")
        head.append(" closest to the claim" + ("" if self.passage else " (none found)"))

    def _show_page(self, text: str) -> None:
        """The whole page with the passage and the evidence marked, scrolled to the evidence
        (else the passage)."""
        spans: list[Span] = []
        if self.passage is not None:
            spans.append(Span(*self.passage, "claim", -1))
        if self.evidence is not None:
            spans.append(Span(*self.evidence, "match"))
        widget = self.query_one(ReportText)
        widget.border_title = "stored page (every character, as stored)"
        widget.set_document(text, spans)
        widget.select_claim(-1, scroll=False)
        target = self.evidence or self.passage
        if target is not None:
            self.call_after_refresh(widget.scroll_to_offset, target[0])
        widget.focus()

    def action_step(self, step: int) -> None:
        if len(self.urls) < 2:
            self.notify("the verdict is about this one page")
            return
        self.position = (self.position + step) % len(self.urls)
        self.show()

    def action_jump(self, what: str) -> None:
        target = self.evidence if what == "evidence" else self.passage
        if target is None:
            self.notify(f"no {what} on this page", severity="warning")
            return
        self.query_one(ReportText).scroll_to_offset(target[0])

    def action_back(self) -> None:
        self.app.pop_screen()
