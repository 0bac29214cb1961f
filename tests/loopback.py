"""Real HTTP servers on 127.0.0.1 for the judge tests: a chat-completions endpoint that plays a
judge model (canned replies, malformed JSON, 429 with Retry-After, 5xx, slow replies) and a
plain web server for the citation fetcher. Each runs ``http.server.ThreadingHTTPServer`` in a
daemon thread; nothing here touches the internet.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Request:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body or b"null")


@dataclass
class Response:
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    """Seconds to wait before answering (a slow server)."""
    stream: bool = False
    """Send without Content-Length and close (a streamed body of unknown size)."""


Handler = Callable[[Request], Response]


class Loopback:
    """One server; ``requests`` records every request, ``max_in_flight`` the peak concurrency."""

    def __init__(self, handle: Handler) -> None:
        self.handle = handle
        self.requests: list[Request] = []
        self.lock = threading.Lock()
        self.in_flight = 0
        self.max_in_flight = 0
        owner = self

        class _Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _serve(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                request = Request(
                    self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body
                )
                with owner.lock:
                    owner.requests.append(request)
                    owner.in_flight += 1
                    owner.max_in_flight = max(owner.max_in_flight, owner.in_flight)
                try:
                    response = owner.handle(request)
                    if response.delay:
                        time.sleep(response.delay)
                    self.send_response(response.status)
                    for name, value in response.headers.items():
                        self.send_header(name, value)
                    if response.stream:
                        self.send_header("Connection", "close")
                        self.close_connection = True
                    elif "content-length" not in {k.lower() for k in response.headers}:
                        self.send_header("Content-Length", str(len(response.body)))
                    self.end_headers()
                    if self.command != "HEAD":
                        self.wfile.write(response.body)
                except (BrokenPipeError, ConnectionResetError):
                    pass
                finally:
                    with owner.lock:
                        owner.in_flight -= 1

            do_GET = do_POST = do_HEAD = _serve

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}"

    def count(self, path: str | None = None) -> int:
        with self.lock:
            return sum(1 for r in self.requests if path is None or r.path == path)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@contextmanager
def serving(handle: Handler) -> Iterator[Loopback]:
    server = Loopback(handle)
    try:
        yield server
    finally:
        server.close()


# -- a chat-completions endpoint ------------------------------------------------------------------


def chat_body(
    content: str | None, prompt_tokens: int = 100, completion_tokens: int = 20, usage: bool = True
) -> bytes:
    data: dict[str, Any] = {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "model": "fake",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
            }
        ],
    }
    if usage:
        data["usage"] = {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        }
    return json.dumps(data).encode()


def chat(content: str, **kwargs: Any) -> Response:
    return Response(200, chat_body(content, **kwargs), {"Content-Type": "application/json"})


def error(
    status: int, message: str = "", headers: dict[str, str] | None = None, delay: float = 0.0
) -> Response:
    body = json.dumps({"error": {"message": message or f"status {status}"}}).encode()
    return Response(
        status, body, {"Content-Type": "application/json", **(headers or {})}, delay=delay
    )


def block(text: str, name: str) -> str:
    found = re.search(rf"<<{name}(-[0-9a-f]+)?>>\n(.*?)\n<</{name}\1>>", text, re.DOTALL)
    assert found, f"no {name} block in the prompt"
    return found.group(2)


def step_of(body: Any) -> str:
    system = body["messages"][0]["content"]
    for marker, step in (
        ("follows a user's instructions", "ins"),
        ("pull factual claims out", "extract"),
        ("find where factual claims sit", "match"),
        ("check statements against a reference", "consistency"),
        ("judge the reasoning", "rat"),
    ):
        if marker in system:
            return step
    raise AssertionError("unrecognised prompt")


_SENTENCE = re.compile(r"[^.\n]*\d[^.\n]*?(?=\s*\[\d)")


class FakeJudge:
    """Plays a judge model: valid replies for every pipeline step, computed from the prompt.

    - ins: every criterion gets ``ins_score``;
    - extract: two sentences of the report that carry a citation marker, chosen by a hash of
      the question; with ``rewrite`` the second is returned reworded so it cannot be found
      verbatim and goes through the matching call;
    - match: quotes the unreworded sentence back;
    - consistency: ``support`` when the statement shares a number with the page, else
      ``unknown``;
    - rat: the report's first paragraph, reasonable, score ``rat_score``.

    ``script`` holds replies that take precedence, one per request, in order.
    """

    def __init__(
        self,
        ins_score: float = 0.5,
        rat_score: float = 1.0,
        rewrite: bool = False,
        on_request: Callable[[int], None] | None = None,
    ) -> None:
        self.ins_score = ins_score
        self.rat_score = rat_score
        self.rewrite = rewrite
        self.script: deque[Response] = deque()
        self.lock = threading.Lock()
        self.count = 0
        self.steps: list[str] = []
        self.on_request = on_request

    def __call__(self, request: Request) -> Response:
        if request.method != "POST" or request.path != "/v1/chat/completions":
            return error(404, "no such route")
        with self.lock:
            self.count += 1
            number = self.count
            scripted = self.script.popleft() if self.script else None
        if self.on_request is not None:
            self.on_request(number)
        if scripted is not None:
            return scripted
        body = request.json()
        step = step_of(body)
        with self.lock:
            self.steps.append(step)
        return chat(
            json.dumps(getattr(self, "_" + step)(body["messages"][-1]["content"])),
            prompt_tokens=len(request.body) // 4,
            completion_tokens=50,
        )

    def _ins(self, user: str) -> Any:
        criteria = json.loads(block(user, "criteria"))
        return {
            "scores": [
                {
                    "id": c["id"],
                    "score": self.ins_score,
                    "explanation": f"criterion {c['id']} partly met",
                }
                for c in criteria
            ]
        }

    def _extract(self, user: str) -> Any:
        document = block(user, "document")
        question = block(user, "accuracy_question")
        sentences = [
            s.strip() for s in _SENTENCE.findall(document) if len(s.strip()) > 20 and "|" not in s
        ]
        if not sentences:
            return {"claims": []}
        start = int(hashlib.sha256(question.encode()).hexdigest(), 16) % len(sentences)
        picked = [sentences[start], sentences[(start + 1) % len(sentences)]]
        claims = []
        for i, fact in enumerate(dict.fromkeys(picked)):
            if self.rewrite and i == 1:
                claims.append({"fact": "Reportedly, " + fact.lower(), "extract": fact})
            else:
                claims.append({"fact": fact, "extract": fact + "."})
        return {"claims": claims}

    def _match(self, user: str) -> Any:
        claims = json.loads(block(user, "claims"))
        return {
            "matches": [
                {"id": c["id"], "located": True, "original_text": c["extract"], "references": []}
                for c in claims
            ]
        }

    def _consistency(self, user: str) -> Any:
        page = block(user, "reference")
        statements = json.loads(block(user, "statements"))
        numbers = set(re.findall(r"\d+(?:[.,]\d+)?", page))
        results = []
        for s in statements:
            shared = numbers & set(re.findall(r"\d+(?:[.,]\d+)?", s["statement"]))
            results.append(
                {
                    "idx": s["idx"],
                    "result": "support" if shared else "unknown",
                    "explanation": "numbers match" if shared else "not mentioned",
                    "context": sorted(shared)[0] if shared else "",
                }
            )
        return {"results": results}

    def _rat(self, user: str) -> Any:
        document = block(user, "document")
        paragraph = next(
            (p for p in document.split("\n\n") if p.strip() and not p.startswith("#")),
            document[:200],
        )
        return {
            "paragraphs": [{"paragraph": paragraph, "reasonable": True, "reason": "sound"}],
            "score": self.rat_score,
            "explanation": "coherent",
        }


# -- the files and batches endpoints ---------------------------------------------------------------


def _multipart_file(request: Request) -> tuple[str, bytes]:
    """(filename, content) of the ``file`` part of a multipart upload."""
    from email.parser import BytesParser
    from email.policy import HTTP

    header = f"Content-Type: {request.headers['content-type']}\r\n\r\n".encode()
    message = BytesParser(policy=HTTP).parsebytes(header + request.body)
    for part in message.iter_parts():
        if part.get_param("name", header="content-disposition") == "file":
            payload = part.get_payload(decode=True)
            return str(part.get_filename() or "upload"), bytes(payload or b"")
    raise AssertionError("no file part in the upload")


class BatchServer:
    """The files and batches endpoints of an OpenAI-compatible API, answering each batch line
    with ``chat`` (a chat-completions handler such as :class:`FakeJudge`).

    A batch finishes on its ``polls``-th retrieval. ``fail_first`` makes the first N lines of
    the next batch error lines (retryable), ``refuse_first`` 400 replies (not retryable);
    ``expire_after`` makes the next batch expire having answered only that many lines.
    ``lines_answered`` counts every line the model answered: the requests paid for.
    """

    def __init__(self, chat: Handler, polls: int = 1) -> None:
        self.chat = chat
        self.polls = polls
        self.files: dict[str, tuple[str, bytes]] = {}
        self.batches: dict[str, dict[str, Any]] = {}
        self.seen_polls: dict[str, int] = {}
        self.fail_first = 0
        self.refuse_first = 0
        self.expire_after: int | None = None
        self.lines_answered = 0
        self.lines_submitted = 0
        self.custom_ids: list[str] = []
        self.lock = threading.Lock()

    def __call__(self, request: Request) -> Response:
        path = request.path.split("?")[0]
        if request.method == "POST" and path == "/v1/chat/completions":
            return self.chat(request)
        if request.method == "POST" and path == "/v1/files":
            name, content = _multipart_file(request)
            with self.lock:
                fid = f"file-{len(self.files) + 1}"
                self.files[fid] = (name, content)
            return self._json(
                {
                    "id": fid,
                    "object": "file",
                    "bytes": len(content),
                    "created_at": 1,
                    "filename": name,
                    "purpose": "batch",
                    "status": "processed",
                }
            )
        found = re.fullmatch(r"/v1/files/([\w-]+)/content", path)
        if found and request.method == "GET":
            entry = self.files.get(found.group(1))
            if entry is None:
                return error(404, "no such file")
            return Response(200, entry[1], {"Content-Type": "application/octet-stream"})
        if request.method == "POST" and path == "/v1/batches":
            body = request.json()
            with self.lock:
                bid = f"batch-{len(self.batches) + 1}"
                batch = {
                    "id": bid,
                    "object": "batch",
                    "endpoint": body["endpoint"],
                    "input_file_id": body["input_file_id"],
                    "completion_window": body["completion_window"],
                    "status": "validating",
                    "created_at": 1,
                    "metadata": body.get("metadata") or {},
                    "request_counts": {"total": 0, "completed": 0, "failed": 0},
                }
                self.batches[bid] = batch
            return self._json(batch)
        if request.method == "GET" and path == "/v1/batches":
            return self._json(
                {"object": "list", "data": list(self.batches.values()), "has_more": False}
            )
        found = re.fullmatch(r"/v1/batches/([\w-]+)", path)
        if found and request.method == "GET":
            return self._json(self._poll(found.group(1)))
        return error(404, "no such route")

    @staticmethod
    def _json(data: Any) -> Response:
        return Response(200, json.dumps(data).encode(), {"Content-Type": "application/json"})

    def _poll(self, bid: str) -> dict[str, Any]:
        with self.lock:
            batch = self.batches[bid]
            if batch["status"] in ("completed", "expired", "failed", "cancelled"):
                return batch
            self.seen_polls[bid] = self.seen_polls.get(bid, 0) + 1
            if self.seen_polls[bid] < self.polls:
                batch["status"] = "in_progress"
                return batch
            expire_after, self.expire_after = self.expire_after, None
            fail, self.fail_first = self.fail_first, 0
            refuse, self.refuse_first = self.refuse_first, 0
        lines = self.files[batch["input_file_id"]][1].splitlines()
        out: list[bytes] = []
        errors: list[bytes] = []
        for n, raw in enumerate(lines):
            line = json.loads(raw)
            custom_id = line["custom_id"]
            with self.lock:
                self.lines_submitted += 1
                self.custom_ids.append(custom_id)
            if expire_after is not None and n >= expire_after:
                errors.append(
                    json.dumps(
                        {
                            "id": f"r{n}",
                            "custom_id": custom_id,
                            "response": None,
                            "error": {"code": "batch_expired", "message": "expired"},
                        }
                    ).encode()
                )
                continue
            if n < fail:
                errors.append(
                    json.dumps(
                        {
                            "id": f"r{n}",
                            "custom_id": custom_id,
                            "response": None,
                            "error": {"code": "server_error", "message": "the model crashed"},
                        }
                    ).encode()
                )
                continue
            if fail <= n < fail + refuse:
                out.append(
                    json.dumps(
                        {
                            "id": f"r{n}",
                            "custom_id": custom_id,
                            "response": {
                                "status_code": 400,
                                "body": {"error": {"message": "bad request"}},
                            },
                            "error": None,
                        }
                    ).encode()
                )
                continue
            reply = self.chat(
                Request(
                    "POST",
                    "/v1/chat/completions",
                    {"content-type": "application/json"},
                    json.dumps(line["body"]).encode(),
                )
            )
            with self.lock:
                self.lines_answered += 1
            out.append(
                json.dumps(
                    {
                        "id": f"r{n}",
                        "custom_id": custom_id,
                        "response": {
                            "status_code": reply.status,
                            "request_id": f"req{n}",
                            "body": json.loads(reply.body),
                        },
                        "error": None,
                    }
                ).encode()
            )
        with self.lock:
            if out:
                fid = f"file-{len(self.files) + 1}"
                self.files[fid] = ("output.jsonl", b"\n".join(out) + b"\n")
                batch["output_file_id"] = fid
            if errors:
                fid = f"file-{len(self.files) + 1}"
                self.files[fid] = ("errors.jsonl", b"\n".join(errors) + b"\n")
                batch["error_file_id"] = fid
            batch["status"] = "expired" if expire_after is not None else "completed"
            batch["request_counts"] = {
                "total": len(lines),
                "completed": len(out),
                "failed": len(errors),
            }
        return batch
