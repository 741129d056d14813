"""Resuming a session: `GET <turn path>/<sessionId>`, and following a running turn.

A resume answers the session's latest saved snapshot. When this instance runs
the session's turn, `follow` streams that turn's lines to the end (the
submit's response uses it too); when another instance runs it (a live lease
that is not ours), `follow_stored` streams the snapshots that instance saves,
read from the store, until the turn ends; when the turn's lease has expired
(its instance went away) the turn is first ended as interrupted. The turn
itself goes on whether a response follows it or not.
"""

import contextlib
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

import anyio
from starlette.datastructures import Headers
from starlette.types import Receive, Scope, Send

from ..protocol.identifiers import is_safe_id
from .ask_app import _raw, _Reject
from .turn_errors import TURN_STREAM_HEADERS
from .turn_requests import GET_NOT_ALLOWED, SESSION_NOT_FOUND, TurnReject, from_ask, owner_of
from .turn_runner import TurnRun, TurnRunner
from .turn_session_port import TurnSessionKey, TurnSessionRow

TURN_REMOTE_POLL_SECONDS: Final = 0.25
"""How often a resume of a turn that another instance runs reads the store for newer
snapshots (one primary-key read each; the follow holds one of the caller's in-flight slots)."""

Authenticate = Callable[[Scope, Headers], Awaitable[Any]]
"""The endpoint's authentication (the Ask app's, refusals in the turn table's terms)."""


@dataclass(frozen=True, slots=True)
class Resume:
    """What a resume found: the session's latest stored state, and this instance's run."""

    key: TurnSessionKey
    row: TurnSessionRow
    run: TurnRun | None
    client: str
    """The caller's rate key (the in-flight cap of a follow that polls the store)."""

    @property
    def line(self) -> str:
        return self.row.last_snapshot

    @property
    def runs_elsewhere(self) -> bool:
        """Another instance holds a live lease on the session: its snapshots are to come."""
        return self.run is None and self.row.envelope.active_turn is not None


async def admit_resume(
    runner: TurnRunner, scope: Scope, headers: Headers, authenticate: Authenticate
) -> Resume:
    """The session's latest state; an expired lease is first ended as interrupted."""
    if scope["method"] != "GET":
        raise TurnReject.of(GET_NOT_ALLOWED, allow="GET")
    principal = await authenticate(scope, headers)
    decision = await runner.ask.rate_limiter.take_async(principal.rate_key)
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
    if run is None and runner.lease_expired(row):
        row = await _settled(runner, key, row)
    return Resume(key, row, run, principal.rate_key)


async def _settled(runner: TurnRunner, key: TurnSessionKey, row: TurnSessionRow) -> TurnSessionRow:
    """The row after ending its expired lease's turn (by us, or by whoever won the race)."""
    settled = await runner.settle_expired(key, row)
    if settled is not None:
        return settled
    return await runner.load(key) or row


async def follow_stored(
    runner: TurnRunner,
    resume: Resume,
    receive: Receive,
    send: Send,
    cors: Mapping[str, str],
) -> None:
    """Stream the snapshots another instance saves for this session, until the turn ends.

    The store is read every `TURN_REMOTE_POLL_SECONDS`; each newer snapshot
    is sent, except lease renewals (`_news`). The follow ends when the turn
    ends, when its lease expires (the turn is then ended as interrupted here,
    and that snapshot sent), when this
    instance starts running the session, when the store fails, or at the
    turn's own bound (the site's request timeout plus one lease); the client
    resumes again if the turn is still running then. So a reader whose
    balancer sends the resume to another instance sees the answer go on, and
    a reader whose instance died sees "interrupted" within a poll of the
    lease's end.
    """
    await _start_stream(send, cors)
    clock = runner.ask.clock
    limit = clock.monotonic() + runner.ask.site.request_timeout + runner.lease_seconds
    row = resume.row
    gone = False
    async with anyio.create_task_group() as group:

        async def watch_disconnect() -> None:
            nonlocal gone
            while (await receive())["type"] != "http.disconnect":
                pass
            gone = True
            group.cancel_scope.cancel()

        group.start_soon(watch_disconnect)
        try:
            await _send_line(send, row.last_snapshot)
            while clock.monotonic() < limit and row.envelope.active_turn is not None:
                await anyio.sleep(TURN_REMOTE_POLL_SECONDS)
                if resume.key in runner.runs:
                    break  # started here meanwhile: the next resume follows the run itself
                latest = await runner.load(resume.key)
                if latest is None:
                    break
                if runner.lease_expired(latest):
                    latest = await _settled(runner, resume.key, latest)
                if latest.cursor != row.cursor and _news(row, latest):
                    await _send_line(send, latest.last_snapshot)
                row = latest
        except (TurnReject, OSError):
            pass  # the store failed or the client went: end the stream, the client resumes
        finally:
            group.cancel_scope.cancel()
    if not gone:
        with contextlib.suppress(OSError):
            await send({"type": "http.response.body", "body": b"", "more_body": False})


def _news(sent: TurnSessionRow, latest: TurnSessionRow) -> bool:
    """Whether a newer save says something the reader has not seen.

    A lease renewal saves the same messages under a new cursor; sending it
    would repeat the whole session every few seconds (the running instance
    does not send it either).
    """
    return latest.envelope.active_turn is None or latest.messages != sent.messages


async def send_latest(resume: Resume, send: Send, cors: Mapping[str, str]) -> None:
    """The session's latest snapshot, alone."""
    await _start_stream(send, cors)
    await send({"type": "http.response.body", "body": (resume.line + "\n").encode()})


async def _start_stream(send: Send, cors: Mapping[str, str]) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": 200,
            "headers": _raw({**TURN_STREAM_HEADERS, **cors}),
        }
    )


async def _send_line(send: Send, line: str) -> None:
    await send({"type": "http.response.body", "body": (line + "\n").encode(), "more_body": True})


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
