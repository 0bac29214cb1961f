"""Modal dialogs: the rationale editor, the 1–4 rating, pickers, and the help screen."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from rich.console import RenderableType
from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Input, Label, OptionList, Static, TextArea
from textual.widgets.option_list import Option

from reviewer.actions import RATIONALE_POLICY, REASON_CODES, rationale_required
from reviewer.framework import Rating
from reviewer.scales import Scale
from tui.keymap import KEYS, VERDICT_KEYS, bindings, display_key, effective_keys, verdict_codes
from tui.render.safe import SafeText as Text
from tui.render.safe import visible


@dataclass(frozen=True, slots=True)
class Rationale:
    value: str
    reason: str | None
    rationale: str


EDITOR_SHORT = 32
"""Terminal rows below which the rationale editor draws its lists short (80×24 fits)."""

_EDITOR_HINTS = {
    "editor-value": "value: its key picks it, then the reason · tab reason · ctrl+s save · esc",
    "editor-reason": "reason: ↑↓ choose (optional) · tab rationale · ctrl+s save · esc cancel",
    "editor-text": "rationale: type why · tab value · ctrl+s or ctrl+enter save · esc cancel",
}
"""The editor's hint line for the field that has focus."""


class RationaleEditor(ModalScreen[Rationale | None]):
    """Value, reason code and rationale for one decision.

    It opens on the value, where the scale's own single keys choose (c / x / u, 0 / h / 1 …,
    as on the judgment list) and move on to the reason; every other key types text, so no
    review key can fire by accident. Its only bindings are ctrl+s / ctrl+enter (save) and
    escape (cancel).
    """

    BINDINGS = bindings("editor")

    def __init__(
        self,
        subject: str,
        scale: Scale,
        value: str | None,
        *,
        require_rationale: bool,
        judge_value: str | None,
        blind: bool = False,
    ) -> None:
        super().__init__()
        self.blind = blind
        self.subject = subject
        self.scale = scale
        self.initial = value
        self.require_rationale = require_rationale
        self.judge_value = judge_value
        self._typing = False
        """Keys typed on a list went to the rationale: the ones after them (queued before
        focus moved) do too, never choosing a value ("group" would choose u, unknown)."""

    def compose(self) -> ComposeResult:
        # A scrolling column whose fields carry their names in their borders: on an 80×24
        # terminal it fits, and focus scrolls the field it enters into view.
        with VerticalScroll(id="editor", can_focus=False):
            yield Label(Text(f"Decision on {self.subject}", style="bold"), id="editor-title")
            if self.scale.continuous:
                value: Input | OptionList = Input(self.initial or "", id="editor-value")
                value.border_title = f"Value ({self.scale.low:g}–{self.scale.high:g})"
            else:
                value = OptionList(
                    *(Option(f"{c.key}  {c.label}", id=c.code) for c in self.scale.choices),
                    id="editor-value",
                )
                value.border_title = "Value"
            yield value
            reasons = OptionList(
                Option("—  none", id="-"),
                *(Option(f"{code}  {text}", id=code) for code, text in REASON_CODES.items()),
                id="editor-reason",
            )
            reasons.border_title = "Reason (judge-error taxonomy; none for a confirmation)"
            yield reasons
            needed = ""
            if self.require_rationale:
                needed = " (required: blind mode)" if self.blind else " (required for an override)"
            text = TextArea(id="editor-text", soft_wrap=True, tab_behavior="focus")
            text.border_title = "Rationale" + needed
            yield text
            yield Static(_EDITOR_HINTS["editor-value"], id="editor-help")

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        """The hint names the field that has focus and where tab goes next."""
        if event.widget.id == "editor-value":
            self._typing = False  # back on the value list: its keys choose again
        hint = _EDITOR_HINTS.get(event.widget.id or "")
        if hint is not None:
            self.query_one("#editor-help", Static).update(hint)

    def on_mount(self) -> None:
        self.set_class(self.app.size.height < EDITOR_SHORT, "-short")
        self.query_one("#editor-reason", OptionList).highlighted = 0
        if self.scale.continuous:
            self.query_one("#editor-value", Input).focus()
            return
        values = self.query_one("#editor-value", OptionList)
        values.highlighted = (
            values.get_option_index(self.initial) if self.initial is not None else 0
        )
        values.focus()

    def _value(self) -> str | None:
        if self.scale.continuous:
            return self.query_one("#editor-value", Input).value.strip() or None
        option = self.query_one("#editor-value", OptionList).highlighted_option
        return option.id if option is not None else None

    def action_submit(self) -> None:
        value = self._value()
        if value is None:
            self.notify("choose a value", severity="error")
            return
        try:
            value = self.scale.normalize(value)
        except ValueError as exc:
            self.notify(str(exc), severity="error")
            return
        text = self.query_one("#editor-text", TextArea).text.strip()
        if not text and rationale_required(
            self.require_rationale, value, self.judge_value, blind=self.blind
        ):
            self.notify(
                "blind mode: every decision needs a rationale (require_rationale is on)"
                if self.blind
                else RATIONALE_POLICY,
                severity="error",
            )
            self.query_one("#editor-text", TextArea).focus()
            return
        reason_option = self.query_one("#editor-reason", OptionList).highlighted_option
        reason = (
            None if reason_option is None or reason_option.id in (None, "-") else reason_option.id
        )
        self.dismiss(Rationale(value, reason, text))

    def action_cancel(self) -> None:
        self.dismiss(None)

    def on_key(self, event: events.Key) -> None:
        """On the value list a scale key chooses the value and moves on to the reason; other
        typing while a list has focus goes to the rationale instead of being lost."""
        if (
            not isinstance(self.focused, OptionList)
            or not event.is_printable
            or not event.character
        ):
            return
        choice = self.scale.by_key(event.character) if not self.scale.continuous else None
        if choice is not None and self.focused.id == "editor-value" and not self._typing:
            values = self.query_one("#editor-value", OptionList)
            values.highlighted = values.get_option_index(choice.code)
            self.query_one("#editor-reason", OptionList).focus()
        else:
            self._typing = True
            text = self.query_one("#editor-text", TextArea)
            text.focus()
            text.insert(event.character)
        event.stop()
        event.prevent_default()


