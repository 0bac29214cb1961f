"""Report review: the text, the judgments, the selected judgment's detail, and the scores.

Keys decide; a writer worker stores; the screen redraws from the typed message the writer sends
back once the decision is committed and the scores are recomputed. Navigation never waits for
the database: moving on after a verdict key is immediate, the verdict shows when it is durable.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from textual import events, on, work
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Header, Static

from reviewer.actions import rationale_required
from reviewer.citations import find_markers, locate
from reviewer.registry import get_framework, get_kind, get_scale
from store.backend.commands import (
    Adjudicate,
    Call,
    Confirm,
    Decide,
    Flag,
    Propose,
    Rate,
    Redo,
    Undo,
    WriteCommand,
    WriteResult,
)
from store.trust.standing import acceptance_notes
from store.views.screens import (
    History,
    JudgmentView,
    OtherVerdict,
    Rank,
    ReportView,
    ScoreLine,
    other_run_verdicts,
    primary_metric,
    recheck_premises,
    report_history,
    report_scores,
    report_view,
    subject_label,
    system_rank,
)
from tui.blind import blinded, blinded_scores, report_blind
from tui.detail import detail_text
from tui.filters import step_target
from tui.keymap import bindings, verdict_codes
from tui.messages import ReportLoaded
from tui.render.safe import SafeText as Text
from tui.screens.base import GavelScreen
from tui.screens.modals import (
    NoteDialog,
    ProposalDraft,
    ProposeDialog,
    RatingDialog,
    Rationale,
    RationaleEditor,
    SearchDialog,
)
from tui.widgets.footer import GavelFooter
from tui.widgets.hub_status import HubStatus
from tui.widgets.judgments import ACCEPTED, JudgmentList
from tui.widgets.report_text import ReportText, Span, visible
from tui.widgets.text_view import TextView

if TYPE_CHECKING:
    from store.reviewlog.events import Recorded
    from store.sqlite.changes import Change

_VERDICT_CODES: dict[str, dict[str, str]] = {}


def _fmt(value: float | None, digits: int) -> str:
    if value is None:
        return "n/a"
    if digits == 0 or (digits <= 2 and float(value).is_integer()):
        return str(round(value))
    return f"{value:.{digits}f}"


SHORT = 32
"""Terminal rows below which the report screen saves rows (see :meth:`ReportScreen.on_resize`)."""
_EVIDENCE_PIECES = re.compile(r"\n+|\.\.\.+|…+")
"""What separates the quoted pieces of a verdict's evidence."""


