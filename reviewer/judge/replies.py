"""Getting JSON out of a model's reply: the lenient parse, and a local repair before asking again.

Models wrap JSON in Markdown fences, add a sentence around it, leave trailing commas, write
Python's ``True``/``None``, or stop mid-way at their token limit. The first three are read
through; the rest are mended locally once; only what still fails costs a second request.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, ClassVar, Self

from pydantic import BaseModel

_FENCE = re.compile(r"^```[A-Za-z0-9_-]*[ \t]*\n?(?P<body>.*?)\n?[ \t]*```$", re.DOTALL)
_LITERALS = {"True": "true", "False": "false", "None": "null"}


def _unfence(text: str) -> str:
    stripped = text.strip()
    found = _FENCE.match(stripped)
    return found.group("body").strip() if found else stripped


def loads_reply(text: str) -> Any:
    """The JSON value of a reply: the whole text, a fenced block, or the span from the first
    ``{``/``[`` to the last ``}``/``]`` (models like to add a sentence around it)."""
    body = _unfence(text)
    try:
        return json.loads(body)
    except json.JSONDecodeError as first:
        starts = [i for i in (body.find("{"), body.find("[")) if i >= 0]
        if not starts:
            raise ValueError("the reply contains no JSON object") from first
        start = min(starts)
        end = max(body.rfind("}"), body.rfind("]"))
        if end <= start:
            raise ValueError(f"the reply is not valid JSON ({first.msg})") from first
        try:
            return json.loads(body[start : end + 1])
        except json.JSONDecodeError as exc:
            raise ValueError(
                f"the reply is not valid JSON ({exc.msg} at character {exc.pos + start})"
            ) from exc


def repair_json(text: str) -> str:
    """Mend the usual defects of model-written JSON, outside string literals only: trailing
    commas, Python's True/False/None, and a reply cut off mid-way (the open string and brackets
    are closed). What it cannot mend still fails to parse, and the client asks again."""
    body = _unfence(text)
    starts = [i for i in (body.find("{"), body.find("[")) if i >= 0]
    if starts:
        body = body[min(starts) :]
    mender = _Mender()
    mender.feed(body)
    return mender.finish()


@dataclass(slots=True)
class _Mender:
    """The repair's state as it reads the reply: the text so far, the brackets still open,
    and whether it is inside a string literal (just after a backslash)."""

    out: list[str] = field(default_factory=list)
    stack: list[str] = field(default_factory=list)
    in_string: bool = False
    escaped: bool = False

    def feed(self, body: str) -> None:
        """Reads up to the end of the first complete JSON value."""
        i = 0
        while i < len(body):
            ch = body[i]
            if self.in_string:
                self.string_char(ch)
                i += 1
            elif ch.isalpha():
                i = self.literal(body, i)
            else:
                self.structural(ch)
                i += 1
                if not self.stack and ch in "}]":
                    break

    def string_char(self, ch: str) -> None:
        self.out.append(ch)
        if self.escaped:
            self.escaped = False
        elif ch == "\\":
            self.escaped = True
        elif ch == '"':
            self.in_string = False

    def literal(self, body: str, i: int) -> int:
        """A bare word: Python's True/False/None become JSON's; returns where it ends."""
        j = i
        while j < len(body) and (body[j].isalnum() or body[j] == "_"):
            j += 1
        word = body[i:j]
        self.out.append(_LITERALS.get(word, word))
        return j

    def structural(self, ch: str) -> None:
        if ch == '"':
            self.in_string = True
        elif ch in "{[":
            self.stack.append("}" if ch == "{" else "]")
        elif ch in "}]":
            _drop_trailing_comma(self.out)
            if self.stack:
                self.stack.pop()
        self.out.append(ch)

    def finish(self) -> str:
        """Closes what a cut-off reply left open."""
        if self.in_string:
            self.out.append('"')
        _drop_trailing_comma(self.out)
        if self.out and self.out[-1].rstrip().endswith(":"):
            self.out.append("null")
        self.out.extend(reversed(self.stack))
        return "".join(self.out)


def _drop_trailing_comma(out: list[str]) -> None:
    j = len(out) - 1
    while j >= 0 and out[j].isspace():
        j -= 1
    if j >= 0 and out[j] == ",":
        del out[j]


class TextReply(BaseModel):
    """A reply schema for prompts whose published output is not JSON (a ``[4] reason`` line,
    an XML block, a bare ``True``): the client calls :meth:`parse_text` instead of reading
    JSON, and the repair turn asks again in the reply's own form (:attr:`REPAIR_HINT`)."""

    REPAIR_HINT: ClassVar[str] = (
        "Send the complete answer again in exactly the format the instructions give."
    )

    @classmethod
    def parse_text(cls, text: str) -> Self:
        """The reply's value; ValueError (or ValidationError) when it is unusable."""
        raise NotImplementedError
