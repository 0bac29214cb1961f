"""An OpenAI-compatible chat-completions client for judging: bounded, retrying, cached, metered.

It speaks ``POST {base_url}/chat/completions``, which hosted APIs (OpenAI, and the many that
mirror it) and local servers (vLLM, llama.cpp's ``llama-server``, Ollama's ``/v1``) all accept.

Why plain httpx and not the ``openai`` package: the judge's robustness lives in exactly the
places the SDK hides. We need to see every status code and header to honour ``Retry-After`` /
``retry-after-ms`` ourselves, to bound concurrency and count retries per run, to read ``usage``
even from servers whose replies do not fit the SDK's typed models (llama.cpp and Ollama add and
omit fields), and to guarantee that our retries are the only ones (no hidden second layer
multiplying attempts). A 40-line request loop over httpx, which the SDK itself wraps, is
simpler to reason about than configuring the SDK's retry, timeout and error classes away.

The API key comes only from the environment (``GAVEL_API_KEY``, else ``OPENAI_API_KEY``), is
sent only in the ``Authorization`` header, and is scrubbed from every error message and reply
text this module produces, so it cannot reach the database, a log or an export even when a
misbehaving server echoes it back. Local servers need no key: none is sent when none is set.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import logging
import os
import random
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Generic, TypeVar
from urllib.parse import urlsplit, urlunsplit

import httpx
from pydantic import BaseModel, ValidationError

from reviewer.judge.cache import CachedReply, JudgeCache, cache_key
from reviewer.judge.costs import Price, RunUsage, TokenUsage, price_for
from reviewer.judge.prompting import Prompt, repair_message
from reviewer.judge.replies import loads_reply, repair_json

log = logging.getLogger("gavel.judge")

T = TypeVar("T", bound=BaseModel)

ENV_KEYS = ("GAVEL_API_KEY", "OPENAI_API_KEY")
RETRYABLE_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 520, 522, 524, 529})


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
    retry_after_max: float = 300.0
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


@dataclass(frozen=True, slots=True)
class _Failure:
    message: str
    retryable: bool
    retry_after: float | None = None


# -- the client -------------------------------------------------------------------------------

Sleep = Callable[[float], Awaitable[None]]


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
        self._semaphore = asyncio.Semaphore(max(1, config.concurrency))
        self._http: httpx.AsyncClient | None = None
        self._url = config.base_url.rstrip("/") + "/chat/completions"

    def __repr__(self) -> str:
        return f"ChatClient(model={self.config.model!r}, base_url={public_url(self._url)!r})"

    async def __aenter__(self) -> ChatClient:
        self._http = httpx.AsyncClient(
            timeout=httpx.Timeout(self.config.timeout),
            limits=httpx.Limits(max_connections=max(1, self.config.concurrency)),
            trust_env=self.config.trust_env,
        )
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._http is not None:
            await self._http.aclose()
            self._http = None

    def redact(self, text: str) -> str:
        """``text`` with the API key blanked out (servers have been known to echo it)."""
        if self._key and self._key in text:
            return text.replace(self._key, "[redacted]")
        return text

    def key_for(self, prompt: Prompt) -> str:
        return cache_key(self.prompt_version, self.config.model, prompt.messages(),
                         self.config.params())

    def is_cached(self, prompt: Prompt) -> bool:
        return self.cache is not None and self.cache.get(self.key_for(prompt)) is not None

    async def complete(self, prompt: Prompt, schema: type[T]) -> CallResult[T]:
        messages = prompt.messages()
        key = self.key_for(prompt)
        if self.cache is not None:
            hit = self.cache.get(key)
            if hit is not None:
                value, _, _ = self._validate(hit.content, schema)
                if value is not None:
                    self.usage.cache_hits += 1
                    self.usage.saved_prompt_tokens += hit.usage.get("prompt_tokens", 0)
                    self.usage.saved_completion_tokens += hit.usage.get("completion_tokens", 0)
                    self._notify(True)
                    return CallResult(value, hit.content, None, True,
                                      TokenUsage(**{k: hit.usage.get(k, 0) for k in
                                                    ("prompt_tokens", "completion_tokens")}))
        spent = TokenUsage()
        try:
            content = await self._chat(messages, spent)
            value, problem, repaired = self._validate(content, schema)
            turns = 0
            while value is None and turns < self.config.repair_turns:
                turns += 1
                self.usage.repair_requests += 1
                log.info("step %s: reply unusable (%s); asking once more", prompt.step, problem)
                follow = [*messages, {"role": "assistant", "content": content},
                          {"role": "user", "content": repair_message(problem)}]
                content = await self._chat(follow, spent)
                value, problem, repaired = self._validate(content, schema)
        except JudgeCallError as exc:
            self.usage.errors += 1
            return CallResult(None, "", self.redact(str(exc)), False, spent)
        if value is None:
            self.usage.errors += 1
            return CallResult(None, content, f"invalid reply: {problem}", False, spent)
        if repaired:
            self.usage.local_repairs += 1
        if self.cache is not None:
            self.cache.put(key, self.config.model, self.prompt_version,
                           CachedReply(content, spent.as_dict()))
        return CallResult(value, content, None, False, spent)

    def _validate(self, content: str, schema: type[T]) -> tuple[T | None, str, bool]:
        """(value, problem, locally repaired?)."""
        try:
            return schema.model_validate(loads_reply(content)), "", False
        except (ValueError, ValidationError) as exc:
            problem = self.redact(_describe(exc))
        try:
            return schema.model_validate(json.loads(repair_json(content))), "", True
        except (ValueError, ValidationError):
            return None, problem, False

    def _notify(self, cached: bool) -> None:
        if self._on_request is not None:
            self._on_request(cached)

    async def _chat(self, messages: list[dict[str, str]], spent: TokenUsage) -> str:
        payload: dict[str, Any] = {"model": self.config.model, "messages": messages,
                                   **self.config.params()}
        data = await self._post(payload)
        self.usage.requests += 1
        self._notify(False)
        usage = data.get("usage") if isinstance(data, dict) else None
        content = _content(data)
        if isinstance(usage, dict) and isinstance(usage.get("prompt_tokens"), int):
            used = TokenUsage(int(usage.get("prompt_tokens") or 0),
                              int(usage.get("completion_tokens") or 0))
        else:
            self.usage.estimated_requests += 1
            chars = sum(len(m["content"]) for m in messages)
            used = TokenUsage(chars // 4, len(content or "") // 4)
        spent.add(used)
        self.usage.prompt_tokens += used.prompt_tokens
        self.usage.completion_tokens += used.completion_tokens
        if content is None:
            raise JudgeCallError("the reply has no message content "
                                 f"(finish_reason {_finish_reason(data)!r})")
        return self.redact(content)

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self._key:
            headers["Authorization"] = f"Bearer {self._key}"
        return headers

    async def _post(self, payload: dict[str, Any]) -> Any:
        if self._http is None:
            raise RuntimeError("use ChatClient as an async context manager")
        attempt = 0
        while True:
            failure = await self._attempt(payload)
            if isinstance(failure, _Failure):
                if not failure.retryable or attempt >= self.config.max_retries:
                    tries = attempt + 1
                    suffix = f" (gave up after {tries} attempts)" if failure.retryable else ""
                    raise JudgeCallError(self.redact(failure.message + suffix))
                delay = self._delay(attempt, failure.retry_after)
                attempt += 1
                self.usage.retries += 1
                log.warning("judge request failed: %s; retry %d of %d in %.1f s",
                            self.redact(failure.message), attempt, self.config.max_retries, delay)
                await self._sleep(delay)
                continue
            return failure

    async def _attempt(self, payload: dict[str, Any]) -> Any:
        """The decoded JSON body of one request, or a :class:`_Failure`."""
        assert self._http is not None
        async with self._semaphore:
            try:
                async with asyncio.timeout(self.config.timeout):
                    response = await self._http.post(self._url, json=payload,
                                                     headers=self._headers())
            except (TimeoutError, httpx.TimeoutException):
                return _Failure(f"timed out after {self.config.timeout:g} s", True)
            except httpx.TransportError as exc:
                return _Failure(f"connection failed ({type(exc).__name__})", True)
        status = response.status_code
        if status != 200:
            snippet = self.redact(_snippet(response))
            return _Failure(f"HTTP {status}{': ' + snippet if snippet else ''}",
                            status in RETRYABLE_STATUS, _retry_after(response.headers))
        try:
            return response.json()
        except ValueError:
            return _Failure("HTTP 200 with a body that is not JSON", True)

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(max(retry_after, 0.0), self.config.retry_after_max)
        base = min(self.config.backoff_max, self.config.backoff_base * 2.0 ** attempt)
        return base * (1 + self.config.jitter * self._rng.random())


def _describe(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ()))
        return f"{where or 'reply'}: {first.get('msg', 'invalid')}"[:300]
    return str(exc)[:300]


def _content(data: Any) -> str | None:
    try:
        message = data["choices"][0]["message"]
    except (KeyError, IndexError, TypeError):
        return None
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, list):  # some servers return content parts
        content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return content if isinstance(content, str) else None


def _finish_reason(data: Any) -> object:
    try:
        return data["choices"][0].get("finish_reason")
    except (KeyError, IndexError, TypeError, AttributeError):
        return None


def _snippet(response: httpx.Response) -> str:
    try:
        body = response.json()
        if isinstance(body, dict) and isinstance(body.get("error"), dict):
            text = str(body["error"].get("message", ""))
        else:
            text = json.dumps(body)[:200]
    except ValueError:
        text = response.text[:200]
    return " ".join(text.split())[:200]


def _retry_after(headers: httpx.Headers) -> float | None:
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
