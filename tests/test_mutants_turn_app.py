"""The turn endpoint's admission: the rules mutation testing found unguarded.

Issue 36 item 9: each test here failed on a surviving mutant of `turn_app`
(docs/design/mutation-turn-modules.md lists them); the resume side is in
tests/test_mutants_turn_resume.py. Requests go through the Ask app with the
turn routes mounted.
"""

import asyncio
import re
from pathlib import Path
from typing import Any

import httpx
import pytest

from _ask_helpers import assert_turn_rate_limited, site, write_docs
from _ask_helpers import turn_submit as submit
from agentskit_web.chat.turn.adapter import new_session_id
from agentskit_web.server.ask_app import MESSAGES, create_ask_app
from agentskit_web.server.auth import Principal
from agentskit_web.server.generators import ExtractiveGenerator
from agentskit_web.server.rate_limit import TokenBucketLimiter
from agentskit_web.server.turn_app import create_turn_endpoint, mount_turn
from agentskit_web.server.turn_limits import RunningTurns
from agentskit_web.server.turn_store import TurnSessionStore
from test_turn_server import GatedGenerator

ORIGIN = "https://docs.example"


def make_app(tmp_path: Path, generator: Any = None, **turn_options: Any) -> Any:
    app = create_ask_app(
        site(),
        write_docs(tmp_path / "docs"),
        generator=generator or ExtractiveGenerator(),
        cors_origins=[ORIGIN],
    )
    mount_turn(app, TurnSessionStore(), **turn_options)
    return app


def client(app: Any) -> httpx.AsyncClient:
    transport = httpx.ASGITransport(app=app, client=("203.0.113.7", 5000))
    return httpx.AsyncClient(transport=transport, base_url="http://testserver")


def test_a_cors_preflight_of_the_turn_path_is_answered_like_the_ask_paths(
    tmp_path: Path,
) -> None:
    app = make_app(tmp_path)
    preflight = {"origin": ORIGIN, "access-control-request-method": "POST"}

    async def go() -> tuple[httpx.Response, httpx.Response]:
        async with client(app) as http:
            turn = await http.options("/api/turn", headers=preflight)
            ask = await http.options("/api/ask", headers=preflight)
            return turn, ask

    turn, ask = asyncio.run(go())
    assert turn.status_code == 204
    assert turn.headers["access-control-allow-origin"] == ORIGIN
    assert turn.headers["access-control-allow-methods"] == "POST"
    assert dict(turn.headers) == dict(ask.headers)


def test_a_refusal_before_the_body_is_read_closes_the_connection_and_one_after_does_not(
    tmp_path: Path,
) -> None:
    """The unread body would otherwise be parsed as the next request on the connection."""
    app = make_app(tmp_path)

    async def go() -> tuple[httpx.Response, httpx.Response]:
        async with client(app) as http:
            unread = await http.post(
                "/api/turn", content=b"{}", headers={"content-type": "text/plain"}
            )
            read = await http.post(
                "/api/turn", content=b"{not json", headers={"content-type": "application/json"}
            )
            return unread, read

    unread, read = asyncio.run(go())
    assert unread.status_code == 415
    assert unread.headers["connection"] == "close"
    assert read.status_code == 400
    assert read.json()["error"]["code"] == "REQUEST_INVALID_JSON"
    assert "connection" not in read.headers


def test_the_per_client_running_cap_is_a_retryable_429(tmp_path: Path) -> None:
    generator = GatedGenerator()
    app = make_app(tmp_path, generator, running=RunningTurns(per_client=1), snapshot_interval=0)

    async def go() -> httpx.Response:
        async with client(app) as http:
            first = asyncio.create_task(http.post("/api/turn", json=submit(new_session_id(), "t1")))
            await generator.started.wait()
            second = await http.post("/api/turn", json=submit(new_session_id(), "t1"))
            generator.release.set()
            await first
            return second

    second = asyncio.run(go())
    assert second.status_code == 429
    assert second.headers["retry-after"] == "1"
    assert second.json()["error"] == {
        "version": 1,
        "code": "ASK_RATE_LIMITED",
        "message": MESSAGES["streams"],
        "retryable": True,
    }


