"""Shared helpers for the Ask-backend tests: sites, docs, scripted ports, ASGI calls."""

import asyncio
import copy
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from agentskit_web.answering.chunk import Passage
from agentskit_web.protocol import AskEventDecoder, ask_event_wire_or_none
from agentskit_web.server.ask_app import MESSAGES
from agentskit_web.server.generators import GenerationRequest

SITE: dict[str, Any] = {
    "protocol": "agentskit.chat.backend-site",
    "version": 1,
    "siteId": "test-site",
    "assistant": {"id": "guide", "name": "Test guide", "suggestions": []},
    "corpus": {"id": "docs", "mode": "local"},
    "components": ["source-list"],
    "actions": [],
    "limits": {
        "requestTimeoutMs": 30_000,
        "retrievalTimeoutMs": 2_000,
        "generationTimeoutMs": 20_000,
        "maxSources": 3,
    },
    "persistence": {"mode": "disabled"},
}

DOCS: dict[str, str] = {
    "install.md": (
        "# Installing\n\n"
        "Install the package with pip inside a virtual environment.\n\n"
        "## Install the widget\n\n"
        "Add the agentskit-ask element to your page template. The widget streams answers.\n\n"
        "## Upgrading\n\nUpgrade with pip install --upgrade.\n"
    ),
    "security.md": (
        "# Security\n\n"
        "The widget never executes received content.\n\n"
        "## Content policy\n\n"
        "Pyodide needs wasm-unsafe-eval in script-src. Everything else is self.\n"
    ),
}

QUESTION = "How do I install the widget?"


def turn_submit(
    session_id: str, turn_id: str, text: str = QUESTION, lineage: Any = None
) -> dict[str, Any]:
    """A `client.turn.submit` event of the turn protocol, as the widget sends it."""
    payload: dict[str, Any] = {"input": text}
    if lineage is not None:
        payload["lineage"] = lineage
    return {
        "protocol": "agentskit.chat.turn",
        "version": 1,
        "eventId": f"e-{turn_id}",
        "sessionId": session_id,
        "turnId": turn_id,
        "sequence": 0,
        "emittedAt": "2026-01-01T00:00:00Z",
        "event": "client.turn.submit",
        "payload": payload,
    }


def site(**changes: Any) -> dict[str, Any]:
    """A copy of SITE with changes; nested keys use `__` (`limits__maxSources=2`)."""
    config = copy.deepcopy(SITE)
    for dotted, value in changes.items():
        target = config
        *parents, last = dotted.split("__")
        for name in parents:
            target = target[name]
        target[last] = value
    return config


