"""Judging through a provider's Batch API: requests written as a batch file, submitted, polled
(possibly by a later process), and their replies ingested into the same response cache.

Why the cache is the hinge: a batch reply is worth exactly what the same reply from a direct
call is worth, so ingestion validates each reply against its step's schema and puts it in the
cache under the *same key* a direct call would use. The pipeline is then simply run again
("a pass"): everything answered is a cache hit, and what the pipeline can only ask now (claims
extracted in the previous round need their consistency calls) is collected for the next round.
A report is written once a pass judges it without a request left waiting, so a run
interrupted at any point and resumed pays for no request twice: a reply already ingested is a
cache hit, a request already submitted is waited for, never resubmitted.

:class:`BatchCollector` is the completer a pass uses: a cache hit is answered, anything else is
deferred (``CallResult.deferred``) and recorded as a :class:`BatchRequest`. Pipelines must not
issue a request that depends on a deferred answer (they stop such a report early); the store
discards the outcome of any report that deferred something.

:class:`BatchState` is what must survive the process (kept with the run, as JSON): the
submitted batches, requests still waiting, attempts per request, replies that did not validate
(their repair turn goes into the next round) and requests that failed for good (they become
judge errors). :class:`BatchApi` speaks the files and batches endpoints through the ``openai``
SDK, its retries off like the chat client's.
"""

from __future__ import annotations

import asyncio
import contextvars
import importlib
import json
import logging
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import asdict, dataclass, field
from typing import Any, Literal, TypeVar

import openai
from pydantic import BaseModel

from reviewer.judge.cache import CachedReply
from reviewer.judge.client import (
    RETRYABLE_STATUS,
    CallResult,
    ChatClient,
    ClientConfig,
    auth_headers,
    repair_turn,
    sdk_client,
    validate_reply,
)
from reviewer.judge.costs import TokenUsage
from reviewer.judge.prompting import Prompt

log = logging.getLogger("gavel.judge")

T = TypeVar("T", bound=BaseModel)

ENDPOINT: Literal["/v1/chat/completions"] = "/v1/chat/completions"
TERMINAL = frozenset({"completed", "failed", "expired", "cancelled"})
MAX_BATCH_REQUESTS = 50_000
MAX_BATCH_BYTES = 190_000_000
"""OpenAI's limits on one batch (50,000 requests, a 200 MB input file): a bigger round is
split into several batches."""
MAX_ATTEMPTS = 2
"""Times one request is submitted before a failed or expired item becomes a judge error."""
INVALID_KEPT = 50_000
"""Characters of an unusable reply kept for its repair turn."""

current_report: contextvars.ContextVar[str] = contextvars.ContextVar(
    "gavel_batch_report", default=""
)
"""Which report a pass is judging: the collector files every deferral under it."""


@dataclass(frozen=True, slots=True)
class BatchRequest:
    """One line of a batch file: the chat request and what its reply answers."""

    custom_id: str
    key: str
    """The cache key the reply is stored under (the first ask's, for a repair turn too)."""
    schema: str
    """``module:Class`` of the reply schema, to validate at ingestion."""
    body: dict[str, Any]
    turn: int = 0
    """0: the first ask; 1: the repair turn after an unusable reply."""

    def line(self) -> dict[str, Any]:
        return {"custom_id": self.custom_id, "method": "POST", "url": ENDPOINT, "body": self.body}


@dataclass(slots=True)
class BatchState:
    """What a batch run must remember between processes (JSON in the run's usage)."""

    round: int = 0
    batches: list[dict[str, Any]] = field(default_factory=list)
    """Every submitted batch: round, id, input file, status, counts, output and error files."""
    waiting: dict[str, dict[str, Any]] = field(default_factory=dict)
    """custom id -> {key, schema, turn, step} of the requests in the open batch."""
    attempts: dict[str, int] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)
    """cache key -> why it failed for good (becomes a judge error)."""
    invalid: dict[str, dict[str, str]] = field(default_factory=dict)
    """cache key -> {content, problem} of a reply that did not validate (repair pending)."""
    finished: list[int] = field(default_factory=list)
    """Report rows written so far."""
    submitted_requests: int = 0
    ingested: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def open(self) -> dict[str, Any] | None:
        """The first submitted batch not yet ingested, if any."""
        for batch in self.batches:
            if not batch.get("ingested"):
                return batch
        return None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: object) -> BatchState:
        if not isinstance(data, dict):
            return cls()
        known = {f for f in cls.__dataclass_fields__}
        return cls(**{k: v for k, v in data.items() if k in known})


