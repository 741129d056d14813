"""Slow clients against a real uvicorn on loopback, with the settings `serve-ask` uses.

Deadlines are shortened per test so the suite stays quick. Time assertions are
one-sided where a loaded machine could only make us late: a deadline never
fires early (lower bounds are tight), and may fire late (upper bounds are
generous).
"""

import asyncio
import contextlib
import json
import selectors
import socket
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from _ask_helpers import ScriptedGenerator, ThreadedUvicorn, ask_body, site, write_docs
from agentskit_web.server.ask_app import (
    ASK_BODY_TIMEOUT_SECONDS,
    ASK_MAX_STREAMS_PER_CLIENT,
    MESSAGES,
    create_ask_app,
)
from agentskit_web.server.ask_serve import AskServeConfig

LATE = 15.0
"""How late a deadline may fire on a loaded 2-core machine and still pass."""
EARLY = 0.05
"""Clock-read jitter only: a deadline never fires before it has passed."""
HEAD = b"POST /api/ask HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\n"


def connect(port: int, source: str = "127.0.0.1") -> socket.socket:
    """A raw TCP connection from `source` (any 127.x.y.z address is loopback on Linux)."""
    return socket.create_connection(("127.0.0.1", port), timeout=10, source_address=(source, 0))


def read_until_closed(
    opened: dict[socket.socket, float], limit: float
) -> dict[socket.socket, tuple[float, bytes]]:
    """Read every socket until the server closes it: {socket: (closed at, bytes received)}."""
    selector = selectors.DefaultSelector()
    received = {sock: bytearray() for sock in opened}
    closed: dict[socket.socket, tuple[float, bytes]] = {}
    for sock in opened:
        sock.setblocking(False)
        selector.register(sock, selectors.EVENT_READ)
    give_up = time.monotonic() + limit
    while len(closed) < len(opened) and time.monotonic() < give_up:
        for key, _ in selector.select(timeout=0.2):
            sock = key.fileobj
            assert isinstance(sock, socket.socket)
            try:
                chunk = sock.recv(65_536)
            except BlockingIOError:
                continue
            except ConnectionResetError:
                chunk = b""
            if chunk:
                received[sock] += chunk
            else:
                closed[sock] = (time.monotonic(), bytes(received[sock]))
                selector.unregister(sock)
    selector.close()
    return closed


def first_token_seconds(url: str) -> float:
    """Seconds from sending a real question to its first streamed text event."""
    started = time.monotonic()
    with (
        httpx.Client(timeout=30) as client,
        client.stream("POST", f"{url}/api/ask", json=ask_body()) as reply,
    ):
        assert reply.status_code == 200
        for line in reply.iter_lines():
            if line and json.loads(line)["type"] == "text":
                return time.monotonic() - started
    raise AssertionError("the answer had no text event")


def test_200_stalled_connections_neither_delay_a_question_nor_outlive_their_deadline(
    tmp_path: Path,
) -> None:
    """Half stall mid-headers (the connection guard), half mid-body (the app's body deadline)."""
    read_timeout, body_timeout = 4.0, 3.0
    app = create_ask_app(site(), write_docs(tmp_path / "docs"), body_timeout=body_timeout)
    config = AskServeConfig(request_read_timeout=read_timeout)
    opened: dict[socket.socket, float] = {}
    head_stalled: list[socket.socket] = []
    body_stalled: list[socket.socket] = []
    with ThreadedUvicorn(app, config) as server, contextlib.ExitStack() as sockets:
        for _ in range(100):
            started = time.monotonic()
            sock = sockets.enter_context(connect(server.port))
            sock.sendall(HEAD + b"Content-Len")  # the head never ends
            opened[sock] = started
            head_stalled.append(sock)
        for number in range(100):
            started = time.monotonic()
            # One address each, as 100 different readers would be (each within its caps).
            sock = sockets.enter_context(connect(server.port, f"127.0.1.{number + 1}"))
            sock.sendall(HEAD + b"Content-Length: 200\r\n\r\n" + b'{"messages": [')
            opened[sock] = started
            body_stalled.append(sock)
        asked = time.monotonic()
        assert asked - min(opened.values()) < 1.0, "setting up the stalled clients took too long"

        first_token = first_token_seconds(server.url)

        closed = read_until_closed(opened, read_timeout + LATE)

    assert first_token < 2.0
    assert len(closed) == 200, "a stalled connection was still open long after its deadline"
    for sock in head_stalled:
        when, received = closed[sock]
        assert read_timeout - EARLY <= when - opened[sock] <= read_timeout + LATE
        assert received.startswith(b"HTTP/1.1 408 Request Timeout\r\n")
    for sock in body_stalled:
        when, received = closed[sock]
        assert body_timeout - EARLY <= when - opened[sock] <= body_timeout + LATE
        assert received.startswith(b"HTTP/1.1 408 ")
        assert b'"code":"ASK_TIMEOUT"' in received
        assert MESSAGES["body_timeout"].encode() in received


