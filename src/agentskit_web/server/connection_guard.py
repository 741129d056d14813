"""A read deadline per HTTP request, which uvicorn does not have.

uvicorn (0.54, h11 implementation; httptools behaves the same) arms exactly one
timer per connection: `timeout_keep_alive`, started when a response completes
and cancelled by the next byte that arrives. Nothing bounds how long a client
may take to send a request head or body, so a client that opens a connection
and sends half a header line (or a body one byte a minute) holds the
connection, its buffers and a slot of `limit_concurrency` for as long as it
likes. `h11_max_incomplete_event_size` bounds the *size* of an unfinished head
(16 KiB by default), not its duration.

`GuardedH11Protocol` adds that bound: from the moment a connection opens, or a
response completes, until h11 says the client has sent its whole request
(head and body), at most `read_timeout` seconds may pass. When the deadline
passes, the server answers `408 Request Timeout` if no response was started and
closes the connection. Once a request is read whole the timer is off, so a long
streamed answer is never cut by it; idle keep-alive connections are still
closed by uvicorn's own `timeout_keep_alive`.

Use it with `uvicorn.Config(app, http=guarded_h11_protocol(seconds))`.
"""

import asyncio
from typing import Final

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

REQUEST_READ_TIMEOUT_SECONDS: Final = 15.0
"""Server policy: a request's head and body must arrive within this many seconds
of the connection opening (or the previous response completing)."""

_REQUEST_READ: Final = frozenset({h11.DONE, h11.MUST_CLOSE, h11.CLOSED, h11.ERROR})
"""h11 states of the client side in which nothing more of the request is awaited."""
_TIMEOUT_BODY: Final = b"The request arrived too slowly."
_TIMEOUT_RESPONSE: Final = (
    b"HTTP/1.1 408 Request Timeout\r\n"
    b"content-type: text/plain; charset=utf-8\r\n"
    b"content-length: " + str(len(_TIMEOUT_BODY)).encode() + b"\r\n"
    b"connection: close\r\n\r\n" + _TIMEOUT_BODY
)


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with a deadline on reading each request (see the module doc)."""

    read_timeout: float = REQUEST_READ_TIMEOUT_SECONDS
    _read_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._follow_request()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        self._follow_request()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._follow_request()

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_timer()
        super().connection_lost(exc)

    def _follow_request(self) -> None:
        """Start the deadline when a request is awaited, stop it once one is read whole."""
        if (
            self.conn.their_state in _REQUEST_READ
            or self.transport.is_closing()
            or self.transport.get_protocol() is not self  # upgraded to a WebSocket
        ):
            self._stop_timer()
        elif self._read_timer is None:
            self._read_timer = self.loop.call_later(self.read_timeout, self._deadline_passed)

    def _stop_timer(self) -> None:
        if self._read_timer is not None:
            self._read_timer.cancel()
            self._read_timer = None

    def _deadline_passed(self) -> None:
        self._read_timer = None
        if self.transport.is_closing():
            return
        between_requests = self.conn.their_state is h11.IDLE
        if between_requests or self.cycle is None or not self.cycle.response_started:
            self.transport.write(_TIMEOUT_RESPONSE)
        self.transport.close()


def guarded_h11_protocol(read_timeout: float = REQUEST_READ_TIMEOUT_SECONDS) -> type[H11Protocol]:
    """`GuardedH11Protocol` with its own deadline, for `uvicorn.Config(http=...)`."""
    if read_timeout <= 0:
        raise ValueError("The request read timeout must be positive.")
    return type("GuardedH11Protocol", (GuardedH11Protocol,), {"read_timeout": read_timeout})
