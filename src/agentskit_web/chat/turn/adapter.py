"""The turn adapter: one session of `agentskit.chat.turn` v1 over the transport port.

`create_turn_adapter(endpoint=...)` returns a `TurnAdapter`. It owns one
session at a time (`adapter.session`, a `TurnSession` with a 128-bit random
id from `secrets`, which in Pyodide draws on `crypto.getRandomValues`) and
talks to the reference turn server:

- `session.submit(text, lineage=None)` POSTs one `client.turn.submit` and
  returns a `TurnStream`; `session.resume()` GETs `<endpoint>/<sessionId>`.
- A stream yields `TurnUpdate`s: `snapshot` (an accepted snapshot),
  `reconnecting` (the connection dropped; the stream resumes with a GET after
  a backoff, at most `RESUME_ATTEMPTS` times), `resumed` (a resume GET was
  answered: the connection is back),
  `diagnostic` (a `server.turn.diagnostic` of this session) and `error` (a
  refusal before the stream, or no connection). It ends after a terminal
  snapshot (`complete`, `error`, `idle`), a diagnostic or an error.
- Every line goes through `decode_turn_event` inside the session's
  `TurnSnapshotCursor`: duplicate, stale, foreign-session and malformed lines
  change nothing and are not yielded. Sequences rise across turns, so one
  cursor serves the whole session, resumes included.

For the widget, `adapter.create_source(messages, session_id, escalation)`
speaks the Ask adapter's chunk language (`text` / `error` / `done`), so the
conversation and its renderer work unchanged: each accepted snapshot of the
answer is compared with the previous one and only the records it added are
passed on (snapshots are full projections, the DOM only sees what changed).
When the conversation dropped the server's last answer (retry, regenerate),
the submit carries the lineage that says so; `create_edit_source` is the
conversation's edit of a question and sends the `edit` lineage; `TurnMemory` restores the
conversation from the server on reload and keeps Web Storage as the
offline cache.
"""

import asyncio
import contextlib
import secrets
import string
from collections.abc import AsyncGenerator, Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final, Literal

from ...protocol.dates import format_memory_datetime
from ...protocol.identifiers import is_safe_id
from ...protocol.limits import ASK_CONNECT_DEADLINE_SECONDS
from ...protocol.text_metrics import js_is_blank
from ...protocol.turn import (
    DiagnosticTurnEvent,
    SnapshotTurnEvent,
    TurnSnapshotCursor,
    decode_turn_event,
)
from ...protocol.wire_json import JSON_INVALID, dump_json, parse_json
from ...transports import AskTransportResponse, TurnTransport, default_transport

UpdateKind = Literal["snapshot", "reconnecting", "resumed", "diagnostic", "error"]
REQUEST_HEADERS: Final = {"content-type": "application/json"}
TURN_LINE_MAX_BYTES: Final = 32 * 1024 * 1024
"""A snapshot carries the whole conversation (<= 64 messages of <= 256 KiB content)."""
RESUME_ATTEMPTS: Final = 6
"""Resume GETs after one dropped connection before the stream gives up (15.7 s of backoff)."""
RESUME_BACKOFF_SECONDS: Final = (0.2, 0.5, 1.0, 2.0, 4.0, 8.0)
"""The wait before each resume attempt (the last one repeats if attempts are raised)."""
TERMINAL_STATUSES: Final = frozenset({"complete", "error", "idle"})

NETWORK_MESSAGE: Final = "The chat service could not be reached."
TIMEOUT_MESSAGE: Final = "The chat service did not answer in time."
INTERRUPTED_MESSAGE: Final = "The connection to the chat service was lost and could not be resumed."
CHANGED_MESSAGE: Final = "The answer changed on the server; reload to see it."


@dataclass(frozen=True, slots=True)
class TurnUpdate:
    """One thing a turn stream reports (see the module doc)."""

    kind: UpdateKind
    snapshot: SnapshotTurnEvent | None = None
    code: str | None = None
    message: str | None = None
    retryable: bool = False
    status: int | None = None