def test_the_guard_closes_a_stalled_body_even_when_the_app_would_wait(tmp_path: Path) -> None:
    read_timeout = 1.5
    app = create_ask_app(site(), write_docs(tmp_path / "docs"), body_timeout=60.0)
    with ThreadedUvicorn(app, AskServeConfig(request_read_timeout=read_timeout)) as server:
        started = time.monotonic()
        with connect(server.port) as sock:
            sock.sendall(HEAD + b"Content-Length: 100\r\n\r\n{")
            when, received = read_until_closed({sock: started}, read_timeout + LATE)[sock]
    assert read_timeout - EARLY <= when - started <= read_timeout + LATE
    assert received.startswith(b"HTTP/1.1 408 Request Timeout\r\n")
    assert received.endswith(b"\r\n\r\nThe request arrived too slowly.")


def test_the_guard_never_cuts_an_answer_that_streams_longer_than_it(tmp_path: Path) -> None:
    read_timeout = 1.0
    generator = ScriptedGenerator(pieces=["tick "] * 25, delay=0.1)  # about 2.5 s of answer
    app = create_ask_app(site(), write_docs(tmp_path / "docs"), generator=generator)
    with ThreadedUvicorn(app, AskServeConfig(request_read_timeout=read_timeout)) as server:
        started = time.monotonic()
        reply = httpx.post(f"{server.url}/api/ask", json=ask_body(), timeout=30)
        took = time.monotonic() - started
    assert took > read_timeout
    assert reply.status_code == 200
    events = [json.loads(line) for line in reply.text.splitlines()]
    assert [e["type"] for e in events][-2:] == ["tool", "done"]
    assert "".join(e["delta"] for e in events if e["type"] == "text") == "tick " * 25


def test_a_keep_alive_connection_stalling_its_next_head_is_closed(tmp_path: Path) -> None:
    """uvicorn's keep-alive timer stops at the next request's first byte; the guard does not."""
    read_timeout = 1.5
    generator = ScriptedGenerator(pieces=("Hello.",))
    app = create_ask_app(site(), write_docs(tmp_path / "docs"), generator=generator)
    body = json.dumps(ask_body()).encode()
    config = AskServeConfig(request_read_timeout=read_timeout)
    with ThreadedUvicorn(app, config) as server, connect(server.port) as sock:
        sent = time.monotonic()
        sock.sendall(HEAD + b"Content-Length: %d\r\n\r\n" % len(body) + body)
        first = b""
        while not first.endswith(b"0\r\n\r\n"):  # the chunked answer's last chunk
            chunk = sock.recv(65_536)
            assert chunk, "the first answer was cut"
            first += chunk
        assert first.startswith(b"HTTP/1.1 200 OK\r\n")
        stalled = time.monotonic()
        sock.sendall(b"POST /api/ask HTTP/1.1\r\nHost: te")
        when, received = read_until_closed({sock: stalled}, read_timeout + LATE)[sock]
    assert when - sent >= read_timeout - EARLY  # armed when the first response completed
    assert when - stalled <= read_timeout + LATE
    assert received.startswith(b"HTTP/1.1 408 Request Timeout\r\n")


