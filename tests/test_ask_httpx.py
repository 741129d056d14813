"""The Ask adapter over the real httpx transport against a real local HTTP server.

The server is a small asyncio HTTP/1.1 server on 127.0.0.1 (free port) that
plays a script: an optional delay before the headers, then body steps sent as
separate chunked-encoding chunks (bytes) or pauses. It watches its socket, so
a test can prove that stopping the answer disconnects upstream.
"""

import asyncio
import json
import socket
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

import pytest

from agentskit_web.chat import create_ask_adapter
from agentskit_web.chat.ask.adapter import NETWORK_MESSAGE, TIMEOUT_MESSAGE
from agentskit_web.cli.ask import main as ask_main
from agentskit_web.cli.ask import terminal_safe
from agentskit_web.protocol import decode_assistant_content
from agentskit_web.transports.httpx_transport import HttpxTransport

Step = bytes | float


class ScriptedServer:
    """One scripted response per request; records requests and client disconnects."""

    def __init__(
        self,
        steps: Sequence[Step],
        *,
        status: int = 200,
        content_type: str = "application/x-ndjson",
        header_delay: float = 0.0,
    ) -> None:
        self.steps = list(steps)
        self.status = status
        self.content_type = content_type
        self.header_delay = header_delay
        self.requests: list[tuple[str, bytes]] = []
        self.disconnected = asyncio.Event()
        self.finished = asyncio.Event()
        self.port = 0

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        sock = writer.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        watcher: asyncio.Future[bytes] | None = None
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            target, length = _request_target_and_length(head)
            self.requests.append((target, await reader.readexactly(length)))
            watcher = asyncio.ensure_future(reader.read(1))  # b"" once the client hangs up
            if await self._pause(self.header_delay, watcher):
                return
            writer.write(self._head())
            await writer.drain()
            for step in self.steps:
                if isinstance(step, float):
                    if await self._pause(step, watcher):
                        return
                    continue
                writer.write(b"%x\r\n%s\r\n" % (len(step), step))
                await writer.drain()
                await asyncio.sleep(0)
            writer.write(b"0\r\n\r\n")
            await writer.drain()
            self.finished.set()
            await self._pause(0.5, watcher)  # let the client hang up first
        except (ConnectionError, asyncio.IncompleteReadError):
            self.disconnected.set()
        except asyncio.CancelledError:
            pass  # the test is over and its loop is shutting down: a test server just stops
        finally:
            if watcher is not None:
                watcher.cancel()
            writer.close()

    async def _pause(self, seconds: float, watcher: "asyncio.Future[bytes]") -> bool:
        """Sleep, but notice a client disconnect; True when the client is gone."""
        if seconds > 0:
            await asyncio.wait([watcher], timeout=seconds)
        if watcher.done() and not watcher.cancelled() and watcher.result() == b"":
            self.disconnected.set()
            return True
        return False

    def _head(self) -> bytes:
        return (
            f"HTTP/1.1 {self.status} Scripted\r\n"
            f"Content-Type: {self.content_type}\r\n"
            "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
        ).encode()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1/ask"


def _request_target_and_length(head: bytes) -> tuple[str, int]:
    lines = head.decode("latin-1").split("\r\n")
    target = lines[0].split(" ")[1]
    length = 0
    for header in lines[1:]:
        name, _, value = header.partition(":")
        if name.strip().lower() == "content-length":
            length = int(value.strip())
    return target, length


@asynccontextmanager
async def serving(server: ScriptedServer) -> AsyncIterator[ScriptedServer]:
    listener = await asyncio.start_server(server.handle, "127.0.0.1", 0)
    server.port = listener.sockets[0].getsockname()[1]
    try:
        yield server
    finally:
        listener.close()
        await listener.wait_closed()


def event_line(event: dict[str, Any]) -> bytes:
    return (json.dumps(event, ensure_ascii=False) + "\n").encode()


def content_of(chunks: list[dict[str, str]]) -> list[Any]:
    text = "".join(c["content"] for c in chunks if c["type"] == "text")
    decoded = decode_assistant_content(text)
    assert decoded.ok
    return [p["text"] if p["kind"] == "text" else p["frame"] for p in decoded.parts]