class ReportScreen(GavelScreen):
    KEY_CONTEXT = "report"
    BINDINGS = bindings(KEY_CONTEXT)

    def __init__(
        self,
        order: list[int],
        index: int,
        *,
        suspicion_first: bool = False,
        queue_order: Callable[[], list[int]] | None = None,
        moving: bool = False,
    ) -> None:
        super().__init__(id="report")
        self.order = order
        self.index = index
        self.queue_order = queue_order
        """The queue's order as it stands now (n and p follow it; None: ``order`` fixed)."""
        self.moving = moving
        """The order changes as reports are reviewed (suspicion, impact): n opens what is
        left (:func:`tui.filters.step_target`)."""
        self.visited = [order[index]] if order else []
        self.suspicion_first = suspicion_first
        """] and [ visit the undecided verdicts that suspicion flags point to first, most
        suspicious first (as the queue's suspicion order does; S switches)."""
        self.view: ReportView | None = None
        self.scores: list[ScoreLine] = []
        self.rank: Rank | None = None
        self.history: dict[int, History] = {}
        self.blind: dict[int, frozenset[int]] = {}
        """Per report loaded, this reviewer's overlap subjects there they have yet to decide
        (tui.blind); set by the loading thread, hence per report."""
        self.runs: dict[tuple[str, str], list[OtherVerdict]] = {}
        self.accepted: dict[int, str] = {}
        """Verdicts a trust rule accepted, each with what accepted it (store.trust.rules)."""
        self.last_delta: Text | None = None
        self.show_cleaned = False
        self.find_query = ""
        self.find_hits: list[int] = []
        self.loaded_in = 0.0
        self.requested_at = 0.0
        self._reselect = False
        """A reload for another session's change keeps the row selected when it lands."""
        self._landing: int | None = None
        self._bar_rows = 2
        """The judgment the cursor was put on when the report opened, until it moves: ] and
        [ count it as not yet visited, so the first ] can stop on it."""

    @property
    def report_id(self) -> int:
        return self.order[self.index]

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("", id="score-bar")
        yield Static("", id="task-prompt")
        with Horizontal(id="report-body"):
            yield ReportText(id="report-text")
            with Vertical(id="report-side"):
                yield JudgmentList(id="judgments")
                yield TextView(id="detail")
        yield HubStatus()
        yield GavelFooter()

    def on_mount(self) -> None:
        self.query_one("#detail", TextView).border_title = "detail"
        self.set_class(self.app.size.height < SHORT, "-short")

    def on_resize(self, event: events.Resize) -> None:
        """On a short terminal (80×24) the task prompt keeps one line: the judgment list and
        the detail pane need the rows."""
        self.set_class(event.size.height < SHORT, "-short")
        self.load_report(self.report_id)

    # -- loading ---------------------------------------------------------------------------

    def load_report(self, report_id: int) -> None:
        self.requested_at = time.perf_counter()
        self._load(report_id)

    def sees(self, change: Change) -> bool:
        """Whether another session's change shows on this screen. A co-reviewer's decision
        on one of this reviewer's blind overlap subjects does not: it stays hidden until they
        decide it, so a reload would show nothing new, and a notice would tell what blind
        review hides (that the other reviewer is at work on the same report)."""
        if change.structural:
            return True
        if self.view is None:
            return False  # (the load under way reads the database as it is now)
        report = self.report_id
        blind = self.blind.get(report, frozenset())
        return any(r == report and (s is None or s not in blind) for r, s in change.touched)

    def refresh_from(self, reports: frozenset[int], structural: bool) -> None:
        """Another process changed what this report shows: reload it, keeping the selection."""
        if self.view is None or not (structural or self.report_id in reports):
            return
        judgments = self.query(JudgmentList)
        if not judgments:
            return  # the screen is being taken down: the app is closing
        self._reselect = True
        self.load_report(self.report_id)

    @work(thread=True, exclusive=True, group="report-load", exit_on_error=False)
    def _load(self, report_id: int) -> None:
        started = time.perf_counter()
        conn = self.gavel.backend.reader()
        view = report_view(conn, report_id)
        scores = report_scores(conn, report_id)
        target = primary_metric(view.frameworks)
        rank = system_rank(conn, view.system_id, *target) if target else None
        history = report_history(conn, report_id)
        # On the overlap, other reviewers' values stay hidden until this reviewer decides.
        self.blind[report_id], hidden = report_blind(conn, self.gavel.config.reviewer, report_id)
        view, history = blinded(view, history, self.blind[report_id], hidden)
        scores = blinded_scores(scores, hidden)
        self.runs = other_run_verdicts(conn, report_id)
        self.accepted = acceptance_notes(conn, report_id, hidden.accepted if hidden else ())
        self.post_message(ReportLoaded(view, scores, rank, history, time.perf_counter() - started))

    @on(ReportLoaded)
    def loaded(self, message: ReportLoaded) -> None:
        if message.view.report_id != self.report_id:
            return  # a stale load after fast n/n/n
        self.view = message.view
        self.scores = message.scores
        self.rank = message.rank
        self.history = message.history
        self.last_delta = None
        self.find_hits = []
        view = message.view
        self.title = f"{view.task} · {view.system}"
        parts = [
            f"report {view.report} ({self.index + 1}/{len(self.order)})",
            view.domain,
            view.task_type,
            f"reviewer {self.gavel.config.reviewer}",
            "BLIND" if self.gavel.config.blind else "",
        ]
        self.sub_title = " · ".join(p for p in parts if p)
        prompt = Text()
        prompt.append(f"{view.task}: ", "bold")
        prompt.append(visible(" ".join(view.prompt.split())))
        self.query_one("#task-prompt", Static).update(prompt)
        self._show_text()
        judgments = self.query_one(JudgmentList)
        # The selection as it is now, not when the reload was asked for: keys pressed while
        # it loaded (] then enter) must act on the row they chose.
        kept = judgments.selected_id if self._reselect else None
        self._reselect = False
        judgments.show(view, blind=self.gavel.config.blind, accepted=frozenset(self.accepted))
        self._landing = None
        if kept is not None and any(j.id == kept for j in view.judgments):
            judgments.select_id(kept)
        else:
            self._landing = judgments.selected_id
        judgments.focus()
        self._score_bar()
        self._detail()
        self.loaded_in = time.perf_counter() - self.requested_at
        self.gavel.last_report_id = view.report_id
        self.gavel.report_shown_at = time.perf_counter()

    def _show_text(self) -> None:
        assert self.view is not None
        text = self.view.markdown
        cleaned = self.show_cleaned and self.view.cleaned is not None
        if cleaned and self.view.cleaned is not None:
            text = self.view.cleaned
        spans = [] if cleaned else _report_spans(self.view, text)
        spans += [Span(at, at + len(self.find_query), "match") for at in self.find_hits]
        widget = self.query_one(ReportText)
        widget.border_title = "cleaned text (what the RACE judge saw)" if cleaned else "report"
        widget.set_document(text, spans)

    # -- drawing ---------------------------------------------------------------------------

    def selected(self) -> JudgmentView | None:
        list_ = self.query_one(JudgmentList)
        jid = list_.selected_id
        if jid is None or self.view is None:
            return None
        return next((j for j in self.view.judgments if j.id == jid), None)

    @on(JudgmentList.Highlighted)
    def highlighted(self) -> None:
        if self.query_one(JudgmentList).selected_id != self._landing:
            self._landing = None
        self._detail()
        judgment = self.selected()
        if judgment is not None and judgment.claim_id is not None:
            self.query_one(ReportText).select_claim(judgment.claim_id)
        if self.view is not None and not (self.show_cleaned and self.view.cleaned is not None):
            self.query_one(ReportText).set_evidence(_evidence_spans(self.view.markdown, judgment))

    def _detail(self) -> None:
        judgment = self.selected()
        detail = self.query_one("#detail", TextView)
        if judgment is None or self.view is None:
            detail.set_content(Text("no judgments on this report" if self.view else ""))
            return
        text = detail_text(
            self.view,
            judgment,
            blind=self.gavel.config.blind,
            history=self.history.get(judgment.id),
            runs=self.runs.get((judgment.kind, judgment.subject)),
        )
        accepted = self.accepted.get(judgment.id)
        if accepted is not None and not judgment.decided:
            head = Text(f"{ACCEPTED} {accepted}\n\n", "cyan")
            head.append_text(text)
            text = head
        detail.set_content(text)

    def _score_bar(self) -> None:
        line = Text()
        for score in self.scores:
            if _is_headline(score):
                _append_score(line, score)
        if self.rank is not None and self.rank.judge is not None:
            _append_rank(line, self.rank)
        mine = self.view.ratings.get(self.gavel.config.reviewer) if self.view else None
        if mine:
            line.append("your rating ", "dim")
            line.append(f"{mine}   ", "bold")
        if self.last_delta is not None:
            line.append("\nlast: ", "dim")
            line.append_text(self.last_delta)
        # The rows it takes (the scores wrap on a narrow terminal; a line of why adds one):
        # the layout runs again only when that changes, not on every decision.
        bar = self.query_one("#score-bar", Static)
        width = max(1, bar.content_region.width or self.app.size.width - 2)
        rows = len(line.wrap(self.app.console, width))
        bar.update(line, layout=rows != self._bar_rows)
        self._bar_rows = rows

    # -- deciding --------------------------------------------------------------------------

    def submit(self, command: WriteCommand) -> None:
        self.gavel.backend.submit(command)

    def action_verdict(self, binding_id: str) -> None:
        judgment = self.selected()
        if judgment is None:
            return
        if not _VERDICT_CODES:
            _VERDICT_CODES.update(verdict_codes())
        code = _VERDICT_CODES.get(binding_id, {}).get(judgment.scale)
        if code is None:
            self.notify(
                f"that key means nothing on the {judgment.scale} scale (press ? for the keys)",
                severity="warning",
            )
            return
        # An override opens the editor on the chosen value when it needs a rationale (the
        # same policy as `gavel decide`); blind, every decision does.
        if rationale_required(
            self.gavel.config.require_rationale,
            code,
            judgment.judge,
            blind=self._hidden(judgment),
        ):
            self._edit(judgment, code)
            return
        self.submit(Decide(judgment.id, code))
        self.action_move(1)

    def action_confirm(self) -> None:
        """Confirm the judge and move on — unless the subject is already decided: then enter
        only moves on. Replacing a decision takes a value key or the editor, never enter."""
        judgment = self.selected()
        if judgment is None:
            return
        if self._hidden(judgment):
            self.notify(
                "blind mode: choose a verdict key (the judge is hidden)", severity="warning"
            )
            return
        if judgment.status is not None:
            decided = (
                "in conflict" if judgment.status == "conflict" else f"decided: {judgment.effective}"
            )
            self.notify(f"already {decided}; a value key or r changes it", timeout=3)
        else:
            self.submit(Confirm(judgment.id, only_if_undecided=True))
        self.action_move(1)

    def action_rationale(self) -> None:
        judgment = self.selected()
        if judgment is not None:
            start = (
                judgment.effective
                if judgment.decided
                else (None if self._hidden(judgment) else judgment.judge)
            )
            self._edit(judgment, start)

    def _hidden(self, judgment: JudgmentView) -> bool:
        """Blind mode hides the judge's verdict until a decision is made."""
        return self.gavel.config.blind and not judgment.decided

    def _edit(self, judgment: JudgmentView, value: str | None) -> None:
        assert self.view is not None
        scale = get_scale(judgment.scale)

        def done(result: Rationale | None) -> None:
            if result is not None:
                self.submit(Decide(judgment.id, result.value, result.rationale, result.reason))

        self.app.push_screen(
            RationaleEditor(
                subject_label(self.view, judgment),
                scale,
                value,
                require_rationale=self.gavel.config.require_rationale,
                judge_value=None if self._hidden(judgment) else judgment.judge,
                blind=self._hidden(judgment),
            ),
            done,
        )

    def action_flag(self) -> None:
        """Flag for discussion with a note saying why (or lower the flag)."""
        judgment = self.selected()
        if judgment is None or self.view is None:
            return
        if judgment.flagged:
            self.submit(Flag(judgment.id, on=False))
            return

        def done(note: str | None) -> None:
            if note is not None:
                self.submit(Flag(judgment.id, note=note))

        self.app.push_screen(
            NoteDialog(f"Flag {subject_label(self.view, judgment)} — why?", "what to discuss"), done
        )

    def action_undo(self) -> None:
        """Undo your latest decision in this report (never one in another report)."""
        if self.view is not None:
            self.submit(Undo(self.view.report_id))

    def action_redo(self) -> None:
        if self.view is not None:
            self.submit(Redo(self.view.report_id))

    def action_propose(self) -> None:
        """Propose a ground-truth expansion from what is selected (new claim, rubric item,
        alias or extra evidence); the nearest existing item is reported if it looks alike."""
        if self.view is None:
            return
        judgment = self.selected()
        claim = self.view.claims.get(judgment.claim_id) if judgment and judgment.claim_id else None
        text = claim.fact if claim is not None else ""
        report_id = self.view.report_id

        def done(result: ProposalDraft | None) -> None:
            if result is not None:
                self.submit(
                    Propose(
                        report_id,
                        judgment.id if judgment else None,
                        result.kind,
                        result.text,
                        result.rationale,
                    )
                )

        self.app.push_screen(ProposeDialog(self.view.report, text), done)

    def action_rejudge(self) -> None:
        """Ask the judge again about the selected item's step, in a background worker.

        The new run is a candidate: the reviewer sees its verdict beside the current one in
        the detail pane, and nothing counts until it is activated (R, the runs screen).
        Every write of the run goes through the workstation's single writer. Endpoint and
        model: $GAVEL_BASE_URL, $GAVEL_MODEL, key in $GAVEL_API_KEY (see docs/judge.md).
        """
        judgment = self.selected()
        if judgment is None or self.view is None:
            return
        kind = get_kind(judgment.kind)
        rejudge = get_framework(kind.framework).rejudge if kind is not None else None
        if kind is None or rejudge is None or judgment.kind not in rejudge.kinds:
            can = (
                f"re-judges {', '.join(sorted(rejudge.kinds))} verdicts"
                if rejudge
                else "has no judge pipeline"
            )
            self.notify(
                f"{kind.framework if kind else 'this benchmark'}'s judge runner {can}, "
                f"not {judgment.kind}",
                severity="warning",
            )
            return
        step = rejudge.steps.get(judgment.kind, judgment.kind)
        if not os.environ.get("GAVEL_MODEL"):
            self.notify(
                "set GAVEL_MODEL (and GAVEL_BASE_URL, GAVEL_API_KEY) to re-judge",
                severity="warning",
                timeout=8,
            )
            return
        self.notify(f"re-judging {step} on {self.view.report} in the background…")
        self._rejudge(self.view.report_id, self.view.report, kind.framework, step)

    @work(thread=True, group="rejudge", exit_on_error=False)
    def _rejudge(self, report_id: int, report: str, framework: str, step: str) -> None:
        from reviewer.errors import InputError
        from reviewer.judge.client import api_key_from_env
        from store.runs.judging import (
            DEFAULT_BASE_URL,
            JudgeRequest,
            Selection,
            check_request,
            prepare_judge,
            run_judge,
            spec_for,
        )

        conn = self.gavel.backend.reader()
        try:
            # The workstation judges against the pages already stored: no web traffic from
            # a keypress (`gavel fetch` refreshes them).
            sources = "stored" if spec_for(framework).sources == "fetch" else None
            request = JudgeRequest(
                model=os.environ.get("GAVEL_MODEL"),
                base_url=os.environ.get("GAVEL_BASE_URL") or DEFAULT_BASE_URL,
                framework=framework,
                selection=Selection(reports=(report,)),
                steps=frozenset({step}),
                sources=sources,
                run_id=f"rejudge-{time.strftime('%Y%m%d-%H%M%S')}",
            )
            check_request(request)
            prepared = prepare_judge(conn, request, api_key_from_env())
            result = run_judge(conn, prepared, write=self.gavel.backend.call)
        except (InputError, RuntimeError, OSError) as exc:
            self.app.call_from_thread(self._rejudged, report_id, f"re-judging failed: {exc}", False)
            return
        message = (
            f"candidate run {result.run_id} judged {step} on {report} "
            f"({result.status}): see 'Every judge run' in the detail pane; R to "
            "activate it"
        )
        self.app.call_from_thread(self._rejudged, report_id, message, True)

    def _rejudged(self, report_id: int, message: str, ok: bool) -> None:
        self.notify(message, severity="information" if ok else "error", timeout=10)
        if ok and self.view is not None and self.view.report_id == report_id:
            self.load_report(report_id)

    def action_rate(self) -> None:
        if self.view is None:
            return
        rating = next(
            (
                fw.rating
                for name in self.view.frameworks
                if (fw := get_framework(name)).rating is not None
            ),
            None,
        )
        if rating is None:
            self.notify(
                "an overall rating belongs to DailyReport's user-preference scale; this "
                f"report is scored by {', '.join(self.view.frameworks)}, which has none",
                severity="warning",
            )
            return
        computed = next((s for s in self.scores if s.metric == rating.metric), None)
        shown = (
            None if computed is None or self.gavel.config.blind else _fmt(computed.adjudicated, 0)
        )
        current = self.view.ratings.get(self.gavel.config.reviewer)
        report_id = self.view.report_id

        def done(value: str | None) -> None:
            if value is not None:
                self.submit(Rate(report_id, value))

        self.app.push_screen(RatingDialog(self.view.report, rating, shown, current), done)

    def show_result(self, result: WriteResult) -> bool:
        """Redraw from a committed write (the app hands over the writer's message)."""
        if isinstance(result.command, Call):
            return True  # a judge run's own writes: the worker reports when it is done
        recorded = result.recorded
        if result.error is not None:
            self.notify(result.error, severity="error", timeout=6)
        elif result.note is not None:
            self._show_note(result, result.note)
        elif recorded is None:
            where = " in this report" if isinstance(result.command, Undo | Redo) else ""
            self.notify(f"nothing of yours to {result.command.label}{where}", severity="warning")
        else:
            if recorded.note is not None:
                self.notify(recorded.note, title="Conflict", severity="warning", timeout=10)
            if self.view is not None and recorded.report_id == self.view.report_id:
                self._show_decision(result, recorded, self.view)
            elif recorded.report_id is not None:
                self.notify(
                    f"{recorded.action} applied to another report (id {recorded.report_id})"
                )
        return True

    def _show_note(self, result: WriteResult, note: str) -> None:
        """A write that is not a decision (a proposal): say what it did; a proposal made
        here brings this report's scores."""
        self.notify(note, timeout=8)
        command = result.command
        if (
            result.scores
            and self.view is not None
            and isinstance(command, Propose)
            and command.report_id == self.view.report_id
        ):
            self.scores = result.scores
            self._score_bar()
        self.gavel.stored_at = time.perf_counter()

    def _show_decision(self, result: WriteResult, recorded: Recorded, view: ReportView) -> None:
        """A decision on this report: the delta it made, its judgment and history redrawn."""
        self._take_scores(result, recorded, view)
        judgments = self.query_one(JudgmentList)
        for judgment in result.judgments.values():
            judgments.refresh_judgment(judgment)
        _recheck_flags(view, judgments)
        self.history.update(result.history)
        if recorded.action == "rate" or recorded.reverted == "rate":
            self._show_rating(recorded, view)
        if recorded.action in ("undo", "redo") and recorded.judgment_id is not None:
            judgments.select_id(recorded.judgment_id)
        self._score_bar()
        self._detail()
        self.gavel.stored_at = time.perf_counter()
        self.gavel.last_result = result

    def _take_scores(self, result: WriteResult, recorded: Recorded, view: ReportView) -> None:
        """The scores after a decision, and the score bar's line on it: the delta it made,
        and why, when it moved a score against itself."""
        old = {(s.framework, s.metric): s.adjudicated for s in self.scores}
        before = next((j for j in view.judgments if j.id == recorded.judgment_id), None)
        scores = result.scores
        if self.blind.get(view.report_id):  # without others' decisions on those still blind
            self.blind[view.report_id], hidden = report_blind(
                self.gavel.backend.reader(), self.gavel.config.reviewer, view.report_id
            )
            scores = blinded_scores(scores, hidden)
        self.scores = scores
        self.rank = result.rank or self.rank
        self.last_delta = _delta_text(old, scores, recorded.action, recorded.reverted)
        after = result.judgments.get(recorded.judgment_id or -1)
        why = _why_line(view, before, after, old, scores)
        if why:
            self.last_delta.append("\n" + why, "italic")

    def _show_rating(self, recorded: Recorded, view: ReportView) -> None:
        """A rating, or the undo of one: the reviewer's rating shown in the score bar."""
        rating = recorded.value if recorded.action == "rate" else None
        view.ratings[self.gavel.config.reviewer] = rating or ""
        self.notify(f"rated {rating}" if rating else "rating undone")

    # -- navigation ------------------------------------------------------------------------

    def action_move(self, step: int) -> None:
        judgments = self.query_one(JudgmentList)
        if step > 0:
            judgments.action_cursor_down()
        else:
            judgments.action_cursor_up()

    def action_scroll_detail(self, step: int) -> None:
        """d / D: the detail pane a page down / up, wherever focus is (the arrows move the
        judgment cursor in the list, and scroll a pane only once tab has focused it); past
        the end, d starts again at the top."""
        detail = self.query_one("#detail", TextView)
        page = max(1, detail.scrollable_content_region.height - 1)
        if step > 0 and detail.scroll_y >= detail.max_scroll_y:
            detail.scroll_to(y=0, animate=False)
        else:
            detail.scroll_to(y=detail.scroll_y + step * page, animate=False)

    def action_next_undecided(self, step: int) -> None:
        judgments = self.query_one(JudgmentList)
        if self.view is None or not judgments.order:
            return
        status = {j.id: j for j in self.view.judgments}
        order = undecided_order(judgments.order, status, self.suspicion_first)
        current = judgments.selected_id
        # Where the report opened nothing has been visited yet: ] may stop on that very row.
        start = None if current == self._landing else current
        self._landing = None
        jid = next_undecided(order, status, start, step, self.suspicion_first)
        if jid is None:
            self.notify("every judgment of this report is decided")
        elif jid == current:
            self.notify("the first undecided verdict is the selected one", timeout=2)
        else:
            judgments.select_id(jid)

    def action_toggle_undecided_order(self) -> None:
        self.suspicion_first = not self.suspicion_first
        self.notify(
            "] goes to the most suspicious undecided verdict first"
            if self.suspicion_first
            else "] goes to the next undecided verdict in the list"
        )

    def action_view_source(self) -> None:
        """The whole stored page the selected verdict is about, scrollable, with the cited
        passage and the judge's evidence marked."""
        judgment = self.selected()
        if judgment is None or self.view is None:
            return
        from tui.screens.source import SourceScreen, source_urls

        urls = source_urls(self.view, judgment)
        if not urls:
            self.notify("this verdict is not about a source page", severity="warning")
            return
        self.app.push_screen(SourceScreen(self.view, judgment, urls))

    def action_adjudicate(self) -> None:
        """Resolve a subject two reviewers decided differently: the adjudication records every
        side. Adjudicating a subject that is not in conflict is allowed (it outranks later
        reviewers' decisions), but it is unusual, so the reviewer is told."""
        judgment = self.selected()
        if judgment is None or self.view is None:
            return
        if judgment.status != "conflict":
            self.notify(
                "this subject is not in conflict (no two reviewers disagree on it): an "
                "adjudication will outrank every reviewer's decision on it",
                title="Not a conflict",
                severity="warning",
                timeout=8,
            )
        scale = get_scale(judgment.scale)

        def done(result: Rationale | None) -> None:
            if result is not None:
                self.submit(Adjudicate(judgment.id, result.value, result.rationale, result.reason))

        self.app.push_screen(
            RationaleEditor(
                f"{subject_label(self.view, judgment)} (adjudication)",
                scale,
                judgment.effective if judgment.decided else judgment.judge,
                require_rationale=True,
                judge_value=judgment.judge,
            ),
            done,
        )

    def action_step_report(self, step: int) -> None:
        """Next / previous report in the queue's order as it stands now (see step_target)."""
        current = self.report_id
        order = self.queue_order() if self.queue_order is not None else self.order
        target = step_target(order, self.order, current, self.visited, step, self.moving)
        if target is None:
            self.notify("no more reports in this direction of the queue")
            return
        if target not in self.visited:
            self.visited.append(target)
        if target not in order:  # p back to a report the order has left
            order = [*order, target]
        self.order = order
        self.index = order.index(target)
        self.load_report(self.report_id)

    def action_back(self) -> None:
        self.app.pop_screen()

    def action_toggle_text(self) -> None:
        if self.view is None:
            return
        if self.view.cleaned is None:
            self.notify("this report has no cleaned text")
            return
        self.show_cleaned = not self.show_cleaned
        self._show_text()

    def action_search(self) -> None:
        def done(query: str | None) -> None:
            if query is None or self.view is None:
                return
            if query == self.find_query and self.find_hits:
                self._jump_to_next_hit()
                return
            self.find_query = query
            text = self.view.markdown
            lowered, needle = text.lower(), query.lower()
            hits: list[int] = []
            at = lowered.find(needle) if needle else -1
            while at >= 0 and len(hits) < 10_000:
                hits.append(at)
                at = lowered.find(needle, at + 1)
            self.find_hits = hits
            self._show_text()
            if hits:
                self.query_one(ReportText).scroll_to_offset(hits[0])
                self.notify(f"{len(hits)} matches; / and enter again for the next")
            else:
                self.notify("no match in this report", severity="warning")

        self.app.push_screen(SearchDialog("Find in this report", self.find_query), done)

    def _jump_to_next_hit(self) -> None:
        widget = self.query_one(ReportText)
        top = widget.scroll_offset.y + widget.size.height // 3
        for hit in self.find_hits:
            if widget.line_of(hit) > top:
                widget.scroll_to_offset(hit)
                return
        widget.scroll_to_offset(self.find_hits[0])