def schema_path(schema: type[BaseModel]) -> str:
    return f"{schema.__module__}:{schema.__qualname__}"


def load_schema(path: str) -> type[BaseModel]:
    module, _, name = path.partition(":")
    target: Any = importlib.import_module(module)
    for part in name.split("."):
        target = getattr(target, part)
    if not (isinstance(target, type) and issubclass(target, BaseModel)):
        raise TypeError(f"{path} is not a reply schema")
    return target


class BatchCollector:
    """The completer of a batch pass: cached answers now, everything else deferred."""

    def __init__(self, client: ChatClient, state: BatchState) -> None:
        self.client = client
        self.state = state
        self.requests: dict[str, BatchRequest] = {}
        self.deferred: set[str] = set()
        """Reports that deferred at least one request in this pass."""

    def is_cached(self, prompt: Prompt) -> bool:
        return self.client.is_cached(prompt)

    async def complete(self, prompt: Prompt, schema: type[T]) -> CallResult[T]:
        hit = self.client.cached(prompt, schema)
        if hit is not None:
            return hit
        key = self.client.key_for(prompt)
        failed = self.state.failed.get(key)
        if failed is not None:
            self.client.usage.errors += 1
            return CallResult(None, "", failed, False)
        messages = prompt.messages()
        turn = 0
        invalid = self.state.invalid.get(key)
        if invalid is not None:
            messages = [
                *messages,
                {"role": "assistant", "content": invalid["content"]},
                {"role": "user", "content": repair_turn(schema, invalid["problem"])},
            ]
            turn = 1
        custom_id = key if turn == 0 else f"{key}:repair"
        if custom_id not in self.state.waiting:
            body = {
                "model": self.client.config.model,
                "messages": messages,
                **self.client.config.params(),
            }
            self.requests.setdefault(
                custom_id, BatchRequest(custom_id, key, schema_path(schema), body, turn)
            )
        self.deferred.add(current_report.get())
        return CallResult(None, "", "waiting for the batch", False, deferred=True)


# -- ingestion ----------------------------------------------------------------------------------


@dataclass(slots=True)
class Ingested:
    answered: int = 0
    invalid: int = 0
    retried: int = 0
    failed: int = 0


def ingest(
    state: BatchState, client: ChatClient, output: bytes, errors: bytes, batch: dict[str, Any]
) -> Ingested:
    """Put a finished batch's replies into the cache (validated) and settle every request the
    batch held: answered, to repair, to submit again, or failed for good."""
    tally = Ingested()
    seen: set[str] = set()
    name = batch_name(batch)
    held = {cid: item for cid, item in state.waiting.items() if item.get("batch", name) == name}
    for raw, line, item in _first_lines(output, held, seen):
        _ingest_reply(state, client, raw, line, item, tally)
    for _raw, line, item in _first_lines(errors, held, seen):
        message = client.redact(_error_text(line) or "failed in the batch")
        _settle_failure(state, item, message, retry=True, tally=tally)
    for custom_id, item in held.items():
        if custom_id not in seen:  # expired, cancelled, or simply missing from both files
            _settle_failure(
                state,
                item,
                f"no reply: the batch ended {batch.get('status')}",
                retry=True,
                tally=tally,
            )
        state.waiting.pop(custom_id, None)
    batch["ingested"] = True
    return tally


def _first_lines(
    data: bytes, held: dict[str, dict[str, Any]], seen: set[str]
) -> Iterator[tuple[bytes, dict[str, Any], dict[str, Any]]]:
    """(raw line, parsed line, request) for each line about a request the batch held that no
    earlier line (of either file) settled."""
    for raw in (data or b"").splitlines():
        line = _json_line(raw)
        custom_id = str(line.get("custom_id", ""))
        item = held.get(custom_id)
        if item is None or custom_id in seen:
            continue
        seen.add(custom_id)
        yield raw, line, item