ANSWER = [
    event_line({"type": "text", "delta": "Grüße "}),
    event_line({"type": "text", "delta": "\U0001f680 launch"}),
    event_line(
        {
            "type": "tool",
            "id": "sources-req-1",
            "name": "cite",
            "args": {"sources": [{"title": "Install", "path": "/docs/install", "anchor": "pip"}]},
        }
    ),
    event_line({"type": "done"}),
]


def one_byte_steps(body: bytes) -> list[Step]:
    return [body[i : i + 1] for i in range(len(body))]


async def ask(server: ScriptedServer, **options: Any) -> list[dict[str, str]]:
    async with serving(server):
        adapter = create_ask_adapter(endpoint=server.url, transport=HttpxTransport(), **options)
        source = adapter.create_source([{"role": "user", "content": "How?"}], session_id="s-1")
        return [chunk async for chunk in source]


@pytest.mark.parametrize("content_type", ["application/x-ndjson", "text/plain; charset=utf-8"])
def test_one_byte_per_chunk_split_inside_utf8(content_type: str) -> None:
    body = b"".join(ANSWER)
    server_box: list[ScriptedServer] = []

    async def scenario() -> list[dict[str, str]]:
        server = ScriptedServer(one_byte_steps(body), content_type=content_type)
        server_box.append(server)
        return await ask(server, corpus="docs")

    chunks = asyncio.run(scenario())
    parts = content_of(chunks)
    assert parts[:2] == ["Grüße ", "\U0001f680 launch"]
    assert parts[2]["props"]["sources"] == [
        {"id": "source-1", "title": "Install", "url": "/docs/install#pip"}
    ]
    assert chunks[-1] == {"type": "done"}
    target, request_body = server_box[0].requests[0]
    assert target == "/v1/ask?corpus=docs"
    assert json.loads(request_body) == {
        "protocol": "agentskit.chat.ask",
        "version": 1,
        "sessionId": "s-1",
        "messages": [{"role": "user", "content": "How?"}],
    }


def test_html_body_is_shown_as_text() -> None:
    html = "<html><body><h1>502 Bad Gateway</h1> ünïcode</body></html>".encode()

    async def scenario() -> list[dict[str, str]]:
        return await ask(ScriptedServer(one_byte_steps(html), content_type="text/html"))

    chunks = asyncio.run(scenario())
    assert "".join(content_of(chunks)) == html.decode()
    assert chunks[-1] == {"type": "done"}


def test_stop_mid_stream_disconnects_upstream() -> None:
    async def scenario() -> tuple[list[dict[str, str]], bool]:
        steps: list[Step] = [event_line({"type": "text", "delta": "first "})]
        steps += [0.05, event_line({"type": "text", "delta": "more "})] * 200
        server = ScriptedServer(steps)
        async with serving(server):
            adapter = create_ask_adapter(endpoint=server.url, transport=HttpxTransport())
            source = adapter.create_source([{"role": "user", "content": "q"}])
            chunks: list[dict[str, str]] = []
            async for chunk in source:
                chunks.append(chunk)
                if len(chunks) == 3:
                    source.abort()
            await asyncio.wait_for(server.disconnected.wait(), 5)
            return chunks, server.finished.is_set()

    chunks, finished = asyncio.run(scenario())
    assert [c["type"] for c in chunks] == ["text"] * 3
    assert content_of(chunks) == ["first ", "more ", "more "]
    assert not finished


def test_deadline_before_headers_is_an_error_and_disconnects() -> None:
    async def scenario() -> tuple[list[dict[str, str]], ScriptedServer]:
        server = ScriptedServer(ANSWER, header_delay=3.0)
        chunks = await ask_and_wait_disconnect(server, connect_timeout=0.2)
        return chunks, server

    chunks, server = asyncio.run(scenario())
    assert chunks == [{"type": "error", "content": TIMEOUT_MESSAGE}]
    assert server.disconnected.is_set()


async def ask_and_wait_disconnect(server: ScriptedServer, **options: Any) -> list[dict[str, str]]:
    async with serving(server):
        adapter = create_ask_adapter(endpoint=server.url, transport=HttpxTransport(), **options)
        chunks = [c async for c in adapter.create_source([{"role": "user", "content": "q"}])]
        await asyncio.wait_for(server.disconnected.wait(), 5)
        return chunks