def undecided_order(
    listed: list[int], status: dict[int, JudgmentView], suspicion_first: bool
) -> list[int]:
    """The order ] and [ walk: the list's, or with ``suspicion_first`` the verdicts suspicion
    flags point to first (most suspicious first), then the rest in list order."""
    if not suspicion_first:
        return list(listed)
    position = {jid: i for i, jid in enumerate(listed)}
    flagged = sorted(
        (jid for jid in listed if status[jid].suspicious),
        key=lambda jid: (-status[jid].suspicion, position[jid]),
    )
    return flagged + [jid for jid in listed if not status[jid].suspicious]


def next_undecided(
    order: list[int],
    status: dict[int, JudgmentView],
    current: int | None,
    step: int,
    suspicion_first: bool,
) -> int | None:
    """The undecided verdict ] (``step`` 1) or [ (-1) goes to from ``current`` along
    ``order``; None when every one is decided."""
    position = order.index(current) if current in order else -1
    if suspicion_first and step > 0 and _away_from_suspicion(status, current):
        position = -1  # from an unflagged verdict, ] goes to the strongest
    if position < 0 and step < 0:
        position = 0  # from outside the order, [ starts at its end
    count = len(order)
    for offset in range(1, count + 1):
        jid = order[(position + step * offset) % count]
        if not status[jid].decided:
            return jid
    return None


