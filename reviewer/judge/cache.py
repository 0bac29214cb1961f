"""The judge's response cache: the protocol the client needs and how keys are made.

A key is the sha256 of (prompt version, model, the exact messages, the sampling parameters),
so a re-run of the same judging on the same inputs costs nothing, while any change to a
prompt's wording (a new ``PROMPT_VERSION``), the model, the report text, a fetched page or the
temperature is a miss. The store keeps it in the ``judge_cache`` table; tests use
:class:`MemoryCache`. Only replies that validated are ever put, so a hit is usable as it is.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol


@dataclass(frozen=True, slots=True)
class CachedReply:
    content: str
    usage: dict[str, int]


class JudgeCache(Protocol):
    def get(self, key: str) -> CachedReply | None: ...

    def put(self, key: str, model: str, prompt_version: str, reply: CachedReply) -> None: ...


def cache_key(
    prompt_version: str,
    model: str,
    messages: Sequence[Mapping[str, str]],
    params: Mapping[str, Any],
) -> str:
    payload = json.dumps(
        {
            "prompt_version": prompt_version,
            "model": model,
            "messages": list(messages),
            "params": dict(params),
        },
        ensure_ascii=False,
        sort_keys=True,
        separators=(",", ":"),
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


@dataclass
class MemoryCache:
    """A dict-backed cache (tests, one-off runs without a database)."""

    entries: dict[str, CachedReply] = field(default_factory=dict)

    def get(self, key: str) -> CachedReply | None:
        return self.entries.get(key)

    def put(self, key: str, model: str, prompt_version: str, reply: CachedReply) -> None:
        self.entries[key] = reply
