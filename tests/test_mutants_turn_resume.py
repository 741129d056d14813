"""Resuming a session (`GET /api/turn/<id>`): the rules mutation testing found unguarded.

Issue 36 item 9: each test here failed on a surviving mutant of `turn_resume`
(docs/design/mutation-turn-modules.md lists them). "Another instance" is a second
app over the same SQLite database (what two `serve-ask` processes sharing a
store are); an instance "dies" as in `test_turn_server`: its turn task is
cancelled and forgotten, its row keeps the lease. Requests go through the ASGI
app with httpx, whose transport also refuses a response the app never
finished; the reader who leaves mid-follow is a real uvicorn server.
"""

import asyncio
import itertools
import threading
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx

from _ask_helpers import ThreadedUvicorn, assert_turn_rate_limited, site, write_docs
from _ask_helpers import turn_submit as submit
from agentskit_web.chat.turn.adapter import new_session_id
from agentskit_web.protocol import decode_assistant_content, decode_turn_event
from agentskit_web.protocol.turn import SnapshotTurnEvent
from agentskit_web.server.ask_app import create_ask_app
from agentskit_web.server.generators import ExtractiveGenerator, GenerationRequest
from agentskit_web.server.rate_limit import TokenBucketLimiter
from agentskit_web.server.turn_app import mount_turn
from agentskit_web.server.turn_store import TurnSessionKey, TurnSessionStore
from test_turn_server import live_lease_elsewhere

NDJSON = "application/x-ndjson; charset=utf-8"
WAIT_SECONDS = 10.0
"""Generous bound on anything a test waits for (CI is loaded); never a timing assertion."""


class StepGenerator:
    """Yields each piece once the test allows it (`allow(n)`): a model the test paces."""

    model = None

    def __init__(self, *pieces: str) -> None:
        self.pieces = pieces
        self.allowed = asyncio.Event()
        self.count = 0
        self.yielded = 0
        self.started = asyncio.Event()

    def allow(self, count: int) -> None:
        self.count = count
        self.allowed.set()

    async def stream(self, request: GenerationRequest) -> AsyncIterator[str]:
        for index, piece in enumerate(self.pieces):
            while self.count <= index:
                self.allowed.clear()
                await self.allowed.wait()
            yield piece
            self.yielded = index + 1
            self.started.set()


def instance(
    tmp_path: Path,
    name: str,
    store: TurnSessionStore,
    *,
    generator: Any = None,
    lease_seconds: float = 10.0,
    **options: Any,
) -> Any:
    options.setdefault("site_config", site())
    app = create_ask_app(
        options.pop("site_config"),
        write_docs(tmp_path / name),
        generator=generator or ExtractiveGenerator(),
        **options,
    )
    mount_turn(app, store, lease_seconds=lease_seconds, snapshot_interval=0)
    return app


def client(app: Any, address: str = "203.0.113.7") -> httpx.AsyncClient:
    transport = httpx.ASGITransport(app=app, client=(address, 5000))
    return httpx.AsyncClient(transport=transport, base_url="http://testserver", timeout=30)


def snapshots(response: httpx.Response) -> list[SnapshotTurnEvent]:
    """Every line of a resume, each a snapshot, the body ending with a newline."""
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == NDJSON
    assert response.content.endswith(b"\n")
    found = []
    for line in response.content.split(b"\n")[:-1]:
        result = decode_turn_event(line)
        assert result.ok and isinstance(result.event, SnapshotTurnEvent), line[:200]
        found.append(result.event)
    return found


def answer_text(snapshot: SnapshotTurnEvent) -> str:
    last = snapshot.payload.messages[-1]
    assert last.role == "assistant"
    decoded = decode_assistant_content(last.content)
    assert decoded.ok
    return "".join(p["text"] for p in decoded.parts if p["kind"] == "text")