def test_the_authentication_hook_sees_the_query_string(tmp_path: Path) -> None:
    """A site that authenticates by a signed link parameter: the turn endpoint passes the
    request's query to the hook as Ask does (no parameter: 401)."""

    async def by_link(head: Any) -> Principal | None:
        if head.query.get("grant") != "reader-7":
            return None
        return Principal(subject="reader-7", rate_key="sub:reader-7")

    app = create_ask_app(
        site(), write_docs(tmp_path / "docs"), generator=ExtractiveGenerator(),
        authenticate=by_link,
    )  # fmt: skip
    mount_turn(app, TurnSessionStore())

    async def go() -> tuple[httpx.Response, httpx.Response]:
        async with client(app) as http:
            body = submit(new_session_id(), "t1")
            granted = await http.post("/api/turn?grant=reader-7", json=body)
            refused = await http.post("/api/turn", json=submit(new_session_id(), "t1"))
            return granted, refused

    granted, refused = asyncio.run(go())
    assert granted.status_code == 200
    assert refused.status_code == 401
    assert refused.json()["error"]["code"] == "ASK_UNAUTHORIZED"


def test_submit_is_rate_limited_per_caller_with_a_retry_after(tmp_path: Path) -> None:
    limiter = TokenBucketLimiter(capacity=1, refill_per_second=0.05, clock=lambda: 1_000.0)
    app = create_ask_app(
        site(), write_docs(tmp_path / "docs"), generator=ExtractiveGenerator(),
        rate_limiter=limiter,
    )  # fmt: skip
    mount_turn(app, TurnSessionStore())
    other = httpx.ASGITransport(app=app, client=("198.51.100.4", 5000))

    async def go() -> list[httpx.Response]:
        async with (
            client(app) as mine,
            httpx.AsyncClient(transport=other, base_url="http://testserver") as theirs,
        ):
            return [
                await mine.post("/api/turn", json=submit(new_session_id(), "t1")),
                await mine.post("/api/turn", json=submit(new_session_id(), "t1")),
                await theirs.post("/api/turn", json=submit(new_session_id(), "t1")),
            ]

    allowed, limited, theirs = asyncio.run(go())
    assert allowed.status_code == 200 and theirs.status_code == 200
    assert_turn_rate_limited(limited, "20")  # one token at 0.05 per second


BOUNDS_MESSAGE = "The lease and session bound must be positive and the snapshot interval >= 0."


@pytest.mark.parametrize(
    "option",
    [
        {"lease_seconds": 0},
        {"snapshot_interval": -0.001},
        {"session_max_bytes": 0},
        {"response_max_bytes": 0},
    ],
)
def test_each_turn_bound_one_past_its_limit_is_refused(tmp_path: Path, option: Any) -> None:
    app = create_ask_app(site(), write_docs(tmp_path / "docs"))
    with pytest.raises(ValueError, match=f"^{re.escape(BOUNDS_MESSAGE)}$"):
        mount_turn(app, TurnSessionStore(), **option)


def test_each_turn_bound_at_its_limit_is_accepted(tmp_path: Path) -> None:
    app = create_ask_app(site(), write_docs(tmp_path / "docs"))
    turn = create_turn_endpoint(
        app.state.ask,
        TurnSessionStore(),
        lease_seconds=0.001,
        snapshot_interval=0,
        session_max_bytes=1,
        response_max_bytes=1,
    )
    assert turn.lease_seconds == 0.001 and turn.session_max_bytes == 1


def test_a_turn_path_must_start_with_a_slash(tmp_path: Path) -> None:
    app = create_ask_app(site(), write_docs(tmp_path / "docs"))
    with pytest.raises(ValueError, match=r"^The turn path must start with /\.$"):
        mount_turn(app, TurnSessionStore(), path="api/turn")


def test_a_turn_path_elsewhere_gets_its_own_feedback_route(tmp_path: Path) -> None:
    """The widget sends feedback beside its endpoint: `/chat/turn` -> `/chat/feedback`."""
    app = create_ask_app(site(), write_docs(tmp_path / "docs"))
    mount_turn(app, TurnSessionStore(), path="/chat/turn")

    async def go() -> tuple[httpx.Response, httpx.Response]:
        async with client(app) as http:
            beside = await http.get("/chat/feedback")
            nowhere = await http.get("/chat/nothing")
            return beside, nowhere

    beside, nowhere = asyncio.run(go())
    assert nowhere.status_code == 404
    assert beside.status_code == 405  # the feedback endpoint: POST only