def _ingest_reply(
    state: BatchState,
    client: ChatClient,
    raw: bytes,
    line: dict[str, Any],
    item: dict[str, Any],
    tally: Ingested,
) -> None:
    """One line of the output file: a refused or failed call, or a reply with content."""
    status, body = _status_and_body(line)
    cap = client.config.max_reply_bytes
    if len(raw) > cap + 10_000:
        _settle_failure(
            state,
            item,
            f"the reply is larger than {cap:,} bytes; refused",
            retry=False,
            tally=tally,
        )
        return
    if status != 200 or not isinstance(body, dict):
        message = client.redact(_error_text(body) or _error_text(line) or f"HTTP {status}")
        retry = status is None or int(status) in RETRYABLE_STATUS
        _settle_failure(state, item, message, retry=retry, tally=tally)
        return
    spent = TokenUsage()
    content = client.account(body, int(item.get("chars", 0)), spent, batch=True)
    state.ingested += 1
    state.prompt_tokens += spent.prompt_tokens
    state.completion_tokens += spent.completion_tokens
    if content is None:
        _settle_failure(state, item, "the reply has no message content", retry=True, tally=tally)
        return
    _settle_content(state, client, item, client.redact(content), spent, tally)


def _status_and_body(line: dict[str, Any]) -> tuple[Any, Any]:
    """The HTTP status and body of an output line's ``response`` (None, None without one)."""
    response = line.get("response") if isinstance(line.get("response"), dict) else None
    status = response.get("status_code") if response else None
    body = response.get("body") if response else None
    return status, body


def _settle_content(
    state: BatchState,
    client: ChatClient,
    item: dict[str, Any],
    content: str,
    spent: TokenUsage,
    tally: Ingested,
) -> None:
    """A reply's content: cached when it validates; otherwise kept for a repair turn while
    turns are left, else failed for good."""
    value, problem, repaired = validate_reply(content, load_schema(item["schema"]))
    key = item["key"]
    if value is None:
        if int(item.get("turn", 0)) < client.config.repair_turns:
            state.invalid[key] = {"content": content[:INVALID_KEPT], "problem": problem}
            client.usage.repair_requests += 1
            tally.invalid += 1
        else:
            state.failed[key] = f"invalid reply: {problem}"
            state.invalid.pop(key, None)
            tally.failed += 1
        return
    if repaired:
        client.usage.local_repairs += 1
    client.usage.answered += 1
    state.invalid.pop(key, None)
    if client.cache is not None:
        client.cache.put(
            key,
            client.config.model,
            client.prompt_version,
            CachedReply(content, spent.as_dict()),
        )
    tally.answered += 1


def batch_name(batch: dict[str, Any]) -> str:
    """``<round>.<part>``: which batch of a round a request went in."""
    return f"{batch.get('round')}.{batch.get('part', 1)}"


def split_round(requests: list[BatchRequest]) -> list[list[BatchRequest]]:
    """A round's requests in batches within the provider's limits, in order."""
    parts: list[list[BatchRequest]] = [[]]
    size = 0
    for request in requests:
        line = len(batch_file([request]))
        if parts[-1] and (len(parts[-1]) >= MAX_BATCH_REQUESTS or size + line > MAX_BATCH_BYTES):
            parts.append([])
            size = 0
        parts[-1].append(request)
        size += line
    return [p for p in parts if p]


def _settle_failure(
    state: BatchState, item: dict[str, Any], message: str, *, retry: bool, tally: Ingested
) -> None:
    key = item["key"]
    tries = state.attempts.get(item.get("custom_id", key), 0)
    if retry and tries < MAX_ATTEMPTS:
        tally.retried += 1
        return  # not cached, not failed: the next pass asks again
    state.failed[key] = message if not retry else f"{message} (after {tries} batch attempts)"
    state.invalid.pop(key, None)
    tally.failed += 1


def _error_text(data: object) -> str:
    """The message (else the code) of an ``error`` object inside ``data``, or ''."""
    if not isinstance(data, dict):
        return ""
    error = data.get("error")
    if not isinstance(error, dict):
        return ""
    return str(error.get("message") or error.get("code") or "")


def _json_line(raw: bytes) -> dict[str, Any]:
    try:
        value = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        return {}
    return value if isinstance(value, dict) else {}