def _away_from_suspicion(status: dict[int, JudgmentView], current: int | None) -> bool:
    """The cursor is on an unflagged verdict while a suspicious one is still undecided."""
    return (
        current in status
        and not status[current].suspicious
        and any(j.suspicious and not j.decided for j in status.values())
    )


def _keyword_spans(view: ReportView) -> list[Span]:
    """Verdicts that mark the text at their key's offset (DR. Bench keyword hits: ``878``,
    ``878~``), as long as their criterion's text."""
    spans: list[Span] = []
    for judgment in view.judgments:
        kind = get_kind(judgment.kind)
        if kind is None or kind.highlight != "key_offset" or judgment.key is None:
            continue
        criterion = view.criteria.get(judgment.criterion_id or -1)
        digits = judgment.key.rstrip("~^")
        if criterion is not None and digits.isdigit():
            start = int(digits)
            spans.append(Span(start, start + len(criterion.text), "match"))
    return spans


def _evidence_spans(text: str, judgment: JudgmentView | None) -> list[Span]:
    """Where the report holds the pieces (lines, or the parts between ellipses) of the
    evidence a verdict quotes, for kinds that mark it; a piece not found is not marked."""
    if judgment is None or not judgment.evidence:
        return []
    kind = get_kind(judgment.kind)
    if kind is None or kind.highlight != "evidence":
        return []
    spans = []
    for piece in _EVIDENCE_PIECES.split(judgment.evidence):
        found = locate(text, piece.strip().strip("\"'“”")) if len(piece.strip()) >= 8 else None
        if found is not None:
            spans.append(Span(found[0], found[1], "evidence"))
    return sorted(spans, key=lambda s: s.start)


