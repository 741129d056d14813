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

from typing import Any, Final

from starlette.datastructures import Headers, QueryParams
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from .ask_app import (
    AskEndpoint,
    _Admission,
    _ClientGone,
    _is_json_media,
    _Reject,
)
from .turn_errors import (
    REQUEST_METHOD_NOT_ALLOWED,
    REQUEST_UNSUPPORTED_MEDIA_TYPE,
)
from .turn_limits import TURN_RESPONSE_MAX_BYTES, TURN_SESSION_MAX_BYTES, RunningTurns
from .turn_requests import (
    ANONYMOUS_SESSION_ID_MIN_CHARS,
    SERVER_OVERLOADED,
    Reservation,
    TurnReject,
    from_ask,
    parse_submit,
    send_error,
)
from .turn_resume import admit_resume, follow, follow_stored, send_latest
from .turn_runner import (
    RUN_RETAINED_LINES,
    TURN_LEASE_SECONDS,
    TURN_SNAPSHOT_INTERVAL_SECONDS,
    TurnRun,
    TurnRunner,
    default_instance_id,
)
from .turn_session_port import LEASE_HOLDER_MAX_CHARS, TurnSessionStorePort
from .turn_store import TurnSessionStore

DEFAULT_TURN_PATH: Final = "/api/turn"