SESSION_ID_ALPHABET: Final = string.ascii_letters + string.digits
SESSION_ID_CHARS: Final = 22
"""22 characters of 62 carry 131 random bits (the server's floor for anonymous ids is 128)."""


def new_session_id() -> str:
    """A random SafeId of 22 letters and digits (`secrets`: `crypto.getRandomValues` in a page).

    Not `token_urlsafe`: its `_` is not a SafeId character and its `-` may come first.
    """
    return "".join(secrets.choice(SESSION_ID_ALPHABET) for _ in range(SESSION_ID_CHARS))


def new_turn_id() -> str:
    return "t-" + secrets.token_hex(8)


def build_submit(
    session_id: str,
    turn_id: str,
    text: str,
    lineage: Mapping[str, str] | None = None,
    now: datetime | None = None,
) -> dict[str, Any]:
    """A `client.turn.submit` wire event; `lineage` is the additive optional payload field."""
    payload: dict[str, Any] = {"input": text}
    if lineage is not None:
        payload["lineage"] = dict(lineage)
    moment = now if now is not None else datetime.now(UTC)
    return {
        "protocol": "agentskit.chat.turn",
        "version": 1,
        "eventId": "e-" + secrets.token_hex(8),
        "sessionId": session_id,
        "turnId": turn_id,
        "sequence": 0,
        "emittedAt": format_memory_datetime(moment),
        "event": "client.turn.submit",
        "payload": payload,
    }


class TurnLineReader:
    """NDJSON lines out of arbitrary byte chunks; an oversized line is dropped through its end."""

    def __init__(self, max_line_bytes: int = TURN_LINE_MAX_BYTES) -> None:
        self._buffer = bytearray()
        self._max = max_line_bytes
        self._discarding = False

    def feed(self, data: bytes) -> list[bytes]:
        lines: list[bytes] = []
        start = 0
        while True:
            end = data.find(b"\n", start)
            if end < 0:
                break
            piece = data[start:end]
            if self._discarding:
                self._discarding = False
            elif len(self._buffer) + len(piece) <= self._max:
                self._buffer += piece
                if self._buffer.strip():
                    lines.append(bytes(self._buffer))
            self._buffer.clear()
            start = end + 1
        rest = data[start:]
        if not self._discarding:
            if len(self._buffer) + len(rest) > self._max:
                self._buffer.clear()
                self._discarding = True
            else:
                self._buffer += rest
        return lines

    def finish(self) -> list[bytes]:
        tail = bytes(self._buffer)
        self._buffer.clear()
        return [tail] if tail.strip() and not self._discarding else []


async def _error_of(response: AskTransportResponse) -> TurnUpdate:
    """A refusal's `{"error": <turn diagnostic>}` body as an error update (status kept)."""
    body = bytearray()
    try:
        async for chunk in response.chunks():
            body += chunk
            if len(body) > 65_536:
                break
    except Exception:  # an unreadable error body still reports the status
        pass
    parsed = parse_json(bytes(body)) if body else JSON_INVALID
    error = parsed.get("error") if isinstance(parsed, dict) else None
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        code = error.get("code")
        return TurnUpdate(
            "error",
            code=code if isinstance(code, str) else None,
            message=error["message"][:4096],
            retryable=error.get("retryable") is True,
            status=response.status,
        )
    return TurnUpdate(
        "error", message=f"Chat request failed ({response.status}).", status=response.status
    )