def _is_headline(score: ScoreLine) -> bool:
    from reviewer.registry import frameworks

    fw = frameworks().get(score.framework)
    return fw is not None and any(m.name == score.metric and m.headline for m in fw.metrics)


def _report_spans(view: ReportView, text: str) -> list[Span]:
    """What the report text marks: located claims, citation markers, the benchmark's keywords."""
    spans = [
        Span(c.span[0], c.span[1], "claim", c.id)
        for c in view.claims.values()
        if c.span is not None
    ]
    spans += [Span(m.start, m.end, "cite") for m in find_markers(text)]
    spans += _keyword_spans(view)
    spans += _benchmark_marks(view, text)
    return spans


def _benchmark_marks(view: ReportView, text: str) -> list[Span]:
    """The places the report's benchmarks mark in its text (:attr:`Grading.marks`)."""
    spans: list[Span] = []
    for name in view.frameworks:
        grading = get_framework(name).grading
        if grading is not None and grading.marks is not None:
            spans += [Span(a, b, "marked") for a, b in grading.marks(text, view.task_metadata)]
    return spans


def _append_score(line: Text, score: ScoreLine) -> None:
    """One headline score: the judge's value, and where a decision moved it, the arrow to the
    adjudicated value, green up or red down."""
    line.append(f"{score.label} ", "bold")
    judge, adj = _fmt(score.judge, score.digits), _fmt(score.adjudicated, score.digits)
    if judge == adj:
        line.append(judge)
    else:
        line.append(judge, "dim")
        line.append(" → ")
        up = (score.adjudicated or 0) > (score.judge or 0)
        line.append(adj, "bold green" if up else "bold red")
    line.append("   ")


