"""An OpenAI-compatible chat-completions client for judging: bounded, retrying, cached, metered.

It speaks ``POST {base_url}/chat/completions`` through the official ``openai`` SDK (its async
client), which hosted APIs (OpenAI, and the many that mirror it) and local servers (vLLM,
llama.cpp's ``llama-server``, Ollama's ``/v1``) all accept. The SDK is used for the wire (and,
in :mod:`reviewer.judge.batch`, for the files and batches endpoints); the judge's robustness
stays here, because the SDK's own defaults would hide it:

- the SDK's retries are switched off (``max_retries=0``): ours are the only ones, counted per
  run, with exponential backoff or exactly the ``Retry-After`` / ``retry-after-ms`` the server
  asks for (capped, so a hostile server cannot stall a run);
- replies are read as a capped stream and decoded by us, so a 50 MB reply is refused after the
  cap instead of held in memory, and ``usage`` is read even from servers whose replies do not
  fit the SDK's typed models (llama.cpp and Ollama add and omit fields);
- every call shares the run's total time budget; past it, calls fail at once as judge errors.

The API key comes only from the environment (``GAVEL_API_KEY``, else ``OPENAI_API_KEY``), is
sent only in the ``Authorization`` header (none at all when no key is set, for local servers),
and is scrubbed from every error message and reply text this module produces, so it cannot
reach the database, a log or an export even when a misbehaving server echoes it back.
"""

from __future__ import annotations

import asyncio
import email.utils
import importlib
import json
import logging
import os
import random
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any, Generic, TypeVar
from urllib.parse import urlsplit, urlunsplit

import httpx
import openai
from pydantic import BaseModel, ValidationError

from reviewer.judge.cache import CachedReply, JudgeCache, cache_key
from reviewer.judge.costs import Price, RunUsage, TokenUsage, price_for
from reviewer.judge.prompting import Prompt, repair_message
from reviewer.judge.replies import TextReply, loads_reply, repair_json

log = logging.getLogger("gavel.judge")

T = TypeVar("T", bound=BaseModel)

ENV_KEYS = ("GAVEL_API_KEY", "OPENAI_API_KEY")
RETRYABLE_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 520, 522, 524, 529})
NO_KEY = "no-key-sent"
"""What the SDK is given when no key is set (it insists on one); the Authorization header is
then omitted from every request, so the placeholder never leaves the process."""


def api_key_from_env(environ: Mapping[str, str] | None = None) -> str | None:
    """The first non-empty of ``GAVEL_API_KEY`` and ``OPENAI_API_KEY``; None for keyless
    servers. There is deliberately no command-line option: a key on a command line ends up in
    shell history and in every ``ps`` listing."""
    env = os.environ if environ is None else environ
    for name in ENV_KEYS:
        value = env.get(name, "").strip()
        if value:
            return value
    return None


def public_url(url: str) -> str:
    """A base URL without credentials or query string, safe to store with a run."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


# -- configuration ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ClientConfig:
    base_url: str
    model: str
    concurrency: int = 4
    timeout: float = 120.0
    """Seconds for one whole request (connect, send, wait, read)."""
    max_retries: int = 4
    backoff_base: float = 1.0
    backoff_max: float = 60.0
    jitter: float = 0.25
    """Each backoff is stretched by up to this fraction at random, so clients don't retry in
    lockstep."""
    retry_after_max: float = 60.0
    """The longest wait a server's Retry-After can impose on one retry."""
    time_budget: float | None = None
    """Seconds the whole client may spend on requests and waits; None: no limit."""
    max_reply_bytes: int = 2_000_000
    """A reply body larger than this is refused (a judge error), read no further."""
    temperature: float | None = 0.0
    max_tokens: int | None = None
    json_mode: bool = False
    """Send ``response_format: json_object`` (OpenAI, vLLM and llama.cpp accept it)."""
    repair_turns: int = 1
    price: Price | None = None
    trust_env: bool = True

    def params(self) -> dict[str, Any]:
        """The sampling parameters: part of every cache key and stored with the run."""
        out: dict[str, Any] = {}
        if self.temperature is not None:
            out["temperature"] = self.temperature
        if self.max_tokens is not None:
            out["max_tokens"] = self.max_tokens
        if self.json_mode:
            out["response_format"] = {"type": "json_object"}
        return out


class JudgeCallError(Exception):
    """A request that failed for good (the message never contains the API key)."""


@dataclass(frozen=True, slots=True)
class CallResult(Generic[T]):
    value: T | None
    content: str
    error: str | None
    cached: bool
    usage: TokenUsage = field(default_factory=TokenUsage)
    deferred: bool = False
    """Not answered yet: the request waits in a batch (see :mod:`reviewer.judge.batch`)."""


