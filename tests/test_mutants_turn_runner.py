"""Rules of the turn runner that no test could fail (issue 36, item 9: `make mutate`).

Each test here was written against a surviving mutant of
`server/turn_runner.py` (docs/design/mutation-turn-runner.md lists them): an
expired lease settled at its exact end, with the next sequence, zero usage and
the last lineage kept; a turn id found only in the stored messages; the history
the generator sees; the shutdown deadline ending a turn as interrupted with all
its text; the source list's same-origin links; the coalescer's record budget
and snapshot clock; and the log line of an unexpected failure.
"""

import asyncio
import json
import logging
import re
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from _ask_helpers import ScriptedGenerator, ScriptedRetriever, site, write_docs
from _ask_helpers import turn_submit as submit
from agentskit_web.answering.chunk import Passage
from agentskit_web.chat.turn.adapter import new_session_id
from agentskit_web.protocol import decode_assistant_content, decode_turn_event
from agentskit_web.protocol.limits import ASSISTANT_CONTENT_MAX_BYTES
from agentskit_web.protocol.turn import (
    SnapshotTurnEvent,
    create_snapshot_event,
    encode_turn_event,
)
from agentskit_web.server.ask_app import ASK_BACKEND_ANSWER_MAX_CHARS, create_ask_app
from agentskit_web.server.generators import GenerationRequest
from agentskit_web.server.persistence import PersistenceError
from agentskit_web.server.turn_app import mount_turn
from agentskit_web.server.turn_runner import TurnRun
from agentskit_web.server.turn_store import TurnSessionKey, TurnSessionStore
from test_turn_bounds import BreakingStore

ADDRESS = ("203.0.113.7", 5000)
SITE_ID = site()["siteId"]


class WallClock:
    """Real monotonic time (deadlines work) and a wall clock the test sets (lease ends)."""

    def __init__(self, wall: float) -> None:
        self.now = wall

    def monotonic(self) -> float:
        return time.monotonic()

    def wall(self) -> float:
        return self.now


def make_app(
    tmp_path: Path,
    store: TurnSessionStore | None = None,
    turn: Any = None,
    config: dict[str, Any] | None = None,
    **options: Any,
) -> Any:
    options.setdefault("generator", ScriptedGenerator(("Add ", "the element.")))
    options.setdefault("retriever", ScriptedRetriever())
    app = create_ask_app(config or site(), write_docs(tmp_path / "docs"), **options)
    mount_turn(app, store, **(turn or {}))
    return app


def client(app: Any) -> httpx.AsyncClient:
    transport = httpx.ASGITransport(app=app, client=ADDRESS)
    return httpx.AsyncClient(transport=transport, base_url="http://testserver")


def key_of(session: str) -> TurnSessionKey:
    return TurnSessionKey(SITE_ID, "anonymous", session, client_key="ip:" + ADDRESS[0])


def snapshots(response: httpx.Response) -> list[SnapshotTurnEvent]:
    found = []
    for line in response.content.splitlines():
        result = decode_turn_event(line)
        assert result.ok
        if isinstance(result.event, SnapshotTurnEvent):
            found.append(result.event)
    assert found
    return found


def text_of(snapshot: SnapshotTurnEvent) -> str:
    decoded = decode_assistant_content(snapshot.payload.messages[-1].content)
    assert decoded.ok
    return "".join(p["text"] for p in decoded.parts if p["kind"] == "text")


def source_props(snapshot: SnapshotTurnEvent) -> dict[str, Any]:
    decoded = decode_assistant_content(snapshot.payload.messages[-1].content)
    assert decoded.ok
    [frame] = [p["frame"] for p in decoded.parts if p["kind"] == "component"]
    assert frame["componentKey"] == "source-list"
    props: dict[str, Any] = frame["props"]
    return props


# --------------------------------------------------------------------------- a stored lease

LINEAGE = {"operation": "regenerate", "parentTurnId": "t0", "sourceMessageId": "a-t0"}


def _message(role: str, turn: str, status: str, content: str = "") -> dict[str, Any]:
    return {
        "id": f"{role[0]}-{turn}",
        "role": role,
        "content": content or f"{role} of {turn}",
        "status": status,
        "createdAt": "2026-01-01T00:00:00.000Z",
        "metadata": {"turnId": turn},
    }


def seed_lease(
    store: TurnSessionStore, session: str, *, expires_at: int, cursor: int = 5
) -> list[dict[str, Any]]:
    """A row another instance left: turn `t-gone` streaming under a lease, its last
    snapshot carrying a regenerate lineage."""
    messages = [
        _message("user", "t0", "complete"),
        _message("user", "t-gone", "complete"),
        _message("assistant", "t-gone", "streaming"),
    ]
    envelope = {
        "protocol": "agentskit.chat.session",
        "version": 1,
        "sessionId": session,
        "definitionId": site()["assistant"]["id"],
        "definitionRevision": 1,
        "updatedAt": "2026-01-01T00:00:00.000Z",
        "cursor": cursor,
        "activeTurn": {"turnId": "t-gone", "expiresAt": expires_at},
        "confirmations": [],
    }
    last = create_snapshot_event(
        event_id="evt-seeded",
        session_id=session,
        turn_id="t-gone",
        sequence=cursor,
        emitted_at="2026-01-01T00:00:00.000Z",
        messages=messages,
        status="streaming",
        usage={"promptTokens": 7, "completionTokens": 3, "totalTokens": 10},
        lineage=LINEAGE,
    )
    assert store.save_sync(key_of(session), envelope, messages, encode_turn_event(last), None)
    return messages


WALL = 1_800_000_000.0  # 2027-01-15T08:00:00Z


def test_a_lease_ending_exactly_now_is_expired_and_one_ms_later_is_live(tmp_path: Path) -> None:
    """`expiresAt` is the first millisecond the lease no longer holds."""
    store = TurnSessionStore()
    app = make_app(tmp_path, store, clock=WallClock(WALL))
    at_end, before_end = new_session_id(), new_session_id()
    seed_lease(store, at_end, expires_at=int(WALL * 1000))
    seed_lease(store, before_end, expires_at=int(WALL * 1000) + 1)

    async def go() -> tuple[httpx.Response, httpx.Response]:
        async with client(app) as http:
            return (
                await http.post("/api/turn", json=submit(at_end, "t1")),
                await http.post("/api/turn", json=submit(before_end, "t1")),
            )

    settled, busy = asyncio.run(go())
    assert settled.status_code == 200
    assert busy.status_code == 409 and busy.json()["error"]["code"] == "SESSION_BUSY"


