"""The reference turn server (`agentskit.chat.turn` v1, PROTOCOL.md section 1) beside /api/ask.

`POST <turn path>` takes one `client.turn.submit` and answers with NDJSON turn
events; `GET <turn path>/<sessionId>` answers the session's latest snapshot
(and, while this process is still running that session's turn, every later
one until the turn ends). Both run inside the Ask app and reuse its parts:
authentication (with the failed-auth limiter), the per-client rate limit and
in-flight cap, the bounded, deadline-guarded body read, retrieval, the
generator and metrics (`AskEndpoint`).

Submit, in order (errors before the stream are JSON `{"error": <turn diagnostic>}`):

1. POST else 405 REQUEST_METHOD_NOT_ALLOWED; JSON media type else 415;
2. authentication, the failed-auth limiter, the in-flight cap and the rate
   limit exactly as for Ask (401 ASK_UNAUTHORIZED, 403 ASK_FORBIDDEN,
   429 ASK_RATE_LIMITED, in the turn diagnostic shape);
3. the body within 64 KiB (413 REQUEST_TOO_LARGE) and the body deadline
   (408 SERVER_TIMEOUT); strict JSON else 400 REQUEST_INVALID_JSON; a valid
   `client.turn.submit` (and a valid optional `payload.lineage`) else 400
   REQUEST_INVALID_EVENT; an anonymous caller's session id must be at least
   22 characters (128 random bits) else 400 REQUEST_INVALID_EVENT;
4. the session (keyed by site, owner and id) is loaded; a live `activeTurn`
   lease gives 409 SESSION_BUSY, an expired one is settled first as an
   `indeterminate` terminal turn; lineage must name a parent turn and source
   message of this session (400 REQUEST_INVALID_EVENT);
5. the first snapshot (the user message and an empty streaming answer) is
   saved with a compare-and-set that also takes the lease; losing it gives
   409 SESSION_CONFLICT; a store failure 500 SERVER_INTERNAL;
6. 200 NDJSON: that snapshot, then one snapshot per (coalesced) change, each
   saved first, so `sequence` is the session cursor after the save. The turn
   ends with status `complete`, or `error` with CHAT_TURN_FAILED. A save that
   loses the compare-and-set, or an internal failure, ends the stream with a
   `server.turn.diagnostic` whose sequence is the last cursor + 1.

The turn runs detached from the response: a client that goes away stops
receiving, not the turn, which runs to its end (bounded by the site's
request timeout) and is saved, so `GET` returns the same final state. See
docs/design/turn.md for this, the lease and the coalescing choice.
"""

import asyncio
import collections
import contextlib
import logging
import math
import os
import secrets
import socket
import traceback
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Final

import anyio
from starlette.datastructures import Headers, QueryParams
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from ..answering.chunk import Passage
from ..protocol.content import ASSISTANT_CONTENT_PREFIX, AssistantContentEncoder
from ..protocol.content import decode_assistant_content as _decode_content
from ..protocol.dates import format_memory_datetime
from ..protocol.diagnostics import ProtocolError
from ..protocol.identifiers import is_safe_id
from ..protocol.limits import ASSISTANT_CONTENT_MAX_RECORDS
from ..protocol.text_metrics import js_length
from ..protocol.turn import (
    DerivedLineage,
    SubmitTurnEvent,
    create_snapshot_event,
    decode_turn_event,
    encode_turn_event,
)
from ..protocol.wire_json import JSON_INVALID, dump_json, parse_json
from .ask_app import (
    ASK_BACKEND_ANSWER_MAX_CHARS,
    MESSAGES,
    AskEndpoint,
    ShutdownWatch,
    _Admission,
    _ClientGone,
    _close_quietly,
    _is_json_media,
    _raw,
    _Reject,
)
from .generators import ChatTurn, GenerationRequest
from .metrics import MetricRecorder
from .persistence import SESSION_RECORD_MAX_MESSAGES, PersistenceError
from .turn_errors import (
    CHAT_TURN_FAILED,
    CHAT_TURN_INTERRUPTED,
    REQUEST_INVALID_EVENT,
    REQUEST_INVALID_JSON,
    REQUEST_METHOD_NOT_ALLOWED,
    REQUEST_TOO_LARGE,
    REQUEST_UNSUPPORTED_MEDIA_TYPE,
    SERVER_INTERNAL,
    SERVER_TIMEOUT,
    SESSION_BUSY,
    SESSION_CONFLICT,
    TURN_ERROR_HEADERS,
    TURN_STREAM_HEADERS,
    TurnErrorSpec,
)
from .turn_limits import (
    CAPABILITY_ID_MIN_CHARS,
    TURN_BUSY_RETRY_AFTER_SECONDS,
    TURN_INPUT_MAX_CHARS,
    TURN_SESSION_MAX_BYTES,
    RunningTurns,
    is_capability_id,
)
from .turn_session_port import (
    LEASE_HOLDER_MAX_CHARS,
    StoreFull,
    TurnSessionKey,
    TurnSessionRow,
    TurnSessionStorePort,
)
from .turn_store import TurnSessionStore

_LOG: Final = logging.getLogger("agentskit_web.turn")

DEFAULT_TURN_PATH: Final = "/api/turn"
TURN_LEASE_SECONDS: Final = 10.0
"""Server policy: an `activeTurn` lease lasts this long; every save renews it, and a turn
that has not saved for a third of it (a model thinking) renews it with a snapshot of its
own. Shorter than the adapter's resume window (15.7 s), so a reader whose instance died
is told the answer was interrupted before the adapter gives up resuming."""
TURN_LEASE_RENEW_FRACTION: Final = 1 / 3
"""A running turn renews its lease when this fraction of it passed without a save."""
TURN_SNAPSHOT_INTERVAL_SECONDS: Final = 0.016
"""Server policy: at most one streaming snapshot per this interval (about one frame)."""
ANONYMOUS_SESSION_ID_MIN_CHARS: Final = CAPABILITY_ID_MIN_CHARS
"""An anonymous session id is a capability: see `turn_limits.is_capability_id`."""
ANONYMOUS_OWNER: Final = "anonymous"
TURN_TEXT_RECORD_BUDGET: Final = ASSISTANT_CONTENT_MAX_RECORDS - 2
"""Text records streamed one per delta; past them the rest of the text waits for the final
snapshot, merged into one record, and the source list takes the last one."""
SESSION_DEFINITION_REVISION: Final = 1