def write_docs(folder: Path, docs: dict[str, str] | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in (docs or DOCS).items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return folder


def ask_body(question: str = QUESTION, **extra: Any) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": question}], **extra}


@dataclass
class Reply:
    status: int
    headers: httpx.Headers
    body: bytes

    def json(self) -> Any:
        import json

        return json.loads(self.body)

    @property
    def events(self) -> list[dict[str, Any]]:
        return decode_stream(self.body)


def post(
    app: Any,
    body: Any = None,
    *,
    query: str = "",
    headers: dict[str, str] | None = None,
    method: str = "POST",
    content: bytes | None = None,
) -> Reply:
    """One request through httpx's ASGI transport (the whole response is buffered)."""

    async def run() -> Reply:
        transport = httpx.ASGITransport(app=app, client=("203.0.113.7", 5000))
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
            sent_headers = {"content-type": "application/json", **(headers or {})}
            kwargs: dict[str, Any] = {"headers": sent_headers}
            if content is not None:
                kwargs["content"] = content
            elif body is not None:
                kwargs["json"] = body
            response = await client.request(method, f"/api/ask{query}", **kwargs)
            return Reply(response.status_code, response.headers, response.content)

    return asyncio.run(run())


def decode_stream(body: bytes, step: int = 1) -> list[dict[str, Any]]:
    """Decode an NDJSON body with the project's own decoder, `step` bytes per chunk.

    Every event is also re-checked with the strict single-event parser, so a
    line the decoder would silently skip makes the test fail instead.
    """
    decoder = AskEventDecoder()
    events: list[dict[str, Any]] = []
    for start in range(0, len(body), step):
        events.extend(decoder.feed(body[start : start + step]))
    events.extend(decoder.finish())
    lines = [line for line in body.split(b"\n") if line.strip()]
    assert len(lines) == len(events), "a streamed line was not a valid Ask event"
    for line in lines:
        assert ask_event_wire_or_none(line) is not None
    return events


def text_of(events: Sequence[dict[str, Any]]) -> str:
    return "".join(e["delta"] for e in events if e["type"] == "text")


class FakeClock:
    """Manual monotonic + wall clock."""

    def __init__(self, start: float = 1_000.0) -> None:
        self.now = start

    def monotonic(self) -> float:
        return self.now

    def wall(self) -> float:
        return 1_780_000_000.0 + self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


PASSAGE = Passage(
    path="/docs/install.html",
    anchor="install-the-widget",
    page_title="Installing",
    heading="Install the widget",
    text="Add the agentskit-ask element to your page template. The widget streams answers.",
)


@dataclass
class ScriptedRetriever:
    """A retriever that returns fixed passages, sleeps, or raises; counts its calls."""

    passages: Sequence[Passage] = (PASSAGE,)
    delay: float = 0.0
    error: Exception | None = None
    calls: list[str] = field(default_factory=list)

    async def retrieve(self, question: str, limit: int) -> Sequence[Passage]:
        self.calls.append(question)
        if self.delay:
            await asyncio.sleep(self.delay)
        if self.error is not None:
            raise self.error
        return list(self.passages)[:limit]


@dataclass
class ScriptedGenerator:
    """Yields `pieces` (sleeping `delay` before each), then raises `error` if set."""

    pieces: Sequence[str] = ("Hello ", "world.")
    delay: float = 0.0
    error: Exception | None = None
    model_name: str | None = None
    requests: list[GenerationRequest] = field(default_factory=list)
    closed: list[bool] = field(default_factory=list)
    on_piece: Callable[[int], Any] | None = None

    @property
    def model(self) -> str | None:
        return self.model_name

    async def stream(self, request: GenerationRequest) -> AsyncIterator[str]:
        self.requests.append(request)
        try:
            for index, piece in enumerate(self.pieces):
                if self.delay:
                    await asyncio.sleep(self.delay)
                if self.on_piece is not None:
                    result = self.on_piece(index)
                    if asyncio.iscoroutine(result):
                        await result
                yield piece
            if self.error is not None:
                raise self.error
        finally:
            self.closed.append(True)


async def call_asgi(
    app: Any,
    *,
    method: str = "POST",
    path: str = "/api/ask",
    query: bytes = b"",
    headers: Sequence[tuple[bytes, bytes]] = ((b"content-type", b"application/json"),),
    body_chunks: Sequence[bytes] = (b"{}",),
    disconnect: asyncio.Event | None = None,
) -> tuple[list[dict[str, Any]], list[int]]:
    """Drive the raw ASGI app; returns (sent messages, body chunk indexes received).

    The second list records every body chunk the app pulled with `receive`,
    which is how tests prove the body was (not) read. After the body, `receive`
    waits for `disconnect` (if given) and then reports `http.disconnect`.
    """
    sent: list[dict[str, Any]] = []
    pulled: list[int] = []
    scope = {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": query,
        "root_path": "",
        "headers": list(headers),
        "client": ("203.0.113.9", 4000),
        "server": ("testserver", 80),
    }
    index = 0
    never = asyncio.Event()

    async def receive() -> dict[str, Any]:
        nonlocal index
        if index < len(body_chunks):
            pulled.append(index)
            chunk = body_chunks[index]
            index += 1
            return {"type": "http.request", "body": chunk, "more_body": index < len(body_chunks)}
        await (disconnect or never).wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await app(scope, receive, send)
    return sent, pulled


class ThreadedUvicorn:
    """A real uvicorn server for `app` on 127.0.0.1, a free port, in a background thread.

    `config` (an `AskServeConfig`) runs it with exactly the settings `serve-ask`
    uses (`ask_serve.uvicorn_config`); without it, uvicorn's defaults.
    """

    def __init__(self, app: Any, config: Any = None) -> None:
        import socket
        import threading

        import uvicorn

        from agentskit_web.server.ask_serve import uvicorn_config

        self.socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        self.socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.socket.bind(("127.0.0.1", 0))
        self.port = self.socket.getsockname()[1]
        if config is None:
            settings = uvicorn.Config(app, log_level="warning", lifespan="off", access_log=False)
        else:
            settings = uvicorn_config(app, config)
        self.server = uvicorn.Server(settings)
        self.thread = threading.Thread(
            target=self.server.run, kwargs={"sockets": [self.socket]}, daemon=True
        )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> "ThreadedUvicorn":
        import time

        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.01)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)
        self.socket.close()


def assert_turn_rate_limited(reply: httpx.Response, retry_after: str) -> None:
    """A turn endpoint's refusal for the caller's rate: 429, the wait, the typed error."""
    assert reply.status_code == 429
    assert reply.headers["retry-after"] == retry_after
    assert reply.json()["error"] == {
        "version": 1,
        "code": "ASK_RATE_LIMITED",
        "message": MESSAGES["rate"],
        "retryable": True,
    }
