"""The Ask adapter in real Chromium: `fetch` + ReadableStream + AbortController under Pyodide.

One harness page (served by this module's own server, on the same origin as
the built site) loads the shipped wheel in Pyodide and streams answers with
`create_ask_adapter` and the platform-default transport (the browser's fetch).
The same server plays scripted Ask responses: bytes sent one write at a time
with TCP_NODELAY, pauses, late headers. It watches its sockets, so a test can
prove that a user stop or a connection deadline disconnects upstream.

Waits are on explicit signals: the page's `data-state`, the awaited in-page
call, and the server's disconnect events; never on sleeps.
"""

from __future__ import annotations

import functools
import http.server
import json
import select
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Browser, Page

from agentskit_web.chat.ask.adapter import TIMEOUT_MESSAGE
from agentskit_web.chat.ask.body import BYTE_LIMIT_MESSAGE, RECORD_LIMIT_MESSAGE
from agentskit_web.protocol.limits import ASK_LINE_MAX_BYTES, ASSISTANT_CONTENT_MAX_RECORDS
from agentskit_web.server.static import LOOPBACK
from e2e_support import (
    BOOT_TIMEOUT_MS,
    BackgroundServer,
    SiteHandler,
    Watch,
    harness_html,
    save_artifact,
)

HARNESS_PATH = "/__e2e__/ask-harness.html"
DISCONNECT_TIMEOUT_S = 10.0
BYTE_PAUSE = 0.004  # seconds between scripted writes that must reach the page separately

HARNESS_PY = r"""
import json
from agentskit_web.transports.fetch_transport import FetchTransport
from agentskit_web.chat import create_ask_adapter
from agentskit_web.protocol import decode_assistant_content


class CountingTransport:
    # FetchTransport, counting the reader's reads (proves how the body arrived).
    def __init__(self):
        self.inner = FetchTransport()
        self.reads = 0

    async def post(self, url, headers, body):
        response = await self.inner.post(url, headers, body)
        counter = self

        class Counted:
            status = response.status
            headers = response.headers

            async def chunks(self):
                async for data in response.chunks():
                    counter.reads += 1
                    yield data

            async def cancel(self):
                await response.cancel()

        return Counted()


async def ak_ask(scenario, timeout=30.0, stop_after=0, corpus=None, count_reads=False):
    # count_reads=False uses the platform default transport (fetch in the page).
    transport = CountingTransport() if count_reads else None
    adapter = create_ask_adapter(endpoint="/ask/" + scenario, corpus=corpus,
                                 connect_timeout=timeout, transport=transport)
    source = adapter.create_source([{"role": "user", "content": "How do I start?"}],
                                   session_id="e2e-session-1")
    chunks = []
    async for chunk in source:
        chunks.append(chunk)
        if stop_after and len(chunks) == stop_after:
            source.abort()
    content = "".join(c["content"] for c in chunks if c["type"] == "text")
    decoded = decode_assistant_content(content) if content else None
    return json.dumps({
        "types": [c["type"] for c in chunks],
        "terminal": chunks[-1] if chunks and chunks[-1]["type"] != "text" else None,
        "contentOk": True if decoded is None else decoded.ok,
        "parts": [] if decoded is None or not decoded.ok else list(decoded.parts),
        "bytes": len(content.encode("utf-8")),
        "reads": transport.reads if transport else None,
    })


def ak_bench():
    from agentskit_web.bench.page.ask_stream import run_ask_bench
    return json.dumps(run_ask_bench())
"""


# -- scripted Ask responses ------------------------------------------------------------------

Step = bytes | float


@dataclass
class Scenario:
    steps: list[Step]
    content_type: str | None = "application/x-ndjson"
    status: int = 200
    header_delay: float = 0.0


@dataclass
class Observed:
    """What the server saw for one scenario."""

    requests: list[tuple[str, bytes]] = field(default_factory=list)
    disconnected: threading.Event = field(default_factory=threading.Event)
    completed: threading.Event = field(default_factory=threading.Event)


def line(event: dict[str, Any]) -> bytes:
    return (json.dumps(event, ensure_ascii=False) + "\n").encode()


def text(delta: str) -> bytes:
    return line({"type": "text", "delta": delta})


DONE = line({"type": "done"})
CITE = line(
    {
        "type": "tool",
        "id": "sources-req-1",
        "name": "cite",
        "args": {
            "sources": [
                {"title": "Getting started", "path": "/docs/start", "anchor": "install it"},
                {"title": "Evil", "path": "javascript:alert(1)"},
            ]
        },
    }
)
ANSWER = text("Grüße aus 日本 ") + text("🚀 launch") + CITE + DONE
SOURCE = {"id": "source-1", "title": "Getting started", "url": "/docs/start#install%20it"}