def _append_rank(line: Text, rank: Rank) -> None:
    line.append(f"rank #{rank.judge}", "bold")
    if rank.adjudicated != rank.judge:
        line.append(f" → #{rank.adjudicated}", "bold magenta")
    line.append(f"/{rank.of} ({rank.metric})   ")


def _delta_text(
    old: dict[tuple[str, str], float | None],
    new: list[ScoreLine],
    action: str,
    reverted: str | None,
) -> Text:
    text = Text()
    text.append(action + (f" {reverted}" if reverted else "") + ": ", "bold")
    changed = False
    for score in new:
        if not _is_headline(score):
            continue
        before = old.get((score.framework, score.metric))
        after = score.adjudicated
        if before != after and before is not None and after is not None:
            changed = True
            style = "bold green" if after > before else "bold red"
            text.append(f"{score.label} {_delta(before, after, score.digits)}  ", style)
    if not changed:
        text.append("no headline change", "dim")
    return text


def _recheck_flags(view: ReportView, judgments: JudgmentList) -> None:
    """A decision may change the premise of another verdict's flag: check them again and
    redraw the rows whose flags now read differently."""
    by_id = {j.id: j for j in view.judgments}
    for jid in recheck_premises(view):
        judgments.refresh_judgment(by_id[jid])


