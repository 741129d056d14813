"""CPython transport for the Ask adapter: httpx streaming (tests, the CLI, tooling).

httpx is imported only when this transport is created, so the pure chat
layer imports nothing network-related (and Pyodide never needs httpx).
Timeouts are left to the adapter (its connection-only deadline): httpx's own
read timeout would cut a long answer that streams slowly but steadily.
"""

import contextlib
from collections.abc import AsyncIterator, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import httpx


class HttpxResponse:
    """A streaming httpx response behind the transport port."""

    def __init__(
        self, response: "httpx.Response", owned_client: "httpx.AsyncClient | None"
    ) -> None:
        self._response = response
        self._client = owned_client
        self._closed = False

    @property
    def status(self) -> int:
        return self._response.status_code

    @property
    def headers(self) -> Mapping[str, str]:
        return self._response.headers  # case-insensitive mapping

    async def chunks(self) -> AsyncIterator[bytes]:
        """Body bytes as they arrive (content-encoding undone)."""
        async for data in self._response.aiter_bytes():
            if data:
                yield data

    async def cancel(self) -> None:
        """Close the connection (the server sees the disconnect); idempotent, never raises."""
        if self._closed:
            return
        self._closed = True
        with contextlib.suppress(Exception):  # closing is best effort
            await self._response.aclose()
        if self._client is not None:
            with contextlib.suppress(Exception):
                await self._client.aclose()


class HttpxTransport:
    """POST with `httpx.AsyncClient(...).send(..., stream=True)`.

    With no `client`, each request gets its own client, closed with the
    response, so an aborted answer leaves no pooled connection behind.
    `base_url` lets a relative endpoint (a same-origin proxy path) be used.
    """

    def __init__(self, client: "httpx.AsyncClient | None" = None, base_url: str = "") -> None:
        self._client = client
        self._base_url = base_url

    def _new_client(self) -> "httpx.AsyncClient":
        import httpx

        options: dict[str, Any] = {"timeout": httpx.Timeout(None)}
        if self._base_url:
            options["base_url"] = self._base_url
        return httpx.AsyncClient(**options)

    async def post(self, url: str, headers: Mapping[str, str], body: bytes) -> HttpxResponse:
        """Resolve when headers are in; cancelling this await releases the connection."""
        return await self._send("POST", url, headers, body)

    async def get(self, url: str, headers: Mapping[str, str]) -> HttpxResponse:
        """GET, streamed like `post` (the turn adapter's resume)."""
        return await self._send("GET", url, headers, None)

    async def get_static(self, url: str) -> HttpxResponse:
        """GET a content-hashed file (httpx keeps no cache: always the network)."""
        return await self._send("GET", url, {}, None)

    async def _send(
        self, method: str, url: str, headers: Mapping[str, str], body: bytes | None
    ) -> HttpxResponse:
        client = self._client or self._new_client()
        owned = client if self._client is None else None
        try:
            request = client.build_request(method, url, headers=dict(headers), content=body)
            response = await client.send(request, stream=True)
        except BaseException:
            if owned is not None:
                await owned.aclose()
            raise
        return HttpxResponse(response, owned)