def batch_file(requests: list[BatchRequest]) -> bytes:
    return b"".join(
        json.dumps(r.line(), ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"
        for r in requests
    )


def remember(state: BatchState, requests: list[BatchRequest], batch: str) -> None:
    """Record a batch's requests as waiting (before its file is uploaded)."""
    for r in requests:
        chars = sum(len(str(m.get("content", ""))) for m in r.body.get("messages", []))
        state.waiting[r.custom_id] = {
            "custom_id": r.custom_id,
            "key": r.key,
            "schema": r.schema,
            "turn": r.turn,
            "chars": chars,
            "batch": batch,
        }
        state.attempts[r.custom_id] = state.attempts.get(r.custom_id, 0) + 1
    state.submitted_requests += len(requests)


# -- the files and batches endpoints ------------------------------------------------------------


class BatchApiError(RuntimeError):
    """A files or batches call that failed for good (never contains the API key)."""


class BatchApi:
    """Upload, create, find, poll and download, through the SDK with our own retries."""

    def __init__(
        self,
        config: ClientConfig,
        api_key: str | None,
        sleep: Callable[[float], Awaitable[None]] | None = None,
    ) -> None:
        self.config = config
        self._key = api_key or None
        self._sdk = sdk_client(config, api_key)
        self._sleep = sleep or asyncio.sleep

    async def close(self) -> None:
        await self._sdk.close()

    def _redact(self, text: str) -> str:
        return text.replace(self._key, "[redacted]") if self._key else text

    async def _call(self, what: str, make: Callable[[], Awaitable[Any]]) -> Any:
        attempt = 0
        while True:
            try:
                return await make()
            except openai.APIStatusError as exc:
                retry = exc.status_code in RETRYABLE_STATUS
                problem = f"HTTP {exc.status_code}"
            except (openai.APITimeoutError, openai.APIConnectionError) as exc:
                retry = True
                problem = type(exc).__name__
            if not retry or attempt >= self.config.max_retries:
                raise BatchApiError(self._redact(f"{what} failed: {problem}"))
            attempt += 1
            await self._sleep(
                min(self.config.backoff_max, self.config.backoff_base * 2.0 ** (attempt - 1))
            )

    async def upload(self, data: bytes, name: str) -> str:
        created = await self._call(
            "uploading the batch file",
            lambda: self._sdk.files.create(
                file=(name, data, "application/jsonl"),
                purpose="batch",
                extra_headers=auth_headers(self._key),
            ),
        )
        return str(created.id)

    async def create(self, file_id: str, metadata: dict[str, str]) -> dict[str, Any]:
        batch = await self._call(
            "creating the batch",
            lambda: self._sdk.batches.create(
                input_file_id=file_id,
                endpoint=ENDPOINT,
                completion_window="24h",
                metadata=metadata,
                extra_headers=auth_headers(self._key),
            ),
        )
        return _batch_dict(batch)

    async def find(self, metadata: dict[str, str]) -> dict[str, Any] | None:
        """A batch created earlier with this metadata (its id was lost to a crash)."""
        page = await self._call(
            "listing batches",
            lambda: self._sdk.batches.list(limit=100, extra_headers=auth_headers(self._key)),
        )
        for batch in getattr(page, "data", []) or []:
            found = getattr(batch, "metadata", None) or {}
            if all(found.get(k) == v for k, v in metadata.items()):
                return _batch_dict(batch)
        return None

    async def retrieve(self, batch_id: str) -> dict[str, Any]:
        batch = await self._call(
            "polling the batch",
            lambda: self._sdk.batches.retrieve(batch_id, extra_headers=auth_headers(self._key)),
        )
        return _batch_dict(batch)

    async def download(self, file_id: str | None) -> bytes:
        if not file_id:
            return b""
        content = await self._call(
            "downloading the batch results",
            lambda: self._sdk.files.content(file_id, extra_headers=auth_headers(self._key)),
        )
        data = content.content if hasattr(content, "content") else bytes(content)
        return bytes(data)


def _batch_dict(batch: Any) -> dict[str, Any]:
    counts = getattr(batch, "request_counts", None)
    return {
        "id": str(batch.id),
        "status": str(batch.status),
        "output_file_id": getattr(batch, "output_file_id", None),
        "error_file_id": getattr(batch, "error_file_id", None),
        "counts": (
            {"total": counts.total, "completed": counts.completed, "failed": counts.failed}
            if counts is not None
            else {}
        ),
    }