def die(app: Any) -> None:
    """The instance goes away mid-turn: no final save, no renewal, its row keeps the lease."""
    for task in list(app.state.turn.runner.tasks):
        task.cancel()
    app.state.turn.runner.runs.clear()


async def until(condition: Any) -> None:
    deadline = time.monotonic() + WAIT_SECONDS
    while not condition():
        assert time.monotonic() < deadline, "waited too long"
        await asyncio.sleep(0.01)


# --------------------------------------------------------------------------- following


def test_a_resume_sends_each_new_snapshot_of_another_instances_turn_but_no_renewal(
    tmp_path: Path,
) -> None:
    """Every delta the running instance saves reaches the reader on the other instance, once;
    the lease renewals between them (same messages, new cursor) are not sent."""
    database = tmp_path / "shared.db"
    generator = StepGenerator("One ", "two ", "three.")
    # Lease 1.5 s: the running instance renews after 0.5 s without a save, twice
    # between two deltas 1.2 s apart, and each renewal is a newer cursor in the store.
    holder = instance(tmp_path, "a", TurnSessionStore(database), generator=generator,
                      lease_seconds=1.5)  # fmt: skip
    reader = instance(tmp_path, "b", TurnSessionStore(database))
    session = new_session_id()

    async def go() -> httpx.Response:
        async with client(holder) as http_a, client(reader) as http_b:
            generator.allow(1)
            first = asyncio.create_task(http_a.post("/api/turn", json=submit(session, "t1")))
            await generator.started.wait()
            await asyncio.sleep(0.3)
            resumed = asyncio.create_task(http_b.get(f"/api/turn/{session}"))
            for step in (2, 3):
                await asyncio.sleep(1.2)
                generator.allow(step)
            await first
            return await asyncio.wait_for(resumed, WAIT_SECONDS)

    sent = snapshots(asyncio.run(go()))
    texts = [answer_text(s) for s in sent]
    assert texts[0] == "One "
    assert "One two " in texts  # a newer snapshot while the turn runs is sent
    assert texts[-1] == "One two three." and sent[-1].payload.status == "complete"
    sequences = [s.sequence for s in sent]
    assert sequences == sorted(set(sequences))
    bodies = [[m.to_wire() for m in s.payload.messages] for s in sent]
    assert all(a != b for a, b in itertools.pairwise(bodies)), "a renewal was sent"


def test_a_follow_ends_the_turn_as_interrupted_when_its_lease_runs_out(tmp_path: Path) -> None:
    """The running instance dies while another follows its turn: within a poll of the lease's
    end the follower ends the turn as interrupted, sends that snapshot and closes."""
    database = tmp_path / "shared.db"
    generator = StepGenerator("Partial ", "answer.")
    holder = instance(tmp_path, "a", TurnSessionStore(database), generator=generator,
                      lease_seconds=0.6)  # fmt: skip
    reader_store = TurnSessionStore(database)
    reader = instance(tmp_path, "b", reader_store, lease_seconds=0.6)
    session = new_session_id()

    async def go() -> httpx.Response:
        async with client(holder) as http_a, client(reader) as http_b:
            generator.allow(1)
            first = asyncio.create_task(http_a.post("/api/turn", json=submit(session, "t1")))
            await generator.started.wait()
            resumed = asyncio.create_task(http_b.get(f"/api/turn/{session}"))
            await asyncio.sleep(0.3)
            die(holder)
            first.cancel()
            return await asyncio.wait_for(resumed, WAIT_SECONDS)

    sent = snapshots(asyncio.run(go()))
    assert sent[0].payload.status == "streaming"
    last = sent[-1].payload
    assert last.status == "error" and last.error is not None
    assert last.error.code == "CHAT_TURN_INTERRUPTED" and last.error.retryable is True
    row = reader_store.load_sync(TurnSessionKey("test-site", "anonymous", session))
    assert row is not None and row.envelope.active_turn is None
    assert decode_turn_event(row.last_snapshot).event == sent[-1]  # the stored end was sent