def test_headers_on_time_then_a_body_trickling_past_the_deadline_completes() -> None:
    steps: list[Step] = []
    for word in ("slow ", "but ", "steady"):
        steps += [0.5, event_line({"type": "text", "delta": word})]
    steps.append(event_line({"type": "done"}))

    # The body takes 1.5 s, past the 1 s deadline for the headers; a second for the headers
    # leaves room on a loaded machine (0.2 s did not always).
    chunks = asyncio.run(ask(ScriptedServer(steps), connect_timeout=1.0))
    assert content_of(chunks) == ["slow ", "but ", "steady"]
    assert chunks[-1] == {"type": "done"}


def test_non_ok_status() -> None:
    server = ScriptedServer([b'{"error":{"code":"ASK_FORBIDDEN"}}'], status=403)
    chunks = asyncio.run(ask(server))
    assert chunks == [{"type": "error", "content": "Ask request failed (403)."}]


def test_connection_refused_is_an_error_chunk() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # closed again below: nothing listens there

    async def scenario() -> list[dict[str, str]]:
        adapter = create_ask_adapter(
            endpoint=f"http://127.0.0.1:{port}/ask", transport=HttpxTransport()
        )
        return [c async for c in adapter.create_source([{"role": "user", "content": "q"}])]

    assert asyncio.run(scenario()) == [{"type": "error", "content": NETWORK_MESSAGE}]


def test_relative_endpoint_with_a_base_url() -> None:
    async def scenario() -> tuple[list[dict[str, str]], str]:
        server = ScriptedServer(ANSWER)
        async with serving(server):
            transport = HttpxTransport(base_url=f"http://127.0.0.1:{server.port}")
            adapter = create_ask_adapter(endpoint="/v1/ask", persona="guide", transport=transport)
            chunks = [c async for c in adapter.create_source([{"role": "user", "content": "q"}])]
            return chunks, server.requests[0][0]

    chunks, target = asyncio.run(scenario())
    assert chunks[-1] == {"type": "done"}
    assert target == "/v1/ask?persona=guide"


# -- CLI ---------------------------------------------------------------------------------------


def _run_cli(server: ScriptedServer, *extra: str) -> int:
    async def serve_and_run() -> int:
        async with serving(server):
            return await asyncio.to_thread(ask_main, [server.url, "How do I install?", *extra])

    return asyncio.run(serve_and_run())


def test_cli_streams_text_then_sources(capsys: pytest.CaptureFixture[str]) -> None:
    code = _run_cli(ScriptedServer(ANSWER), "--corpus", "docs")
    out = capsys.readouterr().out
    assert code == 0
    assert out == "Grüße \U0001f680 launch\n\nSources:\n  - Install </docs/install#pip>\n"


def test_cli_reports_an_error(capsys: pytest.CaptureFixture[str]) -> None:
    steps = [
        event_line({"type": "text", "delta": "partial"}),
        event_line({"type": "error", "message": "Generation \x1b[31mfailed."}),
    ]
    code = _run_cli(ScriptedServer(steps))
    captured = capsys.readouterr()
    assert code == 1
    assert captured.out == "partial\n"
    assert captured.err == "error: Generation [31mfailed.\n"


def test_cli_rejects_a_relative_url(capsys: pytest.CaptureFixture[str]) -> None:
    assert ask_main(["/v1/ask", "q"]) == 2
    assert "absolute" in capsys.readouterr().err


def test_terminal_safe_strips_escape_sequences() -> None:
    assert terminal_safe("a\x1b]8;;http://evil\x07b\tc\nd\x9b\ud800") == "a]8;;http://evilb\tc\nd?"


def test_cli_prints_the_server_message_and_code_of_a_refusal(
    capsys: pytest.CaptureFixture[str],
) -> None:
    body = (
        b'{"error":{"code":"ASK_BAD_REQUEST","message":"The question is empty.","retryable":false}}'
    )
    code = _run_cli(ScriptedServer([body], status=422, content_type="application/json"))
    assert code == 1
    assert capsys.readouterr().err == (
        "error: Ask request failed (422): The question is empty. [ASK_BAD_REQUEST]\n"
    )


def test_cli_keeps_the_status_line_when_the_refusal_has_no_valid_envelope(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = _run_cli(ScriptedServer([b"<h1>Bad gateway</h1>"], status=502, content_type="text/html"))
    assert code == 1
    assert capsys.readouterr().err == "error: Ask request failed (502).\n"
