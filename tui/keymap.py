"""Every key binding of the workstation, by id, with collision checking.

One table is the source of truth: screens build their ``BINDINGS`` from it, the help screen and
``gavel keys`` list it, and the user's config file remaps keys by binding id (``[keys]`` table).
Verdict keys are defined by meaning ("verdict.correct") and resolve against the selected
judgment's scale, so one key can serve every scale that has that meaning.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass

from textual.binding import Binding, BindingType

from reviewer.registry import scales


@dataclass(frozen=True, slots=True)
class KeyDef:
    id: str
    key: str
    action: str
    description: str
    context: str
    show: bool = True
    priority: bool = False


VERDICT_KEYS: dict[str, tuple[str, str]] = {
    # binding id: (default key, meaning); the meaning's codes per scale come from the scales'
    # own default keys, so scales added by a framework join in without touching this table.
    "verdict.no": ("0", "0 / false"),
    "verdict.partial": ("h", "0.5 (half)"),
    "verdict.yes": ("1", "1 / true"),
    "verdict.two": ("2", "2"),
    "verdict.three": ("3", "3"),
    "verdict.correct": ("c", "correct"),
    "verdict.incorrect": ("x", "incorrect / unsupported"),
    "verdict.unknown": ("u", "unknown"),
    "verdict.support": ("s", "support(ed)"),
    "verdict.conflict": ("f", "conflict"),
}

KEYS: tuple[KeyDef, ...] = (
    # Everywhere
    KeyDef("app.help", "question_mark", "app.help", "Help", "app"),
    KeyDef("app.quit", "ctrl+q", "app.quit", "Quit", "app", show=False, priority=True),
    KeyDef("app.agreement", "g", "app.agreement", "Agreement", "app"),
    KeyDef("app.estimates", "E", "app.estimates", "Estimates", "app"),
    # Queue
    KeyDef("queue.open", "enter", "open_report", "Open", "queue", priority=True),
    KeyDef("queue.search", "slash", "search", "Search", "queue"),
    KeyDef("queue.suite", "b", "cycle_suite", "Run", "queue"),
    KeyDef("queue.system", "s", "pick_system", "System", "queue"),
    KeyDef("queue.domain", "d", "pick_domain", "Domain", "queue"),
    KeyDef("queue.status", "f", "cycle_status", "Status", "queue"),
    KeyDef("queue.undecided", "u", "toggle_filter('undecided')", "Undecided", "queue"),
    KeyDef("queue.differs", "x", "toggle_filter('differs')", "Judge≠human", "queue"),
    KeyDef("queue.conflicts", "C", "toggle_filter('conflicts')", "Conflicts", "queue", show=False),
    KeyDef(
        "queue.flagged",
        "exclamation_mark",
        "toggle_filter('flagged')",
        "Flagged for discussion (⚑)",
        "queue",
        show=False,
    ),
    KeyDef("queue.impact", "i", "sort_impact", "By impact", "queue"),
    KeyDef("queue.suspicion", "S", "sort_suspicion", "By suspicion", "queue"),
    KeyDef("queue.suspicious", "w", "toggle_filter('suspicious')", "Suspicious", "queue"),
    KeyDef(
        "queue.hide_accepted",
        "T",
        "toggle_filter('hide_accepted')",
        "Hide accepted",
        "queue",
        show=False,
    ),
    # (w: reports with suspicious ◆ verdicts the rules point to; !: those flagged ⚑ for
    # discussion by a reviewer: two different marks, never both called "flag")
    KeyDef("queue.proposals", "P", "app.proposals", "Proposals", "queue"),
    KeyDef("queue.runs", "R", "app.runs", "Judge runs", "queue"),
    KeyDef("queue.undo", "z", "app.undo_anywhere", "Undo…", "queue", show=False),
    KeyDef("queue.plan", "L", "app.plan_review", "Plan review", "queue"),
    KeyDef("queue.sort", "o", "sort_column", "Order by…", "queue", show=False),
    KeyDef("queue.clear", "escape", "clear_filters", "Clear filters", "queue", show=False),
    KeyDef("queue.quit", "q", "app.quit", "Quit", "queue"),
    # Report review
    KeyDef("judgment.confirm", "enter", "confirm", "Confirm", "report", priority=True),
    KeyDef("judgment.rationale", "r", "rationale", "Rationale…", "report"),
    KeyDef(
        "judgment.next_undecided",
        "right_square_bracket",
        "next_undecided(1)",
        "Undecided",
        "report",
    ),
    KeyDef(
        "judgment.prev_undecided",
        "left_square_bracket",
        "next_undecided(-1)",
        "Prev undecided",
        "report",
        show=False,
    ),
    KeyDef("report.detail_down", "d", "scroll_detail(1)", "Detail ↓", "report"),
    KeyDef("report.detail_up", "D", "scroll_detail(-1)", "Detail ↑", "report", show=False),
    KeyDef("judgment.down", "j", "move(1)", "Next", "report", show=False),
    KeyDef("judgment.up", "k", "move(-1)", "Previous", "report", show=False),
    KeyDef(
        "judgment.flag",
        "exclamation_mark",
        "flag",
        "Flag for discussion (⚑)",
        "report",
        show=False,
    ),
    KeyDef("report.next", "n", "step_report(1)", "Next report", "report"),
    KeyDef("report.prev", "p", "step_report(-1)", "Prev report", "report", show=False),
    KeyDef("review.undo", "z", "undo", "Undo", "report"),
    KeyDef("review.redo", "Z", "redo", "Redo", "report", show=False),
    KeyDef("report.rate", "o", "rate", "Rate 1–4", "report"),
    KeyDef("report.search", "slash", "search", "Find", "report", show=False),
    KeyDef("report.text", "t", "toggle_text", "Raw/cleaned", "report", show=False),
    KeyDef("report.back", "escape", "back", "Queue", "report", show=False),
    KeyDef("report.queue", "q", "back", "Queue", "report"),
    KeyDef("report.source", "v", "view_source", "Source page", "report"),
    KeyDef(
        "judgment.suspicion_order",
        "S",
        "toggle_undecided_order",
        "] order: suspicion / list",
        "report",
        show=False,
    ),
    KeyDef("judgment.adjudicate", "A", "adjudicate", "Adjudicate…", "report", show=False),
    KeyDef("report.propose", "a", "propose", "Propose GT", "report", show=False),
    KeyDef("judgment.rejudge", "J", "rejudge", "Re-judge", "report", show=False),
    *(
        KeyDef(vid, key, f"verdict('{vid}')", f"Verdict: {meaning}", "report", show=False)
        for vid, (key, meaning) in VERDICT_KEYS.items()
    ),
    # Rationale editor (while it is open nothing else fires)
    KeyDef("editor.submit", "ctrl+s", "submit", "Save decision", "editor", priority=True),
    KeyDef(
        "editor.submit_enter",
        "ctrl+enter",
        "submit",
        "Save decision",
        "editor",
        show=False,
        priority=True,
    ),
    KeyDef("editor.cancel", "escape", "cancel", "Cancel", "editor"),
    # The whole stored source page (v on the report screen)
    KeyDef("source.back", "escape,q,v", "back", "Back", "source"),
    KeyDef("source.next", "n", "step(1)", "Next source", "source"),
    KeyDef("source.prev", "p", "step(-1)", "Prev source", "source"),
    KeyDef("source.evidence", "e", "jump('evidence')", "To evidence", "source"),
    KeyDef("source.passage", "c", "jump('passage')", "To cited passage", "source"),
    # agreement screen (g)
    KeyDef("agreement.back", "escape,q", "back", "Back", "agreement"),
    KeyDef("agreement.refresh", "r", "refresh", "Recompute", "agreement"),
    KeyDef("agreement.all", "a", "all_disagreements", "All disagreements", "agreement"),
    # estimates screen (E)
    KeyDef("estimates.back", "escape,q", "back", "Back", "estimates"),
    KeyDef("estimates.refresh", "r", "refresh", "Recompute", "estimates"),
    KeyDef("estimates.plan", "p", "pick_plan", "Plan…", "estimates"),
    KeyDef("estimates.new", "n", "new_plan", "New plan…", "estimates"),
    KeyDef("estimates.review", "L", "review", "Review the plan", "estimates"),
    KeyDef("estimates.target", "w", "cycle_target", "Target ±", "estimates"),
    KeyDef("estimates.anytime", "a", "toggle_anytime", "Anytime CI", "estimates"),
    # ground-truth proposals (P)
    KeyDef("proposals.accept", "y", "decide('accept')", "Accept", "proposals"),
    KeyDef(
        "proposals.force",
        "Y",
        "decide('force')",
        "Accept a flagged duplicate anyway",
        "proposals",
        show=False,
    ),
    KeyDef("proposals.reject", "n", "decide('reject')", "Reject", "proposals"),
    KeyDef("proposals.reload", "r", "reload", "Reload", "proposals"),
    KeyDef("proposals.back", "escape,q", "back", "Back", "proposals"),
    # judge runs (R)
    KeyDef("runs.activate", "a", "activate", "Activate…", "runs"),
    KeyDef("runs.retire", "d", "retire", "Retire…", "runs"),
    KeyDef("runs.card", "c", "card", "Judge card", "runs"),
    KeyDef("runs.reload", "r", "reload", "Reload", "runs"),
    KeyDef("runs.noise", "N", "noise", "Noise band", "runs"),
    KeyDef("runs.back", "escape,q", "back", "Back", "runs"),
    KeyDef("noise.back", "escape,q", "back", "Back", "noise"),
)

KEY_BY_ID: dict[str, KeyDef] = {k.id: k for k in KEYS}

SHARED_CONTEXTS: dict[str, tuple[str, ...]] = {
    "queue": ("app", "queue"),
    "report": ("app", "report"),
    "editor": ("editor",),
    "agreement": ("app", "agreement"),
    "estimates": ("app", "estimates"),
    "proposals": ("app", "proposals"),
    "runs": ("app", "runs"),
    "noise": ("app", "noise"),
    "source": ("app", "source"),
}
"""Which binding contexts are live together (a collision is two of them on one key)."""


def bindings(context: str) -> list[BindingType]:
    return [
        Binding(k.key, k.action, k.description, show=k.show, id=k.id, priority=k.priority)
        for k in KEYS
        if k.context == context
    ]


def verdict_codes() -> dict[str, dict[str, str]]:
    """binding id -> {scale name: code}, from each scale's default key for its choices."""
    by_key: dict[str, dict[str, str]] = defaultdict(dict)
    for scale in scales().values():
        for choice in scale.choices:
            by_key[choice.key][scale.name] = choice.code
    return {vid: dict(by_key.get(key, {})) for vid, (key, _) in VERDICT_KEYS.items()}