WEAK_SESSION_ID: Final = TurnErrorSpec(
    400,
    "REQUEST_INVALID_EVENT",
    "Anonymous session ids need at least 128 random bits (22 or more random characters).",
    False,
)
INPUT_TOO_LONG: Final = TurnErrorSpec(
    400,
    "REQUEST_INVALID_EVENT",
    f"The input is longer than {TURN_INPUT_MAX_CHARS} characters.",
    False,
)
SESSION_TOO_LARGE: Final = TurnErrorSpec(
    413,
    "SESSION_TOO_LARGE",
    f"This conversation has reached its size limit ({TURN_SESSION_MAX_BYTES // 1024} KiB); "
    "start a new conversation.",
    False,
)
SERVER_OVERLOADED: Final = TurnErrorSpec(
    503, "SERVER_OVERLOADED", "The server is busy; try again shortly.", True
)
BAD_LINEAGE: Final = TurnErrorSpec(
    400,
    "REQUEST_INVALID_EVENT",
    "The lineage does not name a turn and message of this session that it may replace.",
    False,
)
TURN_ID_USED: Final = TurnErrorSpec(
    400, "REQUEST_INVALID_EVENT", "This turn id was already used in this session.", False
)
SESSION_NOT_FOUND: Final = TurnErrorSpec(404, "SESSION_NOT_FOUND", "No such session.", False)
GET_NOT_ALLOWED: Final = TurnErrorSpec(
    405, "REQUEST_METHOD_NOT_ALLOWED", "Only GET is supported.", False
)


