"""Resuming a session: `GET <turn path>/<sessionId>`, and following a running turn.

A resume answers the session's latest saved snapshot; when this instance runs
the session's turn it follows that turn to its end instead, and when the
turn's lease has expired (its instance went away) it first ends the turn as
interrupted. `follow` streams a running turn's lines to one response (the
submit's and every resume's) until the turn ends or the client leaves; the
turn itself goes on either way.
"""

import contextlib
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import anyio
from starlette.datastructures import Headers
from starlette.types import Receive, Scope, Send

from ..protocol.identifiers import is_safe_id
from .ask_app import _raw, _Reject
from .turn_errors import TURN_STREAM_HEADERS
from .turn_requests import GET_NOT_ALLOWED, SESSION_NOT_FOUND, TurnReject, from_ask, owner_of
from .turn_runner import TurnRun, TurnRunner
from .turn_session_port import TurnSessionKey

Authenticate = Callable[[Scope, Headers], Awaitable[Any]]
"""The endpoint's authentication (the Ask app's, refusals in the turn table's terms)."""


async def admit_resume(
    runner: TurnRunner, scope: Scope, headers: Headers, authenticate: Authenticate
) -> tuple[TurnRun | None, str]:
    """The run to follow (when this instance runs the turn) and the latest line."""
    if scope["method"] != "GET":
        raise TurnReject.of(GET_NOT_ALLOWED, allow="GET")
    principal = await authenticate(scope, headers)
    decision = runner.ask.rate_limiter.take(principal.rate_key)
    if not decision.allowed:
        raise from_ask(
            _Reject(
                429,
                "ASK_RATE_LIMITED",
                "rate",
                retryable=True,
                headers={"retry-after": str(decision.retry_after_seconds)},
            )
        )
    session_id = scope.get("path_params", {}).get("session_id", "")
    owner = owner_of(principal, session_id) if is_safe_id(session_id) else None
    if owner is None:
        raise TurnReject.of(SESSION_NOT_FOUND)
    key = TurnSessionKey(runner.ask.site.site_id, owner, session_id)
    row = await runner.load(key)
    if row is None:
        raise TurnReject.of(SESSION_NOT_FOUND)
    run = runner.runs.get(key)
    if run is not None:
        return run, row.last_snapshot
    if runner.lease_expired(row):
        settled = await runner.settle_expired(key, row)
        if settled is not None:
            return None, settled.last_snapshot
        row = await runner.load(key) or row
    return None, row.last_snapshot


async def follow(
    run: TurnRun, start: int, receive: Receive, send: Send, cors: Mapping[str, str]
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