def effective_keys(keymap: Mapping[str, str]) -> dict[str, str]:
    """binding id -> key after the user's remapping."""
    return {k.id: keymap.get(k.id, k.key) for k in KEYS}


def problems(keymap: Mapping[str, str]) -> list[str]:
    """Unknown ids and collisions the user's keymap causes (reported at start-up)."""
    found = [
        f"[keys] {bid!r} is not a binding id (see `gavel keys`)"
        for bid in keymap
        if bid not in KEY_BY_ID
    ]
    keys = effective_keys(keymap)
    for screen, contexts in SHARED_CONTEXTS.items():
        seen: dict[str, list[str]] = defaultdict(list)
        for key_def in KEYS:
            if key_def.context in contexts:
                for key in keys[key_def.id].split(","):
                    seen[_normal(key)].append(key_def.id)
        for key, ids in sorted(seen.items()):
            if len(ids) > 1:
                found.append(
                    f"key {display_key(key)!r} is bound to {' and '.join(ids)} "
                    f"on the {screen} screen"
                )
    return found


_ALIASES = {
    "?": "question_mark",
    "/": "slash",
    "!": "exclamation_mark",
    "[": "left_square_bracket",
    "]": "right_square_bracket",
}
_DISPLAY = {v: k for k, v in _ALIASES.items()}


def _normal(key: str) -> str:
    key = key.strip()
    return _ALIASES.get(key, key)


def display_key(key: str) -> str:
    return ",".join(_DISPLAY.get(k, k) for k in key.split(","))


def normalise_keymap(keymap: Mapping[str, str]) -> dict[str, str]:
    """The user's keymap with their spelling of keys (``?``, ``]``) in Textual's names."""
    return {bid: ",".join(_normal(k) for k in keys.split(",")) for bid, keys in keymap.items()}
