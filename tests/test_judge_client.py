"""The OpenAI-compatible judge client against a real chat-completions server on loopback:
protocol, JSON recovery, retries with backoff and Retry-After, timeouts, concurrency, the cache,
usage and cost, and that the API key never leaks."""

from __future__ import annotations

import asyncio
import json
import logging
from collections import deque
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import httpx
import pytest

from reviewer.frameworks.dailyreport.judge_prompts import ins_prompt
from reviewer.frameworks.dailyreport.judge_replies import InsReply
from reviewer.judge.cache import MemoryCache, cache_key
from reviewer.judge.client import (
    ChatClient,
    ClientConfig,
    _retry_after,
    api_key_from_env,
    public_url,
)
from reviewer.judge.costs import PRICES, Price, price_for
from reviewer.judge.replies import loads_reply, repair_json
from tests.loopback import Loopback, Request, Response, chat, error, serving

KEY = "sk-test-a1b2c3d4e5f6-never-show-me"
VALID = json.dumps({"scores": [{"id": 1, "score": 1, "explanation": "all five rates given"}]})


class Script:
    """Serves queued responses in order; then the valid reply."""

    def __init__(self, *responses: Response) -> None:
        self.queue: deque[Response] = deque(responses)

    def __call__(self, request: Request) -> Response:
        if self.queue:
            return self.queue.popleft()
        return chat(VALID)


@pytest.fixture
def server() -> Iterator[tuple[Loopback, Script]]:
    script = Script()
    with serving(script) as srv:
        yield srv, script


def prompt(n: int = 0):  # type: ignore[no-untyped-def]
    return ins_prompt(
        f"question {n}", "the document", [(1, "gives all five rates", "")], "2026-11-04"
    )


def config(srv: Loopback, **kw: object) -> ClientConfig:
    defaults: dict[str, object] = {
        "base_url": srv.url + "/v1",
        "model": "judge-x",
        "timeout": 5.0,
        "jitter": 0.0,
        "backoff_base": 0.5,
    }
    defaults.update(kw)
    return ClientConfig(**defaults)  # type: ignore[arg-type]


class Sleeps:
    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, delay: float) -> None:
        self.delays.append(delay)
        await asyncio.sleep(0)


async def test_speaks_chat_completions_and_counts_usage(server: tuple[Loopback, Script]) -> None:
    srv, script = server
    script.queue.append(chat(VALID, prompt_tokens=1200, completion_tokens=300))
    async with ChatClient(
        config(srv, price=Price(2.0, 8.0)), prompt_version="v-test", api_key=KEY
    ) as client:
        result = await client.complete(prompt(), InsReply)
    assert result.error is None and result.value is not None
    assert result.value.scores[0].score == "1"
    request = srv.requests[0]
    assert (request.method, request.path) == ("POST", "/v1/chat/completions")
    body = request.json()
    assert body["model"] == "judge-x" and body["temperature"] == 0.0
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    assert request.headers["authorization"] == f"Bearer {KEY}"
    assert client.usage.requests == 1
    assert (client.usage.prompt_tokens, client.usage.completion_tokens) == (1200, 300)
    # 1200 × $2/M + 300 × $8/M = 0.0024 + 0.0024
    assert client.usage.cost(client.price) == pytest.approx(0.0048)


async def test_no_key_sends_no_authorization(server: tuple[Loopback, Script]) -> None:
    srv, _ = server
    async with ChatClient(config(srv), prompt_version="v") as client:
        await client.complete(prompt(), InsReply)
    assert "authorization" not in srv.requests[0].headers


def test_key_comes_from_the_environment_in_order() -> None:
    assert api_key_from_env({"GAVEL_API_KEY": "a", "OPENAI_API_KEY": "b"}) == "a"
    assert api_key_from_env({"GAVEL_API_KEY": " ", "OPENAI_API_KEY": "b"}) == "b"
    assert api_key_from_env({}) is None