def test_settling_an_expired_lease_writes_the_next_cursor_and_keeps_the_lineage(
    tmp_path: Path,
) -> None:
    """The resume that finds a dead instance's lease ends its turn: one cursor on, the
    answer marked error, zero usage, the lineage of the turn's last snapshot, the time now."""
    store = TurnSessionStore()
    app = make_app(tmp_path, store, clock=WallClock(WALL))
    session = new_session_id()
    seed_lease(store, session, expires_at=int(WALL * 1000) - 1, cursor=5)

    async def go() -> tuple[httpx.Response, httpx.Response]:
        async with client(app) as http:
            resumed = await http.get(f"/api/turn/{session}")
            return resumed, await http.post("/api/turn", json=submit(session, "t1"))

    resumed, following = asyncio.run(go())
    assert resumed.status_code == 200
    [settled] = snapshots(resumed)
    assert settled.sequence == 6
    assert settled.turn_id == "t-gone"
    assert settled.payload.status == "error"
    assert settled.payload.error is not None
    assert settled.payload.error.code == "CHAT_TURN_INTERRUPTED"
    assert settled.payload.usage.to_wire() == {
        "promptTokens": 0,
        "completionTokens": 0,
        "totalTokens": 0,
    }
    assert settled.payload.lineage is not None
    assert settled.payload.lineage.to_wire() == LINEAGE
    assert [m.status for m in settled.payload.messages] == ["complete", "complete", "error"]
    # The next turn goes on from the settled cursor: sequences only rise, one at a time.
    assert following.status_code == 200
    assert snapshots(following)[0].sequence == 7
    row = store.load_sync(key_of(session))
    assert row is not None
    outcomes = {t.turn_id: t.outcome for t in row.envelope.terminal_turns or []}
    assert outcomes["t-gone"] == "indeterminate"


def test_a_settled_envelope_is_stamped_with_the_time_it_was_settled(tmp_path: Path) -> None:
    store = TurnSessionStore()
    app = make_app(tmp_path, store, clock=WallClock(WALL))
    session = new_session_id()
    seed_lease(store, session, expires_at=int(WALL * 1000) - 1, cursor=5)

    async def go() -> httpx.Response:
        async with client(app) as http:
            return await http.get(f"/api/turn/{session}")

    assert asyncio.run(go()).status_code == 200
    row = store.load_sync(key_of(session))
    assert row is not None and row.envelope.active_turn is None
    wire = row.envelope.to_wire()
    assert wire["cursor"] == 6
    assert wire["updatedAt"] == "2027-01-15T08:00:00.000Z"
    assert "XXupdatedAtXX" not in wire and "updatedat" not in wire


class FailingSettleStore(TurnSessionStore):
    """A store whose writes fail (the database went away between the load and the save)."""

    async def save(self, *args: Any, **kwargs: Any) -> bool:
        raise PersistenceError("connection lost")


def test_a_store_failing_while_settling_answers_server_internal(tmp_path: Path) -> None:
    store = FailingSettleStore()
    app = make_app(tmp_path, store, clock=WallClock(WALL))
    session = new_session_id()
    seed_lease(store, session, expires_at=int(WALL * 1000) - 1)

    async def go() -> tuple[httpx.Response, httpx.Response]:
        async with client(app) as http:
            return (
                await http.get(f"/api/turn/{session}"),
                await http.post("/api/turn", json=submit(session, "t1")),
            )

    for response in asyncio.run(go()):
        assert response.status_code == 500
        assert response.json()["error"]["code"] == "SERVER_INTERNAL"


class LosingSettleStore(TurnSessionStore):
    """A store where another instance settles the lease first: this one's compare-and-set
    of the settle loses (the row moved on between its load and its save)."""

    async def save(self, *args: Any, **kwargs: Any) -> bool:
        return False


def test_a_submit_whose_settle_of_an_expired_lease_loses_is_a_session_conflict(
    tmp_path: Path,
) -> None:
    store = LosingSettleStore()
    app = make_app(tmp_path, store, clock=WallClock(WALL))
    session = new_session_id()
    seed_lease(store, session, expires_at=int(WALL * 1000) - 1)

    async def go() -> httpx.Response:
        async with client(app) as http:
            return await http.post("/api/turn", json=submit(session, "t1"))

    response = asyncio.run(go())
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "SESSION_CONFLICT"


# --------------------------------------------------------------------------- turn ids and history


def seed_session(store: TurnSessionStore, session: str, messages: list[dict[str, Any]]) -> None:
    """A finished session whose envelope lists no terminal turns (an older writer's row)."""
    envelope = {
        "protocol": "agentskit.chat.session",
        "version": 1,
        "sessionId": session,
        "definitionId": site()["assistant"]["id"],
        "definitionRevision": 1,
        "updatedAt": "2026-01-01T00:00:00.000Z",
        "cursor": 2,
        "confirmations": [],
    }
    assert store.save_sync(key_of(session), envelope, messages, "{}", None)


def test_a_turn_id_found_only_in_the_stored_messages_is_refused(tmp_path: Path) -> None:
    store = TurnSessionStore()
    app = make_app(tmp_path, store)
    session = new_session_id()
    seed_session(
        store,
        session,
        [_message("user", "t-old", "complete"), _message("assistant", "t-old", "complete")],
    )

    async def go() -> tuple[httpx.Response, httpx.Response]:
        async with client(app) as http:
            return (
                await http.post("/api/turn", json=submit(session, "t-old")),
                await http.post("/api/turn", json=submit(session, "t-new")),
            )

    used, fresh = asyncio.run(go())
    assert used.status_code == 400
    assert used.json()["error"]["message"] == "This turn id was already used in this session."
    assert fresh.status_code == 200


def test_the_generator_sees_earlier_answers_as_their_text(tmp_path: Path) -> None:
    """History holds the answer's text parts, not its encoded records; an undecodable
    stored answer is history without text rather than a failed turn."""
    generator = ScriptedGenerator(("Add ", "the element."))
    store = TurnSessionStore()
    app = make_app(tmp_path, store, generator=generator)
    session, broken = new_session_id(), new_session_id()
    seed_session(
        store,
        broken,
        [
            _message("user", "t-old", "complete", "First?"),
            _message("assistant", "t-old", "complete", "\x1enot a record"),
        ],
    )

    async def go() -> list[httpx.Response]:
        async with client(app) as http:
            return [
                await http.post("/api/turn", json=submit(session, "t1", "First?")),
                await http.post("/api/turn", json=submit(session, "t2", "Second?")),
                await http.post("/api/turn", json=submit(broken, "t3", "Third?")),
            ]

    assert [r.status_code for r in asyncio.run(go())] == [200, 200, 200]
    assert [(t.role, t.content) for t in generator.requests[1].history] == [
        ("user", "First?"),
        ("assistant", "Add the element."),
    ]
    assert [(t.role, t.content) for t in generator.requests[2].history] == [
        ("user", "First?"),
        ("assistant", ""),
    ]