@dataclass(frozen=True, slots=True)
class _Failure:
    message: str
    retryable: bool
    retry_after: float | None = None


def validate_reply(content: str, schema: type[T]) -> tuple[T | None, str, bool]:
    """(value, problem, locally repaired?) of one reply against its step's schema.

    JSON replies are read leniently, then mended locally once; a :class:`TextReply` schema
    parses its own published form.
    """
    if issubclass(schema, TextReply):
        try:
            return schema.parse_text(content), "", False
        except (ValueError, ValidationError) as exc:
            return None, describe_error(exc), False
    try:
        return schema.model_validate(loads_reply(content)), "", False
    except (ValueError, ValidationError) as exc:
        problem = describe_error(exc)
    try:
        return schema.model_validate(json.loads(repair_json(content))), "", True
    except (ValueError, ValidationError):
        return None, problem, False


def repair_turn(schema: type[BaseModel], problem: str) -> str:
    hint = schema.REPAIR_HINT if issubclass(schema, TextReply) else None
    return repair_message(problem, hint)


# -- the client -------------------------------------------------------------------------------

Sleep = Callable[[float], Awaitable[None]]


def sdk_client(config: ClientConfig, api_key: str | None) -> openai.AsyncOpenAI:
    """The SDK's async client, its retries off: every retry is ours (see the module doc)."""
    return openai.AsyncOpenAI(
        api_key=api_key or NO_KEY,
        base_url=config.base_url.rstrip("/"),
        max_retries=0,
        timeout=config.timeout,
        http_client=openai.DefaultAsyncHttpxClient(trust_env=config.trust_env),
    )


def auth_headers(api_key: str | None) -> dict[str, Any]:
    """Per-request headers: without a key, the SDK's placeholder Authorization is omitted."""
    return {} if api_key else {"Authorization": openai.Omit()}