async def test_fenced_json_needs_no_second_request(server: tuple[Loopback, Script]) -> None:
    srv, script = server
    script.queue.append(chat("Here you go:\n```json\n" + VALID + "\n```"))
    async with ChatClient(config(srv), prompt_version="v") as client:
        result = await client.complete(prompt(), InsReply)
    assert result.value is not None and srv.count() == 1


async def test_trailing_commas_repaired_locally(server: tuple[Loopback, Script]) -> None:
    srv, script = server
    script.queue.append(chat('{"scores": [{"id": 1, "score": 0.5, "explanation": "x",},],}'))
    async with ChatClient(config(srv), prompt_version="v") as client:
        result = await client.complete(prompt(), InsReply)
    assert result.value is not None and result.value.scores[0].score == "0.5"
    assert srv.count() == 1 and client.usage.local_repairs == 1


async def test_malformed_reply_is_asked_again_once(server: tuple[Loopback, Script]) -> None:
    srv, script = server
    script.queue.append(chat("I would give this criterion full marks."))
    cache = MemoryCache()
    async with ChatClient(config(srv), prompt_version="v", cache=cache) as client:
        result = await client.complete(prompt(), InsReply)
    assert result.value is not None and srv.count() == 2
    follow = srv.requests[1].json()["messages"]
    assert [m["role"] for m in follow] == ["system", "user", "assistant", "user"]
    assert follow[2]["content"] == "I would give this criterion full marks."
    assert "could not be used" in follow[3]["content"]
    assert client.usage.repair_requests == 1
    assert [r.content for r in cache.entries.values()] == [VALID]


async def test_malformed_twice_is_a_judge_error_not_a_crash(
    server: tuple[Loopback, Script],
) -> None:
    srv, script = server
    script.queue.extend([chat("no json here"), chat('{"scores": [{"id": 1, "score": 0.7}]}')])
    cache = MemoryCache()
    async with ChatClient(config(srv), prompt_version="v", cache=cache) as client:
        result = await client.complete(prompt(), InsReply)
    assert result.value is None
    assert result.error is not None and result.error.startswith("invalid reply")
    assert "0.7 is not one of 0, 0.5, 1" in result.error
    assert client.usage.errors == 1 and srv.count() == 2
    assert cache.entries == {}


async def test_429_waits_as_long_as_retry_after_says(server: tuple[Loopback, Script]) -> None:
    srv, script = server
    script.queue.append(error(429, "slow down", {"Retry-After": "7"}))
    sleeps = Sleeps()
    async with ChatClient(config(srv), prompt_version="v", sleep=sleeps) as client:
        result = await client.complete(prompt(), InsReply)
    assert result.value is not None
    assert sleeps.delays == [7.0]
    assert client.usage.retries == 1 and srv.count() == 2


def test_retry_after_forms() -> None:
    assert _retry_after(httpx.Headers({"retry-after-ms": "1500"})) == 1.5
    assert _retry_after(httpx.Headers({"retry-after": "3"})) == 3.0
    when = datetime.now(UTC) + timedelta(seconds=30)
    seconds = _retry_after(httpx.Headers({"retry-after": format_datetime(when, usegmt=True)}))
    assert seconds is not None and 28 <= seconds <= 30
    assert _retry_after(httpx.Headers({})) is None


async def test_5xx_backs_off_exponentially(server: tuple[Loopback, Script]) -> None:
    srv, script = server
    script.queue.extend([error(500), error(502), error(503)])
    sleeps = Sleeps()
    async with ChatClient(
        config(srv, backoff_base=0.5), prompt_version="v", sleep=sleeps
    ) as client:
        result = await client.complete(prompt(), InsReply)
    assert result.value is not None
    assert sleeps.delays == [0.5, 1.0, 2.0]  # 0.5 × 2^0, 2^1, 2^2 (jitter 0)


async def test_gives_up_after_max_retries(server: tuple[Loopback, Script]) -> None:
    srv, script = server
    script.queue.extend([error(503, "overloaded")] * 4)
    async with ChatClient(config(srv, max_retries=2), prompt_version="v", sleep=Sleeps()) as client:
        result = await client.complete(prompt(), InsReply)
    assert result.value is None
    assert result.error == "HTTP 503: overloaded (gave up after 3 attempts)"
    assert srv.count() == 3 and client.usage.errors == 1