class _TurnReject(Exception):
    """A refusal before the stream: status, turn diagnostic, extra headers."""

    def __init__(
        self,
        status: int,
        diagnostic: Mapping[str, Any],
        headers: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(diagnostic.get("code"))
        self.status = status
        self.diagnostic = dict(diagnostic)
        self.headers = dict(headers or {})

    @classmethod
    def of(cls, spec: TurnErrorSpec, **headers: str) -> "_TurnReject":
        assert spec.status is not None
        return cls(spec.status, spec.to_wire(), headers)


def _from_ask(reject: _Reject) -> _TurnReject:
    """An Ask admission refusal in the turn table's terms (auth and rate codes kept)."""
    mapped = {
        413: REQUEST_TOO_LARGE,
        408: SERVER_TIMEOUT,
        400: REQUEST_INVALID_JSON,
        500: SERVER_INTERNAL,
    }.get(reject.status)
    if mapped is not None:
        return _TurnReject(reject.status, mapped.to_wire(), reject.headers)
    diagnostic = {
        "version": 1,
        "code": reject.code,
        "message": reject.message,
        "retryable": reject.retryable,
    }
    return _TurnReject(reject.status, diagnostic, reject.headers)


# --------------------------------------------------------------------------- time and ids


def _now_ms(endpoint: AskEndpoint) -> int:
    return int(endpoint.clock.wall() * 1000)


def _wall_iso(endpoint: AskEndpoint) -> str:
    return format_memory_datetime(datetime.fromtimestamp(endpoint.clock.wall(), UTC))


def _event_id() -> str:
    return "evt-" + secrets.token_hex(8)


def _estimate_tokens(chars: int) -> int:
    """Generators report no token counts; usage is estimated as one token per 4 chars."""
    return math.ceil(chars / 4)


def _turn_of(message: Mapping[str, Any]) -> str | None:
    metadata = message.get("metadata")
    value = metadata.get("turnId") if isinstance(metadata, Mapping) else None
    return value if isinstance(value, str) else None


def _plain_text(content: str) -> str:
    """An assistant message as the generator's history sees it: its text parts."""
    if not content.startswith("\x1e"):
        return content
    decoded = _decode_content(content)
    if not decoded.ok:
        return ""
    return "\n".join(p["text"] for p in decoded.parts if p["kind"] == "text").strip()


# --------------------------------------------------------------------------- a running turn


RUN_RETAINED_LINES: Final = 2
"""Lines a running turn keeps for followers: the latest snapshot and a closing diagnostic.

Every snapshot is the whole session, so a follower that falls behind loses
nothing by skipping to the newest; keeping every line sent (as before) held
the whole response in memory until the turn ended."""


@dataclass(slots=True)
class _TurnRun:
    """A running turn's newest lines; followers wait for newer ones until `done`."""

    key: TurnSessionKey
    client: str = ""
    lines: collections.deque[bytes] = field(
        default_factory=lambda: collections.deque(maxlen=RUN_RETAINED_LINES)
    )
    count: int = 0
    """Lines pushed so far; the retained ones are the last `len(lines)` of them."""
    done: bool = False
    _changed: anyio.Event = field(default_factory=anyio.Event)

    def push(self, line: str) -> None:
        self.lines.append((line + "\n").encode())
        self.count += 1
        self._signal()

    def finish(self) -> None:
        self.done = True
        self._signal()

    def _signal(self) -> None:
        changed, self._changed = self._changed, anyio.Event()
        changed.set()

    async def follow(self, start: int) -> AsyncIterator[bytes]:
        """Lines from number `start` on, skipping to the oldest retained one when behind."""
        index = start
        while True:
            while index < self.count:
                first = self.count - len(self.lines)
                index = max(index, first)
                yield self.lines[index - first]
                index += 1
            if self.done:
                return
            await self._changed.wait()


@dataclass(slots=True)
class _TurnState:
    """What a turn writes on every save: the session, the messages, the answer so far."""

    key: TurnSessionKey
    envelope: dict[str, Any]
    base: list[dict[str, Any]]
    assistant: dict[str, Any]
    turn_id: str
    lineage: dict[str, Any]
    question: str
    history: tuple[ChatTurn, ...]
    prompt_chars: int
    encoder: AssistantContentEncoder = field(default_factory=AssistantContentEncoder)
    content: list[str] = field(default_factory=lambda: [ASSISTANT_CONTENT_PREFIX])
    answer_chars: int = 0
    pending: list[str] = field(default_factory=list)
    save_seconds: float = 0.0
    """How long the last save took: the snapshot clock waits at least this long."""
    saved_at: float = 0.0
    """When the last save ended (monotonic): the lease is renewed when none came for a while."""
    commit_lock: anyio.Lock = field(default_factory=anyio.Lock)
    """The coalescer and the lease renewal both save: one compare-and-set at a time."""

    @property
    def cursor(self) -> int:
        return int(self.envelope["cursor"])

    def messages(self) -> list[dict[str, Any]]:
        return [*self.base, {**self.assistant, "content": "".join(self.content)}]


@dataclass(frozen=True, slots=True)
class _Submit:
    principal_owner: str
    event: SubmitTurnEvent
    lineage: dict[str, Any]


class TurnEndpoint:
    """`POST <path>` and `GET <path>/<sessionId>` of the turn protocol, over an `AskEndpoint`."""

    def __init__(
        self,
        ask: AskEndpoint,
        store: TurnSessionStorePort,
        *,
        lease_seconds: float = TURN_LEASE_SECONDS,
        snapshot_interval: float = TURN_SNAPSHOT_INTERVAL_SECONDS,
        running: RunningTurns | None = None,
        session_max_bytes: int = TURN_SESSION_MAX_BYTES,
        instance_id: str | None = None,
    ) -> None:
        if lease_seconds <= 0 or snapshot_interval < 0 or session_max_bytes < 1:
            raise ValueError(
                "The lease and session bound must be positive and the snapshot interval >= 0."
            )
        self.ask = ask
        self.store = store
        self.lease_seconds = lease_seconds
        self.snapshot_interval = snapshot_interval
        self.running = running or RunningTurns(per_client=ask.max_streams_per_client)
        self.session_max_bytes = session_max_bytes
        self.instance_id = (instance_id or _default_instance_id())[:LEASE_HOLDER_MAX_CHARS]
        """Who holds the leases this endpoint takes (stored with each leased session)."""
        self._runs: dict[TurnSessionKey, _TurnRun] = {}
        self._tasks: set[asyncio.Task[None]] = set()

    # -- ASGI apps ------------------------------------------------------------

    async def submit_app(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        headers = Headers(scope=scope)
        cors = self.ask._cors_headers(headers)
        if self.ask._is_preflight(scope, headers, cors):
            await self.ask._send_preflight(send, cors)
            return
        admission = _Admission()
        reservation = _Reservation()
        try:
            try:
                run = await self._admit_submit(scope, receive, headers, admission, reservation)
            except _TurnReject as reject:
                if not admission.body_read:
                    reject.headers.setdefault("connection", "close")
                await _send_error(send, reject, cors)
                return
            except _ClientGone:
                return
            await self._follow(run, 0, receive, send, cors)
        finally:
            self.ask._release_slot(admission)
            if reservation.client is not None:  # admitted but never started
                self.running.release(reservation.client)

    async def resume_app(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        headers = Headers(scope=scope)
        cors = self.ask._cors_headers(headers)
        try:
            run, line = await self._admit_resume(scope, headers)
        except _TurnReject as reject:
            await _send_error(send, reject, cors)
            return
        if run is not None and run.count:
            await self._follow(run, run.count - 1, receive, send, cors)
            return
        body = (line + "\n").encode()
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": _raw({**TURN_STREAM_HEADERS, **cors}),
            }
        )
        await send({"type": "http.response.body", "body": body})

    def routes(self, path: str = DEFAULT_TURN_PATH) -> list[Route]:
        """The two routes (every method reaches the endpoint, which answers 405 itself)."""
        return [
            Route(path, endpoint=_Asgi(self.submit_app)),
            Route(path + "/{session_id}", endpoint=_Asgi(self.resume_app)),
        ]

    # -- admission ------------------------------------------------------------

    async def _authenticate(self, scope: Scope, headers: Headers) -> Any:
        query = QueryParams(scope.get("query_string", b""))
        try:
            return await self.ask._authenticate(scope, headers, query)
        except _Reject as reject:
            raise _from_ask(reject) from None

    def _owner(self, principal: Any, session_id: str) -> str | None:
        """The key's owner, or None when an anonymous id is too weak to be a capability."""
        if principal.anonymous:
            if not is_capability_id(session_id):
                return None
            return ANONYMOUS_OWNER
        return f"sub:{principal.subject}"

    async def _admit_submit(
        self,
        scope: Scope,
        receive: Receive,
        headers: Headers,
        admission: _Admission,
        reservation: "_Reservation",
    ) -> _TurnRun:
        if scope["method"] != "POST":
            raise _TurnReject.of(REQUEST_METHOD_NOT_ALLOWED, allow="POST")
        if not _is_json_media(headers.get("content-type")):
            raise _TurnReject.of(REQUEST_UNSUPPORTED_MEDIA_TYPE)
        principal = await self._authenticate(scope, headers)
        try:
            self.ask._take_slot(principal.rate_key, admission)
            decision = self.ask.rate_limiter.take(principal.rate_key)
            if not decision.allowed:
                raise _Reject(
                    429,
                    "ASK_RATE_LIMITED",
                    "rate",
                    retryable=True,
                    headers={"retry-after": str(decision.retry_after_seconds)},
                )
            self._reserve(principal.rate_key, reservation)
            body = await self.ask._read_body(receive, headers)
        except _Reject as reject:
            raise _from_ask(reject) from None
        admission.body_read = True
        submit = self._parse_submit(body, principal)
        return await self._start(submit, reservation)

    def _reserve(self, client: str, reservation: "_Reservation") -> None:
        """Count this turn against the running-turn caps (held until the turn's last save)."""
        refusal = self.running.take(client)
        if refusal is None:
            reservation.client = client
            return
        retry = {"retry-after": str(refusal.retry_after)}
        if refusal.status == 429:
            raise _Reject(429, "ASK_RATE_LIMITED", "streams", retryable=True, headers=retry)
        raise _TurnReject.of(SERVER_OVERLOADED, **retry)

    def _parse_submit(self, body: bytes, principal: Any) -> _Submit:
        raw = parse_json(body)
        if raw is JSON_INVALID:
            raise _TurnReject.of(REQUEST_INVALID_JSON)
        result = decode_turn_event(raw)
        if not result.ok or not isinstance(result.event, SubmitTurnEvent):
            raise _TurnReject.of(REQUEST_INVALID_EVENT)
        event: SubmitTurnEvent = result.event
        if js_length(event.payload.input) > TURN_INPUT_MAX_CHARS:
            raise _TurnReject.of(INPUT_TOO_LONG)
        lineage: dict[str, Any] = {"operation": "submit"}
        payload = raw.get("payload") if isinstance(raw, dict) else None
        offered = payload.get("lineage") if isinstance(payload, dict) else None
        if offered is not None:
            lineage = _lineage_or_none(offered) or {}
            if not lineage:
                raise _TurnReject.of(REQUEST_INVALID_EVENT)
        owner = self._owner(principal, event.session_id)
        if owner is None:
            raise _TurnReject.of(WEAK_SESSION_ID)
        return _Submit(owner, event, lineage)

    async def _admit_resume(self, scope: Scope, headers: Headers) -> tuple[_TurnRun | None, str]:
        if scope["method"] != "GET":
            raise _TurnReject.of(GET_NOT_ALLOWED, allow="GET")
        principal = await self._authenticate(scope, headers)
        decision = self.ask.rate_limiter.take(principal.rate_key)
        if not decision.allowed:
            raise _from_ask(
                _Reject(
                    429,
                    "ASK_RATE_LIMITED",
                    "rate",
                    retryable=True,
                    headers={"retry-after": str(decision.retry_after_seconds)},
                )
            )
        session_id = scope.get("path_params", {}).get("session_id", "")
        owner = self._owner(principal, session_id) if is_safe_id(session_id) else None
        if owner is None:
            raise _TurnReject.of(SESSION_NOT_FOUND)
        key = TurnSessionKey(self.ask.site.site_id, owner, session_id)
        row = await self._load(key)
        if row is None:
            raise _TurnReject.of(SESSION_NOT_FOUND)
        run = self._runs.get(key)
        if run is not None:
            return run, row.last_snapshot
        if self._lease_expired(row):
            settled = await self._settle_expired(key, row)
            if settled is not None:
                return None, settled.last_snapshot
            row = await self._load(key) or row
        return None, row.last_snapshot

    async def _load(self, key: TurnSessionKey) -> TurnSessionRow | None:
        try:
            return await self.store.load(key)
        except PersistenceError:
            raise _TurnReject.of(SERVER_INTERNAL) from None

    async def _save(
        self,
        key: TurnSessionKey,
        envelope: dict[str, Any],
        messages: list[dict[str, Any]],
        line: str,
        expected: int | None,
    ) -> bool:
        return await self.store.save(
            key, envelope, messages, line, expected, holder=self.instance_id
        )

    def _lease_expired(self, row: TurnSessionRow) -> bool:
        active = row.envelope.active_turn
        return active is not None and active.expires_at <= _now_ms(self.ask)

    # -- the lease and settling a dead turn -------------------------------------

    async def _settle_expired(
        self, key: TurnSessionKey, row: TurnSessionRow
    ) -> TurnSessionRow | None:
        """End an expired lease's turn as interrupted; None if another writer won.

        The lease's holder stopped saving (it died, or stalled past the lease):
        its unfinished answer is marked `error`, the snapshot says
        CHAT_TURN_INTERRUPTED (retryable: the reader gets Retry), and the
        envelope records the turn as `indeterminate`. One compare-and-set, so
        of several instances settling at once one writes it; the holder, if it
        is still alive, loses its next save and stops.
        """
        envelope = row.envelope.to_wire()
        active = envelope.pop("activeTurn")
        turn_id = active["turnId"]
        envelope["terminalTurns"] = _terminal(envelope, turn_id, "indeterminate")
        envelope["cursor"] = row.cursor + 1
        envelope["updatedAt"] = _wall_iso(self.ask)
        messages = [
            {**m, "status": "error"}
            if _turn_of(m) == turn_id and m.get("status") == "streaming"
            else m
            for m in row.messages
        ]
        line = self._snapshot_line(
            key.session_id,
            turn_id,
            envelope["cursor"],
            messages,
            "error",
            {"promptTokens": 0, "completionTokens": 0, "totalTokens": 0},
            _last_lineage(row.last_snapshot),
            CHAT_TURN_INTERRUPTED.to_wire(),
        )
        try:
            saved = await self._save(key, envelope, messages, line, row.cursor)
        except PersistenceError:
            raise _TurnReject.of(SERVER_INTERNAL) from None
        if not saved:
            return None
        return TurnSessionRow(row.envelope.model_validate(envelope), tuple(messages), line)

    # -- starting a turn ----------------------------------------------------------

    async def _start(self, submit: _Submit, reservation: "_Reservation") -> _TurnRun:
        event = submit.event
        key = TurnSessionKey(
            self.ask.site.site_id,
            submit.principal_owner,
            event.session_id,
            client_key=reservation.client or "",
        )
        row = await self._load(key)
        if row is not None and row.envelope.active_turn is not None:
            if not self._lease_expired(row) or key in self._runs:
                raise _TurnReject.of(SESSION_BUSY)
            row = await self._settle_expired(key, row)
            if row is None:
                raise _TurnReject.of(SESSION_CONFLICT)
        messages = list(row.messages) if row is not None else []
        turn_id = event.turn_id
        if row is not None and _turn_used(row, turn_id):
            raise _TurnReject.of(TURN_ID_USED)
        base, question = self._apply_lineage(messages, submit, turn_id)
        created = _wall_iso(self.ask)
        if question is None:
            question = event.payload.input
            base.append(
                {
                    "id": f"u-{turn_id}"[:128],
                    "role": "user",
                    "content": question,
                    "status": "complete",
                    "createdAt": created,
                    "metadata": {"turnId": turn_id},
                }
            )
        base = _bounded(base)
        if len(dump_json(base).encode()) > self.session_max_bytes:
            raise _TurnReject.of(SESSION_TOO_LARGE)
        history = tuple(
            ChatTurn(
                m["role"], _plain_text(m["content"]) if m["role"] == "assistant" else m["content"]
            )
            for m in base[:-1]
            if m["role"] in ("user", "assistant") and m.get("status") == "complete"
        )
        envelope = self._envelope(event.session_id, row, turn_id)
        state = _TurnState(
            key=key,
            envelope=envelope,
            base=base,
            assistant={
                "id": f"a-{turn_id}"[:128],
                "role": "assistant",
                "content": "",
                "status": "streaming",
                "createdAt": created,
                "metadata": {"turnId": turn_id},
            },
            turn_id=turn_id,
            lineage=submit.lineage,
            question=question,
            history=history,
            prompt_chars=js_length(question) + sum(js_length(t.content) for t in history),
        )
        line = self._state_line(state, "streaming")
        try:
            saved = await self._save(
                key, envelope, state.messages(), line, row.cursor if row else None
            )
        except StoreFull:
            raise _TurnReject.of(
                SERVER_OVERLOADED, **{"retry-after": str(TURN_BUSY_RETRY_AFTER_SECONDS)}
            ) from None
        except (PersistenceError, ValueError) as error:
            _log_failure("the first save failed", key.session_id, turn_id, error)
            raise _TurnReject.of(SERVER_INTERNAL) from None
        if not saved:
            raise _TurnReject.of(SESSION_CONFLICT)
        run = _TurnRun(key, client=reservation.client or "")
        reservation.client = None  # the run releases it when the turn ends
        run.push(line)
        self._runs[key] = run
        task = asyncio.get_running_loop().create_task(self._run(state, run))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return run

    def _apply_lineage(
        self, messages: list[dict[str, Any]], submit: _Submit, turn_id: str
    ) -> tuple[list[dict[str, Any]], str | None]:
        """The messages the new turn starts from, and the question when lineage fixes it."""
        lineage = submit.lineage
        operation = lineage["operation"]
        if operation == "submit":
            return messages, None
        parent = lineage["parentTurnId"]
        source = lineage["sourceMessageId"]
        index = next((i for i, m in enumerate(messages) if m["id"] == source), None)
        if index is None or _turn_of(messages[index]) != parent:
            raise _TurnReject.of(BAD_LINEAGE)
        target = messages[index]
        if operation == "edit":
            if target["role"] != "user":
                raise _TurnReject.of(BAD_LINEAGE)
            return messages[:index], None
        if operation == "regenerate":
            # The last answer, which must be the parent turn's.
            if target["role"] != "assistant" or index != len(messages) - 1:
                raise _TurnReject.of(BAD_LINEAGE)
            question = _question_before(messages, index)
            if question is None:
                raise _TurnReject.of(BAD_LINEAGE)
            return messages[:index], question
        # retry: the source is the failed turn's user message; its answer failed (or is missing).
        after = messages[index + 1 :]
        failed = all(m.get("status") == "error" for m in after) and len(after) <= 1
        if target["role"] != "user" or not failed:
            raise _TurnReject.of(BAD_LINEAGE)
        return messages[: index + 1], target["content"]

    def _envelope(
        self, session_id: str, row: TurnSessionRow | None, turn_id: str
    ) -> dict[str, Any]:
        previous = row.envelope.to_wire() if row is not None else None
        envelope: dict[str, Any] = {
            "protocol": "agentskit.chat.session",
            "version": 1,
            "sessionId": session_id,
            "definitionId": self.ask.site.assistant_id,
            "definitionRevision": SESSION_DEFINITION_REVISION,
            "updatedAt": _wall_iso(self.ask),
            "cursor": (row.cursor if row is not None else 0) + 1,
            "activeTurn": {"turnId": turn_id, "expiresAt": self._lease_end()},
            "confirmations": [],
        }
        if previous is not None and previous.get("terminalTurns"):
            envelope["terminalTurns"] = previous["terminalTurns"]
        return envelope

    def _lease_end(self) -> int:
        return _now_ms(self.ask) + int(self.lease_seconds * 1000)

    # -- snapshots ------------------------------------------------------------

    def _snapshot_line(
        self,
        session_id: str,
        turn_id: str,
        sequence: int,
        messages: Sequence[Mapping[str, Any]],
        status: Any,
        usage: Mapping[str, int],
        lineage: Mapping[str, Any] | None,
        error: Mapping[str, Any] | None = None,
    ) -> str:
        event = create_snapshot_event(
            event_id=_event_id(),
            session_id=session_id,
            turn_id=turn_id,
            sequence=sequence,
            emitted_at=_wall_iso(self.ask),
            messages=messages,
            status=status,
            usage=usage,
            lineage=lineage,
            error=error,
        )
        return encode_turn_event(event)

    def _state_line(self, state: _TurnState, status: str, error: Any = None) -> str:
        prompt = _estimate_tokens(state.prompt_chars)
        completion = _estimate_tokens(state.answer_chars)
        return self._snapshot_line(
            state.key.session_id,
            state.turn_id,
            state.cursor,
            state.messages(),
            status,
            {
                "promptTokens": prompt,
                "completionTokens": completion,
                "totalTokens": prompt + completion,
            },
            state.lineage,
            error,
        )

    async def _commit(
        self,
        state: _TurnState,
        run: _TurnRun,
        status: str,
        error: Any = None,
        outcome: str = "completed",
    ) -> bool:
        """Save the next state with a compare-and-set, then send it; False when the CAS lost.

        One commit at a time per turn (the coalescer and the lease renewal both
        commit), and shielded from cancellation: a save that reached the store
        is always recorded in `state`, so the shutdown's final commit never
        loses its compare-and-set to the turn's own last save.
        """
        saved = False
        async with state.commit_lock:
            if status == "streaming" and _ended(state):
                return True  # a renewal that came after the final save: nothing to renew
            with anyio.CancelScope(shield=True):
                saved = await self._commit_now(state, run, status, error, outcome)
        return saved

    async def _commit_now(
        self, state: _TurnState, run: _TurnRun, status: str, error: Any, outcome: str
    ) -> bool:
        expected = state.cursor
        envelope = dict(state.envelope)
        envelope["cursor"] = expected + 1
        envelope["updatedAt"] = _wall_iso(self.ask)
        if status == "streaming":
            envelope["activeTurn"] = {"turnId": state.turn_id, "expiresAt": self._lease_end()}
        else:
            envelope.pop("activeTurn", None)
            envelope["terminalTurns"] = _terminal(envelope, state.turn_id, outcome)
        previous = state.envelope
        state.envelope = envelope
        line = self._state_line(state, status, error)
        started = self.ask.clock.monotonic()
        saved = await self._save(state.key, envelope, state.messages(), line, expected)
        state.saved_at = self.ask.clock.monotonic()
        state.save_seconds = state.saved_at - started
        if not saved:
            state.envelope = previous
            return False
        run.push(line)
        return True

    # -- the turn itself ----------------------------------------------------------

    async def _run(self, state: _TurnState, run: _TurnRun) -> None:
        recorder = MetricRecorder(
            self.ask.metrics,
            site_id=self.ask.site.site_id,
            corpus_id=self.ask.site.corpus_id,
            request_id="turn-" + secrets.token_hex(8),
            wall_clock=self.ask.clock.wall,
        )
        try:
            ok = await self._produce_guarded(state, run, recorder)
            if not ok:
                _LOG.warning(
                    "turn lost its session to another writer: session=%s turn=%s",
                    state.key.session_id,
                    state.turn_id,
                )
                self._diagnostic(run, state, SESSION_CONFLICT)
        except Exception as error:
            _log_failure("turn failed", state.key.session_id, state.turn_id, error)
            self._diagnostic(run, state, SERVER_INTERNAL)
        finally:
            run.finish()
            self._runs.pop(state.key, None)
            if run.client:
                self.running.release(run.client)

    async def _produce_guarded(
        self, state: _TurnState, run: _TurnRun, recorder: MetricRecorder
    ) -> bool:
        """`_produce` beside the lease renewal and the shutdown deadline; False: CAS lost.

        At the deadline (SIGTERM, `--shutdown-deadline`) the answer stops where
        it is and the turn ends as interrupted, saved, so every instance and
        every resume shows it, rather than being cut off with its lease left
        to expire.
        """
        interrupted = lost = False
        state.saved_at = self.ask.clock.monotonic()
        async with anyio.create_task_group() as group:

            async def renew() -> None:
                nonlocal lost
                every = self.lease_seconds * TURN_LEASE_RENEW_FRACTION
                while True:
                    idle = self.ask.clock.monotonic() - state.saved_at
                    if idle < every:
                        await anyio.sleep(every - idle)
                        continue
                    if not await self._commit(state, run, "streaming"):
                        lost = True
                        group.cancel_scope.cancel()
                        return

            async def watch_shutdown(shutdown: ShutdownWatch) -> None:
                nonlocal interrupted
                await shutdown.wait_expired()
                interrupted = True
                group.cancel_scope.cancel()

            group.start_soon(renew)
            if self.ask.shutdown is not None:
                group.start_soon(watch_shutdown, self.ask.shutdown)
            ok = False
            try:
                ok = await self._produce(state, run, recorder)
            finally:
                group.cancel_scope.cancel()
        if lost:
            return False
        if interrupted:  # the turn may have saved its final snapshot just before
            return True if _ended(state) else await self._interrupt(state, run)
        return ok

    async def _interrupt(self, state: _TurnState, run: _TurnRun) -> bool:
        """End the turn now: what was written so far, status error, CHAT_TURN_INTERRUPTED."""
        with contextlib.suppress(ProtocolError):  # a tail that no longer fits is dropped
            self._flush_text(state, final=True)
        state.assistant["status"] = "error"
        return await self._commit(
            state, run, "error", CHAT_TURN_INTERRUPTED.to_wire(), outcome="indeterminate"
        )

    def _diagnostic(self, run: _TurnRun, state: _TurnState, spec: TurnErrorSpec) -> None:
        event = {
            "protocol": "agentskit.chat.turn",
            "version": 1,
            "eventId": _event_id(),
            "sessionId": state.key.session_id,
            "turnId": state.turn_id,
            "sequence": state.cursor + 1,
            "emittedAt": _wall_iso(self.ask),
            "event": "server.turn.diagnostic",
            "payload": spec.to_wire(),
        }
        run.push(encode_turn_event(event))

    async def _produce(self, state: _TurnState, run: _TurnRun, recorder: MetricRecorder) -> bool:
        deadline = self.ask.clock.monotonic() + self.ask.site.request_timeout
        try:
            passages = await self.ask._retrieve(state.question, recorder, deadline)
        except _Reject as reject:
            if reject.code == "ASK_NO_GROUNDED_SOURCES":
                _append(state, state.encoder.encode_text(MESSAGES["no_sources"]))
                return await self._finish(state, run, "complete")
            return await self._finish(state, run, "error")
        failed = await self._generate(state, run, passages, deadline)
        if failed is None:
            return False
        if failed:
            return await self._finish(state, run, "error")
        try:
            _append(state, state.encoder.encode(_sources_part(passages, state.turn_id)))
        except ProtocolError:
            return await self._finish(state, run, "error")
        return await self._finish(state, run, "complete")

    async def _finish(self, state: _TurnState, run: _TurnRun, status: str) -> bool:
        state.assistant["status"] = "complete" if status == "complete" else "error"
        error = CHAT_TURN_FAILED.to_wire() if status == "error" else None
        return await self._commit(state, run, status, error)

    async def _generate(
        self,
        state: _TurnState,
        run: _TurnRun,
        passages: Sequence[Passage],
        deadline: float,
    ) -> bool | None:
        """Stream the answer into coalesced snapshots: False ok, True failed, None CAS lost.

        The generator runs in its own task and hands deltas over a queue, so a
        pending piece of text is flushed when its interval is over even if the
        next delta is slow to come (cancelling a generator mid-`__anext__`
        would close it).
        """
        request = GenerationRequest(state.question, tuple(passages), state.history)
        state.prompt_chars += sum(js_length(p.text) for p in passages)
        budget = min(self.ask.site.generation_timeout, deadline - self.ask.clock.monotonic())
        sender, receiver = anyio.create_memory_object_stream[str | BaseException](math.inf)

        async def pump() -> None:
            stream = self.ask.generator.stream(request)
            async with sender:
                try:
                    async for delta in stream:
                        if isinstance(delta, str) and delta:
                            await sender.send(delta)
                except Exception as error:
                    await sender.send(error)
                finally:
                    await _close_quietly(stream)

        try:
            with anyio.fail_after(max(budget, 0.0)):
                async with anyio.create_task_group() as group:
                    group.start_soon(pump)
                    async with receiver:
                        outcome = await self._coalesce(state, run, receiver)
                    group.cancel_scope.cancel()
        except TimeoutError:
            return True
        if outcome is not False:
            return outcome
        if state.answer_chars == 0:
            return True
        try:
            self._flush_text(state, final=True)
        except ProtocolError:  # a merged tail that no longer fits the content bounds
            return True
        return False

    async def _coalesce(self, state: _TurnState, run: _TurnRun, receiver: Any) -> bool | None:
        """Deltas into snapshots on a clock; see `_generate`.

        The interval is counted from the end of the last save and is at least
        as long as that save took, so there is at most one snapshot per
        `snapshot_interval` whatever a save costs, and saving never takes more
        than about half of a turn's time however large the session is (with
        the interval counted from the save's start, a save slower than the
        interval made every queued delta its own snapshot).
        """
        last_flush = -math.inf
        held = False  # past the record budget: text waits for the end, no timer needed
        while True:
            interval = max(self.snapshot_interval, state.save_seconds)
            wait = None
            if state.pending and not held:
                wait = max(0.0, interval - (self.ask.clock.monotonic() - last_flush))
            item: str | BaseException | None = None
            with anyio.move_on_after(wait):
                try:
                    item = await receiver.receive()
                except anyio.EndOfStream:
                    return False
            if isinstance(item, BaseException):
                return True
            if item is not None:
                state.answer_chars += js_length(item)
                if state.answer_chars > ASK_BACKEND_ANSWER_MAX_CHARS:
                    return True
                state.pending.append(item)
                if self.ask.clock.monotonic() - last_flush < interval:
                    continue
            if not self._flush_text(state, final=False):
                held = bool(state.pending)
                continue
            if not await self._commit(state, run, "streaming"):
                return None
            last_flush = self.ask.clock.monotonic()

    @staticmethod
    def _flush_text(state: _TurnState, *, final: bool) -> bool:
        """Move pending text into the answer's records; False when nothing moved.

        Each delta becomes its own record(s), as on the Ask path, so coalescing
        changes how many snapshots are sent, never the answer's records. Deltas
        that would pass the streaming record budget wait for the final flush,
        which merges them, so the answer and its source list stay within 512
        records.
        """
        pending = state.pending
        if not pending:
            return False
        room = max(0, TURN_TEXT_RECORD_BUDGET - state.encoder.records)
        moved, rest = pending[:room], pending[room:]
        chunks = [state.encoder.encode_text(piece) for piece in moved]
        if final and rest:
            chunks.append(state.encoder.encode_text("".join(rest)))
            rest = []
        if not chunks:
            return False
        state.pending = rest
        for chunk in chunks:
            _append(state, chunk)
        return True

    # -- following a run ----------------------------------------------------------

    async def _follow(
        self, run: _TurnRun, start: int, receive: Receive, send: Send, cors: Mapping[str, str]
    ) -> None:
        """The run's lines from `start` until it ends or the client leaves (the turn goes on)."""
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": _raw({**TURN_STREAM_HEADERS, **cors}),
            }
        )
        gone = False
        async with anyio.create_task_group() as group:

            async def watch_disconnect() -> None:
                nonlocal gone
                while True:
                    message = await receive()
                    if message["type"] == "http.disconnect":
                        gone = True
                        group.cancel_scope.cancel()
                        return

            group.start_soon(watch_disconnect)
            try:
                async for line in run.follow(start):
                    await send({"type": "http.response.body", "body": line, "more_body": True})
            except OSError:
                gone = True
            finally:
                group.cancel_scope.cancel()
        if not gone:
            with contextlib.suppress(OSError):
                await send({"type": "http.response.body", "body": b"", "more_body": False})

    async def drain(self) -> None:
        """Wait for every detached turn to end (tests, shutdown)."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)


@dataclass(slots=True)
class _Reservation:
    """The client key holding a running-turn slot, until a started run takes it over."""

    client: str | None = None


def _log_failure(what: str, session_id: str, turn_id: str, error: BaseException) -> None:
    """Log an unexpected failure with its ids, type and place, never its message.

    Exception messages can quote the input (a validation error repeats the
    value it refused), so only the type and the frames' file:line are logged.
    """
    leaf = error
    while isinstance(leaf, BaseExceptionGroup) and leaf.exceptions:  # a task group's failure
        leaf = leaf.exceptions[0]
    frames = traceback.extract_tb(leaf.__traceback__)
    where = " <- ".join(f"{f.filename.rsplit('/', 1)[-1]}:{f.lineno}" for f in frames[::-1][:6])
    _LOG.error(
        "%s: session=%s turn=%s error=%s at %s",
        what,
        session_id,
        turn_id,
        type(leaf).__name__,
        where or "?",
    )


class _Asgi:
    """Wraps a bound method so Starlette's Route treats it as a raw ASGI app."""

    def __init__(self, app: Any) -> None:
        self._app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self._app(scope, receive, send)


