"""The reference turn server (`POST /api/turn`, `GET /api/turn/<id>`), through real requests."""

import asyncio
import itertools
import json
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from _ask_helpers import ScriptedGenerator, ScriptedRetriever, site, write_docs
from _ask_helpers import turn_submit as submit
from agentskit_web.answering.chunk import Found
from agentskit_web.answering.decline import CLOSEST_MESSAGE
from agentskit_web.chat.turn.adapter import new_session_id
from agentskit_web.protocol import decode_assistant_content, decode_turn_event
from agentskit_web.protocol.turn import SnapshotTurnEvent
from agentskit_web.server.ask_app import create_ask_app
from agentskit_web.server.auth import TokenGrant, bearer_tokens
from agentskit_web.server.generators import ExtractiveGenerator, GenerationRequest
from agentskit_web.server.persistence import PersistenceError
from agentskit_web.server.rate_limit import TokenBucketLimiter
from agentskit_web.server.turn_app import mount_turn
from agentskit_web.server.turn_store import TurnSessionKey, TurnSessionStore

QUESTION = "How do I install the widget?"


def sid() -> str:
    return new_session_id()


def make_app(tmp_path: Path, store: TurnSessionStore | None = None, **options: Any) -> Any:
    turn_options = {
        k: options.pop(k) for k in ("lease_seconds", "snapshot_interval") if k in options
    }
    options.setdefault("generator", ExtractiveGenerator())
    app = create_ask_app(site(), write_docs(tmp_path / "docs"), **options)
    mount_turn(app, store, **turn_options)
    return app


def client(app: Any) -> httpx.AsyncClient:
    transport = httpx.ASGITransport(app=app, client=("203.0.113.7", 5000))
    return httpx.AsyncClient(transport=transport, base_url="http://testserver")


def events(response: httpx.Response) -> list[Any]:
    decoded = [decode_turn_event(line) for line in response.content.splitlines() if line]
    assert all(result.ok for result in decoded), "every line is a valid turn event"
    return [result.event for result in decoded]


def snapshots(response: httpx.Response) -> list[SnapshotTurnEvent]:
    found = [e for e in events(response) if isinstance(e, SnapshotTurnEvent)]
    assert found
    return found


def answer_parts(snapshot: SnapshotTurnEvent) -> tuple[str, list[dict[str, Any]]]:
    last = snapshot.payload.messages[-1]
    assert last.role == "assistant"
    decoded = decode_assistant_content(last.content)
    assert decoded.ok
    text = "".join(p["text"] for p in decoded.parts if p["kind"] == "text")
    frames = [p["frame"] for p in decoded.parts if p["kind"] == "component"]
    return text, frames


def run(coroutine: Any) -> Any:
    return asyncio.run(coroutine)


# --------------------------------------------------------------------------- a turn


def test_a_turn_streams_snapshots_and_completes(tmp_path: Path) -> None:
    app = make_app(
        tmp_path, generator=ScriptedGenerator(("Add ", "the element.")), snapshot_interval=0
    )
    session = sid()

    async def go() -> httpx.Response:
        async with client(app) as http:
            return await http.post("/api/turn", json=submit(session, "t1"))

    response = run(go())
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/x-ndjson; charset=utf-8"
    assert response.headers["cache-control"] == "no-store"
    assert response.headers["x-content-type-options"] == "nosniff"
    found = snapshots(response)
    assert [s.payload.status for s in found] == ["streaming"] * (len(found) - 1) + ["complete"]
    assert len(found) >= 3  # the question, one per delta (no coalescing), the end
    assert all(s.session_id == session and s.turn_id == "t1" for s in found)
    assert all(s.payload.lineage.to_wire() == {"operation": "submit"} for s in found)
    final = found[-1]
    user, assistant = final.payload.messages
    assert (user.role, user.content, user.status) == ("user", QUESTION, "complete")
    assert assistant.status == "complete" and assistant.metadata == {"turnId": "t1"}
    text, frames = answer_parts(final)
    assert text == "Add the element."
    assert [f["componentKey"] for f in frames] == ["source-list"]
    usage = final.payload.usage
    assert usage.completion_tokens > 0 and usage.total_tokens == (
        usage.prompt_tokens + usage.completion_tokens
    )
    # Only whole records were ever added: each snapshot's answer extends the previous one.
    contents = [s.payload.messages[-1].content for s in found]
    assert all(b.startswith(a) for a, b in itertools.pairwise(contents))