async def test_slow_reply_times_out_and_is_retried(server: tuple[Loopback, Script]) -> None:
    srv, script = server
    script.queue.append(Response(200, b"{}", {"Content-Type": "application/json"}, delay=3.0))
    sleeps = Sleeps()
    async with ChatClient(config(srv, timeout=0.3), prompt_version="v", sleep=sleeps) as client:
        result = await client.complete(prompt(), InsReply)
    assert result.value is not None
    assert sleeps.delays == [0.5] and client.usage.retries == 1


async def test_client_errors_are_not_retried(server: tuple[Loopback, Script]) -> None:
    srv, script = server
    script.queue.append(error(400, "unknown model judge-x"))
    async with ChatClient(config(srv), prompt_version="v", sleep=Sleeps()) as client:
        result = await client.complete(prompt(), InsReply)
    assert result.error == "HTTP 400: unknown model judge-x"
    assert srv.count() == 1 and client.usage.retries == 0


async def test_concurrency_is_bounded() -> None:
    def slow(request: Request) -> Response:
        response = chat(VALID)
        response.delay = 0.2
        return response

    with serving(slow) as srv:
        async with ChatClient(config(srv, concurrency=2), prompt_version="v") as client:
            results = await asyncio.gather(
                *(client.complete(prompt(n), InsReply) for n in range(6))
            )
    assert all(r.value is not None for r in results)
    assert srv.count() == 6 and srv.max_in_flight == 2


async def test_cache_hit_costs_no_request(server: tuple[Loopback, Script]) -> None:
    srv, script = server
    script.queue.append(chat(VALID, prompt_tokens=900, completion_tokens=40))
    cache = MemoryCache()
    async with ChatClient(config(srv), prompt_version="v", cache=cache) as client:
        first = await client.complete(prompt(), InsReply)
        second = await client.complete(prompt(), InsReply)
    assert (first.cached, second.cached) == (False, True)
    assert srv.count() == 1
    assert client.usage.cache_hits == 1
    assert (client.usage.saved_prompt_tokens, client.usage.saved_completion_tokens) == (900, 40)
    async with ChatClient(config(srv, model="judge-y"), prompt_version="v", cache=cache) as other:
        third = await other.complete(prompt(), InsReply)
    assert third.cached is False and srv.count() == 2


def test_cache_key_names_version_model_messages_and_params() -> None:
    messages = prompt().messages()
    base = cache_key("v1", "m", messages, {"temperature": 0.0})
    assert base == cache_key("v1", "m", messages, {"temperature": 0.0})
    assert base != cache_key("v2", "m", messages, {"temperature": 0.0})
    assert base != cache_key("v1", "n", messages, {"temperature": 0.0})
    assert base != cache_key("v1", "m", prompt(1).messages(), {"temperature": 0.0})
    assert base != cache_key("v1", "m", messages, {"temperature": 0.7})


async def test_api_key_never_appears_in_errors_replies_or_logs(
    caplog: pytest.LogCaptureFixture,
) -> None:
    def echo(request: Request) -> Response:
        auth = request.headers.get("authorization", "")
        if len(srv.requests) == 1:
            return error(503, f"overloaded, your header was {auth}")
        if len(srv.requests) == 2:
            return chat(f"key {auth} is not JSON")
        return error(401, f"invalid api key {auth}")

    caplog.set_level(logging.DEBUG)
    with serving(echo) as srv:
        async with ChatClient(
            config(srv), prompt_version="v", api_key=KEY, sleep=Sleeps()
        ) as client:
            first = await client.complete(prompt(), InsReply)
    assert srv.requests[0].headers["authorization"] == f"Bearer {KEY}"  # it was sent
    texts = [first.error or "", first.content, caplog.text, repr(client)]
    assert all(KEY not in text for text in texts)
    assert "[redacted]" in (first.error or "")