@pytest.mark.parametrize(("others", "status"), [(2, b"405"), (3, b"503")])
def test_limit_concurrency_counts_open_connections(
    tmp_path: Path, others: int, status: bytes
) -> None:
    """With `limit_concurrency` connections open, a new request gets 503 (here the limit is 4)."""
    limit = 4
    app = create_ask_app(site(), write_docs(tmp_path / "docs"))
    config = AskServeConfig(limit_concurrency=limit, request_read_timeout=30.0)
    with ThreadedUvicorn(app, config) as server, contextlib.ExitStack() as sockets:
        for _ in range(others):
            sockets.enter_context(connect(server.port))
        connections = server.server.server_state.connections
        for _ in range(500):
            if len(connections) == others:
                break
            time.sleep(0.01)
        assert len(connections) == others
        with connect(server.port) as sock:
            sock.sendall(b"GET /api/ask HTTP/1.1\r\nHost: test\r\n\r\n")
            reply = sock.recv(65_536)
    assert reply.startswith(b"HTTP/1.1 " + status + b" ")


def test_one_client_may_stream_its_cap_of_answers_at_once_and_no_more(tmp_path: Path) -> None:
    generator = ScriptedGenerator(pieces=["tick "] * 400, delay=0.05)
    app = create_ask_app(site(), write_docs(tmp_path / "docs"), generator=generator)
    endpoint = app.state.ask
    assert ASK_MAX_STREAMS_PER_CLIENT == 4

    async def run(url: str) -> tuple[httpx.Response, int]:
        limits = httpx.Limits(max_connections=ASK_MAX_STREAMS_PER_CLIENT + 2)
        async with (
            httpx.AsyncClient(timeout=30, limits=limits) as client,
            contextlib.AsyncExitStack() as streams,
        ):
            held = []
            for _ in range(ASK_MAX_STREAMS_PER_CLIENT):
                reply = await streams.enter_async_context(
                    client.stream("POST", url, json=ask_body())
                )
                assert reply.status_code == 200
                lines = reply.aiter_lines()  # kept: a dropped iterator closes its stream
                assert json.loads(await anext(lines))["type"] == "text"
                held.append((reply, lines))
            assert endpoint.in_flight("ip:127.0.0.1") == ASK_MAX_STREAMS_PER_CLIENT
            refused = await client.post(url, json=ask_body())
            await held[0][0].aclose()  # one reader leaves: its slot is freed
            for _ in range(500):
                if endpoint.in_flight("ip:127.0.0.1") < ASK_MAX_STREAMS_PER_CLIENT:
                    break
                await asyncio.sleep(0.01)
            async with client.stream("POST", url, json=ask_body()) as again:
                status = again.status_code
            return refused, status

    with ThreadedUvicorn(app, AskServeConfig()) as server:
        refused, again = asyncio.run(run(f"{server.url}/api/ask"))
        for _ in range(500):
            if endpoint.in_flight("ip:127.0.0.1") == 0:
                break
            time.sleep(0.01)
        assert endpoint.in_flight("ip:127.0.0.1") == 0
    assert refused.status_code == 429
    assert refused.headers["retry-after"] == "1"
    assert refused.headers["connection"] == "close"
    assert refused.json()["error"] == {
        "code": "ASK_RATE_LIMITED",
        "message": MESSAGES["streams"],
        "retryable": True,
    }
    assert again == 200