def _why_line(
    view: ReportView,
    before: JudgmentView | None,
    after: JudgmentView | None,
    old: dict[tuple[str, str], float | None],
    new: list[ScoreLine],
) -> str | None:
    """The score bar's line of why for the decision that changed ``before`` into ``after``."""
    if before is None or after is None:
        return None
    label = subject_label(view, before)
    return counter_move_why(before.kind, label, before.effective, after.effective, old, new)


WEIGHED_BY_INSTRUCTION = {("cascade", "Fac"), ("cascade", "Rat")}
"""DailyReport's cascade metrics that weigh each subtask by its instruction following (Eq. 3):
raising an ins verdict can lower them, which the score bar explains."""


def counter_move_why(
    kind: str,
    subject: str,
    before: str | None,
    after: str | None,
    old: dict[tuple[str, str], float | None],
    new: list[ScoreLine],
) -> str | None:
    """One line of why, when a decision moved a score against itself: an ins verdict raised
    that lowered Factuality (or lowered that raised it) gives that subtask's own, lower score
    more (or less) weight."""
    step = _direction(before, after) if kind == "ins" else 0
    against = _moved_against(step, old, new) if step else []
    if not against:
        return None
    up = step > 0
    return (
        f"why: {' and '.join(against)} {'weighs' if len(against) == 1 else 'weigh'} each "
        "subtask by its instruction following; "
        f"{'raising' if up else 'lowering'} {subject} gives {'more' if up else 'less'} weight "
        "to that subtask's own score, which is below the report's"
    )


def _direction(before: str | None, after: str | None) -> int:
    """1 when a decision raised a numeric verdict, -1 when it lowered it, else 0."""
    try:
        was, now = float(before or "nan"), float(after or "nan")
    except ValueError:
        return 0
    return 1 if now > was else -1 if now < was else 0


def _moved_against(
    step: int, old: dict[tuple[str, str], float | None], new: list[ScoreLine]
) -> list[str]:
    """The instruction-weighed scores that moved the other way from the verdict."""
    out = []
    for score in new:
        was = old.get((score.framework, score.metric))
        if (score.framework, score.metric) not in WEIGHED_BY_INSTRUCTION:
            continue
        if (
            was is not None
            and score.adjudicated is not None
            and (score.adjudicated - was) * step < 0
        ):
            out.append(score.label)
    return out


def _delta(before: float, after: float, digits: int) -> str:
    # A report's level (UserPref 1–4) moves by whole steps: "-2", not "-2.00".
    whole = float(before).is_integer() and float(after).is_integer()
    delta = after - before
    return f"{delta:+.0f}" if whole else f"{delta:+.{max(digits, 2)}f}"
