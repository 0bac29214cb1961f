"""Pydantic models of the judge's replies, one per step.

A reply that does not validate is never guessed at: the client repairs it once or asks again,
and then records a judge error. The models accept the few spellings models commonly produce for
the same thing (a bare list instead of the wrapping object, ``"1.0"`` for 1, ``{"ref_idx":
"3"}`` for 3, ``True``/``"yes"`` for true) and map verdict values onto the workstation's scale
codes, so what is stored always belongs to its scale.
"""

from __future__ import annotations

import re
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from reviewer.scales import CONSISTENCY, TERNARY, ScaleError


class _Reply(BaseModel):
    model_config = ConfigDict(extra="ignore")

    LIST_KEY: ClassVar[str] = ""

    @model_validator(mode="before")
    @classmethod
    def _wrap_bare_list(cls, data: Any) -> Any:
        # Models that follow the paper's own output format reply with a bare JSON list.
        if cls.LIST_KEY and isinstance(data, list):
            return {cls.LIST_KEY: data}
        return data


def _ternary(value: Any) -> str:
    try:
        return TERNARY.normalize(value)
    except ScaleError as exc:
        raise ValueError(str(exc)) from exc


def _int(value: Any) -> int:
    if isinstance(value, bool):
        raise ValueError("expected a number, got a boolean")
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        found = re.fullmatch(r"\s*\[?\s*(\d{1,6})\s*\]?\s*", value)
        if found:
            return int(found.group(1))
    raise ValueError(f"expected a whole number, got {value!r}")


class InsScore(BaseModel):
    model_config = ConfigDict(extra="ignore")

    id: int
    score: str
    explanation: str = ""

    @model_validator(mode="before")
    @classmethod
    def _aliases(cls, data: Any) -> Any:
        if isinstance(data, dict) and "explanation" not in data:
            for alias in ("explain", "reason", "reasoning"):
                if alias in data:
                    return {**data, "explanation": data[alias]}
        return data

    @field_validator("id", mode="before")
    @classmethod
    def _number(cls, value: Any) -> int:
        return _int(value)

    @field_validator("score", mode="before")
    @classmethod
    def _score(cls, value: Any) -> str:
        return _ternary(value)


class InsReply(_Reply):
    LIST_KEY: ClassVar[str] = "scores"
    scores: list[InsScore]


class ExtractedClaim(BaseModel):
    model_config = ConfigDict(extra="ignore")

    fact: str
    extract: str = ""

    @field_validator("fact", "extract", mode="before")
    @classmethod
    def _text(cls, value: Any) -> Any:
        return "" if value is None else value


class ExtractReply(_Reply):
    LIST_KEY: ClassVar[str] = "claims"
    claims: list[ExtractedClaim]


class Match(BaseModel):
    model_config = ConfigDict(extra="ignore")

    id: int
    located: bool = False
    original_text: str | None = None
    references: list[int] = Field(default_factory=list)

    @field_validator("id", mode="before")
    @classmethod
    def _number(cls, value: Any) -> int:
        return _int(value)

    @field_validator("references", mode="before")
    @classmethod
    def _refs(cls, value: Any) -> list[int]:
        if value is None:
            return []
        if not isinstance(value, list):
            raise ValueError("references must be a list")
        out: list[int] = []
        for item in value:
            raw = item.get("ref_idx", item.get("index")) if isinstance(item, dict) else item
            number = _int(raw)
            if number not in out:
                out.append(number)
        return out


class MatchReply(_Reply):
    LIST_KEY: ClassVar[str] = "matches"
    matches: list[Match]


class ConsistencyResult(BaseModel):
    model_config = ConfigDict(extra="ignore")

    idx: int
    result: str
    explanation: str = ""
    context: str = ""

    @field_validator("idx", mode="before")
    @classmethod
    def _number(cls, value: Any) -> int:
        return _int(value)

    @field_validator("result", mode="before")
    @classmethod
    def _result(cls, value: Any) -> str:
        try:
            return CONSISTENCY.normalize(value)
        except ScaleError as exc:
            raise ValueError(str(exc)) from exc

    @field_validator("explanation", "context", mode="before")
    @classmethod
    def _text(cls, value: Any) -> Any:
        return "" if value is None else value


class ConsistencyReply(_Reply):
    LIST_KEY: ClassVar[str] = "results"
    results: list[ConsistencyResult]


class ParagraphJudgement(BaseModel):
    model_config = ConfigDict(extra="ignore")

    paragraph: str
    reasonable: bool
    reason: str = ""

    @field_validator("reasonable", mode="before")
    @classmethod
    def _flag(cls, value: Any) -> Any:
        if isinstance(value, str) and value.strip().lower() in {"true", "yes", "reasonable"}:
            return True
        if isinstance(value, str) and value.strip().lower() in {"false", "no", "unreasonable"}:
            return False
        return value


class RatReply(BaseModel):
    model_config = ConfigDict(extra="ignore")

    paragraphs: list[ParagraphJudgement] = Field(default_factory=list)
    score: str
    explanation: str = ""

    @field_validator("score", mode="before")
    @classmethod
    def _score(cls, value: Any) -> str:
        return _ternary(value)
