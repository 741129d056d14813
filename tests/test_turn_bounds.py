"""The turn endpoint's cost bounds (issue 23): each at its limit and one past it.

Input length, a session's bytes, the snapshot clock under slow saves, the lines a
running turn keeps, running turns per client and in total (detached turns
included), the per-client session cap with TTL first and a refused-when-full
total, capability ids, and the log line of an unexpected failure.
"""

import asyncio
import json
import logging
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from _ask_helpers import ScriptedGenerator, ScriptedRetriever, site, write_docs
from agentskit_web.chat.turn.adapter import new_session_id
from agentskit_web.protocol import decode_turn_event
from agentskit_web.protocol.turn import SnapshotTurnEvent
from agentskit_web.protocol.wire_json import dump_json
from agentskit_web.server.ask_app import create_ask_app
from agentskit_web.server.generators import GenerationRequest
from agentskit_web.server.persistence import PersistenceError
from agentskit_web.server.turn_app import RUN_RETAINED_LINES, mount_turn
from agentskit_web.server.turn_limits import (
    CAPABILITY_ID_MIN_CHARS,
    TURN_INPUT_MAX_CHARS,
    TURN_MAX_RUNNING_PER_CLIENT,
    TURN_RESPONSE_MAX_BYTES,
    TURN_SESSION_MAX_BYTES,
    TURN_STREAMING_SHARE,
    RunningTurns,
    is_capability_id,
)
from agentskit_web.server.turn_runner import TurnRun
from agentskit_web.server.turn_store import StoreFull, TurnSessionKey, TurnSessionStore

CLIENT = ("203.0.113.7", 5000)


def submit(session_id: str, turn_id: str, text: str = "How do I install the widget?") -> bytes:
    return json.dumps(
        {
            "protocol": "agentskit.chat.turn",
            "version": 1,
            "eventId": f"e-{turn_id}",
            "sessionId": session_id,
            "turnId": turn_id,
            "sequence": 0,
            "emittedAt": "2026-01-01T00:00:00Z",
            "event": "client.turn.submit",
            "payload": {"input": text},
        },
        ensure_ascii=False,
    ).encode()


def make_app(
    tmp_path: Path, store: TurnSessionStore | None = None, turn: Any = None, **options: Any
) -> Any:
    options.setdefault("generator", ScriptedGenerator(("Add ", "the element.")))
    # Fixed passages: these tests are about the turn's bounds, and real retrieval of a
    # 16,384-character question can pass the site's retrieval timeout on a loaded machine.
    options.setdefault("retriever", ScriptedRetriever())
    app = create_ask_app(site(), write_docs(tmp_path / "docs"), **options)
    mount_turn(app, store, **(turn or {}))
    return app


def client(app: Any, address: tuple[str, int] = CLIENT) -> httpx.AsyncClient:
    transport = httpx.ASGITransport(app=app, client=address)
    return httpx.AsyncClient(transport=transport, base_url="http://testserver")


async def post(app: Any, body: bytes, address: tuple[str, int] = CLIENT) -> httpx.Response:
    async with client(app, address) as http:
        return await http.post(
            "/api/turn", content=body, headers={"content-type": "application/json"}
        )


def snapshots(response: httpx.Response) -> list[SnapshotTurnEvent]:
    found = []
    for line in response.content.splitlines():
        result = decode_turn_event(line)
        assert result.ok
        if isinstance(result.event, SnapshotTurnEvent):
            found.append(result.event)
    return found


class Gate:
    """A generator that yields one delta, then waits for `release` (a turn that keeps running)."""

    model = None

    def __init__(self) -> None:
        self.release = asyncio.Event()

    async def stream(self, request: GenerationRequest) -> AsyncIterator[str]:
        yield "Partial "
        await self.release.wait()
        yield "answer."