class ChatClient:
    """Judge calls against one OpenAI-compatible endpoint and model.

    Use as an async context manager. ``complete`` never raises for a failed call: it returns a
    :class:`CallResult` whose ``error`` says what went wrong, so one bad item never stops a run.
    """

    def __init__(
        self,
        config: ClientConfig,
        *,
        prompt_version: str,
        api_key: str | None = None,
        cache: JudgeCache | None = None,
        sleep: Sleep | None = None,
        on_request: Callable[[bool], None] | None = None,
        rng: random.Random | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.config = config
        self.prompt_version = prompt_version
        self.cache = cache
        self.usage = RunUsage()
        self.price = price_for(config.model, config.price)
        self._key = api_key or None
        self._sleep: Sleep = sleep or asyncio.sleep
        self._on_request = on_request
        self._rng = rng or random.Random()
        self._clock = clock
        self._semaphore = asyncio.Semaphore(max(1, config.concurrency))
        self._sdk: openai.AsyncOpenAI | None = None
        self._deadline: float | None = None

    def __repr__(self) -> str:
        return (
            f"ChatClient(model={self.config.model!r}, "
            f"base_url={public_url(self.config.base_url)!r})"
        )

    async def __aenter__(self) -> ChatClient:
        self._sdk = sdk_client(self.config, self._key)
        if self.config.time_budget is not None:
            self._deadline = self._clock() + self.config.time_budget
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._sdk is not None:
            await self._sdk.close()
            self._sdk = None

    def redact(self, text: str) -> str:
        """``text`` with the API key blanked out (servers have been known to echo it)."""
        if self._key and self._key in text:
            return text.replace(self._key, "[redacted]")
        return text

    def key_for(self, prompt: Prompt) -> str:
        return cache_key(
            self.prompt_version, self.config.model, prompt.messages(), self.config.params()
        )

    def is_cached(self, prompt: Prompt) -> bool:
        return self.cache is not None and self.cache.get(self.key_for(prompt)) is not None

    def cached(self, prompt: Prompt, schema: type[T]) -> CallResult[T] | None:
        """The cached, still valid answer to ``prompt`` (counted as a hit), else None."""
        if self.cache is None:
            return None
        hit = self.cache.get(self.key_for(prompt))
        if hit is None:
            return None
        value, _, _ = validate_reply(hit.content, schema)
        if value is None:
            return None
        self.usage.cache_hits += 1
        self.usage.saved_prompt_tokens += hit.usage.get("prompt_tokens", 0)
        self.usage.saved_completion_tokens += hit.usage.get("completion_tokens", 0)
        self._notify(True)
        return CallResult(
            value,
            hit.content,
            None,
            True,
            TokenUsage(hit.usage.get("prompt_tokens", 0), hit.usage.get("completion_tokens", 0)),
        )

    async def complete(self, prompt: Prompt, schema: type[T]) -> CallResult[T]:
        hit = self.cached(prompt, schema)
        if hit is not None:
            return hit
        messages = prompt.messages()
        key = self.key_for(prompt)
        spent = TokenUsage()
        try:
            content = await self._chat(messages, spent)
            value, problem, repaired = validate_reply(content, schema)
            turns = 0
            while value is None and turns < self.config.repair_turns:
                turns += 1
                self.usage.repair_requests += 1
                log.info(
                    "step %s: reply unusable (%s); asking once more",
                    prompt.step,
                    self.redact(problem),
                )
                follow = [
                    *messages,
                    {"role": "assistant", "content": content},
                    {"role": "user", "content": repair_turn(schema, problem)},
                ]
                content = await self._chat(follow, spent)
                value, problem, repaired = validate_reply(content, schema)
        except JudgeCallError as exc:
            self.usage.errors += 1
            return CallResult(None, "", self.redact(str(exc)), False, spent)
        if value is None:
            self.usage.errors += 1
            return CallResult(None, content, f"invalid reply: {self.redact(problem)}", False, spent)
        if repaired:
            self.usage.local_repairs += 1
        self.usage.answered += 1
        if self.cache is not None:
            self.cache.put(
                key, self.config.model, self.prompt_version, CachedReply(content, spent.as_dict())
            )
        return CallResult(value, content, None, False, spent)

    def _notify(self, cached: bool) -> None:
        if self._on_request is not None:
            self._on_request(cached)

    def account(
        self, data: Any, chars: int, spent: TokenUsage, *, batch: bool = False
    ) -> str | None:
        """Count one reply's tokens (estimated when the server sent no ``usage``) and return its
        message content (None when it has none); ``batch``: it came through the Batch API."""
        self.usage.requests += 1
        self._notify(False)
        content = reply_content(data)
        used = reply_usage(data)
        if used is None:
            self.usage.estimated_requests += 1
            used = TokenUsage(chars // 4, len(content or "") // 4)
        spent.add(used)
        self.usage.prompt_tokens += used.prompt_tokens
        self.usage.completion_tokens += used.completion_tokens
        if batch:
            self.usage.batch_requests += 1
            self.usage.batch_prompt_tokens += used.prompt_tokens
            self.usage.batch_completion_tokens += used.completion_tokens
        return content

    async def _chat(self, messages: list[dict[str, str]], spent: TokenUsage) -> str:
        data = await self._post(messages)
        content = self.account(data, sum(len(m["content"]) for m in messages), spent)
        if content is None:
            raise JudgeCallError(
                f"the reply has no message content (finish_reason {_finish_reason(data)!r})"
            )
        return self.redact(content)

    def _remaining(self) -> float | None:
        return None if self._deadline is None else self._deadline - self._clock()

    async def _post(self, messages: list[dict[str, str]]) -> Any:
        if self._sdk is None:
            raise RuntimeError("use ChatClient as an async context manager")
        attempt = 0
        while True:
            remaining = self._remaining()
            if remaining is not None and remaining <= 0:
                raise JudgeCallError(
                    f"the run's time budget ({self.config.time_budget:g} s) is spent"
                )
            failure = await self._attempt(messages, remaining)
            if not isinstance(failure, _Failure):
                return failure
            delay = self._retry_delay(failure, attempt)
            attempt += 1
            self.usage.retries += 1
            log.warning(
                "judge request failed: %s; retry %d of %d in %.1f s",
                self.redact(failure.message),
                attempt,
                self.config.max_retries,
                delay,
            )
            await self._sleep(delay)

    def _retry_delay(self, failure: _Failure, attempt: int) -> float:
        """How long to wait before asking again; JudgeCallError when the call gives up (not
        retryable, out of retries, or the time budget ends before the wait does)."""
        if not failure.retryable or attempt >= self.config.max_retries:
            tries = attempt + 1
            suffix = f" (gave up after {tries} attempts)" if failure.retryable else ""
            raise JudgeCallError(self.redact(failure.message + suffix))
        delay = self._delay(attempt, failure.retry_after)
        remaining = self._remaining()
        if remaining is not None and delay >= remaining:
            raise JudgeCallError(
                self.redact(
                    f"{failure.message}; no retry: the run's time budget "
                    f"({self.config.time_budget:g} s) ends first"
                )
            )
        return delay

    async def _attempt(self, messages: list[dict[str, str]], remaining: float | None) -> Any:
        """The decoded JSON body of one request, or a :class:`_Failure`."""
        assert self._sdk is not None
        limit = self.config.timeout if remaining is None else min(self.config.timeout, remaining)
        async with self._semaphore:
            try:
                async with asyncio.timeout(limit):
                    body = await self._stream(messages, limit)
            except (TimeoutError, openai.APITimeoutError):
                return _Failure(f"timed out after {limit:g} s", True)
            except openai.APIStatusError as exc:
                snippet = self.redact(_snippet(exc))
                status = exc.status_code
                return _Failure(
                    f"HTTP {status}{': ' + snippet if snippet else ''}",
                    status in RETRYABLE_STATUS,
                    _retry_after(exc.response.headers),
                )
            except _connection_errors() as exc:
                return _connection_failure(exc)
        if isinstance(body, _Failure):
            return body
        try:
            return json.loads(bytes(body))
        except (ValueError, UnicodeDecodeError):
            return _Failure("HTTP 200 with a body that is not JSON", True)

    async def _stream(self, messages: list[dict[str, str]], limit: float) -> bytearray | _Failure:
        """The reply's bytes, refused as soon as they grow past the size cap."""
        assert self._sdk is not None
        cap = self.config.max_reply_bytes
        async with self._sdk.chat.completions.with_streaming_response.create(
            model=self.config.model,
            messages=messages,  # type: ignore[arg-type]
            extra_headers=auth_headers(self._key),
            timeout=limit,
            **self.config.params(),
        ) as response:
            body = bytearray()
            async for chunk in response.iter_bytes():
                body.extend(chunk)
                if len(body) > cap:
                    return _Failure(f"the reply is larger than {cap:,} bytes; refused", False)
        return body

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(max(retry_after, 0.0), self.config.retry_after_max)
        base = min(self.config.backoff_max, self.config.backoff_base * 2.0**attempt)
        return base * (1 + self.config.jitter * self._rng.random())


def _connection_failure(exc: Exception) -> _Failure:
    """A retryable failure of the connection: while sending (the SDK wraps it), or while the
    body is read (a chunked reply cut short, a reset: the HTTP library's own error)."""
    if isinstance(exc, openai.APIConnectionError):
        cause = type(exc.__cause__).__name__ if exc.__cause__ else type(exc).__name__
        return _Failure(f"connection failed ({cause})", True)
    return _Failure(f"the reply broke off ({type(exc).__name__})", True)


@lru_cache(maxsize=1)
def _connection_errors() -> tuple[type[Exception], ...]:
    """What a broken connection raises: the SDK's wrapper (while sending), and what its HTTP
    library raises when a body breaks while it is read: httpx's errors, and those of httpx2,
    which newer openai releases are built on."""
    found: list[type[Exception]] = [
        openai.APIConnectionError,
        httpx.TransportError,
        httpx.DecodingError,
    ]
    try:
        other = importlib.import_module("httpx2")
    except ImportError:
        return tuple(found)
    for name in ("TransportError", "DecodingError"):
        error = getattr(other, name, None)
        if isinstance(error, type) and issubclass(error, Exception):
            found.append(error)
    return tuple(found)


def describe_error(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ()))
        return f"{where or 'reply'}: {first.get('msg', 'invalid')}"[:300]
    return str(exc)[:300]


def reply_content(data: Any) -> str | None:
    """The message text of a chat-completions body (content parts joined), else None."""
    try:
        message = data["choices"][0]["message"]
    except (KeyError, IndexError, TypeError):
        return None
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, list):  # some servers return content parts
        content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return content if isinstance(content, str) else None


def reply_usage(data: Any) -> TokenUsage | None:
    """The ``usage`` block of a body, read leniently; None when the server sent none."""
    usage = data.get("usage") if isinstance(data, dict) else None
    if not isinstance(usage, dict) or not isinstance(usage.get("prompt_tokens"), int):
        return None
    completion = usage.get("completion_tokens")
    return TokenUsage(
        int(usage["prompt_tokens"]), int(completion) if isinstance(completion, int) else 0
    )


def _finish_reason(data: Any) -> object:
    try:
        return data["choices"][0].get("finish_reason")
    except (KeyError, IndexError, TypeError, AttributeError):
        return None


def _snippet(exc: openai.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict):
        text = str(body.get("message", "")) if "message" in body else json.dumps(body)[:200]
    elif isinstance(body, str):
        text = body
    else:
        text = ""
    return " ".join(text.split())[:200]


def _retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds the server asked us to wait: ``retry-after-ms``, or ``Retry-After`` as seconds
    or as an HTTP date."""
    millis = headers.get("retry-after-ms")
    if millis:
        try:
            return float(millis) / 1000
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return float(value)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - datetime.now(UTC)).total_seconds())
