"""The Ask adapter: one question to an Ask service, streamed back as ordered assistant content.

PROTOCOL.md section 5 ("Adapter") and API.md. `create_ask_adapter(...)`
returns an adapter; `adapter.create_source(messages, session_id, escalation)`
(alias `send`) returns a source whose async iterator yields stream chunks
`{"type": "text"|"error"|"done", "content"?: str}` and whose `abort()` stops it.

Lifecycle of one source:
1. POST the `agentskit.chat.ask` v1 request through the transport port. The
   connection deadline covers only this await (connect + waiting for
   headers); once headers are in, the body may stream for as long as it likes.
2. A non-OK status ends with "Ask request failed (<status>).". Before that,
   up to `ASK_ERROR_BODY_MAX_BYTES` of its body are read for at most
   `ASK_ERROR_BODY_DEADLINE_SECONDS`, and `source.failure` records the status,
   the `{"error": ...}` envelope if the body is a valid one and `Retry-After`
   (chat/ask/failure.py), so the widget can say what happened.
3. The body goes through `AskBodyReader` (mode sniffing, decoding,
   projection, bounded encoding) chunk by chunk.
4. Whatever happens - timeout, network failure, hostile body - the iterator
   yields one error chunk and ends; nothing is raised out of it. `abort()`
   cancels the request upstream and ends the iterator quietly (no error):
   what was already streamed stays with the host.

The page creates its adapter when the widget mounts, long before the first
question, so the body reader (and the decoders, models and projection behind
it), the request projection and the answer-envelope models are imported when
they are first needed, not when this module is.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Coroutine, Sequence
from typing import TYPE_CHECKING, Any, Final, TypeVar
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from ...protocol.identifiers import is_safe_id
from ...protocol.limits import (
    ASK_CONNECT_DEADLINE_SECONDS,
    ASK_ERROR_BODY_DEADLINE_SECONDS,
    ASK_ERROR_BODY_MAX_BYTES,
    ASK_REQUEST_MAX_BODY_BYTES,
    ASK_REQUEST_MAX_MESSAGES,
    ASK_REQUEST_MESSAGE_MAX_CHARS,
)
from ...protocol.text_metrics import js_is_blank, js_slice, utf8_length
from ...protocol.wire_json import dump_json
from ...transports import AskTransport, AskTransportResponse, default_transport, header_value
from ..once_source import OnceSource, StreamChunk

if TYPE_CHECKING:
    from .failure import AskFailure
    from .projection import ProjectTool


ASK_REQUEST_PROTOCOL: Final = "agentskit.chat.ask"
ASK_REQUEST_VERSION: Final = 1
REQUEST_HEADERS: Final = {"content-type": "application/json"}

TIMEOUT_MESSAGE: Final = "Ask request timed out before the service responded."
NETWORK_MESSAGE: Final = "Ask request failed: the service could not be reached."
INTERRUPTED_MESSAGE: Final = "Ask response was interrupted before it completed."
REUSED_MESSAGE: Final = "Ask source was already streamed."

_T = TypeVar("_T")


def status_message(status: int) -> str:
    """The error for a non-OK response status."""
    return f"Ask request failed ({status})."


def endpoint_with_params(endpoint: str, corpus: str | None, persona: str | None) -> str:
    """`endpoint` with non-blank `corpus`/`persona` query parameters (replacing earlier values).

    A relative endpoint stays relative (same-origin proxies); the query is
    rewritten only when a parameter is added, so an endpoint without hints is
    used exactly as given.
    """
    hints = [
        (name, value)
        for name, value in (("corpus", corpus), ("persona", persona))
        if value is not None and not js_is_blank(value)
    ]
    if not hints:
        return endpoint
    parts = urlsplit(endpoint)
    names = {name for name, _value in hints}
    kept = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k not in names]
    return urlunsplit(parts._replace(query=urlencode([*kept, *hints])))


def _escalation(escalation: object) -> dict[str, Any] | None:
    """A validated `agentskit.chat.answer` envelope with outcome "escalation", or None."""
    if escalation is None:
        return None
    from ...protocol.ask_request import parse_answer_envelope

    try:
        result = parse_answer_envelope(escalation)
        if not result.ok:
            return None
        value = result.envelope
        wire = value.to_wire() if hasattr(value, "to_wire") else value
    except Exception:  # an unusable escalation is simply not sent
        return None
    if not isinstance(wire, dict) or wire.get("outcome") != "escalation":
        return None
    return wire


def _bounded_messages(messages: Sequence[object]) -> list[dict[str, str]]:
    """Projected messages within the message bounds: the last 64, each cut to 16,384 chars."""
    from .projection import project_ask_messages

    projected = project_ask_messages(messages)[-ASK_REQUEST_MAX_MESSAGES:]
    return [
        {"role": item["role"], "content": js_slice(item["content"], ASK_REQUEST_MESSAGE_MAX_CHARS)}
        for item in projected
    ]


def build_ask_request(
    messages: Sequence[object], session_id: str | None = None, escalation: object = None
) -> dict[str, Any]:
    """The `agentskit.chat.ask` v1 request body (wire dict) for a conversation.

    Bounded like the backend bounds it: at most 64 messages of at most 16,384
    chars, and the oldest messages are left out until the body fits in 64 KiB
    (the latest message always stays). The session id is sent only when it is
    a SafeId and the escalation only when it validates, so neither can make
    the request invalid.
    """
    request: dict[str, Any] = {"protocol": ASK_REQUEST_PROTOCOL, "version": ASK_REQUEST_VERSION}
    if session_id is not None and is_safe_id(session_id):
        request["sessionId"] = session_id
    request["messages"] = _bounded_messages(messages)
    deterministic = _escalation(escalation)
    if deterministic is not None:
        request["deterministic"] = deterministic
    request["messages"] = _fit_body(request)
    return request


def _fit_body(request: dict[str, Any]) -> list[dict[str, str]]:
    """The newest messages whose request body fits in 64 KiB (at least the latest one).

    Sizes are measured once per message, so this stays linear in the conversation.
    """
    messages: list[dict[str, str]] = request["messages"]
    frame = utf8_length(dump_json({**request, "messages": []}))
    sizes = [utf8_length(dump_json(message)) for message in messages]
    total = frame + sum(sizes) + max(len(sizes) - 1, 0)  # plus the separating commas
    start = 0
    while len(messages) - start > 1 and total > ASK_REQUEST_MAX_BODY_BYTES:
        total -= sizes[start] + 1
        start += 1
    return messages[start:]


class _Failure(Exception):
    """Ends a stream with one error chunk carrying `message`."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class AskSource(OnceSource):
    """One streamed answer: iterate it (once) for chunks; `abort()` stops it quietly."""

    reused_message = REUSED_MESSAGE

    def __init__(
        self, adapter: AskAdapter, url: str, body: bytes, project_tool: ProjectTool | None
    ) -> None:
        super().__init__()
        self._adapter = adapter
        self._url = url
        self._body = body
        self._project_tool = project_tool
        self._response: AskTransportResponse | None = None
        self.failure: AskFailure | None = None

    def _on_abort(self) -> None:
        """Cancel the request upstream too."""
        response, self._response = self._response, None
        if response is not None:
            _spawn(_quiet_cancel(response))

    async def _stream_once(self) -> AsyncGenerator[StreamChunk, None]:
        chunks = self._chunks()
        try:
            async for chunk in chunks:
                yield chunk
        except _Failure as failure:
            if not self.aborted:
                yield {"type": "error", "content": failure.message}
        finally:
            await chunks.aclose()
            await self._close()

    async def _chunks(self) -> AsyncGenerator[StreamChunk, None]:
        response = await self._connect()
        if response is None:
            return
        if not 200 <= response.status < 300:
            self.failure = await self._read_failure(response)
            raise _Failure(status_message(response.status))
        from .body import AskBodyReader

        reader = AskBodyReader(header_value(response.headers, "content-type"), self._project_tool)
        body = response.chunks()
        try:
            while not reader.finished:
                data = await self._next_chunk(body)
                if data is None:
                    if not self.aborted:
                        for chunk in reader.finish():
                            yield chunk
                    return
                for chunk in reader.feed(data):
                    yield chunk
        finally:
            await _close_iterator(body)

    async def _read_failure(self, response: AskTransportResponse) -> AskFailure:
        """The failure of a non-OK response: its bounded body's envelope, its Retry-After."""
        # Imported on the first failure, not with the adapter: its classes cost boot time.
        from .failure import AskFailure, parse_error_envelope, parse_retry_after

        retry_after = parse_retry_after(header_value(response.headers, "retry-after"))
        body = bytearray()
        chunks = response.chunks()
        try:
            async with asyncio.timeout(ASK_ERROR_BODY_DEADLINE_SECONDS):
                while len(body) <= ASK_ERROR_BODY_MAX_BYTES:
                    data = await self._guarded(_anext_or_none(chunks))
                    if data is None:
                        break
                    body.extend(data)
        except (_Aborted, asyncio.CancelledError):
            if not self.aborted or _being_cancelled():
                raise
        except Exception:  # slow, broken or oversized: no envelope, the status still counts
            body = bytearray(ASK_ERROR_BODY_MAX_BYTES + 1)
        finally:
            await _close_iterator(chunks)
        return AskFailure(response.status, parse_error_envelope(bytes(body)), retry_after)

    async def _connect(self) -> AskTransportResponse | None:
        """POST under the connection-only deadline; None when aborted."""
        if self.aborted:
            return None
        transport = self._adapter.transport
        attempt = asyncio.wait_for(
            transport.post(self._url, dict(REQUEST_HEADERS), self._body),
            self._adapter.connect_timeout,
        )
        try:
            response = await self._guarded(attempt)
        except TimeoutError:
            raise _Failure(TIMEOUT_MESSAGE) from None
        except _Aborted:
            return None
        except Exception:
            raise _Failure(NETWORK_MESSAGE) from None
        if self.aborted:
            await _quiet_cancel(response)
            return None
        self._response = response
        return response

    async def _next_chunk(self, body: AsyncIterator[bytes]) -> bytes | None:
        """The next body chunk; None at the end of the body or after an abort."""
        try:
            return await self._guarded(_anext_or_none(body))
        except _Aborted:
            return None
        except Exception:
            raise _Failure(INTERRUPTED_MESSAGE) from None

    async def _guarded(self, work: Coroutine[Any, Any, _T]) -> _T:
        """Await `work` as a task `abort()` can cancel; raises _Aborted when it did."""
        if self.aborted:
            work.close()
            raise _Aborted
        task = asyncio.ensure_future(work)
        self._pending = task
        try:
            return await task
        except asyncio.CancelledError:
            if self.aborted and not _being_cancelled():
                raise _Aborted from None
            task.cancel()  # the consumer itself was cancelled: pass it on
            raise
        finally:
            self._pending = None

    async def _close(self) -> None:
        response, self._response = self._response, None
        if response is not None:
            await _quiet_cancel(response)