class ConfirmDialog(ModalScreen[bool]):
    """A yes/no question with what it is about (any Rich renderable, scrollable)."""

    BINDINGS = [
        Binding("y", "answer(True)", "Yes", id="confirm.yes"),
        Binding("n,escape", "answer(False)", "No", id="confirm.no"),
    ]

    def __init__(self, title: str, body: RenderableType, verb: str, *, question: str = "") -> None:
        super().__init__()
        self.heading = title
        self.body = body
        self.verb = verb
        self.question = question

    def compose(self) -> ComposeResult:
        from tui.widgets.text_view import TextView

        with Vertical(id="confirm"):
            yield Label(Text(self.heading, style="bold"))
            yield TextView(id="confirm-body")
            yield Static(
                f"{self.question + ' ' if self.question else ''}y {self.verb} · n or escape cancel",
                classes="hint",
            )

    def on_mount(self) -> None:
        from tui.widgets.text_view import TextView

        view = self.query_one(TextView)
        view.set_content(self.body if not isinstance(self.body, str) else Text(self.body))
        view.focus()

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)


class NoteDialog(ModalScreen[str | None]):
    """A short note (a flag's reason for discussion); enter saves, escape cancels."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="note.cancel")]

    def __init__(self, title: str, placeholder: str = "") -> None:
        super().__init__()
        self.heading = title
        self.placeholder = placeholder

    def compose(self) -> ComposeResult:
        with Vertical(id="search"):
            yield Label(Text(self.heading, style="bold"))
            yield Input(placeholder=self.placeholder, id="note-text")
            yield Static("enter save · escape cancel", classes="hint")

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    @on(Input.Submitted)
    def submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value.strip())

    def action_cancel(self) -> None:
        self.dismiss(None)


@dataclass(frozen=True, slots=True)
class ProposalDraft:
    kind: str
    text: str
    rationale: str


KIND_TEXT = {
    "new_claim": "a valid claim the ground truth lacks",
    "new_rubric": "a rubric item this report revealed",
    "alias": "another accepted wording of the selected item",
    "extra_evidence": "evidence for the selected item",
}
"""What each proposal kind (reviewer.proposals.PROPOSAL_KINDS) means, in the dialog."""


class ProposeDialog(ModalScreen[ProposalDraft | None]):
    """Propose a ground-truth expansion; keys type text until saved or cancelled."""

    BINDINGS = bindings("editor")

    def __init__(self, report: str, text: str) -> None:
        super().__init__()
        self.report = report
        self.text = text

    def compose(self) -> ComposeResult:
        # Imported here: the dialog is not part of start-up.
        from reviewer.proposals import NEW_ITEM_KINDS, PROPOSAL_KINDS

        options = [
            Option(
                f"{k}  {KIND_TEXT.get(k, k)} ("
                + ("raises recall denominators" if k in NEW_ITEM_KINDS else "no denominator change")
                + ")",
                id=k,
            )
            for k in PROPOSAL_KINDS
        ]
        with Vertical(id="editor"):
            yield Label(Text(f"Propose a ground-truth expansion from {self.report}", style="bold"))
            yield OptionList(*options, id="propose-kind")
            yield Label("Text (claim, rubric item, alias, or the evidence quote)")
            # An editor shows what it holds: the selection's hidden characters, made visible,
            # are what the reviewer sees and proposes.
            yield TextArea(
                visible(self.text), id="propose-text", soft_wrap=True, tab_behavior="focus"
            )
            yield Label("Rationale")
            yield TextArea(id="editor-text", soft_wrap=True, tab_behavior="focus")
            yield Static("ctrl+s save · tab next field · escape cancel", id="editor-help")

    def on_mount(self) -> None:
        kinds = self.query_one("#propose-kind", OptionList)
        kinds.highlighted = 0
        kinds.focus()

    def action_submit(self) -> None:
        option = self.query_one("#propose-kind", OptionList).highlighted_option
        if option is None or option.id is None:
            self.notify("choose what to propose", severity="error")
            return
        self.dismiss(
            ProposalDraft(
                option.id,
                self.query_one("#propose-text", TextArea).text,
                self.query_one("#editor-text", TextArea).text.strip(),
            )
        )

    def action_cancel(self) -> None:
        self.dismiss(None)


class RatingDialog(ModalScreen[str | None]):
    """An overall rating of the whole report on its benchmark's scale (DailyReport's 1–4
    user-preference levels), beside the level the benchmark computed."""

    BINDINGS = [
        *(
            Binding(str(n), f"choose('{n}')", f"{n}", id=f"rating.{n}", show=False)
            for n in range(1, 10)
        ),
        Binding("escape", "cancel", "Cancel", id="rating.cancel"),
    ]

    def __init__(
        self, report: str, rating: Rating, computed: str | None, current: str | None
    ) -> None:
        super().__init__()
        self.report = report
        self.rating = rating
        self.computed = computed
        self.current = current

    def compose(self) -> ComposeResult:
        choices = self.rating.scale.choices
        with Vertical(id="rating"):
            yield Label(Text(f"Your overall rating of {self.report}", style="bold"))
            lines = Text()
            for choice in choices:
                lines.append(
                    f"  {choice.key}  {choice.label}\n",
                    "bold" if choice.code == self.current else "",
                )
            if self.computed is not None:
                lines.append(f"\nThe computed {self.rating.metric} is {self.computed}.", "dim")
            if self.current is not None:
                lines.append(f"  Your current rating: {self.current}.", "dim")
            yield Static(lines)
            keys = f"{choices[0].key}–{choices[-1].key}" if choices else ""
            yield Static(f"press {keys} · escape cancel", classes="hint")

    def action_choose(self, value: str) -> None:
        choice = self.rating.scale.by_key(value)
        if choice is not None:
            self.dismiss(choice.code)

    def action_cancel(self) -> None:
        self.dismiss(None)


class Picker(ModalScreen[str | None]):
    """Choose one value (a system, a domain, a column); the first option clears the choice."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="picker.cancel")]

    def __init__(
        self,
        title: str,
        choices: Sequence[str],
        current: str | None,
        *,
        labels: Mapping[str, str] | None = None,
        clear: str = "(all)",
    ) -> None:
        super().__init__()
        self.title_text = title
        self.choices = list(choices)
        self.current = current
        self.labels = dict(labels or {})
        self.clear = clear

    def compose(self) -> ComposeResult:
        with Vertical(id="picker"):
            yield Label(Text(self.title_text, style="bold"))
            yield OptionList(
                Option(self.clear, id="\0"),
                *(Option(Text(self.labels.get(c, c)), id=c) for c in self.choices),
                id="picker-list",
            )

    def on_mount(self) -> None:
        options = self.query_one(OptionList)
        if self.current in self.choices:
            options.highlighted = options.get_option_index(self.current)
        options.focus()

    @on(OptionList.OptionSelected)
    def chosen(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(None if event.option.id == "\0" else event.option.id)

    def action_cancel(self) -> None:
        self.dismiss(self.current)


class SearchDialog(ModalScreen[str | None]):
    BINDINGS = [Binding("escape", "cancel", "Cancel", id="search.cancel")]

    def __init__(self, title: str, current: str) -> None:
        super().__init__()
        self.title_text = title
        self.current = current

    def compose(self) -> ComposeResult:
        with Vertical(id="search"):
            yield Label(Text(self.title_text, style="bold"))
            yield Input(
                self.current, placeholder="words (all must match; empty clears)", id="search-input"
            )

    @on(Input.Submitted)
    def submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value.strip())

    def action_cancel(self) -> None:
        self.dismiss(None)