async def resume_after_the_holder_died(
    holder: Any, reader: Any, generator: StepGenerator, session: str
) -> httpx.Response:
    """A turn starts on `holder`, which dies after its first delta; past its 0.3 s lease,
    the reader on `reader` resumes the session."""
    async with client(holder) as http_a, client(reader) as http_b:
        generator.allow(1)
        first = asyncio.create_task(http_a.post("/api/turn", json=submit(session, "t1")))
        await generator.started.wait()
        die(holder)
        first.cancel()
        await asyncio.sleep(0.6)
        return await asyncio.wait_for(http_b.get(f"/api/turn/{session}"), WAIT_SECONDS)


def test_a_resume_after_the_lease_ran_out_answers_the_interrupted_turn_alone(
    tmp_path: Path,
) -> None:
    """An expired lease is ended before the resume answers: one line, already interrupted,
    not the dead instance's streaming snapshot followed by a poll."""
    database = tmp_path / "shared.db"
    generator = StepGenerator("Partial ", "answer.")
    holder = instance(tmp_path, "a", TurnSessionStore(database), generator=generator,
                      lease_seconds=0.3)  # fmt: skip
    reader = instance(tmp_path, "b", TurnSessionStore(database), lease_seconds=0.3)
    session = new_session_id()

    sent = snapshots(asyncio.run(resume_after_the_holder_died(holder, reader, generator, session)))
    assert len(sent) == 1
    assert sent[0].payload.error is not None
    assert sent[0].payload.error.code == "CHAT_TURN_INTERRUPTED"


class RivalSettles(TurnSessionStore):
    """A third instance ends the expired turn just before this one's compare-and-set."""

    def __init__(self, database: Path) -> None:
        super().__init__(database)
        self.armed = True

    def save_sync(self, key: Any, envelope: Any, messages: Any, line: Any, expected: Any,
                  *, holder: str = "") -> bool:  # fmt: skip
        if self.armed and expected is not None:
            self.armed = False
            assert super().save_sync(key, envelope, messages, line, expected, holder="rival")
        return super().save_sync(key, envelope, messages, line, expected, holder=holder)


def test_a_resume_that_loses_the_race_to_end_a_dead_turn_answers_the_winners_snapshot(
    tmp_path: Path,
) -> None:
    database = tmp_path / "shared.db"
    generator = StepGenerator("Partial ", "answer.")
    holder = instance(tmp_path, "a", TurnSessionStore(database), generator=generator,
                      lease_seconds=0.3)  # fmt: skip
    reader_store = RivalSettles(database)
    reader = instance(tmp_path, "b", reader_store, lease_seconds=0.3,
                      site_config=site(limits__requestTimeoutMs=1000))  # fmt: skip
    session = new_session_id()

    sent = snapshots(asyncio.run(resume_after_the_holder_died(holder, reader, generator, session)))
    assert not reader_store.armed, "the rival's settle happened"
    assert len(sent) == 1
    assert sent[0].payload.error is not None
    assert sent[0].payload.error.code == "CHAT_TURN_INTERRUPTED"


def test_a_resume_on_the_instance_running_the_turn_follows_it_to_its_end(tmp_path: Path) -> None:
    """It starts at the latest snapshot (not an older retained line) and ends with the turn."""
    generator = StepGenerator("Partial ", "answer.")
    store = TurnSessionStore()
    app = instance(tmp_path, "a", store, generator=generator)
    session = new_session_id()
    key = TurnSessionKey("test-site", "anonymous", session)

    def partial_saved() -> bool:
        row = store.load_sync(key)
        return row is not None and "Partial" in row.last_snapshot

    async def go() -> tuple[httpx.Response, httpx.Response]:
        async with client(app) as http:
            generator.allow(1)
            first = asyncio.create_task(http.post("/api/turn", json=submit(session, "t1")))
            await until(partial_saved)
            resumed = asyncio.create_task(http.get(f"/api/turn/{session}"))
            await asyncio.sleep(0.6)  # past two store polls, were it polling the store
            generator.allow(2)
            return await first, await asyncio.wait_for(resumed, WAIT_SECONDS)

    first, resumed = asyncio.run(go())
    sent = snapshots(resumed)
    assert sent[0].payload.status == "streaming"
    assert answer_text(sent[0]) == "Partial "  # the latest when it came, not the question's
    assert sent[-1].payload.status == "complete"
    assert answer_text(sent[-1]) == "Partial answer."
    assert sent[-1] == snapshots(first)[-1]


