"""What judging costs: token usage per run and list prices per model.

Usage is counted from each reply's ``usage`` block (estimated at 4 characters a token when a
server sends none, and counted as such); cache hits cost nothing and are reported as tokens
saved. Prices are list prices in US dollars per million tokens; they go stale, so a run can
override them (``gavel judge --price IN,OUT``), and an unknown model has cost "unknown", never 0.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Price:
    """US dollars per million tokens."""

    input: float
    output: float

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        return (prompt_tokens * self.input + completion_tokens * self.output) / 1_000_000


PRICES: dict[str, Price] = {
    # Published list prices per million tokens (standard tier, no batch or cached-input
    # discount). They change: override with `gavel judge --price IN,OUT` when they do.
    "gpt-5": Price(1.25, 10.0),
    "gpt-5-mini": Price(0.25, 2.0),
    "gpt-5-nano": Price(0.05, 0.40),
    "gpt-4.1": Price(2.0, 8.0),
    "gpt-4.1-mini": Price(0.40, 1.60),
    "gpt-4.1-nano": Price(0.10, 0.40),
    "gpt-4o": Price(2.50, 10.0),
    "gpt-4o-mini": Price(0.15, 0.60),
    "o3": Price(2.0, 8.0),
    "o4-mini": Price(1.10, 4.40),
    "gemini-2.5-pro": Price(1.25, 10.0),
    "gemini-2.5-flash": Price(0.30, 2.50),
    "gemini-2.5-flash-lite": Price(0.10, 0.40),
    "claude-sonnet-4-5": Price(3.0, 15.0),
    "claude-haiku-4-5": Price(1.0, 5.0),
    "deepseek-chat": Price(0.27, 1.10),
}


BATCH_DISCOUNT = 0.5
"""What a Batch API token costs relative to a direct one (OpenAI's published batch pricing: half
the list price; other providers differ, so override prices with ``--price`` when they do)."""


def price_for(model: str, override: Price | None = None) -> Price | None:
    """The override, else the longest table entry the model name starts with (dated snapshots
    such as ``gpt-4o-mini-2024-07-18`` match their family), else None (cost unknown)."""
    if override is not None:
        return override
    name = model.lower().rsplit("/", 1)[-1]
    best = ""
    for known in PRICES:
        if (name == known or name.startswith(known + "-")) and len(known) > len(best):
            best = known
    return PRICES.get(best) if best else None


@dataclass(slots=True)
class TokenUsage:
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def add(self, other: TokenUsage) -> None:
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens

    def as_dict(self) -> dict[str, int]:
        return {"prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens}


@dataclass(slots=True)
class RunUsage:
    """What one judge run cost: stored as the run's ``usage`` JSON."""

    requests: int = 0
    """HTTP requests that got a chat reply (repair turns included)."""
    cache_hits: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    saved_prompt_tokens: int = 0
    """Tokens that cache hits did not spend again."""
    saved_completion_tokens: int = 0
    retries: int = 0
    local_repairs: int = 0
    repair_requests: int = 0
    errors: int = 0
    estimated_requests: int = 0
    """Replies without a ``usage`` block; their tokens are estimated at 4 characters a token."""
    answered: int = 0
    """Calls that ended with a usable reply from the model (not from the cache)."""
    batch_requests: int = 0
    """Replies that came through the Batch API (counted in ``requests`` too)."""
    batch_prompt_tokens: int = 0
    batch_completion_tokens: int = 0
    """The batch replies' share of the token counts, billed at ``BATCH_DISCOUNT``."""

    def cost(self, price: Price | None) -> float | None:
        if price is None:
            return None
        direct = price.cost(
            self.prompt_tokens - self.batch_prompt_tokens,
            self.completion_tokens - self.batch_completion_tokens,
        )
        return direct + BATCH_DISCOUNT * price.cost(
            self.batch_prompt_tokens, self.batch_completion_tokens
        )

    def merge(self, other: RunUsage) -> None:
        """Add another client's counts (the passes of one batch run)."""
        for name in self.__slots__:
            setattr(self, name, getattr(self, name) + getattr(other, name))

    @classmethod
    def from_json(cls, data: object) -> RunUsage:
        """The counts of a stored usage record (other keys ignored)."""
        out = cls()
        if isinstance(data, dict):
            for name in cls.__slots__:
                value = data.get(name)
                if isinstance(value, int) and not isinstance(value, bool):
                    setattr(out, name, value)
        return out

    def to_json(self, price: Price | None) -> dict[str, Any]:
        out: dict[str, Any] = {name: getattr(self, name) for name in self.__slots__}
        cost = self.cost(price)
        out["cost_usd"] = None if cost is None else round(cost, 6)
        out["price_per_million"] = (
            None if price is None else {"input": price.input, "output": price.output}
        )
        return out