def _history_seen(tmp_path: Path, seeded: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """The history the generator is given for a new question in a session stored as
    `seeded`."""
    generator = ScriptedGenerator(("Fine.",))
    store = TurnSessionStore()
    app = make_app(tmp_path, store, generator=generator)
    session = new_session_id()
    seed_session(store, session, seeded)

    async def go() -> httpx.Response:
        async with client(app) as http:
            return await http.post("/api/turn", json=submit(session, "t-new", "Now?"))

    assert asyncio.run(go()).status_code == 200
    return [(t.role, t.content) for t in generator.requests[0].history]


def test_plain_text_answers_in_history_are_kept_as_written(tmp_path: Path) -> None:
    """An assistant message stored as plain text (no records) is history as it is."""
    seeded = [
        _message("user", "t-old", "complete", "First?"),
        _message("assistant", "t-old", "complete", "A plain answer."),
    ]
    assert _history_seen(tmp_path, seeded) == [
        ("user", "First?"),
        ("assistant", "A plain answer."),
    ]


# --------------------------------------------------------------------------- the shutdown deadline


class Shutdown:
    """The graceful-shutdown deadline (`ShutdownWatch`), expired when the test says."""

    def __init__(self) -> None:
        self.expired = asyncio.Event()

    async def wait_expired(self) -> None:
        await self.expired.wait()


class ManyThenShutdown:
    """Yields `count` pieces, then lets the coalescer take them, then expires the deadline
    and thinks forever (a model still writing when the server must stop)."""

    model = None

    def __init__(self, count: int, shutdown: Shutdown) -> None:
        self.pieces = [f"p{i} " for i in range(count)]
        self.shutdown = shutdown

    async def stream(self, request: GenerationRequest) -> AsyncIterator[str]:
        for piece in self.pieces:
            yield piece
        await asyncio.sleep(1.0)  # generous: the coalescer only moves them into a list
        self.shutdown.expired.set()
        await asyncio.Event().wait()
        yield "never"


def test_the_shutdown_deadline_ends_a_turn_as_interrupted_with_all_its_text(
    tmp_path: Path,
) -> None:
    """More deltas than the streaming record budget, then the deadline: the final
    snapshot says CHAT_TURN_INTERRUPTED, the answer is marked error and holds every
    delta (the ones past the budget merged), and the store records `indeterminate`."""
    shutdown = Shutdown()
    generator = ManyThenShutdown(600, shutdown)
    store = TurnSessionStore()
    app = make_app(tmp_path, store, turn={"snapshot_interval": 30.0}, generator=generator)
    app.state.ask.shutdown = shutdown
    session = new_session_id()

    async def go() -> httpx.Response:
        async with client(app) as http:
            return await http.post("/api/turn", json=submit(session, "t1"))

    response = asyncio.run(go())
    final = snapshots(response)[-1]
    assert final.payload.status == "error"
    assert final.payload.error is not None
    assert final.payload.error.code == "CHAT_TURN_INTERRUPTED"
    assert final.payload.error.retryable is True
    assert final.payload.messages[-1].status == "error"
    assert text_of(final) == "".join(generator.pieces)
    row = store.load_sync(key_of(session))
    assert row is not None and row.envelope.active_turn is None
    assert row.cursor == final.sequence
    outcomes = {t.turn_id: t.outcome for t in row.envelope.terminal_turns or []}
    assert outcomes == {"t1": "indeterminate"}


# --------------------------------------------------------------------------- the source list


def _passage(path: str, anchor: str | None, title: str) -> Passage:
    return Passage(path=path, anchor=anchor, page_title=title, heading="", text="Add it.")


def test_the_source_list_links_only_same_origin_paths_within_the_url_bound(
    tmp_path: Path,
) -> None:
    passages = (
        _passage("/docs/a.html", "sec 1/é", "Alpha"),
        _passage("//evil.example/x", None, "Protocol relative"),
        _passage("https://evil.example/y", None, "Absolute"),
        _passage("/" + "a" * 2047, None, "At the bound"),
        _passage("/" + "b" * 2048, None, "Past the bound"),
        _passage("/docs/b.html", "", "No anchor"),
    )
    app = make_app(
        tmp_path,
        retriever=ScriptedRetriever(passages=passages),
        config=site(limits__maxSources=8),
    )
    session = new_session_id()

    async def go() -> httpx.Response:
        async with client(app) as http:
            return await http.post("/api/turn", json=submit(session, "t1"))

    final = snapshots(asyncio.run(go()))[-1]
    assert final.payload.status == "complete"
    props = source_props(final)
    assert props["label"] == "Sources"
    assert props["sources"] == [
        {"id": "source-1", "title": "Alpha", "url": "/docs/a.html#sec%201%2F%C3%A9"},
        {"id": "source-2", "title": "Protocol relative"},
        {"id": "source-3", "title": "Absolute"},
        {"id": "source-4", "title": "At the bound", "url": "/" + "a" * 2047},
        {"id": "source-5", "title": "Past the bound"},
        {"id": "source-6", "title": "No anchor", "url": "/docs/b.html"},
    ]
    decoded = decode_assistant_content(final.payload.messages[-1].content)
    assert decoded.ok
    [frame] = [p["frame"] for p in decoded.parts if p["kind"] == "component"]
    assert frame["instanceId"] == "sources-t1"
    assert frame["fallback"] == {
        "kind": "source-list",
        "summary": "Sources: Alpha, Protocol relative, Absolute, At the bound, "
        "Past the bound, No anchor.",
    }


# --------------------------------------------------------------------------- the failure log


def _fail_deep(depth: int) -> None:
    """Raise from `depth` frames down, so the log has more frames than it shows."""
    if depth:
        _fail_deep(depth - 1)
        return
    raise PersistenceError("disk I/O error near 'SECRET-QUESTION-TEXT'")


class DeepBreakingStore(BreakingStore):
    """Saves the first snapshot, then fails every later save from deep in its stack."""

    def fail(self) -> None:
        _fail_deep(3)


def test_a_failure_is_logged_with_its_innermost_six_frames_as_file_and_line(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The log line an operator reads: what failed, the ids, the type, and where, as
    `file.py:line` from the raising frame outwards, six at most."""
    app = make_app(tmp_path, DeepBreakingStore())
    session = new_session_id()
    caplog.set_level(logging.INFO, logger="agentskit_web.turn")

    async def go() -> httpx.Response:
        async with client(app) as http:
            return await http.post("/api/turn", json=submit(session, "t-logged"))

    asyncio.run(go())
    [record] = [r for r in caplog.records if r.name == "agentskit_web.turn"]
    text = record.getMessage()
    head, where = text.split(" at ", 1)
    assert head == f"turn failed: session={session} turn=t-logged error=PersistenceError"
    frames = where.split(" <- ")
    assert len(frames) == 6
    assert all(re.fullmatch(r"[\w.]+\.py:\d+", frame) for frame in frames), frames
    this_file = Path(__file__).name
    raising = _fail_deep.__code__.co_firstlineno
    # Innermost first: the raise, then the three recursive calls, then save().
    assert [f.split(":")[0] for f in frames[:5]] == [this_file] * 5
    assert int(frames[0].split(":")[1]) == raising + 5
    assert int(frames[1].split(":")[1]) == raising + 3


class OversizedTailThenShutdown(ManyThenShutdown):
    """Past the record budget, a tail too long for the two records left (3 x 16,384 chars
    would be needed): the merged tail cannot be written at the deadline."""

    def __init__(self, shutdown: Shutdown) -> None:
        super().__init__(600, shutdown)
        self.pieces += ["x" * 10_000] * 4


def test_at_the_deadline_a_tail_that_no_longer_fits_is_dropped_and_the_rest_kept(
    tmp_path: Path,
) -> None:
    """The interrupted answer keeps every record that fits; the tail past the budget is
    dropped, and the reader is told CHAT_TURN_INTERRUPTED, not a server failure."""
    shutdown = Shutdown()
    generator = OversizedTailThenShutdown(shutdown)
    app = make_app(tmp_path, turn={"snapshot_interval": 30.0}, generator=generator)
    app.state.ask.shutdown = shutdown

    async def go() -> httpx.Response:
        async with client(app) as http:
            return await http.post("/api/turn", json=submit(new_session_id(), "t1"))

    final = snapshots(asyncio.run(go()))[-1]
    assert final.payload.status == "error"
    assert final.payload.error is not None
    assert final.payload.error.code == "CHAT_TURN_INTERRUPTED"
    # The first delta was streamed on its own; the next 509 fill the record budget.
    assert text_of(final) == "".join(generator.pieces[:510])


# --------------------------------------------------------------------------- the snapshot clock


class PausingModel:
    """Two deltas at once, then a pause that lasts until the reader has seen the second
    one (or 10 s): a model thinking mid-answer."""

    model = None

    def __init__(self) -> None:
        self.seen = asyncio.Event()
        self.waited_out = False

    async def stream(self, request: GenerationRequest) -> AsyncIterator[str]:
        yield "First. "
        yield "Second. "
        try:
            await asyncio.wait_for(self.seen.wait(), timeout=10.0)
        except TimeoutError:
            self.waited_out = True
        yield "Third."


def test_pending_text_is_sent_when_its_interval_ends_without_waiting_for_the_next_delta(
    tmp_path: Path,
) -> None:
    """The second delta arrives inside the interval and is held; it goes out when the
    interval ends, while the model is still thinking, not with the next delta."""
    model = PausingModel()
    app = make_app(tmp_path, turn={"snapshot_interval": 0.05}, generator=model)
    body = json.dumps(submit(new_session_id(), "t1")).encode()
    texts: list[str] = []
    buffer = b""

    async def go() -> None:
        # Raw ASGI: httpx's ASGI transport hands over a body only once it is complete.
        done = asyncio.Event()
        sent = False

        async def receive() -> dict[str, Any]:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            await done.wait()
            return {"type": "http.disconnect"}

        async def send(message: dict[str, Any]) -> None:
            nonlocal buffer
            if message["type"] != "http.response.body":
                return
            buffer += message.get("body", b"")
            *lines, buffer = buffer.split(b"\n")
            for line in lines:
                event = decode_turn_event(line).event
                if isinstance(event, SnapshotTurnEvent):
                    texts.append(text_of(event))
                    if "Second." in texts[-1]:
                        model.seen.set()
            if not message.get("more_body"):
                done.set()

        scope = {
            "type": "http",
            "method": "POST",
            "path": "/api/turn",
            "query_string": b"",
            "headers": [(b"content-type", b"application/json")],
            "client": ADDRESS,
        }
        await app.state.turn.submit_app(scope, receive, send)

    asyncio.run(go())
    assert not model.waited_out, "the held delta was sent only with the next one"
    assert "First. Second. " in texts
    assert texts[-1] == "First. Second. Third."


def test_a_stored_message_without_metadata_belongs_to_no_turn(tmp_path: Path) -> None:
    """Metadata is optional in a stored message (an import, an older writer)."""
    store = TurnSessionStore()
    app = make_app(tmp_path, store)
    session = new_session_id()
    bare = _message("user", "t-old", "complete", "First?")
    del bare["metadata"]
    seed_session(store, session, [bare])

    async def go() -> httpx.Response:
        async with client(app) as http:
            return await http.post("/api/turn", json=submit(session, "t1"))

    response = asyncio.run(go())
    assert response.status_code == 200
    assert snapshots(response)[-1].payload.status == "complete"


# --------------------------------------------------------------------------- the answer bound


def _answer_of(tmp_path: Path, pieces: list[str]) -> SnapshotTurnEvent:
    app = make_app(tmp_path, generator=ScriptedGenerator(tuple(pieces)))

    async def go() -> httpx.Response:
        async with client(app) as http:
            return await http.post("/api/turn", json=submit(new_session_id(), "t1"))

    return snapshots(asyncio.run(go()))[-1]


# ASK_BACKEND_ANSWER_MAX_CHARS in JavaScript characters: 15 x 4096 + 2 x 2048 (astral).
AT_THE_BOUND = ["a" * 4096] * 15 + ["\U0001f600" * 2048]


def test_an_answer_at_the_char_bound_completes(tmp_path: Path) -> None:
    assert ASK_BACKEND_ANSWER_MAX_CHARS == 65_536
    final = _answer_of(tmp_path, AT_THE_BOUND)
    assert final.payload.status == "complete"
    assert text_of(final) == "".join(AT_THE_BOUND)


def test_an_answer_one_char_past_the_bound_fails(tmp_path: Path) -> None:
    final = _answer_of(tmp_path, [*AT_THE_BOUND, "!"])
    assert final.payload.status == "error"
    assert final.payload.error is not None
    assert final.payload.error.code == "CHAT_TURN_FAILED"


def test_usage_estimates_a_token_per_four_characters_rounded_up(tmp_path: Path) -> None:
    """Generators report no token counts: the turn's usage is its characters / 4, rounded
    up (17 characters are 5 tokens, 16 are 4), and the total is prompt plus completion."""
    for chars, tokens in ((16, 4), (17, 5)):
        usage = _answer_of(tmp_path / str(chars), ["a" * chars]).payload.usage
        assert usage.completion_tokens == tokens
        assert usage.total_tokens == usage.prompt_tokens + usage.completion_tokens


def test_prompt_usage_counts_the_question_and_the_passages_the_model_was_given(
    tmp_path: Path,
) -> None:
    """Prompt tokens are the question's, the history's and the passages' characters / 4,
    rounded up: the passages are added to what the question already counts."""
    from _ask_helpers import PASSAGE

    app = make_app(tmp_path)
    question = "q" * 40

    async def go() -> httpx.Response:
        async with client(app) as http:
            return await http.post("/api/turn", json=submit(new_session_id(), "t1", question))

    usage = snapshots(asyncio.run(go()))[-1].payload.usage
    assert usage.prompt_tokens == -(-(len(question) + len(PASSAGE.text)) // 4)


# --------------------------------------------------------------------------- saves and the lease


class ClockedModel:
    """Yields a delta, then (the test looking at the store meanwhile) moves the wall
    clock a minute on and finishes."""

    model = None

    def __init__(self, clock: WallClock) -> None:
        self.clock = clock
        self.started = asyncio.Event()
        self.release = asyncio.Event()

    async def stream(self, request: GenerationRequest) -> AsyncIterator[str]:
        yield "Partial "
        self.started.set()
        await self.release.wait()
        self.clock.now += 60
        yield "answer."


def test_a_running_turn_holds_a_lease_of_lease_seconds_and_saves_stamp_the_time(
    tmp_path: Path,
) -> None:
    clock = WallClock(WALL)
    model = ClockedModel(clock)
    store = TurnSessionStore()
    app = make_app(tmp_path, store, turn={"lease_seconds": 10.0}, generator=model, clock=clock)
    session = new_session_id()

    async def go() -> tuple[Any, httpx.Response]:
        async with client(app) as http:
            posting = asyncio.create_task(http.post("/api/turn", json=submit(session, "t1")))
            await model.started.wait()
            running = store.load_sync(key_of(session))
            model.release.set()
            return running, await posting

    running, response = asyncio.run(go())
    assert running is not None and running.envelope.active_turn is not None
    assert running.envelope.active_turn.expires_at == int(WALL * 1000) + 10_000
    sent = snapshots(response)
    assert sent[-1].payload.status == "complete"
    # One save, one cursor step: the turn's sequences are consecutive.
    sequences = [s.sequence for s in sent]
    assert sequences == list(range(sequences[0], sequences[0] + len(sequences)))
    row = store.load_sync(key_of(session))
    assert row is not None and row.cursor == sequences[-1]
    assert row.envelope.to_wire()["updatedAt"] == "2027-01-15T08:01:00.000Z"


class SlowSaveStore(TurnSessionStore):
    """Every save after the first takes 50 ms: renewals queue behind the turn's saves."""

    def __init__(self) -> None:
        super().__init__()
        self.saves = 0

    async def save(self, *args: Any, **kwargs: Any) -> bool:
        self.saves += 1
        if self.saves > 1:
            await asyncio.sleep(0.05)
        return await super().save(*args, **kwargs)


def test_a_renewal_queued_behind_the_final_save_neither_revives_the_lease_nor_fails(
    tmp_path: Path,
) -> None:
    """A lease of 30 ms renews every 10 ms, saves take 50 ms: a renewal is waiting when
    the final snapshot is saved. It must not write the lease back, nor count as a lost
    compare-and-set (which would end the stream with SESSION_CONFLICT)."""
    store = SlowSaveStore()
    app = make_app(
        tmp_path,
        store,
        turn={"lease_seconds": 0.03, "snapshot_interval": 0},
        generator=ScriptedGenerator(("Add ", "the ", "element.")),
    )
    session = new_session_id()

    async def go() -> httpx.Response:
        async with client(app) as http:
            return await http.post("/api/turn", json=submit(session, "t1"))

    response = asyncio.run(go())
    last = decode_turn_event(response.content.splitlines()[-1]).event
    assert isinstance(last, SnapshotTurnEvent)
    assert last.payload.status == "complete"
    row = store.load_sync(key_of(session))
    assert row is not None and row.envelope.active_turn is None
    assert row.cursor == last.sequence


class SlowAckStore(TurnSessionStore):
    """The shutdown deadline passes while the second save is on its way to the store
    (a slow network): the save must still land and be recorded before the turn ends."""

    def __init__(self, shutdown: Shutdown) -> None:
        super().__init__()
        self.shutdown = shutdown
        self.saves = 0

    async def save(self, *args: Any, **kwargs: Any) -> bool:
        self.saves += 1
        if self.saves == 2:
            self.shutdown.expired.set()
            await asyncio.sleep(0.3)
        return await super().save(*args, **kwargs)


def test_a_save_in_flight_at_the_deadline_is_recorded_so_the_interruption_is_saved(
    tmp_path: Path,
) -> None:
    shutdown = Shutdown()
    store = SlowAckStore(shutdown)
    app = make_app(
        tmp_path,
        store,
        turn={"snapshot_interval": 0},
        generator=ScriptedGenerator(("Add ", "the ", "element."), delay=0.5),
    )
    app.state.ask.shutdown = shutdown
    session = new_session_id()

    async def go() -> httpx.Response:
        async with client(app) as http:
            return await http.post("/api/turn", json=submit(session, "t1"))

    response = asyncio.run(go())
    last = decode_turn_event(response.content.splitlines()[-1]).event
    assert isinstance(last, SnapshotTurnEvent), "the interruption lost its compare-and-set"
    assert last.payload.error is not None
    assert last.payload.error.code == "CHAT_TURN_INTERRUPTED"
    row = store.load_sync(key_of(session))
    assert row is not None and row.envelope.active_turn is None


def _lines_with_streaming_budget(tmp_path: Path, budget: int | None) -> list[bytes]:
    """One delta's turn on a fixed clock (every line's size is then the same run to run)."""
    app = make_app(
        tmp_path,
        turn={"snapshot_interval": 0},
        generator=ScriptedGenerator(("Add the element.",)),
        clock=WallClock(WALL),
    )
    runner = app.state.turn.runner
    runner.byte_rate = float("inf")  # only the hard stop
    if budget is not None:
        runner.streaming_budget = budget

    async def go() -> httpx.Response:
        async with client(app) as http:
            return await http.post("/api/turn", json=submit(new_session_id(), "t1"))

    lines: list[bytes] = asyncio.run(go()).content.splitlines(keepends=True)
    return lines


def test_a_streaming_snapshot_that_exactly_fills_the_budget_is_sent_and_one_byte_more_is_not(
    tmp_path: Path,
) -> None:
    free = _lines_with_streaming_budget(tmp_path / "free", None)
    assert len(free) == 3  # the question, the delta, the final snapshot
    exact = len(free[0]) + len(free[1])  # bytes on the wire, newlines included
    at_limit = _lines_with_streaming_budget(tmp_path / "at", exact)
    past = _lines_with_streaming_budget(tmp_path / "past", exact - 1)
    assert [len(line) for line in at_limit] == [len(line) for line in free]
    assert len(past) == 2  # the delta waited for the final snapshot
    final = decode_turn_event(past[-1]).event
    assert isinstance(final, SnapshotTurnEvent) and final.payload.status == "complete"
    assert text_of(final) == "Add the element."


def test_followers_of_a_finished_run_get_its_lines_and_end() -> None:
    async def go() -> list[bytes]:
        run = TurnRun()
        run.push("one")
        run.push("two")
        run.finish()
        return [line async for line in run.follow(0)]

    async def bounded() -> list[bytes]:
        return await asyncio.wait_for(go(), timeout=10.0)  # generous: a hang fails

    assert asyncio.run(bounded()) == [b"one\n", b"two\n"]


# --------------------------------------------------------------------------- lineage and outcome


def _lineage_turn(
    tmp_path: Path, messages: list[dict[str, Any]], lineage: dict[str, str], **options: Any
) -> httpx.Response:
    store = TurnSessionStore()
    app = make_app(tmp_path, store, **options)
    session = new_session_id()
    seed_session(store, session, messages)

    async def go() -> httpx.Response:
        async with client(app) as http:
            return await http.post("/api/turn", json=submit(session, "t9", lineage=lineage))

    return asyncio.run(go())


def test_a_retry_of_a_later_failed_turn_keeps_everything_before_its_question(
    tmp_path: Path,
) -> None:
    """Retry re-asks the failed turn's question: the messages up to and including it are
    kept (not only the first turn's), and its one failed answer is replaced."""
    history = [
        _message("user", "t1", "complete", "First?"),
        _message("assistant", "t1", "complete", "First answer."),
        _message("user", "t2", "complete", "Second?"),
        _message("assistant", "t2", "error", ""),
    ]
    retry = {"operation": "retry", "parentTurnId": "t2", "sourceMessageId": "u-t2"}
    response = _lineage_turn(tmp_path, history, retry)
    assert response.status_code == 200
    final = snapshots(response)[-1]
    assert final.payload.status == "complete"
    kept = [(m.id, m.content) for m in final.payload.messages[:-1]]
    assert kept == [(m["id"], m["content"]) for m in history[:3]]
    assert final.payload.messages[-1].role == "assistant"


def test_a_retry_is_refused_when_more_than_one_message_follows_the_question(
    tmp_path: Path,
) -> None:
    """A failed turn has one answer after its question; two (even both failed) is not a
    turn this retry may replace."""
    second_error = {**_message("assistant", "t1", "error", ""), "id": "a-t1-second"}
    history = [_message("user", "t1", "complete", "First?"), _message("assistant", "t1", "error")]
    retry = {"operation": "retry", "parentTurnId": "t1", "sourceMessageId": "u-t1"}
    assert _lineage_turn(tmp_path / "one", history, retry).status_code == 200
    refused = _lineage_turn(tmp_path / "two", [*history, second_error], retry)
    assert refused.status_code == 400
    assert refused.json()["error"]["code"] == "REQUEST_INVALID_EVENT"


def test_a_regenerate_with_no_question_before_the_answer_is_refused(tmp_path: Path) -> None:
    response = _lineage_turn(
        tmp_path,
        [_message("assistant", "t1", "complete", "An answer nobody asked for.")],
        {"operation": "regenerate", "parentTurnId": "t1", "sourceMessageId": "a-t1"},
    )
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "REQUEST_INVALID_EVENT"


def test_a_complete_turn_carries_no_error_and_an_empty_answer_is_a_failed_turn(
    tmp_path: Path,
) -> None:
    done = _answer_of(tmp_path / "done", ["An answer."]).payload
    assert done.status == "complete" and done.error is None
    empty = _answer_of(tmp_path / "empty", []).payload
    assert empty.status == "error"
    assert empty.error is not None and empty.error.code == "CHAT_TURN_FAILED"


def test_the_64_newest_terminal_turns_are_kept() -> None:
    from agentskit_web.server.turn_runner import _terminal

    older = [{"turnId": f"t{i}", "outcome": "complete"} for i in range(64)]
    kept = _terminal({"terminalTurns": older}, "t-new", "error")
    assert len(kept) == 64
    assert kept[0]["turnId"] == "t1" and kept[-1] == {"turnId": "t-new", "outcome": "error"}
    at_limit = _terminal({"terminalTurns": older[1:]}, "t-new", "complete")
    assert [t["turnId"] for t in at_limit] == [f"t{i}" for i in range(1, 64)] + ["t-new"]


def test_a_turn_records_its_metrics_under_the_site_and_a_request_id(tmp_path: Path) -> None:
    """The turn's metrics carry the site's ids, a request id of its own in the metrics'
    format and the wall clock's time, as an Ask request's do (docs/operations.md). Found
    by mutation testing: turns made `turn-<16 hex>` ids, which the metric refused, and
    the recorder (which never fails a request) dropped every metric of every turn."""
    from agentskit_web.server.metrics import MemoryMetrics, utc_timestamp

    metrics = MemoryMetrics()
    clock = WallClock(1_767_225_600.0)  # 2026-01-01T00:00:00Z
    app = make_app(tmp_path, metrics=metrics, clock=clock)

    async def go() -> httpx.Response:
        async with client(app) as http:
            return await http.post("/api/turn", json=submit(new_session_id(), "t1"))

    assert asyncio.run(go()).status_code == 200
    assert metrics.records, "the turn recorded nothing"
    site_config = app.state.ask.site
    for metric in metrics.records:
        assert (metric.site_id, metric.corpus_id) == (site_config.site_id, site_config.corpus_id)
        assert re.fullmatch(r"req-[0-9a-f]{32}", metric.request_id)
        assert metric.emitted_at == utc_timestamp(clock.now)
    assert len({m.request_id for m in metrics.records}) == 1


class StalledModel:
    """Sends a few words, then waits for ever (a model that stopped sending)."""

    model = None

    async def stream(self, request: GenerationRequest) -> AsyncIterator[str]:
        yield "A start "
        await asyncio.Event().wait()
        yield "never"


@pytest.mark.parametrize(
    ("request_ms", "generation_ms"),
    [(300, 60_000), (60_000, 300)],
    ids=["request-deadline-first", "generation-timeout-first"],
)
def test_a_stalled_model_ends_the_turn_as_failed_at_the_nearer_deadline(
    tmp_path: Path, request_ms: int, generation_ms: int
) -> None:
    """The generation gets the shorter of its own timeout and what is left of the
    request's; when it runs out the turn is saved as failed, its text so far kept. The
    other limit is a minute: were it the one used, the turn would outlast the 10 s wait."""
    config = site(limits__requestTimeoutMs=request_ms, limits__generationTimeoutMs=generation_ms)
    app = make_app(tmp_path, config=config, generator=StalledModel())

    async def go() -> httpx.Response:
        async with client(app) as http:
            return await http.post("/api/turn", json=submit(new_session_id(), "t1"))

    response = asyncio.run(asyncio.wait_for(go(), timeout=10))
    final = snapshots(response)[-1].payload
    assert final.status == "error"
    assert final.error is not None and final.error.code == "CHAT_TURN_FAILED"


class MixedModel:
    """A generator that also yields things that are not text (an owner's plugin bug)."""

    model = None

    async def stream(self, request: GenerationRequest) -> AsyncIterator[Any]:
        for piece in ("Add ", 7, b"bytes", "", None, "the element."):
            yield piece


def test_pieces_of_a_generator_that_are_not_text_are_skipped(tmp_path: Path) -> None:
    final = _answer_of_model(tmp_path, MixedModel())
    assert final.payload.status == "complete"
    assert text_of(final) == "Add the element."


def _answer_of_model(tmp_path: Path, model: Any) -> SnapshotTurnEvent:
    app = make_app(tmp_path, generator=model)

    async def go() -> httpx.Response:
        async with client(app) as http:
            return await http.post("/api/turn", json=submit(new_session_id(), "t1"))

    return snapshots(asyncio.run(go()))[-1]


def test_a_turn_that_loses_its_session_says_so_once_in_the_log_and_leaves_no_run(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Another writer took the session mid-turn (every save after the second loses its
    compare-and-set): a warning names the session and the turn, and the finished run is
    no longer listed as running."""
    from test_turn_server import LosingStore

    app = make_app(
        tmp_path,
        LosingStore(2),
        turn={"snapshot_interval": 0},
        generator=ScriptedGenerator(("a ", "b ", "c")),
    )
    session = new_session_id()

    async def go() -> httpx.Response:
        async with client(app) as http:
            return await http.post("/api/turn", json=submit(session, "t1"))

    with caplog.at_level(logging.WARNING):
        asyncio.run(go())
    lost = [r.getMessage() for r in caplog.records if "lost its session" in r.getMessage()]
    assert lost == [f"turn lost its session to another writer: session={session} turn=t1"]
    assert app.state.turn.runner.runs == {}


class StalledClosableModel(StalledModel):
    """A stalled model that notes when its stream is closed (its `finally` runs)."""

    def __init__(self) -> None:
        self.closed = False

    async def stream(self, request: GenerationRequest) -> AsyncIterator[str]:
        try:
            async for piece in super().stream(request):
                yield piece
        finally:
            self.closed = True


def test_a_stream_cut_off_by_its_deadline_is_closed_before_the_turn_ends(tmp_path: Path) -> None:
    """The model's stream is closed as the turn fails, so a real model's connection is
    released then, not whenever the event loop collects the generator."""
    model = StalledClosableModel()
    config = site(limits__generationTimeoutMs=300)
    app = make_app(tmp_path, config=config, generator=model)

    async def go() -> tuple[httpx.Response, bool]:
        async with client(app) as http:
            response = await http.post("/api/turn", json=submit(new_session_id(), "t1"))
            return response, model.closed

    response, closed_by_then = asyncio.run(asyncio.wait_for(go(), timeout=10))
    assert snapshots(response)[-1].payload.status == "error"
    assert closed_by_then


class QuestionRecorder:
    """The owner's question log as a list (its writers have their own tests)."""

    def __init__(self) -> None:
        self.questions: list[tuple[str, str, str, list[str]]] = []

    def record_question(
        self, answer_id: str, today: Any, corpus: str, question: str, verdict: str, cited: Any
    ) -> None:
        self.questions.append((answer_id, question, verdict, list(cited)))

    def record_feedback(self, *args: Any) -> None:
        raise AssertionError("no feedback was sent")


def test_a_question_the_docs_do_not_answer_is_in_the_owners_log_as_declined(
    tmp_path: Path,
) -> None:
    """A turn whose search finds nothing still logs its question, as declined, under the id
    its answer carries: the owner's report of unanswered questions counts turns too."""
    log = QuestionRecorder()
    app = make_app(tmp_path, retriever=ScriptedRetriever(passages=()), question_log=log)

    async def go() -> httpx.Response:
        async with client(app) as http:
            return await http.post("/api/turn", json=submit(new_session_id(), "t1", "Pizza?"))

    assert snapshots(asyncio.run(go()))[-1].payload.status == "complete"
    assert log.questions == [("sources-t1", "Pizza?", "declined", [])]


def test_an_answered_turn_is_in_the_owners_log_with_the_sections_it_cited(
    tmp_path: Path,
) -> None:
    from _ask_helpers import PASSAGE

    log = QuestionRecorder()
    app = make_app(tmp_path, question_log=log)

    async def go() -> httpx.Response:
        async with client(app) as http:
            return await http.post("/api/turn", json=submit(new_session_id(), "t7", "Install?"))

    assert snapshots(asyncio.run(go()))[-1].payload.status == "complete"
    cited = f"{PASSAGE.path}#{PASSAGE.anchor}"
    assert log.questions == [("sources-t7", "Install?", "answered", [cited])]


def test_a_lease_renewal_that_loses_its_session_ends_the_stream_with_a_conflict(
    tmp_path: Path,
) -> None:
    """The model is silent past a renewal of the turn's lease (every third of 0.3 s), and
    that save, the second, finds another writer's row: the turn stops and the stream
    ends with SESSION_CONFLICT, not as a turn that went well."""
    from test_turn_server import events

    class SecondSaveLoses(TurnSessionStore):
        saves = 0

        def save_sync(self, *args: Any, **kwargs: Any) -> bool:
            self.saves += 1
            return self.saves != 2 and super().save_sync(*args, **kwargs)

    class SilentModel:
        model = None

        async def stream(self, request: GenerationRequest) -> AsyncIterator[str]:
            await asyncio.Event().wait()
            yield "never"

    app = make_app(
        tmp_path, SecondSaveLoses(), turn={"lease_seconds": 0.3}, generator=SilentModel()
    )

    async def go() -> httpx.Response:
        async with client(app) as http:
            return await http.post("/api/turn", json=submit(new_session_id(), "t1"))

    found = events(asyncio.run(asyncio.wait_for(go(), timeout=10)))
    assert found[-1].payload.code == "SESSION_CONFLICT"


def test_a_search_that_fails_ends_the_turn_as_failed(tmp_path: Path) -> None:
    """Not a decline: the search itself broke, so the turn is saved as failed
    (CHAT_TURN_FAILED), which the reader may retry."""
    app = make_app(tmp_path, retriever=ScriptedRetriever(error=RuntimeError("index gone")))

    async def go() -> httpx.Response:
        async with client(app) as http:
            return await http.post("/api/turn", json=submit(new_session_id(), "t1"))

    final = snapshots(asyncio.run(go()))[-1].payload
    assert final.status == "error"
    assert final.error is not None and final.error.code == "CHAT_TURN_FAILED"


def test_a_session_at_its_message_bound_keeps_room_for_the_answer_being_written() -> None:
    from agentskit_web.server.persistence import SESSION_RECORD_MAX_MESSAGES
    from agentskit_web.server.turn_runner import _bounded

    full = [{"id": str(i)} for i in range(SESSION_RECORD_MAX_MESSAGES + 1)]
    kept = _bounded(full)
    assert len(kept) == SESSION_RECORD_MAX_MESSAGES - 1 and kept[-1]["id"] == full[-1]["id"]
    room = full[: SESSION_RECORD_MAX_MESSAGES - 1]
    assert _bounded(room) == room


def test_turns_whose_longest_ids_differ_only_at_the_end_get_distinct_ids(tmp_path: Path) -> None:
    """A turn id may be 128 characters (SafeId); the ids made from it ("u-", "a-",
    "sources-" + turn id) must stay within 128 and still tell two such turns apart: cut to
    128, two ids differing in their last characters made one message id for two questions
    (an edit or a retry names its message by id) and one answer id for two answers (the
    owner's log and feedback key by it)."""
    store = TurnSessionStore()
    app = make_app(tmp_path, store)
    session = new_session_id()
    first, second = "t" * 127 + "1", "t" * 127 + "2"

    async def go() -> list[httpx.Response]:
        async with client(app) as http:
            return [
                await http.post("/api/turn", json={**submit(session, turn), "eventId": f"e{n}"})
                for n, turn in enumerate((first, second))
            ]

    responses = asyncio.run(go())
    assert [r.status_code for r in responses] == [200, 200]
    messages = snapshots(responses[1])[-1].payload.messages
    ids = [m.id for m in messages]
    assert len(ids) == 4 and len(set(ids)) == 4, ids
    assert all(len(i) <= 128 for i in ids), ids
    answers = {source_instance(snapshots(r)[-1]) for r in responses}
    assert len(answers) == 2 and all(len(a) <= 128 for a in answers), answers


def source_instance(snapshot: SnapshotTurnEvent) -> str:
    decoded = decode_assistant_content(snapshot.payload.messages[-1].content)
    assert decoded.ok
    [frame] = [p["frame"] for p in decoded.parts if p["kind"] == "component"]
    instance: str = frame["instanceId"]
    return instance


def test_the_generator_sees_questions_as_written_and_only_complete_messages(
    tmp_path: Path,
) -> None:
    """History is the complete questions and answers: a question is the reader's text as
    written (even one that starts like encoded content), and a failed answer, with any
    other message not complete, is left out."""
    seeded = [
        _message("user", "t-a", "complete", "\x1eraw question"),
        _message("assistant", "t-a", "complete", "An answer."),
        _message("user", "t-b", "complete", "Asked again?"),
        _message("assistant", "t-b", "error", "Half an answer"),
    ]
    assert _history_seen(tmp_path, seeded) == [
        ("user", "\x1eraw question"),
        ("assistant", "An answer."),
        ("user", "Asked again?"),
    ]


def _answer_beside_long_sources(tmp_path: Path, separators: int) -> SnapshotTurnEvent:
    """A turn whose answer is `separators` line separators (six bytes each on the wire,
    escaped) cited by eight sources with the longest titles and paths (about 29 kB)."""
    passages = tuple(
        Passage("/" + "p" * 2000 + str(n), None, "標" * 300, "題" * 300, "text") for n in range(8)
    )
    generator = ScriptedGenerator(tuple(["\u2028" * 500] * (separators // 500)))
    app = make_app(
        tmp_path,
        TurnSessionStore(),
        generator=generator,
        retriever=ScriptedRetriever(passages),
        config=site(limits__maxSources=8),
    )

    async def go() -> httpx.Response:
        async with client(app) as http:
            return await http.post("/api/turn", json=submit(new_session_id(), "t1"))

    response = asyncio.run(go())
    assert response.status_code == 200
    return snapshots(response)[-1]


def test_an_answer_leaving_room_for_its_sources_completes_and_one_that_does_not_fails(
    tmp_path: Path,
) -> None:
    """The content's byte bound holds the answer and its source list: 38,000 escaped
    separators (228 kB) and the list fit; 39,000 (234 kB) fit alone, the list no longer
    does, and the turn fails with its text kept rather than sending content past the bound."""
    fits = _answer_beside_long_sources(tmp_path / "fits", 38_000)
    assert fits.payload.status == "complete"
    assert source_instance(fits) == "sources-t1"
    over = _answer_beside_long_sources(tmp_path / "over", 39_000)
    assert over.payload.status == "error"
    assert over.payload.error is not None and over.payload.error.code == "CHAT_TURN_FAILED"
    content = over.payload.messages[-1].content
    assert len(content.encode()) <= ASSISTANT_CONTENT_MAX_BYTES
    decoded = decode_assistant_content(content)
    assert decoded.ok
    assert [p["kind"] for p in decoded.parts] == ["text"] * len(decoded.parts)
    assert sum(len(p["text"]) for p in decoded.parts) == 39_000


def test_a_first_save_that_fails_answers_server_internal_and_logs_the_ids(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    app = make_app(tmp_path, FailingSettleStore())
    session = new_session_id()
    caplog.set_level(logging.INFO, logger="agentskit_web.turn")

    async def go() -> httpx.Response:
        async with client(app) as http:
            return await http.post("/api/turn", json=submit(session, "t-first"))

    response = asyncio.run(go())
    assert response.status_code == 500
    assert response.json()["error"]["code"] == "SERVER_INTERNAL"
    [record] = [r for r in caplog.records if r.name == "agentskit_web.turn"]
    head = record.getMessage().split(" at ", 1)[0]
    assert head == f"the first save failed: session={session} turn=t-first error=PersistenceError"


def test_a_save_lost_while_the_answer_streams_ends_the_turn_as_a_conflict(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Another writer takes the session between two streaming snapshots: the turn stops
    there (no more saves), says SESSION_CONFLICT, and the log says so once."""
    from test_turn_server import LosingStore

    store = LosingStore(2)  # the first save and the first streaming snapshot
    app = make_app(
        tmp_path,
        store,
        turn={"snapshot_interval": 0},
        generator=ScriptedGenerator(("a ", "b ", "c ", "d"), delay=0.3),
    )
    session = new_session_id()

    async def go() -> httpx.Response:
        async with client(app) as http:
            return await http.post("/api/turn", json=submit(session, "t1"))

    with caplog.at_level(logging.WARNING):
        response = asyncio.run(go())
    last = decode_turn_event(response.content.splitlines()[-1])
    assert last.ok and not isinstance(last.event, SnapshotTurnEvent)
    assert last.event.payload.code == "SESSION_CONFLICT"  # type: ignore[union-attr]
    assert store.saves == 3  # the lost one was the last
    lost = [r.getMessage() for r in caplog.records if "lost its session" in r.getMessage()]
    assert lost == [f"turn lost its session to another writer: session={session} turn=t1"]


class HolderRecordingStore(TurnSessionStore):
    """Notes the lease holder every save is made under."""

    def __init__(self) -> None:
        super().__init__()
        self.holders: list[str] = []

    async def save(self, *args: Any, **kwargs: Any) -> bool:
        self.holders.append(kwargs.get("holder", ""))
        return await super().save(*args, **kwargs)


def test_every_save_of_a_turn_names_this_instance_as_the_lease_holder(tmp_path: Path) -> None:
    """Another instance reads the holder to know whose lease it waits on."""
    store = HolderRecordingStore()
    app = make_app(tmp_path, store, turn={"instance_id": "node-a:1:cafe", "snapshot_interval": 0})

    async def go() -> httpx.Response:
        async with client(app) as http:
            return await http.post("/api/turn", json=submit(new_session_id(), "t1"))

    assert asyncio.run(go()).status_code == 200
    assert len(store.holders) >= 2
    assert set(store.holders) == {"node-a:1:cafe"}


def test_session_times_are_utc_whatever_the_servers_time_zone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TZ", "Asia/Tokyo")
    time.tzset()
    try:
        store = TurnSessionStore()
        app = make_app(tmp_path, store, clock=WallClock(WALL))
        session = new_session_id()

        async def go() -> httpx.Response:
            async with client(app) as http:
                return await http.post("/api/turn", json=submit(session, "t1"))

        assert asyncio.run(go()).status_code == 200
    finally:
        monkeypatch.undo()
        time.tzset()
    row = store.load_sync(key_of(session))
    assert row is not None
    assert row.envelope.updated_at == "2027-01-15T08:00:00.000Z"
    assert {m["createdAt"] for m in row.messages} == {"2027-01-15T08:00:00.000Z"}


class FinalSaveAtDeadlineStore(TurnSessionStore):
    """The shutdown deadline passes while the turn's final save (no active turn left in the
    envelope) is on its way to the store."""

    def __init__(self, shutdown: Shutdown) -> None:
        super().__init__()
        self.shutdown = shutdown
        self.saves = 0

    async def save(self, *args: Any, **kwargs: Any) -> bool:
        self.saves += 1
        envelope = args[1]
        if self.saves > 1 and isinstance(envelope, dict) and "activeTurn" not in envelope:
            self.shutdown.expired.set()
            await asyncio.sleep(0.3)
        return await super().save(*args, **kwargs)


def test_a_deadline_during_the_final_save_leaves_the_finished_answer_as_it_is(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The answer was complete and its final snapshot saved: the shutdown landing then
    neither re-saves it as interrupted nor reports a lost session."""
    shutdown = Shutdown()
    store = FinalSaveAtDeadlineStore(shutdown)
    app = make_app(tmp_path, store, generator=ScriptedGenerator(("Add ", "the element.")))
    app.state.ask.shutdown = shutdown
    session = new_session_id()

    async def go() -> httpx.Response:
        async with client(app) as http:
            return await http.post("/api/turn", json=submit(session, "t1"))

    with caplog.at_level(logging.WARNING):
        response = asyncio.run(go())
    assert shutdown.expired.is_set()
    last = decode_turn_event(response.content.splitlines()[-1]).event
    assert isinstance(last, SnapshotTurnEvent)
    assert last.payload.status == "complete" and last.payload.error is None
    row = store.load_sync(key_of(session))
    assert row is not None and row.envelope.active_turn is None
    assert row.cursor == last.sequence
    assert row.messages[-1]["status"] == "complete"
    assert not [r for r in caplog.records if "lost its session" in r.getMessage()]