def test_a_body_sent_in_pieces_within_the_deadline_is_read(tmp_path: Path) -> None:
    app = create_ask_app(
        site(),
        write_docs(tmp_path / "docs"),
        generator=ScriptedGenerator(pieces=("Hello.",)),
        body_timeout=3.0,
    )
    body = json.dumps(ask_body()).encode()
    with ThreadedUvicorn(app, AskServeConfig()) as server, connect(server.port) as sock:
        sock.sendall(HEAD + b"Content-Length: %d\r\n\r\n" % len(body) + body[:10])
        time.sleep(0.5)
        sock.sendall(body[10:])
        reply = b""
        while not reply.endswith(b"0\r\n\r\n"):
            chunk = sock.recv(65_536)
            assert chunk
            reply += chunk
    assert reply.startswith(b"HTTP/1.1 200 OK\r\n")
    assert b'"type":"done"' in reply
    assert ASK_BODY_TIMEOUT_SECONDS == 10.0


def test_an_unfinished_head_past_16_kib_is_refused_at_once(tmp_path: Path) -> None:
    """uvicorn's h11 bound on an unfinished request head stays in force under the guard."""
    app = create_ask_app(site(), write_docs(tmp_path / "docs"))
    with ThreadedUvicorn(app, AskServeConfig(request_read_timeout=30.0)) as server:
        started = time.monotonic()
        with connect(server.port) as sock:
            sock.sendall(HEAD + b"X-Padding: " + b"a" * 17_000)  # no end of head
            when, received = read_until_closed({sock: started}, LATE)[sock]
    assert received.startswith(b"HTTP/1.1 400 ")
    assert when - started < 30.0  # refused for its size, not by the read deadline


def test_a_body_dripping_bytes_is_cut_at_the_deadline_not_kept_alive_by_them(
    tmp_path: Path,
) -> None:
    """A byte every 0.1 s must not reset the deadline (it bounds the whole request read).

    Dripping goes on for far longer than the deadline plus `LATE`, so an idle timer
    reset by each chunk never fires while it lasts; the upper bound (2.5 s past a 1 s
    deadline) is also below 4x the deadline, so a deadline made 4x longer fails too.
    """
    read_timeout = 1.0
    app = create_ask_app(site(), write_docs(tmp_path / "docs"), body_timeout=60.0)
    config = AskServeConfig(request_read_timeout=read_timeout)
    with ThreadedUvicorn(app, config) as server, connect(server.port) as sock:
        started = time.monotonic()
        sock.sendall(HEAD + b"Content-Length: 1000\r\n\r\n")  # under 64 KiB
        sock.setblocking(False)
        received = b""
        closed_at = None
        while time.monotonic() - started < read_timeout + LATE + 5:
            try:
                sock.send(b" ")
            except OSError:  # reset or broken pipe: the server closed it
                closed_at = time.monotonic()
                break
            ready, _, _ = selectors.select.select([sock], [], [], 0.1)
            if ready:
                try:
                    chunk = sock.recv(65_536)
                except (ConnectionResetError, BlockingIOError):
                    chunk = b""
                received += chunk
                if not chunk:
                    closed_at = time.monotonic()
                    break
    assert closed_at is not None, "dripping bytes kept the connection open past the deadline"
    assert read_timeout - EARLY <= closed_at - started <= read_timeout + 2.5
    assert received.startswith(b"HTTP/1.1 408 Request Timeout\r\n")


def test_the_default_read_deadline_is_15_seconds_and_serve_ask_uses_it() -> None:
    from agentskit_web.server.connection_guard import REQUEST_READ_TIMEOUT_SECONDS

    assert REQUEST_READ_TIMEOUT_SECONDS == 15.0
    assert AskServeConfig().request_read_timeout == REQUEST_READ_TIMEOUT_SECONDS


def test_a_connection_the_guard_closes_leaves_uvicorns_connection_count(tmp_path: Path) -> None:
    """A connection cut by the deadline stops counting against `limit_concurrency`.

    uvicorn forgets a connection in `connection_lost`; if the guard's own cleanup
    there failed, every stalled client would leak a slot until the server refused all.
    """
    read_timeout = 1.0
    app = create_ask_app(site(), write_docs(tmp_path / "docs"))
    with ThreadedUvicorn(app, AskServeConfig(request_read_timeout=read_timeout)) as server:
        connections = server.server.server_state.connections
        started = time.monotonic()
        with connect(server.port) as sock:
            sock.sendall(HEAD + b"Content-Len")  # the head never ends
            _, received = read_until_closed({sock: started}, read_timeout + LATE)[sock]
        for _ in range(500):
            if not connections:
                break
            time.sleep(0.01)
        left = len(connections)
    assert received.startswith(b"HTTP/1.1 408 Request Timeout\r\n")
    assert left == 0


