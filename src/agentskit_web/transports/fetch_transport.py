"""Browser Ask transport: `fetch`, the body's ReadableStream reader, an AbortController.

`post` resolves when `fetch` does (headers in); the adapter's connection
deadline cancels that await, which aborts the request. The body is read with
`response.body.getReader().read()`, and each `Uint8Array` goes to the adapter
as bytes (the protocol's `AskEventDecoder` copes with UTF-8 split anywhere).
`cancel()` aborts the controller and cancels the reader, so the server sees
the disconnect.

`js`/`pyodide` are imported lazily, inside the calls that need the real page,
so this module imports (and its logic can be exercised) on CPython with
stand-in objects; browser/ is the only layer allowed to touch them.
"""

import asyncio
import contextlib
from collections.abc import AsyncIterator, Mapping
from typing import Any


def _to_bytes(value: Any) -> bytes:
    """A chunk from `reader.read()`: a Uint8Array proxy in the page, bytes in stand-ins."""
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value)
    to_bytes = getattr(value, "to_bytes", None)
    if callable(to_bytes):
        return bytes(to_bytes())
    return bytes(value.to_py())


# The headers the adapter reads: the body's type, and how long to wait after a 429.
EXPOSED_HEADERS = ("content-type", "retry-after")


def _header(response: Any, name: str) -> str:
    value = response.headers.get(name)
    return value if isinstance(value, str) else ""


class FetchResponse:
    """A `fetch` Response whose headers are in and whose body is still streaming."""

    def __init__(self, response: Any, controller: Any) -> None:
        self._response = response
        self._controller = controller
        self._reader: Any = None
        self._closed = False
        self._headers = {name: _header(response, name) for name in EXPOSED_HEADERS}

    @property
    def status(self) -> int:
        return int(self._response.status)

    @property
    def headers(self) -> Mapping[str, str]:
        return self._headers

    async def chunks(self) -> AsyncIterator[bytes]:
        """`reader.read()` until done; a null body is an empty body."""
        body = self._response.body
        if body is None or not hasattr(body, "getReader"):  # null body (None or jsnull)
            return
        self._reader = body.getReader()
        while True:
            try:
                result = await self._reader.read()
            except asyncio.CancelledError:
                self._abort()
                raise
            if result.done:
                return
            data = _to_bytes(result.value)
            if data:
                yield data

    def _abort(self) -> None:
        with contextlib.suppress(Exception):  # aborting is best effort
            self._controller.abort()

    async def cancel(self) -> None:
        """Abort the request and cancel the reader; idempotent, never raises."""
        if self._closed:
            return
        self._closed = True
        self._abort()
        if self._reader is not None:
            with contextlib.suppress(Exception):  # an aborted stream may reject: closed anyway
                await self._reader.cancel()


class FetchTransport:
    """POST with the page's `fetch`; each request has its own AbortController."""

    def __init__(self, credentials: str = "same-origin") -> None:
        self._credentials = credentials

    async def post(self, url: str, headers: Mapping[str, str], body: bytes) -> FetchResponse:
        """Resolve when `fetch` resolves (headers in); cancelling this await aborts the request."""
        return await self._fetch("POST", url, headers, body)

    async def get(self, url: str, headers: Mapping[str, str]) -> FetchResponse:
        """GET with `fetch` (the turn adapter's resume), streamed like `post`."""
        return await self._fetch("GET", url, headers, None)

    async def get_static(self, url: str) -> FetchResponse:
        """GET a content-hashed file with `cache: "force-cache"`: any cached copy, even a
        stale one, is the right one (its name changes when its bytes do), so a file the
        browser already holds costs no request, and none is needed offline."""
        return await self._fetch("GET", url, {}, None, cache="force-cache")

    async def _fetch(
        self,
        method: str,
        url: str,
        headers: Mapping[str, str],
        body: bytes | None,
        cache: str | None = None,
    ) -> FetchResponse:
        import js
        from pyodide.ffi import to_js

        controller = js.AbortController.new()
        options: dict[str, Any] = {
            "method": method,
            "headers": dict(headers),
            "signal": controller.signal,
            "credentials": self._credentials,
        }
        if cache is not None:
            options["cache"] = cache
        elif method == "GET":
            options["cache"] = "no-store"  # a resumed snapshot must never come from a cache
        if body is not None:
            options["body"] = body.decode("utf-8")
        init = to_js(options, dict_converter=js.Object.fromEntries)
        try:
            response = await js.fetch(url, init)
        except BaseException:
            with contextlib.suppress(Exception):  # aborting is best effort
                controller.abort()
            raise
        return FetchResponse(response, controller)
