"""Turn submit parsing and refusals: the rules mutation testing found unguarded.

Issue 36 item 9: each test here failed on a surviving mutant of `turn_requests`
(docs/design/mutation-turn-modules.md lists them). Requests go through the Ask
app with the turn routes mounted, as a widget sends them.
"""

import asyncio
import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from _ask_helpers import site, write_docs
from _ask_helpers import turn_submit as submit
from agentskit_web.chat.turn.adapter import new_session_id
from agentskit_web.protocol import decode_turn_event
from agentskit_web.protocol.turn import SnapshotTurnEvent
from agentskit_web.server.ask_app import create_ask_app
from agentskit_web.server.generators import ExtractiveGenerator
from agentskit_web.server.turn_app import mount_turn
from agentskit_web.server.turn_store import TurnSessionKey, TurnSessionStore


def make_app(tmp_path: Path, store: TurnSessionStore, **options: Any) -> Any:
    app = create_ask_app(
        site(), write_docs(tmp_path / "docs"), generator=ExtractiveGenerator(), **options
    )
    mount_turn(app, store)
    return app


async def post(app: Any, body: Any) -> httpx.Response:
    transport = httpx.ASGITransport(app=app, client=("203.0.113.7", 5000))
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as http:
        return await http.post("/api/turn", json=body)


def snapshots(response: httpx.Response) -> list[SnapshotTurnEvent]:
    assert response.status_code == 200, response.text
    found = []
    for line in response.content.splitlines():
        result = decode_turn_event(line)
        assert result.ok and isinstance(result.event, SnapshotTurnEvent)
        found.append(result.event)
    return found


def assert_refused(response: httpx.Response, status: int, code: str) -> None:
    """A refusal: its status and turn diagnostic, a length that matches, never sniffed."""
    assert response.status_code == status
    assert response.json()["error"]["code"] == code
    assert response.headers["content-length"] == str(len(response.content))
    assert response.headers["x-content-type-options"] == "nosniff"


@pytest.mark.parametrize(
    "lineage",
    [
        "submit",  # not an object
        {"operation": "retry"},  # a derived operation without the turn and message it names
        {"operation": "submit", "parentTurnId": "t1"},  # a plain submit names nothing
        {"operation": "SUBMIT"},
    ],
)
def test_a_lineage_that_is_neither_a_submit_nor_a_valid_derivation_is_refused(
    tmp_path: Path, lineage: Any
) -> None:
    store = TurnSessionStore()
    app = make_app(tmp_path, store)
    session = new_session_id()
    response = asyncio.run(post(app, submit(session, "t1", lineage=lineage)))
    assert_refused(response, 400, "REQUEST_INVALID_EVENT")
    assert store.load_sync(TurnSessionKey("test-site", "anonymous", session)) is None


def test_an_explicit_submit_lineage_is_the_same_as_none(tmp_path: Path) -> None:
    app = make_app(tmp_path, TurnSessionStore())

    async def go() -> tuple[httpx.Response, httpx.Response]:
        explicit = submit(new_session_id(), "t1", lineage={"operation": "submit"})
        return await post(app, explicit), await post(app, submit(new_session_id(), "t1"))

    explicit, implicit = asyncio.run(go())
    with_lineage, without = snapshots(explicit)[-1], snapshots(implicit)[-1]
    assert with_lineage.payload.status == "complete"
    wire, plain = with_lineage.to_wire()["payload"], without.to_wire()["payload"]
    assert wire.get("lineage") == plain.get("lineage")
    assert [m["content"] for m in wire["messages"]] == [m["content"] for m in plain["messages"]]


def test_a_valid_turn_event_that_is_not_a_submit_is_refused(tmp_path: Path) -> None:
    """A server snapshot posted back is a valid turn event, but not a submit: 400."""
    app = make_app(tmp_path, TurnSessionStore())

    async def go() -> httpx.Response:
        first = await post(app, submit(new_session_id(), "t1"))
        snapshot = first.content.splitlines()[-1]
        assert decode_turn_event(snapshot).ok
        return await post(app, json.loads(snapshot))

    assert_refused(asyncio.run(go()), 400, "REQUEST_INVALID_EVENT")


def test_a_failing_authentication_hook_is_a_turn_internal_error(tmp_path: Path) -> None:
    """The Ask admission's 500 in the turn table's terms: SERVER_INTERNAL, retryable."""

    async def broken(head: Any) -> Any:
        raise RuntimeError("the identity provider is down")

    app = make_app(tmp_path, TurnSessionStore(), authenticate=broken)
    response = asyncio.run(post(app, submit(new_session_id(), "t1")))
    assert_refused(response, 500, "SERVER_INTERNAL")
    assert response.json()["error"]["retryable"] is True