def test_a_follow_takes_one_in_flight_slot_of_its_own_caller(tmp_path: Path) -> None:
    """With one stream per caller: a second resume by the same caller gets the latest
    snapshot alone; another caller still follows the turn to its end."""
    database = tmp_path / "shared.db"
    generator = StepGenerator("Partial ", "answer.")
    holder = instance(tmp_path, "a", TurnSessionStore(database), generator=generator)
    reader = instance(tmp_path, "b", TurnSessionStore(database), max_streams_per_client=1)
    session = new_session_id()

    async def go() -> tuple[httpx.Response, httpx.Response, httpx.Response]:
        async with (
            client(holder) as http_a,
            client(reader) as mine,
            client(reader, "198.51.100.4") as theirs,
        ):
            generator.allow(1)
            first = asyncio.create_task(http_a.post("/api/turn", json=submit(session, "t1")))
            await generator.started.wait()
            following = asyncio.create_task(mine.get(f"/api/turn/{session}"))
            await asyncio.sleep(0.3)
            other = asyncio.create_task(theirs.get(f"/api/turn/{session}"))
            second = await asyncio.wait_for(mine.get(f"/api/turn/{session}"), WAIT_SECONDS)
            await asyncio.sleep(0.3)
            generator.allow(2)
            await first
            return (
                await asyncio.wait_for(following, WAIT_SECONDS),
                second,
                await asyncio.wait_for(other, WAIT_SECONDS),
            )

    following, second, other = asyncio.run(go())
    assert snapshots(following)[-1].payload.status == "complete"
    alone = snapshots(second)
    assert len(alone) == 1 and alone[0].payload.status == "streaming"
    assert snapshots(other)[-1].payload.status == "complete"


def test_resume_is_rate_limited_per_caller_with_a_retry_after(tmp_path: Path) -> None:
    limiter = TokenBucketLimiter(capacity=1, refill_per_second=0.05, clock=lambda: 1_000.0)
    app = instance(tmp_path, "a", TurnSessionStore(), rate_limiter=limiter)
    session = new_session_id()

    async def go() -> list[httpx.Response]:
        async with client(app) as mine, client(app, "198.51.100.4") as theirs:
            return [
                await mine.get(f"/api/turn/{session}"),
                await mine.get(f"/api/turn/{session}"),
                await theirs.get(f"/api/turn/{session}"),
            ]

    allowed, limited, other = asyncio.run(go())
    assert allowed.status_code == 404 and other.status_code == 404  # admitted: no such session
    assert_turn_rate_limited(limited, "20")  # one token at 0.05 per second


class HeldPoll(TurnSessionStore):
    """The `hold`-th read of the store waits for `gate` (the follow's first poll)."""

    def __init__(self, database: Path, hold: int) -> None:
        super().__init__(database)
        self.hold = hold
        self.loads = 0
        self.gate = threading.Event()

    def load_sync(self, key: TurnSessionKey) -> Any:
        self.loads += 1
        if self.loads == self.hold:
            assert self.gate.wait(WAIT_SECONDS)
        return super().load_sync(key)