# --------------------------------------------------------------------------- helpers


def _ended(state: _TurnState) -> bool:
    """The turn's final snapshot was saved (no lease left)."""
    return "activeTurn" not in state.envelope


def _append(state: _TurnState, chunk: str) -> None:
    """Add encoded records to the answer (the prefix is already its first piece)."""
    state.content.append(chunk.removeprefix(ASSISTANT_CONTENT_PREFIX))


def _lineage_or_none(value: Any) -> dict[str, Any] | None:
    try:
        if isinstance(value, dict) and value.get("operation") == "submit" and len(value) == 1:
            return {"operation": "submit"}
        return DerivedLineage.model_validate(value).to_wire()
    except Exception:
        return None


def _last_lineage(line: str) -> dict[str, Any] | None:
    result = decode_turn_event(line)
    if not result.ok:
        return None
    lineage = result.event.to_wire()["payload"].get("lineage")
    return lineage if isinstance(lineage, dict) else None


def _terminal(envelope: Mapping[str, Any], turn_id: str, outcome: str) -> list[dict[str, Any]]:
    """terminalTurns with this turn's outcome appended; the 64 newest are kept."""
    kept = [t for t in envelope.get("terminalTurns") or [] if t["turnId"] != turn_id]
    return [*kept, {"turnId": turn_id, "outcome": outcome}][-64:]


