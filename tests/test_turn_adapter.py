"""The turn adapter: inert replays through a scripted transport, resume after a cut, memory."""

import asyncio
import json
import secrets
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from _ask_helpers import site, write_docs
from agentskit_web.chat.conversation import Conversation
from agentskit_web.chat.definition import define_chat
from agentskit_web.chat.memory.legacy import create_ask_session_memory
from agentskit_web.chat.memory.storage import MemoryStorage
from agentskit_web.chat.turn.adapter import (
    TurnLineReader,
    TurnUpdate,
    build_submit,
    create_turn_adapter,
    new_session_id,
)
from agentskit_web.chat.turn.memory import TurnMemory
from agentskit_web.protocol import decode_assistant_content, encode_turn_event
from agentskit_web.server.ask_serve import AskServeConfig, build_app, uvicorn_config
from agentskit_web.server.static import AppServer
from agentskit_web.transports.httpx_transport import HttpxResponse, HttpxTransport

SESSION = "S" * 22
PREFIX = "\x1eagentskit.chat.content/1\n"


def snapshot(
    sequence: int,
    text: str,
    status: str = "streaming",
    session: str = SESSION,
    turn: str = "t1",
) -> bytes:
    records = [r for r in text.split("|") if r]
    compact = (",", ":")
    content = PREFIX + "".join(
        json.dumps({"kind": "text", "text": r}, separators=compact) + "\n" for r in records
    )
    event = {
        "protocol": "agentskit.chat.turn",
        "version": 1,
        "eventId": f"e{sequence}",
        "sessionId": session,
        "turnId": turn,
        "sequence": sequence,
        "emittedAt": "2026-01-01T00:00:00Z",
        "event": "server.turn.snapshot",
        "payload": {
            "messages": [
                {
                    "id": "u-1",
                    "role": "user",
                    "content": "q",
                    "status": "complete",
                    "createdAt": "2026-01-01T00:00:00.000Z",
                    "metadata": {"turnId": turn},
                },
                {
                    "id": "a-1",
                    "role": "assistant",
                    "content": content,
                    "status": "complete" if status == "complete" else "streaming",
                    "createdAt": "2026-01-01T00:00:00.000Z",
                    "metadata": {"turnId": turn},
                },
            ],
            "status": status,
            "usage": {"promptTokens": 1, "completionTokens": 1, "totalTokens": 2},
        },
    }
    return (encode_turn_event(event) + "\n").encode()


class ScriptedResponse:
    def __init__(self, status: int, chunks: Sequence[bytes | BaseException]) -> None:
        self.status = status
        self.headers = {"content-type": "application/x-ndjson"}
        self._chunks = chunks
        self.cancelled = False

    async def chunks(self) -> AsyncIterator[bytes]:
        for chunk in self._chunks:
            await asyncio.sleep(0)
            if isinstance(chunk, BaseException):
                raise chunk
            yield chunk

    async def cancel(self) -> None:
        self.cancelled = True


class ScriptedTransport:
    """Answers each request with the next scripted response; records what was sent."""

    def __init__(self, *responses: ScriptedResponse | BaseException) -> None:
        self.responses = list(responses)
        self.requests: list[tuple[str, str, bytes | None]] = []

    def _next(self) -> ScriptedResponse:
        response = self.responses.pop(0)
        if isinstance(response, BaseException):
            raise response
        return response

    async def post(self, url: str, headers: Mapping[str, str], body: bytes) -> ScriptedResponse:
        self.requests.append(("POST", url, body))
        return self._next()

    async def get(self, url: str, headers: Mapping[str, str]) -> ScriptedResponse:
        self.requests.append(("GET", url, None))
        return self._next()


def adapter_for(transport: Any) -> Any:
    return create_turn_adapter(
        endpoint="/api/turn", transport=transport, session_id=SESSION, backoff=(0.0,)
    )


async def updates(stream: Any) -> list[TurnUpdate]:
    return [update async for update in stream]


