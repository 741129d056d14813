"""The turn-submit fuzz target: raw bytes as a `POST /api/turn` body to the reference server.

The server is real (the Ask app with the turn endpoint mounted, an in-memory
SQLite turn store, a generator that answers at once) and shared by every input
of a run, so inputs also meet the sessions earlier inputs left behind. Each
input is one request through the raw ASGI app; the contract checked:

- the status is one the endpoint documents, never 500 for a body it refused;
- a refusal is `{"error": <diagnostic>}` with a code, a bool `retryable` and a
  fixed, short message that never quotes the body;
- a 200 stream is NDJSON of valid turn events, each line within the bound a
  snapshot of the largest session allows, and the stream ends in a terminal
  snapshot or a diagnostic;
- after the turn, no running-turn slot is left taken.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any, Final

from agentskit_web.protocol import decode_turn_event

from .targets import DIAGNOSTIC_CODE, DIAGNOSTIC_MESSAGE_MAX_CHARS, as_value, check

ALLOWED_STATUSES: Final = frozenset({200, 400, 409, 413, 415, 429, 503})
LINE_MAX_BYTES: Final = 4 * 1024 * 1024
"""A snapshot line: the largest session (512 KiB of JSON), one question and one bounded answer,
with room for escaping; far above what any line reaches, far below an unbounded one."""
TERMINAL: Final = frozenset({"complete", "error", "cancelled"})
CLIENT: Final = ("198.51.100.77", 4000)
SITE: Final = {
    "protocol": "agentskit.chat.backend-site",
    "version": 1,
    "siteId": "fuzz",
    "assistant": {"id": "guide", "name": "Fuzz", "suggestions": []},
    "corpus": {"id": "docs", "mode": "local"},
    "components": ["source-list"],
    "actions": [],
    "limits": {
        "requestTimeoutMs": 10_000,
        "retrievalTimeoutMs": 5_000,
        "generationTimeoutMs": 5_000,
        "maxSources": 2,
    },
    "persistence": {"mode": "disabled"},
}

_APP: Any = None


class _Answer:
    model = None

    async def stream(self, request: Any) -> AsyncIterator[str]:
        yield "An answer "
        yield "in two pieces."


class _Passages:
    async def retrieve(self, question: str, limit: int) -> list[Any]:
        from agentskit_web.answering.chunk import Passage

        return [Passage(path="/a.html", anchor="", page_title="A", heading="A", text="a")]


def _app() -> Any:
    """One server for the whole run, with a rate limit no run reaches."""
    global _APP
    if _APP is None:
        from agentskit_web.server.ask_app import create_ask_app
        from agentskit_web.server.rate_limit import TokenBucketLimiter
        from agentskit_web.server.turn_app import mount_turn

        app = create_ask_app(
            SITE,
            retriever=_Passages(),
            generator=_Answer(),
            rate_limiter=TokenBucketLimiter(10**9, 10**9),
        )
        mount_turn(app, snapshot_interval=0)
        _APP = app
    return _APP


def body_of(data: bytes) -> bytes:
    """The request body a fuzz input stands for (see `targets.as_value`)."""
    value = as_value(data)
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode("utf-8", "surrogatepass")
    return json.dumps(value, ensure_ascii=False).encode("utf-8", "surrogatepass")


async def _post(app: Any, body: bytes) -> tuple[int, bytes]:
    sent = False
    status = 0
    chunks: list[bytes] = []

    async def receive() -> dict[str, Any]:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        await asyncio.Event().wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]
        elif message.get("body"):
            chunks.append(message["body"])

    scope = {
        "type": "http",
        "method": "POST",
        "path": "/api/turn",
        "query_string": b"",
        "headers": [(b"content-type", b"application/json")],
        "client": CLIENT,
    }
    await app.state.turn.submit_app(scope, receive, send)
    await app.state.turn.drain()
    return status, b"".join(chunks)


def _check_refusal(body: bytes, sent: bytes) -> None:
    parsed = json.loads(body)
    check(isinstance(parsed, dict) and set(parsed) == {"error"}, "a refusal is not {error}")
    error = parsed["error"]
    check(bool(DIAGNOSTIC_CODE.fullmatch(str(error.get("code")))), "refusal code is not a code")
    check(isinstance(error.get("retryable"), bool), "retryable is not a bool")
    message = error.get("message")
    check(isinstance(message, str), "refusal message is not text")
    check(len(message) <= DIAGNOSTIC_MESSAGE_MAX_CHARS, "refusal message too long")
    if len(sent) >= 8:
        check(message.encode() not in sent or len(message) < 8, "refusal quotes the body")


def _check_stream(body: bytes) -> None:
    lines = [line for line in body.split(b"\n") if line]
    check(bool(lines), "a 200 with no line")
    last: Any = None
    for line in lines:
        check(len(line) <= LINE_MAX_BYTES, "a snapshot line past its bound")
        result = decode_turn_event(line)
        check(result.ok, "the server sent an invalid turn event")
        last = result.event.to_wire()
    ended = last["event"] == "server.turn.diagnostic" or last["payload"].get("status") in TERMINAL
    check(ended, "the stream did not end in a terminal snapshot or a diagnostic")


def turn_submit(data: bytes) -> None:
    app = _app()
    body = body_of(data)
    status, response = asyncio.run(_post(app, body))
    check(status in ALLOWED_STATUSES, f"status {status}")
    if status == 200:
        _check_stream(response)
    else:
        _check_refusal(response, body)
    check(app.state.turn.running.running() == 0, "a running-turn slot was left taken")


def bound_seeds() -> list[bytes]:
    """Submits at the endpoint's bounds and one past them (JSON mode), added to the fixtures'."""
    from agentskit_web.server.turn_limits import TURN_INPUT_MAX_CHARS

    from .targets import MODE_JSON

    def submit(session: str, turn: str, text: str, **payload: Any) -> bytes:
        event = {
            "protocol": "agentskit.chat.turn",
            "version": 1,
            "eventId": f"e-{turn}",
            "sessionId": session,
            "turnId": turn,
            "sequence": 0,
            "emittedAt": "2026-01-01T00:00:00Z",
            "event": "client.turn.submit",
            "payload": {"input": text, **payload},
        }
        return bytes([MODE_JSON]) + json.dumps(event).encode()

    session = "Fz8kQ2mW7pL4xN9cV3bR6t"
    edit = {"operation": "edit", "parentTurnId": "t1", "sourceMessageId": "u-t1"}
    return [
        submit(session, "t1", "How do I install it?"),
        submit(session, "t2", "a" * TURN_INPUT_MAX_CHARS),
        submit(session, "t3", "a" * (TURN_INPUT_MAX_CHARS + 1)),
        submit(session, "t4", "Again?", lineage=edit),
        submit("a" * 22, "t1", "A weak id"),
        submit("abcdefghijklmnopqrstuv", "t1", "A counting id"),
    ]


__all__ = ["bound_seeds", "turn_submit"]