async def test_reply_without_usage_is_estimated() -> None:
    def bare(request: Request) -> Response:
        response = chat(VALID)
        response.body = json.dumps({"choices": [{"message": {"content": VALID}}]}).encode()
        return response

    with serving(bare) as srv:
        async with ChatClient(config(srv), prompt_version="v") as client:
            await client.complete(prompt(), InsReply)
    chars = sum(len(m["content"]) for m in prompt().messages())
    assert client.usage.estimated_requests == 1
    assert client.usage.prompt_tokens == chars // 4
    assert client.usage.completion_tokens == len(VALID) // 4


def test_price_table_matches_model_families() -> None:
    assert price_for("gpt-4o-mini-2024-07-18") == PRICES["gpt-4o-mini"]
    assert price_for("gpt-4o") == PRICES["gpt-4o"]
    assert price_for("openai/gpt-4.1-mini") == PRICES["gpt-4.1-mini"]
    assert price_for("qwen2.5:7b") is None
    assert price_for("qwen2.5:7b", Price(0.0, 0.0)) == Price(0.0, 0.0)


def test_public_url_drops_credentials_and_query() -> None:
    assert (
        public_url("https://user:pw@api.example:8443/v1?api-key=zzz")
        == "https://api.example:8443/v1"
    )


def test_json_recovery() -> None:
    assert loads_reply('Sure!\n{"a": 1}\nHope that helps.') == {"a": 1}
    assert json.loads(repair_json('{"a": [1, 2,], "b": True, "c": None}')) == {
        "a": [1, 2],
        "b": True,
        "c": None,
    }
    # A reply cut off mid-string: the string and the open brackets are closed.
    assert json.loads(repair_json('{"scores": [{"id": 1, "explanation": "trunc')) == {
        "scores": [{"id": 1, "explanation": "trunc"}]
    }
    # Literal-looking words inside strings stay as they are.
    assert json.loads(repair_json('{"t": "True story, None left",}')) == {
        "t": "True story, None left"
    }
    with pytest.raises(ValueError):
        loads_reply("no json at all")


# -- bounds (a hostile or broken server cannot exhaust memory, the clock or the database) --------


async def test_a_huge_reply_is_refused_at_the_cap_and_not_retried(
    server: tuple[Loopback, Script],
) -> None:
    srv, script = server
    script.queue.append(chat("x" * 3_000_000))
    async with ChatClient(
        config(srv, max_reply_bytes=1_000_000), prompt_version="v", sleep=Sleeps()
    ) as client:
        result = await client.complete(prompt(), InsReply)
    assert result.value is None and result.error is not None
    assert "larger than 1,000,000 bytes" in result.error
    assert srv.count() == 1 and client.usage.errors == 1


async def test_retry_after_is_capped(server: tuple[Loopback, Script]) -> None:
    srv, script = server
    script.queue.extend(
        [
            error(429, "later", {"Retry-After": "300"}),
            error(503, "later", {"retry-after-ms": "900000"}),
        ]
    )
    sleeps = Sleeps()
    async with ChatClient(config(srv), prompt_version="v", sleep=sleeps) as client:
        result = await client.complete(prompt(), InsReply)
    assert result.value is not None
    assert sleeps.delays == [60.0, 60.0]  # never the 5 or 15 minutes asked for


async def test_the_time_budget_ends_every_call(server: tuple[Loopback, Script]) -> None:
    import time

    srv, script = server
    script.queue.extend([error(503, "busy", {"Retry-After": "0.4"})] * 50)
    started = time.monotonic()
    async with ChatClient(
        config(srv, time_budget=1.0, max_retries=50), prompt_version="v"
    ) as client:
        first = await client.complete(prompt(1), InsReply)
        second = await client.complete(prompt(2), InsReply)
    assert time.monotonic() - started < 2.5
    assert first.value is None and "time budget" in (first.error or "")
    assert second.value is None and "time budget" in (second.error or "")