def test_a_started_response_is_cut_at_the_deadline_without_a_408_inside_it(
    tmp_path: Path,
) -> None:
    """An app that answers before the body is read: the guard closes, and writes nothing.

    A 408 head written after a response has begun would land inside that response's
    body, so the guard only closes the connection then.
    """
    read_timeout = 1.0

    async def answers_first(scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"begun", "more_body": True})
        while (await receive())["type"] != "http.disconnect":  # the body never ends
            pass

    config = AskServeConfig(request_read_timeout=read_timeout)
    with ThreadedUvicorn(answers_first, config) as server, connect(server.port) as sock:
        started = time.monotonic()
        sock.sendall(HEAD + b"Content-Length: 100\r\n\r\n{")
        when, received = read_until_closed({sock: started}, read_timeout + LATE)[sock]
    assert read_timeout - EARLY <= when - started <= read_timeout + LATE
    assert received.startswith(b"HTTP/1.1 200 OK\r\n")
    assert received.endswith(b"begun\r\n")  # the last chunk as the app sent it
    assert b"408" not in received


class _EchoAfterUpgrade(asyncio.Protocol):
    """Stands in for a WebSocket library: accepts the upgrade, then echoes every byte."""

    def __init__(self, **_: object) -> None:
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        assert self.transport is not None
        if data.startswith(b"GET "):
            self.transport.write(b"HTTP/1.1 101 Switching Protocols\r\n\r\n")
        else:
            self.transport.write(data)


def test_a_connection_upgraded_to_a_websocket_is_left_to_its_new_protocol(
    tmp_path: Path,
) -> None:
    """After an upgrade the transport is no longer the guard's: its deadline must not cut it.

    uvicorn hands the transport to its WebSocket protocol inside `data_received`; the
    guard's timer, armed when the connection opened, is stopped there, so the upgraded
    connection outlives the read deadline.
    """
    read_timeout = 1.0
    app = create_ask_app(site(), write_docs(tmp_path / "docs"))
    server = ThreadedUvicorn(app, AskServeConfig(request_read_timeout=read_timeout))
    server.server.config.ws = _EchoAfterUpgrade  # uvicorn reads it when the server starts
    with server, connect(server.port) as sock:
        sock.sendall(
            b"GET /ws HTTP/1.1\r\nHost: test\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n"
        )
        assert sock.recv(65_536) == b"HTTP/1.1 101 Switching Protocols\r\n\r\n"
        time.sleep(read_timeout + 1.0)
        sock.sendall(b"still here")
        echoed = sock.recv(65_536)
    assert echoed == b"still here"


@pytest.mark.parametrize("seconds", [0.0, -1.0])
def test_a_read_deadline_of_zero_or_less_is_refused(seconds: float) -> None:
    from agentskit_web.server.connection_guard import guarded_h11_protocol

    with pytest.raises(ValueError, match=r"^The request read timeout must be positive\.$"):
        guarded_h11_protocol(seconds)


def test_the_smallest_positive_read_deadline_is_kept() -> None:
    from agentskit_web.server.connection_guard import GuardedH11Protocol, guarded_h11_protocol

    protocol = guarded_h11_protocol(0.001)
    assert issubclass(protocol, GuardedH11Protocol)
    assert protocol.__name__ == "GuardedH11Protocol"  # as logs and tracebacks name it
    assert protocol.read_timeout == 0.001
    assert GuardedH11Protocol.read_timeout == 15.0  # the subclass, not the base, changed
