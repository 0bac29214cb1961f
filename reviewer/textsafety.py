"""Text from reports, sources, judges and merged logs, made safe to show on a terminal.

A terminal obeys what it is sent: ``ESC ] 0 ;`` retitles the window, ``ESC ] 52 ;`` writes
the clipboard, ``ESC ] 8 ;`` hides a link behind innocent text, ``ESC [ 2 J`` clears the screen,
and 8-bit C1 codes (``U+009B`` is a CSI) do the same on terminals that honour them. Unicode
adds characters that rearrange or hide what is read: bidirectional embeddings, overrides and
isolates (U+202A–202E, U+2066–2069) show text in an order other than the stored one, and
zero-width characters and tag characters carry text nobody sees. A rationale or a claim
containing them would make a reviewer read something other than what is stored — or let the
text act on their terminal.

So everything Gavel shows of such text goes through one of these, chosen by where it goes:

* :func:`visible` — same length as the input, for views that keep character offsets (the
  report text with its claim spans): each unsafe character becomes one visible stand-in
  (C0 controls their Control Pictures, ``␛`` for ESC; everything else ``�``);
* :func:`printable` — for tables and messages: C0 controls as Control Pictures and every
  other unsafe character as ``⟨U+202E⟩``, which says exactly what is there;
* :func:`json_safe` — for JSON written to a terminal: unsafe characters as JSON ``\\u``
  escapes, so the text is still valid JSON meaning the same string.

Files keep the exact bytes: these are for what a terminal shows, never for what is stored or
exported to a file.
"""

from __future__ import annotations

import re

_UNSAFE_CLASS = (
    "\x00-\x08\x0b-\x1f\x7f-\x9f"  # C0 controls but tab and newline; DEL; C1 controls
    "\u00ad"  # soft hyphen (invisible)
    "\u034f"  # combining grapheme joiner
    "\u061c"  # Arabic letter mark
    "\u115f\u1160\u3164\uffa0"  # Hangul fillers (blank "letters")
    "\u17b4\u17b5"  # Khmer inherent vowels (invisible)
    "\u180b-\u180f"  # Mongolian variation selectors and vowel separator
    "\u200b-\u200f"  # zero-width space, non-joiner, joiner; LRM, RLM
    "\u2028-\u202e"  # line and paragraph separators; embeddings, overrides
    "\u2060-\u206f"  # word joiner, invisible operators, isolates, deprecated
    "\ufe00-\ufe0f"  # variation selectors
    "\ufeff"  # zero-width no-break space (BOM)
    "\ufff9-\ufffb"  # interlinear annotation controls
    "\ud800-\udfff"  # lone surrogates (cannot even be written as UTF-8)
    "\U0001d173-\U0001d17a"  # musical formatting controls
    "\U000e0000-\U000e0fff"  # tags and variation selectors supplement
)
_UNSAFE = re.compile(f"[{_UNSAFE_CLASS}]")
_UNSAFE_OR_TAB_OR_NEWLINE = re.compile(f"[{_UNSAFE_CLASS}\t\n]")
_UNSAFE_OR_TAB = re.compile(f"[{_UNSAFE_CLASS}\t]")

STAND_IN = "\ufffd"
"""What :func:`visible` shows for an unsafe character that has no Control Picture."""


def _picture(char: str) -> str | None:
    code = ord(char)
    if code < 0x20:
        return chr(0x2400 + code)  # ␀ … ␟ (␛ for ESC)
    if code == 0x7F:
        return "\u2421"  # ␡
    return None


def is_safe(text: str) -> bool:
    """No character a terminal would act on or that hides or reorders text (tab and newline
    are fine)."""
    return _UNSAFE.search(text) is None


def hidden_characters(text: str) -> list[str]:
    """The unsafe characters in ``text``, as ``U+XXXX`` names (for error messages)."""
    return sorted({f"U+{ord(m.group()):04X}" for m in _UNSAFE.finditer(text)})


def visible(text: str, *, keep_newlines: bool = True) -> str:
    """Every unsafe character as one visible character, tabs as a space: the same length as
    the input, so offsets into the text stay valid."""
    pattern = _UNSAFE_OR_TAB if keep_newlines else _UNSAFE_OR_TAB_OR_NEWLINE

    def one(match: re.Match[str]) -> str:
        char = match.group()
        if char == "\t":
            return " "
        return _picture(char) or STAND_IN

    return pattern.sub(one, text) if pattern.search(text) else text


def printable(text: str, *, keep_newlines: bool = True) -> str:
    """Every unsafe character named where it stands: C0 controls as Control Pictures (``␛``),
    the others as ``⟨U+202E⟩``. Tabs stay; newlines stay unless ``keep_newlines`` is false
    (then ``␊``, for one-line cells)."""
    pattern = _UNSAFE if keep_newlines else _UNSAFE_OR_TAB_OR_NEWLINE

    def one(match: re.Match[str]) -> str:
        char = match.group()
        if char == "\t":
            return " "
        return _picture(char) or f"\u27e8U+{ord(char):04X}\u27e9"

    return pattern.sub(one, text) if pattern.search(text) else text


def json_safe(json_text: str) -> str:
    """JSON text (as ``json.dumps(..., ensure_ascii=False)`` writes it) with every unsafe
    character as a ``\\u`` escape: the same JSON value, nothing a terminal would act on.

    ``json.dumps`` already escapes C0 controls; this adds DEL, C1 and the invisible and
    reordering characters it leaves raw. Outside strings JSON holds only ASCII punctuation,
    so every match is inside a string, where the escape means the same character.
    """

    def one(match: re.Match[str]) -> str:
        code = ord(match.group())
        if code > 0xFFFF:  # a surrogate pair, as JSON spells it
            code -= 0x10000
            return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"
        return f"\\u{code:04x}"

    return _UNSAFE.sub(one, json_text) if _UNSAFE.search(json_text) else json_text
