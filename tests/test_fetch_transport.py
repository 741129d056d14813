"""The browser fetch transport's wiring, on CPython with stand-ins for `js` and `pyodide.ffi`.

The real thing runs in Chromium (e2e); here the point is the contract: the
request init handed to `fetch`, bytes out of `reader.read()`, AbortController
on cancel and on a cancelled wait for headers, and the adapter on top of it.
"""

import asyncio
import sys
import types
from collections.abc import Iterator
from typing import Any

import pytest

from agentskit_web.chat import create_ask_adapter
from agentskit_web.transports.fetch_transport import FetchResponse, FetchTransport


class Controller:
    def __init__(self) -> None:
        self.signal = object()
        self.aborted = 0

    def abort(self) -> None:
        self.aborted += 1


class Result:
    def __init__(self, value: Any, done: bool) -> None:
        self.value = value
        self.done = done


class Uint8Array:
    """Stand-in for a Uint8Array proxy: `to_bytes()` like Pyodide's JsBuffer."""

    def __init__(self, data: bytes) -> None:
        self.data = data

    def to_bytes(self) -> bytes:
        return self.data


class Reader:
    def __init__(self, chunks: list[bytes], stall: bool = False) -> None:
        self.chunks = list(chunks)
        self.stall = stall
        self.cancelled = 0

    async def read(self) -> Result:
        if not self.chunks:
            if self.stall:
                await asyncio.sleep(30)
            return Result(None, True)
        return Result(Uint8Array(self.chunks.pop(0)), False)

    async def cancel(self) -> None:
        self.cancelled += 1
        raise RuntimeError("TypeError: stream is locked or errored")  # cancel may reject


class Body:
    def __init__(self, reader: Reader) -> None:
        self.reader = reader

    def getReader(self) -> Reader:  # the JavaScript name
        return self.reader


class Headers:
    def __init__(self, values: dict[str, str]) -> None:
        self.values = values

    def get(self, name: str) -> str | None:
        return self.values.get(name.lower())


class Response:
    def __init__(self, status: int, content_type: str | None, reader: Reader | None) -> None:
        self.status = status
        self.headers = Headers({} if content_type is None else {"content-type": content_type})
        self.body = None if reader is None else Body(reader)


class FakeJs(types.ModuleType):
    def __init__(self, response: Response, header_delay: float = 0.0) -> None:
        super().__init__("js")
        self.response = response
        self.header_delay = header_delay
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.controllers: list[Controller] = []
        self.AbortController = types.SimpleNamespace(new=self._new_controller)
        self.Object = types.SimpleNamespace(fromEntries=dict)

    def _new_controller(self) -> Controller:
        controller = Controller()
        self.controllers.append(controller)
        return controller

    async def fetch(self, url: str, init: dict[str, Any]) -> Response:
        self.calls.append((url, init))
        await asyncio.sleep(self.header_delay)
        return self.response


@pytest.fixture
def fake_page(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """Install stand-in `js` and `pyodide.ffi` modules; yields a setter for the page's `js`."""
    ffi = types.ModuleType("pyodide.ffi")
    ffi.to_js = lambda value, dict_converter=None: value  # type: ignore[attr-defined]
    pyodide = types.ModuleType("pyodide")
    pyodide.ffi = ffi  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "pyodide", pyodide)
    monkeypatch.setitem(sys.modules, "pyodide.ffi", ffi)

    def install(js: FakeJs) -> FakeJs:
        monkeypatch.setitem(sys.modules, "js", js)
        return js

    yield install


NDJSON = b'{"type":"text","delta":"h\xc3\xa9"}\n{"type":"done"}\n'


def test_post_hands_fetch_a_post_init_and_reads_bytes(fake_page: Any) -> None:
    reader = Reader([NDJSON[:20], NDJSON[20:]])
    js = fake_page(FakeJs(Response(200, "application/x-ndjson", reader)))

    async def scenario() -> tuple[int, str, list[bytes]]:
        response = await FetchTransport().post(
            "/ask?corpus=d", {"content-type": "application/json"}, b'{"a":"\xc3\xa9"}'
        )
        data = [chunk async for chunk in response.chunks()]
        return response.status, response.headers["content-type"], data

    status, content_type, data = asyncio.run(scenario())
    url, init = js.calls[0]
    assert url == "/ask?corpus=d"
    assert init["method"] == "POST"
    assert init["headers"] == {"content-type": "application/json"}
    assert init["body"] == '{"a":"\u00e9"}'
    assert init["signal"] is js.controllers[0].signal
    assert init["credentials"] == "same-origin"
    assert (status, content_type) == (200, "application/x-ndjson")
    assert b"".join(data) == NDJSON


