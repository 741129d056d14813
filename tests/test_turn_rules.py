"""Turn rules that had no test able to fail (issue 23, "Tests that can fail").

Lineage: a wrong parent turn, an edit aimed at an answer, a retry of a turn that
did not fail. SESSION_BUSY decided by the stored lease, not by the turns this
process runs (several server processes share one store).
"""

import asyncio
import time
from pathlib import Path
from typing import Any

import httpx

from _ask_helpers import ScriptedGenerator, site, write_docs
from _ask_helpers import turn_submit as submit
from agentskit_web.chat.turn.adapter import new_session_id
from agentskit_web.server.ask_app import create_ask_app
from agentskit_web.server.turn_app import mount_turn
from agentskit_web.server.turn_store import TurnSessionKey, TurnSessionStore


def make_app(tmp_path: Path, store: TurnSessionStore | None = None) -> Any:
    app = create_ask_app(
        site(), write_docs(tmp_path / "docs"), generator=ScriptedGenerator(("An answer.",))
    )
    mount_turn(app, store)
    return app


async def post_all(app: Any, bodies: list[dict[str, Any]]) -> list[httpx.Response]:
    transport = httpx.ASGITransport(app=app, client=("203.0.113.7", 5000))
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as http:
        return [await http.post("/api/turn", json=body) for body in bodies]


def _lineage_status(tmp_path: Path, lineage: dict[str, str]) -> int:
    """Two completed turns (t1, t2), then a third with `lineage`: its status code."""
    session = new_session_id()
    replies = asyncio.run(
        post_all(
            make_app(tmp_path),
            [submit(session, "t1"), submit(session, "t2"), submit(session, "t3", lineage=lineage)],
        )
    )
    assert [r.status_code for r in replies[:2]] == [200, 200]
    return replies[2].status_code


def test_an_edit_of_the_right_message_is_accepted(tmp_path: Path) -> None:
    """The baseline the refusals below differ from by one field each."""
    lineage = {"operation": "edit", "parentTurnId": "t1", "sourceMessageId": "u-t1"}
    assert _lineage_status(tmp_path, lineage) == 200


def test_a_lineage_naming_the_wrong_parent_turn_is_refused(tmp_path: Path) -> None:
    lineage = {"operation": "edit", "parentTurnId": "t2", "sourceMessageId": "u-t1"}
    assert _lineage_status(tmp_path, lineage) == 400


def test_an_edit_aimed_at_an_answer_is_refused(tmp_path: Path) -> None:
    lineage = {"operation": "edit", "parentTurnId": "t1", "sourceMessageId": "a-t1"}
    assert _lineage_status(tmp_path, lineage) == 400


def test_a_retry_of_a_turn_that_did_not_fail_is_refused(tmp_path: Path) -> None:
    lineage = {"operation": "retry", "parentTurnId": "t2", "sourceMessageId": "u-t2"}
    assert _lineage_status(tmp_path, lineage) == 400


def test_a_regenerate_of_an_earlier_answer_is_refused(tmp_path: Path) -> None:
    ok = {"operation": "regenerate", "parentTurnId": "t2", "sourceMessageId": "a-t2"}
    assert _lineage_status(tmp_path / "ok", ok) == 200
    earlier = {"operation": "regenerate", "parentTurnId": "t1", "sourceMessageId": "a-t1"}
    assert _lineage_status(tmp_path / "earlier", earlier) == 400


def test_a_live_lease_written_by_another_process_makes_the_session_busy(tmp_path: Path) -> None:
    """A row whose lease is live but which this process is not running: 409, not a takeover."""
    store = TurnSessionStore()
    app = make_app(tmp_path, store)
    session = new_session_id()
    site_id = app.state.ask.site.site_id
    key = TurnSessionKey(site_id, "anonymous", session, client_key="ip:203.0.113.7")

    def seed(expires_in_ms: int) -> None:
        envelope = {
            "protocol": "agentskit.chat.session",
            "version": 1,
            "sessionId": session,
            "definitionId": app.state.ask.site.assistant_id,
            "definitionRevision": 1,
            "updatedAt": "2026-01-01T00:00:00.000Z",
            "cursor": 1,
            "activeTurn": {
                "turnId": "t-elsewhere",
                "expiresAt": int(time.time() * 1000) + expires_in_ms,
            },
            "confirmations": [],
        }
        assert store.save_sync(key, envelope, [], "{}", None)

    seed(30_000)
    [busy] = asyncio.run(post_all(app, [submit(session, "t1")]))
    assert busy.status_code == 409 and busy.json()["error"]["code"] == "SESSION_BUSY"
    assert app.state.turn.runner.runs == {}  # nothing of it runs here
    # Once that lease has expired, the same submit settles it and goes ahead.
    store._db.execute("DELETE FROM turn_sessions")
    seed(-1)
    [taken] = asyncio.run(post_all(app, [submit(session, "t1")]))
    assert taken.status_code == 200