def bytewise(data: bytes) -> list[Step]:
    """One byte per write with a short pause after each, so the page reads them one by one.

    Without the pause loopback delivers the whole body before the page's first
    `read()`, and the stream would arrive as one chunk.
    """
    steps: list[Step] = []
    for index in range(len(data)):
        steps += [data[index : index + 1], BYTE_PAUSE]
    return steps


def split_inside_utf8(data: bytes, pause: float = 0.02) -> list[Step]:
    """Cut right after the first byte of every multi-byte character (with pauses between)."""
    pieces: list[bytes] = []
    start = 0
    for index, byte in enumerate(data):
        if byte >= 0xC0:  # a lead byte: cut after it
            pieces.append(data[start : index + 1])
            start = index + 1
    pieces.append(data[start:])
    steps: list[Step] = []
    for piece in pieces:
        if piece:
            steps += [piece, pause]
    return steps


def chunked(data: bytes, size: int) -> list[Step]:
    return [data[i : i + size] for i in range(0, len(data), size)]


OVERSIZED = b'{"type":"text","delta":"' + b"x" * (ASK_LINE_MAX_BYTES + 10)
HTML = "<!doctype html><html><body><h1>Bad gateway</h1><script>alert(1)</script> ünï</body></html>"

SCENARIOS: dict[str, Scenario] = {
    "bytewise-ndjson": Scenario(bytewise(ANSWER)),
    "bytewise-text-plain": Scenario(bytewise(ANSWER), content_type="text/plain; charset=utf-8"),
    "utf8-split": Scenario(split_inside_utf8(ANSWER), content_type=None),
    "html": Scenario(bytewise(HTML.encode()), content_type="text/html; charset=utf-8"),
    "late-headers": Scenario([DONE], header_delay=4.0),
    "trickle": Scenario([0.3, text("slow "), 0.3, text("but "), 0.3, text("steady"), 0.3, DONE]),
    "error-mid": Scenario(
        [
            text("partial answer"),
            0.05,
            line(
                {"type": "error", "message": "Generation failed.", "code": "ASK_GENERATION_FAILED"}
            ),
            text("never shown"),
        ]
    ),
    "records-513": Scenario([text("r") * (ASSISTANT_CONTENT_MAX_RECORDS + 1), DONE]),
    "bytes-257k": Scenario(chunked(b"z" * (257 * 1024), 16_384), content_type="text/plain"),
    "inert-lines": Scenario(
        [
            text("a"),
            line({"type": "thinking", "delta": "hidden"}),
            line({"type": "text", "delta": "hidden", "extra": True}),
            b'{"type":"text","delta":"dup","delta":"x"}\n',
            b"not json at all\n",
            b'{"type":"text","delta":"unterminated\n',
            text("b"),
            DONE,
        ]
    ),
    "oversized-ndjson": Scenario([*chunked(OVERSIZED, 65_536), b"\n" + text("after"), DONE]),
    "oversized-text-plain": Scenario(
        [*chunked(OVERSIZED, 65_536), b"\n" + text("after"), DONE], content_type="text/plain"
    ),
    "stop": Scenario([text("first ")] + [0.05, text("more ")] * 400),
    "forbidden": Scenario([b'{"error":{"code":"ASK_FORBIDDEN"}}'], status=403),
}