class HelpScreen(ModalScreen[None]):
    """Every binding of the screen underneath and of the app, with the keys in force now."""

    BINDINGS = [Binding("escape,question_mark,q", "close", "Close", id="help.close")]

    def __init__(self, context: str, keymap: dict[str, str]) -> None:
        super().__init__()
        self.context = context
        self.keymap = keymap

    def compose(self) -> ComposeResult:
        keys = effective_keys(self.keymap)
        text = Text()
        titles = {
            "app": "Everywhere",
            "queue": "Queue",
            "report": "Report review",
            "editor": "Rationale editor",
            "agreement": "Agreement",
            "proposals": "Ground-truth proposals",
            "estimates": "Estimates",
        }
        contexts = ["app", self.context] + (["editor"] if self.context == "report" else [])
        for context in contexts:
            text.append(f"{titles.get(context, context)}\n", "bold underline")
            for key_def in KEYS:
                if key_def.context != context or key_def.id.startswith("verdict."):
                    continue
                text.append(f"  {display_key(keys[key_def.id]):>10}  ", "bold cyan")
                text.append(f"{key_def.description}")
                text.append(f"   {key_def.id}\n", "dim")
            text.append("\n")
        if self.context == "report":
            text.append("Verdict keys (apply to the selected judgment's scale)\n", "bold underline")
            codes = verdict_codes()
            for vid, (_, meaning) in VERDICT_KEYS.items():
                scales = ", ".join(f"{s}={c}" for s, c in sorted(codes[vid].items()))
                text.append(f"  {display_key(keys[vid]):>10}  ", "bold cyan")
                text.append(f"{meaning}")
                text.append(f"   {vid}   ({scales})\n", "dim")
            text.append("\n")
        text.append("  ctrl+p  command palette    ", "dim")
        text.append("Remap any key by id in the [keys] table of the config file.\n", "dim")
        with VerticalScroll(id="help"):
            yield Static(text, id="help-text")

    def action_close(self) -> None:
        self.dismiss(None)