def test_replayed_stale_foreign_and_malformed_snapshots_are_inert() -> None:
    body = [
        snapshot(3, "a"),
        snapshot(3, "a|EVIL"),  # duplicate sequence
        snapshot(1, "old"),  # stale
        snapshot(9, "foreign", session="F" * 22),  # another session
        b'{"protocol":"agentskit.chat.turn","version":1,"event":"server.turn.snapshot"}\n',
        b"not json at all\n",
        snapshot(4, "a|b"),
        snapshot(4, "a|b|EVIL", status="complete"),  # replay of 4
        snapshot(5, "a|b|c", status="complete"),
    ]
    transport = ScriptedTransport(
        ScriptedResponse(200, [b"".join(body)[i : i + 7] for i in range(0, len(b"".join(body)), 7)])
    )
    adapter = adapter_for(transport)
    found = asyncio.run(updates(adapter.session.submit("q")))
    assert [u.snapshot.sequence for u in found if u.snapshot] == [3, 4, 5]
    assert adapter.session.ignored == 6
    final = adapter.session.snapshot
    assert "EVIL" not in final.payload.messages[-1].content


def test_the_widget_source_passes_only_added_records_on() -> None:
    body = b"".join(
        [
            snapshot(1, ""),
            snapshot(2, "Hel"),
            snapshot(2, "Hel|X"),
            snapshot(3, "Hel|lo", "complete"),
        ]
    )
    adapter = create_turn_adapter(
        endpoint="/api/turn",
        transport=ScriptedTransport(ScriptedResponse(200, [body])),
        session_id=SESSION,
        turn_ids=lambda: "t1",
    )
    source = adapter.create_source([{"role": "user", "content": "q"}], "conversation")
    chunks = asyncio.run(collect(source))
    assert chunks[-1] == {"type": "done"}
    texts = [c["content"] for c in chunks if c["type"] == "text"]
    assert texts[0] == PREFIX
    assert texts[1:] == ['{"kind":"text","text":"Hel"}\n', '{"kind":"text","text":"lo"}\n']


async def collect(source: Any) -> list[dict[str, str]]:
    return [chunk async for chunk in source]


def test_a_dropped_connection_resumes_and_ends_in_the_same_state() -> None:
    first = ScriptedResponse(
        200, [snapshot(1, "a"), snapshot(2, "a|b")[:30], ConnectionError("cut")]
    )
    resumed = ScriptedResponse(200, [snapshot(2, "a|b"), snapshot(3, "a|b|c", "complete")])
    transport = ScriptedTransport(first, ConnectionError("still down"), resumed)
    adapter = adapter_for(transport)
    found = asyncio.run(updates(adapter.session.submit("q")))
    assert [u.kind for u in found] == [
        "snapshot",
        "reconnecting",
        "reconnecting",
        "resumed",
        "snapshot",
        "snapshot",
    ]
    assert [r[0] for r in transport.requests] == ["POST", "GET", "GET"]
    assert transport.requests[1][1] == f"/api/turn/{SESSION}"
    content = adapter.session.snapshot.payload.messages[-1].content
    assert decode_assistant_content(content).parts[-1]["text"] == "c"


def test_refusals_and_diagnostics_end_the_stream() -> None:
    refusal = json.dumps(
        {
            "error": {
                "version": 1,
                "code": "SESSION_BUSY",
                "message": "Another turn is active for this session.",
                "retryable": True,
            }
        }
    ).encode()
    adapter = adapter_for(ScriptedTransport(ScriptedResponse(409, [refusal])))
    (update,) = asyncio.run(updates(adapter.session.submit("q")))
    assert (update.kind, update.code, update.status, update.retryable) == (
        "error",
        "SESSION_BUSY",
        409,
        True,
    )

    diagnostic = {
        "protocol": "agentskit.chat.turn",
        "version": 1,
        "eventId": "d1",
        "sessionId": SESSION,
        "turnId": "t1",
        "sequence": 2,
        "emittedAt": "2026-01-01T00:00:00Z",
        "event": "server.turn.diagnostic",
        "payload": {"version": 1, "code": "SESSION_CONFLICT", "message": "lost", "retryable": True},
    }
    foreign = {**diagnostic, "sessionId": "F" * 22}
    body = (
        snapshot(1, "a")
        + (json.dumps(foreign) + "\n").encode()
        + (json.dumps(diagnostic) + "\n").encode()
    )
    adapter = adapter_for(ScriptedTransport(ScriptedResponse(200, [body])))
    found = asyncio.run(updates(adapter.session.submit("q")))
    assert [(u.kind, u.code) for u in found] == [
        ("snapshot", None),
        ("diagnostic", "SESSION_CONFLICT"),
    ]