class TurnStream:
    """One submit (or resume) of a session: iterate for `TurnUpdate`s; `abort()` stops quietly."""

    def __init__(
        self,
        session: "TurnSession",
        body: bytes | None,
        turn_id: str | None,
        attempts: int | None = None,
    ) -> None:
        self._session = session
        self._attempts = session.adapter.resume_attempts if attempts is None else attempts
        self._body = body
        self.turn_id = turn_id
        self._task: asyncio.Future[Any] | None = None
        self._response: AskTransportResponse | None = None
        self.aborted = False
        self._started = False

    def __aiter__(self) -> AsyncGenerator[TurnUpdate, None]:
        return self.stream()

    def abort(self) -> None:
        """Stop following (the server's turn goes on; a later resume shows its end)."""
        self.aborted = True
        if self._task is not None and not self._task.done():
            self._task.cancel()

    async def stream(self) -> AsyncGenerator[TurnUpdate, None]:
        if self._started:
            return
        self._started = True
        adapter = self._session.adapter
        attempt = 0
        body = self._body
        while not self.aborted:
            response: AskTransportResponse | None = None
            try:
                response = await self._guard(self._connect(body), adapter.connect_timeout)
            except TimeoutError:
                failure: str | None = TIMEOUT_MESSAGE
            except Exception:
                failure = NETWORK_MESSAGE
            else:
                failure = None
            if response is None:
                if self.aborted:
                    return
                if body is not None or attempt >= self._attempts:
                    gave_up = body is None and attempt > 0  # a resume that never came back
                    message = INTERRUPTED_MESSAGE if gave_up else failure or NETWORK_MESSAGE
                    yield TurnUpdate("error", message=message)
                    return
            elif not 200 <= response.status < 300:
                update = await _error_of(response)
                await _quiet_cancel(response)
                if body is None and attempt > 0 and update.status == 404:
                    update = TurnUpdate("error", message=INTERRUPTED_MESSAGE, status=404)
                yield update
                return
            else:
                if body is None and attempt > 0:
                    yield TurnUpdate("resumed")
                self._response = response
                ended = False
                async for update in self._read(response):
                    yield update
                    if update.kind != "snapshot" or self._terminal(update.snapshot):
                        ended = True
                await _quiet_cancel(response)
                self._response = None
                if ended or self.aborted:
                    return
            # The connection dropped before the turn ended: resume from the latest snapshot.
            body = None
            if attempt >= self._attempts:
                yield TurnUpdate("error", message=INTERRUPTED_MESSAGE)
                return
            yield TurnUpdate("reconnecting")
            delay = adapter.backoff[min(attempt, len(adapter.backoff) - 1)]
            attempt += 1
            try:
                await self._guard(asyncio.sleep(delay), None)
            except Exception:
                return

    @staticmethod
    def _terminal(snapshot: SnapshotTurnEvent | None) -> bool:
        """The session is settled (whichever turn the snapshot is of: a later turn ended ours)."""
        return snapshot is None or snapshot.payload.status in TERMINAL_STATUSES

    async def _connect(self, body: bytes | None) -> AskTransportResponse:
        adapter = self._session.adapter
        headers = {**adapter.headers}
        if body is not None:
            headers.update(REQUEST_HEADERS)
            return await adapter.transport.post(adapter.endpoint, headers, body)
        return await adapter.transport.get(self._session.resume_url, headers)

    async def _guard(self, work: Any, timeout: float | None) -> Any:
        task = asyncio.ensure_future(asyncio.wait_for(work, timeout) if timeout else work)
        self._task = task
        try:
            return await task
        except asyncio.CancelledError:
            if self.aborted:
                return None
            raise
        finally:
            self._task = None

    async def _read(self, response: AskTransportResponse) -> AsyncGenerator[TurnUpdate, None]:
        reader = TurnLineReader()
        chunks = response.chunks()
        try:
            while True:
                try:
                    data = await self._guard(_anext_or_none(chunks), None)
                except Exception:
                    return  # a dropped connection: the caller resumes
                if data is None:
                    for line in reader.finish():
                        update = self._session.accept(line)
                        if update is not None:
                            yield update
                    return
                for line in reader.feed(data):
                    update = self._session.accept(line)
                    if update is not None:
                        yield update
        finally:
            aclose = getattr(chunks, "aclose", None)
            if aclose is not None:
                with contextlib.suppress(Exception):  # already finished or broken
                    await aclose()


