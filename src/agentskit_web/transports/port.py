"""The transport port of the Ask and turn adapters: a POST (and a GET), a streamed body, cancel.

The adapter is pure logic; the I/O lives behind this port so the same code
runs with the browser's `fetch` (transports/fetch_transport.py), with httpx on
CPython (transports/httpx_transport.py) and with scripted fakes in tests.

Contract for implementations:
- `post` resolves once the response *headers* have arrived (the adapter's
  connection deadline covers exactly that await) and may raise on a network
  failure; if the await is cancelled it must release the request upstream.
- `chunks()` yields the body bytes as they arrive, in any sizes (one byte at
  a time, split inside UTF-8 characters); cancelling the task awaiting it is
  allowed at any point.
- `cancel()` tears the request down upstream (the server sees the
  disconnect); it is idempotent and never raises.
"""

from collections.abc import AsyncIterator, Mapping
from typing import Protocol


class AskTransportResponse(Protocol):
    """A response whose headers have arrived and whose body is still streaming."""

    @property
    def status(self) -> int:
        """The HTTP status code."""
        ...

    @property
    def headers(self) -> Mapping[str, str]:
        """Response headers; lookups go through `header_value`, which ignores case."""
        ...

    def chunks(self) -> AsyncIterator[bytes]:
        """The body, chunk by chunk, as the network delivers it."""
        ...

    async def cancel(self) -> None:
        """Abort the request upstream; idempotent, never raises."""
        ...


class AskTransport(Protocol):
    """Sends one request and resolves when the response headers are in."""

    async def post(self, url: str, headers: Mapping[str, str], body: bytes) -> AskTransportResponse:
        """POST `body` to `url`; raises on a network failure before headers."""
        ...


class StaticFileTransport(Protocol):
    """A GET of a file whose name carries its content hash (the static index's parts).

    Unlike the turn adapter's `get` (never from a cache), the file may come from
    any cache, even a stale entry: a content-hashed name never changes meaning.
    """

    async def get_static(self, url: str) -> AskTransportResponse:
        """GET `url` through the caches; resolves when headers are in, raises on a
        network failure before."""
        ...


class TurnTransport(AskTransport, Protocol):
    """The Ask port plus a GET, which the turn adapter uses to resume a session."""

    async def get(self, url: str, headers: Mapping[str, str]) -> AskTransportResponse:
        """GET `url`; resolves when headers are in, raises on a network failure before."""
        ...


def header_value(headers: Mapping[str, str], name: str) -> str:
    """Case-insensitive header lookup ('' when absent); never raises on odd mappings."""
    try:
        direct = headers.get(name)
        if isinstance(direct, str):
            return direct
        wanted = name.lower()
        for key, value in headers.items():
            if isinstance(key, str) and key.lower() == wanted and isinstance(value, str):
                return value
    except Exception:  # a host mapping may raise anything; treat as absent
        return ""
    return ""


class PlatformTransport(TurnTransport, StaticFileTransport, Protocol):
    """What each platform's transport offers: the Ask POST, the turn GET, the static GET."""