class TurnEndpoint:
    """`POST <path>` and `GET <path>/<sessionId>` of the turn protocol, over an `AskEndpoint`.

    Admission (method, media type, authentication, rate limit and caps, body)
    is here; parsing and the refusals are `turn_requests`, the turn itself is
    `turn_runner`, resuming is `turn_resume`, storage is the session store port.
    """

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
        response_max_bytes: int = TURN_RESPONSE_MAX_BYTES,
    ) -> None:
        if (
            lease_seconds <= 0
            or snapshot_interval < 0
            or session_max_bytes < 1
            or response_max_bytes < 1
        ):
            raise ValueError(
                "The lease and session bound must be positive and the snapshot interval >= 0."
            )
        self.ask = ask
        self.running = running or RunningTurns(per_client=ask.max_streams_per_client)
        self.session_max_bytes = session_max_bytes
        self.runner = TurnRunner(
            ask,
            store,
            lease_seconds=lease_seconds,
            snapshot_interval=snapshot_interval,
            running=self.running,
            session_max_bytes=session_max_bytes,
            instance_id=(instance_id or default_instance_id())[:LEASE_HOLDER_MAX_CHARS],
            response_max_bytes=response_max_bytes,
        )

    @property
    def store(self) -> TurnSessionStorePort:
        return self.runner.store

    @property
    def lease_seconds(self) -> float:
        return self.runner.lease_seconds

    @property
    def instance_id(self) -> str:
        return self.runner.instance_id

    async def submit_app(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        headers = Headers(scope=scope)
        cors = self.ask._cors_headers(headers)
        if self.ask._is_preflight(scope, headers, cors):
            await self.ask._send_preflight(send, cors)
            return
        admission = _Admission()
        reservation = Reservation()
        try:
            try:
                run = await self._admit_submit(scope, receive, headers, admission, reservation)
            except TurnReject as reject:
                if not admission.body_read:
                    reject.headers.setdefault("connection", "close")
                await send_error(send, reject, cors)
                return
            except _ClientGone:
                return
            await follow(run, 0, receive, send, cors)
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
            resume = await admit_resume(self.runner, scope, headers, self._authenticate)
        except TurnReject as reject:
            await send_error(send, reject, cors)
            return
        run = resume.run
        if run is not None and run.count:
            await follow(run, run.count - 1, receive, send, cors)
            return
        if not resume.runs_elsewhere:
            await send_latest(resume, send, cors)
            return
        admission = _Admission()
        try:
            self.ask._take_slot(resume.client, admission)
        except _Reject:  # the caller's in-flight cap is full: the latest snapshot, no follow
            await send_latest(resume, send, cors)
            return
        try:
            await follow_stored(self.runner, resume, receive, send, cors)
        finally:
            self.ask._release_slot(admission)

    def routes(self, path: str = DEFAULT_TURN_PATH) -> list[Route]:
        """The two routes (every method reaches the endpoint, which answers 405 itself)."""
        return [
            Route(path, endpoint=_Asgi(self.submit_app)),
            Route(path + "/{session_id}", endpoint=_Asgi(self.resume_app)),
        ]

    async def _authenticate(self, scope: Scope, headers: Headers) -> Any:
        query = QueryParams(scope.get("query_string", b""))
        try:
            return await self.ask._authenticate(scope, headers, query)
        except _Reject as reject:
            raise from_ask(reject) from None

    async def _admit_submit(
        self,
        scope: Scope,
        receive: Receive,
        headers: Headers,
        admission: _Admission,
        reservation: "Reservation",
    ) -> TurnRun:
        if scope["method"] != "POST":
            raise TurnReject.of(REQUEST_METHOD_NOT_ALLOWED, allow="POST")
        if not _is_json_media(headers.get("content-type")):
            raise TurnReject.of(REQUEST_UNSUPPORTED_MEDIA_TYPE)
        principal = await self._authenticate(scope, headers)
        try:
            self.ask._take_slot(principal.rate_key, admission)
            decision = await self.ask.rate_limiter.take_async(principal.rate_key)
            if not decision.allowed:
                raise _Reject(
                    429,
                    "ASK_RATE_LIMITED",
                    "rate",
                    retryable=True,
                    headers={"retry-after": str(decision.retry_after_seconds)},
                )
            self._reserve(principal.rate_key, reservation)
            body = await self.ask.read_body(receive, headers)
        except _Reject as reject:
            raise from_ask(reject) from None
        admission.body_read = True
        submit = parse_submit(body, principal)
        return await self.runner.start(submit, reservation)

    def _reserve(self, client: str, reservation: "Reservation") -> None:
        """Count this turn against the running-turn caps (held until the turn's last save)."""
        refusal = self.running.take(client)
        if refusal is None:
            reservation.client = client
            return
        retry = {"retry-after": str(refusal.retry_after)}
        if refusal.status == 429:
            raise _Reject(429, "ASK_RATE_LIMITED", "streams", retryable=True, headers=retry)
        raise TurnReject.of(SERVER_OVERLOADED, **retry)

    async def drain(self) -> None:
        """Wait for every detached turn to end (tests, shutdown)."""
        await self.runner.drain()


class _Asgi:
    """Wraps a bound method so Starlette's Route treats it as a raw ASGI app."""

    def __init__(self, app: Any) -> None:
        self._app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self._app(scope, receive, send)


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

    `options` are `lease_seconds`, `snapshot_interval` and `response_max_bytes`.
    """
    if not path.startswith("/"):
        raise ValueError("The turn path must start with /.")
    turn = create_turn_endpoint(app.state.ask, store, **options)
    app.router.routes.extend(turn.routes(path))
    from .feedback_app import feedback_path_for, feedback_route

    # A turn-protocol widget sends feedback beside its endpoint (`/api/turn` ->
    # `/api/feedback`): that is the Ask endpoint's feedback route unless the paths differ.
    if all(getattr(r, "path", None) != feedback_path_for(path) for r in app.router.routes):
        app.router.routes.append(feedback_route(app.state.ask, path))
    app.state.turn = turn
    return turn


__all__ = [
    "ANONYMOUS_SESSION_ID_MIN_CHARS",
    "DEFAULT_TURN_PATH",
    "RUN_RETAINED_LINES",
    "TURN_LEASE_SECONDS",
    "TURN_SNAPSHOT_INTERVAL_SECONDS",
    "TurnEndpoint",
    "TurnRun",
    "create_turn_endpoint",
    "mount_turn",
]