async def _anext_or_none(body: Any) -> bytes | None:
    try:
        value: bytes = await body.__anext__()
        return value
    except StopAsyncIteration:
        return None


async def _quiet_cancel(response: AskTransportResponse) -> None:
    try:
        await response.cancel()
    except Exception:  # best effort by contract
        return


class TurnSession:
    """One conversation on the server: its id, its cursor, its latest accepted snapshot."""

    def __init__(self, adapter: "TurnAdapter", session_id: str) -> None:
        self.adapter = adapter
        self.id = session_id
        self.cursor = TurnSnapshotCursor(session_id)
        self.accepted = 0
        self.ignored = 0

    @property
    def snapshot(self) -> SnapshotTurnEvent | None:
        return self.cursor.snapshot

    @property
    def resume_url(self) -> str:
        return self.adapter.endpoint.rstrip("/") + "/" + self.id

    def accept(self, line: bytes | str) -> TurnUpdate | None:
        """Apply one line: an update when it advanced the session, None when it was inert."""
        if self.cursor.apply(line):
            self.accepted += 1
            return TurnUpdate("snapshot", snapshot=self.cursor.snapshot)
        result = decode_turn_event(line)
        event = result.event if result.ok else None
        latest = self.cursor.snapshot
        if (
            isinstance(event, DiagnosticTurnEvent)
            and event.session_id == self.id
            and (latest is None or event.sequence > latest.sequence)
        ):
            payload = event.payload
            return TurnUpdate(
                "diagnostic",
                code=payload.code,
                message=payload.message,
                retryable=payload.retryable,
            )
        self.ignored += 1
        return None

    def submit(
        self, text: str, lineage: Mapping[str, str] | None = None, turn_id: str | None = None
    ) -> TurnStream:
        """POST one submit; `lineage` asks for retry, regenerate or edit."""
        turn = turn_id or self.adapter.turn_ids()
        body = dump_json(build_submit(self.id, turn, text, lineage)).encode("utf-8")
        return TurnStream(self, body, turn)

    def resume(self, attempts: int | None = None) -> TurnStream:
        """GET the latest snapshot (and, while the turn runs on that server, the rest of it).

        `attempts` bounds the reconnects (default: the adapter's `resume_attempts`).
        """
        return TurnStream(self, None, None, attempts)


class TurnAdapter:
    """The turn endpoint's configuration and the current session."""

    capabilities: Final = {"streaming": True, "structuredOutput": True, "snapshots": True}

    def __init__(
        self,
        endpoint: str,
        transport: TurnTransport | None,
        connect_timeout: float,
        headers: Mapping[str, str],
        resume_attempts: int,
        backoff: Sequence[float],
        turn_ids: Callable[[], str] = new_turn_id,
    ) -> None:
        self.endpoint = endpoint
        self.turn_ids = turn_ids
        self._transport = transport
        self.connect_timeout = connect_timeout
        self.headers = dict(headers)
        self.resume_attempts = resume_attempts
        self.backoff = tuple(backoff) or (0.0,)
        self.session = TurnSession(self, new_session_id())
        self._conversation: str | None = None
        self.on_update: Any = None

    @property
    def transport(self) -> TurnTransport:
        if self._transport is None:
            self._transport = default_transport()
        return self._transport

    def use_session(self, session_id: str) -> TurnSession:
        """Continue a known session (a reload); a new cursor, since nothing was accepted here."""
        if not is_safe_id(session_id):
            raise ValueError("session_id must be a SafeId")
        if session_id != self.session.id:
            self.session = TurnSession(self, session_id)
        return self.session

    def new_session(self) -> TurnSession:
        self.session = TurnSession(self, new_session_id())
        self._conversation = None
        return self.session

    # -- the widget's chunk interface -------------------------------------------------

    def create_source(
        self, messages: Sequence[object], session_id: str | None = None, escalation: object = None
    ) -> "TurnChatSource":
        """A source in the Ask adapter's chunk language (see the module doc)."""
        history = self._history(messages, session_id)
        return TurnChatSource(
            self, _question(history), _lineage_for(history, self.session.snapshot)
        )

    send = create_source

    def create_edit_source(
        self, messages: Sequence[object], session_id: str | None = None, escalation: object = None
    ) -> "TurnChatSource":
        """The conversation replaced a question (the last of `messages`) and dropped what
        followed: the submit carries the `edit` lineage naming the server's question at the
        same place (a plain submit when the server's conversation does not match)."""
        history = self._history(messages, session_id)
        return TurnChatSource(
            self, _question(history), _edit_lineage(history, self.session.snapshot)
        )

    def _history(self, messages: Sequence[object], session_id: str | None) -> list[dict[str, Any]]:
        if session_id is not None and self._conversation not in (None, session_id):
            self.new_session()
        if session_id is not None:
            self._conversation = session_id
        return [m for m in (_wire(m) for m in messages) if m.get("role") in ("user", "assistant")]