def test_cancel_aborts_and_cancels_the_reader_once(fake_page: Any) -> None:
    reader = Reader([b"x"], stall=True)
    js = fake_page(FakeJs(Response(200, None, reader)))

    async def scenario() -> FetchResponse:
        response = await FetchTransport().post("/a", {}, b"{}")
        iterator = response.chunks()
        await iterator.__anext__()
        await response.cancel()
        await response.cancel()
        return response

    response = asyncio.run(scenario())
    assert js.controllers[0].aborted == 1
    assert reader.cancelled == 1
    assert response.headers == {"content-type": "", "retry-after": ""}


def test_null_body_is_empty(fake_page: Any) -> None:
    fake_page(FakeJs(Response(204, None, None)))

    async def scenario() -> list[bytes]:
        response = await FetchTransport().post("/a", {}, b"{}")
        return [chunk async for chunk in response.chunks()]

    assert asyncio.run(scenario()) == []


def test_adapter_over_fetch_streams_and_deadline_aborts(fake_page: Any) -> None:
    js = fake_page(
        FakeJs(Response(200, "text/plain", Reader([NDJSON[i : i + 1] for i in range(len(NDJSON))])))
    )
    adapter = create_ask_adapter(endpoint="/ask", transport=FetchTransport())

    async def collect() -> list[dict[str, str]]:
        return [c async for c in adapter.create_source([{"role": "user", "content": "q"}])]

    chunks = asyncio.run(collect())
    assert chunks[-1] == {"type": "done"} and "h\u00e9" in chunks[0]["content"]

    slow = fake_page(FakeJs(Response(200, None, Reader([])), header_delay=5.0))
    adapter = create_ask_adapter(endpoint="/ask", transport=FetchTransport(), connect_timeout=0.05)
    chunks = asyncio.run(collect())
    assert chunks[0]["type"] == "error"
    assert slow.controllers[0].aborted == 1
    assert js is not slow


def test_abort_while_reading_aborts_the_fetch(fake_page: Any) -> None:
    reader = Reader([b'{"type":"text","delta":"a"}\n'], stall=True)
    js = fake_page(FakeJs(Response(200, "application/x-ndjson", reader)))
    source = create_ask_adapter(endpoint="/ask", transport=FetchTransport()).create_source(
        [{"role": "user", "content": "q"}]
    )

    async def scenario() -> list[dict[str, str]]:
        consumer = asyncio.ensure_future(_collect(source))
        await asyncio.sleep(0.05)
        source.abort()
        return await asyncio.wait_for(consumer, 2)

    chunks = asyncio.run(scenario())
    assert [c["type"] for c in chunks] == ["text"]
    assert js.controllers[0].aborted >= 1


async def _collect(source: Any) -> list[dict[str, str]]:
    return [c async for c in source]


def test_get_static_may_use_any_cached_copy_and_the_turn_get_never_does(fake_page: Any) -> None:
    """A content-hashed index part: `force-cache` (offline, a cached copy answers); the turn
    adapter's resume GET stays `no-store`."""
    js = fake_page(FakeJs(Response(200, "application/json", Reader([b"{}"]))))

    async def scenario() -> list[bytes]:
        response = await FetchTransport().get_static("/agentskit/index/part.0123456789abcdef.json")
        data = [chunk async for chunk in response.chunks()]
        await FetchTransport().get("/api/turn/s-1", {})
        return data

    assert asyncio.run(scenario()) == [b"{}"]
    (url, init), (_turn_url, turn_init) = js.calls
    assert url == "/agentskit/index/part.0123456789abcdef.json"
    assert init["method"] == "GET" and "body" not in init
    assert init["cache"] == "force-cache" and init["credentials"] == "same-origin"
    assert turn_init["cache"] == "no-store"