def _turn_used(row: TurnSessionRow, turn_id: str) -> bool:
    if any(_turn_of(m) == turn_id for m in row.messages):
        return True
    return any(t.turn_id == turn_id for t in row.envelope.terminal_turns or [])


def _question_before(messages: list[dict[str, Any]], index: int) -> str | None:
    for message in reversed(messages[:index]):
        if message["role"] == "user":
            content = message["content"]
            return content if isinstance(content, str) else None
    return None


def _bounded(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The newest messages a session keeps (room for the answer being written)."""
    return messages[-(SESSION_RECORD_MAX_MESSAGES - 1) :]


def _sources_part(passages: Sequence[Passage], turn_id: str) -> dict[str, Any]:
    """The answer's source list as an ordered-content component record."""
    from urllib.parse import quote

    sources = []
    titles = []
    for number, passage in enumerate(passages, start=1):
        url = passage.path + ("#" + quote(passage.anchor, safe="") if passage.anchor else "")
        source: dict[str, Any] = {"id": f"source-{number}", "title": passage.title[:256]}
        if url.startswith("/") and not url.startswith("//") and len(url) <= 2048:
            source["url"] = url
        sources.append(source)
        titles.append(passage.title)
    instance = ("sources-" + turn_id)[:128]
    return {
        "kind": "component",
        "frame": {
            "protocol": "agentskit.chat.component",
            "version": 1,
            "type": "render",
            "componentKey": "source-list",
            "instanceId": instance,
            "props": {"label": "Sources", "sources": sources[:50]},
            "fallback": {
                "kind": "source-list",
                "summary": ("Sources: " + ", ".join(titles) + ".")[:4096],
            },
        },
    }


async def _send_error(send: Send, reject: _TurnReject, cors: Mapping[str, str]) -> None:
    body = dump_json({"error": reject.diagnostic}).encode()
    headers = {
        **TURN_ERROR_HEADERS,
        "content-length": str(len(body)),
        "x-content-type-options": "nosniff",
        **reject.headers,
        **cors,
    }
    await send({"type": "http.response.start", "status": reject.status, "headers": _raw(headers)})
    await send({"type": "http.response.body", "body": body})


def _default_instance_id() -> str:
    """host:pid:random, so two processes (or two runs of one) never share a lease holder."""
    return f"{socket.gethostname()[:64]}:{os.getpid()}:{secrets.token_hex(4)}"


def create_turn_endpoint(
    ask: AskEndpoint,
    store: TurnSessionStorePort | None = None,
    **options: Any,
) -> TurnEndpoint:
    """A turn endpoint over `ask`'s parts; `store` defaults to an in-memory SQLite store."""
    return TurnEndpoint(ask, TurnSessionStore() if store is None else store, **options)


def mount_turn(
    app: Any,
    store: TurnSessionStorePort | None = None,
    *,
    path: str = DEFAULT_TURN_PATH,
    **options: Any,
) -> TurnEndpoint:
    """Add the turn routes to an app built by `create_ask_app` (reachable as `app.state.turn`).

    `options` are `lease_seconds` and `snapshot_interval`.
    """
    if not path.startswith("/"):
        raise ValueError("The turn path must start with /.")
    turn = create_turn_endpoint(app.state.ask, store, **options)
    app.router.routes.extend(turn.routes(path))
    app.state.turn = turn
    return turn


__all__ = [
    "ANONYMOUS_SESSION_ID_MIN_CHARS",
    "DEFAULT_TURN_PATH",
    "TURN_LEASE_SECONDS",
    "TURN_SNAPSHOT_INTERVAL_SECONDS",
    "TurnEndpoint",
    "create_turn_endpoint",
    "mount_turn",
]