def _question(history: Sequence[Mapping[str, Any]]) -> str:
    question = history[-1].get("content") if history else None
    return question if isinstance(question, str) and not js_is_blank(question) else ""


def _wire(message: object) -> dict[str, Any]:
    if isinstance(message, Mapping):
        return dict(message)
    to_memory = getattr(message, "to_memory", None)
    if callable(to_memory):
        value = to_memory()
        return dict(value) if isinstance(value, Mapping) else {}
    return {}


def _turn_of(message: Mapping[str, Any]) -> str | None:
    metadata = message.get("metadata")
    value = metadata.get("turnId") if isinstance(metadata, Mapping) else None
    return value if isinstance(value, str) else None


def _lineage_for(
    history: Sequence[Mapping[str, Any]], snapshot: SnapshotTurnEvent | None
) -> dict[str, str] | None:
    """Retry or regenerate when the conversation dropped the server's last answer.

    The server's messages are the conversation's plus its last answer, which
    the conversation removed to ask again: a failed answer is retried, a
    complete one regenerated. Anything else is a plain submit.
    """
    if snapshot is None:
        return None
    server = [m.to_wire() for m in snapshot.payload.messages]
    if len(server) < 2 or len(history) != len(server) - 1:
        return None
    answer, question = server[-1], server[-2]
    if answer.get("role") != "assistant" or question.get("role") != "user":
        return None
    if history[-1].get("role") != "user" or history[-1].get("content") != question.get("content"):
        return None
    parent = _turn_of(answer)
    if parent is None:
        return None
    if answer.get("status") == "error":
        return {"operation": "retry", "parentTurnId": parent, "sourceMessageId": question["id"]}
    return {"operation": "regenerate", "parentTurnId": parent, "sourceMessageId": answer["id"]}


def _edit_lineage(
    history: Sequence[Mapping[str, Any]], snapshot: SnapshotTurnEvent | None
) -> dict[str, str] | None:
    """`edit` of the server's question at the edited question's place.

    The page's messages and the server's run in parallel (same order, roles
    and questions; the page's ids are its own), so the question the reader
    edited is the server's message at the same index, provided everything
    before it matches.
    """
    if snapshot is None or not history:
        return None
    server = [m.to_wire() for m in snapshot.payload.messages]
    place = len(history) - 1
    if place >= len(server) or server[place].get("role") != "user":
        return None
    for mine, theirs in zip(history[:place], server[:place], strict=True):
        if mine.get("role") != theirs.get("role"):
            return None
        if mine.get("role") == "user" and mine.get("content") != theirs.get("content"):
            return None
    parent = _turn_of(server[place])
    if parent is None:
        return None
    return {"operation": "edit", "parentTurnId": parent, "sourceMessageId": server[place]["id"]}