def test_submit_events_and_session_ids() -> None:
    from agentskit_web.protocol.identifiers import is_safe_id

    ids = {new_session_id() for _ in range(2000)}
    assert len(ids) == 2000 and all(len(i) == 22 and is_safe_id(i) for i in ids)
    event = build_submit(
        SESSION, "t1", "hi", {"operation": "edit", "parentTurnId": "t0", "sourceMessageId": "u-0"}
    )
    assert event["payload"] == {
        "input": "hi",
        "lineage": {"operation": "edit", "parentTurnId": "t0", "sourceMessageId": "u-0"},
    }
    from agentskit_web.protocol import decode_turn_event

    decoded = decode_turn_event(event)
    assert decoded.ok and decoded.event.to_wire()["payload"] == {
        "input": "hi"
    }  # older decoders drop it


def test_line_reader_bounds_lines() -> None:
    reader = TurnLineReader(max_line_bytes=8)
    assert reader.feed(b"abc\n0123456789") == [b"abc"]
    assert reader.feed(b"tail\nok\n") == [b"ok"]
    assert reader.feed(b"end") == [] and reader.finish() == [b"end"]


# --------------------------------------------------------------------------- a real backend


@pytest.fixture
def backend(tmp_path: Path) -> Iterator[Any]:
    (tmp_path / "site.json").write_text(json.dumps(site()))
    config = AskServeConfig(
        site=tmp_path / "site.json", docs=write_docs(tmp_path / "docs"), pace_seconds=0.01
    )
    app = build_app(config)
    with AppServer(app, settings=lambda a: uvicorn_config(a, config)) as server:
        yield server


class CuttingTransport(HttpxTransport):
    """httpx, but the first POST's body is cut after `keep` chunks (the connection drops)."""

    def __init__(self, keep: int) -> None:
        super().__init__()
        self.keep = keep
        self.cut = False

    async def post(self, url: str, headers: Mapping[str, str], body: bytes) -> Any:
        response = await super().post(url, headers, body)
        if self.cut:
            return response
        self.cut = True
        return _Cut(response, self.keep)


class _Cut:
    def __init__(self, response: HttpxResponse, keep: int) -> None:
        self._response = response
        self.keep = keep
        self.status = response.status
        self.headers = response.headers

    async def chunks(self) -> AsyncIterator[bytes]:
        count = 0
        async for chunk in self._response.chunks():
            yield chunk
            count += 1
            if count >= self.keep:
                await self._response.cancel()
                raise ConnectionError("cut")

    async def cancel(self) -> None:
        await self._response.cancel()


def test_a_cut_mid_turn_resumes_to_the_same_final_state(backend: Any) -> None:
    endpoint = backend.url + "/api/turn"

    async def go() -> tuple[Any, list[str], Any]:
        whole = create_turn_adapter(endpoint=endpoint, transport=HttpxTransport())
        await updates(whole.session.submit("How do I install the widget?"))
        cut = create_turn_adapter(
            endpoint=endpoint, transport=CuttingTransport(keep=2), backoff=(0.05,)
        )
        found = await updates(cut.session.submit("How do I install the widget?"))
        return whole.session.snapshot, [u.kind for u in found], cut.session.snapshot

    whole, kinds, resumed = asyncio.run(go())
    assert "reconnecting" in kinds and kinds[-1] == "snapshot"
    assert resumed.payload.status == whole.payload.status == "complete"

    def shown(snapshot: Any) -> list[Any]:
        parts = decode_assistant_content(snapshot.payload.messages[-1].content).parts
        return [p.get("text") or p["frame"]["props"] for p in parts]

    assert "".join(str(p) for p in shown(resumed)) == "".join(str(p) for p in shown(whole))


def test_reload_restores_the_conversation_from_the_server(backend: Any) -> None:
    storage = MemoryStorage()
    endpoint = backend.url + "/api/turn"

    def widget_definition() -> Any:
        adapter = create_turn_adapter(endpoint=endpoint, transport=HttpxTransport())
        cache = create_ask_session_memory(key="agentskit:ask:ask", storage=storage)
        memory = TurnMemory(adapter, cache, session_key="agentskit:ask:ask:session")
        return define_chat(id="ask", adapter=adapter, memory=memory)

    async def go() -> tuple[Any, Any, Any]:
        page = Conversation(widget_definition())
        await page.load()
        await page.send("How do I install the widget?")
        await page.regenerate()
        # The cache is emptied; a reload must still find the conversation (on the server).
        storage.remove_item("agentskit:ask:ask")
        reloaded = Conversation(widget_definition())
        await reloaded.load()
        return page, reloaded, reloaded.definition.memory

    page, reloaded, memory = asyncio.run(go())
    assert memory.restored_from_server
    assert [m.role for m in reloaded.messages] == ["user", "assistant"]
    assert reloaded.messages[-1].content == page.messages[-1].content
    assert page.definition.adapter.session.snapshot.payload.lineage.operation == "regenerate"