def test_sequences_rise_across_two_turns_and_resume_returns_the_last(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    session = sid()

    async def go() -> tuple[httpx.Response, httpx.Response, httpx.Response]:
        async with client(app) as http:
            first = await http.post("/api/turn", json=submit(session, "t1"))
            second = await http.post("/api/turn", json=submit(session, "t2", "Is it secure?"))
            again = await http.get(f"/api/turn/{session}")
            return first, second, again

    first, second, again = run(go())
    sequences = [s.sequence for s in snapshots(first) + snapshots(second)]
    assert sequences == sorted(set(sequences)) and sequences[0] == 1
    final = snapshots(second)[-1]
    assert [m.id for m in final.payload.messages] == ["u-t1", "a-t1", "u-t2", "a-t2"]
    assert again.status_code == 200
    assert again.content == second.content.splitlines(keepends=True)[-1]


def test_snapshots_are_coalesced_and_the_last_is_always_sent(tmp_path: Path) -> None:
    pieces = tuple(f"word{i} " for i in range(40))

    def turn(interval: float) -> list[SnapshotTurnEvent]:
        app = make_app(
            tmp_path / str(interval),
            generator=ScriptedGenerator(pieces, delay=0.002),
            snapshot_interval=interval,
        )

        async def go() -> httpx.Response:
            async with client(app) as http:
                return await http.post("/api/turn", json=submit(sid(), "t1"))

        return snapshots(run(go()))

    every = turn(0)
    coalesced = turn(0.05)
    # Interval 0 still waits as long as the last save took, so deltas may merge.
    assert 3 <= len(every) <= len(pieces) + 2
    assert len(coalesced) < len(pieces) / 2
    assert answer_parts(every[-1])[0] == answer_parts(coalesced[-1])[0] == "".join(pieces)
    assert coalesced[-1].payload.status == "complete"


# --------------------------------------------------------------------------- sessions


def live_lease_elsewhere(store: TurnSessionStore, session: str) -> None:
    """A session whose turn another instance runs and keeps renewing (its lease lasts an hour)."""
    key = TurnSessionKey("test-site", "anonymous", session, client_key="ip:203.0.113.7")
    envelope = {
        "protocol": "agentskit.chat.session",
        "version": 1,
        "sessionId": session,
        "definitionId": "docs",
        "definitionRevision": 1,
        "updatedAt": "2026-01-01T00:00:00.000Z",
        "cursor": 1,
        "activeTurn": {"turnId": "t-elsewhere", "expiresAt": int(time.time() * 1000) + 3_600_000},
        "confirmations": [],
    }
    assert store.save_sync(key, envelope, [], "{}", None, holder="instance-elsewhere")


class GatedGenerator:
    """Streams one delta, then waits for `release` (a turn that stays active)."""

    model = None

    def __init__(self) -> None:
        self.release = asyncio.Event()
        self.started = asyncio.Event()

    async def stream(self, request: GenerationRequest) -> AsyncIterator[str]:
        yield "Partial "
        self.started.set()
        await self.release.wait()
        yield "answer."


def test_a_second_submit_during_a_turn_is_session_busy(tmp_path: Path) -> None:
    generator = GatedGenerator()
    app = make_app(tmp_path, generator=generator, snapshot_interval=0)
    session = sid()

    async def go() -> tuple[httpx.Response, httpx.Response, httpx.Response]:
        async with client(app) as http:
            first = asyncio.create_task(http.post("/api/turn", json=submit(session, "t1")))
            await generator.started.wait()
            busy = await http.post("/api/turn", json=submit(session, "t2"))
            generator.release.set()
            return await first, busy, await http.post("/api/turn", json=submit(session, "t3"))

    first, busy, third = run(go())
    assert busy.status_code == 409
    assert busy.json() == {
        "error": {
            "version": 1,
            "code": "SESSION_BUSY",
            "message": "Another turn is active for this session.",
            "retryable": True,
        }
    }
    assert snapshots(first)[-1].payload.status == "complete"
    assert third.status_code == 200


class RacingStore(TurnSessionStore):
    """Every load waits until two loads are waiting, so two submits read the same cursor."""

    def __init__(self) -> None:
        super().__init__()
        self.loaded = 0
        self.both = asyncio.Event()

    async def load(self, key: TurnSessionKey) -> Any:
        row = await super().load(key)
        self.loaded += 1
        if self.loaded == 2:
            self.both.set()
        await self.both.wait()
        return row


def test_concurrent_submits_one_conflicts_and_no_turn_is_lost(tmp_path: Path) -> None:
    store = RacingStore()
    app = make_app(tmp_path, store)
    session = sid()

    async def go() -> tuple[list[httpx.Response], httpx.Response, httpx.Response]:
        async with client(app) as http:
            racing = await asyncio.gather(
                http.post("/api/turn", json=submit(session, "t1", "first question")),
                http.post("/api/turn", json=submit(session, "t2", "second question")),
            )
            store.both.set()
            store.loaded = 99
            loser = next(r for r in racing if r.status_code == 409)
            turn = "t1" if loser is racing[0] else "t2"
            text = "first question" if turn == "t1" else "second question"
            retried = await http.post("/api/turn", json=submit(session, turn + "b", text))
            return list(racing), retried, await http.get(f"/api/turn/{session}")

    racing, retried, latest = run(go())
    assert sorted(r.status_code for r in racing) == [200, 409]
    loser = next(r for r in racing if r.status_code == 409)
    assert loser.json()["error"]["code"] == "SESSION_CONFLICT"
    assert loser.json()["error"]["retryable"] is True
    assert retried.status_code == 200
    final = snapshots(latest)[-1]
    questions = [m.content for m in final.payload.messages if m.role == "user"]
    assert sorted(questions) == ["first question", "second question"]


def test_store_compare_and_set_lets_exactly_one_of_two_saves_win() -> None:
    store = TurnSessionStore()
    key = TurnSessionKey("site", "anonymous", sid())
    envelope = {
        "protocol": "agentskit.chat.session",
        "version": 1,
        "sessionId": key.session_id,
        "definitionId": "guide",
        "definitionRevision": 1,
        "updatedAt": "2026-01-01T00:00:00Z",
        "cursor": 1,
        "confirmations": [],
    }
    message = {
        "id": "u-1",
        "role": "user",
        "content": "q",
        "status": "complete",
        "createdAt": "2026-01-01T00:00:00.000Z",
    }
    assert store.save_sync(key, envelope, [message], "line-1", None)
    assert not store.save_sync(key, envelope, [message], "line-1b", None)  # create-only
    second = {**envelope, "cursor": 2}
    results = [
        store.save_sync(key, second, [message, {**message, "id": f"a-{n}"}], f"line-{n}", 1)
        for n in (2, 3)
    ]
    assert results == [True, False]
    row = store.load_sync(key)
    assert row is not None and row.cursor == 2 and row.last_snapshot == "line-2"
    assert [m["id"] for m in row.messages] == ["u-1", "a-2"]
    with pytest.raises(ValueError):
        store.save_sync(key, {**envelope, "cursor": "3"}, [], "x", 2)


# --------------------------------------------------------------------------- lineage


def test_regenerate_and_edit_carry_lineage_and_replace_what_they_should(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    session = sid()

    async def go() -> list[httpx.Response]:
        async with client(app) as http:
            out = [await http.post("/api/turn", json=submit(session, "t1"))]
            out.append(await http.post("/api/turn", json=submit(session, "t2", "Is it secure?")))
            regenerate = {
                "operation": "regenerate",
                "parentTurnId": "t2",
                "sourceMessageId": "a-t2",
            }
            out.append(await http.post("/api/turn", json=submit(session, "t3", "-", regenerate)))
            edit = {"operation": "edit", "parentTurnId": "t1", "sourceMessageId": "u-t1"}
            out.append(
                await http.post("/api/turn", json=submit(session, "t4", "How to upgrade?", edit))
            )
            wrong = {"operation": "regenerate", "parentTurnId": "t1", "sourceMessageId": "a-t1"}
            out.append(await http.post("/api/turn", json=submit(session, "t5", "-", wrong)))
            missing = {"operation": "edit", "parentTurnId": "nope", "sourceMessageId": "u-nope"}
            out.append(await http.post("/api/turn", json=submit(session, "t6", "x", missing)))
            return out

    _first, _second, regenerated, edited, wrong, missing = run(go())
    final = snapshots(regenerated)[-1]
    assert final.payload.lineage.to_wire() == {
        "operation": "regenerate",
        "parentTurnId": "t2",
        "sourceMessageId": "a-t2",
    }
    assert [m.id for m in final.payload.messages] == ["u-t1", "a-t1", "u-t2", "a-t3"]
    final = snapshots(edited)[-1]
    assert final.payload.lineage.to_wire()["operation"] == "edit"
    first = final.payload.messages[0]
    assert (first.id, first.content) == ("u-t4", "How to upgrade?")
    assert len(final.payload.messages) == 2
    for refused in (wrong, missing):
        assert refused.status_code == 400
        assert refused.json()["error"]["code"] == "REQUEST_INVALID_EVENT"


def test_retry_reruns_a_failed_turn(tmp_path: Path) -> None:
    generator = ScriptedGenerator(("half ",), error=RuntimeError("model down"))
    app = make_app(tmp_path, generator=generator)
    session = sid()

    async def go() -> tuple[httpx.Response, httpx.Response, httpx.Response]:
        async with client(app) as http:
            failed = await http.post("/api/turn", json=submit(session, "t1"))
            generator.error = None
            generator.pieces = ("Fine ", "now.")
            too_early = {"operation": "regenerate", "parentTurnId": "t1", "sourceMessageId": "u-t1"}
            refused = await http.post("/api/turn", json=submit(session, "t2", "-", too_early))
            retry = {"operation": "retry", "parentTurnId": "t1", "sourceMessageId": "u-t1"}
            return (
                failed,
                refused,
                await http.post("/api/turn", json=submit(session, "t3", "-", retry)),
            )

    failed, refused, retried = run(go())
    last = snapshots(failed)[-1]
    assert last.payload.status == "error"
    assert last.payload.error.to_wire() == {
        "version": 1,
        "code": "CHAT_TURN_FAILED",
        "message": "The chat turn failed.",
        "retryable": True,
    }
    assert last.payload.messages[-1].status == "error"
    assert refused.status_code == 400
    final = snapshots(retried)[-1]
    assert final.payload.status == "complete"
    assert final.payload.lineage.to_wire()["operation"] == "retry"
    assert [m.id for m in final.payload.messages] == ["u-t1", "a-t3"]
    assert answer_parts(final)[0] == "Fine now."


# --------------------------------------------------------------------------- ownership


def test_a_guessed_session_id_gets_nothing(tmp_path: Path) -> None:
    tokens = {"token-a": TokenGrant("alice"), "token-b": TokenGrant("bob")}
    app = make_app(tmp_path, authenticate=bearer_tokens(tokens))
    session = "alice-session-1"  # bearer ids need no entropy: they are bound to the subject

    async def go() -> list[httpx.Response]:
        async with client(app) as http:
            alice = {"authorization": "Bearer token-a"}
            bob = {"authorization": "Bearer token-b"}
            out = [
                await http.post("/api/turn", json=submit(session, "t1", "secret?"), headers=alice)
            ]
            out.append(await http.get(f"/api/turn/{session}", headers=bob))
            out.append(
                await http.post("/api/turn", json=submit(session, "t1", "mine"), headers=bob)
            )
            out.append(await http.get(f"/api/turn/{session}", headers=alice))
            return out

    created, bob_reads, bob_writes, alice_reads = run(go())
    assert created.status_code == 200
    assert bob_reads.status_code == 404
    assert bob_reads.json()["error"]["code"] == "SESSION_NOT_FOUND"
    # Bob's submit with the same id starts Bob's own session: nothing of Alice's is in it.
    assert [m.content for m in snapshots(bob_writes)[-1].payload.messages][:1] == ["mine"]
    assert [m.content for m in snapshots(alice_reads)[-1].payload.messages][:1] == ["secret?"]


def test_anonymous_ids_are_capabilities(tmp_path: Path) -> None:
    app = make_app(tmp_path)

    async def go() -> list[httpx.Response]:
        async with client(app) as http:
            return [
                await http.post("/api/turn", json=submit("short-guessable-id", "t1")),
                await http.get(f"/api/turn/{sid()}"),
                await http.get("/api/turn/short"),
                await http.get("/api/turn/%20bad"),
            ]

    weak, unknown, short, bad = run(go())
    assert weak.status_code == 400 and weak.json()["error"]["code"] == "REQUEST_INVALID_EVENT"
    for response in (unknown, short, bad):
        assert response.status_code == 404


# --------------------------------------------------------------------------- the lease


def test_an_expired_lease_ends_the_turn_as_interrupted(tmp_path: Path) -> None:
    store = TurnSessionStore()
    generator = GatedGenerator()
    app = make_app(tmp_path, store, generator=generator, lease_seconds=0.05)
    session = sid()
    key = TurnSessionKey("test-site", "anonymous", session)

    async def go() -> tuple[httpx.Response, httpx.Response]:
        async with client(app) as http:
            first = asyncio.create_task(http.post("/api/turn", json=submit(session, "t1")))
            await generator.started.wait()
            # The process "dies": its turn stops (no final save, no more renewals) and is
            # forgotten; its row keeps the lease.
            for task in list(app.state.turn.runner.tasks):
                task.cancel()
            app.state.turn.runner.runs.clear()
            await asyncio.sleep(0.1)
            resumed = await http.get(f"/api/turn/{session}")
            generator.release.set()
            await first
            return resumed, await http.post("/api/turn", json=submit(session, "t2"))

    resumed, second = run(go())
    settled = snapshots(resumed)[-1]
    assert settled.payload.status == "error"
    assert settled.payload.error is not None
    assert settled.payload.error.code == "CHAT_TURN_INTERRUPTED"
    assert settled.payload.error.retryable is True
    assert [m.status for m in settled.payload.messages] == ["complete", "error"]
    assert second.status_code == 200
    row = store.load_sync(key)
    assert row is not None and row.envelope.active_turn is None
    outcomes = {t.turn_id: t.outcome for t in row.envelope.terminal_turns or []}
    assert outcomes["t1"] == "indeterminate" and outcomes["t2"] == "completed"


def test_a_live_turn_that_saves_nothing_renews_its_lease_for_other_instances(
    tmp_path: Path,
) -> None:
    """A model that thinks longer than the lease: the holder renews it, nobody settles it."""
    database = tmp_path / "shared.db"
    generator = GatedGenerator()
    holder = make_app(tmp_path / "a", TurnSessionStore(database), generator=generator,
                      lease_seconds=1.0)  # fmt: skip
    other = make_app(tmp_path / "b", TurnSessionStore(database), lease_seconds=1.0)
    runner = other.state.turn.runner
    session = sid()
    key = TurnSessionKey("test-site", "anonymous", session)

    async def go() -> tuple[list[bool], httpx.Response]:
        async with client(holder) as http_a:
            first = asyncio.create_task(http_a.post("/api/turn", json=submit(session, "t1")))
            await generator.started.wait()
            expired = []
            for _ in range(4):  # 2 s: two leases long, without a delta
                await asyncio.sleep(0.5)
                row = await runner.load(key)
                expired.append(row is None or runner.lease_expired(row))
            generator.release.set()
            return expired, await first

    expired, first = run(go())
    assert expired == [False] * 4, "another instance would have ended a live turn"
    final = snapshots(first)[-1]
    assert final.payload.status == "complete"
    assert answer_parts(final)[0].startswith("Partial answer.")


class LosingStore(TurnSessionStore):
    """Saves succeed until `lose_after` saves, then every compare-and-set loses."""

    def __init__(self, lose_after: int) -> None:
        super().__init__()
        self.saves = 0
        self.lose_after = lose_after

    def save_sync(self, *args: Any, **kwargs: Any) -> bool:
        self.saves += 1
        if self.saves > self.lose_after:
            return False
        return super().save_sync(*args, **kwargs)


def test_a_lost_save_mid_turn_ends_with_a_diagnostic_after_the_cursor(tmp_path: Path) -> None:
    app = make_app(
        tmp_path,
        LosingStore(2),
        generator=ScriptedGenerator(("a ", "b ", "c")),
        snapshot_interval=0,
    )

    async def go() -> httpx.Response:
        async with client(app) as http:
            return await http.post("/api/turn", json=submit(sid(), "t1"))

    found = events(run(go()))
    assert [type(e).__name__ for e in found] == [
        "SnapshotTurnEvent",
        "SnapshotTurnEvent",
        "DiagnosticTurnEvent",
    ]
    assert found[-1].sequence == found[-2].sequence + 1
    assert found[-1].payload.code == "SESSION_CONFLICT"


# --------------------------------------------------------------------------- every status


class BrokenStore(TurnSessionStore):
    def load_sync(self, key: TurnSessionKey) -> Any:
        raise PersistenceError("disk gone")


def test_every_status_of_the_table_from_a_real_request(tmp_path: Path) -> None:
    app = make_app(tmp_path, body_timeout=0.2)
    broken = make_app(tmp_path / "broken", BrokenStore())
    limited = make_app(
        tmp_path / "limited", rate_limiter=TokenBucketLimiter(1, 0.001, clock=lambda: 0.0)
    )
    session = sid()

    async def slow_body() -> AsyncIterator[bytes]:
        yield b'{"protocol": '
        await asyncio.sleep(1)
        yield b"1}"

    async def go() -> dict[str, httpx.Response]:
        async with client(app) as http, client(broken) as broken_http, client(limited) as lim:
            out = {
                "405": await http.get("/api/turn"),
                "415": await http.post(
                    "/api/turn", content=b"{}", headers={"content-type": "text/plain"}
                ),
                "413": await http.post(
                    "/api/turn",
                    content=b" " * 70_000,
                    headers={"content-type": "application/json"},
                ),
                "400-json": await http.post(
                    "/api/turn", content=b"{nope", headers={"content-type": "application/json"}
                ),
                "400-event": await http.post("/api/turn", json={"protocol": "agentskit.chat.turn"}),
                "408": await http.post(
                    "/api/turn", content=slow_body(), headers={"content-type": "application/json"}
                ),
                "500": await broken_http.post("/api/turn", json=submit(session, "t1")),
                "429-first": await lim.post("/api/turn", json=submit(session, "t1")),
                "429": await lim.post("/api/turn", json=submit(session, "t2")),
            }
            return out

    replies = run(go())
    expected = {
        "405": (405, "REQUEST_METHOD_NOT_ALLOWED"),
        "415": (415, "REQUEST_UNSUPPORTED_MEDIA_TYPE"),
        "413": (413, "REQUEST_TOO_LARGE"),
        "400-json": (400, "REQUEST_INVALID_JSON"),
        "400-event": (400, "REQUEST_INVALID_EVENT"),
        "408": (408, "SERVER_TIMEOUT"),
        "500": (500, "SERVER_INTERNAL"),
        "429": (429, "ASK_RATE_LIMITED"),
    }
    for name, (status, code) in expected.items():
        reply = replies[name]
        assert reply.status_code == status, name
        error = reply.json()["error"]
        assert error["code"] == code and error["version"] == 1, name
        assert reply.headers["content-type"].startswith("application/json")
        assert reply.headers["cache-control"] == "no-store"
    assert replies["405"].headers["allow"] == "POST"
    assert replies["429"].headers["retry-after"]
    # 409 SESSION_BUSY and SESSION_CONFLICT come from real requests in the tests above.


def test_unauthorized_in_bearer_mode(tmp_path: Path) -> None:
    app = make_app(tmp_path, authenticate=bearer_tokens({"t": "alice"}))

    async def go() -> list[httpx.Response]:
        async with client(app) as http:
            return [
                await http.post("/api/turn", json=submit(sid(), "t1")),
                await http.get(f"/api/turn/{sid()}"),
            ]

    for reply in run(go()):
        assert reply.status_code == 401
        assert reply.json()["error"]["code"] == "ASK_UNAUTHORIZED"


def test_no_grounded_sources_completes_with_the_fixed_notice(tmp_path: Path) -> None:
    app = make_app(tmp_path, retriever=ScriptedRetriever(passages=()))

    async def go() -> httpx.Response:
        async with client(app) as http:
            return await http.post("/api/turn", json=submit(sid(), "t1", "zzz"))

    final = snapshots(run(go()))[-1]
    assert final.payload.status == "complete"
    assert "No passage of the documentation matches" in answer_parts(final)[0]


def test_a_near_miss_completes_with_its_notice_and_the_closest_sections(tmp_path: Path) -> None:
    passage = ScriptedRetriever().passages[0]

    class Closest(ScriptedRetriever):
        async def retrieve(self, question: str, limit: int) -> Found:  # type: ignore[override]
            return Found((passage,), grounded=False)

    generator = ScriptedGenerator(("Made ", "up."))
    app = make_app(tmp_path, retriever=Closest(), generator=generator, snapshot_interval=0)

    async def go() -> httpx.Response:
        async with client(app) as http:
            return await http.post("/api/turn", json=submit(sid(), "t1", "solar panel?"))

    final = snapshots(run(go()))[-1]
    assert final.payload.status == "complete"
    text, frames = answer_parts(final)
    assert text == CLOSEST_MESSAGE
    assert [f["componentKey"] for f in frames] == ["source-list"]
    assert generator.requests == [], "no generator is handed passages that do not answer"


def test_turn_path_option_and_demo_route(tmp_path: Path) -> None:
    from agentskit_web.server.ask_serve import AskServeConfig, _parser, build_app, config_from_args

    args = _parser().parse_args(["--turn-path", "/chat/turn"])
    config = config_from_args(args)
    assert config.turn_path == "/chat/turn"
    (tmp_path / "site.json").write_text(json.dumps(site()))
    app = build_app(
        AskServeConfig(
            site=tmp_path / "site.json",
            docs=write_docs(tmp_path / "docs"),
            turn_path="/chat/turn",
            pace_seconds=0,
        )
    )

    async def go() -> httpx.Response:
        async with client(app) as http:
            return await http.post("/chat/turn", json=submit(sid(), "t1"))

    assert snapshots(run(go()))[-1].payload.status == "complete"


def test_a_long_answer_stays_within_the_record_bound_without_spinning(tmp_path: Path) -> None:
    """Past 511 text records the text waits for the end (no busy loop) and is merged there."""
    import time

    pieces = tuple(f"w{i} " for i in range(700))
    app = make_app(tmp_path, generator=ScriptedGenerator(pieces, delay=0.001), snapshot_interval=0)

    async def go() -> httpx.Response:
        async with client(app) as http:
            return await http.post("/api/turn", json=submit(sid(), "t1"))

    started = time.process_time()
    found = snapshots(run(go()))
    cpu = time.process_time() - started
    final = found[-1]
    text, frames = answer_parts(final)
    assert text == "".join(pieces) and len(frames) == 1
    records = decode_assistant_content(final.payload.messages[-1].content).parts
    assert len(records) <= 512
    # At most one per streamed record, the question and the end (the snapshot clock,
    # which waits at least as long as a save took, may merge records into one snapshot).
    assert 3 <= len(found) <= 510 + 2
    assert cpu < 30, "the held text must not be polled in a loop"


def test_the_turn_store_shares_the_ask_stores_setup_and_bounds(tmp_path: Path) -> None:
    from agentskit_web.server.persistence import SessionStore
    from agentskit_web.server.turn_store import TurnSessionStore

    database = tmp_path / "sessions.db"
    TurnSessionStore(database, ttl_seconds=0.001, max_sessions_per_client=1)  # at the limits
    SessionStore(database, ttl_seconds=0.001, max_sessions_per_subject=1)  # same file, both set up
    for store, cap in (
        (TurnSessionStore, "max_sessions_per_client"),
        (SessionStore, "max_sessions_per_subject"),
    ):
        with pytest.raises(ValueError):
            store(database, ttl_seconds=0)
        with pytest.raises(ValueError):
            store(database, **{cap: 0})


class LoadCountingStore(TurnSessionStore):
    """A real store that records the session ids it was asked to load."""

    def __init__(self) -> None:
        super().__init__()
        self.loads: list[str] = []

    def load_sync(self, key: TurnSessionKey) -> Any:
        self.loads.append(key.session_id)
        return super().load_sync(key)


@pytest.mark.parametrize(
    "session_id",
    [
        "Wq7Zk3Lp9Xv2Nc5Rt8Hy4J%00",  # a NUL (PostgreSQL refuses it: a 500, not a 404)
        "Wq7Zk3Lp9Xv2Nc5Rt8Hy4J~x",  # `~` is no SafeId character
        "_Wq7Zk3Lp9Xv2Nc5Rt8Hy4J",  # a SafeId starts with a letter or digit
        "W" + "q7Zk3Lp9Xv2Nc5Rt8Hy4J" * 7,  # 148 characters: past 128
    ],
)
def test_a_resume_with_a_malformed_id_never_reaches_the_store(
    tmp_path: Path, session_id: str
) -> None:
    """The id format check on resume (issue 36 item 9: removing it failed no test)."""
    store = LoadCountingStore()
    app = make_app(tmp_path, store)

    async def go() -> httpx.Response:
        async with client(app) as http:
            return await http.get(f"/api/turn/{session_id}")

    response = run(go())
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "SESSION_NOT_FOUND"
    assert store.loads == []


def test_following_another_instances_turn_ends_at_the_turns_own_bound(tmp_path: Path) -> None:
    """A resume that follows a turn another instance holds ends after the site's request
    timeout plus one lease, even if that lease never expires (issue 36 item 9: a bound
    100 times longer failed no test)."""
    store = TurnSessionStore()
    app = create_ask_app(
        site(limits__requestTimeoutMs=500), write_docs(tmp_path / "docs"),
        generator=ExtractiveGenerator(),
    )  # fmt: skip
    mount_turn(app, store, lease_seconds=0.5)
    session = sid()
    live_lease_elsewhere(store, session)

    async def go() -> tuple[float, httpx.Response]:
        async with client(app) as http:
            started = time.monotonic()
            response = await asyncio.wait_for(http.get(f"/api/turn/{session}"), 10)
            return time.monotonic() - started, response

    took, response = run(go())
    assert response.status_code == 200
    bound = 0.5 + 0.5  # request timeout + lease
    assert bound - 0.05 <= took <= bound + 1.0