def _answer_content(snapshot: SnapshotTurnEvent, turn_id: str | None) -> str | None:
    messages = snapshot.payload.messages
    if not messages:
        return None
    last = messages[-1]
    if last.role != "assistant":
        return None
    if turn_id is not None and snapshot.turn_id != turn_id:
        return None
    return last.content


class TurnChatSource:
    """One answer for the conversation: Ask-style chunks derived from full snapshots."""

    def __init__(self, adapter: TurnAdapter, text: str, lineage: dict[str, str] | None) -> None:
        self._adapter = adapter
        self._text = text
        self._lineage = lineage
        self._stream: TurnStream | None = None
        self.reconnects = 0

    def __aiter__(self) -> AsyncGenerator[dict[str, str], None]:
        return self.stream()

    def abort(self) -> None:
        if self._stream is not None:
            self._stream.abort()

    async def stream(self) -> AsyncGenerator[dict[str, str], None]:
        if not self._text:
            yield {"type": "error", "content": "The question is empty."}
            return
        session = self._adapter.session
        stream = session.submit(self._text, self._lineage)
        self._stream = stream
        shown = ""
        async for update in stream:
            notify = self._adapter.on_update
            if callable(notify):
                with contextlib.suppress(Exception):  # a host callback must not break the stream
                    notify(update)
            if update.kind == "reconnecting":
                self.reconnects += 1
                yield {"type": "reconnecting"}
                continue
            if update.kind == "resumed":
                yield {"type": "resumed"}
                continue
            if update.kind in ("error", "diagnostic"):
                yield {"type": "error", "content": update.message or NETWORK_MESSAGE}
                return
            snapshot = update.snapshot
            if snapshot is None:
                continue
            content = _answer_content(snapshot, stream.turn_id)
            if content is not None and content != shown:
                if not content.startswith(shown):
                    yield {"type": "error", "content": CHANGED_MESSAGE}
                    return
                yield {"type": "text", "content": content[len(shown) :]}
                shown = content
            status = snapshot.payload.status
            if status == "complete":
                yield {"type": "done"}
                return
            if status == "error":
                error = snapshot.payload.error
                yield {"type": "error", "content": error.message if error else NETWORK_MESSAGE}
                return


def create_turn_adapter(
    *,
    endpoint: str,
    transport: TurnTransport | None = None,
    connect_timeout: float = ASK_CONNECT_DEADLINE_SECONDS,
    headers: Mapping[str, str] | None = None,
    session_id: str | None = None,
    resume_attempts: int = RESUME_ATTEMPTS,
    backoff: Sequence[float] = RESUME_BACKOFF_SECONDS,
    turn_ids: Callable[[], str] | None = None,
) -> TurnAdapter:
    """A turn adapter for `endpoint` (e.g. `/api/turn`); `headers` go on every request
    (an `authorization` bearer token, say). `session_id` continues a known session;
    `turn_ids` makes turn ids (default: `t-` + 64 random bits)."""
    if not isinstance(endpoint, str) or js_is_blank(endpoint):
        raise ValueError("endpoint must be a non-empty URL")
    if not connect_timeout > 0:
        raise ValueError("connect_timeout must be positive")
    if resume_attempts < 0:
        raise ValueError("resume_attempts must be >= 0")
    adapter = TurnAdapter(
        endpoint,
        transport,
        connect_timeout,
        headers or {},
        resume_attempts,
        backoff,
        new_turn_id if turn_ids is None else turn_ids,
    )
    if session_id is not None:
        adapter.use_session(session_id)
    return adapter


__all__ = [
    "TurnAdapter",
    "TurnChatSource",
    "TurnLineReader",
    "TurnSession",
    "TurnStream",
    "TurnUpdate",
    "build_submit",
    "create_turn_adapter",
    "new_session_id",
]