def test_a_follow_ends_when_this_instance_starts_running_the_session(tmp_path: Path) -> None:
    """The other instance's turn ends and a new one starts here before the follow's next
    poll: the follow closes its response (the next resume follows the run itself)."""
    database = tmp_path / "shared.db"
    elsewhere = StepGenerator("First.")
    here = StepGenerator("Second ", "answer.")
    holder = instance(tmp_path, "a", TurnSessionStore(database), generator=elsewhere)
    reader_store = HeldPoll(database, hold=2)
    reader = instance(tmp_path, "b", reader_store, generator=here)
    session = new_session_id()

    async def go() -> tuple[httpx.Response, bool, httpx.Response]:
        async with client(holder) as http_a, client(reader) as http_b:
            first = asyncio.create_task(http_a.post("/api/turn", json=submit(session, "t1")))
            await until(lambda: stored(reader_store, session))
            followed = asyncio.create_task(http_b.get(f"/api/turn/{session}"))
            await until(lambda: reader_store.loads >= 2)  # the first poll waits at the gate
            elsewhere.allow(1)
            await first
            second = asyncio.create_task(http_b.post("/api/turn", json=submit(session, "t2")))
            here.allow(1)
            await here.started.wait()
            reader_store.gate.set()
            ended = await asyncio.wait_for(followed, WAIT_SECONDS)
            still_running = here.yielded == 1
            here.allow(2)
            await second
            return ended, still_running, await http_b.get(f"/api/turn/{session}")

    ended, still_running, latest = asyncio.run(go())
    assert still_running, "the follow ended while this instance's turn ran"
    assert snapshots(ended)[-1].payload.status == "streaming"
    final = snapshots(latest)
    assert len(final) == 1 and answer_text(final[0]) == "Second answer."


def stored(store: TurnSessionStore, session: str) -> bool:
    """Whether the session is in the store (read past any test hook of `store`)."""
    key = TurnSessionKey("test-site", "anonymous", session)
    return TurnSessionStore.load_sync(store, key) is not None


class Vanishing(TurnSessionStore):
    """Every read after the first finds nothing (the session expired or was evicted)."""

    def __init__(self, database: Path) -> None:
        super().__init__(database)
        self.loads = 0

    def load_sync(self, key: TurnSessionKey) -> Any:
        self.loads += 1
        return super().load_sync(key) if self.loads == 1 else None


def test_a_follow_ends_when_the_session_is_gone(tmp_path: Path) -> None:
    database = tmp_path / "shared.db"
    generator = StepGenerator("Partial ", "answer.")
    holder = instance(tmp_path, "a", TurnSessionStore(database), generator=generator)
    reader_store = Vanishing(database)
    reader = instance(tmp_path, "b", reader_store)
    session = new_session_id()

    async def go() -> httpx.Response:
        async with client(holder) as http_a, client(reader) as http_b:
            generator.allow(1)
            first = asyncio.create_task(http_a.post("/api/turn", json=submit(session, "t1")))
            await generator.started.wait()
            resumed = await asyncio.wait_for(http_b.get(f"/api/turn/{session}"), WAIT_SECONDS)
            generator.allow(2)
            await first
            return resumed

    sent = snapshots(asyncio.run(go()))
    assert reader_store.loads == 2
    assert [s.payload.status for s in sent] == ["streaming"]


def test_a_reader_who_leaves_a_follow_does_not_hold_the_server(tmp_path: Path) -> None:
    """A real uvicorn server: the reader of another instance's turn closes the connection
    after the first line; the server goes on answering (the follow noticed and ended)."""
    store = TurnSessionStore()
    app = instance(tmp_path, "a", store)
    session = new_session_id()
    live_lease_elsewhere(store, session)

    with ThreadedUvicorn(app) as server, httpx.Client(timeout=WAIT_SECONDS) as http:
        with http.stream("GET", f"{server.url}/api/turn/{session}") as response:
            assert response.status_code == 200
            assert next(response.iter_lines()) == "{}"
        time.sleep(0.6)  # past two polls of the follow
        after = http.get(f"{server.url}/api/turn/{new_session_id()}")
        assert after.status_code == 404
        assert app.state.ask.in_flight("ip:127.0.0.1") == 0, "the follow gave its slot back"