class _Aborted(Exception):
    """The host called abort() while we were waiting."""


def _being_cancelled() -> bool:
    """True when the current task itself has a pending cancellation (not just our inner task)."""
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0


async def _anext_or_none(body: AsyncIterator[bytes]) -> bytes | None:
    try:
        return await body.__anext__()
    except StopAsyncIteration:
        return None


async def _close_iterator(body: AsyncIterator[bytes]) -> None:
    """Finalise the transport's body generator now rather than at garbage collection."""
    aclose = getattr(body, "aclose", None)
    if aclose is None:
        return
    try:
        await aclose()
    except Exception:  # a generator still running elsewhere or already broken: nothing to free
        return


async def _quiet_cancel(response: AskTransportResponse) -> None:
    try:
        await response.cancel()
    except Exception:  # cancel is best effort by contract
        return


_BACKGROUND: set[asyncio.Task[None]] = set()


def _spawn(work: Coroutine[Any, Any, None]) -> None:
    """Run `work` in the background (keeping a reference); drop it if no loop is running."""
    try:
        task = asyncio.get_running_loop().create_task(work)
    except RuntimeError:
        work.close()
        return
    _BACKGROUND.add(task)
    task.add_done_callback(_BACKGROUND.discard)


class AskAdapter:
    """Configuration of one Ask endpoint; every question gets its own `AskSource`."""

    capabilities: Final = {"streaming": True, "structuredOutput": True}

    def __init__(
        self,
        endpoint: str,
        corpus: str | None,
        persona: str | None,
        project_tool: ProjectTool | None,
        transport: AskTransport | None,
        connect_timeout: float,
    ) -> None:
        self.endpoint = endpoint
        self.url = endpoint_with_params(endpoint, corpus, persona)
        self.project_tool = project_tool
        self._transport = transport
        self.connect_timeout = connect_timeout

    @property
    def transport(self) -> AskTransport:
        """The transport port in use (the platform default is created on first use)."""
        if self._transport is None:
            self._transport = default_transport()
        return self._transport

    def warm_up_steps(self) -> list[Callable[[], object]]:
        """What the first answer runs, in steps the page spreads over idle time
        (ask/warm_up.py)."""
        from .warm_up import answer_path_steps

        return answer_path_steps()

    def create_source(
        self,
        messages: Sequence[object],
        session_id: str | None = None,
        escalation: object = None,
    ) -> AskSource:
        """A source streaming the service's answer to `messages` (see module doc)."""
        request = build_ask_request(messages, session_id, escalation)
        body = dump_json(request).encode("utf-8")  # dump_json escapes lone surrogates
        return AskSource(self, self.url, body, self.project_tool)

    send = create_source


def create_ask_adapter(
    *,
    endpoint: str,
    corpus: str | None = None,
    persona: str | None = None,
    project_tool: ProjectTool | None = None,
    transport: AskTransport | None = None,
    connect_timeout: float = ASK_CONNECT_DEADLINE_SECONDS,
) -> AskAdapter:
    """An Ask adapter for `endpoint` (absolute, or relative for a same-origin proxy).

    `connect_timeout` (seconds) bounds connecting and waiting for headers only.
    Raises ValueError for an empty endpoint or a non-positive timeout (host errors).
    """
    if not isinstance(endpoint, str) or js_is_blank(endpoint):
        raise ValueError("endpoint must be a non-empty URL")
    if not connect_timeout > 0:
        raise ValueError("connect_timeout must be positive")
    return AskAdapter(endpoint, corpus, persona, project_tool, transport, connect_timeout)