async def submit_and_leave(
    app: Any, body: bytes, address: tuple[str, int] = CLIENT
) -> tuple[int, dict[str, str], bytes]:
    """POST a turn through the raw ASGI app, read the first chunk, then disconnect.

    httpx's ASGI transport reads a response to its end, so a client that goes
    away after one line is played here at the ASGI level (a real server gives
    the app the same `http.disconnect`).
    """
    first = asyncio.Event()
    sent = False
    status = 0
    headers: dict[str, str] = {}
    chunks: list[bytes] = []

    async def receive() -> dict[str, Any]:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        await first.wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]
            headers.update({k.decode(): v.decode() for k, v in message["headers"]})
        elif message.get("body"):
            chunks.append(message["body"])
            first.set()
        if message["type"] == "http.response.body" and not message.get("more_body"):
            first.set()

    scope = {
        "type": "http",
        "method": "POST",
        "path": "/api/turn",
        "query_string": b"",
        "headers": [(b"content-type", b"application/json")],
        "client": address,
    }
    await app.state.turn.submit_app(scope, receive, send)
    return status, headers, b"".join(chunks)


# --------------------------------------------------------------------------- input


def test_input_at_the_bound_is_accepted_and_one_past_is_refused(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    assert TURN_INPUT_MAX_CHARS == 16_384  # the Ask path's message bound

    async def go() -> tuple[httpx.Response, httpx.Response]:
        at = await post(app, submit(new_session_id(), "t1", "a" * TURN_INPUT_MAX_CHARS))
        past = await post(app, submit(new_session_id(), "t1", "a" * (TURN_INPUT_MAX_CHARS + 1)))
        return at, past

    at, past = asyncio.run(go())
    assert at.status_code == 200 and snapshots(at)[-1].payload.status == "complete"
    assert past.status_code == 400
    error = past.json()["error"]
    assert error["code"] == "REQUEST_INVALID_EVENT" and "16384 characters" in error["message"]


def test_input_length_counts_javascript_characters(tmp_path: Path) -> None:
    """An astral character is two UTF-16 units, as the widget counts it."""
    app = make_app(tmp_path)
    text = "\U0001f600" * (TURN_INPUT_MAX_CHARS // 2) + "a"
    assert asyncio.run(post(app, submit(new_session_id(), "t1", text))).status_code == 400


# --------------------------------------------------------------------------- session bytes


def _user_message_bytes(tmp_path: Path, question: str) -> int:
    """The UTF-8 JSON size of a first turn's messages before its answer (what is bounded)."""
    app = make_app(tmp_path / "probe")
    first = snapshots(asyncio.run(post(app, submit(new_session_id(), "t1", question))))[0]
    user = first.payload.messages[0].to_wire()
    return len(dump_json([user]).encode())


def test_a_session_at_its_byte_bound_starts_and_one_byte_past_is_refused(tmp_path: Path) -> None:
    question = "é" * 1000  # two UTF-8 bytes each: bytes are counted, not characters
    size = _user_message_bytes(tmp_path, question)

    def status(bound: int) -> httpx.Response:
        app = make_app(tmp_path / str(bound), turn={"session_max_bytes": bound})
        return asyncio.run(post(app, submit(new_session_id(), "t1", question)))

    assert status(size).status_code == 200
    past = status(size - 1)
    assert past.status_code == 413
    error = past.json()["error"]
    assert error["code"] == "SESSION_TOO_LARGE" and error["retryable"] is False
    assert "start a new conversation" in error["message"]


def test_the_default_session_bound_is_the_constant(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    assert app.state.turn.session_max_bytes == TURN_SESSION_MAX_BYTES == 512 * 1024


def test_a_full_session_refuses_the_next_turn_and_keeps_what_it_has(tmp_path: Path) -> None:
    """The session grows by each answer; once past the bound the next submit is refused."""
    question = "x" * 4000
    size = _user_message_bytes(tmp_path, question)
    app = make_app(tmp_path / "app", turn={"session_max_bytes": size + 2000})
    session = new_session_id()

    async def go() -> tuple[httpx.Response, httpx.Response, httpx.Response]:
        first = await post(app, submit(session, "t1", question))
        second = await post(app, submit(session, "t2", question))
        async with client(app) as http:
            kept = await http.get(f"/api/turn/{session}")
        return first, second, kept

    first, second, kept = asyncio.run(go())
    assert first.status_code == 200
    assert second.status_code == 413
    assert snapshots(kept)[-1].payload.messages == snapshots(first)[-1].payload.messages


# --------------------------------------------------------------------------- snapshot clock


class SlowStore(TurnSessionStore):
    """A real store whose every save takes `delay` seconds longer (a big session on a slow disk)."""

    def __init__(self, delay: float) -> None:
        super().__init__()
        self.delay = delay
        self.saves = 0

    async def save(self, *args: Any, **kwargs: Any) -> bool:
        self.saves += 1
        await asyncio.sleep(self.delay)
        return await super().save(*args, **kwargs)


def test_slow_saves_do_not_turn_each_queued_delta_into_a_snapshot(tmp_path: Path) -> None:
    """500 deltas at once and saves slower than the interval: at most one save per interval."""
    interval = 0.016
    store = SlowStore(delay=0.03)
    pieces = tuple(f"w{i} " for i in range(500))
    app = make_app(
        tmp_path,
        store,
        turn={"snapshot_interval": interval},
        generator=ScriptedGenerator(pieces),
    )
    started = time.monotonic()
    response = asyncio.run(post(app, submit(new_session_id(), "t1")))
    duration = time.monotonic() - started
    final = snapshots(response)[-1]
    assert final.payload.status == "complete"
    # Saves: the first, the streaming ones, the last. Each streaming save waits for the
    # interval after the previous save ended, so they cannot outnumber duration / interval.
    assert store.saves <= duration / interval + 2
    # ... and, as the clock waits at least as long as a save took, far fewer than that.
    assert store.saves <= duration / (2 * store.delay) + 2


def test_the_snapshot_clock_waits_at_least_as_long_as_a_save_took(tmp_path: Path) -> None:
    """A steady generator and saves 5x the interval: saving takes at most half the turn."""
    store = SlowStore(delay=0.05)
    pieces = tuple(f"w{i} " for i in range(300))
    app = make_app(
        tmp_path,
        store,
        turn={"snapshot_interval": 0.01},
        generator=ScriptedGenerator(pieces, delay=0.003),
    )
    started = time.monotonic()
    response = asyncio.run(post(app, submit(new_session_id(), "t1")))
    duration = time.monotonic() - started
    assert snapshots(response)[-1].payload.status == "complete"
    assert duration > 0.9  # long enough that a clock of interval + save would save more often
    # Each streaming save (>= 0.05 s) is followed by a wait at least as long.
    assert store.saves <= duration / (2 * store.delay) + 2


# --------------------------------------------------------------------------- response bytes


def _fill(store: TurnSessionStore, session_id: str, budget: int) -> int:
    """Question/answer pairs straight into the store up to `budget` bytes of message JSON."""
    pair_chars = 9_000
    messages: list[dict[str, Any]] = []
    turn = 0
    while True:
        turn += 1
        pair = [
            {
                "id": f"{role[0]}-f{turn}",
                "role": role,
                "content": role[0] * pair_chars,
                "status": "complete",
                "createdAt": "2026-01-01T00:00:00.000Z",
                "metadata": {"turnId": f"f{turn}"},
            }
            for role in ("user", "assistant")
        ]
        if len(dump_json([*messages, *pair]).encode()) > budget or len(messages) > 90:
            break
        messages.extend(pair)
    key = TurnSessionKey(site()["siteId"], "anonymous", session_id, client_key="ip:" + CLIENT[0])
    assert store.save_sync(key, _envelope(session_id), messages, "{}", None)
    return len(dump_json(messages).encode())


def test_a_paced_model_on_the_largest_session_sends_a_bounded_response(tmp_path: Path) -> None:
    """Issue 36: one full snapshot per token of a model pacing 10 ms sent 170 MB per turn.

    The session is as large as the bound allows; 300 deltas 10 ms apart. The
    whole response stays far under `TURN_RESPONSE_MAX_BYTES`, and the bytes
    sent before the final line grow at most at the runner's byte rate (plus
    the first line and one snapshot). On the old clock (interval = max(16 ms,
    save)) this sent one ~520 kB snapshot every few tens of ms.
    """
    store = TurnSessionStore()
    session = new_session_id()
    session_bytes = _fill(store, session, TURN_SESSION_MAX_BYTES - 2_000)
    pieces = tuple(f"word{i} " for i in range(300))
    app = make_app(tmp_path, store, generator=ScriptedGenerator(pieces, delay=0.01))
    started = time.monotonic()
    response = asyncio.run(post(app, submit(session, "t1")))
    duration = time.monotonic() - started
    lines = response.content.splitlines(keepends=True)
    final = snapshots(response)[-1]
    assert final.payload.status == "complete"
    answer = final.payload.messages[-1].content
    assert all(piece.strip() in answer for piece in pieces)
    assert session_bytes > TURN_SESSION_MAX_BYTES - 20_000
    assert len(response.content) <= TURN_RESPONSE_MAX_BYTES // 4
    streamed = sum(len(line) for line in lines[:-1])
    largest = max(len(line) for line in lines)
    rate = (
        TURN_RESPONSE_MAX_BYTES
        * TURN_STREAMING_SHARE
        / (site()["limits"]["requestTimeoutMs"] / 1000)
    )
    assert app.state.turn.runner.byte_rate == rate
    assert streamed <= rate * duration + 2 * largest


def test_the_streaming_budget_is_a_hard_stop(tmp_path: Path) -> None:
    """With the byte rate lifted, the streaming snapshots stop at the budget; the final
    snapshot still carries the whole answer."""
    budget_total = 60_000
    pieces = tuple(f"piece {i} of the answer. " for i in range(400))
    app = make_app(
        tmp_path,
        turn={"snapshot_interval": 0, "response_max_bytes": budget_total},
        generator=ScriptedGenerator(pieces, delay=0.001),
    )
    runner = app.state.turn.runner
    runner.byte_rate = float("inf")  # only the hard stop left
    response = asyncio.run(post(app, submit(new_session_id(), "t1")))
    lines = response.content.splitlines(keepends=True)
    streamed = sum(len(line) for line in lines[:-1])
    assert len(lines) > 5  # it streamed before it stopped
    assert streamed <= runner.streaming_budget == budget_total * TURN_STREAMING_SHARE
    assert streamed > runner.streaming_budget - 2 * len(lines[-2])  # it used the budget
    final = snapshots(response)[-1]
    assert final.payload.status == "complete"
    text = "".join(
        json.loads(record)["text"]
        for record in final.payload.messages[-1].content.split("\n")[1:]
        if record and json.loads(record)["kind"] == "text"
    )
    assert text == "".join(pieces)


def test_a_lease_renewal_is_saved_but_not_sent(tmp_path: Path) -> None:
    """A model that thinks longer than a third of the lease: its renewals send nothing
    (each was a whole session on the wire, every few seconds, saying nothing new)."""
    store = CountingStore()
    app = make_app(
        tmp_path,
        store,
        turn={"lease_seconds": 0.3, "snapshot_interval": 0},
        generator=ScriptedGenerator(("Add ", "the ", "element."), delay=0.25),
    )
    response = asyncio.run(post(app, submit(new_session_id(), "t1")))
    sent = snapshots(response)
    assert sent[-1].payload.status == "complete"
    assert len(sent) == 5  # the question, three deltas, the final
    assert store.saves > len(sent)  # the renewals were saved
    bodies = [dump_json(s.payload.messages[-1].to_wire()) for s in sent]
    assert len(set(bodies)) == len(bodies)


class CountingStore(TurnSessionStore):
    def __init__(self) -> None:
        super().__init__()
        self.saves = 0

    async def save(self, *args: Any, **kwargs: Any) -> bool:
        self.saves += 1
        return await super().save(*args, **kwargs)


def test_a_running_turn_keeps_only_its_newest_lines() -> None:
    async def go() -> tuple[int, list[bytes], list[bytes]]:
        run = TurnRun()
        for index in range(100):
            run.push(f"line {index}")
        late = [line async for line in _until_done(run, 0)]
        resumed = [line async for line in _until_done(run, run.count - 1)]
        return len(run.lines), late, resumed

    kept, late, resumed = asyncio.run(go())
    assert kept == RUN_RETAINED_LINES == 2
    assert late == [b"line 98\n", b"line 99\n"]  # a follower behind skips to the newest
    assert resumed == [b"line 99\n"]


async def _until_done(run: TurnRun, start: int) -> AsyncIterator[bytes]:
    run.finish()
    async for line in run.follow(start):
        yield line


# --------------------------------------------------------------------------- running turns


def test_detached_turns_count_against_the_per_client_cap(tmp_path: Path) -> None:
    gate = Gate()
    app = make_app(tmp_path, generator=gate, turn={"snapshot_interval": 0})
    turn = app.state.turn
    key = "ip:203.0.113.7"

    async def go() -> None:
        for index in range(TURN_MAX_RUNNING_PER_CLIENT):  # up to the cap: all start
            status, _, first = await submit_and_leave(app, submit(new_session_id(), f"t{index}"))
            assert status == 200 and first
        assert turn.running.running(key) == TURN_MAX_RUNNING_PER_CLIENT
        assert app.state.ask.in_flight(key) == 0  # no response is open any more
        status, headers, body = await submit_and_leave(app, submit(new_session_id(), "t9"))
        assert status == 429
        assert json.loads(body)["error"]["code"] == "ASK_RATE_LIMITED"
        assert headers["retry-after"] == "1"
        # Another client is not affected by this one's turns.
        other, _, _ = await submit_and_leave(
            app, submit(new_session_id(), "t1"), ("198.51.100.2", 1)
        )
        assert other == 200
        gate.release.set()
        await turn.drain()
        assert turn.running.running() == 0
        again, _, _ = await submit_and_leave(app, submit(new_session_id(), "t10"))
        assert again == 200
        await turn.drain()

    asyncio.run(go())


def test_the_global_running_cap_answers_503_with_retry_after(tmp_path: Path) -> None:
    gate = Gate()
    app = make_app(
        tmp_path,
        generator=gate,
        turn={"snapshot_interval": 0, "running": RunningTurns(per_client=4, total=2)},
    )

    async def go() -> None:
        for number in (1, 2):  # at the global cap: both start
            address = (f"198.51.100.{number}", 1)
            status, _, _ = await submit_and_leave(app, submit(new_session_id(), "t1"), address)
            assert status == 200
        status, headers, body = await submit_and_leave(
            app, submit(new_session_id(), "t1"), ("198.51.100.3", 1)
        )
        assert status == 503
        assert headers["retry-after"] == "5"
        error = json.loads(body)["error"]
        assert error["code"] == "SERVER_OVERLOADED" and error["retryable"] is True
        gate.release.set()
        await app.state.turn.drain()

    asyncio.run(go())


def test_a_refused_submit_releases_its_running_slot(tmp_path: Path) -> None:
    app = make_app(tmp_path)

    async def go() -> int:
        for _ in range(TURN_MAX_RUNNING_PER_CLIENT + 2):
            reply = await post(app, submit("a" * 30, "t1"))  # a weak id: 400 after admission
            assert reply.status_code == 400
        return int(app.state.turn.running.running())

    assert asyncio.run(go()) == 0


def test_running_turn_caps_must_be_positive() -> None:
    RunningTurns(per_client=1, total=1)
    for options in ({"per_client": 0}, {"total": 0}):
        with pytest.raises(ValueError):
            RunningTurns(**options)


# --------------------------------------------------------------------------- stored sessions


def _envelope(session_id: str, cursor: int = 1) -> dict[str, Any]:
    return {
        "protocol": "agentskit.chat.session",
        "version": 1,
        "sessionId": session_id,
        "definitionId": "docs",
        "definitionRevision": 1,
        "updatedAt": "2026-01-01T00:00:00.000Z",
        "cursor": cursor,
        "confirmations": [],
    }


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _store_one(store: TurnSessionStore, client_key: str, session_id: str) -> None:
    key = TurnSessionKey("site", "anonymous", session_id, client_key=client_key)
    assert store.save_sync(key, _envelope(session_id), [], "{}", None)


def _present(store: TurnSessionStore, *session_ids: str) -> list[bool]:
    return [
        store.load_sync(TurnSessionKey("site", "anonymous", sid)) is not None for sid in session_ids
    ]


def test_one_client_evicts_only_its_own_oldest_sessions() -> None:
    clock = Clock()
    store = TurnSessionStore(max_sessions_per_client=3, clock=clock)
    for name in ("b1", "b2", "b3"):
        clock.now += 1
        _store_one(store, "ip:198.51.100.9", name)
    for name in ("a1", "a2", "a3"):  # at the cap
        clock.now += 1
        _store_one(store, "ip:203.0.113.7", name)
    assert _present(store, "a1", "a2", "a3", "b1", "b2", "b3") == [True] * 6
    clock.now += 1
    _store_one(store, "ip:203.0.113.7", "a4")  # one past: its own oldest goes
    assert _present(store, "a1", "a2", "a3", "a4") == [False, True, True, True]
    assert _present(store, "b1", "b2", "b3") == [True] * 3


def test_expired_sessions_go_before_a_live_one_is_evicted() -> None:
    clock = Clock()
    store = TurnSessionStore(ttl_seconds=100, max_sessions_per_client=3, clock=clock)
    _store_one(store, "ip:x", "old")
    clock.now += 60
    _store_one(store, "ip:x", "mid")
    clock.now += 1
    _store_one(store, "ip:x", "new")
    clock.now += 40  # "old" is now 101 s old: expired; the others are live
    assert _present(store, "old", "mid", "new") == [False, True, True]
    _store_one(store, "ip:x", "fourth")
    assert _present(store, "mid", "new", "fourth") == [True, True, True]
    clock.now += 99.5  # "fourth" (written at +101) is 99.5 s old: at the TTL, still kept
    assert _present(store, "fourth") == [True]


def test_a_full_store_refuses_new_sessions_instead_of_evicting_others() -> None:
    clock = Clock()
    store = TurnSessionStore(max_sessions_per_client=2, max_sessions_total=4, clock=clock)
    for client_key, name in (("ip:a", "a1"), ("ip:a", "a2"), ("ip:b", "b1")):
        clock.now += 1
        _store_one(store, client_key, name)
    _store_one(store, "ip:b", "b2")  # the 4th: at the total, accepted
    with pytest.raises(StoreFull):
        _store_one(store, "ip:c", "c1")  # one past: refused, nobody evicted
    assert _present(store, "a1", "a2", "b1", "b2", "c1") == [True] * 4 + [False]
    clock.now += 1
    _store_one(store, "ip:a", "a3")  # a client at its own cap replaces its own oldest
    assert _present(store, "a1", "a2", "a3", "b1", "b2") == [False, True, True, True, True]


def test_expired_sessions_make_room_in_a_full_store() -> None:
    clock = Clock()
    store = TurnSessionStore(ttl_seconds=100, max_sessions_total=2, clock=clock)
    _store_one(store, "ip:a", "a1")
    _store_one(store, "ip:b", "b1")
    with pytest.raises(StoreFull):
        _store_one(store, "ip:c", "c1")
    clock.now += 101  # both expired: deleted before the total is counted
    _store_one(store, "ip:c", "c1")
    (rows,) = store._db.execute("SELECT COUNT(*) FROM turn_sessions").fetchone()
    assert rows == 1


def test_another_address_cannot_evict_a_readers_session_through_the_endpoint(
    tmp_path: Path,
) -> None:
    store = TurnSessionStore(max_sessions_per_client=3)
    app = make_app(tmp_path, store)
    reader = new_session_id()

    async def go() -> tuple[int, list[int], int]:
        first = await post(app, submit(reader, "t1"), ("198.51.100.20", 1))
        flood = [
            (await post(app, submit(new_session_id(), "t1"), ("203.0.113.66", 1))).status_code
            for _ in range(3)
        ]
        async with client(app, ("198.51.100.20", 1)) as http:
            kept = await http.get(f"/api/turn/{reader}")
        return first.status_code, flood, kept.status_code

    assert asyncio.run(go()) == (200, [200, 200, 200], 200)


def test_a_full_store_answers_503_with_a_truthful_retry_after(tmp_path: Path) -> None:
    """Retry-After is when the oldest session expires (it said 5 s for up to 30 days)."""
    clock = Clock()
    clock.now = time.time()
    store = TurnSessionStore(
        ttl_seconds=3600, max_sessions_per_client=5, max_sessions_total=1, clock=clock
    )
    app = make_app(tmp_path, store)

    async def go() -> tuple[httpx.Response, httpx.Response]:
        first = await post(app, submit(new_session_id(), "t1"), ("198.51.100.1", 1))
        clock.now += 1000
        second = await post(app, submit(new_session_id(), "t1"), ("198.51.100.2", 1))
        return first, second

    first, second = asyncio.run(go())
    assert first.status_code == 200
    assert second.status_code == 503 and second.headers["retry-after"] == "2600"
    error = second.json()["error"]
    assert error["code"] == "SERVER_OVERLOADED" and error["retryable"] is True
    assert "until older ones expire" in error["message"]


def test_serve_ask_gives_each_address_a_five_hundredth_of_the_store(tmp_path: Path) -> None:
    """Issue 36: with the Ask store's 10,000 per subject, five addresses filled 50,000."""
    from agentskit_web.server.ask_serve import AskServeConfig, _turn_store

    default = _turn_store(AskServeConfig())
    assert default.max_sessions_per_client == 100
    small = _turn_store(AskServeConfig(max_sessions_total=1000))
    assert small.max_sessions_per_client == 2
    for address in range(5):  # five addresses, each storing many sessions
        for n in range(10):
            _store_one(small, f"ip:192.0.2.{address}", f"s{address}-{n}")  # type: ignore[arg-type]
    (rows,) = small._db.execute("SELECT COUNT(*) FROM turn_sessions").fetchone()  # type: ignore[attr-defined]
    assert rows == 10  # 1 % of the store: everyone else still gets in


def test_store_caps_must_be_positive(tmp_path: Path) -> None:
    TurnSessionStore(max_sessions_total=1)
    with pytest.raises(ValueError):
        TurnSessionStore(max_sessions_total=0)


def test_an_older_database_gains_the_client_and_lease_columns(tmp_path: Path) -> None:
    import sqlite3

    database = tmp_path / "old.db"
    connection = sqlite3.connect(database)
    connection.execute(
        "CREATE TABLE turn_sessions (site_id TEXT NOT NULL, owner TEXT NOT NULL,"
        " session_id TEXT NOT NULL, cursor INTEGER NOT NULL, envelope TEXT NOT NULL,"
        " messages TEXT NOT NULL, last_snapshot TEXT NOT NULL, updated_at REAL NOT NULL,"
        " PRIMARY KEY (site_id, owner, session_id)) WITHOUT ROWID"
    )
    connection.commit()
    connection.close()
    store = TurnSessionStore(database)
    _store_one(store, "ip:a", "s1")
    assert _present(store, "s1") == [True]
    leased = {**_envelope("s2"), "activeTurn": {"turnId": "t1", "expiresAt": 5}}
    key = TurnSessionKey("site", "anonymous", "s2", client_key="ip:a")
    assert store.save_sync(key, leased, [], "{}", None, holder="instance-1")
    row = store.load_sync(key)
    assert row is not None and row.lease is not None and row.lease.holder == "instance-1"


# --------------------------------------------------------------------------- ids


def test_capability_ids_need_entropy_not_only_length() -> None:
    assert all(is_capability_id(new_session_id()) for _ in range(2000))
    for weak in (
        "a" * 22,
        "ab" * 11,
        "ac" * 11,  # no neighbours one apart: only the entropy estimate refuses these
        "aceg" * 6,
        "abcdefghijklmnopqrstuv",
        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaab",
        new_session_id()[: CAPABILITY_ID_MIN_CHARS - 1],
    ):
        assert not is_capability_id(weak), weak
    assert is_capability_id("4f9c2b7e1a8d6053c9e2f1b7a4d8e6c0")  # 128-bit hex is fine


def test_a_low_entropy_anonymous_id_is_refused_on_submit_and_resume(tmp_path: Path) -> None:
    app = make_app(tmp_path)

    async def go() -> tuple[httpx.Response, httpx.Response]:
        refused = await post(app, submit("a" * 22, "t1"))
        async with client(app) as http:
            missing = await http.get(f"/api/turn/{'a' * 22}")
        return refused, missing

    refused, missing = asyncio.run(go())
    assert refused.status_code == 400
    assert "128 random bits" in refused.json()["error"]["message"]
    assert missing.status_code == 404


# --------------------------------------------------------------------------- failures are logged


class BreakingStore(TurnSessionStore):
    """Saves the first snapshot, then fails every later save (a disk gone bad mid-turn)."""

    def __init__(self) -> None:
        super().__init__()
        self.saves = 0

    async def save(self, *args: Any, **kwargs: Any) -> bool:
        self.saves += 1
        if self.saves > 1:
            self.fail()
        return await super().save(*args, **kwargs)

    def fail(self) -> None:
        raise PersistenceError("disk I/O error near 'SECRET-QUESTION-TEXT'")


def test_an_unexpected_failure_is_logged_with_ids_and_never_the_text(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    app = make_app(tmp_path, BreakingStore())
    session = new_session_id()
    caplog.set_level(logging.INFO, logger="agentskit_web.turn")
    response = asyncio.run(post(app, submit(session, "t-logged", "SECRET-QUESTION-TEXT")))
    last = decode_turn_event(response.content.splitlines()[-1]).event
    assert last.to_wire()["event"] == "server.turn.diagnostic"
    records = [r for r in caplog.records if r.name == "agentskit_web.turn"]
    assert len(records) == 1 and records[0].levelno == logging.ERROR
    text = records[0].getMessage()
    assert session in text and "t-logged" in text and "PersistenceError" in text
    assert "SECRET" not in text and "install" not in text


# --------------------------------------------------------------------------- methods


@pytest.mark.parametrize("method", ["GET", "PUT", "PATCH", "DELETE"])
def test_submit_accepts_only_post(tmp_path: Path, method: str) -> None:
    app = make_app(tmp_path)

    async def go() -> httpx.Response:
        async with client(app) as http:
            return await http.request(
                method,
                "/api/turn",
                content=submit(new_session_id(), "t1"),
                headers={"content-type": "application/json"},
            )

    reply = asyncio.run(go())
    assert reply.status_code == 405 and reply.headers["allow"] == "POST"


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE"])
def test_resume_accepts_only_get(tmp_path: Path, method: str) -> None:
    app = make_app(tmp_path)

    async def go() -> httpx.Response:
        async with client(app) as http:
            return await http.request(method, f"/api/turn/{new_session_id()}")

    reply = asyncio.run(go())
    assert reply.status_code == 405 and reply.headers["allow"] == "GET"


# --------------------------------------------------------------------------- edges mutmut found


def test_running_turns_count_per_client_and_in_total_through_releases() -> None:
    running = RunningTurns(per_client=2, total=3)
    assert running.take("a") is None and running.take("a") is None
    refusal = running.take("a")  # past the client's cap
    assert refusal is not None and (refusal.status, refusal.retry_after) == (429, 1)
    assert running.take("b") is None  # the 3rd in total: at the global cap
    refusal = running.take("c")
    assert refusal is not None and (refusal.status, refusal.retry_after) == (503, 5)
    assert (running.running("a"), running.running("b"), running.running()) == (2, 1, 3)
    running.release("a")
    assert (running.running("a"), running.running()) == (1, 2)
    assert running.running("nobody") == 0
    running.release("a")
    running.release("b")
    assert (running.running("a"), running.running("b"), running.running()) == (0, 0, 0)
    assert running._by_client == {}, "a client with nothing running is forgotten"
    assert running.take("a") is None and running.take("a") is None  # a's slots came back


def test_capability_id_thresholds_at_and_one_past() -> None:
    from agentskit_web.server.turn_limits import estimated_bits

    at = "aceg" * 8  # four characters, eight times each: exactly 64 bits, no near pairs
    assert estimated_bits(at) == 64.0 and is_capability_id(at)
    below = at[:-1] + "a"  # one fewer distinct occurrence: just under 64 bits
    assert estimated_bits(below) < 64 and not is_capability_id(below)
    assert estimated_bits("") == 0.0
    # Neighbours two code points apart are not "near": a 24-character id of such steps passes.
    assert is_capability_id("acegikmoqsuwyACEGIKMOQSU")
    # 23 characters, 22 pairs: 11 near pairs (half) pass, 12 do not.
    spread = "aMq3Zk8Wr5Tb2Xn7Vc4Yp9"  # 22 distinct, no near pairs
    pairs = "".join(c + chr(ord(c) + 1) for c in "adgjmpsvyBE")  # ab de gh ... EF
    eleven = pairs + "9"
    assert len(eleven) == 23 and is_capability_id(eleven), "11 of 22 pairs near: allowed"
    twelve = pairs + "G"  # F-G is near as well
    assert not is_capability_id(twelve), "12 of 22 pairs near: refused"
    assert is_capability_id(spread)


def test_a_session_exactly_ttl_old_is_still_there() -> None:
    clock = Clock()
    store = TurnSessionStore(ttl_seconds=100, clock=clock)
    _store_one(store, "ip:a", "s1")
    clock.now += 100
    assert _present(store, "s1") == [True]
    clock.now += 0.001
    assert _present(store, "s1") == [False]


@pytest.mark.parametrize("messages", ["not json", "[]", '{"version": 2}'])
def test_a_corrupt_stored_session_is_a_persistence_error(messages: str) -> None:
    store = TurnSessionStore()
    _store_one(store, "ip:a", "s1")
    with store._db:
        store._db.execute("UPDATE turn_sessions SET messages = ?", (messages,))
    with pytest.raises(PersistenceError, match="corrupt"):
        store.load_sync(TurnSessionKey("site", "anonymous", "s1"))