def test_offline_reload_falls_back_to_the_cache() -> None:
    storage = MemoryStorage()
    storage.set_item("agentskit:ask:ask:session", SESSION)
    cache = create_ask_session_memory(key="agentskit:ask:ask", storage=storage)
    asyncio.run(
        cache.save(
            [
                {
                    "id": "m1",
                    "role": "user",
                    "content": "cached",
                    "status": "complete",
                    "createdAt": "2026-01-01T00:00:00.000Z",
                }
            ]
        )
    )
    adapter = adapter_for(ScriptedTransport(ConnectionError("offline")))
    memory = TurnMemory(adapter, cache, session_key="agentskit:ask:ask:session")
    messages = asyncio.run(memory.load())
    assert [m["content"] for m in messages] == ["cached"] and not memory.restored_from_server
    asyncio.run(memory.clear())
    assert storage.get_item("agentskit:ask:ask:session") is None
    assert adapter.session.id != SESSION


def test_cli_streams_a_turn_and_resumes_it(backend: Any) -> None:
    url = backend.url + "/api/turn"
    command = [sys.executable, "-m", "agentskit_web.cli", "turn", url]
    done = subprocess.run(
        [*command, "How do I install the widget?"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert "no language model was used" in done.stdout and "Sources:" in done.stdout
    session = done.stderr.split("session: ")[1].split()[0]
    again = subprocess.run(
        [*command, "--session", session, "--resume"], capture_output=True, text=True, timeout=60
    )
    assert again.returncode == 0 and "Sources:" in again.stdout
    weak = subprocess.run(
        [*command, "--session", "short", "q"], capture_output=True, text=True, timeout=60
    )
    assert weak.returncode == 1 and "REQUEST_INVALID_EVENT" in weak.stderr
    assert secrets  # ids in this test come from the CLI itself


def _cut_then(*resumes: ScriptedResponse | BaseException) -> ScriptedTransport:
    first = ScriptedResponse(200, [snapshot(1, "a"), ConnectionError("cut")])
    return ScriptedTransport(first, *resumes)


def test_resume_gives_up_after_exactly_resume_attempts() -> None:
    """At the limit: RESUME_ATTEMPTS - 1 failed resumes, then one that works; past it: none."""
    from agentskit_web.chat.turn.adapter import (
        INTERRUPTED_MESSAGE,
        RESUME_ATTEMPTS,
        RESUME_BACKOFF_SECONDS,
    )

    assert len(RESUME_BACKOFF_SECONDS) == RESUME_ATTEMPTS
    assert list(RESUME_BACKOFF_SECONDS) == sorted(RESUME_BACKOFF_SECONDS)
    done = ScriptedResponse(200, [snapshot(2, "a|b", "complete")])
    failures = [ConnectionError("down")] * (RESUME_ATTEMPTS - 1)
    transport = _cut_then(*failures, done)
    adapter = create_turn_adapter(
        endpoint="/api/turn", transport=transport, session_id=SESSION, backoff=(0.0,)
    )
    found = asyncio.run(updates(adapter.session.submit("q")))
    assert [u.kind for u in found].count("reconnecting") == RESUME_ATTEMPTS
    assert found[-2].kind == "resumed" and found[-1].snapshot.payload.status == "complete"
    assert [r[0] for r in transport.requests] == ["POST"] + ["GET"] * RESUME_ATTEMPTS

    transport = _cut_then(*[ConnectionError("down")] * RESUME_ATTEMPTS, done)
    adapter = create_turn_adapter(
        endpoint="/api/turn", transport=transport, session_id=SESSION, backoff=(0.0,)
    )
    found = asyncio.run(updates(adapter.session.submit("q")))
    assert [u.kind for u in found].count("reconnecting") == RESUME_ATTEMPTS
    assert "resumed" not in [u.kind for u in found]
    assert found[-1].kind == "error" and found[-1].message == INTERRUPTED_MESSAGE
    assert [r[0] for r in transport.requests] == ["POST"] + ["GET"] * RESUME_ATTEMPTS
    assert transport.responses == [done], "no request past the limit"


def test_resume_waits_the_backoff_between_attempts() -> None:
    waits: list[float] = []
    real_sleep = asyncio.sleep

    async def recording_sleep(delay: float, *args: Any) -> Any:
        waits.append(delay)
        return await real_sleep(0)

    done = ScriptedResponse(200, [snapshot(2, "a|b", "complete")])
    transport = _cut_then(ConnectionError("down"), ConnectionError("down"), done)
    adapter = create_turn_adapter(
        endpoint="/api/turn", transport=transport, session_id=SESSION, backoff=(0.2, 0.5, 1.0)
    )
    asyncio.sleep = recording_sleep  # type: ignore[assignment]
    try:
        found = asyncio.run(updates(adapter.session.submit("q")))
    finally:
        asyncio.sleep = real_sleep  # type: ignore[assignment]
    assert found[-1].snapshot.payload.status == "complete"
    assert [w for w in waits if w > 0] == [0.2, 0.5, 1.0]


def _conversation_with(*chunks: dict[str, str]) -> tuple[Conversation, list[Any]]:
    class Source:
        async def __aiter__(self) -> AsyncIterator[dict[str, str]]:
            for chunk in chunks:
                yield chunk

        def abort(self) -> None:
            return None

    class Adapter:
        def create_source(self, *args: Any) -> Source:
            return Source()

    conversation = Conversation(define_chat(id="ask", adapter=Adapter()))
    events: list[Any] = []
    conversation.subscribe(events.append)
    return conversation, events


def test_the_conversation_is_reconnecting_until_the_resume_succeeds() -> None:
    from agentskit_web.chat.conversation import Connection, Notice

    conversation, events = _conversation_with(
        {"type": "text", "content": PREFIX},
        {"type": "reconnecting"},
        {"type": "reconnecting"},
        {"type": "resumed"},
        {"type": "text", "content": '{"kind":"text","text":"ok"}\n'},
        {"type": "done"},
    )
    asyncio.run(conversation.send("q"))
    states = [e.reconnecting for e in events if isinstance(e, Connection)]
    assert states == [True, False], "one reconnecting state, ended by the resume"
    assert not [e for e in events if isinstance(e, Notice)]
    assert conversation.messages[-1].status == "complete"
    # The state ended at the resume, before the answer went on.
    kinds = [type(e).__name__ for e in events]
    resumed_at = [i for i, e in enumerate(events) if isinstance(e, Connection)][-1]
    assert "PartsAppended" in kinds[resumed_at:]


def test_a_resume_that_fails_for_good_ends_reconnecting_with_an_error_and_retry() -> None:
    from agentskit_web.chat.conversation import Connection
    from agentskit_web.chat.turn.adapter import INTERRUPTED_MESSAGE

    conversation, events = _conversation_with(
        {"type": "text", "content": PREFIX},
        {"type": "reconnecting"},
        {"type": "error", "content": INTERRUPTED_MESSAGE},
    )
    asyncio.run(conversation.send("q"))
    assert [e.reconnecting for e in events if isinstance(e, Connection)] == [True, False]
    answer = conversation.messages[-1]
    assert answer.status == "error" and answer.error == INTERRUPTED_MESSAGE and answer.retry
    assert conversation.status == "error"


def test_a_stream_that_ends_while_reconnecting_clears_the_state() -> None:
    from agentskit_web.chat.conversation import Connection

    conversation, events = _conversation_with({"type": "reconnecting"})
    asyncio.run(conversation.send("q"))
    assert [e.reconnecting for e in events if isinstance(e, Connection)] == [True, False]


class RecordingTransport(HttpxTransport):
    """httpx, recording every POST body."""

    def __init__(self) -> None:
        super().__init__()
        self.bodies: list[dict[str, Any]] = []

    async def post(self, url: str, headers: Mapping[str, str], body: bytes) -> Any:
        self.bodies.append(json.loads(body))
        return await super().post(url, headers, body)


def test_editing_a_question_sends_the_edit_lineage_and_the_server_drops_what_followed(
    backend: Any,
) -> None:
    transport = RecordingTransport()
    adapter = create_turn_adapter(endpoint=backend.url + "/api/turn", transport=transport)
    conversation = Conversation(define_chat(id="ask", adapter=adapter))

    async def go() -> bool:
        await conversation.send("How do I install the widget?")
        await conversation.send("Does it use a CDN?")
        return await conversation.edit(conversation.messages[0].id, "How do I configure it?")

    assert asyncio.run(go())
    first, _second, edit = transport.bodies
    lineage = edit["payload"]["lineage"]
    assert lineage == {
        "operation": "edit",
        "parentTurnId": first["turnId"],
        "sourceMessageId": "u-" + first["turnId"],
    }
    assert edit["payload"]["input"] == "How do I configure it?"
    latest = adapter.session.snapshot
    assert latest.payload.lineage.operation == "edit" and latest.payload.status == "complete"
    server = [(m.role, m.content) for m in latest.payload.messages]
    assert [r for r, _ in server] == ["user", "assistant"]
    assert server[0][1] == "How do I configure it?"
    page = [(m.role, m.content) for m in conversation.messages]
    assert page == server, "the page shows what the server holds"


def test_an_edit_the_server_cannot_place_is_a_plain_submit() -> None:
    """Without a matching server question at the edited place there is no lineage to send."""
    done = ScriptedResponse(200, [snapshot(2, "a", "complete")])
    transport = ScriptedTransport(done)
    adapter = adapter_for(transport)
    history = [
        {"id": "x", "role": "user", "content": "q", "status": "complete"},
        {"id": "y", "role": "assistant", "content": "", "status": "complete"},
        {"id": "z", "role": "user", "content": "new", "status": "complete"},
    ]
    asyncio.run(updates(adapter.session.submit("q")))  # no snapshot accepted: error update
    source = adapter.create_edit_source(history)
    assert source._lineage is None
    # With the server's conversation known, a mismatch before the edited place is refused too.
    adapter.session.accept(snapshot(3, "a", "complete"))
    assert adapter.create_edit_source(history[:1])._lineage == {
        "operation": "edit",
        "parentTurnId": "t1",
        "sourceMessageId": "u-1",
    }
    assert adapter.create_edit_source(history)._lineage is None, "no question at index 2"
    other = [{"id": "x", "role": "assistant", "content": "", "status": "complete"}, history[2]]
    assert adapter.create_edit_source(other)._lineage is None, "an answer at index 1"
    # Two turns on the server: the second question may be edited only after a matching first.
    event = json.loads(snapshot(4, "a", "complete", turn="t2"))
    first = json.loads(snapshot(3, "a", "complete"))["payload"]["messages"]
    second = [{**m, "id": m["id"].replace("1", "2")} for m in event["payload"]["messages"]]
    event["payload"]["messages"] = first + second
    assert adapter.session.accept(encode_turn_event(event)) is not None
    assert adapter.create_edit_source(history)._lineage == {
        "operation": "edit",
        "parentTurnId": "t2",
        "sourceMessageId": "u-2",
    }
    mismatch = [{**history[0], "content": "other"}, history[1], history[2]]
    assert adapter.create_edit_source(mismatch)._lineage is None


def test_edit_replaces_the_question_and_what_followed_in_the_conversation() -> None:
    from agentskit_web.chat.conversation import Appended, Removed

    asked: list[list[dict[str, Any]]] = []

    class Source:
        async def __aiter__(self) -> AsyncIterator[dict[str, str]]:
            yield {"type": "text", "content": PREFIX + '{"kind":"text","text":"ok"}\n'}
            yield {"type": "done"}

        def abort(self) -> None:
            return None

    class StatelessAdapter:  # like Ask: no create_edit_source, the history says it all
        def create_source(self, messages: Any, *args: Any) -> Source:
            asked.append(list(messages))
            return Source()

    conversation = Conversation(define_chat(id="ask", adapter=StatelessAdapter()))
    asyncio.run(conversation.send("one"))
    asyncio.run(conversation.send("two"))
    old = [m.id for m in conversation.messages]
    events: list[Any] = []
    conversation.subscribe(events.append)
    assert not asyncio.run(conversation.edit(old[1], "an answer is no question"))
    assert not asyncio.run(conversation.edit(old[0], "   "))
    assert not asyncio.run(conversation.edit("unknown", "x"))
    assert not events
    assert asyncio.run(conversation.edit(old[0], "uno"))
    removed = [e.message_id for e in events if isinstance(e, Removed)]
    assert removed == list(reversed(old)), "the question and everything after it"
    appended = [e.message.role for e in events if isinstance(e, Appended)]
    assert appended == ["user", "assistant"]
    assert [m["content"] for m in asked[-1]] == ["uno"]
    assert conversation.messages[0].content == "uno"
    assert len(conversation.messages) == 2 and conversation.messages[1].status == "complete"