class AskSite:
    """The built site plus scripted Ask endpoints on one 127.0.0.1 origin (a free port)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.observed: dict[str, Observed] = {name: Observed() for name in SCENARIOS}
        handler = functools.partial(_AskHandler, directory=str(root))
        server = _Server((LOOPBACK, 0), handler)
        server.site = self
        self._background = BackgroundServer(server)

    @property
    def url(self) -> str:
        return self._background.url

    def __enter__(self) -> AskSite:
        self._background.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._background.stop()


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    site: AskSite


class _AskHandler(SiteHandler):
    server: _Server

    def do_GET(self) -> None:
        if urlsplit(self.path).path == HARNESS_PATH:
            page = harness_html(self.server.site.root, "Ask stream harness", HARNESS_PY, bench=True)
            page = page.encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(page)))
            self.end_headers()
            self.wfile.write(page)
            return
        super().do_GET()

    def do_POST(self) -> None:
        target = urlsplit(self.path)
        name = target.path.removeprefix("/ask/")
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        scenario = SCENARIOS.get(name)
        if scenario is None:
            self.send_error(404)
            return
        observed = self.server.site.observed[name]
        observed.requests.append((self.path, body))
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            if self._client_gone_within(scenario.header_delay):
                observed.disconnected.set()
                return
            self.send_response(scenario.status)
            if scenario.content_type is not None:
                self.send_header("Content-Type", scenario.content_type)
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.flush()
            for step in scenario.steps:
                if isinstance(step, float):
                    if self._client_gone_within(step):
                        observed.disconnected.set()
                        return
                    continue
                self.wfile.write(step)
                self.wfile.flush()
            observed.completed.set()
        except (BrokenPipeError, ConnectionResetError):
            observed.disconnected.set()

    def _client_gone_within(self, seconds: float) -> bool:
        """Wait up to `seconds`; True as soon as the client closes its side."""
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            readable, _, _ = select.select([self.connection], [], [], left)
            if readable:
                try:
                    if self.connection.recv(1, socket.MSG_PEEK) == b"":
                        return True
                except ConnectionError:
                    return True
                time.sleep(min(left, 0.01))  # unexpected extra bytes: keep waiting
        return False


# -- fixtures --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def ask_site(dist: Path) -> Iterator[AskSite]:
    with AskSite(dist) as site:
        yield site


@pytest.fixture(scope="module")
def harness(browser: Browser, ask_site: AskSite) -> Iterator[tuple[Page, Watch]]:
    """One booted harness page for the module (Pyodide boots once)."""
    watch = Watch(origin=ask_site.url)
    context = browser.new_context()
    context.on("request", watch.on_request)
    context.route(lambda url: not watch.same_origin(url), lambda route: route.abort())
    page = context.new_page()
    page.on("console", watch.on_console)
    page.on("pageerror", watch.on_page_error)
    page.goto(ask_site.url + HARNESS_PATH)
    page.wait_for_selector(
        "html[data-state=ready], html[data-state=error]", state="attached", timeout=BOOT_TIMEOUT_MS
    )
    assert page.get_attribute("html", "data-state") == "ready", page.get_attribute(
        "html", "data-error"
    )
    try:
        yield page, watch
    finally:
        context.close()


@pytest.fixture(autouse=True)
def clean_page(harness: tuple[Page, Watch]) -> Iterator[None]:
    """Every test: no request left the origin, no console or page error (tests may allow one)."""
    _page, watch = harness
    watch.errors.clear()
    yield
    errors = list(watch.errors)
    watch.errors.clear()
    assert not watch.off_origin, f"requests to other origins: {watch.off_origin}"
    assert not errors, "\n".join(errors)


def ask(
    harness: tuple[Page, Watch],
    scenario: str,
    timeout: float = 30.0,
    stop_after: int = 0,
    corpus: str | None = None,
    count_reads: bool = False,
) -> dict[str, Any]:
    page, _watch = harness
    arguments = f"{scenario!r}, {timeout!r}, {stop_after!r}, {corpus!r}, {count_reads!r}"
    code = f"await ak_ask({arguments})"
    result: dict[str, Any] = json.loads(
        page.evaluate("code => window.akPy.runPythonAsync(code)", code)
    )
    return result


def texts(result: dict[str, Any]) -> list[Any]:
    assert result["contentOk"], "the streamed content does not decode"
    return [p["text"] if p["kind"] == "text" else p["frame"] for p in result["parts"]]


# -- scenarios -------------------------------------------------------------------------------


def test_one_byte_per_chunk_ndjson_with_citation(
    harness: tuple[Page, Watch], ask_site: AskSite
) -> None:
    result = ask(harness, "bytewise-ndjson", corpus="docs", count_reads=True)
    assert result["reads"] > len(ANSWER) // 4, "the body did not arrive in small pieces"
    parts = texts(result)
    assert parts[:2] == ["Grüße aus 日本 ", "🚀 launch"]
    assert parts[2]["componentKey"] == "source-list"
    assert parts[2]["props"]["sources"] == [SOURCE]
    assert result["terminal"] == {"type": "done"}
    path, body = ask_site.observed["bytewise-ndjson"].requests[0]
    assert path == "/ask/bytewise-ndjson?corpus=docs"
    assert json.loads(body) == {
        "protocol": "agentskit.chat.ask",
        "version": 1,
        "sessionId": "e2e-session-1",
        "messages": [{"role": "user", "content": "How do I start?"}],
    }


def test_ndjson_served_as_text_plain_is_decoded(harness: tuple[Page, Watch]) -> None:
    result = ask(harness, "bytewise-text-plain", count_reads=True)
    assert result["reads"] > len(ANSWER) // 4
    assert texts(result)[:2] == ["Grüße aus 日本 ", "🚀 launch"]
    assert result["terminal"] == {"type": "done"}


def test_chunks_split_inside_multibyte_utf8(harness: tuple[Page, Watch]) -> None:
    result = ask(harness, "utf8-split", count_reads=True)
    pieces = sum(isinstance(step, bytes) for step in SCENARIOS["utf8-split"].steps)
    # >= pieces - 2: at least three of the five cuts inside a character reached the page as such
    assert result["reads"] >= pieces - 2, "the cuts inside characters did not reach the page"
    parts = texts(result)
    assert parts[:2] == ["Grüße aus 日本 ", "🚀 launch"]
    assert "\ufffd" not in "".join(p for p in parts if isinstance(p, str))


def test_html_body_is_shown_as_text(harness: tuple[Page, Watch]) -> None:
    result = ask(harness, "html")
    assert "".join(texts(result)) == HTML
    assert result["terminal"] == {"type": "done"}


def test_headers_past_the_deadline_is_an_error_and_disconnects(
    harness: tuple[Page, Watch], ask_site: AskSite
) -> None:
    result = ask(harness, "late-headers", timeout=0.5)
    assert result["types"] == ["error"]
    assert result["terminal"] == {"type": "error", "content": TIMEOUT_MESSAGE}
    assert ask_site.observed["late-headers"].disconnected.wait(DISCONNECT_TIMEOUT_S)


def test_body_trickling_past_the_deadline_completes(harness: tuple[Page, Watch]) -> None:
    result = ask(harness, "trickle", timeout=0.5)
    assert texts(result) == ["slow ", "but ", "steady"]
    assert result["terminal"] == {"type": "done"}


def test_error_mid_stream_keeps_the_partial_answer(harness: tuple[Page, Watch]) -> None:
    result = ask(harness, "error-mid")
    assert texts(result) == ["partial answer"]
    assert result["terminal"] == {"type": "error", "content": "Generation failed."}


def test_513_records_hit_the_record_limit(harness: tuple[Page, Watch]) -> None:
    result = ask(harness, "records-513")
    assert len(texts(result)) == ASSISTANT_CONTENT_MAX_RECORDS
    assert result["terminal"] == {"type": "error", "content": RECORD_LIMIT_MESSAGE}


def test_257_kib_hits_the_byte_limit(harness: tuple[Page, Watch]) -> None:
    result = ask(harness, "bytes-257k")
    assert result["terminal"] == {"type": "error", "content": BYTE_LIMIT_MESSAGE}
    assert 0 < result["bytes"] <= 262_144
    assert set("".join(texts(result))) == {"z"}


def test_unknown_extra_field_and_malformed_lines_are_inert(harness: tuple[Page, Watch]) -> None:
    result = ask(harness, "inert-lines")
    assert texts(result) == ["a", "b"]
    assert result["terminal"] == {"type": "done"}


@pytest.mark.parametrize("scenario", ["oversized-ndjson", "oversized-text-plain"])
def test_oversized_first_line_is_discarded_and_later_events_arrive(
    harness: tuple[Page, Watch], scenario: str
) -> None:
    result = ask(harness, scenario)
    assert texts(result) == ["after"]
    assert result["terminal"] == {"type": "done"}


def test_user_stop_mid_stream_keeps_content_and_disconnects(
    harness: tuple[Page, Watch], ask_site: AskSite
) -> None:
    result = ask(harness, "stop", stop_after=3)
    assert result["types"] == ["text", "text", "text"]
    assert result["terminal"] is None
    assert texts(result) == ["first ", "more ", "more "]
    observed = ask_site.observed["stop"]
    assert observed.disconnected.wait(DISCONNECT_TIMEOUT_S)
    assert not observed.completed.is_set()


def test_non_ok_status(harness: tuple[Page, Watch]) -> None:
    result = ask(harness, "forbidden")
    assert result["types"] == ["error"]
    assert result["terminal"] == {"type": "error", "content": "Ask request failed (403)."}
    _page, watch = harness
    # Chromium itself logs the failed resource load; that one console line is expected.
    watch.errors[:] = [error for error in watch.errors if "status of 403" not in error]


def test_in_page_throughput_and_flat_per_chunk_cost(harness: tuple[Page, Watch]) -> None:
    page, _watch = harness
    report: dict[str, Any] = json.loads(page.evaluate("() => window.akPy.runPython('ak_bench()')"))
    save_artifact("ask_stream_bench.json", report)
    print(
        f"Pyodide Ask path: {report['throughput']['mbPerSecond']:.2f} MB/s; per chunk "
        f"{report['flatness']['chunkMicrosStart']:.0f} us at the start, "
        f"{report['flatness']['chunkMicrosEnd']:.0f} us at the end"
    )
    assert report["throughput"]["emitted"] == ASSISTANT_CONTENT_MAX_RECORDS
    assert report["flatness"]["endToStartRatio"] < 3
